//! ACP Desk's demo agent: a real stdio ACP agent (JSON-RPC 2.0, one message per line) that
//! plays scripted scenarios. It has no language model, and says so.
//!
//! Threads: a reader thread turns stdin lines into channel messages; the main thread
//! dispatches them; each prompt turn plays on its own thread. All stdout writes go through
//! one locked writer ([`out::Out`]) that writes whole lines.

mod args;
mod out;
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
    AgentCapabilities, AuthMethod, AuthMethodAgent, AuthenticateRequest, AuthenticateResponse,
    AvailableCommand, AvailableCommandsUpdate, CancelNotification, ContentBlock, Cost,
    CurrentModeUpdate, Implementation, InitializeRequest, InitializeResponse, NewSessionRequest,
    NewSessionResponse, PromptRequest, PromptResponse, SessionId, SessionUpdate,
    SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, SetSessionModeRequest,
    SetSessionModeResponse, UsageUpdate,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::args::Args;
use crate::out::{Out, RpcError};
use crate::scenario::{Library, Placeholders};
use crate::settings::Settings;
use crate::turn::{Shared, Turn, TurnEvent, lock};

const AUTH_METHOD_ID: &str = "demo-login";

enum Incoming {
    Line(Vec<u8>),
    Eof,
}

fn main() {
    let args = match args::parse(std::env::args().skip(1)) {
        Ok(args::Parsed::Run(args)) => args,
        Ok(args::Parsed::Help) => {
            print!("{}", args::USAGE);
            return;
        }
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

    let mut agent = Agent {
        shared: Arc::new(Shared::new(Out::stdout())),
        library: Arc::new(library),
        args,
        authenticated: false,
        sessions: HashMap::new(),
        session_counter: 0,
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
}

struct Agent {
    shared: Arc<Shared>,
    library: Arc<Library>,
    args: Args,
    authenticated: bool,
    sessions: HashMap<String, Session>,
    session_counter: u64,
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
        match method {
            "initialize" => Reply::Now(self.initialize(params)),
            "authenticate" => Reply::Now(self.authenticate(params)),
            "session/new" => Reply::Now(self.new_session(params)),
            "session/set_mode" => Reply::Now(self.set_mode(params)),
            "session/set_config_option" => Reply::Now(self.set_config_option(params)),
            "session/prompt" => match self.prompt(id, params) {
                Ok(()) => Reply::Later,
                Err(e) => Reply::Now(Err(e)),
            },
            other => Reply::Now(Err(RpcError::method_not_found(other))),
        }
    }

    fn initialize(&mut self, params: &Value) -> Result<Value, RpcError> {
        let request: InitializeRequest = parse_params(params)?;
        log!(
            "initialize: client asks for protocol version {}",
            request.protocol_version
        );
        let caps = &self.args.prompt_caps;
        let mut response =
            InitializeResponse::new(ProtocolVersion::from(self.args.protocol_version))
                .agent_capabilities(
                    AgentCapabilities::new()
                        .load_session(false)
                        .prompt_capabilities(caps.clone()),
                )
                .agent_info(
                    Implementation::new("acp-desk-demo-agent", env!("CARGO_PKG_VERSION"))
                        .title("ACP Desk demo agent".to_owned()),
                );
        if self.args.auth_required {
            response = response.auth_methods(vec![AuthMethod::Agent(
                AuthMethodAgent::new(AUTH_METHOD_ID, "Demo login").description(
                    "Pretend login for testing authentication flows; no credentials are asked \
                     for or checked."
                        .to_owned(),
                ),
            )]);
        }
        to_result(response)
    }

    fn authenticate(&mut self, params: &Value) -> Result<Value, RpcError> {
        let request: AuthenticateRequest = parse_params(params)?;
        if &*request.method_id.0 != AUTH_METHOD_ID {
            return Err(RpcError::invalid_params(format!(
                "unknown authentication method {:?} (the demo agent offers {AUTH_METHOD_ID:?})",
                request.method_id.0
            )));
        }
        self.authenticated = true;
        log!("authenticated with {AUTH_METHOD_ID}");
        to_result(AuthenticateResponse::new())
    }

    fn new_session(&mut self, params: &Value) -> Result<Value, RpcError> {
        let request: NewSessionRequest = parse_params(params)?;
        if self.args.auth_required && !self.authenticated {
            return Err(RpcError::new(-32000, "Authentication required"));
        }
        self.session_counter += 1;
        let id = format!("demo-session-{}", self.session_counter);
        log!("new session {id} in {}", request.cwd.display());
        let settings = Settings::default();
        let response = NewSessionResponse::new(id.clone())
            .modes(settings.modes())
            .config_options(settings.config_options());
        self.sessions.insert(
            id,
            Session {
                cwd: request.cwd,
                settings,
            },
        );
        to_result(response)
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
            "session/new" => self.after_new_session(),
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

    fn after_new_session(&mut self) {
        let id = format!("demo-session-{}", self.session_counter);
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
        let Some(session) = self.sessions.get(&session_key) else {
            return Err(RpcError::invalid_params(format!(
                "unknown session id {session_key:?}"
            )));
        };
        let text = request
            .prompt
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
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
                let result = Turn::new(&shared, session_id, cwd, tx, rx).run(&file.steps);
                // Deregister before answering, so a client that sends its next prompt as soon
                // as it sees this response is not told a turn is still running.
                lock(&shared.turns).remove(&session_key);
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
