//! Review and undo from the terminal: the checkpoints `run` (and the window) took of a stored
//! session's folder ([`acp_desk_core::checkpoint`]).
//!
//! - `changes ID [--turn N] [--json]`: the session's steps and its changes since it started, or
//!   the files step N changed (status, +/−, marks), its notes and what cannot be restored.
//! - `revert ID --turn N [--file PATH] [--force]`: undo step N (one file of it).
//! - `restore ID --before-turn N [--force]`: the whole folder back to before step N.
//!
//! `ID` as `history` takes it (any unique start). Exit status: 0 done (or nothing to do); 1 a
//! failure (git, the disk: nothing was changed); 2 a usage error (unknown session, step or
//! file, checkpoints off); 4 conflicts (files changed since the step: nothing was written; the
//! list is on stderr, `--force` overwrites them); 5 a turn runs in that folder (try again once
//! it ended); 6 the undo wrote files and then failed (stderr names them and what to do).

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use acp_desk_core::checkpoint::{
    CheckpointError, Checkpoints, FileChange, FileStatus, RevertOutcome, StepKind,
};
use acp_desk_store::Store;

use crate::{EXIT_FAILED, EXIT_USAGE};

/// Exit code when a revert or restore found files changed since the step (nothing written).
pub const EXIT_CONFLICTS: u8 = 4;
/// The settings' MB (`max_file_mb`, `budget_mb`).
const MB: f64 = 1024.0 * 1024.0;

/// Exit code when a turn runs in the session's folder (a revert is refused then).
pub const EXIT_BUSY: u8 = 5;
/// Exit code when an undo wrote files and then failed (unlike 1, something was changed).
pub const EXIT_PARTIAL: u8 = 6;

#[derive(clap::Args)]
pub struct ChangesArgs {
    /// The stored session (any unique start of its id; see `history list`).
    #[arg(value_name = "ID")]
    id: String,
    /// Only what step N changed (the numbers `changes ID` lists).
    #[arg(long, value_name = "N")]
    turn: Option<u32>,
    /// One JSON document on stdout: the steps and the session's changes, or step N's changes.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
pub struct RevertArgs {
    #[arg(value_name = "ID")]
    id: String,
    /// The step to undo.
    #[arg(long, value_name = "N")]
    turn: u32,
    /// Only this file of it (relative to the session's folder, or absolute inside it).
    #[arg(long, value_name = "PATH")]
    file: Option<String>,
    /// Overwrite files changed since the step.
    #[arg(long)]
    force: bool,
}

#[derive(clap::Args)]
pub struct RestoreArgs {
    #[arg(value_name = "ID")]
    id: String,
    /// Put the folder back as it was before this step.
    #[arg(long, value_name = "N")]
    before_turn: u32,
    /// Overwrite files changed since the session's last checkpoint.
    #[arg(long)]
    force: bool,
}

/// The stored session's id and its folder's checkpoints.
fn open(id: &str) -> Result<(String, Checkpoints), ExitCode> {
    let (store, _) = Store::open_default().map_err(|e| {
        eprintln!("acp-desk-cli: {e}");
        ExitCode::from(EXIT_FAILED)
    })?;
    let session = store.session(id).map_err(|e| {
        eprintln!("acp-desk-cli: {e} (see `acp-desk-cli history list`)");
        ExitCode::from(EXIT_USAGE)
    })?;
    let settings = acp_desk_core::settings::load().settings.checkpoints;
    let base = acp_desk_core::paths::checkpoints_dir();
    let folder = Path::new(&session.folder);
    let root = folder
        .canonicalize()
        .unwrap_or_else(|_| folder.to_path_buf());
    if !Checkpoints::shadow_dir(&base, &root).exists() {
        eprintln!(
            "acp-desk-cli: {} has no checkpoints (its turns ran with checkpoints off, or before ACP Desk took them)",
            session.id
        );
        return Err(ExitCode::from(EXIT_USAGE));
    }
    // Reading and undoing what was taken works even with taking new ones turned off.
    let settings = acp_desk_core::checkpoint::CheckpointSettings {
        enabled: true,
        ..settings
    };
    let repo = Checkpoints::open(&base, folder, &settings, None, &[]).map_err(fail)?;
    Ok((session.id, repo))
}

fn fail(e: CheckpointError) -> ExitCode {
    eprintln!("acp-desk-cli: {e}");
    ExitCode::from(match e {
        CheckpointError::TurnRunning => EXIT_BUSY,
        CheckpointError::Partial(_) => EXIT_PARTIAL,
        CheckpointError::NoGit
        | CheckpointError::Disabled
        | CheckpointError::UnknownStep { .. }
        | CheckpointError::Incomplete { .. }
        | CheckpointError::NotChanged(..)
        | CheckpointError::Outside(_) => EXIT_USAGE,
        _ => EXIT_FAILED,
    })
}

fn out(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> ExitCode {
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    match write(&mut lock).and_then(|()| lock.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::from(141),
        Err(e) => {
            eprintln!("acp-desk-cli: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

pub fn changes(args: ChangesArgs) -> ExitCode {
    let (session, repo) = match open(&args.id) {
        Ok(x) => x,
        Err(code) => return code,
    };
    if let Some(turn) = args.turn {
        let changes = match repo.changes(&session, Some(turn)) {
            Ok(c) => c,
            Err(e) => return fail(e),
        };
        return out(|w| {
            if args.json {
                serde_json::to_writer_pretty(&mut *w, &changes)?;
                return writeln!(w);
            }
            writeln!(
                w,
                "step {turn}: {} file(s), +{} −{}",
                changes.summary.files, changes.summary.added, changes.summary.removed
            )?;
            for f in &changes.files {
                writeln!(w, "  {}", file_line(f))?;
            }
            for n in &changes.notes {
                writeln!(w, "  note: {n}")?;
            }
            for u in &changes.unrestorable {
                writeln!(
                    w,
                    "  not restorable (ignored, changed behind ACP Desk's back): {u}"
                )?;
            }
            Ok(())
        });
    }
    let (steps, whole) = match (repo.steps(&session), repo.changes(&session, None)) {
        (Ok(s), Ok(c)) => (s, c),
        (Err(e), _) | (_, Err(e)) => return fail(e),
    };
    let storage = repo.storage().ok();
    let interrupted = match repo.interrupted(&session) {
        Ok(i) => i,
        Err(e) => return fail(e),
    };
    out(|w| {
        if args.json {
            let doc = serde_json::json!({
                "session": session,
                "folder": repo.root(),
                "steps": steps,
                "changes": whole,
                "storage": storage,
                "interrupted": interrupted,
            });
            serde_json::to_writer_pretty(&mut *w, &doc)?;
            return writeln!(w);
        }
        writeln!(w, "{session} in {}", repo.root().display())?;
        for i in &interrupted {
            writeln!(w, "  note: {}", i.text())?;
        }
        for s in &steps {
            let what = match (s.kind, s.undoes) {
                (StepKind::Turn, _) => "turn".to_owned(),
                (StepKind::Revert, Some(u)) => format!("undo of step {u}"),
                (StepKind::Restore, Some(u)) => format!("restore to before step {u}"),
                (k, None) => format!("{k:?}").to_lowercase(),
            };
            let sum = match (&s.summary, s.complete) {
                (Some(x), _) => format!("{} file(s), +{} −{}", x.files, x.added, x.removed),
                (None, true) => String::new(),
                (None, false) => "not ended (no checkpoint of its end)".into(),
            };
            let undone = if s.undone_by.is_empty() {
                String::new()
            } else {
                format!(
                    "  (undone by step {})",
                    s.undone_by
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            writeln!(w, "  {:>3}  {}  {what}: {sum}{undone}", s.turn, s.at)?;
            for n in &s.notes {
                writeln!(w, "         note: {n}")?;
            }
        }
        writeln!(
            w,
            "since the session started: {} file(s), +{} −{}",
            whole.summary.files, whole.summary.added, whole.summary.removed
        )?;
        for f in &whole.files {
            writeln!(w, "  {}", file_line(f))?;
        }
        if let Some(st) = storage {
            writeln!(
                w,
                "checkpoints of this folder: {:.1} MB of {} MB (`checkpoints.budget_mb`)",
                st.bytes as f64 / MB,
                st.budget_bytes / (1024 * 1024)
            )?;
        }
        writeln!(
            w,
            "undo a step: acp-desk-cli revert {session} --turn N; the folder before a step: acp-desk-cli restore {session} --before-turn N"
        )
    })
}

fn file_line(f: &FileChange) -> String {
    let status = match f.status {
        FileStatus::Added => "added   ",
        FileStatus::Modified => "changed ",
        FileStatus::Deleted => "deleted ",
        FileStatus::Renamed => "moved   ",
        FileStatus::TypeChanged => "type    ",
    };
    let path = match &f.old_path {
        Some(old) => format!("{old} → {}", f.path),
        None => f.path.clone(),
    };
    let counts = match (f.added, f.removed) {
        _ if f.submodule => " (submodule: not entered)".to_owned(),
        _ if f.binary => " (binary)".to_owned(),
        _ if f.mode_only => " (mode only)".to_owned(),
        (Some(a), Some(r)) => format!(" +{a} −{r}"),
        _ => String::new(),
    };
    format!("{status}{path}{counts}")
}

pub fn revert(args: RevertArgs) -> ExitCode {
    let (session, repo) = match open(&args.id) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let what = match &args.file {
        Some(f) => format!("`{f}` of step {}", args.turn),
        None => format!("step {}", args.turn),
    };
    let outcome = repo.revert(&session, args.turn, args.file.as_deref(), args.force);
    said(&session, &what, outcome)
}

pub fn restore(args: RestoreArgs) -> ExitCode {
    let (session, repo) = match open(&args.id) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let what = format!("the folder to before step {}", args.before_turn);
    let outcome = repo.restore(&session, args.before_turn, args.force);
    said(&session, &what, outcome)
}

fn said(session: &str, what: &str, outcome: Result<RevertOutcome, CheckpointError>) -> ExitCode {
    match outcome {
        Err(e) => fail(e),
        Ok(RevertOutcome::Unchanged) => {
            eprintln!("acp-desk-cli: nothing to do: every file of {what} is already as asked");
            ExitCode::SUCCESS
        }
        Ok(RevertOutcome::Conflicts { conflicts }) => {
            eprintln!(
                "acp-desk-cli: nothing was written: {} file(s) changed since (undoing {what} would overwrite them):",
                conflicts.len()
            );
            for c in &conflicts {
                let why = match c.reason {
                    acp_desk_core::checkpoint::ConflictReason::Changed => "changed since",
                    acp_desk_core::checkpoint::ConflictReason::Deleted => "deleted since",
                    acp_desk_core::checkpoint::ConflictReason::Created => {
                        "back since (the step deleted it)"
                    }
                };
                eprintln!("  {}: {why}", c.path);
            }
            eprintln!("Look at them, then run again with --force to overwrite them.");
            ExitCode::from(EXIT_CONFLICTS)
        }
        Ok(RevertOutcome::Done {
            step,
            files,
            skipped,
        }) => {
            for s in &skipped {
                eprintln!("acp-desk-cli: left as it is (a submodule): {s}");
            }
            out(|w| {
                for f in &files {
                    writeln!(w, "restored {f}")?;
                }
                writeln!(
                    w,
                    "done as step {step}: undo it with `acp-desk-cli revert {session} --turn {step}`"
                )
            })
        }
    }
}
