//! The desktop app's log file (`acp_desk_app::logging`): written, rotated by its policy, and
//! free of secrets at the default level while a real session (the demo agent, built by
//! `cargo build --workspace --bins`) runs with a key in its environment, in its arguments and in
//! the prompt.
//!
//! One process-wide subscriber: this file is its own test binary, and only one test installs it.

// Test helpers too: a panic with the error is exactly the failure report wanted here.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

use acp_desk_app::logging::{self, LOG_FILE_PREFIX, MAX_LOG_FILES};
use acp_desk_app::{OpenRequest, Registry};
use acp_desk_core::agents::LaunchSpec;
use acp_desk_core::{SessionOptions, text_block};
use acp_desk_store::LaunchOrigin;
use tokio::runtime::Handle;

/// Hang guard, never a performance assertion.
const HANG: Duration = Duration::from_secs(60);

fn log_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(LOG_FILE_PREFIX))
        .collect();
    v.sort();
    v
}

/// `acp-desk.YYYY-MM-DD.log`.
fn is_daily_name(name: &str) -> bool {
    let Some(date) = name
        .strip_prefix("acp-desk.")
        .and_then(|n| n.strip_suffix(".log"))
    else {
        return false;
    };
    let b = date.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        })
}

#[test]
fn one_file_a_day_and_the_oldest_past_the_limit_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    // Older days' files, created oldest first (the policy removes by age), and a file that is
    // not a log of ours.
    let old: Vec<String> = (1..=MAX_LOG_FILES + 2)
        .map(|d| format!("acp-desk.2020-01-{d:02}.log"))
        .collect();
    for name in &old {
        std::fs::write(dir.path().join(name), "old\n").unwrap();
        // Creation times must differ for the order to be theirs.
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();

    let mut appender = logging::open_appender(dir.path()).unwrap();
    std::io::Write::write_all(&mut appender, b"today\n").unwrap();
    std::io::Write::flush(&mut appender).unwrap();

    let files = log_files(dir.path());
    assert_eq!(files.len(), MAX_LOG_FILES, "{files:?}");
    // The three oldest went; the newest older days stay.
    let kept_old: Vec<&String> = old.iter().filter(|n| files.contains(n)).collect();
    assert_eq!(kept_old, old[3..].iter().collect::<Vec<_>>());
    let today: Vec<&String> = files.iter().filter(|n| !old.contains(n)).collect();
    assert_eq!(today.len(), 1);
    assert!(is_daily_name(today[0]), "{today:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join(today[0])).unwrap(),
        "today\n"
    );
    assert!(dir.path().join("notes.txt").exists(), "only our logs go");
    // The newest file is today's, and its last lines are what was written last.
    assert_eq!(
        logging::newest_file(dir.path()).unwrap(),
        dir.path().join(today[0])
    );
    assert_eq!(logging::last_lines(dir.path(), 5).unwrap(), ["today"]);
}

const ENV_SECRET: &str = "sk-env-7f3a9c1e-never-logged";
const ARG_SECRET: &str = "sk-arg-51d0b2e8-never-logged";
const PROMPT_SECRET: &str = "sk-prompt-0c9e44aa-never-logged";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_with_a_key_in_its_env_args_and_prompt_leaves_none_in_the_log() {
    let root = tempfile::tempdir().unwrap();
    // SAFETY: before this binary's only subscriber and its only session start.
    unsafe {
        std::env::remove_var(logging::LOG_ENV);
        std::env::set_var("ACP_DESK_CONFIG_DIR", root.path().join("config"));
        std::env::set_var("ACP_DESK_DATA_DIR", root.path().join("data"));
    }
    let logs = root.path().join("logs");
    let log = logging::init();
    log.write_to_folder(&logs).unwrap();
    assert_eq!(log.folder(), Some(logs.as_path()));

    let project = root.path().join("project");
    std::fs::create_dir(&project).unwrap();
    // An argument that carries a key: the demo agent takes a folder, so the key is its name.
    let scenarios = root.path().join(ARG_SECRET);
    std::fs::create_dir(&scenarios).unwrap();
    let demo = acp_desk_core::agents::demo_agent_path()
        .filter(|p| p.is_file())
        .expect("the demo agent is missing: run `cargo build --workspace --bins` first");
    let spec = LaunchSpec {
        name: "demo".into(),
        command: demo.display().to_string(),
        args: vec!["--scenario-dir".into(), scenarios.display().to_string()],
        env: vec![("DEMO_API_KEY".into(), ENV_SECRET.into())],
        cwd: None,
    };
    let mut options = SessionOptions::new(std::fs::canonicalize(&project).unwrap());
    options.rules_file = None;
    options.audit = acp_desk_core::audit::AuditKind::Off;

    tokio::time::timeout(HANG, async {
        let registry = Registry::new(Handle::current());
        let info = registry.open(OpenRequest {
            agent: "demo".into(),
            spec,
            options,
            views: true,
            tap: None,
            origin: LaunchOrigin::Named,
            manifest: None,
            project_mcp: Vec::new(),
        });
        registry.started(&info.id).await.unwrap();
        let prompt = format!("hello, my key is {PROMPT_SECRET}");
        registry
            .prompt(&info.id, vec![text_block(&prompt)])
            .await
            .unwrap();
        registry.close(&info.id).await.unwrap();
    })
    .await
    .unwrap();
    log.finish();

    let files = log_files(&logs);
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(logs.join(&files[0])).unwrap();
    // Not vacuous: the session's life is in the file.
    assert!(text.contains("session opened"), "{text}");
    assert!(text.contains("session closed"), "{text}");
    for secret in [ENV_SECRET, ARG_SECRET, PROMPT_SECRET] {
        assert!(!text.contains(secret), "{secret} is in the log:\n{text}");
    }
}
