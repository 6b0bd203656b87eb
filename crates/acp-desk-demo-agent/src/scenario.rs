//! Scenario files: their format, the embedded set, loading extra ones, and selection.
//!
//! A scenario is stored as raw JSON text and only parsed into typed steps when a turn starts,
//! because placeholders such as `{cwd}` are substituted in the raw text first (that way every
//! ACP payload in a step can be an exact schema type instead of a string template).

use std::path::Path;

use agent_client_protocol_schema::v1::{
    AvailableCommand, PermissionOption, Plan, StopReason, ToolCall, ToolCallUpdate, UsageUpdate,
};
use anyhow::{Context, bail};
use serde::Deserialize;

/// The embedded scenarios, in selection order. `tour` is last on purpose: its keywords
/// ("help", "hello") are common words, and any more specific scenario should win.
pub const EMBEDDED: &[(&str, &str)] = &[
    ("stream", include_str!("../scenarios/stream.json")),
    ("plan", include_str!("../scenarios/plan.json")),
    ("edit", include_str!("../scenarios/edit.json")),
    ("permission", include_str!("../scenarios/permission.json")),
    ("elicit-form", include_str!("../scenarios/elicit-form.json")),
    ("elicit-url", include_str!("../scenarios/elicit-url.json")),
    // Before `background`: its keyword is a prefix of this one's.
    (
        "background-stop",
        include_str!("../scenarios/background-stop.json"),
    ),
    ("background", include_str!("../scenarios/background.json")),
    ("usage", include_str!("../scenarios/usage.json")),
    ("unknown", include_str!("../scenarios/unknown.json")),
    ("crash", include_str!("../scenarios/crash.json")),
    ("garbage", include_str!("../scenarios/garbage.json")),
    ("slow", include_str!("../scenarios/slow.json")),
    ("flood", include_str!("../scenarios/flood.json")),
    ("refuse", include_str!("../scenarios/refuse.json")),
    ("maxtokens", include_str!("../scenarios/maxtokens.json")),
    ("files", include_str!("../scenarios/files.json")),
    ("terminal", include_str!("../scenarios/terminal.json")),
    ("outside", include_str!("../scenarios/outside.json")),
    ("direct", include_str!("../scenarios/direct.json")),
    ("showcase", include_str!("../scenarios/showcase.json")),
    ("scenarios", include_str!("../scenarios/scenarios.json")),
    ("tour", include_str!("../scenarios/tour.json")),
];

/// The scenario played when no keyword matches.
pub const DEFAULT_SCENARIO: &str = "tour";

/// A cwd used to validate scenarios before any session exists.
const VALIDATION_CWD: &str = "/home/demo/project";

pub const DEFAULT_CHUNK_CHARS: usize = 12;
pub const DEFAULT_DELAY_MS: u64 = 15;

/// Only the parts needed to select a scenario; the steps are parsed per turn.
#[derive(Debug, Deserialize)]
struct Header {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    keywords: Vec<String>,
}

/// One scenario as stored: selection data plus the raw text its steps are parsed from.
#[derive(Debug, Clone)]
pub struct StoredScenario {
    pub name: String,
    pub description: String,
    pub keywords: Vec<String>,
    raw: String,
}

/// A whole scenario file after placeholder substitution.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub name: String,
    // Selection reads these through `Header`; they are listed only so that
    // `deny_unknown_fields` accepts them.
    #[serde(default, rename = "description")]
    _description: serde::de::IgnoredAny,
    #[serde(default, rename = "keywords")]
    _keywords: serde::de::IgnoredAny,
    pub steps: Vec<Step>,
}

/// One scenario step, externally tagged: `{"say": {...}}`, `{"raw_line": "..."}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Say(TextStep),
    Think(TextStep),
    Plan(Plan),
    ToolCall(ToolCall),
    ToolCallUpdate(ToolCallUpdate),
    Permission(PermissionStep),
    Usage(UsageUpdate),
    Commands(Vec<AvailableCommand>),
    Mode(ModeStep),
    Info(InfoStep),
    /// Sent without typed validation, so scenarios can emit variants the schema rejects.
    Update(serde_json::Value),
    RawLine(String),
    LongLine(LongLineStep),
    Sleep(SleepStep),
    Exit(ExitStep),
    Stop(StopReason),
    Flood(FloodStep),
    ReadFile(ReadFileStep),
    WriteFile(WriteFileStep),
    Terminal(TerminalStep),
    WriteDirectly(WriteDirectlyStep),
    /// `elicitation/create` (asks.rs).
    Elicit(crate::asks::ElicitStep),
    /// Raw updates written after a delay, on their own thread: the turn does not wait (a
    /// background task's later life, an autonomous cycle).
    Later(crate::asks::LaterStep),
}

/// Writes a file with `std::fs` itself, not through the client (as real agents' own edit tools
/// do); `path` as for [`ReadFileStep`] (relative: against the session's cwd). Parent folders are
/// created.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteDirectlyStep {
    pub path: String,
    pub content: String,
}

/// `fs/read_text_file`. A relative `path` is resolved against the session's cwd (portable
/// scenarios) unless `as_is`. The result is checked and reported in the streamed text.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadFileStep {
    pub path: String,
    pub line: Option<u32>,
    pub limit: Option<u32>,
    /// Send `path` exactly as written (to test a client's refusal of relative paths).
    #[serde(default)]
    pub as_is: bool,
    /// The exact text expected.
    pub expect: Option<String>,
    /// The JSON-RPC error code expected instead of a result.
    pub expect_error: Option<i64>,
}

/// `fs/write_text_file`; `path` as for [`ReadFileStep`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteFileStep {
    pub path: String,
    pub content: String,
    #[serde(default)]
    pub as_is: bool,
    pub expect_error: Option<i64>,
}

/// `terminal/create`, then the `then` actions in order, each reported in the streamed text.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TerminalStep {
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// Relative: against the session's cwd. Absent: not sent (the client's default).
    pub cwd: Option<String>,
    pub output_byte_limit: Option<u64>,
    /// A tool call (kind execute) with the terminal as its content, as real agents show it.
    pub tool_call_id: Option<String>,
    #[serde(default)]
    pub then: Vec<TermAction>,
    pub expect_exit_code: Option<u32>,
    pub expect_signal: Option<String>,
    pub expect_truncated: Option<bool>,
    pub expect_output_contains: Option<String>,
    /// The error code `terminal/create` is expected to fail with.
    pub expect_error: Option<i64>,
}

/// What to do with a created terminal: `"wait"`, `"output"`, `"kill"`, `"release"`,
/// `{"sleep": ms}`, `{"wait_many": {"count": 100, "read": "notes.txt"}}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TermAction {
    Wait,
    Output,
    Kill,
    Release,
    Sleep(u64),
    WaitMany(WaitManyAction),
}

/// `count` `terminal/wait_for_exit` requests sent at once, and, while they wait, an
/// `fs/read_text_file` of `read` (relative: against the session's cwd), then with `release`
/// a `terminal/release` of the terminal (the waits then get the kill's status).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitManyAction {
    pub count: usize,
    pub read: Option<String>,
    #[serde(default)]
    pub release: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextStep {
    pub text: String,
    pub chunk_chars: Option<usize>,
    pub delay_ms: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionStep {
    pub tool_call: ToolCallUpdate,
    pub options: Vec<PermissionOption>,
    #[serde(default)]
    pub on_allow: Vec<Step>,
    #[serde(default)]
    pub on_reject: Vec<Step>,
    #[serde(default)]
    pub on_cancelled: Vec<Step>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModeStep {
    pub current_mode_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InfoStep {
    pub title: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LongLineStep {
    pub bytes: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SleepStep {
    pub ms: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExitStep {
    pub code: i32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FloodStep {
    pub chunks: u64,
    pub chunk_bytes: usize,
    /// 0 disables the tool calls.
    #[serde(default)]
    pub tool_every: u64,
}

/// Values substituted into a scenario's raw text before its steps are parsed.
pub struct Placeholders<'a> {
    pub cwd: &'a str,
    pub session_id: &'a str,
    /// Human-readable list of the loaded scenarios, for the `scenarios` scenario.
    pub scenarios: &'a str,
}

impl StoredScenario {
    pub fn parse_raw(raw: String) -> anyhow::Result<Self> {
        let header: Header = serde_json::from_str(&raw).context("scenario header")?;
        if header.name.trim().is_empty() {
            bail!("scenario has an empty name");
        }
        let stored = StoredScenario {
            name: header.name,
            description: header.description,
            keywords: header.keywords,
            raw,
        };
        // Fail when loading, not in the middle of somebody's turn.
        stored
            .materialize(&Placeholders {
                cwd: VALIDATION_CWD,
                session_id: "demo-session-0",
                scenarios: "(scenario list)",
            })
            .with_context(|| format!("scenario {:?}", stored.name))?;
        Ok(stored)
    }

    /// Substitutes placeholders in the raw text and parses the steps.
    pub fn materialize(&self, values: &Placeholders<'_>) -> anyhow::Result<ScenarioFile> {
        let text = self
            .raw
            .replace("{cwd}", &json_escape(values.cwd))
            .replace("{session_id}", &json_escape(values.session_id))
            .replace("{scenarios}", &json_escape(values.scenarios));
        let file: ScenarioFile = serde_json::from_str(&text)?;
        Ok(file)
    }

    fn matches(&self, prompt_lower: &str) -> bool {
        self.keywords
            .iter()
            .filter(|k| !k.trim().is_empty())
            .any(|k| prompt_lower.contains(&k.to_lowercase()))
    }
}

/// The contents of a JSON string literal for `s`, without the quotes, so a path with
/// backslashes or quotes cannot break the scenario's JSON.
fn json_escape(s: &str) -> String {
    let quoted = serde_json::Value::String(s.to_owned()).to_string();
    quoted[1..quoted.len() - 1].to_owned()
}

/// All loaded scenarios in selection order.
#[derive(Debug, Clone)]
pub struct Library {
    scenarios: Vec<StoredScenario>,
}

impl Library {
    pub fn embedded() -> anyhow::Result<Self> {
        let mut scenarios = Vec::with_capacity(EMBEDDED.len());
        for (file, raw) in EMBEDDED {
            let s = StoredScenario::parse_raw((*raw).to_owned())
                .with_context(|| format!("embedded scenario file {file}.json"))?;
            scenarios.push(s);
        }
        Ok(Library { scenarios })
    }

    /// Adds the `*.json` files of `dir` (sorted by file name) in front of the current list;
    /// a scenario with the same name as an existing one replaces it.
    pub fn with_extra_dir(mut self, dir: &Path) -> anyhow::Result<Self> {
        let mut paths = Vec::new();
        for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "json") {
                paths.push(path);
            }
        }
        paths.sort();
        let mut extra: Vec<StoredScenario> = Vec::new();
        for path in paths {
            let raw = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            let s = StoredScenario::parse_raw(raw).with_context(|| path.display().to_string())?;
            extra.retain(|e| e.name != s.name);
            extra.push(s);
        }
        self.scenarios
            .retain(|s| !extra.iter().any(|e| e.name == s.name));
        extra.append(&mut self.scenarios);
        self.scenarios = extra;
        Ok(self)
    }

    pub fn all(&self) -> &[StoredScenario] {
        &self.scenarios
    }

    pub fn by_name(&self, name: &str) -> Option<&StoredScenario> {
        self.scenarios.iter().find(|s| s.name == name)
    }

    /// The first scenario with a keyword in `prompt_text`, else the default one.
    pub fn select(&self, prompt_text: &str) -> Option<&StoredScenario> {
        let lower = prompt_text.to_lowercase();
        self.scenarios
            .iter()
            .find(|s| s.matches(&lower))
            .or_else(|| self.by_name(DEFAULT_SCENARIO))
            .or_else(|| self.scenarios.last())
    }

    /// Markdown list of the scenarios and their keywords, substituted for `{scenarios}`.
    pub fn listing(&self) -> String {
        let mut out = String::new();
        for s in &self.scenarios {
            let keywords = s
                .keywords
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ");
            out.push_str(&format!(
                "- **{}** ({}): {}\n",
                s.name, keywords, s.description
            ));
        }
        out
    }
}

/// Splits `text` into pieces of at most `chunk_chars` characters, never inside a UTF-8
/// sequence (chunks are sent as JSON strings, which must be valid UTF-8).
pub fn split_chunks(text: &str, chunk_chars: usize) -> Vec<&str> {
    if chunk_chars == 0 || text.is_empty() {
        return vec![text];
    }
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut count = 0;
    for (idx, _) in text.char_indices() {
        if count == chunk_chars {
            chunks.push(&text[start..idx]);
            start = idx;
            count = 0;
        }
        count += 1;
    }
    chunks.push(&text[start..]);
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol_schema::v1::{PermissionOptionKind, ToolCallContent};

    fn materialized(name: &str) -> ScenarioFile {
        let lib = Library::embedded().unwrap();
        lib.by_name(name)
            .unwrap()
            .materialize(&Placeholders {
                cwd: "/tmp/pro\"ject",
                session_id: "demo-session-1",
                scenarios: "list",
            })
            .unwrap()
    }

    fn walk<'a>(steps: &'a [Step], out: &mut Vec<&'a Step>) {
        for step in steps {
            out.push(step);
            if let Step::Permission(p) = step {
                walk(&p.on_allow, out);
                walk(&p.on_reject, out);
                walk(&p.on_cancelled, out);
            }
        }
    }

    /// The schema types skip invalid list items and default invalid optional fields instead
    /// of failing, so a typo in a scenario would silently vanish. Comparing the JSON with its
    /// typed round trip catches that.
    fn assert_round_trips<T: serde::de::DeserializeOwned + serde::Serialize>(
        what: &str,
        value: &serde_json::Value,
    ) {
        let typed: T = serde_json::from_value(value.clone()).unwrap();
        let back = serde_json::to_value(&typed).unwrap();
        let mut original = value.clone();
        // Defaults the schema omits when serializing.
        if let Some(obj) = original.as_object_mut() {
            if obj.get("status").and_then(|s| s.as_str()) == Some("pending")
                && back.get("status").is_none()
            {
                obj.remove("status");
            }
            if obj.get("kind").and_then(|s| s.as_str()) == Some("other")
                && back.get("kind").is_none()
            {
                obj.remove("kind");
            }
        }
        assert_eq!(
            original, back,
            "{what} does not round-trip through the schema type"
        );
    }

    #[test]
    #[should_panic(expected = "does not round-trip")]
    fn round_trip_check_catches_silently_skipped_items() {
        let bad = serde_json::json!({
            "toolCallId": "a", "title": "t", "content": [{"type": "dif", "path": "/x"}]
        });
        assert_round_trips::<ToolCall>("bad", &bad);
    }

    #[test]
    fn every_embedded_scenario_parses_and_validates() {
        let lib = Library::embedded().unwrap();
        assert_eq!(lib.all().len(), EMBEDDED.len());
        for (file, raw) in EMBEDDED {
            let raw_value: serde_json::Value = serde_json::from_str(raw).unwrap();
            let stored = StoredScenario::parse_raw((*raw).to_owned()).unwrap();
            assert_eq!(&stored.name, file, "file name and scenario name differ");
            assert!(!stored.description.is_empty(), "{file}: no description");
            let steps = raw_value["steps"].as_array().unwrap();
            let mut stack: Vec<&serde_json::Value> = steps.iter().collect();
            while let Some(step) = stack.pop() {
                let obj = step.as_object().unwrap();
                assert_eq!(obj.len(), 1, "{file}: a step has exactly one key");
                for (kind, body) in obj {
                    match kind.as_str() {
                        "tool_call" => assert_round_trips::<ToolCall>(file, body),
                        "tool_call_update" => assert_round_trips::<ToolCallUpdate>(file, body),
                        "plan" => assert_round_trips::<Plan>(file, body),
                        "usage" => assert_round_trips::<UsageUpdate>(file, body),
                        "permission" => {
                            assert_round_trips::<ToolCallUpdate>(file, &body["tool_call"]);
                            for o in body["options"].as_array().unwrap() {
                                assert_round_trips::<PermissionOption>(file, o);
                            }
                            for branch in ["on_allow", "on_reject", "on_cancelled"] {
                                if let Some(b) = body.get(branch).and_then(|b| b.as_array()) {
                                    stack.extend(b.iter());
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    #[test]
    fn edit_scenario_has_a_diff_with_the_session_cwd() {
        let file = materialized("edit");
        let mut steps = Vec::new();
        walk(&file.steps, &mut steps);
        let diff = steps.iter().find_map(|s| {
            let content = match s {
                Step::ToolCall(tc) => &tc.content,
                Step::ToolCallUpdate(u) => u.fields.content.as_ref()?,
                _ => return None,
            };
            content.iter().find_map(|c| match c {
                ToolCallContent::Diff(d) => Some(d.clone()),
                _ => None,
            })
        });
        let diff = diff.expect("no diff content in the edit scenario");
        assert_eq!(diff.path, Path::new("/tmp/pro\"ject/src/main.rs"));
        assert!(diff.old_text.is_some());
    }

    #[test]
    fn permission_options_use_all_three_kinds_with_ids_unlike_kinds() {
        let file = materialized("permission");
        let p = file
            .steps
            .iter()
            .find_map(|s| match s {
                Step::Permission(p) => Some(p),
                _ => None,
            })
            .unwrap();
        for kind in [
            PermissionOptionKind::AllowOnce,
            PermissionOptionKind::AllowAlways,
            PermissionOptionKind::RejectOnce,
        ] {
            assert!(p.options.iter().any(|o| o.kind == kind), "missing {kind:?}");
        }
        for o in &p.options {
            let kind_name = serde_json::to_value(o.kind).unwrap();
            assert_ne!(kind_name.as_str(), Some(&*o.option_id.0));
        }
        assert!(!p.on_allow.is_empty() && !p.on_reject.is_empty());
    }

    #[test]
    fn selection_by_keyword() {
        let lib = Library::embedded().unwrap();
        let pick = |text: &str| lib.select(text).unwrap().name.clone();
        assert_eq!(pick("please EDIT main.rs"), "edit");
        assert_eq!(pick("show me a diff"), "edit");
        assert_eq!(pick("ask for Permission"), "permission");
        assert_eq!(pick("what does it cost?"), "usage");
        assert_eq!(pick("stream some markdown"), "stream");
        assert_eq!(pick("make a plan"), "plan");
        assert_eq!(pick("flood"), "flood");
        assert_eq!(pick("max-tokens"), "maxtokens");
        assert_eq!(pick("send an unknown-update"), "unknown");
        assert_eq!(pick("read and write files"), "files");
        assert_eq!(pick("run something in a terminal"), "terminal");
        assert_eq!(pick("read outside the folder"), "outside");
        assert_eq!(pick("hi there"), "tour");
        assert_eq!(pick(""), "tour");
        assert_eq!(pick("hello"), "tour");
        // The test scenarios are listed on request, not in the greeting, which says how to
        // get a real agent.
        assert_eq!(pick("scenarios"), "scenarios");
        let tour = &lib.by_name("tour").unwrap().raw;
        assert!(
            !tour.contains("{scenarios}") && !tour.contains("20 MB"),
            "{tour}"
        );
        for agent in [
            "Claude",
            "Codex",
            "Gemini CLI",
            "goose",
            "opencode",
            "agent_servers",
        ] {
            assert!(tour.contains(agent), "the greeting names {agent}");
        }
        assert!(
            lib.by_name("scenarios")
                .unwrap()
                .raw
                .contains("{scenarios}")
        );
        // A specific scenario beats the tour's generic "help" keyword.
        assert_eq!(pick("help me edit"), "edit");
    }

    #[test]
    fn extra_dir_takes_precedence() {
        let dir = std::env::temp_dir().join(format!("demo-agent-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("mine.json"),
            r#"{"name": "edit", "description": "override", "keywords": ["banana", "edit"],
                "steps": [{"say": {"text": "overridden"}}]}"#,
        )
        .unwrap();
        std::fs::write(dir.join("ignored.txt"), "not a scenario").unwrap();
        let lib = Library::embedded().unwrap().with_extra_dir(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(lib.all()[0].description, "override");
        assert_eq!(lib.all().iter().filter(|s| s.name == "edit").count(), 1);
        assert_eq!(lib.select("banana").unwrap().description, "override");
        assert_eq!(lib.select("edit").unwrap().description, "override");
    }

    #[test]
    fn invalid_scenarios_are_rejected_at_load() {
        let bad_step = r#"{"name": "x", "steps": [{"dance": {}}]}"#;
        assert!(StoredScenario::parse_raw(bad_step.to_owned()).is_err());
        let bad_tool = r#"{"name": "x", "steps": [{"tool_call": {"title": "no id"}}]}"#;
        assert!(StoredScenario::parse_raw(bad_tool.to_owned()).is_err());
        let typo = r#"{"name": "x", "steps": [{"say": {"txt": "typo"}}]}"#;
        assert!(StoredScenario::parse_raw(typo.to_owned()).is_err());
    }

    #[test]
    fn chunks_split_at_char_boundaries() {
        assert_eq!(split_chunks("abcdefg", 3), vec!["abc", "def", "g"]);
        assert_eq!(split_chunks("abc", 3), vec!["abc"]);
        assert_eq!(split_chunks("", 3), vec![""]);
        assert_eq!(split_chunks("abc", 0), vec!["abc"]);
        let text = "héllo wörld 🦀🦀🦀 日本語のテキスト";
        for n in 1..8 {
            let chunks = split_chunks(text, n);
            assert_eq!(chunks.concat(), text);
            for c in &chunks {
                assert!(c.chars().count() <= n);
                assert!(!c.is_empty());
            }
        }
        assert_eq!(split_chunks("🦀日é", 1), vec!["🦀", "日", "é"]);
    }
}
