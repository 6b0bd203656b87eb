//! `transcript-bench`: one long session opened from the history, backend side.
//!
//! issue 14's measurement: "a 3.3 MB transcript (about 1,100 entries, long tool outputs) opened
//! from history: time until it is shown and the extra memory it costs". Two steps, each its own
//! process, so that the second one's peak memory is the opening alone:
//!
//! - `transcript-bench make --dir DIR [--turns 100]`: generates the session (deterministic),
//!   records it through `acp_desk_store::Recorder` (the CLI's and the window's write path, in
//!   bursts as an engine hands them over) into `DIR/history.sqlite3`, and writes what the window
//!   would get for it to `DIR/transcript.json` (for the UI bench, `ui/bench/transcript.mjs`).
//! - `transcript-bench open --dir DIR [--rounds 10]`: opens the file and does what the shell's
//!   `history_events` command does (`Store::rows`, each row parsed as a `StreamEvent`, the seqs
//!   and the session's record), then serializes the answer to JSON as Tauri's IPC does; prints
//!   the time of the first opening, the median and range of `--rounds` more, the answer's size,
//!   and the process's memory: VmRSS before, VmHWM (peak) after the first opening. `--raw`
//!   builds the same answer from the stored JSON as it is (each row checked, not re-encoded).
//!
//! `bench/transcript.sh` builds it in release and runs both steps.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use acp_desk_core::StreamEvent;
use acp_desk_core::events::{
    AgentIdentity, SessionMethods, SessionState, ToolCallEvent, TurnEndReason,
};
use acp_desk_core::schema::v1 as acp;
use acp_desk_store::{LaunchOrigin, Recorder, RecorderOptions, SessionMeta, Store, StoredLaunch};
use serde_json::{Value, json};

/// Events handed to the recorder at once (an engine's burst).
const BATCH: usize = 40;
/// The session's id (ACP Desk's, as the engine makes them).
const SID: &str = "s19a0c0ffee-4242-1";
/// The text of the last agent message: the UI bench waits until it is on screen.
pub const LAST_MARKER: &str = "END-OF-TRANSCRIPT-MARKER";

const WORDS: &[&str] = &[
    "ledger", "snapshot", "parser", "result", "session", "thread", "commit", "index", "buffer",
    "token", "stream", "render", "window", "folder", "record", "entry", "merge", "frame", "batch",
    "query", "writer", "reader", "module", "config", "option", "value", "error", "status", "agent",
    "client", "server", "message", "update", "output", "input", "history", "search", "export",
];

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn between(&mut self, a: usize, b: usize) -> usize {
        a + self.below(b - a + 1)
    }
    fn word(&mut self) -> &'static str {
        WORDS[self.below(WORDS.len())]
    }
    fn ident(&mut self) -> String {
        format!("{}_{}", self.word(), self.word())
    }
    fn path(&mut self) -> String {
        format!("/home/u/ledger/src/{}/{}.rs", self.word(), self.word())
    }
    fn prose(&mut self, bytes: usize) -> String {
        let mut s = String::new();
        while s.len() < bytes {
            let words = self.between(8, 20);
            for i in 0..words {
                if i > 0 {
                    s.push(' ');
                }
                s.push_str(self.word());
            }
            s.push_str(". ");
            match self.below(8) {
                0 => s.push_str(&format!("`{}` ", self.ident())),
                1 => s.push_str("\n\n"),
                _ => {}
            }
        }
        s
    }
    fn code(&mut self, bytes: usize) -> String {
        let mut s = String::new();
        while s.len() < bytes {
            s.push_str(&format!(
                "    let {} = {}(&{}, {})?;\n",
                self.word(),
                self.ident(),
                self.word(),
                self.below(1000)
            ));
        }
        s
    }
    fn test_output(&mut self, bytes: usize) -> String {
        let mut s = String::from(
            "   Compiling ledger v0.4.1 (/home/u/ledger)\n    Finished `test` profile\n     Running unittests src/lib.rs\n",
        );
        while s.len() < bytes {
            s.push_str(&format!("test {}::{} ... ok\n", self.word(), self.ident()));
        }
        s.push_str("\ntest result: ok. 0 failed; finished in 0.42s\n");
        s
    }
}

fn chunks(rng: &mut Rng, text: &str, msg: &str, thought: bool) -> Vec<StreamEvent> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut n = rng.between(20, 120).min(rest.len());
        while !rest.is_char_boundary(n) {
            n += 1;
        }
        let (chunk, tail) = rest.split_at(n);
        rest = tail;
        let (session_id, text, message_id) =
            (SID.to_owned(), chunk.to_owned(), Some(msg.to_owned()));
        out.push(if thought {
            StreamEvent::Thought {
                session_id,
                text,
                content: None,
                message_id,
            }
        } else {
            StreamEvent::TextDelta {
                session_id,
                text,
                content: None,
                message_id,
            }
        });
    }
    out
}

/// A tool call as the engine emits it: announced, completed with its output, then its
/// `tool-result` (which carries the output again, as `thread.rs` builds it).
fn tool_call(
    id: &str,
    title: &str,
    kind: acp::ToolKind,
    arguments: Value,
    path: Option<&str>,
    content: Vec<acp::ToolCallContent>,
    raw_output: Value,
) -> Vec<StreamEvent> {
    let call = |update: bool| ToolCallEvent {
        session_id: SID.into(),
        tool_call_id: id.into(),
        tool_name: if update { String::new() } else { title.into() },
        arguments: if update {
            Value::Null
        } else {
            arguments.clone()
        },
        is_update: update,
        tool_kind: Some(kind),
        status: Some(if update {
            acp::ToolCallStatus::Completed
        } else {
            acp::ToolCallStatus::InProgress
        }),
        content: update.then(|| content.clone()),
        locations: (!update)
            .then(|| path.map(|p| vec![acp::ToolCallLocation::new(p)]))
            .flatten(),
        raw_output: update.then(|| raw_output.clone()),
        meta: None,
    };
    vec![
        StreamEvent::ToolCall(Box::new(call(false))),
        StreamEvent::ToolCall(Box::new(call(true))),
        StreamEvent::ToolResult {
            session_id: SID.into(),
            tool_call_id: id.into(),
            result: json!({"content": content, "rawOutput": raw_output}),
            is_error: Some(false),
        },
    ]
}

fn status(s: SessionState) -> StreamEvent {
    StreamEvent::SessionStatus {
        session_id: SID.into(),
        status: s,
        detail: None,
        agent: Some(AgentIdentity {
            launch_name: "claude".into(),
            name: Some("claude-agent-acp".into()),
            title: Some("Claude Agent".into()),
            version: Some("0.13.0".into()),
            acp_session_id: Some("acp-7f3c".into()),
            prompt_capabilities: None,
            session_methods: Some(SessionMethods {
                load: true,
                resume: true,
                list: true,
                close: false,
                delete: false,
            }),
            auth_methods: None,
        }),
    }
}

fn usage(used: u64) -> StreamEvent {
    StreamEvent::UsageUpdate {
        session_id: SID.into(),
        size: 200_000,
        used,
        cost: None,
        tokens_in: None,
        tokens_out: None,
        model: None,
        size_inferred: None,
        reported_size: None,
        origin: None,
        meta: None,
    }
}

/// The live events of the session: `turns` turns, each a prompt, a thought, three answers
/// with five tool calls between them (a file read, a test run with long output, an edit with
/// its diff, a search, another read), a usage update and the turn's end.
fn session(turns: usize) -> Vec<StreamEvent> {
    let mut rng = Rng(0x1400_5EED_u64.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut evs = vec![status(SessionState::Starting), status(SessionState::Ready)];
    let mut used = 2_000;
    for t in 0..turns {
        let prompt = format!(
            "Turn {t}: why does {} fail in {}? {}",
            rng.ident(),
            rng.path(),
            rng.prose(200)
        );
        evs.push(StreamEvent::TurnStart {
            session_id: SID.into(),
            prompt: vec![acp_desk_core::text_block(prompt)],
        });
        evs.push(status(SessionState::Prompting));
        let thought = rng.prose(500);
        evs.extend(chunks(&mut rng, &thought, &format!("th{t}"), true));
        let a = rng.prose(700);
        evs.extend(chunks(&mut rng, &a, &format!("a{t}"), false));
        let path = rng.path();
        let file = rng.code(2_200);
        evs.extend(tool_call(
            &format!("read-{t}"),
            &format!("Read {path}"),
            acp::ToolKind::Read,
            json!({"path": path}),
            Some(&path),
            vec![acp::ToolCallContent::from(acp_desk_core::text_block(
                file.clone(),
            ))],
            Value::Null,
        ));
        let out = rng.test_output(4_000);
        evs.extend(tool_call(
            &format!("run-{t}"),
            "cargo test",
            acp::ToolKind::Execute,
            json!({"command": "cargo test --workspace"}),
            None,
            vec![acp::ToolCallContent::from(acp_desk_core::text_block(out))],
            json!({"exitCode": 0}),
        ));
        let new_text = format!("{file}{}", rng.code(300));
        let diff = acp::ToolCallContent::Diff(acp::Diff::new(&path, new_text).old_text(file));
        evs.extend(tool_call(
            &format!("edit-{t}"),
            &format!("Edit {path}"),
            acp::ToolKind::Edit,
            json!({"path": path}),
            Some(&path),
            vec![diff],
            Value::Null,
        ));
        let b = rng.prose(500);
        evs.extend(chunks(&mut rng, &b, &format!("b{t}"), false));
        let pattern = rng.ident();
        let mut hits = String::new();
        while hits.len() < 1_200 {
            hits.push_str(&format!(
                "{}:{}: {}\n",
                rng.path(),
                rng.below(900),
                rng.code(40).trim()
            ));
        }
        evs.extend(tool_call(
            &format!("grep-{t}"),
            &format!("grep -rn {pattern}"),
            acp::ToolKind::Search,
            json!({"pattern": pattern}),
            None,
            vec![acp::ToolCallContent::from(acp_desk_core::text_block(hits))],
            Value::Null,
        ));
        let other = rng.path();
        let text = rng.code(1_000);
        evs.extend(tool_call(
            &format!("read2-{t}"),
            &format!("Read {other}"),
            acp::ToolKind::Read,
            json!({"path": other}),
            Some(&other),
            vec![acp::ToolCallContent::from(acp_desk_core::text_block(text))],
            Value::Null,
        ));
        let mut c = rng.prose(600);
        if t + 1 == turns {
            c.push_str(LAST_MARKER);
        }
        evs.extend(chunks(&mut rng, &c, &format!("c{t}"), false));
        used += 1_700;
        evs.push(usage(used));
        evs.push(StreamEvent::TurnEnd {
            session_id: SID.into(),
            reason: TurnEndReason::Completed,
            stop_reason: Some(acp::StopReason::EndTurn),
        });
        evs.push(status(SessionState::Ready));
    }
    evs.push(status(SessionState::Dead));
    evs
}

fn arg(args: &[String], name: &str, default: usize) -> Result<usize, String> {
    match args.iter().position(|a| a == name) {
        None => Ok(default),
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{name} takes a number")),
    }
}

/// `VmRSS` and `VmHWM` of this process, in KiB.
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// What the shell's `history_events` command answers (src-tauri/src/history.rs on the ui
/// helper's branch: the record, the rows' seqs, the events, how many rows were unreadable),
/// serialized as Tauri's IPC serializes a command's answer.
fn open_as_the_shell(store: &Store) -> Result<(String, usize), Box<dyn std::error::Error>> {
    let session = store.session(SID)?;
    let rows = store.rows(SID)?;
    let mut seqs = Vec::with_capacity(rows.len());
    let mut events = Vec::with_capacity(rows.len());
    let mut unreadable = 0u32;
    for row in rows {
        match serde_json::from_str::<StreamEvent>(&row.data) {
            Ok(ev) => {
                seqs.push(row.seq);
                events.push(ev);
            }
            Err(_) => unreadable += 1,
        }
    }
    let n = events.len();
    let answer = json!({
        "session": session,
        "seqs": seqs,
        "events": events,
        "unreadable": unreadable,
    });
    Ok((serde_json::to_string(&answer)?, n))
}

/// The same answer built from the stored JSON as it is: each row checked to parse, then copied
/// into the answer, never turned into a `StreamEvent` and back (what the shell could do).
fn open_raw(store: &Store) -> Result<(String, usize), Box<dyn std::error::Error>> {
    let session = serde_json::to_string(&store.session(SID)?)?;
    let rows = store.rows(SID)?;
    let mut seqs = Vec::with_capacity(rows.len());
    let mut events = String::with_capacity(rows.iter().map(|r| r.data.len() + 1).sum());
    let mut unreadable = 0u32;
    for row in &rows {
        if serde_json::from_str::<serde::de::IgnoredAny>(&row.data).is_err() {
            unreadable += 1;
            continue;
        }
        events.push(if seqs.is_empty() { '[' } else { ',' });
        events.push_str(&row.data);
        seqs.push(row.seq);
    }
    if seqs.is_empty() {
        events.push('[');
    }
    events.push(']');
    let n = seqs.len();
    let answer = format!(
        "{{\"session\":{session},\"seqs\":{},\"events\":{events},\"unreadable\":{unreadable}}}",
        serde_json::to_string(&seqs)?
    );
    Ok((answer, n))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn make(dir: &Path, turns: usize) -> Result<(), Box<dyn std::error::Error>> {
    let path = dir.join("history.sqlite3");
    if path.exists() {
        return Err(format!("{} exists; give an empty --dir", path.display()).into());
    }
    std::fs::create_dir_all(dir)?;
    let live = session(turns);
    let live_bytes: usize = live
        .iter()
        .map(|ev| serde_json::to_string(ev).map_or(0, |s| s.len() + 1))
        .sum();
    let meta = SessionMeta {
        agent: "claude".into(),
        launch: StoredLaunch {
            origin: LaunchOrigin::Named,
            program: "npx".into(),
            args: vec!["-y".into(), "@agentclientprotocol/claude-agent-acp".into()],
            args_redacted: false,
            env_names: vec!["ANTHROPIC_API_KEY".into()],
        },
        folder: "/home/u/ledger".into(),
    };
    let started = Instant::now();
    let (rec, _) = Recorder::start(&path, RecorderOptions::default())?;
    rec.begin(SID, meta);
    for batch in live.chunks(BATCH) {
        rec.events(SID, batch);
    }
    rec.end(SID);
    let warnings = rec.finish();
    if !warnings.is_empty() {
        return Err(format!("the recorder warned: {warnings:?}").into());
    }
    let recorded = started.elapsed();
    let (store, _) = Store::open(&path)?;
    store.catch_up_index()?;
    let rows = store.rows(SID)?;
    let stored_bytes: usize = rows.iter().map(|r| r.data.len() + 1).sum();
    let (answer, events) = open_as_the_shell(&store)?;
    drop(store);
    let json_path = dir.join("transcript.json");
    std::fs::write(&json_path, &answer)?;
    println!("session {SID}: {turns} turns");
    println!(
        "live: {} events, {:.2} MB of StreamEvent JSON lines; recorded in {:.0} ms",
        live.len(),
        live_bytes as f64 / 1e6,
        ms(recorded)
    );
    println!(
        "stored: {} rows, {:.2} MB as JSON lines (`history show --json`); {} events readable",
        rows.len(),
        stored_bytes as f64 / 1e6,
        events
    );
    println!(
        "what the window gets (history_events): {:.2} MB, written to {}",
        answer.len() as f64 / 1e6,
        json_path.display()
    );
    Ok(())
}

fn open(dir: &Path, rounds: usize, raw: bool) -> Result<(), Box<dyn std::error::Error>> {
    let answer_of = if raw { open_raw } else { open_as_the_shell };
    println!(
        "answer built {}",
        if raw {
            "from the stored JSON as it is (--raw)"
        } else {
            "as the shell builds it (rows parsed, then serialized)"
        }
    );
    let path = dir.join("history.sqlite3");
    if !path.exists() {
        return Err(format!(
            "no {}; run `transcript-bench make --dir {}` first",
            path.display(),
            dir.display()
        )
        .into());
    }
    let (rss_before, _) = memory_kib();
    // The first opening: what a user waits for (the file's pages may be in the OS cache).
    let t = Instant::now();
    let (store, _) = Store::open(&path)?;
    let opened = t.elapsed();
    let (answer, events) = answer_of(&store)?;
    let first = t.elapsed();
    let (rss_after, hwm) = memory_kib();
    let bytes = answer.len();
    drop(answer);
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        let (a, _) = answer_of(&store)?;
        times.push(t.elapsed());
        drop(a);
    }
    times.sort();
    println!(
        "events: {events}, answer {:.2} MB of JSON",
        bytes as f64 / 1e6
    );
    println!(
        "first opening: {:.1} ms (of which Store::open {:.1} ms)",
        ms(first),
        ms(opened)
    );
    if let (Some(lo), Some(hi)) = (times.first(), times.last()) {
        println!(
            "then {rounds} more (store open): median {:.1} ms ({:.1}-{:.1})",
            ms(times[times.len() / 2]),
            ms(*lo),
            ms(*hi)
        );
    }
    println!(
        "memory: VmRSS {:.1} MiB before, {:.1} MiB after the first opening; peak (VmHWM) {:.1} MiB: {:.1} MiB more than before",
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0,
        hwm as f64 / 1024.0,
        hwm.saturating_sub(rss_before) as f64 / 1024.0
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: transcript-bench make|open --dir DIR [--turns N] [--rounds N] [--raw]";
    let dir = args
        .iter()
        .position(|a| a == "--dir")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from)
        .ok_or(usage)?;
    match args.get(1).map(String::as_str) {
        Some("make") => make(&dir, arg(&args, "--turns", 100)?),
        Some("open") => open(
            &dir,
            arg(&args, "--rounds", 10)?,
            args.iter().any(|a| a == "--raw"),
        ),
        _ => Err(usage.into()),
    }
}
