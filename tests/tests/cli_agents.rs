//! `acp-desk-cli agents` and `run --agent` over every source of agents, with the settings file
//! in every state a user leaves it in (issue 16).
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::*;
use serde_json::Value;

/// A user of their own: config, data and home folders, and a PATH holding only `bin/`.
struct User {
    dir: tempfile::TempDir,
}

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl User {
    fn new() -> User {
        let dir = tempfile::tempdir().unwrap();
        for d in ["config", "data", "home", "bin", "work"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        User { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn settings(&self, text: &str) {
        std::fs::write(self.path("config/settings.json"), text).unwrap();
    }

    /// An executable `bin/NAME` (a fake agent: nothing here starts it).
    fn program(&self, name: &str) -> PathBuf {
        let p = self.path("bin").join(name);
        std::fs::write(&p, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    fn cli(&self, args: &[&str]) -> Out {
        let out = Command::new(bin("acp-desk-cli"))
            .args(args)
            .current_dir(self.path("work"))
            .env_clear()
            .env("PATH", self.path("bin"))
            .env("HOME", self.path("home"))
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

    fn listing(&self) -> (Value, String) {
        let out = self.cli(&["agents", "--json"]);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        let v: Value = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON listing ({e}): {}", out.stdout));
        (v, out.stderr)
    }
}

fn entry<'a>(listing: &'a Value, id: &str) -> &'a Value {
    listing["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {listing:#}"))
}

fn ids(listing: &Value) -> Vec<String> {
    listing["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_owned())
        .collect()
}

impl User {
    /// `config/agents/NAME/ACP.md`, a server started by `command` (our vendor key), with
    /// `audit` as given (YAML, indented under `aip44`), or none.
    fn manifest(&self, name: &str, command: &str, audit: &str) {
        let dir = self.path("config/agents").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("ACP.md"),
            format!(
                "---\nname: {name}\nid: example.{name}\ndescription: The {name} agent.\nversion: 1.0.0\nkind: server\ntransport: stdio\nmetadata:\n  aip44:\n    acp_rev: c0945895a63233bfdbdf95990104c11f5d8d8991\n    tier: basic\n    operator: OPERATOR.md\n{audit}  acp-desk:\n    command: {command}\n---\n\n# {name}\n"
            ),
        )
        .unwrap();
    }

    /// Imports a registry file of two agents through the CLI, as a user would.
    fn import_registry(&self) {
        let file = self.path("registry.json");
        let text = serde_json::json!({"version": "1.0.0", "agents": [
            {"id": "reg-agent", "name": "Registry agent", "version": "1.0.0",
             "description": "from the registry", "authors": ["x"], "license": "MIT",
             "distribution": {"npx": {"package": "reg-agent-pkg"}}},
            {"id": "goose", "name": "goose", "version": "1.0.0",
             "description": "goose from the registry", "authors": ["x"], "license": "MIT",
             "distribution": {"npx": {"package": "goose-pkg"}}},
        ]});
        std::fs::write(&file, text.to_string()).unwrap();
        let out = self.cli(&["agents", "import-registry", file.to_str().unwrap()]);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
    }
}

#[test]
fn agents_json_lists_every_source_in_order_with_one_entry_per_id() {
    let u = User::new();
    let goose = u.program("goose");
    u.program("my-agent");
    u.manifest("described", "my-agent", "");
    u.import_registry();
    u.settings(
        r#"{
  // pasted from Zed
  "agent_servers": {
    "zed-paste": {"type": "custom", "command": "my-agent", "args": ["--acp"], "env": {"API_KEY": "sk-do-not-show"}},
    "gemini": {"command": "/opt/gemini/bin/gemini", "args": ["--acp"],},
  },
}"#,
    );
    let (l, stderr) = u.listing();
    assert_eq!(l["problems"], Value::Array(vec![]), "{stderr}");
    let ids = ids(&l);
    assert_eq!(
        &ids[..4],
        &["demo", "zed-paste", "gemini", "described"],
        "{ids:?}"
    );
    assert_eq!(ids.last().map(String::as_str), Some("reg-agent"), "{ids:?}");
    let m = entry(&l, "described");
    assert_eq!(
        (&m["source"], &m["status"]),
        (&"manifest".into(), &"found".into())
    );
    assert!(
        m["manifestFile"]
            .as_str()
            .unwrap()
            .ends_with("described/ACP.md")
    );
    let r = entry(&l, "reg-agent");
    assert_eq!(r["source"], "registry");
    // No npx on this PATH: it says so.
    assert_eq!(r["status"], "missing");
    assert_eq!(l["registry"]["kind"], "imported");
    assert_eq!(l["registry"]["agents"], 2);
    for builtin in [
        "claude",
        "claude-code-acp",
        "codex",
        "goose",
        "opencode",
        "copilot",
    ] {
        assert!(
            ids.iter().any(|i| i == builtin),
            "{builtin} missing: {ids:?}"
        );
    }
    assert_eq!(
        ids.iter().filter(|i| *i == "gemini").count(),
        1,
        "one entry per id"
    );
    let z = entry(&l, "zed-paste");
    assert_eq!(z["source"], "settings");
    assert_eq!(z["status"], "found");
    assert_eq!(z["command"], "my-agent --acp");
    assert_eq!(z["envNames"], serde_json::json!(["API_KEY"]));
    assert!(
        !serde_json::to_string(&l)
            .unwrap()
            .contains("sk-do-not-show")
    );
    let g = entry(&l, "gemini");
    assert_eq!(g["source"], "settings");
    assert_eq!(g["alsoDefinedIn"], serde_json::json!(["builtin"]));
    assert_eq!(g["status"], "missing");
    // goose is installed here: the local install beats the registry's download.
    let goose_entry = entry(&l, "goose");
    assert_eq!(goose_entry["source"], "builtin");
    assert_eq!(
        goose_entry["alsoDefinedIn"],
        serde_json::json!(["registry"])
    );
    assert_eq!(goose_entry["status"], "found");
    assert_eq!(goose_entry["command"], format!("{} acp", goose.display()));
    // No npx on this PATH: the npx agents say how to install them.
    let c = entry(&l, "claude");
    assert_eq!(c["status"], "missing");
    assert_eq!(
        c["installCommand"],
        "npm install -g @agentclientprotocol/claude-agent-acp"
    );
    assert_eq!(l["defaultAgent"], "zed-paste");
    assert_eq!(l["defaultReason"], "first agent_servers entry");
    assert!(
        l["settingsFile"]
            .as_str()
            .unwrap()
            .ends_with("config/settings.json")
    );

    // The text listing says the same, one agent per line.
    let out = u.cli(&["agents"]);
    assert_eq!(out.code, Some(0));
    let gemini_line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("gemini "))
        .unwrap();
    assert!(
        gemini_line.contains("settings (also built-in)") && gemini_line.contains("missing"),
        "{gemini_line}"
    );
    assert!(
        out.stdout
            .contains("default for new sessions: zed-paste (first agent_servers entry)"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_broken_settings_file_is_named_and_demo_still_runs() {
    let u = User::new();
    u.settings("{\n  \"agent_servers\": {\n    \"mine\": {\"command\": \"x\"}\n  ");
    let (l, stderr) = u.listing();
    let file = u.path("config/settings.json");
    let problems = l["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{l:#}");
    // Where the unterminated object opens.
    assert_eq!(
        (&problems[0]["line"], &problems[0]["column"]),
        (&2.into(), &20.into())
    );
    assert_eq!(problems[0]["severity"], "error");
    // Said on stderr, FILE:LINE:COL first, the shape terminals turn into links.
    assert!(
        stderr.contains(&format!(
            "acp-desk-cli: error: {}:2:20: not valid JSON: Unterminated object",
            file.display()
        )),
        "{stderr}"
    );
    assert_eq!(l["agents"][0]["id"], "demo");
    assert_eq!(l["defaultAgent"], "demo");

    let out = u.cli(&["run", "--agent", "demo", "--json", "hello"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("\"turn-end\""), "{}", out.stdout);
    assert!(
        out.stderr.contains(&format!("{}:2:20:", file.display())),
        "{}",
        out.stderr
    );

    // A wrong field skips only its entry; --agent names the entry's problem.
    u.settings(
        "{\"agent_servers\": {\n  \"bad\": {\"command\": \"x\", \"args\": [1]},\n  \"ok\": {\"command\": \"my-agent\"}\n}}",
    );
    let out = u.cli(&["run", "--agent", "bad", "hello"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "the agent `bad` cannot be started: {}:2:",
            file.display()
        )) && out.stderr.contains("agent_servers.bad.args[0]"),
        "{}",
        out.stderr
    );
    let (l, _) = u.listing();
    assert_eq!(entry(&l, "bad")["status"], "invalid");
    assert_eq!(entry(&l, "ok")["status"], "missing");
    let out = u.cli(&["run", "--agent", "demo", "--json", "hello"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
}

#[test]
fn history_off_in_the_settings_records_no_run() {
    let u = User::new();
    u.settings(r#"{"history": {"enabled": false}}"#);
    let out = u.cli(&["run", "--agent", "demo", "--json", "hello"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("not recorded: `history.enabled` is false"),
        "{}",
        out.stderr
    );
    let listed = u.cli(&["history", "list", "--json"]);
    assert_eq!(listed.stdout, "", "{}", listed.stderr);
    // The same run with history on is recorded (the check above means something).
    u.settings(r#"{"history": {"enabled": true}}"#);
    let out = u.cli(&["run", "--agent", "demo", "--json", "hello"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let listed = u.cli(&["history", "list", "--json"]);
    assert_eq!(listed.stdout.lines().count(), 1, "{}", listed.stderr);
}

#[test]
fn run_over_a_manifest_agent_takes_its_audit_setting() {
    let u = User::new();
    let demo = bin("acp-desk-demo-agent");
    let demo = demo.to_str().unwrap();
    u.manifest("audited", demo, "");
    u.manifest("unaudited", demo, "    audit:\n      kind: off\n");
    let audit_files = || -> usize {
        let dir = u.path("data/audit");
        if !dir.exists() {
            return 0;
        }
        walk(&dir)
    };
    let out = u.cli(&["run", "--agent", "unaudited", "--json", "hello"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(audit_files(), 0, "audit.kind: off in the manifest");
    let out = u.cli(&["run", "--agent", "audited", "--json", "hello"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(audit_files(), 1, "the default: an audit log");
}

fn walk(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            if p.is_dir() { walk(&p) } else { 1 }
        })
        .sum()
}

/// `check_agent`: a manifest agent's declared capabilities compared with what `initialize`
/// reported; a built-in not installed gets its install command as the fix.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_agent_compares_a_manifests_capabilities_with_initialize() {
    use acp_desk_core::agents::{self, CheckLimits, Sources};
    let u = User::new();
    let demo = bin("acp-desk-demo-agent");
    let sources = Sources::isolated(u.dir.path(), u.path("bin").into_os_string());
    let limits = CheckLimits {
        initialize: std::time::Duration::from_secs(20),
    };
    // What the demo agent says of itself, to declare the opposite.
    let plain = agents::check(
        &agents::from_command_line(demo.to_str().unwrap()).unwrap(),
        &u.path("work"),
        limits,
    )
    .await;
    assert!(plain.ok, "{plain:?}");
    let load = plain.capabilities.as_ref().unwrap()["loadSession"] == true;
    u.manifest(
        "demo-described",
        demo.to_str().unwrap(),
        &format!(
            "    capabilities:\n      agent:\n        loadSession: {}\n",
            !load
        ),
    );
    let report = agents::check_agent(&sources, "demo-described", &u.path("work"), limits)
        .await
        .unwrap();
    assert!(report.ok, "{report:?}");
    let d = report
        .differences
        .iter()
        .find(|d| d.path == "agent.loadSession")
        .unwrap_or_else(|| panic!("{:?}", report.differences));
    assert_eq!(d.declared, Some((!load).into()));
    // A built-in that is not installed: Check says how to install it.
    let report = agents::check_agent(&sources, "copilot", &u.path("work"), limits)
        .await
        .unwrap();
    let failure = report.failure.unwrap();
    assert!(
        failure.fix.contains("npm install -g @github/copilot"),
        "{failure:?}"
    );
    assert!(matches!(
        agents::check_agent(&sources, "nope", &u.path("work"), limits).await,
        Err(agents::AgentError::Unknown(..))
    ));
}

#[test]
fn an_agents_secret_env_is_listed_by_name_and_a_missing_secret_stops_its_start() {
    let u = User::new();
    u.program("keyed-agent");
    u.settings(
        r#"{"agent_servers": {"keyed": {"command": "keyed-agent",
            "env": {"PLAIN": "plain-value-4471", "KEY": {"secret": "keyed-key"}}}}}"#,
    );
    let out = u.cli(&["agents"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stdout.contains("env: KEY={secret: keyed-key}, PLAIN"),
        "{}",
        out.stdout
    );
    let json = u.cli(&["agents", "--json"]);
    let listing: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        entry(&listing, "keyed")["envNames"],
        serde_json::json!(["KEY={secret: keyed-key}", "PLAIN"])
    );
    for text in [&out.stdout, &out.stderr, &json.stdout, &json.stderr] {
        assert!(!text.contains("plain-value-4471"));
    }
    // No keychain service in this environment (no session bus): the agent is not started,
    // and the message names the secret and how to store it.
    let run = u.cli(&["run", "--agent", "keyed", "--permission", "reject", "hi"]);
    assert_ne!(run.code, Some(0));
    assert!(
        run.stderr
            .contains("its env KEY needs the secret `keyed-key`")
            && run.stderr.contains("keychain"),
        "{}",
        run.stderr
    );
}
