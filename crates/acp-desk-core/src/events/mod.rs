//! `StreamEvent`: the closed set of events every front end (the CLI's `--json`, the webview)
//! consumes.
//!
//! The seed (`shared/seeds/002_*.txt`) is the contract: its kinds and field names are kept exactly
//! as spelled there (kinds in kebab case except `usage_update`, fields in camelCase, `_meta` as
//! `_meta`). Everything ACP Desk adds is additive and listed in [`ADDITIONS`], the one place a
//! reader (or a test) can check what is ours.
//!
//! A tool call arrives as several `tool-call` events; how they merge into one card is written
//! once, at [`ToolCallEvent`] ("The merge rule"), and every consumer merges that way.

use agent_client_protocol_schema::v1 as acp;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::error_kind::ErrorKind;

mod tasks;
mod tool_call;
pub use tasks::{
    BackgroundTaskInfo, BackgroundTaskPhase, BackgroundTaskStatus, ElicitationEvent,
    ElicitationModeKind, TaskSettledBy,
};
pub use tool_call::ToolCallEvent;

/// Which side of a turn a checkpoint was taken on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CheckpointPhase {
    Before,
    After,
}

/// What ACP Desk adds to the seed's taxonomy: new kinds, and new optional fields on seed kinds.
/// A test checks that every kind serialized by [`StreamEvent`] is either a seed kind or listed
/// here, so an addition cannot slip in unlisted.
pub const ADDITIONS: &[(&str, &str)] = &[
    (
        "text-delta",
        "content, messageId (non-text blocks; the agent's message id)",
    ),
    ("thought", "content, messageId"),
    (
        "tool-call",
        "toolKind, status, content, locations, rawOutput, _meta (present when the update carried them)",
    ),
    (
        "agent-prompt",
        "targetToolCallId (the ACP tool call the request is about), toolKind, content, locations",
    ),
    ("turn-end", "stopReason (the agent's own stop reason)"),
    (
        "error",
        "error.kind (ErrorKind, the one classification in error_kind.rs: auth-required, \
         rate-limit, usage-limit, unavailable, context-too-long, agent-exited, \
         agent-unresponsive, start-failed, protocol, other), error.exit (AgentExit: the \
         agent's exit code or signal and its last stderr lines, when it died)",
    ),
    ("usage_update", "_meta"),
    (
        "checkpoint",
        "new kind: a checkpoint of the session's folder was taken before (phase before) or \
         after (phase after, with the step's summary of files, lines added and removed) a \
         turn, numbered `turn` as the CLI's `--turn` and the review take it; `error` when none \
         could be taken (the turn still ran), `notes` for what it left out, `waitedMs`: how \
         long the prompt waited for it",
    ),
    (
        "background-task",
        "task.name, task.canStop (the agent says it can be stopped), task.settledBy (agent, or \
         session-end: ACP Desk settled it because the session ended while it ran); every event \
         carries the task as merged so far",
    ),
    (
        "elicitation",
        "new kind: the agent asks the user (elicitation/create), parked until answered: \
         requestId, mode form|url, message, toolCallId, title, description, fields \
         (ElicitationField, in the agent's order), url and host (url mode)",
    ),
    (
        "elicitation-settled",
        "new kind: an elicitation was answered: action accept|decline|cancel, by whom, \
         awaitingCompletion (url mode: the agent will say when the page is done); never the values",
    ),
    (
        "elicitation-complete",
        "new kind: the agent's elicitation/complete for a url-mode elicitation",
    ),
    (
        "turn-start",
        "new kind: a prompt was sent; carries the prompt's content blocks",
    ),
    (
        "user-message-delta",
        "new kind: user_message_chunk (history replays)",
    ),
    (
        "agent-prompt-settled",
        "new kind: a parked permission request was answered, by whom",
    ),
    (
        "session-status",
        "new kind: starting, ready, dead (and why), agent identity (agent.sessionMethods: the \
         session methods the agent advertised, load, resume, list, close, delete; \
         agent.authMethods: its authMethods as sign-in actions, auth::AuthAction)",
    ),
    ("modes", "new kind: available modes and the current one"),
    ("current-mode", "new kind: current_mode_update"),
    (
        "config-options",
        "new kind: config options (complete state, agent's order)",
    ),
    ("session-info", "new kind: session_info_update (title)"),
    (
        "notice",
        "new kind: information for the user, from the agent or from ACP Desk itself",
    ),
    (
        "unknown-update",
        "new kind: a session/update variant we do not map, passed through unchanged",
    ),
    (
        "terminal-output",
        "new kind: a terminal's new output (a delta, never resent) and, last, its exit status; outputByteLimit on its first event",
    ),
    (
        "file-changed",
        "new kind: a file changed this turn, recorded in the turn's change set: written through \
         fs/write_text_file (via fs-write) or changed on disk by the agent itself, seen by the \
         folder watcher (via watcher; optional field via); toolCallId: the tool call that \
         wrote it, when one names the path",
    ),
    (
        "session-continued",
        "new kind: how a stored session (mode continue) or one the agent listed (mode import) \
         was opened with the agent: outcome resumed (session/resume), loaded (session/load) or \
         new (session/new: the agent cannot continue the old conversation); acpSessionId, \
         detail (why, when it fell back)",
    ),
    (
        "mcp-servers",
        "new kind: the session's configured MCP servers (issue 17), once per start or \
         continuation, before session-status ready, when any is configured: servers \
         [McpServerReport: name, transport stdio|http|sse, source settings|manifest|project, \
         sourceDetail, target (command or shown URL), passed, reason (why skipped), credential \
         (the keychain entry's name), notes]; never a value of an env variable, header or secret",
    ),
];

/// The seed's kinds, spelled as the seed spells them.
pub const SEED_KINDS: &[&str] = &[
    "text-delta",
    "tool-call",
    "tool-result",
    "thought",
    "agent-prompt",
    "turn-end",
    "error",
    "plan",
    "usage_update",
    "background-task",
    "available-commands",
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all_fields = "camelCase")]
pub enum StreamEvent {
    #[serde(rename = "text-delta")]
    TextDelta {
        session_id: String,
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<Box<acp::ContentBlock>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
    },
    #[serde(rename = "thought")]
    Thought {
        session_id: String,
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<Box<acp::ContentBlock>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
    },
    /// Merged into one card by the rule at [`ToolCallEvent`].
    #[serde(rename = "tool-call")]
    ToolCall(Box<ToolCallEvent>),
    #[serde(rename = "tool-result")]
    ToolResult {
        session_id: String,
        tool_call_id: String,
        /// `{content, rawOutput}` of the call as it stood when it completed or failed.
        result: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
    },
    #[serde(rename = "agent-prompt")]
    AgentPrompt(Box<AgentPromptEvent>),
    #[serde(rename = "agent-prompt-settled")]
    AgentPromptSettled {
        session_id: String,
        /// The permission request's id (not the ACP tool call's): the `agent-prompt`'s that this
        /// settles. `toolCallId` on the wire, as in `agent-prompt`.
        #[serde(rename = "toolCallId")]
        request_id: String,
        /// `{optionId}` or `{cancelled: true}`.
        outcome: PermissionResolution,
        by: SettledBy,
        /// Feedback the user gave with a rejection; sent to the agent at the head of the next
        /// prompt.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        feedback: Option<String>,
    },
    #[serde(rename = "turn-start")]
    TurnStart {
        session_id: String,
        prompt: Vec<acp::ContentBlock>,
    },
    #[serde(rename = "turn-end")]
    TurnEnd {
        session_id: String,
        reason: TurnEndReason,
        /// The agent's own stop reason (`end_turn`, `max_tokens`, `refusal`, ...), when it gave one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop_reason: Option<acp::StopReason>,
    },
    #[serde(rename = "error")]
    Error {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        error: ErrorInfo,
    },
    #[serde(rename = "plan")]
    Plan {
        session_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        entries: Vec<acp::PlanEntry>,
    },
    /// ACP's `usage_update`. Its fields are the seed's; ACP carries `size`, `used`, `cost` and
    /// `_meta`, and some of the seed's fields come from vendor keys of `_meta`; the rest are
    /// never produced (each says why).
    #[serde(rename = "usage_update")]
    UsageUpdate {
        session_id: String,
        /// The context window, in tokens (ACP `size`).
        size: u64,
        /// Tokens in the context now (ACP `used`).
        used: u64,
        /// The session's cost so far, when the agent says (ACP `cost`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost: Option<acp::Cost>,
        /// Never produced: the seed names it, but ACP's `usage_update` carries no token counts
        /// (the schema has them only in a prompt's response, behind its unstable
        /// `unstable_end_turn_token_usage` feature, which we do not enable).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tokens_in: Option<u64>,
        /// Never produced, as `tokensIn`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tokens_out: Option<u64>,
        /// The model, from `_meta["_claude/model"]` (claude-agent-acp) when present.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// Never produced: the seed's host sets it when it replaces a guessed `size`; ACP does
        /// not say whether `size` is a guess, and we pass `size` on as the agent sent it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size_inferred: Option<bool>,
        /// Never produced, for the same reason: we never replace `size`, so there is no other
        /// size to keep.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reported_size: Option<u64>,
        /// Who started the cycle this usage closes, from `_meta["_claude/origin"].kind`
        /// (claude-agent-acp) when present.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        origin: Option<String>,
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<acp::Meta>,
    },
    /// A checkpoint of the session's folder, before or after a turn (`crate::checkpoint`).
    #[serde(rename = "checkpoint")]
    Checkpoint {
        session_id: String,
        phase: CheckpointPhase,
        /// The step's number; absent when no checkpoint could be taken.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<crate::checkpoint::ChangeSummary>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        notes: Vec<String>,
        /// Why there is no checkpoint (the turn ran anyway and cannot be undone here).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// How long the prompt waited for the `before` checkpoint.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        waited_ms: Option<u64>,
    },
    /// A background task's edge, from the AIR `asyncTasks` extension (claude-agent-acp's
    /// `async_task_*` session updates, `session/tasks.rs`), or from the session's end, which
    /// settles what still runs. `task` is the task as merged from every update so far.
    #[serde(rename = "background-task")]
    BackgroundTask {
        session_id: String,
        phase: BackgroundTaskPhase,
        task: BackgroundTaskInfo,
    },
    /// The agent asks the user (`elicitation/create`); parked until an `elicitation-settled`.
    #[serde(rename = "elicitation")]
    Elicitation(Box<ElicitationEvent>),
    #[serde(rename = "elicitation-settled")]
    ElicitationSettled {
        session_id: String,
        request_id: String,
        action: crate::elicitation::ElicitationAction,
        by: SettledBy,
        /// A url-mode request accepted: the page is the user's to finish; an
        /// `elicitation-complete` says when the agent heard it was.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        awaiting_completion: Option<bool>,
    },
    #[serde(rename = "elicitation-complete")]
    ElicitationComplete {
        session_id: String,
        request_id: String,
    },
    #[serde(rename = "available-commands")]
    AvailableCommands {
        session_id: String,
        commands: Vec<CommandInfo>,
    },
    #[serde(rename = "user-message-delta")]
    UserMessageDelta {
        session_id: String,
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<Box<acp::ContentBlock>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
    },
    #[serde(rename = "session-status")]
    SessionStatus {
        session_id: String,
        status: SessionState,
        /// Why the session is in this state, for people ("the agent exited with code 3: ...").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<AgentIdentity>,
    },
    #[serde(rename = "modes")]
    Modes {
        session_id: String,
        current_mode_id: String,
        available_modes: Vec<acp::SessionMode>,
    },
    #[serde(rename = "current-mode")]
    CurrentMode {
        session_id: String,
        current_mode_id: String,
    },
    #[serde(rename = "config-options")]
    ConfigOptions {
        session_id: String,
        config_options: Vec<acp::SessionConfigOption>,
    },
    #[serde(rename = "session-info")]
    SessionInfo {
        session_id: String,
        /// Absent: unchanged. `null`: cleared.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "double_option"
        )]
        title: Option<Option<String>>,
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "double_option"
        )]
        updated_at: Option<Option<String>>,
    },
    #[serde(rename = "notice")]
    Notice {
        session_id: String,
        severity: NoticeSeverity,
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        source: NoticeSource,
    },
    #[serde(rename = "unknown-update")]
    UnknownUpdate {
        session_id: String,
        /// The `update` object exactly as the agent sent it.
        update: Value,
    },
    /// A terminal the agent created (`terminal/create`): output as it comes, then one event
    /// with `exitStatus` (and empty `data`) when the command has exited. Consumers append
    /// `data` and keep at most the terminal's output limit (`outputByteLimit`, on the
    /// terminal's first event), cut from the start.
    #[serde(rename = "terminal-output")]
    TerminalOutput {
        session_id: String,
        terminal_id: String,
        /// New text only; a multi-byte character is never split across events.
        data: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_status: Option<acp::TerminalExitStatus>,
        /// `true` once more output came than the terminal keeps: its start was dropped.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        truncated: Option<bool>,
        /// The most output the terminal keeps, in bytes (the agent's `outputByteLimit`, or our
        /// default, capped): on the terminal's first event only.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output_byte_limit: Option<u64>,
    },
    /// A file changed during the turn: written through `fs/write_text_file`, or changed on disk
    /// while the turn ran (the agent's own tools), as the folder watcher saw it. The entry is in
    /// the turn's change set (`SessionHandle::changes`).
    #[serde(rename = "file-changed")]
    FileChanged {
        session_id: String,
        /// The canonical path written.
        path: String,
        /// This write created it. The watcher says so when the file appeared during the turn
        /// (a new directory entry, or a file in a new folder); a file renamed into place over
        /// nothing is reported `false`, since a rename cannot tell whether it replaced a file.
        created: bool,
        /// How we learned of the change; absent in events from before the field existed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        via: Option<FileChangeVia>,
        /// The tool call that wrote it, when a call of this turn names the path
        /// ([`crate::thread::paths_named`]): the running one, else the latest. The watcher
        /// reports a change after its call may have finished and the next begun, so a front
        /// end places the change with this call rather than where the event arrives.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_call_id: Option<String>,
    },
    /// The session's configured MCP servers: which the agent got (in `session/new`,
    /// `session/load` or `session/resume`) and which it did not, and why (its
    /// `mcpCapabilities`, a secret not in the keychain, a server of the same name from a more
    /// specific source). Once per start or continuation, before `session-status: ready`, when
    /// any server is configured. Names, commands and shown URLs only.
    #[serde(rename = "mcp-servers")]
    McpServers {
        session_id: String,
        servers: Vec<crate::mcp::McpServerReport>,
    },
    /// How a session that continues a stored one ([`ContinuationMode::Continue`]) or opens one
    /// the agent listed ([`ContinuationMode::Import`]) was opened with the agent. Comes just
    /// before its `session-status: ready`; never for a plain new session. Front ends match on
    /// `outcome`: `new` means the agent has none of the old conversation.
    #[serde(rename = "session-continued")]
    SessionContinued {
        session_id: String,
        mode: ContinuationMode,
        outcome: ContinuationOutcome,
        /// The agent's session id now in use (a new one when `outcome` is `new`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        acp_session_id: Option<String>,
        /// Why it is not the first choice (what the agent answered, or what it does not offer).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
}

/// What a `session-continued` opening was asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ContinuationMode {
    /// Continue a session of ours (the history's): its stored transcript is the record, so a
    /// load's replay is neither emitted nor stored.
    Continue,
    /// Open a session the agent listed (`session/list`): a load's replay is emitted, and is
    /// its transcript.
    Import,
}

/// How the agent took it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ContinuationOutcome {
    /// `session/resume`: the agent has the conversation; it replayed nothing.
    Resumed,
    /// `session/load`: the agent has the conversation (it replayed it).
    Loaded,
    /// `session/new`: a new conversation in the same folder; the agent has none of the old one.
    New,
}

impl StreamEvent {
    /// Every kind, as [`StreamEvent::kind`] spells it, for tests and front ends that must cover
    /// them all. A test (`tests/events_contract.rs`) checks it against the JSON schema derived
    /// from this enum, so a new variant cannot be missing here.
    pub const KINDS: &'static [&'static str] = &[
        "text-delta",
        "thought",
        "tool-call",
        "tool-result",
        "agent-prompt",
        "agent-prompt-settled",
        "turn-start",
        "turn-end",
        "error",
        "plan",
        "usage_update",
        "checkpoint",
        "background-task",
        "elicitation",
        "elicitation-settled",
        "elicitation-complete",
        "available-commands",
        "user-message-delta",
        "session-status",
        "modes",
        "current-mode",
        "config-options",
        "session-info",
        "notice",
        "unknown-update",
        "terminal-output",
        "file-changed",
        "session-continued",
        "mcp-servers",
    ];

    /// The serialized `kind` tag.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::TextDelta { .. } => "text-delta",
            Self::Thought { .. } => "thought",
            Self::ToolCall(_) => "tool-call",
            Self::ToolResult { .. } => "tool-result",
            Self::AgentPrompt(_) => "agent-prompt",
            Self::AgentPromptSettled { .. } => "agent-prompt-settled",
            Self::TurnStart { .. } => "turn-start",
            Self::TurnEnd { .. } => "turn-end",
            Self::Error { .. } => "error",
            Self::Plan { .. } => "plan",
            Self::UsageUpdate { .. } => "usage_update",
            Self::Checkpoint { .. } => "checkpoint",
            Self::BackgroundTask { .. } => "background-task",
            Self::Elicitation(_) => "elicitation",
            Self::ElicitationSettled { .. } => "elicitation-settled",
            Self::ElicitationComplete { .. } => "elicitation-complete",
            Self::AvailableCommands { .. } => "available-commands",
            Self::UserMessageDelta { .. } => "user-message-delta",
            Self::SessionStatus { .. } => "session-status",
            Self::Modes { .. } => "modes",
            Self::CurrentMode { .. } => "current-mode",
            Self::ConfigOptions { .. } => "config-options",
            Self::SessionInfo { .. } => "session-info",
            Self::Notice { .. } => "notice",
            Self::UnknownUpdate { .. } => "unknown-update",
            Self::TerminalOutput { .. } => "terminal-output",
            Self::FileChanged { .. } => "file-changed",
            Self::SessionContinued { .. } => "session-continued",
            Self::McpServers { .. } => "mcp-servers",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentPromptEvent {
    pub session_id: String,
    /// The permission request's id (not the ACP tool call's: that is `targetToolCallId`): the
    /// ACP tool call id plus a per-session counter, unique even when an agent asks twice about
    /// one call. Pass it back to `respond_permission`. The seed names this wire field
    /// `toolCallId`, a contract, so it keeps that name.
    #[serde(rename = "toolCallId")]
    pub request_id: String,
    pub options: Vec<acp::PermissionOption>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<Value>,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<acp::Meta>,
    /// The ACP tool call this request is about.
    pub target_tool_call_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_kind: Option<acp::ToolKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<acp::ToolCallContent>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locations: Option<Vec<acp::ToolCallLocation>>,
}

/// Tells a present `null` (`Some(None)`) from an absent field (`None`).
fn double_option<'de, T, D>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    T: Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// The seed's `AcpPermissionResolution`: `{optionId, feedback?}` or `{cancelled: true}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PermissionResolution {
    #[serde(rename_all = "camelCase")]
    Selected {
        option_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        feedback: Option<String>,
    },
    Cancelled {
        cancelled: True,
    },
}

impl PermissionResolution {
    pub fn cancelled() -> Self {
        Self::Cancelled { cancelled: True }
    }
    pub fn selected(option_id: impl Into<String>) -> Self {
        Self::Selected {
            option_id: option_id.into(),
            feedback: None,
        }
    }
}

/// The literal `true`, so that `{cancelled: false}` is refused rather than read as a cancel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct True;

impl JsonSchema for True {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "True".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "boolean", "const": true})
    }
}

impl Serialize for True {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(true)
    }
}

impl<'de> Deserialize<'de> for True {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if bool::deserialize(d)? {
            Ok(True)
        } else {
            Err(serde::de::Error::custom("expected `true`"))
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SettledBy {
    User,
    Rule,
    Stop,
    Agent,
    Watchdog,
}

/// How a `file-changed` came to be known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FileChangeVia {
    /// Our own `fs/write_text_file`.
    FsWrite,
    /// The folder watcher: the file changed on disk without going through us.
    Watcher,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum TurnEndReason {
    #[serde(rename = "completed")]
    Completed,
    #[serde(rename = "cancelled")]
    Cancelled,
    #[serde(rename = "max_turns")]
    MaxTurns,
    #[serde(rename = "error")]
    Error,
    #[serde(rename = "watchdog-timeout")]
    WatchdogTimeout,
}

impl TurnEndReason {
    /// DESIGN.md: `end_turn`, `max_tokens` and `refusal` complete the turn (the added `stopReason`
    /// says which); `max_turn_requests` is `max_turns`; `cancelled` is `cancelled`.
    pub fn from_stop_reason(reason: &acp::StopReason) -> Self {
        match reason {
            acp::StopReason::MaxTurnRequests => Self::MaxTurns,
            acp::StopReason::Cancelled => Self::Cancelled,
            _ => Self::Completed,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// What kind of error it is ([`crate::error_kind`], the one classification): front ends
    /// match this, never `message`. Always set by the engine and the app; absent in events
    /// from before the field existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ErrorKind>,
    /// How the agent's process ended, when this error says it did (kind `agent-exited`, or a
    /// start that failed because it exited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<AgentExit>,
}

impl ErrorInfo {
    /// An error the agent sent (or one made of its answer), classified by
    /// [`crate::error_kind::classify`].
    pub fn new(code: Option<i64>, message: impl Into<String>, data: Option<Value>) -> Self {
        let message = message.into();
        let kind = crate::error_kind::classify(code, &message, data.as_ref());
        Self {
            code,
            message,
            data,
            kind: Some(kind),
            exit: None,
        }
    }

    /// An error whose kind ACP Desk knows itself (the agent exited, stopped reading, ...).
    pub fn of_kind(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            code: None,
            message: message.into(),
            data: None,
            kind: Some(kind),
            exit: None,
        }
    }

    /// The kind; `other` for events from before kinds existed.
    pub fn kind(&self) -> ErrorKind {
        self.kind.unwrap_or(ErrorKind::Other)
    }
}

/// How an agent's process ended, for the dead session's card: its exit code or the signal that
/// killed it, and the last lines of its stderr (shown to the user in the session; never logged
/// above `debug`, rule 24).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentExit {
    /// Its exit code, when it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// The last lines it wrote to stderr, oldest first (at most `process::STDERR_TAIL_LINES`,
    /// each cut at `process::STDERR_LINE_MAX` bytes).
    #[serde(default)]
    pub stderr_tail: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommandInfo {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `null` when the command takes no input, as the seed allows.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "double_option"
    )]
    pub input: Option<Option<CommandInput>>,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<acp::Meta>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommandInput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SessionState {
    Starting,
    Ready,
    Prompting,
    Dead,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentIdentity {
    /// Our name for the agent (`demo`, `claude`, or the command).
    pub launch_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The agent's own session id (ours is `sessionId`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acp_session_id: Option<String>,
    /// What the agent accepts in a prompt besides text (its `initialize` answer): front ends
    /// offer images and embedded files only when it says so. Absent until `initialize` answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_capabilities: Option<acp::PromptCapabilities>,
    /// Which session methods the agent advertised in its `initialize` answer: what the history
    /// can offer for a stored session (continue it, find the agent's own sessions, close or
    /// delete it at the agent too). Absent until `initialize` answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_methods: Option<SessionMethods>,
    /// How the user can sign in to the agent (its `authMethods`, classified by
    /// [`crate::auth::classify`]), for the sign-in actions. Absent until `initialize` answers;
    /// empty when it asks for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_methods: Option<Vec<crate::auth::AuthAction>>,
}

/// The session methods an agent advertised (`initialize`): `session/load` from
/// `agentCapabilities.loadSession`, the others from `agentCapabilities.sessionCapabilities`.
/// Each is `true` only when advertised; a method ACP adds later is absent here until mapped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionMethods {
    /// `session/load`: the agent replays the stored conversation, then continues it.
    #[serde(default)]
    pub load: bool,
    /// `session/resume`: the agent continues the conversation without replaying it.
    #[serde(default)]
    pub resume: bool,
    /// `session/list`: the agent lists its own sessions.
    #[serde(default)]
    pub list: bool,
    /// `session/close`.
    #[serde(default)]
    pub close: bool,
    /// `session/delete`: the agent forgets a session it listed.
    #[serde(default)]
    pub delete: bool,
}

impl SessionMethods {
    /// What `initialize`'s `agentCapabilities` advertise.
    pub fn advertised(caps: &acp::AgentCapabilities) -> Self {
        let s = &caps.session_capabilities;
        SessionMethods {
            load: caps.load_session,
            resume: s.resume.is_some(),
            list: s.list.is_some(),
            close: s.close.is_some(),
            delete: s.delete.is_some(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NoticeSeverity {
    Info,
    Warning,
    Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NoticeSource {
    Agent,
    Client,
}
