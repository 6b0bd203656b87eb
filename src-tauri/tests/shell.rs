//! The shell on Tauri's mock runtime (no display): commands answer through real IPC, errors
//! cross as `{code, message}`; and sessions with the real demo agent (built by
//! `cargo build --workspace --bins`), attached views getting the snapshot and then live frames.

// Test helpers too: a panic with the error is exactly the failure report wanted here.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_desk_core::StreamEvent;
use acp_desk_core::events::PermissionResolution;
use acp_desk_core::hub::{FrameSink, StreamFrame};
use acp_desk_shell::sessions::Sessions;
use acp_desk_shell::{Launch, build_app};
use serde_json::{Value, json};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{INVOKE_KEY, get_ipc_response, mock_builder, mock_context, noop_assets};
use tauri::webview::InvokeRequest;

/// Settings, rules and audit logs of this test process only, never the user's real folders.
fn isolated() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
        // SAFETY: set once, before any session starts, by whichever test comes first; every test
        // reads the same values.
        unsafe {
            std::env::set_var("ACP_DESK_CONFIG_DIR", dir.path().join("config"));
            std::env::set_var("ACP_DESK_DATA_DIR", dir.path().join("data"));
        }
        std::fs::write(
            dir.path().join("config/settings.json"),
            r#"{"agent_servers": {"broken": {"command": "/nonexistent/agent"}}}"#,
        )
        .unwrap();
        dir
    })
    .path()
}

fn invoke(
    webview: &tauri::WebviewWindow<tauri::test::MockRuntime>,
    cmd: &str,
    args: Value,
) -> Result<Value, Value> {
    get_ipc_response(
        webview,
        InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            // tauri://localhost is the app's own origin on Linux.
            url: "tauri://localhost".parse().unwrap(),
            body: InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|b| b.deserialize::<Value>().unwrap())
}

fn mock_app(
    launch: Launch,
) -> (
    tauri::App<tauri::test::MockRuntime>,
    tauri::WebviewWindow<tauri::test::MockRuntime>,
) {
    isolated();
    let app = build_app(mock_builder(), launch)
        .build(mock_context(noop_assets()))
        .unwrap();
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    (app, webview)
}

#[test]
fn app_info_names_the_folder_and_agent_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let launch = Launch::parse([
        "--agent".to_string(),
        "demo".into(),
        dir.path().display().to_string(),
    ]);
    let (_app, webview) = mock_app(launch);
    let info = invoke(&webview, "app_info", json!({})).unwrap();
    assert_eq!(info["initialFolder"], dir.path().display().to_string());
    assert_eq!(info["initialAgent"], "demo");
    let agents = info["agents"]["agents"].as_array().unwrap();
    assert_eq!(agents[0]["id"], "demo");
    assert!(agents.iter().any(|a| a["id"] == "claude"));
}

#[test]
fn errors_cross_as_code_and_message() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "x").unwrap();
    let (_app, webview) = mock_app(Launch::default());
    let err = invoke(
        &webview,
        "open_session",
        json!({"folder": file.display().to_string(), "agent": "demo"}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "not-a-folder");
    assert!(err["message"].as_str().unwrap().contains("is a file"));
    let err = invoke(
        &webview,
        "open_session",
        json!({"folder": dir.path().display().to_string(), "agent": "no-such-agent"}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "agent-unknown");
    let err = invoke(&webview, "cancel", json!({"session": "s99"})).unwrap_err();
    assert_eq!(err["code"], "session-unknown");
    let err = invoke(
        &webview,
        "open_session",
        json!({"folder": dir.path().join("gone").display().to_string(), "agent": "demo"}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "folder-missing");
}

#[test]
fn every_command_is_granted_to_the_main_window() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let set = std::fs::read_to_string(format!("{root}/permissions/app-commands.toml")).unwrap();
    for name in acp_desk_shell::commands::COMMAND_NAMES {
        let perm = format!("\"allow-{}\"", name.replace('_', "-"));
        assert!(
            set.contains(&perm),
            "permissions/app-commands.toml lacks {perm}"
        );
    }
    let cap = std::fs::read_to_string(format!("{root}/capabilities/default.json")).unwrap();
    let cap: Value = serde_json::from_str(&cap).unwrap();
    let perms = cap["permissions"].as_array().unwrap();
    assert!(perms.contains(&json!("allow-app-commands")));
    // Nothing that reaches the disk or runs programs from the webview.
    for p in perms {
        let p = p.as_str().unwrap();
        for banned in ["fs:", "shell:", "http:", "opener:"] {
            assert!(!p.starts_with(banned), "the window must not get {p}");
        }
    }
}

#[test]
fn the_app_and_the_cli_share_one_identifier() {
    let conf = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../tauri.conf.json"))
        .unwrap();
    let conf: Value = serde_json::from_str(&conf).unwrap();
    assert_eq!(conf["identifier"], acp_desk_core::paths::APP_IDENTIFIER);
}

#[derive(Clone, Default)]
struct View(Arc<Mutex<Vec<StreamFrame>>>);

impl FrameSink for View {
    fn send(&self, frame: StreamFrame) -> bool {
        self.0.lock().unwrap().push(frame);
        true
    }
}

impl View {
    fn events(&self) -> Vec<StreamEvent> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .flat_map(|f| f.events.clone())
            .collect()
    }
    fn text(&self) -> String {
        self.events()
            .iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

async fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !ok() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_with_the_demo_agent_streams_to_views_attached_before_and_after() {
    isolated();
    let dir = tempfile::tempdir().unwrap();
    let sessions = Sessions::default();
    let info = sessions
        .open(&dir.path().display().to_string(), "demo")
        .unwrap();
    let early = View::default();
    sessions.attach(&info.id, Box::new(early.clone())).unwrap();
    // Prompting before the agent is ready says so instead of queueing.
    let ready = || {
        early.events().iter().any(|e| {
            matches!(e, StreamEvent::SessionStatus { status, .. }
                if *status == acp_desk_core::events::SessionState::Ready)
        })
    };
    wait_for("ready", ready).await;
    let end = sessions.prompt(&info.id, "stream".into()).await.unwrap();
    assert_eq!(
        end.reason,
        acp_desk_core::events::TurnEndReason::Completed,
        "{end:?}"
    );
    wait_for("the turn-end frame", || {
        early
            .events()
            .iter()
            .any(|e| matches!(e, StreamEvent::TurnEnd { .. }))
    })
    .await;
    let late = View::default();
    sessions.attach(&info.id, Box::new(late.clone())).unwrap();
    let frames = late.0.lock().unwrap().clone();
    assert!(frames[0].snapshot, "a late view starts with the snapshot");
    assert_eq!(late.text(), early.text());
    assert!(early.text().contains("ledgerline"));
    // (How frames merge is the hub's unit tests' business: here the agent streams slower than
    // the frame interval, so any count would be a statement about timing.)

    // A permission request, answered through the shell.
    let id = info.id.clone();
    let prompt = sessions.prompt(&id, "permission".into());
    tokio::pin!(prompt);
    let request = loop {
        tokio::select! {
            r = &mut prompt => panic!("the turn ended before asking: {r:?}"),
            () = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
        let asked = early.events().into_iter().find_map(|e| match e {
            StreamEvent::AgentPrompt(p) => Some(p),
            _ => None,
        });
        if let Some(p) = asked {
            break p;
        }
    };
    let allow = request
        .options
        .iter()
        .find(|o| o.kind == acp_desk_core::schema::v1::PermissionOptionKind::AllowOnce)
        .unwrap();
    sessions
        .respond(
            &id,
            &request.tool_call_id,
            PermissionResolution::selected(allow.option_id.to_string()),
        )
        .await
        .unwrap();
    let end = prompt.await.unwrap();
    assert_eq!(end.reason, acp_desk_core::events::TurnEndReason::Completed);
    // Answering again is a clear error.
    let again = sessions
        .respond(
            &id,
            &request.tool_call_id,
            PermissionResolution::selected(allow.option_id.to_string()),
        )
        .await
        .unwrap_err();
    assert!(matches!(
        again,
        acp_desk_shell::ipc::IpcError::PermissionUnknown(_)
    ));

    let pid = sessions.pid(&id).unwrap();
    sessions.close_all().await;
    assert!(sessions.is_empty());
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists() || is_zombie(pid),
        "the agent ended with its session"
    );
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_cannot_start_says_why_to_the_view() {
    // The settings of `isolated()` define an agent named `broken`.
    isolated();
    let dir = tempfile::tempdir().unwrap();
    let sessions = Sessions::default();
    let info = sessions
        .open(&dir.path().display().to_string(), "broken")
        .unwrap();
    let view = View::default();
    sessions.attach(&info.id, Box::new(view.clone())).unwrap();
    wait_for("an error event", || {
        view.events()
            .iter()
            .any(|e| matches!(e, StreamEvent::Error { .. }))
    })
    .await;
    wait_for("the session is dead", || {
        view.events().iter().any(|e| {
            matches!(e, StreamEvent::SessionStatus { status, detail: Some(d), .. }
                if *status == acp_desk_core::events::SessionState::Dead && d.contains("/nonexistent/agent"))
        })
    })
    .await;
    let err = sessions.prompt(&info.id, "hi".into()).await.unwrap_err();
    assert!(
        matches!(err, acp_desk_shell::ipc::IpcError::AgentUnavailable(_)),
        "{err:?}"
    );
    assert!(err.to_string().contains("/nonexistent/agent"), "{err}");
}
