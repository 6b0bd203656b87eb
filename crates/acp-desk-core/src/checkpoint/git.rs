//! The `git` program, run against our shadow git directory with the project as its work tree.
//! Every command gets the same environment: none of the user's `GIT_*` variables, no system or
//! global config (so no hooks, filters, fsmonitor or signing of theirs can run or slow us), and
//! fixed options that make what git stores the bytes on disk.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::CheckpointError;

/// Options given to every command (`-c`), whatever the user's config says: bytes stored as they
/// are (no line-ending conversion), links kept as links, the exec bit read, no background work.
const FIXED_CONFIG: &[&str] = &[
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.fsmonitor=false",
    "core.untrackedCache=true",
    "core.quotePath=false",
    "core.symlinks=true",
    "core.fileMode=true",
    "core.ignoreCase=false",
    "core.logAllRefUpdates=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "commit.gpgSign=false",
    "advice.addEmbeddedRepo=false",
    "advice.addIgnoredFile=false",
    "index.threads=true",
];

#[derive(Debug, Clone)]
pub(super) struct Git {
    pub(super) bin: PathBuf,
    pub(super) git_dir: PathBuf,
    pub(super) work_tree: PathBuf,
    /// An empty file that stands for the global config.
    empty_config: PathBuf,
    excludes_file: PathBuf,
}

impl Git {
    pub(super) fn new(bin: PathBuf, shadow: &Path, work_tree: PathBuf) -> Self {
        Git {
            bin,
            git_dir: shadow.join("git"),
            work_tree,
            empty_config: shadow.join("empty-config"),
            excludes_file: shadow.join("excludes"),
        }
    }

    pub(super) fn command(&self) -> Command {
        let mut c = Command::new(&self.bin);
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("GIT_") {
                c.env_remove(k);
            }
        }
        c.env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", &self.empty_config)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_AUTHOR_NAME", "ACP Desk")
            .env("GIT_AUTHOR_EMAIL", "checkpoints@acp-desk.invalid")
            .env("GIT_COMMITTER_NAME", "ACP Desk")
            .env("GIT_COMMITTER_EMAIL", "checkpoints@acp-desk.invalid")
            .env("LC_ALL", "C")
            .current_dir(&self.work_tree)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for kv in FIXED_CONFIG {
            c.arg("-c").arg(kv);
        }
        let mut hooks = OsString::from("core.hooksPath=");
        hooks.push(self.git_dir.join("no-hooks"));
        c.arg("-c").arg(hooks);
        let mut ex = OsString::from("core.excludesFile=");
        ex.push(&self.excludes_file);
        c.arg("-c").arg(ex);
        c
    }

    /// Creates the git directory (`init --bare`, which refuses a work tree), set up for the
    /// project as its work tree afterwards.
    pub(super) fn init(&self) -> Result<(), CheckpointError> {
        let mut c = self.command();
        c.env_remove("GIT_WORK_TREE")
            .env_remove("GIT_DIR")
            .args(["init", "-q", "--bare"])
            .arg(&self.git_dir);
        let out = c.output().map_err(|e| CheckpointError::Io {
            what: format!("could not run {}", self.bin.display()),
            source: e,
        })?;
        if out.status.success() {
            Ok(())
        } else {
            Err(CheckpointError::Git(failure(&out)))
        }
    }

    /// Runs `git ARGS`, `stdin` fed when given; a failure carries git's own words.
    pub(super) fn run<I, S>(
        &self,
        args: I,
        stdin: Option<&[u8]>,
    ) -> Result<Vec<u8>, CheckpointError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.output(args, stdin, &[])?;
        if out.status.success() {
            Ok(out.stdout)
        } else {
            Err(CheckpointError::Git(failure(&out)))
        }
    }

    /// Like [`Git::run`], with extra environment, returning the whole output whatever the
    /// status (for commands whose partial failure we read).
    pub(super) fn output<I, S>(
        &self,
        args: I,
        stdin: Option<&[u8]>,
        env: &[(&str, &OsStr)],
    ) -> Result<Output, CheckpointError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut c = self.command();
        c.args(args);
        for (k, v) in env {
            c.env(k, v);
        }
        if stdin.is_some() {
            c.stdin(Stdio::piped());
        }
        let mut child = c.spawn().map_err(|e| CheckpointError::Io {
            what: format!("could not run {}", self.bin.display()),
            source: e,
        })?;
        if let Some(bytes) = stdin
            && let Some(mut pipe) = child.stdin.take()
        {
            // A writer thread: git may fill its stdout pipe before it has read all its input.
            let bytes = bytes.to_vec();
            let writer = std::thread::spawn(move || pipe.write_all(&bytes));
            let out = child.wait_with_output().map_err(|e| CheckpointError::Io {
                what: "git did not finish".into(),
                source: e,
            })?;
            let _ = writer.join();
            return Ok(out);
        }
        child.wait_with_output().map_err(|e| CheckpointError::Io {
            what: "git did not finish".into(),
            source: e,
        })
    }

    pub(super) fn run_str<I, S>(&self, args: I) -> Result<String, CheckpointError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.run(args, None)?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// The contents of blobs, in the order asked (`None`: no such object).
    pub(super) fn blobs(&self, ids: &[String]) -> Result<Vec<Option<Vec<u8>>>, CheckpointError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut input = Vec::new();
        for id in ids {
            input.extend_from_slice(id.as_bytes());
            input.push(b'\n');
        }
        let out = self.run(["cat-file", "--batch"], Some(&input))?;
        let mut rest = &out[..];
        let mut blobs = Vec::with_capacity(ids.len());
        for _ in ids {
            let nl = rest
                .iter()
                .position(|&b| b == b'\n')
                .ok_or_else(|| CheckpointError::Git("cat-file --batch: a short answer".into()))?;
            let header = String::from_utf8_lossy(&rest[..nl]).into_owned();
            rest = &rest[nl + 1..];
            if header.ends_with(" missing") {
                blobs.push(None);
                continue;
            }
            let size: usize = header
                .rsplit(' ')
                .next()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| CheckpointError::Git(format!("cat-file --batch: `{header}`")))?;
            if rest.len() < size + 1 {
                return Err(CheckpointError::Git(
                    "cat-file --batch: a short blob".into(),
                ));
            }
            blobs.push(Some(rest[..size].to_vec()));
            rest = &rest[size + 1..];
        }
        Ok(blobs)
    }
}

/// What git said when it failed, on one line.
pub(super) fn failure(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    let words: Vec<&str> = err
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if words.is_empty() {
        format!("git exited with {}", out.status)
    } else {
        words.join("; ")
    }
}

/// NUL-separated fields, empty ones dropped.
pub(super) fn split_nul(bytes: &[u8]) -> impl Iterator<Item = String> + '_ {
    bytes
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
}

/// `git` on PATH (or `ACP_DESK_GIT`), if it runs. Blocking.
pub fn find_git() -> Option<PathBuf> {
    use crate::agents::detect::{Detection, ProgramCache, on_path};
    let candidate = match std::env::var_os("ACP_DESK_GIT") {
        Some(p) => PathBuf::from(p),
        None => match on_path("git", &std::env::var_os("PATH")?, ProgramCache::global()) {
            Detection::Found { program, .. } => program,
            _ => return None,
        },
    };
    runs(&candidate).then_some(candidate)
}

/// Whether `git --version` runs with this program.
pub(super) fn runs(git: &Path) -> bool {
    Command::new(git)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
