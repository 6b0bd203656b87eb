//! File → Open Recent: the state file's recent folders, each with the agent last used there
//! ("proj — claude"), rebuilt whenever that list changes; choosing one opens it with that agent
//! the way a chosen folder opens (`folder-chosen`); Clear Recent empties the list.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use tauri::menu::{IsMenuItem, MenuItem, MenuItemKind, PredefinedMenuItem, Submenu};
use tauri::{AppHandle, Manager, Runtime};

use crate::AppState;

/// The submenu's id, and its items'.
pub const OPEN_RECENT: &str = "open-recent";
pub const CLEAR_RECENT: &str = "clear-recent";
/// Item `recent-<i>` opens the i-th folder of the list shown.
pub const RECENT_PREFIX: &str = "recent-";
const NONE: &str = "no-recent";

/// One recent folder with its agent.
pub type Recent = Vec<(PathBuf, Option<String>)>;

/// What the submenu shows now, for the items' clicks (their ids are indices into it).
#[derive(Default)]
struct Shown(Mutex<Option<Recent>>);

/// The labels of `recent`'s items: the folder's name and its agent ("proj — claude"), the
/// whole path where two folders share a name. `&` is doubled (a single one marks a mnemonic).
pub fn labels(recent: &[(PathBuf, Option<String>)]) -> Vec<String> {
    let name = |f: &Path| {
        f.file_name().map_or_else(
            || f.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    recent
        .iter()
        .map(|(folder, agent)| {
            let n = name(folder);
            let shared = recent.iter().filter(|(f, _)| name(f) == n).count() > 1;
            let place = if shared {
                folder.display().to_string()
            } else {
                n
            };
            let label = match agent {
                Some(agent) => format!("{place} — {agent}"),
                None => place,
            };
            label.replace('&', "&&")
        })
        .collect()
}

/// The submenu, empty until the state file is read ([`watch`]).
pub fn submenu<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<Submenu<R>> {
    let menu = Submenu::with_id(app, OPEN_RECENT, "Open &Recent", true)?;
    fill(app, &menu, &[])?;
    Ok(menu)
}

fn fill<R: Runtime>(
    app: &AppHandle<R>,
    menu: &Submenu<R>,
    recent: &[(PathBuf, Option<String>)],
) -> tauri::Result<()> {
    for old in menu.items()? {
        menu.remove(&old)?;
    }
    let mut items: Vec<Box<dyn IsMenuItem<R>>> = Vec::new();
    if recent.is_empty() {
        items.push(Box::new(MenuItem::with_id(
            app,
            NONE,
            "No Recent Folders",
            false,
            None::<&str>,
        )?));
    }
    for (i, label) in labels(recent).into_iter().enumerate() {
        items.push(Box::new(MenuItem::with_id(
            app,
            format!("{RECENT_PREFIX}{i}"),
            label,
            true,
            None::<&str>,
        )?));
    }
    items.push(Box::new(PredefinedMenuItem::separator(app)?));
    items.push(Box::new(MenuItem::with_id(
        app,
        CLEAR_RECENT,
        "Clear Recent",
        !recent.is_empty(),
        None::<&str>,
    )?));
    let refs: Vec<&dyn IsMenuItem<R>> = items.iter().map(|i| i.as_ref()).collect();
    menu.append_items(&refs)
}

/// Shows `recent` in the submenu (on the main thread, where menus change) unless it shows it
/// already.
pub fn show<R: Runtime>(app: &AppHandle<R>, recent: Recent) {
    let Some(shown) = app.try_state::<Shown>() else {
        return;
    };
    {
        let mut now = shown.0.lock().unwrap_or_else(PoisonError::into_inner);
        if now.as_ref() == Some(&recent) {
            return;
        }
        *now = Some(recent.clone());
    }
    let handle = app.clone();
    let rebuilt = app.run_on_main_thread(move || {
        let Some(menu) = handle.menu() else { return };
        let items = menu.items().unwrap_or_default();
        let Some(MenuItemKind::Submenu(sub)) = crate::menu::find(&items, OPEN_RECENT) else {
            return;
        };
        if let Err(e) = fill(&handle, &sub, &recent) {
            tracing::warn!("could not update File → Open Recent: {e}");
        }
    });
    if let Err(e) = rebuilt {
        tracing::warn!("could not update File → Open Recent: {e}");
    }
}

/// Keeps the submenu showing the state file's list: now, and after every change of it.
pub fn watch<R: Runtime>(app: &AppHandle<R>) {
    app.manage(Shown::default());
    let Some(recorder) = app.state::<AppState>().recorder.clone() else {
        return;
    };
    let handle = app.clone();
    recorder.on_change(move |state| {
        let recent: Recent = state
            .recent()
            .into_iter()
            .map(|(f, a)| (f.to_owned(), a.map(str::to_owned)))
            .collect();
        show(&handle, recent);
    });
}

/// A click on one of the submenu's items; false when `id` is not one of them.
pub fn on_event<R: Runtime>(app: &AppHandle<R>, id: &str) -> bool {
    if id == CLEAR_RECENT {
        if let Some(recorder) = &app.state::<AppState>().recorder {
            recorder.update(acp_desk_app::state::AppState::clear_recent);
        }
        return true;
    }
    let Some(i) = id
        .strip_prefix(RECENT_PREFIX)
        .and_then(|i| i.parse::<usize>().ok())
    else {
        return false;
    };
    let chosen = app.try_state::<Shown>().and_then(|s| {
        s.0.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .and_then(|r| r.get(i).cloned())
    });
    match chosen {
        Some((folder, agent)) => {
            crate::commands::folder_chosen(app, folder.display().to_string(), agent)
        }
        None => tracing::debug!("Open Recent item {i} is gone"),
    }
    true
}
