//! Reconnect after the demo agent crashes (issue 14): the dead session says why (kind, exit
//! code, stderr), a new agent process continues it (resume or load, the replay neither shown
//! nor stored), the thread and the history are intact, and the next prompt works. Also
//! `session/delete` at the agent when a stored session is deleted.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;

use acp_desk_app::{AgentDeletion, HistoryRecorder, OpenRequest, Registry};
use acp_desk_core::events::{ErrorKind, TurnEndReason};
use acp_desk_core::{EngineError, StreamEvent, text_block};
use acp_desk_store::{RecorderOptions, Store};
use common::{HANG, demo, opts};

struct Rig {
    registry: Registry,
    history: Arc<HistoryRecorder>,
    file: std::path::PathBuf,
    folder: tempfile::TempDir,
    _data: tempfile::TempDir,
}

fn rig(methods: &str) -> (Rig, String) {
    let data = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let file = data.path().join("history.sqlite3");
    let (history, _) = HistoryRecorder::start(&file, RecorderOptions::default()).unwrap();
    let history = Arc::new(history);
    let registry = Registry::new(tokio::runtime::Handle::current());
    registry.add_observer(history.clone());
    let sessions = data.path().join("demo-sessions");
    let spec = demo(&[
        "--session-methods",
        methods,
        "--session-dir",
        sessions.to_str().unwrap(),
    ]);
    let canonical = std::fs::canonicalize(folder.path()).unwrap();
    let mut request = OpenRequest::new(canonical.clone(), "demo", spec);
    request.options = opts(&canonical);
    // Stored as its command line, so that the history starts this same agent (with its flags)
    // again; by name it would be the built-in demo, without them.
    request.origin = acp_desk_store::LaunchOrigin::CommandLine;
    let info = registry.open(request);
    (
        Rig {
            registry,
            history,
            file,
            folder,
            _data: data,
        },
        info.id,
    )
}

/// The session's thread once it holds `n` turn ends.
async fn thread_with_turn_ends(r: &Registry, id: &str, n: usize) -> Vec<StreamEvent> {
    let deadline = tokio::time::Instant::now() + HANG;
    loop {
        let thread = r.snapshot(id).unwrap();
        let ends = thread
            .iter()
            .filter(|e| matches!(e, StreamEvent::TurnEnd { .. }))
            .count();
        if ends >= n {
            return thread;
        }
        assert!(tokio::time::Instant::now() < deadline, "no {n} turn ends");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

fn texts(thread: &[StreamEvent]) -> String {
    common::text(thread)
}

fn turn_starts(thread: &[StreamEvent]) -> Vec<String> {
    thread
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TurnStart { prompt, .. } => Some(
                serde_json::to_value(prompt).unwrap()[0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            ),
            _ => None,
        })
        .collect()
}

/// The crash, the card's facts, the reconnect and the next prompt, for an agent offering
/// `methods`, continued with `expect_outcome` (`resumed`, `loaded`).
async fn crash_and_reconnect(methods: &str, expect_outcome: &str) {
    let (rig, id) = rig(methods);
    let r = &rig.registry;
    r.started(&id).await.unwrap();
    r.prompt(&id, vec![text_block("stream a markdown answer")])
        .await
        .unwrap();
    // The crash scenario: some text, then exit code 3 mid-turn.
    // Its turn ends `error` (or the prompt hears the session ended, when the death came first).
    match r.prompt(&id, vec![text_block("crash")]).await {
        Ok(outcome) => assert_eq!(outcome.reason, TurnEndReason::Error),
        Err(e) => assert!(
            matches!(
                e,
                acp_desk_app::AppError::Engine(EngineError::SessionEnded(_))
            ),
            "{e:?}"
        ),
    }
    tokio::time::timeout(HANG, r.wait_ended(&id))
        .await
        .unwrap()
        .unwrap();
    let before = r.snapshot(&id).unwrap();
    // The dead session says why, structured: its kind, exit code, last stderr lines.
    let died = before
        .iter()
        .find_map(|e| match e {
            StreamEvent::Error { error, .. } if error.exit.is_some() => Some(error.clone()),
            _ => None,
        })
        .expect("an error with the agent's exit");
    assert_eq!(died.kind(), ErrorKind::AgentExited);
    let exit = died.exit.unwrap();
    assert_eq!((exit.code, exit.signal), (Some(3), None));
    assert!(
        !exit.stderr_tail.is_empty(),
        "the demo agent logs to stderr: its last lines come with the error"
    );
    let before_text = texts(&before);
    assert!(before_text.contains("crash now"), "{before_text}");

    // Reconnect: a new process, the same registry id, the same thread.
    let info = r.reconnect(&id).await.unwrap();
    assert_eq!(info.id, id);
    tokio::time::timeout(HANG, r.started(&id))
        .await
        .unwrap()
        .unwrap();
    r.prompt(&id, vec![text_block("what did I say first?")])
        .await
        .unwrap();
    // The pump hands the engine's events to the hub on its own task: wait for the third turn's
    // end to be there (a prompt returns once the engine sent it, not once the hub has it).
    let after = thread_with_turn_ends(r, &id, 3).await;
    let continued: Vec<String> = after
        .iter()
        .filter_map(|e| match e {
            StreamEvent::SessionContinued { outcome, .. } => Some(
                serde_json::to_value(outcome)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string(),
            ),
            _ => None,
        })
        .collect();
    assert_eq!(continued, [expect_outcome], "{:?}", common::kinds(&after));
    // The thread is intact: the earlier turns once each (a load's replay is not shown), then
    // the new turn, whose answer proves the agent has the old conversation.
    assert_eq!(
        turn_starts(&after),
        ["stream a markdown answer", "crash", "what did I say first?"]
    );
    let after_text = texts(&after);
    assert!(
        after_text.starts_with(&before_text),
        "the old thread is kept as it was"
    );
    assert!(
        after_text.contains("You first said: \"stream a markdown answer\""),
        "{after_text}"
    );

    // The history holds the one session, both agents' parts, the replay not stored again.
    let stored_id = after
        .iter()
        .find_map(|e| match e {
            StreamEvent::SessionStatus { session_id, .. } => Some(session_id.clone()),
            _ => None,
        })
        .unwrap();
    r.close(&id).await.unwrap();
    assert!(rig.history.finish().is_empty());
    let (store, _) = Store::open(&rig.file).unwrap();
    let sessions = store.sessions().unwrap();
    assert_eq!(sessions.len(), 1, "reconnect continues the stored session");
    assert_eq!(sessions[0].id, stored_id);
    let stored = store.events(&stored_id).unwrap();
    assert_eq!(
        turn_starts(&stored),
        ["stream a markdown answer", "crash", "what did I say first?"]
    );
    assert!(texts(&stored).contains("You first said"));
    drop(rig.folder);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnect_after_a_crash_resumes_and_the_next_prompt_works() {
    crash_and_reconnect("load,resume", "resumed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnect_after_a_crash_loads_without_showing_the_replay() {
    crash_and_reconnect("load", "loaded").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnect_is_refused_while_the_agent_runs() {
    let (rig, id) = rig("load");
    rig.registry.started(&id).await.unwrap();
    let err = rig.registry.reconnect(&id).await.unwrap_err();
    assert!(
        matches!(err, acp_desk_app::AppError::InvalidInput(_)),
        "{err:?}"
    );
    rig.registry.close(&id).await.unwrap();
}

/// A stored session whose agent advertised `session/delete` is deleted there too, through an
/// agent started for it; one whose agent did not is only ACP Desk's to delete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_stored_session_deletes_it_at_the_agent_when_advertised() {
    for (methods, expected) in [
        ("load,delete", AgentDeletion::Deleted),
        ("load", AgentDeletion::NotAdvertised),
    ] {
        let (rig, id) = rig(methods);
        let r = &rig.registry;
        r.started(&id).await.unwrap();
        r.prompt(&id, vec![text_block("stream please")])
            .await
            .unwrap();
        let stored_id = rig.history.history_id(&id).unwrap();
        r.close(&id).await.unwrap();
        assert!(rig.history.finish().is_empty());
        let (mut store, _) = Store::open(&rig.file).unwrap();
        let record = store.session(&stored_id).unwrap();
        let acp_id = record.acp_session_id.clone().unwrap();
        let records = rig._data.path().join("demo-sessions");
        let kept = |acp: &str| {
            std::fs::read_dir(&records)
                .map(|d| {
                    d.filter_map(Result::ok)
                        .any(|e| e.file_name().to_string_lossy().contains(acp))
                })
                .unwrap_or(false)
        };
        assert!(
            kept(&acp_id),
            "the demo agent keeps a record of its session"
        );
        // No agent of it runs now: one is started for the question and ended.
        let deleted = r.delete_at_agent(&record).await;
        assert_eq!(deleted, expected, "{methods}");
        assert!(
            r.is_empty(),
            "the temporary agent is not a session of the registry"
        );
        store.delete(&stored_id).unwrap();
        assert!(store.session(&stored_id).is_err());
        assert_eq!(
            kept(&acp_id),
            expected != AgentDeletion::Deleted,
            "{methods}: the agent's record"
        );
    }
}
