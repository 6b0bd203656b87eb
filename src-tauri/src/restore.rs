//! The sidebar across a restart, for the window: what the last run had open (the app layer's
//! `restore`: the state file joined with the history), the sidebar saved as it changes (into the
//! state file, through the `StateRecorder`), and drafts saved as the user types (into the
//! history, through its `Recorder`, which never blocks).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use acp_desk_app::HistoryRecorder;
use acp_desk_app::state::OpenSession;
use acp_desk_core::settings::{self, RestoredStart};
use acp_desk_store::Store;

use crate::AppState;
use crate::ipc::{IpcError, OpenSessionEntry, RestoredSidebar, SessionInfo};

/// A draft longer than this is not kept in the history (it stays in the window): a composer is
/// for messages, and the history's writer holds drafts in memory until its next commit.
pub const MAX_DRAFT_BYTES: usize = 1024 * 1024;

/// The window's history recorder. The one place that says where it is kept, so that whoever
/// owns its registration can move it without touching the rest.
pub fn history_recorder(state: &AppState) -> Option<&Arc<HistoryRecorder>> {
    state.history.recorder()
}

/// The sessions the last run had open, with their transcripts and drafts. Reads the state file,
/// the settings file, the folders and the history: on the blocking pool.
pub async fn restored_sessions(state: &AppState) -> Result<RestoredSidebar, IpcError> {
    let recorder = state.recorder.clone();
    let sidebar = tauri::async_runtime::spawn_blocking(move || {
        // The file is read when the app starts: this waits at most for that.
        let app_state = recorder
            .and_then(|r| r.state(Duration::from_secs(5)))
            .unwrap_or_default();
        let store = Store::open_default().map(|(s, _)| s);
        let restored = acp_desk_app::restore::restored_sessions(&app_state, store.as_ref());
        // The settings' problems are shown with the agents' listing; a field that could not
        // be read is its default here, the safe one.
        let start_at_once =
            settings::load().settings.restored_sessions_start == RestoredStart::AtOnce;
        RestoredSidebar {
            sessions: restored.sessions,
            shown: restored.shown,
            start_at_once,
        }
    })
    .await
    .map_err(|e| IpcError::task_failed("read the sessions of the last run", &e))?;
    // Their checkpoints can be reviewed and undone before their agents start again.
    for s in &sidebar.sessions {
        if let Some(id) = &s.session_id {
            state
                .sessions
                .registry()
                .know_stored(id, PathBuf::from(&s.folder));
        }
    }
    Ok(sidebar)
}

/// Saves the sidebar (its sessions in order, the one shown) for the next start.
pub fn set_open_sessions(
    state: &AppState,
    sessions: Vec<OpenSessionEntry>,
    shown: Option<u32>,
) -> Result<(), IpcError> {
    if let Some(i) = shown
        && i as usize >= sessions.len()
    {
        return Err(IpcError::Internal(format!(
            "the shown session ({i}) is not one of the {} sessions sent",
            sessions.len()
        )));
    }
    let Some(recorder) = &state.recorder else {
        // Said in the log when the state file's writer could not start.
        return Ok(());
    };
    let open: Vec<OpenSession> = sessions
        .into_iter()
        .map(|e| {
            let s = OpenSession::new(PathBuf::from(e.folder), e.agent);
            match e.session_id {
                Some(id) => s.with_session_id(id),
                None => s,
            }
        })
        .collect();
    let shown = shown.map(|i| i as usize);
    recorder.update(move |s| s.set_open_sessions(open, shown));
    Ok(())
}

/// Keeps a session's draft in the history under its history id ("" forgets it). Never waits:
/// the history's writer commits it.
pub fn save_draft(state: &AppState, session_id: &str, text: &str) -> Result<(), IpcError> {
    if text.len() > MAX_DRAFT_BYTES {
        return Err(IpcError::InvalidInput(format!(
            "this draft is over {} KiB, too long to keep for the next start; it stays here \
             until you send or close it",
            MAX_DRAFT_BYTES / 1024
        )));
    }
    if session_id.is_empty() {
        return Err(IpcError::Internal(
            "a draft was saved without a session id".into(),
        ));
    }
    if let Some(h) = history_recorder(state) {
        h.recorder().set_draft(session_id, text);
    }
    Ok(())
}

/// Starts a restored session's agent again, continuing its stored conversation under its history
/// id (`acp_desk_app::continue_request`: resume, else load, else a new session, which the
/// engine says with `session-continued` and a notice). Reads the history and the folder on the
/// blocking pool. A session the history does not have, or cannot start again from what it
/// kept (redacted arguments), is `invalid-input`: the window then starts a new session.
pub async fn continue_session(
    state: &AppState,
    session_id: String,
) -> Result<SessionInfo, IpcError> {
    let request = tauri::async_runtime::spawn_blocking(move || {
        let (store, _) = Store::open_default().map_err(history_error)?;
        let record = store.session(&session_id).map_err(history_error)?;
        store
            .check_not_in_use(&record.id)
            .map_err(crate::history::store_error)?;
        Ok::<_, IpcError>(acp_desk_app::continue_request(
            &record,
            acp_desk_core::ContinueVia::Auto,
        )?)
    })
    .await
    .map_err(|e| IpcError::task_failed("read the stored session", &e))??;
    let request = crate::project_mcp::with_approved(state, request).await;
    Ok(state.sessions.open_request(request))
}

/// A history failure as the window sees it: a session the history does not have is the
/// caller's (`invalid-input`: the window then starts a new session); the rest as every history
/// command says them (`history-unavailable` for a file that cannot be read).
fn history_error(e: acp_desk_store::StoreError) -> IpcError {
    match e {
        acp_desk_store::StoreError::NotFound(_) => IpcError::InvalidInput(format!(
            "{e}: it cannot be continued; a new session is started instead"
        )),
        e => crate::history::store_error(e),
    }
}
