//! Continuing stored sessions through the app layer: `continue_request` from a store record
//! (recorded by the HistoryRecorder, appended under the same id), `import_request` (its replay
//! stored as the transcript), `Registry::list_agent_sessions` (a running agent asked first, else
//! one started for the question and ended), and the bad records (redacted command line, folder
//! gone).
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use acp_desk_app::{
    AppError, HistoryRecorder, OpenRequest, Registry, continue_request, import_request,
};
use acp_desk_core::agents::LaunchSpec;
use acp_desk_core::events::{ContinuationMode, ContinuationOutcome};
use acp_desk_core::{ContinueVia, StreamEvent, text_block};
use acp_desk_store::{LaunchOrigin, RecorderOptions, SessionRecord, Store, StoredLaunch};
use tokio::runtime::Handle;

const HANG: Duration = Duration::from_secs(60);

fn isolated() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("acp-desk-app-continuation");
        // SAFETY: set once, before any session starts; every test reads the same values.
        unsafe {
            std::env::set_var("ACP_DESK_CONFIG_DIR", dir.join("config"));
            std::env::set_var("ACP_DESK_DATA_DIR", dir.join("data"));
        }
    });
}

/// The demo agent advertising `methods`, keeping its records in `records`, marked with `mark`
/// in its environment (so a test can find its processes).
fn demo(records: &Path, methods: &str, mark: &str) -> LaunchSpec {
    let path = acp_desk_core::agents::demo_agent_path()
        .filter(|p| p.is_file())
        .expect("the demo agent is missing: run `cargo build --workspace --bins` first");
    LaunchSpec {
        name: "demo".into(),
        command: path.display().to_string(),
        args: vec![
            "--session-dir".into(),
            records.display().to_string(),
            "--session-methods".into(),
            methods.into(),
        ],
        env: vec![("ACP_DESK_TEST_MARK".into(), mark.into())],
        cwd: None,
    }
}

fn quiet(mut r: OpenRequest) -> OpenRequest {
    r.options.rules_file = None;
    r.options.audit = acp_desk_core::audit::AuditKind::Off;
    r.options.watch_roots = false;
    r
}

/// Processes whose environment carries `ACP_DESK_TEST_MARK=mark`.
fn marked(mark: &str) -> Vec<u32> {
    let needle = format!("ACP_DESK_TEST_MARK={mark}");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()))
        })
        .collect()
}

struct Rig {
    dir: tempfile::TempDir,
    project: PathBuf,
    file: PathBuf,
}

impl Rig {
    fn new() -> Self {
        isolated();
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir(&project).unwrap();
        let project = std::fs::canonicalize(project).unwrap();
        let file = dir.path().join("history.sqlite3");
        Rig { dir, project, file }
    }

    fn records(&self) -> PathBuf {
        self.dir.path().join("agent-records")
    }

    /// Runs `prompts` in one session opened by `request`, recorded into the history; returns
    /// the events and the stored id.
    async fn session(&self, request: OpenRequest, prompts: &[&str]) -> (Vec<StreamEvent>, String) {
        let (history, _) = HistoryRecorder::start(&self.file, RecorderOptions::default()).unwrap();
        let history = Arc::new(history);
        let registry = Registry::new(Handle::current());
        registry.add_observer(history.clone());
        let (tap, mut rx) = tokio::sync::mpsc::channel(8);
        let mut request = quiet(request);
        request.tap = Some(tap);
        request.views = false;
        let info = registry.open(request);
        let collect = tokio::spawn(async move {
            let mut all = Vec::new();
            while let Some(b) = rx.recv().await {
                all.extend(b);
            }
            all
        });
        registry.started(&info.id).await.unwrap();
        for p in prompts {
            registry
                .prompt(&info.id, vec![text_block(*p)])
                .await
                .unwrap();
        }
        let id = history.history_id(&info.id).unwrap();
        registry.close_all().await;
        assert!(history.finish().is_empty());
        (collect.await.unwrap(), id)
    }

    fn record(&self, id: &str) -> SessionRecord {
        Store::open(&self.file).unwrap().0.session(id).unwrap()
    }

    fn stored(&self, id: &str) -> Vec<StreamEvent> {
        Store::open(&self.file).unwrap().0.events(id).unwrap()
    }
}

fn user_texts(evs: &[StreamEvent]) -> Vec<String> {
    evs.iter()
        .filter_map(|e| match e {
            StreamEvent::TurnStart { prompt, .. } => prompt.iter().find_map(|b| match b {
                acp_desk_core::schema::v1::ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            }),
            StreamEvent::UserMessageDelta { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn answer(evs: &[StreamEvent]) -> String {
    evs.iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continued_session_appends_under_its_stored_id() {
    tokio::time::timeout(HANG, async {
        let rig = Rig::new();
        let spec = demo(&rig.records(), "load", "cont-append");
        let first = OpenRequest::new(rig.project.clone(), "demo", spec);
        let mut first = first;
        first.origin = LaunchOrigin::CommandLine;
        let (_, id) = rig.session(first, &["the first thing"]).await;

        let record = rig.record(&id);
        let request = continue_request(&record, ContinueVia::Auto).unwrap();
        let (evs, again) = rig.session(request, &["what did I say first?"]).await;
        assert_eq!(again, id, "the history continues the stored session");
        assert!(evs.iter().any(|e| matches!(
            e,
            StreamEvent::SessionContinued {
                mode: ContinuationMode::Continue,
                outcome: ContinuationOutcome::Loaded,
                ..
            }
        )));
        assert!(answer(&evs).contains("You first said: \"the first thing\""));
        assert_eq!(
            user_texts(&rig.stored(&id)),
            vec!["the first thing", "what did I say first?"],
            "the load's replay is neither emitted nor stored"
        );
        assert_eq!(
            Store::open(&rig.file).unwrap().0.sessions().unwrap().len(),
            1
        );
    })
    .await
    .expect("hang");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_and_importing_the_agents_own_sessions() {
    tokio::time::timeout(HANG, async {
        let rig = Rig::new();
        let mark = format!("list-{}", std::process::id());
        let spec = demo(&rig.records(), "list,load", &mark);
        let first = OpenRequest::new(rig.project.clone(), "demo", spec.clone());
        rig.session(first, &["an earlier conversation"]).await;

        // Nothing of the agent runs: it is started for the question, then ended.
        let registry = Registry::new(Handle::current());
        let listed = registry
            .list_agent_sessions("demo", spec.clone(), &rig.project)
            .await
            .unwrap();
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert_eq!(listed[0].title.as_deref(), Some("an earlier conversation"));
        if cfg!(target_os = "linux") {
            assert_eq!(marked(&mark), Vec::<u32>::new(), "no process left behind");
        }

        // A running session of the agent is asked instead: it keeps its records elsewhere, so
        // what comes back says who answered.
        let other = demo(&rig.dir.path().join("other-records"), "list", &mark);
        let running = registry.open(quiet(OpenRequest::new(
            rig.project.clone(),
            "demo",
            spec.clone(),
        )));
        registry.started(&running.id).await.unwrap();
        let asked = registry
            .list_agent_sessions("demo", other, &rig.project)
            .await
            .unwrap();
        assert!(
            asked.iter().any(|s| s.session_id == listed[0].session_id),
            "the running agent answered: {asked:?}"
        );
        registry.close_all().await;

        // Imported: the replay is shown and stored as the transcript, under a new id.
        let request = import_request(
            "demo",
            spec,
            rig.project.clone(),
            listed[0].session_id.0.to_string(),
        );
        let (evs, id) = rig.session(request, &["what did I say first?"]).await;
        assert!(answer(&evs).contains("You first said: \"an earlier conversation\""));
        assert_eq!(
            user_texts(&rig.stored(&id)),
            vec!["an earlier conversation", "what did I say first?"],
            "the replay is the imported session's transcript"
        );
        assert_eq!(
            Store::open(&rig.file).unwrap().0.sessions().unwrap().len(),
            2
        );
    })
    .await
    .expect("hang");
}

fn record(launch: StoredLaunch, folder: &str) -> SessionRecord {
    SessionRecord {
        id: "s18c0-1-1".into(),
        agent: "mine".into(),
        launch: Some(launch),
        folder: folder.into(),
        title: None,
        prompt_title: None,
        created_ms: 0,
        updated_ms: 0,
        status: "dead".into(),
        status_detail: None,
        acp_session_id: Some("a1".into()),
        agent_identity: None,
        rows: 0,
    }
}

#[test]
fn bad_records_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let redacted = StoredLaunch {
        origin: LaunchOrigin::CommandLine,
        program: "my-agent".into(),
        args: vec!["--api-key".into(), "<redacted>".into()],
        args_redacted: true,
        env_names: Vec::new(),
    };
    let folder = dir.path().to_string_lossy().into_owned();
    let Err(AppError::InvalidInput(msg)) =
        continue_request(&record(redacted, &folder), ContinueVia::Auto)
    else {
        panic!("a redacted command line cannot be restarted");
    };
    assert!(
        msg.contains("s18c0-1-1") && msg.contains("Choose the agent"),
        "{msg}"
    );

    let plain = StoredLaunch {
        origin: LaunchOrigin::CommandLine,
        program: "my-agent".into(),
        args: Vec::new(),
        args_redacted: false,
        env_names: Vec::new(),
    };
    let gone = dir.path().join("gone").to_string_lossy().into_owned();
    let Err(AppError::FolderMissing(msg)) =
        continue_request(&record(plain.clone(), &gone), ContinueVia::Auto)
    else {
        panic!("a gone folder is FolderMissing");
    };
    assert!(msg.contains("s18c0-1-1") && msg.contains(&gone), "{msg}");

    let ok = continue_request(&record(plain, &folder), ContinueVia::Load).unwrap();
    assert_eq!(ok.spec.command, "my-agent");
    assert_eq!(
        ok.options.opening,
        acp_desk_core::Opening::Continue {
            session_id: "s18c0-1-1".into(),
            acp_session_id: Some("a1".into()),
            via: ContinueVia::Load,
        }
    );
}
