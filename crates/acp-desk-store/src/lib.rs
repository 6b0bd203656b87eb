//! ACP Desk's history store: every session a front end runs, kept in SQLite so that it
//! survives restarts, for every agent, whatever the agent itself supports. No Tauri, no
//! webview; front ends reach it through the app layer's `HistoryRecorder` (writing) and
//! [`Store`] (reading, search, delete, export). See ARCHITECTURE.md for the rules it keeps.
//!
//! - One file, `<data dir>/history.sqlite3` ([`default_path`]; `ACP_DESK_DATA_DIR` moves it),
//!   in WAL mode, shared by the window and the CLI; a schema version with migrations
//!   (`schema.rs`); a damaged file is moved aside, a newer one opened read-only, a locked one
//!   named in the error (`open.rs`).
//! - Sessions with their launch (environment variable names only, secret-looking arguments
//!   redacted: `launch.rs`), folder, title, times, status, the agent's own session id and the
//!   session methods it advertised.
//! - Events merged as the compactor merges a live stream (`rows.rs`), so the stored rows of a
//!   session are its compacted thread and replay as a snapshot does.
//! - A full-text index (FTS5, trigram) over messages, tool calls and terminal output
//!   (`search.rs`).
//! - Drafts. Which sessions were open lives in the app's state file (the window's state), not
//!   here.
//! - Writes go through [`Recorder`], a thread of its own fed by a queue of one merged frame per
//!   session: the event path never waits for SQLite and nothing is dropped (`recorder.rs`).
//! - Export as Markdown or StreamEvent JSON lines (`export.rs`).

mod claim;
mod error;
pub mod export;
pub mod launch;
mod open;
mod recorder;
mod rows;
mod schema;
pub mod search;
mod store;

pub use claim::{SessionClaim, claims_dir};
pub use error::{StoreError, StoreWarning};
pub use launch::{LaunchOrigin, StoredLaunch};
pub use open::{FILE_NAME, OpenOptions, default_path};
pub use recorder::{
    COMMIT_INTERVAL, COMMIT_ROWS, INDEX_IDLE, RETRY_INTERVAL, Recorder, RecorderOptions,
    SessionMeta, WAKE_ENTRIES, WarningSink,
};
pub use schema::SCHEMA_VERSION;
pub use store::{SearchHit, SessionRecord, Store, StoredRow};
