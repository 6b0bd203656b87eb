//! THE classification of every error a front end sees: a prompt's failure, a turn's error, a
//! start failure, a dead agent. Each gets an [`ErrorKind`], carried on the `error` event's
//! `ErrorInfo.kind` and on `session-status: dead` (`errorKind`), so that front ends match a
//! kind, never text (rule 13).
//!
//! # The rule
//!
//! 1. What ACP Desk itself saw decides first: the agent's process ended (`agent-exited`), it
//!    stopped reading or answering (`agent-unresponsive`), it could not be run (`start-failed`),
//!    its answer was not ACP (`protocol`). The engine passes these kinds explicitly.
//! 2. Else the JSON-RPC `code` of the agent's error, when it says something by itself
//!    ([`by_code`]): ACP's `-32000` (auth required), the JSON-RPC protocol codes, and the HTTP
//!    statuses gemini-cli sends as codes (401, 403, 429, 5xx).
//! 3. Else a structured kind in the error's `data` ([`by_data`]): codex-acp's
//!    `codex_error_info`.
//! 4. Else the message (and a string `data`), matched case-insensitively against [`PATTERNS`]:
//!    the texts real agents send when they give no code (most send everything as `-32603
//!    Internal error: <text>`). Each pattern names where it comes from.
//! 5. Else `other` (or `start-failed` for a start that failed).
//!
//! A new agent's messages are added to [`PATTERNS`], with their source and a unit test.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::session::EngineError;

/// What kind of error this is, for front ends to act on (`kind` on the wire, kebab case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// The agent needs the user to sign in (or its key is missing or invalid).
    AuthRequired,
    /// Too many requests in a short time: the same prompt may work in a moment. Retry.
    RateLimit,
    /// The plan's or account's usage limit (or credit) is used up until it resets. Retry later.
    UsageLimit,
    /// The model's service is overloaded, failing or unreachable. Retry.
    Unavailable,
    /// The conversation no longer fits the model's context: start over or compact it.
    ContextTooLong,
    /// The agent's process ended (exited, crashed, was killed). Reconnect.
    AgentExited,
    /// The agent stopped reading its input, ignored a stop, or did not answer its start in
    /// time; it was ended. Reconnect.
    AgentUnresponsive,
    /// The agent could not be started (not found, refused the handshake for a reason not
    /// above).
    StartFailed,
    /// The agent broke the protocol (not JSON-RPC, not ACP, a method or params it refused as
    /// invalid).
    Protocol,
    /// Anything else: the message says what.
    Other,
}

impl ErrorKind {
    /// Every kind, as serialized.
    pub const ALL: &'static [ErrorKind] = &[
        ErrorKind::AuthRequired,
        ErrorKind::RateLimit,
        ErrorKind::UsageLimit,
        ErrorKind::Unavailable,
        ErrorKind::ContextTooLong,
        ErrorKind::AgentExited,
        ErrorKind::AgentUnresponsive,
        ErrorKind::StartFailed,
        ErrorKind::Protocol,
        ErrorKind::Other,
    ];

    /// Sending the same prompt again may work (front ends offer Retry).
    pub fn retryable(self) -> bool {
        matches!(
            self,
            ErrorKind::RateLimit | ErrorKind::UsageLimit | ErrorKind::Unavailable
        )
    }

    /// A new agent process may continue the session (front ends offer Reconnect).
    pub fn reconnectable(self) -> bool {
        matches!(self, ErrorKind::AgentExited | ErrorKind::AgentUnresponsive)
    }
}

/// ACP's "authentication required" (`RequestError.authRequired` in the TypeScript SDK).
const AUTH_REQUIRED: i64 = -32000;

/// Classifies an error the agent sent (or one we made of its answer): by code, then `data`,
/// then message (the rule atop this module). `other` when nothing matches.
pub fn classify(code: Option<i64>, message: &str, data: Option<&Value>) -> ErrorKind {
    code.and_then(by_code)
        .or_else(|| data.and_then(by_data))
        .or_else(|| by_message(message))
        .or_else(|| data.and_then(Value::as_str).and_then(by_message))
        .or_else(|| {
            // claude-code-acp and codex-acp put the text in `data.message` / `data.details`.
            let d = data?;
            ["message", "details", "error"]
                .iter()
                .find_map(|k| d.get(k).and_then(Value::as_str).and_then(by_message))
        })
        .unwrap_or(ErrorKind::Other)
}

/// A start that failed: classified as any error, `start-failed` when nothing more is known.
/// The handshake's texts end with the agent's code in parentheses ("session/new failed: ...
/// (401)"), which counts as its code.
pub fn classify_start_failure(message: &str) -> ErrorKind {
    let code = trailing_code(message);
    match classify(code, message, None) {
        ErrorKind::Other => ErrorKind::StartFailed,
        kind => kind,
    }
}

/// A start that failed with this engine error (the handshake's, or the program's): by its
/// variant, else by its words ([`classify_start_failure`]).
pub fn of_start_failure(err: &EngineError) -> ErrorKind {
    match err {
        EngineError::AuthRequired(_) => ErrorKind::AuthRequired,
        EngineError::ProtocolVersion(_) => ErrorKind::Protocol,
        EngineError::Spawn(_) => ErrorKind::StartFailed,
        // Its message says which secret and how to store it; the words "keychain" or
        // "locked" must not read as a sign-in problem of the agent's.
        EngineError::SecretUnavailable { .. } => ErrorKind::StartFailed,
        other => classify_start_failure(&other.to_string()),
    }
}

/// `(-32000)` or `(401)` at the end of a text.
fn trailing_code(message: &str) -> Option<i64> {
    let t = message.trim_end().strip_suffix(')')?;
    let open = t.rfind('(')?;
    t[open + 1..].trim().parse().ok()
}

/// The codes that say what happened by themselves.
pub fn by_code(code: i64) -> Option<ErrorKind> {
    Some(match code {
        AUTH_REQUIRED => ErrorKind::AuthRequired,
        // JSON-RPC's own: the message was not JSON, not a request, a method or params the
        // other side does not know.
        -32700 | -32600 | -32601 | -32602 => ErrorKind::Protocol,
        // gemini-cli (packages/cli/src/zed-integration/zedIntegration.ts) sends HTTP statuses
        // as JSON-RPC codes: `new acp.RequestError(401, ...)` when not signed in,
        // `RequestError(429, 'Rate limit exceeded. Try again later.')`, and
        // `getErrorStatus(error) || 500` for the model API's failures.
        401 | 403 => ErrorKind::AuthRequired,
        429 => ErrorKind::RateLimit,
        502..=504 | 529 => ErrorKind::Unavailable,
        _ => return None,
    })
}

/// codex-acp (`src/thread.rs`, `EventMsg::Error`) answers a failed turn with
/// `Error::internal_error().data({"message", "codex_error_info"})`, where `codex_error_info`
/// is codex's `CodexErrorInfo` (codex-rs/protocol, snake case): a name
/// (`"usage_limit_exceeded"`) or an object named by its one key
/// (`{"response_too_many_failed_attempts": {"http_status_code": 429}}`).
pub fn by_data(data: &Value) -> Option<ErrorKind> {
    let info = data.get("codex_error_info")?;
    let (name, detail) = match info {
        Value::String(s) => (s.as_str(), None),
        Value::Object(o) => {
            let (k, v) = o.iter().next()?;
            (k.as_str(), Some(v))
        }
        _ => return None,
    };
    let status = detail
        .and_then(|d| d.get("http_status_code"))
        .and_then(Value::as_i64);
    Some(match name {
        "context_window_exceeded" => ErrorKind::ContextTooLong,
        "usage_limit_exceeded" => ErrorKind::UsageLimit,
        "unauthorized" => ErrorKind::AuthRequired,
        "server_overloaded" | "internal_server_error" => ErrorKind::Unavailable,
        "http_connection_failed"
        | "response_stream_connection_failed"
        | "response_stream_disconnected"
        | "response_too_many_failed_attempts" => match status {
            Some(429) => ErrorKind::RateLimit,
            Some(401 | 403) => ErrorKind::AuthRequired,
            _ => ErrorKind::Unavailable,
        },
        _ => return None,
    })
}

/// A text real agents send, what it means, and where it comes from.
pub struct Pattern {
    /// Matched case-insensitively anywhere in the message.
    pub text: &'static str,
    pub kind: ErrorKind,
    /// Where the text comes from (agent, file), for whoever maintains the list.
    pub source: &'static str,
}

const fn p(text: &'static str, kind: ErrorKind, source: &'static str) -> Pattern {
    Pattern { text, kind, source }
}

const CLAUDE: &str = "claude-code-acp 0.16.2 relays Claude Code's result text as `-32603 Internal \
     error: <text>` (dist/acp-agent.js); the texts are @anthropic-ai/claude-agent-sdk's cli.js";
const GEMINI: &str = "gemini-cli packages/cli/src/zed-integration/zedIntegration.ts and \
     gemini-cli-core utils/googleQuotaErrors.js (TerminalQuotaError)";
const GOOSE: &str = "goose crates/goose/src/providers/errors.rs (ProviderError's Display)";
const CODEX: &str = "codex-rs (codex-acp's engine): its error texts";

/// The messages, in the order they are tried: the more specific first (a usage limit's text
/// says "limit" too; "Credit balance is too low" names no limit at all).
pub const PATTERNS: &[Pattern] = &[
    // Context: before everything, since such a message may also name a limit.
    p("prompt is too long", ErrorKind::ContextTooLong, CLAUDE),
    p("conversation too long", ErrorKind::ContextTooLong, CLAUDE),
    p("context limit reached", ErrorKind::ContextTooLong, CLAUDE),
    p("context length exceeded", ErrorKind::ContextTooLong, GOOSE),
    p(
        "context_length_exceeded",
        ErrorKind::ContextTooLong,
        "the OpenAI API's error code, relayed by codex and goose",
    ),
    p(
        "exceeds the context window",
        ErrorKind::ContextTooLong,
        "codex: \"Your input exceeds the context window of this model\"",
    ),
    // Usage: a plan's limit or the account's credit, until it resets.
    p(
        "you've hit your",
        ErrorKind::UsageLimit,
        "claude-agent-sdk cli.js: \"You've hit your {session|weekly|usage} limit\"",
    ),
    p("usage limit", ErrorKind::UsageLimit, CLAUDE),
    p("credit balance is too low", ErrorKind::UsageLimit, CLAUDE),
    p("credits exhausted", ErrorKind::UsageLimit, GOOSE),
    p("exhausted your capacity", ErrorKind::UsageLimit, GEMINI),
    p("quota will reset", ErrorKind::UsageLimit, GEMINI),
    p(
        "quota exceeded",
        ErrorKind::UsageLimit,
        "Google APIs' 429 RESOURCE_EXHAUSTED text, relayed by gemini-cli",
    ),
    p(
        "you exceeded your current quota",
        ErrorKind::UsageLimit,
        "the OpenAI API's insufficient_quota text, relayed by codex and goose",
    ),
    // Rate: too many requests now.
    p("rate limit", ErrorKind::RateLimit, CLAUDE),
    p(
        "rate_limit_error",
        ErrorKind::RateLimit,
        "the Anthropic API's error type",
    ),
    p(
        "too many requests",
        ErrorKind::RateLimit,
        "HTTP 429's reason phrase, in codex's \"last status: 429 Too Many Requests\"",
    ),
    // Auth.
    p("please run /login", ErrorKind::AuthRequired, CLAUDE),
    p("not logged in", ErrorKind::AuthRequired, CLAUDE),
    p("invalid api key", ErrorKind::AuthRequired, CLAUDE),
    p("oauth token revoked", ErrorKind::AuthRequired, CLAUDE),
    p("failed to authenticate", ErrorKind::AuthRequired, CLAUDE),
    p(
        "authentication required",
        ErrorKind::AuthRequired,
        "@agentclientprotocol/sdk RequestError.authRequired()'s message (a relayed -32000)",
    ),
    p("authentication error", ErrorKind::AuthRequired, GOOSE),
    p("api key is missing", ErrorKind::AuthRequired, GEMINI),
    // Unavailable: the service, or the way to it.
    p("overloaded", ErrorKind::Unavailable, CLAUDE),
    p("experiencing high load", ErrorKind::Unavailable, CLAUDE),
    p("unable to connect to api", ErrorKind::Unavailable, CLAUDE),
    p("request timed out", ErrorKind::Unavailable, CLAUDE),
    p(
        "connection error",
        ErrorKind::Unavailable,
        "the Anthropic SDK's APIConnectionError (\"Connection error.\"), in cli.js",
    ),
    p("server error", ErrorKind::Unavailable, GOOSE),
    p("network error", ErrorKind::Unavailable, GOOSE),
    p("could not connect to", ErrorKind::Unavailable, GOOSE),
    p(
        "service unavailable",
        ErrorKind::Unavailable,
        "HTTP 503's reason phrase",
    ),
    p("stream disconnected", ErrorKind::Unavailable, CODEX),
];

/// The first of [`PATTERNS`] the message holds.
pub fn by_message(message: &str) -> Option<ErrorKind> {
    if message.is_empty() {
        return None;
    }
    // Curly apostrophes (claude-agent-sdk writes "You’re ..." in places) read as straight ones.
    let m = message.to_lowercase().replace('\u{2019}', "'");
    PATTERNS.iter().find(|p| m.contains(p.text)).map(|p| p.kind)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn msg(m: &str) -> ErrorKind {
        classify(Some(-32603), m, None)
    }

    #[test]
    fn codes_decide_first() {
        assert_eq!(
            classify(Some(-32000), "anything", None),
            ErrorKind::AuthRequired
        );
        for c in [-32700, -32600, -32601, -32602] {
            assert_eq!(classify(Some(c), "x", None), ErrorKind::Protocol, "{c}");
        }
        // gemini-cli's HTTP statuses as codes.
        assert_eq!(classify(Some(401), "x", None), ErrorKind::AuthRequired);
        assert_eq!(classify(Some(403), "x", None), ErrorKind::AuthRequired);
        assert_eq!(
            classify(Some(429), "Rate limit exceeded. Try again later.", None),
            ErrorKind::RateLimit
        );
        assert_eq!(classify(Some(503), "x", None), ErrorKind::Unavailable);
        assert_eq!(classify(Some(529), "x", None), ErrorKind::Unavailable);
        // A code that says nothing by itself leaves it to the message.
        assert_eq!(classify(Some(500), "x", None), ErrorKind::Other);
        assert_eq!(
            classify(Some(500), "Prompt is too long", None),
            ErrorKind::ContextTooLong
        );
        assert_eq!(classify(None, "", None), ErrorKind::Other);
        // The code wins over a text that says otherwise.
        assert_eq!(
            classify(Some(-32000), "rate limit", None),
            ErrorKind::AuthRequired
        );
    }

    #[test]
    fn claude_code_texts() {
        // As claude-code-acp relays them: RequestError.internalError(undefined, result).
        assert_eq!(
            msg("Internal error: Prompt is too long"),
            ErrorKind::ContextTooLong
        );
        assert_eq!(
            msg(
                "Internal error: Conversation too long. Press esc twice to go up a few messages and try again."
            ),
            ErrorKind::ContextTooLong
        );
        assert_eq!(
            msg("Internal error: Context limit reached · /compact or /clear to continue"),
            ErrorKind::ContextTooLong
        );
        assert_eq!(
            msg("Internal error: You've hit your session limit · resets 3pm"),
            ErrorKind::UsageLimit
        );
        assert_eq!(
            msg("Internal error: You\u{2019}ve hit your weekly limit"),
            ErrorKind::UsageLimit
        );
        assert_eq!(
            msg("Internal error: Claude AI usage limit reached|1760000000"),
            ErrorKind::UsageLimit
        );
        assert_eq!(
            msg("Internal error: Credit balance is too low"),
            ErrorKind::UsageLimit
        );
        assert_eq!(
            msg("Internal error: API Error: Rate limit reached"),
            ErrorKind::RateLimit
        );
        assert_eq!(
            msg(
                r#"Internal error: API Error: 429 {"type":"error","error":{"type":"rate_limit_error"}}"#
            ),
            ErrorKind::RateLimit
        );
        assert_eq!(
            msg("Internal error: Not logged in · Please run /login"),
            ErrorKind::AuthRequired
        );
        assert_eq!(
            msg("Internal error: Invalid API key · Fix external API key"),
            ErrorKind::AuthRequired
        );
        assert_eq!(
            msg("Internal error: OAuth token revoked · Please run /login"),
            ErrorKind::AuthRequired
        );
        assert_eq!(
            msg("Internal error: Failed to authenticate. API Error: 401"),
            ErrorKind::AuthRequired
        );
        assert_eq!(
            msg("Internal error: Repeated 529 Overloaded errors"),
            ErrorKind::Unavailable
        );
        assert_eq!(
            msg(
                "Internal error: Opus is experiencing high load, please use /model to switch to Sonnet"
            ),
            ErrorKind::Unavailable
        );
        assert_eq!(
            msg("Internal error: Unable to connect to API. Check your internet connection"),
            ErrorKind::Unavailable
        );
        assert_eq!(
            msg("Internal error: Request timed out"),
            ErrorKind::Unavailable
        );
        assert_eq!(
            msg("Internal error: Connection error."),
            ErrorKind::Unavailable
        );
        // And what says nothing we know.
        assert_eq!(msg("Internal error: Session not found"), ErrorKind::Other);
        assert_eq!(
            classify(Some(-32603), "Authentication required", None),
            ErrorKind::AuthRequired
        );
    }

    #[test]
    fn gemini_texts() {
        assert_eq!(
            classify(
                Some(500),
                "You have exhausted your capacity on this model. Your quota will reset after 2h52m39s.",
                None
            ),
            ErrorKind::UsageLimit
        );
        assert_eq!(
            classify(None, "ResourceExhausted: 429 Quota exceeded", None),
            ErrorKind::UsageLimit
        );
        assert_eq!(
            classify_start_failure(
                "session/new failed: Gemini API key is missing or not configured. (401)"
            ),
            ErrorKind::AuthRequired
        );
    }

    #[test]
    fn goose_texts() {
        for (m, k) in [
            ("Authentication error: bad key", ErrorKind::AuthRequired),
            (
                "Context length exceeded: 210000 > 200000",
                ErrorKind::ContextTooLong,
            ),
            ("Rate limit exceeded: slow down", ErrorKind::RateLimit),
            ("Server error: 500", ErrorKind::Unavailable),
            (
                "Network error: check your network connection",
                ErrorKind::Unavailable,
            ),
            (
                "Could not connect to api.example.com:443",
                ErrorKind::Unavailable,
            ),
            ("Credits exhausted: top up", ErrorKind::UsageLimit),
            ("Execution error: tool failed", ErrorKind::Other),
        ] {
            assert_eq!(msg(m), k, "{m}");
        }
    }

    #[test]
    fn openai_and_codex_texts() {
        assert_eq!(
            msg(
                "Your input exceeds the context window of this model. Please adjust your input and try again."
            ),
            ErrorKind::ContextTooLong
        );
        assert_eq!(msg("context_length_exceeded"), ErrorKind::ContextTooLong);
        assert_eq!(
            msg("You exceeded your current quota, please check your plan and billing details."),
            ErrorKind::UsageLimit
        );
        assert_eq!(
            msg("exceeded retry limit, last status: 429 Too Many Requests"),
            ErrorKind::RateLimit
        );
        assert_eq!(
            msg("stream disconnected before completion"),
            ErrorKind::Unavailable
        );
        assert_eq!(msg("Service Unavailable"), ErrorKind::Unavailable);
    }

    #[test]
    fn codex_error_info_in_data() {
        let d = |info: Value| json!({"message": "Internal error", "codex_error_info": info});
        for (info, k) in [
            (json!("context_window_exceeded"), ErrorKind::ContextTooLong),
            (json!("usage_limit_exceeded"), ErrorKind::UsageLimit),
            (json!("unauthorized"), ErrorKind::AuthRequired),
            (json!("server_overloaded"), ErrorKind::Unavailable),
            (json!("internal_server_error"), ErrorKind::Unavailable),
            (
                json!({"response_too_many_failed_attempts": {"http_status_code": 429}}),
                ErrorKind::RateLimit,
            ),
            (
                json!({"http_connection_failed": {"http_status_code": null}}),
                ErrorKind::Unavailable,
            ),
            (
                json!({"response_stream_connection_failed": {"http_status_code": 401}}),
                ErrorKind::AuthRequired,
            ),
        ] {
            let data = d(info.clone());
            assert_eq!(
                classify(Some(-32603), "Internal error", Some(&data)),
                k,
                "{info}"
            );
        }
        // An unknown name leaves it to the message, here the one in `data`.
        let data = json!({"message": "You've hit your usage limit.", "codex_error_info": "other"});
        assert_eq!(
            classify(Some(-32603), "Internal error", Some(&data)),
            ErrorKind::UsageLimit
        );
        // A string `data` (goose, codex-acp's `.data(e.to_string())`) is read as a message.
        assert_eq!(
            classify(
                Some(-32603),
                "Internal error",
                Some(&json!("Rate limit exceeded: x"))
            ),
            ErrorKind::RateLimit
        );
        // claude-code-acp's SDK: internalError({details}).
        assert_eq!(
            classify(
                Some(-32603),
                "Internal error",
                Some(&json!({"details": "Prompt is too long"}))
            ),
            ErrorKind::ContextTooLong
        );
    }

    #[test]
    fn start_failures() {
        assert_eq!(
            classify_start_failure("the agent command `x` was not found. Install the agent"),
            ErrorKind::StartFailed
        );
        assert_eq!(
            classify_start_failure("session/new failed: Authentication required (-32000)"),
            ErrorKind::AuthRequired
        );
        assert_eq!(
            classify_start_failure("initialize failed: Method not found (-32601)"),
            ErrorKind::Protocol
        );
        assert_eq!(trailing_code("x (12) y"), None);
    }

    #[test]
    fn kinds_serialize_kebab_case_and_say_what_front_ends_offer() {
        let names: Vec<String> = ErrorKind::ALL
            .iter()
            .map(|k| {
                serde_json::to_value(k)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(
            names,
            [
                "auth-required",
                "rate-limit",
                "usage-limit",
                "unavailable",
                "context-too-long",
                "agent-exited",
                "agent-unresponsive",
                "start-failed",
                "protocol",
                "other"
            ]
        );
        let retry: Vec<_> = ErrorKind::ALL.iter().filter(|k| k.retryable()).collect();
        assert_eq!(
            retry,
            [
                &ErrorKind::RateLimit,
                &ErrorKind::UsageLimit,
                &ErrorKind::Unavailable
            ]
        );
        let reconnect: Vec<_> = ErrorKind::ALL
            .iter()
            .filter(|k| k.reconnectable())
            .collect();
        assert_eq!(
            reconnect,
            [&ErrorKind::AgentExited, &ErrorKind::AgentUnresponsive]
        );
        // Every pattern is lower case (matching lower-cases the message) and names its source.
        for p in PATTERNS {
            assert_eq!(p.text, p.text.to_lowercase(), "{}", p.text);
            assert!(!p.source.is_empty());
        }
    }
}
