//! A session: one agent, one owner task.
//!
//! The owner task ([`owner`]) is the only code that touches the session's state. It takes the
//! agent's messages in arrival order from the connection's single inbound channel, and commands
//! from front ends (prompt, cancel, answer a permission, close) from a command channel. Nothing
//! in it waits for a person: permission requests are parked and answered when a `Respond`
//! command arrives. Events go out through a bounded channel, so a slow consumer slows the agent
//! down (backpressure) instead of growing a queue.
//!
//! The state is split by who owns it, one module each:
//! - this file: the public handle, the options and [`start`];
//! - [`owner`]: the owner's state, its run loop, the agent link and the event outbox;
//! - [`handshake`]: `initialize`, then `session/new`, or continuing a stored session
//!   (`session/resume`, `session/load`, see [`Opening`]), and `session/list`;
//! - [`permissions`]: parked permission requests, settling them, remembered rules
//!   ([`remembered`]);
//! - [`turn`]: a turn's life (prompt, stop, watchdog, its one end);
//! - [`ending`]: the ONE path by which a session ends, whatever ended it (closed, the agent
//!   exited, stuck, deaf to a stop, not started in time, a failed handshake);
//! - [`signin`]: signing in between `initialize` and the session (the chosen method, the
//!   stored API key);
//! - [`requests`]: the front end's requests to the agent between or during turns (modes,
//!   config options);
//! - [`checkpoints`]: the folder's checkpoints before and after each turn;
//! - [`client`]: what the agent asks of us (`fs/*`, `terminal/*`, access outside the roots);
//! - [`watching`]: the folder watcher and the audit log;
//! - [`trace`]: the record of the start ([`StartTrace`]: the steps' times, the `initialize`
//!   answer as sent, non-JSON output, how a failed start ended), for Check (`agents::check`).
//!
//! The owner runs over any byte stream ([`start_over`]): unit tests drive it over an in-memory
//! pipe with a scripted peer (`tests.rs`), no process needed.

mod checkpoints;
mod client;
mod elicitation;
mod ending;
mod handshake;
pub use handshake::advertised_client_capabilities;
mod owner;
mod permissions;
mod remembered;
mod requests;
mod signin;
mod tasks;
pub use tasks::{STOP_METHOD as TASK_STOP_METHOD, air_meta};
#[cfg(test)]
mod tests;
mod trace;
mod turn;
mod watching;

pub use trace::{SpawnFailure, StartTrace};

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agent_client_protocol_schema::v1 as acp;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};

use crate::agents::LaunchSpec;
use crate::audit::{AuditKind, AuditLog};
use crate::events::{PermissionResolution, StreamEvent, TurnEndReason};
use crate::fs::{Change, Roots};
use crate::jsonrpc::{Connection, Inbound, Limits};
use crate::process::{AgentProcess, ProcessOptions};
use crate::rules::RuleStore;
use owner::{AgentProc, Owner};

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

/// What the engine does with the agent's questions (`elicitation/create`) when nobody answers
/// them by hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ElicitationPolicy {
    /// Park them and emit `elicitation`; a front end answers through `answer_elicitation`.
    #[default]
    Ask,
    /// Answer `decline` at once (a CLI without a terminal: nobody can be asked).
    Decline,
    /// Answer `cancel` at once.
    Cancel,
}

#[derive(Clone)]
pub struct SessionOptions {
    pub cwd: PathBuf,
    pub additional_dirs: Vec<PathBuf>,
    pub permission_policy: PermissionPolicy,
    /// What answers the agent's questions when nobody does by hand. Default: ask.
    pub elicitation_policy: ElicitationPolicy,
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
    /// More of ACP Desk's own files that the folder watcher never reports as the agent's
    /// changes, when they lie inside a root (the history file and its journal, given by the app
    /// layer's observers); the audit folder and the rules file always are.
    pub unwatched: Vec<PathBuf>,
    /// How the session begins with the agent: a new one (the default), the continuation of a
    /// stored one, one the agent listed, or none at all (only to ask `session/list`).
    pub opening: Opening,
    /// The MCP servers configured for this session ([`crate::mcp::servers_for`]), secrets not
    /// read yet: read at the start (before the spawn, on the blocking pool), given to the agent
    /// in `session/new`, `session/load` and `session/resume` as its `mcpCapabilities` allow,
    /// and reported in the `mcp-servers` event. None for [`Opening::ListOnly`]. Default: none.
    pub mcp_servers: Vec<crate::mcp::McpServerConfig>,
    /// Where the launch's secrets are read: the agent's `{"secret": REF}` env values and the
    /// MCP servers' credentials. `None`: the process's ([`set_default_keychain`]); with none
    /// either, a launch that needs one fails (agent env) or skips the server (MCP), saying so.
    pub keychain: Option<Arc<dyn crate::secrets::Keychain>>,
    /// Sign in with this `authenticate` method (an [`crate::auth::AuthHow::Agent`] action the
    /// user picked) after `initialize`, before the session is opened (for
    /// [`Opening::ListOnly`]: before ready). Once: what a front end sets for the start that
    /// follows the user's choice, not kept for later starts. API-key methods need nothing here:
    /// their key is sent on every start when the keychain holds one
    /// ([`crate::auth::api_key_ref`]).
    pub authenticate: Option<String>,
    /// Checkpoints of the session's folder (cwd) before and after every turn, and of each
    /// file just before we write it ([`crate::checkpoint`]). `None`: none taken. Default: none
    /// (front ends set it from the `checkpoints` settings).
    pub checkpoints: Option<CheckpointOptions>,
}

/// Where and how a session's checkpoints are taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointOptions {
    /// The folder of shadow repositories (`<data>/checkpoints`).
    pub base: PathBuf,
    pub settings: crate::checkpoint::CheckpointSettings,
    /// The `git` program; `None`: found on PATH when the session starts.
    pub git: Option<PathBuf>,
}

/// How a session begins with the agent, after `initialize`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Opening {
    /// `session/new`.
    #[default]
    New,
    /// Continue a session we stored. Its events carry `session_id` (ours, as stored), so the
    /// history appends under it. `session/resume` when the agent advertises it (see
    /// [`ContinueVia`]), else `session/load`, whose replayed updates are neither emitted nor
    /// stored (the stored transcript is the record), else `session/new` with a warning that the
    /// agent cannot continue the old conversation. A failure of resume or load falls back the
    /// same way; the `session-continued` event says what it came to.
    Continue {
        session_id: String,
        /// The agent's id for it; `None` (it never answered `session/new`): a new session.
        acp_session_id: Option<String>,
        via: ContinueVia,
    },
    /// Open a session the agent listed (`session/list`) under a new id of ours:
    /// `session/load`, whose replay IS emitted (it is the transcript); with resume only, it is
    /// resumed and a notice says the earlier conversation cannot be shown; with neither (or
    /// when both fail) the start fails.
    Import { acp_session_id: String },
    /// `initialize` only, no session: to ask an agent that is not running for its sessions
    /// ([`SessionHandle::list_sessions`]). Prompts get [`EngineError::SessionEnded`].
    ListOnly,
}

/// Which continuation to try first when the agent offers both.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ContinueVia {
    /// `session/resume` (nothing replayed, nothing to skip), else `session/load`.
    #[default]
    Auto,
    /// `session/load` first (tests drive the load path of an agent that offers both).
    Load,
}

/// At most this many `session/list` pages are followed ([`SessionHandle::list_all_sessions`]):
/// an agent that keeps answering with a cursor must not hold a caller forever.
pub const MAX_LIST_PAGES: usize = 50;

/// One page of the agent's `session/list` answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedSessions {
    pub sessions: Vec<acp::SessionInfo>,
    /// The cursor of the next page; `None` on the last.
    pub next_cursor: Option<String>,
}

impl SessionOptions {
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            additional_dirs: Vec::new(),
            permission_policy: PermissionPolicy::Ask,
            elicitation_policy: ElicitationPolicy::Ask,
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
            unwatched: Vec::new(),
            opening: Opening::New,
            mcp_servers: Vec::new(),
            keychain: None,
            authenticate: None,
            checkpoints: None,
        }
    }
}

impl std::fmt::Debug for SessionOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionOptions")
            .field("cwd", &self.cwd)
            .field("additional_dirs", &self.additional_dirs)
            .field("permission_policy", &self.permission_policy)
            .field("elicitation_policy", &self.elicitation_policy)
            .field("cancel_grace", &self.cancel_grace)
            .field("turn_idle_timeout", &self.turn_idle_timeout)
            .field("start_timeout", &self.start_timeout)
            .field("process", &self.process)
            .field("limits", &self.limits)
            .field("rules_file", &self.rules_file)
            .field("allow_reads_inside_roots", &self.allow_reads_inside_roots)
            .field("audit", &self.audit)
            .field("audit_dir", &self.audit_dir)
            .field("watch_roots", &self.watch_roots)
            .field("unwatched", &self.unwatched)
            .field("opening", &self.opening)
            .field("mcp_servers", &self.mcp_servers)
            .field("keychain", &self.keychain.as_ref().map(|_| "<keychain>"))
            .field("authenticate", &self.authenticate)
            .finish()
    }
}

/// Errors a front end can get from a session. Front ends match on the variant, never the text.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum EngineError {
    #[error("{0}")]
    Spawn(String),
    #[error("the agent failed to start: {0}")]
    StartFailed(String),
    /// The agent wants a sign-in (`-32000`), or refused one. The text says what the agent said
    /// and the ways to sign in it offers; front ends offer those as actions
    /// (`agent.authMethods` of `session-status`, [`crate::auth::AuthAction`]).
    #[error("the agent needs you to sign in: {0}.")]
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
    /// An answer to an elicitation that its fields refuse; the question stays open.
    #[error("the answer was not sent: {}", errors.iter().map(|e| e.message.as_str()).collect::<Vec<_>>().join("; "))]
    InvalidAnswer {
        errors: Vec<crate::elicitation::FieldError>,
    },
    #[error("no open question of the agent has the id `{0}` (it may have been answered already)")]
    UnknownElicitation(String),
    #[error("the background task `{task_id}` cannot be stopped: {reason}")]
    TaskNotStoppable { task_id: String, reason: String },
    /// The agent answered a request (set a mode, a config option) with an error, or with an
    /// answer that is not ACP. Carries what the agent said: the user needs its reason.
    #[error("the agent refused: {0}")]
    AgentRefused(String),
    /// A secret the agent's launch needs (an env value `{"secret": REF}`) could not be read:
    /// not in the keychain, or the keychain did not answer. Nothing was started.
    #[error("the agent was not started: {wanted_by} needs the secret `{name}`, and {why}")]
    SecretUnavailable {
        name: crate::secrets::SecretRef,
        /// What needs it, for a person: "its env ANTHROPIC_API_KEY".
        wanted_by: String,
        /// Why it could not be read, with what to do.
        why: String,
    },
}

static DEFAULT_KEYCHAIN: std::sync::OnceLock<Arc<dyn crate::secrets::Keychain>> =
    std::sync::OnceLock::new();

/// The keychain of every session of this process whose options name none
/// ([`SessionOptions::keychain`]), Check's and the app layer's own starts included: what a
/// front end sets once at its start (the OS's, `secrets::OsKeychain`). The first call wins;
/// `false` when one was set already.
pub fn set_default_keychain(keychain: Arc<dyn crate::secrets::Keychain>) -> bool {
    DEFAULT_KEYCHAIN.set(keychain).is_ok()
}

/// The keychain a session reads: its options', else the process's default.
fn keychain_of(opts: &SessionOptions) -> Option<Arc<dyn crate::secrets::Keychain>> {
    opts.keychain
        .clone()
        .or_else(|| DEFAULT_KEYCHAIN.get().cloned())
}

/// Reads what the launch needs from the keychain, on the blocking pool: the agent's secret
/// env values (into the spec, as text: it goes to the process's environment and nowhere else)
/// and the MCP servers' secrets.
async fn read_launch_secrets(
    spec: &LaunchSpec,
    opts: &SessionOptions,
) -> Result<(LaunchSpec, crate::mcp::McpLaunch), EngineError> {
    let needs_env = spec.secret_env().next().is_some();
    let servers = match opts.opening {
        // Only `initialize` (Check, listing sessions): no session gets servers.
        Opening::ListOnly => Vec::new(),
        _ => opts.mcp_servers.clone(),
    };
    if !needs_env && servers.is_empty() {
        return Ok((spec.clone(), crate::mcp::McpLaunch::default()));
    }
    let spec = spec.clone();
    let keychain = keychain_of(opts);
    let cwd = opts.cwd.clone();
    // A keychain waiting on an unlock prompt nobody answers, or a hung bus, must not leave the
    // session starting forever (rule 9): bounded like the rest of the start.
    let limit = opts.start_timeout;
    let reading = tokio::task::spawn_blocking(move || {
        let keychain = keychain.as_deref();
        let mut spec = spec;
        for (k, v) in &mut spec.env {
            let crate::secrets::EnvValue::Secret(name) = v else {
                continue;
            };
            let got = match keychain {
                Some(kc) => kc.get(name),
                None => Err(crate::secrets::SecretError::Backend {
                    detail: "this program was started without a keychain".into(),
                }),
            };
            match got {
                Ok(Some(value)) => *v = crate::secrets::EnvValue::Plain(value.expose().to_owned()),
                Ok(None) => {
                    return Err(EngineError::SecretUnavailable {
                        name: name.clone(),
                        wanted_by: format!("its env {k}"),
                        why: format!(
                            "it is not in the keychain: store it with `acp-desk-cli secret set {name}` or in the window's Secrets, then start the agent again"
                        ),
                    });
                }
                Err(e) => {
                    return Err(EngineError::SecretUnavailable {
                        name: name.clone(),
                        wanted_by: format!("its env {k}"),
                        why: format!("it could not be read: {e}"),
                    });
                }
            }
        }
        let mcp = crate::mcp::read_secrets(&servers, keychain, &cwd);
        Ok((spec, mcp))
    });
    match tokio::time::timeout(limit, reading).await {
        Ok(done) => done.map_err(|e| {
            EngineError::StartFailed(format!("reading the launch's secrets failed: {e}"))
        })?,
        Err(_) => Err(EngineError::StartFailed(format!(
            "the keychain did not answer within {} s (is it waiting to be unlocked?): unlock it, then start the agent again",
            limit.as_secs()
        ))),
    }
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
        request_id: String,
        resolution: PermissionResolution,
        reply: oneshot::Sender<Result<(), EngineError>>,
    },
    AnswerElicitation {
        request_id: String,
        answer: crate::elicitation::ElicitationAnswer,
        reply: oneshot::Sender<Result<(), EngineError>>,
    },
    StopTask {
        task_id: String,
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
    ListSessions {
        cwd: Option<PathBuf>,
        cursor: Option<String>,
        reply: oneshot::Sender<Result<ListedSessions, EngineError>>,
    },
    DeleteSession {
        acp_session_id: String,
        reply: oneshot::Sender<Result<bool, EngineError>>,
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
    trace: Arc<StartTrace>,
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

    /// How the start went: the steps' times and the agent's `initialize` answer as it sent it
    /// (`agentInfo`, `agentCapabilities`, `authMethods`).
    pub fn start_trace(&self) -> &StartTrace {
        &self.trace
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

    /// One page of the agent's own sessions (`session/list`), in `cwd` when given; `cursor` is
    /// the previous page's `next_cursor`. An agent that does not advertise `session/list` gets
    /// [`EngineError::AgentRefused`] without being asked.
    pub async fn list_sessions(
        &self,
        cwd: Option<PathBuf>,
        cursor: Option<String>,
    ) -> Result<ListedSessions, EngineError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::ListSessions { cwd, cursor, reply })?;
        rx.await.unwrap_or_else(|_| Err(ended()))
    }

    /// `session/delete` of the agent's session `acp_session_id` (one it listed, or one this
    /// agent ran before): the agent forgets it. `Ok(false)`: the agent does not advertise
    /// `session/delete`, and was not asked; its error answer is [`EngineError::AgentRefused`].
    pub async fn delete_session(&self, acp_session_id: &str) -> Result<bool, EngineError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::DeleteSession {
            acp_session_id: acp_session_id.to_string(),
            reply,
        })?;
        rx.await.unwrap_or_else(|_| Err(ended()))
    }

    /// Every page of [`SessionHandle::list_sessions`] (at most [`MAX_LIST_PAGES`]; a cursor
    /// seen before ends the walk).
    pub async fn list_all_sessions(
        &self,
        cwd: Option<PathBuf>,
    ) -> Result<Vec<acp::SessionInfo>, EngineError> {
        let mut all = Vec::new();
        let mut cursor = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MAX_LIST_PAGES {
            let page = self.list_sessions(cwd.clone(), cursor.take()).await?;
            all.extend(page.sessions);
            match page.next_cursor {
                Some(next) if seen.insert(next.clone()) => cursor = Some(next),
                _ => break,
            }
        }
        Ok(all)
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

    /// Answers the permission request `request_id` (an `agent-prompt`'s `toolCallId`); an
    /// unknown id (answered meanwhile) is `UnknownPermission`.
    pub async fn respond_permission(
        &self,
        request_id: &str,
        resolution: PermissionResolution,
    ) -> Result<(), EngineError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Respond {
            request_id: request_id.into(),
            resolution,
            reply,
        })?;
        rx.await.unwrap_or_else(|_| Err(ended()))
    }

    /// Answers the agent's question `request_id` (an `elicitation`'s `requestId`). An accept
    /// is checked against the fields first: [`EngineError::InvalidAnswer`] lists what is wrong,
    /// and the question stays open. An unknown id (answered meanwhile) is
    /// [`EngineError::UnknownElicitation`].
    pub async fn answer_elicitation(
        &self,
        request_id: &str,
        answer: crate::elicitation::ElicitationAnswer,
    ) -> Result<(), EngineError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::AnswerElicitation {
            request_id: request_id.into(),
            answer,
            reply,
        })?;
        rx.await.unwrap_or_else(|_| Err(ended()))
    }

    /// Asks the agent to stop the background task `task_id` (`_session/async_task/stop`);
    /// returns once the agent answered. The task's own update settles it. A task the agent
    /// never said can be stopped, or that ended, is [`EngineError::TaskNotStoppable`].
    pub async fn stop_background_task(&self, task_id: &str) -> Result<(), EngineError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::StopTask {
            task_id: task_id.into(),
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

/// Our id for a session: the stored one when it continues a stored session, else a new one.
fn session_id_for(opening: &Opening) -> String {
    match opening {
        Opening::Continue { session_id, .. } => session_id.clone(),
        _ => new_session_id(),
    }
}

/// Starts the agent and a session in `opts.cwd`; returns once the session is ready (or with the
/// reason it could not start). Events, starting with `session-status: starting`, go to `events`.
///
/// On an error other than [`EngineError::Spawn`] and [`EngineError::SecretUnavailable`], the
/// events already ended with `session-status: dead` (they were sent before this returns); those
/// two sent none (nothing was started).
pub async fn start(
    spec: LaunchSpec,
    opts: SessionOptions,
    events: mpsc::Sender<EventBatch>,
) -> Result<SessionHandle, EngineError> {
    start_traced(spec, opts, events).await.0
}

/// [`start`], with the record of how the start went ([`StartTrace`]), on failure too: the
/// steps' times, the `initialize` answer, what was printed that is not JSON, how it failed.
pub async fn start_traced(
    spec: LaunchSpec,
    opts: SessionOptions,
    events: mpsc::Sender<EventBatch>,
) -> (Result<SessionHandle, EngineError>, StartTrace) {
    let mut trace = StartTrace::default();
    let (spec, mcp) = match read_launch_secrets(&spec, &opts).await {
        Ok(read) => read,
        Err(e) => return (Err(e), trace),
    };
    let id = session_id_for(&opts.opening);
    let prepared = owner::Prepared::new(&id, &spec, &opts, mcp).await;
    let spawn_began = tokio::time::Instant::now();
    let spawned = match AgentProcess::spawn(&spec, &opts.cwd, opts.process) {
        Ok(s) => s,
        Err(e) => {
            trace.spawn_failure = Some(SpawnFailure::of(&e));
            return (Err(EngineError::Spawn(e.to_string())), trace);
        }
    };
    trace.spawn = Some(spawn_began.elapsed());
    let supervised = spawned.process.is_supervised();
    let pid = spawned.process.pid();
    trace.pid = pid;
    let (conn, inbound) = Connection::start(spawned.stdout, spawned.stdin, opts.limits);
    let agent = AgentProc::Os(Box::new(spawned.process));
    let link = Link {
        agent,
        conn,
        inbound,
        supervised,
        pid,
    };
    launch(id, prepared, &spec.name, link, opts, events, trace).await
}

/// Like [`start`], with the agent on the other end of `reader`/`writer` instead of a process we
/// start: an agent reached some other way, or a scripted peer in tests. `name` is the launch
/// name (what rules and agent quirks are keyed by). Ending the session closes `writer`.
pub async fn start_over<R, W>(
    name: &str,
    reader: R,
    writer: W,
    opts: SessionOptions,
    events: mpsc::Sender<EventBatch>,
) -> Result<SessionHandle, EngineError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let spec = LaunchSpec {
        name: name.into(),
        command: name.into(),
        args: Vec::new(),
        env: Vec::new(),
        cwd: None,
    };
    let (spec, mcp) = read_launch_secrets(&spec, &opts).await?;
    let id = session_id_for(&opts.opening);
    let prepared = owner::Prepared::new(&id, &spec, &opts, mcp).await;
    let (conn, inbound) = Connection::start(reader, writer, opts.limits);
    let link = Link {
        agent: AgentProc::Detached,
        conn,
        inbound,
        supervised: false,
        pid: None,
    };
    launch(
        id,
        prepared,
        name,
        link,
        opts,
        events,
        StartTrace::default(),
    )
    .await
    .0
}

/// The agent as the owner reaches it.
struct Link {
    agent: AgentProc,
    conn: Connection,
    inbound: mpsc::Receiver<Vec<Inbound>>,
    supervised: bool,
    pid: Option<u32>,
}

/// What [`start`] and [`start_over`] share once the agent is reachable: the owner task, and
/// waiting for it to say the session is ready.
async fn launch(
    id: String,
    prepared: owner::Prepared,
    name: &str,
    link: Link,
    opts: SessionOptions,
    events: mpsc::Sender<EventBatch>,
    trace: StartTrace,
) -> (Result<SessionHandle, EngineError>, StartTrace) {
    let (supervised, pid) = (link.supervised, link.pid);
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let (ready_tx, ready_rx) = oneshot::channel();
    let owner = Owner::new(
        id.clone(),
        name,
        prepared,
        link.agent,
        link.conn,
        link.inbound,
        opts,
        events,
        ready_tx,
        trace,
    );
    tokio::spawn(owner.run(cmd_rx));
    match ready_rx.await {
        Ok((Ok(prompt_capabilities), trace)) => (
            Ok(SessionHandle {
                id,
                cmds: cmd_tx,
                supervised,
                pid,
                prompt_capabilities,
                trace: Arc::new(trace.clone()),
            }),
            trace,
        ),
        Ok((Err(e), trace)) => (Err(e), trace),
        Err(_) => (
            Err(EngineError::StartFailed("the session task ended".into())),
            StartTrace::default(),
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

/// A text prompt block.
pub fn text_block(text: impl Into<String>) -> acp::ContentBlock {
    acp::ContentBlock::Text(acp::TextContent::new(text))
}
