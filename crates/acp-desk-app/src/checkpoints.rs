//! Review and undo for a session of the registry: its folder's checkpoints
//! ([`acp_desk_core::checkpoint`]), opened for each call on the blocking pool (opening is a few
//! file checks once the shadow repository exists). Several sessions and processes share a
//! folder's checkpoints; the core's locks keep them apart, and refuse a revert while a turn
//! runs in the folder.

use std::path::PathBuf;

use acp_desk_core::CheckpointOptions;
use acp_desk_core::checkpoint::{
    Changes, CheckpointError, Checkpoints, FileVersions, InterruptedUndo, RevertOutcome, StepInfo,
    Storage,
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
    /// Undos of this session cut short (ACP Desk stopped while they wrote files) and put back
    /// since, not yet followed by a step.
    pub interrupted: Vec<InterruptedUndo>,
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
            CheckpointError::Partial(_) => AppError::CheckpointPartial(text),
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

    /// A stored session the front end shows without an agent (one restored at start): its
    /// checkpoints, under its history id in `folder`, can be reviewed and undone as a live
    /// session's. Only a folder with checkpoints of that very session is ever opened.
    pub fn know_stored(&self, id: &str, folder: PathBuf) {
        lock(&self.stored).insert(id.to_owned(), folder);
    }

    /// [`Registry::with_checkpoints`] for a session [`Registry::know_stored`] knows.
    async fn with_stored_checkpoints<T: Send + 'static>(
        &self,
        id: &str,
        folder: PathBuf,
        work: impl FnOnce(&Checkpoints, &str) -> Result<T, CheckpointError> + Send + 'static,
    ) -> Result<T, AppError> {
        let Some(base) = lock(&self.checkpoints).clone() else {
            return Err(AppError::CheckpointsOff(
                "checkpoints are off in this front end".into(),
            ));
        };
        let id = id.to_owned();
        tokio::task::spawn_blocking(move || {
            let Some(repo) = open_existing(&base, &folder)? else {
                return Err(AppError::StepUnknown(
                    "this session took no checkpoints of its folder (they were off, or dropped)"
                        .into(),
                ));
            };
            Ok(work(&repo, &id)?)
        })
        .await
        .map_err(|e| AppError::Internal(format!("the checkpoint work failed: {e}")))?
    }

    /// Runs `work` on the session's folder's checkpoints, on the blocking pool.
    async fn with_checkpoints<T: Send + 'static>(
        &self,
        id: &str,
        work: impl FnOnce(&Checkpoints, &str) -> Result<T, CheckpointError> + Send + 'static,
    ) -> Result<T, AppError> {
        let session = match self.get(id) {
            Ok(s) => s,
            Err(e) => {
                let stored = lock(&self.stored).get(id).cloned();
                return match stored {
                    Some(folder) => self.with_stored_checkpoints(id, folder, work).await,
                    None => Err(e),
                };
            }
        };
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
                interrupted: repo.interrupted(session)?,
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
    let Some(repo) = open_existing(&base, folder)? else {
        return Ok(false);
    };
    repo.delete_session(session)?;
    Ok(true)
}

/// The checkpoints of `folder` under `base` when it has a shadow repository (one is never made
/// here); `None` when it has none or the folder is gone. Blocking.
fn open_existing(
    base: &std::path::Path,
    folder: &std::path::Path,
) -> Result<Option<Checkpoints>, AppError> {
    let Ok(root) = folder.canonicalize() else {
        return Ok(None);
    };
    if !Checkpoints::shadow_dir(base, &root).exists() || !root.is_dir() {
        return Ok(None);
    }
    // Reviewing and undoing what was taken needs no new checkpoints to be on.
    let settings = acp_desk_core::checkpoint::CheckpointSettings {
        enabled: true,
        ..acp_desk_core::settings::load().settings.checkpoints
    };
    Ok(Some(Checkpoints::open(base, &root, &settings, None, &[])?))
}
