//! Check (`agents::check`) against real processes: the demo agent, and the broken agents of
//! tests/fake-agents/misbehave.mjs. Each failure must name its cause, the wait must be bounded,
//! and no process of the agent may be left running afterwards (rule 37).
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::time::{Duration, Instant};

use acp_desk_core::agents::{self, CheckFailureKind, CheckLimits, CheckReport, LaunchSpec};
use common::*;

fn fake(mode: &str, marker: &str) -> LaunchSpec {
    let script = repo_root().join("tests/fake-agents/misbehave.mjs");
    agents::from_command_line(&format!("node '{}' {mode} {marker}", script.display())).unwrap()
}

/// A word no other process has in its command line: this test's agents carry it.
fn marker(name: &str) -> String {
    format!(
        "acp-desk-check-{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

/// Live processes (zombies do not count: PID 1 here never reaps them) whose command line holds
/// `marker`.
#[cfg(target_os = "linux")]
fn live_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&cmdline).contains(marker)
            && acp_desk_core::process::is_running(pid)
        {
            found.push(pid);
        }
    }
    found
}

async fn run_check(spec: &LaunchSpec, limit: Duration) -> (CheckReport, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let began = Instant::now();
    let report = tokio::time::timeout(
        HANG,
        agents::check(spec, dir.path(), CheckLimits { initialize: limit }),
    )
    .await
    .expect("hang: check did not return");
    (report, began.elapsed())
}

fn failure(report: &CheckReport) -> (CheckFailureKind, &str, &str) {
    let f = report
        .failure
        .as_ref()
        .unwrap_or_else(|| panic!("the check should have failed: {report:#?}"));
    assert!(!report.ok);
    (f.kind, f.message.as_str(), f.fix.as_str())
}

#[tokio::test]
async fn the_demo_agent_passes_with_its_name_version_and_capabilities() {
    let (report, _) = run_check(&demo(&["--auth-required"]), Duration::from_secs(20)).await;
    assert!(report.ok, "{report:#?}");
    assert!(report.failure.is_none());
    assert_eq!(report.agent, "demo");
    assert_eq!(report.agent_name.as_deref(), Some("acp-desk-demo-agent"));
    assert_eq!(report.agent_title.as_deref(), Some("ACP Desk demo agent"));
    assert_eq!(
        report.agent_version.as_deref(),
        Some(env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(report.protocol_version, Some(1));
    let caps = report.capabilities.as_ref().unwrap();
    assert!(caps["promptCapabilities"].is_object(), "{caps}");
    assert!(caps.get("loadSession").is_some(), "{caps}");
    assert_eq!(report.auth_methods.len(), 1);
    assert_eq!(report.auth_methods[0].name, "Demo login");
    assert!(report.auth_methods[0].description.is_some());
    let names: Vec<&str> = report.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["start", "initialize"]);
    assert!(report.steps.iter().all(|s| s.ok));
    assert!(report.differences.is_empty());
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    // The wire shape front ends read.
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["agentName"], "acp-desk-demo-agent");
    assert_eq!(json["protocolVersion"], 1);
    assert_eq!(json["authMethods"][0]["id"], report.auth_methods[0].id);
    assert!(json.get("failure").is_none());
}

#[tokio::test]
async fn capabilities_are_reported_as_the_agent_sent_them() {
    let m = marker("fields");
    let (report, _) = run_check(&fake("good", &m), Duration::from_secs(20)).await;
    assert!(report.ok, "{report:#?}");
    // `_meta` and every field stay as sent, not as ACP Desk parsed them.
    assert_eq!(
        report.capabilities.unwrap(),
        serde_json::json!({"loadSession": true, "promptCapabilities": {"image": true}, "_meta": {"fake": 1}})
    );
    assert_eq!(report.agent_name.as_deref(), Some("fake-agent"));
    assert_eq!(report.agent_version.as_deref(), Some("0.0.1"));
    assert_eq!(report.auth_methods[0].id, "fake-login");
}

#[tokio::test]
async fn a_missing_command_is_not_installed() {
    let spec = agents::from_command_line("acp-desk-no-such-agent --acp").unwrap();
    let (report, _) = run_check(&spec, Duration::from_secs(5)).await;
    let (kind, message, fix) = failure(&report);
    assert_eq!(kind, CheckFailureKind::NotInstalled);
    assert!(message.contains("`acp-desk-no-such-agent`"), "{message}");
    assert!(message.contains("not on PATH"), "{message}");
    assert!(fix.contains("Install"), "{fix}");
    assert_eq!(report.steps.len(), 1);
    assert!(!report.steps[0].ok);

    // A path that does not exist says so, and a runner we know says what to install.
    let spec = agents::from_command_line("/nonexistent/bin/my-agent").unwrap();
    let (report, _) = run_check(&spec, Duration::from_secs(5)).await;
    let (kind, message, _) = failure(&report);
    assert_eq!(kind, CheckFailureKind::NotInstalled);
    assert!(message.contains("does not exist"), "{message}");
    let mut report = report;
    report.suggest_install("npm install -g my-agent");
    assert_eq!(report.failure.unwrap().fix, "npm install -g my-agent");
}

#[cfg(unix)]
#[tokio::test]
async fn a_file_that_is_not_executable_says_so() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("agent.sh");
    std::fs::write(&file, "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let spec = LaunchSpec {
        name: "mine".into(),
        command: file.display().to_string(),
        args: Vec::new(),
        env: Vec::new(),
        cwd: None,
    };
    let (report, _) = run_check(&spec, Duration::from_secs(5)).await;
    let (kind, message, fix) = failure(&report);
    assert_eq!(kind, CheckFailureKind::NotExecutable);
    assert!(message.contains("agent.sh"), "{message}");
    assert!(fix.contains("chmod +x"), "{fix}");

    // Executable, but what runs it (its `#!` line) is missing: the OS refuses it inside the
    // supervisor, whose exit 127 alone would say nothing.
    std::fs::write(&file, "#!/nonexistent/interpreter\necho hi\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (report, _) = run_check(&spec, Duration::from_secs(5)).await;
    let (kind, message, fix) = failure(&report);
    assert_eq!(kind, CheckFailureKind::NotInstalled, "{message}");
    assert!(message.contains("could not be run"), "{message}");
    assert!(message.contains("agent.sh"), "{message}");
    assert!(fix.contains("#!"), "{fix}");
}

#[tokio::test]
async fn a_folder_that_does_not_exist_is_not_a_missing_agent() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    let report = agents::check(&demo(&[]), &gone, CheckLimits::default()).await;
    let (kind, message, _) = failure(&report);
    assert_eq!(kind, CheckFailureKind::Other);
    assert!(message.contains("gone"), "{message}");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_garbage_printer_gets_its_first_line_shown() {
    let m = marker("garbage");
    let limit = Duration::from_millis(1500);
    let (report, took) = run_check(&fake("garbage", &m), limit).await;
    let (kind, message, fix) = failure(&report);
    assert_eq!(kind, CheckFailureKind::NotJson);
    assert!(
        message.contains("«Welcome to Fake Agent 1.0!»"),
        "{message}"
    );
    assert!(
        message.contains("did not answer initialize within 1.5 s"),
        "{message}"
    );
    assert!(fix.contains("stdout"), "{fix}");
    assert!(took < limit + Duration::from_secs(8), "took {took:?}");
    assert_eq!(live_with(&m), Vec::<u32>::new(), "left running");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_silent_agent_is_bounded_and_leaves_no_process() {
    // It never answers, ignores stdin EOF and SIGTERM, and has a setsid child that does too.
    let m = marker("silent");
    let limit = Duration::from_millis(800);
    let spec = fake("silent", &m);
    let dir = tempfile::tempdir().unwrap();
    let began = Instant::now();
    let check = tokio::spawn({
        let dir = dir.path().to_path_buf();
        async move { agents::check(&spec, &dir, CheckLimits { initialize: limit }).await }
    });
    // While it waits, the agent and its child run: the marker finds them (so the check after
    // it is not vacuous).
    let mut seen = Vec::new();
    for _ in 0..100 {
        seen = live_with(&m);
        if seen.len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        seen.len() >= 2,
        "the agent and its child should run: {seen:?}"
    );
    let report = tokio::time::timeout(HANG, check).await.unwrap().unwrap();
    let took = began.elapsed();
    let (kind, message, _) = failure(&report);
    assert_eq!(kind, CheckFailureKind::NoAnswer);
    assert!(message.contains("within 0.8 s"), "{message}");
    let init = report
        .steps
        .iter()
        .find(|s| s.name == "initialize")
        .unwrap();
    assert!(!init.ok);
    assert!(init.millis >= 700, "{init:?}");
    // The limit, then ending an agent deaf to EOF and SIGTERM (CHECK_PROCESS graces).
    assert!(took >= limit, "took {took:?}");
    assert!(took < limit + Duration::from_secs(8), "took {took:?}");
    assert_eq!(live_with(&m), Vec::<u32>::new(), "left running after check");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn an_agent_that_exits_gives_its_status_and_stderr() {
    let m = marker("exit3");
    let (report, _) = run_check(&fake("exit3", &m), Duration::from_secs(20)).await;
    let (kind, message, _) = failure(&report);
    assert_eq!(kind, CheckFailureKind::Exited);
    assert!(message.contains("exited with code 3"), "{message}");
    assert!(
        message.contains("fake-agent: no API key found"),
        "{message}"
    );
    assert!(
        message.contains("Error: set FAKE_API_KEY and try again"),
        "{message}"
    );
    assert_eq!(live_with(&m), Vec::<u32>::new(), "left running");

    let (report, _) = run_check(&fake("killed", &m), Duration::from_secs(20)).await;
    let (kind, message, _) = failure(&report);
    assert_eq!(kind, CheckFailureKind::Exited);
    assert!(message.contains("was killed by signal 9"), "{message}");
    assert!(message.contains("fake-agent: out of memory"), "{message}");
}

#[tokio::test]
async fn a_protocol_version_we_do_not_speak_is_named() {
    let (report, _) = run_check(&demo(&["--protocol-version", "2"]), Duration::from_secs(20)).await;
    let (kind, message, _) = failure(&report);
    assert_eq!(kind, CheckFailureKind::ProtocolVersion);
    assert!(message.contains("version 2"), "{message}");
    assert!(message.contains("speaks version 1"), "{message}");
    assert_eq!(report.protocol_version, Some(2));
    // It did answer: who it is is still reported.
    assert_eq!(report.agent_name.as_deref(), Some("acp-desk-demo-agent"));
}

#[tokio::test]
async fn an_answer_that_is_not_acp_or_an_error_is_named() {
    let m = marker("invalid");
    let (report, _) = run_check(&fake("invalid-init", &m), Duration::from_secs(20)).await;
    let (kind, message, _) = failure(&report);
    assert_eq!(kind, CheckFailureKind::InvalidAnswer);
    assert!(message.contains("not valid ACP"), "{message}");
    assert!(message.contains("\"one\""), "{message}");

    let (report, _) = run_check(&fake("refuse-init", &m), Duration::from_secs(20)).await;
    let (kind, message, _) = failure(&report);
    assert_eq!(kind, CheckFailureKind::Refused);
    assert!(message.contains("config.toml is broken"), "{message}");
    assert!(message.contains("(-32603)"), "{message}");
}

#[tokio::test]
async fn a_banner_before_a_good_answer_passes_with_a_warning() {
    let m = marker("chatty");
    let (report, _) = run_check(&fake("chatty", &m), Duration::from_secs(20)).await;
    assert!(report.ok, "{report:#?}");
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert!(
        report.warnings[0].contains("«fake-agent: loading profile...»"),
        "{:?}",
        report.warnings
    );
}

#[test]
fn the_cli_prints_the_report_and_exits_by_the_outcome() {
    let home = tempfile::tempdir().unwrap();
    let cli = |args: &[&str]| {
        std::process::Command::new(bin("acp-desk-cli"))
            .args(args)
            .env("ACP_DESK_CONFIG_DIR", home.path().join("config"))
            .env("ACP_DESK_DATA_DIR", home.path().join("data"))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let demo = bin("acp-desk-demo-agent").display().to_string();
    let out = cli(&["agents", "check", "--json", "--agent-command", &demo]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], true);
    assert_eq!(report["agentName"], "acp-desk-demo-agent");
    assert_eq!(report["steps"][1]["name"], "initialize");

    let out = cli(&["agents", "check", "--agent-command", &demo]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().next().unwrap().starts_with("start "), "{text}");
    assert!(text.contains("\ninitialize "), "{text}");
    assert!(text.contains("protocol:     1"), "{text}");
    assert!(
        text.contains("agent:        acp-desk-demo-agent (ACP Desk demo agent)"),
        "{text}"
    );

    let out = cli(&[
        "agents",
        "check",
        "--agent-command",
        "acp-desk-no-such-agent",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("FAILED (not-installed)"), "{text}");
    assert!(text.contains("fix: "), "{text}");

    let out = cli(&["agents", "check", "no-such-name"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-name"));
}
