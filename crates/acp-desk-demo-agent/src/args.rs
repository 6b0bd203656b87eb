//! Command-line flags. Hand-parsed: the agent must stay small and dependency-light.

use std::path::PathBuf;

use agent_client_protocol_schema::v1::{McpCapabilities, PromptCapabilities};

use crate::log;

pub const USAGE: &str = "\
acp-desk-demo-agent: ACP Desk's demo agent. A real ACP agent on stdio (JSON-RPC 2.0,
newline-delimited) that plays scripted scenarios; it has no language model.

USAGE: acp-desk-demo-agent [FLAGS]
       acp-desk-demo-agent login     (the terminal sign-in: asks for a code on its terminal)

FLAGS:
  --auth-required          advertise the \"demo-login\" auth method and refuse session/new
                           until `authenticate` was called with it (this process only;
                           ACP_DESK_DEMO_AUTH below has more)
  --prompt-caps LIST       prompt capabilities to advertise: comma-separated from
                           image, audio, embedded; empty for none
                           (default: image,embedded)
  --mcp LIST               MCP transports to advertise in mcpCapabilities besides stdio:
                           comma-separated from http, sse; `none` or empty for none
                           (default: $ACP_DESK_DEMO_MCP, else http,sse)
  --protocol-version N     protocol version to answer in `initialize` (default 1)
  --scenario-dir DIR       also load DIR/*.json scenarios (they win over built-in ones)
  --ignore-cancel          log session/cancel but keep playing the turn
  --ignore-eof             keep running after stdin closes
  --ignore-sigterm         ignore SIGTERM (unix)
  --spawn-orphan           start a `sleep 3600` in its own session (unix), to test that
                           clients clean up process trees
  --stderr-chatter         print a few log lines to stderr at start, like real agents
  --session-methods LIST   session methods to advertise and implement: comma-separated
                           from load, resume, list, close, delete; `none` or empty for none
                           (default: $ACP_DESK_DEMO_SESSION_METHODS, else none). With any,
                           each session's conversation is kept in --session-dir
  --session-dir DIR        where session records are kept (default:
                           $ACP_DESK_DEMO_SESSION_DIR, else <data dir>/demo-agent-sessions,
                           the data dir being $ACP_DESK_DATA_DIR or the platform's)
  --fail-load              answer session/load with an error (after nothing was replayed)
  --fail-resume            answer session/resume with an error
  --list-page-size N       sessions per session/list page (default 20; the rest by cursor)
  --help                   print this help

ENVIRONMENT:
  ACP_DESK_DEMO_RECORD=FILE      append each received session/new, session/load and
                                 session/resume as a JSON line {\"method\", \"params\"} (the
                                 params as received), for tests of what reached the agent
  ACP_DESK_DEMO_RECORD_ENV=LIST  also put these variables of the agent's environment in each
                                 line, as \"env\": {NAME: value or null}
                                 (`authenticate` requests are recorded too, key included)
  ACP_DESK_DEMO_AUTH=LIST        sign-in methods to advertise: comma-separated from agent,
                                 api-key, terminal, terminal-meta; session/new answers -32000
                                 until signed in
  ACP_DESK_DEMO_AUTH_AT=new|prompt  where -32000 comes: session/new (default) or each prompt
                                 (the session opens)
  ACP_DESK_DEMO_AUTH_DIR=DIR     where the \"signed in\" marker is kept (agent and terminal
                                 methods; default <data dir>/demo-agent-auth)
  ACP_DESK_DEMO_API_KEY=KEY      the key `authenticate` of api-key must carry (in memory only)
  ACP_DESK_DEMO_LOGIN_CODE=CODE  the code `login` asks for (default: demo)
";

#[derive(Debug, Clone)]
pub struct Args {
    pub auth_required: bool,
    /// `ACP_DESK_DEMO_AUTH` (or `--auth-required`): the sign-in scenario, if any.
    pub auth: Option<crate::auth::AuthConfig>,
    pub prompt_caps: PromptCapabilities,
    pub mcp_caps: McpCapabilities,
    pub protocol_version: u16,
    pub scenario_dir: Option<PathBuf>,
    pub ignore_cancel: bool,
    pub ignore_eof: bool,
    pub ignore_sigterm: bool,
    pub spawn_orphan: bool,
    pub stderr_chatter: bool,
    pub session_methods: SessionMethods,
    pub session_dir: Option<PathBuf>,
    pub fail_load: bool,
    pub fail_resume: bool,
    pub list_page_size: usize,
}

/// The session methods advertised in `initialize` (and implemented).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionMethods {
    pub load: bool,
    pub resume: bool,
    pub list: bool,
    pub close: bool,
    pub delete: bool,
}

impl SessionMethods {
    pub fn any(&self) -> bool {
        self.load || self.resume || self.list || self.close || self.delete
    }
}

/// Where the agent's session records go when `--session-dir` is not given.
pub fn default_session_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("ACP_DESK_DEMO_SESSION_DIR") {
        return PathBuf::from(d);
    }
    data_dir().join("demo-agent-sessions")
}

/// `$ACP_DESK_DATA_DIR`, else ACP Desk's platform data folder.
pub fn data_dir() -> PathBuf {
    std::env::var_os("ACP_DESK_DATA_DIR")
        .map(PathBuf::from)
        .or_else(platform_data_dir)
        .unwrap_or_else(|| PathBuf::from(".acp-desk").join("data"))
}

/// ACP Desk's data folder as `acp_desk_core::paths::data_dir` finds it (the agent does not
/// depend on the engine).
fn platform_data_dir() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|b| b.data_dir().join("dev.acpdesk.desk"))
}

pub fn parse_methods(list: &str) -> Result<SessionMethods, String> {
    let mut m = SessionMethods::default();
    for name in list.split(',').map(str::trim).filter(|c| !c.is_empty()) {
        match name {
            "none" => {}
            "load" => m.load = true,
            "resume" => m.resume = true,
            "list" => m.list = true,
            "close" => m.close = true,
            "delete" => m.delete = true,
            other => {
                return Err(format!(
                    "--session-methods: unknown method {other:?} (use load, resume, list, close, delete or none)"
                ));
            }
        }
    }
    Ok(m)
}

impl Default for Args {
    fn default() -> Self {
        Args {
            auth_required: false,
            auth: None,
            // What a client needs to show image paste and embedded files; `--prompt-caps ""`
            // plays an agent that accepts text and links only.
            prompt_caps: PromptCapabilities::new().image(true).embedded_context(true),
            // Both, so every configured server reaches it; `--mcp none` plays an agent that
            // takes stdio servers only (the ACP baseline).
            mcp_caps: McpCapabilities::new().http(true).sse(true),
            protocol_version: 1,
            scenario_dir: None,
            ignore_cancel: false,
            ignore_eof: false,
            ignore_sigterm: false,
            spawn_orphan: false,
            stderr_chatter: false,
            session_methods: SessionMethods::default(),
            session_dir: None,
            fail_load: false,
            fail_resume: false,
            list_page_size: 20,
        }
    }
}

pub enum Parsed {
    // Boxed: Args is large and Help carries nothing.
    Run(Box<Args>),
    Help,
    /// `acp-desk-demo-agent login`.
    Login,
}

pub fn parse(mut argv: impl Iterator<Item = String>) -> Result<Parsed, String> {
    let mut args = Args::default();
    if let Ok(list) = std::env::var("ACP_DESK_DEMO_SESSION_METHODS") {
        args.session_methods =
            parse_methods(&list).map_err(|e| format!("ACP_DESK_DEMO_SESSION_METHODS: {e}"))?;
    }
    if let Ok(list) = std::env::var("ACP_DESK_DEMO_MCP") {
        args.mcp_caps = parse_mcp(&list).map_err(|e| format!("ACP_DESK_DEMO_MCP: {e}"))?;
    }
    while let Some(flag) = argv.next() {
        // Accept both `--flag value` and `--flag=value`.
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_owned(), Some(v.to_owned())),
            _ => (flag.clone(), None),
        };
        let mut value = |what: &str| {
            inline
                .clone()
                .or_else(|| argv.next())
                .ok_or_else(|| format!("{name} needs a value ({what})"))
        };
        match name.as_str() {
            "--help" | "-h" => return Ok(Parsed::Help),
            // A subcommand, first or after flags: the terminal login of the auth scenarios.
            "login" => return Ok(Parsed::Login),
            "--auth-required" => args.auth_required = true,
            "--prompt-caps" => args.prompt_caps = parse_caps(&value("a list like image,audio")?)?,
            "--mcp" => args.mcp_caps = parse_mcp(&value("a list like http,sse")?)?,
            "--protocol-version" => {
                let v = value("a number")?;
                args.protocol_version = v
                    .parse()
                    .map_err(|_| format!("--protocol-version: {v:?} is not a number 0-65535"))?;
            }
            "--scenario-dir" => args.scenario_dir = Some(PathBuf::from(value("a directory")?)),
            "--ignore-cancel" => args.ignore_cancel = true,
            "--ignore-eof" => args.ignore_eof = true,
            "--ignore-sigterm" => args.ignore_sigterm = true,
            "--spawn-orphan" => args.spawn_orphan = true,
            "--stderr-chatter" => args.stderr_chatter = true,
            "--session-methods" => {
                args.session_methods = parse_methods(&value("a list like load,resume")?)?;
            }
            "--session-dir" => args.session_dir = Some(PathBuf::from(value("a directory")?)),
            "--fail-load" => args.fail_load = true,
            "--fail-resume" => args.fail_resume = true,
            "--list-page-size" => {
                let v = value("a number")?;
                args.list_page_size =
                    v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                        format!("--list-page-size: {v:?} is not a positive number")
                    })?;
            }
            _ => return Err(format!("unknown flag {flag:?}")),
        }
    }
    args.auth = crate::auth::AuthConfig::from_env()?;
    if args.auth_required && args.auth.is_none() {
        args.auth = Some(crate::auth::AuthConfig::legacy());
    }
    Ok(Parsed::Run(Box::new(args)))
}

fn parse_caps(list: &str) -> Result<PromptCapabilities, String> {
    let mut caps = PromptCapabilities::new();
    for cap in list.split(',').map(str::trim).filter(|c| !c.is_empty()) {
        caps = match cap {
            "image" => caps.image(true),
            "audio" => caps.audio(true),
            "embedded" | "embedded_context" | "embeddedContext" => caps.embedded_context(true),
            other => {
                return Err(format!(
                    "--prompt-caps: unknown capability {other:?} (use image, audio, embedded)"
                ));
            }
        };
    }
    Ok(caps)
}

pub fn parse_mcp(list: &str) -> Result<McpCapabilities, String> {
    let mut caps = McpCapabilities::new();
    for name in list.split(',').map(str::trim).filter(|c| !c.is_empty()) {
        caps = match name {
            "none" => caps,
            "http" => caps.http(true),
            "sse" => caps.sse(true),
            other => {
                return Err(format!(
                    "--mcp: unknown MCP transport {other:?} (use http, sse or none; stdio is always supported)"
                ));
            }
        };
    }
    Ok(caps)
}

/// Applies the flags that change the process itself rather than the protocol.
pub fn apply_process_flags(args: &Args) {
    if args.stderr_chatter {
        log!("starting up (pid {})", std::process::id());
        log!("no configuration file found, using built-in defaults");
        log!("WARN telemetry disabled: this is a scripted demo agent");
        log!("ready, waiting for initialize on stdin");
    }
    if args.ignore_sigterm {
        ignore_sigterm();
    }
    if args.spawn_orphan {
        spawn_orphan();
    }
}

#[cfg(unix)]
fn ignore_sigterm() {
    // SAFETY: setting a signal disposition to SIG_IGN installs no handler code.
    let previous = unsafe { libc::signal(libc::SIGTERM, libc::SIG_IGN) };
    if previous == libc::SIG_ERR {
        log!("--ignore-sigterm: signal() failed");
    } else {
        log!("ignoring SIGTERM (--ignore-sigterm)");
    }
}

#[cfg(not(unix))]
fn ignore_sigterm() {
    log!("--ignore-sigterm is only supported on unix; ignored");
}

#[cfg(unix)]
fn spawn_orphan() {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    let mut command = Command::new("sleep");
    command
        .arg("3600")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe, so it may run between fork and exec.
    unsafe {
        command.pre_exec(|| {
            // A new session also means a new process group: killing ours misses it.
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    match command.spawn() {
        // Deliberately never waited for: it is meant to outlive us.
        Ok(child) => log!("orphan pid {}", child.id()),
        Err(e) => log!("--spawn-orphan: cannot spawn sleep: {e}"),
    }
}

#[cfg(not(unix))]
fn spawn_orphan() {
    log!("--spawn-orphan is only supported on unix; ignored");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(list: &[&str]) -> Result<Args, String> {
        match parse(list.iter().map(|s| (*s).to_owned()))? {
            Parsed::Run(a) => Ok(*a),
            Parsed::Help => Err("help".into()),
            Parsed::Login => Err("login".into()),
        }
    }

    #[test]
    fn flags_parse() {
        let a = run(&[
            "--auth-required",
            "--prompt-caps",
            "image,embedded",
            "--protocol-version=2",
            "--ignore-cancel",
        ])
        .unwrap();
        assert!(a.auth_required && a.ignore_cancel && !a.ignore_eof);
        assert!(a.prompt_caps.image && a.prompt_caps.embedded_context && !a.prompt_caps.audio);
        assert_eq!(a.protocol_version, 2);
        assert!(run(&["--bogus"]).is_err());
        assert!(run(&["--prompt-caps", "video"]).is_err());
        assert!(run(&["--protocol-version"]).is_err());
        let d = run(&[]).unwrap();
        assert!(d.prompt_caps.image && d.prompt_caps.embedded_context && !d.prompt_caps.audio);
        for none in [&["--prompt-caps", ""][..], &["--prompt-caps="][..]] {
            let n = run(none).unwrap();
            assert!(!n.prompt_caps.image && !n.prompt_caps.embedded_context);
        }
        assert_eq!(run(&["--help"]).unwrap_err(), "help");
        assert!(d.mcp_caps.http && d.mcp_caps.sse);
        let h = run(&["--mcp", "http"]).unwrap();
        assert!(h.mcp_caps.http && !h.mcp_caps.sse);
        for none in ["none", ""] {
            let n = run(&["--mcp", none]).unwrap();
            assert!(!n.mcp_caps.http && !n.mcp_caps.sse);
        }
        assert!(
            run(&["--mcp", "stdio"])
                .unwrap_err()
                .contains("stdio is always")
        );
    }
}
