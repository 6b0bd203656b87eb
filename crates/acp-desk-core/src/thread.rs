//! The thread model: turns ACP `session/update`s into [`StreamEvent`]s, merging tool calls by
//! `toolCallId` (DESIGN.md, "The StreamEvent contract").

use std::collections::HashMap;

use agent_client_protocol_schema::MaybeUndefined;
use agent_client_protocol_schema::v1::{self as acp, SessionUpdate};
use serde_json::{Value, json};

use crate::events::{AgentPromptEvent, ToolCallEvent};
use crate::events::{CommandInfo, CommandInput, NoticeSeverity, NoticeSource, StreamEvent};

/// A tool call as merged so far.
#[derive(Debug, Clone, Default)]
pub struct ToolCallState {
    pub title: String,
    pub kind: Option<acp::ToolKind>,
    pub status: Option<acp::ToolCallStatus>,
    pub content: Vec<acp::ToolCallContent>,
    pub locations: Vec<acp::ToolCallLocation>,
    pub raw_input: Option<Value>,
    pub raw_output: Option<Value>,
    /// `tool-result` is emitted once, when the call first becomes completed or failed.
    pub resulted: bool,
}

#[derive(Default)]
pub struct Thread {
    session_id: String,
    tools: HashMap<String, ToolCallState>,
}

impl Thread {
    pub fn new(session_id: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            tools: HashMap::new(),
        }
    }

    pub fn tool(&self, id: &str) -> Option<&ToolCallState> {
        self.tools.get(id)
    }

    /// Maps one update; `raw` is the update object as sent, kept for pass-through.
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
        let id = tc.tool_call_id.0.to_string();
        // claude-code-acp sends `tool_call` twice for one id: the second enriches the first.
        let is_update = self.tools.contains_key(&id);
        let state = self.tools.entry(id.clone()).or_default();
        if !tc.title.is_empty() {
            state.title.clone_from(&tc.title);
        }
        state.kind = Some(tc.kind);
        state.status = Some(tc.status);
        state.content.clone_from(&tc.content);
        state.locations.clone_from(&tc.locations);
        if tc.raw_input.is_some() {
            state.raw_input.clone_from(&tc.raw_input);
        }
        if tc.raw_output.is_some() {
            state.raw_output.clone_from(&tc.raw_output);
        }
        out.push(StreamEvent::ToolCall(Box::new(ToolCallEvent {
            session_id: self.session_id.clone(),
            tool_call_id: id.clone(),
            tool_name: tc.title,
            arguments: tc.raw_input.unwrap_or(Value::Null),
            is_update,
            tool_kind: Some(tc.kind),
            status: Some(tc.status),
            content: Some(tc.content),
            locations: Some(tc.locations),
            raw_output: tc.raw_output,
            meta: tc.meta,
        })));
        self.maybe_result(&id, out);
    }

    /// Merges a `tool_call_update` (or a permission request's `toolCall`). Returns false when
    /// the update carried nothing but the id (nothing to emit for it).
    pub fn tool_call_update(&mut self, u: acp::ToolCallUpdate, out: &mut Vec<StreamEvent>) {
        let id = u.tool_call_id.0.to_string();
        let is_update = self.tools.contains_key(&id);
        let state = self.tools.entry(id.clone()).or_default();
        let f = u.fields;
        if let Some(t) = f.title.as_ref().filter(|t| !t.is_empty()) {
            state.title.clone_from(t);
        }
        if let Some(k) = f.kind {
            state.kind = Some(k);
        }
        if let Some(s) = f.status {
            state.status = Some(s);
        }
        if let Some(c) = &f.content {
            state.content.clone_from(c);
        }
        if let Some(l) = &f.locations {
            state.locations.clone_from(l);
        }
        if f.raw_input.is_some() {
            state.raw_input.clone_from(&f.raw_input);
        }
        if f.raw_output.is_some() {
            state.raw_output.clone_from(&f.raw_output);
        }
        out.push(StreamEvent::ToolCall(Box::new(ToolCallEvent {
            session_id: self.session_id.clone(),
            tool_call_id: id.clone(),
            tool_name: f.title.unwrap_or_default(),
            arguments: f.raw_input.unwrap_or(Value::Null),
            is_update,
            tool_kind: f.kind,
            status: f.status,
            content: f.content,
            locations: f.locations,
            raw_output: f.raw_output,
            meta: u.meta,
        })));
        self.maybe_result(&id, out);
    }

    fn maybe_result(&mut self, id: &str, out: &mut Vec<StreamEvent>) {
        let Some(state) = self.tools.get_mut(id) else {
            return;
        };
        let failed = match state.status {
            Some(acp::ToolCallStatus::Completed) => false,
            Some(acp::ToolCallStatus::Failed) => true,
            _ => return,
        };
        if state.resulted {
            return;
        }
        state.resulted = true;
        out.push(StreamEvent::ToolResult {
            session_id: self.session_id.clone(),
            tool_call_id: id.to_string(),
            result: json!({
                "content": state.content,
                "rawOutput": state.raw_output,
            }),
            is_error: Some(failed),
        });
    }

    /// Maps a permission request: merges its `toolCall` (creating the call when no update
    /// announced it, as Gemini CLI and Codex do) and builds the `agent-prompt`.
    pub fn permission_request(
        &mut self,
        req: acp::RequestPermissionRequest,
        correlation_id: String,
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
        let state = self.tools.get(&target).cloned().unwrap_or_default();
        let tool_name = (!state.title.is_empty()).then(|| state.title.clone());
        AgentPromptEvent {
            session_id: self.session_id.clone(),
            tool_call_id: correlation_id,
            options: req.options,
            text: Some(match &tool_name {
                Some(t) => format!("Allow {t}?"),
                None => "Allow this tool call?".into(),
            }),
            tool_name,
            raw_input: state.raw_input.clone(),
            meta,
            target_tool_call_id: target,
            tool_kind: state.kind,
            content: (!state.content.is_empty()).then(|| state.content.clone()),
            locations: (!state.locations.is_empty()).then(|| state.locations.clone()),
        }
    }
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
