//! Reading one registry file: the registry's combined format checked field by field, a bad
//! agent skipped with its line and field, a file of another format named for what it is.

use std::collections::BTreeMap;

use serde_json::Value;

use super::*;

/// Reads one registry file's text. `file` names it in every problem and error.
pub fn parse(file: &str, text: &str) -> Result<ParsedRegistry, RegistryError> {
    let not_registry = |reason: String| RegistryError::NotRegistry {
        file: file.into(),
        reason,
    };
    let top: Value = serde_json::from_str(text).map_err(|e| RegistryError::NotJson {
        file: file.into(),
        line: u32::try_from(e.line()).unwrap_or(u32::MAX),
        column: u32::try_from(e.column()).unwrap_or(u32::MAX),
        message: e.to_string(),
    })?;
    let Some(obj) = top.as_object() else {
        return Err(not_registry(format!("its top level is {}", kind_of(&top))));
    };
    let Some(agents) = obj.get("agents") else {
        if obj.contains_key("id") && obj.contains_key("distribution") {
            return Err(not_registry(
                "it is one agent's agent.json (from the registry repository), not the combined \
                 registry.json the registry publishes"
                    .into(),
            ));
        }
        if obj.contains_key("agent_servers") {
            return Err(not_registry(
                "it has `agent_servers`: it is a settings file (put it in ACP Desk's settings \
                 file instead)"
                    .into(),
            ));
        }
        let keys: Vec<&str> = obj.keys().map(String::as_str).take(8).collect();
        return Err(not_registry(format!(
            "it has no `agents` list (its keys: {})",
            if keys.is_empty() {
                "none".to_string()
            } else {
                keys.join(", ")
            }
        )));
    };
    if !agents.is_array() {
        return Err(not_registry(format!(
            "`agents` is {}, not a list of agents",
            kind_of(agents)
        )));
    }
    let version = match obj.get("version") {
        Some(Value::String(v)) => v.clone(),
        Some(other) => {
            return Err(not_registry(format!(
                "`version` is {}, not a version string like \"1.0.0\"",
                kind_of(other)
            )));
        }
        None => return Err(not_registry("it has no `version`".into())),
    };
    let major = version.split('.').next().unwrap_or_default();
    if major != "1" {
        return Err(not_registry(format!(
            "its format version is {version:?}; ACP Desk reads version 1.x of the registry format \
             (a newer ACP Desk may read this one)"
        )));
    }
    let built_from = obj.get("_source").and_then(|s| {
        Some((
            s.get("commit")?.as_str()?.to_string(),
            s.get("date")?.as_str()?.to_string(),
        ))
    });

    // Once more, borrowing each agent's text, for the line each agent starts on.
    let starts = agent_offsets(text);
    let mut checker = Checker {
        file,
        problems: Vec::new(),
        line: None,
        column: None,
    };
    let mut out: Vec<RegistryAgent> = Vec::new();
    for (i, agent) in agents.as_array().into_iter().flatten().enumerate() {
        let place = starts.get(i).map(|&off| line_column(text, off));
        checker.line = place.map(|p| p.0);
        checker.column = place.map(|p| p.1);
        if let Some(a) = checker.agent(i, agent) {
            if out.iter().any(|o| o.id == a.id) {
                checker.error(
                    format!("agents.{}", a.id),
                    format!(
                        "a second agent with the id `{}`: only the first is used",
                        a.id
                    ),
                );
                continue;
            }
            out.push(a);
        }
    }
    Ok(ParsedRegistry {
        version,
        listed: agents.as_array().map_or(0, Vec::len),
        agents: out,
        problems: checker.problems,
        built_from,
    })
}

/// Byte offsets of the items of the top-level `agents` list.
fn agent_offsets(text: &str) -> Vec<usize> {
    #[derive(serde::Deserialize)]
    struct Top<'a> {
        #[serde(borrow, default)]
        agents: Vec<&'a RawValue>,
    }
    let base = text.as_ptr() as usize;
    serde_json::from_str::<Top<'_>>(text)
        .map(|t| {
            t.agents
                .iter()
                .map(|r| (r.get().as_ptr() as usize).saturating_sub(base))
                .collect()
        })
        .unwrap_or_default()
}

fn line_column(text: &str, offset: usize) -> (u32, u32) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |n| n + 1) + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

struct Checker<'a> {
    file: &'a str,
    problems: Vec<ConfigProblem>,
    /// Where the agent being checked starts.
    line: Option<u32>,
    column: Option<u32>,
}

impl Checker<'_> {
    fn push(&mut self, field: String, message: String, severity: ProblemSeverity) {
        self.problems.push(ConfigProblem {
            file: self.file.into(),
            line: self.line,
            column: self.column,
            field: Some(field),
            message,
            severity,
        });
    }
    fn error(&mut self, field: String, message: String) {
        self.push(field, message, ProblemSeverity::Error);
    }
    fn warning(&mut self, field: String, message: String) {
        self.push(field, message, ProblemSeverity::Warning);
    }

    fn agent(&mut self, index: usize, v: &Value) -> Option<RegistryAgent> {
        let Some(obj) = v.as_object() else {
            self.error(
                format!("agents[{index}]"),
                format!(
                    "an agent must be an object, found {}; it is skipped",
                    kind_of(v)
                ),
            );
            return None;
        };
        let id = match obj.get("id") {
            Some(Value::String(id)) if valid_id(id) => id.clone(),
            Some(Value::String(id)) => {
                self.error(
                    format!("agents[{index}].id"),
                    format!(
                        "{id:?} is not a registry id (lowercase letters, digits and hyphens, \
                         starting with a letter); this agent is skipped"
                    ),
                );
                return None;
            }
            Some(other) => {
                self.error(
                    format!("agents[{index}].id"),
                    format!(
                        "must be a string, found {}; this agent is skipped",
                        kind_of(other)
                    ),
                );
                return None;
            }
            None => {
                self.error(
                    format!("agents[{index}]"),
                    "has no `id`; this agent is skipped".into(),
                );
                return None;
            }
        };
        let at = |f: &str| format!("agents.{id}.{f}");
        let mut ok = true;
        let mut required = |this: &mut Self, key: &str| -> Option<String> {
            match obj.get(key) {
                Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
                Some(Value::String(_)) => {
                    this.error(at(key), "is empty; this agent is skipped".into());
                    ok = false;
                    None
                }
                Some(other) => {
                    this.error(
                        at(key),
                        format!(
                            "must be a string, found {}; this agent is skipped",
                            kind_of(other)
                        ),
                    );
                    ok = false;
                    None
                }
                None => {
                    this.error(at(key), "is missing; this agent is skipped".into());
                    ok = false;
                    None
                }
            }
        };
        let name = required(self, "name");
        let version = required(self, "version");
        let description = required(self, "description");
        if let Some(v) = &version
            && !valid_version(v)
        {
            self.error(
                at("version"),
                format!(
                    "{v:?} is not a semantic version like 1.2.3 (the registry requires one); this \
                     agent is skipped"
                ),
            );
            ok = false;
        }
        let optional = |this: &mut Self, key: &str| -> Option<String> {
            match obj.get(key) {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(other) => {
                    this.warning(
                        at(key),
                        format!("must be a string, found {}; ignored", kind_of(other)),
                    );
                    None
                }
            }
        };
        let repository = optional(self, "repository");
        let website = optional(self, "website");
        let license = optional(self, "license");
        let icon = optional(self, "icon");
        let authors = match obj.get("authors") {
            None | Some(Value::Null) => Vec::new(),
            Some(v) => self
                .strings(&at("authors"), v, ProblemSeverity::Warning)
                .unwrap_or_default(),
        };
        let distribution = match obj.get("distribution") {
            Some(d) => self.distribution(&id, d),
            None => {
                self.error(
                    at("distribution"),
                    "is missing (it says how to start the agent: npx, uvx or binary); this agent \
                     is skipped"
                        .into(),
                );
                None
            }
        };
        match (ok, name, version, description, distribution) {
            (true, Some(name), Some(version), Some(description), Some(distribution)) => {
                Some(RegistryAgent {
                    id,
                    name,
                    version,
                    description,
                    repository,
                    website,
                    authors,
                    license,
                    icon,
                    distribution,
                })
            }
            _ => None,
        }
    }

    fn distribution(&mut self, id: &str, v: &Value) -> Option<Distribution> {
        let at = |f: &str| format!("agents.{id}.distribution{f}");
        let Some(obj) = v.as_object() else {
            self.error(
                at(""),
                format!(
                    "must be an object, found {}; this agent is skipped",
                    kind_of(v)
                ),
            );
            return None;
        };
        let mut d = Distribution::default();
        for (kind, dist) in obj {
            match kind.as_str() {
                "npx" | "uvx" => {
                    let p = self.package(&at(&format!(".{kind}")), dist);
                    if kind == "npx" {
                        d.npx = p;
                    } else {
                        d.uvx = p;
                    }
                }
                "binary" => d.binary = self.binary(&at(".binary"), dist),
                // A kind of distribution newer than this reader: the others may still do.
                _ => {}
            }
        }
        if d.npx.is_none() && d.uvx.is_none() && d.binary.is_empty() {
            let kinds: Vec<&str> = obj.keys().map(String::as_str).collect();
            self.error(
                at(""),
                format!(
                    "has no distribution ACP Desk can use (npx, uvx or binary){}; this agent is \
                     skipped",
                    if kinds.is_empty() {
                        String::new()
                    } else {
                        format!(", only: {}", kinds.join(", "))
                    }
                ),
            );
            return None;
        }
        Some(d)
    }

    fn package(&mut self, field: &str, v: &Value) -> Option<PackageDist> {
        let Some(obj) = v.as_object() else {
            self.error(
                field.into(),
                format!(
                    "must be an object, found {}; this distribution is skipped",
                    kind_of(v)
                ),
            );
            return None;
        };
        let package = match obj.get("package") {
            Some(Value::String(p)) if !p.trim().is_empty() && !p.starts_with('-') => p.clone(),
            Some(Value::String(p)) => {
                self.error(
                    format!("{field}.package"),
                    format!("{p:?} is not a package name; this distribution is skipped"),
                );
                return None;
            }
            Some(other) => {
                self.error(
                    format!("{field}.package"),
                    format!(
                        "must be a string, found {}; this distribution is skipped",
                        kind_of(other)
                    ),
                );
                return None;
            }
            None => {
                self.error(
                    format!("{field}.package"),
                    "is missing; this distribution is skipped".into(),
                );
                return None;
            }
        };
        let cmd = match obj.get("cmd") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) if !c.trim().is_empty() && !c.starts_with('-') => {
                Some(c.clone())
            }
            Some(other) => {
                self.error(
                    format!("{field}.cmd"),
                    format!(
                        "must be the name of the package's executable, found {}; this \
                         distribution is skipped",
                        describe(other)
                    ),
                );
                return None;
            }
        };
        let args = self.args(field, obj)?;
        let env = self.env(field, obj)?;
        Some(PackageDist {
            package,
            cmd,
            args,
            env,
        })
    }

    fn binary(&mut self, field: &str, v: &Value) -> BTreeMap<String, BinaryTarget> {
        let mut out = BTreeMap::new();
        let Some(obj) = v.as_object() else {
            self.error(
                field.into(),
                format!(
                    "must be an object of platforms, found {}; the binaries are skipped",
                    kind_of(v)
                ),
            );
            return out;
        };
        for (platform, target) in obj {
            let at = format!("{field}.{platform}");
            if !PLATFORMS.contains(&platform.as_str()) {
                self.warning(
                    at,
                    format!(
                        "unknown platform (expected one of {}); ignored",
                        PLATFORMS.join(", ")
                    ),
                );
                continue;
            }
            if let Some(t) = self.target(&at, target) {
                out.insert(platform.clone(), t);
            }
        }
        out
    }

    fn target(&mut self, field: &str, v: &Value) -> Option<BinaryTarget> {
        let skipped = "this platform's binary is skipped";
        let Some(obj) = v.as_object() else {
            self.error(
                field.into(),
                format!("must be an object, found {}; {skipped}", kind_of(v)),
            );
            return None;
        };
        let archive = match obj.get("archive") {
            Some(Value::String(a)) => a.clone(),
            Some(other) => {
                self.error(
                    format!("{field}.archive"),
                    format!("must be an address, found {}; {skipped}", kind_of(other)),
                );
                return None;
            }
            None => {
                self.error(format!("{field}.archive"), format!("is missing; {skipped}"));
                return None;
            }
        };
        match url::Url::parse(&archive) {
            Ok(u) if matches!(u.scheme(), "https" | "http") => {
                let path = u.path().to_ascii_lowercase();
                if let Some(ext) = INSTALLER_SUFFIXES.iter().find(|s| path.ends_with(*s)) {
                    self.error(
                        format!("{field}.archive"),
                        format!(
                            "{archive} is an installer ({ext}), which the registry does not allow \
                             and ACP Desk does not run; {skipped}"
                        ),
                    );
                    return None;
                }
            }
            Ok(u) => {
                self.error(
                    format!("{field}.archive"),
                    format!(
                        "{archive}: only http(s) downloads are supported, not {}:; {skipped}",
                        u.scheme()
                    ),
                );
                return None;
            }
            Err(e) => {
                self.error(
                    format!("{field}.archive"),
                    format!("{archive:?} is not an address ({e}); {skipped}"),
                );
                return None;
            }
        }
        let sha256 = match obj.get("sha256") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Some(s.to_ascii_lowercase())
            }
            Some(other) => {
                self.error(
                    format!("{field}.sha256"),
                    format!(
                        "must be 64 hexadecimal digits, found {}; {skipped}",
                        describe(other)
                    ),
                );
                return None;
            }
        };
        let cmd = match obj.get("cmd") {
            Some(Value::String(c)) if safe_relative(c) => c.clone(),
            Some(Value::String(c)) => {
                self.error(
                    format!("{field}.cmd"),
                    format!(
                        "{c:?} must be a path inside the archive (like ./agent), not absolute and \
                         without `..`; {skipped}"
                    ),
                );
                return None;
            }
            Some(other) => {
                self.error(
                    format!("{field}.cmd"),
                    format!("must be a string, found {}; {skipped}", kind_of(other)),
                );
                return None;
            }
            None => {
                self.error(
                    format!("{field}.cmd"),
                    format!("is missing (the executable in the archive); {skipped}"),
                );
                return None;
            }
        };
        let args = self.args(field, obj)?;
        let env = self.env(field, obj)?;
        Some(BinaryTarget {
            archive,
            sha256,
            cmd,
            args,
            env,
        })
    }

    fn args(&mut self, field: &str, obj: &serde_json::Map<String, Value>) -> Option<Vec<String>> {
        match obj.get("args") {
            None | Some(Value::Null) => Some(Vec::new()),
            Some(v) => self.strings(&format!("{field}.args"), v, ProblemSeverity::Error),
        }
    }

    fn strings(
        &mut self,
        field: &str,
        v: &Value,
        severity: ProblemSeverity,
    ) -> Option<Vec<String>> {
        let what = if severity == ProblemSeverity::Error {
            "this distribution is skipped"
        } else {
            "ignored"
        };
        let list = v.as_array().and_then(|items| {
            items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
        });
        if list.is_none() {
            self.push(
                field.into(),
                format!("must be a list of strings, found {}; {what}", describe(v)),
                severity,
            );
        }
        list
    }

    fn env(
        &mut self,
        field: &str,
        obj: &serde_json::Map<String, Value>,
    ) -> Option<BTreeMap<String, String>> {
        let Some(v) = obj.get("env").filter(|v| !v.is_null()) else {
            return Some(BTreeMap::new());
        };
        let Some(map) = v.as_object() else {
            self.error(
                format!("{field}.env"),
                format!(
                    "must be an object of variable names to strings, found {}; this distribution \
                     is skipped",
                    kind_of(v)
                ),
            );
            return None;
        };
        let mut out = BTreeMap::new();
        for (k, val) in map {
            // The value is never quoted back: env values may be secrets.
            let Some(s) = val.as_str() else {
                self.error(
                    format!("{field}.env.{k}"),
                    format!(
                        "must be a string, found {}; this distribution is skipped",
                        kind_of(val)
                    ),
                );
                return None;
            };
            if k.is_empty() || k.contains('=') || k.contains('\0') {
                self.error(
                    format!("{field}.env"),
                    format!("{k:?} is not a variable name; this distribution is skipped"),
                );
                return None;
            }
            out.insert(k.clone(), s.to_string());
        }
        Some(out)
    }
}

/// A short description of a wrong value: strings are quoted (cut), others named by kind.
fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => {
            let cut: String = s.chars().take(40).collect();
            if cut.len() < s.len() {
                format!("{cut:?}…")
            } else {
                format!("{cut:?}")
            }
        }
        other => kind_of(other).into(),
    }
}

pub(super) fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// `^[0-9]+\.[0-9]+\.[0-9]+` (the registry's pattern), then only characters that keep it one
/// safe folder name (`-rc.1`, `+build`).
pub(super) fn valid_version(v: &str) -> bool {
    let mut parts = v.splitn(3, '.');
    let (Some(a), Some(b), Some(rest)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    let patch_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits(a)
        && digits(b)
        && patch_len > 0
        && v.len() <= 64
        && rest
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'+'))
}

/// A relative path with only normal parts (and `.`): stays inside the folder it is joined to.
pub(crate) fn safe_relative(p: &str) -> bool {
    use std::path::Component;
    let path = Path::new(p);
    !p.trim().is_empty()
        && !p.contains('\\')
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        && path.components().any(|c| matches!(c, Component::Normal(_)))
}
