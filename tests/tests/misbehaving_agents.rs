//! Agents that break the protocol in ways a correct SDK never would (tests/fake-agents): the
//! engine ends the turn with a clear error instead of hanging, and leaves no process behind.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use acp_desk_core::events::TurnEndReason;
use acp_desk_core::{StreamEvent, agents};
use common::*;

fn fake(mode: &str) -> agents::LaunchSpec {
    let script = repo_root().join("tests/fake-agents/misbehave.mjs");
    agents::from_command_line(&format!("node '{}' {mode}", script.display())).unwrap()
}

async fn one_turn(mode: &str) -> (TurnEndReason, Vec<StreamEvent>) {
    let (h, rx, _dir) = session_with(fake(mode)).await;
    let events = tokio::spawn(rx.all());
    let outcome = finish(spawn_prompt(&h, "go")).await;
    h.close().await;
    drop(h);
    (outcome.reason, events.await.unwrap())
}

fn error_messages(evs: &[StreamEvent]) -> Vec<String> {
    evs.iter()
        .filter_map(|e| match e {
            StreamEvent::Error { error, .. } => Some(error.message.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_agent_that_stops_reading_its_input_is_ended_not_waited_for() {
    // It sends thousands of requests and never reads our answers: the owner must not block.
    let (reason, evs) = one_turn("deaf").await;
    assert_eq!(reason, TurnEndReason::Error);
    let errors = error_messages(&evs);
    assert!(
        errors
            .iter()
            .any(|m| m.contains("stopped reading its input")),
        "{errors:?}"
    );
}

#[tokio::test]
async fn an_error_without_a_message_still_ends_the_turn() {
    let (reason, evs) = one_turn("bad-error").await;
    assert_eq!(reason, TurnEndReason::Error);
    let errors = error_messages(&evs);
    assert!(
        errors.iter().any(|m| m.contains("malformed error")),
        "{errors:?}"
    );
}

#[tokio::test]
async fn a_numeric_id_echoed_as_a_string_still_ends_the_turn() {
    let (reason, evs) = one_turn("string-id").await;
    assert_eq!(reason, TurnEndReason::Completed);
    assert_eq!(text(&evs), "ok");
}

#[tokio::test]
async fn large_tool_outputs_are_passed_on_whole_and_not_hoarded() {
    let (reason, evs) = one_turn("big-tools").await;
    assert_eq!(reason, TurnEndReason::Completed);
    // Every event still carries its full payload: the bound is on what the engine keeps.
    let big = evs
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolCall(t) if t.raw_output.as_ref().is_some_and(|v| v["text"].as_str().is_some_and(|s| s.len() == 1024 * 1024))))
        .count();
    assert_eq!(big, 400);
}

#[cfg(target_os = "linux")]
#[test]
fn a_failed_start_leaves_no_process_behind() {
    // The agent refuses session/new (sign-in needed), ignores stdin EOF and has a setsid child.
    let demo = bin("acp-desk-demo-agent");
    let cmd = format!(
        "'{}' --auth-required --ignore-eof --spawn-orphan",
        demo.display()
    );
    let out = std::process::Command::new(bin("acp-desk-cli"))
        .args(["run", "--agent-command", &cmd, "--json", "hello"])
        .env("ACP_DESK_LOG", "debug")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("sign in"), "{stderr}");
    let orphan: u32 = stderr
        .lines()
        .find_map(|l| l.split("orphan pid ").nth(1))
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no orphan pid in: {stderr}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("\"status\":\"dead\""),
        "the session says it is dead: {stdout}"
    );
    let left = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(wait_gone(&[orphan], std::time::Duration::from_secs(10)));
    assert!(left.is_empty(), "the agent's child outlived a failed start");
}
