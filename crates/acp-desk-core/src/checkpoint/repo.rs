//! The shadow repository of one project folder: where it is, opening it, its locks, and its
//! steps as refs and commit messages.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::git::{Git, split_nul};
use super::{CheckpointError, CheckpointSettings, StepInfo, StepKind};

/// Our ignores, on top of the project's: editors' and systems' litter, and our own temp files.
const BASE_EXCLUDES: &str = "\
.DS_Store
Thumbs.db
desktop.ini
.*.acpdesk-tmp-*
";

/// The shadow repository of a project folder.
#[derive(Debug, Clone)]
pub struct Checkpoints {
    pub(super) git: Git,
    pub(super) shadow: PathBuf,
    pub(super) root: PathBuf,
    pub(super) settings: CheckpointSettings,
    /// What writes through us did during each running step of this process's sessions (by
    /// session and step): shared by the clones a session hands its writes and its turn's end.
    pub(super) writes: std::sync::Arc<std::sync::Mutex<BTreeMap<(String, u32), StepWrites>>>,
}

/// The files a step's writes through us met: those it created (never "kept before" by a later
/// write of the same step), those kept, and those that could not be kept (their change cannot
/// be undone: they are left out of the step's end and named as not restorable).
#[derive(Debug, Default, Clone)]
pub(super) struct StepWrites {
    pub(super) created: std::collections::BTreeSet<String>,
    pub(super) kept: std::collections::BTreeSet<String>,
    pub(super) unsaved: std::collections::BTreeSet<String>,
}

/// Held by a running turn: while any is held in the folder, reverts are refused.
#[derive(Debug)]
pub struct TurnGuard {
    _file: File,
}

/// Held while the shadow repository is changed.
pub(super) struct RepoLock {
    _file: File,
}

/// One checkpoint commit, as its message says.
#[derive(Debug, Clone, Default)]
pub(super) struct Meta {
    pub(super) kind: Option<StepKind>,
    pub(super) undoes: Option<u32>,
    pub(super) at: i64,
    pub(super) notes: Vec<String>,
    pub(super) unrestorable: Vec<String>,
    pub(super) summary: Option<super::ChangeSummary>,
}

/// A step's checkpoints.
#[derive(Debug, Clone)]
pub(super) struct Step {
    pub(super) turn: u32,
    pub(super) before: String,
    pub(super) before_meta: Meta,
    pub(super) after: Option<String>,
    pub(super) after_meta: Option<Meta>,
}

impl Checkpoints {
    /// The shadow folder of `root` under `base` (`<data>/checkpoints`).
    pub fn shadow_dir(base: &Path, root: &Path) -> PathBuf {
        let digest = Sha256::digest(root.as_os_str().as_encoded_bytes());
        let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        base.join(hex)
    }

    /// Opens (creating it the first time) the shadow repository of the folder `root` under
    /// `base`. `git`: the program, else found on PATH. `excluded`: ACP Desk's own files that may
    /// lie inside `root` (the history, the audit folder), never checkpointed.
    pub fn open(
        base: &Path,
        root: &Path,
        settings: &CheckpointSettings,
        git: Option<PathBuf>,
        excluded: &[PathBuf],
    ) -> Result<Checkpoints, CheckpointError> {
        if !settings.enabled {
            return Err(CheckpointError::Disabled);
        }
        let bin = match git {
            Some(given) => super::git::runs(&given).then_some(given),
            None => super::find_git(),
        }
        .ok_or(CheckpointError::NoGit)?;
        let root = root.canonicalize().map_err(CheckpointError::io(format!(
            "could not open {}",
            root.display()
        )))?;
        let shadow = Self::shadow_dir(base, &root);
        private_dirs(&shadow).map_err(CheckpointError::io(format!(
            "could not create {}",
            shadow.display()
        )))?;
        let me = Checkpoints {
            git: Git::new(bin, &shadow, root.clone()),
            shadow: shadow.clone(),
            root,
            settings: settings.clone(),
            writes: Default::default(),
        };
        let _lock = me.lock()?;
        me.write_own_files(base, excluded)?;
        if !me.git.git_dir.join("HEAD").exists() {
            me.git.init()?;
            me.git.run(["config", "core.bare", "false"], None)?;
            // Ours are never fetched or shown: the smallest index, and no reflogs.
            me.git.run(["config", "index.version", "4"], None)?;
        }
        Ok(me)
    }

    fn write_own_files(&self, base: &Path, excluded: &[PathBuf]) -> Result<(), CheckpointError> {
        let write = |path: PathBuf, text: &[u8]| {
            if std::fs::read(&path).ok().as_deref() == Some(text) {
                return Ok(());
            }
            crate::atomic_file::write_atomic(&path, text).map_err(CheckpointError::io(format!(
                "could not write {}",
                path.display()
            )))
        };
        write(self.shadow.join("empty-config"), b"")?;
        write(
            self.shadow.join("root"),
            self.root.as_os_str().as_encoded_bytes(),
        )?;
        let mut ex = String::from(BASE_EXCLUDES);
        // The user's own ignores (their global file; the project's `.git/info/exclude`), as git
        // would read them for the project, since we do not read their config.
        for extra in [
            user_excludes_file(&self.git.bin),
            Some(self.root.join(".git/info/exclude")),
        ]
        .into_iter()
        .flatten()
        {
            if let Ok(text) = std::fs::read_to_string(extra) {
                ex.push_str(&text);
                ex.push('\n');
            }
        }
        let mut own = excluded.to_vec();
        own.push(base.to_path_buf());
        for path in own {
            if let Ok(rel) = path.strip_prefix(&self.root) {
                let rel = rel.to_string_lossy().replace('\\', "/");
                if !rel.is_empty() {
                    ex.push('/');
                    ex.push_str(&escape_glob(&rel));
                    ex.push('\n');
                }
            }
        }
        // An opener with no files of its own to leave out (a review of a stored session, the
        // CLI) keeps the list a session wrote: rewriting it would drop that session's own.
        let excludes = self.shadow.join("excludes");
        if !excluded.is_empty() || !excludes.exists() {
            write(excludes, ex.as_bytes())?;
        }
        // `* -text -filter -ident`: the bytes stored are the bytes on disk, whatever the
        // project's `.gitattributes` say (no line-ending conversion, no LFS or other filters).
        let info = self.git.git_dir.join("info");
        write(
            info.join("attributes"),
            b"* -text -filter -ident -working-tree-encoding\n",
        )?;
        Ok(())
    }

    /// The project folder (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The shadow folder.
    pub fn shadow(&self) -> &Path {
        &self.shadow
    }

    /// Blocks until no other process or session changes the shadow repository.
    pub(super) fn lock(&self) -> Result<RepoLock, CheckpointError> {
        let file = self.lock_file("lock")?;
        file.lock()
            .map_err(CheckpointError::io("could not lock the checkpoints"))?;
        self.recover_interrupted();
        Ok(RepoLock { _file: file })
    }

    /// [`Checkpoints::lock`], waiting at most `wait`: `None` when another holds it that long
    /// (a large snapshot of another session): for work that must not hold up the agent.
    pub(super) fn lock_within(
        &self,
        wait: std::time::Duration,
    ) -> Result<Option<RepoLock>, CheckpointError> {
        let file = self.lock_file("lock")?;
        let deadline = std::time::Instant::now() + wait;
        loop {
            match file.try_lock() {
                Ok(()) => {
                    self.recover_interrupted();
                    return Ok(Some(RepoLock { _file: file }));
                }
                Err(TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(TryLockError::WouldBlock) => return Ok(None),
                Err(TryLockError::Error(e)) => {
                    return Err(CheckpointError::Io {
                        what: "could not lock the checkpoints".into(),
                        source: e,
                    });
                }
            }
        }
    }

    fn lock_file(&self, name: &str) -> Result<File, CheckpointError> {
        let path = self.shadow.join(name);
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(CheckpointError::io(format!(
                "could not open {}",
                path.display()
            )))
    }

    /// Marks a turn as running in the folder until the guard is dropped (waits while a revert
    /// runs).
    pub fn turn_guard(&self) -> Result<TurnGuard, CheckpointError> {
        let file = self.lock_file("turns.lock")?;
        file.lock_shared()
            .map_err(CheckpointError::io("could not lock the checkpoints"))?;
        Ok(TurnGuard { _file: file })
    }

    /// Holds off new turns in the folder, or says that one runs.
    pub(super) fn no_turn_running(&self) -> Result<File, CheckpointError> {
        let file = self.lock_file("turns.lock")?;
        match file.try_lock() {
            Ok(()) => Ok(file),
            Err(TryLockError::WouldBlock) => Err(CheckpointError::TurnRunning),
            Err(TryLockError::Error(e)) => Err(CheckpointError::Io {
                what: "could not lock the checkpoints".into(),
                source: e,
            }),
        }
    }

    pub(super) fn step_ref(session: &str, turn: u32, phase: &str) -> String {
        format!("refs/acpdesk/{}/{turn:06}/{phase}", ref_component(session))
    }

    pub(super) fn session_prefix(session: &str) -> String {
        format!("refs/acpdesk/{}/", ref_component(session))
    }

    /// The session's steps, oldest first.
    pub(super) fn load_steps(&self, session: &str) -> Result<Vec<Step>, CheckpointError> {
        let all = self.refs(&Self::session_prefix(session))?;
        Ok(all.into_values().next().unwrap_or_default())
    }

    /// Every step under `prefix`, by session component.
    pub(super) fn refs(
        &self,
        prefix: &str,
    ) -> Result<BTreeMap<String, Vec<Step>>, CheckpointError> {
        let out = self.git.run(
            [
                "for-each-ref",
                "--format=%(refname)%00%(objectname)%00%(contents)%00%00",
                prefix,
            ],
            None,
        )?;
        let text = String::from_utf8_lossy(&out);
        let mut by_session: BTreeMap<String, BTreeMap<u32, Step>> = BTreeMap::new();
        for record in text.split("\0\0") {
            let mut fields = record.trim_start_matches('\n').splitn(3, '\0');
            let (Some(name), Some(id), Some(message)) =
                (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            let parts: Vec<&str> = name.split('/').collect();
            // refs/acpdesk/<session>/<turn>/<phase>
            let [_, _, session, turn, phase] = parts[..] else {
                continue;
            };
            let Ok(turn) = turn.parse::<u32>() else {
                continue;
            };
            let meta = parse_message(message);
            let step = by_session
                .entry(session.to_owned())
                .or_default()
                .entry(turn)
                .or_insert_with(|| Step {
                    turn,
                    before: String::new(),
                    before_meta: Meta::default(),
                    after: None,
                    after_meta: None,
                });
            match phase {
                "before" => {
                    step.before = id.to_owned();
                    step.before_meta = meta;
                }
                "after" => {
                    step.after = Some(id.to_owned());
                    step.after_meta = Some(meta);
                }
                _ => {}
            }
        }
        Ok(by_session
            .into_iter()
            .map(|(s, steps)| {
                let steps = steps
                    .into_values()
                    .filter(|s| !s.before.is_empty())
                    .collect();
                (s, steps)
            })
            .collect())
    }

    pub(super) fn find_step(&self, session: &str, turn: u32) -> Result<Step, CheckpointError> {
        self.load_steps(session)?
            .into_iter()
            .find(|s| s.turn == turn)
            .ok_or(CheckpointError::UnknownStep { turn })
    }

    /// The session's steps, as `changes` lists them.
    pub fn steps(&self, session: &str) -> Result<Vec<StepInfo>, CheckpointError> {
        let steps = self.load_steps(session)?;
        let mut infos: Vec<StepInfo> = steps
            .iter()
            .map(|s| {
                let mut notes = s.before_meta.notes.clone();
                if let Some(a) = &s.after_meta {
                    notes.extend(a.notes.iter().cloned());
                }
                notes.dedup();
                StepInfo {
                    turn: s.turn,
                    kind: s.before_meta.kind.unwrap_or(StepKind::Turn),
                    undoes: s.before_meta.undoes,
                    at: chrono::DateTime::from_timestamp(s.before_meta.at, 0)
                        .unwrap_or_default()
                        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                    complete: s.after.is_some(),
                    summary: s.after_meta.as_ref().and_then(|m| m.summary),
                    undone_by: Vec::new(),
                    notes,
                }
            })
            .collect();
        let undoers: Vec<(u32, u32)> = infos
            .iter()
            .filter(|i| i.kind == StepKind::Revert && i.complete)
            .filter_map(|i| i.undoes.map(|u| (u, i.turn)))
            .collect();
        for (undone, by) in undoers {
            if let Some(i) = infos.iter_mut().find(|i| i.turn == undone) {
                i.undone_by.push(by);
            }
        }
        Ok(infos)
    }

    /// The path relative to the folder, `/`-separated; an error outside it.
    pub(super) fn relative(&self, path: &Path) -> Result<String, CheckpointError> {
        let abs = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root.join(path)
        };
        let rel = abs
            .strip_prefix(&self.root)
            .map_err(|_| CheckpointError::Outside(path.to_path_buf()))?;
        if rel
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err(CheckpointError::Outside(path.to_path_buf()));
        }
        Ok(rel.to_string_lossy().replace('\\', "/"))
    }

    /// `git ls-tree` of a checkpoint's folder, for some paths (all when empty): path → (mode,
    /// object id).
    pub(super) fn entries(
        &self,
        commit: &str,
        paths: &[String],
    ) -> Result<BTreeMap<String, (u32, String)>, CheckpointError> {
        let mut args = vec![
            "--literal-pathspecs".to_owned(),
            "ls-tree".into(),
            "-r".into(),
            "-z".into(),
            "--full-tree".into(),
            format!("{commit}:files"),
        ];
        if !paths.is_empty() {
            args.push("--".into());
            args.extend(paths.iter().cloned());
        }
        let out = self.git.run(&args, None)?;
        let mut map = BTreeMap::new();
        for line in split_nul(&out) {
            // <mode> SP <type> SP <object> TAB <path>
            let Some((head, path)) = line.split_once('\t') else {
                continue;
            };
            let mut h = head.split(' ');
            let (Some(mode), Some(_), Some(id)) = (h.next(), h.next(), h.next()) else {
                continue;
            };
            let Ok(mode) = u32::from_str_radix(mode, 8) else {
                continue;
            };
            map.insert(path.to_owned(), (mode, id.to_owned()));
        }
        Ok(map)
    }

    /// A checkpoint's record of mode bits: path → permission bits.
    pub(super) fn modes(&self, commit: &str) -> Result<BTreeMap<String, u32>, CheckpointError> {
        let out = self
            .git
            .output(["cat-file", "blob", &format!("{commit}:modes")], None, &[])?;
        let mut map = BTreeMap::new();
        if !out.status.success() {
            return Ok(map);
        }
        for rec in split_nul(&out.stdout) {
            if let Some((mode, path)) = rec.split_once(' ')
                && let Ok(mode) = u32::from_str_radix(mode, 8)
            {
                map.insert(path.to_owned(), mode);
            }
        }
        Ok(map)
    }
}

/// A session id as one ref component: kept when it is plain, else hex.
fn ref_component(session: &str) -> String {
    let plain = !session.is_empty()
        && session.len() <= 100
        && session
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && !session.starts_with('-');
    if plain {
        session.to_owned()
    } else {
        let hex: String = session.bytes().map(|b| format!("{b:02x}")).collect();
        format!("x{hex}")
    }
}

/// `key: value` lines. Values never hold a newline ([`message_line`]).
pub(super) fn parse_message(message: &str) -> Meta {
    let mut meta = Meta::default();
    for line in message.lines() {
        let Some((key, value)) = line.split_once(": ") else {
            continue;
        };
        match key {
            "kind" => meta.kind = StepKind::parse(value),
            "undoes" => meta.undoes = value.parse().ok(),
            "at" => meta.at = value.parse().unwrap_or_default(),
            "note" => meta.notes.push(value.to_owned()),
            "unrestorable" => meta.unrestorable.push(value.to_owned()),
            "summary" => {
                let n: Vec<u32> = value.split(' ').filter_map(|v| v.parse().ok()).collect();
                if let [files, added, removed] = n[..] {
                    meta.summary = Some(super::ChangeSummary {
                        files,
                        added,
                        removed,
                    });
                }
            }
            _ => {}
        }
    }
    meta
}

/// One `key: value` line, the value on one line.
pub(super) fn message_line(key: &str, value: &str) -> String {
    let value: String = value
        .chars()
        .map(|c| {
            if c == '\n' || c == '\r' || c == '\0' {
                ' '
            } else {
                c
            }
        })
        .collect();
    format!("{key}: {value}\n")
}

fn escape_glob(path: &str) -> String {
    let mut s = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '!' | '#') {
            s.push('\\');
        }
        s.push(c);
    }
    s
}

/// The user's global ignore file: `core.excludesFile` of their config, else git's default.
fn user_excludes_file(git: &Path) -> Option<PathBuf> {
    let configured = std::process::Command::new(git)
        .args(["config", "--global", "--path", "core.excludesFile"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .filter(|p| !p.as_os_str().is_empty());
    configured.or_else(|| {
        let config = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
        Some(config.join("git").join("ignore"))
    })
}

/// Creates `dir` and its missing parents readable by the user only: the copies of every
/// checkpointed file (`.env` included, when not ignored) live there.
fn private_dirs(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)?;
    // One made before its folders were private is made so now.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir)?.permissions().mode();
        if mode & 0o077 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
    }
    Ok(())
}
