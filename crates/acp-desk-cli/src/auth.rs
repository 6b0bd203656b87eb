//! `acp-desk-cli auth NAME [--method ID] [--agent-command CMD] [--yes]`: signs in to an agent
//! with one of the methods its `initialize` offers (`acp_desk_core::auth`, classified there).
//!
//! - The methods are read from a start that opens no session (`Opening::ListOnly`). Without
//!   `--method`, one method is used as it is; several are listed, and nothing is done.
//! - A terminal method (`type: terminal`, or `_meta["terminal-auth"]`) runs in the user's own
//!   terminal (stdin, stdout and stderr inherited), its env's secrets read from the keychain for
//!   that spawn only. A command other than the agent's own launch runs only after the user
//!   agrees: a y/N question on a terminal, `--yes` otherwise. Exit status 0 is signed in.
//! - An API-key method: the key is read (typing hidden on a terminal, else stdin), stored in
//!   the keychain at `auth::api_key_ref(agent, method)`, and checked by a start that sends it
//!   (the engine sends a stored key on every start).
//! - Any other method: `authenticate {methodId}` in a start that opens no session.
//!
//! `run` uses the same pieces when the agent answers auth-required ([`advice`], [`sign_in`]).
//! A key is never printed, logged or put in an error message.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_desk_core::agents::{self as core_agents, LaunchSpec};
use acp_desk_core::auth::{self as core_auth, AuthAction, AuthHow};
use acp_desk_core::error_kind::ErrorKind;
use acp_desk_core::events::{ErrorInfo, StreamEvent};
use acp_desk_core::secrets::{Keychain, OsKeychain};
use acp_desk_core::{EngineError, Opening, SessionOptions};
use tokio::sync::mpsc;

use crate::{EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE};

/// How long the starts of `auth` wait for the agent (`initialize`, then `authenticate`, where
/// the user may be in a browser): npx agents download themselves on first use.
const DEFAULT_TIMEOUT_SECS: f64 = 120.0;

#[derive(clap::Args)]
pub struct AuthArgs {
    /// The agent, by the name `run --agent` takes (`demo`, a settings name, a built-in).
    #[arg(value_name = "NAME", required_unless_present = "agent_command")]
    name: Option<String>,
    /// An agent's command line instead of a name (as `run --agent-command`). Its API key is
    /// stored under the name `run --agent-command` gives the same line.
    #[arg(long, value_name = "CMD ARG...", conflicts_with = "name")]
    agent_command: Option<String>,
    /// The method's id (as listed without it). Needed when the agent offers more than one.
    #[arg(long, value_name = "ID")]
    method: Option<String>,
    /// Run a terminal login whose command is not the agent's own launch without asking (the
    /// question needs a terminal; without one, and without --yes, it is refused).
    #[arg(long)]
    yes: bool,
    /// Seconds each start of the agent may take, `authenticate` included.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_TIMEOUT_SECS)]
    timeout: f64,
}

/// The agent as the user named it, to say which command signs in to it.
#[derive(Clone)]
pub enum AgentArg {
    Name(String),
    /// `--agent-command`: the line itself is never repeated (it may hold a secret).
    CommandLine,
}

impl AgentArg {
    /// `acp-desk-cli auth NAME --method ID`.
    pub fn command_for(&self, method_id: &str) -> String {
        match self {
            AgentArg::Name(n) => format!("acp-desk-cli auth {n} --method {method_id}"),
            AgentArg::CommandLine => {
                format!("acp-desk-cli auth --agent-command CMD --method {method_id}")
            }
        }
    }
}

/// Why signing in did not succeed, with the exit status to end with.
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    fn usage(message: impl Into<String>) -> Failure {
        Failure {
            code: EXIT_USAGE,
            message: message.into(),
        }
    }
    fn failed(message: impl Into<String>) -> Failure {
        Failure {
            code: EXIT_FAILED,
            message: message.into(),
        }
    }
}

/// Runs `auth`.
///
/// Exit status: 0 signed in (the login exited 0, the key was stored and accepted, the agent
/// accepted `authenticate`); 1 it did not (the login exited otherwise, the agent refused, the
/// keychain failed, the agent did not start); 2 a usage error (unknown agent or method, several
/// methods and no --method, no consent to run a login command, an empty key); 130 after Ctrl-C.
pub fn auth(args: AuthArgs, runtime: &tokio::runtime::Runtime) -> ExitCode {
    let Ok(timeout) = Duration::try_from_secs_f64(args.timeout) else {
        eprintln!("acp-desk-cli: --timeout: not a usable number of seconds");
        return ExitCode::from(EXIT_USAGE);
    };
    let (spec, who) = match (&args.agent_command, &args.name) {
        (Some(line), _) => match core_agents::from_command_line(line) {
            Ok(spec) => (spec, AgentArg::CommandLine),
            Err(e) => {
                eprintln!("acp-desk-cli: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        },
        (None, Some(name)) => {
            match core_agents::resolve_in(&core_agents::Sources::default_for_user(), name) {
                Ok(r) => (r.spec, AgentArg::Name(name.clone())),
                Err(e) => {
                    eprintln!("acp-desk-cli: {e}");
                    return ExitCode::from(EXIT_USAGE);
                }
            }
        }
        (None, None) => {
            eprintln!("acp-desk-cli: auth needs an agent NAME or --agent-command");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::env::temp_dir());
    let result = runtime.block_on(async {
        let listed = interruptible(list_only(&spec, &cwd, None, timeout)).await?;
        let actions = match listed.actions {
            Some(a) => a,
            None => {
                let why = listed
                    .result
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| "it sent no initialize answer".into());
                return Err(Failure::failed(format!(
                    "could not ask `{}` how to sign in: {why}",
                    spec.name
                )));
            }
        };
        let action = choose(&actions, args.method.as_deref(), &who, &spec.name)?;
        sign_in(&action, &spec, &cwd, args.yes, timeout).await
    });
    match result {
        Ok(done) => {
            println!("{done}");
            ExitCode::SUCCESS
        }
        Err(f) => {
            eprintln!("acp-desk-cli: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

/// The method `--method` names, the only one, or a usage error listing them.
fn choose(
    actions: &[AuthAction],
    method: Option<&str>,
    who: &AgentArg,
    agent: &str,
) -> Result<AuthAction, Failure> {
    if actions.is_empty() {
        return Err(Failure::failed(format!(
            "`{agent}` offers no way to sign in (its initialize lists no authMethods): it needs none, or is signed in outside ACP Desk"
        )));
    }
    match method {
        Some(id) => actions
            .iter()
            .find(|a| a.method_id == id)
            .cloned()
            .ok_or_else(|| {
                Failure::usage(format!(
                    "`{agent}` has no sign-in method `{id}`; it offers:\n{}",
                    list(actions, who)
                ))
            }),
        None if actions.len() == 1 => Ok(actions[0].clone()),
        None => Err(Failure::usage(format!(
            "`{agent}` offers {} ways to sign in; pick one with --method:\n{}",
            actions.len(),
            list(actions, who)
        ))),
    }
}

/// One line per action: the command that runs it, its name and how it is done.
pub fn list(actions: &[AuthAction], who: &AgentArg) -> String {
    let commands: Vec<String> = actions
        .iter()
        .map(|a| who.command_for(&a.method_id))
        .collect();
    let width = commands
        .iter()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(0);
    actions
        .iter()
        .zip(&commands)
        .map(|(a, c)| format!("  {c:<width$}   {}: {}", a.name, how(&a.how)))
        .collect::<Vec<_>>()
        .join("\n")
}

fn how(how: &AuthHow) -> String {
    match how {
        AuthHow::Terminal { .. } => "a login in your terminal, by the agent's own program".into(),
        AuthHow::TerminalCommand { command, .. } => {
            format!("a login in your terminal: runs `{command}`")
        }
        AuthHow::ApiKey { provider: Some(p) } => {
            format!("an API key ({p}), kept in the OS keychain")
        }
        AuthHow::ApiKey { provider: None } => "an API key, kept in the OS keychain".into(),
        AuthHow::Agent => "the agent signs you in (it may open a browser)".into(),
    }
}

/// What `run` says when the agent needs a sign-in: the commands that do it.
pub fn advice(actions: Option<&[AuthAction]>, who: &AgentArg) -> String {
    match actions {
        Some(a) if !a.is_empty() => format!("sign in with one of:\n{}", list(a, who)),
        _ => "the agent offers no sign-in method to ACP Desk: sign in with the agent's own command, then run again".into(),
    }
}

/// What a start that opens no session found.
pub struct Listed {
    pub actions: Option<Vec<AuthAction>>,
    pub result: Result<(), EngineError>,
}

/// Starts the agent without opening a session (`initialize`, the stored API keys sent, and
/// `authenticate {methodId}` when `authenticate` is set), then ends it. The agent's methods
/// come from its `initialize` answer, also when the start failed after it.
pub async fn list_only(
    spec: &LaunchSpec,
    cwd: &Path,
    authenticate: Option<String>,
    timeout: Duration,
) -> Listed {
    let mut opts = SessionOptions::new(cwd);
    opts.opening = Opening::ListOnly;
    opts.audit = acp_desk_core::audit::AuditKind::Off;
    opts.watch_roots = false;
    opts.rules_file = None;
    opts.turn_idle_timeout = None;
    opts.start_timeout = timeout;
    opts.authenticate = authenticate;
    let (tx, mut rx) = mpsc::channel(16);
    let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let (result, trace) = acp_desk_core::start_traced(spec.clone(), opts, tx).await;
    let actions = trace
        .initialize_result
        .as_ref()
        .and_then(|v| v.get("authMethods").cloned())
        .map(|m| {
            serde_json::from_value::<Vec<acp_desk_core::schema::v1::AuthMethod>>(m)
                .map(|m| core_auth::classify(&m))
                .unwrap_or_default()
        })
        .or_else(|| trace.initialize_result.as_ref().map(|_| Vec::new()));
    let result = match result {
        Ok(handle) => {
            handle.close().await;
            Ok(())
        }
        Err(e) => Err(e),
    };
    let _ = drain.await;
    Listed { actions, result }
}

/// Carries out `action` for the agent of `spec`; `Ok` says what was done, for people.
pub async fn sign_in(
    action: &AuthAction,
    spec: &LaunchSpec,
    cwd: &Path,
    yes: bool,
    timeout: Duration,
) -> Result<String, Failure> {
    match &action.how {
        AuthHow::Terminal { .. } | AuthHow::TerminalCommand { .. } => {
            terminal_login(action, spec, yes).await
        }
        AuthHow::ApiKey { .. } => api_key(action, spec, cwd, timeout).await,
        AuthHow::Agent => {
            let listed = interruptible(list_only(
                spec,
                cwd,
                Some(action.method_id.clone()),
                timeout,
            ))
            .await?;
            match listed.result {
                Ok(()) => Ok(format!(
                    "signed in to `{}` with {} ({})",
                    spec.name, action.name, action.method_id
                )),
                Err(e) => Err(Failure::failed(format!(
                    "`{}` did not sign in with {} ({}): {e}",
                    spec.name, action.name, action.method_id
                ))),
            }
        }
    }
}

async fn terminal_login(
    action: &AuthAction,
    spec: &LaunchSpec,
    yes: bool,
) -> Result<String, Failure> {
    let Some(login) = core_auth::login_spec(action, spec) else {
        return Err(Failure::failed(format!(
            "{} is not a terminal login",
            action.method_id
        )));
    };
    // The program and its arguments, never the env's values (names only), secret-looking args
    // redacted as the window and the history do.
    let (args, _) = acp_desk_store::launch::redact_args(&login.args);
    let shown = std::iter::once(login.command.as_str())
        .chain(args.iter().map(String::as_str))
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ");
    if login.differs_from_launch && !yes {
        if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
            return Err(Failure::usage(format!(
                "{} runs a program the agent named, not the agent itself: `{shown}`. Nothing was run: \
                 pass --yes to run it, or run it on a terminal to be asked",
                login.label
            )));
        }
        let question = format!(
            "{} runs a program the agent named, not the agent itself:\n  {shown}\nRun it? [y/N] ",
            login.label
        );
        if !interruptible(ask_yes(&question)).await? {
            return Err(Failure::usage("nothing was run: you did not agree"));
        }
    }
    // The secrets of the launch's env, read now, for this spawn only.
    let resolved = {
        let login = login.clone();
        tokio::task::spawn_blocking(move || {
            core_auth::resolve_login(&login, Some(&OsKeychain::new()))
        })
        .await
        .map_err(|e| Failure::failed(format!("internal error: {e}")))?
        .map_err(|e| Failure::failed(e.to_string()))?
    };
    let env = resolved.env;
    eprintln!(
        "acp-desk-cli: running the login \"{}\" in this terminal: {shown}",
        login.label
    );
    let mut cmd = tokio::process::Command::new(&login.command);
    cmd.args(&login.args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::inherit())
        .stdout(std::process::Stdio::inherit())
        .stderr(std::process::Stdio::inherit());
    if let Some(dir) = &login.cwd {
        cmd.current_dir(dir);
    }
    let mut child = cmd.spawn().map_err(|e| {
        Failure::failed(format!(
            "{} could not be started (`{}`: {e}); is the agent installed?",
            login.label, login.command
        ))
    })?;
    drop(env);
    // Ctrl-C reaches the login too (one terminal): it decides; we wait for its status.
    let status = loop {
        tokio::select! {
            s = child.wait() => break s,
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    .map_err(|e| Failure::failed(format!("{} could not be waited for: {e}", login.label)))?;
    match status.code() {
        Some(0) => Ok(format!(
            "signed in to `{}`: {} exited with status 0",
            spec.name, login.label
        )),
        Some(code) => Err(Failure::failed(format!(
            "not signed in: {} exited with status {code}; run it again to retry",
            login.label
        ))),
        None => {
            #[cfg(unix)]
            let how = {
                use std::os::unix::process::ExitStatusExt;
                match status.signal() {
                    Some(2) => {
                        return Err(Failure {
                            code: EXIT_INTERRUPTED,
                            message: format!("not signed in: {} was interrupted", login.label),
                        });
                    }
                    Some(sig) => format!("was ended by signal {sig}"),
                    None => "ended without an exit status".to_owned(),
                }
            };
            #[cfg(not(unix))]
            let how = "ended without an exit status".to_owned();
            Err(Failure::failed(format!(
                "not signed in: {} {how}",
                login.label
            )))
        }
    }
}

async fn api_key(
    action: &AuthAction,
    spec: &LaunchSpec,
    cwd: &Path,
    timeout: Duration,
) -> Result<String, Failure> {
    let name = core_auth::api_key_ref(&spec.name, &action.method_id)
        .map_err(|e| Failure::failed(format!("no keychain name for this key: {e}")))?;
    let prompt = format!(
        "API key for {} of `{}` (typing is hidden): ",
        action.name, spec.name
    );
    let handle = tokio::runtime::Handle::current();
    let key = tokio::task::block_in_place(|| {
        if std::io::stdin().is_terminal() {
            crate::secret::ask_hidden(&prompt, &handle, false)
        } else {
            crate::secret::read_piped()
        }
    })
    .map_err(|r| match r {
        crate::secret::Refused::Usage(why) => Failure::usage(format!("nothing stored: {why}")),
        crate::secret::Refused::Failed(why) => Failure::failed(format!("nothing stored: {why}")),
    })?;
    let stored = interruptible(tokio::task::spawn_blocking({
        let name = name.clone();
        move || OsKeychain::new().set(&name, &key)
    }))
    .await?
    .map_err(|e| Failure::failed(format!("internal error: {e}")))?;
    if let Err(e) = stored {
        return Err(Failure::failed(format!(
            "could not store the key in the keychain (`{name}`): {e}"
        )));
    }
    eprintln!(
        "acp-desk-cli: stored the key as `{name}` in the keychain; checking it with the agent"
    );
    // Named: this key is sent, or the start fails (an unread keychain is not "signed in").
    let listed = interruptible(list_only(
        spec,
        cwd,
        Some(action.method_id.clone()),
        timeout,
    ))
    .await?;
    match listed.result {
        Ok(()) => Ok(format!(
            "signed in to `{}` with {}: the key is kept in the keychain as `{name}` and sent on every start",
            spec.name, action.name
        )),
        Err(e) => Err(Failure::failed(format!(
            "the key is stored as `{name}`, but `{}` did not start with it: {e}. \
             To replace it: run this again; to remove it: `acp-desk-cli secret delete {name}`",
            spec.name
        ))),
    }
}

/// `work`, or exit 130 on Ctrl-C (dropping it ends an agent it started).
async fn interruptible<T>(work: impl std::future::Future<Output = T>) -> Result<T, Failure> {
    tokio::select! {
        r = work => Ok(r),
        _ = tokio::signal::ctrl_c() => Err(Failure {
            code: EXIT_INTERRUPTED,
            message: "interrupted".into(),
        }),
    }
}

/// A y/N question on stderr, read from the terminal; anything but y/yes is no.
pub async fn ask_yes(question: &str) -> bool {
    eprint!("{question}");
    let _ = std::io::stderr().flush();
    let answer = crate::render::terminal_lines().next().await;
    matches!(answer, Some(l) if matches!(l.to_ascii_lowercase().as_str(), "y" | "yes"))
}

/// A word as a shell would read it back (for showing a command, never for running one).
fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+%".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Watches a `run` session's events for what sign-in needs: the agent's actions (from
/// `session-status`), and for each turn whether it ended after an auth-required error. The
/// observers see a batch after the engine answered the caller, so [`AuthWatch::turn`] and
/// [`AuthWatch::start_failed`] wait (bounded) for the events of what just ended.
#[derive(Default)]
pub struct AuthWatch {
    state: Mutex<WatchState>,
    seen: tokio::sync::Notify,
}

#[derive(Default)]
struct WatchState {
    actions: Option<Vec<AuthAction>>,
    /// An auth-required error since the last turn-end.
    pending: bool,
    /// Per ended turn (in order): whether an auth-required error came before its turn-end.
    turns: Vec<bool>,
    dead: bool,
}

/// How long to wait for the events of a turn or start that already ended.
const EVENTS_WAIT: Duration = Duration::from_secs(3);

impl AuthWatch {
    pub fn new() -> Arc<AuthWatch> {
        Arc::new(AuthWatch::default())
    }

    fn state(&self) -> std::sync::MutexGuard<'_, WatchState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn actions(&self) -> Option<Vec<AuthAction>> {
        self.state().actions.clone()
    }

    async fn wait_for(&self, done: impl Fn(&WatchState) -> bool) {
        let _ = tokio::time::timeout(EVENTS_WAIT, async {
            loop {
                let notified = self.seen.notified();
                if done(&self.state()) {
                    return;
                }
                notified.await;
            }
        })
        .await;
    }

    /// Whether the `n`th turn (0-based) of the session ended with an auth-required error.
    pub async fn turn(&self, n: usize) -> bool {
        self.wait_for(|s| s.turns.len() > n || s.dead).await;
        let s = self.state();
        s.turns.get(n).copied().unwrap_or(s.pending)
    }

    /// After a failed start: waits for its `dead` status, so that the actions are known.
    pub async fn start_failed(&self) {
        self.wait_for(|s| s.dead).await;
    }
}

impl acp_desk_app::Observer for AuthWatch {
    fn on_batch(&self, _: &acp_desk_app::SessionInfo, events: &[StreamEvent]) {
        {
            let mut state = self.state();
            for ev in events {
                match ev {
                    StreamEvent::SessionStatus { agent, status, .. } => {
                        if let Some(a) = agent.as_ref().and_then(|a| a.auth_methods.as_ref()) {
                            state.actions = Some(a.clone());
                        }
                        if *status == acp_desk_core::events::SessionState::Dead {
                            state.dead = true;
                        }
                    }
                    StreamEvent::Error {
                        error:
                            ErrorInfo {
                                kind: Some(ErrorKind::AuthRequired),
                                ..
                            },
                        ..
                    } => state.pending = true,
                    StreamEvent::TurnEnd { .. } => {
                        let hit = std::mem::take(&mut state.pending);
                        state.turns.push(hit);
                    }
                    _ => {}
                }
            }
        }
        self.seen.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn actions() -> Vec<AuthAction> {
        let methods: Vec<acp_desk_core::schema::v1::AuthMethod> = serde_json::from_str(
            r#"[{"id":"oauth-personal","name":"Log in with Google"},
                {"id":"gemini-api-key","name":"Gemini API key","_meta":{"api-key":{"provider":"google"}}}]"#,
        )
        .expect("methods");
        core_auth::classify(&methods)
    }

    #[test]
    fn several_methods_need_a_choice_naming_each_command() {
        let who = AgentArg::Name("gemini".into());
        let Err(f) = choose(&actions(), None, &who, "gemini") else {
            panic!("chose without --method")
        };
        assert_eq!(f.code, EXIT_USAGE);
        assert!(
            f.message
                .contains("acp-desk-cli auth gemini --method oauth-personal")
        );
        assert!(
            f.message
                .contains("acp-desk-cli auth gemini --method gemini-api-key")
        );
        assert!(f.message.contains("an API key (google)"));
        let Err(f) = choose(&actions(), Some("nope"), &who, "gemini") else {
            panic!("unknown method accepted")
        };
        assert!(
            f.message.contains("no sign-in method `nope`"),
            "{}",
            f.message
        );
        let got = choose(&actions(), Some("gemini-api-key"), &who, "gemini").ok();
        assert_eq!(got.map(|a| a.method_id), Some("gemini-api-key".into()));
    }

    #[test]
    fn one_method_is_used_and_none_is_said() {
        let who = AgentArg::CommandLine;
        let one = &actions()[..1];
        assert_eq!(
            choose(one, None, &who, "x").ok().map(|a| a.method_id),
            Some("oauth-personal".into())
        );
        let Err(f) = choose(&[], None, &who, "x") else {
            panic!("no methods, yet chosen")
        };
        assert_eq!(f.code, EXIT_FAILED);
        // A command line is never repeated: it may hold a secret.
        assert!(list(one, &who).contains("--agent-command CMD --method oauth-personal"));
    }

    #[test]
    fn commands_are_shown_quoted() {
        assert_eq!(quote("/a/cli.js"), "/a/cli.js");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), "'it'\\''s'");
    }
}
