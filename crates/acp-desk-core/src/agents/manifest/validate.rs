//! Checking a manifest's front matter, parsed as plain YAML data, field by field against
//! `AcpDefinition`, so that every problem is found in one pass (serde would stop at the first)
//! and each names its field and line.

use serde_json::{Map, Value};

use super::locate::{line_of, segments};
use crate::agents::problem::{ConfigProblem, ProblemSeverity};

pub(super) struct Checker<'a> {
    file: String,
    /// The front matter's text, and the file line it starts on (1-based).
    yaml: &'a str,
    first_line: u32,
    pub(super) problems: Vec<ConfigProblem>,
}

/// How a YAML value is called in a message.
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "true/false",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// `loadSession` for `load_session` / `load-session`, to suggest the seed's spelling.
fn camel(key: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in key.chars() {
        if c == '_' || c == '-' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The shape of the seed's `AcpCapabilities`: every leaf a boolean.
enum Shape {
    Bool,
    Map(&'static [(&'static str, Shape)]),
}

const FS: &[(&str, Shape)] = &[
    ("readTextFile", Shape::Bool),
    ("writeTextFile", Shape::Bool),
];
const CLIENT: &[(&str, Shape)] = &[("fs", Shape::Map(FS)), ("terminal", Shape::Bool)];
const PROMPT: &[(&str, Shape)] = &[
    ("image", Shape::Bool),
    ("audio", Shape::Bool),
    ("embeddedContext", Shape::Bool),
];
const MCP: &[(&str, Shape)] = &[("http", Shape::Bool), ("sse", Shape::Bool)];
const AGENT: &[(&str, Shape)] = &[
    ("loadSession", Shape::Bool),
    ("promptCapabilities", Shape::Map(PROMPT)),
    ("mcpCapabilities", Shape::Map(MCP)),
];
const CAPABILITIES: &[(&str, Shape)] =
    &[("client", Shape::Map(CLIENT)), ("agent", Shape::Map(AGENT))];

impl<'a> Checker<'a> {
    pub(super) fn new(file: String, yaml: &'a str, first_line: u32) -> Self {
        Self {
            file,
            yaml,
            first_line,
            problems: Vec::new(),
        }
    }

    pub(super) fn line(&self, path: &str) -> Option<u32> {
        line_of(self.yaml, &segments(path))
            .and_then(|i| u32::try_from(i).ok())
            .map(|i| i + self.first_line)
    }

    fn push(&mut self, path: &str, severity: ProblemSeverity, message: String) {
        let problem = ConfigProblem {
            file: self.file.clone(),
            line: self.line(path),
            column: None,
            field: (!path.is_empty()).then(|| path.to_string()),
            message,
            severity,
        };
        self.problems.push(problem);
    }

    pub(super) fn error(&mut self, path: &str, message: impl Into<String>) {
        self.push(path, ProblemSeverity::Error, message.into());
    }

    pub(super) fn warn(&mut self, path: &str, message: impl Into<String>) {
        self.push(path, ProblemSeverity::Warning, message.into());
    }

    pub(super) fn has_errors(&self) -> bool {
        self.problems
            .iter()
            .any(|p| p.severity == ProblemSeverity::Error)
    }

    /// A required field: absent gives an error naming what to add.
    fn required<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        path: &str,
        key: &str,
        example: &str,
    ) -> Option<&'v Value> {
        match obj.get(key) {
            Some(Value::Null) | None => {
                self.error(
                    &child(path, key),
                    format!("missing: add `{key}: {example}`"),
                );
                None
            }
            Some(v) => Some(v),
        }
    }

    /// Text, not empty. YAML reads `1.0` or `123` as numbers: those get "write it in quotes".
    fn text<'v>(&mut self, v: &'v Value, path: &str, example: &str) -> Option<&'v str> {
        match v {
            Value::String(s) if s.trim().is_empty() => {
                self.error(path, format!("is empty: write it, like `{example}`"));
                None
            }
            Value::String(s) => Some(s),
            Value::Number(n) => {
                self.error(
                    path,
                    format!("is the number {n}, not text: write it in quotes, like \"{n}\""),
                );
                None
            }
            other => {
                self.error(
                    path,
                    format!(
                        "expected text, found {}: write it like `{example}`",
                        kind_of(other)
                    ),
                );
                None
            }
        }
    }

    fn required_text<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        path: &str,
        key: &str,
        example: &str,
    ) -> Option<&'v str> {
        let v = self.required(obj, path, key, example)?;
        self.text(v, &child(path, key), example)
    }

    fn optional_text<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        path: &str,
        key: &str,
        example: &str,
    ) -> Option<&'v str> {
        match obj.get(key) {
            None => None,
            Some(v) => self.text(v, &child(path, key), example),
        }
    }

    /// One of `allowed` (text).
    fn one_of<'v>(
        &mut self,
        v: &'v Value,
        path: &str,
        allowed: &[&str],
        hint: &str,
    ) -> Option<&'v str> {
        let list = allowed
            .iter()
            .map(|a| format!("`{a}`"))
            .collect::<Vec<_>>()
            .join(", ");
        match v {
            Value::String(s) if allowed.contains(&s.as_str()) => Some(s),
            Value::String(s) => {
                self.error(path, format!("`{s}` is not one of {list}{hint}"));
                None
            }
            other => {
                self.error(
                    path,
                    format!("expected one of {list}, found {}{hint}", kind_of(other)),
                );
                None
            }
        }
    }

    fn mapping<'v>(
        &mut self,
        v: &'v Value,
        path: &str,
        what: &str,
    ) -> Option<&'v Map<String, Value>> {
        match v {
            Value::Object(m) => Some(m),
            other => {
                self.error(
                    path,
                    format!("expected a mapping ({what}), found {}", kind_of(other)),
                );
                None
            }
        }
    }

    fn string_list(&mut self, v: &Value, path: &str, example: &str) {
        match v {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    if !item.is_string() {
                        let p = format!("{path}[{i}]");
                        match item {
                            Value::Number(n) => self.error(
                                &p,
                                format!(
                                    "is the number {n}, not text: write it in quotes, like \"{n}\""
                                ),
                            ),
                            other => {
                                self.error(&p, format!("expected text, found {}", kind_of(other)))
                            }
                        }
                    }
                }
            }
            other => self.error(
                path,
                format!(
                    "expected a list of text, found {}: write it like `{example}`",
                    kind_of(other)
                ),
            ),
        }
    }

    /// A mapping of names to text (`env`, `headers`). `env_names`: names must be usable as
    /// environment variable names.
    fn string_map(&mut self, v: &Value, path: &str, env_names: bool) {
        let Some(m) = self.mapping(v, path, "of names to text values") else {
            return;
        };
        for (k, val) in m {
            let p = child(path, k);
            if env_names && (k.is_empty() || k.contains('=') || k.contains('\0')) {
                self.error(
                    &p,
                    "is not a usable environment variable name (no `=`, not empty)",
                );
            }
            match val {
                Value::String(_) => {}
                // The value itself may be a secret: never repeated in the message.
                Value::Number(_) | Value::Bool(_) => self.error(
                    &p,
                    format!("is {}, not text: write the value in quotes", kind_of(val)),
                ),
                other => self.error(&p, format!("expected text, found {}", kind_of(other))),
            }
        }
    }

    fn unknown_keys(&mut self, obj: &Map<String, Value>, path: &str, known: &[&str], what: &str) {
        for k in obj.keys() {
            if known.contains(&k.as_str()) {
                continue;
            }
            let guess = camel(k);
            let hint = if known.contains(&guess.as_str()) && guess != *k {
                format!(" (did you mean `{guess}`?)")
            } else {
                String::new()
            };
            self.warn(
                &child(path, k),
                format!(
                    "is not a field of {what}{hint}; ignored (known: {})",
                    known.join(", ")
                ),
            );
        }
    }

    fn shape(&mut self, v: &Value, path: &str, shape: &Shape) {
        match shape {
            Shape::Bool => {
                if !v.is_boolean() {
                    self.error(
                        path,
                        format!("expected true or false, found {}", kind_of(v)),
                    );
                }
            }
            Shape::Map(fields) => {
                let Some(m) = self.mapping(v, path, "of capabilities") else {
                    return;
                };
                let known: Vec<&str> = fields.iter().map(|(k, _)| *k).collect();
                self.unknown_keys(m, path, &known, "ACP's capabilities");
                for (k, s) in fields.iter() {
                    if let Some(val) = m.get(*k) {
                        self.shape(val, &child(path, k), s);
                    }
                }
            }
        }
    }

    /// Checks the whole front matter. `folder` is the name of the folder holding the file.
    pub(super) fn definition(&mut self, root: &Value, folder: &str) {
        let Value::Object(top) = root else {
            self.error(
                "",
                format!(
                    "the front matter is {}, not a mapping of fields: write `name: ...`, `id: ...`, and the other AcpDefinition fields, one per line",
                    kind_of(root)
                ),
            );
            return;
        };
        if let Some(name) = self.required_text(top, "", "name", folder) {
            if !is_kebab(name) {
                self.error(
                    "name",
                    format!(
                        "`{name}` is not kebab case: use lowercase letters, digits and single hyphens, like `my-agent`"
                    ),
                );
            } else if name != folder {
                self.error(
                    "name",
                    format!(
                        "`{name}` differs from its folder `{folder}`: AIP-44 requires them equal; rename the folder to `{name}` or set `name: {folder}`"
                    ),
                );
            }
        }
        self.required_text(top, "", "id", "my-agent");
        self.required_text(
            top,
            "",
            "description",
            "What this agent does, in a sentence.",
        );
        if let Some(version) = self.required_text(top, "", "version", "\"1.0.0\"")
            && let Err(e) = semver::Version::parse(version)
        {
            self.error(
                "version",
                format!(
                    "`{version}` is not a semantic version ({e}): write MAJOR.MINOR.PATCH, like \"1.0.0\""
                ),
            );
        }
        if let Some(kind) = self.required(top, "", "kind", "server") {
            self.one_of(
                kind,
                "kind",
                &["client", "server", "bridge"],
                " (an agent ACP Desk starts is `server` or `bridge`)",
            );
        }
        if let Some(t) = self.required(top, "", "transport", "stdio") {
            self.transport(t);
        }
        if let Some(tags) = top.get("tags") {
            self.string_list(tags, "tags", "[coding, local]");
        }
        let Some(metadata) =
            self.required(top, "", "metadata", "{aip44: {acp_rev: ..., tier: basic}}")
        else {
            return;
        };
        let Some(metadata) = self.mapping(metadata, "metadata", "with `aip44` in it") else {
            return;
        };
        if let Some(aip44) =
            self.required(metadata, "metadata", "aip44", "{acp_rev: ..., tier: basic}")
            && let Some(aip44) = self.mapping(aip44, "metadata.aip44", "with `acp_rev` and `tier`")
        {
            self.aip44(aip44, top.get("kind").and_then(Value::as_str));
        }
        if let Some(ours) = metadata.get("acp-desk") {
            self.launch(ours);
        }
    }

    fn transport(&mut self, v: &Value) {
        const ALLOWED: &[&str] = &["stdio", "websocket"];
        match v {
            Value::Array(items) if items.is_empty() => {
                self.error("transport", "is an empty list: write `stdio`");
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.one_of(item, &format!("transport[{i}]"), ALLOWED, "");
                }
            }
            other => {
                self.one_of(other, "transport", ALLOWED, "");
            }
        }
        let listed = |s: &str| match v {
            Value::Array(items) => items.iter().any(|i| i.as_str() == Some(s)),
            other => other.as_str() == Some(s),
        };
        if !listed("stdio") && listed("websocket") {
            self.warn(
                "transport",
                "does not include `stdio`, which AIP-44 requires: ACP Desk starts agents over stdio only, so this agent is listed as unsupported",
            );
        }
    }

    fn aip44(&mut self, aip44: &Map<String, Value>, kind: Option<&str>) {
        const P: &str = "metadata.aip44";
        self.required_text(aip44, P, "acp_rev", "<commit of the ACP repository>");
        let tier = self
            .required(aip44, P, "tier", "basic")
            .and_then(|t| {
                self.one_of(
                    t,
                    "metadata.aip44.tier",
                    &["basic", "governance-aware", "sandboxed"],
                    "",
                )
            })
            .map(str::to_string);
        if let Some(caps) = aip44.get("capabilities") {
            self.shape(
                caps,
                "metadata.aip44.capabilities",
                &Shape::Map(CAPABILITIES),
            );
        }
        let operator = self.optional_text(aip44, P, "operator", "OPERATOR.md");
        self.optional_text(aip44, P, "governance", "GOVERNANCE.md");
        let sandbox = self.optional_text(aip44, P, "sandbox", "SANDBOX.md");
        // The seed's cross-field rules are warnings: published examples omit both refs.
        if kind == Some("server") && operator.is_none() && !aip44.contains_key("operator") {
            self.warn(
                "metadata.aip44.operator",
                "missing: AIP-44 requires an OPERATOR.md ref for `kind: server` (used anyway; add `operator: OPERATOR.md`)",
            );
        }
        if tier.as_deref() == Some("sandboxed")
            && sandbox.is_none()
            && !aip44.contains_key("sandbox")
        {
            self.warn(
                "metadata.aip44.sandbox",
                "missing: AIP-44 requires a SANDBOX.md ref for `tier: sandboxed` (used anyway; add `sandbox: SANDBOX.md`)",
            );
        }
        if let Some(audit) = aip44.get("audit") {
            self.audit(audit);
        }
        if let Some(servers) = aip44.get("mcp_servers") {
            self.mcp_servers(servers);
        }
    }

    fn audit(&mut self, v: &Value) {
        const P: &str = "metadata.aip44.audit";
        let Some(audit) = self.mapping(v, P, "with `kind` and/or `ref`") else {
            return;
        };
        self.unknown_keys(audit, P, &["ref", "kind"], "AcpAuditConfig");
        let kind = audit
            .get("kind")
            .and_then(|k| {
                self.one_of(
                    k,
                    "metadata.aip44.audit.kind",
                    &["governance", "external", "off"],
                    "",
                )
            })
            .map(str::to_string);
        if let Some(r) = self.optional_text(audit, P, "ref", "/path/to/audit-folder") {
            if r.contains("://") {
                self.warn(
                    "metadata.aip44.audit.ref",
                    format!(
                        "`{r}` is not a folder: ACP Desk writes its audit log to a folder (absolute, or relative to the manifest's folder); the default folder is used"
                    ),
                );
            } else if kind.as_deref() == Some("off") {
                self.warn(
                    "metadata.aip44.audit.ref",
                    "is unused: `kind: off` writes no audit log",
                );
            }
        }
    }

    fn mcp_servers(&mut self, v: &Value) {
        const P: &str = "metadata.aip44.mcp_servers";
        let Value::Array(items) = v else {
            self.error(
                P,
                format!(
                    "expected a list of MCP servers (`- name: ..., transport: stdio`), found {}",
                    kind_of(v)
                ),
            );
            return;
        };
        let mut seen: Vec<String> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let p = format!("{P}[{i}]");
            let Some(s) = self.mapping(item, &p, "with `name` and `transport`") else {
                continue;
            };
            self.unknown_keys(
                s,
                &p,
                &[
                    "name",
                    "transport",
                    "ref",
                    "headers",
                    "credentialRef",
                    "args",
                    "env",
                ],
                "AcpMcpServer",
            );
            if let Some(name) = self.required_text(s, &p, "name", "files") {
                if seen.iter().any(|n| n == name) {
                    self.error(
                        &child(&p, "name"),
                        format!("`{name}` names another MCP server too: give each its own name"),
                    );
                }
                seen.push(name.to_string());
            }
            let transport = self
                .required(s, &p, "transport", "stdio")
                .and_then(|t| {
                    self.one_of(t, &child(&p, "transport"), &["stdio", "http", "sse"], "")
                })
                .map(str::to_string);
            let reference = self.optional_text(s, &p, "ref", "npx -y @scope/server");
            if transport.as_deref() == Some("stdio")
                && reference.is_none()
                && !s.contains_key("ref")
            {
                self.warn(
                    &child(&p, "ref"),
                    "missing: a `stdio` MCP server is started from its `ref` (the command); without it there is nothing to start",
                );
            }
            let remote = matches!(transport.as_deref(), Some("http" | "sse"));
            if remote {
                match reference {
                    Some(r) if !is_http_url(r) => self.error(
                        &child(&p, "ref"),
                        format!(
                            "`{r}` is not an http(s) URL: an `http` or `sse` MCP server is reached at the URL in `ref`, like `https://example.com/mcp`"
                        ),
                    ),
                    Some(_) => {}
                    None if !s.contains_key("ref") => self.warn(
                        &child(&p, "ref"),
                        "missing: an `http` or `sse` MCP server is reached at the URL in `ref`; without it there is nothing to reach",
                    ),
                    None => {}
                }
            }
            if let Some(h) = s.get("headers") {
                self.string_map(h, &child(&p, "headers"), false);
            }
            if let Some(r) = self.optional_text(s, &p, "credentialRef", "vault/path")
                && let Err(e) = crate::secrets::SecretRef::new(r)
            {
                self.warn(
                    &child(&p, "credentialRef"),
                    format!("{e}; this server is not given to sessions until it is fixed"),
                );
            }
            if let Some(a) = s.get("args") {
                self.string_list(a, &child(&p, "args"), "[--flag, value]");
            }
            if let Some(e) = s.get("env") {
                self.string_map(e, &child(&p, "env"), true);
            }
        }
    }

    /// Our vendor key `metadata.acp-desk: {command, args, env}`.
    fn launch(&mut self, v: &Value) {
        const P: &str = "metadata.acp-desk";
        let Some(m) = self.mapping(v, P, "with `command`, and optional `args` and `env`") else {
            return;
        };
        self.unknown_keys(m, P, &["command", "args", "env"], "ACP Desk's launch key");
        self.required_text(m, P, "command", "my-agent");
        if let Some(a) = m.get("args") {
            self.string_list(a, "metadata.acp-desk.args", "[--acp]");
        }
        if let Some(e) = m.get("env") {
            self.string_map(e, "metadata.acp-desk.env", true);
        }
    }
}

fn is_http_url(s: &str) -> bool {
    url::Url::parse(s).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
}

/// Lowercase letters and digits in words joined by single hyphens.
pub(super) fn is_kebab(s: &str) -> bool {
    !s.is_empty()
        && s.split('-').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}
