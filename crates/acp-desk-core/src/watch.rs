//! Watching the session's roots, so that files the agent changes itself (most real agents never
//! call `fs/write_text_file`: shared/notes/real-agents.md) reach the turn's change set, and
//! conflict detection for files the agent read ([`ReadTracker`]).
//!
//! # What is reported
//!
//! [`RootWatcher`] sends [`WatchEvent::Changed`] with the files created, modified, removed or
//! renamed below the roots, debounced (see [`QUIET`] and [`MAX_DELAY`]) and without duplicates.
//! Never reported: anything inside `.git/`, what the project's `.gitignore` files (every one
//! below the root, each relative to its folder, deeper ones first) and `.git/info/exclude`
//! name, our own temp files ([`crate::fs::is_temp_file_name`]), and folders themselves (a new
//! folder is reported as the files found in it). The user's global git excludes are not read.
//!
//! # How
//!
//! On Linux (inotify: one watch per folder, and a per-user limit on watches) each folder that is
//! not ignored gets its own non-recursive watch, so `target/` or `node_modules/` never use up
//! watches; folders created later are watched as they appear and walked at once, so files
//! written into them before their watch existed are still reported. Elsewhere (FSEvents,
//! ReadDirectoryChangesW watch a whole tree cheaply) each root gets one recursive watch and
//! ignored paths are filtered out.
//!
//! # At the OS's watch limit
//!
//! When the kernel refuses another watch (inotify `max_user_watches`, `ENOSPC`, notify's
//! `MaxFilesWatch`), the folders already watched stay watched, no further watches are tried, and
//! one [`WatchEvent::Degraded`] is sent so the UI can say that changes in some folders may go
//! unnoticed. We chose this over a polling fallback: polling rescans the whole tree (ignored
//! folders included) and is slowest exactly on the large trees that hit the limit.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use notify::event::{CreateKind, EventKind, MetadataKind, ModifyKind, RemoveKind};
use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;

use crate::fs::{ContentHash, is_temp_file_name};

/// Quiet period before a batch is reported. Editors and agents write in bursts (temp file,
/// write, rename; several files of one edit); 100 ms covers such a burst on a loaded machine
/// while a human still sees the change list update at once.
pub const QUIET: Duration = Duration::from_millis(100);

/// Longest a change waits to be reported: a constant stream of writes (a build, a log) never
/// goes quiet, yet the change list should still move about once a second.
pub const MAX_DELAY: Duration = Duration::from_secs(1);

/// Distinct paths held between two reports. A runaway tool can touch millions of files; past
/// this many the rest of the batch is dropped (with one `Degraded` event) so memory stays
/// bounded. 64 Ki paths is a few MiB and more than any real edit touches in one second.
const MAX_PENDING_PATHS: usize = 65_536;

/// How often a full event channel is retried: the receiver is the session's owner, which only
/// falls behind briefly; the stop flag is checked between tries so dropping never waits long.
const SEND_RETRY: Duration = Duration::from_millis(20);

/// Files up to this size are fingerprinted by content hash; larger ones by length and mtime
/// only, so that checking a 1 GB log before a write does not read it all.
pub const MAX_HASHED_BYTES: u64 = 16 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchEvent {
    /// Files that changed on disk (absolute paths below a root), sorted. `created` (sorted, a
    /// subset of `paths`) holds those that appeared as new directory entries, or were found in
    /// a new folder; a file renamed into place is only changed (a rename cannot say whether it
    /// replaced one).
    Changed {
        paths: Vec<PathBuf>,
        created: Vec<PathBuf>,
    },
    /// Some changes may go unnoticed from now on; `reason` says why and what to do.
    Degraded { reason: String },
}

#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("cannot watch {}: {source}", path.display())]
    Root {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot watch {}: not a folder", .0.display())]
    NotAFolder(PathBuf),
    #[error("cannot start the folder watcher: {0}")]
    Backend(#[from] notify::Error),
    #[error("cannot start the folder watcher: {0}")]
    Spawn(std::io::Error),
}

/// Whether a notify error means the OS's limit on watches was reached.
pub fn is_watch_limit(e: &notify::Error) -> bool {
    match &e.kind {
        notify::ErrorKind::MaxFilesWatch => true,
        // inotify_add_watch: ENOSPC when max_user_watches is used up; inotify_init: EMFILE when
        // max_user_instances is.
        notify::ErrorKind::Io(io) => matches!(io.raw_os_error(), Some(28) | Some(24)),
        _ => false,
    }
}

/// The text of the `Degraded` event for an OS watch limit.
pub fn watch_limit_reason() -> String {
    if cfg!(target_os = "linux") {
        "the system's limit on watched folders was reached: changes in some folders may not be \
         noticed; raise fs.inotify.max_user_watches (sysctl) to watch them all"
            .to_owned()
    } else {
        "the system's limit on watched folders was reached: changes in some folders may not be \
         noticed"
            .to_owned()
    }
}

/// The part of a notify watcher we use; tests inject failures here.
pub trait WatchBackend: Send {
    fn watch(&mut self, path: &Path, recursive: bool) -> notify::Result<()>;
    fn unwatch(&mut self, path: &Path) -> notify::Result<()>;
}

impl<W: Watcher + Send> WatchBackend for W {
    fn watch(&mut self, path: &Path, recursive: bool) -> notify::Result<()> {
        let mode = if recursive {
            RecursiveMode::Recursive
        } else {
            RecursiveMode::NonRecursive
        };
        Watcher::watch(self, path, mode)
    }
    fn unwatch(&mut self, path: &Path) -> notify::Result<()> {
        Watcher::unwatch(self, path)
    }
}

/// `.gitignore` semantics per root.
#[derive(Debug, Default)]
struct Filter {
    roots: Vec<PathBuf>,
    /// One matcher per folder holding a `.gitignore`, relative to that folder.
    gitignores: HashMap<PathBuf, Gitignore>,
    /// `.git/info/exclude` of each root that has one.
    excludes: HashMap<PathBuf, Gitignore>,
}

impl Filter {
    fn root_of(&self, path: &Path) -> Option<&Path> {
        self.roots
            .iter()
            .filter(|r| path.starts_with(r))
            .max_by_key(|r| r.components().count())
            .map(PathBuf::as_path)
    }

    fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        let Some(root) = self.root_of(path) else {
            return true;
        };
        let Ok(rel) = path.strip_prefix(root) else {
            return true;
        };
        if rel
            .components()
            .any(|c| matches!(c, Component::Normal(n) if n == ".git"))
        {
            return true;
        }
        if path.file_name().is_some_and(is_temp_file_name) {
            return true;
        }
        // Deeper .gitignore files override shallower ones, as in git.
        for dir in path.ancestors().skip(1) {
            if let Some(gi) = self.gitignores.get(dir) {
                match gi.matched_path_or_any_parents(path, is_dir) {
                    Match::Ignore(_) => return true,
                    Match::Whitelist(_) => return false,
                    Match::None => {}
                }
            }
            if dir == root {
                break;
            }
        }
        self.excludes
            .get(root)
            .is_some_and(|gi| gi.matched_path_or_any_parents(path, is_dir).is_ignore())
    }

    /// (Re)reads `dir/.gitignore`; a missing file removes the matcher.
    fn load_gitignore(&mut self, dir: &Path) {
        let file = dir.join(".gitignore");
        if !file.is_file() {
            self.gitignores.remove(dir);
            return;
        }
        let mut b = GitignoreBuilder::new(dir);
        if let Some(e) = b.add(&file) {
            tracing::debug!(file = %file.display(), "partly unreadable .gitignore: {e}");
        }
        match b.build() {
            Ok(gi) => {
                self.gitignores.insert(dir.to_owned(), gi);
            }
            Err(e) => tracing::debug!(file = %file.display(), ".gitignore ignored: {e}"),
        }
    }

    fn load_exclude(&mut self, root: &Path) {
        let file = root.join(".git").join("info").join("exclude");
        if !file.is_file() {
            return;
        }
        let mut b = GitignoreBuilder::new(root);
        if let Some(e) = b.add(&file) {
            tracing::debug!(file = %file.display(), "partly unreadable exclude file: {e}");
        }
        if let Ok(gi) = b.build() {
            self.excludes.insert(root.to_owned(), gi);
        }
    }
}

#[derive(Debug, Default)]
struct Pending {
    /// Changed paths; `true` for one the OS said is (or was) a folder.
    paths: HashMap<PathBuf, bool>,
    /// Of those, the ones the OS said were created (a subset, so bounded with `paths`).
    created: HashSet<PathBuf>,
    first: Option<Instant>,
    last: Option<Instant>,
    overflowed: bool,
    /// Degraded reasons not yet sent.
    notices: Vec<String>,
}

struct Shared {
    filter: RwLock<Filter>,
    pending: Mutex<Pending>,
    wake: Condvar,
    stop: AtomicBool,
    /// Set at the first watch-limit error: no more watches are tried, one notice is sent.
    degraded: AtomicBool,
    backend: Mutex<Option<Box<dyn WatchBackend>>>,
    /// Folders with a watch of ours (per-folder mode), with their inode: inotify gives a folder
    /// renamed within the tree the same watch under its new name, which unwatching the old
    /// name must not remove.
    watched: Mutex<HashMap<PathBuf, Option<FileId>>>,
    per_folder: bool,
}

impl Shared {
    fn notice(&self, reason: String) {
        if let Ok(mut p) = self.pending.lock() {
            p.notices.push(reason);
        }
        self.wake.notify_one();
    }

    fn degrade(&self) {
        if !self.degraded.swap(true, Ordering::SeqCst) {
            tracing::warn!("folder watch limit reached; watching fewer folders");
            self.notice(watch_limit_reason());
        }
    }

    /// Called by notify on its own thread: filter and queue, nothing slow.
    fn on_event(&self, res: notify::Result<notify::Event>) {
        if self.stop.load(Ordering::Relaxed) {
            return;
        }
        let event = match res {
            Ok(e) => e,
            Err(e) if is_watch_limit(&e) => return self.degrade(),
            Err(e) => {
                tracing::debug!("watch error: {e}");
                return;
            }
        };
        if event.need_rescan() {
            self.notice(
                "the system dropped some change notifications (too many at once): the change \
                 list may be incomplete"
                    .to_owned(),
            );
        }
        if !is_reported_kind(&event.kind) {
            return;
        }
        // A removed folder can no longer be asked whether it is one; `target/`-style rules
        // need to know.
        let folder = matches!(
            event.kind,
            EventKind::Create(CreateKind::Folder) | EventKind::Remove(RemoveKind::Folder)
        );
        let kept: Vec<(PathBuf, bool)> = match self.filter.read() {
            Ok(f) => event
                .paths
                .into_iter()
                .filter(|p| !f.is_ignored(p, folder || p.is_dir()))
                .map(|p| (p, folder))
                .collect(),
            Err(_) => return,
        };
        if kept.is_empty() {
            return;
        }
        // inotify's IN_CREATE: a new directory entry, so a file that was not there before.
        let created = matches!(
            event.kind,
            EventKind::Create(CreateKind::File | CreateKind::Any | CreateKind::Other)
        );
        self.queue(kept, created);
    }

    fn queue(&self, paths: impl IntoIterator<Item = (PathBuf, bool)>, created: bool) {
        let Ok(mut p) = self.pending.lock() else {
            return;
        };
        let now = Instant::now();
        for (path, folder) in paths {
            if p.paths.len() >= MAX_PENDING_PATHS && !p.paths.contains_key(&path) {
                p.overflowed = true;
                continue;
            }
            if created {
                p.created.insert(path.clone());
            }
            *p.paths.entry(path).or_default() |= folder;
        }
        p.first.get_or_insert(now);
        p.last = Some(now);
        drop(p);
        self.wake.notify_one();
    }

    /// Reads .gitignore files, adds watches (per-folder mode) and returns the files found,
    /// below `dir` (itself not ignored). Stops early once stopping.
    fn walk(&self, dir: &Path, files: &mut Vec<PathBuf>) {
        let mut stack = vec![dir.to_owned()];
        while let Some(dir) = stack.pop() {
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            if let Ok(mut f) = self.filter.write() {
                f.load_gitignore(&dir);
            }
            if self.per_folder {
                self.watch_folder(&dir);
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let filter = match self.filter.read() {
                Ok(f) => f,
                Err(_) => return,
            };
            for entry in entries.flatten() {
                // Not following symlinks: a link to a folder outside the root is not ours.
                let Ok(ft) = entry.file_type() else { continue };
                let path = entry.path();
                if filter.is_ignored(&path, ft.is_dir()) {
                    continue;
                }
                if ft.is_dir() {
                    stack.push(path);
                } else {
                    files.push(path);
                }
            }
        }
    }

    fn watch_folder(&self, dir: &Path) {
        if self.degraded.load(Ordering::Relaxed) {
            return;
        }
        let Ok(mut watched) = self.watched.lock() else {
            return;
        };
        if watched.contains_key(dir) {
            return;
        }
        let result = match self.backend.lock() {
            Ok(mut b) => match b.as_mut() {
                Some(b) => b.watch(dir, false),
                None => return,
            },
            Err(_) => return,
        };
        match result {
            Ok(()) => {
                watched.insert(dir.to_owned(), file_id(dir));
            }
            Err(e) if is_watch_limit(&e) => {
                drop(watched);
                self.degrade();
            }
            // Gone meanwhile, or unreadable: nothing to watch.
            Err(e) => tracing::debug!(dir = %dir.display(), "not watched: {e}"),
        }
    }

    /// Adds a root: reads its ignore files, watches it, walks it.
    fn add_root(&self, root: &Path) -> Result<(), WatchError> {
        let root = std::fs::canonicalize(root).map_err(|source| WatchError::Root {
            path: root.to_owned(),
            source,
        })?;
        if !root.is_dir() {
            return Err(WatchError::NotAFolder(root));
        }
        if let Ok(mut f) = self.filter.write() {
            if f.roots.contains(&root) {
                return Ok(());
            }
            f.roots.push(root.clone());
            f.load_exclude(&root);
        }
        if !self.per_folder {
            let result = match self.backend.lock() {
                Ok(mut b) => b.as_mut().map(|b| b.watch(&root, true)),
                Err(_) => None,
            };
            match result {
                Some(Err(e)) if is_watch_limit(&e) => self.degrade(),
                Some(Err(e)) => return Err(WatchError::Backend(e)),
                _ => {}
            }
        }
        // Files already there are not changes: only folders and ignore files matter here.
        let mut existing = Vec::new();
        self.walk(&root, &mut existing);
        Ok(())
    }

    /// Drops our watches on `path` and below; true when `path` itself was a watched folder.
    fn forget_folders(&self, path: &Path) -> bool {
        let Ok(mut watched) = self.watched.lock() else {
            return false;
        };
        let gone: Vec<(PathBuf, Option<FileId>)> = watched
            .iter()
            .filter(|(d, _)| d.starts_with(path))
            .map(|(d, id)| (d.clone(), *id))
            .collect();
        if gone.is_empty() {
            return false;
        }
        for (d, _) in &gone {
            watched.remove(d);
        }
        let still: HashSet<FileId> = watched.values().flatten().copied().collect();
        if let Ok(mut b) = self.backend.lock()
            && let Some(b) = b.as_mut()
        {
            for (d, id) in &gone {
                if id.is_some_and(|id| still.contains(&id)) {
                    continue;
                }
                // Already gone with the folder, most of the time.
                let _ = b.unwatch(d);
            }
        }
        gone.iter().any(|(d, _)| d == path)
    }

    /// Turns a raw batch into what is reported: new folders are walked (and watched), changed
    /// .gitignore files are re-read, folders are left out.
    fn settle(
        &self,
        raw: HashMap<PathBuf, bool>,
        mut created: HashSet<PathBuf>,
    ) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let mut out: HashSet<PathBuf> = HashSet::new();
        let mut new_dirs = Vec::new();
        for (path, folder) in raw {
            match std::fs::symlink_metadata(&path) {
                Ok(m) if m.is_dir() => {
                    let known = self
                        .watched
                        .lock()
                        .map(|w| w.contains_key(&path))
                        .unwrap_or(true);
                    if !known || !self.per_folder {
                        new_dirs.push(path);
                    }
                }
                Ok(_) => {
                    if path.file_name().is_some_and(|n| n == ".gitignore")
                        && let (Some(dir), Ok(mut f)) = (path.parent(), self.filter.write())
                    {
                        f.load_gitignore(dir);
                    }
                    out.insert(path);
                }
                Err(_) => {
                    // Removed or renamed away. A folder we watched is not a file change (its
                    // files are reported one by one); its watches go, and so do those below it:
                    // a renamed folder keeps its inotify watches, which would go on reporting
                    // under the old name.
                    let was_folder = self.forget_folders(&path) || folder;
                    if path.file_name().is_some_and(|n| n == ".gitignore")
                        && let (Some(dir), Ok(mut f)) = (path.parent(), self.filter.write())
                    {
                        f.load_gitignore(dir);
                    }
                    if !was_folder {
                        out.insert(path);
                    }
                }
            }
        }
        // In recursive mode a folder's own events (mtime) would re-walk it on every change
        // inside; only walk folders that were just created there.
        for dir in new_dirs {
            let mut files = Vec::new();
            if self.per_folder || dir_is_new(&dir) {
                self.walk(&dir, &mut files);
            }
            // A new folder's files are new to the session.
            created.extend(files.iter().cloned());
            out.extend(files);
        }
        let filter = match self.filter.read() {
            Ok(f) => f,
            Err(_) => return (Vec::new(), Vec::new()),
        };
        let mut paths: Vec<PathBuf> = out
            .into_iter()
            .filter(|p| !filter.is_ignored(p, false))
            .collect();
        paths.sort();
        let created = paths
            .iter()
            .filter(|p| created.contains(*p))
            .cloned()
            .collect();
        (paths, created)
    }
}

/// Device and inode of a folder (unix); `None` elsewhere.
type FileId = (u64, u64);

fn file_id(path: &Path) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(path)
            .ok()
            .map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Recursive mode only: a folder created in the last few seconds is walked for its files.
fn dir_is_new(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir)
        .and_then(|m| m.created().or_else(|_| m.modified()))
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age < MAX_DELAY * 2)
}

fn is_reported_kind(kind: &EventKind) -> bool {
    match kind {
        // Reads, opens and closes change nothing; a write shows up as Modify(Data) as well.
        EventKind::Access(_) => false,
        EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime)) => false,
        EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) => true,
        EventKind::Any | EventKind::Other => true,
    }
}

/// Watches the session's roots until dropped. Dropping waits for the watcher's thread to finish
/// its current step (at worst the walk of a newly created folder) so that no event follows it.
pub struct RootWatcher {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for RootWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RootWatcher")
            .field("per_folder", &self.shared.per_folder)
            .finish_non_exhaustive()
    }
}

impl RootWatcher {
    /// Starts watching `roots` (folders; made canonical) with the platform's notify backend.
    /// The initial walk runs here (blocking: call it from `spawn_blocking` on a large tree).
    pub fn start(
        roots: &[PathBuf],
        events: mpsc::Sender<WatchEvent>,
    ) -> Result<RootWatcher, WatchError> {
        RootWatcher::start_with(roots, events, cfg!(target_os = "linux"), |handler| {
            let w = RecommendedWatcher::new(handler, notify::Config::default())?;
            Ok(Box::new(w) as Box<dyn WatchBackend>)
        })
    }

    /// As [`RootWatcher::start`], with the backend made by `make` (given the event handler).
    /// `per_folder` chooses one non-recursive watch per folder (inotify) over one recursive
    /// watch per root.
    pub fn start_with(
        roots: &[PathBuf],
        events: mpsc::Sender<WatchEvent>,
        per_folder: bool,
        make: impl FnOnce(EventHandler) -> notify::Result<Box<dyn WatchBackend>>,
    ) -> Result<RootWatcher, WatchError> {
        let shared = Arc::new(Shared {
            filter: RwLock::new(Filter::default()),
            pending: Mutex::new(Pending::default()),
            wake: Condvar::new(),
            stop: AtomicBool::new(false),
            degraded: AtomicBool::new(false),
            backend: Mutex::new(None),
            watched: Mutex::new(HashMap::new()),
            per_folder,
        });
        let backend = make(EventHandler {
            shared: shared.clone(),
        })?;
        if let Ok(mut b) = shared.backend.lock() {
            *b = Some(backend);
        }
        let thread = std::thread::Builder::new()
            .name("acp-desk-watch".into())
            .spawn({
                let shared = shared.clone();
                move || debounce_loop(&shared, &events)
            })
            .map_err(WatchError::Spawn)?;
        let watcher = RootWatcher {
            shared,
            thread: Some(thread),
        };
        for root in roots {
            watcher.add_root(root)?;
        }
        Ok(watcher)
    }

    /// Watches one more folder (a folder the user added to the session).
    pub fn add_root(&self, root: &Path) -> Result<(), WatchError> {
        self.shared.add_root(root)
    }

    /// Whether a watch limit was hit.
    pub fn is_degraded(&self) -> bool {
        self.shared.degraded.load(Ordering::Relaxed)
    }
}

impl Drop for RootWatcher {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Dropping the notify watcher ends its thread and its OS watches.
        let backend = self.shared.backend.lock().ok().and_then(|mut b| b.take());
        drop(backend);
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take()
            && t.join().is_err()
        {
            tracing::warn!("folder watcher thread panicked");
        }
    }
}

/// The handler given to the notify backend.
pub struct EventHandler {
    shared: Arc<Shared>,
}

impl notify::EventHandler for EventHandler {
    fn handle_event(&mut self, event: notify::Result<notify::Event>) {
        self.shared.on_event(event);
    }
}

impl EventHandler {
    /// Feeds an event as the backend would (tests, other backends).
    pub fn handle(&self, event: notify::Result<notify::Event>) {
        self.shared.on_event(event);
    }
}

fn debounce_loop(shared: &Shared, events: &mpsc::Sender<WatchEvent>) {
    loop {
        let Ok(mut p) = shared.pending.lock() else {
            return;
        };
        // Wait for something, or a deadline.
        let (raw, created, notices, overflowed) = loop {
            if shared.stop.load(Ordering::Relaxed) {
                return;
            }
            if !p.notices.is_empty() && p.paths.is_empty() {
                break (
                    HashMap::new(),
                    HashSet::new(),
                    std::mem::take(&mut p.notices),
                    false,
                );
            }
            let (Some(first), Some(last)) = (p.first, p.last) else {
                p = match shared.wake.wait(p) {
                    Ok(g) => g,
                    Err(_) => return,
                };
                continue;
            };
            let due = (last + QUIET).min(first + MAX_DELAY);
            let now = Instant::now();
            if now >= due {
                p.first = None;
                p.last = None;
                let overflowed = std::mem::take(&mut p.overflowed);
                break (
                    std::mem::take(&mut p.paths),
                    std::mem::take(&mut p.created),
                    std::mem::take(&mut p.notices),
                    overflowed,
                );
            }
            p = match shared.wake.wait_timeout(p, due - now) {
                Ok((g, _)) => g,
                Err(_) => return,
            };
        };
        drop(p);
        for reason in notices {
            if !send(shared, events, WatchEvent::Degraded { reason }) {
                return;
            }
        }
        if overflowed {
            let reason = format!(
                "more than {MAX_PENDING_PATHS} files changed at once: the change list is incomplete"
            );
            if !send(shared, events, WatchEvent::Degraded { reason }) {
                return;
            }
        }
        if raw.is_empty() {
            continue;
        }
        let (paths, created) = shared.settle(raw, created);
        if !paths.is_empty() && !send(shared, events, WatchEvent::Changed { paths, created }) {
            return;
        }
    }
}

/// False when stopping or the receiver is gone.
fn send(shared: &Shared, events: &mpsc::Sender<WatchEvent>, mut event: WatchEvent) -> bool {
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            return false;
        }
        match events.try_send(event) {
            Ok(()) => return true,
            Err(mpsc::error::TrySendError::Closed(_)) => return false,
            Err(mpsc::error::TrySendError::Full(e)) => {
                event = e;
                std::thread::sleep(SEND_RETRY);
            }
        }
    }
}

/// What a file was when the agent last saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fingerprint {
    Missing,
    /// Content hash (files up to [`MAX_HASHED_BYTES`]).
    Hash {
        len: u64,
        hash: ContentHash,
    },
    /// Length and modification time (larger files).
    Meta {
        len: u64,
        mtime: Option<SystemTime>,
    },
}

impl Fingerprint {
    /// Of the file on disk now. Blocking.
    pub fn of_file(path: &Path) -> std::io::Result<Fingerprint> {
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Fingerprint::Missing),
            Err(e) => return Err(e),
        };
        let len = meta.len();
        if len <= MAX_HASHED_BYTES {
            match std::fs::read(path) {
                Ok(bytes) => Ok(Fingerprint::Hash {
                    len: bytes.len() as u64,
                    hash: ContentHash::of(&bytes),
                }),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Fingerprint::Missing),
                Err(e) => Err(e),
            }
        } else {
            Ok(Fingerprint::Meta {
                len,
                mtime: meta.modified().ok(),
            })
        }
    }

    /// Of text we are about to write or just wrote (no disk read).
    pub fn of_content(content: &str) -> Fingerprint {
        let len = content.len() as u64;
        if len <= MAX_HASHED_BYTES {
            Fingerprint::Hash {
                len,
                hash: ContentHash::of(content.as_bytes()),
            }
        } else {
            Fingerprint::Meta { len, mtime: None }
        }
    }

    fn same_as(&self, now: &Fingerprint) -> bool {
        match (self, now) {
            (Fingerprint::Missing, Fingerprint::Missing) => true,
            (Fingerprint::Hash { hash: a, .. }, Fingerprint::Hash { hash: b, .. }) => a == b,
            (Fingerprint::Meta { len: a, mtime: ma }, Fingerprint::Meta { len: b, mtime: mb }) => {
                a == b && (ma.is_none() || ma == mb)
            }
            _ => false,
        }
    }
}

/// The file changed on disk since the agent read it (or since our last write).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub path: PathBuf,
    pub seen: Fingerprint,
    pub now: Fingerprint,
}

impl std::fmt::Display for Conflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match (&self.seen, &self.now) {
            (_, Fingerprint::Missing) => "was deleted",
            (Fingerprint::Missing, _) => "was created",
            _ => "was changed",
        };
        write!(
            f,
            "{} {what} on disk after the agent read it",
            self.path.display()
        )
    }
}

/// Per session: what the agent last saw of each file it read, to detect a write over changes it
/// never saw. The session calls [`ReadTracker::note_read`] after answering `fs/read_text_file`,
/// [`ReadTracker::check_before_write`] before `fs/write_text_file`, and
/// [`ReadTracker::note_written`] after its own writes. Files are fingerprinted from the disk,
/// not from the text returned: a read with `line`/`limit` returns only a window. Blocking.
#[derive(Debug, Default)]
pub struct ReadTracker {
    seen: HashMap<PathBuf, Fingerprint>,
}

impl ReadTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records the file as it is on disk now (`path` canonical). A read of a missing file (the
    /// Gemini compatibility answer) is recorded as missing.
    pub fn note_read(&mut self, path: &Path) {
        match Fingerprint::of_file(path) {
            Ok(fp) => {
                self.seen.insert(path.to_owned(), fp);
            }
            Err(e) => {
                tracing::debug!(path = %path.display(), "read not tracked: {e}");
                self.seen.remove(path);
            }
        }
    }

    /// Records our own write of `content`, so it is not reported as a conflict later.
    pub fn note_written(&mut self, path: &Path, content: &str) {
        let fp = match Fingerprint::of_content(content) {
            // Large files are compared by mtime, which only the disk knows.
            Fingerprint::Meta { .. } => Fingerprint::of_file(path).ok(),
            fp => Some(fp),
        };
        match fp {
            Some(fp) => {
                self.seen.insert(path.to_owned(), fp);
            }
            None => {
                self.seen.remove(path);
            }
        }
    }

    /// `Some` when the file differs from what the agent last saw; `None` when it is the same or
    /// the agent never read it (then there is nothing it could have overlooked).
    pub fn check_before_write(&self, path: &Path) -> Option<Conflict> {
        let seen = self.seen.get(path)?;
        let now = Fingerprint::of_file(path).ok()?;
        (!seen.same_as(&now)).then(|| Conflict {
            path: path.to_owned(),
            seen: *seen,
            now,
        })
    }

    pub fn forget(&mut self, path: &Path) {
        self.seen.remove(path);
    }

    /// At the end of a session or when the agent's context is reset.
    pub fn clear(&mut self) {
        self.seen.clear();
    }
}

#[cfg(test)]
mod tests;
