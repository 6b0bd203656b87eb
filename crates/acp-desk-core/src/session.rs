//! A session: one agent process, one owner task.
//!
//! The owner task is the only code that touches the session's state. It takes the agent's
//! messages in arrival order from the connection's single inbound channel, and commands from
//! front ends (prompt, cancel, answer a permission, close) from a command channel. Nothing in it
//! waits for a person: permission requests are parked and answered when a `Respond` command
//! arrives. Events go out through a bounded channel, so a slow consumer slows the agent down
//! (backpressure) instead of growing a queue.

mod remembered;
mod services;
mod watching;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::{self as acp, RequestId};
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::agents::LaunchSpec;
use crate::audit::{AuditKind, AuditLog};
use crate::events::{
    AgentIdentity, ErrorInfo, NoticeSeverity, NoticeSource, PermissionResolution, SessionState,
    SettledBy, StreamEvent, TurnEndReason,
};
use crate::fs::{Change, ChangeSet, Compat, Roots};
use crate::jsonrpc::{self, Connection, Inbound, Limits, Skipped, codes};
use crate::process::{self, AgentProcess, ProcessOptions};
use crate::rules::{RuleStore, Subject};
use crate::terminal::{TerminalEvent, TerminalOptions, Terminals};
use crate::thread::{self, Thread};
use crate::watch::{ReadTracker, RootWatcher, WatchError, WatchEvent};
use services::{Approved, ClientOp, Done, TermState};

/// Events travel to consumers in batches: one per burst of agent messages (one read of its
/// output), so a flood costs one wake-up per batch rather than per event.
pub type EventBatch = Vec<StreamEvent>;

/// What the engine does with the agent's permission requests when nobody answers them by hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionPolicy {
    /// Park them and emit `agent-prompt`; a front end answers through `respond_permission`.
    Ask,
    /// Answer with the request's `allow_once` option (chosen by kind, never by id or name).
    AllowOnce,
    /// Answer with the request's `reject_once` option.
    RejectOnce,
    /// Answer `cancelled`.
    Cancel,
}

#[derive(Debug, Clone)]
pub struct SessionOptions {
    pub cwd: PathBuf,
    pub additional_dirs: Vec<PathBuf>,
    pub permission_policy: PermissionPolicy,
    /// How long a turn may go on after `session/cancel` before the agent is ended. Agents must
    /// answer a cancel with `stopReason: cancelled`; one that does not is stuck or deaf.
    pub cancel_grace: Duration,
    /// A turn during which the agent sends nothing for this long ends with `turn-end`
    /// `watchdog-timeout` (and the agent is asked to cancel). Waiting for the user's answer to a
    /// permission request does not count as idle. `None`: no watchdog.
    pub turn_idle_timeout: Option<Duration>,
    /// Budget for `initialize` + `session/new`. Generous: `npx` on a cold cache takes tens of
    /// seconds (notes/real-agents.md).
    pub start_timeout: Duration,
    pub process: ProcessOptions,
    pub limits: Limits,
    /// The remembered "always" answers (`permission-rules.json`): applied before
    /// `permission_policy`, and where the user's "always" answers are stored. `None`: none
    /// applied, none stored.
    pub rules_file: Option<PathBuf>,
    /// Answer the agent's read requests (kind `read`) whose every path is inside the session's
    /// folders with allow, without asking. Off by default.
    pub allow_reads_inside_roots: bool,
    /// The session's audit log. On by default; `Off` is AIP-44's `audit.kind: off`.
    pub audit: AuditKind,
    /// Where the audit log goes (`<dir>/<UTC date>/<session>.jsonl`).
    pub audit_dir: PathBuf,
    /// Watch the session's folders for files changed without `fs/write_text_file`.
    pub watch_roots: bool,
}

impl SessionOptions {
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            additional_dirs: Vec::new(),
            permission_policy: PermissionPolicy::Ask,
            cancel_grace: Duration::from_secs(5),
            // Long enough for a model thinking hard between messages; short enough that a
            // wedged agent does not hold a turn (and a CI job) forever.
            turn_idle_timeout: Some(Duration::from_secs(600)),
            start_timeout: Duration::from_secs(120),
            process: ProcessOptions::default(),
            limits: Limits::default(),
            rules_file: Some(RuleStore::default_path()),
            allow_reads_inside_roots: false,
            audit: AuditKind::On,
            audit_dir: AuditLog::default_dir(),
            watch_roots: true,
        }
    }
}

/// Errors a front end can get from a session. Front ends match on the variant, never the text.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum EngineError {
    #[error("{0}")]
    Spawn(String),
    #[error("the agent failed to start: {0}")]
    StartFailed(String),
    #[error(
        "the agent needs you to sign in first ({0}). Sign in with the agent's own command, then try again."
    )]
    AuthRequired(String),
    #[error(
        "the agent speaks ACP protocol version {0}; ACP Desk speaks version 1. Update the agent or ACP Desk."
    )]
    ProtocolVersion(u16),
    #[error("the session has ended: {0}")]
    SessionEnded(String),
    #[error("a turn is already running; wait for it to end or stop it first")]
    TurnInProgress,
    #[error("no pending permission request has the id `{0}` (it may have been answered already)")]
    UnknownPermission(String),
    #[error("the permission request `{0}` has no option `{1}`")]
    UnknownOption(String, String),
    /// The agent answered a request (set a mode, a config option) with an error, or with an
    /// answer that is not ACP. Carries what the agent said: the user needs its reason.
    #[error("the agent refused: {0}")]
    AgentRefused(String),
}

/// How a turn ended, as the `turn-end` event says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnOutcome {
    pub reason: TurnEndReason,
    pub stop_reason: Option<acp::StopReason>,
}

enum Command {
    Prompt {
        blocks: Vec<acp::ContentBlock>,
        reply: oneshot::Sender<Result<TurnOutcome, EngineError>>,
    },
    Cancel,
    Respond {
        correlation_id: String,
        resolution: PermissionResolution,
        reply: oneshot::Sender<Result<(), EngineError>>,
    },
    Close {
        /// End the agent at once (SIGKILL of its tree) instead of politely.
        now: bool,
        reply: oneshot::Sender<()>,
    },
    Changes {
        reply: oneshot::Sender<Vec<Change>>,
    },
    SetMode {
        mode_id: String,
        reply: oneshot::Sender<Result<(), EngineError>>,
    },
    SetConfigOption {
        config_id: String,
        value: acp::SessionConfigOptionValue,
        reply: oneshot::Sender<Result<(), EngineError>>,
    },
}

/// A front end's handle on a session. Cheap to clone; when the last clone is dropped the
/// session closes and its agent ends.
#[derive(Clone)]
pub struct SessionHandle {
    id: String,
    cmds: mpsc::UnboundedSender<Command>,
    supervised: bool,
    pid: Option<u32>,
    prompt_capabilities: acp::PromptCapabilities,
}

impl SessionHandle {
    /// Our id for the session (every event's `sessionId`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The process we started: the supervisor on Linux, the agent itself elsewhere. Its
    /// descendants are the agent's whole tree.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Whether the agent runs under `acp-desk-supervisor` (Linux).
    pub fn is_supervised(&self) -> bool {
        self.supervised
    }

    /// What the agent said it accepts in a prompt (`initialize`): front ends send images and
    /// embedded resources only when it does.
    pub fn prompt_capabilities(&self) -> &acp::PromptCapabilities {
        &self.prompt_capabilities
    }

    /// Switches the session's mode (`session/set_mode`); returns once the agent agreed, after
    /// the `current-mode` event went out. Allowed during a turn too (agents switch modes
    /// mid-turn, e.g. leaving plan mode).
    pub async fn set_mode(&self, mode_id: &str) -> Result<(), EngineError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::SetMode {
            mode_id: mode_id.into(),
            reply,
        })?;
        rx.await.unwrap_or_else(|_| Err(ended()))
    }

    /// Sets one of the session's config options (`session/set_config_option`): a select's value
    /// id or a boolean. Returns once the agent agreed, after the `config-options` event with
    /// every option as the agent now has them went out.
    pub async fn set_config_option(
        &self,
        config_id: &str,
        value: impl Into<acp::SessionConfigOptionValue>,
    ) -> Result<(), EngineError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::SetConfigOption {
            config_id: config_id.into(),
            value: value.into(),
            reply,
        })?;
        rx.await.unwrap_or_else(|_| Err(ended()))
    }

    /// Sends a prompt and waits for its turn to end.
    pub async fn prompt(&self, blocks: Vec<acp::ContentBlock>) -> Result<TurnOutcome, EngineError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Prompt { blocks, reply })?;
        rx.await.unwrap_or_else(|_| Err(ended()))
    }

    /// Stops the running turn: `session/cancel`, parked permissions answered `cancelled`, and the
    /// agent ended if it does not stop within the cancel grace period. A no-op between turns.
    pub fn cancel(&self) -> Result<(), EngineError> {
        self.send(Command::Cancel)
    }

    pub async fn respond_permission(
        &self,
        correlation_id: &str,
        resolution: PermissionResolution,
    ) -> Result<(), EngineError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Respond {
            correlation_id: correlation_id.into(),
            resolution,
            reply,
        })?;
        rx.await.unwrap_or_else(|_| Err(ended()))
    }

    /// The current turn's change set (the last turn's between turns): every file written
    /// through `fs/write_text_file`, once, with its text before the turn's first write, and every
    /// file the folder watcher saw change during the turn (the agent's own tools), without it.
    pub async fn changes(&self) -> Result<Vec<Change>, EngineError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Changes { reply })?;
        rx.await.map_err(|_| ended())
    }

    /// Ends the session and its agent's whole process tree (stdin closed, then SIGTERM, then
    /// SIGKILL); returns when they are gone.
    pub async fn close(&self) {
        self.close_with(false).await;
    }

    /// Ends the session and kills the agent's whole tree at once, without a grace period.
    pub async fn close_now(&self) {
        self.close_with(true).await;
    }

    async fn close_with(&self, now: bool) {
        let (reply, rx) = oneshot::channel();
        if self.send(Command::Close { now, reply }).is_ok() {
            let _ = rx.await;
        }
    }

    fn send(&self, cmd: Command) -> Result<(), EngineError> {
        self.cmds.send(cmd).map_err(|_| ended())
    }
}

fn ended() -> EngineError {
    EngineError::SessionEnded("the agent is no longer running".into())
}

static SESSION_COUNTER: AtomicU64 = AtomicU64::new(1);

/// ACP's "authentication required" error code.
const AUTH_REQUIRED: i32 = -32000;

/// Permission requests that may wait for an answer at once. People answer a handful; an agent
/// with more than this waiting is looping, and must not grow our memory.
const MAX_PARKED: usize = 64;

fn new_session_id() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    format!(
        "s{t:x}-{}-{}",
        std::process::id(),
        SESSION_COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Starts the agent and a session in `opts.cwd`; returns once the session is ready (or with the
/// reason it could not start). Events, starting with `session-status: starting`, go to `events`.
pub async fn start(
    spec: LaunchSpec,
    opts: SessionOptions,
    events: mpsc::Sender<EventBatch>,
) -> Result<SessionHandle, EngineError> {
    let id = new_session_id();
    let compat = Compat::for_launch(&spec);
    let roots = session_roots(&opts);
    // Rules are keyed by the canonical cwd, as `acp-desk-cli rules --project` looks them up.
    let project = std::fs::canonicalize(&opts.cwd).unwrap_or_else(|_| opts.cwd.clone());
    let (rules, rules_notice) = open_rules(opts.rules_file.clone()).await;
    let audit = match AuditLog::open(&opts.audit_dir, &id, opts.audit) {
        Ok(log) => log,
        Err(e) => {
            tracing::warn!("audit log not started: {e}");
            AuditLog::off()
        }
    };
    // A few batches: the watcher retries a full channel, it never drops what it saw.
    let (watch_tx, watch_rx) = mpsc::channel(8);
    let (watch_start_tx, watch_start_rx) = oneshot::channel();
    if opts.watch_roots {
        let folders = roots.roots().to_vec();
        // The first walk of a large tree takes a while: off the async threads, and the
        // session does not wait for it.
        tokio::task::spawn_blocking(move || {
            let _ = watch_start_tx.send(RootWatcher::start(&folders, watch_tx));
        });
    }
    let spawned = AgentProcess::spawn(&spec, &opts.cwd, opts.process)
        .map_err(|e| EngineError::Spawn(e.to_string()))?;
    let supervised = spawned.process.is_supervised();
    let pid = spawned.process.pid();
    let (conn, inbound) = Connection::start(spawned.stdout, spawned.stdin, opts.limits);
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let (ready_tx, ready_rx) = oneshot::channel();
    // A few dozen deltas: a full channel pauses the commands (backpressure), it loses nothing.
    let (term_tx, term_rx) = mpsc::channel(32);
    let (done_tx, done_rx) = mpsc::unbounded_channel();
    let owner = Owner {
        rules,
        rules_notice,
        unsaved_rules: Vec::new(),
        project,
        audit,
        watch_excluded: opts
            .rules_file
            .iter()
            .chain(std::iter::once(&opts.audit_dir))
            .filter_map(|p| crate::rules::canonical_path(p, None))
            .collect(),
        reads: Arc::new(Mutex::new(ReadTracker::new())),
        watcher: None,
        watch_start: opts.watch_roots.then_some(watch_start_rx),
        watch_rx,
        watch_seen: HashMap::new(),
        turn_ended_at: None,
        roots,
        compat,
        changes: ChangeSet::new(),
        terminals: Terminals::new(term_tx, TerminalOptions::default()),
        term_rx,
        term_state: HashMap::new(),
        done_tx,
        done_rx,
        in_flight: 0,
        approved_paths: Vec::new(),
        thread: Thread::new(id.clone()),
        id: id.clone(),
        conn: Some(conn),
        inbound,
        events,
        process: spawned.process,
        identity: AgentIdentity {
            launch_name: spec.name.clone(),
            name: None,
            title: None,
            version: None,
            acp_session_id: None,
            prompt_capabilities: None,
        },
        opts,
        acp_session: None,
        pending: HashMap::new(),
        turn: None,
        parked: HashMap::new(),
        permission_counter: 0,
        feedback: Vec::new(),
        ready: Some(ready_tx),
        dead: None,
        start_error: None,
        announced_dead: false,
        stuck: false,
        warned_not_json: false,
        out: Vec::new(),
    };
    tokio::spawn(owner.run(cmd_rx));
    match ready_rx.await {
        Ok(Ok(prompt_capabilities)) => Ok(SessionHandle {
            id,
            cmds: cmd_tx,
            supervised,
            pid,
            prompt_capabilities,
        }),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(EngineError::StartFailed("the session task ended".into())),
    }
}

/// Opens the rules store on the blocking pool. A corrupt file (set aside) or one that cannot be
/// read gives a notice for the session to show; an unreadable store means no remembered
/// answers apply this session.
async fn open_rules(
    path: Option<PathBuf>,
) -> (Option<Arc<tokio::sync::Mutex<RuleStore>>>, Option<String>) {
    let Some(path) = path else {
        return (None, None);
    };
    let opened = tokio::task::spawn_blocking(move || RuleStore::open(path)).await;
    match opened {
        Ok(Ok((store, warning))) => (
            Some(Arc::new(tokio::sync::Mutex::new(store))),
            warning.map(|w| w.to_string()),
        ),
        Ok(Err(e)) => (None, Some(e.to_string())),
        Err(e) => (
            None,
            Some(format!("the permission rules could not be loaded: {e}")),
        ),
    }
}

/// The session's roots: its cwd and the added folders. A folder that cannot be used (gone
/// since it was chosen) is left out with a warning rather than failing the session.
fn session_roots(opts: &SessionOptions) -> Roots {
    let mut roots = Roots::default();
    for dir in std::iter::once(&opts.cwd).chain(&opts.additional_dirs) {
        if let Err(e) = roots.add_root(dir) {
            tracing::warn!("session folder {} left out: {e}", dir.display());
        }
    }
    roots
}

enum Pending {
    Initialize,
    NewSession,
    Prompt,
    /// A front end's `set_mode`: answered when the agent answers (or the session ends, which
    /// drops the sender: the caller then hears the session ended).
    SetMode {
        mode_id: String,
        reply: oneshot::Sender<Result<(), EngineError>>,
    },
    SetConfigOption {
        reply: oneshot::Sender<Result<(), EngineError>>,
    },
}

struct Turn {
    request: Option<RequestId>,
    reply: Option<oneshot::Sender<Result<TurnOutcome, EngineError>>>,
    /// Set when the user stopped the turn: the agent is ended if the turn is still running then.
    cancel_deadline: Option<Instant>,
    /// The last sign of life from the agent during this turn (or the last answer we gave it).
    last_activity: Instant,
    /// The watchdog stopped this turn: it ends `watchdog-timeout`, not `cancelled`.
    watchdog: bool,
}

struct Parked {
    request: RequestId,
    options: Vec<acp::PermissionOption>,
    kind: ParkedKind,
}

enum ParkedKind {
    /// The agent's `session/request_permission`, with the paths its tool call names and its
    /// kind (an answer by the user allowing it covers the access that kind implies to those
    /// paths for the turn), and what rules match it on.
    Agent {
        paths: Vec<PathBuf>,
        kind: Option<acp::ToolKind>,
        subject: Box<Subject>,
    },
    /// A request of the agent for a path outside the roots, waiting for the user.
    Client(Box<ClientOp>),
}

struct Owner {
    id: String,
    conn: Option<Connection>,
    inbound: mpsc::Receiver<Vec<Inbound>>,
    events: mpsc::Sender<EventBatch>,
    process: AgentProcess,
    identity: AgentIdentity,
    opts: SessionOptions,
    acp_session: Option<acp::SessionId>,
    pending: HashMap<RequestId, Pending>,
    turn: Option<Turn>,
    thread: Thread,
    parked: HashMap<String, Parked>,
    permission_counter: u64,
    /// Feedback given with rejections, sent at the head of the next prompt.
    feedback: Vec<String>,
    /// `start()`'s caller, told the agent's prompt capabilities once the session is ready.
    ready: Option<oneshot::Sender<Result<acp::PromptCapabilities, EngineError>>>,
    /// Why the session is dead, once it is.
    dead: Option<String>,
    /// Why the session could not start; given to `start()`'s caller once the agent is ended.
    start_error: Option<EngineError>,
    /// Whether `session-status: dead` went out.
    announced_dead: bool,
    /// The agent stopped reading its input: it is ended at the end of this loop iteration.
    stuck: bool,
    warned_not_json: bool,
    /// Events not yet handed to the consumer; sent as one batch per burst of agent messages.
    out: Vec<StreamEvent>,
    /// The session's folders (cwd + added); grows when the user adds one.
    roots: Roots,
    compat: Compat,
    /// This turn's writes (the last turn's between turns).
    changes: ChangeSet,
    terminals: Terminals,
    term_rx: mpsc::Receiver<TerminalEvent>,
    term_state: HashMap<acp::TerminalId, TermState>,
    /// File IO and exit waits report here when done; unbounded, but at most
    /// `services::MAX_IN_FLIGHT` are in flight.
    done_tx: mpsc::UnboundedSender<Done>,
    done_rx: mpsc::UnboundedReceiver<Done>,
    in_flight: usize,
    /// Paths named by tool calls the user allowed this turn (canonical, with what the call's
    /// kind lets the client do there): such client access needs no second question.
    approved_paths: Vec<Approved>,
    /// Remembered answers; `None` when the session keeps none.
    rules: Option<Arc<tokio::sync::Mutex<RuleStore>>>,
    /// A problem with the rules file, shown once the session is ready.
    rules_notice: Option<String>,
    /// "Always" answers given this session whose save has not finished: they apply at once,
    /// before the store has them (the agent's next request can come before the save ends).
    unsaved_rules: Vec<(crate::rules::ToolMatcher, crate::rules::Decision)>,
    /// The session's canonical cwd: the "project" rules are kept for.
    project: PathBuf,
    audit: AuditLog,
    /// What the agent last read of each file, for conflicts; used on the blocking pool.
    reads: Arc<Mutex<ReadTracker>>,
    watcher: Option<Arc<RootWatcher>>,
    /// The watcher being started on the blocking pool.
    watch_start: Option<oneshot::Receiver<Result<RootWatcher, WatchError>>>,
    watch_rx: mpsc::Receiver<WatchEvent>,
    /// Per path, the state last reported this turn, so the same state is reported once.
    watch_seen: HashMap<PathBuf, crate::watch::Fingerprint>,
    /// Not the agent's work: the audit log's folder and the rules file (they may lie inside
    /// a root, e.g. a session in the home folder).
    watch_excluded: Vec<PathBuf>,
    /// When the last turn ended: changes seen shortly after still belong to it.
    turn_ended_at: Option<Instant>,
}

impl Owner {
    async fn run(mut self, mut cmds: mpsc::UnboundedReceiver<Command>) {
        self.emit_status(SessionState::Starting, None).await;
        self.send_initialize().await;
        let start_deadline = Instant::now() + self.opts.start_timeout;
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
                        self.agent_gone(error).await;
                        self.flush().await;
                        break;
                    }
                },
                cmd = cmds.recv() => match cmd {
                    Some(Command::Close { now, reply }) => {
                        self.shutdown("closed", now).await;
                        self.end_audit("closed").await;
                        self.flush().await;
                        let _ = reply.send(());
                        return;
                    }
                    Some(cmd) => self.on_command(cmd).await,
                    None => {
                        self.shutdown("closed (every handle was dropped)", false).await;
                        self.end_audit("closed (every handle was dropped)").await;
                        self.flush().await;
                        return;
                    }
                },
                _ = tokio::time::sleep_until(start_deadline), if self.ready.is_some() => {
                    let secs = self.opts.start_timeout.as_secs();
                    self.fail_start(EngineError::StartFailed(format!(
                        "no answer to initialize/session/new within {secs} s"
                    ))).await;
                    self.shutdown("did not start in time", false).await;
                    self.end_audit("did not start in time").await;
                    self.flush().await;
                    return;
                }
                _ = sleep_until_opt(cancel_deadline) => {
                    self.cancel_expired().await;
                    self.flush().await;
                    break;
                }
                _ = sleep_until_opt(idle_deadline) => self.watchdog_expired().await,
                Some(done) = self.done_rx.recv() => self.on_done(done).await,
                started = wait_started(&mut self.watch_start) => {
                    self.watch_start = None;
                    self.on_watcher_started(started).await;
                }
                Some(ev) = self.watch_rx.recv() => self.on_watch(ev).await,
                Some(ev) = self.term_rx.recv() => {
                    self.on_terminal_event(ev).await;
                    // Take what else is ready now: one batch for a burst of output.
                    while let Ok(ev) = self.term_rx.try_recv() {
                        self.on_terminal_event(ev).await;
                    }
                }
            }
            if self.stuck && self.dead.is_none() {
                self.end_stuck_agent().await;
            }
            self.check_audit().await;
            self.flush().await;
            if self.dead.is_some() {
                break;
            }
        }
        // Whatever ended the session, the agent's tree ends with it (a failed start leaves a
        // live agent behind otherwise), and consumers hear that the session is dead.
        self.conn = None;
        let status = self.process.terminate().await;
        tracing::info!(
            "session {} ended; agent {}",
            self.id,
            process::describe_exit(status)
        );
        if !self.announced_dead {
            let detail = self.dead.clone();
            self.emit_status(SessionState::Dead, detail).await;
        }
        let why = self
            .dead
            .clone()
            .unwrap_or_else(|| "the agent exited".into());
        self.end_audit(&why).await;
        self.flush().await;
        self.refuse_start(ended);
        // Dead: nothing more will be emitted, so the event stream ends here (consumers see it
        // close); keep answering commands with the reason until every handle is gone.
        let reason = self
            .dead
            .clone()
            .unwrap_or_else(|| "the agent exited".into());
        let changes = self.changes.entries().to_vec();
        drop(self);
        while let Some(cmd) = cmds.recv().await {
            match cmd {
                Command::Prompt { reply, .. } => {
                    let _ = reply.send(Err(EngineError::SessionEnded(reason.clone())));
                }
                Command::Respond { reply, .. } => {
                    let _ = reply.send(Err(EngineError::SessionEnded(reason.clone())));
                }
                Command::Close { reply, .. } => {
                    let _ = reply.send(());
                }
                Command::Changes { reply } => {
                    let _ = reply.send(changes.clone());
                }
                Command::SetMode { reply, .. } | Command::SetConfigOption { reply, .. } => {
                    let _ = reply.send(Err(EngineError::SessionEnded(reason.clone())));
                }
                Command::Cancel => {}
            }
        }
    }

    async fn emit(&mut self, ev: StreamEvent) {
        self.out.push(ev);
    }

    /// Hands the pending events to the consumer. Waits while the consumer's queue is full: that
    /// wait is the backpressure that slows a flooding agent down.
    async fn flush(&mut self) {
        if self.out.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.out);
        // A consumer that went away is not an error for the engine: the agent still gets its
        // answers and the session still closes cleanly.
        let _ = self.events.send(batch).await;
    }

    async fn emit_status(&mut self, status: SessionState, detail: Option<String>) {
        if status == SessionState::Dead {
            self.announced_dead = true;
        }
        let ev = StreamEvent::SessionStatus {
            session_id: self.id.clone(),
            status,
            detail,
            agent: Some(self.identity.clone()),
        };
        self.emit(ev).await;
    }

    async fn emit_error(
        &mut self,
        code: Option<i64>,
        message: String,
        data: Option<serde_json::Value>,
    ) {
        let ev = StreamEvent::Error {
            session_id: Some(self.id.clone()),
            error: ErrorInfo {
                code,
                message,
                data,
            },
        };
        self.emit(ev).await;
    }

    async fn notice(
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
        self.emit(ev).await;
    }

    async fn request<P: serde::Serialize>(
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

    async fn send_initialize(&mut self) {
        // Advertise exactly what is implemented. claude-code-acp offers its ACP Edit tool only
        // with both fs flags (Edit reads through readTextFile too).
        let caps = acp::ClientCapabilities::new()
            .fs(acp::FileSystemCapabilities::new()
                .read_text_file(true)
                .write_text_file(true))
            .terminal(true);
        let req = acp::InitializeRequest::new(ProtocolVersion::V1)
            .client_capabilities(caps)
            .client_info(
                acp::Implementation::new("acp-desk", env!("CARGO_PKG_VERSION")).title("ACP Desk"),
            );
        self.request("initialize", &req, Pending::Initialize).await;
    }

    /// Records why the session could not start; the loop then ends the agent and answers
    /// `start()`'s caller.
    async fn fail_start(&mut self, err: EngineError) {
        self.emit_error(None, err.to_string(), None).await;
        self.dead = Some(err.to_string());
        self.start_error = Some(err);
    }

    /// Answers a `start()` still waiting: with why the start failed, or `otherwise`.
    fn refuse_start(&mut self, otherwise: impl FnOnce() -> EngineError) {
        if let Some(ready) = self.ready.take() {
            let err = self.start_error.take().unwrap_or_else(otherwise);
            let _ = ready.send(Err(err));
        }
    }

    /// Notes the outcome of a send to the agent. A full queue means the agent stopped reading
    /// its input; waiting for it could be forever, so the session ends it instead.
    fn sent(&mut self, what: &str, r: Result<(), jsonrpc::SendError>) {
        match r {
            Ok(()) => {}
            Err(jsonrpc::SendError::Full) => {
                if !self.stuck {
                    tracing::warn!("could not send {what}: the agent stopped reading its input");
                }
                self.stuck = true;
            }
            Err(e) => tracing::debug!("could not send {what}: {e}"),
        }
    }

    async fn end_stuck_agent(&mut self) {
        let n = self.opts.limits.outbound_capacity;
        let message = format!(
            "The agent stopped reading its input ({n} messages were waiting for it); it was ended."
        );
        self.emit_error(
            None,
            format!("{message} Start a new session to continue."),
            None,
        )
        .await;
        self.conn = None;
        self.flush().await;
        let _ = self.process.kill().await;
        self.dead = Some(message.clone());
        self.settle_all(SettledBy::Stop).await;
        if self.turn.is_some() {
            self.end_turn(TurnEndReason::Error, None).await;
        }
        if self.ready.is_some() {
            self.start_error = Some(EngineError::StartFailed(message.clone()));
        }
        self.emit_status(SessionState::Dead, Some(message)).await;
    }

    async fn on_inbound(&mut self, msg: Inbound) {
        match msg {
            Inbound::Notification { method, params } => {
                if method == "session/update" {
                    self.on_update(params).await;
                } else {
                    // Unknown notifications (including `_`-prefixed extensions) are ignored, as
                    // JSON-RPC and ACP say.
                    tracing::debug!("ignored notification {method}");
                }
            }
            Inbound::Request { id, method, params } => self.on_request(id, method, params).await,
            Inbound::Response { id, result } => self.on_response(id, result).await,
            Inbound::CancelRequest { id } => self.on_cancel_request(id).await,
            Inbound::Skipped(s) => self.on_skipped(s).await,
            Inbound::Closed { .. } => {}
        }
    }

    async fn on_update(&mut self, params: Option<Box<RawValue>>) {
        let raw = params.as_deref().map(RawValue::get).unwrap_or("null");
        match serde_json::from_str::<acp::SessionNotification>(raw) {
            Ok(n) => {
                if let Some(ours) = &self.acp_session
                    && n.session_id != *ours
                {
                    tracing::warn!("update for another session ({}) ignored", n.session_id);
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
                let update = value.and_then(|v| v.get("update").cloned());
                match update {
                    Some(update) => {
                        tracing::debug!("untyped session/update passed through: {e}");
                        let ev = StreamEvent::UnknownUpdate {
                            session_id: self.id.clone(),
                            update,
                        };
                        self.emit(ev).await;
                    }
                    None => tracing::warn!("malformed session/update ignored: {e}"),
                }
            }
        }
    }

    async fn on_request(&mut self, id: RequestId, method: String, params: Option<Box<RawValue>>) {
        let Some(conn) = self.conn.clone() else {
            return;
        };
        match method.as_str() {
            "session/request_permission" => {
                let raw = params.as_deref().map(RawValue::get).unwrap_or("null");
                match serde_json::from_str::<acp::RequestPermissionRequest>(raw) {
                    Ok(req) => self.on_permission(id, req).await,
                    Err(e) => {
                        let r = conn.respond_error(
                            &id,
                            codes::INVALID_PARAMS,
                            format!("invalid params: {e}"),
                        );
                        self.sent("an error reply", r);
                    }
                }
            }
            m if self.on_client_request(&id, m, params.as_deref()).await => {}
            _ => {
                let r = conn.respond_error(
                    &id,
                    codes::METHOD_NOT_FOUND,
                    format!("Method not found: {method}"),
                );
                self.sent("an error reply", r);
            }
        }
    }

    async fn on_permission(&mut self, id: RequestId, req: acp::RequestPermissionRequest) {
        self.permission_counter += 1;
        let correlation = format!(
            "{}#{}",
            req.tool_call.tool_call_id.0, self.permission_counter
        );
        let options = req.options.clone();
        let prompt = self
            .thread
            .permission_request(req, correlation.clone(), &mut self.out);
        let paths = thread::paths_named(
            prompt.locations.as_deref().unwrap_or_default(),
            prompt.raw_input.as_ref(),
        );
        let subject = Box::new(Subject::from_prompt(&prompt, Some(&self.opts.cwd)));
        let kind = prompt.tool_kind;
        self.audit.permission_asked(
            &correlation,
            &prompt.target_tool_call_id,
            prompt.tool_name.as_deref(),
            prompt.tool_kind,
            &options,
        );
        self.out.push(StreamEvent::AgentPrompt(Box::new(prompt)));
        self.parked.insert(
            correlation.clone(),
            Parked {
                request: id,
                options,
                kind: ParkedKind::Agent {
                    paths,
                    kind,
                    subject,
                },
            },
        );
        self.after_park(&correlation).await;
    }

    /// A request was just parked: answers it at once when the turn is stopping, too many
    /// wait, or the policy decides.
    async fn after_park(&mut self, correlation: &str) {
        let correlation = correlation.to_string();
        let options = self
            .parked
            .get(&correlation)
            .map(|p| p.options.clone())
            .unwrap_or_default();
        let stopping = self
            .turn
            .as_ref()
            .is_some_and(|t| t.cancel_deadline.is_some());
        if stopping {
            // Asked after the user pressed Stop: the answer is already known.
            let _ = self
                .settle(
                    &correlation,
                    PermissionResolution::cancelled(),
                    SettledBy::Stop,
                )
                .await;
            return;
        }
        if self.parked.len() > MAX_PARKED {
            self.notice(
                NoticeSeverity::Warning,
                format!(
                    "The agent has more than {MAX_PARKED} permission requests waiting; this one was answered `cancelled`."
                ),
                None,
            )
            .await;
            let _ = self
                .settle(
                    &correlation,
                    PermissionResolution::cancelled(),
                    SettledBy::Rule,
                )
                .await;
            return;
        }
        // Remembered answers come before the policy (DESIGN.md: the CLI applies them before
        // its --permission policy).
        if let Some(resolution) = self.remembered_answer(&correlation).await {
            let _ = self.settle(&correlation, resolution, SettledBy::Rule).await;
            return;
        }
        let wanted = match self.opts.permission_policy {
            PermissionPolicy::Ask => return,
            PermissionPolicy::AllowOnce => Some(acp::PermissionOptionKind::AllowOnce),
            PermissionPolicy::RejectOnce => Some(acp::PermissionOptionKind::RejectOnce),
            PermissionPolicy::Cancel => None,
        };
        let resolution = match wanted {
            Some(kind) => match options.iter().find(|o| o.kind == kind) {
                Some(o) => PermissionResolution::selected(o.option_id.0.to_string()),
                None => {
                    let title = format!(
                        "The agent offered no {} option; the request was answered `cancelled`.",
                        serde_json::to_value(kind)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_default()
                    );
                    self.notice(NoticeSeverity::Warning, title, None).await;
                    PermissionResolution::cancelled()
                }
            },
            None => PermissionResolution::cancelled(),
        };
        let _ = self.settle(&correlation, resolution, SettledBy::Rule).await;
    }

    /// Answers a parked permission request and emits `agent-prompt-settled`.
    async fn settle(
        &mut self,
        correlation: &str,
        resolution: PermissionResolution,
        by: SettledBy,
    ) -> Result<(), EngineError> {
        let Some(parked) = self.parked.get(correlation) else {
            return Err(EngineError::UnknownPermission(correlation.into()));
        };
        let (outcome, feedback) = match &resolution {
            PermissionResolution::Cancelled { .. } => {
                (acp::RequestPermissionOutcome::Cancelled, None)
            }
            PermissionResolution::Selected {
                option_id,
                feedback,
            } => {
                let Some(option) = parked
                    .options
                    .iter()
                    .find(|o| *o.option_id.0 == **option_id)
                else {
                    return Err(EngineError::UnknownOption(
                        correlation.into(),
                        option_id.clone(),
                    ));
                };
                let is_reject = matches!(
                    option.kind,
                    acp::PermissionOptionKind::RejectOnce | acp::PermissionOptionKind::RejectAlways
                );
                (
                    acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(
                        option.option_id.clone(),
                    )),
                    feedback
                        .clone()
                        .filter(|f| is_reject && !f.trim().is_empty()),
                )
            }
        };
        let selected_kind = match &resolution {
            PermissionResolution::Selected { option_id, .. } => parked
                .options
                .iter()
                .find(|o| *o.option_id.0 == **option_id)
                .map(|o| o.kind),
            PermissionResolution::Cancelled { .. } => None,
        };
        let Some(parked) = self.parked.remove(correlation) else {
            return Err(EngineError::UnknownPermission(correlation.into()));
        };
        self.audit
            .permission_answered(correlation, by, &resolution, &parked.options);
        match parked.kind {
            ParkedKind::Agent {
                paths,
                kind,
                subject,
            } => {
                if by == SettledBy::User {
                    self.remember(&subject, selected_kind).await;
                }
                if let Some(conn) = &self.conn {
                    let response = acp::RequestPermissionResponse::new(outcome);
                    let r = conn.respond(&parked.request, Ok(response));
                    self.sent("a permission answer", r);
                }
                // Only the user's own "allow" covers access outside the roots; a policy
                // answering the agent's requests never grants that.
                let allowed = matches!(
                    selected_kind,
                    Some(
                        acp::PermissionOptionKind::AllowOnce
                            | acp::PermissionOptionKind::AllowAlways
                    )
                );
                if allowed && by == SettledBy::User {
                    self.approve_paths(paths, kind);
                }
            }
            ParkedKind::Client(op) => {
                self.access_answered(parked.request, *op, selected_kind, by)
                    .await;
            }
        }
        if let Some(f) = &feedback {
            self.feedback.push(f.clone());
        }
        let outcome = match resolution {
            PermissionResolution::Selected { option_id, .. } => {
                PermissionResolution::selected(option_id)
            }
            c => c,
        };
        let ev = StreamEvent::AgentPromptSettled {
            session_id: self.id.clone(),
            tool_call_id: correlation.into(),
            outcome,
            by,
            feedback,
        };
        self.emit(ev).await;
        Ok(())
    }

    async fn settle_all(&mut self, by: SettledBy) {
        let mut ids: Vec<String> = self.parked.keys().cloned().collect();
        ids.sort();
        for id in ids {
            let _ = self
                .settle(&id, PermissionResolution::cancelled(), by)
                .await;
        }
    }

    async fn on_cancel_request(&mut self, id: RequestId) {
        let parked = self
            .parked
            .iter()
            .find(|(_, p)| p.request == id)
            .map(|(k, _)| k.clone());
        match parked {
            Some(correlation) => {
                let _ = self
                    .settle(
                        &correlation,
                        PermissionResolution::cancelled(),
                        SettledBy::Agent,
                    )
                    .await;
            }
            None => tracing::debug!("$/cancel_request for {id}, which is not pending"),
        }
    }

    async fn on_skipped(&mut self, s: Skipped) {
        match s {
            Skipped::NotJson { preview } => {
                // Shell profiles and chatty tools print to stdout; say so once, log every line.
                if !self.warned_not_json {
                    self.warned_not_json = true;
                    self.notice(
                        NoticeSeverity::Warning,
                        "The agent printed text that is not ACP on its output; it was skipped.".into(),
                        Some(format!(
                            "First skipped line: {preview}\nOften a shell profile or a tool prints there. Further lines are only logged."
                        )),
                    )
                    .await;
                }
            }
            Skipped::TooLong { bytes } => {
                let limit = self.opts.limits.max_line_bytes;
                self.notice(
                    NoticeSeverity::Warning,
                    format!("The agent sent a {bytes}-byte message, over the {limit}-byte limit; it was skipped."),
                    Some("If a tool call or answer looks incomplete, this is why.".into()),
                )
                .await;
            }
            Skipped::Batch => {
                self.notice(
                    NoticeSeverity::Warning,
                    "The agent sent a JSON-RPC batch, which ACP does not allow; it was refused."
                        .into(),
                    None,
                )
                .await;
            }
            Skipped::Invalid { reason } => {
                self.notice(
                    NoticeSeverity::Warning,
                    format!("The agent sent an invalid message: {reason}."),
                    None,
                )
                .await;
            }
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
            Pending::Prompt => {
                let current = self.turn.as_ref().and_then(|t| t.request.as_ref()) == Some(&id);
                if current {
                    self.on_prompt_done(result).await;
                } else {
                    // A turn that already ended (the agent was ended, or answered twice).
                    tracing::info!("late answer to session/prompt {id} ignored");
                }
            }
            Pending::SetMode { mode_id, reply } => {
                let r = match result {
                    Ok(_) => {
                        let ev = StreamEvent::CurrentMode {
                            session_id: self.id.clone(),
                            current_mode_id: mode_id,
                        };
                        self.emit(ev).await;
                        Ok(())
                    }
                    Err(e) => Err(refused(&e)),
                };
                // The front end sees `current-mode` before its call returns.
                self.flush().await;
                let _ = reply.send(r);
            }
            Pending::SetConfigOption { reply } => {
                let r = match result {
                    Ok(raw) => {
                        match serde_json::from_str::<acp::SetSessionConfigOptionResponse>(raw.get())
                        {
                            Ok(resp) => {
                                let ev = StreamEvent::ConfigOptions {
                                    session_id: self.id.clone(),
                                    config_options: resp.config_options,
                                };
                                self.emit(ev).await;
                                Ok(())
                            }
                            Err(e) => Err(EngineError::AgentRefused(format!(
                                "its answer to session/set_config_option is not valid ACP: {e}"
                            ))),
                        }
                    }
                    Err(e) => Err(refused(&e)),
                };
                self.flush().await;
                let _ = reply.send(r);
            }
        }
    }

    async fn on_initialized(&mut self, result: Result<Box<RawValue>, acp::Error>) {
        let resp = match result {
            Ok(raw) => match serde_json::from_str::<acp::InitializeResponse>(raw.get()) {
                Ok(r) => r,
                Err(e) => {
                    return self
                        .fail_start(EngineError::StartFailed(format!(
                            "the agent's answer to initialize is not valid ACP: {e}"
                        )))
                        .await;
                }
            },
            Err(e) => {
                return self
                    .fail_start(EngineError::StartFailed(format!(
                        "initialize failed: {} ({})",
                        e.message,
                        i32::from(e.code)
                    )))
                    .await;
            }
        };
        if resp.protocol_version != ProtocolVersion::V1 {
            return self
                .fail_start(EngineError::ProtocolVersion(resp.protocol_version.as_u16()))
                .await;
        }
        self.identity.prompt_capabilities =
            Some(resp.agent_capabilities.prompt_capabilities.clone());
        if let Some(info) = resp.agent_info {
            self.identity.name = Some(info.name);
            self.identity.title = info.title;
            self.identity.version = Some(info.version);
        }
        let mut req = acp::NewSessionRequest::new(self.opts.cwd.clone());
        if !self.opts.additional_dirs.is_empty() {
            if resp
                .agent_capabilities
                .session_capabilities
                .additional_directories
                .is_some()
            {
                req = req.additional_directories(self.opts.additional_dirs.clone());
            } else {
                self.notice(
                    NoticeSeverity::Info,
                    "This agent does not accept additional folders; only the session's folder was sent to it.".into(),
                    None,
                )
                .await;
            }
        }
        self.request("session/new", &req, Pending::NewSession).await;
    }

    async fn on_session_created(&mut self, result: Result<Box<RawValue>, acp::Error>) {
        let resp = match result {
            Ok(raw) => match serde_json::from_str::<acp::NewSessionResponse>(raw.get()) {
                Ok(r) => r,
                Err(e) => {
                    return self
                        .fail_start(EngineError::StartFailed(format!(
                            "the agent's answer to session/new is not valid ACP: {e}"
                        )))
                        .await;
                }
            },
            Err(e) if i32::from(e.code) == AUTH_REQUIRED => {
                return self.fail_start(EngineError::AuthRequired(e.message)).await;
            }
            Err(e) => {
                return self
                    .fail_start(EngineError::StartFailed(format!(
                        "session/new failed: {} ({})",
                        e.message,
                        i32::from(e.code)
                    )))
                    .await;
            }
        };
        self.identity.acp_session_id = Some(resp.session_id.0.to_string());
        self.acp_session = Some(resp.session_id);
        self.emit_status(SessionState::Ready, None).await;
        self.audit.session_started(
            &self.identity.launch_name,
            &self.opts.cwd,
            self.roots.roots(),
        );
        if let Some(problem) = self.rules_notice.take() {
            self.notice(
                NoticeSeverity::Warning,
                "Remembered permission answers are not available.".into(),
                Some(problem),
            )
            .await;
        }
        if let Some(modes) = resp.modes {
            let ev = StreamEvent::Modes {
                session_id: self.id.clone(),
                current_mode_id: modes.current_mode_id.0.to_string(),
                available_modes: modes.available_modes,
            };
            self.emit(ev).await;
        }
        if let Some(options) = resp.config_options {
            let ev = StreamEvent::ConfigOptions {
                session_id: self.id.clone(),
                config_options: options,
            };
            self.emit(ev).await;
        }
        self.flush().await;
        if let Some(ready) = self.ready.take() {
            let caps = self
                .identity
                .prompt_capabilities
                .clone()
                .unwrap_or_default();
            let _ = ready.send(Ok(caps));
        }
    }

    async fn on_prompt_done(&mut self, result: Result<Box<RawValue>, acp::Error>) {
        let cancelled = self
            .turn
            .as_ref()
            .is_some_and(|t| t.cancel_deadline.is_some());
        match result {
            Ok(raw) => match serde_json::from_str::<acp::PromptResponse>(raw.get()) {
                Ok(resp) => {
                    let mut reason = TurnEndReason::from_stop_reason(&resp.stop_reason);
                    if cancelled {
                        // The user (or the watchdog) stopped it; an agent that still says
                        // end_turn finished something, but the turn is what was stopped.
                        reason = self.stopped_reason();
                    }
                    self.end_turn(reason, Some(resp.stop_reason)).await;
                }
                Err(e) => {
                    self.emit_error(
                        Some(i64::from(codes::INVALID_PARAMS)),
                        format!("the agent's answer to session/prompt is not valid ACP: {e}"),
                        None,
                    )
                    .await;
                    self.end_turn(TurnEndReason::Error, None).await;
                }
            },
            Err(e) => {
                let code = i32::from(e.code);
                if cancelled || code == codes::REQUEST_CANCELLED {
                    let reason = self.stopped_reason();
                    self.end_turn(reason, None).await;
                } else {
                    let message = if code == AUTH_REQUIRED {
                        // Seen with claude-agent-acp: the session opens, the first prompt says so.
                        EngineError::AuthRequired(e.message).to_string()
                    } else {
                        e.message
                    };
                    self.emit_error(Some(i64::from(code)), message, e.data)
                        .await;
                    self.end_turn(TurnEndReason::Error, None).await;
                }
            }
        }
    }

    async fn end_turn(&mut self, reason: TurnEndReason, stop_reason: Option<acp::StopReason>) {
        let Some(mut turn) = self.turn.take() else {
            return;
        };
        // Whatever the agent left parked is moot once its turn is over.
        self.settle_all(SettledBy::Stop).await;
        self.approved_paths.clear();
        self.turn_ended_at = Some(Instant::now());
        let ev = StreamEvent::TurnEnd {
            session_id: self.id.clone(),
            reason,
            stop_reason,
        };
        self.emit(ev).await;
        if self.dead.is_none() && self.conn.is_some() {
            self.emit_status(SessionState::Ready, None).await;
        }
        // Consumers see `turn-end` before `prompt()` returns.
        self.flush().await;
        if let Some(reply) = turn.reply.take() {
            let _ = reply.send(Ok(TurnOutcome {
                reason,
                stop_reason,
            }));
        }
    }

    async fn on_command(&mut self, cmd: Command) {
        match cmd {
            Command::Prompt { blocks, reply } => {
                if self.turn.is_some() {
                    let _ = reply.send(Err(EngineError::TurnInProgress));
                    return;
                }
                let Some(session) = self.acp_session.clone() else {
                    let _ = reply.send(Err(EngineError::SessionEnded("not started".into())));
                    return;
                };
                let mut prompt = Vec::with_capacity(blocks.len() + 1);
                if !self.feedback.is_empty() {
                    let text = self
                        .feedback
                        .drain(..)
                        .map(|f| format!("Feedback on the request I rejected: {f}"))
                        .collect::<Vec<_>>()
                        .join("\n");
                    prompt.push(acp::ContentBlock::Text(acp::TextContent::new(text)));
                }
                prompt.extend(blocks);
                // A new turn: a new change set, and earlier answers cover nothing any more.
                self.changes.take();
                self.watch_seen.clear();
                self.turn_ended_at = None;
                self.approved_paths.clear();
                self.reload_rules().await;
                let ev = StreamEvent::TurnStart {
                    session_id: self.id.clone(),
                    prompt: prompt.clone(),
                };
                self.emit(ev).await;
                self.emit_status(SessionState::Prompting, None).await;
                let req = acp::PromptRequest::new(session, prompt);
                self.turn = Some(Turn {
                    request: None,
                    reply: Some(reply),
                    cancel_deadline: None,
                    last_activity: Instant::now(),
                    watchdog: false,
                });
                if let Some(id) = self.request("session/prompt", &req, Pending::Prompt).await {
                    if let Some(t) = self.turn.as_mut() {
                        t.request = Some(id);
                    }
                } else {
                    self.emit_error(
                        None,
                        "could not send the prompt: the agent's input is closed".into(),
                        None,
                    )
                    .await;
                    self.end_turn(TurnEndReason::Error, None).await;
                }
            }
            Command::Cancel => self.cancel_turn().await,
            Command::Respond {
                correlation_id,
                resolution,
                reply,
            } => {
                let r = self
                    .settle(&correlation_id, resolution, SettledBy::User)
                    .await;
                if let Some(t) = self.turn.as_mut() {
                    // The idle clock restarts when the agent gets its answer.
                    t.last_activity = Instant::now();
                }
                let _ = reply.send(r);
            }
            Command::Changes { reply } => {
                let _ = reply.send(self.changes.entries().to_vec());
            }
            Command::SetMode { mode_id, reply } => {
                let Some(session) = self.acp_session.clone() else {
                    let _ = reply.send(Err(EngineError::SessionEnded("not started".into())));
                    return;
                };
                let req = acp::SetSessionModeRequest::new(session, mode_id.clone());
                self.request_for(
                    "session/set_mode",
                    &req,
                    Pending::SetMode { mode_id, reply },
                )
                .await;
            }
            Command::SetConfigOption {
                config_id,
                value,
                reply,
            } => {
                let Some(session) = self.acp_session.clone() else {
                    let _ = reply.send(Err(EngineError::SessionEnded("not started".into())));
                    return;
                };
                let req = acp::SetSessionConfigOptionRequest::new(session, config_id, value);
                self.request_for(
                    "session/set_config_option",
                    &req,
                    Pending::SetConfigOption { reply },
                )
                .await;
            }
            Command::Close { .. } => {}
        }
    }

    /// Sends a front end's request to the agent; the reply waits in `pending` for the answer.
    /// When it cannot be sent, the caller hears at once that the agent's input is closed.
    async fn request_for<P: serde::Serialize>(
        &mut self,
        method: &str,
        params: &P,
        purpose: Pending,
    ) {
        if self.conn.is_some() {
            if self.request(method, params, purpose).await.is_none() {
                // `request` dropped the purpose and its reply: the caller gets `SessionEnded`.
                tracing::debug!("{method} not sent");
            }
            return;
        }
        let err = EngineError::SessionEnded("the agent's input is closed".into());
        match purpose {
            Pending::SetMode { reply, .. } | Pending::SetConfigOption { reply } => {
                let _ = reply.send(Err(err));
            }
            Pending::Initialize | Pending::NewSession | Pending::Prompt => {}
        }
    }

    async fn cancel_turn(&mut self) {
        self.stop_turn(SettledBy::Stop).await;
    }

    /// `session/cancel`, parked permissions answered `cancelled` (by `by`), and the cancel
    /// grace started: the turn ends when the agent answers, or the agent is ended.
    async fn stop_turn(&mut self, by: SettledBy) {
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        if turn.cancel_deadline.is_some() {
            return;
        }
        turn.cancel_deadline = Some(Instant::now() + self.opts.cancel_grace);
        if let (Some(conn), Some(session)) = (&self.conn, &self.acp_session) {
            let n = acp::CancelNotification::new(session.clone());
            let r = conn.notify("session/cancel", &n);
            self.sent("session/cancel", r);
        }
        // ACP: the client MUST answer every pending permission request `cancelled` on cancel.
        self.settle_all(by).await;
    }

    /// How a stopped turn ends: `watchdog-timeout` when the watchdog stopped it.
    fn stopped_reason(&self) -> TurnEndReason {
        if self.turn.as_ref().is_some_and(|t| t.watchdog) {
            TurnEndReason::WatchdogTimeout
        } else {
            TurnEndReason::Cancelled
        }
    }

    /// When the running turn counts as idle, if it can: not while a permission request waits
    /// for the user, nor once the user stopped the turn (the cancel grace governs that).
    fn idle_deadline(&self) -> Option<Instant> {
        let timeout = self.opts.turn_idle_timeout?;
        let turn = self.turn.as_ref()?;
        // A running terminal is work, not silence: agents wait for builds and tests.
        if turn.cancel_deadline.is_some() || !self.parked.is_empty() || self.terminal_running() {
            return None;
        }
        Some(turn.last_activity + timeout)
    }

    /// The agent went silent mid-turn: stop the turn as Stop would (the agent is asked to
    /// cancel, and ended if it does not answer within the cancel grace); it ends
    /// `watchdog-timeout`.
    async fn watchdog_expired(&mut self) {
        let secs = self
            .opts
            .turn_idle_timeout
            .map(|d| d.as_secs_f32())
            .unwrap_or_default();
        self.notice(
            NoticeSeverity::Warning,
            format!("The agent sent nothing for {secs:.0} s; the turn was stopped."),
            Some(
                "Send a new prompt to go on, or start a new session if the agent is stuck.".into(),
            ),
        )
        .await;
        if let Some(t) = self.turn.as_mut() {
            t.watchdog = true;
        }
        self.stop_turn(SettledBy::Watchdog).await;
    }

    async fn cancel_expired(&mut self) {
        let secs = self.opts.cancel_grace.as_secs_f32();
        self.notice(
            NoticeSeverity::Warning,
            format!("The agent did not stop within {secs:.1} s of being asked to; it was ended."),
            Some("Start a new session to continue.".into()),
        )
        .await;
        self.conn = None;
        self.flush().await;
        let _ = self.process.kill().await;
        let why = "the agent was ended after it ignored a request to stop".to_string();
        self.dead = Some(why.clone());
        let reason = self.stopped_reason();
        self.end_turn(reason, None).await;
        self.emit_status(SessionState::Dead, Some(why)).await;
    }

    /// stdout closed: the agent exited or broke the pipe.
    async fn agent_gone(&mut self, error: Option<String>) {
        self.conn = None;
        self.flush().await;
        let status = self.process.wait_timeout(Duration::from_secs(3)).await;
        let status = match status {
            Some(s) => Some(s),
            None => self.process.terminate().await,
        };
        let mut message = format!("The agent {}", process::describe_exit(status));
        if let Some(e) = error {
            message.push_str(&format!(" ({e})"));
        }
        let tail = self.process.stderr_tail();
        let during = if self.ready.is_some() {
            " while starting"
        } else if self.turn.is_some() {
            " during the turn"
        } else {
            ""
        };
        message = format!("{message}{during}.");
        let mut detail = message.clone();
        if !tail.is_empty() {
            let last: Vec<&str> = tail
                .iter()
                .rev()
                .take(10)
                .rev()
                .map(String::as_str)
                .collect();
            detail.push_str(&format!(
                "\nLast lines of its error output:\n{}",
                last.join("\n")
            ));
        }
        if self.ready.is_some() {
            self.fail_start(EngineError::StartFailed(detail.clone()))
                .await;
        } else {
            self.emit_error(
                None,
                format!("{message} Start a new session to continue."),
                Some(serde_json::json!({ "stderrTail": tail })),
            )
            .await;
        }
        self.dead = Some(message.clone());
        self.settle_all(SettledBy::Stop).await;
        if self.turn.is_some() {
            self.end_turn(TurnEndReason::Error, None).await;
        }
        self.emit_status(SessionState::Dead, Some(detail)).await;
    }

    async fn shutdown(&mut self, why: &str, now: bool) {
        // Dead from here on: the turn's end must not announce the session `ready` again.
        self.dead = Some(why.to_string());
        if self.turn.is_some() {
            self.cancel_turn().await;
            let reason = self.stopped_reason();
            self.end_turn(reason, None).await;
        }
        self.settle_all(SettledBy::Stop).await;
        // The agent's terminals end with its session.
        self.terminals.close_all();
        self.log_unfinished_commands();
        self.term_state.clear();
        // Dropping the connection closes the agent's stdin once queued lines are written.
        self.conn = None;
        self.flush().await;
        let status = if now {
            self.process.kill().await
        } else {
            self.process.terminate().await
        };
        tracing::info!(
            "session {} {why}; agent {}",
            self.id,
            process::describe_exit(status)
        );
        self.refuse_start(|| EngineError::SessionEnded(why.into()));
        self.emit_status(SessionState::Dead, Some(format!("Session {why}.")))
            .await;
    }
}

/// The watcher's start, when one is under way; never otherwise.
async fn wait_started(
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

async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// The agent's error answer to a front end's request, as the user sees it.
fn refused(e: &acp::Error) -> EngineError {
    EngineError::AgentRefused(format!("{} ({})", e.message, i32::from(e.code)))
}

/// A text prompt block.
pub fn text_block(text: impl Into<String>) -> acp::ContentBlock {
    acp::ContentBlock::Text(acp::TextContent::new(text))
}
