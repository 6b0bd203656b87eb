//! The history's observer: every session a [`Registry`](crate::Registry) opens, recorded into
//! the history store (`acp-desk-store`). Both front ends register it: the CLI (unless
//! `--no-history`) and the window.
//!
//! - A session is stored under ACP Desk's session id, the one its events carry (the engine's,
//!   not the registry's `s1`, which is unique only in one run): the id of its first
//!   `session-status`. A session whose agent never ran (the program could not be started) has
//!   only the app's own events, under the registry's id; it is stored under an id of the same
//!   shape made here, so that it is listed too.
//! - The calls hand each batch to the store's [`Recorder`], which never blocks (see its
//!   docs): the pump never waits for the disk.
//! - One `HistoryRecorder` per registry: it tells sessions apart by the registry's ids.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use acp_desk_core::StreamEvent;
use acp_desk_store::{
    Recorder, RecorderOptions, SessionClaim, SessionMeta, StoreError, StoreWarning,
};

use crate::observer::{Observer, SessionStatus};
use crate::registry::{SessionInfo, lock};

/// Events held for a session whose engine has not said its id yet. The engine says it in its
/// first event, so this is only reached by an agent that never ran (two events) or a bug.
const MAX_WAITING_EVENTS: usize = 256;

struct Tracked {
    meta: SessionMeta,
    /// The id it is stored under, once known.
    history_id: Option<String>,
    /// Its events until then.
    waiting: Vec<StreamEvent>,
    /// Held while the session is open, so that no other ACP Desk continues or deletes it
    /// meanwhile (`acp_desk_store::SessionClaim`).
    claim: Option<SessionClaim>,
}

/// Records every session of the registry it is added to (`Registry::add_observer`).
pub struct HistoryRecorder {
    recorder: Recorder,
    sessions: Mutex<HashMap<String, Tracked>>,
    made_ids: AtomicU64,
}

impl HistoryRecorder {
    /// Opens the history file at `path` and starts its writer. An error means history is off
    /// for this run (the file is locked, read-only, ...): the caller says so and goes on without
    /// it; the warnings say what became of a damaged file.
    pub fn start(
        path: impl Into<PathBuf>,
        opts: RecorderOptions,
    ) -> Result<(HistoryRecorder, Vec<StoreWarning>), StoreError> {
        let (recorder, warnings) = Recorder::start(path, opts)?;
        Ok((HistoryRecorder::new(recorder), warnings))
    }

    /// [`HistoryRecorder::start`] on the default file (`<data dir>/history.sqlite3`).
    pub fn start_default(
        opts: RecorderOptions,
    ) -> Result<(HistoryRecorder, Vec<StoreWarning>), StoreError> {
        HistoryRecorder::start(acp_desk_store::default_path(), opts)
    }

    pub fn new(recorder: Recorder) -> Self {
        HistoryRecorder {
            recorder,
            sessions: Mutex::new(HashMap::new()),
            made_ids: AtomicU64::new(0),
        }
    }

    /// The store's writer: drafts, flushing.
    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    /// The id an open session is stored under (`None` until its engine said it, or when it is
    /// not open).
    pub fn history_id(&self, registry_id: &str) -> Option<String> {
        lock(&self.sessions)
            .get(registry_id)
            .and_then(|t| t.history_id.clone())
    }

    /// Writes what is left and stops; returns the warnings not yet taken (with what was not
    /// stored, if anything). Sessions still open are stored as far as they got.
    pub fn finish(&self) -> Vec<StoreWarning> {
        self.recorder.finish()
    }

    /// Claims a session this registry records. Front ends check before they continue a stored
    /// session (`Store::check_not_in_use`), so a claim held elsewhere here means two began in
    /// the same instant: said, and recorded anyway (refusing would lose this side's events).
    fn claim(&self, id: &str) -> Option<SessionClaim> {
        match SessionClaim::acquire(self.recorder.path(), id) {
            Ok(c) => Some(c),
            Err(e) => {
                tracing::warn!(session = %id, "{e}");
                None
            }
        }
    }

    /// An id of the engine's shape for a session the engine never named.
    fn made_id(&self) -> String {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default();
        let n = self.made_ids.fetch_add(1, Ordering::Relaxed) + 1;
        format!("s{ms:x}-{}-h{n}", std::process::id())
    }
}

/// The engine's id for the session, from its `session-status` (the app's own events carry the
/// registry's id instead).
fn engine_id(info: &SessionInfo, events: &[StreamEvent]) -> Option<String> {
    events.iter().find_map(|ev| match ev {
        StreamEvent::SessionStatus { session_id, .. } if *session_id != info.id => {
            Some(session_id.clone())
        }
        _ => None,
    })
}

impl Observer for HistoryRecorder {
    fn on_batch(&self, info: &SessionInfo, events: &[StreamEvent]) {
        let mut sessions = lock(&self.sessions);
        let Some(t) = sessions.get_mut(&info.id) else {
            return;
        };
        let id = match &t.history_id {
            Some(id) => id.clone(),
            None => {
                let id = match engine_id(info, events) {
                    Some(id) => id,
                    None if t.waiting.len() + events.len() <= MAX_WAITING_EVENTS => {
                        t.waiting.extend_from_slice(events);
                        return;
                    }
                    None => {
                        tracing::warn!(session = %info.id, "no session id in the engine's events; stored under one of ours");
                        self.made_id()
                    }
                };
                t.claim = self.claim(&id);
                self.recorder.begin(&id, t.meta.clone());
                let waiting = std::mem::take(&mut t.waiting);
                self.recorder.events(&id, &waiting);
                t.history_id = Some(id.clone());
                id
            }
        };
        // Batches of one session come from its one pump, in order: the lock need not be held.
        drop(sessions);
        self.recorder.events(&id, events);
    }

    fn own_files(&self) -> Vec<PathBuf> {
        let file = self.recorder.path();
        let mut files = vec![file.to_owned(), acp_desk_store::claims_dir(file)];
        for suffix in ["-wal", "-shm", "-journal"] {
            let mut name = file.as_os_str().to_owned();
            name.push(suffix);
            files.push(PathBuf::from(name));
        }
        files
    }

    fn on_status(&self, info: &SessionInfo, status: &SessionStatus) {
        match status {
            SessionStatus::Opened => {
                let meta = SessionMeta {
                    agent: info.agent.clone(),
                    launch: info.launch.clone(),
                    folder: info.folder.to_string_lossy().into_owned(),
                };
                let tracked = Tracked {
                    meta,
                    history_id: None,
                    waiting: Vec::new(),
                    claim: None,
                };
                if lock(&self.sessions)
                    .insert(info.id.clone(), tracked)
                    .is_some()
                {
                    tracing::warn!(session = %info.id, "a history recorder serves one registry; two sessions share this id");
                }
            }
            SessionStatus::Closed => {
                let Some(t) = lock(&self.sessions).remove(&info.id) else {
                    return;
                };
                match t.history_id {
                    Some(id) => self.recorder.end(&id),
                    None if !t.waiting.is_empty() => {
                        // The agent never ran: its failure is still worth listing.
                        let id = self.made_id();
                        self.recorder.begin(&id, t.meta);
                        self.recorder.events(&id, &t.waiting);
                        self.recorder.end(&id);
                    }
                    None => {}
                }
            }
            SessionStatus::State { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::path::PathBuf;

    use acp_desk_core::events::{ErrorInfo, SessionState};
    use acp_desk_store::{LaunchOrigin, Store, StoredLaunch};

    use super::*;

    fn info(id: &str) -> SessionInfo {
        SessionInfo {
            id: id.into(),
            folder: PathBuf::from("/p/ledger"),
            agent: "nope".into(),
            launch: StoredLaunch {
                origin: LaunchOrigin::CommandLine,
                program: "/no/such/agent".into(),
                args: vec!["--acp".into()],
                args_redacted: false,
                env_names: Vec::new(),
            },
        }
    }

    #[test]
    fn an_agent_that_never_ran_is_listed_with_its_failure() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite3");
        let (h, _) = HistoryRecorder::start(&path, RecorderOptions::default()).unwrap();
        let s1 = info("s1");
        h.on_status(&s1, &SessionStatus::Opened);
        // What the pump says for it: the app's own events, under the registry's id.
        h.on_batch(
            &s1,
            &[
                StreamEvent::Error {
                    session_id: None,
                    error: ErrorInfo::new(None, "could not start /no/such/agent", None),
                },
                StreamEvent::SessionStatus {
                    session_id: "s1".into(),
                    status: SessionState::Dead,
                    detail: Some("could not start /no/such/agent".into()),
                    agent: None,
                },
            ],
        );
        assert_eq!(h.history_id("s1"), None);
        h.on_status(&s1, &SessionStatus::Closed);
        assert!(h.finish().is_empty());
        let (store, _) = Store::open(&path).unwrap();
        let all = store.sessions().unwrap();
        assert_eq!(all.len(), 1);
        let s = &all[0];
        assert_ne!(s.id, "s1", "the registry's id is not unique across runs");
        assert!(s.id.starts_with('s') && s.id.contains(&std::process::id().to_string()));
        assert_eq!((s.status.as_str(), s.agent.as_str()), ("dead", "nope"));
        assert_eq!(s.folder, "/p/ledger");
        assert_eq!(store.events(&s.id).unwrap().len(), 2);
    }
}
