//! MCP servers from the settings, through the real CLI (`acp-desk-cli run`), asserted on what the
//! agent recorded it received (invariant 58): the demo agent and the official TypeScript SDK's
//! agent, each advertising `mcpCapabilities` as the test says (`ACP_DESK_DEMO_MCP`). stdio servers
//! always go; http and sse only when advertised; a skipped server is named in the `mcp-servers`
//! event and a notice; `session/load` and `session/resume` (`run --continue`) carry them again.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use acp_desk_core::StreamEvent;
use common::*;
use serde_json::{Value, json};

#[derive(Clone, Copy, Debug)]
enum Agent {
    Demo,
    Ts,
}

/// A CLI with its own config and data folders, a project folder, and one agent in the
/// settings (`rec`) that records what opened each session.
struct Rig {
    dir: tempfile::TempDir,
}

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Out {
    /// `--json` output: every line exactly one StreamEvent.
    fn events(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {l}"));
                serde_json::from_value::<StreamEvent>(v.clone())
                    .unwrap_or_else(|e| panic!("not a StreamEvent ({e}): {l}"));
                v
            })
            .collect()
    }
}

impl Rig {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("project")).unwrap();
        Rig { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn record_file(&self) -> PathBuf {
        self.path("agent-record.jsonl")
    }

    /// The `agent_servers.rec` entry: the agent advertising `mcp` (`ACP_DESK_DEMO_MCP`), with
    /// load and resume, recording into the rig's file.
    fn agent_entry(&self, agent: Agent, mcp: &str) -> Value {
        let record = self.record_file();
        match agent {
            Agent::Demo => json!({
                "command": bin("acp-desk-demo-agent"),
                "args": ["--session-methods", "load,resume", "--session-dir", self.path("demo-sessions")],
                "env": {"ACP_DESK_DEMO_MCP": mcp, "ACP_DESK_DEMO_RECORD": record},
            }),
            Agent::Ts => {
                // Asserts it is installed, with the message saying how.
                let _ = ts_agent_command();
                json!({
                    "command": "node",
                    "args": [repo_root().join("tests/ts-agent/agent.mjs")],
                    "env": {
                        "ACP_DESK_DEMO_MCP": mcp,
                        "ACP_DESK_DEMO_RECORD": record,
                        "ACP_DESK_TS_SESSION_METHODS": "load,resume",
                    },
                })
            }
        }
    }

    fn settings(&self, agent: Agent, mcp: &str, servers: Value) {
        let config = self.path("config");
        std::fs::create_dir_all(&config).unwrap();
        let settings = json!({
            "agent_servers": {"rec": self.agent_entry(agent, mcp)},
            "mcp_servers": servers,
        });
        std::fs::write(
            config.join("settings.json"),
            serde_json::to_vec_pretty(&settings).unwrap(),
        )
        .unwrap();
    }

    fn cli(&self, args: &[&str]) -> Out {
        let out = Command::new(bin("acp-desk-cli"))
            .args(args)
            .current_dir(self.path("project"))
            .env("ACP_DESK_CONFIG_DIR", self.path("config"))
            .env("ACP_DESK_DATA_DIR", self.path("data"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        Out {
            code: out.status.code(),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// One turn with `rec`; the run must succeed.
    fn run(&self, extra: &[&str], prompt: &str) -> Out {
        let mut args = vec!["run", "--no-audit", "--permission", "allow", "--json"];
        args.extend_from_slice(extra);
        args.push(prompt);
        let out = self.cli(&args);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        out
    }

    fn first_run(&self) -> Out {
        self.run(&["--agent", "rec"], "hello")
    }

    /// The lines the agent recorded, in order.
    fn received(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(self.record_file())
            .unwrap_or_else(|e| panic!("the agent recorded nothing ({e})"));
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The stored session's id (one in the history).
    fn stored_id(&self) -> String {
        let list = self.cli(&["history", "list", "--json"]);
        assert_eq!(list.code, Some(0), "{}", list.stderr);
        let rows: Vec<Value> = list
            .stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(rows.len(), 1, "one stored session: {rows:?}");
        rows[0]["id"].as_str().unwrap().to_owned()
    }
}

/// A program for the stdio server's `command`: ACP wants an absolute path to something that
/// exists (the agents here never start it).
fn stdio_command(dir: &Path) -> PathBuf {
    let path = dir.join("mcp-files");
    std::fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

/// One server of each transport; the values are checked where they arrive.
fn three_servers(dir: &Path) -> Value {
    json!({
        "files": {
            "command": stdio_command(dir),
            "args": ["--root", dir, "two words"],
            "env": {"FILES_MODE": "read-only"},
        },
        "web": {
            "url": "http://127.0.0.1:9/mcp",
            "headers": {"X-Team": "blue"},
        },
        "events": {
            "type": "sse",
            "url": "http://127.0.0.1:9/sse",
            "headers": {"X-Feed": "all"},
        },
    })
}

/// The `mcpServers` of a recorded request, by name.
fn servers_in(line: &Value) -> Vec<(String, Value)> {
    let list = line["params"]["mcpServers"]
        .as_array()
        .unwrap_or_else(|| panic!("no mcpServers array in {line}"));
    let mut v: Vec<(String, Value)> = list
        .iter()
        .map(|s| (s["name"].as_str().unwrap().to_owned(), s.clone()))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn names(servers: &[(String, Value)]) -> Vec<&str> {
    servers.iter().map(|(n, _)| n.as_str()).collect()
}

/// The run's one `mcp-servers` event: (name, transport, passed) sorted, and the whole event.
fn report(events: &[Value]) -> (Vec<(String, String, bool)>, Value) {
    let reports: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "mcp-servers")
        .collect();
    assert_eq!(
        reports.len(),
        1,
        "one mcp-servers event per start: {events:?}"
    );
    let ev = reports[0].clone();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    let at = kinds.iter().position(|k| *k == "mcp-servers").unwrap();
    let ready = events
        .iter()
        .position(|e| e["kind"] == "session-status" && e["status"] == "ready")
        .expect("a ready status");
    assert!(at < ready, "mcp-servers comes before ready: {kinds:?}");
    let mut rows: Vec<(String, String, bool)> = ev["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["transport"].as_str().unwrap().to_owned(),
                s["passed"].as_bool().unwrap(),
            )
        })
        .collect();
    rows.sort();
    (rows, ev)
}

fn row(name: &str, transport: &str, passed: bool) -> (String, String, bool) {
    (name.to_owned(), transport.to_owned(), passed)
}

/// Checks the stdio and url servers' fields as the agent got them.
fn check_wire(servers: &[(String, Value)], dir: &Path) {
    for (name, s) in servers {
        match name.as_str() {
            "files" => {
                assert!(
                    s.get("type").is_none_or(|t| t == "stdio"),
                    "stdio has no other type: {s}"
                );
                assert_eq!(s["command"], json!(dir.join("mcp-files")));
                assert_eq!(
                    s["args"],
                    json!(["--root", dir, "two words"]),
                    "args verbatim"
                );
                assert_eq!(
                    s["env"],
                    json!([{"name": "FILES_MODE", "value": "read-only"}])
                );
            }
            "web" => {
                assert_eq!(s["type"], "http");
                assert_eq!(s["url"], "http://127.0.0.1:9/mcp");
                assert_eq!(s["headers"], json!([{"name": "X-Team", "value": "blue"}]));
            }
            "events" => {
                assert_eq!(s["type"], "sse");
                assert_eq!(s["url"], "http://127.0.0.1:9/sse");
                assert_eq!(s["headers"], json!([{"name": "X-Feed", "value": "all"}]));
            }
            other => panic!("an unexpected server reached the agent: {other}"),
        }
    }
}

/// Per agent and per advertised capability: exactly the servers it may take reach it, with
/// their fields as configured; the rest are reported skipped (event and notice).
fn passed_or_skipped_by_capabilities(agent: Agent) {
    let cases: [(&str, &[&str]); 4] = [
        ("http,sse", &["events", "files", "web"]),
        ("http", &["files", "web"]),
        ("sse", &["events", "files"]),
        ("none", &["files"]),
    ];
    for (mcp, want) in cases {
        let rig = Rig::new();
        let dir = rig.path("project");
        rig.settings(agent, mcp, three_servers(&dir));
        let out = rig.first_run();
        let got = rig.received();
        assert_eq!(got.len(), 1, "{agent:?}/{mcp}: one session/new: {got:?}");
        assert_eq!(got[0]["method"], "session/new");
        let servers = servers_in(&got[0]);
        assert_eq!(
            names(&servers),
            want,
            "{agent:?}/{mcp}: what reached the agent"
        );
        check_wire(&servers, &dir);

        let events = out.events();
        let (rows, ev) = report(&events);
        let expect: Vec<(String, String, bool)> =
            [("events", "sse"), ("files", "stdio"), ("web", "http")]
                .iter()
                .map(|(n, t)| row(n, t, want.contains(n)))
                .collect();
        assert_eq!(
            rows, expect,
            "{agent:?}/{mcp}: the report says what was passed"
        );
        for s in ev["servers"].as_array().unwrap() {
            assert_eq!(s["source"], "settings");
            if s["passed"] == false {
                let reason = s["reason"].as_str().unwrap_or_default();
                assert!(
                    reason.contains(s["transport"].as_str().unwrap()),
                    "{agent:?}/{mcp}: the reason names what the agent lacks: {s}"
                );
            }
        }
        assert_eq!(
            ev["servers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == "web")
                .unwrap()["target"],
            "http://127.0.0.1:9/mcp"
        );
        let skipped: Vec<&str> = ["events", "web"]
            .into_iter()
            .filter(|n| !want.contains(n))
            .collect();
        let notices: Vec<&Value> = events
            .iter()
            .filter(|e| e["kind"] == "notice")
            .filter(|e| {
                let text = e.to_string();
                skipped.iter().any(|n| text.contains(n))
            })
            .collect();
        if skipped.is_empty() {
            assert!(
                notices.is_empty(),
                "{agent:?}/{mcp}: nothing skipped, no notice"
            );
        } else {
            assert_eq!(
                notices.len(),
                1,
                "{agent:?}/{mcp}: one notice names the skipped servers: {events:?}"
            );
            let text = notices[0].to_string();
            for n in &skipped {
                assert!(text.contains(n), "{agent:?}/{mcp}: {n} named: {text}");
            }
        }
    }
}

#[test]
fn demo_agent_gets_the_servers_its_capabilities_allow() {
    passed_or_skipped_by_capabilities(Agent::Demo);
}

#[test]
fn ts_sdk_agent_gets_the_servers_its_capabilities_allow() {
    passed_or_skipped_by_capabilities(Agent::Ts);
}

/// `run --continue`: resume (preferred) and load carry the same servers, filtered the same way.
fn continuing_carries_them(agent: Agent) {
    let rig = Rig::new();
    let dir = rig.path("project");
    rig.settings(agent, "http", three_servers(&dir));
    rig.first_run();
    let id = rig.stored_id();
    let resumed = rig.run(&["--continue", &id], "again");
    assert!(
        resumed.stderr.contains("resumed"),
        "{agent:?}: {}",
        resumed.stderr
    );
    let loaded = rig.run(&["--continue", &id, "--continue-via", "load"], "and again");
    assert!(
        loaded.stderr.contains("loaded"),
        "{agent:?}: {}",
        loaded.stderr
    );
    let got = rig.received();
    let methods: Vec<&str> = got.iter().map(|l| l["method"].as_str().unwrap()).collect();
    assert_eq!(
        methods,
        ["session/new", "session/resume", "session/load"],
        "{agent:?}"
    );
    for line in &got {
        let servers = servers_in(line);
        assert_eq!(names(&servers), ["files", "web"], "{agent:?}: {line}");
        check_wire(&servers, &dir);
    }
    for out in [&resumed, &loaded] {
        let (rows, _) = report(&out.events());
        assert_eq!(
            rows,
            [
                row("events", "sse", false),
                row("files", "stdio", true),
                row("web", "http", true)
            ],
            "{agent:?}: a continued session reports again"
        );
    }
}

#[test]
fn demo_agent_continued_sessions_carry_the_servers() {
    continuing_carries_them(Agent::Demo);
}

#[test]
fn ts_sdk_agent_continued_sessions_carry_the_servers() {
    continuing_carries_them(Agent::Ts);
}

/// `mcp_servers.NAME.agents`: only the named agents get that server.
#[test]
fn a_server_scoped_to_other_agents_does_not_reach_this_one() {
    let rig = Rig::new();
    let dir = rig.path("project");
    let mut servers = three_servers(&dir);
    servers["web"]["agents"] = json!(["someone-else"]);
    servers["files"]["agents"] = json!(["rec"]);
    rig.settings(Agent::Demo, "http,sse", servers);
    rig.first_run();
    let got = rig.received();
    assert_eq!(names(&servers_in(&got[0])), ["events", "files"]);
}

/// No servers configured: `mcpServers: []` as before, and no notice about MCP.
#[test]
fn without_servers_the_agent_gets_an_empty_list() {
    let rig = Rig::new();
    rig.settings(Agent::Demo, "http,sse", json!({}));
    let out = rig.first_run();
    let got = rig.received();
    assert_eq!(got[0]["params"]["mcpServers"], json!([]));
    let events = out.events();
    assert!(
        !events
            .iter()
            .any(|e| e["kind"] == "notice" && e.to_string().contains("MCP")),
        "{events:?}"
    );
}
