//! The tray icon: its picture (a dot while requests wait), its title (the count, where the
//! platform shows one: Linux and macOS), and its menu, rebuilt from the attention's snapshot.
//! The texts of waiting requests are the attention's `line`s only (the policy decides what a
//! desktop surface may show of a request); nothing here makes up its own.

use std::sync::{Mutex, MutexGuard, PoisonError};

use acp_desk_app::attention::Waiting;
use tauri::image::Image;
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Runtime};

/// Every id of the tray menu starts with this: the app menu (menu.rs) hears tray items too
/// (Tauri sends each menu event to every handler), and ignores ids it does not know.
pub const PREFIX: &str = "tray:";
const SHOW_HIDE: &str = "tray:show-hide";
const QUIT: &str = "tray:quit";
const SUMMARY: &str = "tray:summary";
/// `tray:request:{session}/{request id}`: registry session ids never hold a `/`.
const REQUEST: &str = "tray:request:";

const ICON_NORMAL: &[u8] = include_bytes!("../../../icons/tray/normal.png");
pub(super) const ICON_WAITING: &[u8] = include_bytes!("../../../icons/tray/waiting.png");

/// What a tray menu item asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrayAction {
    ShowHide,
    Quit,
    ShowRequest {
        session_id: String,
        request_id: String,
    },
}

pub fn action(id: &str) -> Option<TrayAction> {
    match id {
        SHOW_HIDE => Some(TrayAction::ShowHide),
        QUIT => Some(TrayAction::Quit),
        _ => {
            let (session_id, request_id) = id.strip_prefix(REQUEST)?.split_once('/')?;
            Some(TrayAction::ShowRequest {
                session_id: session_id.to_string(),
                request_id: request_id.to_string(),
            })
        }
    }
}

/// The menu's first line.
pub fn summary(total: usize) -> String {
    match total {
        0 => "No requests waiting".to_string(),
        1 => "1 request waiting".to_string(),
        n => format!("{n} requests waiting"),
    }
}

/// The menu's items after the first line: (id, label), one per waiting request.
pub fn request_items(waiting: &Waiting) -> Vec<(String, String)> {
    waiting
        .sessions
        .iter()
        .flat_map(|s| {
            s.requests.iter().map(move |r| {
                (
                    format!("{REQUEST}{}/{}", s.session_id, r.request_id),
                    // `&` doubled: the menu reads a single one as a keyboard mnemonic, so a
                    // folder named `R&D` would show as "RD".
                    format!("{} in {}: {}", s.agent, s.folder_name, r.line).replace('&', "&&"),
                )
            })
        })
        .collect()
}

/// The tray as last drawn, so a change redraws only what changed.
#[derive(Default)]
struct Drawn {
    total: Option<usize>,
    items: Vec<(String, String)>,
    visible: Option<bool>,
}

pub struct Tray<R: Runtime> {
    icon: Option<TrayIcon<R>>,
    drawn: Mutex<Drawn>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn image(bytes: &'static [u8]) -> Option<Image<'static>> {
    match Image::from_bytes(bytes) {
        Ok(i) => Some(i),
        Err(e) => {
            tracing::warn!("the tray icon could not be read: {e}");
            None
        }
    }
}

impl<R: Runtime> Tray<R> {
    /// Puts the icon in the tray. Without a tray (no libappindicator, no host) the app goes
    /// on without one, saying so in the log.
    pub fn start(
        app: &AppHandle<R>,
        on_action: impl Fn(&AppHandle<R>, TrayAction) + Send + Sync + 'static,
    ) -> Self {
        let mut builder = TrayIconBuilder::with_id("acp-desk")
            .tooltip("ACP Desk")
            .on_menu_event(move |app, event| {
                if let Some(a) = action(event.id().as_ref()) {
                    on_action(app, a);
                }
            });
        if let Some(i) = image(ICON_NORMAL) {
            builder = builder.icon(i);
        }
        match build_menu(app, &summary(0), &[], true).and_then(|m| builder.menu(&m).build(app)) {
            Ok(icon) => Self {
                icon: Some(icon),
                drawn: Mutex::new(Drawn {
                    total: Some(0),
                    items: Vec::new(),
                    visible: Some(true),
                }),
            },
            Err(e) => {
                tracing::warn!("no tray icon: {e}");
                Self {
                    icon: None,
                    drawn: Mutex::default(),
                }
            }
        }
    }

    /// Redraws the tray for `waiting`, with Show or Hide as the window is `visible`.
    pub fn update(&self, app: &AppHandle<R>, waiting: &Waiting, visible: bool) {
        let Some(icon) = &self.icon else { return };
        let total = waiting.total();
        let items = request_items(waiting);
        let mut drawn = lock(&self.drawn);
        if drawn.total != Some(total) {
            let waiting_now = total > 0;
            if drawn.total.is_none_or(|t| (t > 0) != waiting_now) {
                let img = image(if waiting_now {
                    ICON_WAITING
                } else {
                    ICON_NORMAL
                });
                if let Err(e) = icon.set_icon(img) {
                    tracing::warn!("could not change the tray icon: {e}");
                }
            }
            let title = (total > 0).then(|| total.to_string());
            if let Err(e) = icon.set_title(title) {
                tracing::debug!("could not set the tray's title: {e}");
            }
        }
        if drawn.total != Some(total) || drawn.items != items || drawn.visible != Some(visible) {
            match build_menu(app, &summary(total), &items, visible) {
                Ok(menu) => {
                    if let Err(e) = icon.set_menu(Some(menu)) {
                        tracing::warn!("could not change the tray menu: {e}");
                    }
                }
                Err(e) => tracing::warn!("could not build the tray menu: {e}"),
            }
        }
        *drawn = Drawn {
            total: Some(total),
            items,
            visible: Some(visible),
        };
    }
}

fn build_menu<R: Runtime>(
    app: &AppHandle<R>,
    first_line: &str,
    items: &[(String, String)],
    visible: bool,
) -> tauri::Result<Menu<R>> {
    let menu = Menu::new(app)?;
    menu.append(&MenuItem::with_id(
        app,
        SUMMARY,
        first_line,
        false,
        None::<&str>,
    )?)?;
    for (id, label) in items {
        menu.append(&MenuItem::with_id(app, id, label, true, None::<&str>)?)?;
    }
    menu.append(&PredefinedMenuItem::separator(app)?)?;
    let show_hide = if visible {
        "Hide ACP Desk"
    } else {
        "Show ACP Desk"
    };
    menu.append(&MenuItem::with_id(
        app,
        SHOW_HIDE,
        show_hide,
        true,
        None::<&str>,
    )?)?;
    menu.append(&MenuItem::with_id(app, QUIT, "Quit", true, None::<&str>)?)?;
    Ok(menu)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use acp_desk_app::attention::{RequestKind, WaitingRequest, WaitingSession};

    use super::*;

    fn waiting() -> Waiting {
        let request = |id: &str, line: &str| WaitingRequest {
            request_id: id.into(),
            kind: RequestKind::Sensitive(None),
            line: line.into(),
            allow_option_id: None,
            reject_option_id: Some("reject".into()),
        };
        Waiting {
            sessions: vec![WaitingSession {
                session_id: "s2".into(),
                agent: "claude".into(),
                folder: PathBuf::from("/home/u/proj"),
                folder_name: "proj".into(),
                requests: vec![
                    request("toolu_1", "wants to run a command"),
                    request("call/2", "Read README.md"),
                ],
            }],
        }
    }

    #[test]
    fn the_menu_lists_each_request_with_the_attention_line_only() {
        let items = request_items(&waiting());
        assert_eq!(
            items,
            [
                (
                    "tray:request:s2/toolu_1".to_string(),
                    "claude in proj: wants to run a command".to_string()
                ),
                (
                    "tray:request:s2/call/2".to_string(),
                    "claude in proj: Read README.md".to_string()
                ),
            ]
        );
        assert_eq!(summary(0), "No requests waiting");
        assert_eq!(summary(1), "1 request waiting");
        assert_eq!(summary(2), "2 requests waiting");
    }

    #[test]
    fn item_ids_come_back_as_what_they_ask() {
        // A request id with a `/` in it survives: the session id never has one.
        assert_eq!(
            action("tray:request:s2/call/2"),
            Some(TrayAction::ShowRequest {
                session_id: "s2".into(),
                request_id: "call/2".into()
            })
        );
        assert_eq!(action("tray:show-hide"), Some(TrayAction::ShowHide));
        assert_eq!(action("tray:quit"), Some(TrayAction::Quit));
        // The app menu's ids, and the disabled first line, do nothing here.
        assert_eq!(action("quit"), None);
        assert_eq!(action("tray:summary"), None);
        assert_eq!(action("tray:request:nosep"), None);
    }
}
