//! The commands the webview may call (each listed in the root build.rs's app manifest, which
//! the capability grants). Thin: checking and work happen in `sessions`, the app layer and the
//! engine.

use acp_desk_core::elicitation::ElicitationAnswer;
use acp_desk_core::events::PermissionResolution;
use acp_desk_core::hub::{FrameSink, StreamFrame};
use acp_desk_core::schema::v1 as acp;
use tauri::ipc::Channel;
use tauri::{AppHandle, Emitter, Manager, Runtime, State};
use tauri_plugin_clipboard_manager::ClipboardExt;
use tauri_plugin_dialog::DialogExt;
use tauri_plugin_opener::OpenerExt;

use crate::AppState;
use crate::history::{ExportFormat, HistoryEvents, HistoryHit, HistorySession, HistoryStatus};
use crate::ipc::{
    AppEvent, AppInfo, ConfigValue, FolderChosen, IpcError, OpenSessionEntry, ProjectFiles,
    PromptPart, RestoredSidebar, SessionInfo, TurnEnd,
};

/// A view attached through a Tauri channel. Sending never waits: Tauri queues the frame for
/// the webview; the hub already bounds how often and how much.
struct ChannelSink(Channel<StreamFrame>);

impl FrameSink for ChannelSink {
    fn send(&self, frame: StreamFrame) -> bool {
        match self.0.send(frame) {
            Ok(()) => true,
            Err(e) => {
                tracing::debug!("a view is gone: {e}");
                false
            }
        }
    }
}

// Both read the disk (settings, PATH, the folder): async, and the reading on a blocking
// thread, so a hung network mount cannot freeze the window (sync commands run on the main thread).
#[tauri::command]
pub async fn app_info(state: State<'_, AppState>) -> Result<AppInfo, IpcError> {
    let launch = state.launch.clone();
    let recorder = state.recorder.clone();
    tauri::async_runtime::spawn_blocking(move || {
        // The saved theme; the file is read at start, so this waits at most for that.
        let theme = recorder
            .and_then(|r| r.state(std::time::Duration::from_secs(5)))
            .map(|s| s.theme)
            .unwrap_or_default();
        crate::app_info(&launch, theme)
    })
    .await
    .map_err(|e| IpcError::task_failed("read the app's settings", &e))
}

#[tauri::command]
pub async fn open_session(
    state: State<'_, AppState>,
    folder: String,
    agent: String,
) -> Result<SessionInfo, IpcError> {
    let checked = tauri::async_runtime::spawn_blocking(move || {
        let folder = acp_desk_app::check_folder(&folder)?;
        let resolved = acp_desk_app::resolve_agent_full(&agent)?;
        Ok::<_, IpcError>((folder, resolved, agent))
    })
    .await
    .map_err(|e| IpcError::task_failed("check the folder", &e))??;
    let (folder, resolved, agent) = checked;
    let request = acp_desk_app::OpenRequest::new(folder, &agent, resolved.spec)
        .with_manifest(resolved.manifest.as_ref());
    let request = crate::project_mcp::with_approved(&state, request).await;
    Ok(state.sessions.open_request(request))
}

#[tauri::command]
pub fn attach(
    state: State<'_, AppState>,
    session: String,
    on_frame: Channel<StreamFrame>,
) -> Result<(), IpcError> {
    state
        .sessions
        .attach(&session, Box::new(ChannelSink(on_frame)))
}

/// Runs one turn; resolves when it ends. The turn's events arrive on the session's channel.
#[tauri::command]
pub async fn prompt(
    state: State<'_, AppState>,
    session: String,
    parts: Vec<PromptPart>,
) -> Result<TurnEnd, IpcError> {
    state.sessions.prompt(&session, parts).await
}

/// `session/set_mode`; the change also arrives as a `current-mode` event.
#[tauri::command]
pub async fn set_mode(
    state: State<'_, AppState>,
    session: String,
    mode_id: String,
) -> Result<(), IpcError> {
    state.sessions.set_mode(&session, &mode_id).await
}

/// `session/set_config_option`; the agent's new options also arrive as a `config-options` event.
#[tauri::command]
pub async fn set_config_option(
    state: State<'_, AppState>,
    session: String,
    config_id: String,
    value: ConfigValue,
) -> Result<(), IpcError> {
    state
        .sessions
        .set_config_option(&session, &config_id, value)
        .await
}

#[tauri::command]
pub async fn list_files(
    state: State<'_, AppState>,
    session: String,
) -> Result<ProjectFiles, IpcError> {
    state.sessions.list_files(&session).await
}

/// Opens a file inside the session's folder in the user's default app for it. `line` is
/// accepted for the UI's sake, but system openers cannot jump to a line, so it is not used.
#[tauri::command]
pub async fn open_path<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    session: String,
    path: String,
    line: Option<u32>,
) -> Result<(), IpcError> {
    let _ = line;
    let file = state.sessions.path_inside(&session, path).await?;
    let checked = file.clone();
    tauri::async_runtime::spawn_blocking(move || crate::files::check_openable(&checked))
        .await
        .map_err(|e| IpcError::task_failed("open the file", &e))??;
    let opened = tauri::async_runtime::spawn_blocking(move || {
        app.opener()
            .open_path(file.display().to_string(), None::<&str>)
    })
    .await;
    opener_result(opened, "open the file")
}

/// Shows a file or folder inside the session's folder in the system's file manager.
#[tauri::command]
pub async fn reveal_path<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    session: String,
    path: String,
) -> Result<(), IpcError> {
    let file = state.sessions.path_inside(&session, path).await?;
    let shown =
        tauri::async_runtime::spawn_blocking(move || app.opener().reveal_item_in_dir(file)).await;
    opener_result(shown, "show the file")
}

/// Opens the user's settings file (`agent_servers` and the rest) in their default app for it,
/// or, while there is none yet, the folder it goes in: the settings file is only read by us
/// (ARCHITECTURE rule 22), so it is never created here.
/// Help → Open Settings File does the same (`help::open_settings_file`).
#[tauri::command]
pub async fn open_settings_file<R: Runtime>(app: AppHandle<R>) -> Result<(), IpcError> {
    tauri::async_runtime::spawn_blocking(move || crate::help::open_settings_file(&app))
        .await
        .map_err(|e| IpcError::task_failed("open the settings file", &e))?
}

/// Opens an http(s) or mailto link in the user's browser or mail app; anything else is refused
/// (links come from agent Markdown, which the user did not write).
#[tauri::command]
pub async fn open_url<R: Runtime>(app: AppHandle<R>, url: String) -> Result<(), IpcError> {
    let url = crate::files::check_url(&url)?;
    let opened = tauri::async_runtime::spawn_blocking(move || {
        app.opener().open_url(url.as_str(), None::<&str>)
    })
    .await;
    opener_result(opened, "open the link")
}

fn opener_result(
    r: Result<Result<(), tauri_plugin_opener::Error>, tauri::Error>,
    what: &str,
) -> Result<(), IpcError> {
    match r {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(IpcError::InvalidInput(format!("could not {what}: {e}"))),
        Err(e) => Err(IpcError::task_failed(what, &e)),
    }
}

/// Stops the running turn (Stop / Esc): it ends `cancelled`.
#[tauri::command]
pub fn cancel(state: State<'_, AppState>, session: String) -> Result<(), IpcError> {
    state.sessions.cancel(&session)
}

#[tauri::command]
pub async fn respond_permission(
    state: State<'_, AppState>,
    session: String,
    request_id: String,
    resolution: PermissionResolution,
) -> Result<(), IpcError> {
    state
        .sessions
        .respond(&session, &request_id, resolution)
        .await
}

/// Answers the agent's question (an `elicitation`'s `requestId`): accept with the form's
/// values (checked against its fields first: `invalid-answer` says what is wrong, and the
/// question stays open), decline, or cancel. URL mode: accept after the user agreed to open the
/// page (the window opens it with `open_url`).
#[tauri::command]
pub async fn elicitation_answer(
    state: State<'_, AppState>,
    session: String,
    request_id: String,
    answer: ElicitationAnswer,
) -> Result<(), IpcError> {
    state
        .sessions
        .answer_elicitation(&session, &request_id, answer)
        .await
}

/// Stops a background task the agent said can be stopped (`_session/async_task/stop`); the
/// task's own `background-task` event settles it.
#[tauri::command]
pub async fn background_task_stop(
    state: State<'_, AppState>,
    session: String,
    task_id: String,
) -> Result<(), IpcError> {
    state
        .sessions
        .stop_background_task(&session, &task_id)
        .await
}

/// The session's checkpointed steps (turns, reverts, restores) and the space they take.
#[tauri::command]
pub async fn checkpoint_list(
    state: State<'_, AppState>,
    session: String,
) -> Result<acp_desk_app::checkpoints::CheckpointListing, IpcError> {
    state.sessions.checkpoint_list(&session).await
}

/// What step `turn` changed, file by file; without `turn`, the session since it started.
#[tauri::command]
pub async fn checkpoint_changes(
    state: State<'_, AppState>,
    session: String,
    turn: Option<u32>,
) -> Result<acp_desk_core::checkpoint::Changes, IpcError> {
    state.sessions.checkpoint_changes(&session, turn).await
}

/// One file before the step, after it and now (the review's diff, the conflict's three
/// versions).
#[tauri::command]
pub async fn checkpoint_file(
    state: State<'_, AppState>,
    session: String,
    turn: Option<u32>,
    path: String,
    old_path: Option<String>,
) -> Result<acp_desk_core::checkpoint::FileVersions, IpcError> {
    state
        .sessions
        .checkpoint_file(&session, turn, path, old_path)
        .await
}

/// Undo step `turn` (only `file` of it, when given). Files changed since the step are
/// conflicts (nothing written) unless `force`. Refused while a turn runs in the folder.
#[tauri::command]
pub async fn checkpoint_revert(
    state: State<'_, AppState>,
    session: String,
    turn: u32,
    file: Option<String>,
    force: bool,
) -> Result<acp_desk_core::checkpoint::RevertOutcome, IpcError> {
    state
        .sessions
        .checkpoint_revert(&session, turn, file, force)
        .await
}

/// The whole folder back to before step `turn`; conflicts as for a revert.
#[tauri::command]
pub async fn checkpoint_restore(
    state: State<'_, AppState>,
    session: String,
    turn: u32,
    force: bool,
) -> Result<acp_desk_core::checkpoint::RevertOutcome, IpcError> {
    state
        .sessions
        .checkpoint_restore(&session, turn, force)
        .await
}

/// Reconnect: a new agent process for a session whose agent ended, continuing it in place (the
/// window keeps its thread; see `Registry::reconnect`).
#[tauri::command]
pub async fn reconnect_session(
    state: State<'_, AppState>,
    session: String,
) -> Result<SessionInfo, IpcError> {
    state.sessions.reconnect(&session).await
}

#[tauri::command]
pub async fn close_session(state: State<'_, AppState>, session: String) -> Result<(), IpcError> {
    state.sessions.close(&session).await
}

/// File → Open Folder, also offered as a button in the window. The choice arrives as the
/// `folder-chosen` event, the same way the menu's does.
#[tauri::command]
pub fn pick_folder<R: Runtime>(app: AppHandle<R>) {
    crate::menu::pick_folder(&app);
}

/// Emits `folder-chosen` (with the agent to open it with, when the choice named one: Open
/// Recent, a second launch's `--agent`); exposed for the menu and the lifecycle.
pub(crate) fn folder_chosen<R: Runtime>(app: &AppHandle<R>, path: String, agent: Option<String>) {
    if let Err(e) = app.emit(AppEvent::FolderChosen.name(), FolderChosen { path, agent }) {
        tracing::warn!("could not tell the window about the chosen folder: {e}");
    }
}

// History (src/history.rs): every read and write of the store on the blocking pool.

/// Runs `f` with the app's state on the blocking pool (SQLite, the state file and the keychain
/// block); `what` names the work in the error if the task fails.
pub(crate) async fn blocking<R: Runtime, T: Send + 'static>(
    app: AppHandle<R>,
    what: &'static str,
    f: impl FnOnce(&AppState) -> Result<T, IpcError> + Send + 'static,
) -> Result<T, IpcError> {
    tauri::async_runtime::spawn_blocking(move || f(&app.state::<AppState>()))
        .await
        .map_err(|e| IpcError::task_failed(what, &e))?
}

/// Whether sessions are recorded, and what the user must hear about the history file.
#[tauri::command]
pub async fn history_status<R: Runtime>(app: AppHandle<R>) -> Result<HistoryStatus, IpcError> {
    blocking(app, "read the history's state", |s| Ok(s.history.status())).await
}

/// Every stored session, the most recently updated first.
#[tauri::command]
pub async fn history_list<R: Runtime>(app: AppHandle<R>) -> Result<Vec<HistorySession>, IpcError> {
    blocking(app, "list the past sessions", |s| {
        s.history.list(s.sessions.registry())
    })
    .await
}

/// Rows of every stored transcript that hold every word of `text`, the newest first.
#[tauri::command]
pub async fn history_search<R: Runtime>(
    app: AppHandle<R>,
    text: String,
) -> Result<Vec<HistoryHit>, IpcError> {
    blocking(app, "search the history", move |s| s.history.search(&text)).await
}

/// A stored session and its transcript (StreamEvents, with their row numbers).
#[tauri::command]
pub async fn history_events<R: Runtime>(
    app: AppHandle<R>,
    id: String,
) -> Result<HistoryEvents, IpcError> {
    blocking(app, "read the past session", move |s| {
        s.history.events(s.sessions.registry(), &id)
    })
    .await
}

/// Deletes a stored session (the window asked the user first), at its agent too when the agent
/// offers `session/delete`; says where it was deleted.
#[tauri::command]
pub async fn history_delete<R: Runtime>(app: AppHandle<R>, id: String) -> Result<String, IpcError> {
    let record = blocking(app.clone(), "delete the past session", {
        let id = id.clone();
        move |s| s.history.deletable(s.sessions.registry(), &id)
    })
    .await?;
    // The agent's copy first (`session/delete`, when it offers it): a failure there is said,
    // and ACP Desk's copy goes anyway, as the user asked.
    let at_agent = app
        .state::<AppState>()
        .sessions
        .registry()
        .delete_at_agent(&record)
        .await;
    blocking(app, "delete the past session", move |s| {
        s.history.delete(&id)
    })
    .await?;
    Ok(format!(
        "Deleted from the history, {}",
        at_agent.describe(&record.agent)
    ))
}

/// Exports a stored session into a file the user picks; the file's path, or `None` when the
/// user cancelled the dialog.
#[tauri::command]
pub async fn history_export<R: Runtime>(
    app: AppHandle<R>,
    id: String,
    format: ExportFormat,
) -> Result<Option<String>, IpcError> {
    let dialog = app.clone();
    blocking(app, "export the session", move |s| {
        let (name, text) = s.history.export(&id, format)?;
        let (filter, ext) = match format {
            ExportFormat::Markdown => ("Markdown", "md"),
            ExportFormat::Jsonl => ("StreamEvent JSON lines", "jsonl"),
        };
        let chosen = dialog
            .dialog()
            .file()
            .set_title("Export the session")
            .set_file_name(&name)
            .add_filter(filter, &[ext])
            .blocking_save_file();
        let Some(chosen) = chosen else {
            return Ok(None);
        };
        let path = chosen.into_path().map_err(|e| {
            IpcError::InvalidInput(format!("the chosen place cannot be written to: {e}"))
        })?;
        std::fs::write(&path, text).map_err(|e| {
            IpcError::InvalidInput(format!(
                "could not write {}: {e}; nothing was exported, choose another place",
                path.display()
            ))
        })?;
        Ok(Some(path.display().to_string()))
    })
    .await
}

/// Puts a stored session's full id on the clipboard (for `acp-desk-cli history show ID`).
#[tauri::command]
pub async fn history_copy_id<R: Runtime>(app: AppHandle<R>, id: String) -> Result<(), IpcError> {
    let clip = app.clone();
    blocking(app, "copy the session id", move |s| {
        let full = s.history.full_id(&id)?;
        clip.clipboard()
            .write_text(full)
            .map_err(|e| IpcError::InvalidInput(format!("could not write to the clipboard: {e}")))
    })
    .await
}

/// Continues a stored session with its agent: a new session of the window under the stored
/// id (its events are appended to the stored transcript). `session-continued` in its stream
/// says whether the agent resumed, loaded, or could only start afresh.
#[tauri::command]
pub async fn history_continue<R: Runtime>(
    app: AppHandle<R>,
    id: String,
) -> Result<SessionInfo, IpcError> {
    let handle = app.clone();
    let request = blocking(app, "continue the past session", move |s| {
        s.history.continue_request(s.sessions.registry(), &id)
    })
    .await?;
    let state = handle.state::<AppState>();
    let request = crate::project_mcp::with_approved(&state, request).await;
    Ok(state.sessions.registry().open(request).into())
}

/// Sends a stored session's transcript to a running session whose agent could not continue
/// it, as one prompt: embedded when the agent takes embedded context, else a link to the
/// Markdown export written into the data folder. Resolves when that turn ends.
#[tauri::command]
pub async fn history_send_context<R: Runtime>(
    app: AppHandle<R>,
    session: String,
    stored: String,
) -> Result<TurnEnd, IpcError> {
    let state = app.state::<AppState>();
    let registry = state.sessions.registry();
    let caps = registry.handle(&session)?.prompt_capabilities().clone();
    let (file, text) = blocking(app.clone(), "write the old conversation", move |s| {
        s.history.context_file(&stored)
    })
    .await?;
    let uri = url::Url::from_file_path(&file)
        .map_err(|()| IpcError::Internal(format!("{} is not a file path", file.display())))?
        .to_string();
    let transcript = if caps.embedded_context {
        acp::ContentBlock::Resource(acp::EmbeddedResource::new(
            acp::EmbeddedResourceResource::TextResourceContents(
                acp::TextResourceContents::new(text, uri).mime_type("text/markdown".to_string()),
            ),
        ))
    } else {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "conversation.md".into());
        acp::ContentBlock::ResourceLink(
            acp::ResourceLink::new(name, uri).mime_type("text/markdown".to_string()),
        )
    };
    let intro = acp::ContentBlock::Text(acp::TextContent::new(
        "This is our earlier conversation in this folder, which you could not continue \
         (exported by ACP Desk). Read it for context, then wait for my next message."
            .to_string(),
    ));
    let outcome = registry.prompt(&session, vec![intro, transcript]).await?;
    Ok(outcome.into())
}

/// The agent `agent` resolved and `folder` checked, on the blocking pool (both read the disk).
async fn agent_in_folder(
    agent: &str,
    folder: String,
) -> Result<(acp_desk_core::agents::Resolved, std::path::PathBuf), IpcError> {
    let name = agent.to_owned();
    tauri::async_runtime::spawn_blocking(move || {
        Ok::<_, IpcError>((
            acp_desk_app::resolve_agent_full(&name)?,
            acp_desk_app::check_folder(&folder)?,
        ))
    })
    .await
    .map_err(|e| IpcError::task_failed("check the folder", &e))?
}

/// The agent's own sessions in `folder` (`session/list`): a running session of that agent is
/// asked; else the agent is started for the question and ended (none is started at app start).
#[tauri::command]
pub async fn history_agent_sessions(
    state: State<'_, AppState>,
    agent: String,
    folder: String,
) -> Result<Vec<crate::history::AgentSession>, IpcError> {
    let (resolved, folder) = agent_in_folder(&agent, folder).await?;
    let listed = state
        .sessions
        .registry()
        .list_agent_sessions(&agent, resolved.spec, &folder)
        .await?;
    Ok(listed
        .into_iter()
        .map(|s| crate::history::AgentSession {
            acp_session_id: s.session_id.to_string(),
            title: s.title,
            updated_at: s.updated_at,
        })
        .collect())
}

/// Opens a session the agent listed: with `session/load` its replay is shown and stored as
/// the transcript; with resume only the earlier conversation cannot be shown
/// (`session-continued` says which).
#[tauri::command]
pub async fn history_import(
    state: State<'_, AppState>,
    agent: String,
    folder: String,
    acp_session_id: String,
) -> Result<SessionInfo, IpcError> {
    let (resolved, folder) = agent_in_folder(&agent, folder).await?;
    // A manifest agent's `audit` applies to the imported session (invariant 33).
    let request = acp_desk_app::import_request(agent, resolved.spec, folder, acp_session_id)
        .with_manifest(resolved.manifest.as_ref());
    let request = crate::project_mcp::with_approved(&state, request).await;
    Ok(state.sessions.registry().open(request).into())
}

/// The sidebar as the last run left it (the window's start): sessions, transcripts, drafts.
#[tauri::command]
pub async fn restored_sessions(state: State<'_, AppState>) -> Result<RestoredSidebar, IpcError> {
    crate::restore::restored_sessions(&state).await
}

/// Saves the sidebar (its sessions in order and the one shown) for the next start.
#[tauri::command]
pub fn set_open_sessions(
    state: State<'_, AppState>,
    sessions: Vec<OpenSessionEntry>,
    shown: Option<u32>,
) -> Result<(), IpcError> {
    crate::restore::set_open_sessions(&state, sessions, shown)
}

/// Keeps a session's draft, by its history id, for the next start ("" forgets it).
#[tauri::command]
pub fn save_draft(
    state: State<'_, AppState>,
    session_id: String,
    text: String,
) -> Result<(), IpcError> {
    crate::restore::save_draft(&state, &session_id, &text)
}

/// Starts a restored session's agent, continuing its stored conversation (by its history id).
#[tauri::command]
pub async fn continue_session(
    state: State<'_, AppState>,
    session_id: String,
) -> Result<SessionInfo, IpcError> {
    crate::restore::continue_session(&state, session_id).await
}

// The Agents view's commands live in `agents.rs`; the handler finds them (and the items
// `#[tauri::command]` makes beside each) here.
pub use crate::agents::*;
// The MCP servers & secrets view's, in `secrets.rs`.
pub use crate::secrets::*;
// A project's own MCP config: `project_mcp.rs`.
pub use crate::project_mcp::*;
// Sign-in (issue 18): `sign_in.rs`.
pub use crate::sign_in::*;
// Terminal logins: `login.rs`.
pub use crate::login::*;

// The one list of command names (the root build.rs includes it too, for the app manifest).
include!("command_names.rs");
pub(crate) use with_command_names;
