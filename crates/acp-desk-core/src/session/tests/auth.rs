//! Signing in during the start (signin.rs) against a scripted peer: the chosen method, the stored
//! API key on every start, refusals, the bounds, and that the key reaches nothing but the
//! `authenticate` request.

use std::sync::{Arc, Mutex};

use super::*;
use crate::auth::api_key_ref;
use crate::secrets::{Keychain, MemoryKeychain, SecretError, SecretRef, SecretValue};

const KEY: &str = "sk-test-0123456789-very-secret";

fn init_with_methods(methods: Value) -> Value {
    json!({"protocolVersion": 1, "agentCapabilities": {}, "authMethods": methods})
}

/// A Gemini-like agent: an API-key method, a browser login, a terminal login.
fn gemini_like() -> Value {
    json!([
        {"id": "oauth-personal", "name": "Log in with Google"},
        {"id": "gemini-api-key", "name": "Use Gemini API key", "_meta": {"api-key": {"provider": "google"}}},
        {"id": "tui", "name": "Terminal login", "type": "terminal", "args": ["--login"]}
    ])
}

fn keychain_with_key() -> Arc<MemoryKeychain> {
    let kc = Arc::new(MemoryKeychain::new());
    kc.set(
        &api_key_ref("scripted", "gemini-api-key").unwrap(),
        &SecretValue::new(KEY.to_owned()),
    )
    .unwrap();
    kc
}

/// Log lines of every level written while `f` runs on this thread (the owner runs here too:
/// `#[tokio::test]` is single-threaded).
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    fn install(&self) -> tracing::subscriber::DefaultGuard {
        let logs = self.clone();
        let sub = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(move || logs.clone())
            .finish();
        tracing::subscriber::set_default(sub)
    }
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

fn assert_no_key(what: &str, text: &str) {
    assert!(!text.contains(KEY), "the key is in {what}: {text}");
}

#[tokio::test(start_paused = true)]
async fn we_advertise_terminal_auth_both_ways() {
    let (mut rig, _started) = rig(|_| {});
    let init = rig.peer.expect("initialize").await;
    let caps = &init["params"]["clientCapabilities"];
    assert_eq!(caps["auth"]["terminal"], true, "{caps}");
    assert_eq!(caps["_meta"]["terminal-auth"], true, "{caps}");
}

#[tokio::test(start_paused = true)]
async fn the_chosen_agent_method_is_authenticated_before_session_new() {
    let (mut rig, started) = rig(|o| o.authenticate = Some("oauth-personal".into()));
    let init = rig.peer.expect("initialize").await;
    rig.peer
        .respond(&init, init_with_methods(gemini_like()))
        .await;
    let auth = rig.peer.expect("authenticate").await;
    assert_eq!(auth["params"], json!({"methodId": "oauth-personal"}));
    // The user is in a browser: far longer than the start's budget (120 s) is fine.
    tokio::time::sleep(Duration::from_secs(200)).await;
    rig.peer.respond(&auth, json!({})).await;
    let new = rig.peer.expect("session/new").await;
    rig.peer.respond(&new, json!({"sessionId": "acp-1"})).await;
    let handle = started.await.unwrap().unwrap();
    let evs = rig.events_until("session-status:ready").await;
    let notices: Vec<String> = evs
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Notice { title, .. } => Some(title.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        notices,
        [
            "Signing in with \"Log in with Google\"…",
            "Signed in with \"Log in with Google\"."
        ]
    );
    handle.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_chosen_sign_in_that_never_finishes_ends_after_its_own_bound() {
    let (mut rig, started) = rig(|o| {
        o.authenticate = Some("oauth-personal".into());
        o.start_timeout = Duration::from_secs(10);
    });
    let began = tokio::time::Instant::now();
    let init = rig.peer.expect("initialize").await;
    rig.peer
        .respond(&init, init_with_methods(gemini_like()))
        .await;
    rig.peer.expect("authenticate").await;
    let err = started.await.unwrap().err().unwrap();
    assert!(began.elapsed() >= crate::auth::AUTHENTICATE_TIMEOUT);
    assert_eq!(
        err,
        EngineError::StartFailed(
            "signing in with \"Log in with Google\" did not finish within 5 minutes: try again"
                .into()
        )
    );
}

#[tokio::test(start_paused = true)]
async fn a_refused_or_unknown_or_terminal_choice_fails_the_start_saying_which() {
    // Refused with -32000: auth-required, the method and the agent's words.
    let (mut rig, started) = rig(|o| o.authenticate = Some("oauth-personal".into()));
    let init = rig.peer.expect("initialize").await;
    rig.peer
        .respond(&init, init_with_methods(gemini_like()))
        .await;
    let auth = rig.peer.expect("authenticate").await;
    rig.peer
        .respond_error(&auth, -32000, "Login cancelled in the browser")
        .await;
    let err = started.await.unwrap().err().unwrap();
    let EngineError::AuthRequired(detail) = &err else {
        panic!("{err:?}")
    };
    assert!(
        detail.contains("Log in with Google") && detail.contains("Login cancelled in the browser"),
        "{detail}"
    );
    let evs = rig.rest().await;
    assert_eq!(
        error_kinds(&evs),
        [crate::error_kind::ErrorKind::AuthRequired]
    );
    assert_eq!(rig.peer.rest_until_closed().await, Vec::<Value>::new());

    // Not offered, or a terminal login: nothing is sent after initialize.
    for (id, words) in [
        ("nope", "does not offer the sign-in method `nope`"),
        ("tui", "is a login in a terminal"),
    ] {
        let (mut rig, started) = super::rig(|o| o.authenticate = Some(id.into()));
        let init = rig.peer.expect("initialize").await;
        rig.peer
            .respond(&init, init_with_methods(gemini_like()))
            .await;
        let err = started.await.unwrap().err().unwrap();
        assert!(
            matches!(&err, EngineError::StartFailed(m) if m.contains(words)),
            "{err:?}"
        );
        assert_eq!(rig.peer.rest_until_closed().await, Vec::<Value>::new());
    }
}

#[tokio::test(start_paused = true)]
async fn a_stored_api_key_is_sent_before_new_and_nowhere_else() {
    let logs = Logs::default();
    let _guard = logs.install();
    let kc = keychain_with_key();
    let (mut rig, started) = rig(|o| o.keychain = Some(kc.clone()));
    let init = rig.peer.expect("initialize").await;
    rig.peer
        .respond(&init, init_with_methods(gemini_like()))
        .await;
    let auth = rig.peer.expect("authenticate").await;
    assert_eq!(
        auth["params"],
        json!({"methodId": "gemini-api-key", "_meta": {"api-key": KEY}})
    );
    rig.peer.respond(&auth, json!({})).await;
    let new = rig.peer.expect("session/new").await;
    rig.peer.respond(&new, json!({"sessionId": "acp-1"})).await;
    let handle = started.await.unwrap().unwrap();
    assert_no_key("the start trace", &format!("{:?}", handle.start_trace()));
    handle.close().await;
    let evs = rig.rest().await;
    assert_no_key("the events", &serde_json::to_string(&evs).unwrap());
    assert!(
        !evs.iter().any(|e| matches!(e, StreamEvent::Notice { .. })),
        "a key sent on every start is no news: {evs:?}"
    );
    assert_no_key("the logs", &logs.text());
}

#[tokio::test(start_paused = true)]
async fn the_key_is_sent_before_ready_for_list_only_resume_and_load_too() {
    let kc = keychain_with_key();
    let (mut rig, started) = rig(|o| {
        o.keychain = Some(kc.clone());
        o.opening = Opening::ListOnly;
    });
    let init = rig.peer.expect("initialize").await;
    rig.peer
        .respond(&init, init_with_methods(gemini_like()))
        .await;
    let auth = rig.peer.expect("authenticate").await;
    assert_eq!(auth["params"]["_meta"]["api-key"], KEY);
    rig.peer.respond(&auth, json!({})).await;
    let handle = started.await.unwrap().unwrap();
    handle.close().await;

    let (mut rig, started) = super::rig(|o| {
        o.keychain = Some(kc.clone());
        o.opening = Opening::Continue {
            session_id: "ours".into(),
            acp_session_id: Some("acp-1".into()),
            via: ContinueVia::Auto,
        };
    });
    let init = rig.peer.expect("initialize").await;
    let mut answer = init_with_methods(gemini_like());
    answer["agentCapabilities"] = json!({"sessionCapabilities": {"resume": {}}});
    rig.peer.respond(&init, answer).await;
    let auth = rig.peer.expect("authenticate").await;
    rig.peer.respond(&auth, json!({})).await;
    let resume = rig.peer.expect("session/resume").await;
    rig.peer.respond(&resume, json!({})).await;
    started.await.unwrap().unwrap().close().await;

    // And before session/load, for an agent that only loads.
    let (mut rig, started) = super::rig(|o| {
        o.keychain = Some(kc.clone());
        o.opening = Opening::Continue {
            session_id: "ours".into(),
            acp_session_id: Some("acp-1".into()),
            via: ContinueVia::Auto,
        };
    });
    let init = rig.peer.expect("initialize").await;
    let mut answer = init_with_methods(gemini_like());
    answer["agentCapabilities"] = json!({"loadSession": true});
    rig.peer.respond(&init, answer).await;
    let auth = rig.peer.expect("authenticate").await;
    assert_eq!(auth["params"]["_meta"]["api-key"], KEY);
    rig.peer.respond(&auth, json!({})).await;
    let load = rig.peer.expect("session/load").await;
    assert_eq!(load["params"]["sessionId"], "acp-1");
    rig.peer.respond(&load, json!({})).await;
    started.await.unwrap().unwrap().close().await;
}

#[tokio::test(start_paused = true)]
async fn without_a_stored_key_nothing_is_sent() {
    let (mut rig, started) = rig(|o| o.keychain = Some(Arc::new(MemoryKeychain::new())));
    let init = rig.peer.expect("initialize").await;
    rig.peer
        .respond(&init, init_with_methods(gemini_like()))
        .await;
    let new = rig.peer.expect("session/new").await;
    rig.peer
        .respond_error(&new, -32000, "Gemini API key is missing")
        .await;
    let err = started.await.unwrap().err().unwrap();
    let EngineError::AuthRequired(detail) = &err else {
        panic!("{err:?}")
    };
    // The agent's words, then every way it offers (front ends show them as actions).
    assert_eq!(
        detail,
        "it answered \"Gemini API key is missing\". Sign in with \"Log in with Google\" (the agent signs you in), \"Use Gemini API key\" (an API key), \"Terminal login\" (a login in a terminal), then try again"
    );
    assert!(!err.to_string().contains("own command"), "{err}");
}

#[tokio::test(start_paused = true)]
async fn a_refused_key_fails_the_start_saying_how_to_replace_it_without_the_key() {
    let logs = Logs::default();
    let _guard = logs.install();
    let kc = keychain_with_key();
    let (mut rig, started) = rig(|o| o.keychain = Some(kc.clone()));
    let init = rig.peer.expect("initialize").await;
    rig.peer
        .respond(&init, init_with_methods(gemini_like()))
        .await;
    let auth = rig.peer.expect("authenticate").await;
    // An agent that echoes what it was given.
    rig.peer
        .respond_error(&auth, -32000, &format!("API key not valid: {KEY}"))
        .await;
    let err = started.await.unwrap().err().unwrap();
    let EngineError::AuthRequired(detail) = &err else {
        panic!("{err:?}")
    };
    assert!(
        detail.contains("refused the API key stored for \"Use Gemini API key\"")
            && detail.contains("[the key]")
            && detail.contains("acp-desk-cli auth scripted --method gemini-api-key"),
        "{detail}"
    );
    assert_no_key("the error", &err.to_string());
    let evs = rig.rest().await;
    assert_no_key("the events", &serde_json::to_string(&evs).unwrap());
    assert_eq!(rig.peer.rest_until_closed().await, Vec::<Value>::new());
    assert_no_key("the logs", &logs.text());
}

/// A keychain that cannot be read: the agent still starts, and the problem is said.
struct Broken;

impl Keychain for Broken {
    fn get(&self, _: &SecretRef) -> Result<Option<SecretValue>, SecretError> {
        Err(SecretError::Backend {
            detail: "the keyring is locked".into(),
        })
    }
    fn set(&self, _: &SecretRef, _: &SecretValue) -> Result<(), SecretError> {
        unreachable!("the engine never stores")
    }
    fn delete(&self, _: &SecretRef) -> Result<bool, SecretError> {
        unreachable!("the engine never deletes")
    }
    fn list(&self) -> Result<Vec<SecretRef>, SecretError> {
        Ok(Vec::new())
    }
}

/// A keychain that does not answer for a while (an unlock prompt nobody answers); says when it
/// was asked.
struct Slow(tokio::sync::mpsc::UnboundedSender<()>);

impl Keychain for Slow {
    fn get(&self, _: &SecretRef) -> Result<Option<SecretValue>, SecretError> {
        let _ = self.0.send(());
        std::thread::sleep(Duration::from_millis(1500));
        Ok(Some(SecretValue::new(KEY.to_owned())))
    }
    fn set(&self, _: &SecretRef, _: &SecretValue) -> Result<(), SecretError> {
        unreachable!("the engine never stores")
    }
    fn delete(&self, _: &SecretRef) -> Result<bool, SecretError> {
        unreachable!("the engine never deletes")
    }
    fn list(&self) -> Result<Vec<SecretRef>, SecretError> {
        Ok(Vec::new())
    }
}

#[tokio::test(start_paused = true)]
async fn an_unreadable_or_silent_keychain_starts_the_agent_without_the_key_and_says_so() {
    let (asked_tx, mut asked) = tokio::sync::mpsc::unbounded_channel();
    for (keychain, words) in [
        (
            Arc::new(Broken) as Arc<dyn Keychain>,
            "the keyring is locked",
        ),
        (
            Arc::new(Slow(asked_tx)) as Arc<dyn Keychain>,
            "did not answer within 20 s",
        ),
    ] {
        let slow = words.contains("20 s");
        let (mut rig, started) = rig(|o| o.keychain = Some(keychain));
        let init = rig.peer.expect("initialize").await;
        rig.peer
            .respond(&init, init_with_methods(gemini_like()))
            .await;
        if slow {
            // The paused clock does not run on while a blocking read is under way: moved by hand.
            asked.recv().await.unwrap();
            tokio::time::advance(crate::auth::KEY_READ_TIMEOUT + Duration::from_secs(1)).await;
        }
        let new = rig.peer.expect("session/new").await;
        rig.peer
            .respond_error(&new, -32000, "Authentication required")
            .await;
        let err = started.await.unwrap().err().unwrap();
        let EngineError::AuthRequired(detail) = &err else {
            panic!("{err:?}")
        };
        assert!(
            detail.contains("the stored API key could not be read") && detail.contains(words),
            "{detail}"
        );
        let evs = rig.rest().await;
        let warned = evs.iter().any(|e| {
            matches!(e, StreamEvent::Notice { title, .. }
            if title.contains("without its stored API key"))
        });
        assert!(warned, "{evs:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_prompts_auth_required_names_the_ways_to_sign_in() {
    let (mut rig, started) = rig(|_| {});
    let init = rig.peer.expect("initialize").await;
    rig.peer
        .respond(
            &init,
            init_with_methods(json!([{"id": "claude-login", "name": "Log in with Claude Code",
                "_meta": {"terminal-auth": {"command": "node", "args": ["cli.js"], "label": "Claude Login"}}}])),
        )
        .await;
    let new = rig.peer.expect("session/new").await;
    rig.peer.respond(&new, json!({"sessionId": "acp-1"})).await;
    let handle = started.await.unwrap().unwrap();
    let turn = tokio::spawn({
        let h = handle.clone();
        async move { h.prompt(vec![text_block("hi")]).await }
    });
    let prompt = rig.peer.expect("session/prompt").await;
    rig.peer
        .respond_error(&prompt, -32000, "Authentication required")
        .await;
    assert_eq!(turn.await.unwrap().unwrap().reason, TurnEndReason::Error);
    let evs = rig.events_until("turn-end:error").await;
    assert_eq!(
        error_messages(&evs),
        [
            "the agent needs you to sign in: it answered \"Authentication required\". Sign in with \"Log in with Claude Code\" (a login in a terminal), then try again."
        ]
    );
    assert_eq!(
        error_kinds(&evs),
        [crate::error_kind::ErrorKind::AuthRequired]
    );
    handle.close().await;
    // A terminal method is never passed to authenticate.
    let rest = rig.peer.rest_until_closed().await;
    assert!(
        !rest.iter().any(|m| m["method"] == "authenticate"),
        "{rest:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn choosing_the_api_key_method_sends_the_stored_key_or_says_to_enter_it() {
    let kc = keychain_with_key();
    let (mut rig, started) = rig(|o| {
        o.keychain = Some(kc.clone());
        o.authenticate = Some("gemini-api-key".into());
    });
    let init = rig.peer.expect("initialize").await;
    rig.peer
        .respond(&init, init_with_methods(gemini_like()))
        .await;
    let auth = rig.peer.expect("authenticate").await;
    assert_eq!(auth["params"]["_meta"]["api-key"], KEY);
    rig.peer.respond(&auth, json!({})).await;
    let new = rig.peer.expect("session/new").await;
    rig.peer.respond(&new, json!({"sessionId": "acp-1"})).await;
    started.await.unwrap().unwrap().close().await;

    let (mut rig, started) = super::rig(|o| {
        o.keychain = Some(Arc::new(MemoryKeychain::new()));
        o.authenticate = Some("gemini-api-key".into());
    });
    let init = rig.peer.expect("initialize").await;
    rig.peer
        .respond(&init, init_with_methods(gemini_like()))
        .await;
    let err = started.await.unwrap().err().unwrap();
    assert_eq!(
        err,
        EngineError::AuthRequired(
            "no API key could be used for \"Use Gemini API key\": none is stored in the keychain. Enter it with Sign in… in the window or `acp-desk-cli auth scripted --method gemini-api-key`, then start the agent again".into()
        )
    );
    assert_eq!(rig.peer.rest_until_closed().await, Vec::<Value>::new());
}
