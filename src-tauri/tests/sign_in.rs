//! The sign-in commands through real IPC on Tauri's mock runtime, against the demo agent's auth
//! scenarios (configured in the settings as the user would): an API key for a session (stored
//! in the keychain only, the held prompt sent once signed in), an agent method and an API key
//! from the Agents view (no session), and every refusal with its code and what to do. No
//! answer or error carries the key.

#![allow(clippy::unwrap_used)] // test code: a panic with the error is the failure report

use std::sync::Arc;

use acp_desk_core::events::TurnEndReason;
use acp_desk_core::secrets::{Keychain, MemoryKeychain, SecretError, SecretRef, SecretValue};
use acp_desk_core::{StreamEvent, schema::v1 as acp};
use acp_desk_shell::{AppState, Launch, build_app_with};
use serde_json::{Value, json};
use tauri::Manager;
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{
    INVOKE_KEY, MockRuntime, get_ipc_response, mock_builder, mock_context, noop_assets,
};
use tauri::webview::InvokeRequest;

mod support;
use support::wait_for;

const RIGHT_KEY: &str = "sk-shell-RIGHT-4d2b";
const WRONG_KEY: &str = "sk-shell-WRONG-9e1c";

/// Config and data folders of this test process only, with the settings naming the demo agent
/// in three auth scenarios, and one keychain for the commands and every session.
fn isolated() -> &'static (tempfile::TempDir, Arc<MemoryKeychain>) {
    static DIR: std::sync::OnceLock<(tempfile::TempDir, Arc<MemoryKeychain>)> =
        std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        // SAFETY: set once, before the app starts, by whichever test comes first.
        unsafe {
            std::env::set_var("ACP_DESK_CONFIG_DIR", dir.path().join("config"));
            std::env::set_var("ACP_DESK_DATA_DIR", dir.path().join("data"));
        }
        let demo = acp_desk_core::agents::demo_agent_path()
            .filter(|p| p.is_file())
            .expect("the demo agent is missing: run `cargo build --workspace --bins` first");
        let auth = dir.path().join("auth");
        let auth_prompt = dir.path().join("auth-prompt");
        let entry = |methods: &str, at: &str, auth: &std::path::Path| {
            json!({
                "command": demo.display().to_string(),
                "env": {
                    "ACP_DESK_DEMO_AUTH": methods,
                    "ACP_DESK_DEMO_AUTH_AT": at,
                    "ACP_DESK_DEMO_AUTH_DIR": auth.display().to_string(),
                    "ACP_DESK_DEMO_API_KEY": RIGHT_KEY,
                }
            })
        };
        let settings = json!({"agent_servers": {
            "demo-key": entry("api-key", "new", &auth),
            "demo-login": entry("agent,terminal", "new", &auth),
            "demo-prompt": entry("agent", "prompt", &auth_prompt),
        }});
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
        std::fs::write(
            dir.path().join("config/settings.json"),
            settings.to_string(),
        )
        .unwrap();
        let keychain = Arc::new(MemoryKeychain::new());
        acp_desk_core::session::set_default_keychain(keychain.clone());
        (dir, keychain)
    })
}

type Webview = tauri::WebviewWindow<MockRuntime>;

fn app(keychain: Arc<dyn Keychain>) -> (tauri::App<MockRuntime>, Webview) {
    let app = build_app_with(mock_builder(), Launch::default(), keychain)
        .build(mock_context(noop_assets()))
        .unwrap();
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    (app, webview)
}

fn invoke(webview: &Webview, cmd: &str, args: Value) -> Result<Value, Value> {
    get_ipc_response(
        webview,
        InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            url: "tauri://localhost".parse().unwrap(),
            body: InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|b| b.deserialize::<Value>().unwrap())
}

fn no_key(v: &Value) {
    let s = v.to_string();
    assert!(
        !s.contains(RIGHT_KEY) && !s.contains(WRONG_KEY),
        "a key crossed: {s}"
    );
}

fn turns_of(thread: &[StreamEvent], text: &str) -> usize {
    thread
        .iter()
        .filter(|e| {
            matches!(e, StreamEvent::TurnStart { prompt, .. }
                if prompt.iter().any(|b| matches!(b, acp::ContentBlock::Text(t) if t.text == text)))
        })
        .count()
}

fn completed(thread: &[StreamEvent]) -> bool {
    thread.iter().any(|e| {
        matches!(
            e,
            StreamEvent::TurnEnd {
                reason: TurnEndReason::Completed,
                ..
            }
        )
    })
}

#[test]
fn an_api_key_signs_a_session_in_and_its_held_prompt_goes_through_once() {
    let (_, keychain) = isolated();
    let (app, webview) = app(keychain.clone());
    let project = tempfile::tempdir().unwrap();
    let folder = project.path().canonicalize().unwrap().display().to_string();
    let info = invoke(
        &webview,
        "open_session",
        json!({"folder": folder, "agent": "demo-key"}),
    )
    .unwrap();
    let id = info["id"].as_str().unwrap().to_owned();
    let state = app.state::<AppState>();
    let registry = || state.sessions.registry();
    tauri::async_runtime::block_on(async {
        assert!(registry().started(&id).await.is_err());
        registry().wait_ended(&id).await.unwrap();
    });

    // What the window sends wrong, refused with what to do; nothing stored.
    let e = invoke(
        &webview,
        "sign_in_api_key",
        json!({"target": {"sessionId": id}, "methodId": "demo-api-key", "key": "  "}),
    )
    .unwrap_err();
    assert_eq!(e["code"], "invalid-input", "{e}");
    let e = invoke(
        &webview,
        "sign_in_agent",
        json!({"sessionId": id, "methodId": "demo-api-key"}),
    )
    .unwrap_err();
    assert_eq!(e["code"], "invalid-input", "{e}");
    assert!(e["message"].as_str().unwrap().contains("API key"), "{e}");
    let e = invoke(
        &webview,
        "sign_in_api_key",
        json!({"target": {"sessionId": id}, "methodId": "no-such", "key": RIGHT_KEY}),
    )
    .unwrap_err();
    assert_eq!(e["code"], "invalid-input", "{e}");
    no_key(&e);
    let e = invoke(
        &webview,
        "sign_in_agent",
        json!({"sessionId": "s99", "methodId": "demo-login"}),
    )
    .unwrap_err();
    assert_eq!(e["code"], "session-unknown", "{e}");
    assert!(keychain.list().unwrap().is_empty());

    // The window held a prompt while the start failed: kept, then sent once signed in.
    invoke(
        &webview,
        "sign_in_keep_prompt",
        json!({"sessionId": id, "parts": [{"type": "text", "text": "held prompt"}]}),
    )
    .unwrap();
    let answer = invoke(
        &webview,
        "sign_in_api_key",
        json!({"target": {"sessionId": id}, "methodId": "demo-api-key", "key": RIGHT_KEY}),
    )
    .unwrap();
    no_key(&answer);
    assert_eq!(answer["session"]["id"], id.as_str(), "{answer}");
    assert_eq!(answer["resendsPrompt"], true, "{answer}");
    let stored = SecretRef::new("agent-auth/demo-key/demo-api-key").unwrap();
    assert_eq!(keychain.get(&stored).unwrap().unwrap().expose(), RIGHT_KEY);
    tauri::async_runtime::block_on(async {
        registry().started(&id).await.unwrap();
        wait_for("the held prompt's turn", || {
            completed(&registry().snapshot(&id).unwrap())
        })
        .await;
    });
    let thread = registry().snapshot(&id).unwrap();
    assert_eq!(turns_of(&thread, "held prompt"), 1);
    no_key(&serde_json::to_value(&thread).unwrap());
    tauri::async_runtime::block_on(registry().close_all());
}

#[test]
fn the_agents_view_signs_in_without_a_session_and_says_what_the_agent_said() {
    let (_, keychain) = isolated();
    let (app, webview) = app(keychain.clone());

    let e = invoke(
        &webview,
        "agent_sign_in",
        json!({"agent": "no-such-agent", "methodId": "x"}),
    )
    .unwrap_err();
    assert_eq!(e["code"], "agent-unknown", "{e}");
    let e = invoke(
        &webview,
        "agent_sign_in",
        json!({"agent": "demo-login", "methodId": "demo-terminal-login"}),
    )
    .unwrap_err();
    assert!(
        e["message"].as_str().unwrap().contains("terminal"),
        "a terminal method says to use the login terminal: {e}"
    );
    let answer = invoke(
        &webview,
        "agent_sign_in",
        json!({"agent": "demo-login", "methodId": "demo-login"}),
    )
    .unwrap();
    assert!(
        answer["message"]
            .as_str()
            .unwrap()
            .starts_with("Signed in to demo-login"),
        "{answer}"
    );
    assert!(answer["actions"].as_array().unwrap().len() >= 2, "{answer}");

    // A key the agent refuses stays stored, and the error says how to replace it.
    let e = invoke(
        &webview,
        "sign_in_api_key",
        json!({"target": {"agent": "demo-key"}, "methodId": "demo-api-key", "key": WRONG_KEY}),
    )
    .unwrap_err();
    no_key(&e);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("replace"),
        "{e}"
    );
    assert_eq!(e["code"], "auth-required", "{e}");
    let stored = SecretRef::new("agent-auth/demo-key/demo-api-key").unwrap();
    assert_eq!(keychain.get(&stored).unwrap().unwrap().expose(), WRONG_KEY);
    let answer = invoke(
        &webview,
        "sign_in_api_key",
        json!({"target": {"agent": "demo-key"}, "methodId": "demo-api-key", "key": RIGHT_KEY}),
    )
    .unwrap();
    no_key(&answer);
    assert!(
        answer["message"].as_str().unwrap().contains("accepted"),
        "{answer}"
    );
    assert_eq!(keychain.get(&stored).unwrap().unwrap().expose(), RIGHT_KEY);
    drop(app);
}

#[test]
fn an_agent_method_signs_a_session_in_and_the_prompt_that_hit_the_login_goes_through() {
    let (_, keychain) = isolated();
    let (app, webview) = app(keychain.clone());
    let project = tempfile::tempdir().unwrap();
    let folder = project.path().canonicalize().unwrap().display().to_string();
    let info = invoke(
        &webview,
        "open_session",
        json!({"folder": folder, "agent": "demo-prompt"}),
    )
    .unwrap();
    let id = info["id"].as_str().unwrap().to_owned();
    let state = app.state::<AppState>();
    let registry = || state.sessions.registry();
    tauri::async_runtime::block_on(async { registry().started(&id).await.unwrap() });
    let e = invoke(
        &webview,
        "prompt",
        json!({"session": id, "parts": [{"type": "text", "text": "hit the login"}]}),
    );
    // The turn ends with the agent's auth-required error (the command answers the turn's end).
    assert!(e.as_ref().is_ok_and(|v| v["reason"] == "error"), "{e:?}");
    let e = invoke(
        &webview,
        "sign_in_agent",
        json!({"sessionId": id, "methodId": "no-such"}),
    )
    .unwrap_err();
    assert_eq!(e["code"], "invalid-input", "{e}");
    let answer = invoke(
        &webview,
        "sign_in_agent",
        json!({"sessionId": id, "methodId": "demo-login"}),
    )
    .unwrap();
    assert_eq!(answer["session"]["id"], id.as_str(), "{answer}");
    assert_eq!(answer["resendsPrompt"], true, "{answer}");
    tauri::async_runtime::block_on(async {
        registry().started(&id).await.unwrap();
        wait_for("the prompt sent again", || {
            completed(&registry().snapshot(&id).unwrap())
        })
        .await;
    });
    assert_eq!(
        turns_of(&registry().snapshot(&id).unwrap(), "hit the login"),
        2
    );
    tauri::async_runtime::block_on(registry().close_all());
}

/// A keychain with no service behind it (Linux without a Secret Service).
struct NoKeychain;

impl Keychain for NoKeychain {
    fn get(&self, _: &SecretRef) -> Result<Option<SecretValue>, SecretError> {
        Err(gone())
    }
    fn set(&self, _: &SecretRef, _: &SecretValue) -> Result<(), SecretError> {
        Err(gone())
    }
    fn delete(&self, _: &SecretRef) -> Result<bool, SecretError> {
        Err(gone())
    }
    fn list(&self) -> Result<Vec<SecretRef>, SecretError> {
        Err(gone())
    }
}

fn gone() -> SecretError {
    SecretError::NoService {
        detail: "org.freedesktop.secrets is not provided".into(),
    }
}

#[test]
fn without_a_keychain_the_key_is_refused_with_what_to_do() {
    isolated();
    let (_app, webview) = app(Arc::new(NoKeychain));
    let e = invoke(
        &webview,
        "sign_in_api_key",
        json!({"target": {"agent": "demo-key"}, "methodId": "demo-api-key", "key": RIGHT_KEY}),
    )
    .unwrap_err();
    assert_eq!(e["code"], "keychain-unavailable", "{e}");
    let m = e["message"].as_str().unwrap();
    assert!(
        m.contains("Secret Service") && m.contains("not stored"),
        "{m}"
    );
    no_key(&e);
}
