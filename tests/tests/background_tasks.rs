//! Background tasks (JetBrains' AIR `asyncTasks`, as claude-agent-acp sends them) through the
//! engine: with the demo agent (a task that finishes after the turn and the autonomous cycle
//! that follows, Stop on a task the agent can stop and on one it cannot, the session's end
//! settling what still runs), and replayed from the real adapter's recording.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use acp_desk_core::events::{
    BackgroundTaskInfo, BackgroundTaskPhase, BackgroundTaskStatus, TaskSettledBy,
};
use acp_desk_core::{EngineError, StreamEvent};
use common::*;

fn task_events(evs: &[StreamEvent]) -> Vec<(BackgroundTaskPhase, BackgroundTaskInfo)> {
    evs.iter()
        .filter_map(|e| match e {
            StreamEvent::BackgroundTask { phase, task, .. } => Some((*phase, task.clone())),
            _ => None,
        })
        .collect()
}

async fn until_task(
    rx: &mut Collector,
    seen: &mut Vec<StreamEvent>,
    id: &str,
    phase: BackgroundTaskPhase,
) -> BackgroundTaskInfo {
    match rx
        .until(seen, |e| {
            matches!(e, StreamEvent::BackgroundTask { phase: p, task, .. } if *p == phase && task.task_id == id)
        })
        .await
    {
        StreamEvent::BackgroundTask { task, .. } => task,
        other => unreachable!("{other:?}"),
    }
}

#[tokio::test]
async fn a_task_finishes_after_the_turn_and_the_agent_then_works_on_its_own() {
    let (h, mut rx, _dir) = session(&[]).await;
    let mut seen = Vec::new();
    // Spawned: the events are read while the turn runs (a full channel would hold it).
    let turn = spawn_prompt(&h, "background task");
    let started = until_task(
        &mut rx,
        &mut seen,
        "demo-build",
        BackgroundTaskPhase::Started,
    )
    .await;
    assert_eq!(started.status, Some(BackgroundTaskStatus::Running));
    assert_eq!(started.task_kind.as_deref(), Some("shell"));
    assert_eq!(started.name.as_deref(), Some("cargo build --release"));
    assert_eq!(started.can_stop, Some(true));
    assert_eq!(started.tool_call_id.as_deref(), Some("demo-bg-call"));
    // The turn does not wait for the task: it ends first.
    rx.until(&mut seen, |e| matches!(e, StreamEvent::TurnEnd { .. }))
        .await;
    finish(turn).await;
    let settled = until_task(
        &mut rx,
        &mut seen,
        "demo-build",
        BackgroundTaskPhase::Settled,
    )
    .await;
    assert_eq!(settled.status, Some(BackgroundTaskStatus::Completed));
    assert_eq!(settled.settled_by, Some(TaskSettledBy::Agent));
    assert_eq!(
        settled.summary.as_deref(),
        Some("Finished the release build (simulated)")
    );
    assert_eq!(
        settled.name.as_deref(),
        Some("cargo build --release"),
        "merged: the name stays"
    );
    // The autonomous cycle: a `turn` task, the agent's words, and a usage_update whose origin
    // says a task notification started it.
    let origin = rx
        .until(&mut seen, |e| {
            matches!(
                e,
                StreamEvent::UsageUpdate {
                    origin: Some(_),
                    ..
                }
            )
        })
        .await;
    let StreamEvent::UsageUpdate { origin, .. } = origin else {
        unreachable!()
    };
    assert_eq!(origin.as_deref(), Some("task-notification"));
    let tasks = task_events(&seen);
    let turn_task: Vec<_> = tasks
        .iter()
        .filter(|(_, t)| t.task_id == "demo-autonomous-1")
        .collect();
    assert_eq!(turn_task.len(), 2, "{turn_task:?}");
    assert_eq!(turn_task[0].1.task_kind.as_deref(), Some("turn"));
    assert_eq!(turn_task[1].0, BackgroundTaskPhase::Settled);
    assert!(text(&seen).contains("The background build finished (simulated)"));
    let phases: Vec<_> = tasks
        .iter()
        .filter(|(_, t)| t.task_id == "demo-build")
        .map(|(p, _)| *p)
        .collect();
    assert_eq!(
        phases,
        [
            BackgroundTaskPhase::Started,
            BackgroundTaskPhase::Updated,
            BackgroundTaskPhase::Settled
        ]
    );
    h.close().await;
    let rest = rx.all().await;
    assert!(
        task_events(&rest).is_empty(),
        "nothing was left running to settle: {rest:?}"
    );
}

#[tokio::test]
async fn stop_what_the_agent_can_stop_and_the_session_end_settles_the_rest() {
    let (h, mut rx, _dir) = session(&[]).await;
    let mut seen = Vec::new();
    let turn = spawn_prompt(&h, "background task to stop");
    until_task(
        &mut rx,
        &mut seen,
        "demo-log-watch",
        BackgroundTaskPhase::Started,
    )
    .await;
    assert!(matches!(
        h.stop_background_task("demo-log-watch").await,
        Err(EngineError::TaskNotStoppable { reason, .. }) if reason.contains("does not offer")
    ));
    assert!(matches!(
        h.stop_background_task("no-such-task").await,
        Err(EngineError::TaskNotStoppable { reason, .. }) if reason.contains("never reported")
    ));
    finish(turn).await;
    // After the turn: a task outlives it, and so does its Stop.
    h.stop_background_task("demo-dev-server").await.unwrap();
    let stopped = until_task(
        &mut rx,
        &mut seen,
        "demo-dev-server",
        BackgroundTaskPhase::Settled,
    )
    .await;
    assert_eq!(stopped.status, Some(BackgroundTaskStatus::Stopped));
    assert_eq!(stopped.settled_by, Some(TaskSettledBy::Agent));
    assert!(matches!(
        h.stop_background_task("demo-dev-server").await,
        Err(EngineError::TaskNotStoppable { reason, .. }) if reason.contains("already ended")
    ));
    h.close().await;
    let rest = rx.all().await;
    let settled = task_events(&rest);
    assert_eq!(settled.len(), 1, "{settled:?}");
    let (phase, watch) = &settled[0];
    assert_eq!(*phase, BackgroundTaskPhase::Settled);
    assert_eq!(watch.task_id, "demo-log-watch");
    assert_eq!(watch.status, Some(BackgroundTaskStatus::Stopped));
    assert_eq!(watch.settled_by, Some(TaskSettledBy::SessionEnd));
}
