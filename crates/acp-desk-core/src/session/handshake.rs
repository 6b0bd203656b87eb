//! The handshake: `initialize`, then a session: `session/new`, or for a stored session
//! (`Opening::Continue`) `session/resume`, else `session/load` (its replay skipped), else
//! `session/new` with a warning; for one the agent listed (`Opening::Import`) `session/load`
//! with its replay shown, else `session/resume`. The session is ready when the agent answered;
//! `session-continued` says how it was continued. A resume or load that fails falls back to the
//! next way (never losing the stored record: nothing here writes it). `session/list` is asked
//! here too. A failure of initialize or new ends the session through [`Ending::StartFailed`],
//! and `start()`'s caller hears why.

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1 as acp;
use serde_json::value::RawValue;

use tokio::sync::oneshot;

use super::ending::Ending;
use super::owner::{Owner, Pending};
use super::{ContinueVia, EngineError, ListedSessions, Opening};
use crate::events::{
    ContinuationMode, ContinuationOutcome, NoticeSeverity, SessionMethods, SessionState,
    StreamEvent,
};
use crate::fs::Compat;

/// ACP's "authentication required" error code (from `session/new`, or a prompt).
pub(super) const AUTH_REQUIRED: i32 = -32000;

/// What ACP Desk advertises in `initialize`: exactly what is implemented. ACP Desk's own AIP-44
/// manifest (`agents::manifest::own_manifest`) declares the same, from here. claude-code-acp
/// offers its ACP Edit tool only with both fs flags (Edit reads through readTextFile too).
pub fn advertised_client_capabilities() -> acp::ClientCapabilities {
    acp::ClientCapabilities::new()
        .fs(acp::FileSystemCapabilities::new()
            .read_text_file(true)
            .write_text_file(true))
        .terminal(true)
        .auth(acp::AuthCapabilities::new().terminal(true))
        // Both modes work (session/elicitation.rs): forms are drawn from the schema and
        // checked before sending; a URL opens only after the user agrees.
        .elicitation(
            acp::ElicitationCapabilities::new()
                .form(acp::ElicitationFormCapabilities::new())
                .url(acp::ElicitationUrlCapabilities::new()),
        )
        // The older way agents check for terminal logins (claude-code-acp 0.16.2, the
        // registry's validator); ACP 1.20's `auth.terminal` above is the newer. Both: the
        // issue, notes/field-2026-12.md.
        // JetBrains' AIR extension: background tasks (session/tasks.rs).
        .meta(serde_json::Map::from_iter([
            (
                crate::auth::TERMINAL_AUTH_META.to_owned(),
                serde_json::Value::Bool(true),
            ),
            super::tasks::air_meta(),
        ]))
}

impl Owner {
    pub(super) fn send_initialize(&mut self) {
        let caps = advertised_client_capabilities();
        let req = acp::InitializeRequest::new(ProtocolVersion::V1)
            .client_capabilities(caps)
            .client_info(
                acp::Implementation::new("acp-desk", env!("CARGO_PKG_VERSION")).title("ACP Desk"),
            );
        self.trace.initialize_sent();
        self.request("initialize", &req, Pending::Initialize);
    }

    pub(super) fn fail_start(&mut self, err: EngineError) {
        self.request_end(Ending::StartFailed(err));
    }

    pub(super) async fn on_initialized(&mut self, result: Result<Box<RawValue>, acp::Error>) {
        self.trace.initialize_answered(&result);
        let resp = match result {
            Ok(raw) => match serde_json::from_str::<acp::InitializeResponse>(raw.get()) {
                Ok(r) => r,
                Err(e) => {
                    self.trace.invalid_answer = Some(e.to_string());
                    return self.fail_start(EngineError::StartFailed(format!(
                        "the agent's answer to initialize is not valid ACP: {e}"
                    )));
                }
            },
            Err(e) => {
                return self.fail_start(EngineError::StartFailed(format!(
                    "initialize failed: {} ({})",
                    e.message,
                    i32::from(e.code)
                )));
            }
        };
        self.trace.protocol_version = Some(resp.protocol_version.as_u16());
        if resp.protocol_version != ProtocolVersion::V1 {
            return self.fail_start(EngineError::ProtocolVersion(resp.protocol_version.as_u16()));
        }
        self.identity.prompt_capabilities =
            Some(resp.agent_capabilities.prompt_capabilities.clone());
        self.identity.session_methods = Some(SessionMethods::advertised(&resp.agent_capabilities));
        self.identity.auth_methods = Some(crate::auth::classify(&resp.auth_methods));
        if let Some(info) = resp.agent_info {
            // Before any request of the agent's: its first read may already need them.
            self.client.add_quirks(Compat::for_agent_info(&info));
            self.identity.name = Some(info.name);
            self.identity.title = info.title;
            self.identity.version = Some(info.version);
        }
        self.handshake.additional_dirs = resp
            .agent_capabilities
            .session_capabilities
            .additional_directories
            .is_some();
        if !self.opts.additional_dirs.is_empty() && !self.handshake.additional_dirs {
            self.notice(
                NoticeSeverity::Info,
                "This agent does not accept additional folders; only the session's folder was sent to it.".into(),
                None,
            );
        }
        if self.opts.opening != Opening::ListOnly {
            self.choose_mcp_servers(&resp.agent_capabilities.mcp_capabilities);
        }
        self.sign_in_or_open().await;
    }

    /// Opens what `opts.opening` asks for: `session/new`, a continuation, or (ListOnly) ready.
    pub(super) async fn open_session(&mut self) {
        match self.opts.opening {
            Opening::New => self.send_new_session(),
            Opening::ListOnly => self.ready_without_session().await,
            Opening::Continue { .. } | Opening::Import { .. } => self.continue_next(),
        }
    }

    /// Which configured MCP servers the agent gets (its `mcpCapabilities`), said in the
    /// `mcp-servers` event and, for the skipped ones, a warning notice. No event when none is
    /// configured.
    fn choose_mcp_servers(&mut self, caps: &acp::McpCapabilities) {
        if self.handshake.mcp.is_empty() {
            return;
        }
        let (servers, reports) = self
            .handshake
            .mcp
            .for_agent(&self.identity.launch_name, caps);
        self.handshake.mcp_servers = servers;
        let skipped: Vec<(&str, &str)> = reports
            .iter()
            .filter(|r| !r.passed)
            .map(|r| (r.name.as_str(), r.reason.as_deref().unwrap_or("skipped")))
            .collect();
        let notice = (!skipped.is_empty()).then(|| {
            let n = skipped.len();
            let names: Vec<&str> = skipped.iter().map(|(name, _)| *name).collect();
            let why: Vec<String> = skipped
                .iter()
                .map(|(name, why)| format!("{name}: {why}"))
                .collect();
            (
                format!(
                    "{n} MCP server{} not given to the agent: {}.",
                    if n == 1 { " is" } else { "s are" },
                    names.join(", ")
                ),
                why.join("; "),
            )
        });
        let ev = StreamEvent::McpServers {
            session_id: self.id.clone(),
            servers: reports,
        };
        self.emit(ev);
        if let Some((title, description)) = notice {
            self.notice(NoticeSeverity::Warning, title, Some(description));
        }
    }

    /// The folders besides the cwd, when the agent takes them.
    fn extra_dirs(&self) -> Vec<std::path::PathBuf> {
        if self.handshake.additional_dirs {
            self.opts.additional_dirs.clone()
        } else {
            Vec::new()
        }
    }

    pub(super) fn send_new_session(&mut self) {
        let mut req = acp::NewSessionRequest::new(self.opts.cwd.clone())
            .mcp_servers(self.handshake.mcp_servers.clone());
        let dirs = self.extra_dirs();
        if !dirs.is_empty() {
            req = req.additional_directories(dirs);
        }
        self.request("session/new", &req, Pending::NewSession);
    }

    /// The next way to continue the stored session the agent offers and that was not tried
    /// yet; when none is left, a new session (continue) or the start fails (import).
    fn continue_next(&mut self) {
        let methods = self.identity.session_methods.unwrap_or_default();
        let dirs = self.extra_dirs();
        let cwd = self.opts.cwd.clone();
        let servers = self.handshake.mcp_servers.clone();
        let Some(c) = self.handshake.continuing.as_mut() else {
            return self.send_new_session();
        };
        let Some(acp_id) = c.acp_id.clone() else {
            c.detail
                .push("the stored session never got a session id from the agent".into());
            return self.send_new_session();
        };
        let load_first = c.mode == ContinuationMode::Import || c.via == ContinueVia::Load;
        let order = if load_first {
            [Method::Load, Method::Resume]
        } else {
            [Method::Resume, Method::Load]
        };
        for m in order {
            let (offered, tried) = match m {
                Method::Resume => (methods.resume, &mut c.tried_resume),
                Method::Load => (methods.load, &mut c.tried_load),
            };
            if !offered || *tried {
                continue;
            }
            *tried = true;
            match m {
                Method::Resume => {
                    let mut req =
                        acp::ResumeSessionRequest::new(acp_id.clone(), cwd).mcp_servers(servers);
                    if !dirs.is_empty() {
                        req = req.additional_directories(dirs);
                    }
                    self.request("session/resume", &req, Pending::Resume);
                }
                Method::Load => {
                    let mut req =
                        acp::LoadSessionRequest::new(acp_id.clone(), cwd).mcp_servers(servers);
                    if !dirs.is_empty() {
                        req = req.additional_directories(dirs);
                    }
                    // The replay comes as updates for this id before load's answer.
                    self.acp_session = Some(acp_id.clone());
                    let mode = c.mode;
                    self.handshake.loading = Some(Loading {
                        suppress: mode == ContinuationMode::Continue,
                        skipped: 0,
                    });
                    self.request("session/load", &req, Pending::Load);
                }
            }
            return;
        }
        if !methods.resume && !methods.load {
            c.detail
                .push("this agent offers neither session/resume nor session/load".into());
        }
        match c.mode {
            ContinuationMode::Continue => self.send_new_session(),
            ContinuationMode::Import => {
                let why = c.detail.join("; ");
                self.fail_start(EngineError::StartFailed(format!(
                    "the agent's session {} could not be opened: {why}",
                    acp_id.0
                )));
            }
        }
    }

    /// A resume or load the agent refused: said, then the next way.
    fn continuation_failed(&mut self, method: &str, why: String) {
        if let Some(c) = self.handshake.continuing.as_mut() {
            c.detail.push(format!("{method} failed: {why}"));
        }
        self.notice(
            NoticeSeverity::Warning,
            format!("The agent could not continue the stored session with {method}."),
            Some(format!(
                "It answered: {why}. ACP Desk tries the next way; the stored transcript is kept."
            )),
        );
        self.continue_next();
    }

    pub(super) async fn on_resumed(&mut self, result: Result<Box<RawValue>, acp::Error>) {
        let resp = match result {
            Ok(raw) => match serde_json::from_str::<acp::ResumeSessionResponse>(raw.get()) {
                Ok(r) => r,
                Err(e) => {
                    return self.continuation_failed(
                        "session/resume",
                        format!("its answer is not valid ACP ({e})"),
                    );
                }
            },
            Err(e) if i32::from(e.code) == AUTH_REQUIRED => {
                let detail = self.auth_required_detail(&e.message);
                return self.fail_start(EngineError::AuthRequired(detail));
            }
            Err(e) => {
                return self.continuation_failed(
                    "session/resume",
                    format!("{} ({})", e.message, i32::from(e.code)),
                );
            }
        };
        let Some(id) = self
            .handshake
            .continuing
            .as_ref()
            .and_then(|c| c.acp_id.clone())
        else {
            return;
        };
        self.acp_session = Some(id);
        if self
            .handshake
            .continuing
            .as_ref()
            .is_some_and(|c| c.mode == ContinuationMode::Import)
        {
            self.notice(
                NoticeSeverity::Info,
                "The earlier conversation cannot be shown: this agent resumes sessions without replaying them.".into(),
                Some("The agent still has it: the session continues where it left off.".into()),
            );
        }
        self.became_ready(
            ContinuationOutcome::Resumed,
            resp.modes,
            resp.config_options,
        )
        .await;
    }

    pub(super) async fn on_loaded(&mut self, result: Result<Box<RawValue>, acp::Error>) {
        let loading = self.handshake.loading.take();
        if let Some(l) = &loading
            && l.skipped > 0
        {
            tracing::debug!("{} replayed updates of session/load not shown", l.skipped);
        }
        let resp = match result {
            Ok(raw) => match serde_json::from_str::<acp::LoadSessionResponse>(raw.get()) {
                Ok(r) => r,
                Err(e) => {
                    self.acp_session = None;
                    return self.continuation_failed(
                        "session/load",
                        format!("its answer is not valid ACP ({e})"),
                    );
                }
            },
            Err(e) if i32::from(e.code) == AUTH_REQUIRED => {
                let detail = self.auth_required_detail(&e.message);
                return self.fail_start(EngineError::AuthRequired(detail));
            }
            Err(e) => {
                self.acp_session = None;
                return self.continuation_failed(
                    "session/load",
                    format!("{} ({})", e.message, i32::from(e.code)),
                );
            }
        };
        self.became_ready(ContinuationOutcome::Loaded, resp.modes, resp.config_options)
            .await;
    }

    /// `initialize` answered and no session is wanted ([`Opening::ListOnly`]).
    async fn ready_without_session(&mut self) {
        self.emit_status(SessionState::Ready, None);
        self.flush().await;
        let caps = self
            .identity
            .prompt_capabilities
            .clone()
            .unwrap_or_default();
        self.answer_start(Ok(caps));
    }

    /// `session/list` for a front end.
    pub(super) fn list_sessions(
        &mut self,
        cwd: Option<std::path::PathBuf>,
        cursor: Option<String>,
        reply: oneshot::Sender<Result<ListedSessions, EngineError>>,
    ) {
        if !self.identity.session_methods.unwrap_or_default().list {
            let _ = reply.send(Err(EngineError::AgentRefused(
                "this agent does not offer session/list (it did not advertise sessionCapabilities.list)".into(),
            )));
            return;
        }
        let req = acp::ListSessionsRequest::new().cwd(cwd).cursor(cursor);
        self.request_for("session/list", &req, Pending::ListSessions { reply });
    }

    pub(super) fn on_listed(
        &mut self,
        reply: oneshot::Sender<Result<ListedSessions, EngineError>>,
        result: Result<Box<RawValue>, acp::Error>,
    ) {
        let r = match result {
            Ok(raw) => serde_json::from_str::<acp::ListSessionsResponse>(raw.get())
                .map(|r| ListedSessions {
                    sessions: r.sessions,
                    next_cursor: r.next_cursor,
                })
                .map_err(|e| {
                    EngineError::AgentRefused(format!(
                        "the agent's answer to session/list is not valid ACP: {e}"
                    ))
                }),
            Err(e) => Err(EngineError::AgentRefused(format!(
                "session/list failed: {} ({})",
                e.message,
                i32::from(e.code)
            ))),
        };
        let _ = reply.send(r);
    }

    pub(super) async fn on_session_created(&mut self, result: Result<Box<RawValue>, acp::Error>) {
        let resp = match result {
            Ok(raw) => match serde_json::from_str::<acp::NewSessionResponse>(raw.get()) {
                Ok(r) => r,
                Err(e) => {
                    return self.fail_start(EngineError::StartFailed(format!(
                        "the agent's answer to session/new is not valid ACP: {e}"
                    )));
                }
            },
            Err(e) if i32::from(e.code) == AUTH_REQUIRED => {
                let detail = self.auth_required_detail(&e.message);
                return self.fail_start(EngineError::AuthRequired(detail));
            }
            Err(e) => {
                return self.fail_start(EngineError::StartFailed(format!(
                    "session/new failed: {} ({})",
                    e.message,
                    i32::from(e.code)
                )));
            }
        };
        self.acp_session = Some(resp.session_id);
        if self.handshake.continuing.is_some() {
            self.notice(
                NoticeSeverity::Warning,
                "This agent cannot continue the old conversation: this is a new conversation in the same folder.".into(),
                Some("The agent has none of the earlier messages; the stored transcript is kept and shown above.".into()),
            );
        }
        self.became_ready(ContinuationOutcome::New, resp.modes, resp.config_options)
            .await;
    }

    /// The agent has a session for us (new, resumed or loaded): say how, then ready.
    async fn became_ready(
        &mut self,
        outcome: ContinuationOutcome,
        modes: Option<acp::SessionModeState>,
        config_options: Option<Vec<acp::SessionConfigOption>>,
    ) {
        let acp_id = self.acp_session.as_ref().map(|s| s.0.to_string());
        self.identity.acp_session_id.clone_from(&acp_id);
        if let Some(c) = self.handshake.continuing.take() {
            let detail = (!c.detail.is_empty()).then(|| c.detail.join("; "));
            let ev = StreamEvent::SessionContinued {
                session_id: self.id.clone(),
                mode: c.mode,
                outcome,
                acp_session_id: acp_id,
                detail,
            };
            self.emit(ev);
        }
        self.emit_status(SessionState::Ready, None);
        self.audit.session_started(
            &self.identity.launch_name,
            &self.opts.cwd,
            self.client.roots.roots(),
        );
        if let Some(problem) = self.perms.rules.take_notice() {
            self.notice(
                NoticeSeverity::Warning,
                "Remembered permission answers are not available.".into(),
                Some(problem),
            );
        }
        if let Some(modes) = modes {
            let ev = StreamEvent::Modes {
                session_id: self.id.clone(),
                current_mode_id: modes.current_mode_id.0.to_string(),
                available_modes: modes.available_modes,
            };
            self.emit(ev);
        }
        if let Some(options) = config_options {
            let ev = StreamEvent::ConfigOptions {
                session_id: self.id.clone(),
                config_options: options,
            };
            self.emit(ev);
        }
        self.flush().await;
        let caps = self
            .identity
            .prompt_capabilities
            .clone()
            .unwrap_or_default();
        self.answer_start(Ok(caps));
    }
}

#[derive(Clone, Copy)]
enum Method {
    Resume,
    Load,
}

/// The handshake's part of the owner's state.
#[derive(Default)]
pub(super) struct Handshake {
    /// The session's MCP servers, secrets read, until the agent said what it takes.
    mcp: crate::mcp::McpLaunch,
    /// What goes in `mcpServers` of `session/new`, `session/load` and `session/resume`: the
    /// servers the agent's `mcpCapabilities` allow. Holds secrets: only ever serialized into
    /// those requests.
    mcp_servers: Vec<acp::McpServer>,
    /// The agent takes `additionalDirectories` (its `initialize` answer).
    additional_dirs: bool,
    /// Continuing a stored session or opening a listed one, until the agent has one for us.
    continuing: Option<Continuing>,
    /// A `session/load` is under way.
    loading: Option<Loading>,
    /// The API keys being read from the keychain (signin.rs), until they are.
    pub(super) keys: Option<oneshot::Receiver<super::signin::KeysRead>>,
    /// The sign-in the user asked for, while the agent works on it.
    pub(super) authenticating: Option<crate::auth::AuthAction>,
    /// A stored API key could not be read (said in a notice; added to an auth-required error).
    pub(super) key_problem: Option<String>,
}

impl Handshake {
    pub(super) fn new(opening: &Opening, mcp: crate::mcp::McpLaunch) -> Self {
        let continuing = match opening {
            // A stored session the agent never opened (its start failed: the agent wanted a
            // sign-in, say) has no conversation at the agent to continue: its next start is a
            // first one, under the same id, with no "cannot continue" warning.
            Opening::Continue {
                acp_session_id: None,
                ..
            } => None,
            Opening::Continue {
                acp_session_id,
                via,
                ..
            } => Some(Continuing::new(
                ContinuationMode::Continue,
                acp_session_id.as_deref(),
                *via,
            )),
            Opening::Import { acp_session_id } => Some(Continuing::new(
                ContinuationMode::Import,
                Some(acp_session_id),
                ContinueVia::Load,
            )),
            Opening::New | Opening::ListOnly => None,
        };
        Handshake {
            mcp,
            mcp_servers: Vec::new(),
            additional_dirs: false,
            continuing,
            loading: None,
            keys: None,
            authenticating: None,
            key_problem: None,
        }
    }

    /// Whether a `session/update` now is a load's replay not to show (continue mode: the stored
    /// transcript is the record). Counts it.
    pub(super) fn skip_replayed(&mut self) -> bool {
        match &mut self.loading {
            Some(l) if l.suppress => {
                l.skipped += 1;
                true
            }
            _ => false,
        }
    }
}

struct Continuing {
    mode: ContinuationMode,
    acp_id: Option<acp::SessionId>,
    via: ContinueVia,
    tried_resume: bool,
    tried_load: bool,
    /// Why the first choice did not do, for `session-continued`'s `detail`.
    detail: Vec<String>,
}

impl Continuing {
    fn new(mode: ContinuationMode, acp_id: Option<&str>, via: ContinueVia) -> Self {
        Continuing {
            mode,
            acp_id: acp_id.map(|id| acp::SessionId::new(id.to_owned())),
            via,
            tried_resume: false,
            tried_load: false,
            detail: Vec::new(),
        }
    }
}

struct Loading {
    suppress: bool,
    skipped: u64,
}
