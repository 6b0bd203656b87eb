//! The only strings a desktop surface (tray, notification, badge, window title) may show about a
//! session's requests and turns (ARCHITECTURE.md invariant 41).
//!
//! A tool's title can be the command itself (claude-code-acp titles a shell call "Allow `the
//! command line`?"), and a command, an edit's path or a move's target can hold a secret. So a
//! request of a sensitive kind is reduced here to its kind ("wants to run a command"): its
//! title, `rawInput`, `content` and `locations` are never read. Only the read-only kinds (read,
//! search, fetch, think) show their title, one line and capped, and only they may offer Allow,
//! since only there does the notification show everything needed to decide.

use std::path::Path;

use acp_desk_core::error_kind::ErrorKind;
use acp_desk_core::events::{AgentPromptEvent, TurnEndReason};
use acp_desk_core::schema::v1 as acp;
use acp_desk_store::LaunchOrigin;

use super::{RequestKind, WaitingRequest};
use crate::registry::SessionInfo;

/// The most characters of a read-only call's title shown (the ellipsis included).
pub const TITLE_MAX_CHARS: usize = 80;

/// A permission request, reduced to what the desktop may show and do.
pub fn request(p: &AgentPromptEvent) -> WaitingRequest {
    let kind = kind_of(p.tool_kind);
    // The call's own title (`tool_name`), not the dialog's question (`text`, "Allow …?", which
    // the engine words even for a call without a title).
    let title = match kind {
        RequestKind::ReadOnly(_) => p.tool_name.as_deref().and_then(title_line),
        RequestKind::Sensitive(_) | RequestKind::Question => None,
    };
    // Allow only where the line names the whole call: a read-only call without a title is shown
    // by its kind, and a title cut to one line or to its cap may hide what is being allowed
    // (the path of an outside-the-folder read is at its end); neither is enough to decide on.
    let allow_option_id = title
        .as_ref()
        .filter(|t| t.whole)
        .and_then(|_| allow_option(&p.options));
    WaitingRequest {
        request_id: p.request_id.clone(),
        kind,
        line: title.map_or_else(|| kind_line(kind).to_owned(), |t| t.shown),
        allow_option_id,
        reject_option_id: reject_option(&p.options),
    }
}

/// An agent's question (`elicitation`), reduced to what the desktop may show: that it asks,
/// nothing of what; no action but Show.
pub fn question(request_id: &str) -> WaitingRequest {
    WaitingRequest {
        request_id: request_id.to_owned(),
        kind: RequestKind::Question,
        line: kind_line(RequestKind::Question).to_owned(),
        allow_option_id: None,
        reject_option_id: None,
    }
}

/// read, search, fetch, think are read-only; everything else (a kind added to ACP after this
/// build included) is sensitive.
pub fn kind_of(kind: Option<acp::ToolKind>) -> RequestKind {
    match kind {
        Some(
            k @ (acp::ToolKind::Read
            | acp::ToolKind::Search
            | acp::ToolKind::Fetch
            | acp::ToolKind::Think),
        ) => RequestKind::ReadOnly(k),
        other => RequestKind::Sensitive(other),
    }
}

/// The kind only: what is shown of a sensitive request, and of a read-only one without a title.
pub fn kind_line(kind: RequestKind) -> &'static str {
    match kind {
        RequestKind::ReadOnly(acp::ToolKind::Read) => "wants to read a file",
        RequestKind::ReadOnly(acp::ToolKind::Search) => "wants to search",
        RequestKind::ReadOnly(acp::ToolKind::Fetch) => "wants to fetch something",
        RequestKind::ReadOnly(acp::ToolKind::Think) => "wants to think",
        RequestKind::Sensitive(Some(acp::ToolKind::Execute)) => "wants to run a command",
        RequestKind::Sensitive(Some(acp::ToolKind::Edit)) => "wants to edit a file",
        RequestKind::Sensitive(Some(acp::ToolKind::Delete)) => "wants to delete a file",
        RequestKind::Sensitive(Some(acp::ToolKind::Move)) => "wants to move a file",
        RequestKind::Sensitive(Some(acp::ToolKind::SwitchMode)) => "wants to switch mode",
        RequestKind::Question => "asks you a question",
        _ => "wants to use a tool",
    }
}

/// A read-only call's title as shown: trimmed, its first line, control and bidi characters
/// dropped, runs of spaces made one, capped at [`TITLE_MAX_CHARS`]. `None` when nothing is
/// left.
pub fn title_line(text: &str) -> Option<Title> {
    let mut lines = text.trim().lines();
    let first = lines.next()?;
    let line = one_line(first);
    if line.is_empty() {
        return None;
    }
    let shown = cap(&line, TITLE_MAX_CHARS);
    let whole = shown == line && lines.all(|l| one_line(l).is_empty());
    Some(Title { shown, whole })
}

/// A read-only call's title as [`title_line`] makes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Title {
    pub shown: String,
    /// Nothing was cut (no later line, no cap): only then may the desktop offer Allow.
    pub whole: bool,
}

/// `allow_once` preferred over `allow_always`.
pub fn allow_option(options: &[acp::PermissionOption]) -> Option<String> {
    pick(options, acp::PermissionOptionKind::AllowOnce)
        .or_else(|| pick(options, acp::PermissionOptionKind::AllowAlways))
}

/// `reject_once` preferred over `reject_always`; `None`: the request offers no rejection.
pub fn reject_option(options: &[acp::PermissionOption]) -> Option<String> {
    pick(options, acp::PermissionOptionKind::RejectOnce)
        .or_else(|| pick(options, acp::PermissionOptionKind::RejectAlways))
}

fn pick(options: &[acp::PermissionOption], kind: acp::PermissionOptionKind) -> Option<String> {
    options
        .iter()
        .find(|o| o.kind == kind)
        .map(|o| o.option_id.0.to_string())
}

/// The agent as texts name it: the name the user chose, or for a command line only its
/// program's file name (the arguments may hold a secret).
pub fn agent_name(info: &SessionInfo) -> String {
    let name = match info.launch.origin {
        LaunchOrigin::Named => one_line(&info.agent),
        LaunchOrigin::CommandLine => Path::new(&info.launch.program)
            .file_name()
            .map(|n| one_line(&n.to_string_lossy()))
            .unwrap_or_default(),
    };
    if name.is_empty() {
        "the agent".to_owned()
    } else {
        cap(&name, 40)
    }
}

/// The folder's last path component ("proj"); the whole path for a root.
pub fn folder_name(folder: &Path) -> String {
    let name = match folder.file_name() {
        Some(n) => one_line(&n.to_string_lossy()),
        None => one_line(&folder.to_string_lossy()),
    };
    cap(&name, 60)
}

/// A notification's summary: "claude in proj".
pub fn summary(agent: &str, folder_name: &str) -> String {
    format!("{agent} in {folder_name}")
}

/// A permission notification's body: the request's line ("Read README.md"; a kind gets the
/// folder: "wants to run a command in proj"), and " and N more" for the others waiting in the
/// session.
pub fn permission_body(request: &WaitingRequest, folder_name: &str, more: usize) -> String {
    // A read-only request without a title carries its kind's line (`request`), which reads like
    // a sensitive one's and gets the folder as they do.
    let mut body = match request.kind {
        RequestKind::ReadOnly(_) if request.line != kind_line(request.kind) => request.line.clone(),
        _ => format!("{} in {folder_name}", request.line),
    };
    if more > 0 {
        body.push_str(&format!(" and {more} more"));
    }
    body
}

/// A turn's end, as the notification's body says it. Never the agent's own words (an error's
/// message can quote a command): a generic reason only, from the error's kind.
pub fn turn_end(
    reason: TurnEndReason,
    stop_reason: Option<acp::StopReason>,
    error: Option<ErrorKind>,
) -> &'static str {
    match reason {
        TurnEndReason::Completed => match stop_reason {
            Some(acp::StopReason::MaxTokens) => "stopped: max tokens",
            Some(acp::StopReason::Refusal) => "stopped: the agent refused",
            Some(acp::StopReason::MaxTurnRequests) => "stopped: too many steps",
            Some(acp::StopReason::Cancelled) => "stopped",
            _ => "finished",
        },
        TurnEndReason::Cancelled => "stopped",
        TurnEndReason::MaxTurns => "stopped: too many steps",
        TurnEndReason::WatchdogTimeout => "failed: the agent stopped responding",
        TurnEndReason::Error => match error {
            Some(ErrorKind::AuthRequired) => "failed: the agent needs you to sign in",
            Some(ErrorKind::RateLimit) => "failed: rate limited",
            Some(ErrorKind::UsageLimit) => "failed: usage limit reached",
            Some(ErrorKind::Unavailable) => "failed: the service is unavailable",
            Some(ErrorKind::ContextTooLong) => "failed: the conversation is too long",
            Some(ErrorKind::AgentExited) => "failed: the agent exited",
            Some(ErrorKind::AgentUnresponsive) => "failed: the agent stopped responding",
            Some(ErrorKind::StartFailed) => "failed: the agent could not start",
            Some(ErrorKind::Protocol) => "failed: the agent broke the protocol",
            Some(ErrorKind::Other) | None => "failed",
        },
    }
}

/// One line: control characters (newlines, escapes) and bidi overrides dropped, so a title
/// cannot fake another line or reorder what is shown; whitespace runs made one space.
fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if c.is_control() || is_bidi_control(c) {
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.push(c);
    }
    out
}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// At most `max` characters, the last an ellipsis when cut.
fn cap(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.truncate(out.trim_end().len());
    out.push('…');
    out
}
