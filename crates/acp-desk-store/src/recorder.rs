//! The recorder: sessions' events written to the file by a thread of its own, off the event
//! path.
//!
//! - The calls ([`Recorder::events`] and the rest) never block on SQLite and never wait for the
//!   writer: a batch is merged, on the caller's thread, into the session's pending frame (the
//!   way the hub merges live frames for views, `Compactor::for_frames`), which the writer takes
//!   whole at its next turn. The queue thus holds one frame per session (with its begin and
//!   end), each bounded by what its events merge to, never by their number: it cannot fill, so
//!   nothing is ever dropped for want of room and the caller never waits. Merging costs less
//!   than a copy of each event would (a text chunk is appended to the previous one), and the
//!   writer applies a handful of merged entries instead of every chunk.
//! - The writer merges frames into rows (`rows.rs`) and commits what changed at least every
//!   [`COMMIT_INTERVAL`] while events come, sooner once [`COMMIT_ROWS`] rows changed (and at
//!   [`Recorder::flush`], at a session's end and at [`Recorder::finish`]): a crash, even
//!   `kill -9`, loses at most that much. It is woken when it has nothing to commit, when
//!   [`WAKE_ENTRIES`] entries wait and at a session's end, not once per batch.
//! - A failed commit (a full disk, the file busy past the timeout) loses nothing stored: the
//!   transaction is rolled back, the rows stay in memory and the commit is tried again every
//!   [`RETRY_INTERVAL`], with one [`StoreWarning::WriteFailed`] (and
//!   [`StoreWarning::WriteRecovered`] once it works). Any other failure turns history off for
//!   the run ([`StoreWarning::Stopped`]); from then on events are counted, not kept, and
//!   [`Recorder::finish`] reports them ([`StoreWarning::Lost`]): never lost silently.
//! - The full-text index is brought up to date when no event came for [`INDEX_IDLE`], so
//!   indexing never competes with a stream; what is left at the end is indexed by the next
//!   writer or search (`Store::catch_up_index`).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use acp_desk_core::StreamEvent;
use acp_desk_core::compact::Compactor;
use acp_desk_core::events::SessionState;
use acp_desk_core::schema::v1 as acp;
use rusqlite::{ErrorCode, OptionalExtension, TransactionBehavior, params};

use crate::error::{StoreError, StoreWarning};
use crate::launch::StoredLaunch;
use crate::open::{self, Db, OpenOptions, note_damage, now_ms};
use crate::rows::Rows;
use crate::store::{index_pending, write_draft};

/// The longest a change waits in memory before it is committed while events come.
pub const COMMIT_INTERVAL: Duration = Duration::from_millis(250);
/// How long after a failed commit the next try comes.
pub const RETRY_INTERVAL: Duration = Duration::from_secs(1);
/// Merged entries waiting that wake the writer before its deadline.
pub const WAKE_ENTRIES: usize = 1_024;
/// Rows changed that make a commit at once, without waiting for the interval: a flood's rows
/// are written while it streams, not all at its end.
pub const COMMIT_ROWS: usize = 512;
/// No event for this long: the writer indexes what it wrote.
pub const INDEX_IDLE: Duration = Duration::from_millis(300);
/// The WAL's size, in pages, past which a commit checkpoints after all: a writer that is never
/// idle (a stream of streams) must not grow it without bound. SQLite's own default is 1,000.
const WAL_CHECKPOINT_PAGES: i64 = 16_384;
/// Rows indexed per transaction while idle (an event arriving waits at most for one batch).
const INDEX_BATCH_ROWS: usize = 128;
/// Characters of the first prompt kept as the session's title.
const PROMPT_TITLE_CHARS: usize = 100;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Plain data, consistent at every unlock: a panic elsewhere does not make it unusable.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a front end knows of a session when it opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionMeta {
    /// The agent's launch name.
    pub agent: String,
    pub launch: StoredLaunch,
    /// The session's folder.
    pub folder: String,
}

/// Called with each warning as it happens (the CLI prints it); without one, warnings are
/// logged.
pub type WarningSink = Arc<dyn Fn(&StoreWarning) + Send + Sync>;

/// How a [`Recorder`] runs. `Default` is what front ends use; tests shorten or lengthen it.
#[derive(Clone)]
pub struct RecorderOptions {
    pub open: OpenOptions,
    pub commit_interval: Duration,
    pub retry_interval: Duration,
    pub index_idle: Duration,
    pub on_warning: Option<WarningSink>,
}

impl Default for RecorderOptions {
    fn default() -> Self {
        RecorderOptions {
            open: OpenOptions::default(),
            commit_interval: COMMIT_INTERVAL,
            retry_interval: RETRY_INTERVAL,
            index_idle: INDEX_IDLE,
            on_warning: None,
        }
    }
}

/// A session's batches since the writer last came, merged.
struct Frame {
    merged: Compactor,
    /// The events merged into it (what would be lost if it is never written).
    events: u64,
}

enum Msg {
    Begin(String, SessionMeta),
    Frame(String, Frame),
    End(String),
    Draft(String, String),
}

#[derive(Default)]
struct Queue {
    msgs: VecDeque<Msg>,
    /// Each session's frame in `msgs`, by index, until the writer takes the queue.
    open: HashMap<String, usize>,
    /// Merged entries in the frames of `msgs`.
    entries: usize,
    stopping: bool,
    /// History is off: events are counted in `lost`, not kept.
    off: bool,
    lost: BTreeMap<String, u64>,
    flush_asked: u64,
    flush_done: u64,
    /// The writer waits with nothing to commit: the next message must wake it (to start the
    /// commit clock). Otherwise it wakes at its deadline, or when the queue is half full, so a
    /// stream does not wake it once per batch.
    writer_idle: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    /// The writer waits here for work.
    work: Condvar,
    /// [`Recorder::flush`] waits here.
    flushed: Condvar,
    path: PathBuf,
    on_warning: Option<WarningSink>,
    warnings: Mutex<Vec<StoreWarning>>,
}

impl Shared {
    fn warn(&self, w: StoreWarning) {
        match &self.on_warning {
            Some(sink) => sink(&w),
            None => tracing::warn!("{w}"),
        }
        lock(&self.warnings).push(w);
    }
}

/// Records sessions into the history file. Cheap to call from the event path; see the module
/// docs for what it promises.
pub struct Recorder {
    shared: Arc<Shared>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl Recorder {
    /// Opens the file (see [`crate::Store::open`] for what becomes of a damaged one) and starts
    /// the writer. A newer ACP Desk's file is not written: [`StoreError::ReadOnly`]. Any error
    /// means history is off for this run; the caller says so and goes on.
    pub fn start(
        path: impl Into<PathBuf>,
        opts: RecorderOptions,
    ) -> Result<(Recorder, Vec<StoreWarning>), StoreError> {
        let path = path.into();
        let (db, warnings) = open::open(&path, &opts.open)?;
        if let Some(found) = db.newer {
            return Err(StoreError::ReadOnly { path, found });
        }
        // Checkpoints (copying the WAL into the file, with the only fsyncs WAL mode makes) are
        // the writer's slowest work, seconds on a busy disk: they run when it is idle, never
        // at a commit of a stream and never when a front end quits (the next connection, or
        // the next idle writer, takes the WAL over).
        let no_checkpoints = db
            .conn
            .pragma_update(None, "wal_autocheckpoint", WAL_CHECKPOINT_PAGES)
            .and_then(|()| {
                db.conn.set_db_config(
                    rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                    true,
                )
            });
        if let Err(e) = no_checkpoints {
            tracing::debug!(file = %path.display(), "checkpoints stay automatic: {e}");
        }
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            work: Condvar::new(),
            flushed: Condvar::new(),
            path: path.clone(),
            on_warning: opts.on_warning.clone(),
            warnings: Mutex::new(Vec::new()),
        });
        let writer = Writer {
            db,
            shared: shared.clone(),
            sessions: HashMap::new(),
            drafts: BTreeMap::new(),
            opts: opts.clone(),
            dirty_since: None,
            failing: false,
            index_pending: true,
            last_msg: Instant::now(),
        };
        let thread_shared = shared.clone();
        let handle = std::thread::Builder::new()
            .name("acp-desk-history".into())
            .spawn(move || {
                if catch_unwind(AssertUnwindSafe(|| writer.run())).is_err() {
                    tracing::error!("the history writer panicked");
                    go_off(
                        &thread_shared,
                        "the history writer failed (a bug in ACP Desk)",
                    );
                }
            })
            .map_err(StoreError::Spawn)?;
        Ok((
            Recorder {
                shared,
                writer: Mutex::new(Some(handle)),
            },
            warnings,
        ))
    }

    /// [`Recorder::start`] on [`crate::default_path`].
    pub fn start_default(
        opts: RecorderOptions,
    ) -> Result<(Recorder, Vec<StoreWarning>), StoreError> {
        Recorder::start(open::default_path(), opts)
    }

    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    fn push(&self, q: &mut Queue, msg: Msg) {
        // A session's end is committed at once.
        let urgent = matches!(msg, Msg::End(_));
        q.msgs.push_back(msg);
        if urgent || q.writer_idle {
            self.shared.work.notify_one();
        }
    }

    /// A session starts (or, with an id already stored, continues: its rows go after the
    /// stored ones). Its events come with [`Recorder::events`] under the same id.
    pub fn begin(&self, id: &str, meta: SessionMeta) {
        let mut q = lock(&self.shared.queue);
        if q.off {
            return;
        }
        // Events from now on go after the begin.
        q.open.remove(id);
        self.push(&mut q, Msg::Begin(id.to_owned(), meta));
    }

    /// A batch of a session's events, in the order the session emitted them. Never blocks:
    /// merged into the session's pending frame (see the module docs).
    pub fn events(&self, id: &str, events: &[StreamEvent]) {
        if events.is_empty() {
            return;
        }
        let mut q = lock(&self.shared.queue);
        if q.off {
            *q.lost.entry(id.to_owned()).or_default() += events.len() as u64;
            return;
        }
        let at = match q.open.get(id) {
            Some(&at) => at,
            None => {
                q.msgs.push_back(Msg::Frame(
                    id.to_owned(),
                    Frame {
                        merged: Compactor::for_frames(),
                        events: 0,
                    },
                ));
                let at = q.msgs.len() - 1;
                q.open.insert(id.to_owned(), at);
                at
            }
        };
        let mut grew = 0;
        if let Some(Msg::Frame(_, frame)) = q.msgs.get_mut(at) {
            let before = frame.merged.len();
            for ev in events {
                frame.merged.apply(ev);
            }
            frame.events += events.len() as u64;
            grew = frame.merged.len().saturating_sub(before);
        }
        q.entries += grew;
        if q.writer_idle || q.entries >= WAKE_ENTRIES {
            self.shared.work.notify_one();
        }
    }

    /// The session ended: nothing more of it comes. Its rows are committed at once.
    pub fn end(&self, id: &str) {
        let mut q = lock(&self.shared.queue);
        if q.off {
            return;
        }
        q.open.remove(id);
        self.push(&mut q, Msg::End(id.to_owned()));
    }

    /// Keeps a session's draft (empty: forgets it), written with the next commit.
    pub fn set_draft(&self, id: &str, text: &str) {
        let mut q = lock(&self.shared.queue);
        if q.off {
            return;
        }
        self.push(&mut q, Msg::Draft(id.to_owned(), text.to_owned()));
    }

    /// Waits until everything handed over so far is committed, or its commit failed (and was
    /// reported). Blocking: for tests and for a front end about to exit.
    pub fn flush(&self) {
        let mut q = lock(&self.shared.queue);
        q.flush_asked += 1;
        let ticket = q.flush_asked;
        self.shared.work.notify_one();
        while q.flush_done < ticket && !q.off {
            q = self
                .shared
                .flushed
                .wait(q)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Commits what is left, stops the writer and returns every warning not yet taken, with
    /// one [`StoreWarning::Lost`] per session whose events were not all stored. Later calls
    /// record nothing.
    pub fn finish(&self) -> Vec<StoreWarning> {
        lock(&self.shared.queue).stopping = true;
        self.shared.work.notify_one();
        let writer = lock(&self.writer).take();
        if let Some(w) = writer
            && w.join().is_err()
        {
            tracing::error!("the history writer could not be joined");
        }
        let lost = {
            let mut q = lock(&self.shared.queue);
            q.off = true;
            std::mem::take(&mut q.lost)
        };
        for (session, events) in lost {
            self.shared.warn(StoreWarning::Lost {
                path: self.shared.path.clone(),
                session,
                events,
            });
        }
        self.take_warnings()
    }

    /// The warnings since the last call (each was also given to the warning sink, or logged).
    pub fn take_warnings(&self) -> Vec<StoreWarning> {
        std::mem::take(&mut *lock(&self.shared.warnings))
    }

    /// Merged entries waiting for the writer (for tests: what waits stays bounded).
    pub fn waiting(&self) -> usize {
        lock(&self.shared.queue).entries
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if lock(&self.writer).is_some() {
            self.finish();
        }
    }
}

/// History is off for the rest of the run: everything queued is counted as lost.
fn go_off(shared: &Shared, reason: &str) {
    {
        let mut q = lock(&shared.queue);
        if q.off {
            return;
        }
        q.off = true;
        let msgs = std::mem::take(&mut q.msgs);
        for msg in msgs {
            if let Msg::Frame(id, frame) = msg {
                *q.lost.entry(id).or_default() += frame.events;
            }
        }
        q.open.clear();
        q.entries = 0;
    }
    shared.flushed.notify_all();
    shared.warn(StoreWarning::Stopped {
        path: shared.path.clone(),
        reason: reason.to_owned(),
    });
}

/// A session the writer is recording.
struct Live {
    meta: SessionMeta,
    rows: Rows,
    created_ms: i64,
    updated_ms: i64,
    status: String,
    status_detail: Option<String>,
    title: Option<String>,
    prompt_title: Option<String>,
    acp_session_id: Option<String>,
    agent_identity: Option<String>,
    /// The `sessions` row needs writing.
    meta_dirty: bool,
    ended: bool,
    /// Events taken in since the last commit (reported if they never get written).
    uncommitted: u64,
}

impl Live {
    fn note(&mut self, ev: &StreamEvent) {
        match ev {
            StreamEvent::SessionStatus {
                status,
                detail,
                agent,
                ..
            } => {
                self.status = state_name(*status).to_owned();
                self.status_detail.clone_from(detail);
                if let Some(agent) = agent {
                    self.acp_session_id.clone_from(&agent.acp_session_id);
                    self.agent_identity = serde_json::to_string(agent).ok();
                }
            }
            StreamEvent::SessionInfo {
                title: Some(title), ..
            } => self.title.clone_from(title),
            StreamEvent::TurnStart { prompt, .. } if self.prompt_title.is_none() => {
                self.prompt_title = prompt_title(prompt);
            }
            _ => {}
        }
    }
}

fn state_name(s: SessionState) -> &'static str {
    match s {
        SessionState::Starting => "starting",
        SessionState::Ready => "ready",
        SessionState::Prompting => "prompting",
        SessionState::Dead => "dead",
    }
}

/// The first non-empty line of the prompt's first text, shortened.
fn prompt_title(prompt: &[acp::ContentBlock]) -> Option<String> {
    let text = prompt.iter().find_map(|b| match b {
        acp::ContentBlock::Text(t) => Some(t.text.as_str()),
        _ => None,
    })?;
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let mut title: String = line.chars().take(PROMPT_TITLE_CHARS).collect();
    if title.len() < line.len() {
        title.push('…');
    }
    Some(title)
}

struct Writer {
    db: Db,
    shared: Arc<Shared>,
    sessions: HashMap<String, Live>,
    drafts: BTreeMap<String, String>,
    opts: RecorderOptions,
    /// When the oldest uncommitted change came.
    dirty_since: Option<Instant>,
    /// The last commit failed (a warning was given): retry at the retry interval.
    failing: bool,
    /// Rows may be waiting for the index.
    index_pending: bool,
    last_msg: Instant,
}

/// What one wait for work brought.
struct Taken {
    msgs: VecDeque<Msg>,
    stopping: bool,
    flush_ticket: u64,
}

impl Writer {
    fn run(mut self) {
        loop {
            let taken = self.wait();
            let had_msgs = !taken.msgs.is_empty();
            for msg in taken.msgs {
                self.take(msg);
            }
            if had_msgs {
                self.last_msg = Instant::now();
            }
            let flushing = taken.flush_ticket > lock(&self.shared.queue).flush_done;
            let ended = self.sessions.values().any(|l| l.ended);
            let many = !self.failing
                && self
                    .sessions
                    .values()
                    .map(|l| l.rows.changes())
                    .sum::<usize>()
                    >= COMMIT_ROWS;
            let due = many
                || self
                    .dirty_since
                    .is_some_and(|t| t.elapsed() >= self.interval());
            if self.dirty_since.is_some() && (due || ended || flushing || taken.stopping) {
                if let Err(fatal) = self.commit() {
                    go_off(&self.shared, &fatal);
                    self.report_uncommitted();
                    return;
                }
            } else if self.dirty_since.is_none()
                && self.index_pending
                && self.last_msg.elapsed() >= self.opts.index_idle
                && !taken.stopping
            {
                self.index_some();
            }
            if flushing {
                lock(&self.shared.queue).flush_done = taken.flush_ticket;
                self.shared.flushed.notify_all();
            }
            if taken.stopping {
                if self.dirty_since.is_some() {
                    // The last commit failed (a full disk): what it held is not stored.
                    self.report_uncommitted();
                }
                return;
            }
        }
    }

    fn interval(&self) -> Duration {
        if self.failing {
            self.opts.retry_interval
        } else {
            self.opts.commit_interval
        }
    }

    /// Waits for messages, a flush, the stop, or the next commit or index deadline.
    fn wait(&self) -> Taken {
        let mut q = lock(&self.shared.queue);
        q.writer_idle = self.dirty_since.is_none();
        loop {
            let flush = q.flush_asked > q.flush_done;
            if q.stopping || flush || q.msgs.iter().any(|m| !matches!(m, Msg::Frame(..))) {
                break;
            }
            // Frames alone wait for the deadline (or for enough of them, or a wake from
            // `events` when nothing was dirty).
            if !q.msgs.is_empty() && (self.dirty_since.is_none() || q.entries >= WAKE_ENTRIES) {
                break;
            }
            let deadline = match self.dirty_since {
                Some(t) => Some(t + self.interval()),
                None if self.index_pending => Some(self.last_msg + self.opts.index_idle),
                None => None,
            };
            match deadline {
                None => {
                    q = self
                        .shared
                        .work
                        .wait(q)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        break;
                    }
                    q = self
                        .shared
                        .work
                        .wait_timeout(q, d - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
            }
        }
        q.entries = 0;
        q.open.clear();
        q.writer_idle = false;
        Taken {
            msgs: std::mem::take(&mut q.msgs),
            stopping: q.stopping,
            flush_ticket: q.flush_asked,
        }
    }

    fn mark_dirty(&mut self) {
        self.dirty_since.get_or_insert_with(Instant::now);
    }

    fn take(&mut self, msg: Msg) {
        match msg {
            Msg::Begin(id, meta) => {
                let live = self.resume_or_new(&id, meta);
                self.sessions.insert(id, live);
                self.mark_dirty();
            }
            Msg::Frame(id, frame) => {
                let events = frame.merged.into_snapshot();
                let Writer { db, sessions, .. } = self;
                let Some(live) = sessions.get_mut(&id) else {
                    tracing::warn!(session = %id, "events of a session the history was not told of; not stored");
                    return;
                };
                let conn = &db.conn;
                let mut load = |seq: i64| read_row(conn, &id, seq);
                for ev in events {
                    live.note(&ev);
                    live.rows.apply(ev, &mut load);
                }
                live.uncommitted += frame.events;
                live.updated_ms = now_ms();
                live.meta_dirty = true;
                self.mark_dirty();
            }
            Msg::End(id) => {
                if let Some(live) = self.sessions.get_mut(&id) {
                    live.ended = true;
                    live.meta_dirty = true;
                    self.mark_dirty();
                }
            }
            Msg::Draft(id, text) => {
                self.drafts.insert(id, text);
                self.mark_dirty();
            }
        }
    }

    /// A new session, or one already stored that continues (its rows go after the stored
    /// ones, its title and creation time stay).
    fn resume_or_new(&self, id: &str, meta: SessionMeta) -> Live {
        let now = now_ms();
        let mut live = Live {
            meta,
            rows: Rows::default(),
            created_ms: now,
            updated_ms: now,
            status: "starting".into(),
            status_detail: None,
            title: None,
            prompt_title: None,
            acp_session_id: None,
            agent_identity: None,
            meta_dirty: true,
            ended: false,
            uncommitted: 0,
        };
        let stored = self
            .db
            .conn
            .query_row(
                "SELECT created_ms, title, prompt_title,
                    (SELECT coalesce(max(seq) + 1, 0) FROM events WHERE session_id = ?1)
                 FROM sessions WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional();
        match stored {
            Ok(Some((created, title, prompt_title, next_seq))) => {
                live.created_ms = created;
                live.title = title;
                live.prompt_title = prompt_title;
                live.rows = Rows::starting_at(next_seq);
            }
            Ok(None) => {}
            Err(e) => {
                // The commit will meet the same problem and report it.
                tracing::debug!(session = id, "could not look up a stored session: {e}");
            }
        }
        live
    }

    /// Writes every change in one transaction. `Err` (with the reason) when history must go
    /// off; a failure that may pass (a full disk, a busy file) is reported once and retried.
    fn commit(&mut self) -> Result<(), String> {
        match write_changes(&self.db.conn, &self.sessions, &self.drafts) {
            Ok(()) => {
                if self.failing {
                    self.failing = false;
                    self.shared.warn(StoreWarning::WriteRecovered {
                        path: self.db.path.clone(),
                    });
                }
                self.sessions.retain(|_, live| {
                    live.rows.committed();
                    live.meta_dirty = false;
                    live.uncommitted = 0;
                    !live.ended
                });
                self.drafts.clear();
                self.dirty_since = None;
                self.index_pending = true;
                Ok(())
            }
            Err(e) => {
                note_damage(&self.db.path, &e);
                let code = e.sqlite_error_code();
                let passing = matches!(
                    code,
                    Some(
                        ErrorCode::DiskFull
                            | ErrorCode::DatabaseBusy
                            | ErrorCode::DatabaseLocked
                            | ErrorCode::SystemIoFailure
                    )
                );
                if !passing {
                    return Err(format!("could not write to the history file: {e}"));
                }
                if !self.failing {
                    self.failing = true;
                    self.shared.warn(StoreWarning::WriteFailed {
                        path: self.db.path.clone(),
                        reason: e.to_string(),
                        disk_full: code == Some(ErrorCode::DiskFull),
                    });
                }
                // Try again one retry interval from now.
                self.dirty_since = Some(Instant::now());
                Ok(())
            }
        }
    }

    fn index_some(&mut self) {
        match index_pending(&self.db.conn, INDEX_BATCH_ROWS) {
            Ok(n) if n == INDEX_BATCH_ROWS => {}
            Ok(_) => {
                self.index_pending = false;
                // Idle and indexed: fold the WAL into the file now (see `start`).
                if let Err(e) = self
                    .db
                    .conn
                    .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
                {
                    tracing::debug!(file = %self.db.path.display(), "checkpoint failed: {e}");
                }
            }
            Err(e) => {
                note_damage(&self.db.path, &e);
                // The rows stay marked; the next writer or search indexes them.
                tracing::debug!(file = %self.db.path.display(), "indexing the history failed: {e}");
                self.index_pending = false;
            }
        }
    }

    /// Counts the uncommitted events of every session as lost.
    fn report_uncommitted(&mut self) {
        let mut q = lock(&self.shared.queue);
        for (id, live) in &self.sessions {
            if live.uncommitted > 0 {
                *q.lost.entry(id.clone()).or_default() += live.uncommitted;
            }
        }
    }
}

fn read_row(conn: &rusqlite::Connection, session: &str, seq: i64) -> Option<StreamEvent> {
    let data: String = conn
        .query_row(
            "SELECT data FROM events WHERE session_id = ?1 AND seq = ?2",
            params![session, seq],
            |r| r.get(0),
        )
        .ok()?;
    serde_json::from_str(&data).ok()
}

fn write_changes(
    conn: &rusqlite::Connection,
    sessions: &HashMap<String, Live>,
    drafts: &BTreeMap<String, String>,
) -> rusqlite::Result<()> {
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    {
        let mut session_row = tx.prepare_cached(
            "INSERT INTO sessions (id, agent, launch, folder, title, prompt_title, created_ms,
                 updated_ms, status, status_detail, acp_session_id, agent_identity)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
             ON CONFLICT (id) DO UPDATE SET agent = excluded.agent, launch = excluded.launch,
                 folder = excluded.folder, title = excluded.title,
                 prompt_title = excluded.prompt_title, updated_ms = excluded.updated_ms,
                 status = excluded.status, status_detail = excluded.status_detail,
                 acp_session_id = excluded.acp_session_id,
                 agent_identity = excluded.agent_identity",
        )?;
        let mut upsert = tx.prepare_cached(
            "INSERT INTO events (session_id, seq, kind, data, indexed) VALUES (?1, ?2, ?3, ?4, 0)
             ON CONFLICT (session_id, seq) DO UPDATE SET kind = excluded.kind,
                 data = excluded.data, indexed = 0",
        )?;
        let mut unindex = tx.prepare_cached(
            "DELETE FROM search WHERE rowid IN
                 (SELECT id FROM events WHERE session_id = ?1 AND seq = ?2)",
        )?;
        let mut remove =
            tx.prepare_cached("DELETE FROM events WHERE session_id = ?1 AND seq = ?2")?;
        for (id, live) in sessions {
            if live.meta_dirty {
                let launch = serde_json::to_string(&live.meta.launch)
                    .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
                session_row.execute(params![
                    id,
                    live.meta.agent,
                    launch,
                    live.meta.folder,
                    live.title,
                    live.prompt_title,
                    live.created_ms,
                    live.updated_ms,
                    live.status,
                    live.status_detail,
                    live.acp_session_id,
                    live.agent_identity,
                ])?;
            }
            for seq in live.rows.removed() {
                unindex.execute(params![id, seq])?;
                remove.execute(params![id, seq])?;
            }
            for (seq, ev) in live.rows.changed() {
                let data = serde_json::to_string(&*ev)
                    .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
                upsert.execute(params![id, seq, ev.kind(), data])?;
            }
        }
    }
    for (id, text) in drafts {
        write_draft(&tx, id, text)?;
    }
    tx.commit()
}
