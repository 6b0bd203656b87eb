//! Every type that crosses between the webview and Rust, besides the engine's own
//! [`StreamEvent`](acp_desk_core::StreamEvent)s. The TypeScript side is generated from these
//! (through their JSON Schema: `acp-desk-ipc-schema`, then `npm run gen:types`); never copy them
//! by hand.

use acp_desk_core::agents::AgentListing;
use acp_desk_core::events::{PermissionResolution, TurnEndReason};
use acp_desk_core::hub::StreamFrame;
use acp_desk_core::schema::v1 as acp;
use acp_desk_core::{EngineError, TurnOutcome};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a command failed with. Crosses as `{code, message}`; the UI matches on `code`, never
/// on the text, and shows `message` (which says what happened and what to do).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, JsonSchema)]
#[serde(tag = "code", content = "message", rename_all = "kebab-case")]
pub enum IpcError {
    #[error("{0}")]
    FolderMissing(String),
    #[error("{0}")]
    NotAFolder(String),
    #[error("{0}")]
    FolderUnreadable(String),
    #[error("{0}")]
    AgentUnknown(String),
    /// The agent's program could not be found or run.
    #[error("{0}")]
    AgentUnavailable(String),
    /// The agent ran but the session could not start (protocol, crash, timeout).
    #[error("{0}")]
    AgentFailed(String),
    #[error("{0}")]
    AuthRequired(String),
    #[error("{0}")]
    SessionUnknown(String),
    /// The session is still starting: try again once it is ready.
    #[error("{0}")]
    SessionStarting(String),
    #[error("{0}")]
    SessionEnded(String),
    #[error("{0}")]
    TurnInProgress(String),
    #[error("{0}")]
    PermissionUnknown(String),
    #[error("{0}")]
    InvalidInput(String),
}

impl From<EngineError> for IpcError {
    fn from(e: EngineError) -> Self {
        let message = e.to_string();
        match e {
            EngineError::Spawn(_) => Self::AgentUnavailable(message),
            EngineError::StartFailed(_) | EngineError::ProtocolVersion(_) => {
                Self::AgentFailed(message)
            }
            EngineError::AuthRequired(_) => Self::AuthRequired(message),
            EngineError::SessionEnded(_) => Self::SessionEnded(message),
            EngineError::TurnInProgress => Self::TurnInProgress(message),
            EngineError::UnknownPermission(_) | EngineError::UnknownOption(..) => {
                Self::PermissionUnknown(message)
            }
        }
    }
}

/// What the window needs to start: the agents to offer and the folder to open, if any.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    pub version: String,
    /// The folder given on the command line, opened at start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_folder: Option<String>,
    /// An agent named on the command line (`--agent NAME`), else the listing's default.
    pub initial_agent: String,
    pub agents: AgentListing,
    pub config_dir: String,
    pub data_dir: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The app's id for the session: pass it to every session command.
    pub id: String,
    /// The folder, resolved (absolute, symlinks followed).
    pub folder: String,
    /// The agent's name as `resolve` takes it.
    pub agent: String,
}

/// How a turn ended (the same as its `turn-end` event).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnEnd {
    pub reason: TurnEndReason,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<acp::StopReason>,
}

impl From<TurnOutcome> for TurnEnd {
    fn from(o: TurnOutcome) -> Self {
        Self {
            reason: o.reason,
            stop_reason: o.stop_reason,
        }
    }
}

/// Paths dropped on the window (Tauri's native drag-drop), with where they landed (CSS
/// pixels), so the UI can route them: a folder on the window opens it; files on the composer
/// (later) attach them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PathsDropped {
    pub paths: Vec<String>,
    pub x: f64,
    pub y: f64,
}

/// A drag over the window started (`true`) or left (`false`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DragHover {
    pub active: bool,
}

/// A folder the user picked with File → Open Folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FolderChosen {
    pub path: String,
}

/// The app-wide Tauri events (DESIGN.md: app-wide notices are events; a session's stream is its
/// channel). Their names reach the UI through the generated types, never typed twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AppEvent {
    /// Payload [`PathsDropped`].
    PathsDropped,
    /// Payload [`DragHover`].
    DragHover,
    /// Payload [`FolderChosen`].
    FolderChosen,
}

impl AppEvent {
    pub fn name(self) -> &'static str {
        match self {
            Self::PathsDropped => "paths-dropped",
            Self::DragHover => "drag-hover",
            Self::FolderChosen => "folder-chosen",
        }
    }
}

/// The root of the generated schema: one field per type the UI needs, so one schema (and one
/// generated TypeScript file) holds them all.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct IpcTypes {
    app_info: AppInfo,
    session_info: SessionInfo,
    stream_frame: StreamFrame,
    turn_end: TurnEnd,
    ipc_error: IpcError,
    permission_resolution: PermissionResolution,
    paths_dropped: PathsDropped,
    drag_hover: DragHover,
    folder_chosen: FolderChosen,
    app_event: AppEvent,
}

/// The JSON Schema the TypeScript types are generated from, as committed in
/// `ui/src/lib/generated/ipc.schema.json`.
pub fn schema_json() -> String {
    let schema = schemars::schema_for!(IpcTypes);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_cross_as_code_and_message() {
        let e = IpcError::NotAFolder("x is a file".into());
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"code": "not-a-folder", "message": "x is a file"})
        );
        let e: IpcError = EngineError::TurnInProgress.into();
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["code"], "turn-in-progress");
        assert!(v["message"].as_str().unwrap().contains("already running"));
    }

    /// The committed schema is what the Rust types say today. Regenerate with
    /// `cargo run -p acp-desk-shell --bin acp-desk-ipc-schema`, then `npm run gen:types`.
    #[test]
    fn the_committed_schema_is_fresh() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../ui/src/lib/generated/ipc.schema.json"
        );
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            committed == schema_json(),
            "{path} is stale: run `cargo run -p acp-desk-shell --bin acp-desk-ipc-schema` and `npm run gen:types`, then commit both files"
        );
    }

    #[test]
    fn app_event_names_are_their_serialized_names() {
        for e in [
            AppEvent::PathsDropped,
            AppEvent::DragHover,
            AppEvent::FolderChosen,
        ] {
            assert_eq!(serde_json::to_value(e).unwrap(), e.name());
        }
    }

    #[test]
    fn the_schema_names_every_ipc_type_and_event_kind() {
        let schema = schema_json();
        for name in [
            "AppInfo",
            "SessionInfo",
            "StreamFrame",
            "StreamEvent",
            "IpcError",
            "PermissionResolution",
            "AgentListing",
            "PathsDropped",
        ] {
            assert!(schema.contains(&format!("\"{name}\"")), "no {name}");
        }
        for kind in acp_desk_core::events::SEED_KINDS {
            assert!(schema.contains(&format!("\"{kind}\"")), "no kind {kind}");
        }
    }
}
