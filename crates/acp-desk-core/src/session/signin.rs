//! Signing in during the start, between `initialize` and opening the session (invariants 59–61):
//!
//! - the method the front end asked for ([`super::SessionOptions::authenticate`], once):
//!   `authenticate {methodId}`, its answer awaited up to [`auth::AUTHENTICATE_TIMEOUT`] instead
//!   of the start's budget (the agent may be waiting on the user in a browser); a terminal
//!   method is refused (it runs in a terminal, never through `authenticate`);
//! - otherwise, on every start, the API key of the agent's first `api-key` method that has one in
//!   the keychain (read on the blocking pool, bounded by [`auth::KEY_READ_TIMEOUT`]):
//!   `authenticate {methodId, _meta: {"api-key": KEY}}`. No key stored: nothing is sent.
//!
//! The key goes into that request and nowhere else: not in a log line, an event, the trace or
//! the audit log; an agent's answer that echoes it has it replaced before anyone sees it.

use agent_client_protocol_schema::v1 as acp;
use serde_json::value::RawValue;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::EngineError;
use super::handshake::AUTH_REQUIRED;
use super::owner::{Owner, Pending};
use crate::auth::{self, AuthAction, AuthHow};
use crate::events::NoticeSeverity;
use crate::secrets::SecretValue;

/// One API-key method and what the keychain had for it (`Err`: why it could not be read).
type KeyOf = (AuthAction, Result<Option<SecretValue>, String>);

/// What reading the API keys came to.
pub(super) struct KeysRead {
    /// The sign-in the user chose (its key must be there); `None`: the every-start one.
    chosen: Option<AuthAction>,
    /// `Err`: no keychain, or it did not answer in time.
    outcome: Result<Vec<KeyOf>, String>,
}

pub(in crate::session) async fn wait_keys(
    rx: &mut Option<oneshot::Receiver<KeysRead>>,
) -> KeysRead {
    match rx {
        Some(rx) => rx.await.unwrap_or_else(|_| KeysRead {
            chosen: None,
            outcome: Err("reading the keychain ended without an answer".into()),
        }),
        None => std::future::pending().await,
    }
}

/// The agent's words with the key taken out, should it have echoed it.
fn scrub(text: &str, key: Option<&SecretValue>) -> String {
    match key {
        Some(k) if !k.expose().is_empty() => text.replace(k.expose(), "[the key]"),
        _ => text.to_owned(),
    }
}

impl Owner {
    /// After `initialize`: the chosen sign-in, else a stored API key, else straight on.
    pub(super) async fn sign_in_or_open(&mut self) {
        let actions = self.identity.auth_methods.clone().unwrap_or_default();
        if let Some(id) = self.opts.authenticate.take() {
            let Some(action) = actions.iter().find(|a| a.method_id == id).cloned() else {
                let offered = if actions.is_empty() {
                    "it offers none".to_owned()
                } else {
                    let ids: Vec<String> = actions
                        .iter()
                        .map(|a| format!("`{}`", a.method_id))
                        .collect();
                    format!("it offers {}", ids.join(", "))
                };
                return self.fail_start(EngineError::StartFailed(format!(
                    "the agent does not offer the sign-in method `{id}` ({offered}): choose one of those"
                )));
            };
            match &action.how {
                AuthHow::Terminal { .. } | AuthHow::TerminalCommand { .. } => {
                    return self.fail_start(EngineError::StartFailed(format!(
                        "\"{}\" is a login in a terminal, which the agent does not take through authenticate: run it from Sign in… in the window, or `acp-desk-cli auth {} --method {}`",
                        action.name, self.identity.launch_name, action.method_id
                    )));
                }
                AuthHow::ApiKey { .. } => {
                    return self.read_keys(vec![action.clone()], Some(action));
                }
                AuthHow::Agent => return self.send_authenticate(action, None),
            }
        }
        let keyed: Vec<AuthAction> = actions
            .into_iter()
            .filter(|a| matches!(a.how, AuthHow::ApiKey { .. }))
            .collect();
        if keyed.is_empty() {
            return self.open_session().await;
        }
        self.read_keys(keyed, None);
    }

    /// Reads the keys of `actions` on the blocking pool; the loop hands the answer to
    /// [`Owner::on_keys_read`].
    fn read_keys(&mut self, actions: Vec<AuthAction>, chosen: Option<AuthAction>) {
        let keychain = super::keychain_of(&self.opts);
        let agent = self.identity.launch_name.clone();
        let (tx, rx) = oneshot::channel();
        self.handshake.keys = Some(rx);
        tokio::spawn(async move {
            let reading = tokio::task::spawn_blocking(move || {
                let Some(keychain) = keychain else {
                    return Err(
                        "this program was started without a keychain, so no API key can be read"
                            .to_owned(),
                    );
                };
                Ok(actions
                    .into_iter()
                    .map(|a| {
                        let got = auth::api_key_ref(&agent, &a.method_id)
                            .map_err(|e| e.to_string())
                            .and_then(|r| keychain.get(&r).map_err(|e| e.to_string()));
                        (a, got)
                    })
                    .collect())
            });
            let outcome = match tokio::time::timeout(auth::KEY_READ_TIMEOUT, reading).await {
                Ok(Ok(read)) => read,
                Ok(Err(e)) => Err(format!("reading the keychain failed: {e}")),
                Err(_) => Err(format!(
                    "the keychain did not answer within {} s (is it waiting to be unlocked?)",
                    auth::KEY_READ_TIMEOUT.as_secs()
                )),
            };
            let _ = tx.send(KeysRead { chosen, outcome });
        });
    }

    pub(super) async fn on_keys_read(&mut self, read: KeysRead) {
        let mut problems = Vec::new();
        let mut found = None;
        match read.outcome {
            Err(e) => problems.push(e),
            Ok(list) => {
                for (action, got) in list {
                    match got {
                        Ok(Some(key)) if found.is_none() => found = Some((action, key)),
                        Ok(_) => {}
                        Err(e) => problems.push(format!("\"{}\": {e}", action.name)),
                    }
                }
            }
        }
        if let Some((action, key)) = found {
            return self.send_authenticate(action, Some(key));
        }
        let agent = self.identity.launch_name.clone();
        if let Some(AuthAction {
            name,
            method_id: id,
            ..
        }) = read.chosen
        {
            let why = if problems.is_empty() {
                "none is stored in the keychain".to_owned()
            } else {
                problems.join("; ")
            };
            return self.fail_start(EngineError::AuthRequired(format!(
                "no API key could be used for \"{name}\": {why}. Enter it with Sign in… in the window or `acp-desk-cli auth {agent} --method {id}`, then start the agent again"
            )));
        }
        if !problems.is_empty() {
            let why = problems.join("; ");
            self.notice(
                NoticeSeverity::Warning,
                "The agent was started without its stored API key: it could not be read.".into(),
                Some(format!(
                    "{why}. If the agent asks you to sign in, unlock the keychain and reconnect."
                )),
            );
            self.handshake.key_problem = Some(why);
        }
        self.open_session().await;
    }

    /// `authenticate` with `action` (and its key). The user's own choice may take as long as
    /// the user does, up to [`auth::AUTHENTICATE_TIMEOUT`]; a key is the start's business.
    fn send_authenticate(&mut self, action: AuthAction, key: Option<SecretValue>) {
        let mut req = acp::AuthenticateRequest::new(action.method_id.clone());
        if let Some(k) = &key {
            req = req.meta(serde_json::Map::from_iter([(
                auth::API_KEY_META.to_owned(),
                serde_json::Value::String(k.expose().to_owned()),
            )]));
        } else {
            self.life.start_deadline = Instant::now() + auth::AUTHENTICATE_TIMEOUT;
            self.handshake.authenticating = Some(action.clone());
            self.notice(
                NoticeSeverity::Info,
                format!("Signing in with \"{}\"…", action.name),
                Some(format!(
                    "The agent may open a browser or ask you something: finish there. ACP Desk waits up to {} minutes.",
                    auth::AUTHENTICATE_TIMEOUT.as_secs() / 60
                )),
            );
        }
        // The request (the key in it) is serialized into the agent's input and dropped here.
        self.request("authenticate", &req, Pending::Authenticate { action, key });
    }

    pub(super) async fn on_authenticated(
        &mut self,
        action: AuthAction,
        key: Option<SecretValue>,
        result: Result<Box<RawValue>, acp::Error>,
    ) {
        let chosen = self.handshake.authenticating.take().is_some();
        if chosen {
            self.life.start_deadline = Instant::now() + self.opts.start_timeout;
        }
        let agent = self.identity.launch_name.clone();
        match result {
            Ok(_) => {
                if chosen {
                    self.notice(
                        NoticeSeverity::Info,
                        format!("Signed in with \"{}\".", action.name),
                        None,
                    );
                }
                self.open_session().await;
            }
            Err(e) => {
                let code = i32::from(e.code);
                let said = scrub(&e.message, key.as_ref());
                let err = if key.is_some() {
                    EngineError::AuthRequired(format!(
                        "the agent refused the API key stored for \"{}\": {said} ({code}). Replace it: sign in with \"{}\" again and enter the right key (Sign in… in the window, or `acp-desk-cli auth {agent} --method {}`)",
                        action.name, action.name, action.method_id
                    ))
                } else if code == AUTH_REQUIRED {
                    EngineError::AuthRequired(format!(
                        "signing in with \"{}\" did not succeed: the agent answered \"{said}\" ({code}). Try again, or choose another way to sign in",
                        action.name
                    ))
                } else {
                    EngineError::StartFailed(format!(
                        "signing in with \"{}\" (`{}`) failed: the agent answered \"{said}\" ({code})",
                        action.name, action.method_id
                    ))
                };
                self.fail_start(err);
            }
        }
    }

    /// What an [`EngineError::AuthRequired`] says after the agent's `-32000`: its words, the
    /// ways to sign in it offers (which front ends show as actions), and what to do.
    pub(super) fn auth_required_detail(&self, agent_said: &str) -> String {
        let actions = self.identity.auth_methods.as_deref().unwrap_or_default();
        let mut out = format!("it answered \"{agent_said}\"");
        if actions.is_empty() {
            out.push_str(
                " and offers no way to sign in that ACP Desk can start: sign in as the agent's documentation says, then try again",
            );
        } else {
            let list: Vec<String> = actions
                .iter()
                .map(|a| format!("\"{}\" ({})", a.name, a.how.describe()))
                .collect();
            out.push_str(&format!(
                ". Sign in with {}, then try again",
                list.join(", ")
            ));
        }
        if let Some(p) = &self.handshake.key_problem {
            out.push_str(&format!(" (the stored API key could not be read: {p})"));
        }
        out
    }

    /// The start ran out of time while the agent was signing the user in: said as such.
    pub(super) fn authenticate_timed_out(&self) -> Option<String> {
        self.handshake.authenticating.as_ref().map(|a| {
            format!(
                "signing in with \"{}\" did not finish within {} minutes: try again",
                a.name,
                auth::AUTHENTICATE_TIMEOUT.as_secs() / 60
            )
        })
    }
}
