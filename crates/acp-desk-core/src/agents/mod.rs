//! Agent definitions resolved to launch specs: the demo agent, a small built-in catalog, the
//! user's `agent_servers` settings (Zed's shape), and ad-hoc command lines.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::paths;
use crate::process::sibling_executable;
use crate::settings::{self, Settings, SettingsError};

pub mod manifest;
pub mod problem;
pub use problem::{CapabilityDifference, ConfigProblem, ProblemSeverity};

/// Where `agent_servers` entries are defined; re-exported because front ends name it here.
pub use crate::settings::AgentServer;

/// How to start one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchSpec {
    /// Our name for it: `demo`, `claude`, a settings key, or the command itself.
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    /// Merged over the user's environment.
    pub env: Vec<(String, String)>,
    /// Working directory of the process (defaults to the session's folder).
    pub cwd: Option<PathBuf>,
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
    #[error("could not read the settings file {0}: {1}")]
    Settings(String, String),
}

/// Built-in agents, launched as their projects document (shared/notes/real-agents.md).
pub const CATALOG: &[(&str, &str, &[&str])] = &[
    (
        "claude",
        "npx",
        &["-y", "@agentclientprotocol/claude-agent-acp"],
    ),
    ("codex", "npx", &["-y", "@agentclientprotocol/codex-acp"]),
    ("gemini", "gemini", &["--acp"]),
    ("goose", "goose", &["acp"]),
    ("opencode", "opencode", &["acp"]),
];

/// How to get each catalog agent, for people who have not installed it yet.
pub const INSTALL_HINTS: &[(&str, &str)] = &[
    (
        "claude",
        "Needs Node.js: npx downloads @agentclientprotocol/claude-agent-acp on first use. Sign in once with `claude` (Claude Code) or set ANTHROPIC_API_KEY.",
    ),
    (
        "codex",
        "Needs Node.js: npx downloads @agentclientprotocol/codex-acp on first use. Sign in once with `codex login` or set OPENAI_API_KEY.",
    ),
    (
        "gemini",
        "Install Gemini CLI with `npm install -g @google/gemini-cli`, then sign in once by running `gemini`.",
    ),
    (
        "goose",
        "Install goose (see its documentation for your system), then run `goose configure` once.",
    ),
    (
        "opencode",
        "Install opencode with `npm install -g opencode-ai`, then run `opencode auth login` once.",
    ),
];

/// Where an agent definition came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AgentSource {
    /// The demo agent shipped with ACP Desk.
    Builtin,
    /// A well-known agent ACP Desk knows how to launch.
    Catalog,
    /// The user's `agent_servers` settings.
    Settings,
}

/// One agent a front end can offer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentEntry {
    /// The name [`resolve`] takes.
    pub id: String,
    /// The command line, for display.
    pub command: String,
    pub source: AgentSource,
    /// Whether its program was found (for `npx` agents: whether npx was).
    pub available: bool,
    /// What to do to make it work, or what to expect on first use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Every agent a front end can offer, and which one to preselect.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentListing {
    pub agents: Vec<AgentEntry>,
    /// The first agent of the settings, else an installed catalog agent that needs no download,
    /// else the demo agent.
    pub default_agent: String,
    pub settings_file: String,
    /// The settings file could not be read: why (its agents are missing from the list).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings_error: Option<String>,
}

/// Lists the demo agent, the catalog (installed or not) and the user's `agent_servers`.
/// `cwd` is where relative commands would be looked up.
pub fn listing(cwd: &std::path::Path) -> AgentListing {
    listing_in(cwd, &paths::settings_file())
}

fn listing_in(cwd: &std::path::Path, settings_file: &std::path::Path) -> AgentListing {
    let demo = demo_agent_path();
    let mut agents = vec![AgentEntry {
        id: "demo".into(),
        command: demo
            .as_ref()
            .map_or_else(|| "acp-desk-demo-agent".into(), |p| p.display().to_string()),
        source: AgentSource::Builtin,
        available: demo.as_ref().is_some_and(|p| p.is_file()),
        hint: Some(match demo {
            Some(_) => "Scripted, no model: say “hello” to see what it can show.".into(),
            None => AgentError::DemoMissing.to_string(),
        }),
    }];
    let found = |cmd: &str| crate::process::resolve_command(cmd, cwd).is_ok();
    let mut default_agent = None;
    for (name, cmd, args) in CATALOG {
        let available = found(cmd);
        if available && *cmd != "npx" && default_agent.is_none() {
            default_agent = Some((*name).to_string());
        }
        agents.push(AgentEntry {
            id: (*name).into(),
            command: std::iter::once(*cmd)
                .chain(args.iter().copied())
                .collect::<Vec<_>>()
                .join(" "),
            source: AgentSource::Catalog,
            available,
            hint: INSTALL_HINTS
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, h)| (*h).to_string()),
        });
    }
    let (servers, settings_error) = match read_settings(settings_file) {
        Ok(s) => (s.agent_servers, None),
        Err(e) => (BTreeMap::new(), Some(e.to_string())),
    };
    if let Some(first) = servers.keys().next() {
        default_agent = Some(first.clone());
    }
    for (name, s) in servers {
        // A settings entry overrides the catalog agent of the same name (as `resolve` does).
        agents.retain(|a| a.id != name);
        agents.push(AgentEntry {
            available: found(&s.command),
            command: std::iter::once(s.command.as_str())
                .chain(s.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            id: name,
            source: AgentSource::Settings,
            hint: None,
        });
    }
    AgentListing {
        agents,
        default_agent: default_agent.unwrap_or_else(|| "demo".into()),
        settings_file: settings_file.display().to_string(),
        settings_error,
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

/// Resolves `--agent NAME`: user settings first (so a user can override a built-in), then
/// `demo`, then the catalog.
pub fn resolve(name: &str) -> Result<LaunchSpec, AgentError> {
    resolve_in(name, &paths::settings_file())
}

fn resolve_in(name: &str, settings_file: &std::path::Path) -> Result<LaunchSpec, AgentError> {
    let settings = read_settings(settings_file)?;
    if let Some(s) = settings.agent_servers.get(name) {
        return Ok(LaunchSpec {
            name: name.into(),
            command: s.command.clone(),
            args: s.args.clone(),
            env: s.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            cwd: None,
        });
    }
    if name == "demo" {
        return demo_agent();
    }
    if let Some((_, cmd, args)) = CATALOG.iter().find(|(n, _, _)| *n == name) {
        return Ok(LaunchSpec {
            name: name.into(),
            command: (*cmd).into(),
            args: args.iter().map(|a| (*a).into()).collect(),
            env: Vec::new(),
            cwd: None,
        });
    }
    let mut known: Vec<&str> = vec!["demo"];
    known.extend(CATALOG.iter().map(|(n, _, _)| *n));
    known.extend(settings.agent_servers.keys().map(String::as_str));
    Err(AgentError::Unknown(
        name.into(),
        known.join(", "),
        settings_file.display().to_string(),
    ))
}

/// The agents the user configured in the settings file (`agent_servers`), by name.
pub fn configured() -> Result<BTreeMap<String, AgentServer>, AgentError> {
    Ok(read_settings(&paths::settings_file())?.agent_servers)
}

fn read_settings(file: &std::path::Path) -> Result<Settings, AgentError> {
    Ok(settings::load_from(file)?)
}

impl From<SettingsError> for AgentError {
    fn from(e: SettingsError) -> Self {
        AgentError::Settings(e.path().display().to_string(), e.reason())
    }
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

    #[test]
    fn settings_override_and_unknown_names_list_the_known() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        std::fs::write(
            &file,
            r#"{"agent_servers": {
                "claude": {"command": "/opt/my-claude", "args": ["--acp"], "env": {"A": "1"}},
                "mine": {"command": "/bin/my-agent"}
            }}"#,
        )
        .unwrap();
        // A settings entry wins over the built-in of the same name.
        let claude = resolve_in("claude", &file).unwrap();
        assert_eq!(claude.command, "/opt/my-claude");
        assert_eq!(claude.args, vec!["--acp"]);
        assert_eq!(claude.env, vec![("A".to_string(), "1".to_string())]);
        assert_eq!(resolve_in("mine", &file).unwrap().command, "/bin/my-agent");
        // Built-ins still resolve.
        let goose = resolve_in("goose", &file).unwrap();
        assert_eq!(
            (goose.command.as_str(), goose.args.as_slice()),
            ("goose", &["acp".to_string()][..])
        );
        let Err(AgentError::Unknown(name, known, where_)) = resolve_in("nope", &file) else {
            panic!("nope should be unknown")
        };
        assert_eq!(name, "nope");
        for k in [
            "demo", "claude", "codex", "gemini", "goose", "opencode", "mine",
        ] {
            assert!(known.contains(k), "{known} lacks {k}");
        }
        assert!(where_.contains("settings.json"));
        std::fs::write(&file, "{nope").unwrap();
        assert!(matches!(
            resolve_in("claude", &file),
            Err(AgentError::Settings(..))
        ));
        assert!(resolve_in("goose", &dir.path().join("missing.json")).is_ok());
    }

    #[test]
    fn listing_prefers_settings_then_installed_agents_then_demo() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        // No settings, an empty PATH-free folder: nothing but npx-style agents could be found.
        let l = listing_in(dir.path(), &file);
        assert_eq!(l.agents[0].id, "demo");
        assert!(l.settings_error.is_none());
        for (name, _, _) in CATALOG {
            let e = l.agents.iter().find(|a| a.id == *name).unwrap();
            assert_eq!(e.source, AgentSource::Catalog);
            assert!(e.hint.is_some(), "{name} has no install hint");
        }
        if !l.agents.iter().any(|a| {
            a.source == AgentSource::Catalog && a.available && !a.command.starts_with("npx")
        }) {
            assert_eq!(l.default_agent, "demo");
        }
        std::fs::write(
            &file,
            r#"{"agent_servers": {"gemini": {"command": "/opt/gemini", "args": ["--acp"]}, "zz": {"command": "sh"}}}"#,
        )
        .unwrap();
        let l = listing_in(dir.path(), &file);
        assert_eq!(l.default_agent, "gemini");
        let gemini: Vec<_> = l.agents.iter().filter(|a| a.id == "gemini").collect();
        assert_eq!(
            gemini.len(),
            1,
            "the settings entry replaces the catalog one"
        );
        assert_eq!(gemini[0].source, AgentSource::Settings);
        assert_eq!(gemini[0].command, "/opt/gemini --acp");
        assert!(!gemini[0].available);
        assert!(l.agents.iter().any(|a| a.id == "zz" && a.available));
        std::fs::write(&file, "{oops").unwrap();
        let l = listing_in(dir.path(), &file);
        assert!(l.settings_error.unwrap().contains("settings.json"));
    }
}
