//! The Help menu's work: About, the settings file, the logs folder, diagnostics for a report.
//!
//! - The settings file is the user's (`acp_desk_core::settings` only reads it, rule 22): Open
//!   Settings File opens it, or the folder it goes in while there is none.
//! - Copy Diagnostics holds no secrets: the version, the OS, each open session's agent (names
//!   and versions, never its command line or environment) and the log file's last lines, which
//!   hold none at the default level (`acp_desk_app::logging`; they do name folders).
//! - Failures are shown in a native message box, since the window may have nothing open to
//!   show them in.

use std::path::Path;

use acp_desk_core::StreamEvent;
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_clipboard_manager::ClipboardExt;
use tauri_plugin_dialog::{DialogExt, MessageDialogKind};
use tauri_plugin_opener::OpenerExt;

use crate::AppState;
use crate::ipc::IpcError;

/// Log lines in the diagnostics.
pub const DIAGNOSTIC_LOG_LINES: usize = 40;

/// The app's name, version and licence (the workspace's `license`, from Cargo.toml).
pub fn about_text() -> String {
    format!(
        "ACP Desk {}\nA desktop client for ACP coding agents.\nLicence: {}",
        env!("CARGO_PKG_VERSION"),
        env!("CARGO_PKG_LICENSE")
    )
}

pub fn about<R: Runtime>(app: &AppHandle<R>) {
    app.dialog()
        .message(about_text())
        .title("About ACP Desk")
        .kind(MessageDialogKind::Info)
        .show(|_| {});
}

/// Runs a Help item's work off the main thread (it does file IO); a failure is shown.
pub fn in_background<R: Runtime>(
    app: &AppHandle<R>,
    work: fn(&AppHandle<R>) -> Result<(), IpcError>,
) {
    let app = app.clone();
    tauri::async_runtime::spawn_blocking(move || {
        if let Err(e) = work(&app) {
            app.dialog()
                .message(e.to_string())
                .title("ACP Desk")
                .kind(MessageDialogKind::Error)
                .show(|_| {});
        }
    });
}

/// Help → Open Settings File (and the `open_settings_file` command): the settings file in the
/// user's app for it, or the folder it goes in while there is none (`files::settings_target`;
/// never created: rule 22). Blocking.
pub fn open_settings_file<R: Runtime>(app: &AppHandle<R>) -> Result<(), IpcError> {
    let target = crate::files::settings_target(&acp_desk_core::paths::settings_file())?;
    open_in_os(app, &target, "the settings file", "your editor")
}

/// Opens `path` in the user's app for it (the system's opener); `what` and `where_` word the
/// failure ("could not open the logs folder …; open it in your file manager yourself").
fn open_in_os<R: Runtime>(
    app: &AppHandle<R>,
    path: &Path,
    what: &str,
    where_: &str,
) -> Result<(), IpcError> {
    app.opener()
        .open_path(path.display().to_string(), None::<&str>)
        .map_err(|e| {
            IpcError::InvalidInput(format!(
                "could not open {what} {}: {e}; open it in {where_} yourself",
                path.display()
            ))
        })
}

/// Help → Open Logs Folder: the folder the log file is in, in the file manager. Blocking.
pub fn open_logs_folder<R: Runtime>(app: &AppHandle<R>) -> Result<(), IpcError> {
    let Some(dir) = acp_desk_app::logging::init().folder() else {
        return Err(IpcError::InvalidInput(
            "ACP Desk writes no log file in this run (its log folder could not be opened): its logs go to the terminal it was started from".into(),
        ));
    };
    open_in_os(app, dir, "the logs folder", "your file manager")
}

/// Help → Copy Diagnostics: [`diagnostics`] on the clipboard. Blocking.
pub fn copy_diagnostics<R: Runtime>(app: &AppHandle<R>) -> Result<(), IpcError> {
    let text = diagnostics(app);
    app.clipboard()
        .write_text(text)
        .map_err(|e| IpcError::InvalidInput(format!("could not write to the clipboard: {e}")))?;
    app.dialog()
        .message(format!(
            "The diagnostics are on the clipboard: paste them into your report. They hold ACP Desk's and the OS's versions, the agents of the open sessions and the last {DIAGNOSTIC_LOG_LINES} lines of the log, and no keys or prompts."
        ))
        .title("Diagnostics copied")
        .kind(MessageDialogKind::Info)
        .show(|_| {});
    Ok(())
}

/// What a bug report needs (module docs: no secrets). Blocking (reads the log file).
pub fn diagnostics<R: Runtime>(app: &AppHandle<R>) -> String {
    let mut out = format!(
        "ACP Desk {} ({})\nOS: {}\nWebview: {}\n",
        env!("CARGO_PKG_VERSION"),
        env!("CARGO_PKG_LICENSE"),
        os_description(),
        tauri::webview_version().unwrap_or_else(|e| format!("unknown ({e})")),
    );
    let sessions = &app.state::<AppState>().sessions;
    let list = sessions.registry().list();
    out.push_str(&format!("Open sessions: {}\n", list.len()));
    for info in list {
        out.push_str(&format!(
            "- {}\n",
            session_line(
                &info.agent,
                &sessions.snapshot(&info.id).unwrap_or_default()
            )
        ));
    }
    let logging = acp_desk_app::logging::init();
    match logging.folder() {
        None => out.push_str("Log file: none in this run (stderr only)\n"),
        Some(dir) => {
            out.push_str(&format!("Last log lines ({}):\n", dir.display()));
            match acp_desk_app::logging::last_lines(dir, DIAGNOSTIC_LOG_LINES) {
                Ok(lines) => {
                    for l in lines {
                        out.push_str(&l);
                        out.push('\n');
                    }
                }
                Err(e) => out.push_str(&format!("(could not read the log: {e})\n")),
            }
        }
    }
    out
}

/// "demo: ACP Desk Demo Agent 0.1.0 (ready)": the agent as it described itself in its latest
/// `session-status`, and the session's state.
pub fn session_line(agent: &str, events: &[StreamEvent]) -> String {
    let latest = events.iter().rev().find_map(|e| match e {
        StreamEvent::SessionStatus { status, agent, .. } => Some((status, agent)),
        _ => None,
    });
    let Some((status, identity)) = latest else {
        return format!("{agent} (starting)");
    };
    let status = serde_json::to_value(status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let described = identity.as_ref().map(|a| {
        let name = a.title.as_ref().or(a.name.as_ref());
        match (name, &a.version) {
            (Some(n), Some(v)) => format!(": {n} {v}"),
            (Some(n), None) => format!(": {n}"),
            (None, Some(v)) => format!(": version {v}"),
            (None, None) => String::new(),
        }
    });
    format!("{agent}{} ({status})", described.unwrap_or_default())
}

fn os_description() -> String {
    let base = format!("{} {}", std::env::consts::OS, std::env::consts::ARCH);
    #[cfg(target_os = "linux")]
    if let Ok(release) = std::fs::read_to_string("/etc/os-release")
        && let Some(name) = release.lines().find_map(|l| l.strip_prefix("PRETTY_NAME="))
    {
        return format!("{base}, {}", name.trim_matches('"'));
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn about_names_the_version_and_the_licence_from_cargo_toml() {
        let text = about_text();
        assert!(text.starts_with("ACP Desk 0.1.0\n"), "{text}");
        assert!(text.ends_with("Licence: Apache-2.0"), "{text}");
    }

    #[test]
    fn a_session_line_names_the_agent_as_it_described_itself() {
        let events: Vec<StreamEvent> = serde_json::from_value(serde_json::json!([
            {"kind": "session-status", "sessionId": "s1", "status": "starting"},
            {"kind": "session-status", "sessionId": "s1", "status": "ready",
             "agent": {"launchName": "demo", "name": "acp-desk-demo", "title": "ACP Desk Demo", "version": "0.1.0"}},
        ]))
        .unwrap();
        assert_eq!(
            session_line("demo", &events),
            "demo: ACP Desk Demo 0.1.0 (ready)"
        );
        assert_eq!(session_line("claude", &[]), "claude (starting)");
    }
}
