//! `acp-desk-cli changes`, `revert` and `restore` over the checkpoints `run` took of a real
//! demo agent's turns: the folder back byte for byte, conflicts refused with exit 4 and
//! nothing written, `--force`, a revert of the revert, `restore --before-turn`.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::bin;
use serde_json::Value;

struct Home {
    _dir: tempfile::TempDir,
    root: PathBuf,
    project: PathBuf,
}

fn home() -> Home {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let project = root.join("project");
    std::fs::create_dir_all(&project).unwrap();
    Home {
        _dir: dir,
        root,
        project,
    }
}

impl Home {
    /// `acp-desk-cli ARGS` in the project, with this home's config and data.
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(bin("acp-desk-cli"));
        c.args(args)
            .current_dir(&self.project)
            .env("ACP_DESK_CONFIG_DIR", self.root.join("config"))
            .env("ACP_DESK_DATA_DIR", self.root.join("data"))
            .env("ACP_DESK_DEMO_AGENT", bin("acp-desk-demo-agent"))
            .stdin(Stdio::null());
        c
    }

    fn cli(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.command(args).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn ok(&self, args: &[&str]) -> String {
        let (code, out, err) = self.cli(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        out
    }

    /// A demo turn that writes two files with its own tool (`direct-write`), allowed.
    fn direct_write(&self) -> String {
        self.ok(&[
            "run",
            "--agent",
            "demo",
            "--permission",
            "allow",
            "direct-write",
        ])
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.project.join(rel)).unwrap()
    }
}

/// Every file under `dir`: its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_turn_is_reviewed_undone_and_the_undo_undone_from_the_cli() {
    let h = home();
    std::fs::write(h.project.join("direct-notes.txt"), "the user's notes\n").unwrap();
    let initial = files(&h.project);
    let out = h.direct_write();
    assert!(
        out.contains("acp-desk-cli revert"),
        "the transcript says how to undo: {out}"
    );
    let list = h.ok(&["history", "list"]);
    let id = list.split('\t').next().unwrap().to_owned();

    let doc: Value = serde_json::from_str(&h.ok(&["changes", &id, "--json"])).unwrap();
    assert_eq!(doc["steps"].as_array().unwrap().len(), 1);
    assert_eq!(doc["steps"][0]["kind"], "turn");
    assert_eq!(doc["changes"]["summary"]["files"], 2);
    let turn: Value =
        serde_json::from_str(&h.ok(&["changes", &id, "--turn", "1", "--json"])).unwrap();
    let paths: Vec<&str> = turn["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["direct-folder/new.txt", "direct-notes.txt"]);
    assert!(
        h.ok(&["changes", &id, "--turn", "1"])
            .contains("added   direct-folder/new.txt")
    );

    // An outside edit: refused with the list, nothing written.
    std::fs::write(h.project.join("direct-notes.txt"), "edited by hand\n").unwrap();
    let (code, _, err) = h.cli(&["revert", &id, "--turn", "1"]);
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains("direct-notes.txt: changed since") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(h.read("direct-notes.txt"), "edited by hand\n");
    assert!(h.project.join("direct-folder/new.txt").exists());
    // One file, forced; then the rest of the turn.
    let out = h.ok(&[
        "revert",
        &id,
        "--turn",
        "1",
        "--file",
        "direct-notes.txt",
        "--force",
    ]);
    assert!(out.contains("done as step 2"), "{out}");
    let out = h.ok(&["revert", &id, "--turn", "1"]);
    assert!(out.contains("done as step 3"), "{out}");
    assert_eq!(
        files(&h.project),
        initial,
        "byte for byte as before the turn"
    );

    // The undo undone: the turn's file is back.
    h.ok(&["revert", &id, "--turn", "3"]);
    assert!(h.project.join("direct-folder/new.txt").exists());
    // The whole folder back to before step 1.
    let out = h.ok(&["restore", &id, "--before-turn", "1"]);
    assert!(out.contains("done as step"), "{out}");
    assert_eq!(files(&h.project), initial);

    // Unknown step and session: usage errors.
    assert_eq!(h.cli(&["revert", &id, "--turn", "99"]).0, 2);
    assert_eq!(h.cli(&["changes", "no-such-session"]).0, 2);
    // Deleting the session drops its checkpoints.
    let (_, _, err) = h.cli(&["history", "delete", &id]);
    assert!(err.contains("checkpoints were dropped"), "{err}");
}

#[test]
fn a_revert_while_a_turn_runs_in_the_folder_exits_5_and_writes_nothing() {
    use std::io::Read;
    let h = home();
    h.direct_write();
    let id = h
        .ok(&["history", "list"])
        .split('\t')
        .next()
        .unwrap()
        .to_owned();
    let before = files(&h.project);
    // Another session's turn in the same folder, streaming slowly.
    let mut slow = h
        .command(&["run", "--agent", "demo", "slow"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Its prompt goes out once its checkpoint is taken: text means it holds the folder.
    let mut out = slow.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains("This is") {
        let n = out.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "the slow turn ended early: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    let (code, _, err) = h.cli(&["revert", &id, "--turn", "1"]);
    assert_eq!(code, 5, "{err}");
    assert!(err.contains("a turn is running in this folder"), "{err}");
    assert_eq!(files(&h.project), before, "nothing written");
    let _ = Command::new("kill")
        .args(["-INT", &slow.id().to_string()])
        .status();
    drop(out);
    let _ = slow.wait();
    // Once it has ended, the same revert goes through.
    let out = h.ok(&["revert", &id, "--turn", "1"]);
    assert!(out.contains("done as step"), "{out}");
}
