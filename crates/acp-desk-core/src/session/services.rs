//! What the agent asks of the client, on the session's owner: `fs/read_text_file`,
//! `fs/write_text_file` and `terminal/*`, and the permission the client asks on its own for
//! access outside the session's folders.
//!
//! The owner never waits here: file IO runs on the blocking pool and `terminal/wait_for_exit`
//! on a task of its own; each sends a [`Done`] back to the owner, which answers the agent then
//! (answers may go out in another order than the requests came, as JSON-RPC allows). A request
//! for a path outside the roots is parked like the agent's own permission requests, as an
//! `agent-prompt` with our three options, and carried out (or refused) when it is settled.

use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1::{self as acp, RequestId};
use serde::Serialize;
use serde_json::value::RawValue;

use super::{Owner, Parked, ParkedKind};
use crate::audit::{CommandRun, WriteVia};
use crate::events::{AgentPromptEvent, FileChangeVia, NoticeSeverity, SettledBy, StreamEvent};
use crate::fs::{self, FsError, Resolved, WriteRecord};
use crate::jsonrpc::codes;
use crate::rules::{Decision, Rule, ToolMatcher};
use crate::terminal::{
    DEFAULT_OUTPUT_BYTE_LIMIT, ExitStatus, MAX_OUTPUT_BYTE_LIMIT, TerminalEvent, TerminalRequest,
};
use crate::watch::{Conflict, Fingerprint};

/// File requests and exit waits in flight at once. Each holds a blocking-pool thread (file IO)
/// or a small task (a wait); an agent with more than this outstanding is looping, and refusing
/// it keeps threads and memory bounded. Real agents have one or two at a time.
pub(super) const MAX_IN_FLIGHT: usize = 64;

/// Option ids of the client's own permission requests (chosen by kind, like any other).
const OPT_ALLOW_ONCE: &str = "acpdesk-allow-once";
const OPT_ADD_FOLDER: &str = "acpdesk-add-folder";
const OPT_REJECT: &str = "acpdesk-reject";

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
    Exit {
        id: RequestId,
        status: ExitStatus,
    },
    /// The work itself failed (a panic on the blocking pool).
    Failed {
        id: RequestId,
        message: String,
    },
    /// A write refused: the file changed on disk since the agent read it.
    Conflict {
        id: RequestId,
        conflict: Conflict,
    },
    /// Not an agent request: an "always" answer was saved (or not).
    RuleSaved {
        tool: ToolMatcher,
        decision: Decision,
        result: Result<Rule, String>,
    },
    /// Not an agent request: files the watcher reported, fingerprinted.
    Watched {
        files: Vec<(PathBuf, Fingerprint)>,
    },
}

/// What a parked outside-the-roots request does once the user allows it.
pub(super) enum ClientOp {
    Read {
        resolved: Resolved,
        line: Option<u32>,
        limit: Option<u32>,
    },
    Write {
        resolved: Resolved,
        content: String,
    },
    Terminal {
        req: Box<acp::CreateTerminalRequest>,
        cwd: Resolved,
    },
}

impl ClientOp {
    fn resolved(&self) -> &Resolved {
        match self {
            ClientOp::Read { resolved, .. } | ClientOp::Write { resolved, .. } => resolved,
            ClientOp::Terminal { cwd, .. } => cwd,
        }
    }

    fn with_resolved(self, r: Resolved) -> ClientOp {
        match self {
            ClientOp::Read { line, limit, .. } => ClientOp::Read {
                resolved: r,
                line,
                limit,
            },
            ClientOp::Write { content, .. } => ClientOp::Write {
                resolved: r,
                content,
            },
            ClientOp::Terminal { req, .. } => ClientOp::Terminal { req, cwd: r },
        }
    }

    /// The folder "Add this folder to the session" adds: the file's folder, or the terminal's
    /// working folder; the nearest one that exists (a write may create the rest).
    fn folder(&self) -> Option<PathBuf> {
        let path = self.resolved().path();
        let start = match self {
            ClientOp::Terminal { .. } => Some(path),
            _ => path.parent(),
        };
        start?
            .ancestors()
            .find(|p| p.is_dir())
            .map(Path::to_path_buf)
    }
}

/// A terminal's state as the session tracks it: for `truncated` on its events and for the
/// watchdog (a running terminal is not idleness).
pub(super) struct TermState {
    limit: usize,
    total: usize,
    pub(super) running: bool,
    /// For the audit log, until the exit is known (then logged and taken).
    pub(super) run: Option<CommandRun>,
}

fn parse<T: serde::de::DeserializeOwned>(params: Option<&RawValue>) -> Result<T, acp::Error> {
    let raw = params.map(RawValue::get).unwrap_or("null");
    serde_json::from_str(raw)
        .map_err(|e| acp::Error::new(codes::INVALID_PARAMS, format!("invalid params: {e}")))
}

fn terminal_error(e: crate::terminal::TerminalError) -> acp::Error {
    acp::Error::new(e.rpc_code(), e.to_string())
}

impl Owner {
    /// Answers one of the agent's requests (success or error).
    pub(super) fn reply<T: Serialize>(&mut self, id: &RequestId, r: Result<T, acp::Error>) {
        if let Some(conn) = &self.conn {
            let r = conn.respond(id, r);
            self.sent("an answer", r);
        }
    }

    /// `fs/*` and `terminal/*`; `false` when `method` is neither.
    pub(super) async fn on_client_request(
        &mut self,
        id: &RequestId,
        method: &str,
        params: Option<&RawValue>,
    ) -> bool {
        let r = match method {
            "fs/read_text_file" => self.fs_read(id, params).await,
            "fs/write_text_file" => self.fs_write(id, params).await,
            "terminal/create" => self.terminal_create(id, params).await,
            "terminal/output" => parse::<acp::TerminalOutputRequest>(params).and_then(|req| {
                self.check_session(&req.session_id)?;
                let out = self
                    .terminals
                    .output(&req.terminal_id)
                    .map_err(terminal_error)?;
                self.reply(id, Ok(out));
                Ok(())
            }),
            "terminal/wait_for_exit" => self.terminal_wait(id, params),
            "terminal/kill" => parse::<acp::KillTerminalRequest>(params).and_then(|req| {
                self.check_session(&req.session_id)?;
                self.terminals
                    .kill(&req.terminal_id)
                    .map_err(terminal_error)?;
                tracing::info!(terminal = %req.terminal_id, "terminal killed at the agent's request");
                self.reply(id, Ok(acp::KillTerminalResponse::new()));
                Ok(())
            }),
            "terminal/release" => parse::<acp::ReleaseTerminalRequest>(params).and_then(|req| {
                self.check_session(&req.session_id)?;
                self.terminals
                    .release(&req.terminal_id)
                    .map_err(terminal_error)?;
                if let Some(run) = self
                    .term_state
                    .remove(&req.terminal_id)
                    .and_then(|st| st.run)
                {
                    self.audit.command_run(run);
                }
                self.reply(id, Ok(acp::ReleaseTerminalResponse::new()));
                Ok(())
            }),
            _ => return false,
        };
        if let Err(e) = r {
            self.reply::<()>(id, Err(e));
        }
        true
    }

    fn check_session(&self, sid: &acp::SessionId) -> Result<(), acp::Error> {
        match &self.acp_session {
            Some(ours) if ours == sid => Ok(()),
            _ => Err(acp::Error::new(
                codes::INVALID_PARAMS,
                format!("unknown session `{sid}`"),
            )),
        }
    }

    fn check_in_flight(&self) -> Result<(), acp::Error> {
        if self.in_flight >= MAX_IN_FLIGHT {
            return Err(acp::Error::new(
                codes::INTERNAL_ERROR,
                format!(
                    "too many file and terminal requests at once ({MAX_IN_FLIGHT} are waiting); wait for their answers, then retry"
                ),
            ));
        }
        Ok(())
    }

    async fn fs_read(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), acp::Error> {
        let req: acp::ReadTextFileRequest = parse(params)?;
        self.check_session(&req.session_id)?;
        let resolved = self
            .roots
            .resolve(&req.path)
            .map_err(|e| e.to_acp_error())?;
        let op = ClientOp::Read {
            resolved,
            line: req.line,
            limit: req.limit,
        };
        self.access(id, op, "fs/read_text_file").await
    }

    async fn fs_write(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), acp::Error> {
        let req: acp::WriteTextFileRequest = parse(params)?;
        self.check_session(&req.session_id)?;
        let resolved = self
            .roots
            .resolve(&req.path)
            .map_err(|e| e.to_acp_error())?;
        let op = ClientOp::Write {
            resolved,
            content: req.content,
        };
        self.access(id, op, "fs/write_text_file").await
    }

    async fn terminal_create(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), acp::Error> {
        let req: acp::CreateTerminalRequest = parse(params)?;
        self.check_session(&req.session_id)?;
        // No cwd: the session's folder (claude-code-acp sends none).
        let cwd = req.cwd.clone().unwrap_or_else(|| self.opts.cwd.clone());
        let cwd = self.roots.resolve(&cwd).map_err(|e| e.to_acp_error())?;
        let op = ClientOp::Terminal {
            req: Box::new(req),
            cwd,
        };
        self.access(id, op, "terminal/create").await
    }

    fn terminal_wait(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), acp::Error> {
        let req: acp::WaitForTerminalExitRequest = parse(params)?;
        self.check_session(&req.session_id)?;
        self.check_in_flight()?;
        let wait = self
            .terminals
            .wait_for_exit(&req.terminal_id)
            .map_err(terminal_error)?;
        self.in_flight += 1;
        let tx = self.done_tx.clone();
        let id = id.clone();
        tokio::spawn(async move {
            let status = wait.await;
            let _ = tx.send(Done::Exit { id, status });
        });
        Ok(())
    }

    /// Carries out `op` if its path is inside the roots (or the user already allowed a tool
    /// call naming it this turn); otherwise asks the user, or refuses when nobody is asked.
    async fn access(
        &mut self,
        id: &RequestId,
        op: ClientOp,
        method: &str,
    ) -> Result<(), acp::Error> {
        let resolved = op.resolved();
        if resolved.is_inside() {
            return self.perform(id, op);
        }
        let covered = self
            .approved_paths
            .iter()
            .any(|p| p == resolved.path() || p == resolved.requested());
        if covered {
            tracing::info!(
                "{method} outside the roots ({}) covered by the user's answer to the agent's request",
                resolved.path().display()
            );
            let r = op.resolved().clone().approved_by_user();
            return self.perform(id, op.with_resolved(r));
        }
        if self.opts.permission_policy != super::PermissionPolicy::Ask {
            let path = resolved.path().display().to_string();
            self.notice(
                NoticeSeverity::Warning,
                format!("The agent asked for `{path}`, outside this session's folders; refused."),
                Some("Access outside the session's folders is only granted when you are asked (not with --permission allow/reject/cancel); add the folder to the session (--add-dir) to allow it.".into()),
            )
            .await;
            return Err(acp::Error::new(
                codes::INTERNAL_ERROR,
                format!(
                    "`{path}` is outside this session's folders, and this session does not ask the user for such access; ACP Desk refused it (the user can add its folder to the session)"
                ),
            )
            .data(serde_json::json!({ "path": path })));
        }
        self.ask_access(id, op, method).await;
        Ok(())
    }

    /// Parks the request and emits our own `agent-prompt` about it.
    async fn ask_access(&mut self, id: &RequestId, op: ClientOp, method: &str) {
        self.permission_counter += 1;
        let path = op.resolved().path().to_path_buf();
        let target = self
            .thread
            .running_call_naming(&path)
            .or_else(|| self.thread.running_call_naming(op.resolved().requested()))
            .unwrap_or_else(|| format!("acpdesk-access-{}", self.permission_counter));
        let correlation = format!("{target}#{}", self.permission_counter);
        let (verb, kind) = match &op {
            ClientOp::Read { .. } => ("read", acp::ToolKind::Read),
            ClientOp::Write { .. } => ("write", acp::ToolKind::Edit),
            ClientOp::Terminal { .. } => ("run a command in", acp::ToolKind::Execute),
        };
        let shown = path.display().to_string();
        let raw_input = match &op {
            ClientOp::Terminal { req, .. } => serde_json::json!({
                "method": method, "cwd": shown, "command": req.command, "args": req.args,
            }),
            ClientOp::Read { line, limit, .. } => serde_json::json!({
                "method": method, "path": shown, "line": line, "limit": limit,
            }),
            ClientOp::Write { content, .. } => serde_json::json!({
                "method": method, "path": shown, "bytes": content.len(),
            }),
        };
        let options = vec![
            acp::PermissionOption::new(
                OPT_ALLOW_ONCE,
                "Allow once",
                acp::PermissionOptionKind::AllowOnce,
            ),
            acp::PermissionOption::new(
                OPT_ADD_FOLDER,
                "Add this folder to the session",
                acp::PermissionOptionKind::AllowAlways,
            ),
            acp::PermissionOption::new(OPT_REJECT, "Reject", acp::PermissionOptionKind::RejectOnce),
        ];
        self.audit.permission_asked(
            &correlation,
            &target,
            Some(&format!("Access outside the session's folders: {shown}")),
            Some(kind),
            &options,
        );
        let prompt = AgentPromptEvent {
            session_id: self.id.clone(),
            tool_call_id: correlation.clone(),
            options: options.clone(),
            text: Some(format!(
                "Allow the agent to {verb} `{shown}`? It is outside this session's folders."
            )),
            tool_name: Some(format!("Access outside the session's folders: {shown}")),
            raw_input: Some(raw_input),
            meta: None,
            target_tool_call_id: target,
            tool_kind: Some(kind),
            content: None,
            locations: Some(vec![acp::ToolCallLocation::new(path)]),
        };
        self.emit(StreamEvent::AgentPrompt(Box::new(prompt))).await;
        self.parked.insert(
            correlation.clone(),
            Parked {
                request: id.clone(),
                options,
                kind: ParkedKind::Client(Box::new(op)),
            },
        );
        self.after_park(&correlation).await;
    }

    /// A parked outside-the-roots request was settled: carry it out, adding the folder to the
    /// session first for "Add this folder", or refuse it.
    pub(super) async fn access_answered(
        &mut self,
        id: RequestId,
        op: ClientOp,
        kind: Option<acp::PermissionOptionKind>,
        by: SettledBy,
    ) {
        let path = op.resolved().path().display().to_string();
        let op = match kind {
            Some(acp::PermissionOptionKind::AllowOnce) => {
                let r = op.resolved().clone().approved_by_user();
                op.with_resolved(r)
            }
            Some(acp::PermissionOptionKind::AllowAlways) => {
                let added = op.folder().map(|f| (self.roots.add_root(&f), f));
                match added {
                    Some((Ok(()), folder)) => {
                        tracing::info!("folder {} added to the session", folder.display());
                        self.watch_folder(folder.clone());
                        self.notice(
                            NoticeSeverity::Info,
                            format!(
                                "`{}` was added to this session's folders.",
                                folder.display()
                            ),
                            None,
                        )
                        .await;
                    }
                    Some((Err(e), _)) => tracing::warn!("could not add the folder: {e}"),
                    None => {}
                }
                // Resolved again: inside the new root now (approved anyway if adding failed).
                match self.roots.resolve(op.resolved().requested()) {
                    Ok(r) if r.is_inside() => op.with_resolved(r),
                    _ => {
                        let r = op.resolved().clone().approved_by_user();
                        op.with_resolved(r)
                    }
                }
            }
            None if by == SettledBy::Agent => {
                // The agent withdrew it (`$/cancel_request`): ACP's answer is -32800.
                let err = acp::Error::new(
                    codes::REQUEST_CANCELLED,
                    format!("the request for `{path}` was cancelled by the agent"),
                );
                self.reply::<()>(&id, Err(err));
                return;
            }
            _ => {
                let why = match (kind, by) {
                    (Some(_), _) => "the user refused access to it".to_string(),
                    (None, SettledBy::User) => "the user refused access to it (the request was cancelled)".to_string(),
                    (None, _) => "the user refused access to it (the request was cancelled before the user answered: the turn stopped or ended)".to_string(),
                };
                let err = acp::Error::new(
                    codes::INTERNAL_ERROR,
                    format!("`{path}` is outside this session's folders and {why}; do not retry unless the user asks"),
                )
                .data(serde_json::json!({ "path": path }));
                self.reply::<()>(&id, Err(err));
                return;
            }
        };
        if let Err(e) = self.perform(&id, op) {
            self.reply::<()>(&id, Err(e));
        }
    }

    /// Does the checked operation: file IO on the blocking pool, a terminal at once.
    fn perform(&mut self, id: &RequestId, op: ClientOp) -> Result<(), acp::Error> {
        match op {
            ClientOp::Read {
                resolved,
                line,
                limit,
            } => {
                self.check_in_flight()?;
                let compat = self.compat;
                let rid = id.clone();
                let reads = self.reads.clone();
                self.spawn_io(id, move || {
                    let result = compat.on_read(fs::read_text_file(&resolved, line, limit));
                    if result.is_ok()
                        && let Ok(mut r) = reads.lock()
                    {
                        // From the disk, not the text returned: a window of lines is not the
                        // file. A change in the instant between the read and this goes unseen.
                        r.note_read(resolved.path());
                    }
                    Done::Read { id: rid, result }
                });
                Ok(())
            }
            ClientOp::Write { resolved, content } => {
                self.check_in_flight()?;
                let rid = id.clone();
                let reads = self.reads.clone();
                self.spawn_io(id, move || {
                    let path = resolved.path();
                    // Checked right before the write, on the same thread: the agent must not
                    // overwrite changes it never saw.
                    let conflict = reads.lock().ok().and_then(|r| r.check_before_write(path));
                    if let Some(conflict) = conflict {
                        return Done::Conflict { id: rid, conflict };
                    }
                    let result = fs::write_text_file(&resolved, &content);
                    if result.is_ok()
                        && let Ok(mut r) = reads.lock()
                    {
                        r.note_written(path, &content);
                    }
                    Done::Write { id: rid, result }
                });
                Ok(())
            }
            ClientOp::Terminal { req, cwd } => {
                let limit = req
                    .output_byte_limit
                    .map(|l| usize::try_from(l).unwrap_or(usize::MAX))
                    .unwrap_or(DEFAULT_OUTPUT_BYTE_LIMIT)
                    .min(MAX_OUTPUT_BYTE_LIMIT);
                let env_names = CommandRun::env_names(&req.env);
                let args = req.args.clone();
                let treq = TerminalRequest::from_acp(*req, cwd.path().to_path_buf());
                let command = treq.command.clone();
                let tid = self.terminals.create(treq).map_err(terminal_error)?;
                tracing::info!(terminal = %tid, "terminal created for the agent: {command}");
                let run = CommandRun {
                    terminal_id: tid.to_string(),
                    command,
                    args,
                    cwd: Some(cwd.path().to_path_buf()),
                    env_names,
                    exit_code: None,
                    signal: None,
                };
                self.term_state.insert(
                    tid.clone(),
                    TermState {
                        limit,
                        total: 0,
                        running: true,
                        run: Some(run),
                    },
                );
                self.reply(id, Ok(acp::CreateTerminalResponse::new(tid)));
                Ok(())
            }
        }
    }

    fn spawn_io(&mut self, id: &RequestId, work: impl FnOnce() -> Done + Send + 'static) {
        self.in_flight += 1;
        let tx = self.done_tx.clone();
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

    pub(super) async fn on_done(&mut self, done: Done) {
        let done = match done {
            Done::RuleSaved {
                tool,
                decision,
                result,
            } => return self.on_rule_saved(tool, decision, result).await,
            Done::Watched { files } => return self.on_watched(files).await,
            other => other,
        };
        self.in_flight = self.in_flight.saturating_sub(1);
        match done {
            Done::Read { id, result } => {
                let r = result
                    .map(acp::ReadTextFileResponse::new)
                    .map_err(|e| e.to_acp_error());
                self.reply(&id, r);
            }
            Done::Write { id, result } => match result {
                Ok(rec) => {
                    self.changes.record_write(&rec);
                    self.audit.file_written(
                        &rec.path,
                        rec.before_hash.map(|h| h.to_hex()),
                        Some(rec.after_hash.to_hex()),
                        rec.created,
                        WriteVia::FsWrite,
                    );
                    let ev = StreamEvent::FileChanged {
                        session_id: self.id.clone(),
                        path: rec.path.display().to_string(),
                        created: rec.created,
                        via: Some(FileChangeVia::FsWrite),
                    };
                    self.emit(ev).await;
                    self.reply(&id, Ok(acp::WriteTextFileResponse::new()));
                }
                Err(e) => self.reply::<()>(&id, Err(e.to_acp_error())),
            },
            Done::Exit { id, status } => {
                self.reply(&id, Ok(acp::WaitForTerminalExitResponse::new(status)));
            }
            Done::Failed { id, message } => {
                self.reply::<()>(&id, Err(acp::Error::new(codes::INTERNAL_ERROR, message)));
            }
            Done::Conflict { id, conflict } => self.write_conflict(&id, conflict).await,
            Done::RuleSaved { .. } | Done::Watched { .. } => {}
        }
        if let Some(t) = self.turn.as_mut() {
            // The agent got an answer: its clock starts again.
            t.last_activity = tokio::time::Instant::now();
        }
    }

    pub(super) async fn on_terminal_event(&mut self, ev: TerminalEvent) {
        let (terminal_id, data, exit_status) = match ev {
            TerminalEvent::Output { terminal_id, data } => (terminal_id, data, None),
            TerminalEvent::Exited {
                terminal_id,
                exit_status,
            } => (terminal_id, String::new(), Some(exit_status)),
        };
        let Some(st) = self.term_state.get_mut(&terminal_id) else {
            // Released meanwhile: its output is nobody's.
            return;
        };
        st.total = st.total.saturating_add(data.len());
        let truncated = (st.total > st.limit).then_some(true);
        if let Some(status) = &exit_status {
            st.running = false;
            if let Some(mut run) = st.run.take() {
                run.exit_code = status.exit_code;
                run.signal = status.signal.clone();
                self.audit.command_run(run);
            }
            if let Some(t) = self.turn.as_mut() {
                // Idle time starts when the command ends, not when it started.
                t.last_activity = tokio::time::Instant::now();
            }
        }
        let ev = StreamEvent::TerminalOutput {
            session_id: self.id.clone(),
            terminal_id: terminal_id.to_string(),
            data,
            exit_status,
            truncated,
        };
        self.emit(ev).await;
    }

    /// The agent wanted to write a file that changed on disk since it read it. Refused: writing
    /// would silently throw away changes (the user's, usually) the agent never saw; the agent
    /// is told to read the file again, which clears the conflict.
    async fn write_conflict(&mut self, id: &RequestId, conflict: Conflict) {
        let path = conflict.path.display().to_string();
        tracing::warn!("write refused: {conflict}");
        self.notice(
            NoticeSeverity::Warning,
            format!("Conflict: `{path}` changed on disk after the agent read it; its write was refused."),
            Some("Nothing was written. The agent was asked to read the file again before changing it.".into()),
        )
        .await;
        let err = acp::Error::new(
            codes::INTERNAL_ERROR,
            format!(
                "`{path}` changed on disk after you last read it (someone else edited it); nothing was written. Read it again and redo your change on its current text"
            ),
        )
        .data(serde_json::json!({ "path": path, "conflict": true }));
        self.reply::<()>(id, Err(err));
    }

    /// Whether a terminal of the session is running (the watchdog waits for it).
    pub(super) fn terminal_running(&self) -> bool {
        self.term_state.values().any(|t| t.running)
    }
}
