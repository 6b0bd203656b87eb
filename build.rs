// The app manifest lists our own commands, so the capability grants them by name and a command
// that is not listed cannot be called from the webview.
include!("src-tauri/src/command_names.rs");

fn main() {
    println!("cargo:rerun-if-changed=src-tauri/src/command_names.rs");
    let manifest = tauri_build::AppManifest::new().commands(COMMAND_NAMES);
    if let Err(e) = tauri_build::try_build(tauri_build::Attributes::new().app_manifest(manifest)) {
        eprintln!("tauri-build failed: {e:#}");
        std::process::exit(1);
    }
}
