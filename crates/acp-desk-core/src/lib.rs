//! ACP Desk's engine: agent processes, the JSON-RPC peer, sessions and the `StreamEvent`s they
//! emit. Nothing here depends on Tauri or a webview; the CLI and the desktop shell are both thin
//! front ends over it. See ARCHITECTURE.md at the repository root for the map and the rules.

pub mod agents;
pub mod atomic_file;
pub mod audit;
pub mod auth;
pub mod checkpoint;
pub mod compact;
pub mod elicitation;
pub mod error_kind;
pub mod events;
pub mod fs;
pub mod hub;
pub mod jsonrpc;
pub mod mcp;
pub mod paths;
pub mod process;
pub mod rules;
pub mod secrets;
pub mod session;
pub mod settings;
pub mod supervisor;
pub mod terminal;
pub mod thread;
pub mod watch;

pub use agent_client_protocol_schema as schema;
pub use events::StreamEvent;
pub use session::{
    CheckpointOptions, ContinueVia, ElicitationPolicy, EngineError, EventBatch, ListedSessions,
    Opening, PermissionPolicy, SessionHandle, SessionOptions, StartTrace, TurnOutcome, start,
    start_traced, text_block,
};
