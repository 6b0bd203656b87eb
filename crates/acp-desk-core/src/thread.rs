//! The thread model: turns ACP `session/update`s into [`StreamEvent`]s, merging tool calls by
//! `toolCallId` (DESIGN.md, "The StreamEvent contract").

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use agent_client_protocol_schema::MaybeUndefined;
use agent_client_protocol_schema::v1::{self as acp, SessionUpdate};
use serde_json::{Value, json};

use crate::events::{AgentPromptEvent, ToolCallEvent};
use crate::events::{CommandInfo, CommandInput, NoticeSeverity, NoticeSource, StreamEvent};

/// A tool call as merged so far: its events merged by the one rule ([`ToolCallEvent::merge`]).
#[derive(Debug, Clone)]
pub struct ToolCallState {
    merged: ToolCallEvent,
    /// `tool-result` is emitted once, when the call first becomes completed or failed.
    resulted: bool,
    /// Approximate bytes held in content and raw input/output.
    payload_bytes: usize,
    /// The payload was dropped to bound memory.
    payload_dropped: bool,
}

/// Tool calls whose content and raw input/output are kept while they run (for the
/// `tool-result` and for permission requests about them): at most this many calls and this many
/// bytes. Older running calls lose their payloads first (their `tool-result` then says
/// `payloadDropped`); finished calls keep only title, kind and status. Without this bound, an
/// agent that sends many large tool outputs would grow the engine's memory for the whole
/// session. Consumers already hold every payload: they got each one in a `tool-call` event.
const MAX_RUNNING_PAYLOADS: usize = 256;
const MAX_PAYLOAD_BYTES: usize = 16 * 1024 * 1024;

impl ToolCallState {
    fn new(first: ToolCallEvent) -> Self {
        Self {
            merged: first,
            resulted: false,
            payload_bytes: 0,
            payload_dropped: false,
        }
    }

    /// The title; `""` while no event carried one.
    pub fn title(&self) -> &str {
        &self.merged.tool_name
    }

    pub fn kind(&self) -> Option<acp::ToolKind> {
        self.merged.tool_kind
    }

    pub fn status(&self) -> Option<acp::ToolCallStatus> {
        self.merged.status
    }

    /// Empty once the payload was dropped (the call finished, or memory was bounded).
    pub fn content(&self) -> &[acp::ToolCallContent] {
        self.merged.content.as_deref().unwrap_or_default()
    }

    pub fn locations(&self) -> &[acp::ToolCallLocation] {
        self.merged.locations.as_deref().unwrap_or_default()
    }

    pub fn raw_input(&self) -> Option<&Value> {
        self.merged.input()
    }

    fn drop_payload(&mut self) {
        let m = &mut self.merged;
        m.content = None;
        m.locations = None;
        m.arguments = Value::Null;
        m.raw_output = None;
        m.meta = None;
        self.payload_bytes = 0;
    }

    fn measure(&mut self) -> usize {
        self.payload_bytes = self.content().iter().map(content_size).sum::<usize>()
            + self.raw_input().map_or(0, value_size)
            + self.merged.raw_output.as_ref().map_or(0, value_size);
        self.payload_bytes
    }
}

/// Roughly the memory a JSON value holds; strings dominate.
fn value_size(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len() + 24,
        Value::Array(a) => a.iter().map(value_size).sum::<usize>() + 24,
        Value::Object(o) => {
            o.iter()
                .map(|(k, v)| k.len() + value_size(v))
                .sum::<usize>()
                + 48
        }
        _ => 16,
    }
}

fn content_size(c: &acp::ToolCallContent) -> usize {
    match c {
        acp::ToolCallContent::Content(c) => match &c.content {
            acp::ContentBlock::Text(t) => t.text.len() + 64,
            acp::ContentBlock::Image(i) => i.data.len() + 64,
            acp::ContentBlock::Audio(a) => a.data.len() + 64,
            _ => 512,
        },
        acp::ToolCallContent::Diff(d) => {
            d.new_text.len() + d.old_text.as_ref().map_or(0, String::len) + 64
        }
        _ => 64,
    }
}

#[derive(Default)]
pub struct Thread {
    session_id: String,
    tools: HashMap<String, ToolCallState>,
    /// Calls that still hold payloads, oldest first.
    with_payload: std::collections::VecDeque<String>,
    /// Approximate bytes held by those payloads.
    payload_bytes: usize,
    /// This turn's calls, oldest first, with the paths they name (kept after their payload
    /// goes): a change the watcher reports after its call finished is still its call's.
    turn_calls: Vec<TurnCall>,
}

/// A call of this turn and the paths it named (see [`paths_named`]).
#[derive(Debug, Default)]
struct TurnCall {
    id: String,
    paths: Vec<PathBuf>,
    /// Reads and searches name paths they never change.
    reads_only: bool,
}

/// Calls of one turn remembered for [`Thread::call_naming`]; a turn with more keeps the latest.
const MAX_TURN_CALLS: usize = 1024;

impl Thread {
    pub fn new(session_id: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            tools: HashMap::new(),
            with_payload: std::collections::VecDeque::new(),
            payload_bytes: 0,
            turn_calls: Vec::new(),
        }
    }

    /// A turn starts: calls of earlier turns no longer explain a change.
    pub fn new_turn(&mut self) {
        self.turn_calls.clear();
    }

    /// The tool call of this turn that most likely wrote `path`: a call that names it and may
    /// change files (not a read or a search), the running one first, else the latest. Used to
    /// place a `file-changed` with its call: the watcher reports a change up to
    /// [`crate::watch::MAX_DELAY`] after it happened, when its call may have finished and the
    /// next one begun. `None` when no call names the path (a shell command names none).
    pub fn call_naming(&self, path: &Path) -> Option<String> {
        let writers = || {
            self.turn_calls
                .iter()
                .rev()
                .filter(|c| !c.reads_only && c.paths.iter().any(|p| p == path))
        };
        let running = writers().find(|c| {
            self.tools.get(&c.id).is_some_and(|t| {
                !matches!(
                    t.status(),
                    Some(acp::ToolCallStatus::Completed | acp::ToolCallStatus::Failed)
                )
            })
        });
        running.or_else(|| writers().next()).map(|c| c.id.clone())
    }

    pub fn tool(&self, id: &str) -> Option<&ToolCallState> {
        self.tools.get(id)
    }

    /// A running tool call (not completed or failed) whose locations or raw input name `path`:
    /// the call a client request for that path most likely belongs to (ACP requests do not say).
    pub fn running_call_naming(&self, path: &Path) -> Option<String> {
        let mut ids: Vec<&String> = self
            .tools
            .iter()
            .filter(|(_, t)| {
                !matches!(
                    t.status(),
                    Some(acp::ToolCallStatus::Completed | acp::ToolCallStatus::Failed)
                )
            })
            .filter(|(_, t)| {
                paths_named(t.locations(), t.raw_input())
                    .iter()
                    .any(|p| p == path)
            })
            .map(|(id, _)| id)
            .collect();
        // Deterministic when several match.
        ids.sort();
        ids.first().map(|id| (*id).clone())
    }

    /// Approximate bytes of tool-call payloads kept for running calls (bounded by
    /// [`MAX_PAYLOAD_BYTES`]).
    pub fn kept_payload_bytes(&self) -> usize {
        self.payload_bytes
    }

    /// Maps one update to its events, pushed onto `out`. Variants we do not map go out whole as
    /// `unknown-update`, re-serialized from the typed update.
    pub fn apply(&mut self, update: SessionUpdate, out: &mut Vec<StreamEvent>) {
        let sid = || self.session_id.clone();
        match update {
            SessionUpdate::AgentMessageChunk(c) => {
                let (text, content) = split_block(c.content);
                out.push(StreamEvent::TextDelta {
                    session_id: sid(),
                    text,
                    content,
                    message_id: c.message_id.map(|m| m.0.to_string()),
                });
            }
            SessionUpdate::AgentThoughtChunk(c) => {
                let (text, content) = split_block(c.content);
                out.push(StreamEvent::Thought {
                    session_id: sid(),
                    text,
                    content,
                    message_id: c.message_id.map(|m| m.0.to_string()),
                });
            }
            SessionUpdate::UserMessageChunk(c) => {
                let (text, content) = split_block(c.content);
                out.push(StreamEvent::UserMessageDelta {
                    session_id: sid(),
                    text,
                    content,
                    message_id: c.message_id.map(|m| m.0.to_string()),
                });
            }
            SessionUpdate::ToolCall(tc) => self.tool_call(tc, out),
            SessionUpdate::ToolCallUpdate(u) => self.tool_call_update(u, out),
            SessionUpdate::Plan(p) => out.push(StreamEvent::Plan {
                session_id: sid(),
                title: None,
                entries: p.entries,
            }),
            SessionUpdate::AvailableCommandsUpdate(c) => out.push(StreamEvent::AvailableCommands {
                session_id: sid(),
                commands: c.available_commands.into_iter().map(command_info).collect(),
            }),
            SessionUpdate::CurrentModeUpdate(m) => out.push(StreamEvent::CurrentMode {
                session_id: sid(),
                current_mode_id: m.current_mode_id.0.to_string(),
            }),
            SessionUpdate::ConfigOptionUpdate(c) => out.push(StreamEvent::ConfigOptions {
                session_id: sid(),
                config_options: c.config_options,
            }),
            SessionUpdate::SessionInfoUpdate(i) => out.push(StreamEvent::SessionInfo {
                session_id: sid(),
                title: tri_state(i.title),
                updated_at: tri_state(i.updated_at),
            }),
            SessionUpdate::UsageUpdate(u) => {
                let meta = u.meta;
                let model = meta
                    .as_ref()
                    .and_then(|m| m.get("_claude/model"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let origin = meta
                    .as_ref()
                    .and_then(|m| m.get("_claude/origin"))
                    .and_then(|o| o.get("kind"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                out.push(StreamEvent::UsageUpdate {
                    session_id: sid(),
                    size: u.size,
                    used: u.used,
                    cost: u.cost,
                    tokens_in: None,
                    tokens_out: None,
                    model,
                    size_inferred: None,
                    reported_size: None,
                    origin,
                    meta,
                });
            }
            SessionUpdate::Notice(n) => out.push(StreamEvent::Notice {
                session_id: sid(),
                severity: match n.severity {
                    acp::NoticeSeverity::Error => NoticeSeverity::Error,
                    acp::NoticeSeverity::Warning => NoticeSeverity::Warning,
                    _ => NoticeSeverity::Info,
                },
                title: n.title,
                description: n.description,
                source: NoticeSource::Agent,
            }),
            // Variants we neither advertised nor map yet (compaction, plan_update, ...): passed
            // through whole, never dropped.
            other => out.push(StreamEvent::UnknownUpdate {
                session_id: sid(),
                update: serde_json::to_value(&other).unwrap_or(Value::Null),
            }),
        }
    }

    fn tool_call(&mut self, tc: acp::ToolCall, out: &mut Vec<StreamEvent>) {
        // claude-code-acp sends `tool_call` twice for one id: the second enriches the first, by
        // the same rule as an update.
        self.record(
            ToolCallEvent {
                session_id: self.session_id.clone(),
                tool_call_id: tc.tool_call_id.0.to_string(),
                tool_name: tc.title,
                arguments: tc.raw_input.unwrap_or(Value::Null),
                is_update: false,
                tool_kind: Some(tc.kind),
                status: Some(tc.status),
                content: Some(tc.content),
                locations: Some(tc.locations),
                raw_output: tc.raw_output,
                meta: tc.meta,
            },
            out,
        );
    }

    /// Merges a call's event into its state (the first one announces it), emits it, and its
    /// `tool-result` when it is the one that finished the call.
    fn record(&mut self, mut ev: ToolCallEvent, out: &mut Vec<StreamEvent>) {
        let id = ev.tool_call_id.clone();
        match self.tools.get_mut(&id) {
            Some(state) => {
                ev.is_update = true;
                state.merged.merge(&ev);
            }
            None => {
                ev.is_update = false;
                self.tools
                    .insert(id.clone(), ToolCallState::new(ev.clone()));
            }
        }
        out.push(StreamEvent::ToolCall(Box::new(ev)));
        self.note_turn_call(&id);
        self.track(&id);
        self.maybe_result(&id, out);
    }

    /// Remembers the paths a call of this turn names, before its payload may be dropped.
    fn note_turn_call(&mut self, id: &str) {
        let Some(state) = self.tools.get(id) else {
            return;
        };
        let named = paths_named(state.locations(), state.raw_input());
        let reads_only = matches!(
            state.kind(),
            Some(acp::ToolKind::Read | acp::ToolKind::Search | acp::ToolKind::Fetch)
        );
        let at = match self.turn_calls.iter().position(|c| c.id == id) {
            Some(at) => at,
            None => {
                if self.turn_calls.len() >= MAX_TURN_CALLS {
                    self.turn_calls.remove(0);
                }
                self.turn_calls.push(TurnCall {
                    id: id.to_owned(),
                    ..TurnCall::default()
                });
                self.turn_calls.len() - 1
            }
        };
        let Some(call) = self.turn_calls.get_mut(at) else {
            return;
        };
        call.reads_only = reads_only;
        for p in named {
            if call.paths.len() < MAX_NAMED_PATHS && !call.paths.contains(&p) {
                call.paths.push(p);
            }
        }
    }

    /// Bounds the payloads kept for running calls (see [`MAX_RUNNING_PAYLOADS`]).
    fn track(&mut self, id: &str) {
        let Some(state) = self.tools.get_mut(id) else {
            return;
        };
        let before = state.payload_bytes;
        let after = state.measure();
        self.payload_bytes = self.payload_bytes - before.min(self.payload_bytes) + after;
        if !self.with_payload.iter().any(|x| x == id) {
            self.with_payload.push_back(id.to_string());
        }
        while self.with_payload.len() > MAX_RUNNING_PAYLOADS
            || (self.payload_bytes > MAX_PAYLOAD_BYTES && self.with_payload.len() > 1)
        {
            let Some(old) = self.with_payload.pop_front() else {
                break;
            };
            if let Some(state) = self.tools.get_mut(&old) {
                self.payload_bytes -= state.payload_bytes.min(self.payload_bytes);
                state.drop_payload();
                state.payload_dropped = true;
            }
        }
    }

    /// Merges a `tool_call_update` (or a permission request's `toolCall`) and emits it as a
    /// `tool-call`, even one that carried nothing but the id: `permission_request` is the caller
    /// that skips those, for a call already known.
    pub fn tool_call_update(&mut self, u: acp::ToolCallUpdate, out: &mut Vec<StreamEvent>) {
        let f = u.fields;
        self.record(
            ToolCallEvent {
                session_id: self.session_id.clone(),
                tool_call_id: u.tool_call_id.0.to_string(),
                tool_name: f.title.unwrap_or_default(),
                arguments: f.raw_input.unwrap_or(Value::Null),
                is_update: true,
                tool_kind: f.kind,
                status: f.status,
                content: f.content,
                locations: f.locations,
                raw_output: f.raw_output,
                meta: u.meta,
            },
            out,
        );
    }

    fn maybe_result(&mut self, id: &str, out: &mut Vec<StreamEvent>) {
        let Some(state) = self.tools.get_mut(id) else {
            return;
        };
        let failed = match state.status() {
            Some(acp::ToolCallStatus::Completed) => false,
            Some(acp::ToolCallStatus::Failed) => true,
            _ => return,
        };
        if state.resulted {
            return;
        }
        state.resulted = true;
        let mut result = json!({
            "content": state.merged.content.take().unwrap_or_default(),
            "rawOutput": state.merged.raw_output.take(),
        });
        if state.payload_dropped {
            result["payloadDropped"] = Value::Bool(true);
        }
        // Finished: the consumers have the payload; keep only what identifies the call.
        self.payload_bytes -= state.payload_bytes.min(self.payload_bytes);
        state.drop_payload();
        self.with_payload.retain(|x| x != id);
        out.push(StreamEvent::ToolResult {
            session_id: self.session_id.clone(),
            tool_call_id: id.to_string(),
            result,
            is_error: Some(failed),
        });
    }

    /// Maps a permission request: merges its `toolCall` (creating the call when no update
    /// announced it, as Gemini CLI and Codex do) and builds the `agent-prompt`.
    pub fn permission_request(
        &mut self,
        req: acp::RequestPermissionRequest,
        request_id: String,
        out: &mut Vec<StreamEvent>,
    ) -> AgentPromptEvent {
        let target = req.tool_call.tool_call_id.0.to_string();
        let meta = req.tool_call.meta.clone();
        let known = self.tools.contains_key(&target);
        let f = &req.tool_call.fields;
        let carries_fields = f.title.is_some()
            || f.kind.is_some()
            || f.status.is_some()
            || f.content.is_some()
            || f.locations.is_some()
            || f.raw_input.is_some()
            || f.raw_output.is_some();
        if !known || carries_fields {
            self.tool_call_update(req.tool_call, out);
        }
        let state = self.tools.get(&target);
        let tool_name = state
            .map(ToolCallState::title)
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        AgentPromptEvent {
            session_id: self.session_id.clone(),
            request_id,
            options: req.options,
            text: Some(match &tool_name {
                Some(t) => format!("Allow {t}?"),
                None => "Allow this tool call?".into(),
            }),
            tool_name,
            raw_input: state.and_then(ToolCallState::raw_input).cloned(),
            meta,
            target_tool_call_id: target,
            tool_kind: state.and_then(ToolCallState::kind),
            content: state
                .map(ToolCallState::content)
                .filter(|c| !c.is_empty())
                .map(<[_]>::to_vec),
            locations: state
                .map(ToolCallState::locations)
                .filter(|l| !l.is_empty())
                .map(<[_]>::to_vec),
        }
    }
}

/// Most paths taken from one tool call: its locations and raw input name a handful; an input
/// with thousands of path-like words is not worth scanning further.
const MAX_NAMED_PATHS: usize = 64;

/// Keys of a tool call's raw input whose string value is a path the call acts on, as the
/// agents we know spell them (claude-code-acp `file_path`/`notebook_path`/`path`, Zed's
/// `abs_path`, a terminal's `cwd`). Free text (`content`, `new_string`, `command`, ...) is never
/// read for paths: a file body that mentions `/etc/shadow` must not make it "named".
const PATH_KEYS: &[&str] = &["file_path", "path", "abs_path", "notebook_path", "cwd"];

/// Key of a raw-input array whose strings are each a path the call acts on.
const PATHS_KEY: &str = "paths";

/// The absolute paths a tool call names: its locations, and in its raw input the top-level
/// values of the known path keys ([`PATH_KEYS`], and the strings of a `paths` array). Nothing
/// is taken from free text: no words of a command line, no paths inside file bodies.
pub fn paths_named(locations: &[acp::ToolCallLocation], raw_input: Option<&Value>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = locations
        .iter()
        .map(|l| l.path.clone())
        .filter(|p| p.is_absolute())
        .collect();
    if let Some(Value::Object(o)) = raw_input {
        let single = PATH_KEYS.iter().filter_map(|k| o.get(*k));
        let listed = o
            .get(PATHS_KEY)
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for v in single.chain(listed) {
            if let Some(s) = v.as_str()
                && Path::new(s).is_absolute()
                && !s.contains('\n')
            {
                out.push(PathBuf::from(s));
            }
        }
    }
    out.truncate(MAX_NAMED_PATHS);
    out
}

fn tri_state(v: MaybeUndefined<String>) -> Option<Option<String>> {
    match v {
        MaybeUndefined::Undefined => None,
        MaybeUndefined::Null => Some(None),
        MaybeUndefined::Value(s) => Some(Some(s)),
    }
}

/// Text blocks become `text`; any other block is carried whole in `content` (with its text, when
/// it has one, for consumers that only print text).
fn split_block(block: acp::ContentBlock) -> (String, Option<Box<acp::ContentBlock>>) {
    match block {
        acp::ContentBlock::Text(t) => (t.text, None),
        other => {
            let text = match &other {
                acp::ContentBlock::ResourceLink(l) => l.uri.clone(),
                _ => String::new(),
            };
            (text, Some(Box::new(other)))
        }
    }
}

fn command_info(c: acp::AvailableCommand) -> CommandInfo {
    let input = c.input.map(|i| {
        let hint = serde_json::to_value(&i)
            .ok()
            .and_then(|v| v.get("hint").and_then(Value::as_str).map(str::to_owned));
        Some(CommandInput { hint })
    });
    CommandInfo {
        name: c.name,
        description: (!c.description.is_empty()).then_some(c.description),
        input,
        meta: c.meta,
    }
}
