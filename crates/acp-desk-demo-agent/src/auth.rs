//! Sign-in scenarios: which `authMethods` the agent advertises, when it asks for a sign-in
//! (`-32000`), what `authenticate` accepts, and the `login` subcommand a terminal method runs.
//!
//! Chosen by environment, like `ACP_DESK_DEMO_MCP`, so a configured agent entry plays them
//! without flags:
//! - `ACP_DESK_DEMO_AUTH=LIST`: comma list of `agent`, `api-key`, `terminal`, `terminal-meta`
//!   (the methods advertised, in that order whatever the list's);
//! - `ACP_DESK_DEMO_AUTH_AT=new|prompt`: where "Authentication required" comes (default `new`);
//! - `ACP_DESK_DEMO_AUTH_DIR=DIR`: where the "signed in" marker is kept (the agent and terminal
//!   methods persist there, as a real agent's token file would); default
//!   `<data dir>/demo-agent-auth`;
//! - `ACP_DESK_DEMO_API_KEY=KEY`: the key an `api-key` `authenticate` must carry; kept in the
//!   process's memory only (as Gemini CLI does), so a new process needs it again;
//! - `ACP_DESK_DEMO_LOGIN_CODE=CODE`: the code `login` wants (default [`DEFAULT_LOGIN_CODE`]).
//!
//! `--auth-required` is the older switch: the `agent` method, signed in for this process only
//! (no marker), refused at `session/new`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1::{
    AuthMethod, AuthMethodAgent, AuthMethodTerminal, AuthenticateRequest, InitializeRequest,
};
use serde_json::{Map, Value, json};

use crate::log;
use crate::out::RpcError;

pub const AUTH_VAR: &str = "ACP_DESK_DEMO_AUTH";
pub const AUTH_AT_VAR: &str = "ACP_DESK_DEMO_AUTH_AT";
pub const AUTH_DIR_VAR: &str = "ACP_DESK_DEMO_AUTH_DIR";
pub const API_KEY_VAR: &str = "ACP_DESK_DEMO_API_KEY";
pub const LOGIN_CODE_VAR: &str = "ACP_DESK_DEMO_LOGIN_CODE";
/// The code `login` wants when `ACP_DESK_DEMO_LOGIN_CODE` is not set.
pub const DEFAULT_LOGIN_CODE: &str = "demo";
/// Set by the terminal methods' `env` (over the launch's), written into the marker: tests see
/// which method signed the agent in, and that the method's env reached the login.
pub const LOGIN_METHOD_VAR: &str = "ACP_DESK_DEMO_LOGIN_METHOD";
/// The marker's file name in the auth folder.
pub const MARKER: &str = "signed-in";

pub const AGENT_ID: &str = "demo-login";
pub const API_KEY_ID: &str = "demo-api-key";
pub const TERMINAL_ID: &str = "demo-terminal-login";
pub const TERMINAL_META_ID: &str = "demo-meta-login";

/// Which methods, where the sign-in is asked for, where the marker goes.
#[derive(Debug, Clone, Default)]
pub struct AuthConfig {
    pub agent: bool,
    pub api_key: bool,
    pub terminal: bool,
    pub terminal_meta: bool,
    pub at: AuthAt,
    /// `None`: signed in for this process only (`--auth-required`).
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AuthAt {
    #[default]
    New,
    Prompt,
}

impl AuthConfig {
    /// From the environment; `None` when `ACP_DESK_DEMO_AUTH` is unset or empty.
    pub fn from_env() -> Result<Option<AuthConfig>, String> {
        let Ok(list) = std::env::var(AUTH_VAR) else {
            return Ok(None);
        };
        if list.trim().is_empty() {
            return Ok(None);
        }
        let mut c = AuthConfig::default();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match name {
                "agent" => c.agent = true,
                "api-key" => c.api_key = true,
                "terminal" => c.terminal = true,
                "terminal-meta" => c.terminal_meta = true,
                other => {
                    return Err(format!(
                        "{AUTH_VAR}: unknown method {other:?} (use agent, api-key, terminal, terminal-meta, comma-separated)"
                    ));
                }
            }
        }
        c.at = match std::env::var(AUTH_AT_VAR).as_deref().map(str::trim) {
            Err(_) | Ok("" | "new") => AuthAt::New,
            Ok("prompt") => AuthAt::Prompt,
            Ok(other) => {
                return Err(format!("{AUTH_AT_VAR}: {other:?} is not `new` or `prompt`"));
            }
        };
        c.dir = Some(auth_dir());
        Ok(Some(c))
    }

    /// `--auth-required`: the agent method, for this process only.
    pub fn legacy() -> AuthConfig {
        AuthConfig {
            agent: true,
            ..AuthConfig::default()
        }
    }

    /// The `authMethods` of the `initialize` answer. The terminal method only when the client
    /// said it runs them (`clientCapabilities.auth.terminal`, as the schema requires); the
    /// `_meta` one only when it advertised `_meta["terminal-auth"]` (as claude-code-acp checks).
    pub fn methods(&self, client: &InitializeRequest) -> Vec<AuthMethod> {
        let caps = &client.client_capabilities;
        let meta_terminal = caps
            .meta
            .as_ref()
            .and_then(|m| m.get("terminal-auth"))
            .is_some_and(|v| v == &Value::Bool(true));
        let mut out = Vec::new();
        if self.terminal && caps.auth.terminal {
            out.push(AuthMethod::Terminal(
                AuthMethodTerminal::new(TERMINAL_ID, "Log in in a terminal")
                    .description(
                        "Runs the demo agent's own `login`, which asks for a code.".to_owned(),
                    )
                    .args(vec!["login".to_owned()])
                    .env(std::collections::HashMap::from([(
                        LOGIN_METHOD_VAR.to_owned(),
                        TERMINAL_ID.to_owned(),
                    )])),
            ));
        }
        if self.terminal_meta && meta_terminal {
            let (command, args) = meta_login_command();
            let mut meta = Map::new();
            meta.insert(
                "terminal-auth".into(),
                json!({
                    "command": command,
                    "args": args,
                    "label": "Demo terminal login",
                    "env": {LOGIN_METHOD_VAR: TERMINAL_META_ID},
                }),
            );
            out.push(AuthMethod::Agent(
                AuthMethodAgent::new(TERMINAL_META_ID, "Log in with the demo login command")
                    .description(
                        "Runs a login command of the agent's choosing in a terminal.".to_owned(),
                    )
                    .meta(meta),
            ));
        }
        if self.api_key {
            let mut meta = Map::new();
            meta.insert("api-key".into(), json!({"provider": "demo"}));
            out.push(AuthMethod::Agent(
                AuthMethodAgent::new(API_KEY_ID, "Use a demo API key")
                    .description(format!("The key is checked against ${API_KEY_VAR}."))
                    .meta(meta),
            ));
        }
        if self.agent {
            out.push(AuthMethod::Agent(
                AuthMethodAgent::new(AGENT_ID, "Demo login").description(
                    "Pretend login for testing authentication flows; no credentials are asked \
                     for or checked."
                        .to_owned(),
                ),
            ));
        }
        out
    }

    /// Whether a marker of an earlier sign-in (this process's or a login's) is there. Only
    /// the agent and terminal methods persist: an API key counts for its process only.
    pub fn marker_present(&self) -> bool {
        (self.agent || self.terminal || self.terminal_meta)
            && self.dir.as_ref().is_some_and(|d| d.join(MARKER).is_file())
    }

    /// `authenticate`: `Ok` signs the connection in. The key is never logged or echoed.
    pub fn authenticate(&self, request: &AuthenticateRequest) -> Result<(), RpcError> {
        let id = &*request.method_id.0;
        let advertised = match id {
            AGENT_ID => self.agent,
            API_KEY_ID => self.api_key,
            TERMINAL_ID => self.terminal,
            TERMINAL_META_ID => self.terminal_meta,
            _ => false,
        };
        if !advertised {
            return Err(RpcError::invalid_params(format!(
                "unknown authentication method {id:?} (the demo agent offers {})",
                self.offered().join(", ")
            )));
        }
        match id {
            TERMINAL_ID => Err(RpcError::invalid_params(format!(
                "{TERMINAL_ID} is a terminal login: a client runs `acp-desk-demo-agent login` and must not pass it to authenticate"
            ))),
            // claude-code-acp: `authenticate` of its terminal-auth method is not implemented.
            TERMINAL_META_ID => Err(RpcError::new(
                -32603,
                format!(
                    "Internal error: {TERMINAL_META_ID} is not implemented by authenticate: run its terminal-auth command"
                ),
            )),
            API_KEY_ID => {
                let given = request
                    .meta
                    .as_ref()
                    .and_then(|m| m.get("api-key"))
                    .and_then(Value::as_str);
                let wanted = std::env::var(API_KEY_VAR).ok().filter(|k| !k.is_empty());
                match (given, wanted) {
                    (None, _) => Err(RpcError::invalid_params(format!(
                        "{API_KEY_ID} needs the key in _meta[\"api-key\"]"
                    ))),
                    (Some(_), None) => Err(RpcError::new(
                        -32000,
                        format!(
                            "API key not valid: this demo agent has no key to compare with (set {API_KEY_VAR})"
                        ),
                    )),
                    (Some(g), Some(w)) if g == w => {
                        log!("authenticated with {API_KEY_ID} (kept in memory only)");
                        Ok(())
                    }
                    (Some(_), Some(_)) => Err(RpcError::new(
                        -32000,
                        "API key not valid. Please pass a valid API key.",
                    )),
                }
            }
            _ => {
                if let Some(dir) = &self.dir {
                    write_marker(dir, AGENT_ID).map_err(|e| RpcError::new(-32603, e))?;
                }
                log!("authenticated with {AGENT_ID}");
                Ok(())
            }
        }
    }

    fn offered(&self) -> Vec<&'static str> {
        [
            (self.terminal, TERMINAL_ID),
            (self.terminal_meta, TERMINAL_META_ID),
            (self.api_key, API_KEY_ID),
            (self.agent, AGENT_ID),
        ]
        .into_iter()
        .filter_map(|(on, id)| on.then_some(id))
        .collect()
    }
}

/// `terminal-meta`'s command: not the launch (so a client asks its user first), yet the same
/// program's `login`. On unix a shell runs it, as claude-code-acp names `node` and a script.
fn meta_login_command() -> (String, Vec<String>) {
    let exe = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "acp-desk-demo-agent".to_owned());
    if cfg!(unix) {
        (
            "sh".to_owned(),
            vec!["-c".to_owned(), "exec \"$0\" login".to_owned(), exe],
        )
    } else {
        (exe, vec!["login".to_owned()])
    }
}

/// `ACP_DESK_DEMO_AUTH_DIR`, else `<data dir>/demo-agent-auth`.
pub fn auth_dir() -> PathBuf {
    if let Some(d) = std::env::var_os(AUTH_DIR_VAR).filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    crate::args::data_dir().join("demo-agent-auth")
}

fn write_marker(dir: &Path, method: &str) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(dir.join(MARKER), format!("{method}\n")))
        .map_err(|e| {
            format!(
                "cannot write the sign-in marker in {}: {e} (set {AUTH_DIR_VAR} to a writable folder)",
                dir.display()
            )
        })
}

/// `acp-desk-demo-agent login`: asks for the code on its terminal; exit 0 and the marker on the
/// right code, exit 1 otherwise (and 2 when stdin is not a terminal: nobody could type).
pub fn login() -> i32 {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        eprintln!(
            "acp-desk-demo-agent login: stdin is not a terminal. Run it in a terminal (ACP Desk runs terminal logins in one) and type the code."
        );
        return 2;
    }
    let custom = std::env::var(LOGIN_CODE_VAR).ok().filter(|c| !c.is_empty());
    let hint = if custom.is_some() {
        format!("the code in {LOGIN_CODE_VAR}")
    } else {
        format!("`{DEFAULT_LOGIN_CODE}`; {LOGIN_CODE_VAR} sets another")
    };
    let wanted = custom.unwrap_or_else(|| DEFAULT_LOGIN_CODE.to_owned());
    let mut out = std::io::stdout();
    let _ = write!(
        out,
        "ACP Desk demo agent login.\r\nEnter the login code ({hint}): "
    );
    let _ = out.flush();
    let mut line = String::new();
    match stdin.lock().read_line(&mut line) {
        Ok(0) => {
            let _ = write!(out, "\r\nNo code entered: not signed in.\r\n");
            return 1;
        }
        Ok(_) => {}
        Err(e) => {
            let _ = write!(out, "\r\nCould not read the code ({e}): not signed in.\r\n");
            return 1;
        }
    }
    if line.trim() != wanted {
        let _ = write!(out, "Wrong code: not signed in. Run the login again.\r\n");
        return 1;
    }
    let method = std::env::var(LOGIN_METHOD_VAR).unwrap_or_else(|_| "login".to_owned());
    let dir = auth_dir();
    if let Err(e) = write_marker(&dir, &method) {
        let _ = write!(out, "{e}\r\n");
        return 1;
    }
    let _ = write!(out, "Signed in ({method}).\r\n");
    let _ = out.flush();
    0
}
