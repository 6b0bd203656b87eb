//! Undoing: a step's files put back as they were before it ("undo turn N"), or the whole folder
//! as it was before a step ("restore to before turn N"). A file is only written while it is
//! still as the step (or the session) left it, unless forced; every revert is a step of its own
//! (checkpointed before and after), and the writes go in all or none.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::journal::{Journal, Op, roll_back};
use super::repo::Checkpoints;
use super::review::{RawChange, latest};
use super::snapshot::{MODE_EXEC, MODE_GITLINK, MODE_LINK, default_bits};
use super::{CheckpointError, ConflictReason, RevertConflict, RevertOutcome, StepKind};

/// What one path becomes: `Some((git mode, blob, permission bits))`, or deleted.
struct Target {
    rel: String,
    to: Option<(u32, String, u32)>,
}

impl Checkpoints {
    /// Undoes step `turn` (only `file` of it, when given): each file it changed goes back to
    /// its content before the step, if nothing changed it since (else a conflict, unless
    /// `force`). Refused while a turn runs in the folder.
    pub fn revert(
        &self,
        session: &str,
        turn: u32,
        file: Option<&str>,
        force: bool,
    ) -> Result<RevertOutcome, CheckpointError> {
        let _turns = self.no_turn_running()?;
        let _lock = self.lock()?;
        let step = self.find_step(session, turn)?;
        let after = step
            .after
            .clone()
            .ok_or(CheckpointError::Incomplete { turn })?;
        let mut only: Vec<String> = match file {
            Some(f) => vec![self.relative(Path::new(f))?],
            None => Vec::new(),
        };
        // A renamed file (as the review lists it, by its new path) goes back to where it was.
        if let Some(rel) = only.first().cloned() {
            let moved = self
                .raw_diff(&step.before, &after, true, &[])?
                .into_iter()
                .find(|c| c.path == rel && c.status == 'R')
                .and_then(|c| c.old_path);
            only.extend(moved);
        }
        let mut changed = self.raw_diff(&step.before, &after, false, &only)?;
        self.add_mode_changes(&step.before, &after, &only, &mut changed)?;
        if changed.is_empty() {
            return match file {
                Some(f) => Err(CheckpointError::NotChanged(f.to_owned(), turn)),
                None => Ok(RevertOutcome::Unchanged),
            };
        }
        let paths: Vec<String> = changed.iter().map(|c| c.path.clone()).collect();
        let now = self.begin_locked(session, StepKind::Revert, Some(turn))?;
        let now_commit = self.find_step(session, now.turn)?.before;
        // What changed since the step left it (mode bits of our record included): conflicts,
        // unless already as wanted.
        let mut since = self.raw_diff(&after, &now_commit, false, &paths)?;
        self.add_mode_changes(&after, &now_commit, &paths, &mut since)?;
        let since: BTreeMap<String, RawChange> =
            since.into_iter().map(|c| (c.path.clone(), c)).collect();
        let modes = self.modes(&step.before)?;
        let now_modes = self.modes(&now_commit)?;
        let mut conflicts = Vec::new();
        let mut targets = Vec::new();
        for c in &changed {
            let want = c.old.clone();
            if let Some(s) = since.get(&c.path) {
                let bits_now = |m: &BTreeMap<String, u32>, e: &Option<(u32, String)>| {
                    e.as_ref().map(|e| {
                        m.get(&c.path)
                            .copied()
                            .unwrap_or(default_bits(e.0 == MODE_EXEC))
                    })
                };
                if s.new == want && bits_now(&now_modes, &s.new) == bits_now(&modes, &want) {
                    continue;
                }
                if !force {
                    conflicts.push(RevertConflict {
                        path: c.path.clone(),
                        reason: reason(s),
                    });
                    continue;
                }
            }
            targets.push(target(&c.path, want, &modes));
        }
        self.finish_revert(session, now.turn, conflicts, targets)
    }

    /// Puts the whole folder back as it was before step `turn`. Files someone changed after
    /// the session's last checkpoint are conflicts, unless `force`. Refused while a turn runs.
    pub fn restore(
        &self,
        session: &str,
        turn: u32,
        force: bool,
    ) -> Result<RevertOutcome, CheckpointError> {
        let _turns = self.no_turn_running()?;
        let _lock = self.lock()?;
        let steps = self.load_steps(session)?;
        let step = steps
            .iter()
            .find(|s| s.turn == turn)
            .cloned()
            .ok_or(CheckpointError::UnknownStep { turn })?;
        let expected = steps.last().map(latest).unwrap_or_default();
        let now = self.begin_locked(session, StepKind::Restore, Some(turn))?;
        let now_commit = self.find_step(session, now.turn)?.before;
        let mut changed = self.raw_diff(&now_commit, &step.before, false, &[])?;
        self.add_mode_changes(&now_commit, &step.before, &[], &mut changed)?;
        if changed.is_empty() {
            self.drop_step(session, now.turn)?;
            return Ok(RevertOutcome::Unchanged);
        }
        let paths: Vec<String> = changed.iter().map(|c| c.path.clone()).collect();
        let mut outside = self.raw_diff(&expected, &now_commit, false, &paths)?;
        self.add_mode_changes(&expected, &now_commit, &paths, &mut outside)?;
        let outside: BTreeMap<String, RawChange> =
            outside.into_iter().map(|c| (c.path.clone(), c)).collect();
        let modes = self.modes(&step.before)?;
        let mut conflicts = Vec::new();
        let mut targets = Vec::new();
        for c in &changed {
            if let Some(s) = outside.get(&c.path)
                && !force
            {
                conflicts.push(RevertConflict {
                    path: c.path.clone(),
                    reason: reason(s),
                });
                continue;
            }
            targets.push(target(&c.path, c.new.clone(), &modes));
        }
        self.finish_revert(session, now.turn, conflicts, targets)
    }

    /// Files whose mode bits in our record (600, 664...) differ between two checkpoints while
    /// git's entry is the same: `diff --raw` does not see them.
    fn add_mode_changes(
        &self,
        from: &str,
        to: &str,
        only: &[String],
        changed: &mut Vec<RawChange>,
    ) -> Result<(), CheckpointError> {
        let (ma, mb) = (self.modes(from)?, self.modes(to)?);
        let mut paths: Vec<String> = ma
            .keys()
            .chain(mb.keys())
            .filter(|p| only.is_empty() || only.contains(p))
            .filter(|p| !changed.iter().any(|c| &&c.path == p))
            .cloned()
            .collect();
        paths.sort();
        paths.dedup();
        if paths.is_empty() {
            return Ok(());
        }
        let (ea, eb) = (self.entries(from, &paths)?, self.entries(to, &paths)?);
        for p in paths {
            let (Some(a), Some(b)) = (ea.get(&p), eb.get(&p)) else {
                continue;
            };
            if a != b {
                continue;
            }
            let bits = |m: &BTreeMap<String, u32>| {
                m.get(&p).copied().unwrap_or(default_bits(a.0 == MODE_EXEC))
            };
            if bits(&ma) != bits(&mb) {
                changed.push(RawChange {
                    path: p,
                    old_path: None,
                    status: 'M',
                    old: Some(a.clone()),
                    new: Some(b.clone()),
                });
            }
        }
        // In path order, as git lists them (a folder before what it holds).
        changed.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(())
    }

    fn finish_revert(
        &self,
        session: &str,
        step: u32,
        conflicts: Vec<RevertConflict>,
        targets: Vec<Target>,
    ) -> Result<RevertOutcome, CheckpointError> {
        if !conflicts.is_empty() {
            self.drop_step(session, step)?;
            return Ok(RevertOutcome::Conflicts { conflicts });
        }
        let (skipped, targets): (Vec<Target>, Vec<Target>) = targets
            .into_iter()
            .partition(|t| t.to.as_ref().is_some_and(|e| e.0 == MODE_GITLINK));
        if targets.is_empty() {
            self.drop_step(session, step)?;
            return Ok(RevertOutcome::Unchanged);
        }
        if let Err(e) = self.apply(session, step, &targets) {
            self.drop_step(session, step)?;
            return Err(e);
        }
        let written: Vec<PathBuf> = targets.iter().map(|t| self.root.join(&t.rel)).collect();
        if let Err(e) = self.finish_locked(session, step, &written, &[]) {
            // The files are written: saying "nothing was changed" would be a lie.
            let _ = self.drop_step(session, step);
            let files: Vec<&str> = targets.iter().map(|t| t.rel.as_str()).collect();
            return Err(CheckpointError::Partial(format!(
                "the files were put back ({}), but the checkpoint of the result could not be taken, so this undo cannot itself be undone from ACP Desk: {e}",
                files.join(", ")
            )));
        }
        Ok(RevertOutcome::Done {
            step,
            files: targets.into_iter().map(|t| t.rel).collect(),
            skipped: skipped.into_iter().map(|t| t.rel).collect(),
        })
    }

    /// Removes a step that did nothing (a revert refused or failed).
    pub(super) fn drop_step(&self, session: &str, turn: u32) -> Result<(), CheckpointError> {
        for phase in ["before", "after"] {
            let name = Self::step_ref(session, turn, phase);
            let out = self.git.output(["update-ref", "-d", &name], None, &[])?;
            if !out.status.success() {
                tracing::debug!("{name}: {}", super::git::failure(&out));
            }
        }
        Ok(())
    }

    /// Writes every target, or none: new contents go to temp files first (beside the file, or
    /// in a staging folder at the root when its folder is not there yet); then every file in
    /// the way is moved aside, folders are made (and emptied ones removed) where the targets
    /// need them, and the new versions moved in, each step logged; a failure undoes the log
    /// backwards. A folder that became a file (or the other way round) is reverted this way.
    fn apply(&self, session: &str, step: u32, targets: &[Target]) -> Result<(), CheckpointError> {
        let ids: Vec<String> = targets
            .iter()
            .filter_map(|t| t.to.as_ref().map(|e| e.1.clone()))
            .collect();
        let blobs = self.git.blobs(&ids)?;
        let contents = ids.into_iter().zip(blobs).collect::<BTreeMap<_, _>>();
        let staging = self.root.join(format!(
            ".checkpoint{}{:016x}",
            crate::fs::TEMP_MARKER,
            crate::atomic_file::unique_suffix()
        ));
        let replaced: std::collections::BTreeSet<&str> =
            targets.iter().map(|t| t.rel.as_str()).collect();
        for t in targets {
            if let Some(link) = linked_folder(&self.root, &t.rel, &replaced) {
                return Err(CheckpointError::Apply(format!(
                    "`{}`: its folder `{link}` is a link now, and ACP Desk does not write through a link (it could lead out of the project folder); nothing was changed: make `{link}` a folder again, then try again",
                    t.rel
                )));
            }
        }
        // Where each new version is written first: beside its file, or in the staging folder
        // when its folder is not there yet.
        let temps: Vec<Option<PathBuf>> = targets
            .iter()
            .enumerate()
            .map(|(i, t)| {
                t.to.as_ref().map(|_| {
                    let path = self.root.join(&t.rel);
                    let beside = path
                        .parent()
                        .and_then(|d| d.symlink_metadata().ok())
                        .is_some_and(|m| m.is_dir());
                    if beside {
                        temp_beside(&path)
                    } else {
                        staging.join(i.to_string())
                    }
                })
            })
            .collect();
        let files: Vec<String> = targets.iter().map(|t| t.rel.clone()).collect();
        let mut journal = Journal::start(
            &self.shadow,
            &self.root,
            (session, step),
            &files,
            &staging,
            &temps,
        )
        .map_err(|e| CheckpointError::Apply(format!("could not start the undo's journal: {e}")))?;
        let prepared = (|| {
            for (t, temp) in targets.iter().zip(&temps) {
                let (Some((mode, id, bits)), Some(temp)) = (&t.to, temp) else {
                    continue;
                };
                // Not `remove`: files with the same bytes share a blob.
                let bytes = contents.get(id).cloned().flatten().ok_or_else(|| {
                    CheckpointError::Apply(format!("the checkpoint lacks `{}`", t.rel))
                })?;
                if temp.parent() == Some(staging.as_path()) && !staging.exists() {
                    std::fs::create_dir(&staging).map_err(|e| apply_error(&t.rel, &e))?;
                }
                write_temp(temp, &bytes, *mode, *bits).map_err(|e| apply_error(&t.rel, &e))?;
            }
            Ok::<(), CheckpointError>(())
        })();
        let clean_temps = |temps: &[Option<PathBuf>]| {
            for t in temps.iter().flatten() {
                let _ = std::fs::remove_file(t);
            }
            let _ = std::fs::remove_dir_all(&staging);
        };
        if let Err(e) = prepared {
            clean_temps(&temps);
            journal.close();
            return Err(e);
        }
        let mut log: Vec<Op> = Vec::new();
        if let Err((rel, e)) = self.swap_all(targets, &temps, &staging, &mut log, &mut journal) {
            let stranded = roll_back(&mut log);
            journal.close();
            if stranded.is_empty() {
                clean_temps(&temps);
                return Err(apply_error(&rel, &e));
            }
            // The staging folder holds the user's own files now: it stays.
            for t in temps.iter().flatten() {
                let _ = std::fs::remove_file(t);
            }
            return Err(CheckpointError::Partial(format!(
                "could not write `{rel}` ({e}), and putting things back failed too; put these back by hand: {}",
                stranded.join("; ")
            )));
        }
        // Done: from here on a crash must not put anything back (the files set aside go next).
        journal.close();
        for op in &log {
            if let Op::Aside { aside, .. } = op
                && let Err(e) = remove_any(aside)
            {
                tracing::warn!(path = %aside.display(), "could not remove a file set aside: {e}");
            }
        }
        let _ = std::fs::remove_dir_all(&staging);
        for (t, temp) in targets.iter().zip(&temps) {
            if temp.is_none() {
                remove_empty_parents(&self.root.join(&t.rel), &self.root);
            }
        }
        Ok(())
    }

    fn swap_all(
        &self,
        targets: &[Target],
        temps: &[Option<PathBuf>],
        staging: &Path,
        log: &mut Vec<Op>,
        journal: &mut Journal,
    ) -> Result<(), (String, std::io::Error)> {
        // Each move written down first, then made, then logged (for a roll back here).
        let mut make = |op: Op| -> std::io::Result<()> {
            journal.record(&op)?;
            match &op {
                Op::Aside { path, aside } => std::fs::rename(path, aside)?,
                Op::MadeDir(dir) => std::fs::create_dir(dir)?,
                Op::RemovedDir(dir) => std::fs::remove_dir(dir)?,
                Op::MovedIn { path, temp } => std::fs::rename(temp, path)?,
            }
            log.push(op);
            Ok(())
        };
        // Every file or link in the way, aside into the staging folder (not beside: a folder
        // emptied of its files may have to make way for a file); folders stay.
        for (i, t) in targets.iter().enumerate() {
            let path = self.root.join(&t.rel);
            let Ok(meta) = path.symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                continue;
            }
            let fail = |e: std::io::Error| (t.rel.clone(), e);
            if !staging.exists() {
                std::fs::create_dir(staging).map_err(fail)?;
            }
            let aside = staging.join(format!("aside-{i}"));
            make(Op::Aside { path, aside }).map_err(fail)?;
        }
        // The new versions, in path order (a folder before what it holds).
        for (t, temp) in targets.iter().zip(temps) {
            let Some(temp) = temp else {
                continue;
            };
            let path = self.root.join(&t.rel);
            let fail = |e: std::io::Error| (t.rel.clone(), e);
            let mut dir = self.root.clone();
            let parents: Vec<&std::ffi::OsStr> = Path::new(&t.rel)
                .parent()
                .map(|p| p.iter().collect())
                .unwrap_or_default();
            for part in parents {
                dir.push(part);
                match dir.symlink_metadata() {
                    Ok(m) if m.is_dir() => {}
                    Ok(_) => {
                        return Err(fail(std::io::Error::other(
                            "a file is where a folder must be",
                        )));
                    }
                    Err(_) => make(Op::MadeDir(dir.clone())).map_err(fail)?,
                }
            }
            if path.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                make(Op::RemovedDir(path.clone())).map_err(|e| {
                    if e.kind() == std::io::ErrorKind::DirectoryNotEmpty {
                        fail(std::io::Error::other(
                            "a folder that is not empty is where the file was",
                        ))
                    } else {
                        fail(e)
                    }
                })?;
            }
            make(Op::MovedIn {
                path,
                temp: temp.clone(),
            })
            .map_err(fail)?;
        }
        Ok(())
    }
}

fn target(rel: &str, want: Option<(u32, String)>, modes: &BTreeMap<String, u32>) -> Target {
    Target {
        rel: rel.to_owned(),
        to: want.map(|(mode, id)| {
            let bits = modes
                .get(rel)
                .copied()
                .unwrap_or(default_bits(mode == MODE_EXEC));
            (mode, id, bits)
        }),
    }
}

fn reason(since: &RawChange) -> ConflictReason {
    match (&since.old, &since.new) {
        (Some(_), None) => ConflictReason::Deleted,
        (None, Some(_)) => ConflictReason::Created,
        _ => ConflictReason::Changed,
    }
}

/// The first folder on the way to `rel` that is a symbolic link now and is not itself put
/// back by the same revert (which moves the link aside first): writing through it could reach
/// outside the folder.
fn linked_folder(
    root: &Path,
    rel: &str,
    replaced: &std::collections::BTreeSet<&str>,
) -> Option<String> {
    let mut at = String::new();
    let parents: Vec<_> = Path::new(rel).parent()?.iter().collect();
    for part in parents {
        if !at.is_empty() {
            at.push('/');
        }
        at.push_str(&part.to_string_lossy());
        let meta = root.join(&at).symlink_metadata().ok()?;
        if meta.file_type().is_symlink() {
            return (!replaced.contains(at.as_str())).then_some(at);
        }
        if !meta.is_dir() {
            return None;
        }
    }
    None
}

fn apply_error(rel: &str, e: &std::io::Error) -> CheckpointError {
    CheckpointError::Apply(format!("`{rel}`: {e}"))
}

fn temp_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(
        ".{name}{}{:016x}",
        crate::fs::TEMP_MARKER,
        crate::atomic_file::unique_suffix()
    ))
}

fn write_temp(temp: &Path, bytes: &[u8], mode: u32, bits: u32) -> std::io::Result<()> {
    if mode == MODE_LINK {
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            return std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(bytes), temp);
        }
        #[cfg(not(unix))]
        {
            // Links come back as small files holding their target where links need rights.
            return std::fs::write(temp, bytes);
        }
    }
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(temp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(temp, std::fs::Permissions::from_mode(bits))?;
    }
    #[cfg(not(unix))]
    let _ = bits;
    Ok(())
}

fn remove_any(path: &Path) -> std::io::Result<()> {
    std::fs::remove_file(path)
}

/// Folders emptied by deleting `path`, removed up to (not including) the root, as git does.
fn remove_empty_parents(path: &Path, root: &Path) {
    let mut d = path.parent();
    while let Some(dir) = d {
        if dir == root || !dir.starts_with(root) || std::fs::remove_dir(dir).is_err() {
            break;
        }
        d = dir.parent();
    }
}
