//! The demo agent's own record of its sessions, so that `session/load` can replay a
//! conversation and `session/resume` can go on with it in a later process, as real agents do
//! with their own session files.
//!
//! Kept only when the agent advertises a session method (`--session-methods`): one JSON file
//! per session (`<dir>/<session id>.json`), written whole (temp file + rename) when a turn ends
//! and when the session is closed. In memory the conversation is kept merged (consecutive
//! agent text chunks are one entry), so a flood turn costs its text, not an entry per chunk.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use agent_client_protocol_schema::v1::{ContentBlock, SessionUpdate};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One part of a stored conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Entry {
    /// A prompt's text.
    User { text: String },
    /// The agent's answer text (its chunks merged).
    Agent { text: String },
    /// A `tool_call` or `tool_call_update` update, as sent.
    Tool { update: Value },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub session_id: String,
    pub cwd: PathBuf,
    #[serde(default)]
    pub title: Option<String>,
    /// ISO 8601, UTC.
    pub updated_at: String,
    #[serde(default)]
    pub entries: Vec<Entry>,
}

impl Record {
    pub fn new(session_id: &str, cwd: PathBuf) -> Self {
        Record {
            session_id: session_id.into(),
            cwd,
            title: None,
            updated_at: now_iso8601(),
            entries: Vec::new(),
        }
    }

    pub fn first_prompt(&self) -> Option<&str> {
        self.entries.iter().find_map(|e| match e {
            Entry::User { text } => Some(text.as_str()),
            _ => None,
        })
    }
}

pub struct Journal {
    /// `None`: nothing is kept (no session method advertised).
    dir: Option<PathBuf>,
    sessions: Mutex<HashMap<String, Record>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Journal {
    pub fn new(dir: Option<PathBuf>) -> Self {
        Journal {
            dir,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    pub fn enabled(&self) -> bool {
        self.dir.is_some()
    }

    /// Starts keeping `record` (a new session, or one loaded or resumed).
    pub fn keep(&self, record: Record) {
        if self.enabled() {
            lock(&self.sessions).insert(record.session_id.clone(), record);
        }
    }

    pub fn note_user(&self, session: &str, text: &str) {
        if !self.enabled() {
            return;
        }
        if let Some(r) = lock(&self.sessions).get_mut(session) {
            if r.title.is_none() {
                r.title = Some(text.lines().next().unwrap_or("").chars().take(80).collect());
            }
            r.entries.push(Entry::User { text: text.into() });
        }
    }

    /// Notes an update the agent sends: its answer text and tool calls are the conversation.
    pub fn note(&self, session: &str, update: &SessionUpdate) {
        if !self.enabled() {
            return;
        }
        let mut sessions = lock(&self.sessions);
        let Some(r) = sessions.get_mut(session) else {
            return;
        };
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                if let ContentBlock::Text(t) = &chunk.content {
                    match r.entries.last_mut() {
                        Some(Entry::Agent { text }) => text.push_str(&t.text),
                        _ => r.entries.push(Entry::Agent {
                            text: t.text.clone(),
                        }),
                    }
                }
            }
            SessionUpdate::ToolCall(_) | SessionUpdate::ToolCallUpdate(_) => {
                if let Ok(update) = serde_json::to_value(update) {
                    r.entries.push(Entry::Tool { update });
                }
            }
            _ => {}
        }
    }

    /// Writes a kept session's record.
    pub fn save(&self, session: &str) -> io::Result<()> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let bytes = {
            let mut sessions = lock(&self.sessions);
            let Some(r) = sessions.get_mut(session) else {
                return Ok(());
            };
            r.updated_at = now_iso8601();
            serde_json::to_vec_pretty(r)?
        };
        std::fs::create_dir_all(dir)?;
        let path = record_path(dir, session)?;
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, &path)
    }

    /// Stops keeping a session in memory (its record stays on disk).
    pub fn forget(&self, session: &str) -> bool {
        lock(&self.sessions).remove(session).is_some()
    }

    /// A stored session's record.
    pub fn read(&self, session: &str) -> io::Result<Record> {
        let dir = self.dir.as_deref().ok_or_else(|| {
            io::Error::new(io::ErrorKind::Unsupported, "no session records are kept")
        })?;
        let bytes = std::fs::read(record_path(dir, session)?)?;
        serde_json::from_slice(&bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    /// Every stored record (unreadable files are skipped and logged), the newest first.
    pub fn all(&self) -> Vec<Record> {
        let Some(dir) = &self.dir else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut records: Vec<Record> = entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| {
                let read = std::fs::read(e.path())
                    .map_err(|e| e.to_string())
                    .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()));
                match read {
                    Ok(r) => Some(r),
                    Err(err) => {
                        crate::log!("session record {} skipped: {err}", e.path().display());
                        None
                    }
                }
            })
            .collect();
        records.sort_by(|a, b| {
            b.updated_at
                .cmp(&a.updated_at)
                .then(a.session_id.cmp(&b.session_id))
        });
        records
    }

    /// Removes a session's record and forgets it; `false` when there was none.
    pub fn delete(&self, session: &str) -> io::Result<bool> {
        let forgotten = self.forget(session);
        let Some(dir) = &self.dir else {
            return Ok(forgotten);
        };
        match std::fs::remove_file(record_path(dir, session)?) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(forgotten),
            Err(e) => Err(e),
        }
    }
}

/// A session id is used as a file name only when it is one of ours (no path separators).
fn record_path(dir: &Path, session: &str) -> io::Result<PathBuf> {
    if session.is_empty()
        || !session
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{session:?} is not a session id of this agent"),
        ));
    }
    Ok(dir.join(format!("{session}.json")))
}

/// Now as `YYYY-MM-DDTHH:MM:SS.mmmZ` (no date crate: the agent stays dependency-light).
pub fn now_iso8601() -> String {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, day) = civil_from_days(i64::try_from(days).unwrap_or(0));
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        y,
        u32::try_from(m).unwrap_or(1),
        u32::try_from(d).unwrap_or(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol_schema::v1::{ContentChunk, TextContent};

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    #[test]
    fn a_conversation_round_trips_merged() {
        let dir = tempdir();
        let j = Journal::new(Some(dir.clone()));
        j.keep(Record::new("demo-session-x", PathBuf::from("/p")));
        j.note_user("demo-session-x", "hello there");
        for part in ["Hi", ", ", "you"] {
            let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(part)));
            j.note("demo-session-x", &SessionUpdate::AgentMessageChunk(chunk));
        }
        j.save("demo-session-x").unwrap();
        let r = j.read("demo-session-x").unwrap();
        assert_eq!(r.title.as_deref(), Some("hello there"));
        assert_eq!(
            r.entries,
            vec![
                Entry::User {
                    text: "hello there".into()
                },
                Entry::Agent {
                    text: "Hi, you".into()
                }
            ]
        );
        assert_eq!(j.all().len(), 1);
        assert!(j.read("../etc/passwd").is_err());
        assert!(j.delete("demo-session-x").unwrap());
        assert!(!j.delete("demo-session-x").unwrap());
        let _ = std::fs::remove_dir_all(dir);
    }

    fn tempdir() -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "demo-journal-{}-{}",
            std::process::id(),
            now_iso8601().replace([':', '.'], "")
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
