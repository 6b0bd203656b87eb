//! Quitting with a turn running: what `RunEvent::Exit` runs (`Sessions::close_all`) leaves no
//! agent, no terminal supervisor and no terminal command behind, and the quit question's count
//! (`lifecycle::Turns`) follows the turn. Real demo agent and supervisor (built by
//! `cargo build --workspace --bins`), Linux.

#![cfg(target_os = "linux")]
// Test code: a panic with the error is exactly the failure report wanted here.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

mod support;
use support::wait_for;

use acp_desk_shell::ipc::PromptPart;
use acp_desk_shell::lifecycle::Turns;
use acp_desk_shell::sessions::Sessions;

/// Processes whose command line is exactly `args` (NUL-separated in /proc), by pid.
fn processes(args: &[&str]) -> Vec<i32> {
    let want: Vec<u8> = args
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c.ends_with(&want))
            && !is_zombie(pid)
        {
            found.push(pid);
        }
    }
    found
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

fn alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists() && !is_zombie(pid as i32)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quitting_mid_turn_ends_the_agent_and_its_terminals_whole_tree() {
    let home = tempfile::tempdir().unwrap();
    // SAFETY: set before any session starts; this test binary has this one test.
    unsafe {
        std::env::set_var("ACP_DESK_CONFIG_DIR", home.path().join("config"));
        std::env::set_var("ACP_DESK_DATA_DIR", home.path().join("data"));
    }
    // A sleep no other process runs: its own odd duration.
    let duration = format!("1000.{}", std::process::id());
    let scenarios = home.path().join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    std::fs::write(
        scenarios.join("hold.json"),
        serde_json::json!({
            "name": "hold",
            "keywords": ["hold"],
            "steps": [
                {"say": {"text": "Running a long command.\n"}},
                {"terminal": {"command": "sleep", "args": [duration], "then": ["wait"]}}
            ]
        })
        .to_string(),
    )
    .unwrap();
    let folder = tempfile::tempdir().unwrap();
    let folder = folder.path().canonicalize().unwrap();

    let sessions = Arc::new(Sessions::default());
    let turns = Arc::new(Turns::default());
    sessions.registry().add_observer(turns.clone());
    let mut spec = acp_desk_app::resolve_agent("demo").unwrap();
    spec.args
        .extend(["--scenario-dir".into(), scenarios.display().to_string()]);
    let info = sessions.open_checked(folder, spec, "demo");
    sessions.registry().started(&info.id).await.unwrap();
    let agent = sessions.pid(&info.id).unwrap();

    let turn = {
        let (sessions, id) = (sessions.clone(), info.id.clone());
        tokio::spawn(async move {
            let parts = vec![PromptPart::Text {
                text: "hold".into(),
            }];
            sessions.prompt(&id, parts).await
        })
    };
    // Matches the command (`/usr/bin/sleep D`) and its supervisor (`... -- /usr/bin/sleep D`).
    let terminal = || processes(&["sleep", duration.as_str()]);
    wait_for("the terminal's supervisor and sleep", || {
        terminal().len() >= 2
    })
    .await;
    let tree: Vec<i32> = terminal();
    assert_eq!(turns.running(), 1, "the quit question would count the turn");
    assert!(
        acp_desk_shell::lifecycle::quit_question(turns.running())
            .unwrap()
            .starts_with("1 session is still working.")
    );

    // What RunEvent::Exit does.
    sessions.close_all().await;
    // The terminal's supervisor ends its tree within its grace (1 s) of the SIGTERM.
    wait_for("the terminal's command to end", || {
        tree.iter().all(|p| !alive(*p as u32)) && terminal().is_empty()
    })
    .await;
    assert!(!alive(agent), "the agent {agent} outlived the quit");
    assert_eq!(turns.running(), 0, "a closed session runs no turn");
    let ended = tokio::time::timeout(Duration::from_secs(10), turn).await;
    assert!(ended.is_ok(), "the turn's prompt call never returned");
}

/// A StatusNotifierWatcher of the test's own, on a private bus.
struct Watcher {
    host: bool,
}

#[zbus::interface(name = "org.kde.StatusNotifierWatcher")]
impl Watcher {
    #[zbus(property)]
    fn is_status_notifier_host_registered(&self) -> bool {
        self.host
    }
}

/// `tray_host_present` against a real bus: no watcher, a watcher without a host, a watcher
/// with one, and no bus at all.
#[test]
fn a_tray_host_is_a_watcher_with_a_registered_host_on_the_session_bus() {
    use acp_desk_shell::lifecycle::host::{WATCHER, tray_host_present};
    use std::io::{BufRead, BufReader};
    let mut daemon = std::process::Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--nopidfile", "--print-address=1"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("dbus-daemon is needed for this test (Debian: dbus-daemon; scripts/deps --tests)");
    let mut address = String::new();
    BufReader::new(daemon.stdout.take().unwrap())
        .read_line(&mut address)
        .unwrap();
    // SAFETY: this test alone in its process (nextest) reads the bus address; the other test
    // here never connects to a bus.
    unsafe { std::env::set_var("DBUS_SESSION_BUS_ADDRESS", address.trim()) };
    let result = std::panic::catch_unwind(|| {
        assert!(!tray_host_present(), "no watcher on the bus");
        let serve = |host: bool| {
            zbus::blocking::connection::Builder::session()
                .unwrap()
                .name(WATCHER)
                .unwrap()
                .serve_at("/StatusNotifierWatcher", Watcher { host })
                .unwrap()
                .build()
                .unwrap()
        };
        let without = serve(false);
        assert!(!tray_host_present(), "a watcher, but no host registered");
        // Released by a call (answered once the bus has done it), not by a disconnect the bus
        // may see after the next request for the name.
        without.release_name(WATCHER).unwrap();
        let with = serve(true);
        assert!(tray_host_present(), "a watcher with a host");
        drop(with);
        unsafe { std::env::set_var("DBUS_SESSION_BUS_ADDRESS", "disabled") };
        assert!(!tray_host_present(), "no bus");
    });
    let _ = daemon.kill();
    let _ = daemon.wait();
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}
