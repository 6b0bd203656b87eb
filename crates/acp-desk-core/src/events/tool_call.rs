//! `tool-call` events and the one rule by which a call's events merge into its card.

use agent_client_protocol_schema::v1 as acp;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One `tool-call` event: the call's announcement or an update of it (`isUpdate`).
///
/// # The merge rule
///
/// A tool call is shown as its events merged in order, by [`ToolCallEvent::merge`]. The engine's
/// thread, the compactor (a snapshot holds each call once, merged) and the UI's session store
/// (`ui/src/lib/session-store.ts`, which applies the same rule and is tested against snapshots
/// this compactor made) all merge this way, so a view that attaches late shows each card as a
/// live one does. A later event's field replaces the merged one when it carries something:
///
/// - `toolName`: when not `""` (an update without a title keeps the title);
/// - `arguments`: when it carries input: not `null` and not `{}` (claude-code-acp announces a
///   call with `rawInput: {}` before its input streams; an empty object never hides an input
///   already shown);
/// - `toolKind`, `status`, `rawOutput`, `_meta`: when present (and not `null`);
/// - `content`, `locations`: when present, the whole list (ACP sends them whole, not as deltas);
/// - `sessionId`, `toolCallId` and the first event's `isUpdate` stay.
///
/// `tool-result` is not part of the merge: it repeats, once, what the call's `tool-call` events
/// carried when it finished (for consumers that want only results); a view takes nothing from it.
/// A consumer that does not keep `_meta` (the UI's cards) merges every other field alike.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallEvent {
    pub session_id: String,
    pub tool_call_id: String,
    /// The title; `""` when the update carried none.
    pub tool_name: String,
    /// The raw input; `null` when the update carried none. Any JSON value (an object for every
    /// agent we know). See [`ToolCallEvent::input`].
    #[schemars(extend("tsType" = "unknown"))]
    pub arguments: Value,
    pub is_update: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_kind: Option<acp::ToolKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<acp::ToolCallStatus>,
    /// Replaces the previous list when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<acp::ToolCallContent>>,
    /// Replaces the previous list when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locations: Option<Vec<acp::ToolCallLocation>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_output: Option<Value>,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<acp::Meta>,
}

impl ToolCallEvent {
    /// The call's input, when this event carries one (see the merge rule: `null` and `{}` do
    /// not).
    pub fn input(&self) -> Option<&Value> {
        carries_input(&self.arguments).then_some(&self.arguments)
    }

    /// Merges a later event of the same call into this one, by the rule above.
    pub fn merge(&mut self, later: &ToolCallEvent) {
        if !later.tool_name.is_empty() {
            self.tool_name.clone_from(&later.tool_name);
        }
        if carries_input(&later.arguments) {
            self.arguments.clone_from(&later.arguments);
        }
        if later.tool_kind.is_some() {
            self.tool_kind = later.tool_kind;
        }
        if later.status.is_some() {
            self.status = later.status;
        }
        if later.content.is_some() {
            self.content.clone_from(&later.content);
        }
        if later.locations.is_some() {
            self.locations.clone_from(&later.locations);
        }
        if later.raw_output.as_ref().is_some_and(|v| !v.is_null()) {
            self.raw_output.clone_from(&later.raw_output);
        }
        if later.meta.is_some() {
            self.meta.clone_from(&later.meta);
        }
    }
}

/// Whether a tool call's `arguments` carry input: `null` and `{}` do not.
fn carries_input(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Object(o) => !o.is_empty(),
        _ => true,
    }
}
