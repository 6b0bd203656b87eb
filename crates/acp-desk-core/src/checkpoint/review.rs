//! Reviewing: what a step (or the whole session) changed, and the versions of one file.

use std::collections::BTreeMap;

use super::git::split_nul;
use super::repo::{Checkpoints, Step};
use super::snapshot::{MODE_EXEC, MODE_GITLINK, MODE_LINK, default_bits};
use super::{
    ChangeSummary, Changes, CheckpointError, FileChange, FileStatus, FileVersion, FileVersions,
    MAX_TEXT_BYTES,
};

/// One path of a raw diff: the entry on each side (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RawChange {
    pub(super) path: String,
    pub(super) old_path: Option<String>,
    pub(super) status: char,
    pub(super) old: Option<(u32, String)>,
    pub(super) new: Option<(u32, String)>,
}

impl Checkpoints {
    /// What step `turn` changed; `None`: everything the session changed since its first step.
    pub fn changes(&self, session: &str, turn: Option<u32>) -> Result<Changes, CheckpointError> {
        let span = self.span(session, turn)?;
        let (from, to) = (span.from, span.to);
        let metas = span.steps.iter().filter_map(|s| s.after_meta.as_ref());
        let mut unrestorable: Vec<String> =
            metas.flat_map(|m| m.unrestorable.iter().cloned()).collect();
        let mut notes = Vec::new();
        if let [step] = &span.steps[..] {
            notes = step.before_meta.notes.clone();
            notes.extend(step.after_meta.iter().flat_map(|m| m.notes.iter().cloned()));
            notes.dedup();
        } else {
            unrestorable.sort();
            unrestorable.dedup();
        }
        let files = self.file_changes(&from, &to)?;
        let summary = sum(&files);
        Ok(Changes {
            turn,
            files,
            summary,
            unrestorable,
            notes,
        })
    }

    /// Files, lines added and removed between two checkpoints.
    pub(super) fn summary(&self, from: &str, to: &str) -> Result<ChangeSummary, CheckpointError> {
        Ok(sum(&self.file_changes(from, to)?))
    }

    /// The files that differ between two checkpoints, renames found, mode-only changes included.
    pub(super) fn file_changes(
        &self,
        from: &str,
        to: &str,
    ) -> Result<Vec<FileChange>, CheckpointError> {
        let raw = self.raw_diff(from, to, true, &[])?;
        let numstat = self.numstat(from, to)?;
        let mut files: Vec<FileChange> = raw
            .into_iter()
            .map(|r| {
                let submodule = r.old.as_ref().is_some_and(|e| e.0 == MODE_GITLINK)
                    || r.new.as_ref().is_some_and(|e| e.0 == MODE_GITLINK);
                let mode_only = matches!((&r.old, &r.new), (Some(a), Some(b)) if a.1 == b.1);
                let status = match r.status {
                    'A' => FileStatus::Added,
                    'D' => FileStatus::Deleted,
                    'R' => FileStatus::Renamed,
                    'T' => FileStatus::TypeChanged,
                    _ => FileStatus::Modified,
                };
                let counts = numstat.get(&r.path).copied().flatten();
                FileChange {
                    binary: !submodule && numstat.contains_key(&r.path) && counts.is_none(),
                    added: counts.map(|c| c.0),
                    removed: counts.map(|c| c.1),
                    path: r.path,
                    old_path: r.old_path,
                    status,
                    submodule,
                    mode_only,
                }
            })
            .collect();
        // Mode bits git does not keep (600, 664...): from our records.
        let (ma, mb) = (self.modes(from)?, self.modes(to)?);
        let mut paths: Vec<&String> = ma.keys().chain(mb.keys()).collect();
        paths.sort();
        paths.dedup();
        let unchanged: Vec<String> = paths
            .into_iter()
            .filter(|p| !files.iter().any(|f| &f.path == *p))
            .cloned()
            .collect();
        if !unchanged.is_empty() {
            let ea = self.entries(from, &unchanged)?;
            for p in unchanged {
                let Some((mode, _)) = ea.get(&p) else {
                    continue;
                };
                let exec = *mode == MODE_EXEC;
                let bits =
                    |m: &BTreeMap<String, u32>| m.get(&p).copied().unwrap_or(default_bits(exec));
                if bits(&ma) != bits(&mb) {
                    files.push(FileChange {
                        path: p,
                        old_path: None,
                        status: FileStatus::Modified,
                        added: Some(0),
                        removed: Some(0),
                        binary: false,
                        submodule: false,
                        mode_only: true,
                    });
                }
            }
            files.sort_by(|a, b| a.path.cmp(&b.path));
        }
        Ok(files)
    }

    /// `git diff --raw` of two checkpoints' folders (renames found when `renames`), for
    /// `paths` only when given.
    pub(super) fn raw_diff(
        &self,
        from: &str,
        to: &str,
        renames: bool,
        paths: &[String],
    ) -> Result<Vec<RawChange>, CheckpointError> {
        let mut args: Vec<String> = vec![
            "--literal-pathspecs".into(),
            "diff".into(),
            "--raw".into(),
            "-z".into(),
            "--no-abbrev".into(),
            "--no-ext-diff".into(),
            "--ignore-submodules=none".into(),
            if renames { "-M" } else { "--no-renames" }.into(),
            format!("{from}:files"),
            format!("{to}:files"),
        ];
        if !paths.is_empty() {
            args.push("--".into());
            args.extend(paths.iter().cloned());
        }
        let out = self.git.run(&args, None)?;
        let fields: Vec<String> = split_nul(&out).collect();
        let mut changes = Vec::new();
        let mut i = 0;
        while i < fields.len() {
            let head = fields[i].trim_start_matches(':');
            let parts: Vec<&str> = head.split(' ').collect();
            i += 1;
            let [m1, m2, s1, s2, status] = parts[..] else {
                continue;
            };
            let letter = status.chars().next().unwrap_or('M');
            let entry = |m: &str, s: &str| {
                let mode = u32::from_str_radix(m, 8).unwrap_or(0);
                (mode != 0).then(|| (mode, s.to_owned()))
            };
            let (old, new) = (entry(m1, s1), entry(m2, s2));
            let Some(first) = fields.get(i).cloned() else {
                break;
            };
            i += 1;
            let (path, old_path) = if letter == 'R' || letter == 'C' {
                let Some(second) = fields.get(i).cloned() else {
                    break;
                };
                i += 1;
                (second, Some(first))
            } else {
                (first, None)
            };
            changes.push(RawChange {
                path,
                old_path,
                status: letter,
                old,
                new,
            });
        }
        Ok(changes)
    }

    /// Lines added and removed per (new) path; `None` for binary files.
    fn numstat(
        &self,
        from: &str,
        to: &str,
    ) -> Result<BTreeMap<String, Option<(u32, u32)>>, CheckpointError> {
        let out = self.git.run(
            [
                "diff".to_owned(),
                "--numstat".into(),
                "-z".into(),
                "-M".into(),
                "--no-ext-diff".into(),
                "--no-textconv".into(),
                format!("{from}:files"),
                format!("{to}:files"),
            ],
            None,
        )?;
        let fields: Vec<String> = split_nul(&out).collect();
        let mut map = BTreeMap::new();
        let mut i = 0;
        while i < fields.len() {
            let f = &fields[i];
            i += 1;
            let mut parts = f.splitn(3, '\t');
            let (Some(a), Some(r), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
                continue;
            };
            let path = if path.is_empty() {
                // A rename: the old path, then the new one.
                i += 2;
                fields.get(i - 1).cloned().unwrap_or_default()
            } else {
                path.to_owned()
            };
            let counts = match (a.parse::<u32>(), r.parse::<u32>()) {
                (Ok(a), Ok(r)) => Some((a, r)),
                _ => None,
            };
            map.insert(path, counts);
        }
        Ok(map)
    }

    /// A file before step `turn`, after it, and now (`turn` `None`: at the session's start and
    /// at its latest checkpoint). `old_path`: where a renamed file was before.
    pub fn file_versions(
        &self,
        session: &str,
        turn: Option<u32>,
        path: &str,
        old_path: Option<&str>,
    ) -> Result<FileVersions, CheckpointError> {
        let Span { from, to, .. } = self.span(session, turn)?;
        let rel = self.relative(std::path::Path::new(path))?;
        let before_path =
            old_path.map_or(Ok(rel.clone()), |p| self.relative(std::path::Path::new(p)))?;
        Ok(FileVersions {
            before: self.version_in(&from, &before_path)?,
            after: self.version_in(&to, &rel)?,
            now: version_on_disk(&self.root.join(&rel)),
            path: rel,
        })
    }

    pub(super) fn version_in(
        &self,
        commit: &str,
        rel: &str,
    ) -> Result<Option<FileVersion>, CheckpointError> {
        let entries = self.entries(commit, &[rel.to_owned()])?;
        let Some((mode, id)) = entries.get(rel) else {
            return Ok(None);
        };
        if *mode == MODE_GITLINK {
            return Ok(Some(FileVersion {
                text: Some(format!("Subproject commit {id}\n")),
                bytes: 0,
                binary: false,
                executable: false,
                link: None,
            }));
        }
        let size: u64 = self
            .git
            .run_str(["cat-file", "-s", id])?
            .parse()
            .unwrap_or(0);
        if *mode == MODE_LINK || size <= MAX_TEXT_BYTES {
            let bytes = self
                .git
                .blobs(std::slice::from_ref(id))?
                .pop()
                .flatten()
                .unwrap_or_default();
            if *mode == MODE_LINK {
                return Ok(Some(FileVersion {
                    text: None,
                    bytes: size,
                    binary: false,
                    executable: false,
                    link: Some(String::from_utf8_lossy(&bytes).into_owned()),
                }));
            }
            return Ok(Some(version_of(&bytes, *mode == MODE_EXEC)));
        }
        Ok(Some(FileVersion {
            text: None,
            bytes: size,
            binary: false,
            executable: *mode == MODE_EXEC,
            link: None,
        }))
    }
}

/// What a review covers: one step (`turn`), or every step of the session (`None`), from its
/// first `before` to its last checkpoint.
struct Span {
    from: String,
    to: String,
    steps: Vec<Step>,
}

impl Checkpoints {
    fn span(&self, session: &str, turn: Option<u32>) -> Result<Span, CheckpointError> {
        match turn {
            Some(t) => {
                let step = self.find_step(session, t)?;
                let to = step
                    .after
                    .clone()
                    .ok_or(CheckpointError::Incomplete { turn: t })?;
                Ok(Span {
                    from: step.before.clone(),
                    to,
                    steps: vec![step],
                })
            }
            None => {
                let steps = self.load_steps(session)?;
                let (Some(first), Some(last)) = (steps.first(), steps.last()) else {
                    return Err(CheckpointError::UnknownStep { turn: 1 });
                };
                Ok(Span {
                    from: first.before.clone(),
                    to: latest(last),
                    steps,
                })
            }
        }
    }
}

/// The last checkpoint of a step: its `after`, else its `before`.
pub(super) fn latest(step: &Step) -> String {
    step.after.clone().unwrap_or_else(|| step.before.clone())
}

fn sum(files: &[FileChange]) -> ChangeSummary {
    ChangeSummary {
        files: u32::try_from(files.len()).unwrap_or(u32::MAX),
        added: files.iter().filter_map(|f| f.added).sum(),
        removed: files.iter().filter_map(|f| f.removed).sum(),
    }
}

fn version_of(bytes: &[u8], executable: bool) -> FileVersion {
    let probe = &bytes[..bytes.len().min(8000)];
    let text = if probe.contains(&0) {
        None
    } else {
        std::str::from_utf8(bytes).ok().map(str::to_owned)
    };
    FileVersion {
        binary: text.is_none(),
        text,
        bytes: bytes.len() as u64,
        executable,
        link: None,
    }
}

fn version_on_disk(path: &std::path::Path) -> Option<FileVersion> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path).ok()?;
        return Some(FileVersion {
            text: None,
            bytes: 0,
            binary: false,
            executable: false,
            link: Some(target.to_string_lossy().into_owned()),
        });
    }
    if !meta.is_file() {
        return None;
    }
    let (exec, _) = super::snapshot::file_bits(&meta);
    if meta.len() > MAX_TEXT_BYTES {
        return Some(FileVersion {
            text: None,
            bytes: meta.len(),
            binary: false,
            executable: exec,
            link: None,
        });
    }
    let bytes = std::fs::read(path).ok()?;
    Some(version_of(&bytes, exec))
}
