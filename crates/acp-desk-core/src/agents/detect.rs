//! Whether an agent's program is installed, and where.
//!
//! Three places, in order: the `PATH`; an npm global package that provides it (`$(npm root
//! -g)/<package>`, its `package.json` `bin`), because a desktop app started from the menu often
//! has a shorter PATH than the user's shell; and the folders the agent's own installer uses
//! (`~/.local/bin`, `~/.opencode/bin`).
//!
//! Everything here is blocking (it stats files and may run `npm root -g` once per PATH): the
//! shell calls it on the blocking pool, never on the window's thread. What is read about a
//! program (executable or not, the version of the npm package it belongs to) is cached by
//! path, mtime and size, so a second listing only stats the candidates.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use super::catalog::BuiltinAgent;

/// Where to look: the PATH, the home folder, the npm global folder.
#[derive(Debug, Clone)]
pub struct Where {
    pub path: OsString,
    pub home: Option<PathBuf>,
    /// `None`: asked of npm (once per PATH).
    pub npm_root: Option<PathBuf>,
}

impl Where {
    /// From [`super::Sources`]: its PATH or the process's, its home or the user's.
    pub fn from_sources(s: &super::Sources) -> Where {
        Where {
            path: s
                .path
                .clone()
                .unwrap_or_else(|| std::env::var_os("PATH").unwrap_or_default()),
            home: s
                .home
                .clone()
                .or_else(|| directories::BaseDirs::new().map(|b| b.home_dir().to_owned())),
            npm_root: s.npm_root.clone(),
        }
    }
}

/// How a program was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FoundVia {
    Path,
    /// The bin of this npm package, installed globally.
    NpmGlobal(String),
    /// A folder its installer uses.
    InstallDir,
    /// A path given as is (absolute, or relative to the session's folder).
    Given,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detection {
    Found {
        program: PathBuf,
        via: FoundVia,
        /// The version of the npm package the program belongs to, when it is one.
        version: Option<String>,
    },
    /// A file of that name exists but may not be executed (`chmod +x` it).
    NotExecutable(PathBuf),
    Missing,
}

impl Detection {
    pub fn is_found(&self) -> bool {
        matches!(self, Detection::Found { .. })
    }
}

/// What is read about one program file; kept while its mtime and size stay the same.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ProgramInfo {
    executable: bool,
    version: Option<String>,
}

/// Facts about program files, keyed by path, valid while the file's mtime, size and mode are
/// the same. One per process ([`ProgramCache::global`]); tests make their own.
#[derive(Debug, Default)]
pub struct ProgramCache {
    entries: Mutex<HashMap<PathBuf, (FileKey, ProgramInfo)>>,
    reads: AtomicUsize,
}

impl ProgramCache {
    pub fn global() -> &'static ProgramCache {
        static CACHE: OnceLock<ProgramCache> = OnceLock::new();
        CACHE.get_or_init(ProgramCache::default)
    }

    /// How many times a program's facts were read rather than taken from the cache.
    pub fn reads(&self) -> usize {
        self.reads.load(Ordering::Relaxed)
    }

    /// `None`: no file there.
    fn info(&self, file: &Path) -> Option<ProgramInfo> {
        let meta = std::fs::metadata(file).ok()?;
        if !meta.is_file() {
            return None;
        }
        let key = FileKey::of(&meta);
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((k, info)) = entries.get(file)
            && *k == key
        {
            return Some(info.clone());
        }
        self.reads.fetch_add(1, Ordering::Relaxed);
        let info = ProgramInfo {
            executable: is_executable(&meta),
            version: npm_package_version(file),
        };
        entries.insert(file.to_owned(), (key, info.clone()));
        Some(info)
    }
}

/// What says a file changed: its mtime and size, and its mode (a `chmod +x` changes neither
/// of the others).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileKey {
    modified: Option<SystemTime>,
    len: u64,
    executable: bool,
}

impl FileKey {
    fn of(meta: &std::fs::Metadata) -> FileKey {
        FileKey {
            modified: meta.modified().ok(),
            len: meta.len(),
            executable: is_executable(meta),
        }
    }
}

#[cfg(unix)]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &std::fs::Metadata) -> bool {
    true
}

/// The version in the `package.json` of the npm package `file` belongs to (npm's bin links
/// point into the package), if it is in one.
fn npm_package_version(file: &Path) -> Option<String> {
    // A runner's version (npx belongs to npm) is not the agent's: an entry launched through it
    // would show npm's version as its own.
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned());
    if matches!(
        stem.as_deref(),
        Some("npx" | "npm" | "pnpx" | "pnpm" | "bunx" | "bun" | "node" | "yarn")
    ) {
        return None;
    }
    let real = std::fs::canonicalize(file).ok()?;
    // A bin lives at most a few folders below its package's root (`bin/x.js`, `dist/bin/x`).
    for dir in real.ancestors().skip(1).take(4) {
        let manifest = dir.join("package.json");
        if let Ok(text) = std::fs::read_to_string(&manifest) {
            let v: serde_json::Value = serde_json::from_str(&text).ok()?;
            return v.get("version")?.as_str().map(str::to_owned);
        }
        if dir.file_name() == Some(OsStr::new("node_modules")) {
            break;
        }
    }
    None
}

/// Looks `command` up as the agent's process would be started: a path (with a `/`) as is,
/// relative to `cwd`; a bare name on the PATH. Blocking.
pub fn find_command(command: &str, cwd: &Path, at: &Where, cache: &ProgramCache) -> Detection {
    let p = Path::new(command);
    if p.is_absolute() || p.components().count() > 1 {
        let full = if p.is_absolute() {
            p.to_owned()
        } else {
            cwd.join(p)
        };
        return check(full, FoundVia::Given, cache).unwrap_or(Detection::Missing);
    }
    on_path(command, &at.path, cache)
}

/// The first `name` on `path`; a non-executable file of that name is reported when nothing
/// executable comes after it.
pub fn on_path(name: &str, path: &OsStr, cache: &ProgramCache) -> Detection {
    let mut not_executable = None;
    for dir in std::env::split_paths(path) {
        // An empty PATH entry means the current folder, which we never search: an agent is
        // not something a project folder should be able to plant.
        if dir.as_os_str().is_empty() {
            continue;
        }
        for candidate in candidates(&dir, name) {
            match check(candidate, FoundVia::Path, cache) {
                Some(found @ Detection::Found { .. }) => return found,
                Some(Detection::NotExecutable(p)) => {
                    not_executable.get_or_insert(p);
                }
                _ => {}
            }
        }
    }
    not_executable.map_or(Detection::Missing, Detection::NotExecutable)
}

fn candidates(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut c = vec![dir.join(name)];
    if cfg!(windows) {
        c.extend(["exe", "cmd", "bat"].map(|e| dir.join(format!("{name}.{e}"))));
    }
    c
}

/// `None`: no file at `file`.
fn check(file: PathBuf, via: FoundVia, cache: &ProgramCache) -> Option<Detection> {
    let info = cache.info(&file)?;
    Some(if info.executable {
        Detection::Found {
            program: file,
            via,
            version: info.version,
        }
    } else {
        Detection::NotExecutable(file)
    })
}

/// A built-in agent's program: on the PATH, else in an npm global package, else in its
/// installer's folders. Blocking.
pub fn detect_builtin(agent: &BuiltinAgent, at: &Where, cache: &ProgramCache) -> Detection {
    let mut first_not_executable = None;
    let mut keep = |d: Detection| match d {
        Detection::Found { .. } => Some(d),
        Detection::NotExecutable(p) => {
            first_not_executable.get_or_insert(p);
            None
        }
        Detection::Missing => None,
    };
    if let Some(found) = keep(on_path(agent.program, &at.path, cache)) {
        return found;
    }
    if !agent.npm_packages.is_empty() {
        let root = at.npm_root.clone().or_else(|| npm_root(&at.path, cache));
        if let Some(root) = root {
            for package in agent.npm_packages {
                if let Some(bin) = npm_bin(&root, package, agent.program)
                    && let Some(found) = keep(
                        check(bin, FoundVia::NpmGlobal((*package).into()), cache)
                            .unwrap_or(Detection::Missing),
                    )
                {
                    return found;
                }
            }
        }
    }
    if let Some(home) = &at.home {
        for dir in agent.install_dirs {
            for candidate in candidates(&home.join(dir), agent.program) {
                if let Some(found) = keep(
                    check(candidate, FoundVia::InstallDir, cache).unwrap_or(Detection::Missing),
                ) {
                    return found;
                }
            }
        }
    }
    first_not_executable.map_or(Detection::Missing, Detection::NotExecutable)
}

/// The file a globally installed npm package provides as `program` (`bin` in its
/// `package.json`: a string, or a map from command names).
fn npm_bin(root: &Path, package: &str, program: &str) -> Option<PathBuf> {
    let dir = root.join(package);
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let rel = match v.get("bin")? {
        serde_json::Value::String(s) => s.as_str(),
        serde_json::Value::Object(m) => m.get(program)?.as_str()?,
        _ => return None,
    };
    Some(dir.join(rel))
}

/// `npm root -g` with this PATH, once per PATH per process (npm takes a fraction of a second
/// to start; a second listing must not pay it again). `None` when npm is not on the PATH or
/// says nothing usable within a few seconds.
fn npm_root(path: &OsStr, cache: &ProgramCache) -> Option<PathBuf> {
    static ROOTS: OnceLock<Mutex<HashMap<OsString, Option<PathBuf>>>> = OnceLock::new();
    let roots = ROOTS.get_or_init(Mutex::default);
    if let Some(r) = roots
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(path)
    {
        return r.clone();
    }
    let root = match on_path("npm", path, cache) {
        Detection::Found { program, .. } => ask_npm_root(&program, path),
        _ => None,
    };
    roots
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(path.to_owned(), root.clone());
    root
}

fn ask_npm_root(npm: &Path, path: &OsStr) -> Option<PathBuf> {
    let mut child = std::process::Command::new(npm)
        .args(["root", "-g"])
        .env("PATH", path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                tracing::warn!(
                    "`npm root -g` did not answer: npm global packages are not looked at"
                );
                return None;
            }
        }
    }
    let out = child.wait_with_output().ok()?;
    let line = String::from_utf8(out.stdout).ok()?;
    let root = PathBuf::from(line.trim());
    (out.status.success() && root.is_absolute()).then_some(root)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::agents::catalog;
    use std::os::unix::fs::PermissionsExt;

    fn program(dir: &Path, name: &str, mode: u32) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    fn at(root: &Path, path: &[&Path]) -> Where {
        Where {
            path: std::env::join_paths(path).unwrap(),
            home: Some(root.join("home")),
            npm_root: Some(root.join("npm")),
        }
    }

    #[test]
    fn found_on_the_path_missing_or_not_executable() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let cache = ProgramCache::default();
        let gemini = catalog::builtin("gemini").unwrap();
        let w = at(dir.path(), &[&a, &b]);
        assert_eq!(detect_builtin(gemini, &w, &cache), Detection::Missing);
        let plain = program(&a, "gemini", 0o644);
        assert_eq!(
            detect_builtin(gemini, &w, &cache),
            Detection::NotExecutable(plain.clone())
        );
        // An executable one later on the PATH is used.
        let good = program(&b, "gemini", 0o755);
        assert_eq!(
            detect_builtin(gemini, &w, &cache),
            Detection::Found {
                program: good,
                via: FoundVia::Path,
                version: None
            }
        );
        // A path given as is, relative to the session's folder.
        assert!(
            find_command("a/gemini", dir.path(), &w, &cache) == Detection::NotExecutable(plain)
        );
        assert!(find_command("b/gemini", dir.path(), &w, &cache).is_found());
        assert_eq!(
            find_command("nope", dir.path(), &w, &cache),
            Detection::Missing
        );
    }

    #[test]
    fn an_npm_global_package_and_an_install_folder_count() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ProgramCache::default();
        let w = at(dir.path(), &[&dir.path().join("empty")]);
        let pkg = dir.path().join("npm/@agentclientprotocol/claude-agent-acp");
        program(&pkg.join("dist"), "index.js", 0o755);
        std::fs::write(
            pkg.join("package.json"),
            r#"{"name": "@agentclientprotocol/claude-agent-acp", "version": "0.101.0",
                "bin": {"claude-agent-acp": "dist/index.js"}}"#,
        )
        .unwrap();
        let claude = catalog::builtin("claude").unwrap();
        assert_eq!(
            detect_builtin(claude, &w, &cache),
            Detection::Found {
                program: pkg.join("dist/index.js"),
                via: FoundVia::NpmGlobal("@agentclientprotocol/claude-agent-acp".into()),
                version: Some("0.101.0".into()),
            }
        );
        // opencode's installer folder.
        let opencode = catalog::builtin("opencode").unwrap();
        assert_eq!(detect_builtin(opencode, &w, &cache), Detection::Missing);
        let bin = program(&dir.path().join("home/.opencode/bin"), "opencode", 0o755);
        assert_eq!(
            detect_builtin(opencode, &w, &cache),
            Detection::Found {
                program: bin,
                via: FoundVia::InstallDir,
                version: None
            }
        );
    }

    #[test]
    fn the_npm_global_folder_is_asked_of_npm_on_the_path_once() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        let root = dir.path().join("global/lib/node_modules");
        let calls = dir.path().join("calls");
        // A fake npm: says where its global packages are, and counts how often it is asked.
        let npm = program(&bin, "npm", 0o755);
        std::fs::write(
            &npm,
            format!(
                "#!/bin/sh\necho x >> '{}'\n[ \"$1 $2\" = 'root -g' ] && echo '{}'\n",
                calls.display(),
                root.display()
            ),
        )
        .unwrap();
        let pkg = root.join("@github/copilot");
        program(&pkg, "index.js", 0o755);
        std::fs::write(
            pkg.join("package.json"),
            r#"{"version": "0.0.400", "bin": "index.js"}"#,
        )
        .unwrap();
        let w = Where {
            path: std::env::join_paths([&bin]).unwrap(),
            home: None,
            npm_root: None,
        };
        let cache = ProgramCache::default();
        let copilot = catalog::builtin("copilot").unwrap();
        for _ in 0..2 {
            assert_eq!(
                detect_builtin(copilot, &w, &cache),
                Detection::Found {
                    program: pkg.join("index.js"),
                    via: FoundVia::NpmGlobal("@github/copilot".into()),
                    version: Some("0.0.400".into()),
                }
            );
        }
        let asked = std::fs::read_to_string(&calls).unwrap();
        assert_eq!(asked.lines().count(), 1, "npm is asked once per PATH");
    }

    #[test]
    fn the_cache_reads_a_program_again_only_when_it_changed() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        let cache = ProgramCache::default();
        let w = at(dir.path(), &[&bin]);
        let goose = catalog::builtin("goose").unwrap();
        let p = program(&bin, "goose", 0o755);
        assert!(detect_builtin(goose, &w, &cache).is_found());
        let reads = cache.reads();
        assert!(reads >= 1);
        assert!(detect_builtin(goose, &w, &cache).is_found());
        assert_eq!(cache.reads(), reads, "unchanged: taken from the cache");
        // Replaced by a file that may not run (an upgrade gone wrong): read again.
        std::fs::write(&p, "#!/bin/sh\n# a new version\nexit 0\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        let f = std::fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(SystemTime::now() + Duration::from_secs(5))
            .unwrap();
        drop(f);
        assert_eq!(
            detect_builtin(goose, &w, &cache),
            Detection::NotExecutable(p)
        );
        assert_eq!(cache.reads(), reads + 1);
    }
}
