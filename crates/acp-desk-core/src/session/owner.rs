//! The owner task: the session's state, its run loop, the link to the agent and the outbox of
//! events.
//!
//! Each part of the state is a struct owned by one module: [`Permissions`] (permissions.rs),
//! [`Client`] (client/), [`Watching`] (watching.rs), the running [`Turn`] (turn.rs). This file
//! holds what every part uses: the connection, the requests we wait answers for, the thread,
//! the outbox, and the loop that feeds the agent's messages and the front end's commands to the
//! part they concern. Whatever ends the session, the loop hands it to [`Owner::end`]
//! (ending.rs), the one path by which a session ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol_schema::v1::{self as acp, RequestId};
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::client::Client;
use super::elicitation::Elicitations;
use super::ending::Ending;
use super::handshake::Handshake;
use super::permissions::Permissions;
use super::remembered::Rules;
use super::tasks::Tasks;
use super::trace::StartTrace;
use super::turn::Turn;
use super::watching::Watching;
use super::{Command, EngineError, EventBatch, SessionOptions, session_roots};
use crate::agents::LaunchSpec;
use crate::audit::AuditLog;
use crate::events::{
    AgentIdentity, ErrorInfo, NoticeSeverity, NoticeSource, SessionState, StreamEvent,
};
use crate::fs::Compat;
use crate::jsonrpc::{self, Connection, Inbound, Skipped, codes};
use crate::process::{self, AgentProcess};
use crate::thread::Thread;
use crate::watch::ReadTracker;

/// The agent at the other end of the connection.
pub(super) enum AgentProc {
    /// A process we started (under the supervisor on Linux).
    Os(Box<AgentProcess>),
    /// Reached over a stream we were given ([`super::start_over`]): nothing to end but the
    /// connection.
    Detached,
}

impl AgentProc {
    /// Ends it politely: stdin is closed already; a wait, SIGTERM, a grace, SIGKILL.
    pub(super) async fn terminate(&mut self) -> Option<std::process::ExitStatus> {
        match self {
            AgentProc::Os(p) => p.terminate().await,
            AgentProc::Detached => None,
        }
    }

    /// Ends its whole tree at once.
    pub(super) async fn kill(&mut self) -> Option<std::process::ExitStatus> {
        match self {
            AgentProc::Os(p) => p.kill().await,
            AgentProc::Detached => None,
        }
    }

    /// Its exit, if it comes within `timeout` (it closed its output: it is usually exiting).
    pub(super) async fn wait_timeout(
        &mut self,
        timeout: Duration,
    ) -> Option<std::process::ExitStatus> {
        match self {
            AgentProc::Os(p) => p.wait_timeout(timeout).await,
            AgentProc::Detached => None,
        }
    }

    pub(super) fn stderr_tail(&self) -> Vec<String> {
        match self {
            AgentProc::Os(p) => p.stderr_tail(),
            AgentProc::Detached => Vec::new(),
        }
    }

    /// How it ended, for "The agent …".
    pub(super) fn describe_exit(&self, status: Option<std::process::ExitStatus>) -> String {
        match self {
            AgentProc::Os(_) => process::describe_exit(status),
            AgentProc::Detached => "closed its connection".into(),
        }
    }
}

/// What a request we sent the agent is for, so its answer goes to the right part.
pub(super) enum Pending {
    Initialize,
    NewSession,
    Resume,
    Load,
    ListSessions {
        reply: oneshot::Sender<Result<super::ListedSessions, EngineError>>,
    },
    DeleteSession {
        reply: oneshot::Sender<Result<bool, EngineError>>,
    },
    Prompt,
    /// `authenticate` during the start: the sign-in the front end asked for, or a stored API
    /// key. The key is kept only to take it out of the agent's answer, should it echo it.
    Authenticate {
        action: crate::auth::AuthAction,
        key: Option<crate::secrets::SecretValue>,
    },
    /// A front end's `set_mode`: answered when the agent answers (or the session ends, which
    /// drops the sender: the caller then hears the session ended).
    SetMode {
        mode_id: String,
        reply: oneshot::Sender<Result<(), EngineError>>,
    },
    SetConfigOption {
        reply: oneshot::Sender<Result<(), EngineError>>,
    },
    /// A front end's Stop on a background task (`_session/async_task/stop`).
    StopTask {
        task_id: String,
        reply: oneshot::Sender<Result<(), EngineError>>,
    },
}

/// What `start()`'s caller is told once the session is ready or could not start: the agent's
/// prompt capabilities or why, and the record of the start.
pub(super) type ReadyReply = (Result<acp::PromptCapabilities, EngineError>, StartTrace);

/// Where the session is in its life, apart from turns.
pub(super) struct Life {
    /// `start()`'s caller, answered once ([`Owner::answer_start`]).
    pub(super) ready: Option<oneshot::Sender<ReadyReply>>,
    /// Why the session could not start; given to `start()`'s caller once the agent is ended.
    pub(super) start_error: Option<EngineError>,
    /// Why the session is dead, once it is.
    pub(super) dead: Option<String>,
    /// What ends the session, once something did: the loop ends it after the current step.
    /// The first cause wins.
    pub(super) ending: Option<Ending>,
    /// The agent's non-ACP output was reported once already.
    warned_not_json: bool,
    /// Until when the start may take: `start_timeout` from the start, moved while the agent
    /// signs the user in (`auth::AUTHENTICATE_TIMEOUT`).
    pub(super) start_deadline: Instant,
}

/// What `start()` prepares before the agent runs (the same for a process and a stream).
pub(super) struct Prepared {
    compat: Compat,
    rules: Rules,
    audit: AuditLog,
    watching: Watching,
    roots: crate::fs::Roots,
    mcp: crate::mcp::McpLaunch,
}

impl Prepared {
    /// Opens the rules store (on the blocking pool) and the audit log, and starts the folder
    /// watcher's first walk (the session does not wait for it).
    pub(super) async fn new(
        id: &str,
        spec: &LaunchSpec,
        opts: &SessionOptions,
        mcp: crate::mcp::McpLaunch,
    ) -> Self {
        let compat = Compat::for_launch(spec);
        let roots = session_roots(opts);
        // Rules are keyed by the canonical cwd, as `acp-desk-cli rules --project` looks them up.
        let project = std::fs::canonicalize(&opts.cwd).unwrap_or_else(|_| opts.cwd.clone());
        let rules = Rules::open(
            opts.rules_file.clone(),
            spec.name.clone(),
            project,
            opts.allow_reads_inside_roots,
        )
        .await;
        let audit = match AuditLog::open(&opts.audit_dir, id, opts.audit) {
            Ok(log) => log,
            Err(e) => {
                tracing::warn!("audit log not started: {e}");
                AuditLog::off()
            }
        };
        let excluded = opts
            .rules_file
            .iter()
            .chain(std::iter::once(&opts.audit_dir))
            .chain(&opts.unwatched)
            // The shadow repositories, when the data folder lies inside the project.
            .chain(opts.checkpoints.as_ref().map(|c| &c.base))
            .filter_map(|p| crate::rules::canonical_path(p, None))
            .collect();
        let watching = Watching::start(opts.watch_roots, roots.roots().to_vec(), excluded);
        Self {
            compat,
            rules,
            audit,
            watching,
            roots,
            mcp,
        }
    }
}

pub(super) struct Owner {
    pub(super) id: String,
    pub(super) opts: SessionOptions,
    /// `None` once the agent's input is closed (dropping it closes the agent's stdin once
    /// queued lines are written).
    pub(super) conn: Option<Connection>,
    pub(super) inbound: mpsc::Receiver<Vec<Inbound>>,
    pub(super) agent: AgentProc,
    pub(super) identity: AgentIdentity,
    /// The agent's id for the session, once `session/new` answered.
    pub(super) acp_session: Option<acp::SessionId>,
    /// Our requests waiting for the agent's answer.
    pub(super) pending: HashMap<RequestId, Pending>,
    pub(super) thread: Thread,
    /// Events not yet handed to the consumer; sent as one batch per burst of agent messages.
    pub(super) out: Vec<StreamEvent>,
    events: mpsc::Sender<EventBatch>,
    pub(super) life: Life,
    pub(super) turn: Option<Turn>,
    /// When the last turn ended: changes seen shortly after still belong to it.
    pub(super) turn_ended_at: Option<Instant>,
    pub(super) perms: Permissions,
    /// The agent's open questions (`elicitation/create`).
    pub(super) asks: Elicitations,
    /// The agent's background tasks (AIR `asyncTasks`).
    pub(super) tasks: Tasks,
    pub(super) client: Client,
    pub(super) watch: Watching,
    pub(super) checkpoints: super::checkpoints::CheckpointState,
    pub(super) audit: AuditLog,
    pub(super) handshake: Handshake,
    /// The record of the start, until `start()`'s caller gets it.
    pub(super) trace: StartTrace,
}

impl Owner {
    #[allow(clippy::too_many_arguments)] // one call, in `launch`
    pub(super) fn new(
        id: String,
        launch_name: &str,
        prepared: Prepared,
        agent: AgentProc,
        conn: Connection,
        inbound: mpsc::Receiver<Vec<Inbound>>,
        opts: SessionOptions,
        events: mpsc::Sender<EventBatch>,
        ready: oneshot::Sender<ReadyReply>,
        trace: StartTrace,
    ) -> Self {
        let reads = Arc::new(Mutex::new(ReadTracker::new()));
        Self {
            thread: Thread::new(id.clone()),
            id,
            conn: Some(conn),
            inbound,
            agent,
            identity: AgentIdentity {
                launch_name: launch_name.into(),
                name: None,
                title: None,
                version: None,
                acp_session_id: None,
                prompt_capabilities: None,
                session_methods: None,
                auth_methods: None,
            },
            acp_session: None,
            pending: HashMap::new(),
            out: Vec::new(),
            events,
            life: Life {
                ready: Some(ready),
                start_error: None,
                dead: None,
                ending: None,
                warned_not_json: false,
                start_deadline: Instant::now() + opts.start_timeout,
            },
            turn: None,
            turn_ended_at: None,
            perms: Permissions::new(prepared.rules),
            asks: Elicitations::default(),
            tasks: Tasks::default(),
            client: Client::new(prepared.roots, prepared.compat, reads),
            watch: prepared.watching,
            checkpoints: Default::default(),
            audit: prepared.audit,
            handshake: Handshake::new(&opts.opening, prepared.mcp),
            opts,
            trace,
        }
    }

    /// Answers `start()`'s caller, once: ready (`Ok`) or why not, with the record of the start.
    pub(super) fn answer_start(&mut self, result: Result<acp::PromptCapabilities, EngineError>) {
        if let Some(ready) = self.life.ready.take() {
            if result.is_err() {
                self.trace.failed();
            }
            let _ = ready.send((result, self.trace.finish()));
        }
    }

    pub(super) async fn run(mut self, mut cmds: mpsc::UnboundedReceiver<Command>) {
        self.emit_status(SessionState::Starting, None);
        self.send_initialize();
        self.life.start_deadline = Instant::now() + self.opts.start_timeout;
        // Who asked for the close, answered once the session has ended.
        let mut closer = None;
        loop {
            let cancel_deadline = self.turn.as_ref().and_then(|t| t.cancel_deadline);
            let idle_deadline = self.idle_deadline();
            tokio::select! {
                biased;
                batch = self.inbound.recv() => {
                    if let Some(t) = self.turn.as_mut() {
                        t.last_activity = Instant::now();
                    }
                    let mut closed = None;
                    match batch {
                        Some(batch) => {
                            for msg in batch {
                                match msg {
                                    Inbound::Closed { error } => closed = Some(error),
                                    msg => self.on_inbound(msg).await,
                                }
                            }
                        }
                        None => closed = Some(None),
                    }
                    if let Some(error) = closed {
                        self.request_end(Ending::Exited { error });
                    }
                },
                cmd = cmds.recv() => match cmd {
                    Some(Command::Close { now, reply }) => {
                        closer = Some(reply);
                        self.request_end(Ending::Closed { why: "closed", now });
                    }
                    Some(cmd) => self.on_command(cmd).await,
                    None => self.request_end(Ending::Closed {
                        why: "closed (every handle was dropped)",
                        now: false,
                    }),
                },
                _ = tokio::time::sleep_until(self.life.start_deadline), if self.life.ready.is_some() => {
                    self.request_end(Ending::StartTimeout);
                }
                keys = super::signin::wait_keys(&mut self.handshake.keys) => {
                    self.handshake.keys = None;
                    self.on_keys_read(keys).await;
                }
                _ = sleep_until_opt(cancel_deadline) => self.request_end(Ending::IgnoredCancel),
                _ = sleep_until_opt(idle_deadline) => self.watchdog_expired().await,
                Some(done) = self.client.done_rx.recv() => self.on_done(done).await,
                started = super::watching::wait_started(&mut self.watch.start) => {
                    self.watch.start = None;
                    self.on_watcher_started(started);
                }
                Some(ev) = self.watch.rx.recv() => self.on_watch(ev),
                Some(ev) = self.client.term_rx.recv() => {
                    self.on_terminal_event(ev);
                    // Take what else is ready now: one batch for a burst of output.
                    while let Ok(ev) = self.client.term_rx.try_recv() {
                        self.on_terminal_event(ev);
                    }
                }
            }
            self.check_audit();
            if let Some(ending) = self.life.ending.take() {
                self.end(ending).await;
                break;
            }
            self.flush().await;
        }
        if let Some(reply) = closer {
            let _ = reply.send(());
        }
        // Dead: nothing more will be emitted, so the event stream ends here (consumers see it
        // close); keep answering commands with the reason until every handle is gone.
        let reason = self
            .life
            .dead
            .clone()
            .unwrap_or_else(|| "the agent exited".into());
        let changes = self.client.changes.entries().to_vec();
        drop(self);
        while let Some(cmd) = cmds.recv().await {
            let ended = || EngineError::SessionEnded(reason.clone());
            match cmd {
                Command::Prompt { reply, .. } => {
                    let _ = reply.send(Err(ended()));
                }
                Command::Respond { reply, .. }
                | Command::AnswerElicitation { reply, .. }
                | Command::StopTask { reply, .. }
                | Command::SetMode { reply, .. }
                | Command::SetConfigOption { reply, .. } => {
                    let _ = reply.send(Err(ended()));
                }
                Command::Close { reply, .. } => {
                    let _ = reply.send(());
                }
                Command::ListSessions { reply, .. } => {
                    let _ = reply.send(Err(ended()));
                }
                Command::DeleteSession { reply, .. } => {
                    let _ = reply.send(Err(ended()));
                }
                Command::Changes { reply } => {
                    let _ = reply.send(changes.clone());
                }
                Command::Cancel => {}
            }
        }
    }

    /// Ends the session after the current step (the first cause asked wins).
    pub(super) fn request_end(&mut self, ending: Ending) {
        if self.life.ending.is_none() && self.life.dead.is_none() {
            self.life.ending = Some(ending);
        }
    }

    pub(super) fn emit(&mut self, ev: StreamEvent) {
        self.out.push(ev);
    }

    /// Hands the pending events to the consumer. Waits while the consumer's queue is full: that
    /// wait is the backpressure that slows a flooding agent down.
    pub(super) async fn flush(&mut self) {
        if self.out.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.out);
        // A consumer that went away is not an error for the engine: the agent still gets its
        // answers and the session still closes cleanly.
        let _ = self.events.send(batch).await;
    }

    pub(super) fn emit_status(&mut self, status: SessionState, detail: Option<String>) {
        let ev = StreamEvent::SessionStatus {
            session_id: self.id.clone(),
            status,
            detail,
            agent: Some(self.identity.clone()),
        };
        self.emit(ev);
    }

    /// Emits an `error`, classified (`ErrorInfo::new`, `ErrorInfo::of_kind`).
    pub(super) fn emit_error(&mut self, error: ErrorInfo) {
        let ev = StreamEvent::Error {
            session_id: Some(self.id.clone()),
            error,
        };
        self.emit(ev);
    }

    pub(super) fn notice(
        &mut self,
        severity: NoticeSeverity,
        title: String,
        description: Option<String>,
    ) {
        let ev = StreamEvent::Notice {
            session_id: self.id.clone(),
            severity,
            title,
            description,
            source: NoticeSource::Client,
        };
        self.emit(ev);
    }

    /// Sends a request to the agent; its answer goes to `purpose`'s part.
    pub(super) fn request<P: serde::Serialize>(
        &mut self,
        method: &str,
        params: &P,
        purpose: Pending,
    ) -> Option<RequestId> {
        let conn = self.conn.as_ref()?;
        match conn.request(method, params) {
            Ok(id) => {
                self.pending.insert(id.clone(), purpose);
                Some(id)
            }
            Err(e) => {
                self.sent(method, Err(e));
                None
            }
        }
    }

    /// Answers one of the agent's requests (success or error).
    pub(super) fn reply<T: serde::Serialize>(&mut self, id: &RequestId, r: Result<T, acp::Error>) {
        if let Some(conn) = &self.conn {
            let r = conn.respond(id, r);
            self.sent("an answer", r);
        }
    }

    /// Notes the outcome of a send to the agent. A full queue means the agent stopped reading
    /// its input; waiting for it could be forever, so the session ends it instead.
    pub(super) fn sent(&mut self, what: &str, r: Result<(), jsonrpc::SendError>) {
        match r {
            Ok(()) => {}
            Err(jsonrpc::SendError::Full) => {
                if !matches!(self.life.ending, Some(Ending::Stuck)) {
                    tracing::warn!("could not send {what}: the agent stopped reading its input");
                }
                self.request_end(Ending::Stuck);
            }
            Err(e) => tracing::debug!("could not send {what}: {e}"),
        }
    }

    pub(super) async fn on_inbound(&mut self, msg: Inbound) {
        match msg {
            Inbound::Notification { method, params } => {
                if method == "session/update" {
                    self.on_update(params);
                } else if method == "elicitation/complete" {
                    self.on_elicitation_complete(params);
                } else {
                    // Unknown notifications (including `_`-prefixed extensions) are ignored, as
                    // JSON-RPC and ACP say.
                    tracing::debug!("ignored notification {method}");
                }
            }
            Inbound::Request { id, method, params } => self.on_request(id, method, params).await,
            Inbound::Response { id, result } => self.on_response(id, result).await,
            Inbound::CancelRequest { id } => self.on_cancel_request(id).await,
            Inbound::Skipped(s) => self.on_skipped(s),
            Inbound::Closed { .. } => {}
        }
    }

    fn on_update(&mut self, params: Option<Box<RawValue>>) {
        let raw = params.as_deref().map(RawValue::get).unwrap_or("null");
        match serde_json::from_str::<acp::SessionNotification>(raw) {
            Ok(n) => {
                if let Some(ours) = &self.acp_session
                    && n.session_id != *ours
                {
                    tracing::warn!("update for another session ({}) ignored", n.session_id);
                    return;
                }
                if self.handshake.skip_replayed() {
                    return;
                }
                self.thread.apply(n.update, &mut self.out);
            }
            Err(e) => {
                // An update we cannot type (a newer variant, or a known one with fields we do not
                // understand) is passed on as it is, never dropped.
                let value = serde_json::from_str::<serde_json::Value>(raw).ok();
                let other_session = match (&self.acp_session, value.as_ref()) {
                    (Some(ours), Some(v)) => v
                        .get("sessionId")
                        .and_then(serde_json::Value::as_str)
                        .is_some_and(|sid| sid != &*ours.0),
                    _ => false,
                };
                if other_session {
                    tracing::warn!("untyped update for another session ignored");
                    return;
                }
                if self.handshake.skip_replayed() {
                    return;
                }
                let update = value.and_then(|v| v.get("update").cloned());
                let task_kind = update
                    .as_ref()
                    .and_then(|u| u.get("sessionUpdate"))
                    .and_then(serde_json::Value::as_str)
                    .filter(|k| super::tasks::is_task_update(k))
                    .map(str::to_owned);
                if let (Some(kind), Some(update)) = (task_kind, update.clone()) {
                    return self.on_task_update(&kind, update);
                }
                match update {
                    Some(update) => {
                        tracing::debug!("untyped session/update passed through: {e}");
                        let ev = StreamEvent::UnknownUpdate {
                            session_id: self.id.clone(),
                            update,
                        };
                        self.emit(ev);
                    }
                    None => tracing::warn!("malformed session/update ignored: {e}"),
                }
            }
        }
    }

    async fn on_request(&mut self, id: RequestId, method: String, params: Option<Box<RawValue>>) {
        if self.conn.is_none() {
            return;
        }
        match method.as_str() {
            "session/request_permission" => {
                let raw = params.as_deref().map(RawValue::get).unwrap_or("null");
                match serde_json::from_str::<acp::RequestPermissionRequest>(raw) {
                    Ok(req) => self.on_permission(id, req).await,
                    Err(e) => self.reply::<()>(
                        &id,
                        Err(acp::Error::new(
                            codes::INVALID_PARAMS,
                            format!("invalid params: {e}"),
                        )),
                    ),
                }
            }
            "elicitation/create" => self.on_elicitation(id, params),
            m if self.on_client_request(&id, m, params.as_deref()) => {}
            _ => self.reply::<()>(
                &id,
                Err(acp::Error::new(
                    codes::METHOD_NOT_FOUND,
                    format!("Method not found: {method}"),
                )),
            ),
        }
    }

    async fn on_response(&mut self, id: RequestId, result: Result<Box<RawValue>, acp::Error>) {
        // Some agents echo our numeric ids as strings ("2" for 2): accept that rather than
        // leave the request, and the turn, waiting forever.
        let id = match &id {
            RequestId::Str(s) if !self.pending.contains_key(&id) => {
                s.parse::<i64>().map(RequestId::Number).unwrap_or(id)
            }
            _ => id,
        };
        let Some(purpose) = self.pending.remove(&id) else {
            tracing::warn!("response to unknown request {id} ignored");
            return;
        };
        match purpose {
            Pending::Initialize => self.on_initialized(result).await,
            Pending::NewSession => self.on_session_created(result).await,
            Pending::Resume => self.on_resumed(result).await,
            Pending::Load => self.on_loaded(result).await,
            Pending::ListSessions { reply } => self.on_listed(reply, result),
            Pending::DeleteSession { reply } => self.on_deleted(reply, result),
            Pending::Authenticate { action, key } => {
                self.on_authenticated(action, key, result).await;
            }
            Pending::Prompt => {
                let current = self.turn.as_ref().and_then(|t| t.request.as_ref()) == Some(&id);
                if current {
                    self.on_prompt_done(result).await;
                } else {
                    // A turn that already ended (the agent was ended, or answered twice).
                    tracing::info!("late answer to session/prompt {id} ignored");
                }
            }
            Pending::SetMode { mode_id, reply } => self.on_mode_set(mode_id, reply, result).await,
            Pending::SetConfigOption { reply } => self.on_config_set(reply, result).await,
            Pending::StopTask { task_id, reply } => {
                self.on_task_stop_answered(task_id, reply, result);
            }
        }
    }

    async fn on_command(&mut self, cmd: Command) {
        match cmd {
            Command::Prompt { blocks, reply } => self.start_turn(blocks, reply).await,
            Command::Cancel => self.cancel_turn().await,
            Command::Respond {
                request_id,
                resolution,
                reply,
            } => {
                let r = self.answer_permission(&request_id, resolution).await;
                let _ = reply.send(r);
            }
            Command::AnswerElicitation {
                request_id,
                answer,
                reply,
            } => {
                let r = self.answer_elicitation(&request_id, answer);
                let _ = reply.send(r);
            }
            Command::StopTask { task_id, reply } => self.stop_task(task_id, reply),
            Command::Changes { reply } => {
                let _ = reply.send(self.client.changes.entries().to_vec());
            }
            Command::SetMode { mode_id, reply } => self.set_mode(mode_id, reply),
            Command::SetConfigOption {
                config_id,
                value,
                reply,
            } => self.set_config_option(config_id, value, reply),
            Command::ListSessions { cwd, cursor, reply } => self.list_sessions(cwd, cursor, reply),
            Command::DeleteSession {
                acp_session_id,
                reply,
            } => self.delete_session(acp_session_id, reply),
            // Handled by the loop.
            Command::Close { .. } => {}
        }
    }

    fn on_skipped(&mut self, s: Skipped) {
        match s {
            Skipped::NotJson { preview } => {
                self.trace.not_json(&preview);
                // Shell profiles and chatty tools print to stdout; say so once, log every line.
                if !self.life.warned_not_json {
                    self.life.warned_not_json = true;
                    self.notice(
                        NoticeSeverity::Warning,
                        "The agent printed text that is not ACP on its output; it was skipped.".into(),
                        Some(format!(
                            "First skipped line: {preview}\nOften a shell profile or a tool prints there. Further lines are only logged."
                        )),
                    );
                }
            }
            Skipped::TooLong { bytes } => {
                let limit = self.opts.limits.max_line_bytes;
                self.notice(
                    NoticeSeverity::Warning,
                    format!("The agent sent a {bytes}-byte message, over the {limit}-byte limit; it was skipped."),
                    Some("If a tool call or answer looks incomplete, this is why.".into()),
                );
            }
            Skipped::Batch => {
                self.notice(
                    NoticeSeverity::Warning,
                    "The agent sent a JSON-RPC batch, which ACP does not allow; it was refused."
                        .into(),
                    None,
                );
            }
            Skipped::Invalid { reason } => {
                self.notice(
                    NoticeSeverity::Warning,
                    format!("The agent sent an invalid message: {reason}."),
                    None,
                );
            }
        }
    }
}

pub(super) async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
