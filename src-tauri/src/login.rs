//! Terminal logins in the window (issue 18): an agent's `type: terminal` or
//! `_meta["terminal-auth"]` sign-in method run on an interactive pty
//! (`acp_desk_core::terminal::interactive`), its output on a channel, the keyboard from the
//! window's xterm.js.
//!
//! - **What runs** is decided here, never by the window: the window names a target and a
//!   method id; the method comes from what the agent offered (a session: the latest
//!   `agent.authMethods` of its thread; an agent from the Agents view: a Check, i.e. a fresh
//!   `initialize`), and the command from `auth::login_spec` over the agent's launch. A command
//!   the agent names that is not its own launch needs the user's consent (`consent: true`),
//!   else [`IpcError::ConsentNeeded`] naming it.
//! - **Secrets** of the launch's env are read from the keychain for the spawn only; the
//!   command shown (`commandShown`) is the program and its args with secret-looking args
//!   redacted, never an env value; nothing of the env is logged.
//! - **The end**: one last frame `exit` with the exit status (`exitCode` or `signal`), whether
//!   the user cancelled, and for a session target whose login exited 0, the outcome of
//!   `Registry::restart_signed_in` (the session reconnects signed in). Only 0 is success.
//! - **No orphans**: a login ends (its whole tree) when it is cancelled, when its channel is
//!   gone (the page went away), when the page reloads, when the main window closes (even into
//!   the tray: the terminal is not shown any more) and when the app quits ([`end_all`]), and
//!   with the app's death through the pty (the supervisor's SIGHUP).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use acp_desk_core::agents::LaunchSpec;
use acp_desk_core::auth::{self, AuthAction, LoginError};
use acp_desk_core::terminal::interactive::{
    Interactive, InteractiveError, InteractiveEvent, TermSize,
};
use acp_desk_core::terminal::{TerminalError, TerminalOptions};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, Runtime, State};

use crate::AppState;
use crate::ipc::IpcError;

/// How long quitting waits for the logins' trees to end (they get SIGTERM, then SIGKILL after
/// the terminals' grace): a little over that grace.
pub const END_WAIT: Duration = Duration::from_millis(2500);

/// Whom a login signs in.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum LoginTarget {
    /// An open session: its agent's launch; on success the session restarts signed in.
    Session {
        #[serde(rename = "sessionId")]
        session_id: String,
    },
    /// An agent by name (the Agents view): no session to restart.
    Agent { agent: String },
}

/// `login_start`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoginStarted {
    /// For `login_input`, `login_resize`, `login_cancel`.
    pub login_id: String,
    /// For people: the agent's label for the login, else the method's name.
    pub label: String,
    /// The program and its arguments as run (secret-looking arguments redacted), never an env
    /// value.
    pub command_shown: String,
}

/// What a login's channel carries, in order: `output`s, then one `exit`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum LoginFrame {
    /// Text the program printed (terminal escapes included): write it to the terminal as is.
    Output { data: String },
    /// The program ended; nothing follows.
    #[serde(rename_all = "camelCase")]
    Exit {
        /// Its exit code, when it exited (0 is success, nothing else is).
        #[serde(skip_serializing_if = "Option::is_none")]
        exit_code: Option<u32>,
        /// The signal that ended it ("SIGTERM"), when one did.
        #[serde(skip_serializing_if = "Option::is_none")]
        signal: Option<String>,
        /// `login_cancel` ended it (or the app did).
        cancelled: bool,
        /// A session target whose login exited 0: the session was restarted signed in.
        restarted: bool,
        /// Why that restart failed, when it did (the login itself succeeded).
        #[serde(skip_serializing_if = "Option::is_none")]
        restart_error: Option<IpcError>,
    },
}

struct Login {
    term: Interactive,
    cancelled: AtomicBool,
}

/// The running logins, by id.
#[derive(Default)]
pub struct Logins {
    open: Mutex<HashMap<String, Arc<Login>>>,
    next: AtomicU64,
}

impl Logins {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<Login>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn get(&self, id: &str) -> Result<Arc<Login>, IpcError> {
        self.lock().get(id).cloned().ok_or_else(|| {
            IpcError::InvalidInput(format!(
                "no login `{id}` is running (it has ended, or the window was reloaded): start the sign-in again"
            ))
        })
    }

    /// How many run (tests, diagnostics).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The root process of each running login (its supervisor's on Linux), for tests.
    pub fn pids(&self) -> Vec<u32> {
        self.lock().values().filter_map(|l| l.term.pid()).collect()
    }

    /// Cancels every login; returns a future that resolves once each has ended (or at once).
    fn cancel_all(&self) -> impl Future<Output = ()> + Send + use<> {
        let open = self.lock();
        let waits: Vec<_> = open
            .values()
            .map(|l| {
                l.cancelled.store(true, Ordering::SeqCst);
                l.term.kill();
                l.term.wait()
            })
            .collect();
        drop(open);
        async move {
            for w in waits {
                w.await;
            }
        }
    }
}

/// Ends every login and waits (at most [`END_WAIT`]) for their trees to end: the window went
/// away (closed, hidden in the tray, reloaded) or the app quits.
pub async fn end_all<R: Runtime>(app: &AppHandle<R>) {
    let Some(logins) = app.try_state::<Logins>() else {
        return;
    };
    let n = logins.len();
    if n == 0 {
        return;
    }
    tracing::info!(logins = n, "ending the running logins");
    if tokio::time::timeout(END_WAIT, logins.cancel_all())
        .await
        .is_err()
    {
        tracing::warn!("a login's program did not end in time; its supervisor goes on ending it");
    }
}

/// What the target resolves to: the agent's launch, its sign-in actions, the folder a login
/// runs in when the launch names none, and the session to restart.
struct Resolved {
    spec: LaunchSpec,
    actions: Vec<AuthAction>,
    folder: PathBuf,
    session: Option<String>,
}

async fn resolve_target<R: Runtime>(
    app: &AppHandle<R>,
    target: &LoginTarget,
) -> Result<Resolved, IpcError> {
    match target {
        LoginTarget::Session { session_id } => {
            let state = app.state::<AppState>();
            let registry = state.sessions.registry();
            let spec = registry.launch_spec(session_id)?;
            let info = registry.info(session_id)?;
            let thread = registry.snapshot(session_id)?;
            let actions = acp_desk_app::sign_in::offered_actions(&thread).ok_or_else(|| {
                IpcError::InvalidInput(format!(
                    "the agent of this session has not said how to sign in to it (it did not answer `initialize` with authMethods): sign in with {}'s own tools, then reconnect",
                    spec.name
                ))
            })?;
            Ok(Resolved {
                spec,
                actions,
                folder: info.folder,
                session: Some(session_id.clone()),
            })
        }
        LoginTarget::Agent { agent } => agent_actions(agent).await,
    }
}

/// An agent signed in from the Agents view: its launch, and its methods from a Check (a fresh
/// `initialize`; what the Agents view showed may be stale, and the window never says what to
/// run).
async fn agent_actions(agent: &str) -> Result<Resolved, IpcError> {
    let name = agent.to_owned();
    let spec = tauri::async_runtime::spawn_blocking(move || acp_desk_app::resolve_agent(&name))
        .await
        .map_err(|e| IpcError::task_failed("look the agent up", &e))??;
    let folder = home();
    let report = acp_desk_core::agents::check::check(&spec, &folder, Default::default()).await;
    if let Some(f) = &report.failure {
        return Err(IpcError::AgentFailed(format!(
            "{agent} could not be asked how to sign in: {}",
            f.message
        )));
    }
    let actions = check_actions(&report);
    Ok(Resolved {
        spec,
        actions,
        folder,
        session: None,
    })
}

/// The Check's methods as actions: each carries its classification (`how`).
fn check_actions(report: &acp_desk_core::agents::CheckReport) -> Vec<AuthAction> {
    report
        .auth_methods
        .iter()
        .map(|m| AuthAction {
            method_id: m.id.clone(),
            name: m.name.clone(),
            description: m.description.clone(),
            how: m.how.clone(),
        })
        .collect()
}

fn home() -> PathBuf {
    directories::BaseDirs::new()
        .map(|b| b.home_dir().to_path_buf())
        .unwrap_or_else(std::env::temp_dir)
}

/// `program arg…` for people: secret-looking args redacted, args with spaces quoted.
fn command_shown(command: &str, args: &[String]) -> String {
    let (args, _) = acp_desk_store::launch::redact_args(args);
    std::iter::once(command.to_owned())
        .chain(args)
        .map(|a| {
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || "'\"\\$`".contains(c)) {
                format!("'{}'", a.replace('\'', r"'\''"))
            } else {
                a
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn login_error(e: LoginError) -> IpcError {
    if e.is_keychain() {
        IpcError::KeychainUnavailable(e.to_string())
    } else {
        IpcError::InvalidInput(e.to_string())
    }
}

fn start_error(label: &str, e: InteractiveError) -> IpcError {
    match e {
        InteractiveError::Start(TerminalError::NotFound { .. }) => {
            IpcError::AgentUnavailable(format!(
                "the login `{label}` could not start: {e}. Install the agent's program, or fix its command in the settings"
            ))
        }
        InteractiveError::Start(TerminalError::BadCwd { .. }) => IpcError::InvalidInput(format!(
            "the login `{label}` could not start: {e}. Fix the agent's `cwd` in the settings"
        )),
        InteractiveError::BadSize { .. } => IpcError::InvalidInput(e.to_string()),
        _ => IpcError::Internal(format!("the login `{label}` could not start: {e}")),
    }
}

/// Starts the terminal login `method_id` of `target` on a pty of `cols`×`rows`; its output and
/// its end arrive on `output` ([`LoginFrame`]). Refused, saying why, when the method is not one
/// the agent offered, is not a terminal login (it goes through `authenticate`: Sign in), needs
/// consent that was not given, or a secret of the launch is missing.
#[tauri::command]
#[allow(clippy::too_many_arguments)] // one per IPC argument
pub async fn login_start<R: Runtime>(
    app: AppHandle<R>,
    target: LoginTarget,
    method_id: String,
    cols: u16,
    rows: u16,
    consent: bool,
    output: Channel<LoginFrame>,
) -> Result<LoginStarted, IpcError> {
    let resolved = resolve_target(&app, &target).await?;
    let action = resolved
        .actions
        .iter()
        .find(|a| a.method_id == method_id)
        .ok_or_else(|| {
            let offered: Vec<&str> = resolved
                .actions
                .iter()
                .map(|a| a.method_id.as_str())
                .collect();
            IpcError::InvalidInput(format!(
                "{} offers no sign-in method `{method_id}` (it offers: {}): choose one of those",
                resolved.spec.name,
                if offered.is_empty() {
                    "none".to_owned()
                } else {
                    offered.join(", ")
                }
            ))
        })?;
    let Some(spec) = auth::login_spec(action, &resolved.spec) else {
        return Err(IpcError::InvalidInput(format!(
            "`{}` is not a terminal login: {} {} (use its Sign in button, not the terminal)",
            action.name,
            resolved.spec.name,
            if matches!(action.how, auth::AuthHow::ApiKey { .. }) {
                "takes an API key, stored in the keychain"
            } else {
                "signs in through the agent itself"
            }
        )));
    };
    let shown = command_shown(&spec.command, &spec.args);
    if spec.differs_from_launch && !consent {
        return Err(IpcError::ConsentNeeded(format!(
            "signing in with `{}` runs `{shown}`, a program {} named that is not its own: agree to run it, then start the sign-in again",
            spec.label, resolved.spec.name
        )));
    }
    let label = spec.label.clone();
    let size = TermSize { cols, rows };
    let started = {
        let app = app.clone();
        let label = label.clone();
        let folder = resolved.folder.clone();
        tauri::async_runtime::spawn_blocking(move || {
            let keychain = app.state::<AppState>().keychain.clone();
            let login = auth::resolve_login(&spec, Some(keychain.as_ref())).map_err(login_error)?;
            Interactive::start(
                login.into_command(&folder, size),
                &TerminalOptions::default(),
            )
            .map_err(|e| start_error(&label, e))
        })
        .await
        .map_err(|e| IpcError::task_failed("start the login", &e))??
    };
    let (term, mut events) = started;
    let logins = app.state::<Logins>();
    let login_id = format!("login-{}", logins.next.fetch_add(1, Ordering::Relaxed) + 1);
    let login = Arc::new(Login {
        term,
        cancelled: AtomicBool::new(false),
    });
    logins.lock().insert(login_id.clone(), login.clone());
    // The method and the program only: args and env may hold what the user would not share.
    tracing::info!(login = %login_id, method = %method_id, agent = %resolved.spec.name, "login started: {}", spec_program(&shown));
    let session = resolved.session;
    let task_app = app.clone();
    let task_id = login_id.clone();
    tauri::async_runtime::spawn(async move {
        let mut status = None;
        while let Some(ev) = events.next().await {
            match ev {
                InteractiveEvent::Output(data) => {
                    if output.send(LoginFrame::Output { data }).is_err() {
                        // Nobody shows it any more: a login nobody sees must not run on.
                        login.cancelled.store(true, Ordering::SeqCst);
                        login.term.kill();
                    }
                }
                InteractiveEvent::Exited(s) => status = Some(s),
            }
        }
        task_app.state::<Logins>().lock().remove(&task_id);
        let status = status.unwrap_or_default();
        let cancelled = login.cancelled.load(Ordering::SeqCst);
        tracing::info!(login = %task_id, code = ?status.exit_code, signal = ?status.signal, cancelled, "login ended");
        let (mut restarted, mut restart_error) = (false, None);
        if status.exit_code == Some(0)
            && !cancelled
            && let Some(id) = &session
        {
            match restart_signed_in(&task_app, id).await {
                Ok(()) => restarted = true,
                Err(e) => restart_error = Some(e),
            }
        }
        let _ = output.send(LoginFrame::Exit {
            exit_code: status.exit_code,
            signal: status.signal,
            cancelled,
            restarted,
            restart_error,
        });
    });
    Ok(LoginStarted {
        login_id,
        label,
        command_shown: shown,
    })
}

/// The program's name alone, for the log.
fn spec_program(shown: &str) -> &str {
    shown.split(' ').next().unwrap_or_default()
}

/// The login signed the agent in (its token is where the agent keeps it): the session's agent
/// is ended if it runs and started again, continuing the conversation, and the prompt that hit
/// the login is sent once ready (a-app's `Registry::restart_signed_in`; no `authenticate`: a
/// terminal method is never passed to it).
async fn restart_signed_in<R: Runtime>(app: &AppHandle<R>, id: &str) -> Result<(), IpcError> {
    let state = app.state::<AppState>();
    state
        .sessions
        .registry()
        .restart_signed_in(id, None)
        .await?;
    Ok(())
}

/// Types `data` into the login (xterm.js's `onData`: keys as the terminal encodes them).
#[tauri::command]
pub fn login_input(
    logins: State<'_, Logins>,
    login_id: String,
    data: String,
) -> Result<(), IpcError> {
    logins
        .get(&login_id)?
        .term
        .write(data.as_bytes())
        .map_err(|e| IpcError::InvalidInput(e.to_string()))
}

/// The terminal's box changed size: the program sees the new size (SIGWINCH).
#[tauri::command]
pub fn login_resize(
    logins: State<'_, Logins>,
    login_id: String,
    cols: u16,
    rows: u16,
) -> Result<(), IpcError> {
    logins
        .get(&login_id)?
        .term
        .resize(TermSize { cols, rows })
        .map_err(|e| IpcError::InvalidInput(e.to_string()))
}

/// Ends the login and everything it started; its channel's `exit` frame says `cancelled`.
/// A login that already ended is no error (the user's Cancel raced its end).
#[tauri::command]
pub fn login_cancel(logins: State<'_, Logins>, login_id: String) -> Result<(), IpcError> {
    if let Some(login) = logins.lock().get(&login_id) {
        login.cancelled.store(true, Ordering::SeqCst);
        login.term.kill();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_cross_as_the_window_writes_them() {
        let t: LoginTarget =
            serde_json::from_value(serde_json::json!({"sessionId": "s1"})).unwrap();
        assert_eq!(
            t,
            LoginTarget::Session {
                session_id: "s1".into()
            }
        );
        let t: LoginTarget = serde_json::from_value(serde_json::json!({"agent": "demo"})).unwrap();
        assert_eq!(
            t,
            LoginTarget::Agent {
                agent: "demo".into()
            }
        );
        assert!(serde_json::from_value::<LoginTarget>(serde_json::json!({})).is_err());
    }

    #[test]
    fn frames_cross_as_kind_and_camel_case() {
        let f = LoginFrame::Exit {
            exit_code: Some(1),
            signal: None,
            cancelled: false,
            restarted: false,
            restart_error: None,
        };
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            serde_json::json!({"kind": "exit", "exitCode": 1, "cancelled": false, "restarted": false})
        );
    }

    #[test]
    fn the_command_shown_quotes_and_redacts() {
        let args = vec![
            "/opt/my agent/cli.js".to_owned(),
            "--api-key".to_owned(),
            "sk-live-abcdef".to_owned(),
            "login".to_owned(),
        ];
        let shown = command_shown("node", &args);
        assert!(
            shown.starts_with("node '/opt/my agent/cli.js' --api-key "),
            "{shown}"
        );
        assert!(!shown.contains("sk-live-abcdef"), "{shown}");
        assert!(shown.ends_with(" login"), "{shown}");
    }
}
