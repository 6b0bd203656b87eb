//! Which process records a session now: two writers of one session would overwrite each
//! other's rows (each numbers its rows from the stored ones), so a session being recorded is
//! never continued or deleted by another ACP Desk (a window and a CLI, two CLIs).
//!
//! A claim is an exclusive lock on a small file per session in `<history file>.claims/`, held
//! by the recording process for as long as the session is open. The operating system releases
//! it when the process ends, however it ends (`kill -9` included), so a crash never leaves a
//! session claimed. Asking is cheap (open, try to lock, close) and races only with a claim
//! taken in the same instant.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use crate::StoreError;

/// A session this process records: held until dropped.
#[derive(Debug)]
pub struct SessionClaim {
    // Held for its lock; closing the file releases it.
    _file: File,
}

/// The folder of claims next to the history file `history` (ACP Desk's own files: the folder
/// watcher leaves it out).
pub fn claims_dir(history: &Path) -> PathBuf {
    let mut name = history.as_os_str().to_owned();
    name.push(".claims");
    PathBuf::from(name)
}

fn claim_file(history: &Path, id: &str) -> PathBuf {
    // Ids are ours (`s…-…-…`) but come from a file: keep them to safe file names.
    let name: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    claims_dir(history).join(name)
}

impl SessionClaim {
    /// Claims session `id` of the history file `history` for this process. Another process
    /// recording it is [`StoreError::InUse`]; a claim that cannot be made at all (a read-only
    /// folder) is an `Open` error, which callers may treat as "no claims here".
    pub fn acquire(history: &Path, id: &str) -> Result<SessionClaim, StoreError> {
        let path = claim_file(history, id);
        let open = |e: std::io::Error| StoreError::Open {
            path: path.clone(),
            reason: e.to_string(),
        };
        std::fs::create_dir_all(claims_dir(history)).map_err(open)?;
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(open)?;
        match file.try_lock() {
            Ok(()) => Ok(SessionClaim { _file: file }),
            Err(TryLockError::WouldBlock) => Err(StoreError::InUse { id: id.to_owned() }),
            Err(TryLockError::Error(e)) => Err(open(e)),
        }
    }

    /// Whether another process records session `id` now ([`StoreError::InUse`] if so). A
    /// history without a claims folder has no session claimed.
    pub fn check_free(history: &Path, id: &str) -> Result<(), StoreError> {
        let path = claim_file(history, id);
        let file = match OpenOptions::new().write(true).open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                return Err(StoreError::Open {
                    path,
                    reason: e.to_string(),
                });
            }
        };
        match file.try_lock() {
            Ok(()) => Ok(()),
            Err(TryLockError::WouldBlock) => Err(StoreError::InUse { id: id.to_owned() }),
            Err(TryLockError::Error(e)) => Err(StoreError::Open {
                path,
                reason: e.to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_claimed_session_is_in_use_until_its_claim_goes() {
        let dir = tempfile::tempdir().unwrap();
        let history = dir.path().join("history.sqlite3");
        SessionClaim::check_free(&history, "s1-2-3").unwrap();
        let claim = SessionClaim::acquire(&history, "s1-2-3").unwrap();
        // Locks are per open file: a second open in this process stands for another process.
        assert!(matches!(
            SessionClaim::check_free(&history, "s1-2-3"),
            Err(StoreError::InUse { .. })
        ));
        assert!(matches!(
            SessionClaim::acquire(&history, "s1-2-3"),
            Err(StoreError::InUse { .. })
        ));
        SessionClaim::check_free(&history, "s9").unwrap();
        drop(claim);
        SessionClaim::check_free(&history, "s1-2-3").unwrap();
        let _again = SessionClaim::acquire(&history, "s1-2-3").unwrap();
    }

    #[test]
    fn odd_ids_stay_inside_the_claims_folder() {
        let history = Path::new("/data/history.sqlite3");
        let file = claim_file(history, "../../etc/passwd");
        assert_eq!(file.parent(), Some(claims_dir(history).as_path()));
    }
}
