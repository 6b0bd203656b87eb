//! The fixture the UI's store is tested with (`ui/src/lib/session-store.merge.test.ts`): one
//! turn's live events, made by the engine's thread from the updates an agent sends, and the
//! snapshot the compactor makes of them. A view that attaches late gets the snapshot; one that was
//! there all along got the live events; the UI test expects both to show the same thread.
//!
//! The fixture is made here on every run and compared with the checked-in file, so it cannot go
//! stale: when the engine's events or its merge change, this test rewrites the file and fails;
//! review the diff (`git diff tests/fixtures/tool-call-merge.json`), then commit it.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::PathBuf;

use acp_desk_core::StreamEvent;
use acp_desk_core::compact::Compactor;
use acp_desk_core::events::{PermissionResolution, SettledBy, TurnEndReason};
use acp_desk_core::schema::v1 as acp;
use acp_desk_core::thread::Thread;
use serde_json::{Value, json};

const SID: &str = "merge-fixture";

fn fixture_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/tool-call-merge.json")
}

/// What the agent sends, as claude-code-acp sends it: `session/update` params' `update`.
fn update(thread: &mut Thread, out: &mut Vec<StreamEvent>, wire: Value) {
    let u: acp::SessionUpdate = serde_json::from_value(wire).unwrap();
    thread.apply(u, out);
}

fn text(out: &mut Vec<StreamEvent>, thread: &mut Thread, s: &str) {
    update(
        thread,
        out,
        json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": s}}),
    );
}

fn terminal(out: &mut Vec<StreamEvent>, data: &str, first: bool, exit: Option<u32>) {
    out.push(StreamEvent::TerminalOutput {
        session_id: SID.into(),
        terminal_id: "term-1".into(),
        data: data.into(),
        exit_status: exit.map(|code| serde_json::from_value(json!({"exitCode": code})).unwrap()),
        truncated: None,
        output_byte_limit: first.then_some(1_048_576),
    });
}

/// The turn: an edit first announced with `rawInput: {}` and updated three times (once with no
/// title, and then with `rawInput: {}` again), asked about and allowed, then updated twice more
/// after its result; a command run in a terminal; text around them.
fn live() -> Vec<StreamEvent> {
    let mut t = Thread::new(SID);
    let mut out = vec![StreamEvent::TurnStart {
        session_id: SID.into(),
        prompt: vec![acp::ContentBlock::from("Make the failing test pass")],
    }];
    text(&mut out, &mut t, "I'll fix the ");
    text(&mut out, &mut t, "off-by-one first.");
    update(
        &mut t,
        &mut out,
        json!({"sessionUpdate": "tool_call", "toolCallId": "toolu_edit", "title": "Edit",
               "kind": "edit", "status": "pending", "rawInput": {}}),
    );
    let input = json!({"file_path": "/project/src/lib.rs",
                       "old_string": "    n - 1\n", "new_string": "    n\n"});
    update(
        &mut t,
        &mut out,
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "toolu_edit",
               "title": "Edit `src/lib.rs`", "rawInput": input,
               "content": [{"type": "diff", "path": "/project/src/lib.rs",
                            "oldText": "    n - 1\n", "newText": "    n\n"}],
               "locations": [{"path": "/project/src/lib.rs", "line": 7}]}),
    );
    let req: acp::RequestPermissionRequest = serde_json::from_value(json!({
        "sessionId": SID,
        "toolCall": {"toolCallId": "toolu_edit", "title": "Edit `src/lib.rs`", "rawInput": input},
        "options": [
            {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
            {"optionId": "always", "name": "Always allow edits", "kind": "allow_always"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ],
    }))
    .unwrap();
    let prompt = t.permission_request(req, "toolu_edit#1".into(), &mut out);
    out.push(StreamEvent::AgentPrompt(Box::new(prompt)));
    out.push(StreamEvent::AgentPromptSettled {
        session_id: SID.into(),
        request_id: "toolu_edit#1".into(),
        outcome: PermissionResolution::selected("allow"),
        by: SettledBy::User,
        feedback: None,
    });
    // No title, and an empty input: neither hides what the card already shows.
    update(
        &mut t,
        &mut out,
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "toolu_edit",
               "status": "in_progress", "rawInput": {}}),
    );
    update(
        &mut t,
        &mut out,
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "toolu_edit",
               "status": "completed", "rawOutput": {"ok": true}}),
    );
    // After its result the agent replaces the card's content, then empties it: the card shows
    // what came last (nothing), live and in a snapshot alike, never the result's older copy.
    for content in [
        json!([{"type": "content", "content": {"type": "text", "text": "Applied 1 edit"}}]),
        json!([]),
    ] {
        update(
            &mut t,
            &mut out,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "toolu_edit",
                   "content": content}),
        );
    }
    text(&mut out, &mut t, "Now the tests.");
    update(
        &mut t,
        &mut out,
        json!({"sessionUpdate": "tool_call", "toolCallId": "toolu_run", "title": "`cargo test`",
               "kind": "execute", "status": "in_progress",
               "rawInput": {"command": "cargo test", "description": "Run the tests"},
               "content": [{"type": "terminal", "terminalId": "term-1"}]}),
    );
    terminal(&mut out, "   Compiling demo v0.1.0\n", true, None);
    terminal(&mut out, "running 3 tests\n", false, None);
    terminal(&mut out, "test result: ok. 3 passed\n", false, Some(0));
    update(
        &mut t,
        &mut out,
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "toolu_run",
               "status": "completed"}),
    );
    text(&mut out, &mut t, "All three tests pass.");
    out.push(StreamEvent::TurnEnd {
        session_id: SID.into(),
        reason: TurnEndReason::Completed,
        stop_reason: Some(acp::StopReason::EndTurn),
    });
    out
}

#[test]
fn the_merge_fixture_is_what_the_engine_makes_now() {
    let live = live();
    let snapshot = compacted(&live);
    assert!(snapshot.len() < live.len());
    // Views that attach mid-turn: while the edit waits for the user, and while the command runs.
    let after = |kind: &str| live.iter().position(|e| e.kind() == kind).unwrap() + 1;
    let attach: Vec<Value> = [after("agent-prompt"), after("terminal-output")]
        .into_iter()
        .map(|n| json!({"after": n, "snapshot": compacted(&live[..n])}))
        .collect();
    let made = serde_json::to_string_pretty(&json!({
        "about": "Made by crates/acp-desk-core/tests/tool_call_merge.rs; do not edit by hand.",
        "live": live,
        "snapshot": snapshot,
        "attach": attach,
    }))
    .unwrap()
        + "\n";
    let path = fixture_path();
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    if checked_in != made {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &made).unwrap();
        panic!(
            "{} was stale and has been rewritten: review `git diff` on it, then commit it",
            path.display()
        );
    }
}

fn compacted(events: &[StreamEvent]) -> Vec<StreamEvent> {
    let mut c = Compactor::new();
    for ev in events {
        c.apply(ev);
    }
    c.snapshot()
}

#[test]
fn a_snapshot_moved_out_is_the_snapshot() {
    // The history's writer takes each merged frame with `into_snapshot` (no copy): it must
    // hand over exactly what `snapshot` shows, at every point of a turn, for both kinds.
    let live = live();
    for n in 0..=live.len() {
        for make in [Compactor::new, Compactor::for_frames] {
            let mut c = make();
            for ev in &live[..n] {
                c.apply(ev);
            }
            let shown = c.snapshot();
            assert_eq!(c.into_snapshot(), shown, "after {n} events");
        }
    }
}

#[test]
fn an_empty_input_or_a_missing_title_never_hides_what_was_shown() {
    let edit = compacted(&live())
        .into_iter()
        .find_map(|e| match e {
            StreamEvent::ToolCall(tc) if tc.tool_call_id == "toolu_edit" => Some(tc),
            _ => None,
        })
        .unwrap();
    assert_eq!(edit.tool_name, "Edit `src/lib.rs`");
    assert_eq!(edit.arguments["file_path"], "/project/src/lib.rs");
    assert_eq!(edit.status, Some(acp::ToolCallStatus::Completed));
    assert!(!edit.is_update);
}
