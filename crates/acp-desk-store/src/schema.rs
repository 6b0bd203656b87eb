//! The file's schema, by version (`PRAGMA user_version`), and the steps from each version to
//! the next.
//!
//! - `MIGRATIONS[i]` takes a file from version `i` to `i + 1`; opening runs the missing steps
//!   and the version bump in one transaction, so a file is at one version or the next, never
//!   half-way. Steps are only ever appended: a released step never changes.
//! - A file whose version is greater than [`SCHEMA_VERSION`] was written by a newer ACP Desk: it
//!   is opened read-only and never downgraded (`open.rs`).
//! - Version 1 is the record (sessions, their events, drafts); version 2 adds the full-text
//!   index. Both shipped in the same release; the index is its own step because it is derived
//!   data: the step marks every stored row as not indexed yet, and the writer (or a search)
//!   indexes them, so a file of any earlier version becomes searchable the same way.

/// The version this build reads and writes.
pub const SCHEMA_VERSION: u32 = 2;

/// `MIGRATIONS[i]`: from version `i` to `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[V1, V2];

const _: () = assert!(MIGRATIONS.len() == SCHEMA_VERSION as usize);

/// The record.
///
/// - `sessions.id` is ACP Desk's session id (every event's `sessionId`); `acp_session_id` the
///   agent's own. `launch` is a `StoredLaunch` as JSON (environment variable names only, secret
///   looking arguments redacted). `title` is the agent's (`session-info`), `prompt_title` the
///   first prompt's first line: a listing shows the first that is set. `agent_identity` is the
///   last `session-status`'s `agent` as JSON (name, version, what it advertised). Times are
///   unix milliseconds.
/// - `events` holds a session's thread merged as the compactor merges it
///   (`acp_desk_core::compact`): `seq` orders a session's rows; `data` is one `StreamEvent` as
///   JSON.
/// - `drafts`: the unsent text of a session's composer.
const V1: &str = "
CREATE TABLE sessions (
    id TEXT PRIMARY KEY NOT NULL,
    agent TEXT NOT NULL,
    launch TEXT NOT NULL,
    folder TEXT NOT NULL,
    title TEXT,
    prompt_title TEXT,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    status TEXT NOT NULL,
    status_detail TEXT,
    acp_session_id TEXT,
    agent_identity TEXT
);
CREATE INDEX sessions_by_update ON sessions(updated_ms);
CREATE INDEX sessions_by_folder ON sessions(folder, updated_ms);
CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL,
    UNIQUE (session_id, seq)
);
CREATE TABLE drafts (
    session_id TEXT PRIMARY KEY NOT NULL,
    text TEXT NOT NULL,
    updated_ms INTEGER NOT NULL
);
";

/// The full-text index: one document per event row that has text (`search.rowid` =
/// `events.id`), with the trigram tokenizer so that any substring of three or more characters
/// is found (`session_info`, `src/ma`). `events.indexed` is 0 for a row whose document is not
/// (or no longer) current; the partial index finds them quickly.
const V2: &str = "
ALTER TABLE events ADD COLUMN indexed INTEGER NOT NULL DEFAULT 0;
CREATE INDEX events_to_index ON events(id) WHERE indexed = 0;
CREATE VIRTUAL TABLE search USING fts5(body, tokenize = 'trigram');
";
