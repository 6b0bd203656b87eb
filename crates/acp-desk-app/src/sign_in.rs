//! Signing in to a session's agent (issue 18, ARCHITECTURE.md invariant 64), after the agent
//! said auth-required (`session/new` or a prompt answered -32000) or whenever the user asks:
//!
//! - [`Registry::restart_signed_in`]: the session's agent is ended if it runs and started
//!   again under the same registry id (the window keeps its thread), continuing the
//!   conversation as [`Registry::reconnect`] does, with `SessionOptions.authenticate` set for
//!   that start only (an `agent` method the user picked; `None` after a terminal login or a
//!   stored API key, which the engine sends on every start by itself).
//! - **The kept prompt**: the prompt that hit the login goes through once signed in, once. It
//!   is the one the app was given to keep ([`Registry::keep_prompt`]: the window held it while
//!   the start failed with auth-required), else the last `turn-start` of the thread whose turn
//!   ended after an `auth-required` error, with no turn after it. It is sent when the restarted
//!   agent is ready, after a notice in the thread ("Signed in. Sending your prompt again: …").
//!   A restart whose sign-in fails sends nothing: the prompt stays kept for the next try (the
//!   thread still ends with that turn, or the kept one was not taken). A sent one is never sent
//!   again: its new turn is the thread's last.
//! - API keys: [`store_api_key`] puts the key in the keychain under
//!   [`acp_desk_core::auth::api_key_ref`] (`LaunchSpec.name`, the method) and nowhere else; the
//!   engine reads it at every start. [`Registry::sign_in_with_api_key`] stores and restarts
//!   naming the method (the engine then sends that key, or fails the start without one);
//!   [`verify_api_key_alone`] checks a stored key without a session (the Agents view): a start
//!   with no session (`Opening::ListOnly`) in which the engine authenticates with it before
//!   ready.
//! - [`sign_in_alone`]: an `agent` method from the Agents view, with no session: the same kind
//!   of start, with `authenticate`.
//!
//! A key never reaches an event, a log line, an error or an answer: it is a [`SecretValue`]
//! from the moment a front end hands it over.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use acp_desk_core::agents::LaunchSpec;
use acp_desk_core::audit::AuditKind;
use acp_desk_core::auth::{AuthAction, AuthHow, api_key_ref};
use acp_desk_core::error_kind::ErrorKind;
use acp_desk_core::events::{AgentIdentity, NoticeSeverity, NoticeSource, TurnEndReason};
use acp_desk_core::schema::v1 as acp;
use acp_desk_core::secrets::{Keychain, SecretError, SecretRef, SecretValue};
use acp_desk_core::{EventBatch, Opening, SessionOptions, StreamEvent};
use tokio::sync::mpsc;

use crate::error::AppError;
use crate::pump::lock_hub;
use crate::registry::{ENGINE_QUEUE, Registry, Session, SessionInfo, lock};

/// The longest API key stored: real ones are well under 200 bytes; more is a paste gone wrong
/// (a whole file), refused before it reaches the keychain.
pub const MAX_API_KEY_BYTES: usize = 16 * 1024;

/// How much of a kept prompt's text the notice quotes.
const NOTICE_PREVIEW_CHARS: usize = 80;

/// Prompts kept until their session's agent is signed in, by registry id, and the sessions
/// whose sign-in restart is under way. Shared with the task that sends a prompt once the
/// restarted agent is ready.
#[derive(Clone, Default)]
pub(crate) struct KeptPrompts(
    Arc<Mutex<BTreeMap<String, Vec<acp::ContentBlock>>>>,
    Arc<Mutex<std::collections::BTreeSet<String>>>,
);

/// Held while a session's agent is ended and started again for a sign-in: a second sign-in
/// (a double click) is refused instead of starting a second agent for the same session.
struct Restarting(KeptPrompts, String);

impl Drop for Restarting {
    fn drop(&mut self) {
        lock(&self.0.1).remove(&self.1);
    }
}

impl KeptPrompts {
    fn restarting(&self, id: &str) -> Result<Restarting, AppError> {
        if !lock(&self.1).insert(id.to_owned()) {
            return Err(AppError::SessionStarting(
                "a sign-in of this session is already under way: wait for it to finish".into(),
            ));
        }
        Ok(Restarting(self.clone(), id.to_owned()))
    }

    pub(crate) fn forget(&self, id: &str) {
        lock(&self.0).remove(id);
    }

    fn keep(&self, id: &str, blocks: Vec<acp::ContentBlock>) {
        lock(&self.0).insert(id.to_owned(), blocks);
    }

    fn get(&self, id: &str) -> Option<Vec<acp::ContentBlock>> {
        lock(&self.0).get(id).cloned()
    }

    fn take(&self, id: &str) -> Option<Vec<acp::ContentBlock>> {
        lock(&self.0).remove(id)
    }
}

/// The prompt of the thread's last turn when that turn hit a login: an `auth-required` error
/// after its `turn-start`, before its `turn-end` (if it has one), which did not complete. `None`
/// when the last turn went through, or there was none.
pub fn prompt_hit_by_login(thread: &[StreamEvent]) -> Option<Vec<acp::ContentBlock>> {
    let start = thread
        .iter()
        .rposition(|e| matches!(e, StreamEvent::TurnStart { .. }))?;
    let StreamEvent::TurnStart { prompt, .. } = &thread[start] else {
        return None;
    };
    let after = &thread[start + 1..];
    let end = after
        .iter()
        .position(|e| matches!(e, StreamEvent::TurnEnd { .. }))
        .unwrap_or(after.len());
    if let Some(StreamEvent::TurnEnd { reason, .. }) = after.get(end)
        && *reason == TurnEndReason::Completed
    {
        return None;
    }
    let hit = after[..end].iter().any(|e| {
        matches!(e, StreamEvent::Error { error, .. } if error.kind == Some(ErrorKind::AuthRequired))
    });
    hit.then(|| prompt.clone())
}

/// The agent as its latest `session-status` in the thread describes it (`None`: the agent
/// never answered `initialize`).
pub fn agent_identity(thread: &[StreamEvent]) -> Option<AgentIdentity> {
    thread.iter().rev().find_map(|e| match e {
        StreamEvent::SessionStatus { agent: Some(a), .. } => Some(a.clone()),
        _ => None,
    })
}

/// The sign-in actions the agent offered (its `authMethods`, classified), from the thread.
pub fn offered_actions(thread: &[StreamEvent]) -> Option<Vec<AuthAction>> {
    thread.iter().rev().find_map(|e| match e {
        StreamEvent::SessionStatus {
            agent:
                Some(AgentIdentity {
                    auth_methods: Some(m),
                    ..
                }),
            ..
        } => Some(m.clone()),
        _ => None,
    })
}

/// What a sign-in is asked to do, to check it against what the agent offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignInVia {
    /// `authenticate {methodId}` (an `agent` method).
    Authenticate,
    /// An API key from the keychain (an `api-key` method).
    ApiKey,
}

/// The action `method_id` of `actions` (what `agent` offers), when it is signed in to `via`;
/// otherwise an error saying what to do instead (a terminal method runs in the login terminal,
/// an API-key method needs its key).
pub fn check_method<'a>(
    actions: &'a [AuthAction],
    agent: &str,
    method_id: &str,
    via: SignInVia,
) -> Result<&'a AuthAction, AppError> {
    let Some(action) = actions.iter().find(|a| a.method_id == method_id) else {
        let offered = if actions.is_empty() {
            "it offers no sign-in methods".to_owned()
        } else {
            let names: Vec<String> = actions
                .iter()
                .map(|a| format!("`{}` ({})", a.method_id, a.name))
                .collect();
            format!("it offers {}", names.join(", "))
        };
        return Err(AppError::InvalidInput(format!(
            "{agent} does not offer the sign-in method `{method_id}`: {offered}. Pick one of those."
        )));
    };
    match (&action.how, via) {
        (AuthHow::Agent, SignInVia::Authenticate) | (AuthHow::ApiKey { .. }, SignInVia::ApiKey) => {
            Ok(action)
        }
        (AuthHow::Terminal { .. } | AuthHow::TerminalCommand { .. }, _) => {
            Err(AppError::InvalidInput(format!(
                "“{}” is a login that runs in a terminal: start it from Sign in… → “{}”, which opens the login terminal",
                action.name, action.name
            )))
        }
        (AuthHow::ApiKey { .. }, SignInVia::Authenticate) => Err(AppError::InvalidInput(format!(
            "“{}” signs in with an API key: enter the key (Sign in… → “{}”) and it is sent from the keychain",
            action.name, action.name
        ))),
        (AuthHow::Agent, SignInVia::ApiKey) => Err(AppError::InvalidInput(format!(
            "“{}” does not take an API key: the agent signs you in itself (Sign in… → “{}”)",
            action.name, action.name
        ))),
    }
}

/// Stores `key` as the API key of `agent_name`'s (`LaunchSpec.name`) method `method_id`,
/// replacing one stored before; returns where. Blocking (the keychain). Whitespace around the
/// key (a paste's line break) is dropped; a key with spaces or line breaks inside, or none, is
/// refused. No error carries the key.
pub fn store_api_key(
    keychain: &dyn Keychain,
    agent_name: &str,
    method_id: &str,
    key: &SecretValue,
) -> Result<SecretRef, AppError> {
    let name = api_key_ref(agent_name, method_id).map_err(|e| {
        AppError::InvalidInput(format!(
            "the API key of {agent_name} ({method_id}) has no valid keychain name: {e}"
        ))
    })?;
    let text = key.expose().trim();
    if text.is_empty() {
        return Err(AppError::InvalidInput(
            "no API key was given: paste the key, then sign in again".into(),
        ));
    }
    if text.len() > MAX_API_KEY_BYTES {
        return Err(AppError::InvalidInput(format!(
            "that is {} bytes, far more than an API key (at most {MAX_API_KEY_BYTES}): paste the key alone; nothing was stored",
            text.len()
        )));
    }
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(AppError::InvalidInput(
            "the API key has spaces, line breaks or control characters inside: paste the key alone; nothing was stored".into(),
        ));
    }
    let value = SecretValue::new(text.to_owned());
    keychain
        .set(&name, &value)
        .map_err(|e| keychain_error(&e))?;
    tracing::info!(agent = %agent_name, method = %method_id, "an API key was stored in the keychain as {name}");
    Ok(name)
}

/// What the keychain said, without anything of the key (its errors never carry values).
fn keychain_error(e: &SecretError) -> AppError {
    match e {
        SecretError::InvalidRef { .. } => AppError::Internal(format!(
            "{e}; nothing was stored (a bug: the name is ACP Desk's own)"
        )),
        _ => AppError::Keychain(format!("{e}. The API key was not stored.")),
    }
}

/// The notice's title for a prompt sent again: its text's start, never more.
pub fn resend_notice(blocks: &[acp::ContentBlock]) -> String {
    let text: String = blocks
        .iter()
        .filter_map(|b| match b {
            acp::ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ");
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let others = blocks
        .iter()
        .filter(|b| !matches!(b, acp::ContentBlock::Text(_)))
        .count();
    let mut quoted: String = line.chars().take(NOTICE_PREVIEW_CHARS).collect();
    if line.chars().count() > NOTICE_PREVIEW_CHARS {
        quoted.push('…');
    }
    let with = match others {
        0 => String::new(),
        1 => " (with 1 attachment)".to_owned(),
        n => format!(" (with {n} attachments)"),
    };
    if quoted.is_empty() {
        format!("Signed in. Sending your prompt again{with}.")
    } else {
        format!("Signed in. Sending your prompt again: “{quoted}”{with}")
    }
}

/// How a sign-in without a session went (the Agents view).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSignIn {
    /// For the user: "Signed in to gemini (Use Gemini API key)." Never holds a key.
    pub message: String,
    /// What the agent offers, as it said in this start.
    pub actions: Vec<AuthAction>,
}

/// Signs in to `spec`'s agent with its `agent` method `method_id`, without a session: a start
/// in `folder` with `authenticate` and no session (`Opening::ListOnly`), then the agent is
/// ended. Success is the agent's answer to `authenticate`; its refusal is the error (what it
/// said). `keychain`: where a stored API key is read (the engine sends one on every start).
pub async fn sign_in_alone(
    spec: LaunchSpec,
    folder: &Path,
    method_id: &str,
    keychain: Option<Arc<dyn Keychain>>,
) -> Result<AgentSignIn, AppError> {
    let agent = spec.name.clone();
    let actions = start_alone(spec, folder, Some(method_id.to_owned()), keychain).await?;
    let action = check_method(&actions, &agent, method_id, SignInVia::Authenticate)?;
    Ok(AgentSignIn {
        message: format!("Signed in to {agent} ({}).", action.name),
        actions,
    })
}

/// Checks the API key stored for `spec`'s method `method_id` (after [`store_api_key`]): a start
/// in `folder` with no session, in which the engine authenticates with the stored key before
/// ready, then the agent is ended. The agent's refusal is the error (kind `auth-required`);
/// the key stays stored (nothing the user did not ask for is removed) and the error says how
/// to replace it.
pub async fn verify_api_key_alone(
    spec: LaunchSpec,
    folder: &Path,
    method_id: &str,
    keychain: Option<Arc<dyn Keychain>>,
) -> Result<AgentSignIn, AppError> {
    let agent = spec.name.clone();
    let stored = api_key_ref(&agent, method_id)
        .map(|r| r.to_string())
        .unwrap_or_default();
    // Named: the engine sends this method's stored key, and fails the start without one. Its
    // refusal says the stored key was refused and how to replace it.
    let actions = start_alone(spec, folder, Some(method_id.to_owned()), keychain).await?;
    let action = check_method(&actions, &agent, method_id, SignInVia::ApiKey)?;
    Ok(AgentSignIn {
        message: format!(
            "Signed in to {agent} ({}): the agent accepted the API key, kept in the keychain as `{stored}` and sent at every start.",
            action.name
        ),
        actions,
    })
}

/// A start of `spec` with no session, `authenticate` sent when given; the agent's actions as it
/// offered them. The agent is ended before this returns.
async fn start_alone(
    spec: LaunchSpec,
    folder: &Path,
    authenticate: Option<String>,
    keychain: Option<Arc<dyn Keychain>>,
) -> Result<Vec<AuthAction>, AppError> {
    let mut opts = SessionOptions::new(folder);
    opts.opening = Opening::ListOnly;
    opts.audit = AuditKind::Off;
    opts.watch_roots = false;
    opts.rules_file = None;
    opts.authenticate = authenticate;
    opts.keychain = keychain;
    let (events, mut rx) = mpsc::channel::<EventBatch>(ENGINE_QUEUE);
    // Nobody shows this agent's events; they are read for what it offers, and taken so it
    // never waits.
    let drain = tokio::spawn(async move {
        let mut actions = None;
        while let Some(batch) = rx.recv().await {
            if let Some(a) = offered_actions(&batch) {
                actions = Some(a);
            }
        }
        actions
    });
    let started = acp_desk_core::start(spec, opts, events).await;
    if let Ok(handle) = &started {
        handle.close().await;
    }
    let ok = started.map(drop);
    let actions = drain.await.unwrap_or_default();
    ok?;
    Ok(actions.unwrap_or_default())
}

impl Registry {
    /// Keeps `blocks` as the prompt to send once the session's agent is signed in
    /// ([`Registry::restart_signed_in`]): one the front end held while the start failed with
    /// auth-required. Replaces one kept before; empty `blocks` forgets it. A prompt sent in the
    /// session meanwhile forgets it too.
    pub fn keep_prompt(&self, id: &str, blocks: Vec<acp::ContentBlock>) -> Result<(), AppError> {
        self.get(id)?;
        if blocks.is_empty() {
            self.kept.forget(id);
        } else {
            self.kept.keep(id, blocks);
        }
        Ok(())
    }

    /// The prompt a sign-in of the session would send once signed in (see the module docs).
    pub fn kept_prompt(&self, id: &str) -> Result<Option<Vec<acp::ContentBlock>>, AppError> {
        let session = self.get(id)?;
        if let Some(kept) = self.kept.get(id) {
            return Ok(Some(kept));
        }
        let thread = lock_hub(session.hub()?).snapshot();
        Ok(prompt_hit_by_login(&thread))
    }

    /// The session's agent as its thread last described it (its sign-in actions, its prompt
    /// capabilities); `None`: it never answered `initialize`.
    pub fn agent_identity(&self, id: &str) -> Result<Option<AgentIdentity>, AppError> {
        let session = self.get(id)?;
        let thread = lock_hub(session.hub()?).snapshot();
        Ok(agent_identity(&thread))
    }

    /// The name the session's agent was started under (`LaunchSpec.name`): what its API keys
    /// are stored under ([`api_key_ref`]).
    pub fn launch_name(&self, id: &str) -> Result<String, AppError> {
        Ok(self.get(id)?.relaunch.0.name.clone())
    }

    /// Signs the session's agent in and sends the kept prompt (the module docs): ends the agent
    /// if it runs, starts it again under the same id continuing the conversation, with
    /// `authenticate` (an `agent` method of the agent's, checked against what it offered) for
    /// this start only. Returns at once, like [`Registry::reconnect`]: the start's progress and
    /// outcome arrive as events. A start still under way (an earlier sign-in waiting in a
    /// browser) is ended for this one; a second call while this one ends the agent is refused
    /// (`SessionStarting`), as is a session opened without views.
    pub async fn restart_signed_in(
        &self,
        id: &str,
        authenticate: Option<String>,
    ) -> Result<SessionInfo, AppError> {
        let authenticate = authenticate.map(|m| (m, SignInVia::Authenticate));
        self.restart_with_sign_in(id, authenticate).await
    }

    /// [`Registry::restart_signed_in`], the method checked to be of the kind `via` (an
    /// API-key method: the engine sends its stored key, and fails the start without one).
    async fn restart_with_sign_in(
        &self,
        id: &str,
        authenticate: Option<(String, SignInVia)>,
    ) -> Result<SessionInfo, AppError> {
        let session = self.get(id)?;
        let thread = lock_hub(session.hub()?).snapshot();
        if let Some((method, via)) = &authenticate {
            let actions = offered_actions(&thread).ok_or_else(|| not_initialized(&session))?;
            check_method(&actions, &session.info.agent, method, *via)?;
        }
        let authenticate = authenticate.map(|(m, _)| m);
        drop(session);
        let from_thread = prompt_hit_by_login(&thread);
        let restarting = self.kept.restarting(id)?;
        // A start still under way (an earlier sign-in waiting on the user in a browser, an
        // agent slow to answer) is given up for this one: the user chose again.
        if self.get(id)?.abort_start() {
            tracing::info!(session = %id, "a start under way was ended for a new sign-in");
        }
        self.end_agent(id).await?;
        let info = self.reconnect_with(id, None, authenticate).await?;
        drop(restarting);
        self.resend_kept_when_ready(id, from_thread)?;
        tracing::info!(session = %id, agent = %info.agent, "session restarting to sign in");
        Ok(info)
    }

    /// The thread's prompt that hit a login, if any: read before a restart replaces the agent.
    pub(crate) fn prompt_hit_by_login_in(&self, id: &str) -> Option<Vec<acp::ContentBlock>> {
        let session = self.get(id).ok()?;
        let hub = session.hub.as_ref()?;
        prompt_hit_by_login(&lock_hub(hub).snapshot())
    }

    /// Once the session's new agent is ready, the kept prompt (else `from_thread`) goes out,
    /// once: after a sign-in, and after a plain Reconnect too (the user may have signed in
    /// outside the app, with `acp-desk-cli auth`, and the window said the prompt was kept).
    pub(crate) fn resend_kept_when_ready(
        &self,
        id: &str,
        from_thread: Option<Vec<acp::ContentBlock>>,
    ) -> Result<(), AppError> {
        let restarted = self.get(id)?;
        self.runtime
            .spawn(resend_when_ready(restarted, self.kept.clone(), from_thread));
        Ok(())
    }

    /// Stores `key` as the API key of the session's agent's method `method_id` (an `api-key`
    /// method it offered), then restarts as [`Registry::restart_signed_in`] does, naming the
    /// method: the engine sends this key (and at every later start, the stored one). The
    /// keychain call runs on the blocking pool.
    pub async fn sign_in_with_api_key(
        &self,
        id: &str,
        keychain: Arc<dyn Keychain>,
        method_id: &str,
        key: SecretValue,
    ) -> Result<SessionInfo, AppError> {
        let session = self.get(id)?;
        let thread = lock_hub(session.hub()?).snapshot();
        let actions = offered_actions(&thread).ok_or_else(|| not_initialized(&session))?;
        check_method(&actions, &session.info.agent, method_id, SignInVia::ApiKey)?;
        // The session's own keychain when its opener gave one: the one its starts read.
        let keychain = session.relaunch.1.keychain.clone().unwrap_or(keychain);
        let name = session.relaunch.0.name.clone();
        drop(session);
        let method = method_id.to_owned();
        tokio::task::spawn_blocking(move || store_api_key(&*keychain, &name, &method, &key))
            .await
            .map_err(|e| {
                AppError::Internal(format!(
                    "storing the API key stopped before it finished ({e}); nothing was restarted"
                ))
            })??;
        // Named, not left to the every-start key: this key is the one sent, or the start fails.
        self.restart_with_sign_in(id, Some((method_id.to_owned(), SignInVia::ApiKey)))
            .await
    }
}

fn not_initialized(session: &Session) -> AppError {
    AppError::InvalidInput(format!(
        "{} has not said how to sign in (it never answered `initialize`): reconnect the session first",
        session.info.agent
    ))
}

/// Once the restarted agent is ready, sends the kept prompt (the registry's kept one, else the
/// thread's) after a notice. A failed start sends nothing and keeps it.
async fn resend_when_ready(
    session: Arc<Session>,
    kept: KeptPrompts,
    from_thread: Option<Vec<acp::ContentBlock>>,
) {
    let id = session.info.id.clone();
    let Ok(handle) = session.wait_started().await else {
        return;
    };
    let Some(blocks) = kept.take(&id).or(from_thread) else {
        return;
    };
    let notice = StreamEvent::Notice {
        session_id: handle.id().to_owned(),
        severity: NoticeSeverity::Info,
        title: resend_notice(&blocks),
        description: None,
        source: NoticeSource::Client,
    };
    // Queued before the prompt: the notice comes before the turn's own events.
    let queue = session.events.upgrade();
    if let Some(queue) = queue {
        let _ = queue.send(vec![notice]).await;
    }
    match handle.prompt(blocks).await {
        Ok(outcome) => {
            tracing::info!(session = %id, reason = ?outcome.reason, "the prompt kept for a sign-in was sent");
        }
        // The user sent another first (that one wins), or the agent ended: the turn's events
        // (or their absence) say so in the thread.
        Err(e) => tracing::info!(session = %id, "the prompt kept for a sign-in was not sent: {e}"),
    }
}

#[cfg(test)]
mod tests;
