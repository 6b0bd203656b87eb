//! Signing in, engine side, against the real demo agent's sign-in scenarios
//! (`ACP_DESK_DEMO_AUTH`, crates/acp-desk-demo-agent/README.md): the agent method, the API key
//! on a first and a second start, a wrong key, terminal methods (actions, never `authenticate`d),
//! auth-required at `session/new` and at a prompt. What reached the agent is read from its own
//! record (`ACP_DESK_DEMO_RECORD`); keys come from a `MemoryKeychain`.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use acp_desk_core::StreamEvent;
use acp_desk_core::agents::LaunchSpec;
use acp_desk_core::auth::{AuthAction, AuthHow, api_key_ref, login_spec};
use acp_desk_core::events::TurnEndReason;
use acp_desk_core::secrets::{EnvValue, Keychain, MemoryKeychain, SecretValue};
use acp_desk_core::session::{self, EngineError, SessionOptions, text_block};
use common::{channel, demo, opts};
use serde_json::Value;

const KEY: &str = "sk-demo-engine-test-42";

struct Rig {
    dir: tempfile::TempDir,
}

impl Rig {
    fn new() -> Rig {
        Rig {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn record(&self) -> PathBuf {
        self.dir.path().join("record.jsonl")
    }

    fn auth_dir(&self) -> PathBuf {
        self.dir.path().join("auth")
    }

    /// The demo agent playing `methods`, sign-in wanted `at`, recording what it receives.
    fn agent(&self, methods: &str, at: &str) -> LaunchSpec {
        let mut spec = demo(&[]);
        let plain = |k: &str, v: &str| (k.to_owned(), EnvValue::Plain(v.to_owned()));
        spec.env = vec![
            plain("ACP_DESK_DEMO_AUTH", methods),
            plain("ACP_DESK_DEMO_AUTH_AT", at),
            plain("ACP_DESK_DEMO_AUTH_DIR", self.auth_dir().to_str().unwrap()),
            plain("ACP_DESK_DEMO_API_KEY", KEY),
            plain("ACP_DESK_DEMO_RECORD", self.record().to_str().unwrap()),
        ];
        spec
    }

    fn options(&self, keychain: &Arc<MemoryKeychain>) -> SessionOptions {
        let mut o = opts(self.dir.path());
        o.keychain = Some(keychain.clone());
        o
    }

    /// The methods of what reached the agent, in order, and the `authenticate` params.
    fn received(&self) -> (Vec<String>, Vec<Value>) {
        let text = std::fs::read_to_string(self.record()).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let methods = lines
            .iter()
            .map(|l| l["method"].as_str().unwrap().to_owned())
            .collect();
        let auths = lines
            .iter()
            .filter(|l| l["method"] == "authenticate")
            .map(|l| l["params"].clone())
            .collect();
        (methods, auths)
    }
}

fn the_key_stored(value: &str) -> Arc<MemoryKeychain> {
    let kc = Arc::new(MemoryKeychain::new());
    kc.set(
        &api_key_ref("demo", "demo-api-key").unwrap(),
        &SecretValue::new(value.to_owned()),
    )
    .unwrap();
    kc
}

/// `agent.authMethods` of the last `session-status` that had them.
fn actions(evs: &[StreamEvent]) -> Vec<AuthAction> {
    evs.iter()
        .rev()
        .find_map(|e| match e {
            StreamEvent::SessionStatus { agent: Some(a), .. } => a.auth_methods.clone(),
            _ => None,
        })
        .unwrap_or_default()
}

async fn start_fails(spec: LaunchSpec, o: SessionOptions) -> (EngineError, Vec<StreamEvent>) {
    let (tx, events) = channel();
    let Err(e) = session::start(spec, o, tx).await else {
        panic!("the start should fail")
    };
    (e, events.all().await)
}

async fn start_ok(spec: LaunchSpec, o: SessionOptions) {
    let (tx, events) = channel();
    let handle = session::start(spec, o, tx)
        .await
        .unwrap_or_else(|e| panic!("the start should succeed: {e}"));
    handle.close().await;
    drop(handle);
    let evs = events.all().await;
    assert!(
        !serde_json::to_string(&evs).unwrap().contains(KEY),
        "the key is in the events"
    );
}

#[tokio::test]
async fn the_agent_method_signs_in_once_and_the_agent_remembers() {
    let rig = Rig::new();
    let kc = Arc::new(MemoryKeychain::new());
    let (e, evs) = start_fails(rig.agent("agent", "new"), rig.options(&kc)).await;
    let EngineError::AuthRequired(detail) = &e else {
        panic!("{e:?}")
    };
    assert!(
        detail.contains("\"Demo login\" (the agent signs you in)"),
        "{detail}"
    );
    assert_eq!(actions(&evs)[0].how, AuthHow::Agent);

    let mut o = rig.options(&kc);
    o.authenticate = Some("demo-login".into());
    start_ok(rig.agent("agent", "new"), o).await;
    // The agent keeps its own sign-in (its marker): the next start needs none.
    start_ok(rig.agent("agent", "new"), rig.options(&kc)).await;
    let (methods, auths) = rig.received();
    assert_eq!(
        methods,
        ["session/new", "authenticate", "session/new", "session/new"]
    );
    assert_eq!(auths, [serde_json::json!({"methodId": "demo-login"})]);
}

#[tokio::test]
async fn the_stored_api_key_is_sent_on_a_first_and_a_second_start() {
    let rig = Rig::new();
    let kc = the_key_stored(KEY);
    start_ok(rig.agent("api-key", "new"), rig.options(&kc)).await;
    start_ok(rig.agent("api-key", "new"), rig.options(&kc)).await;
    let (methods, auths) = rig.received();
    assert_eq!(
        methods,
        ["authenticate", "session/new", "authenticate", "session/new"],
        "before session/new, on every start (the agent keeps it in memory only)"
    );
    for a in &auths {
        assert_eq!(a["methodId"], "demo-api-key");
        assert_eq!(a["_meta"]["api-key"], KEY);
    }
}

#[tokio::test]
async fn a_wrong_key_fails_the_start_with_what_to_do_and_no_key() {
    let rig = Rig::new();
    let wrong = "sk-demo-wrong-key-77";
    let kc = the_key_stored(wrong);
    let (e, evs) = start_fails(rig.agent("api-key", "new"), rig.options(&kc)).await;
    let message = e.to_string();
    assert!(matches!(e, EngineError::AuthRequired(_)), "{e:?}");
    assert!(
        message.contains("refused the API key stored for \"Use a demo API key\"")
            && message.contains("acp-desk-cli auth demo --method demo-api-key"),
        "{message}"
    );
    let all = format!("{message} {}", serde_json::to_string(&evs).unwrap());
    assert!(!all.contains(wrong) && !all.contains(KEY), "{all}");
    let (methods, _) = rig.received();
    assert_eq!(methods, ["authenticate"], "no session/new after a refusal");
}

#[tokio::test]
async fn terminal_methods_are_actions_never_authenticated() {
    let rig = Rig::new();
    let kc = Arc::new(MemoryKeychain::new());
    let spec = rig.agent("terminal,terminal-meta", "new");
    let (e, evs) = start_fails(spec.clone(), rig.options(&kc)).await;
    assert!(matches!(e, EngineError::AuthRequired(_)), "{e:?}");
    // Both are offered: we advertised `auth.terminal` and `_meta["terminal-auth"]`.
    let got = actions(&evs);
    let ids: Vec<&str> = got.iter().map(|a| a.method_id.as_str()).collect();
    assert_eq!(ids, ["demo-terminal-login", "demo-meta-login"]);
    let typed = login_spec(&got[0], &spec).unwrap();
    assert_eq!(typed.command, spec.command);
    assert_eq!(typed.args, ["login"]);
    assert!(!typed.differs_from_launch);
    assert!(
        typed
            .env
            .iter()
            .any(|(k, v)| k == "ACP_DESK_DEMO_LOGIN_METHOD"
                && *v == EnvValue::Plain("demo-terminal-login".into()))
    );
    let meta = login_spec(&got[1], &spec).unwrap();
    assert!(meta.differs_from_launch, "{meta:?}");
    assert_eq!(meta.label, "Demo terminal login");

    // Asked to authenticate one anyway: refused before anything reaches the agent.
    let mut o = rig.options(&kc);
    o.authenticate = Some("demo-terminal-login".into());
    let (e, _) = start_fails(spec.clone(), o).await;
    assert!(
        matches!(&e, EngineError::StartFailed(m) if m.contains("login in a terminal")),
        "{e:?}"
    );
    let (methods, auths) = rig.received();
    assert!(auths.is_empty(), "authenticate was sent: {auths:?}");
    assert_eq!(methods, ["session/new"]);

    // What a terminal login leaves behind (the marker) signs the agent in.
    std::fs::create_dir_all(rig.auth_dir()).unwrap();
    std::fs::write(rig.auth_dir().join("signed-in"), "demo-terminal-login\n").unwrap();
    start_ok(spec, rig.options(&kc)).await;
}

#[tokio::test]
async fn auth_required_at_a_prompt_then_signed_in() {
    let rig = Rig::new();
    let kc = Arc::new(MemoryKeychain::new());
    let (tx, mut events) = channel();
    let handle = session::start(rig.agent("agent", "prompt"), rig.options(&kc), tx)
        .await
        .unwrap();
    let outcome = handle.prompt(vec![text_block("refuse")]).await.unwrap();
    assert_eq!(outcome.reason, TurnEndReason::Error);
    let mut seen = Vec::new();
    let ev = events
        .until(&mut seen, |e| matches!(e, StreamEvent::Error { .. }))
        .await;
    let StreamEvent::Error { error, .. } = ev else {
        unreachable!()
    };
    assert_eq!(
        error.kind(),
        acp_desk_core::error_kind::ErrorKind::AuthRequired
    );
    assert!(
        error.message.contains("Sign in with \"Demo login\""),
        "{}",
        error.message
    );
    handle.close().await;
    drop(handle);
    drop(events);

    let mut o = rig.options(&kc);
    o.authenticate = Some("demo-login".into());
    let (tx, _events) = channel();
    let handle = session::start(rig.agent("agent", "prompt"), o, tx)
        .await
        .unwrap();
    let outcome = handle.prompt(vec![text_block("refuse")]).await.unwrap();
    assert_eq!(
        outcome.stop_reason,
        Some(acp_desk_core::schema::v1::StopReason::Refusal),
        "the agent played the prompt"
    );
    handle.close().await;
}

#[tokio::test]
async fn list_only_starts_send_the_key_before_ready() {
    let rig = Rig::new();
    let kc = the_key_stored(KEY);
    let mut o = rig.options(&kc);
    o.opening = session::Opening::ListOnly;
    start_ok(rig.agent("api-key", "new"), o).await;
    let (_, auths) = rig.received();
    assert_eq!(auths.len(), 1);
    assert_eq!(auths[0]["_meta"]["api-key"], KEY);
}

#[tokio::test]
async fn check_shows_how_to_sign_in_and_a_refused_stored_key() {
    use acp_desk_core::agents::{CheckLimits, check};
    let rig = Rig::new();
    // Check reads the process's keychain (the OS's in the CLI and the shell).
    let wrong = "sk-demo-check-wrong-9";
    assert!(session::set_default_keychain(the_key_stored(wrong)));
    let limits = CheckLimits {
        initialize: std::time::Duration::from_secs(20),
    };
    let report = check(&rig.agent("api-key,agent", "new"), rig.dir.path(), limits).await;
    let hows: Vec<&AuthHow> = report.auth_methods.iter().map(|m| &m.how).collect();
    assert_eq!(
        hows,
        [
            &AuthHow::ApiKey {
                provider: Some("demo".into())
            },
            &AuthHow::Agent
        ]
    );
    assert!(!report.ok);
    let f = report.failure.as_ref().unwrap();
    assert!(
        f.message.contains("refused the API key") && f.fix.contains("acp-desk-cli auth demo"),
        "{f:?}"
    );
    let all = serde_json::to_string(&report).unwrap();
    assert!(!all.contains(wrong), "{all}");
}

/// The terminal login a front end runs (`login_spec`) in a real pty, the code typed on its
/// keyboard: exit 0 signs the agent in, and the next start needs nothing; a wrong code exits 1.
#[cfg(unix)]
#[tokio::test]
async fn a_terminal_login_typed_in_a_pty_signs_the_agent_in() {
    use std::io::{Read, Write};

    use portable_pty::{CommandBuilder, PtySize, native_pty_system};

    /// Runs `spec` in a pty, types `typed` once the prompt shows; its exit code and output.
    fn run_login(spec: &acp_desk_core::auth::LoginSpec, typed: &str) -> (u32, String) {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 24,
                cols: 100,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(&spec.command);
        cmd.args(&spec.args);
        for (k, v) in &spec.env {
            match v {
                EnvValue::Plain(v) => cmd.env(k, v),
                EnvValue::Secret(_) => panic!("no secrets in this launch"),
            }
        }
        let mut child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let mut writer = pair.master.take_writer().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let mut seen = String::new();
        let deadline = std::time::Instant::now() + common::HANG;
        while !seen.contains("Enter the login code") {
            let chunk = rx
                .recv_timeout(deadline - std::time::Instant::now())
                .unwrap_or_else(|_| panic!("no prompt; the terminal showed: {seen}"));
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        writer.write_all(typed.as_bytes()).unwrap();
        writer.flush().unwrap();
        let code = child.wait().unwrap().exit_code();
        drop(pair.master);
        while let Ok(chunk) = rx.recv_timeout(std::time::Duration::from_millis(500)) {
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        (code, seen)
    }

    let rig = Rig::new();
    let kc = Arc::new(MemoryKeychain::new());
    let spec = rig.agent("terminal,terminal-meta", "new");
    let (_, evs) = start_fails(spec.clone(), rig.options(&kc)).await;
    let got = actions(&evs);
    for (i, action) in got.iter().enumerate() {
        let login = login_spec(action, &spec).unwrap();
        let (code, shown) = run_login(&login, "not-the-code\r");
        assert_eq!(code, 1, "{shown}");
        assert!(!rig.auth_dir().join("signed-in").exists());
        let (code, shown) = run_login(&login, "demo\r");
        assert_eq!(code, 0, "{} ({i}): {shown}", action.method_id);
        let marker = std::fs::read_to_string(rig.auth_dir().join("signed-in")).unwrap();
        assert_eq!(
            marker.trim(),
            action.method_id,
            "the method's env reached it"
        );
        start_ok(spec.clone(), rig.options(&kc)).await;
        std::fs::remove_file(rig.auth_dir().join("signed-in")).unwrap();
    }
    let (_, auths) = rig.received();
    assert!(auths.is_empty(), "authenticate was sent: {auths:?}");
}
