//! The state file's one writer in the app: an [`Observer`] that records the folders sessions
//! are opened in as recent folders, and the changes the window asks for
//! ([`StateRecorder::update`]: theme, zoom). The desktop shell registers it; the CLI does not
//! (the state file is the app's own).
//!
//! Observers must return at once (they run on the session's pump), and the state file does
//! blocking IO with an fsync, so the recorder hands each change to a thread of its own over an
//! unbounded channel: a slow disk delays the file, never a session. That thread also opens the
//! file; [`StateRecorder::state`] waits (bounded) for it.

use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::{AppState, StateFile};
use crate::observer::{Observer, SessionStatus};
use crate::registry::SessionInfo;

type Update = Box<dyn FnOnce(&mut AppState) + Send>;

enum Change {
    Opened(PathBuf),
    Update(Update),
}

/// The state as the writer last left it; `None` until the file was read.
#[derive(Default)]
struct Current {
    state: Mutex<Option<AppState>>,
    changed: Condvar,
}

impl Current {
    fn publish(&self, state: &AppState) {
        if let Ok(mut s) = self.state.lock() {
            *s = Some(state.clone());
        }
        self.changed.notify_all();
    }
}

/// Records what the app's sessions do that the app remembers between runs.
pub struct StateRecorder {
    tx: Mutex<Option<mpsc::Sender<Change>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
    current: Arc<Current>,
}

impl StateRecorder {
    /// Starts the writer thread, which opens the file at `path` (a corrupt file is set aside
    /// and logged there, see [`StateFile::open`]).
    pub fn start(path: PathBuf) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel::<Change>();
        let current = Arc::new(Current::default());
        let published = current.clone();
        let writer = std::thread::Builder::new()
            .name("acp-desk-state".into())
            .spawn(move || {
                let (mut file, _warning) = StateFile::open(path);
                published.publish(file.state());
                for change in rx {
                    let result = match change {
                        Change::Opened(folder) => file.update(|s| s.add_recent_folder(folder)),
                        Change::Update(change) => file.update(change),
                    };
                    // Logged by `update`; the change stays in memory and the next write
                    // carries it.
                    let _ = result;
                    published.publish(file.state());
                }
            })?;
        Ok(Self {
            tx: Mutex::new(Some(tx)),
            writer: Mutex::new(Some(writer)),
            current,
        })
    }

    /// Applies `change` to the state and saves it, on the writer's thread, after every change
    /// sent before it. `change` may act on what it sets (the shell applies the new zoom there),
    /// and must not block.
    pub fn update(&self, change: impl FnOnce(&mut AppState) + Send + 'static) {
        self.send(Change::Update(Box::new(change)));
    }

    /// The state with every change written so far, once the file has been read; waits up to
    /// `wait` for that first read. Blocking: call it on the blocking pool.
    pub fn state(&self, wait: Duration) -> Option<AppState> {
        let guard = self.current.state.lock().ok()?;
        let (guard, _) = self
            .current
            .changed
            .wait_timeout_while(guard, wait, |s| s.is_none())
            .ok()?;
        guard.clone()
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

    #[test]
    fn updates_are_saved_in_order_and_the_state_reads_them_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        std::fs::write(&path, r#"{"version": 1, "zoom": 1.5}"#).unwrap();
        let recorder = StateRecorder::start(path.clone()).unwrap();
        let loaded = recorder.state(Duration::from_secs(10)).unwrap();
        assert_eq!(loaded.zoom, 1.5, "the file's state, once read");
        let (tx, rx) = mpsc::channel();
        recorder.update(|s| s.theme = crate::state::Theme::Dark);
        // Each change sees the one before it.
        recorder.update(move |s| {
            tx.send(s.theme).unwrap();
            s.zoom = 0.75;
        });
        recorder.on_status(&info("s1", "/p/a"), &SessionStatus::Opened);
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(10)).unwrap(),
            crate::state::Theme::Dark
        );
        recorder.finish();
        let now = recorder.state(Duration::ZERO).unwrap();
        assert_eq!(now.zoom, 0.75);
        let (file, _) = StateFile::open(&path);
        assert_eq!(file.state(), &now);
        assert_eq!(file.state().theme, crate::state::Theme::Dark);
        assert_eq!(file.state().recent_folders, [PathBuf::from("/p/a")]);
    }
}
