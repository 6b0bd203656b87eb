//! The user's settings file, read-only.
//!
//! One JSON file, [`crate::paths::settings_file`], written by the user (by hand or by their
//! editor), shared by the CLI and the app. It is Zed-style JSON: comments (`//`, `/* */`) and
//! trailing commas are accepted, because Zed's own settings files have them and a user who
//! pastes an entry from there must not be told it is broken. Nothing looser than that is
//! accepted (no missing commas, bare keys or single quotes): those are typos, and guessing what
//! they meant would hide them.
//!
//! **Reading never fails.** The file is checked field by field on its syntax tree, so every
//! problem names the file, the line and column, and the dotted field (`agent_servers.mine.args`)
//! ([`ConfigProblem`]); the valid part is still used, and only the entry or field concerned is
//! skipped (an `agent_servers` entry with any bad launch field is skipped whole: starting it
//! with half its arguments would be worse). A syntax error is one problem and the defaults; an
//! unreadable file too. Keys we do not know are kept in `ignored` and reported as warnings, so a
//! file shared with Zed or with a newer ACP Desk still loads and the user sees what is unused.
//! This is what lets `--agent demo` and the window start whatever the file holds.
//!
//! **This module never writes the file**, and has no function that could: the file is the
//! user's, comments and layout included, and a program rewriting it would lose them. What the
//! app itself remembers (window state, choices made in the window) goes to its own state file
//! in the data folder (`acp-desk-app`'s `state` module), never here.
//!
//! Reading is blocking file IO: async callers run [`load`] on the blocking pool.
//!
//! # Adding a setting
//!
//! New settings are fields of [`Settings`], each with its default in `Settings::default()`, so
//! that a file without the key, and a missing file, mean the default; read it in
//! `Reader::settings` with a problem for every wrong shape. Document each field with its JSON
//! key, its default and who reads it.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use jsonc_parser::ast::{Object, Value};
use jsonc_parser::common::Ranged;

use crate::agents::problem::{ConfigProblem, ProblemSeverity};
use crate::secrets::{EnvValue, SecretRef};

/// Everything ACP Desk reads from the settings file. `Settings::default()` is what a missing
/// file means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// `agent_servers` (Zed's shape), in the file's order: agents the user added, by the name
    /// `--agent` takes. An entry overrides every other source's agent of the same name. The
    /// first one is the default agent when `default_agent` is not set. Default: none.
    pub agent_servers: Vec<(String, AgentServer)>,
    /// `default_agent`: the agent new sessions use when the window has no last choice. Read by
    /// `agents::resolve` (the default rule). Default: none.
    pub default_agent: Option<String>,
    /// `notifications`: which events may raise a desktop notification. Read by the shell
    /// (issue 15). Default: all on.
    pub notifications: Notifications,
    /// `history`: whether sessions are recorded in the history. Read by the shell and the CLI.
    /// Default: on.
    pub history: HistorySettings,
    /// `mcp_servers` (the shape of Zed's `context_servers`), in the file's order: MCP servers
    /// for every agent's sessions, or for the agents an entry's `agents` names. Read by
    /// [`crate::mcp::servers_for`], which the app layer and the CLI call for each session.
    /// Default: none.
    pub mcp_servers: Vec<(String, McpServer)>,
    /// `restored_sessions_start`: when the agents of the sessions the window restores at its
    /// start (the sidebar as it was) are started. Read by the desktop shell. Default
    /// `"on_return"`.
    pub restored_sessions_start: RestoredStart,
    /// `close_to_tray`: closing the window keeps the app running in the tray, when the desktop
    /// has a tray (a StatusNotifierItem host); false: closing quits. Read by the desktop shell
    /// (issue 15). Default true.
    pub close_to_tray: bool,
    /// `checkpoints`: `enabled`, `max_file_mb`, `budget_mb`, `max_age_days`, `max_wait_secs`.
    /// Read by the app layer and the CLI for each session (issue 20). Default: on, 10 MB,
    /// 2048 MB, 30 days, 30 s.
    pub checkpoints: crate::checkpoint::CheckpointSettings,
    /// Top-level keys ACP Desk does not read (a file shared with Zed has many).
    pub ignored: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            agent_servers: Vec::new(),
            default_agent: None,
            notifications: Notifications::default(),
            history: HistorySettings::default(),
            mcp_servers: Vec::new(),
            restored_sessions_start: RestoredStart::default(),
            close_to_tray: true,
            checkpoints: crate::checkpoint::CheckpointSettings::default(),
            ignored: Vec::new(),
        }
    }
}

impl Settings {
    /// The `agent_servers` entry `name`.
    pub fn agent_server(&self, name: &str) -> Option<&AgentServer> {
        self.agent_servers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
    }
}

/// When a restored session's agent starts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RestoredStart {
    /// `"on_return"`: when the user returns to the session (shows it, or types in it): the
    /// transcript is shown from the history at once, and no agent runs for a session nobody
    /// looks at.
    #[default]
    OnReturn,
    /// `"at_once"`: every restored session's agent starts with the window.
    AtOnce,
}

/// `notifications: {"permission_requests": bool, "turn_end": bool}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notifications {
    /// An agent asks for permission while the window is not in front. Default true.
    pub permission_requests: bool,
    /// A turn ended while the window is not in front. Default true.
    pub turn_end: bool,
}

impl Default for Notifications {
    fn default() -> Self {
        Notifications {
            permission_requests: true,
            turn_end: true,
        }
    }
}

/// `history: {"enabled": bool}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistorySettings {
    /// false: neither the window nor the CLI records sessions. Default true.
    pub enabled: bool,
}

impl Default for HistorySettings {
    fn default() -> Self {
        HistorySettings { enabled: true }
    }
}

/// Zed-style settings entry: `{"agent_servers": {"Name": {"command", "args", "env"}}}`.
/// Env values may be secrets: this type is never serialized, and its `Debug` shows env names
/// only. An env value is a text or `{"secret": "REF"}`, read from the keychain at launch.
#[derive(Clone, PartialEq, Eq)]
pub struct AgentServer {
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, EnvValue>,
    /// `manifest`: the name of an AIP-44 manifest (`agents/<name>/ACP.md` in the config
    /// folder) describing this agent; the launch stays this entry's.
    pub manifest: Option<String>,
    /// Keys of the entry ACP Desk does not read (Zed's `default_mode`, ...).
    pub ignored: Vec<String>,
}

/// One `mcp_servers` entry, the shape of Zed's `context_servers`: a program
/// (`{"command", "args", "env"}`) or a URL (`{"url", "headers"}`, `"type": "sse"` for the SSE
/// transport; http otherwise). Values may be secrets: never serialized or logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServer {
    pub transport: McpTransport,
    /// `credential_ref`: a keychain entry whose secret becomes headers (issue 17); http and sse
    /// only (kept on a program so the session's report can say it is ignored there).
    pub credential_ref: Option<SecretRef>,
    /// `agents`: the agent ids whose sessions get this server; `None` (absent): every agent.
    pub agents: Option<Vec<String>>,
    pub ignored: Vec<String>,
}

impl McpServer {
    /// Whether the sessions of `agent_id` get this server.
    pub fn applies_to(&self, agent_id: &str) -> bool {
        self.agents
            .as_ref()
            .is_none_or(|ids| ids.iter().any(|a| a == agent_id))
    }
}

impl std::fmt::Debug for AgentServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentServer")
            .field("command", &self.command)
            .field("args", &self.args)
            .field(
                "env",
                &crate::agents::EnvNames(self.env.keys().map(String::as_str)),
            )
            .field("manifest", &self.manifest)
            .field("ignored", &self.ignored)
            .finish()
    }
}

/// How an `mcp_servers` entry is reached: the configured-server type of [`crate::mcp`], whose
/// `Debug` shows env and header names only. Env values are texts or `{"secret": REF}`.
pub type McpTransport = crate::mcp::McpConfigTransport;

/// What reading the file gave: the settings (the valid part), and what was wrong.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loaded {
    pub settings: Settings,
    pub problems: Vec<ConfigProblem>,
    /// `agent_servers` names whose entry was skipped for errors: `--agent NAME` must say so
    /// rather than start another source's agent of that name.
    pub invalid_agents: Vec<String>,
}

impl Loaded {
    /// The problems of one `agent_servers` entry.
    pub fn agent_problems(&self, name: &str) -> Vec<ConfigProblem> {
        let prefix = format!("agent_servers.{name}");
        self.problems
            .iter()
            .filter(|p| {
                p.field.as_deref().is_some_and(|f| {
                    f == prefix
                        || f.strip_prefix(&prefix)
                            .is_some_and(|rest| rest.starts_with(['.', '[']))
                })
            })
            .cloned()
            .collect()
    }
}

/// Reads [`crate::paths::settings_file`]. Blocking.
pub fn load() -> Loaded {
    load_from(&crate::paths::settings_file())
}

/// Reads the settings file at `path`: a missing file is [`Settings::default`]; an unreadable
/// one is the defaults and one problem. Blocking.
pub fn load_from(path: &Path) -> Loaded {
    let file = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&file, &text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Loaded::default(),
        Err(e) => Loaded {
            problems: vec![ConfigProblem {
                file,
                line: None,
                column: None,
                field: None,
                message: format!(
                    "could not read the settings file ({e}); the defaults are used until it can be read"
                ),
                severity: ProblemSeverity::Error,
            }],
            ..Loaded::default()
        },
    }
}

/// Zed's dialect: JSON plus comments and trailing commas (see the module docs).
/// The JSON dialect of our config files (Zed's: comments and trailing commas), shared with
/// `mcp::project`.
pub(crate) fn parse_options() -> jsonc_parser::ParseOptions {
    jsonc_parser::ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// Reads settings from `text`; `file` names it in problems.
pub fn parse(file: &str, text: &str) -> Loaded {
    let mut r = Reader {
        file,
        text,
        problems: Vec::new(),
        invalid_agents: Vec::new(),
    };
    let ast = match jsonc_parser::parse_to_ast(text, &Default::default(), &parse_options()) {
        Ok(ast) => ast,
        Err(e) => {
            r.problems.push(ConfigProblem {
                file: file.into(),
                line: u32::try_from(e.line_display()).ok(),
                column: u32::try_from(e.column_display()).ok(),
                field: None,
                message: format!(
                    "not valid JSON: {} (comments and trailing commas are fine); nothing in the file is used until this is fixed",
                    e.kind()
                ),
                severity: ProblemSeverity::Error,
            });
            return r.finish(Settings::default());
        }
    };
    let settings = match &ast.value {
        // A file holding nothing but comments or whitespace (everything commented out) is the
        // defaults, as a missing file is; so is a top-level `null`.
        None | Some(Value::NullKeyword(_)) => Settings::default(),
        Some(Value::Object(o)) => r.settings(o),
        Some(v) => {
            r.error(
                v,
                None,
                format!(
                    "the settings file must hold one JSON object ({{ ... }}), found {}; nothing in it is used",
                    kind(v)
                ),
            );
            Settings::default()
        }
    };
    r.finish(settings)
}

/// What a value is, for "expected X, found Y" (shared with `mcp::project`).
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::StringLit(_) => "a string",
        Value::NumberLit(_) => "a number",
        Value::BooleanLit(_) => "true/false",
        Value::Object(_) => "an object",
        Value::Array(_) => "a list",
        Value::NullKeyword(_) => "null",
    }
}

/// The 1-based line of byte `offset` in `text`.
pub(crate) fn line_at(text: &str, offset: usize) -> u32 {
    let before = text.get(..offset).unwrap_or(text);
    u32::try_from(before.matches('\n').count() + 1).unwrap_or(u32::MAX)
}

/// A problem at `at` in `text` (line and column 1-based, the column in characters), shared
/// with `mcp::project`.
pub(crate) fn located(
    file: &str,
    text: &str,
    at: &dyn Ranged,
    field: Option<&str>,
    message: String,
    severity: ProblemSeverity,
) -> ConfigProblem {
    let before = text.get(..at.start()).unwrap_or(text);
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    ConfigProblem {
        file: file.into(),
        line: Some(line_at(text, at.start())),
        column: Some(u32::try_from(column).unwrap_or(u32::MAX)),
        field: field.map(str::to_owned),
        message,
        severity,
    }
}

/// The typed reads both config readers share (the settings, `mcp::project`'s files). Every
/// problem goes through the reader's own `error`; `skip_note` ends the message of a value
/// that is then left out, where the reader says so.
pub(crate) trait JsoncFields {
    fn error(&mut self, at: &dyn Ranged, field: Option<&str>, message: String);

    fn skip_note(&self) -> &'static str {
        ""
    }

    fn object<'v, 'a>(&mut self, v: &'v Value<'a>, field: &str) -> Option<&'v Object<'a>> {
        match v {
            Value::Object(o) => Some(o),
            other => {
                let note = self.skip_note();
                self.error(
                    other,
                    Some(field),
                    format!(
                        "expected an object ({{ ... }}), found {}{note}",
                        kind(other)
                    ),
                );
                None
            }
        }
    }

    fn string(&mut self, v: &Value, field: &str) -> Option<String> {
        match v {
            Value::StringLit(s) => Some(s.value.to_string()),
            other => {
                self.error(
                    other,
                    Some(field),
                    format!("expected a string, found {}", kind(other)),
                );
                None
            }
        }
    }

    fn strings(&mut self, v: &Value, field: &str) -> Option<Vec<String>> {
        let Value::Array(a) = v else {
            self.error(
                v,
                Some(field),
                format!("expected a list of strings, found {}", kind(v)),
            );
            return None;
        };
        let mut out = Vec::new();
        let mut ok = true;
        for (i, e) in a.elements.iter().enumerate() {
            match e {
                Value::StringLit(s) => out.push(s.value.to_string()),
                other => {
                    ok = false;
                    self.error(
                        other,
                        Some(&format!("{field}[{i}]")),
                        format!(
                            "expected a string, found {} (quote it: arguments are strings)",
                            kind(other)
                        ),
                    );
                }
            }
        }
        ok.then_some(out)
    }

    /// An object of strings (env, headers). Problems name the key, never the value: values
    /// may be secrets.
    fn string_map(&mut self, v: &Value, field: &str) -> Option<BTreeMap<String, String>> {
        let o = self.object(v, field)?;
        let mut out = BTreeMap::new();
        let mut ok = true;
        for p in &o.properties {
            match &p.value {
                Value::StringLit(s) => {
                    out.insert(p.name.as_str().to_owned(), s.value.to_string());
                }
                other => {
                    ok = false;
                    self.error(
                        other,
                        Some(&format!("{field}.{}", p.name.as_str())),
                        format!("expected a string, found {}", kind(other)),
                    );
                }
            }
        }
        ok.then_some(out)
    }
}

mod reader;
use reader::Reader;

#[cfg(test)]
mod tests;
