//! A project's own MCP config (issue 17): the files a repository carries for other tools,
//! `.mcp.json` (Claude Code), `.cursor/mcp.json` (Cursor) and `.vscode/mcp.json` (VS Code),
//! found and read so that the app can **offer** them. Nothing here decides to use them: a
//! repository is someone else's code, and its config runs programs, so the app layer uses a
//! file only as the user agreed to it, by digest (`acp_desk_app::project_mcp`, invariant 56).
//!
//! Rules kept here:
//! - Reads are bounded ([`MAX_FILE_BYTES`]) and never block on something that is not a regular
//!   file (a FIFO named `.mcp.json` is refused, not waited on).
//! - Reading is lenient, like the settings: a bad entry is a [`ConfigProblem`] at its line and
//!   the other entries load; a file that is not JSON is one problem and no servers.
//! - A server whose values hold a placeholder (`${input:...}`, `${env:...}`, `${VAR}`), which
//!   the tool the file was written for fills in and we do not, is listed in
//!   [`ProjectMcpFile::held_back`] with a problem saying so: never passed with the placeholder
//!   in it, never dropped without a word.
//! - [`ProjectMcpFile::digest`] is the SHA-256 of the bytes read: what the user agreed to is
//!   exactly those bytes; any edit is a new digest, asked again.
//!
//! Values (env, headers) may be secrets: problems name fields, never values, and
//! [`McpConfigTransport`]'s `Debug` prints names only.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use jsonc_parser::ast::{Object, ObjectProp, Value};
use jsonc_parser::common::Ranged;
use sha2::{Digest, Sha256};

use super::{McpConfigTransport, McpServerConfig, McpSource};
use crate::agents::problem::{ConfigProblem, ProblemSeverity};
use crate::secrets::EnvValue;
use crate::settings::{JsoncFields, kind, line_at, located, parse_options};

/// A file bigger than this is not read (a project's MCP config is a few hundred bytes; a huge
/// one is a mistake or a trap, and would sit in memory and in the window).
pub const MAX_FILE_BYTES: u64 = 256 * 1024;

/// Whose format a file is in: where its servers are, and what its `type`s mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProjectMcpKind {
    /// `.mcp.json`: `{"mcpServers": {NAME: {command, args, env} | {type, url, headers}}}`.
    ClaudeCode,
    /// `.cursor/mcp.json`: the same shape as Claude Code's.
    Cursor,
    /// `.vscode/mcp.json`: `{"servers": {NAME: {type: "stdio"|"http"|"sse", ...}}, "inputs"}`.
    VsCode,
}

impl ProjectMcpKind {
    /// The tool's name, for what the user reads.
    pub fn tool(self) -> &'static str {
        match self {
            ProjectMcpKind::ClaudeCode => "Claude Code",
            ProjectMcpKind::Cursor => "Cursor",
            ProjectMcpKind::VsCode => "VS Code",
        }
    }

    /// The key holding the servers.
    fn servers_key(self) -> &'static str {
        match self {
            ProjectMcpKind::ClaudeCode | ProjectMcpKind::Cursor => "mcpServers",
            ProjectMcpKind::VsCode => "servers",
        }
    }
}

/// The files looked for, relative to the folder, in the order they are offered. A file is
/// named by this relative name everywhere it crosses (approvals, IPC), so the webview can only
/// name one of these, never another path.
pub const FILES: [(&str, ProjectMcpKind); 3] = [
    (".mcp.json", ProjectMcpKind::ClaudeCode),
    (".cursor/mcp.json", ProjectMcpKind::Cursor),
    (".vscode/mcp.json", ProjectMcpKind::VsCode),
];

/// The kind of the file `name` (one of [`FILES`]' names).
pub fn kind_of(name: &str) -> Option<ProjectMcpKind> {
    FILES.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
}

/// One project config file as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectMcpFile {
    /// The file's name relative to the folder (one of [`FILES`]).
    pub name: &'static str,
    pub kind: ProjectMcpKind,
    /// The file's path (the folder joined with `name`).
    pub path: PathBuf,
    /// SHA-256 (lowercase hex) of the bytes read.
    pub digest: String,
    /// The servers that could be passed as written, in the file's order (source
    /// `McpSource::Project(path)`, no credential).
    pub servers: Vec<McpServerConfig>,
    /// Servers listed but never passed: they hold a placeholder or a field ACP Desk cannot
    /// carry; `problems` says why (field `SERVERS_KEY.NAME...`).
    pub held_back: Vec<McpServerConfig>,
    /// The names of `servers` and `held_back` together, in the file's order.
    pub order: Vec<String>,
    pub problems: Vec<ConfigProblem>,
}

impl ProjectMcpFile {
    /// The problems concerning server `name` (its field and those under it).
    pub fn problems_of(&self, name: &str) -> Vec<&ConfigProblem> {
        let prefix = format!("{}.{name}", self.kind.servers_key());
        self.problems
            .iter()
            .filter(|p| {
                p.field.as_deref().is_some_and(|f| {
                    f == prefix
                        || f.strip_prefix(&prefix)
                            .is_some_and(|rest| rest.starts_with(['.', '[']))
                })
            })
            .collect()
    }
}

/// The project config files in `folder`, in [`FILES`]' order; a missing file is not listed,
/// one that cannot be read is listed with its problem. Blocking.
pub fn find(folder: &Path) -> Vec<ProjectMcpFile> {
    FILES
        .iter()
        .filter_map(|(name, kind)| read_file(folder, name, *kind))
        .collect()
}

/// Reads one file; `None` when it does not exist.
fn read_file(folder: &Path, name: &'static str, kind: ProjectMcpKind) -> Option<ProjectMcpFile> {
    let path = folder.join(name);
    let shown = path.display().to_string();
    let mut file = ProjectMcpFile {
        name,
        kind,
        path: path.clone(),
        digest: String::new(),
        servers: Vec::new(),
        held_back: Vec::new(),
        order: Vec::new(),
        problems: Vec::new(),
    };
    let whole = |message: String| ConfigProblem {
        file: shown.clone(),
        line: None,
        column: None,
        field: None,
        message,
        severity: ProblemSeverity::Error,
    };
    let bytes = match read_bounded(&path) {
        Ok(bytes) => bytes,
        Err(ReadError::Missing) => return None,
        Err(e) => {
            file.problems.push(whole(e.message()));
            return Some(file);
        }
    };
    file.digest = digest(&bytes);
    match std::str::from_utf8(&bytes) {
        Ok(text) => parse_into(&mut file, &shown, text),
        Err(e) => file.problems.push(whole(format!(
            "not UTF-8 text (byte {}); none of its servers are offered until it is fixed",
            e.valid_up_to()
        ))),
    }
    Some(file)
}

/// SHA-256 of `bytes`, lowercase hex.
pub fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

enum ReadError {
    Missing,
    NotAFile,
    TooBig(u64),
    Io(std::io::Error),
}

impl ReadError {
    fn message(&self) -> String {
        match self {
            ReadError::Missing => "not found".into(),
            ReadError::NotAFile => {
                "not a regular file (a folder, a device or a pipe); it is not read".into()
            }
            ReadError::TooBig(len) => format!(
                "{len} bytes, more than the {MAX_FILE_BYTES} an MCP config may have; it is not read"
            ),
            ReadError::Io(e) => format!("could not be read ({e}); its servers are not offered"),
        }
    }
}

fn read_bounded(path: &Path) -> Result<Vec<u8>, ReadError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // A FIFO would make open() wait for a writer; non-blocking, it opens at once and is then
    // refused as not a regular file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let f = match options.open(path) {
        Ok(f) => f,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Err(ReadError::Missing);
        }
        Err(e) => return Err(ReadError::Io(e)),
    };
    let meta = f.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotAFile);
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ReadError::TooBig(meta.len()));
    }
    let mut bytes = Vec::new();
    // The file may grow between the check and the read: read one byte past the cap to see it.
    f.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ReadError::TooBig(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Parses `text` as `kind`'s format without reading a file (for callers that hold the bytes);
/// `path` names the file in problems and in the servers' source. Comments and trailing commas
/// are accepted (`settings::parse_options`): VS Code's files have them, and so may the others
/// when edited in VS Code.
pub fn parse(name: &'static str, kind: ProjectMcpKind, path: &Path, text: &str) -> ProjectMcpFile {
    let mut file = ProjectMcpFile {
        name,
        kind,
        path: path.to_owned(),
        digest: digest(text.as_bytes()),
        servers: Vec::new(),
        held_back: Vec::new(),
        order: Vec::new(),
        problems: Vec::new(),
    };
    let shown = path.display().to_string();
    parse_into(&mut file, &shown, text);
    file
}

fn parse_into(file: &mut ProjectMcpFile, shown: &str, text: &str) {
    let mut r = Reader {
        file: shown,
        text,
        kind: file.kind,
        source: McpSource::Project(file.path.clone()),
        problems: Vec::new(),
        skips: 0,
        servers: Vec::new(),
        held_back: Vec::new(),
        order: Vec::new(),
    };
    match jsonc_parser::parse_to_ast(text, &Default::default(), &parse_options()) {
        Ok(ast) => match &ast.value {
            Some(Value::Object(o)) => r.top(o),
            None => r.problems.push(ConfigProblem {
                file: shown.into(),
                line: None,
                column: None,
                field: None,
                message: "empty: it names no MCP servers".into(),
                severity: ProblemSeverity::Warning,
            }),
            Some(v) => r.error(
                v,
                None,
                format!(
                    "must hold one JSON object ({{\"{}\": {{...}}}}), found {}; no server is offered",
                    file.kind.servers_key(),
                    kind(v)
                ),
            ),
        },
        Err(e) => r.problems.push(ConfigProblem {
            file: shown.into(),
            line: u32::try_from(e.line_display()).ok(),
            column: u32::try_from(e.column_display()).ok(),
            field: None,
            message: format!(
                "not valid JSON: {}; none of its servers are offered until it is fixed",
                e.kind()
            ),
            severity: ProblemSeverity::Error,
        }),
    }
    file.problems = r.problems;
    file.servers = r.servers;
    file.held_back = r.held_back;
    file.order = r.order;
}

struct Reader<'t> {
    file: &'t str,
    text: &'t str,
    kind: ProjectMcpKind,
    source: McpSource,
    problems: Vec<ConfigProblem>,
    /// Problems that skip what they concern (entries not even listed), as opposed to those of
    /// a held-back server, which is listed.
    skips: usize,
    servers: Vec<McpServerConfig>,
    held_back: Vec<McpServerConfig>,
    order: Vec<String>,
}

/// A server's `type`.
#[derive(Clone, Copy)]
enum Declared {
    Stdio,
    Http,
    Sse,
}

/// What one entry's fields gave, before its transport is decided.
#[derive(Default)]
struct Fields {
    command: Option<String>,
    args: Vec<String>,
    env: BTreeMap<String, String>,
    url: Option<String>,
    headers: BTreeMap<String, String>,
    /// `type`, when given and known.
    transport: Option<Declared>,
    /// Why the server cannot be passed as written (already reported as problems).
    held: bool,
}

impl Reader<'_> {
    fn push(
        &mut self,
        at: &dyn Ranged,
        field: Option<&str>,
        message: String,
        sev: ProblemSeverity,
    ) {
        self.problems
            .push(located(self.file, self.text, at, field, message, sev));
    }

    /// A problem that keeps a server from being used, though it is still listed (held back).
    fn hold(&mut self, at: &dyn Ranged, field: &str, message: String) {
        self.push(at, Some(field), message, ProblemSeverity::Error);
    }

    fn warn(&mut self, at: &dyn Ranged, field: &str, message: String) {
        self.push(at, Some(field), message, ProblemSeverity::Warning);
    }

    fn top(&mut self, top: &Object) {
        let key = self.kind.servers_key();
        let mut found = false;
        for p in &top.properties {
            match p.name.as_str() {
                k if k == key => {
                    found = true;
                    self.servers_object(&p.value);
                }
                // VS Code's prompts for `${input:...}` values: read through the placeholders.
                "inputs" if self.kind == ProjectMcpKind::VsCode => {}
                other => {
                    let hint = match (self.kind, other) {
                        (ProjectMcpKind::VsCode, "mcpServers") => {
                            " (VS Code's file lists servers under `servers`)"
                        }
                        (ProjectMcpKind::ClaudeCode | ProjectMcpKind::Cursor, "servers") => {
                            " (this file lists servers under `mcpServers`)"
                        }
                        _ => "",
                    };
                    self.warn(
                        &p.name,
                        other,
                        format!("not read by ACP Desk: ignored{hint}"),
                    );
                }
            }
        }
        if !found {
            self.push(
                top,
                None,
                format!("has no `{key}`: it names no MCP servers"),
                ProblemSeverity::Warning,
            );
        }
    }

    fn servers_object(&mut self, v: &Value) {
        let key = self.kind.servers_key();
        let Some(o) = self.object(v, key) else {
            return;
        };
        let mut seen: Vec<(String, u32)> = Vec::new();
        for p in &o.properties {
            let name = p.name.as_str().to_owned();
            let field = format!("{key}.{name}");
            if name.trim().is_empty() {
                self.error(
                    &p.name,
                    Some(&field),
                    "a server needs a name (the key is empty); it is skipped".into(),
                );
                continue;
            }
            if let Some((_, line)) = seen.iter().find(|(n, _)| *n == name) {
                let line = *line;
                self.error(
                    &p.name,
                    Some(&field),
                    format!(
                        "`{name}` is defined twice (first on line {line}); this one is skipped"
                    ),
                );
                continue;
            }
            seen.push((name.clone(), line_at(self.text, p.name.start())));
            self.server(p, name, &field);
        }
    }

    fn server(&mut self, p: &ObjectProp, name: String, field: &str) {
        let Some(o) = self.object(&p.value, field) else {
            return;
        };
        let skips_before = self.skips;
        let mut f = Fields::default();
        for prop in &o.properties {
            self.field(prop, field, &mut f);
        }
        let blocking = self.skips > skips_before;
        let transport = match (f.transport, f.command, f.url) {
            (Some(Declared::Stdio) | None, Some(command), None) => McpConfigTransport::Stdio {
                command,
                args: f.args,
                env: f
                    .env
                    .into_iter()
                    .map(|(k, v)| (k, EnvValue::Plain(v)))
                    .collect(),
            },
            (Some(Declared::Sse), None, Some(url)) => McpConfigTransport::Sse {
                url,
                headers: f.headers,
            },
            (Some(Declared::Http) | None, None, Some(url)) => McpConfigTransport::Http {
                url,
                headers: f.headers,
            },
            (_, Some(_), Some(_)) => {
                self.error(
                    &p.value,
                    Some(field),
                    "has both `command` and `url`: a server is either a program or a URL; it is skipped".into(),
                );
                return;
            }
            (Some(Declared::Stdio), None, _) => {
                self.missing(
                    skips_before,
                    &p.value,
                    field,
                    "a stdio server needs `command`, the program to run",
                );
                return;
            }
            (Some(_), Some(_), None) => {
                self.error(
                    &p.value,
                    Some(field),
                    "an http or sse server needs `url`, not `command`; it is skipped".into(),
                );
                return;
            }
            (Some(_), None, None) => {
                self.missing(
                    skips_before,
                    &p.value,
                    field,
                    "an http or sse server needs `url`",
                );
                return;
            }
            (None, None, None) => {
                self.missing(
                    skips_before,
                    &p.value,
                    field,
                    "needs `command` (a program) or `url` (an http or sse server)",
                );
                return;
            }
        };
        if blocking {
            // A launch field is wrong: running it with half its arguments would be worse.
            return;
        }
        let config = McpServerConfig {
            name,
            source: self.source.clone(),
            transport,
            credential_ref: None,
        };
        self.order.push(config.name.clone());
        if f.held {
            self.held_back.push(config);
        } else {
            self.servers.push(config);
        }
    }

    /// A server's required field is missing: said unless the entry's fields already had an
    /// error (a `command` of the wrong type is that error, not also a missing command).
    fn missing(&mut self, skips_before: usize, at: &Value, field: &str, what: &str) {
        if self.skips == skips_before {
            self.error(at, Some(field), format!("{what}; it is skipped"));
        }
    }

    fn field(&mut self, p: &ObjectProp, server: &str, f: &mut Fields) {
        let key = p.name.as_str();
        let field = format!("{server}.{key}");
        let v = &p.value;
        match key {
            "command" => {
                if let Some(c) = self.string(v, &field) {
                    if c.trim().is_empty() {
                        self.error(v, Some(&field), "is empty".into());
                    } else {
                        f.held |= self.placeholder(v, &field, &c);
                        f.command = Some(c);
                    }
                }
            }
            "args" => {
                if let Some(args) = self.strings(v, &field) {
                    if let Value::Array(a) = v {
                        for (i, (arg, at)) in args.iter().zip(&a.elements).enumerate() {
                            f.held |= self.placeholder(at, &format!("{field}[{i}]"), arg);
                        }
                    }
                    f.args = args;
                }
            }
            "env" | "headers" => {
                if let Some(map) = self.string_map(v, &field) {
                    if let Value::Object(o) = v {
                        for prop in &o.properties {
                            let sub = format!("{field}.{}", prop.name.as_str());
                            if let Some(value) = map.get(prop.name.as_str()) {
                                f.held |= self.placeholder(&prop.value, &sub, value);
                            }
                        }
                    }
                    if key == "env" {
                        f.env = map;
                    } else {
                        f.headers = map;
                    }
                }
            }
            "url" => {
                if let Some(u) = self.string(v, &field) {
                    if self.placeholder(v, &field, &u) {
                        f.held = true;
                        f.url = Some(u);
                    } else {
                        match url::Url::parse(&u) {
                            Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => {
                                f.url = Some(u)
                            }
                            Ok(parsed) => self.error(
                                v,
                                Some(&field),
                                format!(
                                    "an MCP server's URL must be http or https, not `{}`; it is skipped",
                                    parsed.scheme()
                                ),
                            ),
                            Err(e) => self.error(
                                v,
                                Some(&field),
                                format!("not a URL ({e}); it is skipped"),
                            ),
                        }
                    }
                }
            }
            "type" => {
                if let Some(t) = self.string(v, &field) {
                    match t.as_str() {
                        "stdio" => f.transport = Some(Declared::Stdio),
                        "http" | "streamable-http" => f.transport = Some(Declared::Http),
                        "sse" => f.transport = Some(Declared::Sse),
                        other => self.error(
                            v,
                            Some(&field),
                            format!(
                                "`{other}` is not one of \"stdio\", \"http\", \"sse\"; it is skipped"
                            ),
                        ),
                    }
                }
            }
            // What the file's tool would do that an agent cannot be asked to: the server would
            // run without it, which is not what the file says. Listed, not passed.
            "envFile" | "cwd" => {
                let what = if key == "cwd" {
                    "a working folder for the server, which ACP cannot pass to the agent"
                } else {
                    "a file of environment variables, which ACP Desk does not read"
                };
                self.hold(
                    &p.name,
                    &field,
                    format!(
                        "`{key}` sets {what}; this server is not used (add it to the settings' mcp_servers without `{key}` to use it)"
                    ),
                );
                f.held = true;
            }
            _ => self.warn(&p.name, &field, "not read by ACP Desk: ignored".into()),
        }
    }

    /// Whether `value` holds a `${...}` placeholder; if so, says so at `field`.
    fn placeholder(&mut self, at: &dyn Ranged, field: &str, value: &str) -> bool {
        let Some(start) = value.find("${") else {
            return false;
        };
        // Only a name's characters: an unterminated `${` must not carry the rest of an env or
        // header value (a token) into the problem text the offer and the CLI show.
        let inner: String = value[start + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "_:-.".contains(*c))
            .take(64)
            .collect();
        let what = if let Some(id) = inner.strip_prefix("input:") {
            format!(
                "`${{input:{id}}}` is a value {} asks the user for",
                self.kind.tool()
            )
        } else if let Some(var) = inner.strip_prefix("env:") {
            format!(
                "`${{env:{var}}}` is the environment variable {var}, which {} fills in",
                self.kind.tool()
            )
        } else {
            let var = inner.split(":-").next().unwrap_or_default();
            format!(
                "`${{{var}}}` is the environment variable {var}, which {} fills in",
                self.kind.tool()
            )
        };
        self.hold(
            at,
            field,
            format!(
                "{what}; ACP Desk does not fill in placeholders, so this server is not used (add it to the settings' mcp_servers with the value, or {{\"secret\": NAME}} for a secret)"
            ),
        );
        true
    }
}

impl crate::settings::JsoncFields for Reader<'_> {
    /// A problem that skips what it concerns (counted: the entry is not even listed).
    fn error(&mut self, at: &dyn Ranged, field: Option<&str>, message: String) {
        self.skips += 1;
        self.push(at, field, message, ProblemSeverity::Error);
    }

    fn skip_note(&self) -> &'static str {
        "; it is skipped"
    }
}

#[cfg(test)]
mod tests;
