//! What the agent asks of the client, on the session's owner: `fs/read_text_file`,
//! `fs/write_text_file` and `terminal/*`, and the permission the client asks on its own for
//! access outside the session's folders.
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

use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1::{self as acp, RequestId};
use serde::Serialize;
use serde_json::value::RawValue;

use super::{Owner, Parked, ParkedKind};
use crate::audit::{CommandRun, WriteVia};
use crate::events::{AgentPromptEvent, FileChangeVia, NoticeSeverity, SettledBy, StreamEvent};
use crate::fs::{self, FolderId, FsError, Resolved, WriteRecord};
use crate::jsonrpc::codes;
use crate::rules::{Decision, Rule, ToolMatcher};
use crate::terminal::{
    DEFAULT_OUTPUT_BYTE_LIMIT, ExitStatus, MAX_OUTPUT_BYTE_LIMIT, Started, TerminalError,
    TerminalEvent, TerminalRequest, Terminals,
};
use crate::watch::{Conflict, Fingerprint};

/// File requests in flight at once. Each holds a blocking-pool thread; an agent with more than
/// this outstanding is looping, and refusing it keeps threads and memory bounded. Real agents
/// have one or two at a time. Exit waits are not counted here (a long build must not starve
/// reads): they are a list per terminal, see [`MAX_WAITERS_PER_TERMINAL`].
pub(super) const MAX_IN_FLIGHT: usize = 64;

/// `terminal/wait_for_exit` requests waiting on one terminal at once. A wait costs only its
/// request id in the terminal's list (answered when the terminal's exit event arrives; no task
/// or thread), so this is generous; it bounds memory against an agent that loops on waits.
const MAX_WAITERS_PER_TERMINAL: usize = 1024;

/// Terminals a session may hold at once (created and not released). Each is a process tree, a
/// pty, two threads and up to its output limit of memory; an agent past this is leaking
/// terminals (real agents release each when done, and run a few at a time), and refusing it
/// keeps processes and memory bounded.
pub(super) const MAX_LIVE_TERMINALS: usize = 32;

#[cfg(test)]
#[path = "services_tests.rs"]
mod tests;

/// Option ids of the client's own permission requests (chosen by kind, like any other).
const OPT_ALLOW_ONCE: &str = "acpdesk-allow-once";
const OPT_ADD_FOLDER: &str = "acpdesk-add-folder";
const OPT_REJECT: &str = "acpdesk-reject";

/// Fewest plain names a folder offered for adding to the session must have: `/`, `/home`,
/// `/etc`, `/usr` hold the whole system or every user's files, and one click must not grant
/// them. Two names down (`/srv/app`, `/tmp/x`) is as broad as a project folder gets.
const MIN_FOLDER_DEPTH: usize = 2;

/// The folder "Add … to the session" adds, fixed (canonical, and which folder it is) when the
/// user is asked, so the answer adds exactly what the question named.
#[derive(Debug, Clone)]
pub(super) struct FolderOffer {
    path: PathBuf,
    id: FolderId,
}

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
    /// Not an agent request: files the watcher reported, fingerprinted.
    Watched { files: Vec<(PathBuf, Fingerprint)> },
}

/// What a parked outside-the-roots request does once the user allows it.
/// `offer`: the folder offered for adding when the user was asked (`None` before, or when
/// none could be offered).
pub(super) enum ClientOp {
    Read {
        resolved: Resolved,
        line: Option<u32>,
        limit: Option<u32>,
        offer: Option<FolderOffer>,
    },
    Write {
        resolved: Resolved,
        content: String,
        offer: Option<FolderOffer>,
    },
    Terminal {
        req: Box<acp::CreateTerminalRequest>,
        cwd: Resolved,
        offer: Option<FolderOffer>,
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
            ClientOp::Read {
                line, limit, offer, ..
            } => ClientOp::Read {
                resolved: r,
                line,
                limit,
                offer,
            },
            ClientOp::Write { content, offer, .. } => ClientOp::Write {
                resolved: r,
                content,
                offer,
            },
            ClientOp::Terminal { req, offer, .. } => ClientOp::Terminal { req, cwd: r, offer },
        }
    }

    fn offer(&self) -> Option<&FolderOffer> {
        match self {
            ClientOp::Read { offer, .. }
            | ClientOp::Write { offer, .. }
            | ClientOp::Terminal { offer, .. } => offer.as_ref(),
        }
    }

    fn set_offer(&mut self, o: Option<FolderOffer>) {
        match self {
            ClientOp::Read { offer, .. }
            | ClientOp::Write { offer, .. }
            | ClientOp::Terminal { offer, .. } => *offer = o,
        }
    }

    /// The folder "Add … to the session" would add: the file's folder, or the terminal's
    /// working folder, canonical. Never a nearer existing ancestor: for a file in a folder
    /// that does not exist yet, that would be a much broader folder than the one named.
    fn folder(&self) -> Option<&Path> {
        let path = self.resolved().path();
        match self {
            ClientOp::Terminal { .. } => Some(path),
            _ => path.parent(),
        }
    }
}

/// Why `folder` is too broad to offer adding to the session, if it is: the file system's root
/// or a folder near it, the user's home or a folder holding it, or a folder holding one of the
/// session's folders (adding it would widen the session far past what the agent asked for).
fn too_broad(folder: &Path, roots: &[PathBuf], home: Option<&Path>) -> Option<&'static str> {
    let depth = folder
        .components()
        .filter(|c| matches!(c, std::path::Component::Normal(_)))
        .count();
    if depth < MIN_FOLDER_DEPTH {
        return Some("it is the file system's root or a folder right below it");
    }
    if home.is_some_and(|h| h.starts_with(folder)) {
        return Some("it is your home folder or holds it");
    }
    if roots.iter().any(|r| r.starts_with(folder)) {
        return Some("it holds one of this session's folders");
    }
    None
}

/// The user's home folder, canonical when it can be (roots and offers are canonical).
fn home_folder() -> Option<PathBuf> {
    let home = directories::BaseDirs::new()?.home_dir().to_path_buf();
    Some(std::fs::canonicalize(&home).unwrap_or(home))
}

/// What the user's "allow" on the agent's own permission request lets the client do, without
/// asking again, with a path the tool call names; decided by the call's kind, so allowing a
/// read never lets the agent write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Grant {
    /// `read`, `search`, `fetch`, `think`: `fs/read_text_file` of that path.
    Read,
    /// `edit`, `delete`, `move`: reading and writing that path.
    ReadWrite,
    /// `execute`: a terminal whose working folder is that path; no file access (the command's
    /// own reads and writes happen inside the terminal, not through the client).
    Terminal,
}

impl Grant {
    /// `None` for the kinds that say nothing about what is done (`other`, `switch_mode`, none):
    /// they cover nothing, and the client asks.
    fn of(kind: Option<acp::ToolKind>) -> Option<Grant> {
        use acp::ToolKind as K;
        match kind? {
            K::Read | K::Search | K::Fetch | K::Think => Some(Grant::Read),
            K::Edit | K::Delete | K::Move => Some(Grant::ReadWrite),
            K::Execute => Some(Grant::Terminal),
            _ => None,
        }
    }

    fn covers(self, op: &ClientOp) -> bool {
        matches!(
            (self, op),
            (Grant::Read | Grant::ReadWrite, ClientOp::Read { .. })
                | (Grant::ReadWrite, ClientOp::Write { .. })
                | (Grant::Terminal, ClientOp::Terminal { .. })
        )
    }
}

/// A path the user allowed a tool call for, canonical as it was when the user answered (a
/// symlink planted at that name later leads elsewhere and is not covered).
#[derive(Debug, Clone)]
pub(super) struct Approved {
    path: PathBuf,
    grant: Grant,
}

/// A terminal's state as the session tracks it: for `truncated` on its events and for the
/// watchdog (a running terminal is not idleness).
pub(super) struct TermState {
    limit: usize,
    total: usize,
    pub(super) running: bool,
    /// For the audit log, until the exit is known (then logged and taken).
    pub(super) run: Option<CommandRun>,
    /// Its first `terminal-output` went out (it carries the limit).
    announced: bool,
    /// Its exit status, once its exit event came.
    exit: Option<ExitStatus>,
    /// `terminal/wait_for_exit` requests waiting for that event.
    waiters: Vec<RequestId>,
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
                // Waits still waiting get the exit status of the kill that release does; a
                // released terminal sends no exit event, so its own exit future answers them.
                let waiting = self
                    .term_state
                    .get_mut(&req.terminal_id)
                    .map(|st| std::mem::take(&mut st.waiters))
                    .unwrap_or_default();
                let exit = if waiting.is_empty() {
                    None
                } else {
                    Some(
                        self.terminals
                            .wait_for_exit(&req.terminal_id)
                            .map_err(terminal_error)?,
                    )
                };
                self.terminals
                    .release(&req.terminal_id)
                    .map_err(terminal_error)?;
                // Released before its exit event: logged now, without an exit status.
                if let Some(run) = self
                    .term_state
                    .remove(&req.terminal_id)
                    .and_then(|st| st.run)
                {
                    self.audit.command_run(run);
                }
                if let Some(exit) = exit {
                    let tx = self.done_tx.clone();
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

    fn check_terminal_count(&self) -> Result<(), acp::Error> {
        if self.term_state.len() >= MAX_LIVE_TERMINALS {
            return Err(acp::Error::new(
                codes::INTERNAL_ERROR,
                format!(
                    "too many terminals ({MAX_LIVE_TERMINALS} were created and not released); release the ones you no longer need (terminal/release), then retry"
                ),
            ));
        }
        Ok(())
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
        let (line, limit) = (req.line, req.limit);
        self.resolve_then_access(id, "fs/read_text_file", req.path, move |resolved| {
            ClientOp::Read {
                resolved,
                line,
                limit,
                offer: None,
            }
        })
    }

    /// Resolves `path` on the blocking pool, then (back on the owner, [`Done::Resolved`])
    /// checks and carries out the operation `build` makes of it.
    fn resolve_then_access(
        &mut self,
        id: &RequestId,
        method: &'static str,
        path: PathBuf,
        build: impl FnOnce(Resolved) -> ClientOp + Send + 'static,
    ) -> Result<(), acp::Error> {
        self.check_in_flight()?;
        let roots = self.roots.clone();
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

    async fn fs_write(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), acp::Error> {
        let req: acp::WriteTextFileRequest = parse(params)?;
        self.check_session(&req.session_id)?;
        let content = req.content;
        self.resolve_then_access(id, "fs/write_text_file", req.path, move |resolved| {
            ClientOp::Write {
                resolved,
                content,
                offer: None,
            }
        })
    }

    async fn terminal_create(
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

    fn terminal_wait(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), acp::Error> {
        let req: acp::WaitForTerminalExitRequest = parse(params)?;
        self.check_session(&req.session_id)?;
        // The session's list of terminals mirrors `Terminals` (created, not yet released).
        let Some(st) = self.term_state.get_mut(&req.terminal_id) else {
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
        // Canonical to canonical only: the name the agent sent may lead elsewhere by now.
        let covered = self
            .approved_paths
            .iter()
            .any(|a| a.path == resolved.path() && a.grant.covers(&op));
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

    /// The user allowed the agent's own request for a tool call of `kind` naming `paths`:
    /// remembers them, canonical now, for the rest of the turn.
    pub(super) fn approve_paths(&mut self, paths: Vec<PathBuf>, kind: Option<acp::ToolKind>) {
        let Some(grant) = Grant::of(kind) else {
            return;
        };
        for p in paths {
            // A path that cannot be resolved (a loop, a relative path) covers nothing.
            if let Ok(r) = self.roots.resolve(&p) {
                self.approved_paths.push(Approved {
                    path: r.path().to_path_buf(),
                    grant,
                });
            }
        }
    }

    /// The folder to offer adding to the session for `op`, or why none is offered.
    fn folder_offer(&self, op: &ClientOp) -> Result<FolderOffer, &'static str> {
        let folder = op.folder().ok_or("it has no folder")?;
        let id = FolderId::of(folder).ok_or("its folder does not exist (yet)")?;
        if let Some(why) = too_broad(folder, self.roots.roots(), home_folder().as_deref()) {
            return Err(why);
        }
        Ok(FolderOffer {
            path: folder.to_path_buf(),
            id,
        })
    }

    /// Parks the request and emits our own `agent-prompt` about it.
    async fn ask_access(&mut self, id: &RequestId, mut op: ClientOp, method: &str) {
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
        let offer = self.folder_offer(&op);
        let mut options = vec![acp::PermissionOption::new(
            OPT_ALLOW_ONCE,
            "Allow once",
            acp::PermissionOptionKind::AllowOnce,
        )];
        let folder_note = match &offer {
            Ok(o) => {
                let folder = o.path.display();
                options.push(acp::PermissionOption::new(
                    OPT_ADD_FOLDER,
                    format!("Add {folder} to the session"),
                    acp::PermissionOptionKind::AllowAlways,
                ));
                format!(
                    " \"Add {folder} to the session\" lets the agent read and write everything in `{folder}`, and run commands there, until the session ends."
                )
            }
            Err(why) => format!(" Adding its folder to the session is not offered: {why}."),
        };
        options.push(acp::PermissionOption::new(
            OPT_REJECT,
            "Reject",
            acp::PermissionOptionKind::RejectOnce,
        ));
        op.set_offer(offer.ok());
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
                "Allow the agent to {verb} `{shown}`? It is outside this session's folders.{folder_note}"
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
    /// session first for "Add FOLDER to the session", or refuse it.
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
                // Exactly the folder the question named, if it is still that folder; never
                // "approved anyway": the user allowed adding a folder, not this access alone.
                let added = match op.offer() {
                    Some(o) => self
                        .roots
                        .add_checked_root(&o.path, o.id)
                        .map(|()| o.path.clone()),
                    None => Err(FsError::OutsideRoots {
                        path: op.resolved().path().to_path_buf(),
                    }),
                };
                match added {
                    Ok(folder) => {
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
                    Err(e) => {
                        tracing::warn!("could not add the folder: {e}");
                        self.notice(
                            NoticeSeverity::Warning,
                            format!("The folder for `{path}` was not added to this session; the agent's request was refused."),
                            Some(e.to_string()),
                        )
                        .await;
                        self.reply::<()>(&id, Err(e.to_acp_error()));
                        return;
                    }
                }
                // Resolved again: inside the new root now, unless its path changed meanwhile.
                match self.roots.resolve(op.resolved().requested()) {
                    Ok(r) if r.is_inside() => op.with_resolved(r),
                    Ok(r) => {
                        let e = FsError::OutsideRoots {
                            path: r.path().to_path_buf(),
                        };
                        self.reply::<()>(&id, Err(e.to_acp_error()));
                        return;
                    }
                    Err(e) => {
                        self.reply::<()>(&id, Err(e.to_acp_error()));
                        return;
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
                ..
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
            ClientOp::Write {
                resolved, content, ..
            } => {
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
            ClientOp::Terminal { req, cwd, .. } => {
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
                let treq = TerminalRequest::from_acp(*req, cwd.path().to_path_buf());
                // Started on the blocking pool (folder checks, PATH search, pty, fork/exec);
                // its id is reserved and its state kept now, so it counts toward the cap (and
                // as running, for the watchdog) while it starts. `Done::Started` finishes it.
                let tid = self.terminals.reserve_id();
                let opts = self.terminals.options().clone();
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
                self.term_state.insert(
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
        if !matches!(done, Done::Exit { .. }) {
            // Only file IO (resolution, reads, writes, terminal starts) counts against
            // `MAX_IN_FLIGHT`.
            self.in_flight = self.in_flight.saturating_sub(1);
        }
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
            Done::Exit { ids, status } => {
                for id in ids {
                    let r = acp::WaitForTerminalExitResponse::new(status.clone());
                    self.reply(&id, Ok(r));
                }
            }
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
            } => {
                if !self.term_state.contains_key(&terminal) {
                    // The session's terminals were closed while it started: dropping it ends
                    // the command.
                    let err = acp::Error::new(
                        codes::INTERNAL_ERROR,
                        "the session's terminals were closed while this one started",
                    );
                    self.reply::<()>(&id, Err(err));
                } else {
                    match result.and_then(|s| self.terminals.adopt(terminal.clone(), s)) {
                        Ok(tid) => {
                            tracing::info!(terminal = %tid, "terminal created for the agent");
                            self.reply(&id, Ok(acp::CreateTerminalResponse::new(tid)));
                        }
                        Err(e) => {
                            self.term_state.remove(&terminal);
                            self.reply::<()>(&id, Err(terminal_error(e)));
                        }
                    }
                }
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
            if let Some(t) = self.turn.as_mut() {
                // Idle time starts when the command ends, not when it started.
                t.last_activity = tokio::time::Instant::now();
            }
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
        self.emit(ev).await;
        if let Some(status) = ev_status {
            for id in waiters {
                let r = acp::WaitForTerminalExitResponse::new(status.clone());
                self.reply(&id, Ok(r));
            }
        }
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
