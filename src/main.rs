// No console window on Windows release builds (unverified here: only Linux builds on this machine).
#![cfg_attr(
    all(not(debug_assertions), target_os = "windows"),
    windows_subsystem = "windows"
)]

fn main() {
    acp_desk_shell::run(tauri::generate_context!());
}
