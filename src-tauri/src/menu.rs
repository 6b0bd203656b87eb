//! The window's menu: File → Open Folder…, Quit.

use tauri::menu::{Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::{AppHandle, Runtime};
use tauri_plugin_dialog::DialogExt;

pub const OPEN_FOLDER: &str = "open-folder";
pub const QUIT: &str = "quit";

pub fn build<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<Menu<R>> {
    let open = MenuItem::with_id(app, OPEN_FOLDER, "Open Folder…", true, Some("CmdOrCtrl+O"))?;
    // Not PredefinedMenuItem::quit: muda's GTK backend shows that one greyed out. Exiting
    // through app.exit goes through RunEvent::Exit, which closes the sessions.
    let quit = MenuItem::with_id(app, QUIT, "Quit", true, Some("CmdOrCtrl+Q"))?;
    let sep = PredefinedMenuItem::separator(app)?;
    let file = Submenu::with_items(app, "File", true, &[&open, &sep, &quit])?;
    Menu::with_items(app, &[&file])
}

/// Shows the folder picker; the choice goes to the window as `folder-chosen`, where it takes
/// the same path as a folder given on the command line or dropped.
pub fn pick_folder<R: Runtime>(app: &AppHandle<R>) {
    let handle = app.clone();
    app.dialog()
        .file()
        .set_title("Open a project folder")
        .pick_folder(move |chosen| {
            let Some(chosen) = chosen else { return };
            match chosen.into_path() {
                Ok(path) => {
                    crate::commands::folder_chosen(&handle, path.display().to_string());
                }
                Err(e) => tracing::warn!("the folder picker gave no local path: {e}"),
            }
        });
}
