//! Background tasks: the agent's work that outlives a tool call (a backgrounded shell command, a
//! monitor), published over JetBrains' AIR `asyncTasks` extension, which we ask for in
//! `initialize` ([`air_meta`]). claude-agent-acp sends them as `session/update`s that ACP's
//! schema does not type: `async_task_spawned`, `async_task_progress`,
//! `async_task_state_update`. Each becomes a `background-task` event carrying the task as
//! merged so far, in the seed's names (`asyncTaskId` → `taskId`, `taskType` → `taskKind`,
//! `state` → `status`, `outputFilePath` (0.101.0's spelling; `outputPath` in the issue) →
//! `outputFile`). A progress update carries only what changed. claude-agent-acp also reports
//! the model's autonomous cycles as tasks of kind `turn` ("Claude is working").
//!
//! A task the agent says can be stopped is stopped with `_session/async_task/stop`. When the
//! session ends, tasks still running are settled (`stopped`, `settledBy: session-end`): the
//! agent's process tree, and so the task, ends with the session.

use std::collections::HashMap;

use agent_client_protocol_schema::v1 as acp;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::EngineError;
use super::owner::{Owner, Pending};
use crate::events::{
    BackgroundTaskInfo, BackgroundTaskPhase, BackgroundTaskStatus, StreamEvent, TaskSettledBy,
};

/// Tasks kept per session. Past this, the oldest settled one is forgotten first (a session that
/// starts thousands of tasks must not grow our memory); running ones are kept.
pub(super) const MAX_TASKS: usize = 256;

/// The AIR extension's method to stop a task.
pub const STOP_METHOD: &str = "_session/async_task/stop";

/// The `initialize` `clientCapabilities._meta` key and value that turn the agent's task
/// updates on: `_meta.jetbrains.air = {version: 1, capabilities: ["asyncTasks"]}`.
pub fn air_meta() -> (String, Value) {
    (
        "jetbrains".into(),
        json!({"air": {"version": 1, "capabilities": ["asyncTasks"]}}),
    )
}

/// The session's background tasks, in the order they were first heard of.
#[derive(Default)]
pub(super) struct Tasks {
    order: Vec<String>,
    by_id: HashMap<String, BackgroundTaskInfo>,
}

impl Tasks {
    fn insert(&mut self, task: BackgroundTaskInfo) {
        if !self.by_id.contains_key(&task.task_id) {
            if self.order.len() >= MAX_TASKS {
                let oldest_settled = self
                    .order
                    .iter()
                    .position(|id| self.by_id.get(id).is_none_or(|t| !t.is_open()));
                // Every one still runs: the new one is not kept (a running task forgotten
                // would never be settled at the session's end).
                let Some(at) = oldest_settled else {
                    tracing::warn!(
                        "more than {MAX_TASKS} background tasks run at once; task {} not tracked",
                        task.task_id
                    );
                    return;
                };
                let gone = self.order.remove(at);
                self.by_id.remove(&gone);
            }
            self.order.push(task.task_id.clone());
        }
        self.by_id.insert(task.task_id.clone(), task);
    }

    pub(super) fn get(&self, task_id: &str) -> Option<&BackgroundTaskInfo> {
        self.by_id.get(task_id)
    }

    fn open_ids(&self) -> Vec<String> {
        self.order
            .iter()
            .filter(|id| self.by_id.get(*id).is_some_and(BackgroundTaskInfo::is_open))
            .cloned()
            .collect()
    }
}

/// Which of the AIR updates `kind` is, if it is one.
pub(super) fn is_task_update(kind: &str) -> bool {
    matches!(
        kind,
        "async_task_spawned" | "async_task_progress" | "async_task_state_update"
    )
}

fn text(v: &Value, key: &str) -> Option<String> {
    match v.get(key)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The wire's state, in the seed's words; `None` for a state we do not know (kept as it was).
fn status_of(state: &str) -> Option<BackgroundTaskStatus> {
    Some(match state {
        "running" | "pending" | "started" => BackgroundTaskStatus::Running,
        "paused" => BackgroundTaskStatus::Paused,
        "completed" | "succeeded" | "done" => BackgroundTaskStatus::Completed,
        "failed" | "error" => BackgroundTaskStatus::Failed,
        "stopped" | "killed" | "cancelled" | "canceled" => BackgroundTaskStatus::Stopped,
        _ => return None,
    })
}

/// Lays what an update says over the task as known.
fn merge(task: &mut BackgroundTaskInfo, u: &Value) {
    let set = |slot: &mut Option<String>, key: &str| {
        if let Some(v) = text(u, key) {
            *slot = Some(v);
        }
    };
    set(&mut task.task_kind, "taskType");
    set(&mut task.description, "description");
    set(&mut task.output_file, "outputPath");
    set(&mut task.output_file, "outputFilePath");
    set(&mut task.summary, "summary");
    set(&mut task.tool_call_id, "toolCallId");
    set(&mut task.name, "name");
    if let Some(stop) = u.get("canStop").and_then(Value::as_bool) {
        task.can_stop = Some(stop);
    }
    if let Some(status) = u.get("state").and_then(Value::as_str).and_then(status_of) {
        task.status = Some(status);
    }
}

impl Owner {
    /// One of the AIR task updates (`kind`, see [`is_task_update`]): merged, and emitted as a
    /// `background-task`. An update without a task id is passed on as `unknown-update`.
    pub(super) fn on_task_update(&mut self, kind: &str, update: Value) {
        let Some(task_id) = text(&update, "asyncTaskId") else {
            tracing::warn!("{kind} without asyncTaskId passed through");
            let ev = StreamEvent::UnknownUpdate {
                session_id: self.id.clone(),
                update,
            };
            return self.emit(ev);
        };
        let known = self.tasks.get(&task_id).cloned();
        let was_open = known.as_ref().is_none_or(BackgroundTaskInfo::is_open);
        let mut task = known
            .clone()
            .unwrap_or_else(|| BackgroundTaskInfo::new(&task_id));
        merge(&mut task, &update);
        if kind == "async_task_spawned" && task.status.is_none() {
            task.status = Some(BackgroundTaskStatus::Running);
        }
        let settled_now = was_open && !task.is_open();
        if settled_now {
            task.settled_by = Some(TaskSettledBy::Agent);
        }
        // The end of a cycle the agent ran on its own: what it asked then is moot.
        let cycle_ended = settled_now && task.task_kind.as_deref() == Some("turn");
        let phase = if settled_now {
            BackgroundTaskPhase::Settled
        } else if known.is_none() {
            BackgroundTaskPhase::Started
        } else {
            BackgroundTaskPhase::Updated
        };
        self.tasks.insert(task.clone());
        self.touch_turn();
        self.emit(StreamEvent::BackgroundTask {
            session_id: self.id.clone(),
            phase,
            task,
        });
        if cycle_ended {
            self.settle_elicitations_outside_turns(crate::events::SettledBy::Agent);
        }
    }

    /// A front end's Stop on a task: refused unless the agent said it can be stopped and it
    /// still runs; else `_session/async_task/stop`, answered when the agent answers.
    pub(super) fn stop_task(
        &mut self,
        task_id: String,
        reply: oneshot::Sender<Result<(), EngineError>>,
    ) {
        let refuse = |reason: &str| EngineError::TaskNotStoppable {
            task_id: task_id.clone(),
            reason: reason.to_owned(),
        };
        let why_not = match self.tasks.get(&task_id) {
            None => Some(refuse("the agent never reported such a task")),
            Some(t) if !t.is_open() => Some(refuse("it has already ended")),
            Some(t) if t.can_stop != Some(true) => {
                Some(refuse("the agent does not offer to stop it"))
            }
            Some(_) => None,
        };
        if let Some(e) = why_not {
            let _ = reply.send(Err(e));
            return;
        }
        let Some(session) = self.acp_session.clone() else {
            let _ = reply.send(Err(EngineError::SessionEnded("not started".into())));
            return;
        };
        let params = json!({"sessionId": session.0, "asyncTaskId": task_id});
        if self
            .request(
                STOP_METHOD,
                &params,
                Pending::StopTask {
                    task_id: task_id.clone(),
                    reply,
                },
            )
            .is_none()
        {
            tracing::debug!("could not ask the agent to stop task {task_id}");
        }
    }

    /// The agent's answer to a stop. The task's own state update (stopped) is what settles it.
    pub(super) fn on_task_stop_answered(
        &mut self,
        task_id: String,
        reply: oneshot::Sender<Result<(), EngineError>>,
        result: Result<Box<RawValue>, acp::Error>,
    ) {
        // `{stopped: false}` is the agent's no (an ended task, a monitor, an unknown id).
        let r = match result {
            Ok(raw) => {
                let stopped = serde_json::from_str::<Value>(raw.get())
                    .ok()
                    .and_then(|v| v.get("stopped").and_then(Value::as_bool));
                match stopped {
                    Some(false) => Err(EngineError::TaskNotStoppable {
                        task_id,
                        reason: "the agent could not stop it (it may have just ended)".into(),
                    }),
                    _ => Ok(()),
                }
            }
            Err(e) => Err(EngineError::AgentRefused(e.message)),
        };
        let _ = reply.send(r);
    }

    /// The session ends: tasks still running end with the agent's process tree.
    pub(super) fn settle_tasks_at_end(&mut self) {
        for id in self.tasks.open_ids() {
            let Some(mut task) = self.tasks.get(&id).cloned() else {
                continue;
            };
            task.status = Some(BackgroundTaskStatus::Stopped);
            task.settled_by = Some(TaskSettledBy::SessionEnd);
            self.tasks.insert(task.clone());
            self.emit(StreamEvent::BackgroundTask {
                session_id: self.id.clone(),
                phase: BackgroundTaskPhase::Settled,
                task,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_settled_task_goes_first_when_the_list_is_full() {
        let mut t = Tasks::default();
        for i in 0..MAX_TASKS {
            let mut task = BackgroundTaskInfo::new(format!("t{i}"));
            task.status = Some(if i == 5 {
                BackgroundTaskStatus::Completed
            } else {
                BackgroundTaskStatus::Running
            });
            t.insert(task);
        }
        t.insert(BackgroundTaskInfo::new("new"));
        assert!(t.get("t5").is_none(), "the settled one went");
        assert!(t.get("t0").is_some() && t.get("new").is_some());
        assert_eq!(t.order.len(), MAX_TASKS);
    }

    #[test]
    fn a_full_list_of_running_tasks_keeps_them_all_and_not_the_new_one() {
        let mut t = Tasks::default();
        for i in 0..MAX_TASKS {
            let mut task = BackgroundTaskInfo::new(format!("t{i}"));
            task.status = Some(BackgroundTaskStatus::Running);
            t.insert(task);
        }
        t.insert(BackgroundTaskInfo::new("new"));
        assert!(t.get("new").is_none());
        assert_eq!(
            t.open_ids().len(),
            MAX_TASKS,
            "every running one is still settled at the end"
        );
    }

    #[test]
    fn updates_merge_in_the_seeds_names() {
        let mut task = BackgroundTaskInfo::new("a");
        merge(
            &mut task,
            &json!({"taskType": "shell", "description": "sleep", "outputFilePath": "/tmp/o", "canStop": true, "state": "running"}),
        );
        merge(&mut task, &json!({"state": "completed", "summary": "done"}));
        assert_eq!(task.task_kind.as_deref(), Some("shell"));
        assert_eq!(task.output_file.as_deref(), Some("/tmp/o"));
        assert_eq!(task.status, Some(BackgroundTaskStatus::Completed));
        assert_eq!(task.summary.as_deref(), Some("done"));
        assert_eq!(task.can_stop, Some(true));
        assert!(!task.is_open());
    }
}
