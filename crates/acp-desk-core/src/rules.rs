//! Remembered permission answers ("always allow" / "always reject"), kept by the client itself.
//!
//! Agents often scope their own "always" to one call, so ACP Desk remembers the user's "always"
//! answers per **agent** (its launch name), **project** (the session's canonical cwd) and **tool**
//! ([`ToolMatcher`]: the tool kind plus exactly one of an exact command, an exact path, an exact
//! title, or a glob pattern the user wrote). The store is one JSON file in the config folder
//! (`permission-rules.json`), shared by the CLI and the app.
//!
//! # What a rule matches
//!
//! A permission request is reduced to a [`Subject`] ([`Subject::from_prompt`]): its kind, its
//! title, the command it runs (`rawInput.command` / `rawInput.cmd`, a string or an array of
//! words) and the paths it touches (`rawInput.file_path` / `path` / `abs_path` / ..., then
//! `locations[].path`), each canonicalised.
//!
//! - An exact command matches only the same command line, compared after trimming.
//! - An exact path matches only a request whose paths are all that one path.
//! - An exact title matches only the same title.
//! - A pattern (only ever written by the user, never derived from an answer) is a glob applied
//!   to the command (execute), the single path (read/edit/delete/move) or the title.
//!
//! **A command pattern never matches a compound command.** Before a pattern is tried on a
//! command, any command holding a shell control operator or substitution (`&&`, `||`, `;`, `|`,
//! `&`, backtick, `$(`, `>`, `<`, a newline) is refused outright, unless the pattern's text is
//! exactly the command. So `ls*` matches `ls -la` but never `ls && rm -rf x`, `ls; rm x`,
//! `ls | sh`, `ls $(rm x)` or `ls\nrm x`. This is deliberately coarse: it also refuses harmless
//! quoted operators (`echo "a;b"`), which then simply ask the user. Exact-command rules are
//! unaffected: the user saw and answered that very line.
//!
//! When both an Allow and a Reject rule match, the Reject rule wins.
//!
//! # The file
//!
//! Written atomically (temp file in the same folder, fsync, rename). A file that cannot be
//! parsed is never silently dropped: it is renamed to `permission-rules.json.bad-<unix-secs>`,
//! the store starts empty and [`RuleStore::open`] returns a [`LoadWarning`] for the caller to show.
//! Mutations re-read the file first so that a rule added by the CLI while the app runs is kept;
//! two processes writing in the same instant can still lose one change (no cross-process lock).

use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use agent_client_protocol_schema::v1 as acp;
use globset::{Glob, GlobBuilder, GlobMatcher};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::events::AgentPromptEvent;

/// The rules file's name in the config folder.
pub const RULES_FILE_NAME: &str = "permission-rules.json";

/// The file format's version; a newer one is refused rather than overwritten.
const FORMAT_VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("could not read the permission rules file {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("could not save the permission rules file {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error(
        "the permission rules file {path} was written by a newer ACP Desk (format {found}); \
         it was left untouched"
    )]
    NewerFormat { path: PathBuf, found: u32 },
    #[error("invalid pattern `{pattern}`: {reason}")]
    BadPattern { pattern: String, reason: String },
    #[error("a rule's project must be an absolute path, got {0}")]
    RelativeProject(PathBuf),
    #[error("no permission rule with id `{0}`")]
    UnknownId(String),
}

/// Shown to the user once: the rules file was unreadable and was set aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadWarning {
    /// Where the unreadable file now is.
    pub moved_to: PathBuf,
    pub reason: String,
}

impl fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the permission rules file could not be read ({}); it was kept as {} and no \
             remembered answers apply until it is fixed",
            self.reason,
            self.moved_to.display()
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Reject,
}

/// What a rule's tool part names: exactly one of these.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Target {
    /// The exact command line (trimmed), for `execute`.
    Command(String),
    /// The exact canonical absolute path, for `read`/`edit`/`delete`/`move`.
    Path(PathBuf),
    /// The exact tool call title, for other kinds (MCP tools, fetch, ...).
    Title(String),
    /// A glob the user wrote, applied to the command, the path or the title (see the module
    /// docs for compound commands).
    Pattern(String),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolMatcher {
    pub kind: acp::ToolKind,
    #[serde(flatten)]
    pub target: Target,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    pub id: String,
    /// The agent's launch name (catalog or settings name).
    pub agent: String,
    /// The session's canonical cwd.
    pub project: PathBuf,
    pub tool: ToolMatcher,
    pub decision: Decision,
    /// RFC 3339, UTC.
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A rule before it is stored (the store gives it an id and a time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRule {
    pub agent: String,
    pub project: PathBuf,
    pub tool: ToolMatcher,
    pub decision: Decision,
    pub note: Option<String>,
}

/// What a permission request is about, in the terms rules match on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    pub kind: acp::ToolKind,
    /// The tool call's title, trimmed.
    pub title: Option<String>,
    /// The command line (trimmed; an array of words is joined with shell quoting).
    pub command: Option<String>,
    /// Every path the request names (raw input first, then locations), canonical, without
    /// duplicates. Paths that cannot be made canonical (relative without a cwd, `..` past a
    /// missing folder) are left out.
    pub paths: Vec<PathBuf>,
}

/// Raw-input keys that hold a single path, as sent by claude-code-acp (`file_path`,
/// `notebook_path`), gemini-cli (`absolute_path`, `file_path`, `path`) and others.
const PATH_KEYS: &[&str] = &[
    "file_path",
    "path",
    "abs_path",
    "absolute_path",
    "notebook_path",
];
/// Raw-input keys that hold a list of paths.
const PATH_LIST_KEYS: &[&str] = &["paths", "file_paths"];
/// Raw-input keys that hold a command (codex-acp sends an array of words under `command`).
const COMMAND_KEYS: &[&str] = &["command", "cmd"];

impl Subject {
    /// Derives the subject of an `agent-prompt`. Relative paths are taken against `cwd` (the
    /// session's cwd) when given.
    pub fn from_prompt(ev: &AgentPromptEvent, cwd: Option<&Path>) -> Subject {
        Subject::from_parts(
            ev.tool_kind,
            ev.tool_name.as_deref(),
            ev.raw_input.as_ref(),
            ev.locations.as_deref().unwrap_or_default(),
            cwd,
        )
    }

    pub fn from_parts(
        kind: Option<acp::ToolKind>,
        title: Option<&str>,
        raw_input: Option<&Value>,
        locations: &[acp::ToolCallLocation],
        cwd: Option<&Path>,
    ) -> Subject {
        let title = title.map(str::trim).filter(|t| !t.is_empty());
        let command = raw_input.and_then(command_of);
        let mut paths: Vec<PathBuf> = Vec::new();
        let mut push = |p: &Path| {
            if let Some(c) = canonical_path(p, cwd)
                && !paths.contains(&c)
            {
                paths.push(c);
            }
        };
        if let Some(Value::Object(map)) = raw_input {
            for key in PATH_KEYS {
                if let Some(Value::String(s)) = map.get(*key)
                    && !s.trim().is_empty()
                {
                    push(Path::new(s.trim()));
                }
            }
            for key in PATH_LIST_KEYS {
                if let Some(Value::Array(items)) = map.get(*key) {
                    items
                        .iter()
                        .filter_map(Value::as_str)
                        .for_each(|s| push(Path::new(s)));
                }
            }
        }
        for loc in locations {
            push(&loc.path);
        }
        Subject {
            kind: kind.unwrap_or_default(),
            title: title.map(str::to_owned),
            command,
            paths,
        }
    }

    /// The single path the request is about, when it names exactly one.
    pub fn single_path(&self) -> Option<&Path> {
        match self.paths.as_slice() {
            [p] => Some(p),
            _ => None,
        }
    }

    /// The exact matcher an "always" answer to this request remembers: the command for
    /// `execute`, the path for file kinds naming exactly one path, else the title. `None` when
    /// the request has nothing to pin the answer to (then "always" can only apply once).
    pub fn exact_matcher(&self) -> Option<ToolMatcher> {
        use acp::ToolKind as K;
        let target = match self.kind {
            K::Execute => self.command.clone().map(Target::Command),
            K::Read | K::Edit | K::Delete | K::Move => {
                self.single_path().map(|p| Target::Path(p.to_owned()))
            }
            _ => None,
        }
        .or_else(|| self.title.clone().map(Target::Title))?;
        Some(ToolMatcher {
            kind: self.kind,
            target,
        })
    }

    /// What a pattern is applied to, and whether it is a command.
    fn pattern_subject(&self) -> Option<(String, bool)> {
        use acp::ToolKind as K;
        match self.kind {
            K::Execute => match (&self.command, &self.title) {
                (Some(c), _) => Some((c.clone(), true)),
                // Without a command the title is all we have; treat it as a command so that
                // the compound check still applies.
                (None, Some(t)) => Some((t.clone(), true)),
                (None, None) => None,
            },
            K::Read | K::Edit | K::Delete | K::Move => self
                .single_path()
                .map(|p| (p.to_string_lossy().into_owned(), false)),
            _ => self.title.clone().map(|t| (t, false)),
        }
    }
}

fn command_of(raw: &Value) -> Option<String> {
    let map = raw.as_object()?;
    COMMAND_KEYS.iter().find_map(|key| match map.get(*key)? {
        Value::String(s) => Some(s.trim().to_owned()).filter(|s| !s.is_empty()),
        Value::Array(words) => {
            let words: Option<Vec<&str>> = words.iter().map(Value::as_str).collect();
            let joined = shell_words::join(words?);
            Some(joined.trim().to_owned()).filter(|s| !s.is_empty())
        }
        _ => None,
    })
}

/// Absolute, with `.`/`..` and symlinks resolved as far as the path exists (a file about to be
/// created does not yet). `None` for a relative path without `cwd`, or a `..` below a missing
/// folder (which we cannot resolve honestly).
pub fn canonical_path(p: &Path, cwd: Option<&Path>) -> Option<PathBuf> {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd?.join(p)
    };
    if let Ok(c) = std::fs::canonicalize(&abs) {
        return Some(c);
    }
    // Canonicalise the longest existing ancestor, then append the rest.
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    let mut cur: &Path = &abs;
    loop {
        let parent = cur.parent()?;
        match cur.components().next_back()? {
            Component::Normal(name) => rest.push(name),
            Component::CurDir => {}
            _ => return None,
        }
        if let Ok(mut base) = std::fs::canonicalize(parent) {
            for name in rest.iter().rev() {
                base.push(name);
            }
            return Some(base);
        }
        cur = parent;
    }
}

/// True when `cmd` holds a shell control operator, redirection or substitution (see the module
/// docs). Quotes are not interpreted on purpose: a refused harmless command only means the user
/// is asked.
pub fn has_shell_control(cmd: &str) -> bool {
    cmd.contains("$(")
        || cmd
            .chars()
            .any(|c| matches!(c, '&' | '|' | ';' | '`' | '>' | '<' | '\n' | '\r' | '\0'))
}

/// Whether `subject` is a read whose every path lies inside one of `roots` (canonical). For the
/// optional "allow reads inside the roots" policy.
pub fn is_read_inside(subject: &Subject, roots: &[PathBuf]) -> bool {
    subject.kind == acp::ToolKind::Read
        && !subject.paths.is_empty()
        && subject
            .paths
            .iter()
            .all(|p| roots.iter().any(|r| p.starts_with(r)))
}

fn compile(pattern: &str, kind: acp::ToolKind) -> Result<GlobMatcher, RulesError> {
    let is_path = matches!(
        kind,
        acp::ToolKind::Read | acp::ToolKind::Edit | acp::ToolKind::Delete | acp::ToolKind::Move
    );
    // For paths `*` stays within one folder and `**` crosses folders, as in .gitignore; a
    // command or title has no folders.
    let glob: Result<Glob, _> = GlobBuilder::new(pattern)
        .literal_separator(is_path)
        .backslash_escape(true)
        .build();
    glob.map(|g| g.compile_matcher())
        .map_err(|e| RulesError::BadPattern {
            pattern: pattern.to_owned(),
            reason: e.kind().to_string(),
        })
}

fn target_matches(target: &Target, glob: Option<&GlobMatcher>, s: &Subject) -> bool {
    match target {
        Target::Command(c) => s.command.as_deref() == Some(c.trim()),
        Target::Path(p) => s.single_path() == Some(p.as_path()),
        Target::Title(t) => s.title.as_deref() == Some(t.trim()),
        Target::Pattern(pat) => {
            let Some((text, is_command)) = s.pattern_subject() else {
                return false;
            };
            if text == pat.trim() {
                return true;
            }
            if is_command && has_shell_control(&text) {
                return false;
            }
            glob.is_some_and(|g| g.is_match(&text))
        }
    }
}

#[derive(Serialize, Deserialize)]
struct FileFormat {
    version: u32,
    rules: Vec<Rule>,
}

#[derive(Debug)]
struct Entry {
    rule: Rule,
    /// For pattern rules; `None` for a pattern that does not compile (never matches).
    glob: Option<GlobMatcher>,
}

impl Entry {
    fn new(rule: Rule) -> Entry {
        let glob = match &rule.tool.target {
            Target::Pattern(p) => compile(p, rule.tool.kind)
                .inspect_err(|e| tracing::warn!(id = %rule.id, "permission rule ignored: {e}"))
                .ok(),
            _ => None,
        };
        Entry { rule, glob }
    }

    fn matches(&self, agent: &str, project: &Path, s: &Subject) -> bool {
        self.rule.agent == agent
            && self.rule.project == project
            && self.rule.tool.kind == s.kind
            && target_matches(&self.rule.tool.target, self.glob.as_ref(), s)
    }
}

/// The remembered rules, backed by one JSON file.
#[derive(Debug)]
pub struct RuleStore {
    path: PathBuf,
    entries: Vec<Entry>,
}

impl RuleStore {
    /// `<config dir>/permission-rules.json`.
    pub fn default_path() -> PathBuf {
        crate::paths::config_dir().join(RULES_FILE_NAME)
    }

    /// Opens the store at [`RuleStore::default_path`].
    pub fn open_default() -> Result<(RuleStore, Option<LoadWarning>), RulesError> {
        RuleStore::open(RuleStore::default_path())
    }

    /// Loads `path` (a missing file is an empty store). A corrupt file is set aside and reported
    /// through the warning; only I/O errors and a newer format are errors.
    pub fn open(path: impl Into<PathBuf>) -> Result<(RuleStore, Option<LoadWarning>), RulesError> {
        let mut store = RuleStore {
            path: path.into(),
            entries: Vec::new(),
        };
        let warning = store.reload()?;
        Ok((store, warning))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Re-reads the file (another process may have changed it).
    pub fn reload(&mut self) -> Result<Option<LoadWarning>, RulesError> {
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.entries.clear();
                return Ok(None);
            }
            Err(source) => {
                return Err(RulesError::Read {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        match serde_json::from_slice::<FileFormat>(&bytes) {
            Ok(f) if f.version > FORMAT_VERSION => Err(RulesError::NewerFormat {
                path: self.path.clone(),
                found: f.version,
            }),
            Ok(f) => {
                self.entries = f.rules.into_iter().map(Entry::new).collect();
                Ok(None)
            }
            Err(e) => {
                let moved_to = self.set_aside()?;
                tracing::warn!(file = %self.path.display(), bad = %moved_to.display(), "corrupt permission rules file: {e}");
                self.entries.clear();
                Ok(Some(LoadWarning {
                    moved_to,
                    reason: e.to_string(),
                }))
            }
        }
    }

    fn set_aside(&self) -> Result<PathBuf, RulesError> {
        crate::atomic_file::set_aside(&self.path).map_err(|source| RulesError::Write {
            path: self.path.clone(),
            source,
        })
    }

    /// Stores a rule (after re-reading the file) and saves. Patterns are checked here so that a
    /// bad one is refused with its reason instead of never matching.
    pub fn add(&mut self, new: NewRule) -> Result<Rule, RulesError> {
        if !new.project.is_absolute() {
            return Err(RulesError::RelativeProject(new.project));
        }
        if let Target::Pattern(p) = &new.tool.target {
            compile(p, new.tool.kind)?;
        }
        self.reload_for_update()?;
        let target = match new.tool.target {
            Target::Command(c) => Target::Command(c.trim().to_owned()),
            Target::Title(t) => Target::Title(t.trim().to_owned()),
            other => other,
        };
        let mut id = new_id();
        while self.entries.iter().any(|e| e.rule.id == id) {
            id = new_id();
        }
        let rule = Rule {
            id,
            agent: new.agent,
            project: new.project,
            tool: ToolMatcher {
                kind: new.tool.kind,
                target,
            },
            decision: new.decision,
            created_at: crate::audit::rfc3339(SystemTime::now()),
            note: new.note,
        };
        self.entries.push(Entry::new(rule.clone()));
        self.save()?;
        Ok(rule)
    }

    /// Rules, optionally only those of one agent and/or one project, oldest first.
    pub fn list(&self, agent: Option<&str>, project: Option<&Path>) -> Vec<&Rule> {
        self.entries
            .iter()
            .map(|e| &e.rule)
            .filter(|r| agent.is_none_or(|a| r.agent == a))
            .filter(|r| project.is_none_or(|p| r.project == p))
            .collect()
    }

    /// Removes the rule with `id` (after re-reading the file) and saves.
    pub fn revoke(&mut self, id: &str) -> Result<Rule, RulesError> {
        self.reload_for_update()?;
        let i = self
            .entries
            .iter()
            .position(|e| e.rule.id == id)
            .ok_or_else(|| RulesError::UnknownId(id.to_owned()))?;
        let removed = self.entries.remove(i).rule;
        self.save()?;
        Ok(removed)
    }

    /// The rule that answers `subject` for this agent and project: a matching Reject rule if
    /// any, else a matching Allow rule.
    pub fn find(&self, agent: &str, project: &Path, subject: &Subject) -> Option<&Rule> {
        let mut allow = None;
        for e in &self.entries {
            if e.matches(agent, project, subject) {
                match e.rule.decision {
                    Decision::Reject => return Some(&e.rule),
                    Decision::Allow => {
                        allow.get_or_insert(&e.rule);
                    }
                }
            }
        }
        allow
    }

    /// One line for listings (CLI `rules list`, settings page).
    pub fn describe(rule: &Rule) -> String {
        let what = match &rule.tool.target {
            Target::Command(c) => format!("command `{c}`"),
            Target::Path(p) => format!("path {}", p.display()),
            Target::Title(t) => format!("tool \"{t}\""),
            Target::Pattern(p) => format!("pattern `{p}`"),
        };
        let decision = match rule.decision {
            Decision::Allow => "allow",
            Decision::Reject => "reject",
        };
        let kind = serde_json::to_value(rule.tool.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "other".to_owned());
        let note = rule
            .note
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        format!(
            "{id}  {decision} {kind} {what} for {agent} in {project}, since {at}{note}",
            id = rule.id,
            agent = rule.agent,
            project = rule.project.display(),
            at = rule.created_at,
        )
    }

    /// A corrupt file found while updating is set aside as on load; the update then starts
    /// from an empty list rather than failing.
    fn reload_for_update(&mut self) -> Result<(), RulesError> {
        if let Some(w) = self.reload()? {
            tracing::warn!("{w}");
        }
        Ok(())
    }

    fn save(&self) -> Result<(), RulesError> {
        let file = FileFormat {
            version: FORMAT_VERSION,
            rules: self.entries.iter().map(|e| e.rule.clone()).collect(),
        };
        let mut bytes = serde_json::to_vec_pretty(&file).map_err(|e| RulesError::Write {
            path: self.path.clone(),
            source: io::Error::other(e),
        })?;
        bytes.push(b'\n');
        crate::atomic_file::write_atomic(&self.path, &bytes).map_err(|source| RulesError::Write {
            path: self.path.clone(),
            source,
        })
    }
}

fn next_counter() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    COUNTER.fetch_add(1, Ordering::Relaxed)
}

/// Unique across processes in practice: time, pid and a counter.
fn new_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mix = (nanos as u64) ^ (u64::from(std::process::id()) << 40) ^ next_counter();
    format!("r-{mix:016x}")
}

#[cfg(test)]
mod tests;
