//! What the agent asks of the client, on the session's owner: `fs/read_text_file`,
//! `fs/write_text_file` ([`fs`]), `terminal/*` ([`terminals`]), and the permission the client
//! asks on its own for access outside the session's folders ([`outside`]).
//!
//! The owner never waits here: path resolution, file IO and starting a terminal's command run
//! on the blocking pool and send a [`Done`] back to the owner, which answers the agent then
//! (answers may go out in another order than the requests came, as JSON-RPC allows).
//! `terminal/wait_for_exit` joins its terminal's list of waiters, all answered when the
//! terminal's exit event arrives (not counted with file IO). A request for a path outside the
//! roots is parked like the agent's own permission requests, as an `agent-prompt` with our
//! three options, and carried out (or refused) when it is settled. A write is checked for a
//! conflict (the file changed since the agent read it) right before its IO, on the same thread;
//! writes and commands are recorded in the audit log once they are done.

mod fs;
mod outside;
mod terminals;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_client_protocol_schema::v1::{self as acp, RequestId};
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use super::owner::Owner;
use crate::fs::{ChangeSet, Compat, FsError, Resolved, Roots, WriteRecord};
use crate::jsonrpc::codes;
use crate::rules::{Decision, Rule, ToolMatcher};
use crate::terminal::{
    ExitStatus, Started, TerminalError, TerminalEvent, TerminalOptions, Terminals,
};
use crate::watch::{Conflict, Fingerprint, ReadTracker};
use outside::Approved;
pub(super) use outside::ClientOp;
use terminals::TermState;

/// File requests in flight at once. Each holds a blocking-pool thread; an agent with more than
/// this outstanding is looping, and refusing it keeps threads and memory bounded. Real agents
/// have one or two at a time. Exit waits are not counted here (a long build must not starve
/// reads): they are a list per terminal, see [`MAX_WAITERS_PER_TERMINAL`].
pub(super) const MAX_IN_FLIGHT: usize = 64;

/// Work finished off the owner, to be answered on it.
pub(super) enum Done {
    Read {
        id: RequestId,
        result: Result<String, FsError>,
    },
    Write {
        id: RequestId,
        result: Result<WriteRecord, FsError>,
    },
    /// A released terminal ended: the waits that were waiting on it.
    Exit {
        ids: Vec<RequestId>,
        status: ExitStatus,
    },
    /// A request's path resolved off the owner (symlinks, canonical form: file system calls
    /// that can hang on a stale network mount): the operation to check and carry out.
    Resolved {
        id: RequestId,
        method: &'static str,
        result: Result<ClientOp, acp::Error>,
    },
    /// A terminal's command started off the owner (or not), for the reserved `terminal` id.
    Started {
        id: RequestId,
        terminal: acp::TerminalId,
        result: Result<Started, TerminalError>,
    },
    /// The work itself failed (a panic on the blocking pool).
    Failed { id: RequestId, message: String },
    /// A write refused: the file changed on disk since the agent read it.
    Conflict { id: RequestId, conflict: Conflict },
    /// Not an agent request: an "always" answer was saved (or not).
    RuleSaved {
        tool: ToolMatcher,
        decision: Decision,
        result: Result<Rule, String>,
    },
    /// Not an agent request: a turn's `before` checkpoint, taken or not.
    CheckpointBefore(Box<crate::session::checkpoints::Before>),
    /// Not an agent request: a turn's `after` checkpoint.
    CheckpointAfter(crate::session::checkpoints::After),
    /// Not an agent request: files the watcher reported, fingerprinted, and whether it saw
    /// each created.
    Watched {
        files: Vec<(PathBuf, Fingerprint, bool)>,
    },
}

/// What the client services hold for the session.
pub(super) struct Client {
    /// The session's folders (cwd + added); grows when the user adds one.
    pub(super) roots: Roots,
    compat: Compat,
    /// This turn's writes and watched changes (the last turn's between turns).
    pub(super) changes: ChangeSet,
    pub(super) terminals: Terminals,
    pub(super) term_rx: mpsc::Receiver<TerminalEvent>,
    /// The terminals created and not released, as the session tracks them.
    pub(super) term_state: HashMap<acp::TerminalId, TermState>,
    /// File IO and exit waits report here when done; unbounded, but at most
    /// [`MAX_IN_FLIGHT`] are in flight.
    pub(super) done_tx: mpsc::UnboundedSender<Done>,
    pub(super) done_rx: mpsc::UnboundedReceiver<Done>,
    in_flight: usize,
    /// Paths named by tool calls the user allowed this turn (canonical, with what the call's
    /// kind lets the client do there): such client access needs no second question.
    pub(super) approved: Vec<Approved>,
    /// What the agent last read of each file, for conflicts; used on the blocking pool.
    reads: Arc<Mutex<ReadTracker>>,
}

impl Client {
    /// Quirks learnt once the agent said what it is (`initialize`), added to the launch's.
    pub(super) fn add_quirks(&mut self, quirks: Compat) {
        let merged = self.compat.or(quirks);
        if merged != self.compat {
            tracing::info!(?merged, "agent quirks from what the agent says it is");
        }
        self.compat = merged;
    }

    /// A new turn: a new change set, and the user's earlier answers cover nothing any more.
    pub(super) fn new_turn(&mut self) {
        self.changes.take();
        self.approved.clear();
    }

    pub(super) fn new(roots: Roots, compat: Compat, reads: Arc<Mutex<ReadTracker>>) -> Self {
        // A few dozen deltas: a full channel pauses the commands (backpressure), it loses
        // nothing.
        let (term_tx, term_rx) = mpsc::channel(32);
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        Self {
            roots,
            compat,
            changes: ChangeSet::new(),
            terminals: Terminals::new(term_tx, TerminalOptions::default()),
            term_rx,
            term_state: HashMap::new(),
            done_tx,
            done_rx,
            in_flight: 0,
            approved: Vec::new(),
            reads,
        }
    }
}

fn parse<T: serde::de::DeserializeOwned>(params: Option<&RawValue>) -> Result<T, acp::Error> {
    let raw = params.map(RawValue::get).unwrap_or("null");
    serde_json::from_str(raw)
        .map_err(|e| acp::Error::new(codes::INVALID_PARAMS, format!("invalid params: {e}")))
}

impl Owner {
    /// `fs/*` and `terminal/*`; `false` when `method` is neither.
    pub(in crate::session) fn on_client_request(
        &mut self,
        id: &RequestId,
        method: &str,
        params: Option<&RawValue>,
    ) -> bool {
        let r = match method {
            "fs/read_text_file" => self.fs_read(id, params),
            "fs/write_text_file" => self.fs_write(id, params),
            "terminal/create" => self.terminal_create(id, params),
            "terminal/output" => self.terminal_output(id, params),
            "terminal/wait_for_exit" => self.terminal_wait(id, params),
            "terminal/kill" => self.terminal_kill(id, params),
            "terminal/release" => self.terminal_release(id, params),
            _ => return false,
        };
        if let Err(e) = r {
            self.reply::<()>(id, Err(e));
        }
        true
    }

    pub(super) fn check_session(&self, sid: &acp::SessionId) -> Result<(), acp::Error> {
        match &self.acp_session {
            Some(ours) if ours == sid => Ok(()),
            _ => Err(acp::Error::new(
                codes::INVALID_PARAMS,
                format!("unknown session `{sid}`"),
            )),
        }
    }

    pub(super) fn check_in_flight(&self) -> Result<(), acp::Error> {
        if self.client.in_flight >= MAX_IN_FLIGHT {
            return Err(acp::Error::new(
                codes::INTERNAL_ERROR,
                format!(
                    "too many file and terminal requests at once ({MAX_IN_FLIGHT} are waiting); wait for their answers, then retry"
                ),
            ));
        }
        Ok(())
    }

    /// Resolves `path` on the blocking pool, then (back on the owner, [`Done::Resolved`])
    /// checks and carries out the operation `build` makes of it.
    pub(super) fn resolve_then_access(
        &mut self,
        id: &RequestId,
        method: &'static str,
        path: PathBuf,
        build: impl FnOnce(Resolved) -> ClientOp + Send + 'static,
    ) -> Result<(), acp::Error> {
        self.check_in_flight()?;
        let roots = self.client.roots.clone();
        let rid = id.clone();
        self.spawn_io(id, move || Done::Resolved {
            id: rid,
            method,
            result: roots
                .resolve(&path)
                .map(build)
                .map_err(|e| e.to_acp_error()),
        });
        Ok(())
    }

    pub(super) fn spawn_io(
        &mut self,
        id: &RequestId,
        work: impl FnOnce() -> Done + Send + 'static,
    ) {
        self.client.in_flight += 1;
        let tx = self.client.done_tx.clone();
        let id = id.clone();
        tokio::spawn(async move {
            let done = match tokio::task::spawn_blocking(work).await {
                Ok(done) => done,
                Err(e) => Done::Failed {
                    id,
                    message: format!("the file operation failed unexpectedly: {e}"),
                },
            };
            let _ = tx.send(done);
        });
    }

    /// Work finished off the owner: answer the agent (or take the result).
    pub(in crate::session) async fn on_done(&mut self, done: Done) {
        let done = match done {
            Done::RuleSaved {
                tool,
                decision,
                result,
            } => return self.on_rule_saved(tool, decision, result),
            Done::Watched { files } => return self.on_watched(files),
            Done::CheckpointBefore(b) => return self.on_checkpoint_before(b).await,
            Done::CheckpointAfter(a) => return self.on_checkpoint_after(a),
            other => other,
        };
        if !matches!(done, Done::Exit { .. }) {
            // Only file IO (resolution, reads, writes, terminal starts) counts against
            // `MAX_IN_FLIGHT`.
            self.client.in_flight = self.client.in_flight.saturating_sub(1);
        }
        match done {
            Done::Read { id, result } => self.on_read_done(&id, result),
            Done::Write { id, result } => self.on_write_done(&id, result),
            Done::Exit { ids, status } => self.answer_waits(ids, &status),
            Done::Resolved { id, method, result } => {
                let r = match result {
                    Ok(op) => self.access(&id, op, method).await,
                    Err(e) => Err(e),
                };
                if let Err(e) = r {
                    self.reply::<()>(&id, Err(e));
                }
            }
            Done::Started {
                id,
                terminal,
                result,
            } => self.on_terminal_started(&id, terminal, result),
            Done::Failed { id, message } => {
                self.reply::<()>(&id, Err(acp::Error::new(codes::INTERNAL_ERROR, message)));
            }
            Done::Conflict { id, conflict } => self.write_conflict(&id, conflict),
            Done::RuleSaved { .. }
            | Done::Watched { .. }
            | Done::CheckpointBefore(_)
            | Done::CheckpointAfter(_) => {}
        }
        // The agent got an answer: its clock starts again.
        self.touch_turn();
    }
}
