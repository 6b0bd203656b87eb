//! Agents: every place one can be defined, and how to start it.
//!
//! - [`catalog`]: the built-in agents, one table row each (launch, detection, install).
//! - [`detect`]: whether a program is installed (PATH, an npm global package, a known install
//!   folder), cached by program path and mtime.
//! - the user's settings (`agent_servers`, [`crate::settings`]).
//! - [`manifest`]: AIP-44 `ACP.md` manifests under the config folder's `agents/`.
//! - [`registry`], [`install`]: the public ACP registry (the shipped snapshot or an imported
//!   file) and installing its binaries into the data folder.
//! - [`check`](mod@check): start an agent, run `initialize`, say what answered or why nothing did.
//! - [`resolve`](mod@resolve): every source joined, with precedence (settings, then manifests, then the
//!   registry, then the built-ins; an installed built-in beats a registry download of the same
//!   id), the listing a front end shows, the default-agent rule and `check_agent`.
//!
//! Nothing here blocks an async thread by itself: the functions that read files or look
//! programs up say "Blocking", and the shell runs them on the blocking pool.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::paths;
use crate::process::sibling_executable;
use crate::secrets::{EnvValue, SecretRef};

pub mod catalog;
pub mod check;
pub mod detect;
pub mod install;
pub mod manifest;
pub mod problem;
pub mod registry;
pub mod resolve;
pub use check::{
    AuthMethodInfo, CheckFailure, CheckFailureKind, CheckLimits, CheckReport, CheckStep, check,
};
pub use problem::{CapabilityDifference, ConfigProblem, ProblemSeverity};
pub use resolve::{Resolved, check_agent, default_for_new_sessions, listing, resolve_in};

/// Where `agent_servers` entries are defined; re-exported because front ends name it here.
pub use crate::settings::AgentServer;

/// How to start one agent. `Debug` shows env names only: values may be secrets (a failed
/// `assert_eq!` or a `?spec` in a log must not print them).
#[derive(Clone, PartialEq, Eq)]
pub struct LaunchSpec {
    /// Our name for it: `demo`, `claude`, a settings key, or the command itself.
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    /// Merged over the user's environment. A `{"secret": REF}` value of the settings is
    /// [`EnvValue::Secret`]: `session::start` reads it from the keychain before the spawn
    /// ([`LaunchSpec::secret_env`]); nothing else ever holds its text.
    pub env: Vec<(String, EnvValue)>,
    /// Working directory of the process (defaults to the session's folder).
    pub cwd: Option<PathBuf>,
}

impl std::fmt::Debug for LaunchSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LaunchSpec")
            .field("name", &self.name)
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &EnvNames(self.env.iter().map(|(k, _)| k.as_str())))
            .field("cwd", &self.cwd)
            .finish()
    }
}

impl LaunchSpec {
    /// The variables whose value is a keychain secret, by name.
    pub fn secret_env(&self) -> impl Iterator<Item = (&str, &SecretRef)> {
        self.env.iter().filter_map(|(k, v)| match v {
            EnvValue::Secret(r) => Some((k.as_str(), r)),
            EnvValue::Plain(_) => None,
        })
    }

    /// The env as a person may see it: `NAME` for a value, `NAME={secret: REF}` for a secret
    /// (never a value).
    pub fn env_shown(&self) -> Vec<String> {
        self.env
            .iter()
            .map(|(k, v)| match v {
                EnvValue::Plain(_) => k.clone(),
                EnvValue::Secret(r) => format!("{k}={{secret: {r}}}"),
            })
            .collect()
    }
}

impl From<&str> for EnvValue {
    fn from(text: &str) -> Self {
        EnvValue::Plain(text.to_owned())
    }
}

impl From<String> for EnvValue {
    fn from(text: String) -> Self {
        EnvValue::Plain(text)
    }
}

/// Prints `{NAME: <hidden>, ...}`: for the `Debug` of anything holding env values or headers.
pub struct EnvNames<I>(pub I);

impl<'a, I: Iterator<Item = &'a str> + Clone> std::fmt::Debug for EnvNames<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.clone().map(|k| (k, format_args!("<hidden>"))))
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(
        "unknown agent `{0}`. Known agents: {1}. Add it to `agent_servers` in {2}, or use --agent-command."
    )]
    Unknown(String, String, String),
    #[error(
        "the demo agent (acp-desk-demo-agent) was not found next to this program; build it with `cargo build -p acp-desk-demo-agent`, or set ACP_DESK_DEMO_AGENT to its path"
    )]
    DemoMissing,
    #[error("could not split the agent command `{0}` into words: {1}")]
    BadCommand(String, String),
    #[error("the agent command is empty")]
    EmptyCommand,
    /// The agent is defined, but its definition has errors: the first is named (all of them
    /// are in the listing).
    #[error("the agent `{name}` cannot be started: {problem}")]
    Invalid {
        name: String,
        problem: Box<ConfigProblem>,
    },
    /// The agent is known but cannot be started as it is (not installed, no build for this
    /// platform, a transport we do not speak): `reason` says what to do.
    #[error("the agent `{name}` cannot be started: {reason}")]
    Unavailable { name: String, reason: String },
}

/// Where an agent definition came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AgentSource {
    /// The demo agent and the built-in catalog ([`catalog::BUILTIN`]).
    Builtin,
    /// The public ACP registry (the shipped snapshot, or a file the user imported).
    Registry,
    /// The user's `agent_servers` settings.
    Settings,
    /// An AIP-44 `ACP.md` under the config folder's `agents/`.
    Manifest,
}

/// Whether an agent can be started, and if not, why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AgentStatus {
    /// Its program was found.
    Found,
    /// Its runner (npx, uvx) was found; the package is fetched on first use.
    Downloads,
    /// Its program was not found: `install_command` / `hint` say how to get it.
    Missing,
    /// A registry binary for this platform, installable with Install.
    NotInstalled,
    /// No build for this platform.
    Unavailable,
    /// A manifest agent we cannot drive (websocket only, a `client` manifest).
    Unsupported,
    /// Its definition has errors: see `problems`.
    Invalid,
}

/// One agent a front end can offer. Env VALUES are never here (they may be secrets): names only.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentEntry {
    /// The name `--agent` and [`resolve_in`] take.
    pub id: String,
    /// For display.
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The source [`resolve_in`] uses for this id.
    pub source: AgentSource,
    /// Other sources that define the same id (the listing shows one entry per id).
    pub also_defined_in: Vec<AgentSource>,
    /// The settings or manifest file, or `ACP registry snapshot <date> (<commit>)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// The command line, for display (program and arguments).
    pub command: String,
    /// The names of the variables its launch sets (never their values); one whose value is a
    /// keychain secret as `NAME={secret: REF}` ([`LaunchSpec::env_shown`]).
    pub env_names: Vec<String>,
    pub status: AgentStatus,
    /// What to do to make it work, or what to expect on first use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// A command to copy that installs it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub install_command: Option<String>,
    /// A registry binary ACP Desk can download and install (the Install button).
    pub installable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manifest_file: Option<String>,
    /// What is wrong with its definition (errors make it `invalid`; warnings do not).
    pub problems: Vec<ConfigProblem>,
}

/// Every agent a front end can offer, and which one to preselect.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentListing {
    /// The demo agent first, then the settings entries in the file's order, then manifests,
    /// then the built-ins, then the registry.
    pub agents: Vec<AgentEntry>,
    /// For new sessions when the window has no last choice ([`default_for_new_sessions`]).
    pub default_agent: String,
    /// Why that one, in words ("default_agent in settings", "first agent_servers entry", ...).
    pub default_reason: String,
    pub settings_file: String,
    /// Every problem of every source (settings, manifests, registry), to show where the user
    /// looks; an agent's own problems are also in its entry.
    pub problems: Vec<ConfigProblem>,
    /// The registry in use (the snapshot, or an imported file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registry: Option<registry::RegistryInfo>,
}

impl AgentListing {
    pub fn get(&self, id: &str) -> Option<&AgentEntry> {
        self.agents.iter().find(|a| a.id == id)
    }
}

/// Where agents are looked for. Tests point every part at temporary folders; nothing here reads
/// the process environment once built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sources {
    /// The settings file (`agent_servers`, `default_agent`).
    pub settings_file: PathBuf,
    /// The config folder (manifests under `agents/<name>/ACP.md`).
    pub config_dir: PathBuf,
    /// The data folder (an imported registry file, installed registry binaries).
    pub data_dir: PathBuf,
    /// The `PATH` programs are looked up on; `None`: the process's.
    pub path: Option<OsString>,
    /// The home folder, for known install folders (`~/.local/bin`, `~/.opencode/bin`); `None`:
    /// the user's.
    pub home: Option<PathBuf>,
    /// The npm global `node_modules` folder (what `npm root -g` prints); `None`: asked of npm
    /// once per PATH (cached), when npm is on the PATH.
    pub npm_root: Option<PathBuf>,
}

impl Sources {
    /// The user's own folders and the process's PATH.
    pub fn default_for_user() -> Sources {
        Sources {
            settings_file: paths::settings_file(),
            config_dir: paths::config_dir(),
            data_dir: paths::data_dir(),
            path: None,
            home: None,
            npm_root: None,
        }
    }

    /// Everything under `root` (`config/settings.json`, `config/`, `data/`, `home/`,
    /// `npm/`), with `path` as the PATH: a world of its own, for tests.
    pub fn isolated(root: &std::path::Path, path: OsString) -> Sources {
        Sources {
            settings_file: root.join("config").join("settings.json"),
            config_dir: root.join("config"),
            data_dir: root.join("data"),
            path: Some(path),
            home: Some(root.join("home")),
            npm_root: Some(root.join("npm")),
        }
    }
}

/// The demo agent's executable: `ACP_DESK_DEMO_AGENT`, else next to the running program.
pub fn demo_agent_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ACP_DESK_DEMO_AGENT") {
        return Some(PathBuf::from(p));
    }
    sibling_executable("acp-desk-demo-agent")
}

pub fn demo_agent() -> Result<LaunchSpec, AgentError> {
    let path = demo_agent_path().ok_or(AgentError::DemoMissing)?;
    Ok(LaunchSpec {
        name: "demo".into(),
        command: path.to_string_lossy().into_owned(),
        args: Vec::new(),
        env: Vec::new(),
        cwd: None,
    })
}

/// Splits a command line into words like a POSIX shell would (quotes, escapes); no shell runs.
pub fn from_command_line(line: &str) -> Result<LaunchSpec, AgentError> {
    let words =
        shell_words::split(line).map_err(|e| AgentError::BadCommand(line.into(), e.to_string()))?;
    let mut words = words.into_iter();
    let command = words.next().ok_or(AgentError::EmptyCommand)?;
    Ok(LaunchSpec {
        name: command.clone(),
        command,
        args: words.collect(),
        env: Vec::new(),
        cwd: None,
    })
}

/// Resolves `--agent NAME` over every source of the user's folders (see [`resolve_in`]).
/// Blocking (reads the settings, manifests and registry, looks programs up).
pub fn resolve(name: &str) -> Result<LaunchSpec, AgentError> {
    resolve_in(&Sources::default_for_user(), name).map(|r| r.spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_split_like_a_shell() {
        let spec = from_command_line(r#"node "my agent.mjs" --flag='a b' x\ y"#).unwrap();
        assert_eq!(spec.command, "node");
        assert_eq!(spec.args, vec!["my agent.mjs", "--flag=a b", "x y"]);
        assert!(matches!(
            from_command_line("node 'unterminated"),
            Err(AgentError::BadCommand(..))
        ));
        assert!(matches!(
            from_command_line("   "),
            Err(AgentError::EmptyCommand)
        ));
    }
}
