//! ACP Desk's demo agent: a real stdio ACP agent (JSON-RPC 2.0, one message per line) that
//! plays scripted scenarios. It has no language model, and says so.
//!
//! Threads: a reader thread turns stdin lines into channel messages; the main thread
//! dispatches them; each prompt turn plays on its own thread. All stdout writes go through
//! one locked writer ([`out::Out`]) that writes whole lines.

mod args;
mod asks;
mod auth;
mod journal;
mod out;
mod record;
mod scenario;
mod settings;
mod turn;

use std::collections::HashMap;
use std::io::BufRead;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver};

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::{
    AgentCapabilities, AuthenticateRequest, AuthenticateResponse, AvailableCommand,
    AvailableCommandsUpdate, CancelNotification, CloseSessionRequest, CloseSessionResponse,
    ContentBlock, ContentChunk, Cost, CurrentModeUpdate, DeleteSessionRequest,
    DeleteSessionResponse, Implementation, InitializeRequest, InitializeResponse,
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse,
    NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse, ResumeSessionRequest,
    ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities,
    SessionDeleteCapabilities, SessionId, SessionInfo, SessionListCapabilities,
    SessionResumeCapabilities, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse, StopReason,
    TextContent, UsageUpdate,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::args::Args;
use crate::journal::{Entry, Journal, Record};
use crate::out::{Out, RpcError};
use crate::scenario::{Library, Placeholders};
use crate::settings::Settings;
use crate::turn::{Shared, Turn, TurnEvent, lock};

enum Incoming {
    Line(Vec<u8>),
    Eof,
}

fn main() {
    let args = match args::parse(std::env::args().skip(1)) {
        Ok(args::Parsed::Run(args)) => *args,
        Ok(args::Parsed::Help) => {
            print!("{}", args::USAGE);
            return;
        }
        Ok(args::Parsed::Login) => std::process::exit(auth::login()),
        Err(message) => {
            log!("{message}");
            log!("run with --help for usage");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(args) {
        log!("fatal: {e:#}");
        std::process::exit(1);
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    args::apply_process_flags(&args);
    let mut library = Library::embedded()?;
    if let Some(dir) = &args.scenario_dir {
        library = library.with_extra_dir(dir)?;
    }
    log!(
        "{} scenarios loaded; speaking ACP protocol version {} on stdio",
        library.all().len(),
        args.protocol_version
    );

    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("stdin-reader".into())
        .spawn(move || read_stdin(tx))?;

    let journal = Journal::new(args.session_methods.any().then(|| {
        args.session_dir
            .clone()
            .unwrap_or_else(args::default_session_dir)
    }));
    let mut agent = Agent {
        shared: Arc::new(Shared::new(Out::stdout(journal))),
        library: Arc::new(library),
        args,
        recorder: record::Recorder::from_env(),
        authenticated: false,
        sessions: HashMap::new(),
        session_counter: 0,
        opened: None,
    };
    agent.dispatch(rx);
    Ok(())
}

fn read_stdin(tx: mpsc::Sender<Incoming>) {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    loop {
        let mut line = Vec::new();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {
                if tx.send(Incoming::Line(line)).is_err() {
                    return;
                }
            }
            Err(e) => {
                log!("stdin read error: {e}");
                break;
            }
        }
    }
    let _ = tx.send(Incoming::Eof);
}

struct Session {
    cwd: PathBuf,
    settings: Settings,
    /// The conversation's first prompt (also when the journal keeps nothing), for
    /// "what did I say first?".
    first_prompt: Option<String>,
}

/// A prompt the agent answers itself, not from a scenario: it shows whether the session has
/// its earlier conversation (after load or resume it does, after new it does not).
fn asks_first_prompt(text: &str) -> bool {
    let t = text.trim().to_ascii_lowercase();
    t.starts_with("what did i say first")
}

struct Agent {
    shared: Arc<Shared>,
    library: Arc<Library>,
    args: Args,
    recorder: record::Recorder,
    authenticated: bool,
    sessions: HashMap<String, Session>,
    session_counter: u64,
    /// The session the last new/load/resume opened: its first updates follow the answer.
    opened: Option<String>,
}

/// What a request handler wants sent back.
enum Reply {
    Now(Result<Value, RpcError>),
    /// The handler (a turn thread) answers later itself.
    Later,
}

fn parse_params<T: DeserializeOwned>(params: &Value) -> Result<T, RpcError> {
    serde_json::from_value(params.clone()).map_err(RpcError::invalid_params)
}

fn to_result<T: serde::Serialize>(value: T) -> Result<Value, RpcError> {
    serde_json::to_value(value).map_err(|e| RpcError::new(-32603, format!("Internal error: {e}")))
}

impl Agent {
    fn out(&self) -> &Out {
        &self.shared.out
    }

    /// Exits like a real agent when the client goes away.
    fn write_or_exit(&self, result: std::io::Result<()>) {
        if let Err(e) = result {
            log!("stdout write failed ({e}); the client is gone, exiting");
            std::process::exit(0);
        }
    }

    fn dispatch(&mut self, rx: Receiver<Incoming>) {
        while let Ok(Incoming::Line(line)) = rx.recv() {
            self.handle_line(&line);
        }
        if self.args.ignore_eof {
            log!("stdin closed; --ignore-eof given, running on until killed");
            loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
        log!("stdin closed, exiting");
        self.out().flush();
        std::process::exit(0);
    }

    fn handle_line(&mut self, line: &[u8]) {
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() {
            return;
        }
        let message: Value = match serde_json::from_slice(trimmed) {
            Ok(v) => v,
            Err(e) => {
                log!("unparseable input line: {e}");
                let error = RpcError::new(-32700, format!("Parse error: {e}"));
                self.write_or_exit(self.out().respond_error(&Value::Null, &error));
                return;
            }
        };
        let Some(obj) = message.as_object() else {
            let error = RpcError::new(-32600, "Invalid request: expected a JSON object");
            self.write_or_exit(self.out().respond_error(&Value::Null, &error));
            return;
        };
        let id = obj.get("id").cloned();
        let params = obj.get("params").cloned().unwrap_or(Value::Null);
        match (obj.get("method"), id) {
            (Some(Value::String(method)), Some(id)) => {
                let method = method.clone();
                match self.handle_request(&id, &method, &params) {
                    Reply::Now(Ok(result)) => {
                        self.write_or_exit(self.out().respond(&id, result));
                        self.after_response(&method, &params);
                    }
                    Reply::Now(Err(error)) => {
                        log!("{method} failed: {}", error.message);
                        self.write_or_exit(self.out().respond_error(&id, &error));
                    }
                    Reply::Later => {}
                }
            }
            (Some(Value::String(method)), None) => {
                let method = method.clone();
                self.handle_notification(&method, &params);
            }
            (None, Some(id)) if obj.contains_key("result") || obj.contains_key("error") => {
                self.route_response(&id, message);
            }
            (_, id) => {
                let error = RpcError::new(-32600, "Invalid request");
                self.write_or_exit(self.out().respond_error(&id.unwrap_or(Value::Null), &error));
            }
        }
    }

    fn handle_request(&mut self, id: &Value, method: &str, params: &Value) -> Reply {
        let m = self.args.session_methods;
        let opens = match method {
            "session/new" => true,
            "session/load" => m.load,
            "session/resume" => m.resume,
            _ => false,
        };
        // `authenticate` too: what reached the agent (the key) is what sign-in tests assert.
        if (opens || method == "authenticate")
            && let Err(e) = self.recorder.record(method, params)
        {
            return Reply::Now(Err(RpcError::new(-32603, format!("Internal error: {e}"))));
        }
        match method {
            "initialize" => Reply::Now(self.initialize(params)),
            "authenticate" => Reply::Now(self.authenticate(params)),
            "session/new" => Reply::Now(self.new_session(params)),
            "session/load" if self.args.session_methods.load => {
                Reply::Now(self.load_session(params))
            }
            "session/resume" if self.args.session_methods.resume => {
                Reply::Now(self.resume_session(params))
            }
            "session/list" if self.args.session_methods.list => {
                Reply::Now(self.list_sessions(params))
            }
            "session/close" if self.args.session_methods.close => {
                Reply::Now(self.close_session(params))
            }
            "session/delete" if self.args.session_methods.delete => {
                Reply::Now(self.delete_session(params))
            }
            "session/set_mode" => Reply::Now(self.set_mode(params)),
            "session/set_config_option" => Reply::Now(self.set_config_option(params)),
            crate::asks::STOP_METHOD => Reply::Now(crate::asks::stop_task(&self.shared, params)),
            "session/prompt" => match self.prompt(id, params) {
                Ok(()) => Reply::Later,
                Err(e) => Reply::Now(Err(e)),
            },
            other => Reply::Now(Err(RpcError::method_not_found(other))),
        }
    }

    fn initialize(&mut self, params: &Value) -> Result<Value, RpcError> {
        let request: InitializeRequest = parse_params(params)?;
        self.shared.asks.note(params.get("clientCapabilities"));
        log!(
            "initialize: client asks for protocol version {}",
            request.protocol_version
        );
        let caps = &self.args.prompt_caps;
        let mut response =
            InitializeResponse::new(ProtocolVersion::from(self.args.protocol_version))
                .agent_capabilities(
                    AgentCapabilities::new()
                        .load_session(self.args.session_methods.load)
                        .mcp_capabilities(self.args.mcp_caps.clone())
                        .session_capabilities(self.session_capabilities())
                        .prompt_capabilities(caps.clone()),
                )
                .agent_info(
                    Implementation::new("acp-desk-demo-agent", env!("CARGO_PKG_VERSION"))
                        .title("ACP Desk demo agent".to_owned()),
                );
        if let Some(auth) = &self.args.auth {
            response = response.auth_methods(auth.methods(&request));
        }
        to_result(response)
    }

    fn authenticate(&mut self, params: &Value) -> Result<Value, RpcError> {
        let request: AuthenticateRequest = parse_params(params)?;
        let Some(auth) = &self.args.auth else {
            return Err(RpcError::invalid_params(format!(
                "unknown authentication method {:?} (this demo agent offers none: see {} or --auth-required)",
                request.method_id.0,
                auth::AUTH_VAR
            )));
        };
        auth.authenticate(&request)?;
        self.authenticated = true;
        to_result(AuthenticateResponse::new())
    }

    /// Signed in: by `authenticate` in this process, or a marker (a terminal login, an earlier
    /// process's `authenticate`) in the auth folder, looked at each time as a real agent reads
    /// its token file.
    fn signed_in(&self) -> bool {
        self.authenticated
            || self
                .args
                .auth
                .as_ref()
                .is_none_or(auth::AuthConfig::marker_present)
    }

    /// `-32000` when the scenario asks for a sign-in `at` this point and there is none.
    fn require_auth(&self, at: auth::AuthAt) -> Result<(), RpcError> {
        match &self.args.auth {
            Some(a) if a.at == at && !self.signed_in() => {
                Err(RpcError::new(-32000, "Authentication required"))
            }
            _ => Ok(()),
        }
    }

    fn new_session(&mut self, params: &Value) -> Result<Value, RpcError> {
        let request: NewSessionRequest = parse_params(params)?;
        self.require_auth(auth::AuthAt::New)?;
        self.session_counter += 1;
        // Unique across runs: records of earlier processes are kept under their ids.
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default();
        let id = format!(
            "demo-session-{}-{millis:x}-{}",
            self.session_counter,
            std::process::id()
        );
        log!("new session {id} in {}", request.cwd.display());
        let settings = Settings::default();
        let response = NewSessionResponse::new(id.clone())
            .modes(settings.modes())
            .config_options(settings.config_options());
        self.out()
            .journal
            .keep(Record::new(&id, request.cwd.clone()));
        self.opened = Some(id.clone());
        self.sessions.insert(
            id,
            Session {
                cwd: request.cwd,
                settings,
                first_prompt: None,
            },
        );
        to_result(response)
    }

    fn session_capabilities(&self) -> SessionCapabilities {
        let m = self.args.session_methods;
        let mut caps = SessionCapabilities::new();
        if m.list {
            caps = caps.list(SessionListCapabilities::new());
        }
        if m.resume {
            caps = caps.resume(SessionResumeCapabilities::new());
        }
        if m.close {
            caps = caps.close(SessionCloseCapabilities::new());
        }
        if m.delete {
            caps = caps.delete(SessionDeleteCapabilities::new());
        }
        caps
    }

    /// A stored session's record, for load and resume.
    fn stored(&self, id: &SessionId) -> Result<Record, RpcError> {
        self.out().journal.read(&id.0).map_err(|e| {
            RpcError::new(
                -32002,
                format!("Resource not found: no stored session {:?} ({e})", id.0),
            )
        })
    }

    /// Takes a stored session up again: in memory, kept by the journal, its first updates to
    /// follow the answer.
    fn reopen(&mut self, record: Record, cwd: PathBuf) -> Settings {
        let id = record.session_id.clone();
        let first_prompt = record.first_prompt().map(str::to_owned);
        // The folder asked for now is where it works from now on.
        let mut record = record;
        record.cwd.clone_from(&cwd);
        self.out().journal.keep(record);
        self.opened = Some(id.clone());
        let settings = Settings::default();
        self.sessions.insert(
            id,
            Session {
                cwd,
                settings: settings.clone(),
                first_prompt,
            },
        );
        settings
    }

    fn load_session(&mut self, params: &Value) -> Result<Value, RpcError> {
        let request: LoadSessionRequest = parse_params(params)?;
        if self.args.fail_load {
            return Err(RpcError::new(
                -32603,
                "Internal error: this demo agent was told to fail session/load (--fail-load)",
            ));
        }
        let record = self.stored(&request.session_id)?;
        log!(
            "session/load {}: replaying {} entries",
            record.session_id,
            record.entries.len()
        );
        // ACP: the whole conversation as session/update notifications, then the answer.
        for entry in &record.entries {
            let written = match entry {
                Entry::User { text } => self.out().replay(
                    &request.session_id,
                    SessionUpdate::UserMessageChunk(ContentChunk::new(ContentBlock::Text(
                        TextContent::new(text.clone()),
                    ))),
                ),
                Entry::Agent { text } => self.out().replay(
                    &request.session_id,
                    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(
                        TextContent::new(text.clone()),
                    ))),
                ),
                Entry::Tool { update } => self.out().raw_update(&request.session_id, update),
            };
            self.write_or_exit(written);
        }
        let settings = self.reopen(record, request.cwd);
        to_result(
            LoadSessionResponse::new()
                .modes(settings.modes())
                .config_options(settings.config_options()),
        )
    }

    fn resume_session(&mut self, params: &Value) -> Result<Value, RpcError> {
        let request: ResumeSessionRequest = parse_params(params)?;
        if self.args.fail_resume {
            return Err(RpcError::new(
                -32603,
                "Internal error: this demo agent was told to fail session/resume (--fail-resume)",
            ));
        }
        let record = self.stored(&request.session_id)?;
        log!("session/resume {}", record.session_id);
        let settings = self.reopen(record, request.cwd);
        to_result(
            ResumeSessionResponse::new()
                .modes(settings.modes())
                .config_options(settings.config_options()),
        )
    }

    fn list_sessions(&mut self, params: &Value) -> Result<Value, RpcError> {
        let request: ListSessionsRequest = parse_params(params)?;
        let all: Vec<Record> = self
            .out()
            .journal
            .all()
            .into_iter()
            .filter(|r| request.cwd.as_ref().is_none_or(|c| *c == r.cwd))
            .collect();
        // The cursor is opaque to clients; here it is the offset of the next page.
        let start = match &request.cursor {
            None => 0,
            Some(c) => c
                .strip_prefix("offset-")
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| RpcError::invalid_params(format!("unknown cursor {c:?}")))?,
        };
        let page = self.args.list_page_size;
        let sessions = all
            .iter()
            .skip(start)
            .take(page)
            .map(|r| {
                SessionInfo::new(r.session_id.clone(), r.cwd.clone())
                    .title(r.title.clone())
                    .updated_at(r.updated_at.clone())
            })
            .collect();
        let next = (start + page < all.len()).then(|| format!("offset-{}", start + page));
        to_result(ListSessionsResponse::new(sessions).next_cursor(next))
    }

    fn close_session(&mut self, params: &Value) -> Result<Value, RpcError> {
        let request: CloseSessionRequest = parse_params(params)?;
        let key = request.session_id.0.to_string();
        if self.sessions.remove(&key).is_none() {
            return Err(RpcError::invalid_params(format!(
                "unknown session id {key:?}"
            )));
        }
        if let Some(turn) = lock(&self.shared.turns).get(&key) {
            let _ = turn.send(TurnEvent::Cancel);
        }
        if let Err(e) = self.out().journal.save(&key) {
            log!("session {key}: record not saved: {e}");
        }
        self.out().journal.forget(&key);
        log!("session/close {key}");
        to_result(CloseSessionResponse::new())
    }

    fn delete_session(&mut self, params: &Value) -> Result<Value, RpcError> {
        let request: DeleteSessionRequest = parse_params(params)?;
        let key = request.session_id.0.to_string();
        let open = self.sessions.remove(&key).is_some();
        match self.out().journal.delete(&key) {
            Ok(true) => {}
            Ok(false) if open => {}
            Ok(false) => {
                return Err(RpcError::invalid_params(format!(
                    "unknown session id {key:?}"
                )));
            }
            Err(e) => return Err(RpcError::new(-32603, format!("Internal error: {e}"))),
        }
        log!("session/delete {key}");
        to_result(DeleteSessionResponse::new())
    }

    fn session_mut(&mut self, id: &SessionId) -> Result<&mut Session, RpcError> {
        self.sessions
            .get_mut(&*id.0)
            .ok_or_else(|| RpcError::invalid_params(format!("unknown session id {:?}", id.0)))
    }

    fn set_mode(&mut self, params: &Value) -> Result<Value, RpcError> {
        let request: SetSessionModeRequest = parse_params(params)?;
        let session = self.session_mut(&request.session_id)?;
        session.settings.set_mode(&request.mode_id.0)?;
        log!(
            "session {}: mode {}",
            request.session_id.0,
            request.mode_id.0
        );
        to_result(SetSessionModeResponse::new())
    }

    fn set_config_option(&mut self, params: &Value) -> Result<Value, RpcError> {
        let request: SetSessionConfigOptionRequest = parse_params(params)?;
        let session = self.session_mut(&request.session_id)?;
        session
            .settings
            .set_option(&request.config_id.0, &request.value)?;
        log!(
            "session {}: option {} set",
            request.session_id.0,
            request.config_id.0
        );
        to_result(SetSessionConfigOptionResponse::new(
            session.settings.config_options(),
        ))
    }

    /// Sends what must follow a successful response (ACP clients only know the session once
    /// they have the `session/new` result, so updates for it come after).
    fn after_response(&mut self, method: &str, params: &Value) {
        match method {
            "session/new" | "session/load" | "session/resume" => self.after_session_opened(),
            // ACP: the agent reports its mode change as an update, whoever asked for it.
            "session/set_mode" => {
                if let Ok(request) = parse_params::<SetSessionModeRequest>(params) {
                    let update =
                        SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(request.mode_id));
                    self.write_or_exit(self.out().update(&request.session_id, update));
                }
            }
            _ => {}
        }
    }

    fn after_session_opened(&mut self) {
        let Some(id) = self.opened.take() else {
            return;
        };
        let commands = vec![
            AvailableCommand::new("scenarios", "List the scripted demo scenarios"),
            AvailableCommand::new("help", "What this demo agent is and how to use it"),
            AvailableCommand::new("edit", "Play the scripted file-edit scenario (with a diff)"),
            AvailableCommand::new(
                "permission",
                "Play the scripted permission-request scenario",
            ),
        ];
        let session = SessionId::new(id);
        let update = SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands));
        self.write_or_exit(self.out().update(&session, update));
        // A starting context meter (made-up numbers), so a client shows usage before the
        // first turn as real agents that report usage do.
        let usage = UsageUpdate::new(1200, 200_000).cost(Cost::new(0.0, "USD"));
        self.write_or_exit(
            self.out()
                .update(&session, SessionUpdate::UsageUpdate(usage)),
        );
    }

    fn prompt(&mut self, id: &Value, params: &Value) -> Result<(), RpcError> {
        let request: PromptRequest = parse_params(params)?;
        let session_key = request.session_id.0.to_string();
        if !self.sessions.contains_key(&session_key) {
            return Err(RpcError::invalid_params(format!(
                "unknown session id {session_key:?}"
            )));
        }
        self.require_auth(auth::AuthAt::Prompt)?;
        let text = request
            .prompt
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        if asks_first_prompt(&text) {
            return self.answer_first_prompt(id, &request.session_id, &text);
        }
        if let Some(s) = self.sessions.get_mut(&session_key)
            && s.first_prompt.is_none()
        {
            s.first_prompt = Some(text.clone());
        }
        self.out().journal.note_user(&session_key, &text);
        let Some(session) = self.sessions.get(&session_key) else {
            return Err(RpcError::invalid_params(format!(
                "unknown session id {session_key:?}"
            )));
        };
        let Some(stored) = self.library.select(&text) else {
            return Err(RpcError::new(-32603, "no scenarios loaded"));
        };
        let listing = self.library.listing();
        let cwd = session.cwd.display().to_string();
        let file = stored
            .materialize(&Placeholders {
                cwd: &cwd,
                session_id: &session_key,
                scenarios: &listing,
            })
            .map_err(|e| {
                RpcError::new(
                    -32603,
                    format!("scenario {:?} is invalid: {e:#}", stored.name),
                )
            })?;

        let (tx, rx) = mpsc::channel();
        {
            let mut turns = lock(&self.shared.turns);
            if turns.contains_key(&session_key) {
                return Err(RpcError::new(
                    -32600,
                    format!("a prompt turn is already running in session {session_key}"),
                ));
            }
            turns.insert(session_key.clone(), tx.clone());
        }
        log!("session {session_key}: playing scenario {:?}", file.name);

        let shared = Arc::clone(&self.shared);
        let id = id.clone();
        let session_id = request.session_id.clone();
        let cwd = session.cwd.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("turn-{session_key}"))
            .spawn(move || {
                let result =
                    Turn::new(Arc::clone(&shared), session_id, cwd, tx, rx).run(&file.steps);
                // Deregister before answering, so a client that sends its next prompt as soon
                // as it sees this response is not told a turn is still running.
                lock(&shared.turns).remove(&session_key);
                if let Err(e) = shared.out.journal.save(&session_key) {
                    log!("session {session_key}: record not saved: {e}");
                }
                let written = match result {
                    Ok(stop_reason) => {
                        log!("session {session_key}: turn ended ({stop_reason:?})");
                        shared.out.respond(&id, PromptResponse::new(stop_reason))
                    }
                    Err(e) => {
                        log!("session {session_key}: turn failed: {e:#}");
                        let error = RpcError::new(-32603, format!("Internal error: {e:#}"));
                        shared.out.respond_error(&id, &error)
                    }
                };
                if let Err(e) = written {
                    log!("stdout write failed ({e}); the client is gone, exiting");
                    std::process::exit(0);
                }
            });
        if let Err(e) = spawned {
            lock(&self.shared.turns).remove(&request.session_id.0.to_string());
            return Err(RpcError::new(-32603, format!("cannot start turn: {e}")));
        }
        Ok(())
    }

    /// "What did I say first?": answered from the session's own conversation, at once.
    fn answer_first_prompt(
        &mut self,
        id: &Value,
        session_id: &SessionId,
        text: &str,
    ) -> Result<(), RpcError> {
        let key = session_id.0.to_string();
        let Some(session) = self.sessions.get_mut(&key) else {
            return Err(RpcError::invalid_params(format!(
                "unknown session id {key:?}"
            )));
        };
        let answer = match &session.first_prompt {
            Some(first) => format!("You first said: \"{first}\""),
            None => "You have not said anything earlier in this conversation: I have no earlier messages of it.".to_owned(),
        };
        if session.first_prompt.is_none() {
            session.first_prompt = Some(text.to_owned());
        }
        self.out().journal.note_user(&key, text);
        let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(answer)));
        let written = self
            .out()
            .update(session_id, SessionUpdate::AgentMessageChunk(chunk));
        self.write_or_exit(written);
        if let Err(e) = self.out().journal.save(&key) {
            log!("session {key}: record not saved: {e}");
        }
        let written = self
            .out()
            .respond(id, PromptResponse::new(StopReason::EndTurn));
        self.write_or_exit(written);
        Ok(())
    }

    fn handle_notification(&mut self, method: &str, params: &Value) {
        match method {
            "session/cancel" => {
                let cancel: CancelNotification = match parse_params(params) {
                    Ok(c) => c,
                    Err(e) => {
                        log!("malformed session/cancel: {}", e.message);
                        return;
                    }
                };
                let key = cancel.session_id.0.to_string();
                if self.args.ignore_cancel {
                    log!("session/cancel for {key} ignored (--ignore-cancel)");
                    return;
                }
                match lock(&self.shared.turns).get(&key) {
                    Some(turn) => {
                        log!("session/cancel for {key}");
                        let _ = turn.send(TurnEvent::Cancel);
                    }
                    None => log!("session/cancel for {key}, which has no running turn"),
                }
            }
            other => log!("ignoring notification {other}"),
        }
    }

    fn route_response(&mut self, id: &Value, message: Value) {
        let Some(num) = id.as_u64() else {
            log!("response with an id we never used: {id}");
            return;
        };
        let waiter = lock(&self.shared.pending).remove(&num);
        match waiter {
            Some(tx) => {
                let _ = tx.send(TurnEvent::Response { id: num, message });
            }
            None => log!("response to unknown or finished request {num}"),
        }
    }
}
