//! The history through the CLI: `run` records what it prints, `history` shows, searches,
//! exports and deletes it, and a `kill -9` in the middle of a stream leaves a sound file that
//! holds what was printed up to a moment before.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use acp_desk_core::StreamEvent;
use acp_desk_core::compact::Compactor;
use common::*;
use serde_json::Value;

/// A CLI with its own config and data folders, shared by the calls of one test.
struct Cli {
    dir: tempfile::TempDir,
}

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Cli {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("project")).unwrap();
        Cli { dir }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(bin("acp-desk-cli"));
        c.args(args)
            .current_dir(self.dir.path().join("project"))
            .env("ACP_DESK_CONFIG_DIR", self.dir.path().join("config"))
            .env("ACP_DESK_DATA_DIR", self.dir.path().join("data"))
            .stdin(Stdio::null());
        c
    }

    fn run(&self, args: &[&str]) -> Out {
        let out = self.command(args).output().unwrap();
        Out {
            code: out.status.code(),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn file(&self) -> PathBuf {
        self.dir.path().join("data").join("history.sqlite3")
    }
}

fn events(jsonl: &str) -> Vec<StreamEvent> {
    jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a StreamEvent ({e}): {l}")))
        .collect()
}

fn snapshot(events: &[StreamEvent]) -> Vec<StreamEvent> {
    let mut c = Compactor::new();
    for ev in events {
        c.apply(ev);
    }
    c.snapshot()
}

fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn session_id_of(printed: &[StreamEvent]) -> String {
    match &printed[0] {
        StreamEvent::SessionStatus { session_id, .. } => session_id.clone(),
        other => panic!("the first event is not the session's status: {other:?}"),
    }
}

#[test]
fn run_records_what_it_prints_and_history_shows_searches_exports_and_deletes_it() {
    let cli = Cli::new();
    let run = cli.run(&["run", "--json", "stream", "edit"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let printed = events(&run.stdout);
    let id = session_id_of(&printed);
    // The session id is said on stderr (stdout carries only events).
    assert!(
        run.stderr.contains(&format!("session {id}")),
        "{}",
        run.stderr
    );

    let list = cli.run(&["history", "list", "--json"]);
    assert_eq!(list.code, Some(0), "{}", list.stderr);
    let sessions = json_lines(&list.stdout);
    assert_eq!(sessions.len(), 1);
    let s = &sessions[0];
    assert_eq!(s["id"], id.as_str());
    assert_eq!(s["agent"], "demo");
    assert_eq!(s["promptTitle"], "stream");
    assert_eq!(s["status"], "dead");
    let folder = std::fs::canonicalize(cli.dir.path().join("project")).unwrap();
    assert_eq!(s["folder"], folder.to_str().unwrap());
    assert!(
        s["acpSessionId"]
            .as_str()
            .unwrap()
            .starts_with("demo-session-")
    );
    assert_eq!(s["agentIdentity"]["sessionMethods"]["load"], false);
    assert_eq!(s["launch"]["origin"], "named");
    // The text listing too, under a prefix of the id.
    let text = cli.run(&["history"]);
    assert!(
        text.stdout.starts_with(&format!("{id}\t")),
        "{}",
        text.stdout
    );

    // What is stored is what was printed, merged as a snapshot merges it.
    let show = cli.run(&["history", "show", &id, "--json"]);
    assert_eq!(show.code, Some(0), "{}", show.stderr);
    let stored = events(&show.stdout);
    assert_eq!(stored, snapshot(&printed));
    assert!(
        stored.len() * 4 < printed.len(),
        "{} of {}",
        stored.len(),
        printed.len()
    );
    let prefix = &id[..id.len() - 2];
    let human = cli.run(&["history", "show", prefix]);
    assert_eq!(human.code, Some(0), "{}", human.stderr);
    assert!(
        human.stdout.contains("How `ledgerline` parses amounts"),
        "{}",
        human.stdout
    );

    // Search: an identifier, a path fragment, a word; JSON with the hit's place and marks.
    let found = cli.run(&["history", "search", "parse_amount", "--json"]);
    assert_eq!(found.code, Some(0), "{}", found.stderr);
    let hits = json_lines(&found.stdout);
    assert!(!hits.is_empty());
    for h in &hits {
        assert_eq!(h["sessionId"], id.as_str());
        let text = h["snippet"]["text"].as_str().unwrap();
        let marks = h["snippet"]["marks"].as_array().unwrap();
        assert!(!marks.is_empty());
        for m in marks {
            let (a, b) = (
                m[0].as_u64().unwrap() as usize,
                m[1].as_u64().unwrap() as usize,
            );
            assert!(text[a..b].eq_ignore_ascii_case("parse_amount"), "{text}");
        }
    }
    let path = cli.run(&["history", "search", "src/main"]);
    assert!(path.stdout.contains("[src/main]"), "{}", path.stdout);
    assert!(path.stdout.contains("tool-call"), "{}", path.stdout);
    let none = cli.run(&["history", "search", "no-such-words-anywhere"]);
    assert_eq!(none.code, Some(0));
    assert!(none.stdout.is_empty() && none.stderr.contains("nothing found"));

    // Export: Markdown with the prompt, the answer, the tool call's diff; JSON lines as show.
    let md = cli.run(&["history", "export", &id]);
    assert_eq!(md.code, Some(0), "{}", md.stderr);
    for part in [
        "# stream",
        "## Prompt",
        "## Agent",
        "How `ledgerline` parses amounts",
        "### Tool call: Edit src/main.rs (edit, completed)",
        "```diff",
        "+fn main() -> anyhow::Result<()> {",
        "-    let path = std::env::args().nth(1).unwrap();",
    ] {
        assert!(md.stdout.contains(part), "no {part:?} in:\n{}", md.stdout);
    }
    let jsonl = cli.run(&["history", "export", &id, "--format", "jsonl"]);
    assert_eq!(jsonl.stdout, show.stdout);

    // Delete, by prefix: gone from the list, show and search.
    let del = cli.run(&["history", "delete", prefix]);
    assert_eq!(del.code, Some(0), "{}", del.stderr);
    assert_eq!(del.stdout.trim(), format!("deleted {id}"));
    // The built-in demo advertises no session/delete: it is deleted here only, and stderr says so.
    assert!(
        del.stderr
            .contains(&format!("deleted {id} from the history"))
            && del
                .stderr
                .contains("not at the agent (demo): it does not offer session/delete"),
        "{}",
        del.stderr
    );
    assert!(cli.run(&["history", "list", "--json"]).stdout.is_empty());
    let gone = cli.run(&["history", "show", &id]);
    assert_eq!(gone.code, Some(2));
    assert!(
        gone.stderr.contains(&id) && gone.stderr.contains("history list"),
        "{}",
        gone.stderr
    );
    assert!(
        cli.run(&["history", "search", "parse_amount"])
            .stdout
            .is_empty()
    );
}

#[test]
fn no_history_records_nothing() {
    let cli = Cli::new();
    let run = cli.run(&["run", "--no-history", "--json", "hello"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(!run.stderr.contains("recorded in"), "{}", run.stderr);
    assert!(!cli.file().exists());
}

#[test]
fn a_locked_history_file_is_named_and_the_run_goes_on() {
    let cli = Cli::new();
    assert_eq!(cli.run(&["run", "--json", "hello"]).code, Some(0));
    let other = rusqlite::Connection::open(cli.file()).unwrap();
    other
        .execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;")
        .unwrap();
    let run = cli.run(&["run", "--json", "hello"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains(&cli.file().display().to_string()),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("locked") && run.stderr.contains("history is off"),
        "{}",
        run.stderr
    );
    assert!(events(&run.stdout).iter().any(|e| e.kind() == "turn-end"));
    other.execute_batch("COMMIT;").unwrap();
    drop(other);
    assert_eq!(
        json_lines(&cli.run(&["history", "list", "--json"]).stdout).len(),
        1
    );
}

/// How long before the kill a printed event must have been for the history to hold it.
const HELD_AFTER: Duration = Duration::from_secs(1);
/// How far into the stream the CLI is killed: past `HELD_AFTER`, well before its end (three
/// `stream` turns take about six seconds).
const KILL_AFTER: Duration = Duration::from_millis(1_600);

#[cfg(unix)]
#[test]
fn kill_9_mid_stream_leaves_a_sound_file_holding_what_was_printed_before() {
    let cli = Cli::new();
    let mut child = cli
        .command(&["run", "--json", "stream", "stream", "stream"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<(Instant, String)>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    // Wait until the stream has run for KILL_AFTER (a sentinel: the stream's own lines).
    let deadline = Instant::now() + HANG;
    let mut printed: Vec<(Instant, String)> = Vec::new();
    let killed_at = loop {
        let (at, line) = rx.recv_timeout(HANG).expect("the CLI printed nothing");
        assert!(Instant::now() < deadline, "hang");
        let started = printed
            .iter()
            .find(|(_, l)| {
                l.contains(r#""kind":"text-delta""#) || l.contains(r#""kind":"thought""#)
            })
            .map(|(t, _)| *t);
        printed.push((at, line));
        let turns_ended = printed
            .iter()
            .filter(|(_, l)| l.contains(r#""kind":"turn-end""#))
            .count();
        assert!(turns_ended < 3, "the stream ended before the kill");
        if let Some(t) = started
            && t.elapsed() >= KILL_AFTER
        {
            // SAFETY: a plain kill(2) of our own child.
            unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
            break Instant::now();
        }
    };
    let status = child.wait().unwrap();
    assert!(!status.success());
    // Whatever was in the pipe at the kill was printed too.
    reader.join().unwrap();
    printed.extend(rx.try_iter());
    let printed_events: Vec<StreamEvent> = printed
        .iter()
        .filter_map(|(_, l)| serde_json::from_str(l).ok())
        .collect();
    let held = printed
        .iter()
        .filter(|(t, _)| killed_at.duration_since(*t) >= HELD_AFTER)
        .count();
    assert!(
        held > 3,
        "only {held} events were printed a second before the kill"
    );

    // The file is sound (the WAL recovers on open)...
    let check: String = rusqlite::Connection::open(cli.file())
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    // ...and holds a prefix of what was printed that covers every event printed a second or
    // more before the kill.
    let id = session_id_of(&printed_events);
    let show = cli.run(&["history", "show", &id, "--json"]);
    assert_eq!(show.code, Some(0), "{}", show.stderr);
    let stored = events(&show.stdout);
    let prefix = (held..=printed_events.len()).find(|&k| snapshot(&printed_events[..k]) == stored);
    assert!(
        prefix.is_some(),
        "the stored rows ({}) are no prefix of the {} printed events covering the first {held}",
        stored.len(),
        printed_events.len()
    );
}

/// `history delete` of a session whose agent advertised `session/delete`: the agent (started
/// for it, as the session was) forgets it too, and stderr says where it was deleted.
#[test]
fn history_delete_deletes_at_the_agent_when_it_advertised_session_delete() {
    let cli = Cli::new();
    let records = cli.dir.path().join("demo-records");
    let with_delete = |args: &[&str]| {
        let out = cli
            .command(args)
            .env("ACP_DESK_DEMO_SESSION_METHODS", "load,delete")
            .env("ACP_DESK_DEMO_SESSION_DIR", &records)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stdout, stderr) = with_delete(&["run", "--json", "stream"]);
    assert_eq!(code, Some(0), "{stderr}");
    let id = session_id_of(&events(&stdout));
    let record_count = || std::fs::read_dir(&records).map(|d| d.count()).unwrap_or(0);
    assert_eq!(
        record_count(),
        1,
        "the demo agent keeps its session's record"
    );
    let (code, stdout, stderr) = with_delete(&["history", "delete", &id]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout.trim(), format!("deleted {id}"));
    assert!(
        stderr.contains("and at the agent (demo), with session/delete"),
        "{stderr}"
    );
    assert_eq!(record_count(), 0, "the agent forgot it");
    assert!(cli.run(&["history", "list", "--json"]).stdout.is_empty());
}
