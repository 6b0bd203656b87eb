//! Asking the client's user (`elicitation/create`) and background tasks (JetBrains' AIR
//! `asyncTasks` extension, as claude-agent-acp speaks it): the steps `elicit` and `later`, and
//! the `_session/async_task/stop` request.
//!
//! A scenario announces a task with a raw `async_task_spawned` update ([`note_task`] records
//! it); a `later` step writes its progress and end after the turn, on its own thread, unless
//! the client stopped it first. Both are only sent when the client asked for them in
//! `initialize` (`elicitation.form` / `elicitation.url`, `_meta.jetbrains.air`), as a real agent
//! does; otherwise the turn says what it would have done.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use agent_client_protocol_schema::v1::{SessionId, StopReason};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::log;
use crate::out::RpcError;
use crate::scenario::Step;
use crate::turn::{Flow, Shared, Turn, lock};

pub const STOP_METHOD: &str = "_session/async_task/stop";

/// What the client said it supports in `initialize`.
#[derive(Default)]
pub struct ClientAsks {
    pub form: AtomicBool,
    pub url: AtomicBool,
    pub tasks: AtomicBool,
}

impl ClientAsks {
    pub fn note(&self, client_capabilities: Option<&Value>) {
        let caps = client_capabilities.unwrap_or(&Value::Null);
        let el = caps.get("elicitation");
        self.form.store(
            el.and_then(|e| e.get("form")).is_some_and(Value::is_object),
            Ordering::Relaxed,
        );
        self.url.store(
            el.and_then(|e| e.get("url")).is_some_and(Value::is_object),
            Ordering::Relaxed,
        );
        let air = caps.pointer("/_meta/jetbrains/air");
        let tasks = air.is_some_and(|a| {
            a.get("version").and_then(Value::as_u64).unwrap_or(0) >= 1
                && a.get("capabilities")
                    .and_then(Value::as_array)
                    .is_some_and(|c| c.iter().any(|v| v == "asyncTasks"))
        });
        self.tasks.store(tasks, Ordering::Relaxed);
    }
}

/// A task announced in this process.
pub struct Task {
    session_id: String,
    can_stop: bool,
    /// Settled (by its own end or a stop): a `later` step then writes nothing more about it.
    done: Arc<AtomicBool>,
}

/// Records an `async_task_spawned` or a terminal `async_task_state_update` a step is about to
/// write; `false`: do not write it (a task update for a client that did not ask for them).
pub fn note_task(shared: &Shared, session_id: &SessionId, update: &Value) -> bool {
    let kind = update.get("sessionUpdate").and_then(Value::as_str);
    let Some(id) = update.get("asyncTaskId").and_then(Value::as_str) else {
        return true;
    };
    if !shared.asks.tasks.load(Ordering::Relaxed) {
        log!("task update for {id} not sent: the client did not ask for AIR async tasks");
        return false;
    }
    let mut tasks = lock(&shared.tasks);
    match kind {
        Some("async_task_spawned") => {
            tasks.insert(
                id.to_owned(),
                Task {
                    session_id: session_id.0.to_string(),
                    can_stop: update
                        .get("canStop")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    done: Arc::new(AtomicBool::new(false)),
                },
            );
        }
        Some("async_task_state_update") => {
            let terminal = matches!(
                update.get("state").and_then(Value::as_str),
                Some("completed" | "failed" | "stopped")
            );
            if terminal && let Some(t) = tasks.get(id) {
                t.done.store(true, Ordering::Relaxed);
            }
        }
        _ => {}
    }
    true
}

/// `_session/async_task/stop {sessionId, asyncTaskId}`: `{stopped: true}` after the task's
/// `stopped` update, `{stopped: false}` for a task that is unknown, ended, or not stoppable (as
/// claude-agent-acp answers).
pub fn stop_task(shared: &Shared, params: &Value) -> Result<Value, RpcError> {
    let text = |k: &str| {
        params
            .get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let (Some(session), Some(task_id)) = (text("sessionId"), text("asyncTaskId")) else {
        return Err(RpcError::invalid_params(
            "async task stop params require a non-empty sessionId and asyncTaskId",
        ));
    };
    let stoppable = {
        let tasks = lock(&shared.tasks);
        tasks.get(&task_id).is_some_and(|t| {
            t.session_id == session && t.can_stop && !t.done.swap(true, Ordering::Relaxed)
        })
    };
    if !stoppable {
        log!("{STOP_METHOD} {task_id}: not stoppable");
        return Ok(json!({"stopped": false}));
    }
    log!("{STOP_METHOD} {task_id}: stopped");
    let update = json!({"sessionUpdate": "async_task_state_update", "asyncTaskId": task_id, "state": "stopped"});
    let sid = SessionId::new(session);
    shared
        .out
        .raw_update(&sid, &update)
        .map_err(|e| RpcError::new(-32603, format!("Internal error: {e}")))?;
    Ok(json!({"stopped": true}))
}

/// `{"elicit": {"request": {...}, "on_accept": [...], "on_decline": [...], "on_cancel": [...],
/// "complete_after_ms": n}}`. `request` is `elicitation/create`'s params without `sessionId`
/// (added). URL mode: `elicitation/complete` follows an accept after `complete_after_ms`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElicitStep {
    pub request: serde_json::Map<String, Value>,
    #[serde(default)]
    pub on_accept: Vec<Step>,
    #[serde(default)]
    pub on_decline: Vec<Step>,
    #[serde(default)]
    pub on_cancel: Vec<Step>,
    pub complete_after_ms: Option<u64>,
}

/// `{"later": {"ms": 1500, "gap_ms": 200, "updates": [...]}}`: raw `session/update`s written
/// `ms` after the step, `gap_ms` apart, while the turn goes on (or has ended). An update about
/// a task that was settled meanwhile (stopped) is skipped.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaterStep {
    pub ms: u64,
    #[serde(default)]
    pub gap_ms: u64,
    pub updates: Vec<Value>,
}

impl Turn {
    pub(crate) fn elicit(&mut self, e: &ElicitStep) -> anyhow::Result<Flow> {
        let url = e.request.get("mode").and_then(Value::as_str) == Some("url");
        let asks = &self.shared.asks;
        let supported = if url {
            asks.url.load(Ordering::Relaxed)
        } else {
            asks.form.load(Ordering::Relaxed)
        };
        if !supported {
            self.report(format!(
                "I would ask you a question now, but this client did not advertise elicitation {} mode in initialize.",
                if url { "url" } else { "form" }
            ))?;
            return Ok(Flow::Continue);
        }
        let mut params = e.request.clone();
        params.insert("sessionId".into(), json!(self.session_id().0));
        let (id, answer) = self.request("elicitation/create", &params)?;
        let Some(message) = answer else {
            log!("the client did not answer elicitation {id} after session/cancel");
            return Ok(Flow::Stop(StopReason::Cancelled));
        };
        if let Some(error) = message.get("error") {
            self.report(format!("The client refused my question: {error}"))?;
            return self.play(&e.on_decline);
        }
        let result = message.get("result").cloned().unwrap_or(Value::Null);
        match result.get("action").and_then(Value::as_str) {
            Some("accept") => {
                let content = result.get("content").cloned().unwrap_or(Value::Null);
                let shown: BTreeMap<String, Value> = content
                    .as_object()
                    .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                    .unwrap_or_default();
                if url {
                    self.report("You agreed to open the page.".into())?;
                } else {
                    self.report(format!(
                        "Your answer reached me: {}",
                        serde_json::to_string(&shown).unwrap_or_default()
                    ))?;
                }
                if let (true, Some(ms)) = (url, e.complete_after_ms) {
                    if self.wait(Duration::from_millis(ms)) {
                        return Ok(Flow::Stop(StopReason::Cancelled));
                    }
                    let eid = e
                        .request
                        .get("elicitationId")
                        .cloned()
                        .unwrap_or(Value::Null);
                    self.out()
                        .notify("elicitation/complete", json!({"elicitationId": eid}))?;
                    self.report("The page told me you are done there.".into())?;
                }
                self.play(&e.on_accept)
            }
            Some("decline") => {
                self.report("You declined to answer.".into())?;
                self.play(&e.on_decline)
            }
            _ => {
                // The branch still plays after a session/cancel: it is the scripted reaction.
                let was_cancelled = std::mem::take(&mut self.cancelled);
                self.report("The question was cancelled.".into())?;
                let flow = self.play(&e.on_cancel)?;
                self.cancelled |= was_cancelled;
                Ok(match flow {
                    Flow::Continue => Flow::Stop(StopReason::Cancelled),
                    stop => stop,
                })
            }
        }
    }

    pub(crate) fn later(&mut self, l: &LaterStep) {
        let shared = Arc::clone(&self.shared);
        let session_id = self.session_id().clone();
        let (ms, gap) = (l.ms, l.gap_ms);
        let updates = l.updates.clone();
        let spawned = std::thread::Builder::new()
            .name("later".into())
            .spawn(move || {
                std::thread::sleep(Duration::from_millis(ms));
                for (i, u) in updates.iter().enumerate() {
                    if i > 0 && gap > 0 {
                        std::thread::sleep(Duration::from_millis(gap));
                    }
                    let settled = u
                        .get("asyncTaskId")
                        .and_then(Value::as_str)
                        .and_then(|id| {
                            lock(&shared.tasks)
                                .get(id)
                                .map(|t| t.done.load(Ordering::Relaxed))
                        })
                        .unwrap_or(false);
                    if settled {
                        continue;
                    }
                    if !note_task(&shared, &session_id, u) {
                        continue;
                    }
                    if let Err(e) = shared.out.raw_update(&session_id, u) {
                        log!("later update not written ({e}); the client is gone");
                        return;
                    }
                }
            });
        if let Err(e) = spawned {
            log!("later step not started: {e}");
        }
    }
}
