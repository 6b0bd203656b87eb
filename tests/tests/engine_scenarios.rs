//! The engine against the demo agent: every event kind it emits, cancel, crashes, garbage, and
//! agents that ignore EOF, SIGTERM or cancel (no process left, no hang).
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::time::Duration;

use acp_desk_core::events::{
    NoticeSource, PermissionResolution, SessionState, SettledBy, TurnEndReason,
};
use acp_desk_core::schema::v1 as acp;
use acp_desk_core::{EngineError, PermissionPolicy, StreamEvent, start, text_block};
use common::*;
use serde_json::Value;

fn turn_ends(evs: &[StreamEvent]) -> Vec<(TurnEndReason, Option<acp::StopReason>)> {
    evs.iter()
        .filter_map(|e| match e {
            StreamEvent::TurnEnd {
                reason,
                stop_reason,
                ..
            } => Some((*reason, *stop_reason)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn stream_scenario_streams_text_and_thoughts() {
    let evs = run(&[], PermissionPolicy::Ask, &["stream some markdown"]).await;
    let k = kinds(&evs);
    assert_eq!(k[0], "session-status");
    assert!(k.contains(&"thought"), "{k:?}");
    assert!(k.contains(&"text-delta"));
    assert!(k.contains(&"available-commands"), "{k:?}");
    assert!(text(&evs).contains("```"), "markdown with a code block");
    assert_eq!(
        turn_ends(&evs),
        vec![(TurnEndReason::Completed, Some(acp::StopReason::EndTurn))]
    );
    // The turn starts with our prompt and ends with turn-end; every update the agent sent
    // before its response comes before turn-end (ordering through one channel).
    let ts = k.iter().position(|k| *k == "turn-start").unwrap();
    let te = k.iter().position(|k| *k == "turn-end").unwrap();
    let last_text = k.iter().rposition(|k| *k == "text-delta").unwrap();
    assert!(ts < last_text && last_text < te, "{k:?}");
    let v = json(&evs);
    let sid = v[0]["sessionId"].as_str().unwrap().to_string();
    assert!(
        v.iter().all(|e| e["sessionId"] == sid.as_str()),
        "one session id"
    );
    let ready = v
        .iter()
        .find(|e| e["kind"] == "session-status" && e["status"] == "ready")
        .unwrap();
    assert_eq!(ready["agent"]["name"], "acp-desk-demo-agent");
}

#[tokio::test]
async fn the_demo_agent_says_what_it_is() {
    let evs = run(&[], PermissionPolicy::Ask, &["hello"]).await;
    let t = text(&evs);
    assert!(t.contains("demo agent"), "{t}");
    assert!(t.contains("no language model"), "{t}");
}

#[tokio::test]
async fn plan_scenario_replaces_the_plan_as_it_progresses() {
    let evs = run(&[], PermissionPolicy::Ask, &["make a plan"]).await;
    let plans: Vec<Vec<String>> = json(&evs)
        .into_iter()
        .filter(|e| e["kind"] == "plan")
        .map(|e| {
            e["entries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x["status"].as_str().unwrap().to_string())
                .collect()
        })
        .collect();
    assert!(plans.len() >= 3, "{plans:?}");
    assert!(plans.first().unwrap().iter().all(|s| s == "pending"));
    assert!(plans.last().unwrap().iter().all(|s| s == "completed"));
}

#[tokio::test]
async fn edit_scenario_has_tool_calls_with_diffs_results_and_usage() {
    let evs = run(&[], PermissionPolicy::Ask, &["edit the file"]).await;
    let v = json(&evs);
    let calls: Vec<&Value> = v.iter().filter(|e| e["kind"] == "tool-call").collect();
    assert!(calls.iter().any(|c| c["isUpdate"] == false));
    assert!(calls.iter().any(|c| c["isUpdate"] == true));
    let diff = calls
        .iter()
        .flat_map(|c| c["content"].as_array().into_iter().flatten())
        .find(|c| c["type"] == "diff")
        .expect("a diff");
    assert!(diff["path"].as_str().unwrap().ends_with("/src/main.rs"));
    assert!(diff["newText"].is_string());
    let results: Vec<&Value> = v.iter().filter(|e| e["kind"] == "tool-result").collect();
    // One tool-result per call (a read and an edit), never two.
    let mut ids: Vec<&str> = results
        .iter()
        .map(|r| r["toolCallId"].as_str().unwrap())
        .collect();
    ids.sort();
    assert_eq!(ids, ["demo-edit-1", "demo-read-1"]);
    assert!(v.iter().any(|e| e["kind"] == "usage_update"));
}

#[tokio::test]
async fn permission_allow_picks_the_allow_once_option_by_kind() {
    let evs = run(&[], PermissionPolicy::AllowOnce, &["ask permission"]).await;
    let v = json(&evs);
    let prompt = v.iter().find(|e| e["kind"] == "agent-prompt").unwrap();
    assert_eq!(prompt["targetToolCallId"], "demo-exec-1");
    assert_eq!(prompt["rawInput"]["command"], "cargo test");
    let settled = v
        .iter()
        .find(|e| e["kind"] == "agent-prompt-settled")
        .unwrap();
    assert_eq!(settled["toolCallId"], prompt["toolCallId"]);
    // The id is the agent's own ("proceed_once"), chosen because its kind is allow_once.
    assert_eq!(settled["outcome"]["optionId"], "proceed_once");
    assert_eq!(settled["by"], "rule");
    let result = v.iter().find(|e| e["kind"] == "tool-result").unwrap();
    assert_eq!(result["isError"], false);
}

#[tokio::test]
async fn permission_reject_runs_the_agents_reject_branch() {
    let evs = run(&[], PermissionPolicy::RejectOnce, &["ask permission"]).await;
    let v = json(&evs);
    let settled = v
        .iter()
        .find(|e| e["kind"] == "agent-prompt-settled")
        .unwrap();
    assert_eq!(settled["outcome"]["optionId"], "decline");
    let result = v.iter().find(|e| e["kind"] == "tool-result").unwrap();
    assert_eq!(result["isError"], true);
}

#[tokio::test]
async fn a_parked_permission_is_answered_by_the_user_with_feedback_sent_next_turn() {
    let (h, mut rx, _dir) = session(&[]).await;
    let turn = spawn_prompt(&h, "permission");
    let mut seen = Vec::new();
    let p = rx.next_prompt(&mut seen).await;
    // A wrong id and a wrong option get clear errors and leave the request parked.
    assert_eq!(
        h.respond_permission("nope#9", PermissionResolution::cancelled())
            .await,
        Err(EngineError::UnknownPermission("nope#9".into()))
    );
    assert!(matches!(
        h.respond_permission(&p.request_id, PermissionResolution::selected("made-up"))
            .await,
        Err(EngineError::UnknownOption(..))
    ));
    // Keep draining events while the test goes on: the engine waits for a full consumer.
    let rest = tokio::spawn(rx.all());
    let reject = p
        .options
        .iter()
        .find(|o| o.kind == acp::PermissionOptionKind::RejectOnce)
        .unwrap();
    h.respond_permission(
        &p.request_id,
        PermissionResolution::Selected {
            option_id: reject.option_id.0.to_string(),
            feedback: Some("run cargo check instead".into()),
        },
    )
    .await
    .unwrap();
    // Answering twice: the request is gone.
    assert!(matches!(
        h.respond_permission(&p.request_id, PermissionResolution::cancelled())
            .await,
        Err(EngineError::UnknownPermission(_))
    ));
    let outcome = turn.await.unwrap().unwrap();
    assert_eq!(outcome.reason, TurnEndReason::Completed);
    // The feedback heads the next prompt.
    tokio::time::timeout(HANG, h.prompt(vec![text_block("hello")]))
        .await
        .expect("hang")
        .unwrap();
    h.close().await;
    drop(h);
    let mut all = seen;
    all.extend(rest.await.unwrap());
    let rest = all;
    let settled = rest
        .iter()
        .find_map(|e| match e {
            StreamEvent::AgentPromptSettled { by, feedback, .. } => Some((*by, feedback.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        settled,
        (SettledBy::User, Some("run cargo check instead".into()))
    );
    let second_prompt = rest
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TurnStart { prompt, .. } => Some(prompt.clone()),
            _ => None,
        })
        .nth(1)
        .unwrap();
    let acp::ContentBlock::Text(head) = &second_prompt[0] else {
        panic!("feedback should be a text block")
    };
    assert!(
        head.text.contains("run cargo check instead"),
        "{}",
        head.text
    );
}

#[tokio::test]
async fn stop_answers_parked_permissions_cancelled_and_ends_the_turn_cancelled() {
    let (h, mut rx, _dir) = session(&[]).await;
    let turn = spawn_prompt(&h, "permission");
    let mut seen = Vec::new();
    rx.next_prompt(&mut seen).await;
    h.cancel().unwrap();
    let outcome = finish(turn).await;
    assert_eq!(outcome.reason, TurnEndReason::Cancelled);
    assert_eq!(outcome.stop_reason, Some(acp::StopReason::Cancelled));
    h.close().await;
    drop(h);
    seen.extend(rx.all().await);
    let v = json(&seen);
    let settled = v
        .iter()
        .find(|e| e["kind"] == "agent-prompt-settled")
        .unwrap();
    assert_eq!(settled["outcome"], serde_json::json!({"cancelled": true}));
    assert_eq!(settled["by"], "stop");
}

#[tokio::test]
async fn cancel_mid_stream_ends_the_turn_cancelled_and_the_session_goes_on() {
    let (h, mut rx, _dir) = session(&[]).await;
    let turn = spawn_prompt(&h, "slow");
    let mut seen = Vec::new();
    rx.until(&mut seen, |e| matches!(e, StreamEvent::TextDelta { .. }))
        .await;
    let _drain = tokio::spawn(rx.all());
    h.cancel().unwrap();
    let outcome = finish(turn).await;
    assert_eq!(outcome.reason, TurnEndReason::Cancelled);
    // Still usable after a cancel.
    let next = tokio::time::timeout(HANG, h.prompt(vec![text_block("hello")]))
        .await
        .expect("hang")
        .unwrap();
    assert_eq!(next.reason, TurnEndReason::Completed);
    h.close().await;
}

#[tokio::test]
async fn a_prompt_during_a_turn_is_refused() {
    let (h, mut rx, _dir) = session(&[]).await;
    let turn = spawn_prompt(&h, "slow");
    let mut seen = Vec::new();
    rx.until(&mut seen, |e| matches!(e, StreamEvent::TextDelta { .. }))
        .await;
    assert_eq!(
        h.prompt(vec![text_block("again")]).await,
        Err(EngineError::TurnInProgress)
    );
    h.cancel().unwrap();
    turn.await.unwrap().unwrap();
    h.close().await;
}

#[tokio::test]
async fn usage_and_commands_arrive_as_events() {
    let evs = run(&[], PermissionPolicy::Ask, &["usage and cost"]).await;
    let v = json(&evs);
    let usage = v.iter().rfind(|e| e["kind"] == "usage_update").unwrap();
    assert!(usage["size"].as_u64().unwrap() > 0);
    assert!(usage["cost"]["currency"].is_string());
    // The scenario replaces the commands the agent announced at session/new.
    let cmds = v
        .iter()
        .rfind(|e| e["kind"] == "available-commands")
        .unwrap();
    let names: Vec<&str> = cmds["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"usage") && names.contains(&"compact"),
        "{names:?}"
    );
    let info = v.iter().find(|e| e["kind"] == "session-info").unwrap();
    assert_eq!(info["title"], "Usage and cost demo");
}

#[tokio::test]
async fn unknown_update_variants_are_passed_on_not_dropped() {
    let evs = run(&[], PermissionPolicy::Ask, &["unknown-update"]).await;
    let v = json(&evs);
    let u = v.iter().find(|e| e["kind"] == "unknown-update").unwrap();
    assert_eq!(u["update"]["sessionUpdate"], "_demo_unknown");
    // And the turn goes on after it.
    assert!(!text(&evs).is_empty());
    assert_eq!(turn_ends(&evs)[0].0, TurnEndReason::Completed);
}

#[tokio::test]
async fn refusal_and_max_tokens_complete_with_the_agents_stop_reason() {
    let evs = run(&[], PermissionPolicy::Ask, &["refuse", "max-tokens"]).await;
    assert_eq!(
        turn_ends(&evs),
        vec![
            (TurnEndReason::Completed, Some(acp::StopReason::Refusal)),
            (TurnEndReason::Completed, Some(acp::StopReason::MaxTokens)),
        ]
    );
}

#[tokio::test]
async fn garbage_and_an_over_long_line_on_stdout_are_skipped_with_a_notice() {
    let evs = run(&[], PermissionPolicy::Ask, &["garbage"]).await;
    let v = json(&evs);
    let notices: Vec<&Value> = v
        .iter()
        .filter(|e| e["kind"] == "notice" && e["source"] == "client")
        .collect();
    let titles: Vec<&str> = notices
        .iter()
        .map(|n| n["title"].as_str().unwrap())
        .collect();
    assert!(titles.iter().any(|t| t.contains("not ACP")), "{titles:?}");
    assert!(titles.iter().any(|t| t.contains("batch")), "{titles:?}");
    assert!(
        titles.iter().any(|t| t.contains("byte message")),
        "{titles:?}"
    );
    // The text after the garbage arrives and the turn completes.
    assert!(!text(&evs).is_empty());
    assert_eq!(turn_ends(&evs)[0].0, TurnEndReason::Completed);
    assert!(evs.iter().all(|e| !matches!(
        e,
        StreamEvent::Notice {
            source: NoticeSource::Agent,
            ..
        }
    )));
}

#[tokio::test]
async fn an_agent_that_crashes_mid_turn_yields_error_and_turn_end_error() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, rx) = channel();
    let collect = tokio::spawn(rx.all());
    let h = start(demo(&["--stderr-chatter"]), opts(dir.path()), tx)
        .await
        .unwrap();
    let outcome = tokio::time::timeout(HANG, h.prompt(vec![text_block("crash")]))
        .await
        .expect("hang")
        .unwrap();
    assert_eq!(outcome.reason, TurnEndReason::Error);
    // The session is dead and says so.
    assert!(matches!(
        h.prompt(vec![text_block("hello")]).await,
        Err(EngineError::SessionEnded(_))
    ));
    h.close().await;
    drop(h);
    let evs = collect.await.unwrap();
    let v = json(&evs);
    let err = v.iter().find(|e| e["kind"] == "error").unwrap();
    let msg = err["error"]["message"].as_str().unwrap();
    assert!(msg.contains("exited with code 3"), "{msg}");
    assert!(msg.contains("during the turn"), "{msg}");
    // How it ended travels with the error, structured: its kind, code and last stderr lines.
    assert_eq!(err["error"]["kind"], "agent-exited");
    assert_eq!(err["error"]["exit"]["code"], 3);
    assert!(err["error"]["exit"].get("signal").is_none());
    assert!(
        !err["error"]["exit"]["stderrTail"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert_eq!(turn_ends(&evs), vec![(TurnEndReason::Error, None)]);
    let last_status = evs
        .iter()
        .rev()
        .find_map(|e| match e {
            StreamEvent::SessionStatus { status, .. } => Some(*status),
            _ => None,
        })
        .unwrap();
    assert_eq!(last_status, SessionState::Dead);
}

#[tokio::test]
async fn a_missing_agent_command_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, _rx) = channel();
    let spec = acp_desk_core::agents::from_command_line("no-such-agent-xyz --acp").unwrap();
    let Err(e) = start(spec, opts(dir.path()), tx).await else {
        panic!("should fail")
    };
    let msg = e.to_string();
    assert!(
        msg.contains("`no-such-agent-xyz` was not found on PATH"),
        "{msg}"
    );
}

#[tokio::test]
async fn an_agent_that_needs_sign_in_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, _rx) = channel();
    let Err(e) = start(demo(&["--auth-required"]), opts(dir.path()), tx).await else {
        panic!("should fail")
    };
    assert!(matches!(e, EngineError::AuthRequired(_)), "{e}");
}

#[tokio::test]
async fn another_protocol_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, _rx) = channel();
    let Err(e) = start(demo(&["--protocol-version", "2"]), opts(dir.path()), tx).await else {
        panic!("should fail")
    };
    assert_eq!(e, EngineError::ProtocolVersion(2));
}

#[cfg(target_os = "linux")]
mod process_trees {
    use super::*;

    /// Starts the demo agent with `flags` and returns the handle and the pids of its whole tree.
    async fn started(
        flags: &[&str],
    ) -> (
        acp_desk_core::SessionHandle,
        Vec<u32>,
        Collector,
        tempfile::TempDir,
    ) {
        let (h, rx, dir) = session(flags).await;
        assert!(h.is_supervised(), "agents must run under the supervisor");
        let pid = h.pid().unwrap();
        // --spawn-orphan's grandchild starts right away; give it a moment to exist.
        let mut pids = tree(pid);
        for _ in 0..50 {
            if pids.len()
                >= if flags.contains(&"--spawn-orphan") {
                    3
                } else {
                    2
                }
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
            pids = tree(pid);
        }
        let wanted = if flags.contains(&"--spawn-orphan") {
            3
        } else {
            2
        };
        assert!(
            pids.len() >= wanted,
            "supervisor, agent (and orphan) expected: {pids:?}"
        );
        (h, pids, rx, dir)
    }

    #[tokio::test]
    async fn close_ends_an_agent_that_ignores_eof_and_sigterm() {
        let (h, pids, _rx, _dir) = started(&["--ignore-eof", "--ignore-sigterm"]).await;
        assert!(pids.len() >= 2, "supervisor and agent: {pids:?}");
        tokio::time::timeout(HANG, h.close()).await.expect("hang");
        let left = wait_gone(&pids, Duration::from_secs(5)).await;
        assert!(left.is_empty(), "still alive: {left:?}");
    }

    #[tokio::test]
    async fn descendants_that_call_setsid_do_not_escape() {
        let (h, pids, _rx, _dir) = started(&["--spawn-orphan"]).await;
        assert!(pids.len() >= 3, "supervisor, agent, orphan: {pids:?}");
        h.close().await;
        let left = wait_gone(&pids, Duration::from_secs(5)).await;
        assert!(left.is_empty(), "still alive: {left:?}");
    }

    #[tokio::test]
    async fn dropping_every_handle_ends_the_tree() {
        let (h, pids, rx, _dir) = started(&["--spawn-orphan", "--ignore-eof"]).await;
        drop(h);
        drop(rx);
        let left = wait_gone(&pids, Duration::from_secs(10)).await;
        assert!(left.is_empty(), "still alive: {left:?}");
    }

    #[tokio::test]
    async fn an_agent_deaf_to_cancel_is_ended_and_the_turn_ends_cancelled() {
        let (h, pids, mut rx, _dir) = started(&["--ignore-cancel", "--spawn-orphan"]).await;
        let turn = spawn_prompt(&h, "slow");
        let mut seen = Vec::new();
        rx.until(&mut seen, |e| matches!(e, StreamEvent::TextDelta { .. }))
            .await;
        h.cancel().unwrap();
        let outcome = finish(turn).await;
        assert_eq!(outcome.reason, TurnEndReason::Cancelled);
        let left = wait_gone(&pids, Duration::from_secs(5)).await;
        assert!(left.is_empty(), "still alive: {left:?}");
        assert!(matches!(
            h.prompt(vec![text_block("hello")]).await,
            Err(EngineError::SessionEnded(_))
        ));
        let rest = rx.all().await;
        seen.extend(rest);
        assert!(seen.iter().any(|e| matches!(
            e,
            StreamEvent::Notice { title, .. } if title.contains("did not stop")
        )));
    }
}

/// The kinds no demo-agent session can cause, each with the reason. Everything else in
/// `StreamEvent::KINDS` must arrive in the test below, so a new kind fails it until a scenario
/// causes it or it is listed here with its reason.
const KINDS_THE_DEMO_AGENT_CANNOT_CAUSE: &[(&str, &str)] = &[(
    "checkpoint",
    "ACP Desk's own, with checkpoints on (off in this test's options): checkpoints_engine.rs",
)];

#[tokio::test]
async fn every_event_kind_the_demo_agent_can_cause_arrives() {
    // No built-in scenario sends these two updates; the demo agent's `update` and `mode` steps
    // send them as any agent would (user_message_chunk: a history replay; current_mode_update:
    // the agent changing its own mode).
    let scenarios = scenario_dir(&[(
        "own-updates",
        &["own-updates"],
        serde_json::json!([
            {"update": {"sessionUpdate": "user_message_chunk",
                        "content": {"type": "text", "text": "an earlier prompt"}}},
            {"mode": {"current_mode_id": "plan"}}
        ]),
    )]);
    let flags = ["--scenario-dir", scenarios.path().to_str().unwrap()];
    let mut evs = run(
        &flags,
        PermissionPolicy::AllowOnce,
        &[
            "stream",
            "plan",
            "edit",
            "permission",
            "usage",
            "unknown-update",
            "garbage",
            "files",
            "terminal",
            "own-updates",
        ],
    )
    .await;
    evs.extend(run(&[], PermissionPolicy::Ask, &["crash"]).await);
    // `background-task` (its start, and its settling when the session closes), and a question
    // (`elicitation`, settled, and a page's `elicitation-complete`), answered as a user would.
    {
        let (h, mut rx, _dir) = session(&[]).await;
        let mut seen = Vec::new();
        // Read while it runs: a full event channel would hold the turn.
        let turn = spawn_prompt(&h, "background task to stop");
        rx.until(&mut seen, |e| matches!(e, StreamEvent::TurnEnd { .. }))
            .await;
        finish(turn).await;
        let turn = spawn_prompt(&h, "elicit url");
        let q = rx
            .until(&mut seen, |e| matches!(e, StreamEvent::Elicitation(_)))
            .await;
        let StreamEvent::Elicitation(q) = q else {
            unreachable!()
        };
        h.answer_elicitation(
            &q.request_id,
            acp_desk_core::elicitation::ElicitationAnswer::Accept { content: None },
        )
        .await
        .expect("accepted");
        finish(turn).await;
        h.close().await;
        drop(h);
        seen.extend(rx.all().await);
        evs.extend(seen);
    }
    // `session-continued`: a stored session continued (this one with no agent id: a new one);
    // `mcp-servers`: it has an MCP server configured (a program: every agent takes those).
    {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut o = opts(dir.path());
        o.mcp_servers = vec![acp_desk_core::mcp::McpServerConfig {
            name: "files".into(),
            source: acp_desk_core::mcp::McpSource::Settings,
            transport: acp_desk_core::mcp::McpConfigTransport::Stdio {
                command: "mcp-files".into(),
                args: Vec::new(),
                env: Default::default(),
            },
            credential_ref: None,
        }];
        o.opening = acp_desk_core::Opening::Continue {
            session_id: "s-stored-1".into(),
            // One the demo agent does not have: resume/load fail, a new session says so.
            acp_session_id: Some("acp-gone".into()),
            via: acp_desk_core::ContinueVia::Auto,
        };
        let (tx, rx) = channel();
        let collect = tokio::spawn(rx.all());
        let h = acp_desk_core::start(demo(&[]), o, tx)
            .await
            .expect("the session starts");
        h.close().await;
        drop(h);
        evs.extend(collect.await.expect("the collector"));
    }
    let seen: std::collections::BTreeSet<&str> = kinds(&evs).into_iter().collect();
    let cannot: Vec<&str> = KINDS_THE_DEMO_AGENT_CANNOT_CAUSE
        .iter()
        .map(|(k, _)| *k)
        .collect();
    for k in &cannot {
        assert!(
            StreamEvent::KINDS.contains(k),
            "{k} is listed as uncaused but is no kind at all"
        );
    }
    let missing: Vec<&str> = StreamEvent::KINDS
        .iter()
        .copied()
        .filter(|k| !cannot.contains(k) && !seen.contains(k))
        .collect();
    assert!(
        missing.is_empty(),
        "never seen: {missing:?} (seen {seen:?}); make a scenario cause them, or list them \
         in KINDS_THE_DEMO_AGENT_CANNOT_CAUSE with the reason"
    );
    let caused_after_all: Vec<&str> = cannot
        .iter()
        .copied()
        .filter(|k| seen.contains(k))
        .collect();
    assert!(
        caused_after_all.is_empty(),
        "listed as uncaused but seen: {caused_after_all:?}; take them off the list"
    );
}

#[tokio::test]
async fn permission_options_are_chosen_by_kind_not_by_position_id_or_name() {
    // Misleading on purpose: the option named and id'd "allow" is a rejection, and it comes first.
    let scenarios = scenario_dir(&[(
        "tricky",
        &["tricky"],
        serde_json::json!([
            {"tool_call": {"toolCallId": "k1", "title": "Delete build/", "kind": "delete", "status": "pending"}},
            {"permission": {
                "tool_call": {"toolCallId": "k1"},
                "options": [
                    {"optionId": "allow", "name": "Allow", "kind": "reject_once"},
                    {"optionId": "always", "name": "Allow always", "kind": "reject_always"},
                    {"optionId": "reject", "name": "Reject", "kind": "allow_once"},
                    {"optionId": "ok-forever", "name": "Reject always", "kind": "allow_always"}
                ],
                "on_allow": [{"say": {"text": "allowed"}}],
                "on_reject": [{"say": {"text": "rejected"}}],
                "on_cancelled": []
            }}
        ]),
    )]);
    let flags = ["--scenario-dir", scenarios.path().to_str().unwrap()];
    for (policy, chosen, text_said) in [
        (PermissionPolicy::AllowOnce, "reject", "allowed"),
        (PermissionPolicy::RejectOnce, "allow", "rejected"),
    ] {
        let evs = run(&flags, policy, &["tricky"]).await;
        let v = json(&evs);
        let settled = v
            .iter()
            .find(|e| e["kind"] == "agent-prompt-settled")
            .unwrap();
        assert_eq!(settled["outcome"]["optionId"], chosen, "{policy:?}");
        assert_eq!(text(&evs), text_said, "{policy:?}");
    }
}

#[tokio::test]
async fn the_agents_prompt_capabilities_reach_the_handle_and_session_status() {
    let (h, mut rx, _dir) = session(&[]).await;
    let caps = h.prompt_capabilities();
    assert!(
        caps.image && caps.embedded_context && !caps.audio,
        "{caps:?}"
    );
    let mut seen = Vec::new();
    let ready = rx
        .until(&mut seen, |e| {
            matches!(e, StreamEvent::SessionStatus { status, .. } if *status == SessionState::Ready)
        })
        .await;
    let v = serde_json::to_value(&ready).unwrap();
    assert_eq!(v["agent"]["promptCapabilities"]["image"], true, "{v}");
    assert_eq!(v["agent"]["promptCapabilities"]["embeddedContext"], true);
    h.close().await;

    // An agent that accepts text only says so too (an empty list is "none").
    let (h, _rx, _dir) = session(&["--prompt-caps", ""]).await;
    assert_eq!(*h.prompt_capabilities(), acp::PromptCapabilities::new());
    h.close().await;
}

#[tokio::test]
async fn set_mode_and_config_option_go_to_the_agent_and_come_back_as_events() {
    let (h, mut rx, _dir) = session(&[]).await;
    let mut seen = Vec::new();
    let modes = rx
        .until(&mut seen, |e| matches!(e, StreamEvent::Modes { .. }))
        .await;
    let StreamEvent::Modes {
        current_mode_id,
        available_modes,
        ..
    } = modes
    else {
        unreachable!()
    };
    assert_eq!(current_mode_id, "ask");
    assert!(available_modes.iter().any(|m| &*m.id.0 == "plan"));

    h.set_mode("plan").await.unwrap();
    let ev = rx
        .until(&mut seen, |e| matches!(e, StreamEvent::CurrentMode { .. }))
        .await;
    assert!(
        matches!(&ev, StreamEvent::CurrentMode { current_mode_id, .. } if current_mode_id == "plan"),
        "{ev:?}"
    );

    // The agent's own words reach the caller.
    let err = h.set_mode("yolo").await.unwrap_err();
    let EngineError::AgentRefused(message) = &err else {
        panic!("{err:?}")
    };
    assert!(message.contains("yolo"), "{message}");

    h.set_config_option("model", "demo-deep").await.unwrap();
    // The first config-options event is session/new's; the agent's answer carries every
    // option as it now is.
    let model_is = |e: &StreamEvent, want: &str| {
        matches!(e, StreamEvent::ConfigOptions { .. })
            && serde_json::to_value(e).unwrap()["configOptions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|o| o["id"] == "model" && o["currentValue"] == want)
    };
    rx.until(&mut seen, |e| model_is(e, "demo-deep")).await;
    assert!(
        seen.iter().any(|e| model_is(e, "demo-swift")),
        "session/new's options came first"
    );

    h.set_config_option("brief", true).await.unwrap();
    let err = h.set_config_option("model", true).await.unwrap_err();
    assert!(matches!(err, EngineError::AgentRefused(_)), "{err:?}");

    // A closed session says so.
    h.close().await;
    let err = h.set_mode("code").await.unwrap_err();
    assert!(matches!(err, EngineError::SessionEnded(_)), "{err:?}");
    let err = h.set_config_option("brief", false).await.unwrap_err();
    assert!(matches!(err, EngineError::SessionEnded(_)), "{err:?}");
}

#[tokio::test]
async fn the_showcase_plays_every_kind_of_update_in_one_turn() {
    let evs = run(&[], PermissionPolicy::AllowOnce, &["showcase"]).await;
    let v = json(&evs);
    let k = kinds(&evs);
    for kind in [
        "thought",
        "text-delta",
        "plan",
        "usage_update",
        "agent-prompt",
        "terminal-output",
    ] {
        assert!(k.contains(&kind), "no {kind}: {k:?}");
    }
    let tool_kinds: std::collections::BTreeSet<String> = v
        .iter()
        .filter(|e| e["kind"] == "tool-call")
        .filter_map(|e| e["toolKind"].as_str().map(str::to_owned))
        .collect();
    for kind in [
        "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other",
    ] {
        assert!(
            tool_kinds.contains(kind),
            "no {kind} tool call: {tool_kinds:?}"
        );
    }
    let t = text(&evs);
    assert!(t.contains("```rust"), "{t}");
    assert!(!t.contains("MISMATCH") && !t.contains("UNEXPECTED"), "{t}");
    assert_eq!(
        turn_ends(&evs),
        vec![(TurnEndReason::Completed, Some(acp::StopReason::EndTurn))]
    );
}
