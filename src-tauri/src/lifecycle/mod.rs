//! The app's life as a desktop citizen: what closing the window does, what quitting does, one
//! instance per user (and data folder), and the window's size and place between runs.
//!
//! - **Close** ([`close`]): with a tray host on the session bus ([`host::tray_host_present`])
//!   and the `close_to_tray` setting on (the default), closing the main window hides it: the
//!   app stays in the tray, and says so the first time (a notification, remembered in the
//!   state file's `notices_seen`). Otherwise closing is quitting.
//! - **Quit** ([`request_quit`]: File → Quit, Ctrl+Q, the tray's Quit, a close that quits):
//!   when turns are running it asks first, with a native dialog that never blocks the main
//!   thread; then `app.exit(0)`, whose `RunEvent::Exit` closes every session (each agent and
//!   its terminals' process trees).
//! - **Single instance** ([`instance`]): a second launch hands its folder to the running app.
//! - **Open Recent** ([`recent`]): File → Open Recent from the state file.
//! - **Window state**: tauri-plugin-window-state ([`window_state`]).

pub mod close;
pub mod host;
pub mod instance;
pub mod recent;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use acp_desk_app::observer::{Observer, SessionStatus};
use acp_desk_app::registry::SessionInfo;
use acp_desk_core::events::SessionState;
use tauri::plugin::TauriPlugin;
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_dialog::{DialogExt, MessageDialogButtons, MessageDialogKind};

use crate::AppState;

/// Which sessions have a turn running, from their `session-status` (prompting until the next
/// status). An observer of the registry: it only moves ids in and out of a set.
#[derive(Default)]
pub struct Turns {
    running: Mutex<BTreeSet<String>>,
}

impl Turns {
    /// How many sessions have a turn running now.
    pub fn running(&self) -> usize {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl Observer for Turns {
    fn on_status(&self, session: &SessionInfo, status: &SessionStatus) {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        match status {
            SessionStatus::State {
                state: SessionState::Prompting,
                ..
            } => {
                running.insert(session.id.clone());
            }
            SessionStatus::State { .. } | SessionStatus::Closed => {
                running.remove(&session.id);
            }
            SessionStatus::Opened => {}
        }
    }
}

/// The lifecycle's own state in the app.
struct Lifecycle {
    turns: Arc<Turns>,
    /// The quit question is on screen: a second Ctrl+Q must not stack another one.
    asking: AtomicBool,
}

/// The question asked before quitting while `running` sessions have a turn running; `None`
/// when nothing runs (quit at once).
pub fn quit_question(running: usize) -> Option<String> {
    match running {
        0 => None,
        1 => Some(
            "1 session is still working. Quit anyway? Its turn stops and its agent ends.".into(),
        ),
        n => Some(format!(
            "{n} sessions are still working. Quit anyway? Their turns stop and their agents end."
        )),
    }
}

/// Quits the app: at once when no turn is running, else after the user says so in a native
/// dialog (Quit / Cancel). Returns at once either way; the dialog's answer arrives on a
/// callback. The exit runs `RunEvent::Exit`, which closes every session.
pub fn request_quit<R: Runtime>(app: &AppHandle<R>) {
    let Some(life) = app.try_state::<Lifecycle>() else {
        // Not set up (a test app without the lifecycle plugin): nothing to ask about.
        exit(app);
        return;
    };
    let Some(question) = quit_question(life.turns.running()) else {
        exit(app);
        return;
    };
    if life.asking.swap(true, Ordering::SeqCst) {
        tracing::debug!("the quit question is already on screen");
        return;
    }
    let handle = app.clone();
    let mut dialog = app
        .dialog()
        .message(question)
        .title("Quit ACP Desk?")
        .kind(MessageDialogKind::Warning)
        .buttons(MessageDialogButtons::OkCancelCustom(
            "Quit".into(),
            "Cancel".into(),
        ));
    if let Some(w) = app.get_webview_window(crate::menu::MAIN) {
        // A hidden window (in the tray) is shown first: the question belongs to it.
        let _ = w.show();
        let _ = w.set_focus();
        dialog = dialog.parent(&w);
        tray_follows(app, true);
    }
    dialog.show(move |quit| {
        if let Some(life) = handle.try_state::<Lifecycle>() {
            life.asking.store(false, Ordering::SeqCst);
        }
        if quit {
            exit(&handle);
        }
    });
}

/// The tray's Show/Hide follows a window shown (`true`) or hidden here (the desktop redraws
/// on the main thread; on Linux `is_visible` lags a show or hide, so it is told which).
pub(crate) fn tray_follows<R: Runtime>(app: &AppHandle<R>, visible: bool) {
    crate::desktop::window_shown(app, visible);
}

/// Exits: the instance name is given up first, so that a launch while the sessions close
/// (which can take an agent's whole grace) starts an app of its own instead of handing its
/// folder to this one, which is going away.
fn exit<R: Runtime>(app: &AppHandle<R>) {
    tauri_plugin_single_instance::destroy(app);
    app.exit(0);
}

/// The lifecycle's plugin: tracks running turns (an observer on the registry, so it must be
/// registered after `AppState` is managed) and handles the main window's close.
pub fn plugin<R: Runtime>() -> TauriPlugin<R> {
    tauri::plugin::Builder::new("lifecycle")
        .setup(|app, _api| {
            let turns = Arc::new(Turns::default());
            if let Some(state) = app.try_state::<AppState>() {
                state.sessions.registry().add_observer(turns.clone());
            }
            app.manage(Lifecycle {
                turns,
                asking: AtomicBool::new(false),
            });
            Ok(())
        })
        .on_window_ready(|window| {
            let w = window.clone();
            window.on_window_event(move |event| close::on_window_event(&w, event));
        })
        .build()
}

/// The window-state plugin's file, next to the app's state file in the data folder: the
/// plugin joins its file name to Tauri's config folder for the identifier, and an absolute name
/// replaces that folder, so `ACP_DESK_DATA_DIR` moves this file too (tests, portable installs).
pub const WINDOW_STATE_FILE: &str = "window-state.json";

/// Window size, position and maximized state between runs (tauri-plugin-window-state):
/// recorded as the window moves and closes, saved at exit, restored when the window is
/// created. Not its visibility: an app quit while in the tray must come back with a window.
/// Nor decorations or full screen, which the app never changes.
pub fn window_state<R: Runtime>() -> TauriPlugin<R> {
    use tauri_plugin_window_state::StateFlags;
    let file = acp_desk_core::paths::data_dir().join(WINDOW_STATE_FILE);
    tauri_plugin_window_state::Builder::new()
        .with_state_flags(StateFlags::SIZE | StateFlags::POSITION | StateFlags::MAXIMIZED)
        .with_filename(file.display().to_string())
        .build()
}

#[cfg(test)]
mod tests;
