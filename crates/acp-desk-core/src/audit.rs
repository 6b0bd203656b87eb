//! The audit log: what an agent asked for and what was done on its behalf, per session.
//!
//! One JSON object per line in `<data dir>/audit/<YYYY-MM-DD>/<session-id>.jsonl`, the date
//! being the UTC day the session started (a session running past midnight stays in one file).
//! Every line has `ts` (RFC 3339, UTC, milliseconds), `session` and `event`, plus the event's
//! fields in camelCase:
//!
//! | `event` | fields |
//! | --- | --- |
//! | `session-started` | `agent`, `cwd`, `roots` |
//! | `permission-asked` | `requestId` (the permission request), `toolCallId` (the ACP tool call), `title?`, `kind?`, `options[{optionId,name,kind}]` |
//! | `permission-answered` | `requestId`, `by` (user/rule/stop/agent/watchdog), `optionId?`, `optionKind?`, `cancelled?`, `at` |
//! | `file-written` | `path`, `beforeHash?`, `afterHash?` (absent: removed), `created`, `via` (fs-write/watcher) |
//! | `command-run` | `terminalId`, `command`, `args`, `cwd?`, `envNames`, `exitCode?`, `signal?` |
//! | `session-ended` | `reason?` |
//!
//! Secrets stay out: a terminal request's env is logged by variable names only.
//!
//! Writing happens on a dedicated thread fed by a bounded channel, so a call never waits for
//! the disk. Each line is written with one `write` and flushed, so a crash loses at most the
//! line in flight. If the log cannot be written (folder not creatable, disk full, the queue
//! overflowing), one [`AuditWarning`] is queued for the session to show
//! ([`AuditLog::take_warning`]) and the log goes quiet; the session never fails because of it.
//! `AuditKind::Off` (the AIP-44 manifest's `audit.kind: off`) makes every call a no-op.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use agent_client_protocol_schema::v1 as acp;
use serde::Serialize;

use crate::events::{PermissionResolution, SettledBy};

/// Lines waiting for the writer. A session produces a few lines per tool call, so this absorbs
/// bursts of hundreds of file changes while a slow disk catches up; beyond it lines are dropped
/// (with one warning) rather than making the session wait or growing without bound.
const QUEUE_LINES: usize = 1024;

/// Whether the log is written. AIP-44's `audit.kind` is `governance`, `external` or `off`;
/// only `off` changes anything here (the other two name targets we do not implement yet, and
/// the local log is kept for them too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuditKind {
    #[default]
    On,
    Off,
}

impl AuditKind {
    /// From a manifest's `audit.kind` (absent: on).
    pub fn from_manifest(kind: Option<&str>) -> AuditKind {
        match kind {
            Some(k) if k.eq_ignore_ascii_case("off") => AuditKind::Off,
            _ => AuditKind::On,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("could not start the audit log writer: {0}")]
    Spawn(io::Error),
}

/// Shown to the user once per session: the log stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the audit log {} is not being written: {reason}", path.display())]
pub struct AuditWarning {
    pub path: PathBuf,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditOption {
    pub option_id: String,
    pub name: String,
    pub kind: acp::PermissionOptionKind,
}

impl From<&acp::PermissionOption> for AuditOption {
    fn from(o: &acp::PermissionOption) -> Self {
        AuditOption {
            option_id: o.option_id.to_string(),
            name: o.name.clone(),
            kind: o.kind,
        }
    }
}

/// How a file change came to our knowledge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteVia {
    FsWrite,
    Watcher,
}

/// A terminal command, logged when its exit is known (or when the session ends without it).
/// Build `env_names` with [`CommandRun::env_names`]: values are never logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandRun {
    pub terminal_id: String,
    pub command: String,
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// Names of the env variables the agent set; their values are never logged.
    pub env_names: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
}

impl CommandRun {
    /// The names of a `terminal/create` env, without the values (they may hold secrets).
    pub fn env_names(env: &[acp::EnvVariable]) -> Vec<String> {
        env.iter().map(|v| v.name.clone()).collect()
    }
}

/// One audit entry (the `event` field of a line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum AuditEvent {
    #[serde(rename_all = "camelCase")]
    SessionStarted {
        agent: String,
        cwd: PathBuf,
        roots: Vec<PathBuf>,
    },
    #[serde(rename_all = "camelCase")]
    PermissionAsked {
        /// The permission request's id (an `agent-prompt`'s `toolCallId`).
        request_id: String,
        /// The ACP tool call the request is about (an `agent-prompt`'s `targetToolCallId`).
        /// Kept as `toolCallId` on disk, although `agent-prompt` spells this `targetToolCallId`:
        /// audit files already written name the tool call so, and a reader of old and new files
        /// must find it under one name.
        tool_call_id: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        kind: Option<acp::ToolKind>,
        options: Vec<AuditOption>,
    },
    #[serde(rename_all = "camelCase")]
    PermissionAnswered {
        request_id: String,
        by: SettledBy,
        #[serde(skip_serializing_if = "Option::is_none")]
        option_id: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        option_kind: Option<acp::PermissionOptionKind>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        cancelled: bool,
        at: String,
    },
    /// The agent asked the user (`elicitation/create`): the field names, never values.
    #[serde(rename_all = "camelCase")]
    ElicitationAsked {
        request_id: String,
        mode: crate::events::ElicitationModeKind,
        fields: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        host: Option<String>,
    },
    /// Who answered, how, and which fields the answer filled in; never the values.
    #[serde(rename_all = "camelCase")]
    ElicitationAnswered {
        request_id: String,
        by: SettledBy,
        action: crate::elicitation::ElicitationAction,
        fields: Vec<String>,
        at: String,
    },
    #[serde(rename_all = "camelCase")]
    FileWritten {
        path: PathBuf,
        #[serde(skip_serializing_if = "Option::is_none")]
        before_hash: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        after_hash: Option<String>,
        created: bool,
        via: WriteVia,
    },
    CommandRun(CommandRun),
    #[serde(rename_all = "camelCase")]
    SessionEnded {
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

impl AuditEvent {
    /// `permission-answered` from a resolution; `options` are the request's, to name the
    /// chosen option's kind.
    pub fn answered(
        request_id: impl Into<String>,
        by: SettledBy,
        outcome: &PermissionResolution,
        options: &[acp::PermissionOption],
    ) -> AuditEvent {
        let (option_id, cancelled) = match outcome {
            PermissionResolution::Selected { option_id, .. } => (Some(option_id.clone()), false),
            PermissionResolution::Cancelled { .. } => (None, true),
        };
        let option_kind = option_id.as_deref().and_then(|id| {
            options
                .iter()
                .find(|o| o.option_id.to_string() == id)
                .map(|o| o.kind)
        });
        AuditEvent::PermissionAnswered {
            request_id: request_id.into(),
            by,
            option_id,
            option_kind,
            cancelled,
            at: rfc3339(SystemTime::now()),
        }
    }
}

#[derive(Serialize)]
struct Line<'a> {
    ts: String,
    session: &'a str,
    #[serde(flatten)]
    event: &'a AuditEvent,
}

/// Opens the sink on the writer thread (so that creating folders never delays the caller).
type Opener = Box<dyn FnOnce() -> io::Result<Box<dyn Write + Send>> + Send>;

#[derive(Debug, Default)]
struct Shared {
    /// Set once the log stopped; later calls do nothing.
    failed: AtomicBool,
    warning: Mutex<Option<AuditWarning>>,
}

impl Shared {
    /// Stops the log and queues the warning, the first time only.
    fn fail(&self, path: &Path, reason: String) {
        if self.failed.swap(true, Ordering::SeqCst) {
            return;
        }
        tracing::warn!(file = %path.display(), "audit log stopped: {reason}");
        if let Ok(mut slot) = self.warning.lock() {
            *slot = Some(AuditWarning {
                path: path.to_owned(),
                reason,
            });
        }
    }
}

/// A session's audit log. Cheap to call from the session's owner task.
#[derive(Debug)]
pub struct AuditLog {
    inner: Option<Inner>,
}

#[derive(Debug)]
struct Inner {
    session: Arc<str>,
    path: PathBuf,
    tx: SyncSender<(SystemTime, AuditEvent)>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl AuditLog {
    /// `<data dir>/audit`.
    pub fn default_dir() -> PathBuf {
        crate::paths::data_dir().join("audit")
    }

    /// The file a session started now logs to below `dir`.
    pub fn file_path(dir: &Path, session_id: &str) -> PathBuf {
        let date = rfc3339(SystemTime::now());
        let day = date.get(..10).unwrap_or("unknown-date");
        dir.join(day)
            .join(format!("{}.jsonl", file_safe(session_id)))
    }

    /// Starts the log for `session_id` below `dir` (see the module docs for the layout). The
    /// folder and file are created on the writer thread; failing that gives a warning, not an
    /// error. Only failing to start the thread is an error.
    pub fn open(dir: &Path, session_id: &str, kind: AuditKind) -> Result<AuditLog, AuditError> {
        if kind == AuditKind::Off {
            return Ok(AuditLog::off());
        }
        let path = AuditLog::file_path(dir, session_id);
        let file_path = path.clone();
        let opener: Opener = Box::new(move || {
            if let Some(parent) = file_path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&file_path)?;
            Ok(Box::new(f) as Box<dyn Write + Send>)
        });
        AuditLog::with_opener(session_id, path, opener)
    }

    /// A log that records nothing.
    pub fn off() -> AuditLog {
        AuditLog { inner: None }
    }

    /// A log writing to `sink` (tests inject failing sinks here).
    pub fn with_sink(
        session_id: &str,
        path: PathBuf,
        sink: Box<dyn Write + Send>,
    ) -> Result<AuditLog, AuditError> {
        AuditLog::with_opener(session_id, path, Box::new(move || Ok(sink)))
    }

    fn with_opener(
        session_id: &str,
        path: PathBuf,
        opener: Opener,
    ) -> Result<AuditLog, AuditError> {
        let (tx, rx) = sync_channel(QUEUE_LINES);
        let shared = Arc::new(Shared::default());
        let session: Arc<str> = Arc::from(session_id);
        let thread = std::thread::Builder::new()
            .name("acp-desk-audit".into())
            .spawn({
                let shared = shared.clone();
                let session = session.clone();
                let path = path.clone();
                move || writer(rx, opener, &session, &path, &shared)
            })
            .map_err(AuditError::Spawn)?;
        Ok(AuditLog {
            inner: Some(Inner {
                session,
                path,
                tx,
                shared,
                thread: Some(thread),
            }),
        })
    }

    pub fn is_on(&self) -> bool {
        self.inner
            .as_ref()
            .is_some_and(|i| !i.shared.failed.load(Ordering::Relaxed))
    }

    /// The file written, when on.
    pub fn path(&self) -> Option<&Path> {
        self.inner.as_ref().map(|i| i.path.as_path())
    }

    /// Queues one entry; never blocks.
    pub fn record(&self, event: AuditEvent) {
        let Some(inner) = &self.inner else { return };
        if inner.shared.failed.load(Ordering::Relaxed) {
            return;
        }
        match inner.tx.try_send((SystemTime::now(), event)) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => inner.shared.fail(
                &inner.path,
                format!("the disk is too slow: more than {QUEUE_LINES} entries waited"),
            ),
            Err(TrySendError::Disconnected(_)) => {
                inner
                    .shared
                    .fail(&inner.path, "the audit writer stopped".to_owned());
            }
        }
    }

    /// The warning to show, once: `Some` the first time after the log stopped.
    pub fn take_warning(&self) -> Option<AuditWarning> {
        let inner = self.inner.as_ref()?;
        if !inner.shared.failed.load(Ordering::Relaxed) {
            return None;
        }
        inner.shared.warning.lock().ok()?.take()
    }

    /// Waits until everything queued is written and stops the writer. Dropping the log also
    /// stops it (after the queue drains) without waiting.
    pub fn close(mut self) -> Option<AuditWarning> {
        let mut inner = self.inner.take()?;
        let thread = inner.thread.take();
        let shared = inner.shared.clone();
        drop(inner);
        if let Some(t) = thread
            && t.join().is_err()
        {
            tracing::warn!("audit writer panicked");
        }
        shared.warning.lock().ok()?.take()
    }

    pub fn session_started(&self, agent: &str, cwd: &Path, roots: &[PathBuf]) {
        self.record(AuditEvent::SessionStarted {
            agent: agent.to_owned(),
            cwd: cwd.to_owned(),
            roots: roots.to_vec(),
        });
    }

    pub fn permission_asked(
        &self,
        request_id: &str,
        tool_call_id: &str,
        title: Option<&str>,
        kind: Option<acp::ToolKind>,
        options: &[acp::PermissionOption],
    ) {
        self.record(AuditEvent::PermissionAsked {
            request_id: request_id.to_owned(),
            tool_call_id: tool_call_id.to_owned(),
            title: title.map(str::to_owned),
            kind,
            options: options.iter().map(AuditOption::from).collect(),
        });
    }

    pub fn permission_answered(
        &self,
        request_id: &str,
        by: SettledBy,
        outcome: &PermissionResolution,
        options: &[acp::PermissionOption],
    ) {
        if self.inner.is_some() {
            self.record(AuditEvent::answered(request_id, by, outcome, options));
        }
    }

    pub fn elicitation_asked(
        &self,
        request_id: &str,
        mode: crate::events::ElicitationModeKind,
        fields: &[String],
        host: Option<&str>,
    ) {
        self.record(AuditEvent::ElicitationAsked {
            request_id: request_id.to_owned(),
            mode,
            fields: fields.to_vec(),
            host: host.map(str::to_owned),
        });
    }

    pub fn elicitation_answered(
        &self,
        request_id: &str,
        by: SettledBy,
        action: crate::elicitation::ElicitationAction,
        fields: &[String],
    ) {
        self.record(AuditEvent::ElicitationAnswered {
            request_id: request_id.to_owned(),
            by,
            action,
            fields: fields.to_vec(),
            at: rfc3339(SystemTime::now()),
        });
    }

    pub fn file_written(
        &self,
        path: &Path,
        before_hash: Option<String>,
        after_hash: Option<String>,
        created: bool,
        via: WriteVia,
    ) {
        self.record(AuditEvent::FileWritten {
            path: path.to_owned(),
            before_hash,
            after_hash,
            created,
            via,
        });
    }

    /// Logs a command, when its exit is known (or when the session ends without it).
    pub fn command_run(&self, run: CommandRun) {
        self.record(AuditEvent::CommandRun(run));
    }

    pub fn session_ended(&self, reason: Option<&str>) {
        self.record(AuditEvent::SessionEnded {
            reason: reason.map(str::to_owned),
        });
    }
}

impl Drop for AuditLog {
    fn drop(&mut self) {
        // Dropping the sender lets the writer drain the queue and end; we do not wait for it
        // (the disk may be slow, and drop may run on the session's owner task).
        if let Some(inner) = &self.inner {
            tracing::trace!(session = %inner.session, "audit log closing");
        }
    }
}

fn writer(
    rx: Receiver<(SystemTime, AuditEvent)>,
    opener: Opener,
    session: &str,
    path: &Path,
    shared: &Shared,
) {
    let mut sink = match opener() {
        Ok(s) => s,
        Err(e) => {
            shared.fail(path, format!("could not open it: {e}"));
            // Drain so senders never see a full queue; they stop sending once `failed` is set.
            for _ in rx {}
            return;
        }
    };
    for (at, event) in rx {
        if shared.failed.load(Ordering::Relaxed) {
            continue;
        }
        let line = Line {
            ts: rfc3339(at),
            session,
            event: &event,
        };
        let mut bytes = match serde_json::to_vec(&line) {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!("audit entry not serialisable: {e}");
                continue;
            }
        };
        bytes.push(b'\n');
        if let Err(e) = sink.write_all(&bytes).and_then(|()| sink.flush()) {
            let reason = if is_disk_full(&e) {
                format!("the disk is full ({e})")
            } else {
                format!("writing failed: {e}")
            };
            shared.fail(path, reason);
        }
    }
}

fn is_disk_full(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::StorageFull || e.raw_os_error() == Some(28)
}

/// Session ids become file names: anything but `[A-Za-z0-9._-]` is replaced, and a leading dot
/// is avoided so the file is never hidden or `..`.
fn file_safe(id: &str) -> String {
    let mut s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        s.insert(0, '_');
    }
    s
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` (RFC 3339, UTC). Times before 1970 print as the epoch.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, day) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests;
