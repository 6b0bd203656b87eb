//! Review and undo for a session of the registry: its folder's checkpoints
//! ([`acp_desk_core::checkpoint`]), opened for each call on the blocking pool (opening is a few
//! file checks once the shadow repository exists). Several sessions and processes share a
//! folder's checkpoints; the core's locks keep them apart, and refuse a revert while a turn
//! runs in the folder.

use std::path::PathBuf;

use acp_desk_core::CheckpointOptions;
use acp_desk_core::checkpoint::{
    Changes, CheckpointError, Checkpoints, FileVersions, RevertOutcome, StepInfo, Storage,
};
use serde::Serialize;

use crate::AppError;
use crate::registry::{Registry, lock};

/// A session's steps and the space its folder's checkpoints take.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointListing {
    pub folder: PathBuf,
    pub steps: Vec<StepInfo>,
    pub storage: Storage,
}

impl From<CheckpointError> for AppError {
    fn from(e: CheckpointError) -> Self {
        let text = e.to_string();
        match e {
            CheckpointError::NoGit | CheckpointError::Disabled => AppError::CheckpointsOff(text),
            CheckpointError::TurnRunning => AppError::FolderBusy(text),
            CheckpointError::UnknownStep { .. }
            | CheckpointError::Incomplete { .. }
            | CheckpointError::NotChanged(..) => AppError::StepUnknown(text),
            CheckpointError::Outside(_) => AppError::InvalidInput(text),
            CheckpointError::Git(_) | CheckpointError::Io { .. } | CheckpointError::Apply(_) => {
                AppError::Checkpoint(text)
            }
        }
    }
}

impl Registry {
    /// Sessions opened from now on without checkpoint options of their own take checkpoints
    /// under `base` (`paths::checkpoints_dir()`), as the settings say at each start; `None`:
    /// they take none.
    pub fn take_checkpoints(&self, base: Option<PathBuf>) {
        *lock(&self.checkpoints) = base;
    }

    /// The options a session gets from [`Registry::take_checkpoints`] and the settings
    /// (blocking: reads the settings file).
    pub(crate) fn checkpoint_options(&self) -> Option<CheckpointOptions> {
        let base = lock(&self.checkpoints).clone()?;
        let settings = acp_desk_core::settings::load().settings.checkpoints;
        settings.enabled.then_some(CheckpointOptions {
            base,
            settings,
            git: None,
        })
    }

    /// Runs `work` on the session's folder's checkpoints, on the blocking pool.
    async fn with_checkpoints<T: Send + 'static>(
        &self,
        id: &str,
        work: impl FnOnce(&Checkpoints, &str) -> Result<T, CheckpointError> + Send + 'static,
    ) -> Result<T, AppError> {
        let session = self.get(id)?;
        let options = session.relaunch.1.clone();
        let Some(cp) = options.checkpoints.clone() else {
            return Err(AppError::CheckpointsOff(
                "checkpoints are off for this session (turned off in the settings when it opened, or by its front end)"
                    .into(),
            ));
        };
        let engine_id = self.engine_id(&session)?;
        let mut excluded = options.unwatched.clone();
        excluded.push(options.audit_dir.clone());
        tokio::task::spawn_blocking(move || {
            let repo = Checkpoints::open(&cp.base, &options.cwd, &cp.settings, cp.git, &excluded)?;
            work(&repo, &engine_id)
        })
        .await
        .map_err(|e| AppError::Internal(format!("the checkpoint work failed: {e}")))?
        .map_err(AppError::from)
    }

    /// The engine's id of a session: its checkpoints are kept under it.
    fn engine_id(&self, session: &crate::registry::Session) -> Result<String, AppError> {
        lock(&session.engine_id).clone().ok_or_else(|| {
            AppError::SessionStarting(
                "the session has not started yet, so it has no checkpoints; try again once it is ready"
                    .into(),
            )
        })
    }

    /// The session's steps, oldest first, and the space used.
    pub async fn checkpoint_list(&self, id: &str) -> Result<CheckpointListing, AppError> {
        self.with_checkpoints(id, |repo, session| {
            Ok(CheckpointListing {
                folder: repo.root().to_path_buf(),
                steps: repo.steps(session)?,
                storage: repo.storage()?,
            })
        })
        .await
    }

    /// What step `turn` changed (`None`: the session since it started).
    pub async fn checkpoint_changes(
        &self,
        id: &str,
        turn: Option<u32>,
    ) -> Result<Changes, AppError> {
        self.with_checkpoints(id, move |repo, session| repo.changes(session, turn))
            .await
    }

    /// One file before the step, after it, and now.
    pub async fn checkpoint_file(
        &self,
        id: &str,
        turn: Option<u32>,
        path: String,
        old_path: Option<String>,
    ) -> Result<FileVersions, AppError> {
        self.with_checkpoints(id, move |repo, session| {
            repo.file_versions(session, turn, &path, old_path.as_deref())
        })
        .await
    }

    /// Undo step `turn` (one file of it).
    pub async fn checkpoint_revert(
        &self,
        id: &str,
        turn: u32,
        file: Option<String>,
        force: bool,
    ) -> Result<RevertOutcome, AppError> {
        self.with_checkpoints(id, move |repo, session| {
            repo.revert(session, turn, file.as_deref(), force)
        })
        .await
    }

    /// The folder back to before step `turn`.
    pub async fn checkpoint_restore(
        &self,
        id: &str,
        turn: u32,
        force: bool,
    ) -> Result<RevertOutcome, AppError> {
        self.with_checkpoints(id, move |repo, session| repo.restore(session, turn, force))
            .await
    }

    /// Drops old checkpoints of the session's folder (age, then budget).
    pub async fn checkpoint_prune(&self, id: &str) -> Result<Storage, AppError> {
        self.with_checkpoints(id, |repo, _| repo.prune()).await
    }
}

/// Drops the checkpoints of a deleted stored session (its folder's shadow repository keeps the
/// other sessions'). Blocking. `Ok(false)`: it had none, or its folder is gone (the shadow
/// repository is then left for pruning).
pub fn drop_session_checkpoints(folder: &std::path::Path, session: &str) -> Result<bool, AppError> {
    let base = acp_desk_core::paths::checkpoints_dir();
    let root = folder
        .canonicalize()
        .unwrap_or_else(|_| folder.to_path_buf());
    if !Checkpoints::shadow_dir(&base, &root).exists() || !root.is_dir() {
        return Ok(false);
    }
    let settings = acp_desk_core::checkpoint::CheckpointSettings {
        enabled: true,
        ..acp_desk_core::settings::load().settings.checkpoints
    };
    let repo = Checkpoints::open(&base, &root, &settings, None, &[])?;
    repo.delete_session(session)?;
    Ok(true)
}
