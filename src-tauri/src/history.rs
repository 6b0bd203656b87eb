//! The window's history: the app layer's [`HistoryRecorder`] registered on the window's
//! registry (every session the window runs is recorded), and the reads a person asks for
//! (list, search, a stored session's events, delete, export) through one [`Store`]
//! connection. Every call here blocks on SQLite: commands run them on the blocking pool.
//!
//! History that is off (the file locked by another program, a newer ACP Desk's file, which is
//! only read, a damaged file moved aside) never stops the app: what happened, with the file
//! named, is kept as a notice the window shows (`history_status`, and the `history-notice`
//! event for what happens later, like a full disk).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use acp_desk_app::{HistoryRecorder, Registry};
use acp_desk_core::StreamEvent;
use acp_desk_core::events::AgentIdentity;
use acp_desk_store::{
    RecorderOptions, SearchHit, SessionRecord, Store, StoreError, StoreWarning, export,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ipc::IpcError;

/// Hits a search returns at most (the newest first).
pub const SEARCH_LIMIT: usize = 200;

/// A stored session as the History view lists it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistorySession {
    /// ACP Desk's id for the session (what `history-events`, delete and export take).
    pub id: String,
    /// The agent's launch name (`demo`, `claude`, a settings name).
    pub agent: String,
    pub folder: String,
    /// The agent's title, else the first prompt's first line.
    pub title: Option<String>,
    /// Milliseconds since 1970.
    pub created_ms: i64,
    pub updated_ms: i64,
    /// The last `session-status` (`ready`, `prompting`, `dead`, ...).
    pub status: String,
    pub status_detail: Option<String>,
    /// The agent as it described itself, with what it advertised (load, resume, embedded
    /// context); `None` when it never answered `initialize`.
    pub agent_identity: Option<AgentIdentity>,
    /// Stored rows (merged events).
    pub rows: i64,
    /// Being recorded right now by this window (it is open in the sidebar).
    pub open: bool,
}

impl HistorySession {
    fn from_record(r: SessionRecord, open: bool) -> Self {
        let title = r.shown_title().map(str::to_owned);
        HistorySession {
            id: r.id,
            agent: r.agent,
            folder: r.folder,
            title,
            created_ms: r.created_ms,
            updated_ms: r.updated_ms,
            status: r.status,
            status_detail: r.status_detail,
            agent_identity: r.agent_identity,
            rows: r.rows,
            open,
        }
    }
}

/// One piece of a hit's snippet: `hit` pieces are the matched words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnippetPart {
    pub text: String,
    pub hit: bool,
}

/// A search hit: a stored row of a session, with the text around the match.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryHit {
    pub session_id: String,
    /// The row's place in the session: `HistoryEvents::seqs` holds it, so the view can scroll
    /// to the entry this row made.
    pub seq: i64,
    /// The row's event kind (`text-delta`, `turn-start`, `tool-call`, ...).
    pub kind: String,
    /// The snippet, split at the matches (on one line; `…` where it was cut).
    pub snippet: Vec<SnippetPart>,
    pub title: Option<String>,
    pub agent: String,
    pub folder: String,
    pub updated_ms: i64,
}

impl From<SearchHit> for HistoryHit {
    fn from(h: SearchHit) -> Self {
        let text = &h.snippet.text;
        let mut parts = Vec::new();
        let mut at = 0;
        for &(start, end) in &h.snippet.marks {
            // Marks are byte ranges of `text` on character boundaries; one that is not (a
            // store bug) is shown unmarked rather than cut mid-character.
            let (Some(before), Some(word)) = (text.get(at..start), text.get(start..end)) else {
                continue;
            };
            if !before.is_empty() {
                parts.push(SnippetPart {
                    text: before.to_owned(),
                    hit: false,
                });
            }
            parts.push(SnippetPart {
                text: word.to_owned(),
                hit: true,
            });
            at = end;
        }
        if let Some(rest) = text.get(at..)
            && !rest.is_empty()
        {
            parts.push(SnippetPart {
                text: rest.to_owned(),
                hit: false,
            });
        }
        HistoryHit {
            session_id: h.session_id,
            seq: h.seq,
            kind: h.kind,
            snippet: parts,
            title: h.title,
            agent: h.agent,
            folder: h.folder,
            updated_ms: h.updated_ms,
        }
    }
}

/// A stored session's transcript: its rows as StreamEvents (what the session store applies as
/// a snapshot), with each one's row number.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEvents {
    pub session: HistorySession,
    /// `seqs[i]` is the row `events[i]` was stored as.
    pub seqs: Vec<i64>,
    pub events: Vec<StreamEvent>,
    /// Rows this build could not read (a newer ACP Desk's events), left out.
    pub unreadable: u32,
}

/// A session the agent itself keeps (`session/list`), for "Show <agent>'s own sessions here".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentSession {
    /// The agent's id for it (what `history_import` takes).
    pub acp_session_id: String,
    pub title: Option<String>,
    /// When the agent last changed it (ISO 8601, as the agent says it).
    pub updated_at: Option<String>,
}

/// How a session is exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ExportFormat {
    /// Prompts, answers, tool calls with their diffs and outputs.
    Markdown,
    /// The stored StreamEvents, one JSON object a line.
    Jsonl,
}

impl ExportFormat {
    fn extension(self) -> &'static str {
        match self {
            ExportFormat::Markdown => "md",
            ExportFormat::Jsonl => "jsonl",
        }
    }
}

/// Something about the history the user must hear (shown as a banner).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryNotice {
    /// `true`: history is off for this run (nothing new is recorded).
    pub off: bool,
    /// What happened, naming the file, and what to do.
    pub message: String,
}

/// Whether the window's sessions are recorded, and what the user must hear about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryStatus {
    /// This window's sessions are being recorded.
    pub recording: bool,
    /// The file is a newer ACP Desk's: it is read, never written.
    pub read_only: bool,
    /// The history file.
    pub file: String,
    /// Every notice so far, oldest first.
    pub notices: Vec<HistoryNotice>,
}

type NoticeSink = Box<dyn Fn(&HistoryNotice) + Send + Sync>;

#[derive(Default)]
struct Notices {
    list: Mutex<Vec<HistoryNotice>>,
    /// Tells the window (set once the app runs; until then notices wait in `list`).
    sink: OnceLock<NoticeSink>,
}

impl Notices {
    fn push(&self, n: HistoryNotice) {
        tracing::warn!("{}", n.message);
        lock(&self.list).push(n.clone());
        if let Some(sink) = self.sink.get() {
            sink(&n);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether a warning means nothing new is recorded from now on.
fn turns_off(w: &StoreWarning) -> bool {
    matches!(
        w,
        StoreWarning::NewerFormat { .. } | StoreWarning::Stopped { .. }
    )
}

/// The window's history: its recorder (when history is on) and a reading connection.
pub struct History {
    file: PathBuf,
    recorder: Option<Arc<HistoryRecorder>>,
    /// Opened on first use (a file locked at start may be free later), then kept.
    store: Mutex<Option<Store>>,
    notices: Arc<Notices>,
}

impl History {
    /// Starts recording `registry`'s sessions into the default history file. Never fails: a
    /// history that cannot be recorded is a notice, and the app goes on without it.
    pub fn start(registry: &Registry) -> History {
        History::start_at(registry, acp_desk_store::default_path())
    }

    /// [`History::start`] on the file at `file` (tests).
    pub fn start_at(registry: &Registry, file: PathBuf) -> History {
        let notices = Arc::new(Notices::default());
        let sink = notices.clone();
        let opts = RecorderOptions {
            on_warning: Some(Arc::new(move |w: &StoreWarning| {
                sink.push(HistoryNotice {
                    off: turns_off(w),
                    message: w.to_string(),
                })
            })),
            ..RecorderOptions::default()
        };
        let recorder = match HistoryRecorder::start(&file, opts) {
            Ok((r, warnings)) => {
                for w in &warnings {
                    notices.push(HistoryNotice {
                        off: turns_off(w),
                        message: w.to_string(),
                    });
                }
                let r = Arc::new(r);
                registry.add_observer(r.clone());
                Some(r)
            }
            Err(e) => {
                notices.push(HistoryNotice {
                    off: true,
                    message: off_message(&e),
                });
                None
            }
        };
        History {
            file,
            recorder,
            store: Mutex::new(None),
            notices,
        }
    }

    /// A history that records nothing, because the settings say `history.enabled: false`;
    /// the sessions recorded before are still listed, searched and exported from `file`.
    pub fn off(file: PathBuf, settings_file: &std::path::Path) -> History {
        let notices = Arc::new(Notices::default());
        notices.push(HistoryNotice {
            off: true,
            message: format!(
                "sessions are not recorded: `history.enabled` is false in {} (set it to true, or remove it, to record them again)",
                settings_file.display()
            ),
        });
        History {
            file,
            recorder: None,
            store: Mutex::new(None),
            notices,
        }
    }

    /// The recorder, when history is on (drafts go through it: it never blocks).
    pub fn recorder(&self) -> Option<&Arc<HistoryRecorder>> {
        self.recorder.as_ref()
    }

    /// Calls `sink` with every notice from now on (the window's event).
    pub fn on_notice(&self, sink: impl Fn(&HistoryNotice) + Send + Sync + 'static) {
        if self.notices.sink.set(Box::new(sink)).is_err() {
            tracing::warn!("the history's notices already go to a window");
        }
    }

    /// Writes what is left (the app is quitting).
    pub fn finish(&self) {
        if let Some(r) = &self.recorder {
            r.finish();
        }
    }

    /// Blocking.
    pub fn status(&self) -> HistoryStatus {
        let read_only = self.with_store(|s| Ok(s.read_only())).unwrap_or(false);
        HistoryStatus {
            recording: self.recorder.is_some(),
            read_only,
            file: self.file.display().to_string(),
            notices: lock(&self.notices.list).clone(),
        }
    }

    /// Every stored session, the most recently updated first. Blocking.
    pub fn list(&self, registry: &Registry) -> Result<Vec<HistorySession>, IpcError> {
        let open = self.open_ids(registry);
        self.with_store(|s| s.sessions()).map(|all| {
            all.into_iter()
                .map(|r| {
                    let is_open = open.contains(&r.id);
                    HistorySession::from_record(r, is_open)
                })
                .collect()
        })
    }

    /// Rows of every stored session holding every word of `text`. Blocking.
    pub fn search(&self, text: &str) -> Result<Vec<HistoryHit>, IpcError> {
        self.with_store(|s| s.search(text, SEARCH_LIMIT))
            .map(|hits| hits.into_iter().map(HistoryHit::from).collect())
    }

    /// A stored session and its transcript. Blocking.
    pub fn events(&self, registry: &Registry, id: &str) -> Result<HistoryEvents, IpcError> {
        let open = self.open_ids(registry);
        self.with_store(|s| {
            let record = s.session(id)?;
            let rows = s.rows(&record.id)?;
            Ok((record, rows))
        })
        .map(|(record, rows)| {
            let mut seqs = Vec::with_capacity(rows.len());
            let mut events = Vec::with_capacity(rows.len());
            let mut unreadable = 0u32;
            for row in rows {
                match serde_json::from_str::<StreamEvent>(&row.data) {
                    Ok(ev) => {
                        seqs.push(row.seq);
                        events.push(ev);
                    }
                    Err(e) => {
                        tracing::warn!(session = %record.id, seq = row.seq, kind = %row.kind, "a stored event could not be read: {e}");
                        unreadable += 1;
                    }
                }
            }
            let is_open = open.contains(&record.id);
            HistoryEvents {
                session: HistorySession::from_record(record, is_open),
                seqs,
                events,
                unreadable,
            }
        })
    }

    /// The stored session `id`, when it may be deleted: one this window is recording is
    /// refused (it would come back with its next events). Blocking.
    pub fn deletable(&self, registry: &Registry, id: &str) -> Result<SessionRecord, IpcError> {
        if self.open_ids(registry).iter().any(|o| o == id) {
            return Err(IpcError::InvalidInput(
                "this session is open in the sidebar: close it first, then delete it".into(),
            ));
        }
        let record = self.with_store(|s| s.session(id))?;
        self.with_store(|s| s.check_not_in_use(&record.id))?;
        Ok(record)
    }

    /// Removes a stored session from the store (after [`History::deletable`], and the agent's
    /// copy through `Registry::delete_at_agent`). Blocking.
    /// Deletes a stored session, and its checkpoints (a failure there is logged: the user
    /// asked for the session to go, and it went).
    pub fn delete(&self, id: &str) -> Result<(), IpcError> {
        let folder = self.with_store(|s| s.session(id).map(|r| r.folder)).ok();
        self.with_store_mut(|s| s.delete(id))?;
        if let Some(folder) = folder
            && let Err(e) = acp_desk_app::checkpoints::drop_session_checkpoints(
                std::path::Path::new(&folder),
                id,
            )
        {
            tracing::warn!(session = %id, "its checkpoints could not be dropped: {e}");
        }
        Ok(())
    }

    /// A stored session as Markdown or JSON lines, with the file name to suggest. Blocking.
    pub fn export(&self, id: &str, format: ExportFormat) -> Result<(String, String), IpcError> {
        self.with_store(|s| {
            let record = s.session(id)?;
            let text = match format {
                ExportFormat::Markdown => {
                    let events = s.events(&record.id)?;
                    export::markdown(&record, &events)
                }
                ExportFormat::Jsonl => export::jsonl(&s.rows(&record.id)?),
            };
            Ok((suggested_name(&record, format), text))
        })
    }

    /// The request that continues a stored session with its stored launch and folder (the
    /// agent resumes it, else loads it, else starts afresh: `session-continued` says which).
    /// One already open in this window is refused. Blocking (checks the folder).
    pub fn continue_request(
        &self,
        registry: &Registry,
        id: &str,
    ) -> Result<acp_desk_app::OpenRequest, IpcError> {
        let record = self.with_store(|s| s.session(id))?;
        if self.open_ids(registry).contains(&record.id) {
            return Err(IpcError::InvalidInput(
                "this session is already open in the sidebar".into(),
            ));
        }
        self.with_store(|s| s.check_not_in_use(&record.id))?;
        Ok(acp_desk_app::continue_request(
            &record,
            acp_desk_core::ContinueVia::Auto,
        )?)
    }

    /// A stored session as Markdown in `<data dir>/context/<id>.md` (for an agent that could
    /// not continue it: the old conversation goes along as context). Blocking.
    pub fn context_file(&self, id: &str) -> Result<(PathBuf, String), IpcError> {
        let (_, text) = self.export(id, ExportFormat::Markdown)?;
        let full = self.full_id(id)?;
        let dir = acp_desk_core::paths::data_dir().join("context");
        std::fs::create_dir_all(&dir).map_err(|e| {
            IpcError::InvalidInput(format!("could not create {}: {e}", dir.display()))
        })?;
        let file = dir.join(format!("{full}.md"));
        std::fs::write(&file, &text).map_err(|e| {
            IpcError::InvalidInput(format!("could not write {}: {e}", file.display()))
        })?;
        Ok((file, text))
    }

    /// The full id of a stored session (the UI copies it). Blocking.
    pub fn full_id(&self, id: &str) -> Result<String, IpcError> {
        self.with_store(|s| s.session(id).map(|r| r.id))
    }

    /// The stored ids of the sessions this window records now.
    fn open_ids(&self, registry: &Registry) -> Vec<String> {
        let Some(r) = &self.recorder else {
            return Vec::new();
        };
        registry
            .list()
            .iter()
            .filter_map(|s| r.history_id(&s.id))
            .collect()
    }

    fn with_store<T>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, StoreError>,
    ) -> Result<T, IpcError> {
        self.with_store_mut(|s| f(s))
    }

    fn with_store_mut<T>(
        &self,
        f: impl FnOnce(&mut Store) -> Result<T, StoreError>,
    ) -> Result<T, IpcError> {
        let mut guard = lock(&self.store);
        if guard.is_none() {
            let (store, warnings) = Store::open(&self.file).map_err(store_error)?;
            for w in warnings {
                self.notices.push(HistoryNotice {
                    off: turns_off(&w),
                    message: w.to_string(),
                });
            }
            *guard = Some(store);
        }
        let Some(store) = guard.as_mut() else {
            return Err(IpcError::Internal("the history file was not opened".into()));
        };
        let out = f(store);
        if let Err(StoreError::Corrupt { .. } | StoreError::Locked { .. }) = &out {
            // Opened again on the next call: a lock may be gone, a damaged file set aside.
            *guard = None;
        }
        out.map_err(store_error)
    }
}

/// Sends the history's notices from now on to the window as `history-notice` events.
pub fn notify_window<R: tauri::Runtime>(app: &tauri::AppHandle<R>) {
    use tauri::{Emitter, Manager};
    let handle = app.clone();
    app.state::<crate::AppState>()
        .history
        .on_notice(move |n: &HistoryNotice| {
            if let Err(e) = handle.emit(crate::ipc::AppEvent::HistoryNotice.name(), n) {
                tracing::warn!("could not tell the window about the history: {e}");
            }
        });
}

/// What the window says when history cannot be recorded at all.
fn off_message(e: &StoreError) -> String {
    match e {
        // The error says it is off and what to do.
        StoreError::Locked { .. } => e.to_string(),
        StoreError::ReadOnly { .. } => format!(
            "{e}: past sessions can be read, but this run's sessions are not recorded (update \
             ACP Desk)"
        ),
        _ => format!("history is off for this run: {e}"),
    }
}

/// A store failure as the window sees it.
pub fn store_error(e: StoreError) -> IpcError {
    let message = e.to_string();
    match e {
        StoreError::NotFound(_) | StoreError::Ambiguous { .. } => IpcError::SessionUnknown(message),
        StoreError::InUse { .. } => IpcError::InvalidInput(message),
        StoreError::Locked { .. }
        | StoreError::Open { .. }
        | StoreError::Corrupt { .. }
        | StoreError::ReadOnly { .. }
        | StoreError::Sqlite { .. }
        | StoreError::Spawn(_) => IpcError::HistoryUnavailable(message),
    }
}

/// `<folder name>-<title or id>.md`, kept to characters every file system takes.
fn suggested_name(r: &SessionRecord, format: ExportFormat) -> String {
    let folder = std::path::Path::new(&r.folder)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let what = r.shown_title().unwrap_or(&r.id);
    let mut name = String::new();
    for c in format!("{folder} {what}").chars() {
        if c.is_alphanumeric() || c == '-' || c == '_' || c == '.' {
            name.push(c);
        } else if !name.ends_with('-') {
            name.push('-');
        }
        if name.chars().count() >= 60 {
            break;
        }
    }
    let name = name.trim_matches(|c| c == '-' || c == '.');
    let name = if name.is_empty() { "session" } else { name };
    format!("{name}.{}", format.extension())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use acp_desk_store::search::Snippet;

    use super::*;

    fn hit(text: &str, marks: Vec<(usize, usize)>) -> SearchHit {
        SearchHit {
            session_id: "s1".into(),
            seq: 3,
            kind: "text-delta".into(),
            snippet: Snippet {
                text: text.into(),
                marks,
            },
            title: None,
            agent: "demo".into(),
            folder: "/p".into(),
            updated_ms: 0,
        }
    }

    #[test]
    fn snippets_are_split_at_their_marks() {
        let h: HistoryHit = hit("…the session_info update…", vec![(7, 19)]).into();
        let parts: Vec<(&str, bool)> = h.snippet.iter().map(|p| (p.text.as_str(), p.hit)).collect();
        assert_eq!(
            parts,
            vec![
                ("…the ", false),
                ("session_info", true),
                (" update…", false)
            ]
        );
        // A mark off a character boundary is left out, not cut through.
        let h: HistoryHit = hit("é x", vec![(1, 2)]).into();
        assert_eq!(h.snippet.len(), 1);
        assert!(!h.snippet[0].hit);
    }

    #[test]
    fn a_locked_or_newer_file_is_history_unavailable_and_a_missing_session_is_unknown() {
        let path = PathBuf::from("/data/history.sqlite3");
        let e = store_error(StoreError::Locked { path: path.clone() });
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["code"], "history-unavailable");
        assert!(
            v["message"]
                .as_str()
                .unwrap()
                .contains("/data/history.sqlite3")
        );
        let e = store_error(StoreError::NotFound("abc".into()));
        assert_eq!(serde_json::to_value(&e).unwrap()["code"], "session-unknown");
        let m = off_message(&StoreError::ReadOnly { path, found: 99 });
        assert!(m.contains("newer") && m.contains("not recorded"), "{m}");
    }

    #[test]
    fn export_names_are_safe_file_names() {
        let r = SessionRecord {
            id: "s19a-1".into(),
            agent: "demo".into(),
            launch: None,
            folder: "/home/me/ledger".into(),
            title: Some("Fix: the `parse` bug / again?".into()),
            prompt_title: None,
            created_ms: 0,
            updated_ms: 0,
            status: "dead".into(),
            status_detail: None,
            acp_session_id: None,
            agent_identity: None,
            rows: 0,
        };
        assert_eq!(
            suggested_name(&r, ExportFormat::Markdown),
            "ledger-Fix-the-parse-bug-again.md"
        );
        let untitled = SessionRecord {
            title: None,
            folder: "/".into(),
            ..r
        };
        assert_eq!(
            suggested_name(&untitled, ExportFormat::Jsonl),
            "s19a-1.jsonl"
        );
    }
}
