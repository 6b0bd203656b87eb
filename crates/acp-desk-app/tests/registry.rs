//! The app layer with real agents and no webview: the demo agent (built by
//! `cargo build --workspace --bins`), a program that does not exist and one that exits at once.
//! Views attached before and after, a recording observer and a tap read every session.

// Test helpers too: a panic with the error is exactly the failure report wanted here.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_desk_app::{AppError, Observer, OpenRequest, Registry, SessionInfo, SessionStatus};
use acp_desk_core::agents::LaunchSpec;
use acp_desk_core::compact::Compactor;
use acp_desk_core::events::{PermissionResolution, SessionState, TurnEndReason};
use acp_desk_core::hub::RecordingView;
use acp_desk_core::schema::v1::PermissionOptionKind;
use acp_desk_core::{EngineError, EventBatch, SessionOptions, StreamEvent, text_block};
use tokio::runtime::Handle;
use tokio::sync::mpsc;

/// Hang guard: a session that does not get there in this time is a bug, not a slow machine.
/// Never a performance assertion.
const HANG: Duration = Duration::from_secs(60);

/// Settings and data folders of these tests only, never the user's real ones: one fixed folder
/// under cargo's target folder, the same for every test process (tests run in threads of one
/// process or in processes of their own), so nothing piles up in /tmp. Sessions here write no
/// rules or audit logs (`opts`), so they only read it.
fn isolated() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("acp-desk-app-tests");
        // SAFETY: set once, before any session starts, by whichever test comes first; every test
        // reads the same values.
        unsafe {
            std::env::set_var("ACP_DESK_CONFIG_DIR", dir.join("config"));
            std::env::set_var("ACP_DESK_DATA_DIR", dir.join("data"));
        }
    });
}

fn demo() -> LaunchSpec {
    let path = acp_desk_core::agents::demo_agent_path()
        .filter(|p| p.is_file())
        .expect("the demo agent is missing: run `cargo build --workspace --bins` first");
    assert!(
        acp_desk_core::process::supervisor_path().is_some(),
        "acp-desk-supervisor is missing: run `cargo build --workspace --bins` first"
    );
    LaunchSpec {
        name: "demo".into(),
        command: path.display().to_string(),
        args: Vec::new(),
        env: Vec::new(),
        cwd: None,
    }
}

fn program(command: &str, args: &[&str]) -> LaunchSpec {
    LaunchSpec {
        name: command.into(),
        command: command.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        env: Vec::new(),
        cwd: None,
    }
}

fn opts(dir: &Path) -> SessionOptions {
    let mut o = SessionOptions::new(std::fs::canonicalize(dir).unwrap());
    o.cancel_grace = Duration::from_secs(2);
    o.process.eof_grace = Duration::from_millis(300);
    o.process.term_grace = Duration::from_millis(700);
    o.rules_file = None;
    o.audit = acp_desk_core::audit::AuditKind::Off;
    o
}

fn request(dir: &Path, spec: LaunchSpec) -> OpenRequest {
    OpenRequest {
        agent: spec.name.clone(),
        spec,
        options: opts(dir),
        views: true,
        tap: None,
        origin: acp_desk_store::LaunchOrigin::CommandLine,
        manifest: None,
        project_mcp: Vec::new(),
    }
}

/// What an observer heard, in order.
#[derive(Debug, Clone, PartialEq)]
enum Heard {
    Batch(EventBatch),
    Status(SessionStatus),
}

#[derive(Default)]
struct Recorder(Mutex<Vec<(String, Heard)>>);

impl Observer for Recorder {
    fn on_batch(&self, session: &SessionInfo, events: &[StreamEvent]) {
        let heard = Heard::Batch(events.to_vec());
        self.0.lock().unwrap().push((session.id.clone(), heard));
    }
    fn on_status(&self, session: &SessionInfo, status: &SessionStatus) {
        let heard = Heard::Status(status.clone());
        self.0.lock().unwrap().push((session.id.clone(), heard));
    }
}

impl Recorder {
    fn of(&self, id: &str) -> Vec<Heard> {
        let all = self.0.lock().unwrap();
        all.iter()
            .filter(|(s, _)| s == id)
            .map(|(_, h)| h.clone())
            .collect()
    }

    fn batches(&self, id: &str) -> Vec<EventBatch> {
        self.of(id)
            .into_iter()
            .filter_map(|h| match h {
                Heard::Batch(b) => Some(b),
                Heard::Status(_) => None,
            })
            .collect()
    }

    fn events(&self, id: &str) -> Vec<StreamEvent> {
        self.batches(id).into_iter().flatten().collect()
    }

    /// Checks the order the trait promises: `Opened` first, each batch followed by the states
    /// of its `session-status` events, `Closed` last.
    fn assert_in_order(&self, id: &str) {
        let heard = self.of(id);
        assert_eq!(heard.first(), Some(&Heard::Status(SessionStatus::Opened)));
        assert_eq!(heard.last(), Some(&Heard::Status(SessionStatus::Closed)));
        let mut expected = vec![Heard::Status(SessionStatus::Opened)];
        for h in &heard {
            if let Heard::Batch(batch) = h {
                expected.push(h.clone());
                for ev in batch {
                    if let StreamEvent::SessionStatus { status, detail, .. } = ev {
                        expected.push(Heard::Status(SessionStatus::State {
                            state: *status,
                            detail: detail.clone(),
                        }));
                    }
                }
            }
        }
        expected.push(Heard::Status(SessionStatus::Closed));
        assert_eq!(heard, expected);
    }
}

type View = RecordingView;

/// The thread the events build, as a view would hold it.
fn fold(events: &[StreamEvent]) -> Vec<StreamEvent> {
    let mut c = Compactor::new();
    for ev in events {
        c.apply(ev);
    }
    c.snapshot()
}

fn text(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn dead(events: &[StreamEvent]) -> Vec<&StreamEvent> {
    events
        .iter()
        .filter(|e| {
            matches!(
                e,
                StreamEvent::SessionStatus {
                    status: SessionState::Dead,
                    ..
                }
            )
        })
        .collect()
}

fn errors(events: &[StreamEvent]) -> usize {
    events.iter().filter(|e| e.kind() == "error").count()
}

/// A tap whose every batch is collected on a task of its own; the task ends with the tap.
fn tap(
    capacity: usize,
) -> (
    mpsc::Sender<EventBatch>,
    tokio::task::JoinHandle<Vec<EventBatch>>,
) {
    let (tx, mut rx) = mpsc::channel::<EventBatch>(capacity);
    let read = tokio::spawn(async move {
        let mut all = Vec::new();
        while let Some(batch) = rx.recv().await {
            all.push(batch);
            // A reader a little slower than the engine: the tap fills and waits.
            tokio::task::yield_now().await;
        }
        all
    });
    (tx, read)
}

/// A registry with a recording observer, and one session of `spec` in `dir` whose tap holds
/// `tap_capacity` batches: what most tests here start from.
struct Recorded {
    registry: Registry,
    recorder: Arc<Recorder>,
    info: SessionInfo,
    tapped: tokio::task::JoinHandle<Vec<EventBatch>>,
}

fn open_recorded(dir: &Path, spec: LaunchSpec, tap_capacity: usize) -> Recorded {
    let registry = Registry::new(Handle::current());
    let recorder = Arc::new(Recorder::default());
    registry.add_observer(recorder.clone());
    let (tap_tx, tapped) = tap(tap_capacity);
    let mut req = request(dir, spec);
    req.tap = Some(tap_tx);
    let info = registry.open(req);
    Recorded {
        registry,
        recorder,
        info,
        tapped,
    }
}

async fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + HANG;
    while !ok() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "hang: waited too long for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg(target_os = "linux")]
fn alive(pid: u32) -> bool {
    acp_desk_core::process::is_running(pid)
}

/// Live processes whose working folder is `dir` (an agent and its supervisor run there).
#[cfg(target_os = "linux")]
fn working_in(dir: &Path) -> Vec<u32> {
    let dir = std::fs::canonicalize(dir).unwrap();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == dir)
                && alive(*pid)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_observers_and_the_tap_see_one_thread() {
    isolated();
    tokio::time::timeout(HANG, async {
        let dir = tempfile::tempdir().unwrap();
        let Recorded {
            registry,
            recorder,
            info,
            tapped,
        } = open_recorded(dir.path(), demo(), 1);
        let id = info.id.clone();
        assert_eq!(info.folder, std::fs::canonicalize(dir.path()).unwrap());
        assert_eq!(registry.list(), vec![info.clone()]);
        let early = View::default();
        registry.attach(&id, Box::new(early.clone())).unwrap();

        registry.started(&id).await.unwrap();
        let end = registry
            .prompt(&id, vec![text_block("stream")])
            .await
            .unwrap();
        assert_eq!(end.reason, TurnEndReason::Completed);

        // A permission request parked for a person, answered through the registry.
        let turn = registry.prompt(&id, vec![text_block("permission")]);
        tokio::pin!(turn);
        let asked = loop {
            tokio::select! {
                r = &mut turn => panic!("the turn ended before asking: {r:?}"),
                () = tokio::time::sleep(Duration::from_millis(20)) => {}
            }
            let asked = recorder.events(&id).into_iter().find_map(|e| match e {
                StreamEvent::AgentPrompt(p) => Some(p),
                _ => None,
            });
            if let Some(p) = asked {
                break p;
            }
        };
        let allow = asked
            .options
            .iter()
            .find(|o| o.kind == PermissionOptionKind::AllowOnce)
            .unwrap();
        let answer = PermissionResolution::selected(allow.option_id.to_string());
        registry
            .respond(&id, &asked.request_id, answer.clone())
            .await
            .unwrap();
        assert_eq!(turn.await.unwrap().reason, TurnEndReason::Completed);
        let again = registry
            .respond(&id, &asked.request_id, answer)
            .await
            .unwrap_err();
        assert!(
            matches!(again, AppError::Engine(EngineError::UnknownPermission(_))),
            "{again:?}"
        );
        registry.set_mode(&id, "plan").await.unwrap();
        assert!(matches!(
            registry.set_mode(&id, " ").await,
            Err(AppError::InvalidInput(_))
        ));

        // A view attached now gets the thread so far, then what follows.
        wait_for("the early view's turn-end", || {
            fold(&early.events()) == registry.snapshot(&id).unwrap()
        })
        .await;
        let late = View::default();
        registry.attach(&id, Box::new(late.clone())).unwrap();
        assert!(late.frames()[0].snapshot);
        assert!(text(&early.events()).contains("ledgerline"));

        let pid = registry.pid(&id).unwrap();
        registry.close(&id).await.unwrap();
        assert!(registry.is_empty());
        #[cfg(target_os = "linux")]
        assert!(!alive(pid), "the agent ended with its session");
        let _ = pid;

        // Closed: every event was handed on. The tap got the engine's batches as they were,
        // the observer the same batches, and both views the thread they build.
        let tapped = tapped.await.unwrap();
        assert_eq!(recorder.batches(&id), tapped);
        let all: Vec<StreamEvent> = tapped.into_iter().flatten().collect();
        assert_eq!(dead(&all).len(), 1, "one end");
        assert_eq!(fold(&early.events()), fold(&all));
        assert_eq!(fold(&late.events()), fold(&all));
        recorder.assert_in_order(&id);
        let states: Vec<SessionState> = recorder
            .of(&id)
            .into_iter()
            .filter_map(|h| match h {
                Heard::Status(SessionStatus::State { state, .. }) => Some(state),
                _ => None,
            })
            .collect();
        assert_eq!(states.first(), Some(&SessionState::Starting));
        assert!(states.contains(&SessionState::Ready));
        assert!(states.contains(&SessionState::Prompting));
        assert_eq!(states.last(), Some(&SessionState::Dead));
        assert!(matches!(
            registry.prompt(&id, vec![text_block("hi")]).await,
            Err(AppError::SessionUnknown(_))
        ));
    })
    .await
    .expect("hang");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_does_not_exist_is_reported_once_to_every_view() {
    isolated();
    tokio::time::timeout(HANG, async {
        let dir = tempfile::tempdir().unwrap();
        let Recorded {
            registry,
            recorder,
            info,
            tapped,
        } = open_recorded(dir.path(), program("/nonexistent/acp-desk-agent", &[]), 4);
        let id = info.id;
        let early = View::default();
        registry.attach(&id, Box::new(early.clone())).unwrap();

        let Err(err) = registry.started(&id).await else {
            panic!("it started")
        };
        assert!(
            matches!(&err, AppError::Engine(EngineError::Spawn(m)) if m.contains("/nonexistent/acp-desk-agent")),
            "{err:?}"
        );
        // Later calls hear the same reason.
        assert_eq!(
            registry.prompt(&id, vec![text_block("hi")]).await.unwrap_err(),
            err
        );
        registry.wait_ended(&id).await.unwrap();
        let late = View::default();
        registry.attach(&id, Box::new(late.clone())).unwrap();

        let message = err.to_string();
        let expected = vec![
            StreamEvent::Error {
                session_id: None,
                // A program that could not be run: `start-failed`, for the card to match.
                error: acp_desk_core::events::ErrorInfo::of_kind(
                    acp_desk_core::events::ErrorKind::StartFailed,
                    message.clone(),
                ),
            },
            StreamEvent::SessionStatus {
                session_id: id.clone(),
                status: SessionState::Dead,
                detail: Some(message.clone()),
                agent: None,
            },
        ];
        assert_eq!(early.events(), expected);
        assert_eq!(late.events(), expected);
        assert_eq!(recorder.batches(&id), vec![expected.clone()]);
        // The engine said nothing: the tap, which carries only the engine's events, is empty.
        assert!(tapped.await.unwrap().is_empty());

        registry.close(&id).await.unwrap();
        recorder.assert_in_order(&id);
        assert_eq!(early.events(), expected, "nothing after the end");
    })
    .await
    .expect("hang");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_exits_at_once_is_reported_once_by_the_engine() {
    isolated();
    tokio::time::timeout(HANG, async {
        let dir = tempfile::tempdir().unwrap();
        let Recorded {
            registry,
            recorder,
            info,
            tapped,
        } = open_recorded(dir.path(), program("sh", &["-c", "exit 3"]), 1);
        let id = info.id;
        let early = View::default();
        registry.attach(&id, Box::new(early.clone())).unwrap();

        let Err(err) = registry.started(&id).await else {
            panic!("it started")
        };
        assert!(matches!(err, AppError::Engine(_)), "{err:?}");
        registry.wait_ended(&id).await.unwrap();
        let late = View::default();
        registry.attach(&id, Box::new(late.clone())).unwrap();
        registry.close(&id).await.unwrap();

        let all: Vec<StreamEvent> = tapped.await.unwrap().into_iter().flatten().collect();
        // The engine reported it (error with the exit status, then dead); the app added nothing.
        assert_eq!(recorder.events(&id), all);
        let ends = dead(&all);
        assert_eq!(ends.len(), 1, "{all:?}");
        assert!(
            matches!(ends[0], StreamEvent::SessionStatus { session_id, agent: Some(_), .. } if *session_id != id),
            "the engine's own dead: {:?}",
            ends[0]
        );
        assert!(
            all.iter().any(|e| matches!(e, StreamEvent::Error { error, .. }
                if error.message.contains("exited with code 3"))),
            "{all:?}"
        );
        for view in [&early, &late] {
            let events = view.events();
            assert_eq!(dead(&events).len(), 1, "{events:?}");
            assert_eq!(errors(&events), errors(&all), "{events:?}");
            assert_eq!(fold(&events), fold(&all));
        }
        recorder.assert_in_order(&id);
    })
    .await
    .expect("hang");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_all_ends_every_agent_even_while_starting() {
    isolated();
    tokio::time::timeout(HANG, async {
        let registry = Registry::new(Handle::current());
        let recorder = Arc::new(Recorder::default());
        registry.add_observer(recorder.clone());
        let dirs: Vec<tempfile::TempDir> = (0..4).map(|_| tempfile::tempdir().unwrap()).collect();
        // The last one never answers `initialize`: it is still starting when everything closes.
        let ids: Vec<String> = dirs
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let spec = if i < 3 {
                    demo()
                } else {
                    program("sleep", &["600"])
                };
                registry.open(request(d.path(), spec)).id
            })
            .collect();
        let mut pids = Vec::new();
        for id in &ids[..3] {
            registry.started(id).await.unwrap();
            pids.push(registry.pid(id).unwrap());
        }
        #[cfg(target_os = "linux")]
        wait_for("the silent agent's process", || {
            !working_in(dirs[3].path()).is_empty()
        })
        .await;
        assert!(matches!(
            registry.handle(&ids[3]),
            Err(AppError::SessionStarting(_))
        ));
        assert_eq!(registry.len(), 4);
        registry.close_all().await;
        assert!(registry.is_empty());
        #[cfg(target_os = "linux")]
        {
            for pid in &pids {
                assert!(!alive(*pid), "agent {pid} outlived close_all");
            }
            for d in &dirs {
                let left = working_in(d.path());
                assert!(left.is_empty(), "left running in {:?}: {left:?}", d.path());
            }
        }
        for id in &ids {
            recorder.assert_in_order(id);
        }
    })
    .await
    .expect("hang");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_without_views_refuses_them_and_an_observer_added_later_sees_later_sessions() {
    isolated();
    tokio::time::timeout(HANG, async {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::new(Handle::current());
        let mut req = request(dir.path(), demo());
        req.views = false;
        let first = registry.open(req).id;
        let recorder = Arc::new(Recorder::default());
        registry.add_observer(recorder.clone());
        let second = registry.open(request(dir.path(), demo())).id;
        assert!(matches!(
            registry.attach(&first, Box::new(View::default())),
            Err(AppError::Internal(_))
        ));
        assert!(registry.snapshot(&first).is_err());
        assert!(matches!(
            registry.handle(&second),
            Err(AppError::SessionStarting(_)) | Ok(_)
        ));
        registry.started(&first).await.unwrap();
        registry.started(&second).await.unwrap();
        registry.close_all().await;
        assert!(recorder.of(&first).is_empty());
        recorder.assert_in_order(&second);
    })
    .await
    .expect("hang");
}

/// The history observer records every session the registry opens, under the id its events
/// carry, as the thread an observer of the live events folds: two demo sessions at once (one
/// closed mid-turn) and one whose program does not exist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_history_records_every_session_the_registry_opens() {
    isolated();
    tokio::time::timeout(HANG, async {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("data").join("history.sqlite3");
        let (history, warnings) =
            acp_desk_app::HistoryRecorder::start(&file, acp_desk_store::RecorderOptions::default())
                .unwrap();
        assert!(warnings.is_empty());
        let history = Arc::new(history);
        let registry = Registry::new(Handle::current());
        let live = Arc::new(Recorder::default());
        registry.add_observer(history.clone());
        registry.add_observer(live.clone());

        let a = registry.open(request(dir.path(), demo()));
        let b = registry.open(request(dir.path(), demo()));
        let gone = registry.open(request(
            dir.path(),
            program("/nonexistent/acp-desk-agent", &[]),
        ));
        registry.started(&a.id).await.unwrap();
        registry.started(&b.id).await.unwrap();
        let (ra, rb) = tokio::join!(
            registry.prompt(&a.id, vec![text_block("stream")]),
            registry.prompt(&b.id, vec![text_block("plan")]),
        );
        assert_eq!(ra.unwrap().reason, TurnEndReason::Completed);
        assert_eq!(rb.unwrap().reason, TurnEndReason::Completed);
        let a_engine = registry.handle(&a.id).unwrap().id().to_string();
        assert_eq!(
            history.history_id(&a.id).as_deref(),
            Some(a_engine.as_str())
        );
        registry.close_all().await;
        assert!(history.finish().is_empty());

        let (store, _) = acp_desk_store::Store::open(&file).unwrap();
        let stored = store.sessions().unwrap();
        assert_eq!(stored.len(), 3, "{stored:?}");
        for info in [&a, &b] {
            let events = live.events(&info.id);
            let StreamEvent::SessionStatus { session_id, .. } = &events[0] else {
                panic!("{:?}", events[0])
            };
            let s = store.session(session_id).unwrap();
            assert_eq!(store.events(&s.id).unwrap(), fold(&events));
            assert_eq!(s.agent, "demo");
            assert_eq!(s.folder, info.folder.to_string_lossy());
            assert_eq!(s.status, "dead");
            assert!(
                s.acp_session_id
                    .as_deref()
                    .unwrap()
                    .starts_with("demo-session-")
            );
            let launch = s.launch.clone().unwrap();
            assert_eq!(launch.origin, acp_desk_store::LaunchOrigin::CommandLine);
            assert_eq!(launch.program, demo().command);
            // What the demo agent advertises: no session method.
            assert_eq!(s.session_methods(), Default::default());
        }
        let failed: Vec<_> = stored
            .iter()
            .filter(|s| s.launch.as_ref().unwrap().program == "/nonexistent/acp-desk-agent")
            .collect();
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].status, "dead");
        assert_eq!(
            store.events(&failed[0].id).unwrap(),
            fold(&live.events(&gone.id))
        );
    })
    .await
    .expect("hang");
}
