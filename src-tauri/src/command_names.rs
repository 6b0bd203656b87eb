/// Every command the webview may call. The root build.rs turns each into an `allow-…`
/// permission of the app manifest; `capabilities/default.json` grants them through the
/// `allow-app-commands` set (permissions/app-commands.toml).
pub const COMMAND_NAMES: &[&str] = &[
    "app_info",
    "open_session",
    "attach",
    "prompt",
    "cancel",
    "respond_permission",
    "close_session",
    "pick_folder",
    "set_mode",
    "set_config_option",
    "list_files",
    "open_path",
    "reveal_path",
    "open_url",
    "open_settings_file",
];
