//! What the app layer's calls fail with.

use acp_desk_core::EngineError;

/// Why a call on the app layer failed. Front ends match on the variant, never on the text; the
/// text says what happened and what to do, and is shown as it is (the shell's `IpcError` carries
/// it unchanged, the CLI prints it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    /// The engine refused or failed (the agent could not start, a turn is running, ...).
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("{0}")]
    FolderMissing(String),
    #[error("{0}")]
    NotAFolder(String),
    #[error("{0}")]
    FolderUnreadable(String),
    /// No agent has that name (settings, demo, catalog).
    #[error("{0}")]
    AgentUnknown(String),
    /// The agent is known but cannot be run here (not installed, a bad command line).
    #[error("{0}")]
    AgentUnavailable(String),
    /// No open session has that id.
    #[error("{0}")]
    SessionUnknown(String),
    /// The session's agent is still starting: try again once it is ready.
    #[error("{0}")]
    SessionStarting(String),
    /// The session was closed, or its agent has no process.
    #[error("{0}")]
    SessionEnded(String),
    #[error("{0}")]
    InvalidInput(String),
    /// The keychain could not be used (no service, locked, it refused): the text says which
    /// and what to do. Never carries a secret's value.
    #[error("{0}")]
    Keychain(String),
    /// A project's MCP config file is not as it was shown when the user decided about it (it
    /// changed, or is gone): nothing was recorded; show it again.
    #[error("{0}")]
    ProjectConfigChanged(String),
    /// Checkpoints are off for the folder (no `git`, or turned off in the settings): nothing
    /// can be reviewed or undone.
    #[error("{0}")]
    CheckpointsOff(String),
    /// A revert was refused: a turn runs in the folder.
    #[error("{0}")]
    FolderBusy(String),
    /// No such step (or not ended, or not a file it changed).
    #[error("{0}")]
    StepUnknown(String),
    /// Taking, reading or applying a checkpoint failed (git, the disk): nothing was changed.
    #[error("{0}")]
    Checkpoint(String),
    /// An undo wrote some of the project's files, then failed: the text says which files and
    /// what to do. Unlike [`AppError::Checkpoint`], something was changed.
    #[error("{0}")]
    CheckpointPartial(String),
    /// ACP Desk itself went wrong (a front end used the layer in a way it does not support):
    /// a bug to report, not something the user did.
    #[error("{0}")]
    Internal(String),
}
