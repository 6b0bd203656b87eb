//! What the agent asks of us, through the engine with the demo agent: fs reads and writes (the
//! change set), terminals (limit, kill, release, unknown ids), access outside the session's
//! folders (asked, allowed once, folder added, refused, covered by the user's own answer, never
//! granted by a policy), and the watchdog while a terminal runs.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::path::Path;
use std::time::Duration;

use acp_desk_core::events::{PermissionResolution, SettledBy, TurnEndReason};
use acp_desk_core::fs::ChangeSource;
use acp_desk_core::schema::v1 as acp;
use acp_desk_core::{EngineError, PermissionPolicy, StreamEvent};
use common::*;
use serde_json::json;

/// The demo agent reports every check it makes; none may have failed.
fn assert_no_failed_check(text: &str) {
    for bad in ["UNEXPECTED", "MISMATCH", "OVER THE"] {
        assert!(!text.contains(bad), "a check failed ({bad}):\n{text}");
    }
}

fn prompts(evs: &[StreamEvent]) -> Vec<&acp_desk_core::events::AgentPromptEvent> {
    evs.iter()
        .filter_map(|e| match e {
            StreamEvent::AgentPrompt(p) => Some(&**p),
            _ => None,
        })
        .collect()
}

fn option_of(
    p: &acp_desk_core::events::AgentPromptEvent,
    kind: acp::PermissionOptionKind,
) -> String {
    p.options
        .iter()
        .find(|o| o.kind == kind)
        .unwrap()
        .option_id
        .0
        .to_string()
}

/// One turn of `prompt` in a fresh demo-agent session with `flags`, after `prepare` ran on the
/// session's folder; the turn must complete. Every event, the session closed.
async fn completed_turn(
    flags: &[&str],
    prompt: &str,
    prepare: impl FnOnce(&Path),
) -> Vec<StreamEvent> {
    let (h, rx, dir) = session(flags).await;
    prepare(dir.path());
    let collect = tokio::spawn(rx.all());
    let outcome = finish(spawn_prompt(&h, prompt)).await;
    assert_eq!(outcome.reason, TurnEndReason::Completed);
    h.close().await;
    drop(h);
    collect.await.unwrap()
}

#[tokio::test]
async fn files_scenario_reads_windows_writes_and_records_the_change_set() {
    let (h, rx, dir) = session(&[]).await;
    let collect = tokio::spawn(rx.all());
    let outcome = finish(spawn_prompt(&h, "files")).await;
    assert_eq!(outcome.reason, TurnEndReason::Completed);
    let changes = h.changes().await.unwrap();
    h.close().await;
    drop(h);
    let evs = collect.await.unwrap();
    let t = text(&evs);
    assert_no_failed_check(&t);
    // The window (line 2, limit 2), the tail past the end, the rewrite read back.
    assert_eq!(t.matches(" - as expected").count(), 3, "{t}");
    // A missing file (-32002) and a relative path (-32602), both as the agent expected.
    assert_eq!(t.matches(" - the expected error").count(), 2, "{t}");
    assert!(
        t.contains("error -32602: `relative/path.txt` is a relative path"),
        "{t}"
    );

    let root = dir.path().canonicalize().unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("demo-notes.txt")).unwrap(),
        "line 1\nline two\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("demo-folder/nested/created.txt")).unwrap(),
        "created in a new folder\n"
    );
    // One entry per file, in order, the first write's "before" kept across the rewrite.
    let paths: Vec<&Path> = changes.iter().map(|c| c.path.as_path()).collect();
    assert_eq!(
        paths,
        [
            root.join("demo-notes.txt").as_path(),
            root.join("demo-folder/nested/created.txt").as_path()
        ]
    );
    assert!(changes.iter().all(|c| c.created && c.before.is_none()));
    assert!(changes.iter().all(|c| c.source == ChangeSource::FsWrite));
    // One file-changed event per write; only the first write of a file created it.
    let written: Vec<(String, bool)> = evs
        .iter()
        .filter_map(|e| match e {
            StreamEvent::FileChanged { path, created, .. } => Some((path.clone(), *created)),
            _ => None,
        })
        .collect();
    let notes = root.join("demo-notes.txt").display().to_string();
    assert_eq!(written.len(), 3);
    assert_eq!(written[0], (notes.clone(), true));
    assert_eq!(written[1], (notes, false));
}

#[tokio::test]
async fn a_new_turn_starts_a_new_change_set() {
    let (h, rx, dir) = session(&[]).await;
    let collect = tokio::spawn(rx.all());
    finish(spawn_prompt(&h, "files")).await;
    assert_eq!(h.changes().await.unwrap().len(), 2);
    // Second run: the files exist now, so the change set holds their text before this turn.
    finish(spawn_prompt(&h, "files")).await;
    let changes = h.changes().await.unwrap();
    h.close().await;
    drop(h);
    collect.await.unwrap();
    assert_eq!(changes.len(), 2);
    let notes = &changes[0];
    assert!(!notes.created);
    assert_eq!(notes.before.as_deref(), Some("line 1\nline two\n"));
    assert!(dir.path().join("demo-notes.txt").is_file());
}

#[tokio::test]
async fn terminal_scenario_limit_kill_release_and_a_shell_line() {
    let evs = completed_turn(&[], "terminal", |_| ()).await;
    let t = text(&evs);
    assert_no_failed_check(&t);
    // The limit: 50 lines of 20 bytes through a 200-byte limit, the end kept.
    assert!(
        t.contains("terminal/output term-1: 200 bytes, truncated true, exited with code 0"),
        "{t}"
    );
    assert!(t.contains("within the 200-byte limit"), "{t}");
    // Kill: the command ends by a signal, and the terminal is still readable.
    assert!(t.contains("terminal/kill term-2: ok"), "{t}");
    assert!(
        t.contains("terminal/wait_for_exit term-2: killed by SIG"),
        "{t}"
    );
    assert!(
        t.contains("terminal/output term-2: 0 bytes, truncated false, killed by SIG"),
        "{t}"
    );
    // Release: the id is unknown afterwards (the same error as an id never created).
    assert!(t.contains("terminal/release term-3: ok"), "{t}");
    assert!(
        t.contains("terminal/output term-3: error -32602: no terminal `term-3` in this session"),
        "{t}"
    );
    // A whole shell line as `command` with no args (what claude-code-acp sends).
    assert!(
        t.contains("terminal/wait_for_exit term-4: exited with code 0"),
        "{t}"
    );

    // terminal-output events: deltas whose data adds up to the whole output, `truncated` once
    // the limit was passed, and one last event with the exit status.
    let outs: Vec<(
        String,
        String,
        Option<acp::TerminalExitStatus>,
        Option<bool>,
    )> = evs
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TerminalOutput {
                terminal_id,
                data,
                exit_status,
                truncated,
                ..
            } => Some((
                terminal_id.clone(),
                data.clone(),
                exit_status.clone(),
                *truncated,
            )),
            _ => None,
        })
        .collect();
    let term1: Vec<_> = outs.iter().filter(|o| o.0 == "term-1").collect();
    let data: String = term1.iter().map(|o| o.1.as_str()).collect();
    assert_eq!(data.matches("abcdefghij").count(), 50, "{data}");
    assert_eq!(term1.last().unwrap().2.as_ref().unwrap().exit_code, Some(0));
    assert_eq!(term1.last().unwrap().3, Some(true));
    assert_eq!(term1.iter().filter(|o| o.2.is_some()).count(), 1);
    // The terminal's first event, and only it, carries its limit.
    let limits: Vec<Option<u64>> = evs
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TerminalOutput {
                terminal_id,
                output_byte_limit,
                ..
            } if terminal_id == "term-1" => Some(*output_byte_limit),
            _ => None,
        })
        .collect();
    assert_eq!(limits[0], Some(200));
    assert!(limits[1..].iter().all(Option::is_none));
    let term2_exit = outs
        .iter()
        .find(|o| o.0 == "term-2" && o.2.is_some())
        .unwrap();
    assert!(term2_exit.2.as_ref().unwrap().signal.is_some());
    let term4: String = outs
        .iter()
        .filter(|o| o.0 == "term-4")
        .map(|o| o.1.as_str())
        .collect();
    assert!(term4.contains("second-command"), "{term4}");
    // The released terminal sends nothing after its release.
    assert!(!outs.iter().any(|o| o.0 == "term-3" && o.2.is_some()));
}

/// A folder outside the session's, with two files, and a scenario reading them.
fn outside_setup(steps: serde_json::Value) -> (tempfile::TempDir, tempfile::TempDir) {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("a.txt"), "outside a\n").unwrap();
    std::fs::write(outside.path().join("b.txt"), "outside b\n").unwrap();
    let raw = steps
        .to_string()
        .replace("OUTSIDE", outside.path().to_str().unwrap());
    let steps: serde_json::Value = serde_json::from_str(&raw).unwrap();
    let scenarios = scenario_dir(&[("outside-test", &["read-outside"], steps)]);
    (outside, scenarios)
}

fn two_reads() -> serde_json::Value {
    json!([
        {"read_file": {"path": "OUTSIDE/a.txt"}},
        {"read_file": {"path": "OUTSIDE/b.txt"}}
    ])
}

/// Runs `read-outside`, answering each of our own asks with the option of the given kind (in
/// order); returns every event and the number of asks.
async fn outside_turn(
    steps: serde_json::Value,
    answers: &[Option<acp::PermissionOptionKind>],
) -> Vec<StreamEvent> {
    let (_outside, scenarios) = outside_setup(steps);
    let flags = ["--scenario-dir", scenarios.path().to_str().unwrap()];
    let (h, mut rx, _dir) = session(&flags).await;
    let turn = spawn_prompt(&h, "read-outside");
    let mut seen = Vec::new();
    for answer in answers {
        let p = rx.next_prompt(&mut seen).await;
        let resolution = match answer {
            Some(kind) => PermissionResolution::selected(option_of(&p, *kind)),
            None => PermissionResolution::cancelled(),
        };
        h.respond_permission(&p.request_id, resolution.clone())
            .await
            .unwrap();
        // Answered twice: the request is gone, and the error says so.
        assert!(matches!(
            h.respond_permission(&p.request_id, resolution).await,
            Err(EngineError::UnknownPermission(_))
        ));
    }
    let drain = tokio::spawn(rx.all());
    assert_eq!(finish(turn).await.reason, TurnEndReason::Completed);
    h.close().await;
    drop(h);
    seen.extend(drain.await.unwrap());
    seen
}

#[tokio::test]
async fn outside_read_asks_allow_once_serves_once_reject_refuses() {
    use acp::PermissionOptionKind as K;
    let evs = outside_turn(two_reads(), &[Some(K::AllowOnce), Some(K::RejectOnce)]).await;
    let t = text(&evs);
    assert!(t.contains("a.txt: ok, 1 lines: \"outside a\\n\""), "{t}");
    assert!(t.contains("b.txt: error -32603"), "{t}");
    assert!(t.contains("the user refused access to it"), "{t}");
    let asks = prompts(&evs);
    assert_eq!(asks.len(), 2, "allow once covers one request only");
    let p = asks[0];
    // Our own ask: the three options by kind, the path as its location, a synthetic target.
    let kinds: Vec<_> = p.options.iter().map(|o| o.kind).collect();
    assert_eq!(kinds, [K::AllowOnce, K::AllowAlways, K::RejectOnce]);
    // The folder offered is named, in the option and in the question.
    let folder = Path::new(&p.locations.as_ref().unwrap()[0].path)
        .parent()
        .unwrap()
        .display()
        .to_string();
    assert_eq!(p.options[1].name, format!("Add {folder} to the session"));
    assert!(p.text.as_ref().unwrap().contains(&folder), "{:?}", p.text);
    assert!(p.target_tool_call_id.starts_with("acpdesk-access-"));
    assert_eq!(p.tool_kind, Some(acp::ToolKind::Read));
    assert!(p.locations.as_ref().unwrap()[0].path.ends_with("a.txt"));
    let settled: Vec<SettledBy> = evs
        .iter()
        .filter_map(|e| match e {
            StreamEvent::AgentPromptSettled { by, .. } => Some(*by),
            _ => None,
        })
        .collect();
    assert_eq!(settled, [SettledBy::User, SettledBy::User]);
}

#[tokio::test]
async fn add_this_folder_serves_the_rest_of_the_folder_without_asking_again() {
    let evs = outside_turn(two_reads(), &[Some(acp::PermissionOptionKind::AllowAlways)]).await;
    let t = text(&evs);
    assert!(t.contains("a.txt: ok"), "{t}");
    assert!(t.contains("b.txt: ok, 1 lines: \"outside b\\n\""), "{t}");
    assert_eq!(prompts(&evs).len(), 1);
    assert!(evs.iter().any(|e| matches!(
        e,
        StreamEvent::Notice { title, .. } if title.contains("was added to this session's folders")
    )));
}

#[tokio::test]
async fn cancelling_our_ask_refuses_the_read() {
    let evs = outside_turn(json!([{"read_file": {"path": "OUTSIDE/a.txt"}}]), &[None]).await;
    let t = text(&evs);
    assert!(t.contains("a.txt: error -32603"), "{t}");
    assert!(t.contains("refused access"), "{t}");
}

#[tokio::test]
async fn a_policy_never_grants_access_outside_the_roots() {
    for policy in [PermissionPolicy::AllowOnce, PermissionPolicy::RejectOnce] {
        let (_outside, scenarios) = outside_setup(two_reads());
        let flags = ["--scenario-dir", scenarios.path().to_str().unwrap()];
        let evs = run(&flags, policy, &["read-outside"]).await;
        let t = text(&evs);
        assert_eq!(t.matches("error -32603").count(), 2, "{policy:?}: {t}");
        assert!(t.contains("does not ask the user"), "{t}");
        assert!(prompts(&evs).is_empty(), "nobody to ask: no agent-prompt");
        assert!(evs.iter().any(|e| matches!(
            e,
            StreamEvent::Notice { title, .. } if title.contains("outside this session's folders; refused")
        )));
    }
}

/// The agent's own permission request for a tool call naming the path.
fn covered_steps() -> serde_json::Value {
    json!([
        {"tool_call": {"toolCallId": "r1", "title": "Read a.txt", "kind": "read", "status": "pending",
                       "locations": [{"path": "OUTSIDE/a.txt"}]}},
        {"permission": {
            "tool_call": {"toolCallId": "r1"},
            "options": [
                {"optionId": "yes", "name": "Yes", "kind": "allow_once"},
                {"optionId": "no", "name": "No", "kind": "reject_once"}
            ],
            "on_allow": [{"read_file": {"path": "OUTSIDE/a.txt"}}],
            "on_reject": []
        }}
    ])
}

#[tokio::test]
async fn the_users_answer_to_the_agents_request_covers_the_path_it_names() {
    // One ask (the agent's), answered by the user: the read needs no second one.
    let evs = outside_turn(
        covered_steps(),
        &[Some(acp::PermissionOptionKind::AllowOnce)],
    )
    .await;
    let t = text(&evs);
    assert!(t.contains("a.txt: ok"), "{t}");
    let asks = prompts(&evs);
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0].target_tool_call_id, "r1");

    // The same allowed by the --permission allow policy: the policy answered, not the user,
    // so the read outside is refused.
    let (_outside, scenarios) = outside_setup(covered_steps());
    let flags = ["--scenario-dir", scenarios.path().to_str().unwrap()];
    let evs = run(&flags, PermissionPolicy::AllowOnce, &["read-outside"]).await;
    let t = text(&evs);
    assert!(t.contains("a.txt: error -32603"), "{t}");
}

#[tokio::test]
async fn our_ask_names_the_running_tool_call_it_belongs_to() {
    let steps = json!([
        {"tool_call": {"toolCallId": "call-7", "title": "Read b", "kind": "read", "status": "in_progress",
                       "locations": [{"path": "OUTSIDE/b.txt"}]}},
        {"read_file": {"path": "OUTSIDE/b.txt"}}
    ]);
    let evs = outside_turn(steps, &[Some(acp::PermissionOptionKind::AllowOnce)]).await;
    let asks = prompts(&evs);
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0].target_tool_call_id, "call-7");
    assert!(asks[0].request_id.starts_with("call-7#"));
    assert!(text(&evs).contains("b.txt: ok"));
}

#[tokio::test]
async fn a_terminal_outside_the_roots_asks_too() {
    let steps = json!([
        {"terminal": {"command": "pwd", "cwd": "OUTSIDE", "expect_error": -32603}}
    ]);
    let evs = outside_turn(steps, &[Some(acp::PermissionOptionKind::RejectOnce)]).await;
    let asks = prompts(&evs);
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0].tool_kind, Some(acp::ToolKind::Execute));
    let t = text(&evs);
    assert!(t.contains("the expected error"), "{t}");
    assert!(t.contains("refused access"), "{t}");
}

#[tokio::test]
async fn stop_answers_our_parked_ask_and_the_read_is_refused() {
    let (_outside, scenarios) = outside_setup(two_reads());
    let flags = ["--scenario-dir", scenarios.path().to_str().unwrap()];
    let (h, mut rx, _dir) = session(&flags).await;
    let turn = spawn_prompt(&h, "read-outside");
    let mut seen = Vec::new();
    rx.next_prompt(&mut seen).await;
    h.cancel().unwrap();
    let drain = tokio::spawn(rx.all());
    assert_eq!(finish(turn).await.reason, TurnEndReason::Cancelled);
    h.close().await;
    drop(h);
    seen.extend(drain.await.unwrap());
    assert!(seen.iter().any(|e| matches!(
        e,
        StreamEvent::AgentPromptSettled {
            by: SettledBy::Stop,
            outcome: PermissionResolution::Cancelled { .. },
            ..
        }
    )));
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn closing_the_session_ends_its_terminals() {
    let marker = format!("acpdesk-term-marker-{}", std::process::id());
    let scenarios = scenario_dir(&[(
        "leave-running",
        &["leave-running"],
        json!([
            {"terminal": {"command": "sh", "args": ["-c", format!("sleep 60; echo {marker}")]}}
        ]),
    )]);
    let flags = ["--scenario-dir", scenarios.path().to_str().unwrap()];
    let (h, rx, _dir) = session(&flags).await;
    let collect = tokio::spawn(rx.all());
    finish(spawn_prompt(&h, "leave-running")).await;
    let running = || -> Vec<u32> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&marker))
                    && alive(*pid)
            })
            .collect()
    };
    // The create answer comes once the command was started, but right after an exec its
    // `/proc/PID/cmdline` can still read empty for a moment (the new program's arguments are
    // set up after the parent learns the exec went through): under load the first look can
    // miss it. Look again, bounded.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while running().is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let seen = running();
    h.close().await;
    drop(h);
    let evs = collect.await.unwrap();
    assert!(
        !seen.is_empty(),
        "the terminal's command runs between turns: {}",
        text(&evs)
    );
    let left = wait_gone(&running(), Duration::from_secs(10)).await;
    assert!(left.is_empty(), "left behind: {left:?}");
}

fn option_kinds(p: &acp_desk_core::events::AgentPromptEvent) -> Vec<acp::PermissionOptionKind> {
    p.options.iter().map(|o| o.kind).collect()
}

#[tokio::test]
async fn adding_a_folder_is_not_offered_for_the_root_or_a_missing_folder() {
    use acp::PermissionOptionKind as K;
    // A terminal in `/`, a write into a folder that does not exist yet, a read in `/etc`.
    let steps = json!([
        {"terminal": {"command": "true", "cwd": "/", "expect_error": -32603}},
        {"write_file": {"path": "OUTSIDE/missing/deeper/x.txt", "content": "x\n", "expect_error": -32603}},
        {"read_file": {"path": "/etc/hostname", "expect_error": -32603}}
    ]);
    let evs = outside_turn(steps, &[Some(K::RejectOnce); 3]).await;
    let asks = prompts(&evs);
    assert_eq!(asks.len(), 3);
    for p in &asks {
        assert_eq!(
            option_kinds(p),
            [K::AllowOnce, K::RejectOnce],
            "{:?}",
            p.text
        );
        assert!(
            p.text.as_ref().unwrap().contains("is not offered"),
            "{:?}",
            p.text
        );
    }
    assert!(asks[1].text.as_ref().unwrap().contains("does not exist"));
    assert_no_failed_check(&text(&evs));
}

/// Asks to read `OUTSIDE/sub/a.txt`; `swap` runs while the question is open, then the user
/// picks "Add … to the session". Returns the events.
async fn answer_add_folder_after(swap: impl FnOnce(&Path)) -> Vec<StreamEvent> {
    let outside = tempfile::tempdir().unwrap();
    let sub = outside.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("a.txt"), "original\n").unwrap();
    let steps = json!([{"read_file": {"path": format!("{}/a.txt", sub.display())}}]);
    let scenarios = scenario_dir(&[("outside-test", &["read-outside"], steps)]);
    let flags = ["--scenario-dir", scenarios.path().to_str().unwrap()];
    let (h, mut rx, _dir) = session(&flags).await;
    let turn = spawn_prompt(&h, "read-outside");
    let mut seen = Vec::new();
    let p = rx.next_prompt(&mut seen).await;
    let canonical = sub.canonicalize().unwrap();
    assert_eq!(
        p.options[1].name,
        format!("Add {} to the session", canonical.display())
    );
    swap(outside.path());
    let add = option_of(&p, acp::PermissionOptionKind::AllowAlways);
    h.respond_permission(&p.request_id, PermissionResolution::selected(add))
        .await
        .unwrap();
    let drain = tokio::spawn(rx.all());
    assert_eq!(finish(turn).await.reason, TurnEndReason::Completed);
    h.close().await;
    drop(h);
    seen.extend(drain.await.unwrap());
    seen
}

#[cfg(unix)]
#[tokio::test]
async fn a_folder_swapped_for_a_symlink_while_asked_is_not_added() {
    let evs = answer_add_folder_after(|outside| {
        let elsewhere = outside.join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("a.txt"), "secret\n").unwrap();
        std::fs::rename(outside.join("sub"), outside.join("sub-old")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, outside.join("sub")).unwrap();
    })
    .await;
    let t = text(&evs);
    assert!(!t.contains("secret"), "{t}");
    assert!(t.contains("a.txt: error -32603"), "{t}");
    assert!(t.contains("changed while the user was asked"), "{t}");
    assert!(evs.iter().any(|e| matches!(
        e,
        StreamEvent::Notice { title, .. } if title.contains("was not added to this session")
    )));
    assert!(!evs.iter().any(|e| matches!(
        e,
        StreamEvent::Notice { title, .. } if title.contains("was added to this session")
    )));
}

#[tokio::test]
async fn a_folder_replaced_by_another_while_asked_is_not_added() {
    let evs = answer_add_folder_after(|outside| {
        std::fs::rename(outside.join("sub"), outside.join("sub-old")).unwrap();
        std::fs::create_dir(outside.join("sub")).unwrap();
        std::fs::write(outside.join("sub/a.txt"), "replaced\n").unwrap();
    })
    .await;
    let t = text(&evs);
    assert!(t.contains("a.txt: error -32603"), "{t}");
    assert!(t.contains("changed while the user was asked"), "{t}");
}

#[tokio::test]
async fn the_folder_unchanged_is_added_as_named() {
    let evs = answer_add_folder_after(|_| {}).await;
    let t = text(&evs);
    assert!(t.contains("a.txt: ok, 1 lines: \"original\\n\""), "{t}");
}

/// The agent's own request for a tool call of `kind`, with `fields` (locations, rawInput),
/// allowed by the user, then `then` as the allowed branch.
fn allowed_call(
    kind: &str,
    fields: serde_json::Value,
    then: serde_json::Value,
) -> serde_json::Value {
    let mut call =
        json!({"toolCallId": "c1", "title": "A call", "kind": kind, "status": "pending"});
    for (k, v) in fields.as_object().unwrap() {
        call[k] = v.clone();
    }
    json!([
        {"tool_call": call},
        {"permission": {
            "tool_call": {"toolCallId": "c1"},
            "options": [
                {"optionId": "yes", "name": "Yes", "kind": "allow_once"},
                {"optionId": "no", "name": "No", "kind": "reject_once"}
            ],
            "on_allow": then,
            "on_reject": []
        }}
    ])
}

#[tokio::test]
async fn an_allowed_read_does_not_cover_a_write_of_the_same_path() {
    use acp::PermissionOptionKind as K;
    let steps = allowed_call(
        "read",
        json!({"locations": [{"path": "OUTSIDE/a.txt"}]}),
        json!([
            {"read_file": {"path": "OUTSIDE/a.txt"}},
            {"write_file": {"path": "OUTSIDE/a.txt", "content": "overwritten\n", "expect_error": -32603}}
        ]),
    );
    let evs = outside_turn(steps, &[Some(K::AllowOnce), Some(K::RejectOnce)]).await;
    let t = text(&evs);
    assert!(t.contains("a.txt: ok"), "the read is covered: {t}");
    let asks = prompts(&evs);
    assert_eq!(asks.len(), 2, "the write is asked about");
    assert_eq!(asks[1].tool_kind, Some(acp::ToolKind::Edit));
    assert_no_failed_check(&t);

    // An edit call covers both.
    let steps = allowed_call(
        "edit",
        json!({"rawInput": {"file_path": "OUTSIDE/a.txt"}}),
        json!([
            {"read_file": {"path": "OUTSIDE/a.txt"}},
            {"write_file": {"path": "OUTSIDE/a.txt", "content": "edited\n"}}
        ]),
    );
    let evs = outside_turn(steps, &[Some(K::AllowOnce)]).await;
    assert_eq!(prompts(&evs).len(), 1);
    assert_no_failed_check(&text(&evs));
}

#[tokio::test]
async fn a_path_mentioned_only_in_a_file_body_is_not_covered() {
    use acp::PermissionOptionKind as K;
    let steps = allowed_call(
        "edit",
        json!({"rawInput": {"file_path": "/nonexistent-dir/notes.md",
                            "content": "see OUTSIDE/a.txt", "new_string": "OUTSIDE/a.txt"}}),
        json!([{"read_file": {"path": "OUTSIDE/a.txt", "expect_error": -32603}}]),
    );
    let evs = outside_turn(steps, &[Some(K::AllowOnce), Some(K::RejectOnce)]).await;
    assert_eq!(prompts(&evs).len(), 2, "the read is asked about");
    assert_no_failed_check(&text(&evs));
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlink_planted_at_an_approved_name_is_asked_about() {
    use acp::PermissionOptionKind as K;
    // link.txt does not exist when the user allows the call; a command inside the session
    // then plants it, pointing at b.txt.
    let steps = allowed_call(
        "read",
        json!({"locations": [{"path": "OUTSIDE/link.txt"}]}),
        json!([
            {"terminal": {"command": "ln", "args": ["-s", "OUTSIDE/b.txt", "OUTSIDE/link.txt"],
                          "then": ["wait", "release"], "expect_exit_code": 0}},
            {"read_file": {"path": "OUTSIDE/link.txt", "expect_error": -32603}}
        ]),
    );
    let evs = outside_turn(steps, &[Some(K::AllowOnce), Some(K::RejectOnce)]).await;
    let t = text(&evs);
    assert!(!t.contains("outside b"), "{t}");
    assert_eq!(
        prompts(&evs).len(),
        2,
        "the read through the link is asked about"
    );
    assert_no_failed_check(&t);
}

#[tokio::test]
async fn terminals_not_released_are_capped() {
    // 32 terminals left unreleased, then one more.
    let mut steps: Vec<serde_json::Value> = (0..32)
        .map(|_| json!({"terminal": {"command": "true"}}))
        .collect();
    steps.push(json!({"terminal": {"command": "true", "expect_error": -32603}}));
    let scenarios = scenario_dir(&[("many-terminals", &["many-terminals"], json!(steps))]);
    let flags = ["--scenario-dir", scenarios.path().to_str().unwrap()];
    let t = text(&completed_turn(&flags, "many-terminals", |_| ()).await);
    assert_no_failed_check(&t);
    assert!(
        t.contains("too many terminals (32 were created and not released)"),
        "{t}"
    );
    assert!(t.contains("terminal/release"), "{t}");
    assert_eq!(t.matches(" - the expected error").count(), 1, "{t}");
}

#[tokio::test]
async fn many_exit_waits_neither_fail_nor_starve_file_reads() {
    // 100 waits on one running command (more than the 64 file requests allowed in flight),
    // and a read sent after them: the read is answered while they wait, and every wait gets
    // the exit status.
    let scenarios = scenario_dir(&[(
        "many-waits",
        &["many-waits"],
        json!([
            {"terminal": {"command": "sleep", "args": ["2"],
                          "then": [{"wait_many": {"count": 100, "read": "notes.txt"}}, "wait", "release"],
                          "expect_exit_code": 0}}
        ]),
    )]);
    let flags = ["--scenario-dir", scenarios.path().to_str().unwrap()];
    let t = text(
        &completed_turn(&flags, "many-waits", |dir| {
            std::fs::write(dir.join("notes.txt"), "n\n").unwrap()
        })
        .await,
    );
    assert_no_failed_check(&t);
    assert!(
        t.contains("notes.txt: ok, answered while the waits waited"),
        "{t}"
    );
    assert!(
        t.contains("x100: 100 answered, 0 errors, 0 unanswered"),
        "{t}"
    );
    // A wait after the exit is answered at once, from the recorded status.
    assert!(
        t.contains("terminal/wait_for_exit term-1: exited with code 0"),
        "{t}"
    );
}

#[tokio::test]
async fn waits_on_a_terminal_released_meanwhile_get_the_kill_status() {
    let scenarios = scenario_dir(&[(
        "release-waited",
        &["release-waited"],
        json!([
            {"terminal": {"command": "sleep", "args": ["30"],
                          "then": [{"wait_many": {"count": 3, "release": true}}]}}
        ]),
    )]);
    let flags = ["--scenario-dir", scenarios.path().to_str().unwrap()];
    let t = text(&completed_turn(&flags, "release-waited", |_| ()).await);
    assert_no_failed_check(&t);
    assert!(t.contains("terminal/release term-1: ok"), "{t}");
    assert!(
        t.contains("x3: 3 answered, 0 errors, 0 unanswered; killed by SIG"),
        "{t}"
    );
}

/// Agent quirks follow what the agent says it is, not only how it was launched: Gemini CLI
/// started through a wrapper script (`my-gemini`, as a Nix or Flatpak shim or a settings entry
/// would) must still be able to create a file, which needs its missing-file quirk.
#[cfg(unix)]
#[tokio::test]
async fn gemini_behind_a_wrapper_script_can_still_create_a_file() {
    use std::os::unix::fs::PermissionsExt;

    let bin = tempfile::tempdir().unwrap();
    let wrapper = bin.path().join("my-gemini");
    let agent = repo_root().join("tests/fake-agents/gemini-like.mjs");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\nexec node '{}' \"$@\"\n", agent.display()),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let spec = acp_desk_core::agents::from_command_line(&wrapper.display().to_string()).unwrap();
    assert!(
        !acp_desk_core::fs::Compat::for_launch(&spec).missing_file_reads_empty,
        "the launch alone does not say it is Gemini"
    );
    let (h, rx, dir) = session_with(spec).await;
    let events = tokio::spawn(rx.all());
    let outcome = finish(spawn_prompt(&h, "create notes.txt")).await;
    assert_eq!(outcome.reason, TurnEndReason::Completed);
    h.close().await;
    drop(h);
    let events = events.await.unwrap();
    let said: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(said, "Created notes.txt.");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "written by gemini-like\n"
    );
}
