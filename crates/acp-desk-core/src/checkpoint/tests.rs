//! The checkpoints against real folders and the real `git` (tests are skipped without one).
//! Tests run as root here, so unreadable files cannot be tested (root reads everything).
#![allow(clippy::unwrap_used)] // test code: a panic with the error is the failure report

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::*;

struct Fx {
    _data: tempfile::TempDir,
    proj: tempfile::TempDir,
    cp: Checkpoints,
}

impl Fx {
    fn root(&self) -> &Path {
        self.cp.root()
    }
    fn p(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }
    fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let p = self.p(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    fn chmod(&self, rel: &str, bits: u32) {
        std::fs::set_permissions(self.p(rel), std::fs::Permissions::from_mode(bits)).unwrap();
    }
    fn read(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.p(rel)).unwrap()
    }
    fn hash(&self) -> BTreeMap<String, String> {
        hash_tree(self.root())
    }
    /// A turn of `session`: begin, `f`, finish (with `written` through us). Its number.
    fn turn(&self, session: &str, written: &[&str], f: impl FnOnce(&Fx)) -> u32 {
        let s = self.cp.begin(session, StepKind::Turn, None).unwrap();
        f(self);
        let written: Vec<PathBuf> = written.iter().map(|r| self.p(r)).collect();
        self.cp.finish(session, s.turn, &written, &written).unwrap();
        s.turn
    }
}

/// `git`, when there is one; in CI its absence fails the test instead of skipping it.
fn git_for_tests() -> Option<PathBuf> {
    let git = find_git();
    assert!(
        git.is_some() || std::env::var_os("CI").is_none(),
        "no git program: the checkpoint tests cannot run (CI installs it)"
    );
    git
}

fn fixture_with(settings: CheckpointSettings, init: impl FnOnce(&Path)) -> Option<Fx> {
    let git = git_for_tests()?;
    let data = tempfile::tempdir().unwrap();
    let proj = tempfile::tempdir().unwrap();
    init(proj.path());
    let cp = Checkpoints::open(data.path(), proj.path(), &settings, Some(git), &[]).unwrap();
    Some(Fx {
        _data: data,
        proj,
        cp,
    })
}

fn fixture(init: impl FnOnce(&Path)) -> Option<Fx> {
    fixture_with(CheckpointSettings::default(), init)
}

fn put(root: &Path, rel: &str, bytes: impl AsRef<[u8]>) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

fn chmod(root: &Path, rel: &str, bits: u32) {
    std::fs::set_permissions(root.join(rel), std::fs::Permissions::from_mode(bits)).unwrap();
}

/// Every file and link under `root` (not `.git`'s when `skip_git`): sha256 of its bytes (a
/// link's target) and its mode bits.
fn hash_tree(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let path = e.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, format!("link {}", target.display()));
            } else if meta.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                let digest = Sha256::digest(&bytes);
                let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
                out.insert(
                    rel,
                    format!("{hex} {:o}", meta.permissions().mode() & 0o7777),
                );
            }
        }
    }
    out
}

/// Bytes that do not compress.
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn done_step(outcome: &RevertOutcome) -> u32 {
    match outcome {
        RevertOutcome::Done { step, .. } => *step,
        other => panic!("not done: {other:?}"),
    }
}

fn base_tree(root: &Path) {
    put(root, "a.txt", "one\ntwo\nthree\n");
    put(
        root,
        "old.txt",
        "a file that will move\nwith lines\nof its own\n",
    );
    put(root, "dir/nested.txt", "nested\n");
    put(root, "b.bin", [0u8, 1, 2, 3, 255, 0, 7]);
    put(root, "run.sh", "#!/bin/sh\necho hi\n");
    chmod(root, "run.sh", 0o755);
    put(root, "private.key", "secret\n");
    chmod(root, "private.key", 0o600);
    put(root, "shared.txt", "shared\n");
    chmod(root, "shared.txt", 0o664);
}

#[test]
fn a_turn_is_reviewed_and_undone_byte_for_byte() {
    let Some(fx) = fixture(base_tree) else { return };
    let start = fx.hash();
    let t = fx.turn("s1", &[], |fx| {
        fx.write("a.txt", "one\n2\nthree\nfour\n");
        fx.write("new/deep/file.txt", "created\n");
        std::fs::remove_file(fx.p("dir/nested.txt")).unwrap();
        std::fs::rename(fx.p("old.txt"), fx.p("moved.txt")).unwrap();
        fx.write("b.bin", [9u8, 0, 0, 1]);
        fx.chmod("run.sh", 0o644);
        fx.write("shared.txt", "shared, changed\n");
        fx.chmod("private.key", 0o640);
    });
    assert_eq!(t, 1);
    let changes = fx.cp.changes("s1", Some(t)).unwrap();
    let by: BTreeMap<&str, &FileChange> =
        changes.files.iter().map(|f| (f.path.as_str(), f)).collect();
    assert_eq!(by["a.txt"].status, FileStatus::Modified);
    assert_eq!((by["a.txt"].added, by["a.txt"].removed), (Some(2), Some(1)));
    assert_eq!(by["new/deep/file.txt"].status, FileStatus::Added);
    assert_eq!(by["dir/nested.txt"].status, FileStatus::Deleted);
    assert_eq!(by["moved.txt"].status, FileStatus::Renamed);
    assert_eq!(by["moved.txt"].old_path.as_deref(), Some("old.txt"));
    assert!(by["b.bin"].binary);
    assert!(by["run.sh"].mode_only);
    assert!(by["private.key"].mode_only, "{changes:?}");
    assert_eq!(changes.summary.files as usize, changes.files.len());
    let steps = fx.cp.steps("s1").unwrap();
    assert_eq!(steps.len(), 1);
    assert!(steps[0].complete);
    assert_eq!(steps[0].summary, Some(changes.summary));

    let v = fx.cp.file_versions("s1", Some(t), "a.txt", None).unwrap();
    assert_eq!(v.before.unwrap().text.as_deref(), Some("one\ntwo\nthree\n"));
    assert_eq!(
        v.after.unwrap().text.as_deref(),
        Some("one\n2\nthree\nfour\n")
    );
    assert_eq!(
        v.now.unwrap().text.as_deref(),
        Some("one\n2\nthree\nfour\n")
    );
    let v = fx
        .cp
        .file_versions("s1", Some(t), "moved.txt", Some("old.txt"))
        .unwrap();
    assert!(v.before.is_some() && v.after.is_some());

    let out = fx.cp.revert("s1", t, None, false).unwrap();
    let step = done_step(&out);
    assert_eq!(step, 2);
    assert_eq!(fx.hash(), start);
    assert!(!fx.p("new").exists(), "emptied folders are removed");
    let steps = fx.cp.steps("s1").unwrap();
    assert_eq!(steps[0].undone_by, vec![2]);
    assert_eq!(steps[1].kind, StepKind::Revert);
    assert_eq!(steps[1].undoes, Some(1));
}

#[test]
fn mode_bits_alone_come_back() {
    let Some(fx) = fixture(base_tree) else { return };
    let start = fx.hash();
    let t = fx.turn("s", &[], |fx| {
        fx.chmod("private.key", 0o644);
        fx.chmod("shared.txt", 0o600);
        fx.chmod("a.txt", 0o664);
    });
    let changes = fx.cp.changes("s", Some(t)).unwrap();
    assert_eq!(changes.files.len(), 3, "{changes:?}");
    assert!(changes.files.iter().all(|f| f.mode_only));
    done_step(&fx.cp.revert("s", t, None, false).unwrap());
    assert_eq!(fx.hash(), start);
}

#[test]
fn one_file_of_a_turn_is_undone() {
    let Some(fx) = fixture(base_tree) else { return };
    let t = fx.turn("s", &[], |fx| {
        fx.write("a.txt", "changed\n");
        fx.write("shared.txt", "changed too\n");
    });
    let out = fx.cp.revert("s", t, Some("a.txt"), false).unwrap();
    match &out {
        RevertOutcome::Done { files, .. } => assert_eq!(files, &["a.txt".to_owned()]),
        o => panic!("{o:?}"),
    }
    assert_eq!(fx.read("a.txt"), b"one\ntwo\nthree\n");
    assert_eq!(fx.read("shared.txt"), b"changed too\n");
    assert!(matches!(
        fx.cp.revert("s", t, Some("run.sh"), false),
        Err(CheckpointError::NotChanged(..))
    ));
    assert!(matches!(
        fx.cp.revert("s", t, Some("../x"), false),
        Err(CheckpointError::Outside(_))
    ));
    assert!(matches!(
        fx.cp.revert("s", 99, None, false),
        Err(CheckpointError::UnknownStep { turn: 99 })
    ));
}

#[test]
fn nested_ignores_are_left_alone() {
    let Some(fx) = fixture(|r| {
        put(r, ".gitignore", "*.log\n");
        put(r, "sub/.gitignore", "build/\n!keep.log\n");
        put(r, "sub/keep.log", "kept\n");
        put(r, "sub/build/out.o", "obj\n");
        put(r, "x.log", "log\n");
        put(r, "sub/code.c", "int x;\n");
    }) else {
        return;
    };
    let s = fx.cp.begin("s", StepKind::Turn, None).unwrap();
    fx.write("sub/build/out.o", "obj 2\n");
    fx.write("x.log", "log 2\n");
    fx.write("sub/keep.log", "kept 2\n");
    fx.write("sub/code.c", "int y;\n");
    let watched = ["sub/build/out.o", "x.log", "sub/keep.log", "sub/code.c"].map(|r| fx.p(r));
    fx.cp.finish("s", s.turn, &[], &watched).unwrap();
    let changes = fx.cp.changes("s", Some(s.turn)).unwrap();
    let paths: Vec<&str> = changes.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["sub/code.c", "sub/keep.log"]);
    assert_eq!(changes.unrestorable, ["sub/build/out.o", "x.log"]);
    done_step(&fx.cp.revert("s", s.turn, None, false).unwrap());
    assert_eq!(fx.read("sub/code.c"), b"int x;\n");
    assert_eq!(fx.read("sub/keep.log"), b"kept\n");
    assert_eq!(fx.read("x.log"), b"log 2\n", "ignored: not ours to restore");
    assert_eq!(fx.read("sub/build/out.o"), b"obj 2\n");
    // The folder watcher never reports ignored files: found without it, by their times.
    let s = fx.cp.begin("s", StepKind::Turn, None).unwrap();
    fx.write("x.log", "log 3\n");
    fx.write("sub/build/out.o", "obj 3\n");
    fx.cp.finish("s", s.turn, &[], &[]).unwrap();
    let changes = fx.cp.changes("s", Some(s.turn)).unwrap();
    assert_eq!(changes.unrestorable, ["sub/build/", "x.log"]);
}

#[test]
fn symlinks_are_stored_as_links() {
    let Some(fx) = fixture(|r| {
        put(r, "target.txt", "target\n");
        put(r, "other.txt", "other\n");
        put(r, "plain.txt", "plain\n");
        std::os::unix::fs::symlink("target.txt", r.join("link")).unwrap();
        std::os::unix::fs::symlink("/nonexistent/outside", r.join("dangling")).unwrap();
    }) else {
        return;
    };
    let start = fx.hash();
    let t = fx.turn("s", &[], |fx| {
        std::fs::remove_file(fx.p("link")).unwrap();
        std::os::unix::fs::symlink("other.txt", fx.p("link")).unwrap();
        std::os::unix::fs::symlink("plain.txt", fx.p("newlink")).unwrap();
        std::fs::remove_file(fx.p("plain.txt")).unwrap();
        std::os::unix::fs::symlink("target.txt", fx.p("plain.txt")).unwrap();
        std::fs::remove_file(fx.p("dangling")).unwrap();
    });
    let changes = fx.cp.changes("s", Some(t)).unwrap();
    let by: BTreeMap<&str, &FileChange> =
        changes.files.iter().map(|f| (f.path.as_str(), f)).collect();
    assert_eq!(by["plain.txt"].status, FileStatus::TypeChanged);
    let v = fx.cp.file_versions("s", Some(t), "link", None).unwrap();
    assert_eq!(v.before.unwrap().link.as_deref(), Some("target.txt"));
    assert_eq!(v.now.unwrap().link.as_deref(), Some("other.txt"));
    done_step(&fx.cp.revert("s", t, None, false).unwrap());
    assert_eq!(fx.hash(), start);
    assert!(
        std::fs::symlink_metadata(fx.p("dangling"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn ignored_files_written_through_us_are_restored() {
    let Some(fx) = fixture(|r| {
        put(r, ".gitignore", ".env\n*.secret\n");
        put(r, ".env", "KEY=old\n");
        chmod(r, ".env", 0o600);
        put(r, "code.rs", "fn main() {}\n");
    }) else {
        return;
    };
    let start = fx.hash();
    let s = fx.cp.begin("s", StepKind::Turn, None).unwrap();
    assert!(fx.cp.save_before_write("s", s.turn, &fx.p(".env")).unwrap());
    assert!(
        !fx.cp.save_before_write("s", s.turn, &fx.p(".env")).unwrap(),
        "saved once"
    );
    fx.write(".env", "KEY=new\n");
    assert!(
        !fx.cp
            .save_before_write("s", s.turn, &fx.p("new.secret"))
            .unwrap(),
        "nothing to save yet"
    );
    fx.write("new.secret", "created\n");
    fx.write("code.rs", "fn main() { changed() }\n");
    let written = [fx.p(".env"), fx.p("new.secret")];
    fx.cp.finish("s", s.turn, &written, &written).unwrap();
    let changes = fx.cp.changes("s", Some(s.turn)).unwrap();
    let paths: Vec<&str> = changes.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, [".env", "code.rs", "new.secret"]);
    assert!(changes.unrestorable.is_empty(), "{changes:?}");
    done_step(&fx.cp.revert("s", s.turn, None, false).unwrap());
    assert_eq!(fx.hash(), start);
    assert!(!fx.p("new.secret").exists());
}

#[test]
fn an_outside_edit_is_a_conflict_unless_forced() {
    let Some(fx) = fixture(base_tree) else { return };
    let t = fx.turn("s", &[], |fx| {
        fx.write("a.txt", "agent\n");
        fx.write("shared.txt", "agent too\n");
        fx.write("gone.txt", "made by the agent\n");
        fx.write("made.txt", "made\n");
    });
    // The user edits one, deletes another, and brings back what the turn deleted? (none here)
    fx.write("a.txt", "user\n");
    std::fs::remove_file(fx.p("made.txt")).unwrap();
    let before = fx.hash();
    let steps_before = fx.cp.steps("s").unwrap();
    let out = fx.cp.revert("s", t, None, false).unwrap();
    let RevertOutcome::Conflicts { conflicts } = out else {
        panic!("{out:?}")
    };
    let got: BTreeMap<&str, ConflictReason> = conflicts
        .iter()
        .map(|c| (c.path.as_str(), c.reason))
        .collect();
    assert_eq!(got.len(), 1, "{conflicts:?}");
    assert_eq!(got["a.txt"], ConflictReason::Changed);
    assert_eq!(fx.hash(), before, "nothing written");
    assert_eq!(fx.cp.steps("s").unwrap(), steps_before, "no step left");
    // made.txt is already as wanted (absent): no conflict, nothing to do for it.
    let out = fx.cp.revert("s", t, None, true).unwrap();
    done_step(&out);
    assert_eq!(fx.read("a.txt"), b"one\ntwo\nthree\n");
    assert_eq!(fx.read("shared.txt"), b"shared\n");
    assert!(!fx.p("gone.txt").exists());
    assert!(!fx.p("made.txt").exists());
}

#[test]
fn a_deleted_file_brought_back_is_a_conflict() {
    let Some(fx) = fixture(base_tree) else { return };
    let t = fx.turn("s", &[], |fx| {
        std::fs::remove_file(fx.p("a.txt")).unwrap();
        fx.write("made.txt", "made\n");
    });
    fx.write("a.txt", "the user's new a\n");
    std::fs::remove_file(fx.p("made.txt")).unwrap();
    fx.write("made.txt", "the user's made\n");
    let RevertOutcome::Conflicts { conflicts } = fx.cp.revert("s", t, None, false).unwrap() else {
        panic!()
    };
    let got: BTreeMap<&str, ConflictReason> = conflicts
        .iter()
        .map(|c| (c.path.as_str(), c.reason))
        .collect();
    assert_eq!(got["a.txt"], ConflictReason::Created);
    assert_eq!(got["made.txt"], ConflictReason::Changed);
}

#[test]
fn another_sessions_turn_is_a_conflict() {
    let Some(fx) = fixture(base_tree) else { return };
    let t1 = fx.turn("one", &[], |fx| fx.write("a.txt", "session one\n"));
    let t2 = fx.turn("two", &[], |fx| fx.write("a.txt", "session two\n"));
    assert_eq!((t1, t2), (1, 1), "steps are numbered per session");
    let before = fx.hash();
    let RevertOutcome::Conflicts { conflicts } = fx.cp.revert("one", t1, None, false).unwrap()
    else {
        panic!()
    };
    assert_eq!(conflicts[0].path, "a.txt");
    assert_eq!(fx.hash(), before);
    // Session two can undo its own turn.
    done_step(&fx.cp.revert("two", t2, None, false).unwrap());
    assert_eq!(fx.read("a.txt"), b"session one\n");
    // And now session one's can go too.
    done_step(&fx.cp.revert("one", t1, None, false).unwrap());
    assert_eq!(fx.read("a.txt"), b"one\ntwo\nthree\n");
    assert_eq!(fx.cp.storage().unwrap().sessions, 2);
}

#[test]
fn a_revert_is_undone_in_turn() {
    let Some(fx) = fixture(base_tree) else { return };
    let t = fx.turn("s", &[], |fx| {
        fx.write("a.txt", "agent\n");
        fx.write("made.txt", "made\n");
        std::fs::remove_file(fx.p("shared.txt")).unwrap();
    });
    let after_turn = fx.hash();
    let r = done_step(&fx.cp.revert("s", t, None, false).unwrap());
    assert_ne!(fx.hash(), after_turn);
    let rr = done_step(&fx.cp.revert("s", r, None, false).unwrap());
    assert_eq!(fx.hash(), after_turn);
    let steps = fx.cp.steps("s").unwrap();
    assert_eq!(steps[(r - 1) as usize].undone_by, vec![rr]);
    assert_eq!(
        fx.cp
            .revert("s", t, None, false)
            .map(|o| done_step(&o))
            .unwrap(),
        4
    );
}

#[test]
fn restore_to_before_a_step_across_steps() {
    let Some(fx) = fixture(base_tree) else { return };
    let _ = fx.turn("s", &[], |fx| fx.write("a.txt", "1\n"));
    let before2 = fx.hash();
    let t2 = fx.turn("s", &[], |fx| {
        fx.write("a.txt", "2\n");
        fx.write("two.txt", "2\n");
    });
    let _ = fx.turn("s", &[], |fx| {
        std::fs::remove_file(fx.p("run.sh")).unwrap();
        std::fs::rename(fx.p("two.txt"), fx.p("three.txt")).unwrap();
        fx.chmod("shared.txt", 0o600);
    });
    let last = fx.hash();
    // The user changes a file after the last checkpoint: a conflict.
    fx.write("b.bin", "user");
    let RevertOutcome::Conflicts { conflicts } = fx.cp.restore("s", t2, false).unwrap() else {
        panic!()
    };
    assert_eq!(conflicts.len(), 1);
    assert_eq!(conflicts[0].path, "b.bin");
    std::fs::write(fx.p("b.bin"), [0u8, 1, 2, 3, 255, 0, 7]).unwrap();
    assert_eq!(fx.hash(), last);
    let r = done_step(&fx.cp.restore("s", t2, false).unwrap());
    assert_eq!(fx.hash(), before2);
    assert_eq!(
        fx.cp.restore("s", t2, false).unwrap(),
        RevertOutcome::Unchanged
    );
    let info = &fx.cp.steps("s").unwrap()[(r - 1) as usize];
    assert_eq!((info.kind, info.undoes), (StepKind::Restore, Some(t2)));
    // The restore is undone like any step.
    done_step(&fx.cp.revert("s", r, None, false).unwrap());
    assert_eq!(fx.hash(), last);
    // Forced over an outside change.
    fx.write("a.txt", "user\n");
    done_step(&fx.cp.restore("s", 1, true).unwrap());
    assert_eq!(fx.read("a.txt"), b"one\ntwo\nthree\n");
}

#[test]
fn large_files_are_skipped_with_a_note() {
    let settings = CheckpointSettings {
        max_file_bytes: 1000,
        ..CheckpointSettings::default()
    };
    let Some(fx) = fixture_with(settings, |r| {
        put(r, "big.bin", noise(5000, 1));
        put(r, "small.txt", "small\n");
        put(r, "grows.txt", "small for now\n");
    }) else {
        return;
    };
    let s = fx.cp.begin("s", StepKind::Turn, None).unwrap();
    assert!(
        s.notes.iter().any(|n| n.contains("`big.bin`")),
        "{:?}",
        s.notes
    );
    fx.write("grows.txt", noise(3000, 2));
    fx.write("small.txt", "changed\n");
    fx.cp.finish("s", s.turn, &[], &[]).unwrap();
    let info = &fx.cp.steps("s").unwrap()[0];
    assert!(
        info.notes.iter().any(|n| n.contains("`grows.txt`")),
        "{:?}",
        info.notes
    );
    let changes = fx.cp.changes("s", Some(s.turn)).unwrap();
    let by: BTreeMap<&str, &FileChange> =
        changes.files.iter().map(|f| (f.path.as_str(), f)).collect();
    assert!(!by.contains_key("big.bin"));
    // The file that grew past the limit left the checkpoint: undoing it would delete it.
    assert_eq!(by["grows.txt"].status, FileStatus::Deleted);
    let out = fx.cp.revert("s", s.turn, Some("small.txt"), false).unwrap();
    done_step(&out);
    assert_eq!(fx.read("small.txt"), b"small\n");
    assert_eq!(fx.read("big.bin"), noise(5000, 1));
}

fn git_in(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_project_that_is_a_git_repository_keeps_its_git_dir() {
    let Some(fx) = fixture(|r| {
        base_tree(r);
        put(r, ".gitignore", "target/\n");
        put(r, "target/out", "built\n");
        git_in(r, &["init", "-q"]);
        git_in(r, &["add", "-A"]);
        git_in(r, &["commit", "-q", "-m", "first"]);
        put(r, ".git/info/exclude", "local-only\n");
        put(r, "local-only", "mine\n");
        // A nested repository (as a submodule's folder is): listed, never entered.
        put(r, "vendor/lib/lib.c", "lib\n");
        git_in(&r.join("vendor/lib"), &["init", "-q"]);
        git_in(&r.join("vendor/lib"), &["add", "-A"]);
        git_in(&r.join("vendor/lib"), &["commit", "-q", "-m", "lib"]);
    }) else {
        return;
    };
    let git_before = hash_tree(&fx.p(".git"));
    let start = fx.hash();
    let s = fx.cp.begin("s", StepKind::Turn, None).unwrap();
    assert!(
        s.notes.iter().any(|n| n.contains("vendor/lib")),
        "{:?}",
        s.notes
    );
    fx.write("a.txt", "agent\n");
    fx.write("vendor/lib/lib.c", "agent in the nested repo\n");
    fx.write("local-only", "changed\n");
    fx.cp.finish("s", s.turn, &[], &[]).unwrap();
    let changes = fx.cp.changes("s", Some(s.turn)).unwrap();
    let paths: Vec<&str> = changes.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["a.txt"], "{changes:?}");
    done_step(&fx.cp.revert("s", s.turn, None, false).unwrap());
    assert_eq!(fx.read("a.txt"), b"one\ntwo\nthree\n");
    assert_eq!(fx.read("vendor/lib/lib.c"), b"agent in the nested repo\n");
    assert_eq!(
        hash_tree(&fx.p(".git")),
        git_before,
        "the user's .git untouched"
    );
    let mut now = fx.hash();
    now.retain(|k, _| !k.starts_with("vendor/") && k != "local-only");
    let mut want = start;
    want.retain(|k, _| !k.starts_with("vendor/") && k != "local-only");
    assert_eq!(now, want);
    // The user's own git sees nothing new from us.
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(fx.root())
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&status.stdout), "?? vendor/\n");
}

#[test]
fn a_running_turn_refuses_reverts() {
    let Some(fx) = fixture(base_tree) else { return };
    let t = fx.turn("s", &[], |fx| fx.write("a.txt", "x\n"));
    let guard = fx.cp.turn_guard().unwrap();
    let before = fx.hash();
    assert!(matches!(
        fx.cp.revert("s", t, None, false),
        Err(CheckpointError::TurnRunning)
    ));
    assert!(matches!(
        fx.cp.restore("s", t, false),
        Err(CheckpointError::TurnRunning)
    ));
    // Another opening (another process's, say) sees it too.
    let other = Checkpoints::open(
        fx._data.path(),
        fx.proj.path(),
        &CheckpointSettings::default(),
        None,
        &[],
    )
    .unwrap();
    let _second = other.turn_guard().unwrap();
    assert!(matches!(
        other.revert("s", t, None, false),
        Err(CheckpointError::TurnRunning)
    ));
    assert_eq!(fx.hash(), before);
    drop(guard);
    drop(_second);
    done_step(&fx.cp.revert("s", t, None, false).unwrap());
}

#[test]
fn an_incomplete_step_cannot_be_undone() {
    let Some(fx) = fixture(base_tree) else { return };
    let s = fx.cp.begin("s", StepKind::Turn, None).unwrap();
    assert!(matches!(
        fx.cp.revert("s", s.turn, None, false),
        Err(CheckpointError::Incomplete { .. })
    ));
    assert!(matches!(
        fx.cp.changes("s", Some(s.turn)),
        Err(CheckpointError::Incomplete { .. })
    ));
    assert!(!fx.cp.steps("s").unwrap()[0].complete);
}

#[test]
fn prune_and_delete_session_free_the_space() {
    let Some(fx) = fixture(|r| put(r, "seed.txt", "seed\n")) else {
        return;
    };
    for i in 0..6u64 {
        fx.turn("a", &[], |fx| fx.write("data.bin", noise(300_000, i + 10)));
    }
    for i in 0..3u64 {
        fx.turn("odd name/with spaces", &[], |fx| {
            fx.write("other.bin", noise(300_000, i + 100))
        });
    }
    let full = fx.cp.storage().unwrap();
    assert_eq!((full.steps, full.sessions), (9, 2));
    assert!(full.bytes > 2_000_000, "{full:?}");
    let tight = Checkpoints::open(
        fx._data.path(),
        fx.proj.path(),
        &CheckpointSettings {
            budget_bytes: 1_000_000,
            ..CheckpointSettings::default()
        },
        None,
        &[],
    )
    .unwrap();
    let pruned = tight.prune().unwrap();
    assert!(pruned.bytes < full.bytes, "{pruned:?} vs {full:?}");
    assert!(pruned.steps < full.steps);
    let a = tight.steps("a").unwrap();
    assert_eq!(a.last().unwrap().turn, 6, "the last step is kept");
    // Numbers go on after the kept step.
    let t = fx.turn("a", &[], |fx| fx.write("seed.txt", "x\n"));
    assert_eq!(t, 7);
    fx.cp.delete_session("odd name/with spaces").unwrap();
    assert!(fx.cp.steps("odd name/with spaces").unwrap().is_empty());
    let after = fx.cp.storage().unwrap();
    assert_eq!(after.sessions, 1);
    assert!(
        after.bytes < pruned.bytes + 400_000,
        "{after:?} vs {pruned:?}"
    );
    fx.cp.delete_session("a").unwrap();
    let empty = fx.cp.storage().unwrap();
    assert_eq!((empty.steps, empty.sessions), (0, 0));
    assert!(empty.bytes < full.bytes / 2, "{empty:?}");
    // Dropping an old session by age.
    let aged = Checkpoints::open(
        fx._data.path(),
        fx.proj.path(),
        &CheckpointSettings {
            max_age_days: 0,
            ..CheckpointSettings::default()
        },
        None,
        &[],
    )
    .unwrap();
    fx.turn("b", &[], |fx| fx.write("seed.txt", "y\n"));
    fx.turn("b", &[], |fx| fx.write("seed.txt", "z\n"));
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let s = aged.prune().unwrap();
    assert_eq!(s.steps, 1, "all but the last step are past the age");
}

#[test]
fn a_failed_revert_leaves_every_file_as_it_was() {
    let Some(fx) = fixture(|r| {
        put(r, "a.txt", "a\n");
        put(r, "m.txt", "m\n");
        put(r, "z.txt", "z\n");
    }) else {
        return;
    };
    let t = fx.turn("s", &[], |fx| {
        fx.write("a.txt", "a 2\n");
        std::fs::remove_file(fx.p("m.txt")).unwrap();
        fx.write("new.txt", "new\n");
        fx.write("z.txt", "z 2\n");
    });
    // A folder where the last file must go: the swap fails after the others were moved in.
    std::fs::remove_file(fx.p("z.txt")).unwrap();
    std::fs::create_dir(fx.p("z.txt")).unwrap();
    put(fx.root(), "z.txt/inner", "inner\n");
    let before = fx.hash();
    let steps = fx.cp.steps("s").unwrap();
    let err = fx.cp.revert("s", t, None, true).unwrap_err();
    assert!(matches!(err, CheckpointError::Apply(_)), "{err:?}");
    assert_eq!(fx.hash(), before, "rolled back byte for byte");
    let names: Vec<String> = std::fs::read_dir(fx.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n.starts_with('.')),
        "no temp left: {names:?}"
    );
    assert_eq!(fx.cp.steps("s").unwrap(), steps, "no step left");
}

#[test]
fn a_folder_that_is_not_a_repository_and_nothing_changed() {
    let Some(fx) = fixture(base_tree) else { return };
    let t = fx.turn("s", &[], |_| {});
    let changes = fx.cp.changes("s", Some(t)).unwrap();
    assert!(changes.files.is_empty());
    assert_eq!(
        fx.cp.revert("s", t, None, false).unwrap(),
        RevertOutcome::Unchanged
    );
    // The session's changes since it started.
    fx.turn("s", &[], |fx| fx.write("a.txt", "x\n"));
    fx.turn("s", &[], |fx| fx.write("b.txt", "y\n"));
    let all = fx.cp.changes("s", None).unwrap();
    assert_eq!(all.turn, None);
    assert_eq!(all.files.len(), 2);
    assert!(!fx.p(".git").exists(), "no .git of ours in the folder");
    assert!(matches!(
        Checkpoints::open(
            fx._data.path(),
            fx.proj.path(),
            &CheckpointSettings {
                enabled: false,
                ..CheckpointSettings::default()
            },
            None,
            &[]
        ),
        Err(CheckpointError::Disabled)
    ));
    assert!(matches!(
        Checkpoints::open(
            fx._data.path(),
            fx.proj.path(),
            &CheckpointSettings::default(),
            Some(PathBuf::from("/nonexistent/git")),
            &[]
        ),
        Err(CheckpointError::NoGit)
    ));
}

#[test]
fn our_own_files_inside_the_folder_are_never_checkpointed() {
    let git = match find_git() {
        Some(g) => g,
        None => return,
    };
    let proj = tempfile::tempdir().unwrap();
    put(proj.path(), "code.txt", "code\n");
    let root = proj.path().canonicalize().unwrap();
    let data = root.join(".acp-data");
    let audit = root.join("audit");
    put(&root, "audit/log", "log\n");
    let cp = Checkpoints::open(
        &data,
        &root,
        &CheckpointSettings::default(),
        Some(git),
        std::slice::from_ref(&audit),
    )
    .unwrap();
    let s = cp.begin("s", StepKind::Turn, None).unwrap();
    put(&root, "audit/log", "log 2\n");
    put(&root, "code.txt", "code 2\n");
    cp.finish("s", s.turn, &[], &[]).unwrap();
    let changes = cp.changes("s", Some(s.turn)).unwrap();
    let paths: Vec<&str> = changes.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["code.txt"]);
}

/// A folder that became a file, and a file that became a folder, are put back.
#[test]
fn a_folder_turned_file_and_back() {
    let Some(fx) = fixture(|r| {
        put(r, "d/x.txt", "x\n");
        put(r, "f", "file\n");
    }) else {
        return;
    };
    let start = fx.hash();
    let t = fx.turn("s", &[], |fx| {
        std::fs::remove_dir_all(fx.p("d")).unwrap();
        fx.write("d", "now a file\n");
        std::fs::remove_file(fx.p("f")).unwrap();
        fx.write("f/y.txt", "now a folder\n");
    });
    let after = fx.hash();
    let r = done_step(&fx.cp.revert("s", t, None, false).unwrap());
    assert_eq!(fx.hash(), start);
    done_step(&fx.cp.revert("s", r, None, false).unwrap());
    assert_eq!(fx.hash(), after);
    let names: Vec<String> = std::fs::read_dir(fx.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n.starts_with('.')),
        "no temp left: {names:?}"
    );
}

#[test]
fn undoing_one_renamed_file_moves_it_back() {
    let Some(fx) = fixture(base_tree) else { return };
    let start = fx.hash();
    let t = fx.turn("s", &[], |fx| {
        std::fs::rename(fx.p("old.txt"), fx.p("moved.txt")).unwrap();
        fx.write("a.txt", "changed\n");
    });
    let changes = fx.cp.changes("s", Some(t)).unwrap();
    let moved = changes
        .files
        .iter()
        .find(|f| f.path == "moved.txt")
        .unwrap();
    assert_eq!(moved.old_path.as_deref(), Some("old.txt"));
    done_step(&fx.cp.revert("s", t, Some("moved.txt"), false).unwrap());
    assert!(!fx.p("moved.txt").exists());
    assert_eq!(fx.read("a.txt"), b"changed\n");
    fx.write("a.txt", "one\ntwo\nthree\n");
    assert_eq!(fx.hash(), start);
}

#[test]
fn an_outside_chmod_is_a_conflict() {
    let Some(fx) = fixture(base_tree) else { return };
    let t = fx.turn("s", &[], |fx| {
        fx.chmod("private.key", 0o644);
        fx.write("shared.txt", "changed\n");
    });
    fx.chmod("private.key", 0o640);
    fx.chmod("shared.txt", 0o600);
    let before = fx.hash();
    let RevertOutcome::Conflicts { conflicts } = fx.cp.revert("s", t, None, false).unwrap() else {
        panic!()
    };
    let paths: Vec<&str> = conflicts.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, ["private.key", "shared.txt"]);
    assert_eq!(fx.hash(), before);
    // Back as the step wanted: nothing to do for it.
    fx.chmod("private.key", 0o600);
    fx.chmod("shared.txt", 0o664);
    done_step(&fx.cp.revert("s", t, None, false).unwrap());
    assert_eq!(fx.read("shared.txt"), b"shared\n");
}

#[test]
fn restore_sees_an_outside_chmod() {
    let Some(fx) = fixture(base_tree) else { return };
    let t = fx.turn("s", &[], |fx| fx.write("private.key", "agent\n"));
    fx.chmod("private.key", 0o644);
    let RevertOutcome::Conflicts { conflicts } = fx.cp.restore("s", t, false).unwrap() else {
        panic!()
    };
    assert_eq!(conflicts[0].path, "private.key");
    done_step(&fx.cp.restore("s", t, true).unwrap());
    assert_eq!(fx.read("private.key"), b"secret\n");
    let mode = std::fs::metadata(fx.p("private.key"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o600);
}

#[test]
fn the_copies_are_kept_where_only_the_user_reads() {
    let Some(fx) = fixture(base_tree) else { return };
    let base = fx._data.path().join("nested/checkpoints");
    let cp = Checkpoints::open(
        &base,
        fx.root(),
        &CheckpointSettings::default(),
        find_git(),
        &[],
    )
    .unwrap();
    let shadow = Checkpoints::shadow_dir(&base, cp.root());
    for dir in [shadow.clone(), base.clone()] {
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", dir.display());
    }
    // One left readable by an earlier version is made private when opened.
    std::fs::set_permissions(&shadow, std::fs::Permissions::from_mode(0o755)).unwrap();
    Checkpoints::open(
        &base,
        fx.root(),
        &CheckpointSettings::default(),
        find_git(),
        &[],
    )
    .unwrap();
    let mode = std::fs::metadata(&shadow).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
}

#[test]
fn a_forced_undo_never_writes_through_a_folder_made_a_link() {
    let Some(fx) = fixture(base_tree) else { return };
    let outside = tempfile::tempdir().unwrap();
    put(outside.path(), "nested.txt", "outside, not ours\n");
    let t = fx.turn("s", &[], |fx| fx.write("dir/nested.txt", "the turn's\n"));
    // After the turn, the folder is replaced by a link out of the project.
    std::fs::remove_dir_all(fx.p("dir")).unwrap();
    std::os::unix::fs::symlink(outside.path(), fx.p("dir")).unwrap();
    let err = fx.cp.revert("s", t, None, true).unwrap_err().to_string();
    assert!(
        err.contains("`dir/nested.txt`: its folder `dir` is a link now")
            && err.contains("nothing was changed"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(outside.path().join("nested.txt")).unwrap(),
        "outside, not ours\n"
    );
    assert!(
        fx.cp
            .steps("s")
            .unwrap()
            .iter()
            .all(|s| s.kind == StepKind::Turn),
        "no step was left"
    );
    // Restoring the folder puts the link's place back as a folder, and writes nothing outside.
    done_step(&fx.cp.restore("s", t, true).unwrap());
    assert!(std::fs::symlink_metadata(fx.p("dir")).unwrap().is_dir());
    assert_eq!(
        std::fs::read_to_string(fx.p("dir/nested.txt")).unwrap(),
        "nested\n"
    );
    assert_eq!(
        std::fs::read_to_string(outside.path().join("nested.txt")).unwrap(),
        "outside, not ours\n"
    );
}

#[test]
fn a_write_waits_for_the_checkpoints_a_bounded_time() {
    let Some(fx) = fixture(|r| {
        put(r, ".gitignore", ".env\n");
        put(r, ".env", "KEY=old\n");
    }) else {
        return;
    };
    let s = fx.cp.begin("s", StepKind::Turn, None).unwrap();
    // Another checkpoint (a long snapshot of another session) holds the repository.
    let held = fx.cp.lock().unwrap();
    let err = fx
        .cp
        .save_before_write("s", s.turn, &fx.p(".env"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`.env` was written without keeping its earlier version"),
        "{err}"
    );
    drop(held);
    // Not kept once: never kept later in the step either (the agent's version is on disk).
    fx.write(".env", "KEY=new\n");
    assert!(!fx.cp.save_before_write("s", s.turn, &fx.p(".env")).unwrap());
    fx.cp.finish("s", s.turn, &[fx.p(".env")], &[]).unwrap();
    // The undo cannot bring it back, says so, and never deletes it as if the turn made it.
    let changes = fx.cp.changes("s", Some(s.turn)).unwrap();
    assert!(
        changes.files.iter().all(|f| f.path != ".env"),
        "{changes:?}"
    );
    assert_eq!(changes.unrestorable, [".env"]);
    let _ = fx.cp.revert("s", s.turn, None, true).unwrap();
    assert_eq!(fx.read(".env"), b"KEY=new\n");
}

#[test]
fn a_file_the_turn_made_is_removed_by_its_undo_however_often_it_was_written() {
    let Some(fx) = fixture(|r| {
        put(r, ".gitignore", "*.secret\n");
        put(r, "keep.txt", "kept\n");
    }) else {
        return;
    };
    let start = fx.hash();
    let s = fx.cp.begin("s", StepKind::Turn, None).unwrap();
    // Written through us twice (Write, then Edit), one of them ignored.
    for rel in ["new.txt", "new.secret"] {
        assert!(!fx.cp.save_before_write("s", s.turn, &fx.p(rel)).unwrap());
        fx.write(rel, "first draft\n");
        assert!(!fx.cp.save_before_write("s", s.turn, &fx.p(rel)).unwrap());
        fx.write(rel, "second draft\n");
    }
    // Made meanwhile by someone else (the user, another session, the agent's shell), then
    // written through us: kept as it was, so the undo never deletes it.
    fx.write("by-someone.txt", "someone's\n");
    assert!(
        fx.cp
            .save_before_write("s", s.turn, &fx.p("by-someone.txt"))
            .unwrap()
    );
    fx.write("by-someone.txt", "edited by the agent\n");
    let written = [fx.p("new.txt"), fx.p("new.secret"), fx.p("by-someone.txt")];
    fx.cp.finish("s", s.turn, &written, &written).unwrap();
    let changes = fx.cp.changes("s", Some(s.turn)).unwrap();
    let statuses: Vec<(&str, FileStatus)> = changes
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.status))
        .collect();
    assert_eq!(
        statuses,
        [
            ("by-someone.txt", FileStatus::Modified),
            ("new.secret", FileStatus::Added),
            ("new.txt", FileStatus::Added),
        ]
    );
    done_step(&fx.cp.revert("s", s.turn, None, false).unwrap());
    assert_eq!(fx.read("by-someone.txt"), b"someone's\n");
    std::fs::remove_file(fx.p("by-someone.txt")).unwrap();
    assert_eq!(fx.hash(), start, "byte for byte as before the turn");
}

/// A `git` that fails every write once `full` exists beside it, as on a full disk; once
/// `full-at-the-end` exists, only the commit of a revert's end (its files already written).
fn git_that_fills_up(dir: &Path) -> PathBuf {
    let real = find_git().unwrap();
    let script = dir.join("git");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nif [ -e \"{end}\" ]; then\n  for a in \"$@\"; do\n    if [ \"$a\" = commit-tree ]; then\n      msg=$(cat)\n      case \"$msg\" in\n        *'kind: revert'*'phase: after'*) echo 'fatal: No space left on device' >&2; exit 128;;\n      esac\n      printf '%s\\n' \"$msg\" | \"{real}\" \"$@\"\n      exit $?\n    fi\n  done\nfi\nif [ -e \"{full}\" ]; then\n  for a in \"$@\"; do\n    case \"$a\" in\n      add|hash-object|write-tree|mktree|commit-tree|update-ref|update-index|gc|repack)\n        echo 'fatal: unable to write new index file: No space left on device' >&2; exit 128;;\n    esac\n  done\nfi\nexec \"{real}\" \"$@\"\n",
            full = dir.join("full").display(),
            end = dir.join("full-at-the-end").display(),
            real = real.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A process forked meanwhile by another test may hold the new file open for writing until
    // it execs (ETXTBSY): wait until the script runs.
    for _ in 0..50 {
        if std::process::Command::new(&script)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    script
}

/// A fixture over [`git_that_fills_up`] (its folder is `bin`).
struct FullFx {
    bin: tempfile::TempDir,
    _data: tempfile::TempDir,
    _proj: tempfile::TempDir,
    cp: Checkpoints,
}

impl FullFx {
    fn root(&self) -> &Path {
        self.cp.root()
    }
}

fn fixture_that_fills_up() -> Option<FullFx> {
    git_for_tests()?;
    let bin = tempfile::tempdir().unwrap();
    let git = git_that_fills_up(bin.path());
    let data = tempfile::tempdir().unwrap();
    let proj = tempfile::tempdir().unwrap();
    base_tree(proj.path());
    let settings = CheckpointSettings::default();
    let cp = Checkpoints::open(data.path(), proj.path(), &settings, Some(git), &[]).unwrap();
    Some(FullFx {
        bin,
        _data: data,
        _proj: proj,
        cp,
    })
}

/// A turn of session `s` that changes `a.txt`.
fn one_turn(cp: &Checkpoints, root: &Path) -> Snapshot {
    let s = cp.begin("s", StepKind::Turn, None).unwrap();
    put(root, "a.txt", "changed by the turn\n");
    cp.finish("s", s.turn, &[], &[]).unwrap();
    s
}

#[test]
fn a_full_disk_changes_nothing_of_the_users() {
    let Some(fx) = fixture_that_fills_up() else {
        return;
    };
    let (cp, root, bin) = (&fx.cp, fx.root().to_path_buf(), fx.bin.path());
    let s = one_turn(cp, &root);
    let after_turn = hash_tree(&root);
    let steps = cp.steps("s").unwrap();

    std::fs::write(bin.join("full"), "").unwrap();
    // The next turn's checkpoint fails and says why; the folder is as it was.
    let err = cp.begin("s", StepKind::Turn, None).unwrap_err().to_string();
    assert!(err.contains("No space left on device"), "{err}");
    assert_eq!(hash_tree(&root), after_turn);
    // An undo cannot be checkpointed: refused before any file is written.
    let err = cp.revert("s", s.turn, None, false).unwrap_err().to_string();
    assert!(err.contains("No space left on device"), "{err}");
    assert_eq!(hash_tree(&root), after_turn, "nothing written");
    assert_eq!(cp.steps("s").unwrap(), steps, "no step left");

    // Space again: the undo goes through.
    std::fs::remove_file(bin.join("full")).unwrap();
    done_step(&cp.revert("s", s.turn, None, false).unwrap());
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
}

#[test]
fn an_undo_whose_end_cannot_be_checkpointed_says_its_files_were_written() {
    let Some(fx) = fixture_that_fills_up() else {
        return;
    };
    let (cp, root, bin) = (&fx.cp, fx.root().to_path_buf(), fx.bin.path());
    let start = hash_tree(&root);
    let s = one_turn(cp, &root);
    let steps = cp.steps("s").unwrap();
    std::fs::write(bin.join("full-at-the-end"), "").unwrap();
    let err = cp.revert("s", s.turn, None, false).unwrap_err();
    let CheckpointError::Partial(text) = &err else {
        panic!("{err:?}")
    };
    assert!(
        text.contains("the files were put back (a.txt)")
            && text.contains("cannot itself be undone")
            && text.contains("No space left on device"),
        "{text}"
    );
    assert_eq!(hash_tree(&root), start, "the undo itself went through");
    assert_eq!(cp.steps("s").unwrap(), steps, "no half step left");
}

/// The folder for the cut-short undo tests: a turn changes a file, deletes one, creates one
/// in new folders and turns a folder into a file. Its undo sets three files aside, makes a
/// folder and moves three files in.
fn interrupted_fixture() -> Option<(Fx, u32)> {
    let fx = fixture(|r| {
        put(r, "a.txt", "a\n");
        put(r, "m.txt", "m\n");
        put(r, "d/keep.txt", "keep\n");
    })?;
    let t = fx.turn("s", &[], |fx| {
        fx.write("a.txt", "a 2\n");
        std::fs::remove_file(fx.p("m.txt")).unwrap();
        fx.write("new/deep/n.txt", "new\n");
        std::fs::remove_dir_all(fx.p("d")).unwrap();
        fx.write("d", "d is a file now\n");
    });
    Some((fx, t))
}

fn names_at_root(fx: &Fx) -> Vec<String> {
    std::fs::read_dir(fx.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// A revert of `t` that "crashes" at the journal's line `n` (before it is written, or just
/// after): whether it did.
fn revert_cut_short(fx: &Fx, t: u32, n: usize, before: bool) -> bool {
    journal::crash::at(n, before);
    let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        fx.cp.revert("s", t, None, false)
    }));
    journal::crash::off();
    match done {
        Ok(outcome) => {
            done_step(&outcome.unwrap());
            false
        }
        Err(_) => true,
    }
}

/// What another process does next: open the folder's checkpoints (taking the lock).
fn reopen(fx: &Fx) -> Checkpoints {
    Checkpoints::open(
        fx._data.path(),
        fx.root(),
        &CheckpointSettings::default(),
        git_for_tests(),
        &[],
    )
    .unwrap()
}

#[test]
fn an_undo_cut_short_anywhere_is_put_back_when_next_opened() {
    let mut cut = 0;
    for n in 0.. {
        for before in [true, false] {
            let Some((fx, t)) = interrupted_fixture() else {
                return;
            };
            let start = {
                // What the undo must give when it is made in the end.
                let r = done_step(&fx.cp.revert("s", t, None, false).unwrap());
                let start = fx.hash();
                done_step(&fx.cp.revert("s", r, None, false).unwrap());
                start
            };
            let after = fx.hash();
            let steps = fx.cp.steps("s").unwrap();
            if !revert_cut_short(&fx, t, n, before) {
                assert_eq!(
                    cut, 16,
                    "the journal has 8 lines, each cut before and after"
                );
                return;
            }
            cut += 1;
            let at = format!("line {n}, {}", if before { "before" } else { "after" });
            if n == 0 && before {
                // Before the journal: no file was touched; the step stays, never completed,
                // as any step cut short between its two checkpoints.
                assert!(!fx.cp.shadow().join("journal").exists());
                let cp = reopen(&fx);
                assert_eq!(fx.hash(), after);
                let left = cp.steps("s").unwrap();
                assert_eq!(left[..steps.len()], steps[..]);
                assert!(!left[steps.len()].complete, "{left:?}");
                assert!(cp.interrupted("s").unwrap().is_empty());
                continue;
            }
            assert!(fx.cp.shadow().join("journal").exists(), "{at}");
            let cp = reopen(&fx);
            assert_eq!(fx.hash(), after, "{at}: every file as before the undo");
            let litter: Vec<String> = names_at_root(&fx)
                .into_iter()
                .filter(|n| n.starts_with('.'))
                .collect();
            assert!(litter.is_empty(), "{at}: no temp left: {litter:?}");
            assert!(!cp.shadow().join("journal").exists(), "{at}");
            assert_eq!(cp.steps("s").unwrap(), steps, "{at}: its step dropped");
            let told = cp.interrupted("s").unwrap();
            assert_eq!(told.len(), 1, "{at}: {told:?}");
            assert_eq!(told[0].kind, StepKind::Revert);
            assert_eq!(told[0].undoes, Some(t));
            assert!(told[0].stranded.is_empty(), "{at}: {told:?}");
            assert!(told[0].files.contains(&"a.txt".to_owned()), "{told:?}");
            assert!(cp.interrupted("other").unwrap().is_empty());
            // The undo can be made now, and the record is gone once it is.
            done_step(&cp.revert("s", t, None, false).unwrap());
            assert_eq!(fx.hash(), start, "{at}: the undo made in the end");
            assert!(cp.interrupted("s").unwrap().is_empty(), "{at}");
        }
    }
}

#[test]
fn a_file_put_where_an_undo_cut_short_set_one_aside_is_not_overwritten() {
    let Some((fx, t)) = interrupted_fixture() else {
        return;
    };
    // Cut short once `a.txt` was set aside (line 1 written and made, line 2 not written).
    assert!(revert_cut_short(&fx, t, 2, true));
    assert!(!fx.p("a.txt").exists());
    fx.write("a.txt", "theirs\n");
    let cp = reopen(&fx);
    assert_eq!(fx.read("a.txt"), b"theirs\n");
    assert_eq!(fx.read("d"), b"d is a file now\n", "the rest is put back");
    let told = cp.interrupted("s").unwrap();
    assert_eq!(told.len(), 1, "{told:?}");
    let [kept] = &told[0].stranded[..] else {
        panic!("{told:?}");
    };
    assert!(kept.contains("a.txt is kept in"), "{kept}");
    // Where it says: the turn's version of a.txt, in the staging folder.
    let aside = kept.rsplit(" is kept in ").next().unwrap();
    assert_eq!(std::fs::read(aside).unwrap(), b"a 2\n");
}
