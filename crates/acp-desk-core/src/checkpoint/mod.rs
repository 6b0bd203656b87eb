//! Checkpoints: the project folder as it was before (and after) every turn, in a shadow git
//! repository of ours, so that a turn can be reviewed and undone whoever made its changes (our
//! `fs/write_text_file`, the agent's own tools, a build step).
//!
//! One shadow repository per project folder, `<data>/checkpoints/<16 hex of the folder's path's
//! SHA-256>/`: `git/` (a git directory whose work tree is the project; the user's `.git` is never
//! read for writing or touched), `lock` (held, exclusively, by whoever changes the shadow
//! repository: sessions of this process and others, the CLI), `turns.lock` (held shared by every
//! running turn in the folder; a revert takes it exclusively without waiting, so it is refused
//! while a turn runs), `excludes` (our ignores, on top of the project's `.gitignore` files).
//!
//! A *step* is a turn, or a revert or restore (which can be undone in turn): numbered per session
//! from 1, with a `before` and, once it ended, an `after` checkpoint, at
//! `refs/acpdesk/<session>/<step>/{before,after}`. Each checkpoint is a root commit (no parents,
//! so dropping a step's refs frees what only it held) whose tree is `files/` (the folder) plus
//! `modes` (the mode bits git does not keep, `<octal> <path>\0` for each file whose bits are not
//! 644 or 755) and whose message holds the step's facts as `key: value` lines.
//!
//! Everything here blocks (it runs `git` and does file IO): async callers use the blocking pool.

mod git;
mod journal;
mod repo;
mod revert;
mod review;
mod snapshot;
mod storage;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use git::find_git;
pub use repo::{Checkpoints, TurnGuard};

/// The `checkpoints` settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct CheckpointSettings {
    /// Take checkpoints at all. Default on.
    pub enabled: bool,
    /// Files larger than this are left out of checkpoints (with a note). Default 10 MiB.
    pub max_file_bytes: u64,
    /// The shadow repository of a folder is pruned (oldest steps first) past this. Default 2 GiB.
    pub budget_bytes: u64,
    /// Steps older than this are dropped when pruning. Default 30 days.
    pub max_age_days: u32,
    /// How long a turn's prompt waits for its checkpoint before going out without one. Default
    /// 30 s.
    pub max_wait_secs: u32,
}

impl Default for CheckpointSettings {
    fn default() -> Self {
        CheckpointSettings {
            enabled: true,
            max_file_bytes: 10 * 1024 * 1024,
            budget_bytes: 2 * 1024 * 1024 * 1024,
            max_age_days: 30,
            max_wait_secs: 30,
        }
    }
}

/// What a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepKind {
    /// A turn of the agent's.
    Turn,
    /// "Undo turn N" (of one file, or all the turn changed).
    Revert,
    /// "Restore to before turn N".
    Restore,
}

impl StepKind {
    fn as_str(self) -> &'static str {
        match self {
            StepKind::Turn => "turn",
            StepKind::Revert => "revert",
            StepKind::Restore => "restore",
        }
    }

    fn parse(s: &str) -> Option<StepKind> {
        match s {
            "turn" => Some(StepKind::Turn),
            "revert" => Some(StepKind::Revert),
            "restore" => Some(StepKind::Restore),
            _ => None,
        }
    }
}

/// Files changed, lines added and removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeSummary {
    pub files: u32,
    pub added: u32,
    pub removed: u32,
}

/// One step of a session, as `changes` lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepInfo {
    /// The step's number (what `--turn N` takes).
    pub turn: u32,
    pub kind: StepKind,
    /// For a revert: the step it undid; for a restore: the step the folder went back to before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes: Option<u32>,
    /// When its first checkpoint was taken (RFC 3339, UTC).
    pub at: String,
    /// The step ended and its `after` checkpoint exists; until then it cannot be reviewed or
    /// undone (a turn still running, or one whose end was never checkpointed).
    pub complete: bool,
    /// What it changed (complete steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<ChangeSummary>,
    /// Later steps that undid this one (reverts of it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undone_by: Vec<u32>,
    /// What the checkpoints left out or could not do (large or unreadable files, submodules).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum FileStatus {
    Added,
    Modified,
    Deleted,
    Renamed,
    /// A file became a link or the other way round.
    TypeChanged,
}

/// One file a step changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    /// Relative to the project folder, `/`-separated.
    pub path: String,
    /// Where a renamed file was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    pub status: FileStatus,
    /// Lines added and removed; absent for binary files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed: Option<u32>,
    pub binary: bool,
    /// A submodule's folder (its commit changed): listed, never entered or restored.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub submodule: bool,
    /// Only the mode bits changed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mode_only: bool,
}

/// What a step (or the whole session) changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Changes {
    /// The step; absent for the session's changes since it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    pub files: Vec<FileChange>,
    pub summary: ChangeSummary,
    /// Ignored files the agent changed behind our back (not through `fs/write_text_file`): not
    /// in any checkpoint, so they cannot be restored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unrestorable: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One version of a file, for the review's diff and the conflict view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileVersion {
    /// The text; absent when the file is binary or larger than [`MAX_TEXT_BYTES`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    pub bytes: u64,
    pub binary: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub executable: bool,
    /// A symbolic link's target (then `text` is absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

/// A file before a step, after it, and now (absent: no such file then).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileVersions {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<FileVersion>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<FileVersion>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now: Option<FileVersion>,
}

/// The review shows texts up to this size; larger files say their size.
pub const MAX_TEXT_BYTES: u64 = 2 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ConflictReason {
    /// Changed since the step left it.
    Changed,
    /// Deleted since.
    Deleted,
    /// The step deleted it, and it is back.
    Created,
}

/// A file a revert would overwrite although someone changed it after the step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevertConflict {
    pub path: String,
    pub reason: ConflictReason,
}

/// How a revert or restore went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", tag = "outcome")]
pub enum RevertOutcome {
    /// Done, as step `step` (which can be undone in turn).
    #[serde(rename_all = "camelCase")]
    Done {
        step: u32,
        /// The files written or deleted.
        files: Vec<String>,
        /// Files left as they are: submodules.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        skipped: Vec<String>,
    },
    /// Nothing was written: these files changed since (use force to overwrite them).
    Conflicts { conflicts: Vec<RevertConflict> },
    /// Nothing to do: every file is already as asked.
    Unchanged,
}

/// An undo (or restore) that was cut short (ACP Desk stopped while it wrote files) and whose
/// files were put back as they were before it, when the checkpoints were next opened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InterruptedUndo {
    /// When its files were put back (RFC 3339, UTC).
    pub at: String,
    /// Its step, dropped since: it changed nothing.
    pub step: u32,
    pub kind: StepKind,
    /// The step it was undoing (a revert) or restoring the folder to before (a restore).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes: Option<u32>,
    /// The files it was writing.
    pub files: Vec<String>,
    /// What could not be put back, in words (a file of the user's kept in the staging folder
    /// because another file is where it was): empty when every file is as before the undo.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stranded: Vec<String>,
}

impl InterruptedUndo {
    /// What happened and what to do, in a sentence or two.
    pub fn text(&self) -> String {
        let what = match (self.kind, self.undoes) {
            (StepKind::Restore, Some(u)) => format!("a restore to before step {u}"),
            (StepKind::Restore, None) => "a restore".to_owned(),
            (_, Some(u)) => format!("an undo of step {u}"),
            (_, None) => "an undo".to_owned(),
        };
        let head = format!(
            "{what} was cut short at {} (ACP Desk stopped while it wrote {} file(s))",
            self.at,
            self.files.len()
        );
        if self.stranded.is_empty() {
            format!(
                "{head}: every file is back as it was before it, so it changed nothing; make it again if you still want it"
            )
        } else {
            format!(
                "{head}: not every file could be put back as it was; put these back by hand: {}",
                self.stranded.join("; ")
            )
        }
    }
}

/// The space a folder's checkpoints take.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Storage {
    pub bytes: u64,
    pub budget_bytes: u64,
    pub max_age_days: u32,
    pub steps: u32,
    pub sessions: u32,
}

/// A taken checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub turn: u32,
    pub took: std::time::Duration,
    pub notes: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error(
        "checkpoints are off: the `git` program was not found (install git, or set ACP_DESK_GIT to its path, to review and undo turns)"
    )]
    NoGit,
    #[error("checkpoints are turned off in the settings (`checkpoints.enabled`)")]
    Disabled,
    #[error("git failed: {0}")]
    Git(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("a turn is running in this folder; wait for it to end (or stop it), then try again")]
    TurnRunning,
    #[error("no step {turn} in this session's checkpoints")]
    UnknownStep { turn: u32 },
    #[error("step {turn} has no checkpoint of its end (it is running, or ended without one)")]
    Incomplete { turn: u32 },
    #[error("`{0}` is not a file step {1} changed")]
    NotChanged(String, u32),
    #[error("`{0}` is outside the project folder")]
    Outside(PathBuf),
    #[error("could not write the project's files; nothing was changed: {0}")]
    Apply(String),
    /// An undo changed files and then failed: the text says which and what to do.
    #[error("{0}")]
    Partial(String),
}

impl CheckpointError {
    fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> CheckpointError {
        let what = what.into();
        move |source| CheckpointError::Io { what, source }
    }
}

/// Seconds since the epoch (chrono is built without its clock here).
fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
