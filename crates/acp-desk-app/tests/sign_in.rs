//! Signing in through the app layer against the demo agent's auth scenarios
//! (`ACP_DESK_DEMO_AUTH`, `_AUTH_AT`, `_AUTH_DIR`, `_API_KEY`): an `agent` method when
//! `session/new` and when a prompt says auth-required, the kept prompt sent once after the
//! sign-in and never twice, an API key stored (a `MemoryKeychain` through
//! `SessionOptions.keychain`) and sent on a first and a second start, a refused key keeping
//! the prompt, and sign-in without a session (the Agents view). Every test also checks that no
//! key text reached the events, the history, the audit log, the state file or a log line.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_desk_app::sign_in::{self, offered_actions};
use acp_desk_app::state::StateRecorder;
use acp_desk_app::{AppError, HistoryRecorder, OpenRequest, Registry};
use acp_desk_core::agents::LaunchSpec;
use acp_desk_core::auth::AuthHow;
use acp_desk_core::error_kind::ErrorKind;
use acp_desk_core::events::{NoticeSource, SessionState, TurnEndReason};
use acp_desk_core::schema::v1 as acp;
use acp_desk_core::secrets::{Keychain, MemoryKeychain, SecretValue};
use acp_desk_core::{StreamEvent, text_block};
use acp_desk_store::{LaunchOrigin, RecorderOptions};
use tokio::runtime::Handle;

/// Hang guard: a session that does not get there in this time is a bug, not a slow machine.
const HANG: Duration = Duration::from_secs(60);

/// The key the demo agent wants, and one it refuses: distinctive, so a scan finds any copy.
const RIGHT_KEY: &str = "sk-demo-RIGHT-7f3a91e2";
const WRONG_KEY: &str = "sk-demo-WRONG-c0ffee55";

fn isolated() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("acp-desk-app-sign-in");
        // SAFETY: set once, before any session starts; every test reads the same values.
        unsafe {
            std::env::set_var("ACP_DESK_CONFIG_DIR", dir.join("config"));
            std::env::set_var("ACP_DESK_DATA_DIR", dir.join("data"));
        }
    });
}

/// Every log line of this test process, at every level (nextest runs each test in a process of
/// its own).
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn logs() -> Logs {
    static LOGS: std::sync::OnceLock<Logs> = std::sync::OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Logs::default();
        let writer = logs.clone();
        let _ = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(move || writer.clone())
            .try_init();
        logs
    })
    .clone()
}

struct Rig {
    dir: tempfile::TempDir,
    project: PathBuf,
    keychain: Arc<MemoryKeychain>,
    registry: Registry,
    history: Arc<HistoryRecorder>,
    state: Arc<StateRecorder>,
    logs: Logs,
}

impl Rig {
    fn new() -> Self {
        isolated();
        let logs = logs();
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir(&project).unwrap();
        let project = std::fs::canonicalize(project).unwrap();
        std::fs::create_dir(dir.path().join("auth")).unwrap();
        let (history, _) = HistoryRecorder::start(
            dir.path().join("history.sqlite3"),
            RecorderOptions::default(),
        )
        .unwrap();
        let history = Arc::new(history);
        let state = Arc::new(StateRecorder::start(dir.path().join("state.json")).unwrap());
        let registry = Registry::new(Handle::current());
        registry.add_observer(history.clone());
        registry.add_observer(state.clone());
        Rig {
            dir,
            project,
            keychain: Arc::new(MemoryKeychain::new()),
            registry,
            history,
            state,
            logs,
        }
    }

    /// The demo agent in an auth scenario: `auth` (the methods it advertises), `at` (`new` or
    /// `prompt`), signed-in marker in this rig's folder, `ACP_DESK_DEMO_API_KEY` = [`RIGHT_KEY`].
    fn demo(&self, auth: &str, at: &str) -> LaunchSpec {
        let path = acp_desk_core::agents::demo_agent_path()
            .filter(|p| p.is_file())
            .expect("the demo agent is missing: run `cargo build --workspace --bins` first");
        let records = self.dir.path().join("records");
        let env = [
            ("ACP_DESK_DEMO_AUTH", auth.to_owned()),
            ("ACP_DESK_DEMO_AUTH_AT", at.to_owned()),
            (
                "ACP_DESK_DEMO_AUTH_DIR",
                self.dir.path().join("auth").display().to_string(),
            ),
            ("ACP_DESK_DEMO_API_KEY", RIGHT_KEY.to_owned()),
        ];
        LaunchSpec {
            name: "demo".into(),
            command: path.display().to_string(),
            args: vec![
                "--session-dir".into(),
                records.display().to_string(),
                "--session-methods".into(),
                "resume".into(),
            ],
            env: env
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.as_str().into()))
                .collect(),
            cwd: None,
        }
    }

    fn request(&self, spec: LaunchSpec) -> OpenRequest {
        let mut r = OpenRequest::new(self.project.clone(), "demo", spec);
        r.origin = LaunchOrigin::CommandLine;
        r.options.rules_file = None;
        r.options.watch_roots = false;
        r.options.audit_dir = self.dir.path().join("audit");
        r.options.keychain = Some(self.keychain.clone());
        r.options.cancel_grace = Duration::from_secs(2);
        r.options.process.eof_grace = Duration::from_millis(300);
        r.options.process.term_grace = Duration::from_millis(700);
        r
    }

    fn thread(&self, id: &str) -> Vec<StreamEvent> {
        self.registry.snapshot(id).unwrap()
    }

    /// Waits until the session's thread satisfies `ok`.
    async fn until(&self, id: &str, what: &str, ok: impl Fn(&[StreamEvent]) -> bool) {
        let waited = tokio::time::timeout(HANG, async {
            loop {
                if ok(&self.thread(id)) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
        assert!(waited.is_ok(), "never {what}: {:#?}", self.thread(id));
    }

    /// Waits until the restarted agent is ready or dead, and its pump is idle; returns which.
    async fn settled(&self, id: &str) -> SessionState {
        match self.registry.started(id).await {
            Ok(_) => SessionState::Ready,
            Err(_) => {
                self.registry.wait_ended(id).await.unwrap();
                SessionState::Dead
            }
        }
    }

    /// The method id of the first action the agent offered that `pick` takes, once the thread
    /// shows them (the pump may still be handing on the start's events).
    async fn method(&self, id: &str, pick: impl Fn(&AuthHow) -> bool) -> String {
        self.until(id, "said its authMethods", |t| offered_actions(t).is_some())
            .await;
        let actions = offered_actions(&self.thread(id)).unwrap();
        actions
            .into_iter()
            .find(|a| pick(&a.how))
            .unwrap_or_else(|| panic!("no such sign-in method offered"))
            .method_id
    }

    /// Runs one turn and waits until the thread shows its end (the pump hands it on after the
    /// prompt's answer).
    async fn turn(&self, id: &str, text: &str) -> TurnEndReason {
        let before = ends(&self.thread(id));
        let outcome = self
            .registry
            .prompt(id, vec![text_block(text)])
            .await
            .unwrap();
        self.until(id, "showed the turn's end", |t| ends(t) > before)
            .await;
        outcome.reason
    }

    /// Ends everything and checks that no key text is anywhere ACP Desk writes or says.
    async fn close_and_scan(self, ids: &[&str]) {
        let mut said = String::new();
        for id in ids {
            said.push_str(&serde_json::to_string(&self.thread(id)).unwrap());
        }
        self.registry.close_all().await;
        assert!(self.history.finish().is_empty());
        drop(self.state);
        for key in [RIGHT_KEY, WRONG_KEY] {
            assert!(!said.contains(key), "a key is in the thread");
        }
        let mut files = Vec::new();
        walk(self.dir.path(), &mut files);
        let scanned: Vec<_> = files
            .iter()
            .filter(|f| !f.starts_with(self.dir.path().join("records")))
            .collect();
        assert!(
            scanned
                .iter()
                .any(|f| f.to_string_lossy().contains("history")),
            "the history was written: {files:?}"
        );
        if !ids.is_empty() {
            assert!(
                scanned
                    .iter()
                    .any(|f| f.starts_with(self.dir.path().join("audit"))),
                "the audit log was written: {files:?}"
            );
        }
        for f in scanned {
            let bytes = std::fs::read(f).unwrap_or_default();
            for key in [RIGHT_KEY, WRONG_KEY] {
                assert!(
                    !contains(&bytes, key.as_bytes()),
                    "a key is in {}",
                    f.display()
                );
            }
        }
        let logged = self.logs.0.lock().unwrap().clone();
        assert!(!logged.is_empty(), "the logs were captured");
        for key in [RIGHT_KEY, WRONG_KEY] {
            assert!(!contains(&logged, key.as_bytes()), "a key is in the log");
        }
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn text_of(blocks: &[acp::ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            acp::ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

/// How many turns were started with `text`.
fn turns_of(thread: &[StreamEvent], text: &str) -> usize {
    thread
        .iter()
        .filter(|e| matches!(e, StreamEvent::TurnStart { prompt, .. } if text_of(prompt) == text))
        .count()
}

fn ends(thread: &[StreamEvent]) -> usize {
    thread
        .iter()
        .filter(|e| matches!(e, StreamEvent::TurnEnd { .. }))
        .count()
}

fn completed(thread: &[StreamEvent]) -> usize {
    thread
        .iter()
        .filter(|e| {
            matches!(
                e,
                StreamEvent::TurnEnd {
                    reason: TurnEndReason::Completed,
                    ..
                }
            )
        })
        .count()
}

fn resend_notices(thread: &[StreamEvent]) -> Vec<String> {
    thread
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Notice {
                title,
                source: NoticeSource::Client,
                ..
            } if title.starts_with("Signed in.") => Some(title.clone()),
            _ => None,
        })
        .collect()
}

fn auth_required(e: &AppError) -> bool {
    matches!(e, AppError::Engine(err)
        if acp_desk_core::error_kind::of_start_failure(err) == ErrorKind::AuthRequired)
}

fn is_agent(h: &AuthHow) -> bool {
    matches!(h, AuthHow::Agent)
}

fn is_api_key(h: &AuthHow) -> bool {
    matches!(h, AuthHow::ApiKey { .. })
}

/// Gives a wrongly sent second prompt the time to show up.
async fn quiet_period() {
    tokio::time::sleep(Duration::from_millis(700)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_method_at_new_signs_in_and_sends_the_held_prompt_once() {
    tokio::time::timeout(HANG * 3, async {
        let rig = Rig::new();
        let info = rig.registry.open(rig.request(rig.demo("agent", "new")));
        let id = info.id.as_str();
        let Err(failed) = rig.registry.started(id).await else {
            panic!("the start went through without a sign-in")
        };
        assert!(auth_required(&failed), "{failed:?}");
        rig.registry.wait_ended(id).await.unwrap();
        let method = rig.method(id, is_agent).await;
        // The window held this prompt while the start failed, and gave it to keep.
        let held = "held while it started";
        rig.registry
            .keep_prompt(id, vec![text_block(held)])
            .unwrap();
        assert!(rig.registry.kept_prompt(id).unwrap().is_some());

        let again = rig
            .registry
            .restart_signed_in(id, Some(method))
            .await
            .unwrap();
        assert_eq!(
            again.id, id,
            "the same session, so the window keeps its thread"
        );
        assert_eq!(rig.settled(id).await, SessionState::Ready);
        rig.until(id, "sent the held prompt", |t| completed(t) == 1)
            .await;
        let thread = rig.thread(id);
        assert_eq!(turns_of(&thread, held), 1);
        assert_eq!(
            resend_notices(&thread),
            [format!("Signed in. Sending your prompt again: “{held}”")]
        );
        assert_eq!(rig.registry.kept_prompt(id).unwrap(), None);

        // Another restart (signed in already: the marker persists) sends nothing again.
        rig.registry.restart_signed_in(id, None).await.unwrap();
        assert_eq!(rig.settled(id).await, SessionState::Ready);
        quiet_period().await;
        let thread = rig.thread(id);
        assert_eq!(turns_of(&thread, held), 1, "{thread:#?}");
        assert_eq!(resend_notices(&thread).len(), 1);
        rig.close_and_scan(&[id]).await;
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_in_outside_the_app_a_plain_reconnect_sends_the_held_prompt_once() {
    tokio::time::timeout(HANG * 3, async {
        let rig = Rig::new();
        let info = rig.registry.open(rig.request(rig.demo("agent", "new")));
        let id = info.id.as_str();
        assert!(rig.registry.started(id).await.is_err());
        rig.registry.wait_ended(id).await.unwrap();
        let held = "held, then signed in with acp-desk-cli auth";
        rig.registry
            .keep_prompt(id, vec![text_block(held)])
            .unwrap();
        // What `acp-desk-cli auth` leaves behind for the demo agent: its marker.
        let marker = rig.dir.path().join("auth");
        std::fs::create_dir_all(&marker).unwrap();
        std::fs::write(marker.join("signed-in"), "demo-login").unwrap();

        rig.registry.reconnect(id).await.unwrap();
        assert_eq!(rig.settled(id).await, SessionState::Ready);
        rig.until(id, "sent the held prompt", |t| completed(t) == 1)
            .await;
        assert_eq!(rig.registry.kept_prompt(id).unwrap(), None);
        // A later restart does not send it again.
        rig.registry.restart_signed_in(id, None).await.unwrap();
        assert_eq!(rig.settled(id).await, SessionState::Ready);
        quiet_period().await;
        assert_eq!(turns_of(&rig.thread(id), held), 1, "sent once, not twice");
        rig.close_and_scan(&[id]).await;
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_method_at_a_prompt_resends_the_prompt_that_hit_the_login_once() {
    tokio::time::timeout(HANG * 3, async {
        let rig = Rig::new();
        let info = rig.registry.open(rig.request(rig.demo("agent", "prompt")));
        let id = info.id.as_str();
        rig.registry.started(id).await.unwrap();
        let asked = "what hit the login";
        assert_eq!(rig.turn(id, asked).await, TurnEndReason::Error);
        let kept = rig.registry.kept_prompt(id).unwrap().unwrap();
        assert_eq!(text_of(&kept), asked);

        // A method the agent does not offer is refused before anything is restarted.
        let e = rig
            .registry
            .restart_signed_in(id, Some("no-such-method".into()))
            .await
            .unwrap_err();
        assert!(
            matches!(&e, AppError::InvalidInput(m) if m.contains("no-such-method")),
            "{e:?}"
        );
        rig.registry.handle(id).unwrap();

        let method = rig.method(id, is_agent).await;
        rig.registry
            .restart_signed_in(id, Some(method))
            .await
            .unwrap();
        assert_eq!(rig.settled(id).await, SessionState::Ready);
        rig.until(id, "sent the prompt again", |t| completed(t) == 1)
            .await;
        assert_eq!(turns_of(&rig.thread(id), asked), 2);
        assert_eq!(rig.registry.kept_prompt(id).unwrap(), None);

        rig.registry.restart_signed_in(id, None).await.unwrap();
        assert_eq!(rig.settled(id).await, SessionState::Ready);
        quiet_period().await;
        let thread = rig.thread(id);
        assert_eq!(turns_of(&thread, asked), 2, "sent once, not twice");
        assert_eq!(resend_notices(&thread).len(), 1);
        rig.close_and_scan(&[id]).await;
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_key_is_sent_on_every_start_and_a_refused_one_keeps_the_prompt() {
    tokio::time::timeout(HANG * 4, async {
        let rig = Rig::new();
        let info = rig
            .registry
            .open(rig.request(rig.demo("api-key", "prompt")));
        let id = info.id.as_str();
        rig.registry.started(id).await.unwrap();
        let asked = "this needs the key";
        assert_eq!(rig.turn(id, asked).await, TurnEndReason::Error);
        let method = rig.method(id, is_api_key).await;

        // A key the agent refuses: the start fails, nothing is sent, the prompt stays kept and
        // the key stays stored (the user replaces it, nothing removes it for them).
        let keychain: Arc<dyn Keychain> = rig.keychain.clone();
        rig.registry
            .sign_in_with_api_key(
                id,
                keychain.clone(),
                &method,
                SecretValue::new(WRONG_KEY.into()),
            )
            .await
            .unwrap();
        assert_eq!(rig.settled(id).await, SessionState::Dead);
        let thread = rig.thread(id);
        assert_eq!(turns_of(&thread, asked), 1, "{thread:#?}");
        assert!(resend_notices(&thread).is_empty());
        assert!(rig.registry.kept_prompt(id).unwrap().is_some());
        let stored = acp_desk_core::auth::api_key_ref("demo", &method).unwrap();
        assert!(rig.keychain.get(&stored).unwrap().is_some());

        // The right key: signed in, the prompt goes through once.
        rig.registry
            .sign_in_with_api_key(id, keychain, &method, SecretValue::new(RIGHT_KEY.into()))
            .await
            .unwrap();
        assert_eq!(rig.settled(id).await, SessionState::Ready);
        rig.until(id, "sent the prompt again", |t| completed(t) == 1)
            .await;
        assert_eq!(turns_of(&rig.thread(id), asked), 2);

        // A second start: a new process, which keeps the key in memory only, gets it again.
        rig.registry.restart_signed_in(id, None).await.unwrap();
        assert_eq!(rig.settled(id).await, SessionState::Ready);
        assert_eq!(
            rig.turn(id, "after the second start").await,
            TurnEndReason::Completed
        );
        // And a first start of another session of the agent.
        let other = rig
            .registry
            .open(rig.request(rig.demo("api-key", "prompt")));
        rig.registry.started(&other.id).await.unwrap();
        assert_eq!(
            rig.turn(&other.id, "a new session").await,
            TurnEndReason::Completed
        );
        assert_eq!(turns_of(&rig.thread(id), asked), 2, "sent once, not twice");
        rig.close_and_scan(&[id, &other.id]).await;
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_key_at_new_lets_the_session_open() {
    tokio::time::timeout(HANG * 3, async {
        let rig = Rig::new();
        let info = rig.registry.open(rig.request(rig.demo("api-key", "new")));
        let id = info.id.as_str();
        let Err(failed) = rig.registry.started(id).await else {
            panic!("the start went through without a sign-in")
        };
        assert!(auth_required(&failed), "{failed:?}");
        rig.registry.wait_ended(id).await.unwrap();
        let method = rig.method(id, is_api_key).await;
        // An agent method is not an API key's, and the other way round.
        let e = rig
            .registry
            .restart_signed_in(id, Some(method.clone()))
            .await
            .unwrap_err();
        assert!(
            matches!(&e, AppError::InvalidInput(m) if m.contains("API key")),
            "{e:?}"
        );
        rig.registry
            .sign_in_with_api_key(
                id,
                rig.keychain.clone(),
                &method,
                SecretValue::new(format!("  {RIGHT_KEY}\n")),
            )
            .await
            .unwrap();
        assert_eq!(rig.settled(id).await, SessionState::Ready);
        assert_eq!(rig.turn(id, "hello").await, TurnEndReason::Completed);
        rig.close_and_scan(&[id]).await;
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_in_without_a_session_says_what_the_agent_said() {
    tokio::time::timeout(HANG * 3, async {
        let rig = Rig::new();
        let folder = rig.project.clone();
        // The agent method: signed in, so a session opens afterwards.
        let spec = rig.demo("agent,api-key", "new");
        let report = sign_in::sign_in_alone(spec.clone(), &folder, "no-such", None)
            .await
            .unwrap_err();
        assert!(report.to_string().contains("no-such"), "{report}");
        let probe = rig.registry.open(rig.request(spec.clone()));
        let _ = rig.registry.started(&probe.id).await;
        rig.registry.wait_ended(&probe.id).await.unwrap();
        let agent_method = rig.method(&probe.id, is_agent).await;
        let key_method = rig.method(&probe.id, is_api_key).await;
        rig.registry.close(&probe.id).await.unwrap();

        let done = sign_in::sign_in_alone(spec.clone(), &folder, &agent_method, None)
            .await
            .unwrap();
        assert!(
            done.message.starts_with("Signed in to demo"),
            "{}",
            done.message
        );
        let info = rig.registry.open(rig.request(spec.clone()));
        rig.registry.started(&info.id).await.unwrap();
        rig.registry.close(&info.id).await.unwrap();

        // An API key: a refused one stays stored and the error says how to replace it.
        let keychain: Arc<dyn Keychain> = rig.keychain.clone();
        let spec = rig.demo("api-key", "new");
        sign_in::store_api_key(
            &*keychain,
            "demo",
            &key_method,
            &SecretValue::new(WRONG_KEY.into()),
        )
        .unwrap();
        let e = sign_in::verify_api_key_alone(
            spec.clone(),
            &folder,
            &key_method,
            Some(keychain.clone()),
        )
        .await
        .unwrap_err();
        let said = e.to_string();
        assert!(said.to_lowercase().contains("replace"), "{said}");
        assert!(!said.contains(WRONG_KEY));
        let stored = acp_desk_core::auth::api_key_ref("demo", &key_method).unwrap();
        assert_eq!(
            rig.keychain.get(&stored).unwrap().unwrap().expose(),
            WRONG_KEY
        );
        sign_in::store_api_key(
            &*keychain,
            "demo",
            &key_method,
            &SecretValue::new(RIGHT_KEY.into()),
        )
        .unwrap();
        let done = sign_in::verify_api_key_alone(spec, &folder, &key_method, Some(keychain))
            .await
            .unwrap();
        assert!(done.message.contains("accepted"), "{}", done.message);
        assert!(!done.message.contains(RIGHT_KEY));
        rig.close_and_scan(&[]).await;
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_terminal_login_the_restart_sends_the_prompt_and_a_double_click_starts_one_agent() {
    tokio::time::timeout(HANG * 3, async {
        let rig = Rig::new();
        let info = rig
            .registry
            .open(rig.request(rig.demo("terminal", "prompt")));
        let id = info.id.as_str();
        rig.registry.started(id).await.unwrap();
        let method = rig
            .method(id, |h| matches!(h, AuthHow::Terminal { .. }))
            .await;
        // A terminal method never goes through authenticate: refused with where it runs.
        let e = rig
            .registry
            .restart_signed_in(id, Some(method))
            .await
            .unwrap_err();
        assert!(
            matches!(&e, AppError::InvalidInput(m) if m.contains("login terminal")),
            "{e:?}"
        );
        let asked = "before the login";
        assert_eq!(rig.turn(id, asked).await, TurnEndReason::Error);

        // What `acp-desk-demo-agent login` leaves when it exits 0 (the pty helper's part),
        // then what its exit 0 calls, twice at once.
        std::fs::write(rig.dir.path().join("auth/signed-in"), "login\n").unwrap();
        let (a, b) = tokio::join!(
            rig.registry.restart_signed_in(id, None),
            rig.registry.restart_signed_in(id, None)
        );
        assert!(
            a.is_ok() != b.is_ok(),
            "one restart, one refused: {a:?} {b:?}"
        );
        let refused = a.err().or(b.err()).unwrap();
        assert!(
            matches!(refused, AppError::SessionStarting(_)),
            "{refused:?}"
        );
        assert_eq!(rig.settled(id).await, SessionState::Ready);
        rig.until(id, "sent the prompt again", |t| completed(t) == 1)
            .await;
        quiet_period().await;
        let thread = rig.thread(id);
        assert_eq!(turns_of(&thread, asked), 2, "{thread:#?}");
        assert_eq!(resend_notices(&thread).len(), 1);
        rig.close_and_scan(&[id]).await;
    })
    .await
    .unwrap();
}

/// Processes whose environment carries `ACP_DESK_TEST_MARK=mark` and whose program is `name`.
#[cfg(target_os = "linux")]
fn marked(mark: &str, name: &str) -> Vec<u32> {
    let needle = format!("ACP_DESK_TEST_MARK={mark}");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let program = cmd.split(|b| *b == 0).next().unwrap_or_default();
            let alive = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                !s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            });
            alive
                && program.ends_with(name.as_bytes())
                && std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()))
        })
        .collect()
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_replaces_a_start_still_under_way_and_leaves_nothing_of_it() {
    tokio::time::timeout(HANG * 2, async {
        let rig = Rig::new();
        let mark = format!("sign-in-abort-{}", std::process::id());
        // The first start hangs before the agent answers (as one waiting on a browser would);
        // the next goes straight to the demo agent.
        let demo = rig.demo("agent", "prompt");
        let once = rig.dir.path().join("slow-once");
        let mut args = vec![
            "-c".to_owned(),
            r#"f=$1; shift; if [ ! -e "$f" ]; then : > "$f"; sleep 600; fi; exec "$@""#.to_owned(),
            "sh".to_owned(),
            once.display().to_string(),
            demo.command.clone(),
        ];
        args.extend(demo.args.clone());
        let mut env = demo.env.clone();
        env.push(("ACP_DESK_TEST_MARK".into(), mark.as_str().into()));
        let spec = LaunchSpec {
            name: "demo".into(),
            command: "sh".into(),
            args,
            env,
            cwd: None,
        };
        let info = rig.registry.open(rig.request(spec));
        let id = info.id.as_str();
        rig.until(id, "started the slow start", |_| once.exists())
            .await;
        let wait = tokio::time::Instant::now() + HANG;
        while marked(&mark, "sleep").is_empty() {
            assert!(
                tokio::time::Instant::now() < wait,
                "the slow start never ran"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(matches!(
            rig.registry.handle(id),
            Err(AppError::SessionStarting(_))
        ));

        rig.registry.restart_signed_in(id, None).await.unwrap();
        assert_eq!(rig.settled(id).await, SessionState::Ready);
        assert!(
            marked(&mark, "sleep").is_empty(),
            "the start given up left its process behind"
        );
        rig.close_and_scan(&[id]).await;
    })
    .await
    .unwrap();
}
