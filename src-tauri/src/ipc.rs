//! Every type that crosses between the webview and Rust, besides the engine's own
//! [`StreamEvent`](acp_desk_core::StreamEvent)s. The TypeScript side is generated from these
//! (through their JSON Schema: `acp-desk-ipc-schema`, then `npm run gen:types`); never copy them
//! by hand.

use acp_desk_app::AppError;
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
    /// An answer to the agent's question that its fields refuse (the message lists each
    /// field's problem); the question stays open.
    #[error("{0}")]
    InvalidAnswer(String),
    /// The question was answered meanwhile (or settled by a stop): the window drops it.
    #[error("{0}")]
    ElicitationUnknown(String),
    /// The agent does not offer to stop that background task, or it has ended.
    #[error("{0}")]
    TaskNotStoppable(String),
    #[error("{0}")]
    InvalidInput(String),
    /// The agent answered a request (set a mode, a config option) with an error; the message
    /// carries what the agent said.
    #[error("{0}")]
    AgentRefused(String),
    /// A path outside the session's folder (after `..` and symlinks are resolved).
    #[error("{0}")]
    PathOutside(String),
    /// The history file cannot be read or written (locked by another program, damaged, a
    /// newer ACP Desk's and so read-only); the message names the file and what to do.
    #[error("{0}")]
    HistoryUnavailable(String),
    /// No keychain service answers, or it is locked, or it refused: the message says which and
    /// what to do (start or unlock the keychain). Never carries a secret's value.
    #[error("{0}")]
    KeychainUnavailable(String),
    /// A project's MCP config file changed (or went) since the window showed it: nothing was
    /// recorded; ask for the offer again.
    #[error("{0}")]
    ProjectConfigChanged(String),
    /// Running what the user asked for needs their agreement first (a terminal login whose
    /// command the agent named and that is not its own launch): the message names what would
    /// run; ask, then call again with `consent: true`.
    #[error("{0}")]
    ConsentNeeded(String),
    /// Checkpoints are off (no `git` found, or turned off in the settings): the message says
    /// which and what to do.
    #[error("{0}")]
    CheckpointsOff(String),
    /// A revert or restore was refused: a turn runs in that folder (this session's or
    /// another's, in this app or another process). Nothing was written.
    #[error("{0}")]
    FolderBusy(String),
    /// No such step, a step still running, or a file it did not change.
    #[error("{0}")]
    StepUnknown(String),
    /// A checkpoint could not be read, taken or applied (git, the disk); nothing was changed.
    #[error("{0}")]
    CheckpointFailed(String),
    /// An undo wrote some files, then failed; the text says which, and what to do.
    #[error("{0}")]
    CheckpointPartial(String),
    /// ACP Desk itself failed (a task of ours panicked or was cancelled, the UI sent what it
    /// never should): neither the user's input nor the agent. The UI says so and asks for a
    /// report.
    #[error("{0}")]
    Internal(String),
}

impl IpcError {
    /// A task of ours on the blocking pool did not finish (it panicked, or the runtime is
    /// shutting down): `what` names the work, as in "could not {what}".
    pub fn task_failed(what: &str, e: &impl std::fmt::Display) -> Self {
        Self::Internal(format!(
            "could not {what}: the task stopped before it finished ({e})"
        ))
    }
}

impl From<EngineError> for IpcError {
    fn from(e: EngineError) -> Self {
        let message = e.to_string();
        match e {
            // Nothing was started: like a missing program, the message says what to do (store
            // the secret).
            EngineError::Spawn(_) | EngineError::SecretUnavailable { .. } => {
                Self::AgentUnavailable(message)
            }
            EngineError::StartFailed(_) | EngineError::ProtocolVersion(_) => {
                Self::AgentFailed(message)
            }
            EngineError::AuthRequired(_) => Self::AuthRequired(message),
            EngineError::SessionEnded(_) => Self::SessionEnded(message),
            EngineError::TurnInProgress => Self::TurnInProgress(message),
            // Settled elsewhere (the UI keeps quiet about that)...
            EngineError::UnknownPermission(_) => Self::PermissionUnknown(message),
            // ...but an option the request never offered is a bug worth showing: the UI only
            // sends options the request came with.
            EngineError::UnknownOption(..) => Self::Internal(message),
            EngineError::AgentRefused(_) => Self::AgentRefused(message),
            EngineError::InvalidAnswer { .. } => Self::InvalidAnswer(message),
            EngineError::UnknownElicitation(_) => Self::ElicitationUnknown(message),
            EngineError::TaskNotStoppable { .. } => Self::TaskNotStoppable(message),
        }
    }
}

impl From<AppError> for IpcError {
    fn from(e: AppError) -> Self {
        match e {
            AppError::Engine(e) => e.into(),
            AppError::FolderMissing(m) => Self::FolderMissing(m),
            AppError::NotAFolder(m) => Self::NotAFolder(m),
            AppError::FolderUnreadable(m) => Self::FolderUnreadable(m),
            AppError::AgentUnknown(m) => Self::AgentUnknown(m),
            AppError::AgentUnavailable(m) => Self::AgentUnavailable(m),
            AppError::SessionUnknown(m) => Self::SessionUnknown(m),
            AppError::SessionStarting(m) => Self::SessionStarting(m),
            AppError::SessionEnded(m) => Self::SessionEnded(m),
            AppError::InvalidInput(m) => Self::InvalidInput(m),
            AppError::Keychain(m) => Self::KeychainUnavailable(m),
            AppError::ProjectConfigChanged(m) => Self::ProjectConfigChanged(m),
            AppError::CheckpointsOff(m) => Self::CheckpointsOff(m),
            AppError::FolderBusy(m) => Self::FolderBusy(m),
            AppError::StepUnknown(m) => Self::StepUnknown(m),
            AppError::Checkpoint(m) => Self::CheckpointFailed(m),
            AppError::CheckpointPartial(m) => Self::CheckpointPartial(m),
            AppError::Internal(m) => Self::Internal(m),
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
    /// An agent named on the command line (`--agent NAME`); without one, new sessions use
    /// the default of the listing (`agents_list`, asked once the window is up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_agent: Option<String>,
    pub config_dir: String,
    pub data_dir: String,
    /// The theme chosen with View → Theme (saved in the app's state file); later changes arrive
    /// as `menu-action` `theme`.
    pub theme: Theme,
    /// Something about the desktop to say once (the platform has no notification service), if
    /// it was known when the window asked; later it arrives as `desktop-notice`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub desktop_notice: Option<String>,
}

pub use acp_desk_app::state::Theme;

pub use acp_desk_app::restore::RestoredSession;

/// What `restored_sessions` gives the window at its start: the sidebar as the last run left it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RestoredSidebar {
    /// In sidebar order, each with its stored transcript and draft.
    pub sessions: Vec<RestoredSession>,
    /// The index of the one that was shown.
    pub shown: Option<u32>,
    /// The settings file's `restored_sessions_start` is `at_once`: start every agent now,
    /// rather than when the user returns to its session.
    pub start_at_once: bool,
}

/// One session of the sidebar, as `set_open_sessions` saves it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenSessionEntry {
    /// Its history id (`null` until its agent said it, or if it never started).
    pub session_id: Option<String>,
    pub folder: String,
    pub agent: String,
}

/// A menu item the window acts on (the others are done in Rust). Payload of `menu-action`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum MenuAction {
    /// File → Close Session: the shown session (asking first if it is busy).
    CloseSession,
    /// View → Toggle Sidebar.
    ToggleSidebar,
    /// Edit → Undo, in the focused text field (the webview's own editing command: GTK has no
    /// native undo item).
    Undo,
    /// Edit → Redo, likewise.
    Redo,
    /// View → Theme: the UI applies it (the choice is already saved).
    Theme { theme: Theme },
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

/// One piece of a prompt as the composer builds it; the shell turns each into an ACP content
/// block (`prompt`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PromptPart {
    Text {
        text: String,
    },
    /// A project file the user picked with `@`: relative to the session folder, `/`-separated
    /// (an absolute path inside it is accepted too). Sent as a `resource_link`, or as an
    /// embedded `resource` when the agent advertises `embeddedContext` and the file is UTF-8
    /// text of at most 256 KiB.
    File {
        path: String,
    },
    /// A pasted or dropped image (PNG, JPEG, GIF or WebP, at most 10 MiB), base64 without the
    /// `data:` prefix. Refused when the agent does not advertise `image`.
    Image {
        #[serde(rename = "mimeType")]
        mime_type: String,
        data: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
}

/// The project's files for the `@` picker (gitignore honoured), relative and `/`-separated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectFiles {
    pub files: Vec<String>,
    /// More files exist than were listed (the listing is capped).
    pub truncated: bool,
}

/// A config option's new value: a select's value id, or a boolean's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ConfigValue {
    Bool(bool),
    Id(String),
}

impl From<ConfigValue> for acp::SessionConfigOptionValue {
    fn from(v: ConfigValue) -> Self {
        match v {
            ConfigValue::Bool(b) => Self::boolean(b),
            ConfigValue::Id(id) => Self::value_id(id),
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

/// A folder to open: picked with File → Open Folder or File → Open Recent, or given to a
/// second launch of the app.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FolderChosen {
    pub path: String,
    /// The agent to open it with (Open Recent: the one last used there; a second launch's
    /// `--agent`); absent: the window's choice for new sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// A notification (its body or Show) or a tray item asked to show a session: the window
/// selects it, so the dialog of its waiting request shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShowRequest {
    /// The session's registry id (`SessionInfo.id`).
    pub session: String,
    /// The permission request the notification or item was about (none for a turn's end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// Something about the desktop the window says once, as a dismissible banner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DesktopNotice {
    /// What happened and what it means for the user.
    pub message: String,
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
    /// Payload [`MenuAction`].
    MenuAction,
    /// Payload [`HistoryNotice`](crate::history::HistoryNotice): something happened to the
    /// history file while the app runs (a full disk, history turned off).
    HistoryNotice,
    /// Payload [`ShowRequest`]: a notification or the tray asked to show a session (on its
    /// permission dialog when a request is named).
    ShowRequest,
    /// Payload [`DesktopNotice`]: something about the desktop the user must hear once (no
    /// notification service).
    DesktopNotice,
}

impl AppEvent {
    pub fn name(self) -> &'static str {
        match self {
            Self::PathsDropped => "paths-dropped",
            Self::DragHover => "drag-hover",
            Self::FolderChosen => "folder-chosen",
            Self::MenuAction => "menu-action",
            Self::HistoryNotice => "history-notice",
            Self::ShowRequest => "show-request",
            Self::DesktopNotice => "desktop-notice",
        }
    }
}

/// The name of a command the webview may call: one of
/// [`COMMAND_NAMES`](crate::commands::COMMAND_NAMES), whose list also registers the commands and
/// grants them. The UI invokes commands only by this type, so a misspelt name fails its type
/// check instead of failing at run time.
pub struct CommandName;

impl JsonSchema for CommandName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CommandName".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "The name of a command the webview may call (src-tauri/src/command_names.rs).",
            "type": "string",
            "enum": crate::commands::COMMAND_NAMES,
        })
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
    elicitation_answer: acp_desk_core::elicitation::ElicitationAnswer,
    field_error: acp_desk_core::elicitation::FieldError,
    paths_dropped: PathsDropped,
    drag_hover: DragHover,
    folder_chosen: FolderChosen,
    show_request: ShowRequest,
    desktop_notice: DesktopNotice,
    menu_action: MenuAction,
    theme: Theme,
    app_event: AppEvent,
    prompt_part: PromptPart,
    project_files: ProjectFiles,
    config_value: ConfigValue,
    command_name: CommandName,
    history_status: crate::history::HistoryStatus,
    history_session: crate::history::HistorySession,
    history_hit: crate::history::HistoryHit,
    history_events: crate::history::HistoryEvents,
    export_format: crate::history::ExportFormat,
    agent_session: crate::history::AgentSession,
    restored_sidebar: RestoredSidebar,
    open_session_entry: OpenSessionEntry,
    agent_listing: AgentListing,
    check_report: acp_desk_core::agents::CheckReport,
    install_progress: acp_desk_core::agents::install::InstallProgress,
    registry_imported: crate::agents::RegistryImported,
    secrets_listing: crate::secrets::SecretsListing,
    mcp_servers_listing: crate::secrets::McpServersListing,
    project_mcp_offer: acp_desk_app::project_mcp::ProjectMcpOffer,
    project_mcp_choice: acp_desk_app::project_mcp::ProjectMcpChoice,
    sign_in_target: crate::sign_in::SignInTarget,
    sign_in_answer: crate::sign_in::SignInAnswer,
    login_target: crate::login::LoginTarget,
    login_started: crate::login::LoginStarted,
    login_frame: crate::login::LoginFrame,
    checkpoint_listing: acp_desk_app::checkpoints::CheckpointListing,
    checkpoint_changes: acp_desk_core::checkpoint::Changes,
    file_versions: acp_desk_core::checkpoint::FileVersions,
    revert_outcome: acp_desk_core::checkpoint::RevertOutcome,
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
        let e: IpcError = EngineError::AgentRefused("unknown mode (-32602)".into()).into();
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["code"], "agent-refused");
        assert!(v["message"].as_str().unwrap().contains("unknown mode"));
    }

    #[test]
    fn our_own_failures_cross_as_internal() {
        // The UI only sends options the request offered: another one is our bug.
        let e: IpcError = EngineError::UnknownOption("t#1".into(), "made-up".into()).into();
        assert_eq!(serde_json::to_value(&e).unwrap()["code"], "internal");
        let e: IpcError = AppError::Internal("opened without views".into()).into();
        assert_eq!(serde_json::to_value(&e).unwrap()["code"], "internal");
        let e = IpcError::task_failed("list the folder's files", &"task 7 panicked");
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({
                "code": "internal",
                "message": "could not list the folder's files: the task stopped before it finished (task 7 panicked)"
            })
        );
    }

    #[test]
    fn prompt_parts_cross_as_the_ui_writes_them() {
        let parts: Vec<PromptPart> = serde_json::from_value(serde_json::json!([
            {"type": "text", "text": "look at"},
            {"type": "file", "path": "src/main.rs"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA", "name": "shot.png"},
        ]))
        .unwrap();
        assert_eq!(
            parts[1],
            PromptPart::File {
                path: "src/main.rs".into()
            }
        );
        assert!(matches!(&parts[2], PromptPart::Image { name: None, .. }));
        assert!(matches!(&parts[3], PromptPart::Image { name: Some(n), .. } if n == "shot.png"));
        let v: Vec<ConfigValue> = serde_json::from_str(r#"[true, "demo-deep"]"#).unwrap();
        assert_eq!(
            v,
            vec![ConfigValue::Bool(true), ConfigValue::Id("demo-deep".into())]
        );
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
            AppEvent::MenuAction,
            AppEvent::HistoryNotice,
            AppEvent::ShowRequest,
            AppEvent::DesktopNotice,
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
            "PromptPart",
            "ProjectFiles",
            "CommandName",
            "MenuAction",
            "Theme",
        ] {
            assert!(schema.contains(&format!("\"{name}\"")), "no {name}");
        }
        for name in crate::commands::COMMAND_NAMES {
            assert!(schema.contains(&format!("\"{name}\"")), "no command {name}");
        }
        for kind in acp_desk_core::events::SEED_KINDS {
            assert!(schema.contains(&format!("\"{kind}\"")), "no kind {kind}");
        }
    }
}
