//! Taking checkpoints: before a step, after it, and of a file just before we write it.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::git::split_nul;
use super::repo::{Checkpoints, message_line};
use super::{ChangeSummary, CheckpointError, Snapshot, StepKind};

/// How long a write through us waits for the checkpoints' lock to keep the file first.
const SAVE_BEFORE_WRITE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// At most this many paths are named in a checkpoint's notes; the rest are counted.
const MAX_NAMED: usize = 20;

/// git's modes for regular files.
pub(super) const MODE_FILE: u32 = 0o100644;
pub(super) const MODE_EXEC: u32 = 0o100755;
pub(super) const MODE_LINK: u32 = 0o120000;
pub(super) const MODE_GITLINK: u32 = 0o160000;

impl Checkpoints {
    /// A new step of `session` (numbered after its last), with its `before` checkpoint.
    pub fn begin(
        &self,
        session: &str,
        kind: StepKind,
        undoes: Option<u32>,
    ) -> Result<Snapshot, CheckpointError> {
        let _lock = self.lock()?;
        self.begin_locked(session, kind, undoes)
    }

    pub(super) fn begin_locked(
        &self,
        session: &str,
        kind: StepKind,
        undoes: Option<u32>,
    ) -> Result<Snapshot, CheckpointError> {
        let started = Instant::now();
        let turn = self
            .load_steps(session)?
            .last()
            .map_or(1, |s| s.turn.saturating_add(1));
        let mut head = message_line("kind", kind.as_str());
        if let Some(u) = undoes {
            head.push_str(&message_line("undoes", &u.to_string()));
        }
        let notes = self.take(session, turn, "before", &head, &[], None)?;
        Ok(Snapshot {
            turn,
            took: started.elapsed(),
            notes,
        })
    }

    /// The `after` checkpoint of step `turn`: `written` are the files written through us (kept
    /// even when ignored), `watched` the files the folder watcher saw change (those in neither
    /// checkpoint are reported as not restorable). Returns what the step changed.
    pub fn finish(
        &self,
        session: &str,
        turn: u32,
        written: &[PathBuf],
        watched: &[PathBuf],
    ) -> Result<ChangeSummary, CheckpointError> {
        let _lock = self.lock()?;
        self.finish_locked(session, turn, written, watched)
    }

    pub(super) fn finish_locked(
        &self,
        session: &str,
        turn: u32,
        written: &[PathBuf],
        watched: &[PathBuf],
    ) -> Result<ChangeSummary, CheckpointError> {
        let step = self.find_step(session, turn)?;
        let kind = step.before_meta.kind.unwrap_or(StepKind::Turn);
        let mut head = message_line("kind", kind.as_str());
        if let Some(u) = step.before_meta.undoes {
            head.push_str(&message_line("undoes", &u.to_string()));
        }
        // Files a write changed before they could be kept: left out of the end as well, so
        // that an undo never deletes them as if the step had made them; named not restorable.
        let unsaved = {
            let mut all = self
                .writes
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            all.remove(&(session.to_owned(), turn))
                .map(|w| w.unsaved)
                .unwrap_or_default()
        };
        let forced: Vec<String> = written
            .iter()
            .filter_map(|p| self.relative(p).ok())
            .filter(|r| !unsaved.contains(r))
            .collect();
        let mut watched = watched.to_vec();
        watched.extend(unsaved.iter().map(|r| self.root.join(r)));
        let summary_of = |after: &str| self.summary(&step.before, after);
        self.take(
            session,
            turn,
            "after",
            &head,
            &forced,
            Some((&step.before, &watched, &summary_of)),
        )?;
        let step = self.find_step(session, turn)?;
        Ok(step.after_meta.and_then(|m| m.summary).unwrap_or_default())
    }

    /// Snapshots the folder into the index, then commits it as `refs/.../<turn>/<phase>`.
    /// `after`: the step's `before` commit, the watched paths, and how to sum up the change.
    #[allow(clippy::type_complexity)]
    fn take(
        &self,
        session: &str,
        turn: u32,
        phase: &str,
        head: &str,
        forced: &[String],
        after: Option<(
            &str,
            &[PathBuf],
            &dyn Fn(&str) -> Result<ChangeSummary, CheckpointError>,
        )>,
    ) -> Result<Vec<String>, CheckpointError> {
        let mut notes = Vec::new();
        self.stage(forced, &mut notes)?;
        let tree = self.git.run_str(["write-tree"])?;
        let modes = self.modes_blob(None)?;
        let wrapper = self.wrap(&tree, &modes)?;
        let mut message = format!("acp-desk checkpoint\n\n{head}");
        message.push_str(&message_line("phase", phase));
        let now = super::unix_now();
        message.push_str(&message_line("at", &now.to_string()));
        for n in &notes {
            message.push_str(&message_line("note", n));
        }
        let mut commit = self.commit(&wrapper, &message)?;
        if let Some((before, watched, summary_of)) = after {
            // The summary is the diff of this commit with `before`: commit, sum up, and commit
            // again with the summary in the message (trees are shared, so this costs a commit).
            let summary = summary_of(&commit)?;
            message.push_str(&message_line(
                "summary",
                &format!("{} {} {}", summary.files, summary.added, summary.removed),
            ));
            for path in self.unrestorable(before, &commit, watched)? {
                message.push_str(&message_line("unrestorable", &path));
            }
            commit = self.commit(&wrapper, &message)?;
        }
        self.git.run(
            ["update-ref", &Self::step_ref(session, turn, phase), &commit],
            None,
        )?;
        Ok(notes)
    }

    pub(super) fn commit(&self, tree: &str, message: &str) -> Result<String, CheckpointError> {
        let out = self
            .git
            .run(["commit-tree", tree, "-F", "-"], Some(message.as_bytes()))?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// The checkpoint's tree: `files` (the folder) and `modes`.
    pub(super) fn wrap(&self, files: &str, modes: &str) -> Result<String, CheckpointError> {
        let input = format!("040000 tree {files}\tfiles\n100644 blob {modes}\tmodes\n");
        let out = self.git.run(["mktree"], Some(input.as_bytes()))?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// Brings the index to the folder as it is: new, changed and deleted files, large files
    /// left out, `forced` files kept even when ignored. Notes say what was left out.
    fn stage(&self, forced: &[String], notes: &mut Vec<String>) -> Result<(), CheckpointError> {
        let listing = self.git.run(
            ["ls-files", "-z", "-t", "-o", "-m", "--exclude-standard"],
            None,
        )?;
        let mut large_untracked = Vec::new();
        let mut large_tracked = Vec::new();
        let mut nested = Vec::new();
        for entry in split_nul(&listing) {
            let Some((tag, rel)) = entry.split_once(' ') else {
                continue;
            };
            if rel.ends_with('/') {
                nested.push(rel.to_owned());
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(self.root.join(rel)) else {
                continue;
            };
            if meta.is_file() && meta.len() > self.settings.max_file_bytes {
                if tag == "?" {
                    large_untracked.push(rel.to_owned());
                } else {
                    large_tracked.push(rel.to_owned());
                }
            }
        }
        if !large_tracked.is_empty() {
            let mut input = Vec::new();
            for p in &large_tracked {
                input.extend_from_slice(p.as_bytes());
                input.push(0);
            }
            self.git.run(
                [
                    "--literal-pathspecs",
                    "rm",
                    "--cached",
                    // The index may hold a version that is neither the file's nor HEAD's (we
                    // have no HEAD): leaving it out of the index is all we want.
                    "--force",
                    "-q",
                    "--ignore-unmatch",
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                ],
                Some(&input),
            )?;
        }
        let large: Vec<&String> = large_untracked.iter().chain(&large_tracked).collect();
        let mut spec = b".\0".to_vec();
        for p in &large {
            spec.extend_from_slice(b":(exclude,literal)");
            spec.extend_from_slice(p.as_bytes());
            spec.push(0);
        }
        let out = self.git.output(
            [
                "add",
                "-A",
                "--ignore-errors",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
            ],
            Some(&spec),
            &[],
        )?;
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        let unreadable: Vec<&str> = said
            .lines()
            .filter_map(|l| l.strip_prefix("error: "))
            .filter(|l| !l.starts_with("unable to index file"))
            .collect();
        if !out.status.success() && unreadable.is_empty() {
            return Err(CheckpointError::Git(super::git::failure(&out)));
        }
        if !unreadable.is_empty() {
            notes.push(format!(
                "{} file(s) could not be read and are not in the checkpoint: {}",
                unreadable.len(),
                name_some(unreadable.iter().map(|s| s.to_string()))
            ));
        }
        // Never an empty list: `add -A -f` with no path would take every ignored file.
        let exists = |r: &&String| self.root.join(r).symlink_metadata().is_ok();
        if forced.iter().any(|r| exists(&r)) {
            // Gone ones are left to `add -A` above (a tracked file's deletion is staged there): git
            // refuses the whole list for one path that matches nothing.
            let existing: Vec<&String> = forced.iter().filter(exists).collect();
            let mut args: Vec<&OsStr> = ["add", "-A", "-f", "--ignore-errors", "--"]
                .iter()
                .map(OsStr::new)
                .collect();
            args.extend(existing.iter().map(|s| OsStr::new(s.as_str())));
            let out = self
                .git
                .output(args, None, &[("GIT_LITERAL_PATHSPECS", OsStr::new("1"))])?;
            if !out.status.success() {
                tracing::debug!("forced add: {}", super::git::failure(&out));
            }
        }
        if !large.is_empty() {
            notes.push(format!(
                "{} file(s) over {} MB are not in the checkpoint (the `checkpoints.max_file_mb` setting): {}",
                large.len(),
                self.settings.max_file_bytes / (1024 * 1024),
                name_some(large.iter().map(|s| s.to_string()))
            ));
        }
        let gitlinks = self.gitlinks()?;
        let sub: Vec<String> = nested
            .into_iter()
            .chain(gitlinks)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        if !sub.is_empty() {
            notes.push(format!(
                "{} submodule folder(s) are listed, not entered (their files are not checkpointed): {}",
                sub.len(),
                name_some(sub.into_iter())
            ));
        }
        Ok(())
    }

    fn gitlinks(&self) -> Result<Vec<String>, CheckpointError> {
        let out = self.git.run(["ls-files", "-z", "-s"], None)?;
        Ok(split_nul(&out)
            .filter(|l| l.starts_with("160000 "))
            .filter_map(|l| l.split_once('\t').map(|(_, p)| p.to_owned()))
            .collect())
    }

    /// The `modes` blob for the index as it is (or `extra` on top of a given record).
    fn modes_blob(
        &self,
        extra: Option<(BTreeMap<String, u32>, &str, u32)>,
    ) -> Result<String, CheckpointError> {
        let record = match extra {
            Some((mut record, path, bits)) => {
                record.insert(path.to_owned(), bits);
                record
            }
            None => self.index_modes()?,
        };
        let mut blob = Vec::new();
        for (path, bits) in &record {
            blob.extend_from_slice(format!("{bits:o} {path}").as_bytes());
            blob.push(0);
        }
        let out = self
            .git
            .run(["hash-object", "-w", "--stdin"], Some(&blob))?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// The permission bits of the index's files that git's modes (644, 755) do not say.
    fn index_modes(&self) -> Result<BTreeMap<String, u32>, CheckpointError> {
        let mut record = BTreeMap::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let out = self.git.run(["ls-files", "-z", "-s"], None)?;
            for line in split_nul(&out) {
                let Some((head, path)) = line.split_once('\t') else {
                    continue;
                };
                let exec = if head.starts_with("100755 ") {
                    true
                } else if head.starts_with("100644 ") {
                    false
                } else {
                    continue;
                };
                let Ok(meta) = std::fs::symlink_metadata(self.root.join(path)) else {
                    continue;
                };
                let bits = meta.permissions().mode() & 0o7777;
                if bits != default_bits(exec) {
                    record.insert(path.to_owned(), bits);
                }
            }
        }
        Ok(record)
    }

    /// Saves `path` as it is now into the `before` checkpoint of step `turn`, if that
    /// checkpoint lacks it (an ignored or large file, about to be written through us), and keeps
    /// it in later checkpoints. Returns whether it saved anything.
    pub fn save_before_write(
        &self,
        session: &str,
        turn: u32,
        path: &Path,
    ) -> Result<bool, CheckpointError> {
        let rel = self.relative(path)?;
        let key = (session.to_owned(), turn);
        let Ok(meta) = std::fs::symlink_metadata(self.root.join(&rel)) else {
            // This write creates it: a later write in the step must not keep the agent's own
            // first version as what was there before.
            self.step_writes(&key, |w| w.created.insert(rel.clone()));
            return Ok(false);
        };
        if !meta.is_file() {
            return Ok(false);
        }
        let seen = self.step_writes(&key, |w| {
            w.created.contains(&rel) || w.kept.contains(&rel) || w.unsaved.contains(&rel)
        });
        if seen {
            return Ok(false);
        }
        let result = self.keep_before_write(session, turn, &rel, &meta);
        self.step_writes(&key, |w| match &result {
            Ok(_) => w.kept.insert(rel.clone()),
            Err(_) => w.unsaved.insert(rel.clone()),
        });
        result
    }

    /// What a step's writes through us met so far, under the shared lock.
    pub(super) fn step_writes<T>(
        &self,
        key: &(String, u32),
        f: impl FnOnce(&mut super::repo::StepWrites) -> T,
    ) -> T {
        let mut all = self
            .writes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(all.entry(key.clone()).or_default())
    }

    fn keep_before_write(
        &self,
        session: &str,
        turn: u32,
        rel: &str,
        meta: &std::fs::Metadata,
    ) -> Result<bool, CheckpointError> {
        let rel = rel.to_owned();
        // The agent's write waits for this: never for a whole snapshot of another session.
        let Some(_lock) = self.lock_within(SAVE_BEFORE_WRITE_WAIT)? else {
            return Err(CheckpointError::Io {
                what: format!(
                    "another checkpoint of the folder held it for {} s, so `{rel}` was written without keeping its earlier version",
                    SAVE_BEFORE_WRITE_WAIT.as_secs()
                ),
                source: std::io::ErrorKind::TimedOut.into(),
            });
        };
        let step = self.find_step(session, turn)?;
        if !self
            .entries(&step.before, std::slice::from_ref(&rel))?
            .is_empty()
        {
            return Ok(false);
        }
        // Not in `before` and not made by this step's writes: kept as it is now, even when the
        // agent's shell made it since the step began (its undo then writes that version back
        // rather than deleting it): the user or another session may have made it, and an undo
        // must never delete their file.
        let blob = self.git.run_str([
            OsStr::new("hash-object"),
            OsStr::new("-w"),
            OsStr::new("--no-filters"),
            OsStr::new("--"),
            self.root.join(&rel).as_os_str(),
        ])?;
        let (exec, bits) = file_bits(meta);
        let mode = if exec { MODE_EXEC } else { MODE_FILE };
        let info = format!("{mode:o} {blob}\t{rel}\0");
        // The step's tree with the file added, through an index of its own.
        let tmp_index = self
            .shadow
            .join(format!("index-{}", crate::atomic_file::unique_suffix()));
        let tmp_env = [("GIT_INDEX_FILE", tmp_index.as_os_str())];
        let result = (|| {
            let files = format!("{}:files", step.before);
            let run = |args: &[&str], input: Option<&[u8]>| {
                let out = self.git.output(args, input, &tmp_env)?;
                if out.status.success() {
                    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
                } else {
                    Err(CheckpointError::Git(super::git::failure(&out)))
                }
            };
            run(&["read-tree", &files], None)?;
            run(
                &["update-index", "-z", "--index-info"],
                Some(info.as_bytes()),
            )?;
            run(&["write-tree"], None)
        })();
        let _ = std::fs::remove_file(&tmp_index);
        let tree = result?;
        let mut record = self.modes(&step.before)?;
        let modes = if bits != default_bits(exec) {
            self.modes_blob(Some((std::mem::take(&mut record), &rel, bits)))?
        } else {
            self.git
                .run_str(["rev-parse", &format!("{}:modes", step.before)])?
        };
        let wrapper = self.wrap(&tree, &modes)?;
        let message = self.git.run(["cat-file", "commit", &step.before], None)?;
        let message = String::from_utf8_lossy(&message);
        let message = message.split_once("\n\n").map_or("", |(_, m)| m);
        let commit = self.commit(&wrapper, message)?;
        self.git.run(
            [
                "update-ref",
                &Self::step_ref(session, turn, "before"),
                &commit,
            ],
            None,
        )?;
        // Tracked from now on, so that later checkpoints keep it, ignored or not.
        self.git.run(
            ["update-index", "-z", "--index-info"],
            Some(info.as_bytes()),
        )?;
        Ok(true)
    }

    /// Files the watcher saw change that are in neither checkpoint (ignored or left out), and
    /// still there: changes we cannot undo.
    fn unrestorable(
        &self,
        before: &str,
        after: &str,
        watched: &[PathBuf],
    ) -> Result<Vec<String>, CheckpointError> {
        let rels: Vec<String> = watched
            .iter()
            .filter_map(|p| self.relative(p).ok())
            .filter(|rel| !rel.is_empty() && !rel.split('/').any(|c| c == ".git"))
            .filter(|rel| {
                self.root
                    .join(rel)
                    .symlink_metadata()
                    .is_ok_and(|m| m.is_file())
            })
            .collect();
        let mut out = Vec::new();
        if !rels.is_empty() {
            let a = self.entries(before, &rels)?;
            let b = self.entries(after, &rels)?;
            out.extend(
                rels.into_iter()
                    .filter(|r| !a.contains_key(r) && !b.contains_key(r)),
            );
        }
        // The folder watcher never reports ignored files: those changed since the step began
        // are found by their times (an ignored folder by any file in it, looked at up to
        // `IGNORED_WALK` entries).
        let message = self.git.run(["cat-file", "commit", before], None)?;
        let since = super::repo::parse_message(&String::from_utf8_lossy(&message)).at;
        let listing = self.git.run(
            [
                "ls-files",
                "-z",
                "-o",
                "-i",
                "--exclude-standard",
                "--directory",
                "--no-empty-directory",
            ],
            None,
        )?;
        let mut budget = IGNORED_WALK;
        for rel in split_nul(&listing) {
            if out.len() >= MAX_UNRESTORABLE || budget == 0 {
                break;
            }
            let known = out
                .iter()
                .any(|o| o == &rel || (rel.ends_with('/') && o.starts_with(&rel)));
            if known || rel.split('/').any(|c| c == ".git") {
                continue;
            }
            if changed_since(&self.root.join(&rel), since, &mut budget) {
                out.push(rel);
            }
        }
        out.truncate(MAX_UNRESTORABLE);
        Ok(out)
    }
}

/// At most this many files (or folders) are listed as not restorable.
const MAX_UNRESTORABLE: usize = 200;

/// Entries of ignored folders looked at, in all, for changes since a step began.
const IGNORED_WALK: usize = 20_000;

/// Whether `path` (a file, or anything in a folder) was modified at or after `since` (Unix
/// seconds), looking at no more than `budget` entries.
fn changed_since(path: &Path, since: i64, budget: &mut usize) -> bool {
    let newer = |m: &std::fs::Metadata| {
        m.modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .is_some_and(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX) >= since)
    };
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if newer(&meta) {
            return true;
        }
        if meta.is_dir()
            && let Ok(entries) = std::fs::read_dir(&p)
        {
            stack.extend(entries.flatten().map(|e| e.path()));
        }
    }
    false
}

/// The bits a file restored with git's mode gets: 755 or 644.
pub(super) fn default_bits(exec: bool) -> u32 {
    if exec { 0o755 } else { 0o644 }
}

/// Whether a file is executable (by its owner) and its permission bits.
pub(super) fn file_bits(meta: &std::fs::Metadata) -> (bool, u32) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let bits = meta.permissions().mode() & 0o7777;
        (bits & 0o100 != 0, bits)
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        (false, 0o644)
    }
}

fn name_some(paths: impl Iterator<Item = String>) -> String {
    let all: Vec<String> = paths.collect();
    let mut s = all
        .iter()
        .take(MAX_NAMED)
        .map(|p| format!("`{p}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if all.len() > MAX_NAMED {
        s.push_str(&format!(" and {} more", all.len() - MAX_NAMED));
    }
    s
}
