//! Remembered permission answers, the "reads inside the folders" policy, the audit log, files
//! the agent changes itself (the folder watcher) and write conflicts, through the engine and the
//! CLI with the demo agent. Every test has its own config and data folders (options for the
//! engine, `ACP_DESK_CONFIG_DIR` / `ACP_DESK_DATA_DIR` for CLI processes).
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use acp_desk_core::agents::LaunchSpec;
use acp_desk_core::events::{FileChangeVia, PermissionResolution, SettledBy};
use acp_desk_core::fs::ChangeSource;
use acp_desk_core::rules::{Decision, NewRule, RuleStore, Target, ToolMatcher};
use acp_desk_core::schema::v1 as acp;
use acp_desk_core::{SessionHandle, SessionOptions, StreamEvent, start};
use common::*;
use serde_json::{Value, json};

/// A user's config and data folders, and a project folder.
struct Home {
    _dir: tempfile::TempDir,
    config: PathBuf,
    data: PathBuf,
    project: PathBuf,
}

fn home() -> Home {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let project = root.join("project");
    std::fs::create_dir_all(&project).unwrap();
    Home {
        config: root.join("config"),
        data: root.join("data"),
        project,
        _dir: dir,
    }
}

impl Home {
    fn rules_file(&self) -> PathBuf {
        self.config.join("permission-rules.json")
    }

    fn opts(&self, project: &Path) -> SessionOptions {
        let mut o = opts(project);
        o.rules_file = Some(self.rules_file());
        o
    }

    fn cli(&self, args: &[&str]) -> (Option<i32>, String, String) {
        let out = Command::new(bin("acp-desk-cli"))
            .args(args)
            .current_dir(&self.project)
            .env("ACP_DESK_CONFIG_DIR", &self.config)
            .env("ACP_DESK_DATA_DIR", &self.data)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `run --json` in the project; the events.
    fn run(&self, args: &[&str]) -> Vec<Value> {
        let mut all = vec!["run", "--json"];
        all.extend_from_slice(args);
        let (code, stdout, stderr) = self.cli(&all);
        assert_eq!(code, Some(0), "{stderr}");
        stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn add_rule(&self, agent: &str, tool: ToolMatcher, decision: Decision) {
        let (mut store, _) = RuleStore::open(self.rules_file()).unwrap();
        store
            .add(NewRule {
                agent: agent.into(),
                project: self.project.clone(),
                tool,
                decision,
                note: None,
            })
            .unwrap();
    }
}

fn named(name: &str, flags: &[&str]) -> LaunchSpec {
    let mut spec = demo(flags);
    spec.name = name.into();
    spec
}

/// One turn of a permission scenario (`prompt`): answers the agent's request with the option
/// of kind `answer` (`None`: cancelled) if it was still waiting, then returns who settled it and
/// with which option.
async fn permission_turn(
    h: &SessionHandle,
    rx: &mut Collector,
    prompt: &str,
    answer: Option<acp::PermissionOptionKind>,
) -> (SettledBy, Option<String>) {
    permission_turn_seen(h, rx, prompt, answer, &mut Vec::new()).await
}

/// As [`permission_turn`], keeping the turn's events in `seen`.
async fn permission_turn_seen(
    h: &SessionHandle,
    rx: &mut Collector,
    prompt: &str,
    answer: Option<acp::PermissionOptionKind>,
    seen: &mut Vec<StreamEvent>,
) -> (SettledBy, Option<String>) {
    let turn = spawn_prompt(h, prompt);
    let p = rx.next_prompt(seen).await;
    // A rule settles the request in the same step that parks it, so by the time this answer
    // is handled the request is gone if a rule answered it.
    let resolution = match answer {
        Some(kind) => {
            let o = p.options.iter().find(|o| o.kind == kind).unwrap();
            PermissionResolution::selected(o.option_id.0.to_string())
        }
        None => PermissionResolution::cancelled(),
    };
    let _ = h.respond_permission(&p.request_id, resolution).await;
    let StreamEvent::AgentPromptSettled { by, outcome, .. } = rx
        .until(seen, |e| {
            matches!(e, StreamEvent::AgentPromptSettled { .. })
        })
        .await
    else {
        unreachable!()
    };
    rx.until(seen, |e| matches!(e, StreamEvent::TurnEnd { .. }))
        .await;
    finish(turn).await;
    let option = match outcome {
        PermissionResolution::Selected { option_id, .. } => Some(option_id),
        PermissionResolution::Cancelled { .. } => None,
    };
    (by, option)
}

async fn open(spec: LaunchSpec, o: SessionOptions) -> (SessionHandle, Collector) {
    let (tx, rx) = channel();
    let h = start(spec, o, tx).await.unwrap();
    (h, rx)
}

#[tokio::test]
async fn an_always_answer_is_remembered_per_agent_and_project_until_revoked() {
    use acp::PermissionOptionKind as K;
    let home = home();
    let (h, mut rx) = open(named("demo", &[]), home.opts(&home.project)).await;
    let mut evs = Vec::new();
    let (by, option) =
        permission_turn_seen(&h, &mut rx, "permission", Some(K::AllowAlways), &mut evs).await;
    assert_eq!(
        (by, option.as_deref()),
        (SettledBy::User, Some("proceed_always"))
    );
    // The next identical request is answered by the rule, with the "once" option (the client
    // remembers, not the agent), and nobody is asked.
    let (by, option) = permission_turn_seen(&h, &mut rx, "permission", None, &mut evs).await;
    assert_eq!(
        (by, option.as_deref()),
        (SettledBy::Rule, Some("proceed_once"))
    );
    h.close().await;
    evs.extend(rx.all().await);
    assert!(
        evs.iter().any(
            |e| matches!(e, StreamEvent::Notice { title, .. } if title.starts_with("Remembered"))
        ),
        "the user is told what was remembered"
    );

    // Persisted: a new session of the same agent in the same project.
    let (h, mut rx) = open(named("demo", &[]), home.opts(&home.project)).await;
    let (by, _) = permission_turn(&h, &mut rx, "permission", None).await;
    assert_eq!(by, SettledBy::Rule);
    h.close().await;

    // Another agent in the same project, and the same agent in another project, are asked.
    let (h, mut rx) = open(named("other-agent", &[]), home.opts(&home.project)).await;
    let (by, _) = permission_turn(&h, &mut rx, "permission", None).await;
    assert_eq!(by, SettledBy::User);
    h.close().await;
    let elsewhere = home.project.parent().unwrap().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let (h, mut rx) = open(named("demo", &[]), home.opts(&elsewhere)).await;
    let (by, _) = permission_turn(&h, &mut rx, "permission", None).await;
    assert_eq!(by, SettledBy::User);
    h.close().await;

    // Listed by the CLI (filtered), and revoked through it.
    let project = home.project.to_str().unwrap();
    let (code, out, err) = home.cli(&["rules", "list", "--agent", "demo", "--project", project]);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert!(
        lines[0].contains("allow execute command `cargo test` for demo in"),
        "{out}"
    );
    let (_, none, _) = home.cli(&["rules", "--agent", "other-agent"]);
    assert_eq!(none, "");
    let id = lines[0].split_whitespace().next().unwrap();
    let (code, out, err) = home.cli(&["rules", "revoke", id]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with(&format!("revoked {id}")), "{out}");
    let (code, _, err) = home.cli(&["rules", "revoke", id]);
    assert_eq!(code, Some(2), "a second revoke is a clear error: {err}");
    assert!(err.contains(id), "{err}");
    let (_, out, _) = home.cli(&["rules"]);
    assert_eq!(out, "");

    // Revoked: asked again.
    let (h, mut rx) = open(named("demo", &[]), home.opts(&home.project)).await;
    let (by, _) = permission_turn(&h, &mut rx, "permission", None).await;
    assert_eq!(by, SettledBy::User);
    h.close().await;
}

#[tokio::test]
async fn an_always_reject_is_remembered_and_sessions_without_rules_remember_nothing() {
    use acp::PermissionOptionKind as K;
    let home = home();
    let steps = json!([{"permission": {
        "tool_call": {"toolCallId": "t1", "title": "Delete build", "kind": "delete",
                      "rawInput": {"path": "{cwd}/build"}},
        "options": [
            {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
            {"optionId": "never", "name": "Never", "kind": "reject_always"},
            {"optionId": "no", "name": "Reject", "kind": "reject_once"}
        ],
        "on_allow": [], "on_reject": [], "on_cancelled": []
    }}]);
    let scenarios = scenario_dir(&[("delete", &["delete-build"], steps)]);
    let flags = ["--scenario-dir", scenarios.path().to_str().unwrap()];

    // Without a rules file: "always" is not kept anywhere.
    let (h, mut rx) = open(demo(&flags), opts(&home.project)).await;
    let (by, _) = permission_turn(&h, &mut rx, "delete-build", Some(K::RejectAlways)).await;
    assert_eq!(by, SettledBy::User);
    let (by, _) = permission_turn(&h, &mut rx, "delete-build", None).await;
    assert_eq!(by, SettledBy::User);
    h.close().await;
    assert!(!home.rules_file().exists());

    let (h, mut rx) = open(demo(&flags), home.opts(&home.project)).await;
    let (by, _) = permission_turn(&h, &mut rx, "delete-build", Some(K::RejectAlways)).await;
    assert_eq!(by, SettledBy::User);
    // A reject rule picks the reject_once option, by kind.
    let (by, option) = permission_turn(&h, &mut rx, "delete-build", None).await;
    assert_eq!((by, option.as_deref()), (SettledBy::Rule, Some("no")));
    h.close().await;
    let (store, _) = RuleStore::open(home.rules_file()).unwrap();
    let rules = store.list(None, None);
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].decision, Decision::Reject);
    assert_eq!(
        rules[0].tool.target,
        Target::Path(home.project.join("build"))
    );
}

#[tokio::test]
async fn a_pattern_rule_never_matches_a_compound_command() {
    let home = home();
    home.add_rule(
        "demo",
        ToolMatcher {
            kind: acp::ToolKind::Execute,
            target: Target::Pattern("cargo *".into()),
        },
        Decision::Allow,
    );
    let ask = |command: &str| {
        json!([{"permission": {
            "tool_call": {"toolCallId": "t1", "title": "Run", "kind": "execute",
                          "rawInput": {"command": command}},
            "options": [
                {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"}
            ],
            "on_allow": [], "on_reject": [], "on_cancelled": []
        }}])
    };
    let scenarios = scenario_dir(&[
        ("simple", &["simple-command"], ask("cargo build --release")),
        (
            "compound",
            &["compound-command"],
            ask("cargo build && rm -rf ~/x"),
        ),
        ("piped", &["piped-command"], ask("cargo build | sh")),
    ]);
    let flags = ["--scenario-dir", scenarios.path().to_str().unwrap()];
    let (h, mut rx) = open(demo(&flags), home.opts(&home.project)).await;
    let (by, option) = permission_turn(&h, &mut rx, "simple-command", None).await;
    assert_eq!((by, option.as_deref()), (SettledBy::Rule, Some("yes")));
    let (by, _) = permission_turn(&h, &mut rx, "compound-command", None).await;
    assert_eq!(by, SettledBy::User, "asked, not matched by `cargo *`");
    let (by, _) = permission_turn(&h, &mut rx, "piped-command", None).await;
    assert_eq!(by, SettledBy::User, "asked, not matched by `cargo *`");
    h.close().await;
}

fn settled(evs: &[Value]) -> Vec<(String, String)> {
    evs.iter()
        .filter(|e| e["kind"] == "agent-prompt-settled")
        .map(|e| {
            (
                e["by"].as_str().unwrap().to_owned(),
                e["outcome"]["optionId"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

#[test]
fn the_cli_applies_a_reject_rule_before_its_permission_policy() {
    let home = home();
    home.add_rule(
        "demo",
        ToolMatcher {
            kind: acp::ToolKind::Execute,
            target: Target::Command("cargo test".into()),
        },
        Decision::Reject,
    );
    let evs = home.run(&["--permission", "allow", "permission"]);
    assert_eq!(settled(&evs), [("rule".to_owned(), "decline".to_owned())]);
    let result = evs.iter().find(|e| e["kind"] == "tool-result").unwrap();
    assert_eq!(result["isError"], true, "the agent's reject branch ran");
}

#[test]
fn allow_reads_answers_reads_inside_the_roots_only() {
    let home = home();
    let read = |id: &str, path: &str| {
        json!({"permission": {
            "tool_call": {"toolCallId": id, "title": "Read", "kind": "read",
                          "rawInput": {"file_path": path}},
            "options": [
                {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"}
            ],
            "on_allow": [], "on_reject": [], "on_cancelled": []
        }})
    };
    let edit = json!({"permission": {
        "tool_call": {"toolCallId": "e1", "title": "Edit", "kind": "edit",
                      "rawInput": {"file_path": "{cwd}/inside.txt"}},
        "options": [
            {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
            {"optionId": "no", "name": "Reject", "kind": "reject_once"}
        ],
        "on_allow": [], "on_reject": [], "on_cancelled": []
    }});
    let steps = json!([
        read("r1", "{cwd}/inside.txt"),
        read("r2", "/etc/hostname"),
        read("r3", "{cwd}/../outside.txt"),
        edit
    ]);
    let scenarios = scenario_dir(&[("reads", &["some-reads"], steps)]);
    let agent = format!(
        "'{}' --scenario-dir '{}'",
        bin("acp-desk-demo-agent").display(),
        scenarios.path().display()
    );
    let base = ["--agent-command", &agent, "--permission", "reject"];
    let mut with = base.to_vec();
    with.extend(["--allow-reads", "some-reads"]);
    let by_rule = |who: &str, opt: &str| (who.to_owned(), opt.to_owned());
    assert_eq!(
        settled(&home.run(&with)),
        [
            by_rule("rule", "yes"),
            by_rule("rule", "no"),
            by_rule("rule", "no"),
            by_rule("rule", "no")
        ],
        "only the read inside the session's folder is allowed"
    );
    let mut without = base.to_vec();
    without.push("some-reads");
    assert_eq!(
        settled(&home.run(&without)),
        [
            by_rule("rule", "no"),
            by_rule("rule", "no"),
            by_rule("rule", "no"),
            by_rule("rule", "no")
        ]
    );
}

/// The lines of the one audit file below `data`.
fn audit_lines(data: &Path) -> Vec<Value> {
    let days: Vec<_> = std::fs::read_dir(data.join("audit"))
        .unwrap()
        .map(|d| d.unwrap().path())
        .collect();
    assert_eq!(days.len(), 1);
    let files: Vec<_> = std::fs::read_dir(&days[0])
        .unwrap()
        .map(|d| d.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1);
    std::fs::read_to_string(&files[0])
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_audit_log_records_permissions_writes_and_commands() {
    let home = home();
    let evs = home.run(&["--permission", "allow", "permission", "files", "terminal"]);
    let session = evs[0]["sessionId"].as_str().unwrap();
    let lines = audit_lines(&home.data);
    let events: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
    assert_eq!(events.first(), Some(&"session-started"));
    assert_eq!(events.last(), Some(&"session-ended"));
    for l in &lines {
        assert_eq!(l["session"], session);
        assert!(l["ts"].as_str().unwrap().ends_with('Z'));
    }
    assert_eq!(lines[0]["agent"], "demo");

    let asked = lines
        .iter()
        .find(|l| l["event"] == "permission-asked")
        .unwrap();
    assert_eq!(asked["toolCallId"], "demo-exec-1");
    assert_eq!(asked["kind"], "execute");
    let answered = lines
        .iter()
        .find(|l| l["event"] == "permission-answered")
        .unwrap();
    assert_eq!(answered["requestId"], asked["requestId"]);
    assert_eq!(answered["optionId"], "proceed_once");
    assert_eq!(answered["optionKind"], "allow_once");
    assert_eq!(answered["by"], "rule");

    let notes = home.project.join("demo-notes.txt");
    let writes: Vec<&Value> = lines
        .iter()
        .filter(|l| l["event"] == "file-written" && l["path"] == notes.to_str().unwrap())
        .collect();
    assert_eq!(
        writes.len(),
        2,
        "two fs writes, and no watcher echo of them"
    );
    assert_eq!(writes[0]["created"], true);
    assert_eq!(writes[0]["via"], "fs-write");
    assert!(writes[0].get("beforeHash").is_none());
    assert_eq!(writes[1]["beforeHash"], writes[0]["afterHash"]);
    let final_hash = acp_desk_core::fs::ContentHash::of(&std::fs::read(&notes).unwrap()).to_hex();
    assert_eq!(writes[1]["afterHash"], final_hash.as_str());

    let commands: Vec<&Value> = lines
        .iter()
        .filter(|l| l["event"] == "command-run")
        .collect();
    assert_eq!(
        commands.len(),
        4,
        "every terminal, released or not: {commands:?}"
    );
    assert_eq!(commands[0]["command"], "sh");
    assert_eq!(commands[0]["exitCode"], 0);
    assert_eq!(commands[0]["cwd"], home.project.to_str().unwrap());
    assert!(
        commands.iter().any(|c| c["signal"].is_string()),
        "the killed one"
    );
}

#[test]
fn no_audit_writes_nothing() {
    let home = home();
    home.run(&["--no-audit", "--permission", "allow", "permission", "files"]);
    assert!(!home.data.join("audit").exists());
}

#[test]
fn terminal_env_values_never_reach_the_audit_log() {
    let home = home();
    // A terminal/create with an env the agent sets: the demo agent has no step for env, so the
    // audit entry is built the way the session builds it.
    let env = vec![acp::EnvVariable::new("API_TOKEN", "s3cret-value")];
    let run = acp_desk_core::audit::CommandRun {
        terminal_id: "term-1".into(),
        command: "true".into(),
        args: Vec::new(),
        cwd: None,
        env_names: acp_desk_core::audit::CommandRun::env_names(&env),
        exit_code: Some(0),
        signal: None,
    };
    let log = acp_desk_core::audit::AuditLog::open(
        &home.data.join("audit"),
        "s-env",
        acp_desk_core::audit::AuditKind::On,
    )
    .unwrap();
    log.command_run(run);
    assert!(log.close().is_none());
    let text = std::fs::read_to_string(
        std::fs::read_dir(home.data.join("audit"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path()
            .join("s-env.jsonl"),
    )
    .unwrap();
    assert!(text.contains("API_TOKEN") && !text.contains("s3cret-value"));
}

#[tokio::test]
async fn files_the_agent_changes_itself_are_in_the_change_set() {
    let home = home();
    let (h, rx) = open(demo(&[]), home.opts(&home.project)).await;
    // Drained all along: the engine waits for a full consumer.
    let rest = tokio::spawn(rx.all());
    let outcome = h
        .prompt(vec![acp_desk_core::text_block("direct-write")])
        .await
        .unwrap();
    assert_eq!(
        outcome.reason,
        acp_desk_core::events::TurnEndReason::Completed
    );
    let notes = home.project.join("direct-notes.txt");
    let new = home.project.join("direct-folder/new.txt");
    let changes = h.changes().await.unwrap();
    let mut seen: Vec<(PathBuf, ChangeSource)> =
        changes.iter().map(|c| (c.path.clone(), c.source)).collect();
    seen.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        seen,
        [
            (new.clone(), ChangeSource::Watcher),
            (notes.clone(), ChangeSource::Watcher)
        ]
    );
    // An fs write in the next turn: one file-changed, via fs-write (its echo is dropped).
    h.prompt(vec![acp_desk_core::text_block("files")])
        .await
        .unwrap();
    h.close().await;
    let evs = rest.await.unwrap();
    let changed: Vec<(String, Option<FileChangeVia>)> = evs
        .iter()
        .filter_map(|e| match e {
            StreamEvent::FileChanged { path, via, .. } => Some((path.clone(), *via)),
            _ => None,
        })
        .collect();
    let watcher: Vec<&str> = changed
        .iter()
        .filter(|(_, v)| *v == Some(FileChangeVia::Watcher))
        .map(|(p, _)| p.as_str())
        .collect();
    let mut expected = vec![notes.to_str().unwrap(), new.to_str().unwrap()];
    let mut got = watcher.clone();
    expected.sort();
    got.sort();
    assert_eq!(
        got, expected,
        "only the direct writes come from the watcher"
    );
    let fs_writes = changed
        .iter()
        .filter(|(_, v)| *v == Some(FileChangeVia::FsWrite))
        .count();
    assert_eq!(
        fs_writes, 3,
        "the files scenario's three writes: {changed:?}"
    );
}

#[tokio::test]
async fn a_file_the_agent_makes_itself_is_reported_created_with_the_call_that_wrote_it() {
    let home = home();
    std::fs::write(home.project.join("old.txt"), "before\n").unwrap();
    // The watcher reports a change after a quiet moment: by then the writing call has finished
    // and the next one (naming other files) runs.
    let steps = json!([
        {"tool_call": {"toolCallId": "call-a", "title": "Write two files", "kind": "edit",
                       "status": "in_progress",
                       "locations": [{"path": "{cwd}/made.txt"}, {"path": "{cwd}/old.txt"}]}},
        {"write_directly": {"path": "made.txt", "content": "new\n"}},
        {"write_directly": {"path": "old.txt", "content": "after\n"}},
        {"tool_call_update": {"toolCallId": "call-a", "status": "completed"}},
        {"tool_call": {"toolCallId": "call-b", "title": "Edit another", "kind": "edit",
                       "status": "in_progress", "locations": [{"path": "{cwd}/other.txt"}]}},
        {"sleep": {"ms": 1500}},
        {"tool_call_update": {"toolCallId": "call-b", "status": "completed"}}
    ]);
    let scenarios = scenario_dir(&[("made", &["made-test"], steps)]);
    let flags = ["--scenario-dir", scenarios.path().to_str().unwrap()];
    let (h, rx) = open(demo(&flags), home.opts(&home.project)).await;
    let rest = tokio::spawn(rx.all());
    h.prompt(vec![acp_desk_core::text_block("made-test")])
        .await
        .unwrap();
    h.close().await;
    let evs = rest.await.unwrap();
    let mut changed: Vec<(String, bool, Option<String>)> = evs
        .iter()
        .filter_map(|e| match e {
            StreamEvent::FileChanged {
                path,
                created,
                tool_call_id,
                ..
            } => Some((path.clone(), *created, tool_call_id.clone())),
            _ => None,
        })
        .collect();
    changed.sort();
    let at = |name: &str| home.project.join(name).to_str().unwrap().to_owned();
    assert_eq!(
        changed,
        [
            (at("made.txt"), true, Some("call-a".to_owned())),
            (at("old.txt"), false, Some("call-a".to_owned())),
        ]
    );
}

#[tokio::test]
async fn a_write_over_a_file_changed_since_the_agent_read_it_is_refused_as_a_conflict() {
    let home = home();
    let file = home.project.join("shared.txt");
    std::fs::write(&file, "original\n").unwrap();
    let steps = json!([
        {"read_file": {"path": "shared.txt", "expect": "original\n"}},
        // Someone else changes the file after the agent read it.
        {"write_directly": {"path": "shared.txt", "content": "the user's edit\n"}},
        {"write_file": {"path": "shared.txt", "content": "the agent's version\n",
                        "expect_error": -32603}},
        // Read again: now the agent has seen the change, and may write.
        {"read_file": {"path": "shared.txt", "expect": "the user's edit\n"}},
        {"write_file": {"path": "shared.txt", "content": "the agent's version\n"}},
        // A file never read has nothing to conflict with.
        {"write_file": {"path": "fresh.txt", "content": "new\n"}}
    ]);
    let scenarios = scenario_dir(&[("conflict", &["conflict-test"], steps)]);
    let flags = ["--scenario-dir", scenarios.path().to_str().unwrap()];
    let (h, rx) = open(demo(&flags), home.opts(&home.project)).await;
    let rest = tokio::spawn(rx.all());
    h.prompt(vec![acp_desk_core::text_block("conflict-test")])
        .await
        .unwrap();
    h.close().await;
    let evs = rest.await.unwrap();
    let said = text(&evs);
    for bad in ["UNEXPECTED", "MISMATCH"] {
        assert!(!said.contains(bad), "a check failed:\n{said}");
    }
    assert!(said.contains("the expected error"), "{said}");
    let conflicts: Vec<&str> = evs
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Notice { title, .. } if title.starts_with("Conflict") => {
                Some(title.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(conflicts.len(), 1, "{conflicts:?}");
    assert!(conflicts[0].contains(file.to_str().unwrap()));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "the agent's version\n"
    );
}

fn notices(evs: &[StreamEvent]) -> Vec<(String, String)> {
    evs.iter()
        .filter_map(|e| match e {
            StreamEvent::Notice {
                title, description, ..
            } => Some((title.clone(), description.clone().unwrap_or_default())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_corrupt_rules_file_is_set_aside_and_shown_as_a_notice() {
    let home = home();
    std::fs::create_dir_all(&home.config).unwrap();
    std::fs::write(home.rules_file(), "{ not json").unwrap();
    let (h, rx) = open(demo(&[]), home.opts(&home.project)).await;
    h.close().await;
    let shown = notices(&rx.all().await);
    assert!(
        shown
            .iter()
            .any(|(t, d)| t.starts_with("Remembered permission answers")
                && d.contains("permission-rules.json.bad-")),
        "{shown:?}"
    );
    assert!(!home.rules_file().exists(), "set aside, not overwritten");
}

#[tokio::test]
async fn an_audit_log_that_cannot_be_written_is_shown_once() {
    let home = home();
    // A file where the audit folder should be: the log cannot be created.
    std::fs::write(home.project.parent().unwrap().join("not-a-folder"), "").unwrap();
    let mut o = home.opts(&home.project);
    o.audit = acp_desk_core::audit::AuditKind::On;
    o.audit_dir = home.project.parent().unwrap().join("not-a-folder");
    let (h, rx) = open(demo(&[]), o).await;
    let rest = tokio::spawn(rx.all());
    h.prompt(vec![acp_desk_core::text_block("files")])
        .await
        .unwrap();
    h.close().await;
    let shown = notices(&rest.await.unwrap());
    let audit: Vec<_> = shown
        .iter()
        .filter(|(t, _)| t.contains("audit log"))
        .collect();
    assert_eq!(audit.len(), 1, "{shown:?}");
}

#[tokio::test]
async fn a_rule_revoked_while_a_session_runs_stops_applying_at_its_next_turn() {
    let home = home();
    home.add_rule(
        "demo",
        ToolMatcher {
            kind: acp::ToolKind::Execute,
            target: Target::Command("cargo test".into()),
        },
        Decision::Allow,
    );
    let (h, mut rx) = open(demo(&[]), home.opts(&home.project)).await;
    let (by, _) = permission_turn(&h, &mut rx, "permission", None).await;
    assert_eq!(by, SettledBy::Rule);
    let (_, out, _) = home.cli(&["rules"]);
    let id = out.split_whitespace().next().unwrap().to_owned();
    // The CLI, another process, revokes it while the session is open.
    let (code, _, err) = home.cli(&["rules", "revoke", &id]);
    assert_eq!(code, Some(0), "{err}");
    let (by, _) = permission_turn(&h, &mut rx, "permission", None).await;
    assert_eq!(by, SettledBy::User);
    h.close().await;
}

/// The audit log with the client services' newer flows: paths resolved off the owner, a
/// terminal started off the owner, exit waits answered from the terminal's exit event, and
/// waits on a terminal released meanwhile.
#[tokio::test]
async fn commands_waited_on_and_writes_resolved_off_the_owner_are_audited() {
    let home = home();
    std::fs::write(home.project.join("notes.txt"), "before\n").unwrap();
    let steps = json!([
        {"read_file": {"path": "notes.txt", "expect": "before\n"}},
        {"write_file": {"path": "notes.txt", "content": "after\n"}},
        {"terminal": {"command": "sh", "args": ["-c", "exit 3"],
                      "then": [{"wait_many": {"count": 3}}, "release"]}},
        {"terminal": {"command": "sleep", "args": ["30"],
                      "then": [{"wait_many": {"count": 3, "release": true}}]}}
    ]);
    let scenarios = scenario_dir(&[("audited", &["audited-waits"], steps)]);
    let flags = ["--scenario-dir", scenarios.path().to_str().unwrap()];
    let mut o = home.opts(&home.project);
    o.audit = acp_desk_core::audit::AuditKind::On;
    o.audit_dir = home.data.join("audit");
    let (h, rx) = open(demo(&flags), o).await;
    let rest = tokio::spawn(rx.all());
    h.prompt(vec![acp_desk_core::text_block("audited-waits")])
        .await
        .unwrap();
    h.close().await;
    let said = text(&rest.await.unwrap());
    for bad in ["UNEXPECTED", "MISMATCH"] {
        assert!(!said.contains(bad), "a check failed:\n{said}");
    }
    assert!(said.contains("x3: 3 answered, 0 errors"), "{said}");
    let lines = audit_lines(&home.data);
    let notes = home.project.join("notes.txt");
    let writes: Vec<&Value> = lines
        .iter()
        .filter(|l| l["event"] == "file-written" && l["path"] == notes.to_str().unwrap())
        .collect();
    assert_eq!(writes.len(), 1, "{lines:?}");
    assert_eq!(writes[0]["via"], "fs-write");
    let before = acp_desk_core::fs::ContentHash::of(b"before\n").to_hex();
    assert_eq!(writes[0]["beforeHash"], before.as_str());
    let commands: Vec<&Value> = lines
        .iter()
        .filter(|l| l["event"] == "command-run")
        .collect();
    assert_eq!(commands.len(), 2, "one line per terminal: {commands:?}");
    let exited = commands.iter().find(|c| c["command"] == "sh").unwrap();
    assert_eq!(exited["exitCode"], 3, "{exited:?}");
    assert_eq!(exited["terminalId"], "term-1");
    let released = commands.iter().find(|c| c["command"] == "sleep").unwrap();
    assert_eq!(released["terminalId"], "term-2");
    assert_eq!(released["args"], json!(["30"]));
    assert!(
        released.get("exitCode").is_none(),
        "released before it exited: {released:?}"
    );
}
