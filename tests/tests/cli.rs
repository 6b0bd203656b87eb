//! `acp-desk-cli run`: its exact contract, against the demo agent and against an agent built on
//! the official TypeScript SDK (so we never test only against ourselves).
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use acp_desk_core::StreamEvent;
use common::*;
use serde_json::Value;

struct Run {
    code: Option<i32>,
    events: Vec<Value>,
    stderr: String,
    stdout: String,
}

fn cli(args: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin("acp-desk-cli"))
        .args(args)
        .current_dir(dir.path())
        .env("ACP_DESK_CONFIG_DIR", dir.path().join("config"))
        .env("ACP_DESK_DATA_DIR", dir.path().join("data"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let events = if args.contains(&"--json") {
        stdout
            .lines()
            .map(|l| {
                // Every stdout line is exactly one StreamEvent, nothing else.
                let v: Value = serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {l}"));
                serde_json::from_value::<StreamEvent>(v.clone())
                    .unwrap_or_else(|e| panic!("not a StreamEvent ({e}): {l}"));
                v
            })
            .collect()
    } else {
        Vec::new()
    };
    Run {
        code: out.status.code(),
        events,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        stdout,
    }
}

fn turn_ends(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["kind"] == "turn-end")
        .map(|e| e["reason"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn json_mode_prints_only_stream_events_with_a_turn_end_per_prompt() {
    let r = cli(&[
        "run", "--agent", "demo", "--json", "hello", "stream", "plan",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(
        turn_ends(&r.events),
        ["completed", "completed", "completed"]
    );
    let starts: Vec<&str> = r
        .events
        .iter()
        .filter(|e| e["kind"] == "turn-start")
        .map(|e| e["prompt"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(starts, ["hello", "stream", "plan"], "prompts run in order");
    // One session for all of them.
    let sid = &r.events[0]["sessionId"];
    assert!(r.events.iter().all(|e| &e["sessionId"] == sid));
}

#[test]
fn without_a_terminal_permissions_are_rejected_and_that_is_said_once() {
    // Two requests, one sentence.
    let r = cli(&["run", "--json", "permission", "permission"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(
        r.events
            .iter()
            .filter(|e| e["kind"] == "agent-prompt-settled")
            .count(),
        2
    );
    assert_eq!(
        r.stderr.matches("will be rejected").count(),
        1,
        "{}",
        r.stderr
    );
    let settled = r
        .events
        .iter()
        .find(|e| e["kind"] == "agent-prompt-settled")
        .unwrap();
    assert_eq!(settled["outcome"]["optionId"], "decline");
}

#[test]
fn permission_flags_choose_by_kind() {
    let allow = cli(&["run", "--permission", "allow", "--json", "permission"]);
    assert_eq!(allow.code, Some(0), "{}", allow.stderr);
    let s = allow
        .events
        .iter()
        .find(|e| e["kind"] == "agent-prompt-settled")
        .unwrap();
    assert_eq!(s["outcome"]["optionId"], "proceed_once");
    assert!(!allow.stderr.contains("will be rejected"));

    let cancel = cli(&["run", "--permission", "cancel", "--json", "permission"]);
    let s = cancel
        .events
        .iter()
        .find(|e| e["kind"] == "agent-prompt-settled")
        .unwrap();
    assert_eq!(s["outcome"]["cancelled"], true);
    // An agent whose permission is cancelled ends its turn cancelled: exit 3, not a failure.
    assert_eq!(turn_ends(&cancel.events), ["cancelled"]);
    assert_eq!(cancel.code, Some(3), "{}", cancel.stderr);
}

#[test]
fn ask_without_a_terminal_is_a_usage_error() {
    let r = cli(&["run", "--permission", "ask", "hello"]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("needs a terminal"), "{}", r.stderr);
}

#[test]
fn human_mode_renders_a_readable_transcript() {
    let r = cli(&["run", "--permission", "allow", "edit"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("> edit"), "{}", r.stdout);
    assert!(r.stdout.contains("⚙ "), "{}", r.stdout);
    assert!(r.stdout.contains("— turn ended: completed"), "{}", r.stdout);
    assert!(!r.stdout.contains("\"kind\""), "no JSON in human mode");
}

#[test]
fn a_crashing_agent_exits_1_with_the_reason() {
    let r = cli(&["run", "--json", "crash", "hello"]);
    assert_eq!(r.code, Some(1));
    assert_eq!(
        turn_ends(&r.events),
        ["error"],
        "the second prompt never runs"
    );
    let err = r.events.iter().find(|e| e["kind"] == "error").unwrap();
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exited with code 3")
    );
}

#[test]
fn bad_arguments_get_clear_errors() {
    let r = cli(&["run", "--agent", "nope", "hello"]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("unknown agent `nope`"), "{}", r.stderr);
    assert!(
        r.stderr.contains("demo"),
        "lists the known agents: {}",
        r.stderr
    );
    let r = cli(&["run", "--cwd", "/definitely/not/here", "hello"]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("no such folder"), "{}", r.stderr);
    let r = cli(&[
        "run",
        "--agent-command",
        "no-such-agent-binary --acp",
        "hello",
    ]);
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("was not found on PATH"), "{}", r.stderr);
    let r = cli(&["run", "--agent", "demo", "--agent-command", "x", "hello"]);
    assert_eq!(r.code, Some(2), "clap usage error: {}", r.stderr);
    let r = cli(&["run", "--agent-command", "node 'unbalanced", "hello"]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("could not split"), "{}", r.stderr);
}

#[test]
fn agent_command_is_split_like_a_shell() {
    // Spaces inside quotes and escaped spaces stay inside one word; no shell runs.
    let dir = tempfile::tempdir().unwrap();
    let with_space = dir.path().join("dir with space");
    std::fs::create_dir_all(with_space.join("scenario dir")).unwrap();
    let agent = with_space.join("demo agent");
    std::fs::copy(bin("acp-desk-demo-agent"), &agent).unwrap();
    let cmd = format!(
        "'{}' --stderr-chatter --scenario-dir {}",
        agent.display(),
        with_space
            .join("scenario dir")
            .display()
            .to_string()
            .replace(' ', "\\ ")
    );
    let r = cli(&["run", "--agent-command", &cmd, "--json", "hello"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(turn_ends(&r.events), ["completed"]);
    // A `;` is an argument, not a command separator.
    let cmd = format!(
        "'{}' ; touch {}/pwned",
        agent.display(),
        dir.path().display()
    );
    let r = cli(&["run", "--agent-command", &cmd, "--json", "hello"]);
    assert!(!dir.path().join("pwned").exists());
    // The demo agent refuses the unknown argument `;` (exit 2), so it never starts.
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("exited with code 2"), "{}", r.stderr);
}

/// Starts the CLI on a slow prompt and waits until the agent streams.
#[cfg(unix)]
fn start_slow(args: &[&str]) -> (std::process::Child, BufReader<std::process::ChildStdout>) {
    // Like `cli()`: its own folder and settings, never the CI user's.
    let home = std::env::temp_dir().join(format!("acp-desk-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let mut child = Command::new(bin("acp-desk-cli"))
        .args(args)
        .current_dir(&home)
        .env("ACP_DESK_CONFIG_DIR", home.join("config"))
        .env("ACP_DESK_DATA_DIR", home.join("data"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let deadline = Instant::now() + HANG;
    loop {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "the CLI ended early");
        if line.contains("\"text-delta\"") {
            break;
        }
        assert!(Instant::now() < deadline, "hang");
    }
    (child, out)
}

#[cfg(unix)]
fn wait_exit(child: &mut std::process::Child) -> i32 {
    let deadline = Instant::now() + HANG;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s.code().unwrap_or(-1);
        }
        assert!(Instant::now() < deadline, "hang: the CLI did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(unix)]
#[test]
fn ctrl_c_cancels_the_turn_and_exits_130() {
    let (mut child, mut out) = start_slow(&["run", "--json", "slow", "hello"]);
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let code = wait_exit(&mut child);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    let ends: Vec<Value> = rest
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["kind"] == "turn-end")
        .collect();
    assert_eq!(code, 130);
    assert_eq!(ends.len(), 1, "the second prompt never runs");
    assert_eq!(ends[0]["reason"], "cancelled");
    assert_eq!(ends[0]["stopReason"], "cancelled");
}

#[cfg(target_os = "linux")]
#[test]
fn no_agent_process_survives_the_cli_even_when_it_is_killed() {
    let demo = bin("acp-desk-demo-agent");
    let cmd = format!(
        "'{}' --spawn-orphan --ignore-eof --ignore-sigterm",
        demo.display()
    );
    let (mut child, _out) = start_slow(&["run", "--agent-command", &cmd, "--json", "slow"]);
    let tree_before = tree(child.id());
    assert!(
        tree_before.len() >= 4,
        "cli, supervisor, agent, orphan: {tree_before:?}"
    );
    // SIGKILL: the CLI gets no chance to clean up; the supervisor's lifeline does it.
    child.kill().unwrap();
    child.wait().unwrap();
    let left = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(wait_gone(&tree_before, Duration::from_secs(10)));
    assert!(left.is_empty(), "still alive after the CLI died: {left:?}");
}

mod interop_ts_sdk {
    use super::*;

    #[test]
    fn a_full_turn_with_a_permission_request() {
        let cmd = ts_agent_command();
        let r = cli(&[
            "run",
            "--agent-command",
            &cmd,
            "--permission",
            "allow",
            "--json",
            "hello from acp desk",
        ]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let kinds: Vec<&str> = r
            .events
            .iter()
            .map(|e| e["kind"].as_str().unwrap())
            .collect();
        for k in [
            "thought",
            "plan",
            "tool-call",
            "agent-prompt",
            "agent-prompt-settled",
            "tool-result",
            "text-delta",
            "usage_update",
        ] {
            assert!(kinds.contains(&k), "missing {k}: {kinds:?}");
        }
        // Chosen by kind: the SDK agent's allow_once option is called "approved".
        let s = r
            .events
            .iter()
            .find(|e| e["kind"] == "agent-prompt-settled")
            .unwrap();
        assert_eq!(s["outcome"]["optionId"], "approved");
        let text: String = r
            .events
            .iter()
            .filter(|e| e["kind"] == "text-delta")
            .map(|e| e["text"].as_str().unwrap())
            .collect();
        assert!(text.contains("TS SDK agent"), "{text}");
        assert!(text.contains("hello from acp desk"), "{text}");
        assert_eq!(turn_ends(&r.events), ["completed"]);
        let ready = r
            .events
            .iter()
            .find(|e| e["kind"] == "session-status" && e["status"] == "ready")
            .unwrap();
        assert_eq!(ready["agent"]["name"], "ts-sdk-interop-agent");
    }

    #[test]
    fn a_rejection_runs_the_agents_reject_branch() {
        let cmd = ts_agent_command();
        let r = cli(&["run", "--agent-command", &cmd, "--json", "hello"]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let s = r
            .events
            .iter()
            .find(|e| e["kind"] == "agent-prompt-settled")
            .unwrap();
        assert_eq!(s["outcome"]["optionId"], "abort");
        let result = r
            .events
            .iter()
            .find(|e| e["kind"] == "tool-result")
            .unwrap();
        assert_eq!(result["isError"], true);
    }

    #[cfg(unix)]
    #[test]
    fn cancel_mid_stream() {
        let cmd = ts_agent_command();
        let (mut child, mut out) = start_slow(&["run", "--agent-command", &cmd, "--json", "slow"]);
        // SAFETY: signalling our own child.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGINT);
        }
        let code = wait_exit(&mut child);
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
        let end = rest
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|e| e["kind"] == "turn-end")
            .unwrap();
        assert_eq!(code, 130);
        assert_eq!(end["reason"], "cancelled");
        assert_eq!(end["stopReason"], "cancelled");
    }

    #[cfg(unix)]
    #[test]
    fn cancel_while_a_permission_is_parked() {
        let cmd = ts_agent_command();
        // `ask` needs a terminal, so the parked case goes through the engine directly.
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let spec = acp_desk_core::agents::from_command_line(&cmd).unwrap();
            let (h, mut rx, _dir) = session_with(spec).await;
            let turn = spawn_prompt(&h, "hello");
            let mut seen = Vec::new();
            rx.next_prompt(&mut seen).await;
            let drain = tokio::spawn(rx.all());
            h.cancel().unwrap();
            let outcome = finish(turn).await;
            assert_eq!(
                outcome.reason,
                acp_desk_core::events::TurnEndReason::Cancelled
            );
            h.close().await;
            drop(h);
            seen.extend(drain.await.unwrap());
            let settled = json(&seen)
                .into_iter()
                .find(|e| e["kind"] == "agent-prompt-settled")
                .unwrap();
            assert_eq!(settled["by"], "stop");
            assert_eq!(settled["outcome"]["cancelled"], true);
        });
    }
}

#[cfg(unix)]
#[test]
fn a_closed_stdout_stops_the_turn_and_exits_141() {
    // `acp-desk-cli run --json slow | head -3`: the slow turn must not run on unseen.
    let (mut child, out) = start_slow(&["run", "--json", "slow", "hello"]);
    let closed = Instant::now();
    drop(out);
    let code = wait_exit(&mut child);
    assert_eq!(code, 141);
    // The slow turn alone lasts over 30 s: ending well before that shows it was stopped, not
    // played out unseen. (A behaviour check with a wide margin, not a speed target.)
    assert!(
        closed.elapsed() < Duration::from_secs(20),
        "the turn ran on after stdout closed"
    );
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(!err.contains("Broken pipe"), "quietly: {err}");
}

#[cfg(target_os = "linux")]
#[test]
fn without_its_supervisor_the_cli_refuses_to_run_agents_half_guarded() {
    let dir = tempfile::tempdir().unwrap();
    let lonely = dir.path().join("acp-desk-cli");
    std::fs::copy(bin("acp-desk-cli"), &lonely).unwrap();
    let demo = bin("acp-desk-demo-agent");
    let out = Command::new(&lonely)
        .args([
            "run",
            "--agent-command",
            &format!("'{}'", demo.display()),
            "hello",
        ])
        .env_remove("ACP_DESK_SUPERVISOR")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("acp-desk-supervisor was not found"), "{err}");
}

#[test]
fn turns_that_end_otherwise_exit_3_and_the_rest_still_run() {
    let r = cli(&["run", "--json", "refuse", "max-tokens", "hello"]);
    assert_eq!(r.code, Some(3), "{}", r.stderr);
    assert_eq!(
        turn_ends(&r.events),
        ["completed", "completed", "completed"]
    );
    let stops: Vec<&str> = r
        .events
        .iter()
        .filter(|e| e["kind"] == "turn-end")
        .map(|e| e["stopReason"].as_str().unwrap())
        .collect();
    assert_eq!(stops, ["refusal", "max_tokens", "end_turn"]);
}

#[test]
fn a_failure_wins_over_other_endings_and_stops_the_run() {
    let r = cli(&["run", "--json", "refuse", "crash", "hello"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert_eq!(turn_ends(&r.events), ["completed", "error"]);
}

#[test]
fn added_folders_are_not_sent_to_an_agent_that_does_not_take_them_and_that_is_said() {
    let extra = tempfile::tempdir().unwrap();
    let r = cli(&[
        "run",
        "--add-dir",
        extra.path().to_str().unwrap(),
        "--json",
        "hello",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let notice = r
        .events
        .iter()
        .find(|e| e["kind"] == "notice")
        .expect("a notice");
    assert!(
        notice["title"]
            .as_str()
            .unwrap()
            .contains("does not accept additional folders"),
        "{notice}"
    );
}

#[test]
fn json_mode_prints_terminal_output_and_file_changes() {
    let r = cli(&["run", "--agent", "demo", "--json", "terminal", "files"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(turn_ends(&r.events), ["completed", "completed"]);
    let outs: Vec<&Value> = r
        .events
        .iter()
        .filter(|e| e["kind"] == "terminal-output")
        .collect();
    assert!(!outs.is_empty());
    // DESIGN.md's shape: {sessionId, terminalId, data, exitStatus?, truncated?}, plus our
    // additive outputByteLimit on a terminal's first event (events::ADDITIONS).
    for e in &outs {
        let keys: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
        for k in &keys {
            assert!(
                [
                    "kind",
                    "sessionId",
                    "terminalId",
                    "data",
                    "exitStatus",
                    "truncated",
                    "outputByteLimit"
                ]
                .contains(k),
                "unexpected field {k} in {e}"
            );
        }
        assert!(e["data"].is_string() && e["terminalId"].is_string());
    }
    let term1: String = outs
        .iter()
        .filter(|e| e["terminalId"] == "term-1")
        .map(|e| e["data"].as_str().unwrap())
        .collect();
    assert!(term1.contains("line-49-abcdefghij"), "{term1}");
    let exit = outs
        .iter()
        .find(|e| e["terminalId"] == "term-1" && e.get("exitStatus").is_some())
        .unwrap();
    assert_eq!(exit["exitStatus"]["exitCode"], 0);
    assert_eq!(exit["truncated"], true);
    assert_eq!(
        r.events
            .iter()
            .filter(|e| e["kind"] == "file-changed")
            .count(),
        3
    );
}

#[test]
fn human_mode_shows_terminal_output_by_lines() {
    let r = cli(&["run", "--agent", "demo", "terminal"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.contains("  │ line-49-abcdefghij\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("└ terminal term-1 exited with code 0"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains('\r'));
}

#[test]
fn run_mode_switches_the_mode_before_the_first_prompt() {
    let r = cli(&["run", "--json", "--mode", "plan", "hello"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let mode = r
        .events
        .iter()
        .position(|e| e["kind"] == "current-mode" && e["currentModeId"] == "plan");
    let turn = r.events.iter().position(|e| e["kind"] == "turn-start");
    assert!(mode.is_some() && mode < turn, "{:?}", r.events);
    // The agent's refusal, in its words, ends the run before any prompt.
    let r = cli(&["run", "--json", "--mode", "yolo", "hello"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.contains("yolo") && r.stderr.contains("the agent refused"),
        "{}",
        r.stderr
    );
    assert!(!r.events.iter().any(|e| e["kind"] == "turn-start"));
}
