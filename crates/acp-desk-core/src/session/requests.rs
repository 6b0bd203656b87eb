//! The front end's requests to the agent outside the prompt itself: switching the mode,
//! setting config options, deleting a session at the agent. Each waits for the agent's answer in `pending`; the front end's
//! call returns after the event that shows the new state went out.

use agent_client_protocol_schema::v1 as acp;
use serde_json::value::RawValue;
use tokio::sync::oneshot;

use super::EngineError;
use super::owner::{Owner, Pending};
use crate::events::StreamEvent;

type Reply = oneshot::Sender<Result<(), EngineError>>;

impl Owner {
    pub(super) fn set_mode(&mut self, mode_id: String, reply: Reply) {
        let Some(session) = self.acp_session.clone() else {
            let _ = reply.send(Err(EngineError::SessionEnded("not started".into())));
            return;
        };
        let req = acp::SetSessionModeRequest::new(session, mode_id.clone());
        self.request_for(
            "session/set_mode",
            &req,
            Pending::SetMode { mode_id, reply },
        );
    }

    pub(super) fn set_config_option(
        &mut self,
        config_id: String,
        value: acp::SessionConfigOptionValue,
        reply: Reply,
    ) {
        let Some(session) = self.acp_session.clone() else {
            let _ = reply.send(Err(EngineError::SessionEnded("not started".into())));
            return;
        };
        let req = acp::SetSessionConfigOptionRequest::new(session, config_id, value);
        self.request_for(
            "session/set_config_option",
            &req,
            Pending::SetConfigOption { reply },
        );
    }

    pub(super) async fn on_mode_set(
        &mut self,
        mode_id: String,
        reply: Reply,
        result: Result<Box<RawValue>, acp::Error>,
    ) {
        let r = match result {
            Ok(_) => {
                let ev = StreamEvent::CurrentMode {
                    session_id: self.id.clone(),
                    current_mode_id: mode_id,
                };
                self.emit(ev);
                Ok(())
            }
            Err(e) => Err(refused(&e)),
        };
        // The front end sees `current-mode` before its call returns.
        self.flush().await;
        let _ = reply.send(r);
    }

    pub(super) async fn on_config_set(
        &mut self,
        reply: Reply,
        result: Result<Box<RawValue>, acp::Error>,
    ) {
        let r = match result {
            Ok(raw) => match serde_json::from_str::<acp::SetSessionConfigOptionResponse>(raw.get())
            {
                Ok(resp) => {
                    let ev = StreamEvent::ConfigOptions {
                        session_id: self.id.clone(),
                        config_options: resp.config_options,
                    };
                    self.emit(ev);
                    Ok(())
                }
                Err(e) => Err(EngineError::AgentRefused(format!(
                    "its answer to session/set_config_option is not valid ACP: {e}"
                ))),
            },
            Err(e) => Err(refused(&e)),
        };
        self.flush().await;
        let _ = reply.send(r);
    }

    /// `session/delete`, when the agent advertised it.
    pub(super) fn delete_session(
        &mut self,
        acp_session_id: String,
        reply: oneshot::Sender<Result<bool, EngineError>>,
    ) {
        if !self.identity.session_methods.is_some_and(|m| m.delete) {
            let _ = reply.send(Ok(false));
            return;
        }
        let req = acp::DeleteSessionRequest::new(acp_session_id);
        self.request_for("session/delete", &req, Pending::DeleteSession { reply });
    }

    pub(super) fn on_deleted(
        &mut self,
        reply: oneshot::Sender<Result<bool, EngineError>>,
        result: Result<Box<RawValue>, acp::Error>,
    ) {
        let _ = reply.send(result.map(|_| true).map_err(|e| refused(&e)));
    }

    /// Sends a front end's request to the agent; the reply waits in `pending` for the answer.
    /// When it cannot be sent, the caller hears at once that the agent's input is closed.
    pub(super) fn request_for<P: serde::Serialize>(
        &mut self,
        method: &str,
        params: &P,
        purpose: Pending,
    ) {
        if self.conn.is_some() {
            if self.request(method, params, purpose).is_none() {
                // `request` dropped the purpose and its reply: the caller gets `SessionEnded`.
                tracing::debug!("{method} not sent");
            }
            return;
        }
        let err = EngineError::SessionEnded("the agent's input is closed".into());
        match purpose {
            Pending::SetMode { reply, .. }
            | Pending::SetConfigOption { reply }
            | Pending::StopTask { reply, .. } => {
                let _ = reply.send(Err(err));
            }
            Pending::ListSessions { reply } => {
                let _ = reply.send(Err(err));
            }
            Pending::DeleteSession { reply } => {
                let _ = reply.send(Err(err));
            }
            Pending::Initialize
            | Pending::NewSession
            | Pending::Resume
            | Pending::Load
            | Pending::Prompt
            | Pending::Authenticate { .. } => {}
        }
    }
}

/// The agent's error answer to a front end's request, as the user sees it.
fn refused(e: &acp::Error) -> EngineError {
    EngineError::AgentRefused(format!("{} ({})", e.message, i32::from(e.code)))
}
