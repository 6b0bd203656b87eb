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
type Listener = Box<dyn Fn(&AppState) + Send>;

enum Change {
    /// A session opened in the folder, with the agent's launch name (`None`: a command line).
    Opened(PathBuf, Option<String>),
    Update(Update),
    /// An update whose sender hears once it is written (or failed) and published.
    UpdateThen(Update, mpsc::Sender<()>),
}

/// The state as the writer last left it; `None` until the file was read.
#[derive(Default)]
struct Current {
    state: Mutex<Option<AppState>>,
    changed: Condvar,
    /// Told each state as it is published, in order ([`StateRecorder::on_change`]).
    listener: Mutex<Option<Listener>>,
}

impl Current {
    fn publish(&self, state: &AppState) {
        if let Ok(mut s) = self.state.lock() {
            *s = Some(state.clone());
        }
        self.changed.notify_all();
        if let Ok(l) = self.listener.lock()
            && let Some(f) = l.as_ref()
        {
            f(state);
        }
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
                    let mut done = None;
                    let result = match change {
                        Change::Opened(folder, agent) => {
                            file.update(|s| s.add_recent(folder, agent))
                        }
                        Change::Update(change) => file.update(change),
                        Change::UpdateThen(change, tx) => {
                            done = Some(tx);
                            file.update(change)
                        }
                    };
                    // Logged by `update`; the change stays in memory and the next write
                    // carries it.
                    let _ = result;
                    published.publish(file.state());
                    if let Some(tx) = done {
                        let _ = tx.send(());
                    }
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

    /// [`StateRecorder::update`], then waits up to `wait` until the change is saved (or its
    /// save failed: it is then kept in memory) and [`StateRecorder::state`] returns it. Returns
    /// whether that happened in time. Blocking: call it on the blocking pool.
    pub fn update_and_wait(
        &self,
        change: impl FnOnce(&mut AppState) + Send + 'static,
        wait: Duration,
    ) -> bool {
        let (tx, rx) = mpsc::channel();
        self.send(Change::UpdateThen(Box::new(change), tx));
        rx.recv_timeout(wait).is_ok()
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

    /// Calls `f` with the state once it has been read (at once, if it has been), then after
    /// every change, in order, on the writer's thread: `f` must return at once (hand real work
    /// elsewhere). It may be called twice with the same state. Replaces an earlier `f`. The
    /// shell rebuilds File → Open Recent this way.
    pub fn on_change(&self, f: impl Fn(&AppState) + Send + 'static) {
        let Ok(mut listener) = self.current.listener.lock() else {
            return;
        };
        // Under the listener's lock: a publish now waits, so `f` sees states in order.
        let now = self.current.state.lock().ok().and_then(|s| s.clone());
        if let Some(state) = now {
            f(&state);
        }
        *listener = Some(Box::new(f));
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
            // A command line may hold secrets: only a name is kept.
            let agent = (session.launch.origin == acp_desk_store::LaunchOrigin::Named)
                .then(|| session.agent.clone());
            self.send(Change::Opened(session.folder.clone(), agent));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use super::*;
    use std::path::Path;

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
    fn the_agent_used_in_a_folder_is_kept_with_it_and_a_command_line_never() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let recorder = StateRecorder::start(path.clone()).unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        recorder.on_change(move |s| {
            let recent: Vec<(PathBuf, Option<String>)> = s
                .recent()
                .into_iter()
                .map(|(f, a)| (f.to_owned(), a.map(str::to_owned)))
                .collect();
            log.lock().unwrap().push(recent);
        });
        let mut claude = info("s1", "/p/a");
        claude.agent = "claude".into();
        recorder.on_status(&claude, &SessionStatus::Opened);
        recorder.on_status(&info("s2", "/p/b"), &SessionStatus::Opened);
        let mut command = info("s3", "/p/b");
        command.agent = "my-agent --token sk-123".into();
        command.launch.origin = acp_desk_store::LaunchOrigin::CommandLine;
        recorder.on_status(&command, &SessionStatus::Opened);
        recorder.finish();
        let (file, _) = StateFile::open(&path);
        assert_eq!(
            file.state().recent(),
            [
                (Path::new("/p/b"), None),
                (Path::new("/p/a"), Some("claude"))
            ]
        );
        assert!(!std::fs::read_to_string(&path).unwrap().contains("sk-123"));
        // The listener saw each change, the last one last.
        let seen = seen.lock().unwrap();
        assert_eq!(
            seen.last().unwrap(),
            &[
                (PathBuf::from("/p/b"), None),
                (PathBuf::from("/p/a"), Some("claude".to_string()))
            ]
        );
        assert!(seen.len() >= 3, "{seen:?}");
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
        // Waiting for a change: the state says it on return.
        assert!(recorder.update_and_wait(|s| s.sidebar.shown = false, Duration::from_secs(10)));
        assert!(!recorder.state(Duration::ZERO).unwrap().sidebar.shown);
        recorder.finish();
        let now = recorder.state(Duration::ZERO).unwrap();
        assert_eq!(now.zoom, 0.75);
        // After `finish`, nothing is written and nobody waits long.
        assert!(!recorder.update_and_wait(|s| s.zoom = 2.0, Duration::from_millis(1)));
        let (file, _) = StateFile::open(&path);
        assert_eq!(file.state(), &now);
        assert_eq!(file.state().theme, crate::state::Theme::Dark);
        assert_eq!(file.state().recent_folders, [PathBuf::from("/p/a")]);
    }
}
