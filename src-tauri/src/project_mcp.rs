//! The window's side of a project's own MCP config (issue 17, invariant 56): what a folder's
//! `.mcp.json` / `.cursor/mcp.json` / `.vscode/mcp.json` would add (`project_mcp_offer`), the
//! user's decision on it (`project_mcp_decide`), and the servers agreed to for a session opened
//! in the folder ([`approved_servers`]). The app layer decides everything
//! (`acp_desk_app::project_mcp`); this runs it on the blocking pool (it reads the folder and
//! waits for the state file) and answers the window.
//!
//! The webview names a file only by its name in the folder (one of the three), never a path,
//! and a decision carries the digest of what it was shown: a file changed since is refused
//! (`project-config-changed`), so nothing is agreed to unseen.

use std::path::Path;
use std::time::Duration;

use acp_desk_app::OpenRequest;
use acp_desk_app::project_mcp::{self, ProjectMcpChoice, ProjectMcpOffer};
use acp_desk_app::state::StateRecorder;
use acp_desk_core::mcp::McpServerConfig;
use tauri::{AppHandle, Manager, Runtime};

use crate::AppState;
use crate::commands::blocking;
use crate::ipc::{IpcError, SessionInfo};

/// How long a command waits for the state file (its first read, or the write of a decision).
const STATE_WAIT: Duration = Duration::from_secs(5);

/// What the folder's undecided (or changed) MCP config files would add; `None`: nothing to
/// ask.
#[tauri::command]
pub async fn project_mcp_offer<R: Runtime>(
    app: AppHandle<R>,
    folder: String,
) -> Result<Option<ProjectMcpOffer>, IpcError> {
    blocking(app, "read the folder's MCP config", move |s| {
        let folder = acp_desk_app::check_folder(&folder)?;
        let state = current(s)?;
        Ok(project_mcp::offer(&state, &folder))
    })
    .await
}

/// Records the user's decision on `file` (as shown: `digest`) in `folder`; it holds for the
/// sessions started in the folder from now on, until the file changes. Returns once it is
/// recorded, so a session started next sees it.
#[tauri::command]
pub async fn project_mcp_decide<R: Runtime>(
    app: AppHandle<R>,
    folder: String,
    file: String,
    digest: String,
    decision: ProjectMcpChoice,
) -> Result<(), IpcError> {
    blocking(app, "record the decision", move |s| {
        let folder = acp_desk_app::check_folder(&folder)?;
        project_mcp::check_decision(&folder, &file, &digest)?;
        let recorder = s.recorder.as_ref().ok_or_else(no_state)?;
        let recorded = recorder.update_and_wait(
            move |state| project_mcp::record(state, &folder, &file, &digest, decision),
            STATE_WAIT,
        );
        if recorded {
            Ok(())
        } else {
            Err(IpcError::Internal(
                "the app's state file did not take the decision in time; try again (the log says more)"
                    .into(),
            ))
        }
    })
    .await
}

/// The servers of `folder`'s config files the user agreed to, as the files are now (none when
/// the state cannot be read). Blocking.
pub fn approved_servers(state: &AppState, folder: &Path) -> Vec<McpServerConfig> {
    approved_with(state.recorder.as_deref(), folder)
}

fn approved_with(recorder: Option<&StateRecorder>, folder: &Path) -> Vec<McpServerConfig> {
    match recorder.and_then(|r| r.state(STATE_WAIT)) {
        Some(s) => project_mcp::approved_servers(&s, folder),
        None => Vec::new(),
    }
}

/// `request` with the project MCP servers the user agreed to for its folder: every way the
/// window starts an agent in a folder (a new session, a stored or restored one continued, an
/// agent's session imported) goes through here, so none runs a project's servers unagreed and
/// none leaves agreed ones out. Reads the folder on the blocking pool.
pub async fn with_approved(state: &AppState, mut request: OpenRequest) -> OpenRequest {
    let recorder = state.recorder.clone();
    let folder = request.options.cwd.clone();
    let found =
        tauri::async_runtime::spawn_blocking(move || approved_with(recorder.as_deref(), &folder))
            .await;
    match found {
        Ok(servers) => request.project_mcp = servers,
        // The session starts without them; the next start asks again.
        Err(e) => tracing::warn!("could not read the folder's approved MCP config: {e}"),
    }
    request
}

/// "Restart session with them": the session's agent ended and started again, continuing its
/// conversation, with the folder's approved project servers as they are now.
#[tauri::command]
pub async fn project_mcp_restart<R: Runtime>(
    app: AppHandle<R>,
    session: String,
) -> Result<SessionInfo, IpcError> {
    let state = app.state::<AppState>();
    let registry = state.sessions.registry();
    let folder = registry.info(&session)?.folder;
    let recorder = state.recorder.clone();
    let servers =
        tauri::async_runtime::spawn_blocking(move || approved_with(recorder.as_deref(), &folder))
            .await
            .map_err(|e| IpcError::task_failed("read the folder's MCP config", &e))?;
    Ok(registry
        .restart_with_project_mcp(&session, servers)
        .await?
        .into())
}

fn current(state: &AppState) -> Result<acp_desk_app::state::AppState, IpcError> {
    state
        .recorder
        .as_ref()
        .and_then(|r| r.state(STATE_WAIT))
        .ok_or_else(no_state)
}

fn no_state() -> IpcError {
    IpcError::Internal(
        "the app's state file could not be opened, so decisions about a project's MCP servers cannot be kept; see the log, then restart ACP Desk"
            .into(),
    )
}
