//! The session's checkpoints ([`crate::checkpoint`]): before a turn's prompt goes out (the
//! prompt waits for it, up to `max_wait_secs`), after the turn ends, and of a file about to be
//! written through us. All of it runs on the blocking pool and reports back as a [`Done`]; a
//! checkpoint that cannot be taken never stops the turn, it says so.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{CheckpointOptions, EngineError, TurnOutcome};

/// How many turns a session lets pass between two prunings of its folder's checkpoints (each
/// walks the steps and the repository's size: cheap, but not free on every turn).
const PRUNE_EVERY: u32 = 10;

type PromptReply = tokio::sync::oneshot::Sender<Result<TurnOutcome, EngineError>>;
use super::client::Done;
use super::owner::Owner;
use crate::checkpoint::{CheckpointError, Checkpoints, Snapshot, StepKind, TurnGuard};
use crate::events::{CheckpointPhase, NoticeSeverity, StreamEvent};

/// The owner's part.
#[derive(Default)]
pub(super) struct CheckpointState {
    /// The shadow repository, once opened.
    repo: Option<Arc<Checkpoints>>,
    /// Why checkpoints are off for this session (no git, turned off), said once.
    off: Option<String>,
    /// Numbers the `before` requests, so that a late answer for a stopped turn is dropped.
    seq: u64,
    /// Turns ended since the folder's checkpoints were last pruned by this session (`None`:
    /// not yet): pruned after the first turn, then every [`PRUNE_EVERY`] turns.
    since_prune: Option<u32>,
}

/// A running turn's checkpoint.
pub(super) struct TurnCheckpoint {
    pub(super) repo: Arc<Checkpoints>,
    pub(super) turn: u32,
    pub(super) guard: TurnGuard,
}

/// The `before` checkpoint's outcome.
pub(in crate::session) struct Before {
    seq: u64,
    waited: Duration,
    result: Result<(Arc<Checkpoints>, TurnGuard, Snapshot), String>,
    /// Checkpoints cannot be taken in this session at all (said once, then not tried again).
    off: bool,
}

/// The `after` checkpoint's outcome.
pub(in crate::session) struct After {
    turn: u32,
    result: Result<crate::checkpoint::ChangeSummary, String>,
    /// Dropped once the event is emitted (or with the message, when the owner ends first):
    /// the turn's answer waits for it, so that a caller who stops reading events at its answer
    /// (the CLI) still sees how to review and undo the turn.
    _emitted: tokio::sync::oneshot::Sender<()>,
}

impl Owner {
    /// Starts the `before` checkpoint of a new turn, if checkpoints are on: `true` when the
    /// prompt must wait for [`Done::CheckpointBefore`].
    pub(super) fn checkpoint_before_turn(&mut self) -> bool {
        let Some(opts) = self.opts.checkpoints.clone() else {
            return false;
        };
        if self.checkpoints.off.is_some() {
            return false;
        }
        self.checkpoints.seq += 1;
        let seq = self.checkpoints.seq;
        let repo = self.checkpoints.repo.clone();
        let cwd = self.opts.cwd.clone();
        let session = self.id.clone();
        let excluded = self.checkpoint_excluded();
        let tx = self.client.done_tx.clone();
        let wait = Duration::from_secs(u64::from(opts.settings.max_wait_secs.max(1)));
        tokio::spawn(async move {
            let started = Instant::now();
            let work = tokio::task::spawn_blocking(move || {
                take_before(repo, &opts, &cwd, &session, &excluded)
            });
            let (result, off) = match tokio::time::timeout(wait, work).await {
                Ok(Ok(Ok(taken))) => (Ok(taken), false),
                Ok(Ok(Err(e))) => {
                    let off = matches!(e, CheckpointError::NoGit | CheckpointError::Disabled);
                    (Err(e.to_string()), off)
                }
                Ok(Err(e)) => (
                    Err(format!("the checkpoint failed unexpectedly: {e}")),
                    false,
                ),
                Err(_) => (
                    Err(format!(
                        "the checkpoint took longer than {} s (a very large folder?); the turn went on without one (the `checkpoints.max_wait_secs` setting)",
                        wait.as_secs()
                    )),
                    false,
                ),
            };
            let _ = tx.send(Done::CheckpointBefore(Box::new(Before {
                seq,
                waited: started.elapsed(),
                result,
                off,
            })));
        });
        true
    }

    /// ACP Desk's own files inside the folder (never checkpointed).
    fn checkpoint_excluded(&self) -> Vec<PathBuf> {
        let mut v = self.opts.unwatched.clone();
        v.push(self.opts.audit_dir.clone());
        if let Some(r) = &self.opts.rules_file {
            v.push(r.clone());
        }
        v
    }

    /// The `before` checkpoint is taken (or not): the prompt goes out now.
    pub(super) async fn on_checkpoint_before(&mut self, before: Box<Before>) {
        let Before {
            seq,
            waited,
            result,
            off,
        } = *before;
        let waiting = self.turn.as_ref().is_some_and(|t| t.waiting_checkpoint);
        if seq != self.checkpoints.seq || !waiting {
            // A stopped turn's: nothing waits for it (its guard is dropped here).
            return;
        }
        let waited_ms = Some(u64::try_from(waited.as_millis()).unwrap_or(u64::MAX));
        let ev = match result {
            Ok((repo, guard, snap)) => {
                tracing::debug!(turn = snap.turn, took = ?snap.took, "checkpoint before the turn");
                self.checkpoints.repo = Some(repo.clone());
                let turn = snap.turn;
                if let Some(t) = self.turn.as_mut() {
                    t.checkpoint = Some(TurnCheckpoint { repo, turn, guard });
                }
                StreamEvent::Checkpoint {
                    session_id: self.id.clone(),
                    phase: CheckpointPhase::Before,
                    turn: Some(turn),
                    summary: None,
                    notes: snap.notes,
                    error: None,
                    waited_ms,
                }
            }
            Err(error) => {
                tracing::warn!("no checkpoint before the turn: {error}");
                if off {
                    self.checkpoints.off = Some(error.clone());
                }
                self.notice(
                    NoticeSeverity::Warning,
                    format!("No checkpoint for this turn: {error}"),
                    Some(if off {
                        "Its changes cannot be undone from ACP Desk; later turns of this session are not checkpointed either.".into()
                    } else {
                        "This turn's changes cannot be undone from ACP Desk; the next turn tries again.".into()
                    }),
                );
                StreamEvent::Checkpoint {
                    session_id: self.id.clone(),
                    phase: CheckpointPhase::Before,
                    turn: None,
                    summary: None,
                    notes: Vec::new(),
                    error: Some(error),
                    waited_ms,
                }
            }
        };
        self.emit(ev);
        self.send_prompt().await;
    }

    /// The turn ended: its `after` checkpoint, off the owner ([`Done::CheckpointAfter`]);
    /// `prompt()`'s caller gets `reply` once its event is out, or once the session ended
    /// without emitting it.
    pub(super) fn checkpoint_after_turn(
        &mut self,
        cp: TurnCheckpoint,
        reply: Option<PromptReply>,
        outcome: TurnOutcome,
    ) {
        let mut written = Vec::new();
        let mut watched = Vec::new();
        for c in self.client.changes.entries() {
            if c.source == crate::fs::ChangeSource::FsWrite {
                written.push(c.path.clone());
            }
            if c.seen_by_watcher {
                watched.push(c.path.clone());
            }
        }
        let session = self.id.clone();
        let tx = self.client.done_tx.clone();
        let prune = match self.checkpoints.since_prune {
            Some(n) if n + 1 < PRUNE_EVERY => {
                self.checkpoints.since_prune = Some(n + 1);
                false
            }
            _ => {
                self.checkpoints.since_prune = Some(0);
                true
            }
        };
        tokio::spawn(async move {
            let TurnCheckpoint { repo, turn, guard } = cp;
            let pruning = prune.then(|| repo.clone());
            let work = tokio::task::spawn_blocking(move || {
                let r = repo.finish(&session, turn, &written, &watched);
                // Reverts may run in the folder once the turn's end is checkpointed.
                drop(guard);
                r
            });
            let result = match work.await {
                Ok(r) => r.map_err(|e| e.to_string()),
                Err(e) => Err(format!("the checkpoint failed unexpectedly: {e}")),
            };
            let (emitted, event_out) = tokio::sync::oneshot::channel::<()>();
            let _ = tx.send(Done::CheckpointAfter(After {
                turn,
                result,
                _emitted: emitted,
            }));
            // Resolves (as an error) when the message is dropped: after it was handled, or
            // unhandled when the session ended first. The answer goes out either way.
            let _ = event_out.await;
            if let Some(reply) = reply {
                let _ = reply.send(Ok(outcome));
            }
            // Within the settings' budget and age, after the first turn and every
            // PRUNE_EVERY turns, once the turn has its answer: cheap when nothing is to go.
            if let Some(repo) = pruning {
                let pruned = tokio::task::spawn_blocking(move || repo.prune()).await;
                match pruned {
                    Ok(Ok(s)) => {
                        tracing::debug!(bytes = s.bytes, steps = s.steps, "checkpoints pruned")
                    }
                    Ok(Err(e)) => tracing::warn!("could not prune the checkpoints: {e}"),
                    Err(e) => tracing::warn!("pruning the checkpoints failed: {e}"),
                }
            }
        });
    }

    pub(super) fn on_checkpoint_after(&mut self, after: After) {
        let ev = match after.result {
            Ok(summary) => StreamEvent::Checkpoint {
                session_id: self.id.clone(),
                phase: CheckpointPhase::After,
                turn: Some(after.turn),
                summary: Some(summary),
                notes: Vec::new(),
                error: None,
                waited_ms: None,
            },
            Err(error) => {
                tracing::warn!(turn = after.turn, "no checkpoint after the turn: {error}");
                self.notice(
                    NoticeSeverity::Warning,
                    format!("No checkpoint of the end of turn {}: {error}", after.turn),
                    Some("Its changes cannot be reviewed or undone from ACP Desk.".into()),
                );
                StreamEvent::Checkpoint {
                    session_id: self.id.clone(),
                    phase: CheckpointPhase::After,
                    turn: Some(after.turn),
                    summary: None,
                    notes: Vec::new(),
                    error: Some(error),
                    waited_ms: None,
                }
            }
        };
        self.emit(ev);
        // `after` (and its `_emitted`) is dropped here: the turn's answer may go.
    }

    /// What a write through us needs to save first (on the blocking pool, before the write):
    /// the running turn's checkpoint, when there is one.
    pub(super) fn checkpoint_for_write(&self) -> Option<(Arc<Checkpoints>, String, u32)> {
        let cp = self.turn.as_ref()?.checkpoint.as_ref()?;
        Some((cp.repo.clone(), self.id.clone(), cp.turn))
    }
}

/// Saves the file as it is into the turn's `before` checkpoint when that lacks it (an ignored
/// file). Blocking; a failure is logged, never stops the write.
pub(super) fn save_before_write(
    cp: Option<&(Arc<Checkpoints>, String, u32)>,
    path: &std::path::Path,
) {
    let Some((repo, session, turn)) = cp else {
        return;
    };
    match repo.save_before_write(session, *turn, path) {
        Ok(_) | Err(CheckpointError::Outside(_)) => {}
        Err(e) => {
            tracing::warn!(path = %path.display(), "could not save the file before writing it: {e}")
        }
    }
}

fn take_before(
    repo: Option<Arc<Checkpoints>>,
    opts: &CheckpointOptions,
    cwd: &std::path::Path,
    session: &str,
    excluded: &[PathBuf],
) -> Result<(Arc<Checkpoints>, TurnGuard, Snapshot), CheckpointError> {
    let repo = match repo {
        Some(r) => r,
        None => Arc::new(Checkpoints::open(
            &opts.base,
            cwd,
            &opts.settings,
            opts.git.clone(),
            excluded,
        )?),
    };
    let guard = repo.turn_guard()?;
    let snap = repo.begin(session, StepKind::Turn, None)?;
    Ok((repo, guard, snap))
}
