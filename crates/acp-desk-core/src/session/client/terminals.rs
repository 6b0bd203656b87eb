//! `terminal/*`: one pty per command (crate::terminal), started on the blocking pool; output
//! goes out as `terminal-output` events, kept within the terminal's output limit; waits are
//! answered from the terminal's exit event; commands are logged in the audit log at their exit
//! or release.

use agent_client_protocol_schema::v1::{self as acp, RequestId};
use serde_json::value::RawValue;

use super::{ClientOp, Done, parse};
use crate::audit::CommandRun;
use crate::events::StreamEvent;
use crate::fs::Resolved;
use crate::jsonrpc::codes;
use crate::session::owner::Owner;
use crate::terminal::{
    DEFAULT_OUTPUT_BYTE_LIMIT, ExitStatus, MAX_OUTPUT_BYTE_LIMIT, Started, TerminalError,
    TerminalEvent, TerminalRequest, Terminals,
};

/// `terminal/wait_for_exit` requests waiting on one terminal at once. A wait costs only its
/// request id in the terminal's list (answered when the terminal's exit event arrives; no task
/// or thread), so this is generous; it bounds memory against an agent that loops on waits.
const MAX_WAITERS_PER_TERMINAL: usize = 1024;

/// Terminals a session may hold at once (created and not released). Each is a process tree, a
/// pty, two threads and up to its output limit of memory; an agent past this is leaking
/// terminals (real agents release each when done, and run a few at a time), and refusing it
/// keeps processes and memory bounded.
const MAX_LIVE_TERMINALS: usize = 32;

/// A terminal's state as the session tracks it: for `truncated` on its events and for the
/// watchdog (a running terminal is not idleness).
pub(in crate::session) struct TermState {
    limit: usize,
    total: usize,
    running: bool,
    /// For the audit log, until the exit is known (then logged and taken).
    pub(in crate::session) run: Option<CommandRun>,
    /// Its first `terminal-output` went out (it carries the limit).
    announced: bool,
    /// Its exit status, once its exit event came.
    exit: Option<ExitStatus>,
    /// `terminal/wait_for_exit` requests waiting for that event.
    waiters: Vec<RequestId>,
}

fn terminal_error(e: crate::terminal::TerminalError) -> acp::Error {
    acp::Error::new(e.rpc_code(), e.to_string())
}

impl Owner {
    pub(super) fn terminal_create(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), acp::Error> {
        let req: acp::CreateTerminalRequest = parse(params)?;
        self.check_session(&req.session_id)?;
        // Before asking anyone: a request over the cap would be refused anyway.
        self.check_terminal_count()?;
        // No cwd: the session's folder (claude-code-acp sends none).
        let cwd = req.cwd.clone().unwrap_or_else(|| self.opts.cwd.clone());
        self.resolve_then_access(id, "terminal/create", cwd, move |cwd| ClientOp::Terminal {
            req: Box::new(req),
            cwd,
            offer: None,
        })
    }

    pub(super) fn terminal_output(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), acp::Error> {
        let req: acp::TerminalOutputRequest = parse(params)?;
        self.check_session(&req.session_id)?;
        let out = self
            .client
            .terminals
            .output(&req.terminal_id)
            .map_err(terminal_error)?;
        self.reply(id, Ok(out));
        Ok(())
    }

    pub(super) fn terminal_wait(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), acp::Error> {
        let req: acp::WaitForTerminalExitRequest = parse(params)?;
        self.check_session(&req.session_id)?;
        // The session's list of terminals mirrors `Terminals` (created, not yet released).
        let Some(st) = self.client.term_state.get_mut(&req.terminal_id) else {
            return Err(terminal_error(crate::terminal::TerminalError::Unknown {
                id: req.terminal_id.to_string(),
            }));
        };
        if let Some(status) = st.exit.clone() {
            self.reply(id, Ok(acp::WaitForTerminalExitResponse::new(status)));
            return Ok(());
        }
        if st.waiters.len() >= MAX_WAITERS_PER_TERMINAL {
            return Err(acp::Error::new(
                codes::INTERNAL_ERROR,
                format!(
                    "too many waits on terminal `{}` ({MAX_WAITERS_PER_TERMINAL} are waiting); wait for their answers",
                    req.terminal_id
                ),
            ));
        }
        // Answered when its exit event arrives (`on_terminal_event`).
        st.waiters.push(id.clone());
        Ok(())
    }

    pub(super) fn terminal_kill(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), acp::Error> {
        let req: acp::KillTerminalRequest = parse(params)?;
        self.check_session(&req.session_id)?;
        self.client
            .terminals
            .kill(&req.terminal_id)
            .map_err(terminal_error)?;
        tracing::info!(terminal = %req.terminal_id, "terminal killed at the agent's request");
        self.reply(id, Ok(acp::KillTerminalResponse::new()));
        Ok(())
    }

    pub(super) fn terminal_release(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), acp::Error> {
        let req: acp::ReleaseTerminalRequest = parse(params)?;
        self.check_session(&req.session_id)?;
        // Waits still waiting get the exit status of the kill that release does; a
        // released terminal sends no exit event, so its own exit future answers them.
        let waiting = self
            .client
            .term_state
            .get_mut(&req.terminal_id)
            .map(|st| std::mem::take(&mut st.waiters))
            .unwrap_or_default();
        let exit = if waiting.is_empty() {
            None
        } else {
            Some(
                self.client
                    .terminals
                    .wait_for_exit(&req.terminal_id)
                    .map_err(terminal_error)?,
            )
        };
        self.client
            .terminals
            .release(&req.terminal_id)
            .map_err(terminal_error)?;
        // Released before its exit event: logged now, without an exit status.
        if let Some(run) = self
            .client
            .term_state
            .remove(&req.terminal_id)
            .and_then(|st| st.run)
        {
            self.audit.command_run(run);
        }
        if let Some(exit) = exit {
            let tx = self.client.done_tx.clone();
            tokio::spawn(async move {
                let status = exit.await;
                let _ = tx.send(Done::Exit {
                    ids: waiting,
                    status,
                });
            });
        }
        self.reply(id, Ok(acp::ReleaseTerminalResponse::new()));
        Ok(())
    }

    pub(super) fn check_terminal_count(&self) -> Result<(), acp::Error> {
        if self.client.term_state.len() >= MAX_LIVE_TERMINALS {
            return Err(acp::Error::new(
                codes::INTERNAL_ERROR,
                format!(
                    "too many terminals ({MAX_LIVE_TERMINALS} were created and not released); release the ones you no longer need (terminal/release), then retry"
                ),
            ));
        }
        Ok(())
    }

    /// Starts the checked command on the blocking pool ([`Done::Started`]).
    pub(super) fn perform_terminal(
        &mut self,
        id: &RequestId,
        req: acp::CreateTerminalRequest,
        cwd: Resolved,
    ) -> Result<(), acp::Error> {
        // Again: others may have been created while the user was asked.
        self.check_terminal_count()?;
        self.check_in_flight()?;
        let limit = req
            .output_byte_limit
            .map(|l| usize::try_from(l).unwrap_or(usize::MAX))
            .unwrap_or(DEFAULT_OUTPUT_BYTE_LIMIT)
            .min(MAX_OUTPUT_BYTE_LIMIT);
        let env_names = CommandRun::env_names(&req.env);
        let args = req.args.clone();
        let treq = TerminalRequest::from_acp(req, cwd.path().to_path_buf());
        // Started on the blocking pool (folder checks, PATH search, pty, fork/exec);
        // its id is reserved and its state kept now, so it counts toward the cap (and
        // as running, for the watchdog) while it starts. `Done::Started` finishes it.
        let tid = self.client.terminals.reserve_id();
        let opts = self.client.terminals.options().clone();
        let (rid, terminal) = (id.clone(), tid.clone());
        let command = treq.command.clone();
        // For the audit log: kept with the terminal's state, logged at its exit or
        // release (dropped unlogged if the command does not start).
        let run = CommandRun {
            terminal_id: tid.to_string(),
            command: command.clone(),
            args,
            cwd: Some(cwd.path().to_path_buf()),
            env_names,
            exit_code: None,
            signal: None,
        };
        self.spawn_io(id, move || {
            // A panic must still come back as `Started`, or the reserved state would
            // hold a cap slot (and keep the watchdog waiting) for good.
            let start = std::panic::AssertUnwindSafe(|| Terminals::start(treq, &opts));
            let result = std::panic::catch_unwind(start).unwrap_or_else(|_| {
                Err(TerminalError::Spawn {
                    command,
                    message: "starting it failed unexpectedly (a panic)".into(),
                })
            });
            Done::Started {
                id: rid,
                terminal,
                result,
            }
        });
        self.client.term_state.insert(
            tid.clone(),
            TermState {
                limit,
                total: 0,
                running: true,
                run: Some(run),
                announced: false,
                exit: None,
                waiters: Vec::new(),
            },
        );
        Ok(())
    }

    /// A command started (or not) off the owner: the agent gets its terminal id.
    pub(super) fn on_terminal_started(
        &mut self,
        id: &RequestId,
        terminal: acp::TerminalId,
        result: Result<Started, TerminalError>,
    ) {
        if !self.client.term_state.contains_key(&terminal) {
            // The session's terminals were closed while it started: dropping it ends
            // the command.
            let err = acp::Error::new(
                codes::INTERNAL_ERROR,
                "the session's terminals were closed while this one started",
            );
            self.reply::<()>(id, Err(err));
            return;
        }
        match result.and_then(|s| self.client.terminals.adopt(terminal.clone(), s)) {
            Ok(tid) => {
                tracing::info!(terminal = %tid, "terminal created for the agent");
                self.reply(id, Ok(acp::CreateTerminalResponse::new(tid)));
            }
            Err(e) => {
                self.client.term_state.remove(&terminal);
                self.reply::<()>(id, Err(terminal_error(e)));
            }
        }
    }

    /// A released terminal ended: the waits that were waiting on it get its status.
    pub(super) fn answer_waits(&mut self, ids: Vec<RequestId>, status: &ExitStatus) {
        for id in ids {
            let r = acp::WaitForTerminalExitResponse::new(status.clone());
            self.reply(&id, Ok(r));
        }
    }

    pub(in crate::session) fn on_terminal_event(&mut self, ev: TerminalEvent) {
        let (terminal_id, data, exit_status) = match ev {
            TerminalEvent::Output { terminal_id, data } => (terminal_id, data, None),
            TerminalEvent::Exited {
                terminal_id,
                exit_status,
            } => (terminal_id, String::new(), Some(exit_status)),
        };
        let Some(st) = self.client.term_state.get_mut(&terminal_id) else {
            // Released meanwhile: its output is nobody's.
            return;
        };
        st.total = st.total.saturating_add(data.len());
        let truncated = (st.total > st.limit).then_some(true);
        let output_byte_limit = (!std::mem::replace(&mut st.announced, true))
            .then(|| u64::try_from(st.limit).unwrap_or(u64::MAX));
        let mut waiters = Vec::new();
        if let Some(status) = &exit_status {
            st.running = false;
            st.exit = Some(status.clone());
            waiters = std::mem::take(&mut st.waiters);
            if let Some(mut run) = st.run.take() {
                run.exit_code = status.exit_code;
                run.signal = status.signal.clone();
                self.audit.command_run(run);
            }
            // Idle time starts when the command ends, not when it started.
            self.touch_turn();
        }
        let ev_status = exit_status.clone();
        let ev = StreamEvent::TerminalOutput {
            session_id: self.id.clone(),
            terminal_id: terminal_id.to_string(),
            data,
            exit_status,
            truncated,
            output_byte_limit,
        };
        self.emit(ev);
        if let Some(status) = ev_status {
            for id in waiters {
                let r = acp::WaitForTerminalExitResponse::new(status.clone());
                self.reply(&id, Ok(r));
            }
        }
    }

    /// Whether a terminal of the session is running (the watchdog waits for it).
    /// Ends every terminal of the session (its end): each command not logged yet (released,
    /// or still running) goes to the audit log without an exit status.
    pub(in crate::session) fn close_terminals(&mut self) {
        self.client.terminals.close_all();
        for st in self.client.term_state.values_mut() {
            if let Some(run) = st.run.take() {
                self.audit.command_run(run);
            }
        }
        self.client.term_state.clear();
    }

    pub(in crate::session) fn terminal_running(&self) -> bool {
        self.client.term_state.values().any(|t| t.running)
    }
}
