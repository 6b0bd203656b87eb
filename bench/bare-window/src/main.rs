// One window showing a static page, nothing else: no plugins, commands, menu or tray.
fn main() {
    if let Err(e) = tauri::Builder::default().run(tauri::generate_context!()) {
        eprintln!("bare-window could not start: {e}");
        std::process::exit(1);
    }
}
