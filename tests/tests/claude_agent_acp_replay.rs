//! The engine against what claude-agent-acp 0.101.0 really sent (tests/fixtures/
//! claude-agent-acp-0.101.0-*.jsonl, recorded by tests/real-agents/record-claude-agent-acp.sh
//! from the real adapter and Claude Code against the scripted model), replayed by
//! tests/fake-agents/wire-replay.mjs: background tasks (a shell task, its output file, its end,
//! the autonomous cycle after it; a stop), and AskUserQuestion as an elicitation form (its
//! fields in the adapter's order, an answer it accepts, a decline, a Stop while it is open).
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use acp_desk_core::agents::LaunchSpec;
use acp_desk_core::elicitation::{ElicitationAction, ElicitationAnswer, FieldType, validate};
use acp_desk_core::events::{
    BackgroundTaskPhase, BackgroundTaskStatus, SettledBy, TaskSettledBy, TurnEndReason,
};
use acp_desk_core::{SessionHandle, StreamEvent};
use common::*;
use serde_json::json;

fn replay(fixture: &str) -> LaunchSpec {
    LaunchSpec {
        name: "claude-agent-acp-replay".into(),
        command: "node".into(),
        args: vec![
            repo_root()
                .join("tests/fake-agents/wire-replay.mjs")
                .display()
                .to_string(),
            repo_root()
                .join(format!(
                    "tests/fixtures/claude-agent-acp-0.101.0-{fixture}.jsonl"
                ))
                .display()
                .to_string(),
        ],
        env: Vec::new(),
        cwd: None,
    }
}

async fn start(fixture: &str) -> (SessionHandle, Collector, tempfile::TempDir) {
    session_with(replay(fixture)).await
}

#[tokio::test]
async fn a_background_shell_task_its_output_its_end_and_the_autonomous_cycle() {
    let (h, mut rx, _dir) = start("async-tasks").await;
    let mut seen = Vec::new();
    let turn = spawn_prompt(&h, "start a background job that finishes");
    let started = rx
        .until(&mut seen, |e| {
            matches!(e, StreamEvent::BackgroundTask { phase: BackgroundTaskPhase::Started, task, .. } if task.task_kind.as_deref() == Some("shell"))
        })
        .await;
    let StreamEvent::BackgroundTask { task, .. } = started else {
        unreachable!()
    };
    let id = task.task_id.clone();
    assert_eq!(task.status, Some(BackgroundTaskStatus::Running));
    assert_eq!(task.can_stop, Some(true));
    assert!(
        task.name.is_some() && task.tool_call_id.is_some(),
        "{task:?}"
    );
    assert_eq!(finish(turn).await.reason, TurnEndReason::Completed);
    let settled = rx
        .until(&mut seen, |e| {
            matches!(e, StreamEvent::BackgroundTask { phase: BackgroundTaskPhase::Settled, task, .. } if task.task_id == id)
        })
        .await;
    let StreamEvent::BackgroundTask { task, .. } = settled else {
        unreachable!()
    };
    assert_eq!(task.status, Some(BackgroundTaskStatus::Completed));
    assert_eq!(task.settled_by, Some(TaskSettledBy::Agent));
    assert!(
        task.output_file
            .as_deref()
            .is_some_and(|f| f.ends_with(&format!("{id}.output"))),
        "the output file came in a progress update and was merged: {task:?}"
    );
    // The autonomous cycle: a `turn` task, then the usage that closes it, marked.
    let origin = rx
        .until(&mut seen, |e| {
            matches!(e, StreamEvent::UsageUpdate { origin: Some(o), .. } if o == "task-notification")
        })
        .await;
    assert!(matches!(origin, StreamEvent::UsageUpdate { .. }));
    assert!(seen.iter().any(|e| matches!(
        e,
        StreamEvent::BackgroundTask { task, .. } if task.task_kind.as_deref() == Some("turn")
    )));
    h.close().await;
}

#[tokio::test]
async fn a_stop_reaches_the_adapter_and_its_update_settles_the_task() {
    let (h, mut rx, _dir) = start("async-task-stop").await;
    let mut seen = Vec::new();
    let turn = spawn_prompt(&h, "start a long background job");
    let started = rx
        .until(&mut seen, |e| {
            matches!(
                e,
                StreamEvent::BackgroundTask {
                    phase: BackgroundTaskPhase::Started,
                    ..
                }
            )
        })
        .await;
    let StreamEvent::BackgroundTask { task, .. } = started else {
        unreachable!()
    };
    finish(turn).await;
    h.stop_background_task(&task.task_id).await.unwrap();
    let settled = rx
        .until(&mut seen, |e| {
            matches!(
                e,
                StreamEvent::BackgroundTask {
                    phase: BackgroundTaskPhase::Settled,
                    ..
                }
            )
        })
        .await;
    let StreamEvent::BackgroundTask { task, .. } = settled else {
        unreachable!()
    };
    assert_eq!(task.status, Some(BackgroundTaskStatus::Stopped));
    assert_eq!(task.settled_by, Some(TaskSettledBy::Agent));
    h.close().await;
}

async fn question(
    rx: &mut Collector,
    seen: &mut Vec<StreamEvent>,
) -> Box<acp_desk_core::events::ElicitationEvent> {
    match rx
        .until(seen, |e| matches!(e, StreamEvent::Elicitation(_)))
        .await
    {
        StreamEvent::Elicitation(e) => e,
        other => unreachable!("{other:?}"),
    }
}

#[tokio::test]
async fn ask_user_question_is_a_form_in_the_adapters_order_and_its_answer_goes_back() {
    let (h, mut rx, _dir) = start("ask-user-question").await;
    let mut seen = Vec::new();
    let turn = spawn_prompt(&h, "ask me two questions");
    let q = question(&mut rx, &mut seen).await;
    assert_eq!(q.message, "Please answer the following questions.");
    assert!(q.tool_call_id.is_some());
    let fields = q.fields.clone().unwrap();
    let shape: Vec<(&str, FieldType)> = fields
        .iter()
        .map(|f| (f.name.as_str(), f.field_type))
        .collect();
    assert_eq!(
        shape,
        [
            ("question_0", FieldType::Select),
            ("question_0_custom", FieldType::String),
            ("question_1", FieldType::MultiSelect),
            ("question_1_custom", FieldType::String),
        ]
    );
    assert_eq!(fields[0].label(), "Colour");
    assert_eq!(
        fields[0].options.as_ref().unwrap()[0]
            .description
            .as_deref(),
        Some("Calm and readable")
    );
    // What the recording's client answered, which the adapter took.
    let answer = json!({"question_0": "Green", "question_1": ["Unit tests", "End to end"], "question_1_custom": "Benchmarks"});
    let answer = answer.as_object().cloned().unwrap();
    assert_eq!(validate(&fields, &answer), []);
    h.answer_elicitation(
        &q.request_id,
        ElicitationAnswer::Accept {
            content: Some(answer),
        },
    )
    .await
    .unwrap();
    assert_eq!(finish(turn).await.reason, TurnEndReason::Completed);
    h.close().await;
    seen.extend(rx.all().await);
    assert!(seen.iter().any(|e| matches!(
        e,
        StreamEvent::ElicitationSettled {
            action: ElicitationAction::Accept,
            by: SettledBy::User,
            ..
        }
    )));
}

#[tokio::test]
async fn ask_user_question_declined_and_stopped() {
    let (h, mut rx, _dir) = start("ask-user-question-decline").await;
    let mut seen = Vec::new();
    let turn = spawn_prompt(&h, "ask me a question");
    let q = question(&mut rx, &mut seen).await;
    assert_eq!(q.message, "Which colour should the header be?");
    h.answer_elicitation(&q.request_id, ElicitationAnswer::Decline)
        .await
        .unwrap();
    assert_eq!(finish(turn).await.reason, TurnEndReason::Completed);
    h.close().await;

    let (h, mut rx, _dir) = start("ask-user-question-cancel").await;
    let mut seen = Vec::new();
    let turn = spawn_prompt(&h, "ask me a question");
    question(&mut rx, &mut seen).await;
    h.cancel().unwrap();
    let settled = rx
        .until(&mut seen, |e| {
            matches!(e, StreamEvent::ElicitationSettled { .. })
        })
        .await;
    assert!(
        matches!(
            settled,
            StreamEvent::ElicitationSettled {
                action: ElicitationAction::Cancel,
                by: SettledBy::Stop,
                ..
            }
        ),
        "{settled:?}"
    );
    // The adapter's `$/cancel_request {requestId: 0}` then finds nothing open, and the turn
    // ends as the adapter says: cancelled.
    assert_eq!(finish(turn).await.reason, TurnEndReason::Cancelled);
    h.close().await;
}
