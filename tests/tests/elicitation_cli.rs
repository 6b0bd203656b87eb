//! `acp-desk-cli run` and the agent's questions: asked on a terminal (a real pty: a form field
//! by field, bad input asked again, the answer reaching the agent; a page to open; Ctrl-D
//! cancels), declined with no terminal, and background tasks in the transcript.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report
#![cfg(unix)]

mod common;

use std::process::{Command, Stdio};

use common::bin;
use common::terminal::Terminal;
use serde_json::Value;

struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("p")).unwrap();
        Home { dir }
    }

    fn env(&self) -> Vec<(String, String)> {
        let d = self.dir.path();
        vec![
            (
                "ACP_DESK_CONFIG_DIR".into(),
                d.join("config").display().to_string(),
            ),
            (
                "ACP_DESK_DATA_DIR".into(),
                d.join("data").display().to_string(),
            ),
            ("TERM".into(), "dumb".into()),
        ]
    }

    fn project(&self) -> std::path::PathBuf {
        self.dir.path().join("p")
    }

    fn terminal(&self, prompt: &str) -> Terminal {
        Terminal::run(
            &["run", "--permission", "allow", "--no-history", prompt],
            &self.project(),
            &self.env(),
        )
    }
}

#[test]
fn a_form_is_asked_on_the_terminal_and_the_answer_reaches_the_agent() {
    let home = Home::new();
    let mut t = home.terminal("elicit form");
    t.wait_for("The agent asks: A few details for the new project.");
    t.wait_for("Answer it (13 fields)?");
    t.type_in(b"\n");
    t.wait_for("Project name *");
    t.type_in(b"x\n");
    t.wait_for("must be at least 2 characters long");
    t.type_in(b"lighthouse\n");
    t.wait_for("1) Rust - cargo new");
    t.type_in(b"1\n");
    t.wait_for("Parallel jobs *");
    t.type_in(b"99\n");
    t.wait_for("must be at most 16");
    t.type_in(b"8\n");
    // coverage, ci, license: the defaults (coverage, ci) and nothing (license).
    t.wait_for("Test coverage goal (optional)");
    t.type_in(b"\n");
    t.wait_for("Set up CI (optional)");
    t.type_in(b"n\n");
    t.wait_for("License (optional)");
    t.type_in(b"\n");
    t.wait_for("Targets *");
    t.type_in(b"1, 3\n");
    for label in [
        "Features (optional)",
        "Maintainer email (optional)",
        "Homepage (optional)",
        "Start date (optional)",
        "First review (optional)",
    ] {
        t.wait_for(label);
        t.type_in(b"\n");
    }
    t.wait_for("Ticket prefix (optional)");
    t.type_in(b"lhs\n");
    t.wait_for("must match the pattern");
    t.type_in(b"LHS\n");
    t.wait_for("Thanks: that is all I need");
    assert_eq!(t.exit_code(), 0, "{}", t.seen());
    let seen = t.seen();
    assert!(seen.contains("\"name\":\"lighthouse\""), "{seen}");
    assert!(
        seen.contains("\"targets\":[\"linux\",\"windows\"]"),
        "{seen}"
    );
    assert!(
        seen.contains("\"ci\":false") && seen.contains("\"coverage\":0.8"),
        "{seen}"
    );
    assert!(
        !seen.contains("\"license\""),
        "left empty, not sent: {seen}"
    );
    assert!(seen.contains("→ answered (by user)"), "{seen}");
}

#[test]
fn a_page_is_shown_by_its_host_and_ctrl_d_cancels_a_form() {
    let home = Home::new();
    let mut t = home.terminal("elicit url");
    t.wait_for("It wants you to open a page on example.com:");
    t.wait_for("https://example.com/demo-agent/authorize?state=demo-sign-in-1");
    t.type_in(b"y\n");
    t.wait_for("the agent says the page is done");
    t.wait_for("Signed in: I can read the issues now.");
    assert_eq!(t.exit_code(), 0, "{}", t.seen());

    let mut t = home.terminal("elicit form");
    t.wait_for("Answer it (13 fields)?");
    t.type_in(b"\x04");
    t.wait_for("→ cancelled (by user)");
    t.wait_for("The question was cancelled.");
    // The turn ends cancelled (the tool was stopped): exit 3, "ended otherwise".
    assert_eq!(t.exit_code(), 3, "{}", t.seen());
}

#[test]
fn with_no_terminal_questions_are_declined_and_tasks_are_shown() {
    let home = Home::new();
    let out = Command::new(bin("acp-desk-cli"))
        .args(["run", "--json", "--no-history", "elicit form"])
        .current_dir(home.project())
        .envs(home.env())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let events: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let settled = events
        .iter()
        .find(|e| e["kind"] == "elicitation-settled")
        .unwrap();
    assert_eq!(settled["action"], "decline");
    assert_eq!(settled["by"], "rule");

    // The human transcript: a background task's start, and its end when the session closes.
    let out = Command::new(bin("acp-desk-cli"))
        .args(["run", "--no-history", "background task to stop"])
        .current_dir(home.project())
        .envs(home.env())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("⧗ background shell started: npm run dev"),
        "{text}"
    );
    assert!(
        text.contains("⧗ background task stopped: npm run dev (the session ended)"),
        "{text}"
    );
}

#[test]
fn wait_tasks_keeps_the_session_for_the_tasks_end_and_the_agents_own_work() {
    let home = Home::new();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--no-history"];
        args.extend_from_slice(extra);
        args.push("background task");
        let out = Command::new(bin("acp-desk-cli"))
            .args(&args)
            .current_dir(home.project())
            .envs(home.env())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let waited = run(&["--wait-tasks", "30"]);
    assert!(
        waited.contains(
            "⧗ background task completed: cargo build --release - Finished the release build (simulated)"
        ),
        "{waited}"
    );
    assert!(
        waited.contains("— the agent worked on its own, after a background task ended"),
        "{waited}"
    );
    assert!(waited.contains("the release binary is ready"), "{waited}");
    let closed = run(&[]);
    assert!(
        closed.contains("⧗ background task stopped: cargo build --release (the session ended)"),
        "{closed}"
    );
}
