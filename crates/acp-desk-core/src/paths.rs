//! Config and data folders, shared by the CLI and the app.
//!
//! Both follow the OS's conventions for one application identifier, the same string as the
//! desktop app's `tauri.conf.json` `identifier`, joined the way Tauri joins it
//! (`$XDG_CONFIG_HOME/<identifier>` on Linux, `~/Library/Application Support/<identifier>` on
//! macOS, `%APPDATA%\<identifier>` on Windows), so that both front ends read and write the same
//! places. `ACP_DESK_CONFIG_DIR` and `ACP_DESK_DATA_DIR` override them (portable installs, tests).

use std::path::PathBuf;

// Not `….app`: the tauri bundler warns that it clashes with macOS's application bundle extension.
pub const APP_IDENTIFIER: &str = "dev.acpdesk.desk";

pub fn config_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("ACP_DESK_CONFIG_DIR") {
        return PathBuf::from(p);
    }
    directories::BaseDirs::new()
        .map(|b| b.config_dir().join(APP_IDENTIFIER))
        .unwrap_or_else(|| PathBuf::from(".acp-desk").join("config"))
}

pub fn data_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("ACP_DESK_DATA_DIR") {
        return PathBuf::from(p);
    }
    directories::BaseDirs::new()
        .map(|b| b.data_dir().join(APP_IDENTIFIER))
        .unwrap_or_else(|| PathBuf::from(".acp-desk").join("data"))
}

/// The shadow repositories of checkpoints, one per project folder ([`crate::checkpoint`]).
pub fn checkpoints_dir() -> PathBuf {
    data_dir().join("checkpoints")
}

/// The one JSON settings file.
pub fn settings_file() -> PathBuf {
    config_dir().join("settings.json")
}
