//! The owner's state machine driven over an in-memory pipe by a scripted peer: no process,
//! and tokio's paused clock, so the watchdog, the cancel grace and the start timeout are
//! exercised without waiting for them (time jumps to the next timer when nothing else runs).
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::mpsc;

use super::*;
use crate::events::{ContinuationOutcome, SessionState};

mod auth;

/// The agent's side of the pipe: reads what the client sends, writes what the script says.
struct Peer {
    lines: tokio::io::Lines<BufReader<ReadHalf<DuplexStream>>>,
    out: Option<WriteHalf<DuplexStream>>,
}

impl Peer {
    /// The client's next message.
    async fn recv(&mut self) -> Value {
        let line = self
            .lines
            .next_line()
            .await
            .unwrap()
            .expect("the client closed the pipe");
        serde_json::from_str(&line).unwrap()
    }

    /// The client's next message, which must be `method`; returns it whole.
    async fn expect(&mut self, method: &str) -> Value {
        let msg = self.recv().await;
        assert_eq!(msg["method"], method, "expected {method}, got {msg}");
        msg
    }

    /// What the client still sends until it closes its side (its messages end); a hang here
    /// is a client that never closes.
    async fn rest_until_closed(&mut self) -> Vec<Value> {
        let mut rest = Vec::new();
        while let Ok(Some(line)) = self.lines.next_line().await {
            rest.push(serde_json::from_str(&line).unwrap());
        }
        rest
    }

    async fn send(&mut self, v: Value) {
        let out = self.out.as_mut().unwrap();
        let mut line = serde_json::to_vec(&v).unwrap();
        line.push(b'\n');
        out.write_all(&line).await.unwrap();
        out.flush().await.unwrap();
    }

    async fn respond(&mut self, request: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
            .await;
    }

    async fn respond_error(&mut self, request: &Value, code: i64, message: &str) {
        let error = json!({"code": code, "message": message});
        self.send(json!({"jsonrpc": "2.0", "id": request["id"], "error": error}))
            .await;
    }

    async fn update(&mut self, update: Value) {
        let params = json!({"sessionId": "acp-1", "update": update});
        self.send(json!({"jsonrpc": "2.0", "method": "session/update", "params": params}))
            .await;
    }

    /// Answers `initialize` and `session/new` as a minimal agent does.
    async fn handshake(&mut self) {
        let init = self.expect("initialize").await;
        assert_eq!(init["params"]["protocolVersion"], 1);
        self.respond(
            &init,
            json!({"protocolVersion": 1, "agentCapabilities": {}}),
        )
        .await;
        let new = self.expect("session/new").await;
        self.respond(&new, json!({"sessionId": "acp-1"})).await;
    }

    /// The handshake of an agent that advertises `sessionCapabilities.close`.
    async fn handshake_with_close(&mut self) {
        let init = self.expect("initialize").await;
        self.respond(
            &init,
            json!({"protocolVersion": 1, "agentCapabilities": {"sessionCapabilities": {"close": {}}}}),
        )
        .await;
        let new = self.expect("session/new").await;
        self.respond(&new, json!({"sessionId": "acp-1"})).await;
    }

    /// The agent's output closes: it exited.
    async fn hang_up(&mut self) {
        if let Some(mut out) = self.out.take() {
            out.shutdown().await.unwrap();
        }
    }
}

struct Rig {
    peer: Peer,
    events: mpsc::Receiver<EventBatch>,
    _dir: tempfile::TempDir,
}

/// Options that touch nothing outside the test: no rules file, no audit log, no watcher.
fn quiet_options(dir: &std::path::Path) -> SessionOptions {
    let mut o = SessionOptions::new(dir);
    o.rules_file = None;
    o.audit = AuditKind::Off;
    o.audit_dir = dir.join("audit");
    o.watch_roots = false;
    o
}

/// A session over a pipe; `start` runs as a task, since it returns only once the peer did the
/// handshake.
fn rig(
    tune: impl FnOnce(&mut SessionOptions),
) -> (
    Rig,
    tokio::task::JoinHandle<Result<SessionHandle, EngineError>>,
) {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = quiet_options(dir.path());
    tune(&mut opts);
    let (client, agent) = tokio::io::duplex(64 * 1024);
    let (client_r, client_w) = tokio::io::split(client);
    let (agent_r, agent_w) = tokio::io::split(agent);
    let (tx, events) = mpsc::channel(64);
    let started =
        tokio::spawn(async move { start_over("scripted", client_r, client_w, opts, tx).await });
    let peer = Peer {
        lines: BufReader::new(agent_r).lines(),
        out: Some(agent_w),
    };
    (
        Rig {
            peer,
            events,
            _dir: dir,
        },
        started,
    )
}

/// A session that did its handshake.
async fn ready(tune: impl FnOnce(&mut SessionOptions)) -> (Rig, SessionHandle) {
    let (mut rig, started) = rig(tune);
    rig.peer.handshake().await;
    let handle = started.await.unwrap().unwrap();
    (rig, handle)
}

/// An event in a few words: its kind and what tells it apart.
fn label(ev: &StreamEvent) -> String {
    let v = serde_json::to_value(ev).unwrap();
    let kind = v["kind"].as_str().unwrap_or("?").to_string();
    let detail = match kind.as_str() {
        "session-status" => v["status"].as_str().map(str::to_string),
        "turn-end" => v["reason"].as_str().map(str::to_string),
        "agent-prompt-settled" => v["by"].as_str().map(str::to_string),
        "text-delta" => v["text"].as_str().map(str::to_string),
        _ => None,
    };
    match detail {
        Some(d) => format!("{kind}:{d}"),
        None => kind,
    }
}

impl Rig {
    /// The agent asks about tool call `t1` (`title`, `kind`) with Allow (`y`) and Reject (`n`)
    /// under JSON-RPC id `id`; returns once the request is parked as an `agent-prompt`.
    async fn ask(&mut self, id: Value, title: &str, kind: &str) {
        self.peer
            .send(
                json!({"jsonrpc": "2.0", "id": id, "method": "session/request_permission", "params": {
                    "sessionId": "acp-1",
                    "toolCall": {"toolCallId": "t1", "title": title, "kind": kind},
                    "options": [
                        {"optionId": "y", "name": "Allow", "kind": "allow_once"},
                        {"optionId": "n", "name": "Reject", "kind": "reject_once"}
                    ]
                }}),
            )
            .await;
        self.events_until("agent-prompt").await;
    }

    /// Every event up to and including the first whose label is `last`.
    async fn events_until(&mut self, last: &str) -> Vec<StreamEvent> {
        let mut got = Vec::new();
        while let Some(batch) = self.events.recv().await {
            for ev in batch {
                let done = label(&ev) == last;
                got.push(ev);
                if done {
                    return got;
                }
            }
        }
        panic!(
            "the events ended before {last}: {:?}",
            got.iter().map(label).collect::<Vec<_>>()
        );
    }

    /// Every event until the stream ends (the owner is gone).
    async fn rest(&mut self) -> Vec<StreamEvent> {
        let mut got = Vec::new();
        while let Some(batch) = self.events.recv().await {
            got.extend(batch);
        }
        got
    }
}

fn labels(evs: &[StreamEvent]) -> Vec<String> {
    evs.iter().map(label).collect()
}

fn error_messages(evs: &[StreamEvent]) -> Vec<String> {
    evs.iter()
        .filter_map(|e| match e {
            StreamEvent::Error { error, .. } => Some(error.message.clone()),
            _ => None,
        })
        .collect()
}

fn error_kinds(evs: &[StreamEvent]) -> Vec<crate::error_kind::ErrorKind> {
    evs.iter()
        .filter_map(|e| match e {
            StreamEvent::Error { error, .. } => Some(error.kind()),
            _ => None,
        })
        .collect()
}

fn dead_detail(evs: &[StreamEvent]) -> Option<String> {
    evs.iter().find_map(|e| match e {
        StreamEvent::SessionStatus {
            status: crate::events::SessionState::Dead,
            detail,
            ..
        } => detail.clone(),
        _ => None,
    })
}

#[tokio::test(start_paused = true)]
async fn a_turn_streams_the_agents_text_and_ends_with_its_stop_reason() {
    let (mut rig, handle) = ready(|_| {}).await;
    let turn = tokio::spawn({
        let h = handle.clone();
        async move { h.prompt(vec![text_block("hi")]).await }
    });
    let prompt = rig.peer.expect("session/prompt").await;
    assert_eq!(prompt["params"]["sessionId"], "acp-1");
    assert_eq!(prompt["params"]["prompt"][0]["text"], "hi");
    rig.peer
        .update(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hello"}}))
        .await;
    rig.peer
        .respond(&prompt, json!({"stopReason": "end_turn"}))
        .await;
    let outcome = turn.await.unwrap().unwrap();
    assert_eq!(outcome.reason, TurnEndReason::Completed);
    assert_eq!(outcome.stop_reason, Some(acp::StopReason::EndTurn));
    let evs = rig.events_until("turn-end:completed").await;
    assert_eq!(
        labels(&evs),
        [
            "session-status:starting",
            "session-status:ready",
            "turn-start",
            "session-status:prompting",
            "text-delta:Hello",
            "turn-end:completed",
        ]
    );
    // A second prompt while one runs is refused; the first goes on.
    let again = tokio::spawn({
        let h = handle.clone();
        async move { h.prompt(vec![text_block("one")]).await }
    });
    let p = rig.peer.expect("session/prompt").await;
    let refused = handle.prompt(vec![text_block("two")]).await;
    assert_eq!(refused.unwrap_err(), EngineError::TurnInProgress);
    rig.peer
        .respond(&p, json!({"stopReason": "max_tokens"}))
        .await;
    assert_eq!(
        again.await.unwrap().unwrap().stop_reason,
        Some(acp::StopReason::MaxTokens)
    );
    handle.close().await;
    let rest = rig.rest().await;
    assert_eq!(dead_detail(&rest).as_deref(), Some("Session closed."));
    assert_eq!(
        rig.peer.rest_until_closed().await,
        Vec::<Value>::new(),
        "closing between turns sends nothing, then closes the agent's input"
    );
}

#[tokio::test(start_paused = true)]
async fn a_silent_agent_is_stopped_by_the_watchdog_without_waiting_ten_minutes() {
    let (mut rig, handle) = ready(|o| o.turn_idle_timeout = Some(Duration::from_secs(600))).await;
    let turn = tokio::spawn({
        let h = handle.clone();
        async move { h.prompt(vec![text_block("think")]).await }
    });
    let prompt = rig.peer.expect("session/prompt").await;
    // The agent says nothing; the paused clock jumps to the watchdog's deadline.
    let cancel = rig.peer.expect("session/cancel").await;
    assert_eq!(cancel["params"]["sessionId"], "acp-1");
    rig.peer
        .respond(&prompt, json!({"stopReason": "cancelled"}))
        .await;
    let outcome = turn.await.unwrap().unwrap();
    assert_eq!(outcome.reason, TurnEndReason::WatchdogTimeout);
    assert_eq!(outcome.stop_reason, Some(acp::StopReason::Cancelled));
    let evs = rig.events_until("turn-end:watchdog-timeout").await;
    let notice = evs.iter().find_map(|e| match e {
        StreamEvent::Notice { title, .. } => Some(title.clone()),
        _ => None,
    });
    assert_eq!(
        notice.as_deref(),
        Some("The agent sent nothing for 600 s; the turn was stopped.")
    );
    // The session lives on: the next turn works.
    let next = tokio::spawn({
        let h = handle.clone();
        async move { h.prompt(vec![text_block("again")]).await }
    });
    let p = rig.peer.expect("session/prompt").await;
    rig.peer
        .respond(&p, json!({"stopReason": "end_turn"}))
        .await;
    assert_eq!(
        next.await.unwrap().unwrap().reason,
        TurnEndReason::Completed
    );
    handle.close().await;
}

/// The watchdog's idle timeout in the tests below: on the paused clock waiting for it costs
/// nothing, so it is the real default.
const IDLE: Duration = Duration::from_secs(600);

#[tokio::test(start_paused = true)]
async fn the_watchdog_waits_for_a_user_deciding_and_counts_again_from_the_answer() {
    let (mut rig, handle) = ready(|o| o.turn_idle_timeout = Some(IDLE)).await;
    let turn = tokio::spawn({
        let h = handle.clone();
        async move { h.prompt(vec![text_block("run it")]).await }
    });
    let prompt = rig.peer.expect("session/prompt").await;
    rig.ask(json!(7), "cargo test", "execute").await;
    // Three idle timeouts while the user decides. Time moves only when every task waits, so
    // a watchdog armed now would fire at the first of them and be done (notice, stop,
    // session/cancel) before this sleep ends.
    tokio::time::sleep(3 * IDLE).await;
    assert!(
        !turn.is_finished(),
        "the watchdog ended a turn waiting for the user"
    );
    assert!(
        rig.events.try_recv().is_err(),
        "nothing happens while the user decides"
    );
    handle
        .respond_permission("t1#1", PermissionResolution::selected("y"))
        .await
        .unwrap();
    let answered = tokio::time::Instant::now();
    let answer = rig.peer.recv().await;
    assert_eq!(
        (
            answer["id"].clone(),
            answer["result"]["outcome"]["optionId"].clone()
        ),
        (json!(7), json!("y")),
        "the agent hears the answer first, not a stop: {answer}"
    );
    // Silent after the answer: one idle timeout from the answer, not from the request (which
    // was three timeouts ago, so an idle clock left alone would stop the turn at once).
    let cancel = tokio::time::timeout(2 * IDLE, rig.peer.expect("session/cancel"))
        .await
        .expect("the watchdog never fired after the answer");
    assert_eq!(cancel["params"]["sessionId"], "acp-1");
    assert!(answered.elapsed() >= IDLE, "{:?}", answered.elapsed());
    rig.peer
        .respond(&prompt, json!({"stopReason": "cancelled"}))
        .await;
    let outcome = turn.await.unwrap().unwrap();
    assert_eq!(outcome.reason, TurnEndReason::WatchdogTimeout);
    handle.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_running_terminal_is_not_idleness_for_the_watchdog() {
    let (mut rig, handle) = ready(|o| o.turn_idle_timeout = Some(IDLE)).await;
    let turn = tokio::spawn({
        let h = handle.clone();
        async move { h.prompt(vec![text_block("build")]).await }
    });
    let prompt = rig.peer.expect("session/prompt").await;
    let call = |id: i64, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    // A real command, since the terminal is a process; it never ends by itself.
    rig.peer
        .send(call(
            1,
            "terminal/create",
            json!({"sessionId": "acp-1", "command": "sleep", "args": ["3600"]}),
        ))
        .await;
    let created = rig.peer.recv().await;
    assert_eq!(created["id"], 1, "{created}");
    let term = created["result"]["terminalId"].clone();
    assert!(term.is_string(), "{created}");
    // Three idle timeouts of build, on the paused clock (see the test above).
    tokio::time::sleep(3 * IDLE).await;
    assert!(
        !turn.is_finished(),
        "the watchdog ended a turn running a command"
    );
    let term_params = json!({"sessionId": "acp-1", "terminalId": term});
    rig.peer
        .send(call(2, "terminal/kill", term_params.clone()))
        .await;
    let killed = rig.peer.recv().await;
    assert_eq!(killed["id"], 2, "the agent hears no stop first: {killed}");
    rig.peer
        .send(call(3, "terminal/wait_for_exit", term_params))
        .await;
    let exited = rig.peer.recv().await;
    assert_eq!(exited["id"], 3, "{exited}");
    assert!(exited["result"]["signal"].is_string(), "{exited}");
    rig.peer
        .respond(&prompt, json!({"stopReason": "end_turn"}))
        .await;
    assert_eq!(
        turn.await.unwrap().unwrap().reason,
        TurnEndReason::Completed
    );
    handle.close().await;
}

#[tokio::test(start_paused = true)]
async fn an_agent_deaf_to_stop_is_ended_after_the_grace_and_the_turn_ends_cancelled() {
    let (mut rig, handle) = ready(|o| o.cancel_grace = Duration::from_secs(5)).await;
    let turn = tokio::spawn({
        let h = handle.clone();
        async move { h.prompt(vec![text_block("work")]).await }
    });
    let _prompt = rig.peer.expect("session/prompt").await;
    // A permission request waits for the user when Stop comes.
    rig.ask(json!(90), "rm -rf build", "execute").await;
    handle.cancel().unwrap();
    rig.peer.expect("session/cancel").await;
    let answer = rig.peer.recv().await;
    assert_eq!(answer["id"], 90);
    assert_eq!(answer["result"]["outcome"]["outcome"], "cancelled");
    // The agent never answers the prompt: the grace runs out on the paused clock.
    let outcome = turn.await.unwrap().unwrap();
    assert_eq!(outcome.reason, TurnEndReason::Cancelled);
    let evs = rig.rest().await;
    assert_eq!(
        labels(&evs),
        [
            "agent-prompt-settled:stop",
            "notice",
            "turn-end:cancelled",
            "session-status:dead"
        ]
    );
    assert_eq!(
        dead_detail(&evs).as_deref(),
        Some("the agent was ended after it ignored a request to stop")
    );
    let after = handle.prompt(vec![text_block("more")]).await;
    assert_eq!(
        after.unwrap_err(),
        EngineError::SessionEnded("the agent was ended after it ignored a request to stop".into())
    );
}

#[tokio::test(start_paused = true)]
async fn an_agent_that_never_answers_initialize_fails_the_start_once() {
    let (mut rig, started) = rig(|o| o.start_timeout = Duration::from_secs(120));
    rig.peer.expect("initialize").await;
    let err = started.await.unwrap().err().unwrap();
    assert_eq!(
        err,
        EngineError::StartFailed("no answer to initialize/session/new within 120 s".into())
    );
    let evs = rig.rest().await;
    assert_eq!(
        labels(&evs),
        ["session-status:starting", "error", "session-status:dead"]
    );
    assert_eq!(
        error_messages(&evs),
        ["the agent failed to start: no answer to initialize/session/new within 120 s"]
    );
    assert_eq!(
        dead_detail(&evs).as_deref(),
        Some("Session did not start in time.")
    );
    assert_eq!(rig.peer.rest_until_closed().await, Vec::<Value>::new());
}

#[tokio::test(start_paused = true)]
async fn a_failed_handshake_says_why_once_and_ends_the_session() {
    let (mut rig, started) = rig(|_| {});
    let init = rig.peer.expect("initialize").await;
    rig.peer
        .respond(
            &init,
            json!({"protocolVersion": 1, "agentCapabilities": {}}),
        )
        .await;
    let new = rig.peer.expect("session/new").await;
    rig.peer
        .respond_error(&new, -32000, "Authentication required")
        .await;
    let err = started.await.unwrap().err().unwrap();
    assert_eq!(
        err,
        EngineError::AuthRequired(
            "it answered \"Authentication required\" and offers no way to sign in that ACP Desk can start: sign in as the agent's documentation says, then try again".into()
        )
    );
    let evs = rig.rest().await;
    assert_eq!(
        labels(&evs),
        ["session-status:starting", "error", "session-status:dead"]
    );
    assert_eq!(error_messages(&evs), [err.to_string()]);
    assert_eq!(
        error_kinds(&evs),
        [crate::error_kind::ErrorKind::AuthRequired]
    );
    assert_eq!(dead_detail(&evs), Some(err.to_string()));
}

#[tokio::test(start_paused = true)]
async fn a_prompts_failure_is_classified_by_the_agents_code_and_words() {
    let (mut rig, handle) = ready(|_| {}).await;
    for (code, message, kind) in [
        // claude-code-acp relays Claude Code's result text as an internal error.
        (
            -32603,
            "Internal error: API Error: Rate limit reached",
            crate::error_kind::ErrorKind::RateLimit,
        ),
        (
            -32603,
            "Internal error: Prompt is too long",
            crate::error_kind::ErrorKind::ContextTooLong,
        ),
        (
            -32000,
            "Authentication required",
            crate::error_kind::ErrorKind::AuthRequired,
        ),
        (
            -32603,
            "Internal error: boom",
            crate::error_kind::ErrorKind::Other,
        ),
    ] {
        let turn = tokio::spawn({
            let h = handle.clone();
            async move { h.prompt(vec![text_block("hi")]).await }
        });
        let prompt = rig.peer.expect("session/prompt").await;
        rig.peer.respond_error(&prompt, code, message).await;
        assert_eq!(turn.await.unwrap().unwrap().reason, TurnEndReason::Error);
        let evs = rig.events_until("turn-end:error").await;
        assert_eq!(error_kinds(&evs), [kind], "{message}");
        let code_seen = evs.iter().find_map(|e| match e {
            StreamEvent::Error { error, .. } => error.code,
            _ => None,
        });
        assert_eq!(code_seen, Some(code), "the agent's code is kept");
    }
    handle.close().await;
}

#[tokio::test(start_paused = true)]
async fn an_agent_that_refuses_initialize_and_exits_is_reported_once_with_its_reason() {
    let (mut rig, started) = rig(|_| {});
    let init = rig.peer.expect("initialize").await;
    // The refusal and the exit arrive together: the first cause is the one the user hears.
    rig.peer.respond_error(&init, -32603, "no API key").await;
    rig.peer.hang_up().await;
    let err = started.await.unwrap().err().unwrap();
    assert_eq!(
        err,
        EngineError::StartFailed("initialize failed: no API key (-32603)".into())
    );
    let evs = rig.rest().await;
    assert_eq!(
        labels(&evs),
        ["session-status:starting", "error", "session-status:dead"]
    );
    assert_eq!(error_messages(&evs), [err.to_string()]);
}

#[tokio::test(start_paused = true)]
async fn a_protocol_version_we_do_not_speak_is_refused() {
    let (mut rig, started) = rig(|_| {});
    let init = rig.peer.expect("initialize").await;
    rig.peer
        .respond(
            &init,
            json!({"protocolVersion": 2, "agentCapabilities": {}}),
        )
        .await;
    let err = started.await.unwrap().err().unwrap();
    assert_eq!(err, EngineError::ProtocolVersion(2));
    assert_eq!(
        rig.peer.rest_until_closed().await,
        Vec::<Value>::new(),
        "no session/new is sent"
    );
}

#[tokio::test(start_paused = true)]
async fn an_agent_that_exits_mid_turn_ends_the_turn_and_its_parked_requests() {
    let (mut rig, handle) = ready(|_| {}).await;
    let turn = tokio::spawn({
        let h = handle.clone();
        async move { h.prompt(vec![text_block("go")]).await }
    });
    rig.peer.expect("session/prompt").await;
    rig.peer
        .send(
            json!({"jsonrpc": "2.0", "id": 5, "method": "session/request_permission", "params": {
                "sessionId": "acp-1",
                "toolCall": {"toolCallId": "t9", "title": "Edit a.txt", "kind": "edit"},
                "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]
            }}),
        )
        .await;
    rig.events_until("agent-prompt").await;
    rig.peer.hang_up().await;
    let outcome = turn.await.unwrap().unwrap();
    assert_eq!(outcome.reason, TurnEndReason::Error);
    let evs = rig.rest().await;
    assert_eq!(
        labels(&evs),
        [
            "error",
            "agent-prompt-settled:stop",
            "turn-end:error",
            "session-status:dead"
        ]
    );
    assert_eq!(
        error_messages(&evs),
        ["The agent closed its connection during the turn."]
    );
    assert_eq!(
        error_kinds(&evs),
        [crate::error_kind::ErrorKind::AgentExited]
    );
    assert_eq!(
        handle
            .respond_permission("t9#1", PermissionResolution::selected("ok"))
            .await,
        Err(EngineError::SessionEnded(
            "The agent closed its connection during the turn.".into()
        ))
    );
}

#[tokio::test(start_paused = true)]
async fn the_users_answer_is_checked_then_sent_and_feedback_reaches_the_next_prompt() {
    let (mut rig, handle) = ready(|_| {}).await;
    let turn = tokio::spawn({
        let h = handle.clone();
        async move { h.prompt(vec![text_block("edit")]).await }
    });
    let prompt = rig.peer.expect("session/prompt").await;
    rig.ask(json!("p1"), "Write notes.md", "edit").await;
    assert_eq!(
        handle
            .respond_permission("t1#1", PermissionResolution::selected("maybe"))
            .await,
        Err(EngineError::UnknownOption("t1#1".into(), "maybe".into()))
    );
    let reject = PermissionResolution::Selected {
        option_id: "n".into(),
        feedback: Some("write it to docs/ instead".into()),
    };
    handle.respond_permission("t1#1", reject).await.unwrap();
    let answer = rig.peer.recv().await;
    assert_eq!(answer["id"], "p1");
    assert_eq!(answer["result"]["outcome"]["optionId"], "n");
    assert_eq!(
        handle
            .respond_permission("t1#1", PermissionResolution::selected("y"))
            .await,
        Err(EngineError::UnknownPermission("t1#1".into())),
        "answered once"
    );
    rig.peer
        .respond(&prompt, json!({"stopReason": "end_turn"}))
        .await;
    turn.await.unwrap().unwrap();
    let next = tokio::spawn({
        let h = handle.clone();
        async move { h.prompt(vec![text_block("ok, go on")]).await }
    });
    let p = rig.peer.expect("session/prompt").await;
    assert_eq!(
        p["params"]["prompt"][0]["text"],
        "Feedback on the request I rejected: write it to docs/ instead"
    );
    assert_eq!(p["params"]["prompt"][1]["text"], "ok, go on");
    rig.peer
        .respond(&p, json!({"stopReason": "end_turn"}))
        .await;
    next.await.unwrap().unwrap();
    handle.close().await;
}

#[tokio::test(start_paused = true)]
async fn closing_during_a_turn_stops_it_politely_first_then_ends_the_session() {
    let (mut rig, handle) = ready(|_| {}).await;
    let turn = tokio::spawn({
        let h = handle.clone();
        async move { h.prompt(vec![text_block("long job")]).await }
    });
    rig.peer.expect("session/prompt").await;
    rig.events_until("session-status:prompting").await;
    let closing = tokio::spawn({
        let h = handle.clone();
        async move { h.close().await }
    });
    // The agent hears the stop before its input closes.
    rig.peer.expect("session/cancel").await;
    assert_eq!(rig.peer.rest_until_closed().await, Vec::<Value>::new());
    closing.await.unwrap();
    assert_eq!(
        turn.await.unwrap().unwrap().reason,
        TurnEndReason::Cancelled
    );
    let evs = rig.rest().await;
    assert_eq!(labels(&evs), ["turn-end:cancelled", "session-status:dead"]);
    assert_eq!(dead_detail(&evs).as_deref(), Some("Session closed."));
    // Closing again, and every other command, get an answer, not a hang.
    handle.close().await;
    assert_eq!(
        handle.set_mode("plan").await,
        Err(EngineError::SessionEnded("closed".into()))
    );
}

#[tokio::test(start_paused = true)]
async fn an_agent_that_stops_reading_is_ended_rather_than_waited_for() {
    let (mut rig, handle) = ready(|o| o.limits.outbound_capacity = 2).await;
    // The agent floods us with requests and reads none of our answers: the pipe fills, then
    // the queue to it. (The flood may block once we stop reading it: it runs on its own.)
    let mut out = rig.peer.out.take().unwrap();
    let flood = tokio::spawn(async move {
        for id in 0..100_000 {
            let req = json!({"jsonrpc": "2.0", "id": id, "method": "x/unknown", "params": {}});
            let mut line = serde_json::to_vec(&req).unwrap();
            line.push(b'\n');
            if out.write_all(&line).await.is_err() {
                break;
            }
        }
        out
    });
    let evs = rig.rest().await;
    let errors = error_messages(&evs);
    assert_eq!(
        errors,
        ["The agent stopped reading its input (2 messages were waiting for it); it was ended."]
    );
    assert_eq!(
        error_kinds(&evs),
        [crate::error_kind::ErrorKind::AgentUnresponsive]
    );
    assert_eq!(
        dead_detail(&evs).as_deref(),
        Some("The agent stopped reading its input (2 messages were waiting for it); it was ended.")
    );
    flood.abort();
    assert!(matches!(
        handle.prompt(vec![text_block("hello?")]).await,
        Err(EngineError::SessionEnded(_))
    ));
}

#[tokio::test(start_paused = true)]
async fn closing_sends_session_close_first_when_the_agent_advertised_it() {
    let (mut rig, started) = rig(|_| {});
    rig.peer.handshake_with_close().await;
    let handle = started.await.unwrap().unwrap();
    let closing = tokio::spawn({
        let h = handle.clone();
        async move { h.close().await }
    });
    let close = rig.peer.expect("session/close").await;
    assert_eq!(close["params"]["sessionId"], "acp-1");
    // The session waits for the answer: the agent's input is still open until it comes.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !closing.is_finished(),
        "the close waits for the agent's answer"
    );
    rig.peer.respond(&close, json!({})).await;
    closing.await.unwrap();
    assert_eq!(rig.peer.rest_until_closed().await, Vec::<Value>::new());
    let evs = rig.rest().await;
    assert_eq!(dead_detail(&evs).as_deref(), Some("Session closed."));
}

#[tokio::test(start_paused = true)]
async fn an_agent_that_never_answers_session_close_is_ended_anyway() {
    let (mut rig, started) = rig(|_| {});
    rig.peer.handshake_with_close().await;
    let handle = started.await.unwrap().unwrap();
    let closing = tokio::spawn({
        let h = handle.clone();
        async move { h.close().await }
    });
    rig.peer.expect("session/close").await;
    // No answer: the paused clock runs to CLOSE_WAIT, and the session closes.
    closing.await.unwrap();
    assert_eq!(rig.peer.rest_until_closed().await, Vec::<Value>::new());
}

#[tokio::test(start_paused = true)]
async fn closing_now_or_without_the_capability_sends_no_session_close() {
    // Advertised, but closed "now": the tree is killed, nothing is asked.
    let (mut rig, started) = rig(|_| {});
    rig.peer.handshake_with_close().await;
    let handle = started.await.unwrap().unwrap();
    handle.close_now().await;
    assert_eq!(rig.peer.rest_until_closed().await, Vec::<Value>::new());
    // Not advertised (the plain handshake).
    let (mut rig, handle) = ready(|_| {}).await;
    handle.close().await;
    assert_eq!(rig.peer.rest_until_closed().await, Vec::<Value>::new());
}

/// `initialize` answered with load and resume advertised.
async fn init_with_load_and_resume(peer: &mut Peer) {
    let init = peer.expect("initialize").await;
    peer.respond(
        &init,
        json!({"protocolVersion": 1, "agentCapabilities": {
            "loadSession": true, "sessionCapabilities": {"resume": {}}
        }}),
    )
    .await;
}

fn continued(evs: &[StreamEvent]) -> Option<(ContinuationOutcome, Option<String>)> {
    evs.iter().find_map(|e| match e {
        StreamEvent::SessionContinued {
            outcome, detail, ..
        } => Some((*outcome, detail.clone())),
        _ => None,
    })
}

#[tokio::test(start_paused = true)]
async fn a_garbled_resume_falls_back_to_load_whose_replay_is_not_emitted() {
    let (mut rig, started) = rig(|o| {
        o.opening = Opening::Continue {
            session_id: "s-stored".into(),
            acp_session_id: Some("acp-1".into()),
            via: ContinueVia::Auto,
        };
    });
    init_with_load_and_resume(&mut rig.peer).await;
    let resume = rig.peer.expect("session/resume").await;
    assert_eq!(resume["params"]["sessionId"], "acp-1");
    // Not a ResumeSessionResponse.
    rig.peer.respond(&resume, json!(42)).await;
    let load = rig.peer.expect("session/load").await;
    assert_eq!(load["params"]["sessionId"], "acp-1");
    rig.peer
        .update(json!({"sessionUpdate": "user_message_chunk",
                       "content": {"type": "text", "text": "the old prompt"}}))
        .await;
    rig.peer
        .update(json!({"sessionUpdate": "agent_message_chunk",
                       "content": {"type": "text", "text": "the old answer"}}))
        .await;
    rig.peer.respond(&load, json!({})).await;
    let handle = started.await.unwrap().unwrap();
    assert_eq!(handle.id(), "s-stored", "the stored id, not a new one");
    let evs = rig.events_until("session-status:ready").await;
    assert!(
        evs.iter().all(|e| !matches!(
            e,
            StreamEvent::TextDelta { .. } | StreamEvent::UserMessageDelta { .. }
        )),
        "the replay is not emitted: {:?}",
        labels(&evs)
    );
    let (outcome, detail) = continued(&evs).unwrap();
    assert_eq!(outcome, ContinuationOutcome::Loaded);
    assert!(detail.unwrap().contains("session/resume failed"));
    assert!(evs.iter().any(|e| matches!(e, StreamEvent::Notice { .. })));
    // Later updates are the session's own again.
    let turn = spawn_prompt_on(&handle, "next");
    let prompt = rig.peer.expect("session/prompt").await;
    assert_eq!(prompt["params"]["sessionId"], "acp-1");
    rig.peer
        .update(json!({"sessionUpdate": "agent_message_chunk",
                       "content": {"type": "text", "text": "new"}}))
        .await;
    rig.peer
        .respond(&prompt, json!({"stopReason": "end_turn"}))
        .await;
    turn.await.unwrap().unwrap();
    let evs = rig.events_until("turn-end:completed").await;
    assert!(labels(&evs).contains(&"text-delta:new".to_string()));
}

#[tokio::test(start_paused = true)]
async fn a_stored_session_the_agent_never_opened_starts_as_a_first_one() {
    // Its first start failed (the agent wanted a sign-in): nothing at the agent to continue,
    // so no resume or load is tried and no "cannot continue" warning is given.
    let (mut rig, started) = rig(|o| {
        o.opening = Opening::Continue {
            session_id: "s-stored".into(),
            acp_session_id: None,
            via: ContinueVia::Auto,
        };
    });
    init_with_load_and_resume(&mut rig.peer).await;
    let new = rig.peer.expect("session/new").await;
    rig.peer.respond(&new, json!({"sessionId": "acp-1"})).await;
    let handle = started.await.unwrap().unwrap();
    assert_eq!(handle.id(), "s-stored", "the stored id, not a new one");
    let evs = rig.events_until("session-status:ready").await;
    assert!(continued(&evs).is_none(), "{:?}", labels(&evs));
    assert!(
        !evs.iter().any(|e| matches!(e, StreamEvent::Notice { .. })),
        "{:?}",
        labels(&evs)
    );
}

#[tokio::test(start_paused = true)]
async fn a_refused_load_and_resume_end_in_a_new_session_said_plainly() {
    let (mut rig, started) = rig(|o| {
        o.opening = Opening::Continue {
            session_id: "s-stored".into(),
            acp_session_id: Some("gone".into()),
            via: ContinueVia::Load,
        };
    });
    init_with_load_and_resume(&mut rig.peer).await;
    let load = rig.peer.expect("session/load").await;
    rig.peer
        .respond_error(&load, -32002, "Resource not found")
        .await;
    let resume = rig.peer.expect("session/resume").await;
    rig.peer
        .respond_error(&resume, -32002, "Resource not found")
        .await;
    let new = rig.peer.expect("session/new").await;
    rig.peer.respond(&new, json!({"sessionId": "acp-2"})).await;
    let handle = started.await.unwrap().unwrap();
    assert_eq!(handle.id(), "s-stored");
    let evs = rig.events_until("session-status:ready").await;
    let (outcome, detail) = continued(&evs).unwrap();
    assert_eq!(outcome, ContinuationOutcome::New);
    let detail = detail.unwrap();
    assert!(
        detail.contains("session/load failed: Resource not found (-32002)")
            && detail.contains("session/resume failed"),
        "{detail}"
    );
    assert!(evs.iter().any(|e| matches!(
        e,
        StreamEvent::Notice { title, .. } if title.contains("cannot continue the old conversation")
    )));
    assert!(evs.iter().any(|e| matches!(
        e,
        StreamEvent::SessionStatus { status: SessionState::Ready, agent: Some(a), .. }
            if a.acp_session_id.as_deref() == Some("acp-2")
    )));
}

#[tokio::test(start_paused = true)]
async fn an_imported_session_shows_its_replay() {
    let (mut rig, started) = rig(|o| {
        o.opening = Opening::Import {
            acp_session_id: "acp-1".into(),
        };
    });
    init_with_load_and_resume(&mut rig.peer).await;
    let load = rig.peer.expect("session/load").await;
    rig.peer
        .update(json!({"sessionUpdate": "user_message_chunk",
                       "content": {"type": "text", "text": "the old prompt"}}))
        .await;
    rig.peer.respond(&load, json!({})).await;
    let handle = started.await.unwrap().unwrap();
    assert_ne!(handle.id(), "acp-1");
    let evs = rig.events_until("session-status:ready").await;
    assert!(evs.iter().any(|e| matches!(
        e,
        StreamEvent::UserMessageDelta { text, .. } if text == "the old prompt"
    )));
    assert_eq!(continued(&evs).unwrap().0, ContinuationOutcome::Loaded);
}

fn spawn_prompt_on(
    h: &SessionHandle,
    text: &str,
) -> tokio::task::JoinHandle<Result<TurnOutcome, EngineError>> {
    let h = h.clone();
    let block = text_block(text);
    tokio::spawn(async move { h.prompt(vec![block]).await })
}

#[tokio::test(start_paused = true)]
async fn the_start_trace_keeps_the_answer_as_sent_and_the_non_json_lines() {
    let (mut rig, started) = rig(|o| o.opening = Opening::ListOnly);
    let init = rig.peer.expect("initialize").await;
    let out = rig.peer.out.as_mut().unwrap();
    out.write_all(b"Welcome!\nsecond banner line\n")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let answer = json!({
        "protocolVersion": 1,
        "agentCapabilities": {"loadSession": true, "_meta": {"x": [1, 2]}, "notInAcp": 7},
        "agentInfo": {"name": "scripted", "version": "9.9.9"},
    });
    rig.peer.respond(&init, answer.clone()).await;
    let handle = started.await.unwrap().unwrap();
    let trace = handle.start_trace().clone();
    // The answer as sent, unknown fields included (the typed answer would drop them).
    assert_eq!(trace.initialize_result, Some(answer));
    assert_eq!(trace.protocol_version, Some(1));
    assert_eq!(trace.not_json_lines, 2);
    assert_eq!(trace.first_not_json.as_deref(), Some("Welcome!"));
    // On the paused clock: exactly the time the peer took to answer.
    let took = trace.initialize.unwrap();
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_millis(1600),
        "{took:?}"
    );
    assert!(trace.exit.is_none() && !trace.timed_out && trace.invalid_answer.is_none());
    // Over a stream there is no process: no spawn time, no pid.
    assert_eq!((trace.spawn, trace.pid), (None, None));
    handle.close().await;
}

/// MCP servers in the handshake (issue 17).
mod mcp;
