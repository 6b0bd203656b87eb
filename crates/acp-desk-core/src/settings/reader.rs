//! The settings file's syntax tree read field by field: [`Reader`] turns each key into its
//! [`Settings`] field or a [`ConfigProblem`] naming the place (the rules are in `settings.rs`).

use super::*;

impl JsoncFields for Reader<'_> {
    fn error(&mut self, at: &dyn Ranged, field: Option<&str>, message: String) {
        self.push(at, field, message, ProblemSeverity::Error);
    }
}

/// Walks the syntax tree, collecting problems with their places.
pub(super) struct Reader<'t> {
    pub(super) file: &'t str,
    pub(super) text: &'t str,
    pub(super) problems: Vec<ConfigProblem>,
    pub(super) invalid_agents: Vec<String>,
}

impl Reader<'_> {
    pub(super) fn finish(self, settings: Settings) -> Loaded {
        Loaded {
            settings,
            problems: self.problems,
            invalid_agents: self.invalid_agents,
        }
    }

    fn push(
        &mut self,
        at: &dyn Ranged,
        field: Option<&str>,
        message: String,
        severity: ProblemSeverity,
    ) {
        self.problems
            .push(located(self.file, self.text, at, field, message, severity));
    }

    fn ignored(&mut self, at: &dyn Ranged, field: &str) {
        self.push(
            at,
            Some(field),
            "not a setting ACP Desk reads: ignored (check its spelling if you meant one)".into(),
            ProblemSeverity::Warning,
        );
    }

    /// An object of on/off switches: each known key sets its flag, the others are listed as
    /// ignored.
    fn switches(&mut self, v: &Value, section: &str, known: &mut [(&str, &mut bool)]) {
        let Some(o) = self.object(v, section) else {
            return;
        };
        for p in &o.properties {
            let field = format!("{section}.{}", p.name.as_str());
            match known.iter_mut().find(|(k, _)| *k == p.name.as_str()) {
                Some((_, flag)) => {
                    if let Some(b) = self.boolean(&p.value, &field) {
                        **flag = b;
                    }
                }
                None => self.ignored(&p.name, &field),
            }
        }
    }

    pub(super) fn settings(&mut self, top: &Object) -> Settings {
        let mut s = Settings::default();
        for prop in &top.properties {
            let key = prop.name.as_str();
            let v = &prop.value;
            match key {
                "agent_servers" => s.agent_servers = self.agent_servers(v),
                "default_agent" => {
                    s.default_agent = self
                        .string(v, "default_agent")
                        .filter(|name| self.non_empty(v, "default_agent", name))
                }
                "notifications" => {
                    let n = &mut s.notifications;
                    self.switches(
                        v,
                        "notifications",
                        &mut [
                            ("permission_requests", &mut n.permission_requests),
                            ("turn_end", &mut n.turn_end),
                        ],
                    );
                }
                "history" => {
                    self.switches(v, "history", &mut [("enabled", &mut s.history.enabled)]);
                }
                "mcp_servers" => s.mcp_servers = self.mcp_servers(v),
                "close_to_tray" => {
                    if let Some(b) = self.boolean(v, key) {
                        s.close_to_tray = b;
                    }
                }
                "checkpoints" => self.checkpoints(v, &mut s.checkpoints),
                "restored_sessions_start" => {
                    if let Some(text) = self.string(v, key) {
                        match text.as_str() {
                            "on_return" => s.restored_sessions_start = RestoredStart::OnReturn,
                            "at_once" => s.restored_sessions_start = RestoredStart::AtOnce,
                            other => self.error(
                                v,
                                Some(key),
                                format!(
                                    "`{other}` is not one of \"on_return\", \"at_once\"; \"on_return\" is used"
                                ),
                            ),
                        }
                    }
                }
                _ => {
                    self.ignored(&prop.name, key);
                    s.ignored.push(key.to_owned());
                }
            }
        }
        s
    }

    fn agent_servers(&mut self, v: &Value) -> Vec<(String, AgentServer)> {
        let mut out: Vec<(String, AgentServer)> = Vec::new();
        let mut seen: Vec<(String, u32)> = Vec::new();
        let Some(o) = self.object(v, "agent_servers") else {
            return out;
        };
        for prop in &o.properties {
            let name = prop.name.as_str().to_owned();
            let field = format!("agent_servers.{name}");
            if name.trim().is_empty() {
                self.error(
                    &prop.name,
                    Some(&field),
                    "an agent needs a name (the key is empty); this entry is skipped".into(),
                );
                continue;
            }
            if let Some((_, line)) = seen.iter().find(|(n, _)| *n == name) {
                self.error(
                    &prop.name,
                    Some(&field),
                    format!(
                        "`{name}` is defined twice (first on line {line}); the first one is used, rename or remove this one"
                    ),
                );
                continue;
            }
            seen.push((name.clone(), line_at(self.text, prop.name.start())));
            if name == "demo" {
                // `--agent demo` always works, whatever the file says.
                self.error(
                    &prop.name,
                    Some(&field),
                    "`demo` is the name of ACP Desk's built-in demo agent, which cannot be replaced; this entry is skipped: rename it to use it".into(),
                );
                continue;
            }
            let has_command = matches!(&prop.value, Value::Object(o)
                if o.properties.iter().any(|p| p.name.as_str() == "command"));
            if !has_command && crate::agents::catalog::builtin(&name).is_some() {
                // What a user pasting Zed's settings brings along: Zed's entries for its own
                // built-in agents (`"claude": {"default_mode": ...}`) have no command. They
                // must not turn ACP Desk's built-in agent of that name off.
                self.push(
                    &prop.name,
                    Some(&field),
                    format!(
                        "no `command`: Zed's settings for its built-in agents have none; ACP Desk starts its own built-in `{name}` and ignores this entry (add `command` to replace the built-in)"
                    ),
                    ProblemSeverity::Warning,
                );
                continue;
            }
            match self.agent_server(&prop.value, &field) {
                Some(server) => out.push((name, server)),
                None => self.invalid_agents.push(name),
            }
        }
        out
    }

    /// `None` (with problems) when any launch field is wrong.
    fn agent_server(&mut self, v: &Value, field: &str) -> Option<AgentServer> {
        let Some(o) = self.object(v, field) else {
            self.invalid_note(field);
            return None;
        };
        let errors_before = self.errors();
        let mut command = None;
        let mut server = AgentServer {
            command: String::new(),
            args: Vec::new(),
            env: BTreeMap::new(),
            manifest: None,
            ignored: Vec::new(),
        };
        for p in &o.properties {
            let key = p.name.as_str();
            let f = format!("{field}.{key}");
            match key {
                "command" => {
                    command = self
                        .string(&p.value, &f)
                        .filter(|c| self.non_empty(&p.value, &f, c))
                }
                "args" => server.args = self.strings(&p.value, &f).unwrap_or_default(),
                "env" => server.env = self.env_map(&p.value, &f).unwrap_or_default(),
                "manifest" => server.manifest = self.string(&p.value, &f),
                // Zed writes `"type": "custom"` on the entries it adds; it means what an entry
                // with a command means here.
                "type" if matches!(&p.value, Value::StringLit(s) if s.value == "custom") => {}
                _ => {
                    self.ignored(&p.name, &f);
                    server.ignored.push(key.to_owned());
                }
            }
        }
        match command {
            Some(c) => server.command = c,
            None if !o.properties.iter().any(|p| p.name.as_str() == "command") => self.error(
                v,
                Some(&format!("{field}.command")),
                "missing: an agent_servers entry needs `command`, the program to run (Zed's entries for its own built-in agents have none: remove the entry to use ACP Desk's built-in agent of that name)".into(),
            ),
            None => {}
        }
        if self.errors() > errors_before {
            self.invalid_note(field);
            return None;
        }
        Some(server)
    }

    fn errors(&self) -> usize {
        self.problems
            .iter()
            .filter(|p| p.severity == ProblemSeverity::Error)
            .count()
    }

    /// Says, on the entry's last problem, that the entry is not used at all.
    fn invalid_note(&mut self, field: &str) {
        if let Some(p) = self.problems.last_mut()
            && p.field.as_deref().is_some_and(|f| f.starts_with(field))
        {
            p.message
                .push_str(&format!(" (so `{field}` is skipped until this is fixed)"));
        }
    }

    fn mcp_servers(&mut self, v: &Value) -> Vec<(String, McpServer)> {
        let mut out: Vec<(String, McpServer)> = Vec::new();
        let Some(o) = self.object(v, "mcp_servers") else {
            return out;
        };
        for prop in &o.properties {
            let name = prop.name.as_str().to_owned();
            let field = format!("mcp_servers.{name}");
            if out.iter().any(|(n, _)| *n == name) {
                self.error(
                    &prop.name,
                    Some(&field),
                    format!("`{name}` is defined twice; the first one is used"),
                );
                continue;
            }
            if let Some(server) = self.mcp_server(&prop.value, &field) {
                out.push((name, server));
            }
        }
        out
    }

    fn mcp_server(&mut self, v: &Value, field: &str) -> Option<McpServer> {
        let o = self.object(v, field)?;
        let errors_before = self.errors();
        let (mut command, mut args, mut env) = (None, Vec::new(), BTreeMap::new());
        let (mut url, mut headers, mut sse) = (None, BTreeMap::new(), false);
        let mut credential_ref = None;
        let mut agents = None;
        let mut ignored = Vec::new();
        for p in &o.properties {
            let key = p.name.as_str();
            let f = format!("{field}.{key}");
            match key {
                "command" => {
                    command = self
                        .string(&p.value, &f)
                        .filter(|c| self.non_empty(&p.value, &f, c))
                }
                "args" => args = self.strings(&p.value, &f).unwrap_or_default(),
                "env" => env = self.env_map(&p.value, &f).unwrap_or_default(),
                "url" => {
                    if let Some(u) = self.string(&p.value, &f) {
                        match url::Url::parse(&u) {
                            Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => {
                                url = Some(u)
                            }
                            Ok(parsed) => self.error(
                                &p.value,
                                Some(&f),
                                format!(
                                    "an MCP server's URL must be http or https, not {}:",
                                    parsed.scheme()
                                ),
                            ),
                            Err(e) => self.error(&p.value, Some(&f), format!("not a URL ({e})")),
                        }
                    }
                }
                "headers" => headers = self.string_map(&p.value, &f).unwrap_or_default(),
                "type" => match self.string(&p.value, &f).as_deref() {
                    Some("http" | "stdio") | None => {}
                    Some("sse") => sse = true,
                    Some(other) => self.error(
                        &p.value,
                        Some(&f),
                        format!("`{other}` is not one of \"stdio\", \"http\", \"sse\""),
                    ),
                },
                "credential_ref" => {
                    if let Some(name) = self.string(&p.value, &f) {
                        match SecretRef::new(&name) {
                            Ok(r) => credential_ref = Some(r),
                            Err(e) => self.error(&p.value, Some(&f), e.to_string()),
                        }
                    }
                }
                "agents" => {
                    if let Some(ids) = self.strings(&p.value, &f) {
                        if ids.is_empty() {
                            self.push(
                                &p.value,
                                Some(&f),
                                "an empty list: no agent gets this server (remove `agents` to give it to every agent)".into(),
                                ProblemSeverity::Warning,
                            );
                        }
                        agents = Some(ids);
                    }
                }
                _ => {
                    self.ignored(&p.name, &f);
                    ignored.push(key.to_owned());
                }
            }
        }
        let transport = match (command, url) {
            (Some(_), Some(_)) => {
                self.error(
                    v,
                    Some(field),
                    "has both `command` and `url`: a server is either a program (command, args, env) or a URL (url, headers); it is skipped".into(),
                );
                return None;
            }
            (Some(command), None) => McpTransport::Stdio { command, args, env },
            (None, Some(url)) if sse => McpTransport::Sse { url, headers },
            (None, Some(url)) => McpTransport::Http { url, headers },
            (None, None) => {
                if self.errors() == errors_before {
                    self.error(
                        v,
                        Some(field),
                        "needs `command` (a program) or `url` (an http or sse server); it is skipped".into(),
                    );
                }
                return None;
            }
        };
        if self.errors() > errors_before {
            return None;
        }
        if matches!(transport, McpTransport::Stdio { .. }) && credential_ref.is_some() {
            let at = o
                .properties
                .iter()
                .find(|p| p.name.as_str() == "credential_ref")
                .map_or(v.range(), |p| p.name.range());
            self.push(
                &at,
                Some(&format!("{field}.credential_ref")),
                "only http and sse servers use a credential; ignored on a program (put secrets in its env as {\"secret\": \"NAME\"})".into(),
                ProblemSeverity::Warning,
            );
        }
        Some(McpServer {
            transport,
            credential_ref,
            agents,
            ignored,
        })
    }

    fn non_empty(&mut self, v: &Value, field: &str, text: &str) -> bool {
        if text.trim().is_empty() {
            self.error(v, Some(field), "is empty".into());
            return false;
        }
        true
    }

    fn checkpoints(&mut self, v: &Value, c: &mut crate::checkpoint::CheckpointSettings) {
        const MB: u64 = 1024 * 1024;
        let Some(o) = self.object(v, "checkpoints") else {
            return;
        };
        for p in &o.properties {
            let key = p.name.as_str();
            let field = format!("checkpoints.{key}");
            match key {
                "enabled" => {
                    if let Some(b) = self.boolean(&p.value, &field) {
                        c.enabled = b;
                    }
                }
                "max_file_mb" | "budget_mb" | "max_age_days" | "max_wait_secs" => {
                    let Some(n) = self.count(&p.value, &field) else {
                        continue;
                    };
                    match key {
                        "max_file_mb" => c.max_file_bytes = n.saturating_mul(MB),
                        "budget_mb" => c.budget_bytes = n.saturating_mul(MB),
                        "max_age_days" => c.max_age_days = u32::try_from(n).unwrap_or(u32::MAX),
                        _ => c.max_wait_secs = u32::try_from(n).unwrap_or(u32::MAX),
                    }
                }
                _ => self.ignored(&p.name, &field),
            }
        }
    }

    /// A whole number of at least 1.
    fn count(&mut self, v: &Value, field: &str) -> Option<u64> {
        if let Value::NumberLit(n) = v
            && let Ok(n) = n.value.parse::<u64>()
            && n >= 1
        {
            return Some(n);
        }
        self.error(
            v,
            Some(field),
            format!(
                "expected a whole number of at least 1, found {}; the default is used",
                kind(v)
            ),
        );
        None
    }

    fn boolean(&mut self, v: &Value, field: &str) -> Option<bool> {
        match v {
            Value::BooleanLit(b) => Some(b.value),
            other => {
                self.error(
                    other,
                    Some(field),
                    format!(
                        "expected true or false, found {}; the default is used",
                        kind(other)
                    ),
                );
                None
            }
        }
    }

    /// An env object: each value a text or `{"secret": "REF"}` (read from the keychain at
    /// launch). Problems name the key, never the value: values may be secrets.
    fn env_map(&mut self, v: &Value, field: &str) -> Option<BTreeMap<String, EnvValue>> {
        let o = self.object(v, field)?;
        let mut out = BTreeMap::new();
        let mut ok = true;
        for p in &o.properties {
            let f = format!("{field}.{}", p.name.as_str());
            match self.env_value(&p.value, &f) {
                Some(value) => {
                    out.insert(p.name.as_str().to_owned(), value);
                }
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    fn env_value(&mut self, v: &Value, field: &str) -> Option<EnvValue> {
        const SHAPE: &str = "a text, or {\"secret\": \"NAME\"} for a secret stored in the keychain (`acp-desk-cli secret set NAME`)";
        match v {
            Value::StringLit(s) => Some(EnvValue::Plain(s.value.to_string())),
            Value::Object(o) => {
                let mut name = None;
                let mut ok = true;
                for p in &o.properties {
                    let f = format!("{field}.{}", p.name.as_str());
                    match (p.name.as_str(), &p.value) {
                        ("secret", Value::StringLit(s)) => match SecretRef::new(&s.value) {
                            Ok(r) => name = Some(r),
                            Err(e) => {
                                ok = false;
                                self.error(&p.value, Some(&f), e.to_string());
                            }
                        },
                        ("secret", other) => {
                            ok = false;
                            self.error(
                                other,
                                Some(&f),
                                format!(
                                    "expected the secret's name (a string), found {}",
                                    kind(other)
                                ),
                            );
                        }
                        (key, _) => {
                            ok = false;
                            self.error(
                                &p.name,
                                Some(&f),
                                format!("`{key}` is not part of a secret value: write {SHAPE}"),
                            );
                        }
                    }
                }
                if !ok {
                    return None;
                }
                if name.is_none() {
                    self.error(v, Some(field), format!("missing `secret`: write {SHAPE}"));
                }
                name.map(EnvValue::Secret)
            }
            other => {
                self.error(
                    other,
                    Some(field),
                    format!("expected {SHAPE}, found {}", kind(other)),
                );
                None
            }
        }
    }
}
