//! The app's sessions as the window sees them: the app layer's [`Registry`] with IPC types.
//! What is the shell's own lives here: the composer's prompt parts turned into ACP blocks
//! (`files`), the `@` picker's file list and paths checked inside the session's folder; the
//! rest is the registry's, its errors turned into [`IpcError`]s.

use std::path::PathBuf;

use acp_desk_app::{OpenRequest, Registry};
use acp_desk_core::agents::LaunchSpec;
use acp_desk_core::events::PermissionResolution;
use acp_desk_core::hub::FrameSink;
use acp_desk_core::{StreamEvent, TurnOutcome};

use crate::files;
use crate::ipc::{ConfigValue, IpcError, ProjectFiles, PromptPart, SessionInfo, TurnEnd};

/// The window's sessions.
pub struct Sessions {
    registry: Registry,
}

impl Default for Sessions {
    /// Sessions whose tasks run on Tauri's async runtime (tokio).
    fn default() -> Self {
        Self::new(Registry::new(
            tauri::async_runtime::handle().inner().clone(),
        ))
    }
}

impl From<acp_desk_app::SessionInfo> for SessionInfo {
    fn from(i: acp_desk_app::SessionInfo) -> Self {
        Self {
            id: i.id,
            folder: i.folder.display().to_string(),
            agent: i.agent,
        }
    }
}

impl Sessions {
    pub fn new(registry: Registry) -> Self {
        Self { registry }
    }

    /// The app layer underneath (observers are added there).
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Opens a session in `folder` with `agent`; the agent starts in the background. Reads the
    /// disk (folder, settings): call it off the main thread.
    pub fn open(&self, folder: &str, agent: &str) -> Result<SessionInfo, IpcError> {
        let folder = acp_desk_app::check_folder(folder)?;
        let resolved = acp_desk_app::resolve_agent_full(agent)?;
        Ok(self.open_resolved(folder, resolved, agent))
    }

    /// [`Sessions::open`] once the folder and the agent are checked; a manifest agent's
    /// `audit` applies to the session (ARCHITECTURE.md invariant 33).
    pub fn open_resolved(
        &self,
        folder: PathBuf,
        resolved: acp_desk_core::agents::Resolved,
        agent: &str,
    ) -> SessionInfo {
        self.registry
            .open(
                OpenRequest::new(folder, agent, resolved.spec)
                    .with_manifest(resolved.manifest.as_ref()),
            )
            .into()
    }

    /// [`Sessions::open`] once the folder and the agent are checked.
    pub fn open_checked(&self, folder: PathBuf, spec: LaunchSpec, agent: &str) -> SessionInfo {
        self.registry
            .open(OpenRequest::new(folder, agent, spec))
            .into()
    }

    /// Opens a session as the app layer built it (a stored session continued).
    pub fn open_request(&self, request: OpenRequest) -> SessionInfo {
        self.registry.open(request).into()
    }

    pub fn attach(&self, id: &str, view: Box<dyn FrameSink>) -> Result<(), IpcError> {
        Ok(self.registry.attach(id, view)?)
    }

    /// Runs one turn with the composer's parts, turned into ACP content blocks (files read and
    /// images checked on the blocking pool).
    pub async fn prompt(&self, id: &str, parts: Vec<PromptPart>) -> Result<TurnEnd, IpcError> {
        if files::is_empty_prompt(&parts) {
            return Err(IpcError::InvalidInput("the prompt is empty".into()));
        }
        let handle = self.registry.handle(id)?;
        let caps = handle.prompt_capabilities().clone();
        let folder = self.registry.info(id)?.folder;
        let blocks = blocking("read the prompt's files", move || {
            files::prompt_blocks(&folder, parts, &caps)
        })
        .await?;
        let outcome: TurnOutcome = self.registry.prompt(id, blocks).await?;
        Ok(outcome.into())
    }

    pub async fn set_mode(&self, id: &str, mode_id: &str) -> Result<(), IpcError> {
        Ok(self.registry.set_mode(id, mode_id).await?)
    }

    pub async fn set_config_option(
        &self,
        id: &str,
        config_id: &str,
        value: ConfigValue,
    ) -> Result<(), IpcError> {
        Ok(self
            .registry
            .set_config_option(id, config_id, value)
            .await?)
    }

    /// The session folder's files for the `@` picker. Works while the agent starts, and after
    /// it died: it is about the folder, not the agent.
    pub async fn list_files(&self, id: &str) -> Result<ProjectFiles, IpcError> {
        let folder = self.registry.info(id)?.folder;
        blocking("list the folder's files", move || {
            Ok(files::list_files(&folder))
        })
        .await
    }

    /// `path` resolved inside the session's folder (for opening or revealing it), or
    /// `path-outside`.
    pub async fn path_inside(&self, id: &str, path: String) -> Result<PathBuf, IpcError> {
        let folder = self.registry.info(id)?.folder;
        blocking("find the file", move || {
            files::resolve_inside(&folder, &path)
        })
        .await
    }

    pub fn cancel(&self, id: &str) -> Result<(), IpcError> {
        Ok(self.registry.cancel(id)?)
    }

    pub async fn respond(
        &self,
        id: &str,
        request_id: &str,
        resolution: PermissionResolution,
    ) -> Result<(), IpcError> {
        Ok(self.registry.respond(id, request_id, resolution).await?)
    }

    pub async fn answer_elicitation(
        &self,
        id: &str,
        request_id: &str,
        answer: acp_desk_core::elicitation::ElicitationAnswer,
    ) -> Result<(), IpcError> {
        Ok(self
            .registry
            .answer_elicitation(id, request_id, answer)
            .await?)
    }

    pub async fn stop_background_task(&self, id: &str, task_id: &str) -> Result<(), IpcError> {
        Ok(self.registry.stop_background_task(id, task_id).await?)
    }

    pub async fn checkpoint_list(
        &self,
        id: &str,
    ) -> Result<acp_desk_app::checkpoints::CheckpointListing, IpcError> {
        Ok(self.registry.checkpoint_list(id).await?)
    }

    pub async fn checkpoint_changes(
        &self,
        id: &str,
        turn: Option<u32>,
    ) -> Result<acp_desk_core::checkpoint::Changes, IpcError> {
        Ok(self.registry.checkpoint_changes(id, turn).await?)
    }

    pub async fn checkpoint_file(
        &self,
        id: &str,
        turn: Option<u32>,
        path: String,
        old_path: Option<String>,
    ) -> Result<acp_desk_core::checkpoint::FileVersions, IpcError> {
        Ok(self
            .registry
            .checkpoint_file(id, turn, path, old_path)
            .await?)
    }

    pub async fn checkpoint_revert(
        &self,
        id: &str,
        turn: u32,
        file: Option<String>,
        force: bool,
    ) -> Result<acp_desk_core::checkpoint::RevertOutcome, IpcError> {
        Ok(self
            .registry
            .checkpoint_revert(id, turn, file, force)
            .await?)
    }

    pub async fn checkpoint_restore(
        &self,
        id: &str,
        turn: u32,
        force: bool,
    ) -> Result<acp_desk_core::checkpoint::RevertOutcome, IpcError> {
        Ok(self.registry.checkpoint_restore(id, turn, force).await?)
    }

    /// Closes a session: its agent is asked to end, then made to.
    pub async fn close(&self, id: &str) -> Result<(), IpcError> {
        Ok(self.registry.close(id).await?)
    }

    /// A new agent process for a session whose agent ended, continuing it (the same id, the
    /// thread kept; `Registry::reconnect`).
    pub async fn reconnect(&self, id: &str) -> Result<SessionInfo, IpcError> {
        Ok(self.registry.reconnect(id).await?.into())
    }

    /// Closes every session (the window is closing or the app quits), in parallel.
    pub async fn close_all(&self) {
        self.registry.close_all().await;
    }

    pub fn len(&self) -> usize {
        self.registry.len()
    }

    pub fn is_empty(&self) -> bool {
        self.registry.is_empty()
    }

    /// The thread so far of a session (compacted), for tests and diagnostics.
    pub fn snapshot(&self, id: &str) -> Result<Vec<StreamEvent>, IpcError> {
        Ok(self.registry.snapshot(id)?)
    }

    /// The agent's process id, once it runs.
    pub fn pid(&self, id: &str) -> Result<u32, IpcError> {
        Ok(self.registry.pid(id)?)
    }

    pub fn info(&self, id: &str) -> Result<SessionInfo, IpcError> {
        Ok(self.registry.info(id)?.into())
    }
}

/// Runs disk work on the blocking pool: a hung network mount must not stall the async threads.
/// `what` names the work for the error if it never finishes ("could not {what}").
async fn blocking<T: Send + 'static>(
    what: &str,
    f: impl FnOnce() -> Result<T, IpcError> + Send + 'static,
) -> Result<T, IpcError> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(|e| IpcError::task_failed(what, &e))?
}
