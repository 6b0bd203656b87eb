//! Check: does this agent start and speak ACP? For any [`LaunchSpec`]: start it, run
//! `initialize`, and report who answered (agent name, title, version), the protocol version,
//! its capabilities as it sent them, its auth methods and how long each step took; or, when it
//! fails, a reason the user can act on ([`CheckFailureKind`]) with the fix.
//!
//! # Why through the session engine, not a second `initialize`
//!
//! Check starts a session with [`Opening::ListOnly`] (`initialize`, nothing else) through
//! [`session::start_traced`], the same path every session takes: the agent is spawned by
//! `process.rs` under `acp-desk-supervisor` (rule 8: its whole tree ends with the session),
//! spoken to only by `jsonrpc.rs` (rule 2), and `initialize` is the one the handshake sends (the
//! same client capabilities and client info a real session advertises, so what Check reports is
//! what a session will get). What Check needs beyond a session's ready/failed answer, the engine
//! records in a [`StartTrace`]: the time of each step, the `initialize` result as the agent sent
//! it (so `agentCapabilities` is reported as received, not as we parsed it), the lines on stdout
//! that were not JSON (the JSON-RPC peer skips them; the owner counts them and keeps the first),
//! and how a failed start ended (its exit and last stderr lines, the time limit, an answer that
//! is not ACP). A second, hand-written initialize path would have to repeat the supervisor, the
//! framing, the timeouts and the classification, and could drift from what sessions do.
//!
//! # Bounded, and nothing left behind
//!
//! The wait for `initialize` is [`CheckLimits::initialize`] (the session's start timeout);
//! ending the agent then takes at most the process grace periods Check sets
//! ([`CHECK_PROCESS`]): about `initialize` + 6 s in the worst case (an agent that ignores stdin
//! EOF and SIGTERM). Whether it succeeded or not, the session is closed and its agent's whole
//! process tree has ended before [`check`] returns (the engine waits for the supervisor, which
//! exits only once the tree is gone); Check then confirms the process is gone (rule 37).

use std::path::Path;
use std::time::Duration;

use agent_client_protocol_schema::v1 as acp;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;

use super::{CapabilityDifference, LaunchSpec};
use crate::audit::AuditKind;
use crate::process::ProcessOptions;
use crate::session::{self, EngineError, Opening, SessionOptions, SpawnFailure, StartTrace};

/// How long Check waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckLimits {
    /// For the answer to `initialize`, from when it is sent. Generous by default: `npx` on a
    /// cold cache downloads the agent first.
    pub initialize: Duration,
}

impl Default for CheckLimits {
    fn default() -> Self {
        Self {
            initialize: Duration::from_secs(20),
        }
    }
}

/// How Check ends the agent: shorter graces than a session's, since a Check has nothing for the
/// agent to save.
pub const CHECK_PROCESS: ProcessOptions = ProcessOptions {
    eof_grace: Duration::from_millis(300),
    term_grace: Duration::from_millis(1000),
};

/// After the session has ended, how long Check waits to see the agent's process gone before it
/// reports that it is not.
const GONE_WAIT: Duration = Duration::from_secs(3);

/// What Check found. `ok`: the agent started and answered `initialize` in a protocol version
/// ACP Desk speaks; otherwise `failure` says why.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckReport {
    /// The agent as it was asked for (its launch name: `demo`, a settings name, the command).
    pub agent: String,
    pub ok: bool,
    /// The steps taken, in order (`start`, `initialize`); a failed step is the last.
    pub steps: Vec<CheckStep>,
    /// `agentInfo.name` of its `initialize` answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_name: Option<String>,
    /// `agentInfo.title`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_title: Option<String>,
    /// `agentInfo.version`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
    /// The protocol version it answered with (ACP Desk speaks 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<u16>,
    /// `agentCapabilities` exactly as the agent sent them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Value>,
    /// `authMethods`: how the agent lets users sign in.
    pub auth_methods: Vec<AuthMethodInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<CheckFailure>,
    /// Between the capabilities its manifest declares and those it reported (a manifest agent;
    /// filled by the caller that knows the manifest, `resolve::check_agent`).
    pub differences: Vec<CapabilityDifference>,
    /// What worked but is worth fixing (it printed non-JSON text on stdout, which sessions skip).
    pub warnings: Vec<String>,
}

/// One step of a Check and how long it took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckStep {
    /// `start` (starting the process) or `initialize` (from sending it to the answer, or to
    /// the failure).
    pub name: String,
    pub millis: u64,
    pub ok: bool,
}

/// One of the agent's `authMethods`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthMethodInfo {
    pub id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// How it is carried out ([`crate::auth::classify`]): what the Agents view and
    /// `agents check` offer as the sign-in action.
    pub how: crate::auth::AuthHow,
}

/// Why a Check failed, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckFailure {
    pub kind: CheckFailureKind,
    /// What happened, with what the agent printed when it matters (its first non-JSON line,
    /// its last stderr lines).
    pub message: String,
    /// What to do.
    pub fix: String,
}

/// The kind of a Check failure, for front ends to show (kebab case on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CheckFailureKind {
    /// The program does not exist (at the path given, or on PATH).
    NotInstalled,
    /// The program exists but may not be run (no execute permission, a folder).
    NotExecutable,
    /// The agent exited (a code or a signal) before answering `initialize`.
    Exited,
    /// It printed text that is not JSON-RPC on stdout instead of answering.
    NotJson,
    /// No answer to `initialize` within [`CheckLimits::initialize`].
    NoAnswer,
    /// It answered with a protocol version ACP Desk does not speak.
    ProtocolVersion,
    /// Its answer is not a valid ACP `initialize` answer.
    InvalidAnswer,
    /// It answered `initialize` with an error.
    Refused,
    /// Anything else (the message says what).
    Other,
}

impl CheckReport {
    /// Not passed, nothing found yet.
    fn nothing_yet(agent: &str) -> Self {
        CheckReport {
            agent: agent.to_owned(),
            ok: false,
            steps: Vec::new(),
            agent_name: None,
            agent_title: None,
            agent_version: None,
            protocol_version: None,
            capabilities: None,
            auth_methods: Vec::new(),
            failure: None,
            differences: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// For a caller that knows how to install the agent (a catalog entry, the registry): a
    /// not-installed failure's fix becomes that.
    pub fn suggest_install(&mut self, how: &str) {
        if let Some(f) = self.failure.as_mut()
            && f.kind == CheckFailureKind::NotInstalled
        {
            f.fix = how.to_owned();
        }
    }
}

/// Checks `spec` in `cwd` (where the agent runs, as a session in that folder would). Never
/// panics on anything the agent does; every failure is in the report. The agent's process
/// tree has ended when this returns.
pub async fn check(spec: &LaunchSpec, cwd: &Path, limits: CheckLimits) -> CheckReport {
    if !cwd.is_dir() {
        // Else the spawn's "no such file" would read as a missing agent.
        let mut report = CheckReport::nothing_yet(&spec.name);
        report.failure = Some(CheckFailure {
            kind: CheckFailureKind::Other,
            message: format!(
                "The folder to check the agent in, {}, is not a folder that exists.",
                cwd.display()
            ),
            fix: "Check it in a folder that exists.".into(),
        });
        return report;
    }
    let mut opts = SessionOptions::new(cwd);
    opts.opening = Opening::ListOnly;
    opts.start_timeout = limits.initialize;
    opts.process = CHECK_PROCESS;
    // A Check is no session of the user's: nothing remembered, audited or watched.
    opts.rules_file = None;
    opts.audit = AuditKind::Off;
    opts.watch_roots = false;
    opts.turn_idle_timeout = None;
    // The events are not Check's business (the trace has what it needs), but the owner waits on
    // a full channel: drain it until the session drops its end.
    let (tx, mut rx) = mpsc::channel(16);
    tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let (result, trace) = session::start_traced(spec.clone(), opts, tx).await;
    let mut report = CheckReport::nothing_yet(&spec.name);
    report.steps = steps(&trace);
    report.protocol_version = trace.protocol_version;
    if let Some(answer) = &trace.initialize_result {
        describe_answer(answer, &mut report);
    }
    match result {
        Ok(handle) => {
            handle.close().await;
            report.ok = true;
            if let Some(first) = &trace.first_not_json {
                report.warnings.push(format!(
                    "It printed {} line(s) on stdout that are not JSON-RPC (the first: «{first}»); \
                     sessions skip them, but a line that happens to be JSON would break the \
                     protocol. Send logs and banners to stderr.",
                    trace.not_json_lines
                ));
            }
        }
        Err(e) => report.failure = Some(failure(spec, &e, &trace, limits)),
    }
    if let Some(pid) = trace.pid
        && !gone(pid).await
    {
        // The engine waited for it to end: this is a bug of ours, said rather than hidden.
        report.ok = false;
        report.failure.get_or_insert(CheckFailure {
            kind: CheckFailureKind::Other,
            message: format!(
                "The agent's process ({pid}) was still running {} s after the check ended.",
                GONE_WAIT.as_secs()
            ),
            fix: "This is a bug in ACP Desk: please report it. End the process by hand.".into(),
        });
    }
    if let Some(f) = &report.failure {
        // Not the message: it may hold the agent's output (rule 24).
        tracing::info!(agent = %spec.name, kind = ?f.kind, "check failed");
    }
    report
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn steps(trace: &StartTrace) -> Vec<CheckStep> {
    let mut steps = vec![CheckStep {
        name: "start".into(),
        millis: trace.spawn.map(millis).unwrap_or(0),
        ok: trace.spawn.is_some(),
    }];
    if let Some(d) = trace.initialize {
        let answered_well = trace.initialize_result.is_some()
            && trace.invalid_answer.is_none()
            && trace.protocol_version == Some(1);
        steps.push(CheckStep {
            name: "initialize".into(),
            millis: millis(d),
            ok: answered_well,
        });
    }
    steps
}

/// Who answered, from the answer as sent: typed where it is valid ACP, else what can be read.
fn describe_answer(answer: &Value, report: &mut CheckReport) {
    report.capabilities = answer.get("agentCapabilities").cloned();
    match serde_json::from_value::<acp::InitializeResponse>(answer.clone()) {
        Ok(resp) => {
            if let Some(info) = resp.agent_info {
                report.agent_name = Some(info.name);
                report.agent_title = info.title;
                report.agent_version = Some(info.version);
            }
            report.auth_methods = crate::auth::classify(&resp.auth_methods)
                .into_iter()
                .map(|a| AuthMethodInfo {
                    id: a.method_id,
                    name: a.name,
                    description: a.description,
                    how: a.how,
                })
                .collect();
        }
        Err(_) => {
            let info = answer.get("agentInfo");
            let field = |k: &str| {
                info.and_then(|i| i.get(k))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            report.agent_name = field("name");
            report.agent_title = field("title");
            report.agent_version = field("version");
        }
    }
}

/// A text of the agent's, cut for a message.
fn cut(s: &str, chars: usize) -> String {
    let mut out: String = s.chars().take(chars).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

/// How an exit reads: "exited with code 3" / "was killed by signal 9".
fn exit_words(exit: &crate::events::AgentExit) -> String {
    match (exit.code, exit.signal) {
        (_, Some(sig)) => format!("was killed by signal {sig}"),
        (Some(code), None) => format!("exited with code {code}"),
        (None, None) => "exited".into(),
    }
}

/// The last stderr lines, for a message.
fn stderr_lines(exit: &crate::events::AgentExit) -> String {
    let tail = &exit.stderr_tail;
    if tail.is_empty() {
        return " It wrote nothing on stderr.".into();
    }
    let last: Vec<&str> = tail[tail.len().saturating_sub(10)..]
        .iter()
        .map(String::as_str)
        .collect();
    format!("\nLast lines of its error output:\n{}", last.join("\n"))
}

/// How the wait for `initialize` ended, after the agent printed non-JSON text.
fn and_then(trace: &StartTrace, limits: CheckLimits) -> String {
    match &trace.exit {
        Some(exit) => format!(", then {}.{}", exit_words(exit), stderr_lines(exit)),
        None if trace.timed_out => format!(
            ", and did not answer initialize within {}.",
            secs(limits.initialize)
        ),
        None => ".".into(),
    }
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

/// What the runner is, for "what to install" when the program is missing.
fn install_hint(command: &str) -> Option<&'static str> {
    let program = Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(command);
    Some(match program {
        "npx" | "node" | "npm" => {
            "Install Node.js (it brings node, npm and npx: https://nodejs.org), then check again."
        }
        "uvx" | "uv" => {
            "Install uv (it brings uvx: https://docs.astral.sh/uv/getting-started/installation/), then check again."
        }
        "python" | "python3" => "Install Python 3, then check again.",
        _ => return None,
    })
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn failure(
    spec: &LaunchSpec,
    e: &EngineError,
    trace: &StartTrace,
    limits: CheckLimits,
) -> CheckFailure {
    let command = &spec.command;
    let on_path = Path::new(command).components().count() == 1;
    if let EngineError::Spawn(message) = e {
        let kind = trace.spawn_failure.unwrap_or(SpawnFailure::Other);
        return match kind {
            SpawnFailure::NotFound => CheckFailure {
                kind: CheckFailureKind::NotInstalled,
                message: if on_path {
                    format!("`{command}` is not installed: it is not on PATH.")
                } else {
                    format!("`{command}` does not exist.")
                },
                fix: install_hint(command).map_or_else(
                    || {
                        if on_path {
                            format!(
                                "Install the agent so that `{command}` is on PATH, or give the full path to its program."
                            )
                        } else {
                            "Check the path (a typo, or the agent was moved or uninstalled), or install the agent again.".into()
                        }
                    },
                    str::to_owned,
                ),
            },
            SpawnFailure::NotExecutable => CheckFailure {
                kind: CheckFailureKind::NotExecutable,
                message: format!("`{command}` exists but may not be run: {message}"),
                fix: "Make it executable (`chmod +x`), or start it through its interpreter (`node FILE`, `python3 FILE`). A folder is not a program: give the program inside it.".into(),
            },
            SpawnFailure::NoSupervisor => CheckFailure {
                kind: CheckFailureKind::Other,
                message: message.clone(),
                fix: "Reinstall ACP Desk (developers: `cargo build --workspace --bins`), or set ACP_DESK_SUPERVISOR to the supervisor's path.".into(),
            },
            SpawnFailure::Other => CheckFailure {
                kind: CheckFailureKind::Other,
                message: message.clone(),
                fix: "Check the command and that it runs in a terminal.".into(),
            },
        };
    }
    let answered = trace.initialize_result.is_some() || trace.initialize_error.is_some();
    if let (Some(first), false) = (&trace.first_not_json, answered) {
        return CheckFailure {
            kind: CheckFailureKind::NotJson,
            message: format!(
                "The agent printed text that is not JSON-RPC on stdout instead of answering initialize (the first of {} such line(s): «{first}»){}",
                trace.not_json_lines,
                and_then(trace, limits)
            ),
            fix: "Check that the command starts the agent's ACP mode (often a flag such as `--acp` or a subcommand `acp`): this looks like a program printing for people. If it is the ACP mode, something else prints on stdout first (a shell profile, a wrapper script, a banner): only ACP may go to stdout, logs belong on stderr.".into(),
        };
    }
    if let EngineError::SecretUnavailable { name, .. } = e {
        // Nothing was started: the agent's launch names a secret the keychain does not give.
        return CheckFailure {
            kind: CheckFailureKind::Other,
            message: format!("{}.", capitalized(&e.to_string())),
            fix: format!(
                "Store it with `acp-desk-cli secret set {name}` or in the window's Secrets (or fix the `{{\"secret\": ...}}` value in the settings), then check again."
            ),
        };
    }
    if let EngineError::AuthRequired(_) = e {
        // Only a sign-in during the start fails a Check this way (it opens no session): the
        // stored API key was refused, or could not be used.
        return CheckFailure {
            kind: CheckFailureKind::Other,
            message: capitalized(&e.to_string()),
            fix: format!(
                "Enter the agent's API key again (Sign in… in the Agents view, or `acp-desk-cli auth {}`), then check again.",
                spec.name
            ),
        };
    }
    if let EngineError::ProtocolVersion(v) = e {
        return CheckFailure {
            kind: CheckFailureKind::ProtocolVersion,
            message: format!(
                "The agent speaks ACP protocol version {v}; ACP Desk speaks version 1."
            ),
            fix: "Use a version of the agent that speaks ACP protocol version 1, or an ACP Desk that speaks its version.".into(),
        };
    }
    if let Some(why) = &trace.invalid_answer {
        let answer = trace
            .initialize_result
            .as_ref()
            .map(|v| cut(&v.to_string(), 200))
            .unwrap_or_default();
        return CheckFailure {
            kind: CheckFailureKind::InvalidAnswer,
            message: format!(
                "The agent's answer to initialize is not valid ACP ({why}): {answer}"
            ),
            fix: "This program may not be an ACP agent, or a version that does not follow ACP's schema: check the command, update the agent, or report this to its authors.".into(),
        };
    }
    if let Some(err) = &trace.initialize_error {
        let code = i32::from(err.code);
        return CheckFailure {
            kind: CheckFailureKind::Refused,
            message: format!(
                "The agent refused initialize: {} ({code}).",
                cut(&err.message, 500)
            ),
            fix: if code == -32000 {
                "Sign in with the agent's own command (run it in a terminal), then check again."
                    .into()
            } else {
                "Read the agent's reason above; run the command in a terminal to see more.".into()
            },
        };
    }
    if let Some(exit) = &trace.exit
        && let Some(refusal) = supervisor_refusal(exit)
    {
        // The supervisor ran, the agent's program never did: the OS's reason decides.
        let (kind, fix) = if refusal.contains("Permission denied") {
            (
                CheckFailureKind::NotExecutable,
                "Make it executable (`chmod +x`), or start it through its interpreter.",
            )
        } else if refusal.contains("No such file") {
            (
                CheckFailureKind::NotInstalled,
                "The program is there but what runs it is not: install the interpreter its first line (`#!…`) names, or start it through an interpreter you have (`node FILE`, `python3 FILE`).",
            )
        } else {
            (
                CheckFailureKind::Other,
                "Check the command and that it runs in a terminal.",
            )
        };
        return CheckFailure {
            kind,
            message: format!("The agent's program could not be run: {refusal}"),
            fix: fix.into(),
        };
    }
    if let Some(exit) = &trace.exit {
        return CheckFailure {
            kind: CheckFailureKind::Exited,
            message: format!(
                "The agent {} before answering initialize.{}",
                exit_words(exit),
                stderr_lines(exit)
            ),
            fix: "Read its error output above; run the command in a terminal to see all of it (a missing setting, a sign-in, a wrong argument).".into(),
        };
    }
    if trace.timed_out {
        let npx = ["npx", "uvx"]
            .iter()
            .any(|r| Path::new(command).file_name().is_some_and(|n| n == *r));
        return CheckFailure {
            kind: CheckFailureKind::NoAnswer,
            message: format!(
                "The agent did not answer initialize within {}.",
                secs(limits.initialize)
            ),
            fix: if npx {
                "npx/uvx may still be downloading the agent on first use: check again once it has (the CLI takes a longer limit: `--timeout 300`). If it still does not answer, run the command in a terminal to see what it waits for.".into()
            } else {
                "It may be waiting for something (a sign-in prompt, a first-run setup), or this is not its ACP mode: run the command in a terminal to see, or give it more time (the CLI: `--timeout SECS`).".into()
            },
        };
    }
    CheckFailure {
        kind: CheckFailureKind::Other,
        message: e.to_string(),
        fix: "Run the command in a terminal to see what it does.".into(),
    }
}

/// The supervisor's own line when the OS refused to run the agent's program (it then exits
/// `EXIT_SPAWN_FAILED`), without its prefix: "`/path`: Permission denied (os error 13)".
fn supervisor_refusal(exit: &crate::events::AgentExit) -> Option<String> {
    if exit.code != Some(crate::supervisor::EXIT_SPAWN_FAILED) {
        return None;
    }
    exit.stderr_tail.iter().rev().find_map(|l| {
        l.strip_prefix(crate::supervisor::SPAWN_FAILED_LINE)
            .map(|rest| rest.trim().to_owned())
    })
}

/// Whether the process `pid` (ours: the supervisor on Linux) is gone, waiting up to
/// [`GONE_WAIT`]. A zombie is gone (PID 1 here may never reap it).
async fn gone(pid: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        let deadline = tokio::time::Instant::now() + GONE_WAIT;
        while crate::process::is_running(pid) {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        true
    }
    #[cfg(not(target_os = "linux"))]
    {
        // Elsewhere the engine killed the process group when it ended the session; there is
        // no /proc to look in.
        let _ = pid;
        true
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use super::*;
    use crate::secrets::{EnvValue, SecretRef};

    #[tokio::test]
    async fn an_agent_whose_env_secret_is_not_available_is_not_started_and_the_fix_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let spec = LaunchSpec {
            name: "keyed".into(),
            command: "sh".into(),
            args: vec!["-c".into(), format!("touch '{}'", marker.display())],
            env: vec![(
                "API_KEY".into(),
                EnvValue::Secret(SecretRef::new("keyed-key").unwrap()),
            )],
            cwd: None,
        };
        // No keychain in this test process (nothing called `set_default_keychain`).
        let report = check(&spec, dir.path(), CheckLimits::default()).await;
        assert!(!report.ok);
        let f = report.failure.unwrap();
        assert_eq!(f.kind, CheckFailureKind::Other);
        assert!(
            f.message.starts_with(
                "The agent was not started: its env API_KEY needs the secret `keyed-key`"
            ),
            "{}",
            f.message
        );
        assert!(
            f.fix.contains("acp-desk-cli secret set keyed-key"),
            "{}",
            f.fix
        );
        assert!(!marker.exists(), "nothing ran");
    }
}
