//! AIP-44 agent manifests: an agent described by `<config_dir>/agents/<name>/ACP.md`, YAML front
//! matter between two `---` lines (the `AcpDefinition` of seed 002) and a Markdown body.
//!
//! The manifest says what an agent is. How to start it comes from a settings entry naming the
//! manifest (`agent_servers.X.manifest`, resolved in `resolve.rs`) or from our vendor key
//! `metadata.acp-desk: {command, args, env}`. A `command` with a `/` in it that is relative is
//! taken from the manifest's folder (a manifest may ship its script beside it); a bare name is
//! looked up on `PATH` when the agent starts.
//!
//! Validation finds every problem of a file in one pass; each is a [`ConfigProblem`] naming the
//! file, the line (YAML errors carry one; for the other checks the field's line is looked up in
//! the front matter), the dotted field and what to do. A manifest with an error is not loaded
//! (its problems are listed); warnings (the seed's cross-field rules, unknown keys, a
//! websocket-only transport) leave it loaded. One bad manifest never stops the others.
//!
//! Env values (our launch key's, MCP servers') never reach logs or the UI: the types' `Debug`
//! prints names only, and [`ManifestLaunch`] is not serializable at all.

mod locate;
#[cfg(test)]
mod tests;
mod types;
mod validate;

use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1 as acp;
use serde_json::Value;

pub use types::*;

use super::LaunchSpec;
use super::problem::{CapabilityDifference, ConfigProblem, ProblemSeverity};
use crate::audit::AuditKind;

/// The file name of a manifest inside its folder.
pub const FILE_NAME: &str = "ACP.md";

/// A manifest is a short text; a larger file is refused unread (it is a mistake, and YAML
/// aliases can multiply what a big file costs to parse).
pub const MAX_BYTES: u64 = 1024 * 1024;

/// The commit of the ACP repository (agentclientprotocol/agent-client-protocol) that our pinned
/// wire types, `agent-client-protocol-schema` 1.20.0, were published from (its
/// `.cargo_vcs_info.json`): what ACP Desk validates against, so its own `acp_rev`. Change it
/// with the pin in Cargo.toml.
pub const ACP_REV: &str = "c0945895a63233bfdbdf95990104c11f5d8d8991";

/// A valid manifest (it may carry warnings).
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The `ACP.md` file.
    pub file: PathBuf,
    /// The name of its folder (equal to `definition.name`): the agent's id for `--agent`.
    pub folder: String,
    pub definition: AcpDefinition,
    /// The Markdown after the front matter.
    pub body: String,
    /// From `metadata.acp-desk`; `None`: a settings entry naming this manifest must say how.
    pub launch: Option<ManifestLaunch>,
    /// `Err(why)`: not an agent ACP Desk can drive (a `client` manifest, websocket only); it is
    /// listed as unsupported with the reason.
    pub drivable: Result<(), String>,
    /// Warnings only: a manifest with errors is not a `Manifest`.
    pub problems: Vec<ConfigProblem>,
}

/// How to start a manifest's agent, from `metadata.acp-desk`. Deliberately not `Serialize`, and
/// its `Debug` names env variables without their values: the values may be secrets.
#[derive(Clone, PartialEq, Eq)]
pub struct ManifestLaunch {
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

impl std::fmt::Debug for ManifestLaunch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManifestLaunch")
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env_names", &self.env_names())
            .finish()
    }
}

impl ManifestLaunch {
    pub fn env_names(&self) -> Vec<String> {
        self.env.iter().map(|(k, _)| k.clone()).collect()
    }

    /// The launch spec, named `name` (the manifest's id).
    pub fn spec(&self, name: &str) -> LaunchSpec {
        LaunchSpec {
            name: name.to_string(),
            command: self.command.clone(),
            args: self.args.clone(),
            env: self
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone().into()))
                .collect(),
            cwd: None,
        }
    }
}

impl Manifest {
    /// The agent's id (the folder's name, which `name` equals).
    pub fn id(&self) -> &str {
        &self.folder
    }

    /// The folder holding `ACP.md`.
    pub fn dir(&self) -> &Path {
        self.file.parent().unwrap_or(Path::new("."))
    }

    /// From `metadata.acp-desk`, when the manifest says how to start it.
    pub fn launch_spec(&self) -> Option<LaunchSpec> {
        self.launch.as_ref().map(|l| l.spec(self.id()))
    }

    /// The capabilities the manifest declares (`metadata.aip44.capabilities`); `None`: the
    /// tier's defaults, which the seed does not spell out, so nothing to compare.
    pub fn declared_capabilities(&self) -> Option<&AcpCapabilities> {
        self.definition.metadata.aip44.capabilities.as_ref()
    }

    /// The audit log for this agent's sessions: `audit.kind: off` turns it off; `audit.ref`
    /// names the folder it goes to (absolute, `~/...`, or relative to the manifest's folder).
    /// `None`: the default folder ([`crate::audit::AuditLog::default_dir`]). A `ref` that is a URL is not a
    /// folder (a warning said so when the manifest was read): the default folder.
    pub fn audit(&self) -> (AuditKind, Option<PathBuf>) {
        let Some(audit) = &self.definition.metadata.aip44.audit else {
            return (AuditKind::On, None);
        };
        if audit.kind == Some(AcpAuditKind::Off) {
            return (AuditKind::Off, None);
        }
        let dir = audit
            .reference
            .as_deref()
            .filter(|r| !r.contains("://") && !r.trim().is_empty())
            .map(|r| self.resolve_path(r));
        (AuditKind::On, dir)
    }

    /// Sets the session's audit log as [`Manifest::audit`] says: what the app and the CLI call
    /// on the options of a session started from this manifest.
    pub fn apply_audit(&self, opts: &mut crate::SessionOptions) {
        let (kind, dir) = self.audit();
        opts.audit = kind;
        if let Some(dir) = dir {
            opts.audit_dir = dir;
        }
    }

    fn resolve_path(&self, p: &str) -> PathBuf {
        if let Some(rest) = p.strip_prefix("~/")
            && let Some(home) = directories::BaseDirs::new()
        {
            return home.home_dir().join(rest);
        }
        let path = Path::new(p);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.dir().join(path)
        }
    }
}

fn problem(file: &Path, line: Option<u32>, column: Option<u32>, message: String) -> ConfigProblem {
    ConfigProblem {
        file: file.display().to_string(),
        line,
        column,
        field: None,
        message,
        severity: ProblemSeverity::Error,
    }
}

/// Adds `offset` to every "line N" in a YAML error's message, whose lines count from the front
/// matter's first line, so that they count from the file's.
fn shift_lines(msg: &str, offset: u32) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(at) = rest.find("line ") {
        out.push_str(&rest[..at + 5]);
        rest = &rest[at + 5..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        match rest[..digits].parse::<u32>() {
            Ok(n) => out.push_str(&(n + offset).to_string()),
            Err(_) => out.push_str(&rest[..digits]),
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

/// Parses and validates one `ACP.md`. The folder name (which `name` must equal) is `file`'s
/// parent's. `Err`: every problem found (errors, and the warnings with them).
pub fn parse(file: &Path, text: &str) -> Result<Manifest, Vec<ConfigProblem>> {
    let folder = file
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    parse_in(file, &folder, text)
}

fn parse_in(file: &Path, folder: &str, text: &str) -> Result<Manifest, Vec<ConfigProblem>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let opening = lines.next().unwrap_or("");
    if opening.trim_end() != "---" {
        return Err(vec![problem(
            file,
            Some(1),
            None,
            "no front matter: an ACP.md starts with a line `---`, then the manifest's YAML fields (name, id, description, version, kind, transport, metadata), then a line `---`, then the Markdown body".into(),
        )]);
    }
    // Lines of the front matter: from the file's line 2 up to the closing `---` (or `...`).
    let mut yaml = String::new();
    let mut body = None;
    let mut consumed = 1u32;
    for line in lines.by_ref() {
        consumed += 1;
        let t = line.trim_end();
        if t == "---" || t == "..." {
            body = Some(lines.collect::<String>());
            break;
        }
        yaml.push_str(line);
    }
    let Some(body) = body else {
        return Err(vec![problem(
            file,
            Some(1),
            None,
            "the front matter is never closed: add a line `---` after the last YAML field, before the Markdown body".into(),
        )]);
    };
    if yaml.trim().is_empty() {
        return Err(vec![problem(
            file,
            Some(consumed),
            None,
            "the front matter is empty: write the manifest's fields (name, id, description, version, kind, transport, metadata) between the two `---` lines".into(),
        )]);
    }
    // The front matter's first line is the file's line 2.
    const OFFSET: u32 = 1;
    // Through YAML's own value first: it refuses duplicate keys (serde_json's would keep the
    // last one silently).
    let root = match serde_norway::from_str::<serde_norway::Value>(&yaml) {
        Ok(v) => serde_json::to_value(v).map_err(|e| {
            vec![problem(
                file,
                None,
                None,
                format!(
                    "the front matter holds YAML that is not plain data ({e}): use text keys and plain values, no tags"
                ),
            )]
        })?,
        Err(e) => {
            let (mut line, mut column) = e.location().map_or((None, None), |l| {
                (
                    u32::try_from(l.line()).ok().map(|n| n + OFFSET),
                    u32::try_from(l.column()).ok(),
                )
            });
            // libyaml places a duplicate key at its mapping's start: point at the repeat.
            if let Some(again) = duplicate_key_line(&e.to_string(), &yaml, line) {
                (line, column) = (Some(again + OFFSET), None);
            }
            return Err(vec![problem(
                file,
                line,
                column,
                format!(
                    "the front matter is not valid YAML: {}. Fix the YAML (indent with spaces; quote text holding `: ` or starting with a special character)",
                    shift_lines(&e.to_string(), OFFSET)
                ),
            )]);
        }
    };
    let file_name = file.display().to_string();
    let mut checker = validate::Checker::new(file_name.clone(), &yaml, OFFSET + 1);
    checker.definition(&root, folder);
    if checker.has_errors() {
        return Err(checker.problems);
    }
    let definition: AcpDefinition = match serde_json::from_value(root) {
        Ok(d) => d,
        Err(e) => {
            // The checks above cover every field the type has; this is a gap in them.
            let mut problems = checker.problems;
            problems.push(problem(
                file,
                None,
                None,
                format!("the manifest does not match AcpDefinition: {e}"),
            ));
            return Err(problems);
        }
    };
    let drivable = if definition.kind == AcpRole::Client {
        Err("`kind: client` describes a program that drives agents (as ACP Desk does), not an agent: there is nothing to start. An agent's manifest says `kind: server` or `bridge`".to_string())
    } else if !definition.transport.includes(AcpTransport::Stdio) {
        Err("it speaks websocket only (`transport` has no `stdio`); ACP Desk starts agents over stdio".to_string())
    } else {
        Ok(())
    };
    let dir = file.parent().unwrap_or(Path::new("."));
    let launch = definition
        .metadata
        .acp_desk
        .as_ref()
        .map(|l| ManifestLaunch {
            command: launch_command(dir, &l.command),
            args: l.args.clone(),
            env: l.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        });
    Ok(Manifest {
        file: file.to_path_buf(),
        folder: folder.to_string(),
        definition,
        body,
        launch,
        drivable,
        problems: checker.problems,
    })
}

/// For "duplicate entry with key \"K\"" reported at `from` (a line of the file): the
/// front-matter line (1-based) of the second `K:` at the first one's indentation after it.
fn duplicate_key_line(msg: &str, yaml: &str, from: Option<u32>) -> Option<u32> {
    let rest = msg.split("duplicate entry with key \"").nth(1)?;
    let key = &rest[..rest.find('"')?];
    let start = from.map_or(0, |l| l.saturating_sub(2) as usize);
    let mut first_indent = None;
    for (i, line) in yaml.lines().enumerate().skip(start) {
        let body = line.trim_start_matches([' ', '-']);
        let indent = line.len() - body.len();
        let is_key = body
            .strip_prefix(key)
            .is_some_and(|r| r.trim_start().starts_with(':'));
        if !is_key {
            continue;
        }
        match first_indent {
            None => first_indent = Some(indent),
            Some(at) if at == indent => return u32::try_from(i + 1).ok(),
            Some(_) => {}
        }
    }
    None
}

/// A relative command with a path separator is taken from the manifest's folder.
fn launch_command(dir: &Path, command: &str) -> String {
    let p = Path::new(command);
    if p.is_relative() && (command.contains('/') || command.contains(std::path::MAIN_SEPARATOR)) {
        // `./bin/x` → `<dir>/bin/x`, without a `/./` in what the user is shown.
        let rest: PathBuf = p
            .components()
            .filter(|c| *c != std::path::Component::CurDir)
            .collect();
        dir.join(rest).to_string_lossy().into_owned()
    } else {
        command.to_string()
    }
}

/// Reads every `<agents_dir>/<name>/ACP.md` (blocking), in name order. `agents_dir` is
/// `<config_dir>/agents`; missing: no manifests, no problems. A bad file gives its problems and
/// the others load; a folder without `ACP.md`, or a file beside the folders, gives a warning.
pub fn load_dir(agents_dir: &Path) -> (Vec<Manifest>, Vec<ConfigProblem>) {
    let mut manifests = Vec::new();
    let mut problems = Vec::new();
    let entries = match std::fs::read_dir(agents_dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (manifests, problems),
        Err(e) => {
            problems.push(problem(
                agents_dir,
                None,
                None,
                format!("the agents folder cannot be read ({e}): check its permissions"),
            ));
            return (manifests, problems);
        }
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with('.') {
            continue;
        }
        if !path.is_dir() {
            let mut p = problem(
                &path,
                None,
                None,
                format!(
                    "is not a manifest folder: describe an agent in {}/<name>/ACP.md; this file is ignored",
                    agents_dir.display()
                ),
            );
            p.severity = ProblemSeverity::Warning;
            problems.push(p);
            continue;
        }
        let file = path.join(FILE_NAME);
        if let Ok(meta) = std::fs::metadata(&file)
            && meta.len() > MAX_BYTES
        {
            problems.push(problem(
                &file,
                None,
                None,
                format!(
                    "is {} bytes; a manifest is at most {MAX_BYTES} bytes (front matter and a short body): move long documentation to another file",
                    meta.len()
                ),
            ));
            continue;
        }
        let text = match std::fs::read(&file) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(t) => t,
                Err(_) => {
                    problems.push(problem(
                        &file,
                        None,
                        None,
                        "is not UTF-8 text: save it as UTF-8".into(),
                    ));
                    continue;
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut p = problem(
                    &path,
                    None,
                    None,
                    format!(
                        "has no {FILE_NAME}: this folder describes no agent; add {FILE_NAME} or remove the folder"
                    ),
                );
                p.severity = ProblemSeverity::Warning;
                problems.push(p);
                continue;
            }
            Err(e) => {
                problems.push(problem(
                    &file,
                    None,
                    None,
                    format!("cannot be read ({e}): check its permissions"),
                ));
                continue;
            }
        };
        match parse_in(&file, &name, &text) {
            Ok(m) => {
                problems.extend(m.problems.iter().cloned());
                manifests.push(m);
            }
            Err(p) => problems.extend(p),
        }
    }
    (manifests, problems)
}

/// Every difference between what a manifest declares its agent can do (`capabilities.agent`)
/// and what the agent's `initialize` answer reports, per leaf: `agent.loadSession`,
/// `agent.promptCapabilities.{image,audio,embeddedContext}`, `agent.mcpCapabilities.{http,sse}`.
/// A leaf the manifest does not declare counts as false (ACP's default), so "declared nothing,
/// reports true" is a difference (`declared: None`) and "declared nothing, reports false" is
/// not; `reported` is always the value the typed answer holds (absent on the wire reads false).
///
/// The `client` half of a server's declared capabilities is what the agent expects of its
/// client: the `initialize` answer carries no client capabilities, so it is not compared here
/// (what ACP Desk offers is [`own_manifest`]'s `capabilities.client`).
pub fn compare_capabilities(
    declared: &AcpCapabilities,
    reported: &acp::AgentCapabilities,
) -> Vec<CapabilityDifference> {
    let agent = declared.agent.as_ref();
    let prompt = agent.and_then(|a| a.prompt_capabilities.as_ref());
    let mcp = agent.and_then(|a| a.mcp_capabilities.as_ref());
    let leaves = [
        (
            "agent.loadSession",
            agent.and_then(|a| a.load_session),
            reported.load_session,
        ),
        (
            "agent.promptCapabilities.image",
            prompt.and_then(|p| p.image),
            reported.prompt_capabilities.image,
        ),
        (
            "agent.promptCapabilities.audio",
            prompt.and_then(|p| p.audio),
            reported.prompt_capabilities.audio,
        ),
        (
            "agent.promptCapabilities.embeddedContext",
            prompt.and_then(|p| p.embedded_context),
            reported.prompt_capabilities.embedded_context,
        ),
        (
            "agent.mcpCapabilities.http",
            mcp.and_then(|m| m.http),
            reported.mcp_capabilities.http,
        ),
        (
            "agent.mcpCapabilities.sse",
            mcp.and_then(|m| m.sse),
            reported.mcp_capabilities.sse,
        ),
    ];
    leaves
        .into_iter()
        .filter(|(_, d, r)| d.unwrap_or(false) != *r)
        .map(|(path, d, r)| CapabilityDifference {
            path: path.to_string(),
            declared: d.map(Value::Bool),
            reported: Some(Value::Bool(r)),
        })
        .collect()
}

/// ACP Desk's own manifest: a `client`, over stdio, declaring as `capabilities.client` exactly
/// what it advertises in `initialize` ([`crate::session::advertised_client_capabilities`]).
pub fn own_manifest() -> AcpDefinition {
    let offered = crate::session::advertised_client_capabilities();
    AcpDefinition {
        name: "acp-desk".into(),
        id: "acp-desk".into(),
        description: "ACP Desk: a desktop client (and headless CLI) for ACP coding agents. It starts an agent over stdio, shows its turns, answers its file and terminal requests inside the session's folders, and asks the user for permissions.".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        kind: AcpRole::Client,
        transport: AcpTransports::One(AcpTransport::Stdio),
        metadata: AcpMetadata {
            aip44: Aip44Extensions {
                acp_rev: ACP_REV.into(),
                tier: AcpTier::Basic,
                capabilities: Some(AcpCapabilities {
                    client: Some(AcpClientCapabilities {
                        fs: Some(AcpFsCapabilities {
                            read_text_file: Some(offered.fs.read_text_file),
                            write_text_file: Some(offered.fs.write_text_file),
                        }),
                        terminal: Some(offered.terminal),
                    }),
                    agent: None,
                }),
                operator: None,
                governance: None,
                sandbox: None,
                audit: None,
                mcp_servers: None,
                extensions: Default::default(),
            },
            acp_desk: None,
            vendor: Default::default(),
        },
        tags: Some(vec!["client".into(), "desktop".into(), "cli".into()]),
        extensions: Default::default(),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("could not write the manifest as YAML: {0}")]
    Yaml(String),
}

/// `ACP.md` text: the front matter between `---` lines, then a short Markdown body (the name,
/// the description).
pub fn render(def: &AcpDefinition) -> Result<String, RenderError> {
    let yaml = serde_norway::to_string(def).map_err(|e| RenderError::Yaml(e.to_string()))?;
    let yaml = yaml.strip_prefix("---\n").unwrap_or(&yaml);
    Ok(format!(
        "---\n{yaml}---\n\n# {}\n\n{}\n",
        def.name, def.description
    ))
}
