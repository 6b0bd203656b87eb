//! The folder watcher and the audit log on the session's owner.
//!
//! Files the agent changes without `fs/write_text_file` (most real agents edit with their own
//! tools) reach the turn's change set from the watcher: each reported path is fingerprinted on
//! the blocking pool, our own writes coming back are recognised by their hash and dropped, and
//! anything else becomes a change-set entry, a `file-changed` event (`via: watcher`) and a
//! `file-written` audit line. Only changes seen while a turn runs (or just after, see
//! [`TURN_TAIL`]) are the agent's; between turns it is the user editing, and nothing is
//! recorded.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::client::Done;
use super::owner::Owner;
use crate::audit::{AuditLog, WriteVia};
use crate::events::{FileChangeVia, NoticeSeverity, StreamEvent};
use crate::watch::{Fingerprint, MAX_DELAY, QUIET, RootWatcher, WatchError, WatchEvent};

/// Changes reported this long after a turn ended still belong to it: the watcher reports a
/// change up to `MAX_DELAY` after it happened (`QUIET` after a burst), so an edit made just
/// before the agent answered its prompt arrives after `turn-end`. Half a second more for a
/// loaded machine's scheduling.
const TURN_TAIL: Duration = MAX_DELAY
    .saturating_add(QUIET)
    .saturating_add(Duration::from_millis(500));

/// The folder watcher as the session holds it.
pub(super) struct Watching {
    watcher: Option<Arc<RootWatcher>>,
    /// The watcher being started on the blocking pool.
    pub(super) start: Option<oneshot::Receiver<Result<RootWatcher, WatchError>>>,
    pub(super) rx: mpsc::Receiver<WatchEvent>,
    /// Per path, the state last reported this turn, so the same state is reported once.
    pub(super) seen: HashMap<PathBuf, Fingerprint>,
    /// Not the agent's work: the audit log's folder, the rules file and the files of
    /// `SessionOptions::unwatched` (they may lie inside a root, e.g. a session in the home
    /// folder).
    excluded: Vec<PathBuf>,
}

impl Watching {
    /// A new turn: changes are reported afresh.
    pub(super) fn new_turn(&mut self) {
        self.seen.clear();
    }

    /// Starts watching `folders` (when `enabled`): the first walk of a large tree takes a
    /// while, so it runs on the blocking pool and the session does not wait for it.
    pub(super) fn start(enabled: bool, folders: Vec<PathBuf>, excluded: Vec<PathBuf>) -> Self {
        // A few batches: the watcher retries a full channel, it never drops what it saw.
        let (tx, rx) = mpsc::channel(8);
        let (start_tx, start_rx) = oneshot::channel();
        if enabled {
            tokio::task::spawn_blocking(move || {
                let _ = start_tx.send(RootWatcher::start(&folders, tx));
            });
        }
        Self {
            watcher: None,
            start: enabled.then_some(start_rx),
            rx,
            seen: HashMap::new(),
            excluded,
        }
    }
}

/// The watcher's start, when one is under way; never otherwise.
pub(super) async fn wait_started(
    rx: &mut Option<oneshot::Receiver<Result<RootWatcher, WatchError>>>,
) -> Result<RootWatcher, String> {
    match rx {
        Some(rx) => match rx.await {
            Ok(r) => r.map_err(|e| e.to_string()),
            Err(_) => Err("the folder watcher did not start".into()),
        },
        None => std::future::pending().await,
    }
}

impl Owner {
    pub(super) fn on_watcher_started(&mut self, started: Result<RootWatcher, String>) {
        match started {
            Ok(w) => {
                let w = Arc::new(w);
                // Folders the user added while the first walk ran.
                let later: Vec<PathBuf> = self.client.roots.roots().to_vec();
                let watcher = w.clone();
                tokio::task::spawn_blocking(move || {
                    for root in later {
                        if let Err(e) = watcher.add_root(&root) {
                            tracing::debug!("{e}");
                        }
                    }
                });
                self.watch.watcher = Some(w);
            }
            Err(e) => {
                self.notice(
                    NoticeSeverity::Warning,
                    "Files the agent changes with its own tools will not be listed in this session."
                        .into(),
                    Some(e),
                );
            }
        }
    }

    /// Watches a folder just added to the session (its first walk off the owner).
    pub(super) fn watch_folder(&self, folder: PathBuf) {
        if let Some(w) = self.watch.watcher.clone() {
            tokio::task::spawn_blocking(move || {
                if let Err(e) = w.add_root(&folder) {
                    tracing::warn!("the added folder is not watched: {e}");
                }
            });
        }
    }

    pub(super) fn on_watch(&mut self, ev: WatchEvent) {
        match ev {
            WatchEvent::Degraded { reason } => {
                self.notice(
                    NoticeSeverity::Warning,
                    "Some files the agent changes may not be listed.".into(),
                    Some(reason),
                );
            }
            WatchEvent::Changed { paths, created } => {
                let in_turn = self.turn.is_some()
                    || self.turn_ended_at.is_some_and(|t| t.elapsed() < TURN_TAIL);
                if !in_turn {
                    tracing::debug!(
                        "{} file(s) changed between turns: not the agent's",
                        paths.len()
                    );
                    return;
                }
                let paths: Vec<PathBuf> = paths
                    .into_iter()
                    .filter(|p| !self.watch.excluded.iter().any(|x| p.starts_with(x)))
                    .collect();
                if paths.is_empty() {
                    return;
                }
                let tx = self.client.done_tx.clone();
                tokio::task::spawn_blocking(move || {
                    let files = paths
                        .into_iter()
                        .filter_map(|p| match Fingerprint::of_file(&p) {
                            Ok(fp) => {
                                // Sorted: the watcher sends both lists in path order.
                                let new = created.binary_search(&p).is_ok();
                                Some((p, fp, new))
                            }
                            Err(e) => {
                                tracing::debug!(path = %p.display(), "changed file not read: {e}");
                                None
                            }
                        })
                        .collect();
                    let _ = tx.send(Done::Watched { files });
                });
            }
        }
    }

    pub(super) fn on_watched(&mut self, files: Vec<(PathBuf, Fingerprint, bool)>) {
        for (path, fp, created) in files {
            let hash = match fp {
                Fingerprint::Hash { hash, .. } => Some(hash),
                _ => None,
            };
            // Our own write coming back: the disk holds what we wrote last.
            let echo = hash.is_some()
                && self
                    .client
                    .changes
                    .get(&path)
                    .is_some_and(|c| c.after_hash == hash);
            self.client.changes.record_external(path.clone());
            if echo || self.watch.seen.get(&path) == Some(&fp) {
                continue;
            }
            self.watch.seen.insert(path.clone(), fp);
            let created = created && fp != Fingerprint::Missing;
            self.audit.file_written(
                &path,
                None,
                hash.map(|h| h.to_hex()),
                created,
                WriteVia::Watcher,
            );
            let ev = StreamEvent::FileChanged {
                session_id: self.id.clone(),
                path: path.display().to_string(),
                created,
                via: Some(FileChangeVia::Watcher),
                tool_call_id: self.thread.call_naming(&path),
            };
            self.emit(ev);
        }
    }

    /// Shows, once, that the audit log stopped being written.
    pub(super) fn check_audit(&mut self) {
        if let Some(w) = self.audit.take_warning() {
            self.notice(
                NoticeSeverity::Warning,
                "The audit log of this session is not being written.".into(),
                Some(w.to_string()),
            );
        }
    }

    /// Logs the session's end and waits until every line is on disk: a CLI exiting right after
    /// `close()` would lose the lines still queued otherwise.
    pub(super) async fn end_audit(&mut self, reason: &str) {
        self.close_terminals();
        let log = std::mem::replace(&mut self.audit, AuditLog::off());
        log.session_ended(Some(reason));
        let closed = tokio::task::spawn_blocking(move || log.close()).await;
        if let Ok(Some(w)) = closed {
            tracing::warn!("{w}");
        }
    }
}
