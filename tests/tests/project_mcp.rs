//! A project's own MCP config (`.mcp.json` and the like) is never used on its own (invariant
//! 56), asserted on what the demo agent recorded it received (`ACP_DESK_DEMO_RECORD`):
//! - the CLI names it on stderr and passes nothing; with `--project-mcp` it passes the file's
//!   usable servers, and never one holding a `${...}` placeholder;
//! - the app layer passes a file's servers only while its digest is the one agreed to, and
//!   "Restart session with them" ends the agent and continues the conversation with them.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use acp_desk_app::project_mcp::{self, ProjectMcpChoice};
use acp_desk_app::state::AppState;
use acp_desk_app::{OpenRequest, Registry};
use acp_desk_core::StreamEvent;
use common::*;
use serde_json::Value;

const CONFIG: &str = r#"{
  "mcpServers": {
    "files": { "command": "npx", "args": ["-y", "server-fs", "./docs"], "env": { "FS_TOKEN": "fs-tok-1" } },
    "gh": { "command": "gh-mcp", "args": ["--token", "${GITHUB_TOKEN}"] }
  }
}"#;

/// Every `params.mcpServers` the agent recorded, one list per session opened, by name.
fn received(record: &Path) -> Vec<(String, Vec<Value>)> {
    let Ok(text) = std::fs::read_to_string(record) else {
        return Vec::new();
    };
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let servers = v["params"]["mcpServers"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            (v["method"].as_str().unwrap().to_owned(), servers)
        })
        .collect()
}

fn names(servers: &[Value]) -> Vec<&str> {
    servers
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect()
}

fn cli(dir: &Path, project: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let record = dir.join("record.jsonl");
    let out = Command::new(bin("acp-desk-cli"))
        .args(["run", "--agent", "demo", "--no-history", "--json"])
        .args(extra)
        .arg("hello")
        .current_dir(project)
        .env("ACP_DESK_CONFIG_DIR", dir.join("config"))
        .env("ACP_DESK_DATA_DIR", dir.join("data"))
        .env("ACP_DESK_DEMO_RECORD", &record)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_cli_names_a_folder_config_and_uses_it_only_with_project_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join(".mcp.json"), CONFIG).unwrap();
    let record = dir.path().join("record.jsonl");

    let (code, stderr) = cli(dir.path(), &project, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let got = received(&record);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].0, "session/new");
    assert!(
        got[0].1.is_empty(),
        "nothing from the folder without --project-mcp: {got:?}"
    );
    // One note: what it would run (command line, env names), and how to use it.
    assert_eq!(stderr.matches("own MCP config").count(), 1, "{stderr}");
    assert!(
        stderr.contains("files (stdio): npx -y server-fs ./docs [env: FS_TOKEN]"),
        "{stderr}"
    );
    assert!(stderr.contains("--project-mcp"), "{stderr}");
    assert!(
        stderr.contains("${GITHUB_TOKEN}") && stderr.contains("not used"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("fs-tok-1"),
        "an env value is never printed: {stderr}"
    );

    std::fs::remove_file(&record).unwrap();
    let (code, stderr) = cli(dir.path(), &project, &["--project-mcp"]);
    assert_eq!(code, Some(0), "{stderr}");
    let got = received(&record);
    assert_eq!(
        names(&got[0].1),
        ["files"],
        "the placeholder server is never passed"
    );
    let files = &got[0].1[0];
    // ACP wants an absolute command: `npx` as found on PATH.
    let command = files["command"].as_str().unwrap_or_default();
    assert!(
        command.starts_with('/') && command.ends_with("/npx"),
        "{command}"
    );
    assert_eq!(
        files["args"],
        serde_json::json!(["-y", "server-fs", "./docs"])
    );
    assert_eq!(files["env"][0]["name"], "FS_TOKEN");
    assert_eq!(files["env"][0]["value"], "fs-tok-1");
    assert!(
        stderr.contains("this run also gives the agent 1 MCP server"),
        "{stderr}"
    );
}

/// The session's thread once it holds `n` turn ends.
async fn turn_ends(r: &Registry, id: &str, n: usize) -> Vec<StreamEvent> {
    let deadline = tokio::time::Instant::now() + HANG;
    loop {
        let thread = r.snapshot(id).unwrap();
        let ends = thread
            .iter()
            .filter(|e| matches!(e, StreamEvent::TurnEnd { .. }))
            .count();
        if ends >= n {
            return thread;
        }
        assert!(tokio::time::Instant::now() < deadline, "no {n} turn ends");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

async fn record_lines(record: &Path, n: usize) -> Vec<(String, Vec<Value>)> {
    let deadline = tokio::time::Instant::now() + HANG;
    loop {
        let got = received(record);
        if got.len() >= n {
            return got;
        }
        assert!(tokio::time::Instant::now() < deadline, "{got:?}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agreed_servers_reach_the_agent_and_a_restart_continues_with_the_new_ones() {
    let dir = tempfile::tempdir().unwrap();
    let folder = std::fs::canonicalize(tempfile::tempdir().unwrap().keep()).unwrap();
    std::fs::write(folder.join(".mcp.json"), CONFIG).unwrap();
    let record = dir.path().join("record.jsonl");
    let mut spec = demo(&[
        "--session-methods",
        "resume",
        "--session-dir",
        dir.path().join("sessions").to_str().unwrap(),
    ]);
    spec.env.push((
        "ACP_DESK_DEMO_RECORD".into(),
        record.display().to_string().into(),
    ));

    // Not agreed to: the folder's file adds nothing.
    let mut state = AppState::default();
    assert!(project_mcp::approved_servers(&state, &folder).is_empty());
    let registry = Registry::new(tokio::runtime::Handle::current());
    let mut request = OpenRequest::new(folder.clone(), "demo", spec);
    request.options = opts(&folder);
    request.project_mcp = project_mcp::approved_servers(&state, &folder);
    let id = registry.open(request).id;
    registry.started(&id).await.unwrap();
    registry
        .prompt(&id, vec![acp_desk_core::text_block("first".to_string())])
        .await
        .unwrap();
    let got = record_lines(&record, 1).await;
    assert_eq!(got[0].0, "session/new");
    assert!(got[0].1.is_empty(), "{got:?}");

    // Agreed to ("Use in this folder"), then "Restart session with them".
    let offer = project_mcp::offer(&state, &folder).unwrap();
    let digest = &offer.files[0].digest;
    project_mcp::check_decision(&folder, ".mcp.json", digest).unwrap();
    project_mcp::record(
        &mut state,
        &folder,
        ".mcp.json",
        digest,
        ProjectMcpChoice::Use,
    );
    let servers = project_mcp::approved_servers(&state, &folder);
    registry
        .restart_with_project_mcp(&id, servers)
        .await
        .unwrap();
    let got = record_lines(&record, 2).await;
    assert_eq!(
        got[1].0, "session/resume",
        "the conversation continues: {got:?}"
    );
    assert_eq!(names(&got[1].1), ["files"]);
    registry.started(&id).await.unwrap();
    registry
        .prompt(&id, vec![acp_desk_core::text_block("second".to_string())])
        .await
        .unwrap();
    let thread = turn_ends(&registry, &id, 2).await;
    assert_eq!(
        thread
            .iter()
            .filter(|e| matches!(e, StreamEvent::TurnEnd { .. }))
            .count(),
        2,
        "the thread kept the first turn"
    );

    // Edited after agreeing: the next start gets none of it.
    std::fs::write(folder.join(".mcp.json"), CONFIG.replace("./docs", "/")).unwrap();
    assert!(project_mcp::approved_servers(&state, &folder).is_empty());
    registry.close(&id).await.unwrap();
    std::fs::remove_dir_all(&folder).unwrap();
}
