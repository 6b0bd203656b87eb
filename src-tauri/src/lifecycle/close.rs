//! Closing the main window: into the tray when there is one to come back from (and the user
//! did not switch that off), else quitting.

use std::sync::mpsc;
use std::time::Duration;

use tauri::{AppHandle, Manager, Runtime, Window, WindowEvent};

use crate::AppState;

/// The id of the "still running in the tray" notice in the state file's `notices_seen`.
pub const NOTICE_ID: &str = "close-to-tray";

/// The notice's summary and body. The body names the way out, and the setting.
pub const NOTICE_SUMMARY: &str = "ACP Desk is still running";
#[cfg(not(target_os = "macos"))]
pub const NOTICE_BODY: &str = "Closing the window keeps ACP Desk in the tray, and its agents go \
    on working. Quit from the tray's menu or with Ctrl+Q; \"close_to_tray\": false in the \
    settings file (Help → Open Settings File) makes closing quit.";
#[cfg(target_os = "macos")]
pub const NOTICE_BODY: &str = "Closing the window keeps ACP Desk in the menu bar, and its agents \
    go on working. Quit from its menu or with Cmd+Q; \"close_to_tray\": false in the settings \
    file (Help → Open Settings File) makes closing quit.";

/// What closing the window does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseAction {
    /// Hide the window; the app stays in the tray.
    Hide,
    /// Quit (asking first when turns run).
    Quit,
}

/// Into the tray only when a tray host is there to show the icon and the setting allows it.
pub fn close_action(tray_host: bool, close_to_tray: bool) -> CloseAction {
    if tray_host && close_to_tray {
        CloseAction::Hide
    } else {
        CloseAction::Quit
    }
}

/// The lifecycle plugin's window hook: the main window's close is always held back here, and
/// decided off the main thread (asking the bus for a tray host and reading the settings file
/// both block).
pub fn on_window_event<R: Runtime>(window: &Window<R>, event: &WindowEvent) {
    let WindowEvent::CloseRequested { api, .. } = event else {
        return;
    };
    if window.label() != crate::menu::MAIN {
        return;
    }
    api.prevent_close();
    let app = window.app_handle().clone();
    tauri::async_runtime::spawn_blocking(move || {
        let close_to_tray = acp_desk_core::settings::load().settings.close_to_tray;
        // The bus is only asked when its answer matters.
        let tray_host = close_to_tray && super::host::tray_host_present();
        match close_action(tray_host, close_to_tray) {
            CloseAction::Hide => hide(&app),
            CloseAction::Quit => super::request_quit(&app),
        }
    });
}

fn hide<R: Runtime>(app: &AppHandle<R>) {
    let Some(w) = app.get_webview_window(crate::menu::MAIN) else {
        return;
    };
    if let Err(e) = w.hide() {
        // A window that cannot hide would look like a close that did nothing: quit instead.
        tracing::warn!("the window could not hide in the tray, quitting instead: {e}");
        super::request_quit(app);
        return;
    }
    crate::desktop::window_shown(app, false);
    if first_time(app) {
        crate::desktop::notify_plain(NOTICE_SUMMARY, NOTICE_BODY);
    }
}

/// Whether the notice was not seen before, noting it as seen. `false` without a state file
/// writer (the app then remembers nothing, and would repeat the notice on every close).
fn first_time<R: Runtime>(app: &AppHandle<R>) -> bool {
    let Some(recorder) = app.state::<AppState>().recorder.clone() else {
        return false;
    };
    let (tx, rx) = mpsc::channel();
    // Checked and marked in one change on the writer's thread: two quick closes say it once.
    recorder.update(move |s| {
        let _ = tx.send(s.mark_notice_seen(NOTICE_ID));
    });
    rx.recv_timeout(Duration::from_secs(5)).unwrap_or(false)
}
