//! `acp-desk-cli auth` and `run`'s auth-required handling, against the demo agent's sign-in
//! scenarios (`ACP_DESK_DEMO_AUTH*`, crates/acp-desk-demo-agent/README.md): an agent method,
//! a typed terminal method and a `_meta["terminal-auth"]` command whose login reads a code from
//! its terminal (a real pty), consent, a wrong code, a cancelled login, and auth-required at
//! `session/new` and in the middle of a session with the prompt sent again once signed in.
//! API keys need a Secret Service: they are in gemini_auth.rs.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report
#![cfg(unix)]

mod common;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use common::bin;
use common::terminal::Terminal;

/// A demo agent with sign-in scenarios, its marker and data in a folder of its own.
struct Demo {
    dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl Demo {
    fn new(auth: &str, at: &str) -> Demo {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        let env = vec![
            ("ACP_DESK_DEMO_AUTH".into(), auth.into()),
            ("ACP_DESK_DEMO_AUTH_AT".into(), at.into()),
            (
                "ACP_DESK_DEMO_AUTH_DIR".into(),
                dir.path().join("auth").display().to_string(),
            ),
            ("ACP_DESK_DEMO_LOGIN_CODE".into(), "open-sesame".into()),
            (
                "ACP_DESK_CONFIG_DIR".into(),
                dir.path().join("config").display().to_string(),
            ),
            (
                "ACP_DESK_DATA_DIR".into(),
                dir.path().join("data").display().to_string(),
            ),
        ];
        Demo { dir, env }
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn command(&self) -> String {
        format!("'{}'", bin("acp-desk-demo-agent").display())
    }

    fn signed_in(&self) -> Option<String> {
        std::fs::read_to_string(self.dir.path().join("auth/signed-in"))
            .ok()
            .map(|s| s.trim().to_owned())
    }

    /// The CLI with no terminal (stdin null).
    fn cli(&self, args: &[&str]) -> Output {
        Command::new(bin("acp-desk-cli"))
            .args(args)
            .current_dir(self.project())
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap()
    }

    fn auth(&self, extra: &[&str]) -> Output {
        let cmd = self.command();
        let mut args = vec!["auth", "--agent-command", &cmd];
        args.extend_from_slice(extra);
        self.cli(&args)
    }

    fn run(&self, prompt: &str) -> Output {
        let cmd = self.command();
        self.cli(&["run", "--agent-command", &cmd, "--json", prompt])
    }

    /// The CLI in a pty of its own.
    fn terminal(&self, args: &[&str]) -> Terminal {
        Terminal::run(args, &self.project(), &self.env)
    }
}

fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

const LOGIN_PROMPT: &str = "Enter the login code";

#[test]
fn an_agent_method_auth_required_names_the_command_and_auth_signs_in() {
    let demo = Demo::new("agent", "new");
    let before = demo.run("hello");
    assert_eq!(before.status.code(), Some(1), "{}", said(&before));
    assert!(
        said(&before).contains("acp-desk-cli auth --agent-command CMD --method demo-login"),
        "{}",
        said(&before)
    );
    // A command line is never repeated in the advice: it may hold a secret.
    assert!(!String::from_utf8_lossy(&before.stderr).contains("auth --agent-command '/"));
    // One method: used without --method.
    let auth = demo.auth(&[]);
    assert_eq!(auth.status.code(), Some(0), "{}", said(&auth));
    assert!(said(&auth).contains("signed in"), "{}", said(&auth));
    assert_eq!(demo.signed_in().as_deref(), Some("demo-login"));
    let after = demo.run("hello");
    assert_eq!(after.status.code(), Some(0), "{}", said(&after));
}

#[test]
fn several_methods_are_listed_and_an_unknown_one_is_refused() {
    let demo = Demo::new("agent,terminal,terminal-meta", "new");
    let list = demo.auth(&[]);
    assert_eq!(list.status.code(), Some(2), "{}", said(&list));
    for id in ["demo-terminal-login", "demo-meta-login", "demo-login"] {
        assert!(
            said(&list).contains(&format!("--method {id}")),
            "{}",
            said(&list)
        );
    }
    assert!(said(&list).contains("pick one with --method"));
    let unknown = demo.auth(&["--method", "nope"]);
    assert_eq!(unknown.status.code(), Some(2), "{}", said(&unknown));
    assert!(said(&unknown).contains("no sign-in method `nope`"));
    assert_eq!(demo.signed_in(), None, "nothing was done");
}

#[test]
fn a_terminal_method_runs_its_login_in_the_users_terminal() {
    let demo = Demo::new("terminal", "new");
    let cmd = demo.command();
    let mut t = demo.terminal(&[
        "auth",
        "--agent-command",
        &cmd,
        "--method",
        "demo-terminal-login",
    ]);
    t.wait_for(LOGIN_PROMPT);
    t.type_in(b"open-sesame\r");
    assert_eq!(t.exit_code(), 0, "{}", t.seen());
    t.wait_for("exited with status 0");
    // The typed terminal method: the launch itself, with the method's args and env.
    assert_eq!(demo.signed_in().as_deref(), Some("demo-terminal-login"));
    assert_eq!(demo.run("hello").status.code(), Some(0));
}

#[test]
fn a_terminal_login_without_a_terminal_or_with_the_wrong_code_is_not_signed_in() {
    let demo = Demo::new("terminal", "new");
    // The login refuses to run without a terminal (exit 2): auth says so, with status 1.
    let out = demo.auth(&["--method", "demo-terminal-login"]);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    assert!(
        said(&out).contains("exited with status 2"),
        "{}",
        said(&out)
    );
    let cmd = demo.command();
    let mut t = demo.terminal(&[
        "auth",
        "--agent-command",
        &cmd,
        "--method",
        "demo-terminal-login",
    ]);
    t.wait_for(LOGIN_PROMPT);
    t.type_in(b"wrong\r");
    assert_eq!(t.exit_code(), 1, "{}", t.seen());
    t.wait_for("exited with status 1");
    assert_eq!(demo.signed_in(), None);
}

#[test]
fn a_cancelled_login_signs_nothing_in_and_says_so() {
    let demo = Demo::new("terminal", "new");
    let cmd = demo.command();
    let mut t = demo.terminal(&[
        "auth",
        "--agent-command",
        &cmd,
        "--method",
        "demo-terminal-login",
    ]);
    t.wait_for(LOGIN_PROMPT);
    // Ctrl-C reaches the login (the terminal's foreground group); auth outlives it and reports.
    t.type_in(b"\x03");
    assert_eq!(t.exit_code(), 130, "{}", t.seen());
    t.wait_for("was interrupted");
    assert_eq!(demo.signed_in(), None);
}

#[test]
fn a_command_other_than_the_launch_needs_consent() {
    let demo = Demo::new("terminal-meta", "new");
    // No terminal, no --yes: nothing runs.
    let out = demo.auth(&["--method", "demo-meta-login"]);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(said(&out).contains("Nothing was run"), "{}", said(&out));
    assert!(said(&out).contains("--yes"));
    let cmd = demo.command();
    let args = [
        "auth",
        "--agent-command",
        &cmd,
        "--method",
        "demo-meta-login",
    ];
    // On a terminal: asked, naming the command; "no" runs nothing.
    let mut t = demo.terminal(&args);
    t.wait_for("Run it? [y/N]");
    assert!(
        t.seen().contains("sh -c"),
        "the command is named: {}",
        t.seen()
    );
    t.type_in(b"n\r");
    assert_eq!(t.exit_code(), 2, "{}", t.seen());
    t.wait_for("you did not agree");
    assert_eq!(demo.signed_in(), None);
    // "yes": the login runs, reads the code from this terminal.
    let mut t = demo.terminal(&args);
    t.wait_for("Run it? [y/N]");
    t.type_in(b"y\r");
    t.wait_for(LOGIN_PROMPT);
    t.type_in(b"open-sesame\r");
    assert_eq!(t.exit_code(), 0, "{}", t.seen());
    assert_eq!(demo.signed_in().as_deref(), Some("demo-meta-login"));
}

#[test]
fn run_on_a_terminal_signs_in_at_session_new_and_sends_the_prompt() {
    let demo = Demo::new("terminal", "new");
    let cmd = demo.command();
    let mut t = demo.terminal(&["run", "--agent-command", &cmd, "first prompt"]);
    t.wait_for("Sign in now?");
    t.wait_for("--method demo-terminal-login");
    t.type_in(b"1\r");
    t.wait_for(LOGIN_PROMPT);
    t.type_in(b"open-sesame\r");
    t.wait_for("sending the prompt again");
    assert_eq!(t.exit_code(), 0, "{}", t.seen());
    assert_eq!(demo.signed_in().as_deref(), Some("demo-terminal-login"));
    // The prompt went through after the sign-in (the CLI shows it as it is sent).
    t.wait_after("sending the prompt again", "> first prompt");
}

#[test]
fn run_on_a_terminal_signs_in_mid_session_and_the_prompt_that_hit_it_goes_through() {
    let demo = Demo::new("terminal", "prompt");
    let cmd = demo.command();
    let mut t = demo.terminal(&["run", "--agent-command", &cmd, "kept prompt"]);
    t.wait_for("Sign in now?");
    t.type_in(b"1\r");
    t.wait_for(LOGIN_PROMPT);
    t.type_in(b"open-sesame\r");
    t.wait_for("sending the prompt again");
    assert_eq!(t.exit_code(), 0, "{}", t.seen());
    t.wait_after("sending the prompt again", "> kept prompt");
}

#[test]
fn run_on_a_terminal_stops_when_the_user_declines() {
    let demo = Demo::new("agent", "new");
    let cmd = demo.command();
    let mut t = demo.terminal(&["run", "--agent-command", &cmd, "hello"]);
    t.wait_for("Sign in now?");
    t.type_in(b"\r");
    assert_eq!(t.exit_code(), 1, "{}", t.seen());
    assert_eq!(demo.signed_in(), None);
}

#[test]
fn ctrl_c_at_a_sign_in_question_ends_with_130() {
    let demo = Demo::new("terminal-meta", "new");
    let cmd = demo.command();
    let mut t = demo.terminal(&["run", "--agent-command", &cmd, "hello"]);
    t.wait_for("Sign in now?");
    t.type_in(b"\x03");
    assert_eq!(t.exit_code(), 130, "{}", t.seen());
    let mut t = demo.terminal(&[
        "auth",
        "--agent-command",
        &cmd,
        "--method",
        "demo-meta-login",
    ]);
    t.wait_for("Run it? [y/N]");
    t.type_in(b"\x03");
    assert_eq!(t.exit_code(), 130, "{}", t.seen());
    assert_eq!(demo.signed_in(), None);
}
