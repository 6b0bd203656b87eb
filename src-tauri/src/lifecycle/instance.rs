//! One ACP Desk per user and data folder: a second launch hands its arguments to the running
//! app (tauri-plugin-single-instance, over the session bus on Linux) and exits; the running app
//! comes forward and opens the folder the way a dropped or chosen folder opens.
//!
//! The plugin owns the well-known name `<id>.SingleInstance` on the session bus. `<id>` is the
//! app's identifier, with a suffix naming the data folder when `ACP_DESK_DATA_DIR` moves it:
//! two apps with different data folders share no state, so they are not one instance (tests run
//! side by side this way, and a portable install does not hand its folders to the installed
//! app).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use tauri::plugin::TauriPlugin;
use tauri::{AppHandle, Manager, Runtime};

use crate::Launch;

/// One instance lock per process: a second app built in the same process (tests build many)
/// would find the name taken by the first, hand its arguments to it and end the process.
static REGISTERED: AtomicBool = AtomicBool::new(false);

/// The plugin, to be registered first (before any other plugin's setup runs: a second launch
/// exits during its own setup). Without a D-Bus session bus it is left out, and says so.
pub fn plugin<R: Runtime>() -> TauriPlugin<R> {
    if let Some(why) = no_session_bus(
        std::env::var_os("DBUS_SESSION_BUS_ADDRESS").as_deref(),
        std::env::var_os("XDG_RUNTIME_DIR")
            .as_deref()
            .map(Path::new),
    ) {
        tracing::warn!(
            "{why}: ACP Desk cannot find a running instance, so this one runs on its own (a \
             folder opened again opens in a second window)"
        );
        return off();
    }
    if REGISTERED.swap(true, Ordering::SeqCst) {
        tracing::debug!("single instance: this process has its lock already");
        return off();
    }
    let data_dir = std::env::var_os("ACP_DESK_DATA_DIR").map(|_| acp_desk_core::paths::data_dir());
    tauri_plugin_single_instance::Builder::new()
        .dbus_id(dbus_id(data_dir.as_deref()))
        .callback(|app, argv, cwd| second_launch(app, argv, &cwd))
        .build()
}

fn off<R: Runtime>() -> TauriPlugin<R> {
    tauri::plugin::Builder::new("single-instance-off").build()
}

/// Why there is no session bus to use, if there is none: `DBUS_SESSION_BUS_ADDRESS` unset and
/// no `$XDG_RUNTIME_DIR/bus` socket (zbus's fallback). Other platforms use no bus.
pub fn no_session_bus(
    address: Option<&std::ffi::OsStr>,
    runtime_dir: Option<&Path>,
) -> Option<String> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    if address.is_some_and(|a| !a.is_empty()) {
        return None;
    }
    if runtime_dir.is_some_and(|d| d.join("bus").exists()) {
        return None;
    }
    Some("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)".into())
}

/// The base of the plugin's D-Bus name: the identifier, plus `.d<hash>` of the data folder when
/// it was moved.
pub fn dbus_id(moved_data_dir: Option<&Path>) -> String {
    let id = acp_desk_core::paths::APP_IDENTIFIER;
    match moved_data_dir {
        None => id.to_string(),
        // FNV-1a: stable across builds and runs (the std hasher's output is not promised to
        // be), so two launches of any build with one data folder find each other.
        Some(dir) => {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for b in dir.as_os_str().as_encoded_bytes() {
                h ^= u64::from(*b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
            format!("{id}.d{h:016x}")
        }
    }
}

/// What a second launch asked for: its arguments (the program first, as the plugin passes
/// them), a relative folder resolved against the second launch's working folder, not ours.
pub fn parse_second_launch(argv: Vec<String>, cwd: &str) -> Launch {
    let cwd = (!cwd.is_empty()).then(|| Path::new(cwd));
    Launch::parse_in(argv.into_iter().skip(1), cwd)
}

/// The plugin's callback (on its D-Bus thread): the window comes forward, and the folder, if
/// any, opens in it.
fn second_launch<R: Runtime>(app: &AppHandle<R>, argv: Vec<String>, cwd: &str) {
    let launch = parse_second_launch(argv, cwd);
    tracing::info!(
        folder = launch.folder.is_some(),
        "ACP Desk was started again: showing this instance"
    );
    if let Some(w) = app.get_webview_window(crate::menu::MAIN) {
        let shown = w
            .show()
            .and_then(|()| w.unminimize())
            .and_then(|()| w.set_focus());
        if let Err(e) = shown {
            tracing::warn!("could not bring the window forward: {e}");
        }
        crate::desktop::window_shown(app, true);
    }
    match launch.folder {
        Some(folder) => crate::commands::folder_chosen(app, folder, launch.agent),
        None if launch.agent.is_some() => {
            tracing::info!("a second launch named an agent but no folder: nothing to open")
        }
        None => {}
    }
}
