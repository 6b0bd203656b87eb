//! Continuing stored sessions (`run --continue`) against demo-agent scenarios that advertise
//! each way: resume, load (forced when both are offered), neither (a new session, said so);
//! a load that fails; a stored folder that is gone; and opening a session the agent listed
//! (`session/list` with pages, then `session/load` with its replay shown).
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use acp_desk_core::events::{ContinuationMode, ContinuationOutcome};
use acp_desk_core::{Opening, StreamEvent};
use common::*;
use serde_json::Value;

/// A CLI with its own config and data folders and a demo agent keeping its records in the
/// test's folder.
struct Cli {
    dir: tempfile::TempDir,
}

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Cli {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("project")).unwrap();
        Cli { dir }
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn agent(&self, flags: &str) -> String {
        format!(
            "{} --session-dir {} {flags}",
            bin("acp-desk-demo-agent").display(),
            self.dir.path().join("agent-sessions").display()
        )
    }

    fn run(&self, args: &[&str]) -> Out {
        let out = Command::new(bin("acp-desk-cli"))
            .args(args)
            .current_dir(self.dir.path())
            .env("ACP_DESK_CONFIG_DIR", self.dir.path().join("config"))
            .env("ACP_DESK_DATA_DIR", self.dir.path().join("data"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        Out {
            code: out.status.code(),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// A first turn with the demo agent advertising `methods`; returns the stored id.
    fn first_turn(&self, flags: &str) -> String {
        let project = self.project();
        let agent = self.agent(flags);
        let out = self.run(&[
            "run",
            "--no-audit",
            "--cwd",
            project.to_str().unwrap(),
            "--agent-command",
            &agent,
            "--json",
            "remember the word aubergine",
        ]);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        let list = self.run(&["history", "list", "--json"]);
        let rows: Vec<Value> = list
            .stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(rows.len(), 1, "{}", list.stdout);
        rows[0]["id"].as_str().unwrap().to_owned()
    }

    fn stored(&self, id: &str) -> Vec<Value> {
        let out = self.run(&["history", "show", id, "--json"]);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        out.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// The stored user prompts, in order.
fn prompts(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .filter(|r| r["kind"] == "turn-start" || r["kind"] == "user-message-delta")
        .map(|r| {
            r["prompt"][0]["text"]
                .as_str()
                .or(r["text"].as_str())
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

fn continued(rows: &[Value]) -> Vec<(String, String)> {
    rows.iter()
        .filter(|r| r["kind"] == "session-continued")
        .map(|r| {
            (
                r["mode"].as_str().unwrap().to_owned(),
                r["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Continues `id` with "what did I say first?" and checks the way and the answer.
fn continue_and_check(cli: &Cli, id: &str, extra: &[&str], outcome: &str, has_history: bool) {
    // A prefix is enough, as for `history`.
    let prefix = &id[..id.len() - 2];
    let mut args = vec!["run", "--no-audit", "--continue", prefix];
    args.extend_from_slice(extra);
    args.push("what did I say first?");
    let out = cli.run(&args);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr
            .contains(&format!("acp-desk-cli: continuing {id}: {outcome}")),
        "stderr says how: {}",
        out.stderr
    );
    if has_history {
        assert!(
            out.stdout
                .contains("You first said: \"remember the word aubergine\""),
            "the agent has the earlier conversation: {}",
            out.stdout
        );
    } else {
        assert!(
            out.stdout.contains("I have no earlier messages"),
            "{}",
            out.stdout
        );
        assert!(
            out.stdout
                .contains("This agent cannot continue the old conversation"),
            "{}",
            out.stdout
        );
    }
    let rows = cli.stored(id);
    assert_eq!(
        prompts(&rows),
        vec![
            "remember the word aubergine".to_owned(),
            "what did I say first?".to_owned()
        ],
        "both turns under the one stored id, the first once (a load's replay is not stored)"
    );
    assert_eq!(
        continued(&rows),
        vec![("continue".to_owned(), outcome.to_owned())]
    );
    let list = cli.run(&["history", "list", "--json"]);
    assert_eq!(list.stdout.lines().count(), 1, "no second stored session");
}

#[test]
fn resume_when_advertised() {
    let cli = Cli::new();
    let id = cli.first_turn("--session-methods load,resume");
    continue_and_check(&cli, &id, &[], "resumed", true);
}

#[test]
fn load_when_forced_or_only_load() {
    let cli = Cli::new();
    let id = cli.first_turn("--session-methods load,resume");
    continue_and_check(&cli, &id, &["--continue-via", "load"], "loaded", true);

    let cli = Cli::new();
    let id = cli.first_turn("--session-methods load");
    continue_and_check(&cli, &id, &[], "loaded", true);
}

#[test]
fn new_when_neither_is_advertised() {
    let cli = Cli::new();
    let id = cli.first_turn("--session-methods none");
    continue_and_check(&cli, &id, &[], "new", false);
}

#[test]
fn a_failing_load_falls_back_to_a_new_session_and_keeps_the_record() {
    let cli = Cli::new();
    let id = cli.first_turn("--session-methods load --fail-load");
    continue_and_check(&cli, &id, &[], "new", false);
    let rows = cli.stored(&id);
    let detail = rows
        .iter()
        .find(|r| r["kind"] == "session-continued")
        .and_then(|r| r["detail"].as_str())
        .unwrap();
    assert!(
        detail.contains("session/load failed") && detail.contains("--fail-load"),
        "{detail}"
    );
    assert!(
        rows.iter().any(|r| r["kind"] == "notice"
            && r["title"]
                .as_str()
                .unwrap()
                .contains("could not continue the stored session with session/load")),
        "the failure is said"
    );
}

#[test]
fn when_the_agent_lost_the_session_a_new_one_is_said() {
    let cli = Cli::new();
    let id = cli.first_turn("--session-methods load,resume");
    // The agent's own record is gone (as when another client deleted it).
    for e in std::fs::read_dir(cli.dir.path().join("agent-sessions")).unwrap() {
        std::fs::remove_file(e.unwrap().path()).unwrap();
    }
    continue_and_check(&cli, &id, &[], "new", false);
    let rows = cli.stored(&id);
    let detail = rows
        .iter()
        .find(|r| r["kind"] == "session-continued")
        .and_then(|r| r["detail"].as_str())
        .unwrap();
    assert!(
        detail.contains("session/resume failed") && detail.contains("session/load failed"),
        "{detail}"
    );
}

#[test]
fn a_stored_folder_that_is_gone_is_named() {
    let cli = Cli::new();
    let id = cli.first_turn("--session-methods resume");
    let folder = std::fs::canonicalize(cli.project()).unwrap();
    std::fs::remove_dir(cli.project()).unwrap();
    let out = cli.run(&["run", "--continue", &id, "hello again"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains(&id) && out.stderr.contains(folder.to_str().unwrap()),
        "names the session and the folder: {}",
        out.stderr
    );
    // Nothing stored was lost.
    assert_eq!(
        prompts(&cli.stored(&id)),
        vec!["remember the word aubergine".to_owned()]
    );
}

/// Two writers of one session would overwrite each other's rows: while one run continues a
/// session, a second `run --continue` and `history delete` of it are refused, saying where it
/// is open, and what it stored is intact; once that run is gone (even killed), both work.
#[test]
fn a_session_open_in_another_run_is_neither_continued_nor_deleted() {
    let cli = Cli::new();
    let id = cli.first_turn("--session-methods resume");
    let mut first = Command::new(bin("acp-desk-cli"))
        .args(["run", "--continue", &id, "slow"])
        .current_dir(cli.dir.path())
        .env("ACP_DESK_CONFIG_DIR", cli.dir.path().join("config"))
        .env("ACP_DESK_DATA_DIR", cli.dir.path().join("data"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Recording by the time its prompt is stored (commits come every COMMIT_INTERVAL).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !prompts(&cli.stored(&id)).iter().any(|p| p == "slow") {
        assert!(
            std::time::Instant::now() < deadline,
            "the continuing run stored nothing"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let second = cli.run(&["run", "--continue", &id, "hello"]);
    let delete = cli.run(&["history", "delete", &id]);
    first.kill().unwrap();
    first.wait().unwrap();
    for (what, o) in [("continue", &second), ("delete", &delete)] {
        assert_ne!(o.code, Some(0), "{what}: {}", o.stderr);
        assert!(
            o.stderr.contains(&id) && o.stderr.contains("open in another ACP Desk"),
            "{what}: {}",
            o.stderr
        );
    }
    let prompts_now = prompts(&cli.stored(&id));
    assert_eq!(
        prompts_now.first().map(String::as_str),
        Some("remember the word aubergine")
    );
    assert_eq!(prompts_now, ["remember the word aubergine", "slow"]);
    // Killed, its claim is gone with it.
    let out = cli.run(&["history", "delete", &id]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
}

/// The agent can be named again for a stored session (one whose command line held secrets
/// cannot be restarted from what was stored): `--continue ID --agent-command ...`.
#[test]
fn a_stored_session_continues_with_an_agent_named_again() {
    let cli = Cli::new();
    let id = cli.first_turn("--session-methods resume");
    let agent = cli.agent("--session-methods resume");
    let out = cli.run(&[
        "run",
        "--continue",
        &id,
        "--agent-command",
        &agent,
        "what did I say first?",
    ]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.contains("resumed"), "{}", out.stderr);
    assert!(out.stdout.contains("aubergine"), "{}", out.stdout);
}

#[test]
fn an_unknown_id_is_a_usage_error() {
    let cli = Cli::new();
    let out = cli.run(&["run", "--continue", "nope", "hi"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("nope"), "{}", out.stderr);
}

/// `session/list` (two pages of one) and then `session/load` of a listed session, its replay
/// shown: the engine path the history's "Show <agent>'s own sessions here" takes.
#[tokio::test]
async fn import_a_listed_session_with_its_replay() {
    let cli = Cli::new();
    cli.first_turn("--session-methods list,load");
    cli.first_turn_again();
    let project = std::fs::canonicalize(cli.project()).unwrap();
    let flags = [
        "--session-dir",
        &cli.dir.path().join("agent-sessions").to_string_lossy(),
        "--session-methods",
        "list,load",
        "--list-page-size",
        "1",
    ]
    .map(|s| s.to_owned());
    let spec = demo(&flags.iter().map(String::as_str).collect::<Vec<_>>());

    let mut o = opts(cli.dir.path());
    o.cwd.clone_from(&project);
    o.opening = Opening::ListOnly;
    let (tx, rx) = channel();
    let h = acp_desk_core::start(spec.clone(), o, tx).await.unwrap();
    let listed = h.list_all_sessions(Some(project.clone())).await.unwrap();
    assert_eq!(listed.len(), 2, "both pages: {listed:?}");
    let elsewhere = h
        .list_all_sessions(Some(PathBuf::from("/nowhere")))
        .await
        .unwrap();
    assert!(elsewhere.is_empty(), "filtered by folder");
    h.close().await;
    drop(h);
    rx.all().await;

    let wanted = listed
        .iter()
        .find(|s| s.title.as_deref() == Some("remember the word aubergine"))
        .unwrap();
    let mut o = opts(cli.dir.path());
    o.cwd.clone_from(&project);
    o.opening = Opening::Import {
        acp_session_id: wanted.session_id.0.to_string(),
    };
    let (tx, rx) = channel();
    let h = acp_desk_core::start(spec, o, tx).await.unwrap();
    h.prompt(vec![acp_desk_core::text_block("what did I say first?")])
        .await
        .unwrap();
    h.close().await;
    drop(h);
    let evs = rx.all().await;
    let replayed: String = evs
        .iter()
        .filter_map(|e| match e {
            StreamEvent::UserMessageDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        replayed, "remember the word aubergine",
        "the replay is shown"
    );
    assert!(evs.iter().any(|e| matches!(
        e,
        StreamEvent::SessionContinued {
            mode: ContinuationMode::Import,
            outcome: ContinuationOutcome::Loaded,
            ..
        }
    )));
    assert!(text(&evs).contains("You first said: \"remember the word aubergine\""));
}

impl Cli {
    /// A second stored session of the same agent, in the same folder.
    fn first_turn_again(&self) {
        let project = self.project();
        let agent = self.agent("--session-methods list,load");
        let out = self.run(&[
            "run",
            "--no-audit",
            "--cwd",
            project.to_str().unwrap(),
            "--agent-command",
            &agent,
            "something else",
        ]);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
    }
}
