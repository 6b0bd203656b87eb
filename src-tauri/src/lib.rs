//! ACP Desk's desktop shell: adapts the engine (acp-desk-core) to Tauri. Commands for
//! request/response, a channel per attached view for each session's events, the menu, the
//! folder dialog and native drag-drop. Nothing here decides what the engine does.

pub mod agents;
pub mod commands;
pub mod desktop;
pub mod files;
pub mod help;
pub mod history;
pub mod ipc;
pub mod lifecycle;
pub mod login;
pub mod menu;
pub mod project_mcp;
pub mod restore;
pub mod secrets;
pub mod sessions;
pub mod sign_in;

use std::path::PathBuf;
use std::sync::Arc;

use acp_desk_app::state::{StateFile, StateRecorder};

use tauri::{Builder, DragDropEvent, Emitter, Manager, Runtime, WindowEvent};

use crate::ipc::{AppEvent, AppInfo, DragHover, PathsDropped};
use crate::sessions::Sessions;

/// What the command line asked for: `acp-desk [--agent NAME] [FOLDER]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Launch {
    pub folder: Option<String>,
    pub agent: Option<String>,
}

impl Launch {
    /// Reads the arguments after the program name. Unknown flags are ignored (with a log line)
    /// rather than refused: desktop launchers add their own.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Self {
        Self::parse_in(args, std::env::current_dir().ok().as_deref())
    }

    /// [`Launch::parse`] with a relative folder resolved against `cwd` (a second launch's
    /// working folder, which is not ours); left relative without one.
    pub fn parse_in(args: impl IntoIterator<Item = String>, cwd: Option<&std::path::Path>) -> Self {
        let mut out = Self::default();
        let mut args = args.into_iter();
        while let Some(a) = args.next() {
            if a == "--agent" {
                out.agent = args.next();
            } else if let Some(v) = a.strip_prefix("--agent=") {
                out.agent = Some(v.to_string());
            } else if a.starts_with('-') {
                // The flag's name only: `--token=…` is a value the log must not keep.
                let name = a.split('=').next().unwrap_or_default();
                tracing::info!("ignoring the unknown argument {name}");
            } else if out.folder.is_none() {
                out.folder = Some(absolute(&a, cwd));
            }
        }
        out
    }
}

fn absolute(p: &str, cwd: Option<&std::path::Path>) -> String {
    let path = PathBuf::from(p);
    if path.is_absolute() {
        return p.to_string();
    }
    match cwd {
        Some(cwd) => cwd.join(path).display().to_string(),
        None => p.to_string(),
    }
}

pub struct AppState {
    pub sessions: Sessions,
    pub launch: Launch,
    /// Writes what the app remembers between runs (the app layer's state file); `None` when
    /// its thread could not start (the app then remembers nothing, and says so in the log).
    pub recorder: Option<Arc<StateRecorder>>,
    /// Records every session into the history store, and reads it for the History view.
    pub history: crate::history::History,
    /// Where secrets live (the OS keychain; tests hand in a `MemoryKeychain`): the MCP servers
    /// & secrets view's commands use it, on the blocking pool only.
    pub keychain: Arc<dyn acp_desk_core::secrets::Keychain>,
}

impl AppState {
    pub fn new(launch: Launch) -> Self {
        Self::with_keychain(launch, crate::secrets::os_keychain())
    }

    pub fn with_keychain(
        launch: Launch,
        keychain: Arc<dyn acp_desk_core::secrets::Keychain>,
    ) -> Self {
        let sessions = Sessions::default();
        sessions
            .registry()
            .take_checkpoints(Some(acp_desk_core::paths::checkpoints_dir()));
        let recorder = match StateRecorder::start(StateFile::default_path()) {
            Ok(r) => {
                let r = Arc::new(r);
                sessions.registry().add_observer(r.clone());
                Some(r)
            }
            Err(e) => {
                tracing::warn!("the app's state will not be saved: {e}");
                None
            }
        };
        // The one setting read at start: whether to record at all (a small file; the rest of
        // the settings is read on the blocking pool when the window asks).
        let history = if acp_desk_core::settings::load().settings.history.enabled {
            crate::history::History::start(sessions.registry())
        } else {
            crate::history::History::off(
                acp_desk_store::default_path(),
                &acp_desk_core::paths::settings_file(),
            )
        };
        Self {
            sessions,
            launch,
            recorder,
            history,
            keychain,
        }
    }
}

/// What the window needs to start. No agent detection here: the window asks for the listing
/// once it is up (`agents_list`), so a slow PATH or npm lookup never holds up its start.
pub fn app_info(launch: &Launch, theme: crate::ipc::Theme) -> AppInfo {
    AppInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        initial_folder: launch.folder.clone(),
        initial_agent: launch.agent.clone(),
        config_dir: acp_desk_core::paths::config_dir().display().to_string(),
        data_dir: acp_desk_core::paths::data_dir().display().to_string(),
        theme,
        desktop_notice: crate::desktop::notice(),
    }
}

/// The window never leaves the app: a navigation anywhere else (a link the sanitizer missed, a
/// terminal hyperlink, a script of an agent's) is refused; links reach the system browser only
/// through `open_url`.
fn navigation_guard<R: Runtime>() -> tauri::plugin::TauriPlugin<R> {
    tauri::plugin::Builder::new("navigation-guard")
        .on_navigation(|_, url| {
            let ok = is_app_url(url);
            if !ok {
                tracing::warn!("refused to navigate the window to {url}");
            }
            ok
        })
        .build()
}

/// The app's own pages: the embedded UI (`tauri://localhost`, `http(s)://tauri.localhost` on
/// Windows) and, in development builds only, the Vite dev server.
pub fn is_app_url(url: &url::Url) -> bool {
    match (url.scheme(), url.host_str()) {
        ("tauri", Some("localhost")) => true,
        ("http" | "https", Some("tauri.localhost")) => true,
        ("http", Some("localhost")) => tauri::is_dev() && url.port() == Some(5173),
        _ => false,
    }
}

/// The invoke handler for the commands `with_command_names!` lists.
macro_rules! command_handler {
    ($($name:ident),* $(,)?) => {
        tauri::generate_handler![$(commands::$name),*]
    };
}

/// Everything but the run loop and the log file: plugins, state, commands, the menu,
/// drag-drop. Tests build it on Tauri's mock runtime.
pub fn build_app<R: Runtime>(builder: Builder<R>, launch: Launch) -> Builder<R> {
    build_app_with(builder, launch, crate::secrets::os_keychain())
}

/// [`build_app`] with the keychain given (tests: a `MemoryKeychain`).
pub fn build_app_with<R: Runtime>(
    builder: Builder<R>,
    launch: Launch,
    keychain: Arc<dyn acp_desk_core::secrets::Keychain>,
) -> Builder<R> {
    builder
        // First: a second launch hands its folder over and exits in this plugin's setup.
        .plugin(lifecycle::instance::plugin())
        .plugin(tauri_plugin_dialog::init())
        // Help → Copy Diagnostics, from Rust only (the window is granted none of its commands).
        .plugin(tauri_plugin_clipboard_manager::init())
        // Used from our own commands only: the capability grants the window none of its
        // permissions, so paths and links are always checked by us first.
        // Its injected click handler is off too: a link in agent text goes through `open_url`.
        .plugin(
            tauri_plugin_opener::Builder::new()
                .open_js_links_on_click(false)
                .build(),
        )
        .plugin(navigation_guard())
        .manage(AppState::with_keychain(launch, keychain))
        .manage(login::Logins::default())
        .plugin(lifecycle::plugin())
        .plugin(lifecycle::window_state())
        // Registered from the one list the manifest and the UI's types come from.
        .invoke_handler(commands::with_command_names!(command_handler))
        .menu(menu::build)
        .on_menu_event(|app, event| menu::on_event(app, event.id().as_ref()))
        .on_page_load(|webview, payload| {
            // A reload (or any new page) starts a new UI that knows nothing of the old page's
            // sessions: end them rather than leave their agents running unseen.
            if payload.event() == tauri::webview::PageLoadEvent::Started {
                let app = webview.app_handle().clone();
                tauri::async_runtime::spawn(async move {
                    login::end_all(&app).await;
                    app.state::<AppState>().sessions.close_all().await;
                });
            }
        })
        .on_window_event(|window, event| {
            if let WindowEvent::DragDrop(drop) = event {
                on_drag_drop(window, drop);
            }
            // A login's terminal is in the window: once it is closed (or hidden in the tray)
            // nobody sees the login any more, so it ends.
            if matches!(
                event,
                WindowEvent::CloseRequested { .. } | WindowEvent::Destroyed
            ) && window.label() == menu::MAIN
            {
                let app = window.app_handle().clone();
                tauri::async_runtime::spawn(async move { login::end_all(&app).await });
            }
        })
}

fn on_drag_drop<R: Runtime>(window: &tauri::Window<R>, event: &DragDropEvent) {
    let sent = match event {
        DragDropEvent::Enter { .. } => {
            window.emit(AppEvent::DragHover.name(), DragHover { active: true })
        }
        DragDropEvent::Leave => {
            window.emit(AppEvent::DragHover.name(), DragHover { active: false })
        }
        DragDropEvent::Drop { paths, position } => {
            let _ = window.emit(AppEvent::DragHover.name(), DragHover { active: false });
            let scale = drop_scale(window);
            window.emit(
                AppEvent::PathsDropped.name(),
                PathsDropped {
                    paths: paths.iter().map(|p| p.display().to_string()).collect(),
                    x: position.x / scale,
                    y: position.y / scale,
                },
            )
        }
        _ => Ok(()),
    };
    if let Err(e) = sent {
        tracing::warn!("could not tell the window about a drag: {e}");
    }
}

/// What to divide a drop position by to get CSS pixels. The type says "physical", but wry
/// passes GTK widget coordinates (Linux) and AppKit points (macOS) through unscaled, which are
/// already logical; only WebView2 (Windows) reports device pixels.
fn drop_scale<R: Runtime>(window: &tauri::Window<R>) -> f64 {
    if cfg!(windows) {
        window.scale_factor().unwrap_or(1.0)
    } else {
        1.0
    }
}

/// The app: `acp-desk [--agent NAME] [FOLDER]`.
pub fn run(context: tauri::Context<tauri::Wry>) {
    // Every session's (and Check's) secrets come from the OS's keychain (issue 17).
    // (The same one the window's secrets commands use: `AppState::new`.)
    acp_desk_core::session::set_default_keychain(crate::secrets::os_keychain());
    // Stderr from the first line; the file once Tauri can say where the OS keeps app logs.
    let logging = acp_desk_app::logging::init();
    let launch = Launch::parse(std::env::args().skip(1));
    let app = build_app(tauri::Builder::default(), launch)
        .setup(|app| {
            start_log_file(app.handle());
            crate::history::notify_window(app.handle());
            menu::apply_saved(app.handle());
            desktop::start(app.handle());
            Ok(())
        })
        .build(context);
    let app = match app {
        Ok(app) => app,
        Err(e) => {
            eprintln!("ACP Desk could not start its window: {e}");
            std::process::exit(1);
        }
    };
    app.run(|app, event| {
        if let tauri::RunEvent::Exit = event {
            desktop::finish(app);
            // Closing the window ends the sessions' agents (politely, then by force). The
            // supervisor's lifeline ends them too if this process dies without getting here.
            let state = app.state::<AppState>();
            tauri::async_runtime::block_on(login::end_all(app));
            tauri::async_runtime::block_on(state.sessions.close_all());
            if let Some(r) = &state.recorder {
                r.finish();
            }
            state.history.finish();
            logging.finish();
        }
    });
}

/// Starts the log file in the OS's log folder for the app's identifier (Tauri's
/// `app_log_dir`: `~/.local/share/<id>/logs` on Linux, `~/Library/Logs/<id>` on macOS,
/// `%LOCALAPPDATA%\<id>\logs` on Windows), or in `logs` in the data folder when
/// `ACP_DESK_DATA_DIR` moves it (portable installs, tests). Without either, stderr only.
fn start_log_file<R: Runtime>(app: &tauri::AppHandle<R>) {
    let dir = if std::env::var_os("ACP_DESK_DATA_DIR").is_some() {
        Ok(acp_desk_core::paths::data_dir().join("logs"))
    } else {
        app.path().app_log_dir()
    };
    let dir = match dir {
        Ok(dir) => dir,
        Err(e) => {
            tracing::warn!("no log folder, logging to stderr only: {e}");
            return;
        }
    };
    if let Err(e) = acp_desk_app::logging::init().write_to_folder(&dir) {
        tracing::warn!("logging to stderr only: {e}");
    }
}
