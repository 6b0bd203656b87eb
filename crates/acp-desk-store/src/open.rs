//! Opening the file: what every connection of ours does first, and what becomes of a file that
//! is not as we left it.
//!
//! - Not a database, or damaged where opening reads (the header, the schema), or found damaged
//!   by an earlier run (a `.damaged` marker next to it: then the whole file is checked): the
//!   file is renamed to `history.sqlite3.corrupt-<unix secs>` (with its `-wal` and `-shm`,
//!   which belong to it), never deleted, a fresh one is made, and [`StoreWarning::SetAside`]
//!   says where the old one went.
//! - Written by a newer ACP Desk (`user_version` above ours): opened read-only, never migrated
//!   down, with [`StoreWarning::NewerFormat`].
//! - Held by another program past the busy timeout: [`StoreError::Locked`], naming the file.
//!   Two ACP Desks (the window and the CLI) share the file without that: the journal is WAL,
//!   so readers never wait and writers wait their turn (`OpenOptions::busy_timeout`).
//!
//! Every connection has WAL, `synchronous = NORMAL` (a commit survives the process being
//! killed; only a power cut can lose the last ones) and foreign keys on.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};

use crate::error::{StoreError, StoreWarning};
use crate::schema::{MIGRATIONS, SCHEMA_VERSION};

/// The page size of a new history file, in bytes.
const PAGE_SIZE: i64 = 16_384;

/// The history file's name in the data folder.
pub const FILE_NAME: &str = "history.sqlite3";

/// How a connection is opened.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// How long a write waits for another connection's write to finish before the file counts
    /// as locked. Writes of ours last milliseconds; this covers another ACP Desk's commit.
    pub busy_timeout: Duration,
    /// For tests: the file may not grow past this many pages, which makes a write fail the way a
    /// full disk does (`SQLITE_FULL`). `None`: no limit but the disk's.
    pub max_page_count: Option<i64>,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            busy_timeout: Duration::from_secs(5),
            max_page_count: None,
        }
    }
}

/// One open connection and what opening found.
pub(crate) struct Db {
    pub conn: Connection,
    pub path: PathBuf,
    /// `Some(version)`: a newer ACP Desk's file, open read-only.
    pub newer: Option<u32>,
}

/// `<data dir>/history.sqlite3` (`ACP_DESK_DATA_DIR` moves the data dir).
pub fn default_path() -> PathBuf {
    acp_desk_core::paths::data_dir().join(FILE_NAME)
}

pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Where a run that found the file damaged leaves word for the next open to check it whole.
fn damaged_marker(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".damaged");
    PathBuf::from(name)
}

/// Notes that SQLite found the file damaged while it was in use: the next open checks the
/// whole file and sets it aside if the check fails. Opening again now would not help (other
/// connections, ours or another ACP Desk's, still have it open).
pub(crate) fn note_damage(path: &Path, err: &rusqlite::Error) {
    if err.sqlite_error_code() == Some(ErrorCode::DatabaseCorrupt) {
        let marker = damaged_marker(path);
        if let Err(e) = std::fs::write(&marker, err.to_string()) {
            tracing::warn!(file = %marker.display(), "could not note that the history file is damaged: {e}");
        }
    }
}

/// What went wrong with one attempt.
enum Failed {
    /// The file is not a usable database: set it aside and start afresh.
    Damaged(String),
    Store(StoreError),
}

/// Opens (creating it if needed) and migrates the file at `path`. See the module docs for what
/// happens to a damaged, newer or locked file.
pub(crate) fn open(path: &Path, opts: &OpenOptions) -> Result<(Db, Vec<StoreWarning>), StoreError> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
            path: path.to_owned(),
            reason: format!("its folder cannot be created: {e}"),
        })?;
    }
    let mut warnings = Vec::new();
    let marker = damaged_marker(path);
    let check_whole = marker.exists();
    let db = match attempt(path, opts, check_whole) {
        Ok(db) => db,
        Err(Failed::Store(e)) => return Err(e),
        Err(Failed::Damaged(reason)) => {
            let moved_to = set_aside(path).map_err(|e| StoreError::Open {
                path: path.to_owned(),
                reason: format!("it is damaged ({reason}) and could not be moved aside: {e}"),
            })?;
            tracing::warn!(file = %path.display(), moved_to = %moved_to.display(), "the history file was damaged: {reason}");
            warnings.push(StoreWarning::SetAside {
                path: path.to_owned(),
                moved_to,
                reason,
            });
            attempt(path, opts, false).map_err(|f| match f {
                Failed::Store(e) => e,
                Failed::Damaged(reason) => StoreError::Corrupt {
                    path: path.to_owned(),
                    reason,
                },
            })?
        }
    };
    if check_whole && let Err(e) = std::fs::remove_file(&marker) {
        tracing::debug!(file = %marker.display(), "could not remove the damage marker: {e}");
    }
    if let Some(found) = db.newer {
        warnings.push(StoreWarning::NewerFormat {
            path: path.to_owned(),
            found,
        });
    }
    Ok((db, warnings))
}

fn attempt(path: &Path, opts: &OpenOptions, check_whole: bool) -> Result<Db, Failed> {
    let store_err = |e: rusqlite::Error| match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            Failed::Damaged(e.to_string())
        }
        _ => Failed::Store(StoreError::sqlite(path, e)),
    };
    let open_err = |e: rusqlite::Error| match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            Failed::Damaged(e.to_string())
        }
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            Failed::Store(StoreError::sqlite(path, e))
        }
        _ => Failed::Store(StoreError::Open {
            path: path.to_owned(),
            reason: e.to_string(),
        }),
    };
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut conn = Connection::open_with_flags(path, flags).map_err(open_err)?;
    conn.busy_timeout(opts.busy_timeout).map_err(store_err)?;
    // Reading the header and the schema is where a file that is not a database, or whose first
    // pages are damaged, shows: SQLite opens any file lazily.
    let version = read_version(&conn).map_err(store_err)?;
    if check_whole {
        let verdict: String = conn
            .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
            .map_err(store_err)?;
        if verdict != "ok" {
            return Err(Failed::Damaged(verdict));
        }
    }
    if version > SCHEMA_VERSION {
        return open_read_only(path, opts, version).map_err(store_err);
    }
    if version == 0 {
        // A new file (the setting does nothing to one that has tables): pages of 16 KiB instead
        // of 4 hold a streamed message's row in one page and write a third fewer WAL frames
        // (fewer `pwrite`s, checksums and b-tree splits): the writer's CPU on the flood
        // benchmark fell by about 15% (docs/PERFORMANCE.md). It must come before WAL mode.
        conn.pragma_update(None, "page_size", PAGE_SIZE)
            .map_err(store_err)?;
    }
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "wal", |r| r.get(0))
        .map_err(store_err)?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(file = %path.display(), "the history file is in journal mode {mode}, not WAL");
    }
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(store_err)?;
    conn.pragma_update(None, "foreign_keys", true)
        .map_err(store_err)?;
    // Migrating takes the write lock even when there is nothing to do: that is the check that
    // no other program holds the file.
    let version = migrate(&mut conn).map_err(store_err)?;
    if version > SCHEMA_VERSION {
        // A newer ACP Desk migrated it between our read and our lock.
        drop(conn);
        return open_read_only(path, opts, version).map_err(store_err);
    }
    if let Some(pages) = opts.max_page_count {
        conn.pragma_update(None, "max_page_count", pages)
            .map_err(store_err)?;
    }
    Ok(Db {
        conn,
        path: path.to_owned(),
        newer: None,
    })
}

fn read_version(conn: &Connection) -> rusqlite::Result<u32> {
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })?;
    Ok(u32::try_from(version).unwrap_or(u32::MAX))
}

fn open_read_only(path: &Path, opts: &OpenOptions, version: u32) -> rusqlite::Result<Db> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(opts.busy_timeout)?;
    Ok(Db {
        conn,
        path: path.to_owned(),
        newer: Some(version),
    })
}

/// Runs the steps the file lacks, in one transaction with the version bump. Returns the
/// version the file has now (greater than ours: a newer ACP Desk's file, left as it was).
fn migrate(conn: &mut Connection) -> rusqlite::Result<u32> {
    // Read without a lock first: a file already at this version (nearly always) then opens
    // while another program holds the write lock, as WAL lets readers.
    let found: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if u32::try_from(found).unwrap_or(u32::MAX) >= SCHEMA_VERSION {
        return Ok(u32::try_from(found).unwrap_or(u32::MAX));
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let found: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    let found = u32::try_from(found).unwrap_or(u32::MAX);
    if found >= SCHEMA_VERSION {
        tx.commit()?;
        return Ok(found);
    }
    for step in &MIGRATIONS[found as usize..] {
        tx.execute_batch(step)?;
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()?;
    Ok(SCHEMA_VERSION)
}

/// Renames a damaged file to `<path>.corrupt-<unix secs>` (`-1`, `-2`, ... appended when taken),
/// with its `-wal` and `-shm` beside it under the new name: a journal left next to a fresh file
/// could be replayed into it. Returns where the file went.
fn set_aside(path: &Path) -> std::io::Result<PathBuf> {
    let target = acp_desk_core::atomic_file::set_aside_as(path, "corrupt")?;
    for suffix in ["-wal", "-shm"] {
        let mut from = path.as_os_str().to_owned();
        from.push(suffix);
        let from = PathBuf::from(from);
        if from.symlink_metadata().is_ok() {
            let mut to = target.as_os_str().to_owned();
            to.push(suffix);
            std::fs::rename(&from, PathBuf::from(to))?;
        }
    }
    Ok(target)
}
