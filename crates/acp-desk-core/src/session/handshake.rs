//! The handshake: `initialize`, then `session/new`; the session is ready when both answered.
//!
//! This is where what comes between the two lands: `authenticate` (sign-in), `session/load` and
//! `session/resume` (continuing a stored session), and the MCP servers given to the new
//! session. A failure here ends the session through [`Ending::StartFailed`], and `start()`'s
//! caller hears why.

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1 as acp;
use serde_json::value::RawValue;

use super::EngineError;
use super::ending::Ending;
use super::owner::{Owner, Pending};
use crate::events::{NoticeSeverity, SessionMethods, SessionState, StreamEvent};
use crate::fs::Compat;

/// ACP's "authentication required" error code (from `session/new`, or a prompt).
pub(super) const AUTH_REQUIRED: i32 = -32000;

impl Owner {
    pub(super) fn send_initialize(&mut self) {
        // Advertise exactly what is implemented. claude-code-acp offers its ACP Edit tool only
        // with both fs flags (Edit reads through readTextFile too).
        let caps = acp::ClientCapabilities::new()
            .fs(acp::FileSystemCapabilities::new()
                .read_text_file(true)
                .write_text_file(true))
            .terminal(true);
        let req = acp::InitializeRequest::new(ProtocolVersion::V1)
            .client_capabilities(caps)
            .client_info(
                acp::Implementation::new("acp-desk", env!("CARGO_PKG_VERSION")).title("ACP Desk"),
            );
        self.request("initialize", &req, Pending::Initialize);
    }

    fn fail_start(&mut self, err: EngineError) {
        self.request_end(Ending::StartFailed(err));
    }

    pub(super) fn on_initialized(&mut self, result: Result<Box<RawValue>, acp::Error>) {
        let resp = match result {
            Ok(raw) => match serde_json::from_str::<acp::InitializeResponse>(raw.get()) {
                Ok(r) => r,
                Err(e) => {
                    return self.fail_start(EngineError::StartFailed(format!(
                        "the agent's answer to initialize is not valid ACP: {e}"
                    )));
                }
            },
            Err(e) => {
                return self.fail_start(EngineError::StartFailed(format!(
                    "initialize failed: {} ({})",
                    e.message,
                    i32::from(e.code)
                )));
            }
        };
        if resp.protocol_version != ProtocolVersion::V1 {
            return self.fail_start(EngineError::ProtocolVersion(resp.protocol_version.as_u16()));
        }
        self.identity.prompt_capabilities =
            Some(resp.agent_capabilities.prompt_capabilities.clone());
        self.identity.session_methods = Some(SessionMethods::advertised(&resp.agent_capabilities));
        if let Some(info) = resp.agent_info {
            // Before any request of the agent's: its first read may already need them.
            self.client.add_quirks(Compat::for_agent_info(&info));
            self.identity.name = Some(info.name);
            self.identity.title = info.title;
            self.identity.version = Some(info.version);
        }
        let mut req = acp::NewSessionRequest::new(self.opts.cwd.clone());
        if !self.opts.additional_dirs.is_empty() {
            if resp
                .agent_capabilities
                .session_capabilities
                .additional_directories
                .is_some()
            {
                req = req.additional_directories(self.opts.additional_dirs.clone());
            } else {
                self.notice(
                    NoticeSeverity::Info,
                    "This agent does not accept additional folders; only the session's folder was sent to it.".into(),
                    None,
                );
            }
        }
        self.request("session/new", &req, Pending::NewSession);
    }

    pub(super) async fn on_session_created(&mut self, result: Result<Box<RawValue>, acp::Error>) {
        let resp = match result {
            Ok(raw) => match serde_json::from_str::<acp::NewSessionResponse>(raw.get()) {
                Ok(r) => r,
                Err(e) => {
                    return self.fail_start(EngineError::StartFailed(format!(
                        "the agent's answer to session/new is not valid ACP: {e}"
                    )));
                }
            },
            Err(e) if i32::from(e.code) == AUTH_REQUIRED => {
                return self.fail_start(EngineError::AuthRequired(e.message));
            }
            Err(e) => {
                return self.fail_start(EngineError::StartFailed(format!(
                    "session/new failed: {} ({})",
                    e.message,
                    i32::from(e.code)
                )));
            }
        };
        self.identity.acp_session_id = Some(resp.session_id.0.to_string());
        self.acp_session = Some(resp.session_id);
        self.emit_status(SessionState::Ready, None);
        self.audit.session_started(
            &self.identity.launch_name,
            &self.opts.cwd,
            self.client.roots.roots(),
        );
        if let Some(problem) = self.perms.rules.take_notice() {
            self.notice(
                NoticeSeverity::Warning,
                "Remembered permission answers are not available.".into(),
                Some(problem),
            );
        }
        if let Some(modes) = resp.modes {
            let ev = StreamEvent::Modes {
                session_id: self.id.clone(),
                current_mode_id: modes.current_mode_id.0.to_string(),
                available_modes: modes.available_modes,
            };
            self.emit(ev);
        }
        if let Some(options) = resp.config_options {
            let ev = StreamEvent::ConfigOptions {
                session_id: self.id.clone(),
                config_options: options,
            };
            self.emit(ev);
        }
        self.flush().await;
        if let Some(ready) = self.life.ready.take() {
            let caps = self
                .identity
                .prompt_capabilities
                .clone()
                .unwrap_or_default();
            let _ = ready.send(Ok(caps));
        }
    }
}
