//! The desktop app's logs: stderr, as always, and a file in a folder the front end names (the
//! shell passes Tauri's `app_log_dir()`). The CLI does not use this module: it logs to stderr
//! only.
//!
//! # The file
//!
//! - One file a day (UTC), `acp-desk.YYYY-MM-DD.log`; at most [`MAX_LOG_FILES`] are kept: the
//!   oldest are removed when the app starts and when a day's file is opened
//!   (`tracing-appender`'s daily rotation).
//! - Lines are written by a thread of their own (`tracing_appender::non_blocking`), so a slow
//!   disk never holds up a session's owner or an async thread; past its queue lines are
//!   dropped, never held in memory without bound.
//! - Levels: `ACP_DESK_LOG` (an `EnvFilter`, e.g. `debug` or `acp_desk_core=trace`) for both;
//!   without it stderr keeps [`STDERR_DEFAULT`] and the file gets [`FILE_DEFAULT`].
//!
//! # What never reaches a log
//!
//! Secrets: environment values (only names), prompt text, agent output and the arguments of
//! the commands we start (agents, terminals) are not logged at [`FILE_DEFAULT`] or above, since
//! any of them may hold a key. The agent's stderr is logged at `debug` only. The file is
//! what Help → Copy Diagnostics pastes from, so this holds for it as for stderr.

use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use tracing_appender::non_blocking::{NonBlocking, WorkerGuard};
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::fmt::writer::{EitherWriter, MakeWriter};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// The log files' names: `acp-desk.YYYY-MM-DD.log`.
pub const LOG_FILE_PREFIX: &str = "acp-desk";
pub const LOG_FILE_SUFFIX: &str = "log";
/// Daily files kept, today's included.
pub const MAX_LOG_FILES: usize = 7;
/// The variable that sets the levels (both outputs).
pub const LOG_ENV: &str = "ACP_DESK_LOG";
/// Stderr's level without [`LOG_ENV`]: what a terminal user must see.
pub const STDERR_DEFAULT: &str = "warn";
/// The file's level without [`LOG_ENV`]: also what sessions did (opened, ended, rules used),
/// for a bug report. Nothing logged at `info` or above holds a secret (module docs).
pub const FILE_DEFAULT: &str = "info";
/// What [`last_lines`] reads at most from the end of a file.
const TAIL_BYTES: u64 = 64 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("could not create the log folder {}: {source}", dir.display())]
    CreateFolder { dir: PathBuf, source: io::Error },
    #[error("could not open the log file in {}: {source}", dir.display())]
    Open {
        dir: PathBuf,
        source: tracing_appender::rolling::InitError,
    },
    #[error("the log file is already written to {}", .0.display())]
    AlreadyWriting(PathBuf),
}

/// The process's logging: the file part starts once [`Logging::write_to_folder`] is called.
pub struct Logging {
    /// Where the file layer writes; empty (lines to the file are discarded) until a folder is
    /// given, so the subscriber can be installed first thing at start.
    file: Arc<OnceLock<NonBlocking>>,
    folder: OnceLock<PathBuf>,
    guard: Mutex<Option<WorkerGuard>>,
}

/// The file layer's writer: the non-blocking file writer once there is one, else nothing.
#[derive(Clone)]
struct FileSlot(Arc<OnceLock<NonBlocking>>);

impl<'a> MakeWriter<'a> for FileSlot {
    type Writer = EitherWriter<NonBlocking, io::Sink>;

    fn make_writer(&'a self) -> Self::Writer {
        match self.0.get() {
            Some(w) => EitherWriter::A(w.clone()),
            None => EitherWriter::B(io::sink()),
        }
    }
}

fn filter(default: &str) -> EnvFilter {
    EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new(default))
}

/// Installs the process's subscriber (stderr, and the file once a folder is given) the first
/// time; later calls return the same [`Logging`]. If another subscriber was installed first
/// (a test harness), that one stays and nothing is written by this one.
pub fn init() -> &'static Logging {
    static LOGGING: OnceLock<Logging> = OnceLock::new();
    LOGGING.get_or_init(|| {
        let file = Arc::new(OnceLock::new());
        let stderr = tracing_subscriber::fmt::layer()
            .with_writer(io::stderr)
            .with_target(false)
            .with_filter(filter(STDERR_DEFAULT));
        let to_file = tracing_subscriber::fmt::layer()
            .with_writer(FileSlot(file.clone()))
            .with_ansi(false)
            .with_target(false)
            .with_filter(filter(FILE_DEFAULT));
        let _ = tracing_subscriber::registry()
            .with(stderr)
            .with(to_file)
            .try_init();
        Logging {
            file,
            folder: OnceLock::new(),
            guard: Mutex::new(None),
        }
    })
}

/// Today's file in `dir` (created with the folder if missing), after removing the oldest files
/// past [`MAX_LOG_FILES`]: the rotation policy, on its own so it can be checked on any folder.
pub fn open_appender(dir: &Path) -> Result<RollingFileAppender, LogError> {
    // First: the appender lists the folder before it would create it, and says so on stderr.
    std::fs::create_dir_all(dir).map_err(|source| LogError::CreateFolder {
        dir: dir.to_owned(),
        source,
    })?;
    RollingFileAppender::builder()
        .rotation(Rotation::DAILY)
        .filename_prefix(LOG_FILE_PREFIX)
        .filename_suffix(LOG_FILE_SUFFIX)
        .max_log_files(MAX_LOG_FILES)
        .build(dir)
        .map_err(|source| LogError::Open {
            dir: dir.to_owned(),
            source,
        })
}

impl Logging {
    /// Starts writing the log file in `dir` (once per process).
    pub fn write_to_folder(&self, dir: &Path) -> Result<(), LogError> {
        if let Some(current) = self.folder.get() {
            return Err(LogError::AlreadyWriting(current.clone()));
        }
        let appender = open_appender(dir)?;
        let (writer, guard) = tracing_appender::non_blocking(appender);
        if self.file.set(writer).is_err() {
            return Err(LogError::AlreadyWriting(dir.to_owned()));
        }
        let _ = self.folder.set(dir.to_owned());
        if let Ok(mut g) = self.guard.lock() {
            *g = Some(guard);
        }
        Ok(())
    }

    /// The folder the file is written in, once [`Logging::write_to_folder`] succeeded.
    pub fn folder(&self) -> Option<&Path> {
        self.folder.get().map(PathBuf::as_path)
    }

    /// Writes out every line logged so far and stops writing the file (lines after it go to
    /// stderr only). For quitting, and for tests.
    pub fn finish(&self) {
        let guard = self.guard.lock().ok().and_then(|mut g| g.take());
        drop(guard);
    }
}

/// The newest log file in `dir`, if any.
pub fn newest_file(dir: &Path) -> Option<PathBuf> {
    let prefix = format!("{LOG_FILE_PREFIX}.");
    let suffix = format!(".{LOG_FILE_SUFFIX}");
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with(&prefix) && name.ends_with(&suffix)
        })
        .map(|e| e.path())
        // The date in the name sorts as text.
        .max()
}

/// The last `n` lines of the newest log file in `dir` (read from its last
/// [`TAIL_BYTES`] only). Blocking IO.
pub fn last_lines(dir: &Path, n: usize) -> io::Result<Vec<String>> {
    let Some(path) = newest_file(dir) else {
        return Ok(Vec::new());
    };
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(TAIL_BYTES).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    // A read that starts inside a line gives its end only.
    if start > 0 && !lines.is_empty() {
        lines.remove(0);
    }
    let from = lines.len().saturating_sub(n);
    Ok(lines[from..].iter().map(|l| l.to_string()).collect())
}
