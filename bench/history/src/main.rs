//! `history-bench`: how the history store does with many sessions.
//!
//! Generates sessions (deterministic: the same seed gives the same sessions), records them
//! through `acp_desk_store::Recorder` (the path the CLI and the window use), indexes them, and
//! times searches of several kinds (an identifier most sessions hold, one a single session
//! holds, a path fragment, common and rare words, two words, a word of two letters, nothing).
//! Prints a Markdown report: events recorded (as the live StreamEvent JSON lines a `run --json`
//! would print, and as stored), the file's size per MB of events, record and index time, and
//! the median and p95 of each kind of query.
//!
//! `history-bench [--sessions N] [--turns-min A] [--turns-max B] [--rounds R] [--seed S] [--dir DIR]`
//! (`bench/history.sh` builds it in release and runs it with the defaults).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use acp_desk_core::StreamEvent;
use acp_desk_core::events::{
    AgentIdentity, SessionMethods, SessionState, ToolCallEvent, TurnEndReason,
};
use acp_desk_core::schema::v1 as acp;
use acp_desk_store::{LaunchOrigin, Recorder, RecorderOptions, SessionMeta, Store, StoredLaunch};
use serde_json::json;

/// Events handed to the recorder at once (an engine's burst).
const BATCH: usize = 40;
/// Hits asked of each search, as `history search` asks.
const LIMIT: usize = 50;

const WORDS: &[&str] = &[
    "amount",
    "balance",
    "buffer",
    "cache",
    "channel",
    "client",
    "config",
    "context",
    "cursor",
    "decimal",
    "default",
    "delta",
    "entry",
    "error",
    "event",
    "field",
    "filter",
    "folder",
    "format",
    "frame",
    "handle",
    "header",
    "index",
    "input",
    "ledger",
    "limit",
    "line",
    "list",
    "merge",
    "message",
    "module",
    "number",
    "offset",
    "option",
    "order",
    "output",
    "parser",
    "path",
    "payload",
    "prompt",
    "query",
    "reader",
    "record",
    "request",
    "result",
    "row",
    "schema",
    "search",
    "session",
    "signal",
    "snapshot",
    "source",
    "status",
    "stream",
    "string",
    "table",
    "terminal",
    "thread",
    "token",
    "total",
    "transaction",
    "update",
    "value",
    "vector",
    "window",
    "writer",
    "the",
    "a",
    "is",
    "of",
    "to",
    "and",
    "in",
    "that",
    "it",
    "for",
    "with",
    "when",
    "then",
    "this",
    "we",
    "so",
    "but",
    "not",
    "each",
    "every",
    "once",
    "should",
    "now",
    "returns",
    "reads",
    "writes",
    "checks",
    "keeps",
    "drops",
    "splits",
    "parses",
    "stores",
    "because",
    "instead",
    "before",
    "after",
    "again",
    "first",
    "last",
    "next",
    "empty",
    "large",
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
    fn sentence(&mut self, min: usize, max: usize) -> String {
        let words = self.between(min, max);
        let mut s = String::new();
        for i in 0..words {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(self.word());
        }
        s.push('.');
        s
    }
    fn ident(&mut self) -> String {
        format!("{}_{}", self.word(), self.word())
    }
    fn path(&mut self) -> String {
        format!("src/{}/{}.rs", self.word(), self.word())
    }
    fn code(&mut self, min: usize, max: usize) -> String {
        let lines = self.between(min, max);
        let mut s = String::new();
        for _ in 0..lines {
            s.push_str(&format!(
                "    let {} = {}(&{})?;\n",
                self.word(),
                self.ident(),
                self.word()
            ));
        }
        s
    }
}

fn text_chunks(rng: &mut Rng, sid: &str, text: &str, msg: &str, thought: bool) -> Vec<StreamEvent> {
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
            (sid.to_string(), chunk.to_string(), Some(msg.to_string()));
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

fn tool(
    sid: &str,
    id: &str,
    title: &str,
    kind: acp::ToolKind,
    update: Option<(Vec<acp::ToolCallContent>, serde_json::Value)>,
    path: &str,
) -> StreamEvent {
    let done = update.is_some();
    let (content, raw_output) = match update {
        Some((c, r)) => (Some(c), Some(r)),
        None => (None, None),
    };
    StreamEvent::ToolCall(Box::new(ToolCallEvent {
        session_id: sid.into(),
        tool_call_id: id.into(),
        tool_name: if done { String::new() } else { title.into() },
        arguments: if done {
            json!(null)
        } else {
            json!({"path": path})
        },
        is_update: done,
        tool_kind: Some(kind),
        status: Some(if done {
            acp::ToolCallStatus::Completed
        } else {
            acp::ToolCallStatus::InProgress
        }),
        content,
        locations: (!done).then(|| vec![acp::ToolCallLocation::new(path)]),
        raw_output,
        meta: None,
    }))
}

fn usage(sid: &str, used: u64) -> StreamEvent {
    StreamEvent::UsageUpdate {
        session_id: sid.into(),
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

fn status(sid: &str, s: SessionState) -> StreamEvent {
    StreamEvent::SessionStatus {
        session_id: sid.into(),
        status: s,
        detail: None,
        agent: Some(AgentIdentity {
            launch_name: "claude".into(),
            name: Some("claude-agent-acp".into()),
            title: Some("Claude Agent".into()),
            version: Some("0.13.0".into()),
            acp_session_id: Some(format!("acp-{sid}")),
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

/// One session's live events. Session `n` holds the identifier `marker_{n:04}` once.
fn session(rng: &mut Rng, n: usize, turns: usize) -> Vec<StreamEvent> {
    let sid = format!("s-bench-{n:04}");
    let mut evs = vec![
        status(&sid, SessionState::Starting),
        status(&sid, SessionState::Ready),
    ];
    let mut used = 1_000;
    for t in 0..turns {
        let marker = if t == 0 {
            format!(" marker_{n:04}")
        } else {
            String::new()
        };
        let prompt = format!(
            "Please look at {} in {}{marker}. {}",
            rng.ident(),
            rng.path(),
            rng.sentence(15, 50)
        );
        evs.push(StreamEvent::TurnStart {
            session_id: sid.clone(),
            prompt: vec![acp_desk_core::text_block(prompt)],
        });
        evs.push(status(&sid, SessionState::Prompting));
        let thought = rng.sentence(20, 60);
        evs.extend(text_chunks(rng, &sid, &thought, &format!("th{t}"), true));
        let mut answer = String::new();
        let length = rng.between(1_500, 4_000);
        while answer.len() < length {
            answer.push_str(&rng.sentence(8, 20));
            answer.push(' ');
            if rng.below(4) == 0 {
                answer.push_str(&format!("`{}` ", rng.ident()));
            }
        }
        evs.extend(text_chunks(rng, &sid, &answer, &format!("m{t}"), false));
        let path = format!("/home/u/project/{}", rng.path());
        let read = format!("read-{t}");
        evs.push(tool(
            &sid,
            &read,
            &format!("Read {path}"),
            acp::ToolKind::Read,
            None,
            &path,
        ));
        let file = rng.code(20, 60);
        evs.push(tool(
            &sid,
            &read,
            "",
            acp::ToolKind::Read,
            Some((
                vec![acp::ToolCallContent::from(acp_desk_core::text_block(
                    file.clone(),
                ))],
                json!(null),
            )),
            &path,
        ));
        used += 3_000;
        evs.push(usage(&sid, used));
        let edit = format!("edit-{t}");
        evs.push(tool(
            &sid,
            &edit,
            &format!("Edit {path}"),
            acp::ToolKind::Edit,
            None,
            &path,
        ));
        let new_text = format!("{file}{}", rng.code(5, 5));
        let diff = acp::ToolCallContent::Diff(acp::Diff::new(&path, new_text).old_text(file));
        evs.push(tool(
            &sid,
            &edit,
            "",
            acp::ToolKind::Edit,
            Some((vec![diff], json!(null))),
            &path,
        ));
        let run = format!("run-{t}");
        evs.push(tool(
            &sid,
            &run,
            "cargo test",
            acp::ToolKind::Execute,
            None,
            "/home/u/project",
        ));
        let term = format!("term-{t}");
        let lines = rng.between(10, 40);
        for i in 0..lines {
            evs.push(StreamEvent::TerminalOutput {
                session_id: sid.clone(),
                terminal_id: term.clone(),
                data: format!("test {}::{} ... ok\n", rng.word(), rng.ident()),
                exit_status: None,
                truncated: None,
                output_byte_limit: (i == 0).then_some(1 << 20),
            });
        }
        evs.push(StreamEvent::TerminalOutput {
            session_id: sid.clone(),
            terminal_id: term,
            data: String::new(),
            exit_status: Some(acp::TerminalExitStatus::new().exit_code(0)),
            truncated: None,
            output_byte_limit: None,
        });
        evs.push(tool(
            &sid,
            &run,
            "",
            acp::ToolKind::Execute,
            Some((Vec::new(), json!({"exitCode": 0}))),
            "/home/u/project",
        ));
        used += 2_000;
        evs.push(usage(&sid, used));
        evs.push(StreamEvent::TurnEnd {
            session_id: sid.clone(),
            reason: TurnEndReason::Completed,
            stop_reason: Some(acp::StopReason::EndTurn),
        });
        evs.push(status(&sid, SessionState::Ready));
    }
    evs.push(status(&sid, SessionState::Dead));
    evs
}

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn file_size(p: &std::path::Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let sessions = arg(&args, "--sessions", 1_000);
    let turns_min = arg(&args, "--turns-min", 3);
    let turns_max = arg(&args, "--turns-max", 8);
    let rounds = arg(&args, "--rounds", 20);
    let seed = arg(&args, "--seed", 14) as u64;
    let tmp = tempfile::tempdir()?;
    let dir = args
        .iter()
        .position(|a| a == "--dir")
        .and_then(|i| args.get(i + 1))
        .map_or_else(|| tmp.path().to_path_buf(), PathBuf::from);
    let path = dir.join("history.sqlite3");
    if path.exists() {
        return Err(format!("{} exists; give an empty --dir", path.display()).into());
    }

    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut live_bytes = 0usize;
    let mut live_events = 0usize;
    let mut text_bytes = 0usize;
    let mut generated = Vec::with_capacity(sessions);
    for n in 0..sessions {
        let turns = rng.between(turns_min, turns_max);
        let evs = session(&mut rng, n, turns);
        for ev in &evs {
            live_bytes += serde_json::to_string(ev)?.len() + 1;
            if let Some(body) = acp_desk_store::search::body(ev) {
                text_bytes += body.len();
            }
        }
        live_events += evs.len();
        generated.push(evs);
    }
    let meta = |n: usize| SessionMeta {
        agent: "claude".into(),
        launch: StoredLaunch {
            origin: LaunchOrigin::Named,
            program: "npx".into(),
            args: vec!["-y".into(), "@agentclientprotocol/claude-agent-acp".into()],
            args_redacted: false,
            env_names: vec!["ANTHROPIC_API_KEY".into()],
        },
        folder: format!("/home/u/project-{}", n % 40),
    };
    // Recording: the recorder's calls for every session, then `finish` (the last commit).
    let started = Instant::now();
    let (rec, _) = Recorder::start(&path, RecorderOptions::default())?;
    for (n, evs) in generated.iter().enumerate() {
        let sid = format!("s-bench-{n:04}");
        rec.begin(&sid, meta(n));
        for batch in evs.chunks(BATCH) {
            rec.events(&sid, batch);
        }
        rec.end(&sid);
    }
    let warnings = rec.finish();
    let recording = started.elapsed();
    if !warnings.is_empty() {
        eprintln!("warnings: {warnings:?}");
    }

    let (store, _) = Store::open(&path)?;
    let pending = store.unindexed()?;
    let t = Instant::now();
    store.catch_up_index()?;
    let indexing = t.elapsed();
    let stored_bytes: i64 = rusqlite::Connection::open(&path)?.query_row(
        "SELECT sum(length(data)), count(*) FROM events",
        [],
        |r| r.get(0),
    )?;
    let rows: i64 =
        rusqlite::Connection::open(&path)?
            .query_row("SELECT count(*) FROM events", [], |r| r.get(0))?;
    {
        let c = rusqlite::Connection::open(&path)?;
        c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    }
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let db_bytes = file_size(&path) + file_size(std::path::Path::new(&wal));

    let marker = format!("marker_{:04}", sessions / 2);
    let queries: Vec<(&str, String)> = vec![
        ("identifier in most sessions", "parser_result".into()),
        ("identifier in one session", marker),
        ("path fragment", "src/ledger/".into()),
        ("common word", "transaction".into()),
        ("two words", "snapshot ledger".into()),
        ("two-letter word alone", "is".into()),
        ("absent", "zzqxj_nowhere".into()),
    ];
    let mut all = Vec::new();
    let mut report = Vec::new();
    for (label, q) in &queries {
        let mut times = Vec::with_capacity(rounds);
        let mut hits = 0;
        for _ in 0..rounds {
            let t = Instant::now();
            hits = store.search(q, LIMIT)?.len();
            times.push(t.elapsed());
        }
        all.extend_from_slice(&times);
        times.sort();
        report.push((
            label,
            q,
            hits,
            percentile(&times, 0.5),
            percentile(&times, 0.95),
        ));
    }
    all.sort();

    let mb = |b: f64| b / 1_000_000.0;
    println!("sessions: {sessions} ({turns_min}–{turns_max} turns each), seed {seed}");
    println!(
        "live events: {live_events} ({:.1} MB of StreamEvent JSON lines, {:.1} MB of searchable text)",
        mb(live_bytes as f64),
        mb(text_bytes as f64)
    );
    println!(
        "stored rows: {rows} ({:.1} MB of JSON)",
        mb(stored_bytes as f64)
    );
    println!(
        "database: {:.1} MB = {:.2} MB per MB of live events ({:.2} per MB of stored JSON)",
        mb(db_bytes as f64),
        db_bytes as f64 / live_bytes as f64,
        db_bytes as f64 / stored_bytes as f64
    );
    println!(
        "recording (every recorder call, then finish): {:.1} s = {:.1} MB/s of live events; \
         indexing {pending} rows: {:.1} s = {:.1} MB/s of text",
        recording.as_secs_f64(),
        mb(live_bytes as f64) / recording.as_secs_f64(),
        indexing.as_secs_f64(),
        mb(text_bytes as f64) / indexing.as_secs_f64()
    );
    println!();
    println!("| query | text | hits (limit {LIMIT}) | median ms | p95 ms |");
    println!("| --- | --- | ---: | ---: | ---: |");
    for (label, q, hits, med, p95) in report {
        println!(
            "| {label} | `{q}` | {hits} | {:.2} | {:.2} |",
            ms(med),
            ms(p95)
        );
    }
    println!(
        "| all {} searches | | | {:.2} | {:.2} |",
        all.len(),
        ms(percentile(&all, 0.5)),
        ms(percentile(&all, 0.95))
    );
    Ok(())
}
