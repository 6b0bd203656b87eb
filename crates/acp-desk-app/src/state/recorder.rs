//! The state file's first writer: an [`Observer`] that records the folders sessions are opened
//! in as recent folders. The desktop shell registers it; the CLI does not (the state file is
//! the app's own).
//!
//! Observers must return at once (they run on the session's pump), and the state file does
//! blocking IO with an fsync, so the recorder hands each change to a thread of its own over an
//! unbounded channel: a slow disk delays the file, never a session.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::mpsc;
use std::thread::JoinHandle;

use super::StateFile;
use crate::observer::{Observer, SessionStatus};
use crate::registry::SessionInfo;

enum Change {
    Opened(PathBuf),
}

/// Records what the app's sessions do that the app remembers between runs.
pub struct StateRecorder {
    tx: Mutex<Option<mpsc::Sender<Change>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl StateRecorder {
    /// Starts the writer thread, which opens the file at `path` (a corrupt file is set aside
    /// and logged there, see [`StateFile::open`]).
    pub fn start(path: PathBuf) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel::<Change>();
        let writer = std::thread::Builder::new()
            .name("acp-desk-state".into())
            .spawn(move || {
                let (mut file, _warning) = StateFile::open(path);
                for change in rx {
                    let result = match change {
                        Change::Opened(folder) => file.update(|s| s.add_recent_folder(folder)),
                    };
                    // Logged by `update`; the change stays in memory and the next write
                    // carries it.
                    let _ = result;
                }
            })?;
        Ok(Self {
            tx: Mutex::new(Some(tx)),
            writer: Mutex::new(Some(writer)),
        })
    }

    /// Waits until every change so far is written (or failed); later changes are dropped.
    /// For quitting, and for tests.
    pub fn finish(&self) {
        drop(self.tx.lock().ok().and_then(|mut tx| tx.take()));
        let writer = self.writer.lock().ok().and_then(|mut w| w.take());
        if let Some(w) = writer
            && w.join().is_err()
        {
            tracing::warn!("the state file's writer panicked");
        }
    }

    fn send(&self, change: Change) {
        if let Ok(tx) = self.tx.lock()
            && let Some(tx) = tx.as_ref()
            && tx.send(change).is_err()
        {
            tracing::debug!("the state file's writer is gone; a change was not recorded");
        }
    }
}

impl Observer for StateRecorder {
    fn on_status(&self, session: &SessionInfo, status: &SessionStatus) {
        if *status == SessionStatus::Opened {
            self.send(Change::Opened(session.folder.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use super::*;

    fn info(id: &str, folder: &str) -> SessionInfo {
        SessionInfo::demo(id, folder)
    }

    #[test]
    fn opened_sessions_become_recent_folders_most_recent_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let recorder = StateRecorder::start(path.clone()).unwrap();
        for (id, folder) in [("s1", "/p/a"), ("s2", "/p/b"), ("s3", "/p/a")] {
            recorder.on_status(&info(id, folder), &SessionStatus::Opened);
            // Other changes of a session's life are not the state file's business.
            recorder.on_status(&info(id, folder), &SessionStatus::Closed);
        }
        recorder.finish();
        let (file, warning) = StateFile::open(&path);
        assert!(warning.is_none());
        assert_eq!(
            file.state().recent_folders,
            [PathBuf::from("/p/a"), PathBuf::from("/p/b")]
        );
        // After `finish`, nothing more is recorded (and nothing panics).
        recorder.on_status(&info("s4", "/p/c"), &SessionStatus::Opened);
        recorder.finish();
        let (file, _) = StateFile::open(&path);
        assert_eq!(file.state().recent_folders.len(), 2);
    }
}
