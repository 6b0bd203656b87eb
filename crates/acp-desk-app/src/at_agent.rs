//! What is done at the agent for a session the history stores, beyond continuing it: deleting
//! it there too (`session/delete`), with the agent that runs or one started for the question
//! alone.

use std::future::Future;
use std::path::Path;

use acp_desk_core::agents::LaunchSpec;
use acp_desk_core::audit::AuditKind;
use acp_desk_core::{EngineError, Opening, SessionHandle, SessionOptions};
use acp_desk_store::SessionRecord;
use tokio::sync::mpsc;

use crate::continuation::{stored_folder, stored_launch_spec};
use crate::error::AppError;
use crate::registry::{ENGINE_QUEUE, Registry, lock};

/// What became of a stored session at its agent when it was deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentDeletion {
    /// The agent answered `session/delete`: it forgot the session.
    Deleted,
    /// The agent did not advertise `session/delete` (when the session was stored, or now):
    /// only ACP Desk's copy is deleted.
    NotAdvertised,
    /// The agent never had a session for it (it did not start).
    NoAgentSession,
    /// It could not be asked, or it refused: why, for the user. ACP Desk's copy is deleted all
    /// the same (the user asked for that); the agent keeps its own.
    Failed(String),
}

impl AgentDeletion {
    /// "deleted at the agent (demo) too" and the like, for messages.
    pub fn describe(&self, agent: &str) -> String {
        match self {
            AgentDeletion::Deleted => format!("and at the agent ({agent}), with session/delete"),
            AgentDeletion::NotAdvertised => {
                format!("not at the agent ({agent}): it does not offer session/delete")
            }
            AgentDeletion::NoAgentSession => {
                format!("not at the agent ({agent}): it never had a session for it")
            }
            AgentDeletion::Failed(why) => format!("not at the agent ({agent}): {why}"),
        }
    }
}

impl Registry {
    /// Runs `ask` with a running agent named `agent`: a session of it open in this registry
    /// whose agent is alive, else one started for the question alone in `folder`
    /// (`initialize` only: no session, no audit log, no folder watcher) and ended before this
    /// returns, leaving no process behind.
    pub async fn with_agent<T, F, Fut>(
        &self,
        agent: &str,
        spec: LaunchSpec,
        folder: &Path,
        ask: F,
    ) -> Result<T, AppError>
    where
        F: Fn(SessionHandle) -> Fut,
        Fut: Future<Output = Result<T, EngineError>>,
    {
        let running: Vec<SessionHandle> = lock(&self.open)
            .values()
            .filter(|s| s.info.agent == agent)
            .filter_map(|s| s.handle().ok())
            .collect();
        for handle in running {
            match ask(handle).await {
                // A dead session's handle answers so: try the next, else a fresh agent.
                Err(EngineError::SessionEnded(_)) => continue,
                other => return Ok(other?),
            }
        }
        let mut opts = SessionOptions::new(folder);
        opts.opening = Opening::ListOnly;
        opts.audit = AuditKind::Off;
        opts.watch_roots = false;
        opts.rules_file = None;
        let (events, mut rx) = mpsc::channel(ENGINE_QUEUE);
        // Nobody shows this agent's events; they are taken so it never waits.
        let drain = self
            .runtime
            .spawn(async move { while rx.recv().await.is_some() {} });
        let handle = match acp_desk_core::start(spec, opts, events).await {
            Ok(h) => h,
            Err(e) => {
                let _ = drain.await;
                return Err(e.into());
            }
        };
        let answer = ask(handle.clone()).await;
        handle.close().await;
        drop(handle);
        let _ = drain.await;
        Ok(answer?)
    }

    /// Deletes the stored session `record` at its agent (`session/delete`), when the agent
    /// advertised it and had a session for it; the caller deletes ACP Desk's copy
    /// (`Store::delete`) whatever this says. The agent is started again as it was for the
    /// session ([`stored_launch_spec`], in its folder) when none of it runs here.
    pub async fn delete_at_agent(&self, record: &SessionRecord) -> AgentDeletion {
        let Some(acp_id) = record.acp_session_id.clone() else {
            return AgentDeletion::NoAgentSession;
        };
        if !record.session_methods().delete {
            return AgentDeletion::NotAdvertised;
        }
        let started = tokio::task::spawn_blocking({
            let record = record.clone();
            move || Ok::<_, AppError>((stored_launch_spec(&record)?, stored_folder(&record)?))
        })
        .await;
        let (spec, folder) = match started {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => return AgentDeletion::Failed(e.to_string()),
            Err(e) => return AgentDeletion::Failed(format!("internal error: {e}")),
        };
        let asked = self
            .with_agent(&record.agent, spec, &folder, |h| {
                let acp_id = acp_id.clone();
                async move { h.delete_session(&acp_id).await }
            })
            .await;
        match asked {
            Ok(true) => AgentDeletion::Deleted,
            Ok(false) => AgentDeletion::NotAdvertised,
            Err(e) => AgentDeletion::Failed(e.to_string()),
        }
    }
}
