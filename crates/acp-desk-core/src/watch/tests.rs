//! Real file system under a temp folder. Timeouts are generous and nothing asserts on timing:
//! "not reported" is checked by writing a sentinel file afterwards and looking at everything
//! reported until the sentinel shows up (inotify keeps order).

use super::*;
use std::collections::BTreeSet;

/// Far beyond any debounce; only reached when something is broken.
const PATIENCE: Duration = Duration::from_secs(20);

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    rx: mpsc::Receiver<WatchEvent>,
    watcher: Option<RootWatcher>,
}

fn tempdir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("proj");
    std::fs::create_dir(&root).unwrap();
    (dir, root)
}

fn start(setup: impl FnOnce(&Path)) -> Fixture {
    let (dir, root) = tempdir();
    setup(&root);
    let (tx, rx) = mpsc::channel(16);
    let watcher = RootWatcher::start(std::slice::from_ref(&root), tx).unwrap();
    Fixture {
        _dir: dir,
        root,
        rx,
        watcher: Some(watcher),
    }
}

fn write(path: &Path, text: &str) {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

impl Fixture {
    /// Every event until `until` has been reported (in a `Changed`), in order.
    async fn events_until(&mut self, until: &Path) -> Vec<WatchEvent> {
        let mut all = Vec::new();
        loop {
            let ev = tokio::time::timeout(PATIENCE, self.rx.recv())
                .await
                .unwrap_or_else(|_| panic!("{} never reported; got {all:?}", until.display()))
                .expect("watcher ended");
            let done = matches!(&ev, WatchEvent::Changed { paths, .. } if paths.iter().any(|p| p == until));
            all.push(ev);
            if done {
                return all;
            }
        }
    }

    async fn paths_until(&mut self, until: &Path) -> BTreeSet<PathBuf> {
        changed_paths(&self.events_until(until).await)
    }

    /// Writes a sentinel and returns every path reported up to it.
    async fn settle(&mut self, n: u32) -> BTreeSet<PathBuf> {
        let sentinel = self.root.join(format!("sentinel-{n}"));
        write(&sentinel, "s");
        let mut paths = self.paths_until(&sentinel).await;
        paths.remove(&sentinel);
        paths
    }
}

fn changed_paths(events: &[WatchEvent]) -> BTreeSet<PathBuf> {
    events
        .iter()
        .flat_map(|e| match e {
            WatchEvent::Changed { paths, .. } => paths.clone(),
            WatchEvent::Degraded { .. } => Vec::new(),
        })
        .collect()
}

fn created_paths(events: &[WatchEvent]) -> BTreeSet<PathBuf> {
    events
        .iter()
        .flat_map(|e| match e {
            WatchEvent::Changed { created, .. } => created.clone(),
            WatchEvent::Degraded { .. } => Vec::new(),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_files_are_reported_created_and_edited_ones_are_not() {
    let mut f = start(|r| write(&r.join("old.txt"), "x"));
    let old = f.root.join("old.txt");
    let new = f.root.join("new.txt");
    let nested = f.root.join("made/now/deep.txt");
    write(&old, "edited");
    write(&new, "new");
    write(&nested, "in a new folder");
    let sentinel = f.root.join("sentinel");
    write(&sentinel, "s");
    let events = f.events_until(&sentinel).await;
    let changed = changed_paths(&events);
    assert!(changed.contains(&old), "{changed:?}");
    let mut created = created_paths(&events);
    created.remove(&sentinel);
    assert_eq!(created, BTreeSet::from([nested, new]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_created_file_is_reported() {
    let mut f = start(|_| {});
    let file = f.root.join("a.txt");
    write(&file, "hello");
    let paths = f.paths_until(&file).await;
    assert!(paths.contains(&file));
    // Modified and removed files too.
    write(&file, "again");
    assert!(f.paths_until(&file).await.contains(&file));
    std::fs::remove_file(&file).unwrap();
    assert!(f.paths_until(&file).await.contains(&file));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renames_report_both_names() {
    let mut f = start(|r| write(&r.join("old.txt"), "x"));
    std::fs::rename(f.root.join("old.txt"), f.root.join("new.txt")).unwrap();
    let paths = f.settle(0).await;
    assert!(paths.contains(&f.root.join("old.txt")), "{paths:?}");
    assert!(paths.contains(&f.root.join("new.txt")), "{paths:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_writes_is_reported_as_few_events() {
    let mut f = start(|_| {});
    let file = f.root.join("busy.txt");
    for i in 0..100 {
        write(&file, &format!("version {i}"));
    }
    let sentinel = f.root.join("sentinel");
    write(&sentinel, "s");
    let events = f.events_until(&sentinel).await;
    let with_file: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            WatchEvent::Changed { paths, .. } => Some(paths),
            WatchEvent::Degraded { .. } => None,
        })
        .filter(|paths| paths.contains(&file))
        .collect();
    // Debounced: far fewer reports than writes (one, unless the machine stalls for a second),
    // and never the same path twice in one report.
    assert!(!with_file.is_empty());
    assert!(with_file.len() < 20, "{} reports", with_file.len());
    for paths in with_file {
        assert_eq!(paths.iter().filter(|p| **p == file).count(), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignored_paths_are_not_reported() {
    let mut f = start(|r| {
        write(&r.join(".gitignore"), "*.log\ntarget/\n");
        write(&r.join("sub/.gitignore"), "secret.txt\n!keep.log\n");
        write(&r.join(".git/info/exclude"), "excluded.txt\n");
        write(&r.join(".git/HEAD"), "ref: refs/heads/main\n");
        write(&r.join("target/debug/old"), "x");
    });
    let r = f.root.clone();
    let ignored = [
        r.join("x.log"),
        r.join("deep/er/y.log"),
        r.join("target/debug/app"),
        r.join("target/new/z"),
        r.join("sub/secret.txt"),
        r.join("excluded.txt"),
        r.join(".git/HEAD"),
        r.join(".git/objects/ab/cdef"),
        r.join(".a.txt.acpdesk-tmp-0123456789abcdef"),
    ];
    let reported = [
        r.join("sub/keep.log"), // re-included by the nested .gitignore
        r.join("secret.txt"),   // the nested rule does not apply above its folder
        r.join("sub/normal.txt"),
        r.join("deep/er/z.txt"),
    ];
    for p in ignored.iter().chain(&reported) {
        write(p, "data");
    }
    let paths = f.settle(1).await;
    for p in &ignored {
        assert!(!paths.contains(p), "{} reported: {paths:?}", p.display());
    }
    for p in &reported {
        assert!(paths.contains(p), "{} missing: {paths:?}", p.display());
    }
    // Ignored folders get no watch of their own.
    let watched = f
        .watcher
        .as_ref()
        .unwrap()
        .shared
        .watched
        .lock()
        .unwrap()
        .clone();
    assert!(watched.contains_key(&r.join("sub")));
    assert!(
        !watched.keys().any(|d| d.starts_with(r.join("target"))),
        "{watched:?}"
    );
    assert!(
        !watched.keys().any(|d| d.starts_with(r.join(".git"))),
        "{watched:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_gitignore_applies() {
    let mut f = start(|r| write(&r.join(".gitignore"), "*.tmp\n"));
    write(&f.root.join("a.tmp"), "x");
    write(&f.root.join(".gitignore"), "*.bak\n");
    let paths = f.settle(1).await;
    assert!(paths.contains(&f.root.join(".gitignore")));
    write(&f.root.join("b.tmp"), "x");
    write(&f.root.join("c.bak"), "x");
    let paths = f.settle(2).await;
    assert!(paths.contains(&f.root.join("b.tmp")), "{paths:?}");
    assert!(!paths.contains(&f.root.join("c.bak")), "{paths:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_folder_is_watched() {
    let mut f = start(|_| {});
    // Written at once: the file may land before the folder's watch exists; the walk finds it.
    let first = f.root.join("new/deeper/first.txt");
    write(&first, "1");
    assert!(f.paths_until(&first).await.contains(&first));
    // Written later: only the folder's own watch can see it.
    let later = f.root.join("new/deeper/later.txt");
    write(&later, "2");
    assert!(f.paths_until(&later).await.contains(&later));
    // Folders themselves are not reported.
    let paths = f.settle(1).await;
    assert!(!paths.contains(&f.root.join("new")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_removed_and_recreated_is_watched_again() {
    let mut f = start(|r| write(&r.join("d/a.txt"), "x"));
    std::fs::remove_dir_all(f.root.join("d")).unwrap();
    f.settle(1).await;
    std::fs::create_dir(f.root.join("d")).unwrap();
    f.settle(2).await;
    let later = f.root.join("d/b.txt");
    write(&later, "y");
    assert!(f.paths_until(&later).await.contains(&later));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_root_watches_another_folder() {
    let mut f = start(|_| {});
    let (_other_dir, other) = tempdir();
    f.watcher.as_ref().unwrap().add_root(&other).unwrap();
    let file = other.join("x.txt");
    write(&file, "x");
    assert!(f.paths_until(&file).await.contains(&file));
    assert!(matches!(
        f.watcher.as_ref().unwrap().add_root(&other.join("missing")),
        Err(WatchError::Root { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drop_stops_events() {
    let mut f = start(|_| {});
    f.settle(1).await;
    drop(f.watcher.take());
    write(&f.root.join("after.txt"), "x");
    // The sender went with the watcher: the channel ends, with nothing about the new file.
    while let Some(ev) = tokio::time::timeout(PATIENCE, f.rx.recv()).await.unwrap() {
        assert!(
            !changed_paths(std::slice::from_ref(&ev)).contains(&f.root.join("after.txt")),
            "{ev:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recursive_mode_reports_and_filters() {
    // The macOS/Windows strategy, exercised here on inotify's recursive emulation.
    let (_dir, root) = tempdir();
    write(&root.join(".gitignore"), "*.log\n");
    let (tx, rx) = mpsc::channel(16);
    let watcher = RootWatcher::start_with(std::slice::from_ref(&root), tx, false, |h| {
        Ok(
            Box::new(RecommendedWatcher::new(h, notify::Config::default())?)
                as Box<dyn WatchBackend>,
        )
    })
    .unwrap();
    let mut f = Fixture {
        _dir,
        root,
        rx,
        watcher: Some(watcher),
    };
    write(&f.root.join("a.log"), "x");
    write(&f.root.join("sub/b.txt"), "x");
    let paths = f.settle(1).await;
    assert!(!paths.contains(&f.root.join("a.log")));
    assert!(paths.contains(&f.root.join("sub/b.txt")), "{paths:?}");
}

/// A real backend that refuses watches past `left`, as inotify does at max_user_watches.
struct Limited {
    inner: RecommendedWatcher,
    left: usize,
}

impl WatchBackend for Limited {
    fn watch(&mut self, path: &Path, recursive: bool) -> notify::Result<()> {
        if self.left == 0 {
            return Err(notify::Error::new(notify::ErrorKind::MaxFilesWatch));
        }
        self.left -= 1;
        WatchBackend::watch(&mut self.inner, path, recursive)
    }
    fn unwatch(&mut self, path: &Path) -> notify::Result<()> {
        WatchBackend::unwatch(&mut self.inner, path)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watch_limit_degrades_once_and_keeps_watching() {
    let (_dir, root) = tempdir();
    for d in ["a", "b", "c", "d"] {
        std::fs::create_dir(root.join(d)).unwrap();
    }
    let (tx, rx) = mpsc::channel(16);
    let watcher = RootWatcher::start_with(std::slice::from_ref(&root), tx, true, |h| {
        Ok(Box::new(Limited {
            inner: RecommendedWatcher::new(h, notify::Config::default())?,
            left: 2,
        }) as Box<dyn WatchBackend>)
    })
    .unwrap();
    assert!(watcher.is_degraded());
    let mut f = Fixture {
        _dir,
        root,
        rx,
        watcher: Some(watcher),
    };
    // More folders, more refusals: still one notice.
    std::fs::create_dir_all(f.root.join("e/f/g")).unwrap();
    let sentinel = f.root.join("sentinel-x");
    write(&sentinel, "s");
    let events = f.events_until(&sentinel).await;
    let degraded: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            WatchEvent::Degraded { reason } => Some(reason),
            WatchEvent::Changed { .. } => None,
        })
        .collect();
    assert_eq!(degraded.len(), 1, "{events:?}");
    assert!(degraded[0].contains("max_user_watches"), "{}", degraded[0]);
    // The root (watched first) still reports.
    let file = f.root.join("still.txt");
    write(&file, "x");
    assert!(f.paths_until(&file).await.contains(&file));
}

#[test]
fn watch_limit_errors_are_recognised() {
    assert!(is_watch_limit(&notify::Error::new(
        notify::ErrorKind::MaxFilesWatch
    )));
    assert!(is_watch_limit(&notify::Error::io(
        std::io::Error::from_raw_os_error(28)
    )));
    assert!(!is_watch_limit(&notify::Error::path_not_found()));
    assert!(!is_watch_limit(&notify::Error::io(
        std::io::Error::from_raw_os_error(2)
    )));
}

#[test]
fn read_tracker_conflicts() {
    let (_dir, root) = tempdir();
    let file = root.join("a.txt");
    write(&file, "one");
    let mut t = ReadTracker::new();
    // Never read: nothing to overlook.
    assert_eq!(t.check_before_write(&file), None);
    t.note_read(&file);
    assert_eq!(t.check_before_write(&file), None);
    // Changed outside: a conflict.
    write(&file, "two");
    let c = t.check_before_write(&file).expect("conflict");
    assert!(c.to_string().contains("was changed"), "{c}");
    // Our own write, noted: no conflict.
    write(&file, "three");
    t.note_written(&file, "three");
    assert_eq!(t.check_before_write(&file), None);
    // Deleted outside.
    std::fs::remove_file(&file).unwrap();
    let c = t.check_before_write(&file).expect("conflict");
    assert!(c.to_string().contains("was deleted"), "{c}");
    // Read while missing (Gemini's compatibility answer), then created outside.
    let new = root.join("new.txt");
    t.note_read(&new);
    assert_eq!(t.check_before_write(&new), None);
    write(&new, "surprise");
    let c = t.check_before_write(&new).expect("conflict");
    assert!(c.to_string().contains("was created"), "{c}");
    t.forget(&new);
    assert_eq!(t.check_before_write(&new), None);
}

#[test]
fn read_tracker_touch_without_change_is_not_a_conflict() {
    let (_dir, root) = tempdir();
    let file = root.join("a.txt");
    write(&file, "same");
    let mut t = ReadTracker::new();
    t.note_read(&file);
    write(&file, "same");
    assert_eq!(t.check_before_write(&file), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renamed_folder_reports_under_its_new_name() {
    let mut f = start(|r| write(&r.join("old/a.txt"), "x"));
    std::fs::rename(f.root.join("old"), f.root.join("new")).unwrap();
    let paths = f.settle(1).await;
    // The folders themselves are not file changes; the file found under the new name is.
    assert!(!paths.contains(&f.root.join("old")), "{paths:?}");
    assert!(paths.contains(&f.root.join("new/a.txt")), "{paths:?}");
    write(&f.root.join("new/a.txt"), "y");
    let paths = f.settle(2).await;
    assert!(paths.contains(&f.root.join("new/a.txt")), "{paths:?}");
    assert!(!paths.contains(&f.root.join("old/a.txt")), "{paths:?}");
}

#[test]
fn handles_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<RootWatcher>();
    check::<ReadTracker>();
    check::<crate::audit::AuditLog>();
    check::<crate::rules::RuleStore>();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_an_ignored_folder_is_not_reported() {
    let mut f = start(|r| {
        write(&r.join(".gitignore"), "build/\n");
        write(&r.join("build/out/x.o"), "x");
        write(&r.join("src/a.rs"), "x");
    });
    std::fs::remove_dir_all(f.root.join("build")).unwrap();
    std::fs::remove_dir_all(f.root.join("src")).unwrap();
    let paths = f.settle(1).await;
    assert!(
        !paths.iter().any(|p| p.starts_with(f.root.join("build"))),
        "{paths:?}"
    );
    // A removed folder is its files, not a path of its own.
    assert!(paths.contains(&f.root.join("src/a.rs")), "{paths:?}");
    assert!(!paths.contains(&f.root.join("src")), "{paths:?}");
}
