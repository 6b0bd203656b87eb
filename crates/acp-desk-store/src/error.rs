//! What the store's calls fail with, and what it tells the user without failing.

use std::fmt;
use std::path::PathBuf;

/// Why a call on the store failed. Front ends match on the variant, never on the text; the
/// text names the file or the session and says what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another program holds the file: another ACP Desk that keeps it locked, or a tool in the
    /// middle of a write. History is off for this process; nothing stored is touched.
    #[error(
        "the history file {} is locked by another program (another ACP Desk, or a database tool \
         that has it open); history is off for this run: close that program and start again",
        path.display()
    )]
    Locked { path: PathBuf },
    /// The file (or its folder) cannot be opened or created: permissions, a file where the
    /// folder should be.
    #[error("the history file {} cannot be opened: {reason}", path.display())]
    Open { path: PathBuf, reason: String },
    /// The file is damaged beyond what opening it checks; see [`StoreWarning::SetAside`] for
    /// what opening does with a damaged file.
    #[error(
        "the history file {} is damaged ({reason}); it will be moved aside the next time ACP \
         Desk opens it",
        path.display()
    )]
    Corrupt { path: PathBuf, reason: String },
    /// A newer ACP Desk wrote the file: it is open read-only, and this call would write.
    #[error(
        "the history file {} was written by a newer ACP Desk (format {found}); it is open \
         read-only, so nothing can be changed in it",
        path.display()
    )]
    ReadOnly { path: PathBuf, found: u32 },
    /// Any other SQLite failure.
    #[error("the history file {}: {source}", path.display())]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// No stored session has this id (or id prefix).
    #[error("no stored session has the id `{0}`")]
    NotFound(String),
    /// The prefix given for a session id matches more than one session.
    #[error("`{prefix}` matches several stored sessions ({}); give more of the id", matches.join(", "))]
    Ambiguous {
        prefix: String,
        matches: Vec<String>,
    },
    /// Another ACP Desk (a window, a CLI) is recording this session now: continuing or
    /// deleting it meanwhile would lose one side's rows ([`crate::SessionClaim`]).
    #[error(
        "the stored session `{id}` is open in another ACP Desk (a window or `acp-desk-cli run`) \
         right now; close it there, or wait for that run to end, then try again"
    )]
    InUse { id: String },
    /// The writer thread could not be started.
    #[error("could not start the history writer: {0}")]
    Spawn(std::io::Error),
}

impl StoreError {
    /// Files a SQLite failure under the variant that says what it means for the user.
    pub(crate) fn sqlite(path: &std::path::Path, source: rusqlite::Error) -> StoreError {
        let path = path.to_owned();
        match source.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                StoreError::Locked { path }
            }
            Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase) => {
                StoreError::Corrupt {
                    path,
                    reason: source.to_string(),
                }
            }
            _ => StoreError::Sqlite { path, source },
        }
    }
}

/// Something the user should hear once, while the store goes on (or history goes off): the
/// front end shows it (the CLI on stderr, the window in a banner).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreWarning {
    /// The file was not a database or was damaged: it was renamed to `moved_to` (kept for the
    /// user, never deleted) and a fresh history was started.
    SetAside {
        path: PathBuf,
        moved_to: PathBuf,
        reason: String,
    },
    /// A newer ACP Desk wrote the file: it is read, never written (never downgraded), and this
    /// run's sessions are not recorded.
    NewerFormat { path: PathBuf, found: u32 },
    /// A write failed (the disk is full, the file is busy): what was stored before is intact,
    /// the events since are kept in memory and written again when it works.
    WriteFailed {
        path: PathBuf,
        reason: String,
        disk_full: bool,
    },
    /// Writing works again after a [`StoreWarning::WriteFailed`].
    WriteRecovered { path: PathBuf },
    /// History is off for the rest of this run (the file became read-only or damaged, or the
    /// writer stopped); what was stored before is intact.
    Stopped { path: PathBuf, reason: String },
    /// Events of a session that were not stored (history was off when they came).
    Lost {
        path: PathBuf,
        session: String,
        events: u64,
    },
}

impl fmt::Display for StoreWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreWarning::SetAside {
                path,
                moved_to,
                reason,
            } => write!(
                f,
                "the history file {} could not be read ({reason}); it was moved to {} and a new, \
                 empty history was started",
                path.display(),
                moved_to.display()
            ),
            StoreWarning::NewerFormat { path, found } => write!(
                f,
                "the history file {} was written by a newer ACP Desk (format {found}); it is \
                 opened read-only and this run's sessions are not recorded (update ACP Desk)",
                path.display()
            ),
            StoreWarning::WriteFailed {
                path,
                reason,
                disk_full,
            } => {
                let what = if *disk_full {
                    "the disk is full"
                } else {
                    reason.as_str()
                };
                write!(
                    f,
                    "could not write to the history file {} ({what}); what was stored before is \
                     intact, and new events are kept in memory and written once it works again{}",
                    path.display(),
                    if *disk_full {
                        ": free some disk space"
                    } else {
                        ""
                    }
                )
            }
            StoreWarning::WriteRecovered { path } => write!(
                f,
                "the history file {} is being written again; nothing was lost",
                path.display()
            ),
            StoreWarning::Stopped { path, reason } => write!(
                f,
                "history is off for the rest of this run: {reason} ({}); what was stored before \
                 is intact",
                path.display()
            ),
            StoreWarning::Lost {
                path,
                session,
                events,
            } => write!(
                f,
                "{events} events of session {session} were not stored in the history file {}",
                path.display()
            ),
        }
    }
}
