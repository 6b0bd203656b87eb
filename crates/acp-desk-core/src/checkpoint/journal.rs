//! The journal of an undo's writes. An undo moves the user's files aside and the checkpoint's
//! versions in, one rename at a time; when it is cut short (ACP Desk killed, a crash, the
//! machine turned off), the folder is half one, half the other, and the user's own files sit
//! in a staging folder under a made-up name. So every move is written to `<shadow>/journal`
//! before it is made, and whoever next takes the checkpoints' lock (this process or another:
//! the app, the CLI) puts every file back as it was before the undo, from the journal and what
//! is on disk, drops the undo's step, and records the interruption for the session's review.
//!
//! The journal is flushed to the kernel on every line (a killed process loses nothing); it is
//! synced to the disk once, at its start: after a power cut the moves of the last moments may
//! be lost with it, and what is then on disk is what the file system kept.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::repo::Checkpoints;
use super::{CheckpointError, InterruptedUndo, StepKind};

const JOURNAL: &str = "journal";
const INTERRUPTED: &str = "interrupted";
/// Records kept of interrupted undos (the oldest are dropped).
const KEEP_INTERRUPTED: usize = 20;

/// One step of [`Checkpoints::apply`], undone backwards on failure (or after a crash).
#[derive(Debug)]
pub(super) enum Op {
    /// A file or link moved out of the way.
    Aside {
        path: PathBuf,
        aside: PathBuf,
    },
    MadeDir(PathBuf),
    /// An emptied folder removed for a file.
    RemovedDir(PathBuf),
    /// A new version moved in from its temp file.
    MovedIn {
        path: PathBuf,
        temp: PathBuf,
    },
}

/// A line of the journal: paths relative to the project folder (its own path may not be text).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Entry {
    Begin {
        session: String,
        step: u32,
        files: Vec<String>,
        staging: String,
        temps: Vec<String>,
    },
    Aside {
        path: String,
        aside: String,
    },
    MadeDir {
        path: String,
    },
    RemovedDir {
        path: String,
    },
    MovedIn {
        path: String,
        temp: String,
    },
}

/// An interrupted undo as `<shadow>/interrupted` keeps it, a JSON line each.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    session: String,
    /// Seconds since the epoch, when it was put back.
    at: i64,
    step: u32,
    kind: StepKind,
    #[serde(default)]
    undoes: Option<u32>,
    files: Vec<String>,
    #[serde(default)]
    stranded: Vec<String>,
}

/// The open journal of a running undo.
pub(super) struct Journal {
    file: File,
    path: PathBuf,
    root: PathBuf,
}

impl Journal {
    /// Starts the journal of step `step`'s undo: the files it writes, its staging folder and
    /// the temp files it will write (all removed if it is cut short). Synced to the disk.
    pub(super) fn start(
        shadow: &Path,
        root: &Path,
        (session, step): (&str, u32),
        files: &[String],
        staging: &Path,
        temps: &[Option<PathBuf>],
    ) -> std::io::Result<Journal> {
        let path = shadow.join(JOURNAL);
        let begin = Entry::Begin {
            session: session.to_owned(),
            step,
            files: files.to_vec(),
            staging: rel(root, staging)?,
            temps: temps
                .iter()
                .flatten()
                .map(|t| rel(root, t))
                .collect::<std::io::Result<_>>()?,
        };
        // Whole or not at all (written aside, synced, renamed): a journal always names its
        // undo's step.
        #[cfg(test)]
        crash::tick(true);
        crate::atomic_file::write_atomic(&path, &line(&begin)?)?;
        #[cfg(test)]
        crash::tick(false);
        let file = std::fs::OpenOptions::new().append(true).open(&path)?;
        Ok(Journal {
            file,
            path,
            root: root.to_path_buf(),
        })
    }

    /// Writes down `op` before it is made.
    pub(super) fn record(&mut self, op: &Op) -> std::io::Result<()> {
        let entry = match op {
            Op::Aside { path, aside } => Entry::Aside {
                path: self.rel(path)?,
                aside: self.rel(aside)?,
            },
            Op::MadeDir(d) => Entry::MadeDir { path: self.rel(d)? },
            Op::RemovedDir(d) => Entry::RemovedDir { path: self.rel(d)? },
            Op::MovedIn { path, temp } => Entry::MovedIn {
                path: self.rel(path)?,
                temp: self.rel(temp)?,
            },
        };
        self.write(&entry)
    }

    /// The undo ended (done, or rolled back by itself): nothing is left to put back.
    pub(super) fn close(self) {
        if let Err(e) = std::fs::remove_file(&self.path) {
            tracing::warn!(path = %self.path.display(), "could not remove the undo's journal: {e}");
        }
    }

    fn write(&mut self, entry: &Entry) -> std::io::Result<()> {
        #[cfg(test)]
        crash::tick(true);
        self.file.write_all(&line(entry)?)?;
        #[cfg(test)]
        crash::tick(false);
        Ok(())
    }

    fn rel(&self, path: &Path) -> std::io::Result<String> {
        rel(&self.root, path)
    }
}

fn line(entry: &Entry) -> std::io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}

fn rel(root: &Path, path: &Path) -> std::io::Result<String> {
    path.strip_prefix(root)
        .ok()
        .and_then(|r| r.to_str())
        .map(str::to_owned)
        .ok_or_else(|| {
            std::io::Error::other(format!(
                "{} cannot be written in the undo's journal",
                path.display()
            ))
        })
}

/// Undoes `log` backwards. Each move is checked against the disk first, so that a move the
/// journal names but that was never made is left alone. Returns, in words, what could not be
/// undone (a file set aside that stays where it was set, a new version left in place): the
/// caller must keep the staging folder and say so.
pub(super) fn roll_back(log: &mut Vec<Op>) -> Vec<String> {
    let mut stranded = Vec::new();
    while let Some(op) = log.pop() {
        if let Err(e) = undo(&op) {
            let path = match &op {
                Op::MovedIn { path, .. } | Op::Aside { path, .. } => path,
                Op::RemovedDir(d) | Op::MadeDir(d) => d,
            };
            tracing::error!(path = %path.display(), "roll back: {e}");
            match op {
                Op::Aside { path, aside } => {
                    stranded.push(format!("{} is kept in {}", path.display(), aside.display()))
                }
                Op::MovedIn { path, .. } => {
                    stranded.push(format!("{} is left as the undo wrote it", path.display()))
                }
                Op::RemovedDir(_) | Op::MadeDir(_) => {}
            }
        }
    }
    stranded
}

fn exists(path: &Path) -> bool {
    path.symlink_metadata().is_ok()
}

fn undo(op: &Op) -> std::io::Result<()> {
    match op {
        // The temp still there: the new version never moved in.
        Op::MovedIn { temp, .. } if exists(temp) => Ok(()),
        Op::MovedIn { path, .. } if !exists(path) => Ok(()),
        Op::MovedIn { path, temp } => std::fs::rename(path, temp),
        Op::RemovedDir(dir) if dir.symlink_metadata().is_ok_and(|m| m.is_dir()) => Ok(()),
        Op::RemovedDir(dir) => std::fs::create_dir(dir),
        Op::MadeDir(dir) if !exists(dir) => Ok(()),
        Op::MadeDir(dir) => std::fs::remove_dir(dir),
        // Nothing set aside: the file never moved.
        Op::Aside { aside, .. } if !exists(aside) => Ok(()),
        // Someone put a file there since: theirs is not overwritten, ours stays aside.
        Op::Aside { path, .. } if exists(path) => Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "another file is there now",
        )),
        Op::Aside { path, aside } => std::fs::rename(aside, path),
    }
}

impl Checkpoints {
    /// Puts back what an undo cut short left (see the module's text). Called with the lock
    /// held; never fails: what cannot be put back is logged and recorded.
    pub(super) fn recover_interrupted(&self) {
        let path = self.shadow.join(JOURNAL);
        let text = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => {
                tracing::error!(path = %path.display(), "could not read the undo's journal: {e}");
                return;
            }
        };
        // A last line cut short was never acted on: the move comes after its line.
        let entries: Vec<Entry> = text
            .split(|b| *b == b'\n')
            .filter_map(|line| serde_json::from_slice(line).ok())
            .collect();
        let mut entries = entries.into_iter();
        let Some(Entry::Begin {
            session,
            step,
            files,
            staging,
            temps,
        }) = entries.next()
        else {
            // Not ours, or damaged: without its start it names nothing to put back.
            tracing::error!(path = %path.display(), "an undo's journal without its start, removed");
            let _ = std::fs::remove_file(&path);
            return;
        };
        let at = |rel: &str| self.root.join(rel);
        let mut log: Vec<Op> = entries
            .filter_map(|e| match e {
                Entry::Aside { path, aside } => Some(Op::Aside {
                    path: at(&path),
                    aside: at(&aside),
                }),
                Entry::MadeDir { path } => Some(Op::MadeDir(at(&path))),
                Entry::RemovedDir { path } => Some(Op::RemovedDir(at(&path))),
                Entry::MovedIn { path, temp } => Some(Op::MovedIn {
                    path: at(&path),
                    temp: at(&temp),
                }),
                Entry::Begin { .. } => None,
            })
            .collect();
        let stranded = roll_back(&mut log);
        for t in &temps {
            let t = at(t);
            if exists(&t) {
                let _ = std::fs::remove_file(&t);
            }
        }
        // Empty unless it keeps files that could not go back.
        let _ = std::fs::remove_dir(at(&staging));
        let (kind, undoes) = self
            .find_step(&session, step)
            .map(|s| {
                (
                    s.before_meta.kind.unwrap_or(StepKind::Revert),
                    s.before_meta.undoes,
                )
            })
            .unwrap_or((StepKind::Revert, None));
        if let Err(e) = self.drop_step(&session, step) {
            tracing::warn!("could not drop the interrupted undo's step {step}: {e}");
        }
        if stranded.is_empty() {
            tracing::warn!(
                session,
                step,
                "an undo was cut short; every file it wrote is back as it was before it"
            );
        } else {
            tracing::error!(session, step, ?stranded, "an undo was cut short");
        }
        self.remember(Record {
            session,
            at: super::unix_now(),
            step,
            kind,
            undoes,
            files,
            stranded,
        });
        if let Err(e) = std::fs::remove_file(&path) {
            tracing::error!(path = %path.display(), "could not remove the undo's journal: {e}");
        }
    }

    fn remember(&self, record: Record) {
        let path = self.shadow.join(INTERRUPTED);
        let mut lines: Vec<String> = std::fs::read_to_string(&path)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect();
        match serde_json::to_string(&record) {
            Ok(line) => lines.push(line),
            Err(e) => tracing::error!("could not record an interrupted undo: {e}"),
        }
        let skip = lines.len().saturating_sub(KEEP_INTERRUPTED);
        let mut text = lines[skip..].join("\n");
        text.push('\n');
        if let Err(e) = crate::atomic_file::write_atomic(&path, text.as_bytes()) {
            tracing::error!(path = %path.display(), "could not record an interrupted undo: {e}");
        }
    }

    /// The session's undos that were cut short (each put back) and not yet followed by a step,
    /// oldest first. Reading only: the lock is not taken.
    pub fn interrupted(&self, session: &str) -> Result<Vec<InterruptedUndo>, CheckpointError> {
        let text = match std::fs::read_to_string(self.shadow.join(INTERRUPTED)) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(CheckpointError::Io {
                    what: "could not read the record of interrupted undos".into(),
                    source: e,
                });
            }
        };
        // The dropped step's number is the next step's: once one exists, the session has
        // moved on.
        let last = self.load_steps(session)?.last().map_or(0, |s| s.turn);
        Ok(text
            .lines()
            .filter_map(|l| serde_json::from_str::<Record>(l).ok())
            .filter(|r| r.session == session && r.step > last)
            .map(|r| InterruptedUndo {
                at: chrono::DateTime::from_timestamp(r.at, 0)
                    .unwrap_or_default()
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                step: r.step,
                kind: r.kind,
                undoes: r.undoes,
                files: r.files,
                stranded: r.stranded,
            })
            .collect())
    }
}

/// A crash, for tests: the journal's `n`th line (0: its start) panics before it is written or
/// just after, as a process killed there would stop.
#[cfg(test)]
pub(super) mod crash {
    use std::cell::Cell;

    thread_local! {
        static AT: Cell<Option<(usize, bool)>> = const { Cell::new(None) };
        static SEEN: Cell<usize> = const { Cell::new(0) };
    }

    /// Crashes at line `n`, `before` it is written or after.
    pub(in super::super) fn at(n: usize, before: bool) {
        AT.set(Some((n, before)));
        SEEN.set(0);
    }

    pub(in super::super) fn off() {
        AT.set(None);
    }

    pub(super) fn tick(before: bool) {
        let Some((n, when)) = AT.get() else {
            return;
        };
        let seen = SEEN.get();
        if seen == n && when == before {
            AT.set(None);
            panic!("a simulated crash at the journal's line {n}");
        }
        if !before {
            SEEN.set(seen + 1);
        }
    }
}
