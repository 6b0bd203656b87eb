//! The window's sign-in commands (issue 18, ARCHITECTURE.md invariant 64): an agent's
//! `authenticate` method for a session (`sign_in_agent`) or from the Agents view without one
//! (`agent_sign_in`), an API key stored in the keychain (`sign_in_api_key`, either target),
//! and the prompt held while a start failed with auth-required, kept to be sent once signed in
//! (`sign_in_keep_prompt`). Terminal logins are `login.rs`'s. The app layer decides
//! everything (`acp_desk_app::sign_in`); this runs it and answers the window.
//!
//! An API key typed in the window goes to the keychain and nowhere else: it is a
//! [`SecretValue`] from the first line of `sign_in_api_key`, never logged, never part of an
//! answer or an error.

use std::path::PathBuf;

use acp_desk_app::sign_in::{self, AgentSignIn};
use acp_desk_core::auth::AuthAction;
use acp_desk_core::schema::v1 as acp;
use acp_desk_core::secrets::SecretValue;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager, Runtime};

use crate::AppState;
use crate::ipc::{IpcError, PromptPart, SessionInfo};

/// Who a sign-in is for: an open session (its agent is restarted signed in, the thread kept),
/// or an agent of the Agents view (checked with a start of its own, no session).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SignInTarget {
    #[serde(rename_all = "camelCase")]
    Session {
        session_id: String,
    },
    Agent {
        agent: String,
    },
}

/// What a sign-in command answers. Never holds a key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignInAnswer {
    /// For a session: the session, restarting under the same id. Whether the sign-in worked
    /// arrives as its events (`session-status ready`, or the error and `dead`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionInfo>,
    /// For a session: a prompt that hit the login will be sent once the agent is ready (a
    /// notice in the thread says so when it is).
    pub resends_prompt: bool,
    /// What to tell the user ("Signed in to gemini (…)", "Signing in to demo…").
    pub message: String,
    /// Without a session: the sign-in actions the agent offered in this start (empty for a
    /// session: its `session-status` carries them).
    pub actions: Vec<AuthAction>,
}

impl SignInAnswer {
    fn restarting(session: acp_desk_app::SessionInfo, resends_prompt: bool) -> Self {
        let message = if resends_prompt {
            format!(
                "Signing in to {}; your prompt is sent again once it is ready.",
                session.agent
            )
        } else {
            format!("Signing in to {}…", session.agent)
        };
        Self {
            session: Some(session.into()),
            resends_prompt,
            message,
            actions: Vec::new(),
        }
    }

    fn alone(done: AgentSignIn) -> Self {
        Self {
            session: None,
            resends_prompt: false,
            message: done.message,
            actions: done.actions,
        }
    }
}

/// Signs the session's agent in with its `authenticate` method `method_id`: the agent is
/// restarted under the same id with it, and a prompt that hit the login is sent once it is
/// ready. Refused with what to do for a method the agent does not offer, a terminal one (the
/// login terminal runs those) or an API-key one (`sign_in_api_key`).
#[tauri::command]
pub async fn sign_in_agent<R: Runtime>(
    app: AppHandle<R>,
    session_id: String,
    method_id: String,
) -> Result<SignInAnswer, IpcError> {
    let state = app.state::<AppState>();
    let registry = state.sessions.registry();
    let resends = registry.kept_prompt(&session_id)?.is_some();
    let info = registry
        .restart_signed_in(&session_id, Some(method_id))
        .await?;
    Ok(SignInAnswer::restarting(info, resends))
}

/// Stores `key` in the keychain as the API key of the target's agent's method `method_id`
/// (`agent-auth/<agent>/<method>`), then: for a session, restarts its agent (the engine sends
/// the key at every start) and sends a prompt that hit the login once ready; for an agent of
/// the Agents view, checks it with a start of its own and says whether the agent took it. A
/// refused key stays stored (the answer says how to replace it).
#[tauri::command]
pub async fn sign_in_api_key<R: Runtime>(
    app: AppHandle<R>,
    target: SignInTarget,
    method_id: String,
    key: String,
) -> Result<SignInAnswer, IpcError> {
    let key = SecretValue::new(key);
    let state = app.state::<AppState>();
    let keychain = state.keychain.clone();
    match target {
        SignInTarget::Session { session_id } => {
            let registry = state.sessions.registry();
            let resends = registry.kept_prompt(&session_id)?.is_some();
            let info = registry
                .sign_in_with_api_key(&session_id, keychain, &method_id, key)
                .await?;
            Ok(SignInAnswer::restarting(info, resends))
        }
        SignInTarget::Agent { agent } => {
            let spec = resolve(&agent).await?;
            let store = {
                let keychain = keychain.clone();
                let (name, method) = (spec.name.clone(), method_id.clone());
                move || sign_in::store_api_key(&*keychain, &name, &method, &key)
            };
            tauri::async_runtime::spawn_blocking(store)
                .await
                .map_err(|e| IpcError::task_failed("store the API key", &e))??;
            let done = sign_in::verify_api_key_alone(
                spec,
                &crate::agents::here(),
                &method_id,
                Some(keychain),
            )
            .await?;
            Ok(SignInAnswer::alone(done))
        }
    }
}

/// Signs in to an agent of the Agents view with its `authenticate` method `method_id`, without
/// a session: the agent is started for it alone and ended; the answer says it is signed in, or
/// the error says what the agent said.
#[tauri::command]
pub async fn agent_sign_in<R: Runtime>(
    app: AppHandle<R>,
    agent: String,
    method_id: String,
) -> Result<SignInAnswer, IpcError> {
    let keychain = app.state::<AppState>().keychain.clone();
    let spec = resolve(&agent).await?;
    let done =
        sign_in::sign_in_alone(spec, &crate::agents::here(), &method_id, Some(keychain)).await?;
    Ok(SignInAnswer::alone(done))
}

/// Keeps the prompt the window held while the session's start failed with auth-required, to be
/// sent once the agent is signed in (by any of the sign-in commands, or a terminal login);
/// empty `parts` forget it. Its files are read now, inside the session's folder, as the agent
/// said it takes them.
#[tauri::command]
pub async fn sign_in_keep_prompt<R: Runtime>(
    app: AppHandle<R>,
    session_id: String,
    parts: Vec<PromptPart>,
) -> Result<(), IpcError> {
    let state = app.state::<AppState>();
    let registry = state.sessions.registry();
    let folder: PathBuf = registry.info(&session_id)?.folder;
    let caps = registry
        .agent_identity(&session_id)?
        .and_then(|a| a.prompt_capabilities)
        .unwrap_or_default();
    let blocks: Vec<acp::ContentBlock> = tauri::async_runtime::spawn_blocking(move || {
        crate::files::prompt_blocks(&folder, parts, &caps)
    })
    .await
    .map_err(|e| IpcError::task_failed("read the prompt's files", &e))??;
    Ok(registry.keep_prompt(&session_id, blocks)?)
}

async fn resolve(agent: &str) -> Result<acp_desk_core::agents::LaunchSpec, IpcError> {
    let agent = agent.to_owned();
    tauri::async_runtime::spawn_blocking(move || acp_desk_app::resolve_agent(&agent))
        .await
        .map_err(|e| IpcError::task_failed("find the agent", &e))?
        .map_err(IpcError::from)
}
