//! What the agent does besides its turns, as events carry it: its background tasks
//! (`background-task`, from the AIR `asyncTasks` extension) and its questions to the user
//! (`elicitation`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BackgroundTaskPhase {
    Started,
    Updated,
    Settled,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BackgroundTaskInfo {
    pub task_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<BackgroundTaskStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// A short name for the task, when the agent gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The agent says the task can be stopped (`SessionHandle::stop_background_task`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub can_stop: Option<bool>,
    /// Who settled it: absent until it is settled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled_by: Option<TaskSettledBy>,
}

impl BackgroundTaskInfo {
    pub fn new(task_id: impl Into<String>) -> Self {
        Self {
            task_id: task_id.into(),
            task_kind: None,
            description: None,
            output_file: None,
            status: None,
            summary: None,
            tool_call_id: None,
            name: None,
            can_stop: None,
            settled_by: None,
        }
    }

    /// Still running (or paused): not settled.
    pub fn is_open(&self) -> bool {
        self.settled_by.is_none()
            && !matches!(
                self.status,
                Some(
                    BackgroundTaskStatus::Completed
                        | BackgroundTaskStatus::Failed
                        | BackgroundTaskStatus::Stopped
                )
            )
    }
}

/// Who settled a background task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TaskSettledBy {
    /// The agent's own update said it ended.
    Agent,
    /// The session ended while it ran; ACP Desk marked it stopped.
    SessionEnd,
}

/// An `elicitation` event: what the agent asks, as front ends draw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationEvent {
    pub session_id: String,
    /// Ours (`e1`, `e2`, ...): what `SessionHandle::answer_elicitation` takes.
    pub request_id: String,
    pub mode: ElicitationModeKind,
    pub message: String,
    /// The tool call the agent tied the question to, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Form mode: the fields, in the order the agent wrote them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<crate::elicitation::ElicitationField>>,
    /// URL mode: the page the agent wants opened, and its host (shown before it is opened).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ElicitationModeKind {
    Form,
    Url,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BackgroundTaskStatus {
    Running,
    Paused,
    Completed,
    Failed,
    Stopped,
}
