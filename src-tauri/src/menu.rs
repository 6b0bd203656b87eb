//! The window's menu bar and what its items do.
//!
//! - File: Open Folder…, Open Recent (`lifecycle::recent`), Close Session, Quit. Edit: Undo, Redo, Cut, Copy, Paste, Select All.
//!   View: Toggle Sidebar, Zoom In / Out, Actual Size, Theme (System, Light, Dark). Window:
//!   Minimize, Maximize. Help: About ACP Desk, Open Settings File, Open Logs Folder, Copy
//!   Diagnostics. macOS also gets its app menu (unverified: macOS code cannot be built here).
//! - Items the window must act on reach it as the `menu-action` event ([`MenuAction`]): Close
//!   Session, Toggle Sidebar, Undo and Redo (the webview's own editing commands: muda's
//!   predefined undo and redo are greyed out on GTK), and the theme (the UI applies it). The
//!   rest is done here: the folder picker, quitting, zoom (the webview's own), the window's
//!   size, and the Help items (`help.rs`).
//! - Theme and zoom are saved in the app's state file through its one writer
//!   ([`StateRecorder::update`](acp_desk_app::state::StateRecorder::update)) and applied again at
//!   start ([`apply_saved`]).
//! - Shortcuts are the platform's usual ones (`CmdOrCtrl` is Cmd on macOS, Ctrl elsewhere);
//!   none is bound by the UI's own key handlers (Enter, Esc, arrows, Tab, permission letters).
//!   Cut, Copy, Paste and Select All use the OS's (muda shows them; on GTK a click sends the
//!   keys through libxdo, X11 only).

use std::time::Duration;

use acp_desk_app::state::{Theme, ZoomStep};
use tauri::menu::{
    CheckMenuItem, IsMenuItem, Menu, MenuItem, MenuItemKind, PredefinedMenuItem, Submenu,
};
use tauri::{AppHandle, Emitter, Manager, Runtime};
use tauri_plugin_dialog::DialogExt;

use crate::AppState;
use crate::ipc::{AppEvent, MenuAction};

pub const OPEN_FOLDER: &str = "open-folder";
pub const CLOSE_SESSION: &str = "close-session";
pub const QUIT: &str = "quit";
pub const UNDO: &str = "undo";
pub const REDO: &str = "redo";
pub const TOGGLE_SIDEBAR: &str = "toggle-sidebar";
pub const ZOOM_IN: &str = "zoom-in";
pub const ZOOM_OUT: &str = "zoom-out";
pub const ZOOM_RESET: &str = "zoom-reset";
pub const THEME_SYSTEM: &str = "theme-system";
pub const THEME_LIGHT: &str = "theme-light";
pub const THEME_DARK: &str = "theme-dark";
pub const MINIMIZE: &str = "minimize";
pub const MAXIMIZE: &str = "maximize";
pub const ABOUT: &str = "about";
pub const OPEN_SETTINGS: &str = "open-settings";
pub const OPEN_LOGS: &str = "open-logs";
pub const COPY_DIAGNOSTICS: &str = "copy-diagnostics";

/// The main window's label (`tauri.conf.json`).
pub(crate) const MAIN: &str = "main";

/// Each item of ours: id, label, shortcut. The menu is built from this table, so a typo in a
/// shortcut fails the build of the menu (and its test) rather than going unnoticed.
pub const ITEMS: &[(&str, &str, Option<&str>)] = &[
    (OPEN_FOLDER, "Open Folder…", Some("CmdOrCtrl+O")),
    (CLOSE_SESSION, "Close Session", Some("CmdOrCtrl+W")),
    // Not PredefinedMenuItem::quit: muda's GTK backend shows that one greyed out. Exiting
    // through app.exit goes through RunEvent::Exit, which closes the sessions.
    (QUIT, "Quit", Some("CmdOrCtrl+Q")),
    (UNDO, "Undo", Some("CmdOrCtrl+Z")),
    (REDO, "Redo", Some("CmdOrCtrl+Shift+Z")),
    (TOGGLE_SIDEBAR, "Toggle Sidebar", Some("CmdOrCtrl+B")),
    (ZOOM_IN, "Zoom In", Some("CmdOrCtrl+=")),
    (ZOOM_OUT, "Zoom Out", Some("CmdOrCtrl+-")),
    (ZOOM_RESET, "Actual Size", Some("CmdOrCtrl+0")),
    (THEME_SYSTEM, "System", None),
    (THEME_LIGHT, "Light", None),
    (THEME_DARK, "Dark", None),
    (MINIMIZE, "Minimize", Some("CmdOrCtrl+M")),
    // muda's predefined minimize/maximize are greyed out on GTK; the window's own calls work
    // everywhere.
    (MAXIMIZE, "Maximize", None),
    (ABOUT, "About ACP Desk", None),
    (OPEN_SETTINGS, "Open Settings File", None),
    (OPEN_LOGS, "Open Logs Folder", None),
    (COPY_DIAGNOSTICS, "Copy Diagnostics", None),
];

const THEMES: [(&str, Theme); 3] = [
    (THEME_SYSTEM, Theme::System),
    (THEME_LIGHT, Theme::Light),
    (THEME_DARK, Theme::Dark),
];

fn item<R: Runtime>(app: &AppHandle<R>, id: &str) -> tauri::Result<MenuItem<R>> {
    let (_, label, shortcut) = ITEMS
        .iter()
        .find(|(i, _, _)| *i == id)
        .copied()
        .ok_or_else(|| anyhow::anyhow!("menu item {id} is not in menu::ITEMS"))?;
    MenuItem::with_id(app, id, label, true, shortcut)
}

pub fn build<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<Menu<R>> {
    let sep = || PredefinedMenuItem::separator(app);
    let file = Submenu::with_items(
        app,
        "&File",
        true,
        &[
            &item(app, OPEN_FOLDER)?,
            &crate::lifecycle::recent::submenu(app)?,
            &item(app, CLOSE_SESSION)?,
            &sep()?,
            &item(app, QUIT)?,
        ],
    )?;
    let edit = Submenu::with_items(
        app,
        "&Edit",
        true,
        &[
            &item(app, UNDO)?,
            &item(app, REDO)?,
            &sep()?,
            &PredefinedMenuItem::cut(app, None)?,
            &PredefinedMenuItem::copy(app, None)?,
            &PredefinedMenuItem::paste(app, None)?,
            &sep()?,
            &PredefinedMenuItem::select_all(app, None)?,
        ],
    )?;
    let themes = THEMES
        .iter()
        .map(|(id, theme)| {
            let label = ITEMS.iter().find(|(i, _, _)| i == id).map_or(*id, |i| i.1);
            CheckMenuItem::with_id(app, *id, label, true, *theme == Theme::System, None::<&str>)
        })
        .collect::<tauri::Result<Vec<_>>>()?;
    let theme_items: Vec<&dyn IsMenuItem<R>> =
        themes.iter().map(|t| t as &dyn IsMenuItem<R>).collect();
    let theme = Submenu::with_items(app, "&Theme", true, &theme_items)?;
    let view = Submenu::with_items(
        app,
        "&View",
        true,
        &[
            &item(app, TOGGLE_SIDEBAR)?,
            &sep()?,
            &item(app, ZOOM_IN)?,
            &item(app, ZOOM_OUT)?,
            &item(app, ZOOM_RESET)?,
            &sep()?,
            &theme,
        ],
    )?;
    let window = Submenu::with_items(
        app,
        "&Window",
        true,
        &[&item(app, MINIMIZE)?, &item(app, MAXIMIZE)?],
    )?;
    // macOS lists the open windows in the menu it is told is the Window menu (unverified).
    #[cfg(target_os = "macos")]
    window.set_as_windows_menu_for_nsapp()?;
    let help = Submenu::with_items(
        app,
        "&Help",
        true,
        &[
            &item(app, ABOUT)?,
            &sep()?,
            &item(app, OPEN_SETTINGS)?,
            &item(app, OPEN_LOGS)?,
            &item(app, COPY_DIAGNOSTICS)?,
        ],
    )?;
    // macOS names its first menu after the app and expects Hide and Quit there (unverified).
    #[cfg(target_os = "macos")]
    {
        let app_menu = Submenu::with_items(
            app,
            "ACP Desk",
            true,
            &[
                &item(app, ABOUT)?,
                &sep()?,
                &PredefinedMenuItem::services(app, None)?,
                &sep()?,
                &PredefinedMenuItem::hide(app, None)?,
                &PredefinedMenuItem::hide_others(app, None)?,
                &PredefinedMenuItem::show_all(app, None)?,
                &sep()?,
                &item(app, QUIT)?,
            ],
        )?;
        return Menu::with_items(app, &[&app_menu, &file, &edit, &view, &window, &help]);
    }
    #[cfg(not(target_os = "macos"))]
    Menu::with_items(app, &[&file, &edit, &view, &window, &help])
}

/// What a click on (or the shortcut of) the item `id` does.
pub fn on_event<R: Runtime>(app: &AppHandle<R>, id: &str) {
    match id {
        OPEN_FOLDER => pick_folder(app),
        QUIT => crate::lifecycle::request_quit(app),
        CLOSE_SESSION => tell_window(app, MenuAction::CloseSession),
        UNDO => tell_window(app, MenuAction::Undo),
        REDO => tell_window(app, MenuAction::Redo),
        TOGGLE_SIDEBAR => tell_window(app, MenuAction::ToggleSidebar),
        ZOOM_IN => zoom(app, ZoomStep::In),
        ZOOM_OUT => zoom(app, ZoomStep::Out),
        ZOOM_RESET => zoom(app, ZoomStep::Reset),
        MINIMIZE => with_main_window(app, |w| w.minimize()),
        MAXIMIZE => with_main_window(app, |w| {
            if w.is_maximized()? {
                w.unmaximize()
            } else {
                w.maximize()
            }
        }),
        ABOUT => crate::help::about(app),
        OPEN_SETTINGS => crate::help::in_background(app, crate::help::open_settings_file),
        OPEN_LOGS => crate::help::in_background(app, crate::help::open_logs_folder),
        COPY_DIAGNOSTICS => crate::help::in_background(app, crate::help::copy_diagnostics),
        _ => match THEMES.iter().find(|(i, _)| *i == id) {
            Some((_, theme)) => choose_theme(app, *theme),
            None if crate::lifecycle::recent::on_event(app, id) => {}
            None => tracing::debug!("menu item {id} has nothing to do here"),
        },
    }
}

fn tell_window<R: Runtime>(app: &AppHandle<R>, action: MenuAction) {
    if let Err(e) = app.emit(AppEvent::MenuAction.name(), action) {
        tracing::warn!("could not tell the window about a menu item: {e}");
    }
}

fn with_main_window<R: Runtime>(
    app: &AppHandle<R>,
    f: impl FnOnce(&tauri::WebviewWindow<R>) -> tauri::Result<()>,
) {
    let Some(w) = app.get_webview_window(MAIN) else {
        return;
    };
    if let Err(e) = f(&w) {
        tracing::warn!("the window did not do what the menu asked: {e}");
    }
}

fn set_zoom<R: Runtime>(app: &AppHandle<R>, factor: f64) {
    with_main_window(app, |w| w.set_zoom(factor));
}

/// One zoom step, saved. The step is taken on the state's writer thread, from the saved factor,
/// so quick presses never race each other.
fn zoom<R: Runtime>(app: &AppHandle<R>, step: ZoomStep) {
    let Some(recorder) = app.state::<AppState>().recorder.clone() else {
        // Nothing to step from; 100 % at least works.
        if step == ZoomStep::Reset {
            set_zoom(app, 1.0);
        }
        return;
    };
    let app = app.clone();
    recorder.update(move |s| {
        let factor = s.zoom_step(step);
        set_zoom(&app, factor);
    });
}

fn choose_theme<R: Runtime>(app: &AppHandle<R>, theme: Theme) {
    if let Some(recorder) = &app.state::<AppState>().recorder {
        recorder.update(move |s| s.theme = theme);
    }
    check_theme(app, theme);
    tell_window(app, MenuAction::Theme { theme });
}

/// Ticks the chosen theme only (a check item ticks itself on every click).
fn check_theme<R: Runtime>(app: &AppHandle<R>, theme: Theme) {
    let Some(menu) = app.menu() else { return };
    for (id, t) in THEMES {
        if let Some(MenuItemKind::Check(c)) = find(&menu.items().unwrap_or_default(), id)
            && let Err(e) = c.set_checked(t == theme)
        {
            tracing::debug!("could not tick the theme: {e}");
        }
    }
}

/// The item `id` anywhere in `items` (submenus included).
pub fn find<R: Runtime>(items: &[MenuItemKind<R>], id: &str) -> Option<MenuItemKind<R>> {
    items.iter().find_map(|i| {
        if i.id() == id {
            return Some(i.clone());
        }
        match i {
            MenuItemKind::Submenu(s) => find(&s.items().unwrap_or_default(), id),
            _ => None,
        }
    })
}

/// At start: the saved zoom for the window, the saved theme ticked. The UI applies the theme
/// itself (`app_info`). The state file is read off the main thread.
pub fn apply_saved<R: Runtime>(app: &AppHandle<R>) {
    crate::lifecycle::recent::watch(app);
    let Some(recorder) = app.state::<AppState>().recorder.clone() else {
        return;
    };
    let app = app.clone();
    tauri::async_runtime::spawn_blocking(move || {
        let Some(saved) = recorder.state(Duration::from_secs(5)) else {
            return;
        };
        if saved.zoom != 1.0 {
            set_zoom(&app, saved.zoom);
        }
        check_theme(&app, saved.theme);
    });
}

/// Shows the folder picker; the choice goes to the window as `folder-chosen`, where it takes
/// the same path as a folder given on the command line or dropped.
pub fn pick_folder<R: Runtime>(app: &AppHandle<R>) {
    let handle = app.clone();
    app.dialog()
        .file()
        .set_title("Open a project folder")
        .pick_folder(move |chosen| {
            let Some(chosen) = chosen else { return };
            match chosen.into_path() {
                Ok(path) => {
                    crate::commands::folder_chosen(&handle, path.display().to_string(), None);
                }
                Err(e) => tracing::warn!("the folder picker gave no local path: {e}"),
            }
        });
}
