//! ACP Desk's app layer, between the engine (acp-desk-core) and the front ends (the desktop
//! shell, the CLI). Nothing here depends on Tauri or a webview. See ARCHITECTURE.md.
//!
//! - [`Registry`]: the open sessions. Each runs an engine session and a pump that hands every
//!   event batch, in order, to the session's hub (views attached before or after see the same
//!   thread), to the registry's [`Observer`]s (history, tray, notifications) and to an optional
//!   tap with backpressure (the CLI's printer).
//! - A start failure reaches everyone exactly once: the pump waits for the engine's channel to
//!   close and for the start's outcome, and only when the engine could not say `session-status:
//!   dead` itself (the program never ran) does it add the `error` and `dead` events.
//! - [`HistoryRecorder`]: the observer that records every session into the history store
//!   (`acp-desk-store`).
//! - [`continuation`]: continuing a stored session (`continue_request`), opening one the agent
//!   listed (`import_request`), the agent's own sessions (`Registry::list_agent_sessions`).
//! - [`at_agent`]: deleting a stored session at its agent too (`Registry::delete_at_agent`,
//!   with a running agent or one started for it, `Registry::with_agent`); [`reconnect`]: a
//!   dead session continued with a new agent process (`Registry::reconnect`).
//! - [`attention`]: what the desktop shows outside the window when a session needs the user
//!   (waiting permission requests, turns ended in the background): the observer, the pure
//!   notification policy and the only texts a desktop surface may show.
//! - [`logging`]: the desktop app's logs (stderr and a daily file, without secrets).
//! - [`project_mcp`]: a project's own MCP config (`.mcp.json`, ...), offered, and used only as
//!   the user agreed to it (by digest).
//! - [`sign_in`]: signing a session's agent in (`Registry::restart_signed_in`), the prompt that
//!   hit the login sent once signed in, API keys stored in the keychain, sign-in without a
//!   session (the Agents view).
//! - [`state`]: the app's own state file (everything the app writes for itself; the user's
//!   settings file is only ever read, by `acp_desk_core::settings`).

pub mod at_agent;
pub mod attention;
pub mod checkpoints;
pub mod continuation;
pub mod error;
pub mod history;
pub mod logging;
pub mod observer;
pub mod project_mcp;
mod pump;
pub mod reconnect;
pub mod registry;
pub mod restore;
pub mod sign_in;
pub mod state;

pub use at_agent::AgentDeletion;
pub use continuation::{
    continue_request, continue_request_with, import_request, stored_folder, stored_launch_spec,
};
pub use error::AppError;
pub use history::HistoryRecorder;
pub use observer::{Observer, SessionStatus};
pub use registry::{
    OpenRequest, Registry, SessionInfo, check_folder, resolve_agent, resolve_agent_full,
};
