//! Reconnect: a session whose agent died (or never started) gets a new agent process that
//! continues it, in the same place: the registry's id, the hub (so every view keeps the thread
//! it shows and gets the new events after it), and ACP Desk's session id (so the history
//! appends to the same stored session).
//!
//! The new agent is started as the old one was (the same spec and options) with
//! `Opening::Continue`: `session/resume` when it advertises it, else `session/load` (whose
//! replay is neither shown nor stored: the thread already holds it), else a new session at the
//! agent, which the engine says plainly (`session-continued` with outcome `new`, and a notice).
//! An agent that never had a session (its start failed) simply starts again under the same id.

use acp_desk_core::{ContinueVia, Opening, StreamEvent};

use crate::error::AppError;
use crate::pump::lock_hub;
use crate::registry::{Registry, SessionInfo, lock};

/// The ids a dead session continues under, read from its thread: ACP Desk's session id (the
/// engine's, from its `session-status`; `None` when the engine never ran, only the app spoke)
/// and the agent's own id for it, the latest it said.
pub(crate) fn continued_ids(
    registry_id: &str,
    thread: &[StreamEvent],
) -> (Option<String>, Option<String>) {
    let mut ours = None;
    let mut agents = None;
    for ev in thread {
        match ev {
            StreamEvent::SessionStatus {
                session_id, agent, ..
            } if session_id != registry_id => {
                ours = Some(session_id.clone());
                if let Some(a) = agent.as_ref().and_then(|a| a.acp_session_id.clone()) {
                    agents = Some(a);
                }
            }
            StreamEvent::SessionContinued {
                acp_session_id: Some(a),
                ..
            } => agents = Some(a.clone()),
            _ => {}
        }
    }
    (ours, agents)
}

impl Registry {
    /// Starts a new agent process for the session `id`, whose agent has ended, continuing it
    /// (see the module docs). Returns at once, like [`Registry::open`]: the new agent's
    /// progress arrives as events (`session-status starting`, `session-continued`, `ready`, or
    /// why it failed). Observers hear the old engine's `Closed`, then the new one's `Opened`,
    /// under the same registry id.
    ///
    /// Refused ([`AppError::InvalidInput`]) while the session's agent still runs or starts, and
    /// for a session opened without views (its thread is not kept here).
    ///
    /// A prompt kept for a sign-in (the one that hit a login, or one held while the start
    /// wanted a sign-in) is sent once the new agent is ready, as after a sign-in: the user may
    /// have signed in outside the app.
    pub async fn reconnect(&self, id: &str) -> Result<SessionInfo, AppError> {
        let from_thread = self.prompt_hit_by_login_in(id);
        let info = self.reconnect_with(id, None, None).await?;
        self.resend_kept_when_ready(id, from_thread)?;
        Ok(info)
    }

    /// [`Registry::reconnect`]; `project`: the project's MCP servers the new agent gets instead
    /// of the first start's (the user agreed to a project config since,
    /// `Registry::restart_with_project_mcp`); `authenticate`: the sign-in method the new agent
    /// is asked to `authenticate` with, this start only (`Registry::restart_signed_in`).
    pub(crate) async fn reconnect_with(
        &self,
        id: &str,
        project: Option<Vec<acp_desk_core::mcp::McpServerConfig>>,
        authenticate: Option<String>,
    ) -> Result<SessionInfo, AppError> {
        let old = self.get(id)?;
        if !*old.ended.borrow() {
            return Err(AppError::InvalidInput(format!(
                "the session `{id}`'s agent is still running: only a session whose agent ended can be reconnected"
            )));
        }
        let hub = old.hub.clone().ok_or_else(|| {
            AppError::Internal(format!(
                "the session `{id}` was opened without views: it cannot be reconnected"
            ))
        })?;
        let thread = lock_hub(&hub).snapshot();
        let (ours, acp_session_id) = continued_ids(id, &thread);
        let (spec, mut options) = old.relaunch.clone();
        options.authenticate = authenticate;
        options.opening = match ours {
            Some(session_id) => Opening::Continue {
                session_id,
                acp_session_id,
                via: ContinueVia::Auto,
            },
            // The program never ran: nothing to continue; a start like the first.
            None => Opening::New,
        };
        // The old pump tells its observers the old engine is gone (the history finishes its
        // part) before the new one opens under the same registry id.
        if let Some(removed) = lock(&old.removed).take() {
            let _ = removed.send(());
        }
        let pump = lock(&old.pump).take();
        if let Some(pump) = pump
            && let Err(e) = pump.await
        {
            tracing::warn!(session = %id, "the old pump failed: {e}");
        }
        // Closed meanwhile: it stays closed.
        if !lock(&self.open).contains_key(id) {
            return Err(AppError::SessionUnknown(format!(
                "the session `{id}` was closed while reconnecting"
            )));
        }
        let info = old.info.clone();
        let mut mcp = old.mcp.clone();
        if let Some(project) = project {
            mcp.project = project;
        }
        self.launch(info.clone(), Some(hub), spec, options, mcp, None);
        tracing::info!(session = %id, agent = %info.agent, "session reconnecting");
        Ok(info)
    }
}

#[cfg(test)]
mod tests {
    use acp_desk_core::events::{AgentIdentity, SessionState};

    use super::*;

    fn status(id: &str, acp: Option<&str>) -> StreamEvent {
        StreamEvent::SessionStatus {
            session_id: id.into(),
            status: SessionState::Dead,
            detail: None,
            agent: Some(AgentIdentity {
                launch_name: "demo".into(),
                name: None,
                title: None,
                version: None,
                acp_session_id: acp.map(Into::into),
                prompt_capabilities: None,
                session_methods: None,
                auth_methods: None,
            }),
        }
    }

    #[test]
    fn the_ids_come_from_the_engines_status_never_the_apps() {
        assert_eq!(continued_ids("s1", &[]), (None, None));
        // Only the app spoke (the program never ran): its events carry the registry's id.
        assert_eq!(continued_ids("s1", &[status("s1", None)]), (None, None));
        assert_eq!(
            continued_ids("s1", &[status("e-9", Some("acp-1")), status("e-9", None)]),
            (Some("e-9".into()), Some("acp-1".into()))
        );
    }
}
