//! Terminal logins through the shell's commands on Tauri's mock runtime, with the real demo
//! agent (`ACP_DESK_DEMO_AUTH`, its `login` subcommand reading a code from its terminal) and the
//! real supervisor (built by `cargo build --workspace --bins`), Linux: a session that needs a
//! login fails with auth-required, `login_start` runs the agent's terminal method, keys sent
//! with `login_input` reach the program, a wrong code exits 1 and leaves the session as it
//! was, the right code exits 0 and the session restarts signed in; Cancel and the app's end
//! leave no process behind; what is refused says why.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)] // test code: a panic with the error is the failure report

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod support;
use support::wait_for;

use acp_desk_core::StreamEvent;
use acp_desk_core::events::SessionState;
use acp_desk_core::secrets::{EnvValue, MemoryKeychain};
use acp_desk_shell::login::{LoginFrame, LoginStarted, LoginTarget, Logins};
use acp_desk_shell::{AppState, Launch, build_app_with};
use serde_json::{Value, json};
use tauri::Manager;
use tauri::ipc::{CallbackFn, Channel, InvokeBody, InvokeResponseBody};
use tauri::test::{
    INVOKE_KEY, MockRuntime, get_ipc_response, mock_builder, mock_context, noop_assets,
};
use tauri::webview::InvokeRequest;

const CODE: &str = "open-sesame-7";
const DEADLINE: Duration = Duration::from_secs(30);

/// Config and data folders of this test process only, and the demo agent's sign-in scenario:
/// a terminal method, a `_meta` one (another command than the launch) and an agent one, asked
/// for at `session/new`, with this binary's code. Each session gets its own marker folder
/// (`spec_in`); the process's own is the agent-target test's.
fn isolated() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        // SAFETY: set once, before the app starts, by whichever test comes first.
        unsafe {
            std::env::set_var("ACP_DESK_CONFIG_DIR", dir.path().join("config"));
            std::env::set_var("ACP_DESK_DATA_DIR", dir.path().join("data"));
            std::env::set_var("ACP_DESK_DEMO_AUTH", "terminal,terminal-meta,agent");
            std::env::set_var("ACP_DESK_DEMO_AUTH_AT", "new");
            std::env::set_var("ACP_DESK_DEMO_AUTH_DIR", dir.path().join("agent-target"));
            std::env::set_var("ACP_DESK_DEMO_LOGIN_CODE", CODE);
        }
        dir
    })
    .path()
}

type App = (tauri::App<MockRuntime>, tauri::WebviewWindow<MockRuntime>);

fn app() -> App {
    isolated();
    let app = build_app_with(
        mock_builder(),
        Launch::default(),
        Arc::new(MemoryKeychain::new()),
    )
    .build(mock_context(noop_assets()))
    .unwrap();
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    (app, webview)
}

fn invoke(
    webview: &tauri::WebviewWindow<MockRuntime>,
    cmd: &str,
    args: Value,
) -> Result<Value, Value> {
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

/// The demo agent with its sign-in marker in `marker` (a folder of the test's own).
fn spec_in(marker: &Path) -> acp_desk_core::agents::LaunchSpec {
    let mut spec = acp_desk_app::resolve_agent("demo").unwrap();
    spec.env.push((
        "ACP_DESK_DEMO_AUTH_DIR".into(),
        EnvValue::Plain(marker.display().to_string()),
    ));
    spec
}

/// A channel whose frames the test reads, as the window's `Channel` would get them.
fn frames() -> (Channel<LoginFrame>, Arc<Mutex<Vec<Value>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let sink = got.clone();
    let channel = Channel::new(move |body| {
        let v: Value = match body {
            InvokeResponseBody::Json(s) => serde_json::from_str(&s).unwrap(),
            InvokeResponseBody::Raw(b) => serde_json::from_slice(&b).unwrap(),
        };
        sink.lock().unwrap().push(v);
        Ok(())
    });
    (channel, got)
}

fn output_of(frames: &[Value]) -> String {
    frames
        .iter()
        .filter(|f| f["kind"] == "output")
        .filter_map(|f| f["data"].as_str())
        .collect()
}

fn exit_of(frames: &[Value]) -> Option<Value> {
    frames.iter().find(|f| f["kind"] == "exit").cloned()
}

async fn start(
    app: &App,
    target: LoginTarget,
    method: &str,
    consent: bool,
) -> Result<(LoginStarted, Arc<Mutex<Vec<Value>>>), acp_desk_shell::ipc::IpcError> {
    let (channel, got) = frames();
    let started = acp_desk_shell::login::login_start(
        app.0.handle().clone(),
        target,
        method.into(),
        100,
        30,
        consent,
        channel,
    )
    .await?;
    Ok((started, got))
}

async fn until_output(got: &Arc<Mutex<Vec<Value>>>, want: &str) {
    let g = got.clone();
    let w = want.to_owned();
    wait_for(&format!("the login to print {want:?}"), move || {
        output_of(&g.lock().unwrap()).contains(&w)
    })
    .await;
}

async fn until_exit(got: &Arc<Mutex<Vec<Value>>>) -> Value {
    let g = got.clone();
    wait_for("the login's exit frame", move || {
        exit_of(&g.lock().unwrap()).is_some()
    })
    .await;
    let frames = got.lock().unwrap().clone();
    // The exit is the last frame, and there is one.
    assert_eq!(frames.last().unwrap()["kind"], "exit", "{frames:?}");
    assert_eq!(frames.iter().filter(|f| f["kind"] == "exit").count(), 1);
    exit_of(&frames).unwrap()
}

fn thread(app: &App, id: &str) -> Vec<StreamEvent> {
    let state = app.0.state::<AppState>();
    state.sessions.registry().snapshot(id).unwrap_or_default()
}

/// Whether the session's latest status is `state`.
fn last_status(app: &App, id: &str) -> Option<SessionState> {
    thread(app, id).iter().rev().find_map(|e| match e {
        StreamEvent::SessionStatus { status, .. } => Some(*status),
        _ => None,
    })
}

/// A session of the demo agent that failed at `session/new` with auth-required.
async fn session_needing_login(app: &App, marker: &Path) -> String {
    let folder = tempfile::tempdir().unwrap().keep().canonicalize().unwrap();
    let state = app.0.state::<AppState>();
    let info = state.sessions.open_checked(folder, spec_in(marker), "demo");
    let id = info.id.clone();
    wait_for("the session to fail with auth-required", || {
        last_status(app, &id) == Some(SessionState::Dead)
    })
    .await;
    let t = thread(app, &id);
    let errors: Vec<Value> = t
        .iter()
        .filter(|e| matches!(e, StreamEvent::Error { .. }))
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    assert!(
        errors.iter().any(|e| e["error"]["kind"] == "auth-required"),
        "{errors:?}"
    );
    info.id
}

fn alive(pid: u32) -> bool {
    acp_desk_core::process::is_running(pid)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_code_exits_1_and_the_right_one_signs_the_session_in() {
    let app = app();
    let marker = tempfile::tempdir().unwrap();
    let id = session_needing_login(&app, marker.path()).await;
    let target = LoginTarget::Session {
        session_id: id.clone(),
    };

    // The wrong code: exit 1, said so, nothing restarted, no marker.
    let (started, got) = start(&app, target.clone(), "demo-terminal-login", false)
        .await
        .unwrap();
    assert_eq!(started.label, "Log in in a terminal");
    assert!(
        started.command_shown.ends_with("acp-desk-demo-agent login"),
        "{}",
        started.command_shown
    );
    until_output(&got, "Enter the login code").await;
    let r = invoke(
        &app.1,
        "login_input",
        json!({"loginId": started.login_id, "data": "wrong\r"}),
    );
    assert!(r.is_ok(), "{r:?}");
    let exit = until_exit(&got).await;
    assert_eq!(exit["exitCode"], 1, "{exit}");
    assert_eq!(exit["cancelled"], false);
    assert_eq!(exit["restarted"], false);
    assert!(output_of(&got.lock().unwrap()).contains("Wrong code"));
    assert!(!marker.path().join("signed-in").exists());
    assert_eq!(last_status(&app, &id), Some(SessionState::Dead));
    // The ended login is gone: its id is refused, saying what to do.
    let r = invoke(
        &app.1,
        "login_input",
        json!({"loginId": started.login_id, "data": "x"}),
    );
    let e = r.unwrap_err();
    assert_eq!(e["code"], "invalid-input");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("start the sign-in again"),
        "{e}"
    );

    // The right code, typed a key at a time as xterm.js sends them: exit 0, the session
    // restarts and is ready.
    let (started, got) = start(&app, target, "demo-terminal-login", false)
        .await
        .unwrap();
    until_output(&got, "Enter the login code").await;
    for key in CODE.chars().map(String::from).chain(["\r".to_owned()]) {
        invoke(
            &app.1,
            "login_input",
            json!({"loginId": started.login_id, "data": key}),
        )
        .unwrap();
    }
    let exit = until_exit(&got).await;
    assert_eq!(exit["exitCode"], 0, "{exit}");
    assert_eq!(exit["restarted"], true, "{exit}");
    assert!(exit.get("restartError").is_none(), "{exit}");
    assert!(marker.path().join("signed-in").exists());
    wait_for("the session to be ready, signed in", || {
        last_status(&app, &id) == Some(SessionState::Ready)
    })
    .await;
    assert!(app.0.state::<Logins>().is_empty());
    app.0.state::<AppState>().sessions.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_ends_the_logins_whole_tree_and_says_cancelled() {
    let app = app();
    let marker = tempfile::tempdir().unwrap();
    let id = session_needing_login(&app, marker.path()).await;
    let (started, got) = start(
        &app,
        LoginTarget::Session { session_id: id },
        "demo-terminal-login",
        false,
    )
    .await
    .unwrap();
    until_output(&got, "Enter the login code").await;
    let root = app.0.state::<Logins>().pids();
    assert_eq!(root.len(), 1);
    let tree: Vec<u32> = std::iter::once(root[0] as i32)
        .chain(acp_desk_core::supervisor::live_descendants(root[0] as i32))
        .map(|p| p as u32)
        .collect();
    assert!(tree.len() >= 2, "the supervisor and the login: {tree:?}");
    // A resize of the running login is fine; a nonsense one says what is wrong.
    invoke(
        &app.1,
        "login_resize",
        json!({"loginId": started.login_id, "cols": 120, "rows": 40}),
    )
    .unwrap();
    let e = invoke(
        &app.1,
        "login_resize",
        json!({"loginId": started.login_id, "cols": 0, "rows": 0}),
    )
    .unwrap_err();
    assert!(e["message"].as_str().unwrap().contains("too small"), "{e}");

    invoke(&app.1, "login_cancel", json!({"loginId": started.login_id})).unwrap();
    let exit = until_exit(&got).await;
    assert_eq!(exit["cancelled"], true, "{exit}");
    assert_eq!(exit["restarted"], false, "{exit}");
    assert!(
        exit.get("exitCode").is_none() || exit["exitCode"] != 0,
        "{exit}"
    );
    wait_for("the login's tree to end", || {
        tree.iter().all(|p| !alive(*p))
    })
    .await;
    // Cancel after the end: no error (the user's click raced the exit).
    invoke(&app.1, "login_cancel", json!({"loginId": started.login_id})).unwrap();
    assert!(!marker.path().join("signed-in").exists());
    app.0.state::<AppState>().sessions.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_apps_end_ends_every_running_login() {
    let app = app();
    let marker = tempfile::tempdir().unwrap();
    let id = session_needing_login(&app, marker.path()).await;
    let target = LoginTarget::Session { session_id: id };
    let (_a, got_a) = start(&app, target.clone(), "demo-terminal-login", false)
        .await
        .unwrap();
    let (_b, got_b) = start(&app, target, "demo-terminal-login", false)
        .await
        .unwrap();
    until_output(&got_a, "Enter the login code").await;
    until_output(&got_b, "Enter the login code").await;
    let roots = app.0.state::<Logins>().pids();
    assert_eq!(roots.len(), 2);
    let tree: Vec<u32> = roots
        .iter()
        .flat_map(|&r| {
            std::iter::once(r as i32).chain(acp_desk_core::supervisor::live_descendants(r as i32))
        })
        .map(|p| p as u32)
        .collect();
    // What RunEvent::Exit, a reload and the window's close run.
    tokio::time::timeout(DEADLINE, acp_desk_shell::login::end_all(app.0.handle()))
        .await
        .unwrap();
    wait_for("every login's tree to end", || {
        tree.iter().all(|p| !alive(*p))
    })
    .await;
    for got in [got_a, got_b] {
        let exit = until_exit(&got).await;
        assert_eq!(exit["cancelled"], true, "{exit}");
    }
    wait_for("the logins to be forgotten", || {
        app.0.state::<Logins>().is_empty()
    })
    .await;
    app.0.state::<AppState>().sessions.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_is_not_a_terminal_login_or_lacks_consent_is_refused_saying_why() {
    let app = app();
    let marker = tempfile::tempdir().unwrap();
    let id = session_needing_login(&app, marker.path()).await;
    let target = LoginTarget::Session { session_id: id };

    let e = start(&app, target.clone(), "no-such-method", false)
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(
        matches!(e, acp_desk_shell::ipc::IpcError::InvalidInput(_)),
        "{e:?}"
    );
    assert!(
        text.contains("no-such-method") && text.contains("demo-terminal-login"),
        "{text}"
    );

    let e = start(&app, target.clone(), "demo-login", false)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("not a terminal login"), "{e}");

    // The `_meta` method names another command than the launch: not without consent, and the
    // message names what would run.
    let e = start(&app, target.clone(), "demo-meta-login", false)
        .await
        .unwrap_err();
    assert!(
        matches!(e, acp_desk_shell::ipc::IpcError::ConsentNeeded(_)),
        "{e:?}"
    );
    assert!(e.to_string().contains("sh -c"), "{e}");
    assert!(app.0.state::<Logins>().is_empty(), "nothing ran");
    // With it, it runs; its code signs in too.
    let (started, got) = start(&app, target, "demo-meta-login", true).await.unwrap();
    assert_eq!(started.label, "Demo terminal login");
    until_output(&got, "Enter the login code").await;
    invoke(
        &app.1,
        "login_input",
        json!({"loginId": started.login_id, "data": format!("{CODE}\r")}),
    )
    .unwrap();
    let exit = until_exit(&got).await;
    assert_eq!(exit["exitCode"], 0, "{exit}");
    let marked = std::fs::read_to_string(marker.path().join("signed-in")).unwrap();
    assert!(
        marked.contains("demo-meta-login"),
        "the method's env reached it: {marked}"
    );

    let e = invoke(
        &app.1,
        "login_start",
        json!({"target": {"sessionId": "s999"}, "methodId": "x", "cols": 80, "rows": 24, "consent": false, "output": "__CHANNEL__:1"}),
    )
    .unwrap_err();
    assert_eq!(e["code"], "session-unknown", "{e}");
    app.0.state::<AppState>().sessions.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_target_is_asked_by_a_check_and_restarts_nothing() {
    let app = app();
    let marker: PathBuf = isolated().join("agent-target");
    let (started, got) = start(
        &app,
        LoginTarget::Agent {
            agent: "demo".into(),
        },
        "demo-terminal-login",
        false,
    )
    .await
    .unwrap();
    until_output(&got, "Enter the login code").await;
    invoke(
        &app.1,
        "login_input",
        json!({"loginId": started.login_id, "data": format!("{CODE}\r")}),
    )
    .unwrap();
    let exit = until_exit(&got).await;
    assert_eq!(exit["exitCode"], 0, "{exit}");
    assert_eq!(exit["restarted"], false, "no session to restart: {exit}");
    assert!(marker.join("signed-in").exists());
    let e = start(
        &app,
        LoginTarget::Agent {
            agent: "no-such-agent-acp-desk".into(),
        },
        "x",
        false,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(e, acp_desk_shell::ipc::IpcError::AgentUnknown(_)),
        "{e:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_in_the_middle_of_a_session_restarts_it_and_the_prompt_goes_through() {
    let app = app();
    let marker = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap().keep().canonicalize().unwrap();
    let mut spec = spec_in(marker.path());
    spec.env.push((
        "ACP_DESK_DEMO_AUTH_AT".into(),
        EnvValue::Plain("prompt".into()),
    ));
    let state = app.0.state::<AppState>();
    let id = state.sessions.open_checked(folder, spec, "demo").id;
    state.sessions.registry().started(&id).await.unwrap();
    let agent = state.sessions.pid(&id).unwrap();
    // The session opened; its first prompt hits the login.
    let said = state
        .sessions
        .prompt(
            &id,
            vec![acp_desk_shell::ipc::PromptPart::Text {
                text: "hello after the login".into(),
            }],
        )
        .await;
    assert!(
        matches!(
            &said,
            Ok(acp_desk_shell::ipc::TurnEnd {
                reason: acp_desk_core::events::TurnEndReason::Error,
                ..
            })
        ),
        "{said:?}"
    );
    wait_for("the turn's auth-required error in the thread", || {
        serde_json::to_string(&thread(&app, &id))
            .unwrap()
            .contains("auth-required")
    })
    .await;
    let (started, got) = start(
        &app,
        LoginTarget::Session {
            session_id: id.clone(),
        },
        "demo-terminal-login",
        false,
    )
    .await
    .unwrap();
    until_output(&got, "Enter the login code").await;
    invoke(
        &app.1,
        "login_input",
        json!({"loginId": started.login_id, "data": format!("{CODE}\r")}),
    )
    .unwrap();
    let exit = until_exit(&got).await;
    assert_eq!(exit["exitCode"], 0, "{exit}");
    assert_eq!(exit["restarted"], true, "{exit}");
    // The running agent was ended and a new one started, signed in; the kept prompt is sent
    // again and its turn completes.
    wait_for("the old agent to end", || !alive(agent)).await;
    wait_for("the kept prompt's turn to complete", || {
        thread(&app, &id).iter().any(|e| {
            let v = serde_json::to_value(e).unwrap();
            v["kind"] == "turn-end" && v["reason"] == "completed"
        })
    })
    .await;
    app.0.state::<AppState>().sessions.close_all().await;
}
