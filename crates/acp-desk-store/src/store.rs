//! The read side, and the writes a person asks for (delete, drafts): [`Store`].
//!
//! Blocking, like every call on SQLite: front ends call it on a thread of their own or the
//! blocking pool. Any number of `Store`s (in any number of processes) may be open next to one
//! [`crate::Recorder`]: the file is in WAL mode, so reading never waits for the writer.

use std::path::Path;

use acp_desk_core::StreamEvent;
use acp_desk_core::events::{AgentIdentity, SessionMethods};
use rusqlite::{OptionalExtension, TransactionBehavior, params};
use serde::Serialize;

use crate::error::{StoreError, StoreWarning};
use crate::launch::StoredLaunch;
use crate::open::{self, Db, OpenOptions, note_damage, now_ms};
use crate::search::{self, Snippet};

/// Rows indexed per transaction when the index catches up, so that a writer elsewhere waits at
/// most for one such batch.
const INDEX_BATCH_ROWS: usize = 512;

/// A stored session, as listed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    /// ACP Desk's session id (every stored event's `sessionId`).
    pub id: String,
    /// The agent's launch name (`demo`, `claude`, a settings name, a command).
    pub agent: String,
    /// `None` when the stored launch cannot be read (a newer ACP Desk's).
    pub launch: Option<StoredLaunch>,
    pub folder: String,
    /// The agent's title for the session (`session-info`).
    pub title: Option<String>,
    /// The first prompt's first line.
    pub prompt_title: Option<String>,
    pub created_ms: i64,
    pub updated_ms: i64,
    /// The last `session-status`: `starting`, `ready`, `prompting`, `dead` (a session that
    /// ended shows `dead` with the reason in `status_detail`; one still `prompting` was cut
    /// off by its ACP Desk dying).
    pub status: String,
    pub status_detail: Option<String>,
    /// The agent's own session id (for `session/load` and `session/resume`).
    pub acp_session_id: Option<String>,
    /// The agent as it described itself, with what it advertised.
    pub agent_identity: Option<AgentIdentity>,
    /// Stored rows (merged events).
    pub rows: i64,
}

impl SessionRecord {
    /// The title to show: the agent's, else the first prompt's, else none.
    pub fn shown_title(&self) -> Option<&str> {
        self.title.as_deref().or(self.prompt_title.as_deref())
    }

    /// The session methods the agent advertised (all `false` when it never said).
    pub fn session_methods(&self) -> SessionMethods {
        self.agent_identity
            .as_ref()
            .and_then(|a| a.session_methods)
            .unwrap_or_default()
    }
}

/// One stored row: a `StreamEvent` as JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRow {
    pub seq: i64,
    pub kind: String,
    pub data: String,
}

/// A search hit: a row of a session, and the snippet around the hit.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub session_id: String,
    /// The row's place in the session (what to scroll to).
    pub seq: i64,
    /// The row's event kind (`text-delta`, `turn-start`, `tool-call`, ...).
    pub kind: String,
    pub snippet: Snippet,
    pub title: Option<String>,
    pub agent: String,
    pub folder: String,
    pub updated_ms: i64,
}

/// The history file, opened for reading and for the writes a person asks for.
pub struct Store {
    db: Db,
}

const SESSION_COLUMNS: &str = "s.id, s.agent, s.launch, s.folder, s.title, s.prompt_title, \
     s.created_ms, s.updated_ms, s.status, s.status_detail, s.acp_session_id, s.agent_identity, \
     (SELECT count(*) FROM events e WHERE e.session_id = s.id)";

fn record(row: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRecord> {
    let launch: String = row.get(2)?;
    let identity: Option<String> = row.get(11)?;
    Ok(SessionRecord {
        id: row.get(0)?,
        agent: row.get(1)?,
        launch: serde_json::from_str(&launch).ok(),
        folder: row.get(3)?,
        title: row.get(4)?,
        prompt_title: row.get(5)?,
        created_ms: row.get(6)?,
        updated_ms: row.get(7)?,
        status: row.get(8)?,
        status_detail: row.get(9)?,
        acp_session_id: row.get(10)?,
        agent_identity: identity.and_then(|i| serde_json::from_str(&i).ok()),
        rows: row.get(12)?,
    })
}

impl Store {
    /// Opens (creating, migrating, or setting aside a damaged one) the history file at `path`.
    /// The warnings say what became of a file that was not as we left it.
    pub fn open(path: impl AsRef<Path>) -> Result<(Store, Vec<StoreWarning>), StoreError> {
        Store::open_with(path, &OpenOptions::default())
    }

    pub fn open_with(
        path: impl AsRef<Path>,
        opts: &OpenOptions,
    ) -> Result<(Store, Vec<StoreWarning>), StoreError> {
        let (db, warnings) = open::open(path.as_ref(), opts)?;
        Ok((Store { db }, warnings))
    }

    /// [`Store::open`] of [`crate::default_path`].
    pub fn open_default() -> Result<(Store, Vec<StoreWarning>), StoreError> {
        Store::open(open::default_path())
    }

    pub fn path(&self) -> &Path {
        &self.db.path
    }

    /// Whether the file is open read-only (a newer ACP Desk's).
    pub fn read_only(&self) -> bool {
        self.db.newer.is_some()
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        note_damage(&self.db.path, &e);
        StoreError::sqlite(&self.db.path, e)
    }

    fn writable(&self) -> Result<(), StoreError> {
        match self.db.newer {
            Some(found) => Err(StoreError::ReadOnly {
                path: self.db.path.clone(),
                found,
            }),
            None => Ok(()),
        }
    }

    /// Every stored session, the most recently updated first.
    pub fn sessions(&self) -> Result<Vec<SessionRecord>, StoreError> {
        let sql =
            format!("SELECT {SESSION_COLUMNS} FROM sessions s ORDER BY s.updated_ms DESC, s.id");
        let mut stmt = self.db.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let rows = stmt.query_map([], record).map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// The session with this id, or the one session whose id starts with it.
    pub fn session(&self, id: &str) -> Result<SessionRecord, StoreError> {
        let exact = format!("SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.id = ?1");
        if let Some(r) = self
            .db
            .conn
            .query_row(&exact, [id], record)
            .optional()
            .map_err(|e| self.err(e))?
        {
            return Ok(r);
        }
        if id.is_empty() {
            return Err(StoreError::NotFound(id.into()));
        }
        let like = format!(
            "SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.id LIKE ?1 ESCAPE '\\' ORDER BY s.id LIMIT 6"
        );
        let pattern = format!(
            "{}%",
            id.replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        let mut stmt = self.db.conn.prepare(&like).map_err(|e| self.err(e))?;
        let found: Vec<SessionRecord> = stmt
            .query_map([pattern], record)
            .map_err(|e| self.err(e))?
            .collect::<Result<_, _>>()
            .map_err(|e| self.err(e))?;
        match found.len() {
            0 => Err(StoreError::NotFound(id.into())),
            1 => Ok(found
                .into_iter()
                .next()
                .ok_or_else(|| StoreError::NotFound(id.into()))?),
            _ => Err(StoreError::Ambiguous {
                prefix: id.into(),
                matches: found.into_iter().map(|r| r.id).collect(),
            }),
        }
    }

    /// A session's rows as stored (`StreamEvent` JSON), in order.
    pub fn rows(&self, id: &str) -> Result<Vec<StoredRow>, StoreError> {
        let mut stmt = self
            .db
            .conn
            .prepare("SELECT seq, kind, data FROM events WHERE session_id = ?1 ORDER BY seq")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([id], |r| {
                Ok(StoredRow {
                    seq: r.get(0)?,
                    kind: r.get(1)?,
                    data: r.get(2)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// A session's thread: its rows as `StreamEvent`s, which a view applies as it applies a
    /// snapshot. A row this build cannot read (a newer ACP Desk's event) is left out and logged.
    pub fn events(&self, id: &str) -> Result<Vec<StreamEvent>, StoreError> {
        Ok(self
            .rows(id)?
            .into_iter()
            .filter_map(|r| match serde_json::from_str(&r.data) {
                Ok(ev) => Some(ev),
                Err(e) => {
                    tracing::warn!(session = id, seq = r.seq, kind = %r.kind, "a stored event could not be read: {e}");
                    None
                }
            })
            .collect())
    }

    /// Rows whose search text is not indexed yet: the writer indexes when the session is idle,
    /// and a search catches up first.
    pub fn unindexed(&self) -> Result<i64, StoreError> {
        self.db
            .conn
            .query_row("SELECT count(*) FROM events WHERE indexed = 0", [], |r| {
                r.get(0)
            })
            .map_err(|e| self.err(e))
    }

    /// Indexes every row not indexed yet (none on a read-only file). Returns how many.
    pub fn catch_up_index(&self) -> Result<usize, StoreError> {
        if self.read_only() {
            return Ok(0);
        }
        let mut total = 0;
        loop {
            let n = index_pending(&self.db.conn, INDEX_BATCH_ROWS).map_err(|e| self.err(e))?;
            total += n;
            if n < INDEX_BATCH_ROWS {
                return Ok(total);
            }
        }
    }

    /// Rows of every session that hold `text` (see [`crate::search`]), the newest first, at
    /// most `limit`. Indexes what is not indexed yet first.
    pub fn search(&self, text: &str, limit: usize) -> Result<Vec<SearchHit>, StoreError> {
        let Some(q) = search::query(text) else {
            return Ok(Vec::new());
        };
        self.catch_up_index()?;
        let mut sql = String::from("SELECT rowid, body FROM search WHERE ");
        let mut args: Vec<String> = Vec::new();
        let mut conds = Vec::new();
        if let Some(fts) = &q.fts {
            conds.push("search MATCH ?".to_string());
            args.push(fts.clone());
        }
        for like in &q.likes {
            conds.push("body LIKE ? ESCAPE '\\'".to_string());
            args.push(like.clone());
        }
        sql.push_str(&conds.join(" AND "));
        sql.push_str(" ORDER BY rowid DESC LIMIT ?");
        let sql = format!(
            "SELECT e.session_id, e.seq, e.kind, h.body, s.title, s.prompt_title, s.agent, s.folder, \
             s.updated_ms FROM ({sql}) h JOIN events e ON e.id = h.rowid \
             JOIN sessions s ON s.id = e.session_id ORDER BY h.rowid DESC"
        );
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut stmt = self.db.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let mut params: Vec<&dyn rusqlite::ToSql> =
            args.iter().map(|a| a as &dyn rusqlite::ToSql).collect();
        params.push(&limit);
        let hits = stmt
            .query_map(params.as_slice(), |r| {
                let body: String = r.get(3)?;
                let title: Option<String> = r.get(4)?;
                let prompt_title: Option<String> = r.get(5)?;
                Ok(SearchHit {
                    session_id: r.get(0)?,
                    seq: r.get(1)?,
                    kind: r.get(2)?,
                    snippet: search::snippet(&body, &q.words),
                    title: title.or(prompt_title),
                    agent: r.get(6)?,
                    folder: r.get(7)?,
                    updated_ms: r.get(8)?,
                })
            })
            .map_err(|e| self.err(e))?;
        hits.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// Whether another process records session `id` now ([`StoreError::InUse`]): continuing
    /// or deleting it meanwhile would lose rows. The process that records it holds its
    /// [`crate::SessionClaim`]; so does this one for the sessions it records.
    pub fn check_not_in_use(&self, id: &str) -> Result<(), StoreError> {
        crate::SessionClaim::check_free(&self.db.path, id)
    }

    /// Removes a session, its rows, their index entries and its draft. A session being
    /// recorded now (open in another ACP Desk, or in this process) is refused with
    /// [`StoreError::InUse`]: it would get its row back with its next events.
    pub fn delete(&mut self, id: &str) -> Result<(), StoreError> {
        self.writable()?;
        self.check_not_in_use(id)?;
        let path = self.db.path.clone();
        let fail = |e: rusqlite::Error| {
            note_damage(&path, &e);
            StoreError::sqlite(&path, e)
        };
        let tx = self
            .db
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        tx.execute(
            "DELETE FROM search WHERE rowid IN (SELECT id FROM events WHERE session_id = ?1)",
            [id],
        )
        .map_err(fail)?;
        tx.execute("DELETE FROM events WHERE session_id = ?1", [id])
            .map_err(fail)?;
        tx.execute("DELETE FROM drafts WHERE session_id = ?1", [id])
            .map_err(fail)?;
        let n = tx
            .execute("DELETE FROM sessions WHERE id = ?1", [id])
            .map_err(fail)?;
        if n == 0 {
            return Err(StoreError::NotFound(id.into()));
        }
        tx.commit().map_err(fail)
    }

    /// The unsent text of a session's composer.
    pub fn draft(&self, session_id: &str) -> Result<Option<String>, StoreError> {
        self.db
            .conn
            .query_row(
                "SELECT text FROM drafts WHERE session_id = ?1",
                [session_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Keeps (or, when empty, forgets) a session's draft. A front end that types a lot hands
    /// drafts to the [`crate::Recorder`] instead, which never blocks.
    pub fn set_draft(&self, session_id: &str, text: &str) -> Result<(), StoreError> {
        self.writable()?;
        write_draft(&self.db.conn, session_id, text).map_err(|e| self.err(e))
    }
}

pub(crate) fn write_draft(
    conn: &rusqlite::Connection,
    session_id: &str,
    text: &str,
) -> rusqlite::Result<()> {
    if text.is_empty() {
        conn.execute("DELETE FROM drafts WHERE session_id = ?1", [session_id])?;
    } else {
        conn.execute(
            "INSERT INTO drafts (session_id, text, updated_ms) VALUES (?1, ?2, ?3)
             ON CONFLICT (session_id) DO UPDATE SET text = excluded.text, updated_ms = excluded.updated_ms",
            params![session_id, text, now_ms()],
        )?;
    }
    Ok(())
}

/// Indexes up to `max` rows not indexed yet, in one transaction; returns how many it took.
pub(crate) fn index_pending(conn: &rusqlite::Connection, max: usize) -> rusqlite::Result<usize> {
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    let pending: Vec<(i64, String)> = {
        let mut stmt = tx
            .prepare_cached("SELECT id, data FROM events WHERE indexed = 0 ORDER BY id LIMIT ?1")?;
        let rows = stmt.query_map([i64::try_from(max).unwrap_or(i64::MAX)], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        rows.collect::<Result<_, _>>()?
    };
    {
        let mut clear = tx.prepare_cached("DELETE FROM search WHERE rowid = ?1")?;
        let mut insert = tx.prepare_cached("INSERT INTO search (rowid, body) VALUES (?1, ?2)")?;
        let mut done = tx.prepare_cached("UPDATE events SET indexed = 1 WHERE id = ?1")?;
        for (id, data) in &pending {
            clear.execute([id])?;
            let body = serde_json::from_str::<StreamEvent>(data)
                .ok()
                .and_then(|ev| search::body(&ev));
            if let Some(body) = body {
                insert.execute(params![id, body])?;
            }
            done.execute([id])?;
        }
    }
    tx.commit()?;
    Ok(pending.len())
}
