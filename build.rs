// The app manifest lists our own commands, so the capability grants them by name and a command
// that is not listed cannot be called from the webview.
include!("src-tauri/src/command_names.rs");

/// What `tauri.conf.json`'s `frontendDist` names, as seen from this package's folder.
const UI_INDEX: &str = "ui/dist/index.html";

fn main() {
    println!("cargo:rerun-if-changed=src-tauri/src/command_names.rs");
    if !ui_is_built() {
        return;
    }
    let manifest = tauri_build::AppManifest::new().commands(COMMAND_NAMES);
    if let Err(e) = tauri_build::try_build(tauri_build::Attributes::new().app_manifest(manifest)) {
        eprintln!("tauri-build failed: {e:#}");
        std::process::exit(1);
    }
}

/// With `custom-protocol` (a default feature) `generate_context!` embeds ui/dist, and on a fresh
/// clone it is not built yet: without this check the build fails deep inside that macro with
/// "frontendDist ... doesn't exist", which does not say what to run.
///
/// `cargo::error` (stable since cargo 1.84, below our rust-version 1.90) fails the build once
/// this script returns; the script then exits 0 on purpose, which is the directive's intended
/// use: cargo prints just these lines instead of a dump of the script's whole output.
fn ui_is_built() -> bool {
    if std::env::var_os("CARGO_FEATURE_CUSTOM_PROTOCOL").is_none() {
        // The dev server serves the UI; nothing is embedded.
        return true;
    }
    // Only with the feature on: a missing file makes cargo re-run the script on every build,
    // which is what we want here (it stops failing once the UI is built) and not otherwise.
    println!("cargo:rerun-if-changed={UI_INDEX}");
    // Build scripts run in their package's folder.
    if std::path::Path::new(UI_INDEX).is_file() {
        return true;
    }
    for line in [
        format!(
            "{UI_INDEX} is missing: the UI has not been built yet, and this build embeds it \
             (the default feature `custom-protocol`)."
        ),
        "To build and run everything (OS packages, npm ci, UI build, cargo build, run): \
         scripts/app"
            .to_owned(),
        "To build the UI only, then run cargo again: npm ci && npm run build:ui".to_owned(),
        "To work on the UI with hot reload instead: npm run dev:ui (the Vite dev server), and \
         cargo build --no-default-features (the app then loads the dev server's page)."
            .to_owned(),
    ] {
        println!("cargo::error={line}");
    }
    false
}
