//! The history store against its promises: what is recorded comes back as the compactor's
//! snapshot of the live stream; old files migrate; search finds identifiers, paths and words;
//! damaged, locked, newer and full files get what the issue says.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_desk_core::StreamEvent;
use acp_desk_core::compact::Compactor;
use acp_desk_core::events::{AgentIdentity, SessionMethods, SessionState, ToolCallEvent};
use acp_desk_core::schema::v1 as acp;
use acp_desk_store::{
    LaunchOrigin, OpenOptions, Recorder, RecorderOptions, SCHEMA_VERSION, SessionMeta, Store,
    StoreError, StoreWarning, StoredLaunch,
};
use serde_json::json;

fn status(id: &str, s: SessionState, detail: Option<&str>) -> StreamEvent {
    StreamEvent::SessionStatus {
        session_id: id.into(),
        status: s,
        detail: detail.map(Into::into),
        agent: Some(AgentIdentity {
            launch_name: "demo".into(),
            name: Some("acp-desk-demo-agent".into()),
            title: None,
            version: Some("0.1.0".into()),
            acp_session_id: Some(format!("acp-{id}")),
            prompt_capabilities: None,
            session_methods: Some(SessionMethods {
                load: true,
                resume: false,
                list: true,
                close: false,
                delete: false,
            }),
            auth_methods: None,
        }),
    }
}

fn prompt(id: &str, text: &str) -> StreamEvent {
    StreamEvent::TurnStart {
        session_id: id.into(),
        prompt: vec![acp_desk_core::text_block(text.to_string())],
    }
}

fn text(id: &str, t: &str, msg: &str) -> StreamEvent {
    StreamEvent::TextDelta {
        session_id: id.into(),
        text: t.into(),
        content: None,
        message_id: Some(msg.into()),
    }
}

fn tool(id: &str, call: &str, title: &str, done: bool, output: &str) -> StreamEvent {
    StreamEvent::ToolCall(Box::new(ToolCallEvent {
        session_id: id.into(),
        tool_call_id: call.into(),
        tool_name: title.into(),
        arguments: if done {
            json!(null)
        } else {
            json!({"path": "/home/u/ledger/src/parse.rs"})
        },
        is_update: done,
        tool_kind: Some(acp::ToolKind::Read),
        status: Some(if done {
            acp::ToolCallStatus::Completed
        } else {
            acp::ToolCallStatus::InProgress
        }),
        content: None,
        locations: Some(vec![acp::ToolCallLocation::new(
            "/home/u/ledger/src/parse.rs",
        )]),
        raw_output: done.then(|| json!(output)),
        meta: None,
    }))
}

fn title(id: &str, t: &str) -> StreamEvent {
    StreamEvent::SessionInfo {
        session_id: id.into(),
        title: Some(Some(t.into())),
        updated_at: None,
    }
}

fn turn_end(id: &str) -> StreamEvent {
    StreamEvent::TurnEnd {
        session_id: id.into(),
        reason: acp_desk_core::events::TurnEndReason::Completed,
        stop_reason: Some(acp::StopReason::EndTurn),
    }
}

/// A turn of a few thousand events: a long streamed answer cut by tool calls, a title, a
/// terminal, the statuses around it.
fn turn(id: &str, words: &str) -> Vec<StreamEvent> {
    let mut evs = vec![
        status(id, SessionState::Starting, None),
        status(id, SessionState::Ready, None),
        prompt(id, &format!("Explain {words}\nand more")),
        status(id, SessionState::Prompting, None),
    ];
    for i in 0..3_000 {
        evs.push(text(id, &format!("{words} {i} "), "m1"));
        if i == 1_000 {
            evs.push(tool(id, "read-1", "Read src/parse.rs", false, ""));
            evs.push(title(id, &format!("About {words}")));
        }
        if i == 2_000 {
            evs.push(tool(
                id,
                "read-1",
                "",
                true,
                "fn parse_amount(s: &str) -> i64",
            ));
        }
    }
    evs.push(StreamEvent::TerminalOutput {
        session_id: id.into(),
        terminal_id: "term-1".into(),
        data: "running 3 tests\ntest session_info_roundtrip ... ok\n".into(),
        exit_status: Some(acp::TerminalExitStatus::new().exit_code(0)),
        truncated: None,
        output_byte_limit: Some(4096),
    });
    evs.push(turn_end(id));
    evs.push(status(id, SessionState::Ready, None));
    evs
}

fn snapshot(events: &[StreamEvent]) -> Vec<StreamEvent> {
    let mut c = Compactor::new();
    for ev in events {
        c.apply(ev);
    }
    c.snapshot()
}

fn meta(folder: &str) -> SessionMeta {
    let spec = acp_desk_core::agents::LaunchSpec {
        name: "demo".into(),
        command: "/opt/acp-desk-demo-agent".into(),
        args: vec!["--api-key".into(), "sk-do-not-store".into()],
        env: vec![("DEMO_TOKEN".into(), "value-never-stored".into())],
        cwd: None,
    };
    SessionMeta {
        agent: "demo".into(),
        launch: StoredLaunch::from_spec(&spec, LaunchOrigin::Named),
        folder: folder.into(),
    }
}

fn quick() -> RecorderOptions {
    RecorderOptions {
        index_idle: Duration::from_millis(20),
        ..RecorderOptions::default()
    }
}

fn record(path: &Path, sessions: &[(&str, Vec<StreamEvent>)]) {
    let (rec, warnings) = Recorder::start(path, quick()).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    for (id, events) in sessions {
        rec.begin(id, meta("/home/u/ledger"));
        // In bursts, as an engine emits them.
        for batch in events.chunks(37) {
            rec.events(id, batch);
        }
        rec.end(id);
    }
    assert_eq!(rec.finish(), []);
}

fn file(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("data").join("history.sqlite3")
}

#[test]
fn a_recorded_session_comes_back_as_the_snapshot_of_its_live_stream() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir);
    let live = turn("s-1", "ledgers");
    record(&path, &[("s-1", live.clone())]);

    let (store, warnings) = Store::open(&path).unwrap();
    assert!(warnings.is_empty());
    let stored = store.events("s-1").unwrap();
    assert_eq!(stored, snapshot(&live));
    assert!(
        stored.len() < 15 && live.len() > 3_000,
        "{} live events stored as {} rows",
        live.len(),
        stored.len()
    );
    let s = store.session("s-1").unwrap();
    assert_eq!(s.agent, "demo");
    assert_eq!(s.folder, "/home/u/ledger");
    assert_eq!(s.title.as_deref(), Some("About ledgers"));
    assert_eq!(s.prompt_title.as_deref(), Some("Explain ledgers"));
    assert_eq!(s.status, "ready");
    assert_eq!(s.acp_session_id.as_deref(), Some("acp-s-1"));
    let methods = s.session_methods();
    assert!(methods.load && methods.list && !methods.resume);
    assert!(s.created_ms > 0 && s.updated_ms >= s.created_ms);
    let launch = s.launch.unwrap();
    assert_eq!(launch.program, "/opt/acp-desk-demo-agent");
    assert_eq!(launch.env_names, ["DEMO_TOKEN"]);
    assert!(launch.args_redacted);
    // Secrets of the launch are nowhere in the file (the WAL included).
    let mut bytes = std::fs::read(&path).unwrap();
    if let Ok(wal) = std::fs::read(path.with_extension("sqlite3-wal")) {
        bytes.extend(wal);
    }
    let text = String::from_utf8_lossy(&bytes);
    assert!(!text.contains("value-never-stored") && !text.contains("sk-do-not-store"));
    // A unique prefix finds the session; an unknown id is named.
    assert_eq!(store.session("s-").unwrap().id, "s-1");
    assert!(matches!(store.session("nope"), Err(StoreError::NotFound(id)) if id == "nope"));
}

#[test]
fn sessions_list_newest_first_and_a_continued_session_appends() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir);
    record(
        &path,
        &[("old", turn("old", "alpha")), ("new", turn("new", "beta"))],
    );
    let (store, _) = Store::open(&path).unwrap();
    let ids: Vec<String> = store
        .sessions()
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(ids, ["new", "old"]);
    drop(store);

    // The next slice continues stored sessions under their id: the rows go after the stored
    // ones and the title stays.
    let more = vec![
        prompt("old", "second question"),
        text("old", "second answer", "m9"),
    ];
    record(&path, &[("old", more.clone())]);
    let (store, _) = Store::open(&path).unwrap();
    let mut expected = snapshot(&turn("old", "alpha"));
    expected.extend(snapshot(&more));
    assert_eq!(store.events("old").unwrap(), expected);
    let s = store.session("old").unwrap();
    assert_eq!(s.prompt_title.as_deref(), Some("Explain alpha"));
    assert_eq!(store.sessions().unwrap()[0].id, "old");
}

#[test]
fn search_finds_identifiers_paths_and_words_with_the_hit_marked() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir);
    record(
        &path,
        &[
            ("s-a", turn("s-a", "ledgers")),
            ("s-b", turn("s-b", "invoices")),
        ],
    );
    let (mut store, _) = Store::open(&path).unwrap();
    let hits = |store: &Store, q: &str| -> Vec<(String, String)> {
        store
            .search(q, 50)
            .unwrap()
            .into_iter()
            .map(|h| (h.session_id, h.kind))
            .collect()
    };
    // An identifier with an underscore, in a terminal's output.
    let found = store.search("session_info", 50).unwrap();
    assert_eq!(found.len(), 2);
    assert!(found.iter().all(|h| h.kind == "terminal-output"));
    let s = &found[0].snippet;
    let marked: Vec<&str> = s.marks.iter().map(|&(a, b)| &s.text[a..b]).collect();
    assert_eq!(marked, ["session_info"]);
    // Part of a path (tool locations), and a tool's output.
    assert!(
        hits(&store, "src/pars")
            .iter()
            .all(|(_, k)| k == "tool-call")
    );
    assert_eq!(hits(&store, "src/pars").len(), 2);
    assert_eq!(hits(&store, "parse_amount").len(), 2);
    // A word of one session's answer and prompt, in any case; words anywhere in a row.
    let invoices = hits(&store, "INVOICES");
    assert!(invoices.iter().all(|(s, _)| s == "s-b"));
    assert!(invoices.iter().any(|(_, k)| k == "turn-start"));
    assert!(invoices.iter().any(|(_, k)| k == "text-delta"));
    assert_eq!(hits(&store, "explain invoices").len(), 1);
    // Short words are found too, with a longer one or alone.
    assert_eq!(hits(&store, "invoices 2999").len(), 1);
    assert!(!hits(&store, "ok").is_empty());
    assert!(hits(&store, "nowhere-to-be-found").is_empty());
    // Query syntax is just text.
    assert!(hits(&store, "\"ledgers OR").is_empty());
    assert!(hits(&store, "ledgers*").is_empty());
    // Deleted: gone from the list and from search; the other session stays whole.
    store.delete("s-b").unwrap();
    assert!(hits(&store, "invoices").is_empty());
    assert_eq!(store.sessions().unwrap().len(), 1);
    assert_eq!(
        store.events("s-a").unwrap(),
        snapshot(&turn("s-a", "ledgers"))
    );
    assert!(matches!(store.delete("s-b"), Err(StoreError::NotFound(_))));
}

/// Version 1 as it was written, before the search index existed.
const V1_SQL: &str = "
CREATE TABLE sessions (id TEXT PRIMARY KEY NOT NULL, agent TEXT NOT NULL, launch TEXT NOT NULL,
    folder TEXT NOT NULL, title TEXT, prompt_title TEXT, created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL, status TEXT NOT NULL, status_detail TEXT, acp_session_id TEXT,
    agent_identity TEXT);
CREATE INDEX sessions_by_update ON sessions(updated_ms);
CREATE INDEX sessions_by_folder ON sessions(folder, updated_ms);
CREATE TABLE events (id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, seq INTEGER NOT NULL,
    kind TEXT NOT NULL, data TEXT NOT NULL, UNIQUE (session_id, seq));
CREATE TABLE drafts (session_id TEXT PRIMARY KEY NOT NULL, text TEXT NOT NULL,
    updated_ms INTEGER NOT NULL);
INSERT INTO sessions VALUES ('v1-session', 'claude',
    '{\"origin\":\"named\",\"program\":\"npx\",\"args\":[\"-y\",\"@agentclientprotocol/claude-agent-acp\"]}',
    '/home/u/old', NULL, 'Fix the session_info parser', 1000, 2000, 'dead', 'closed', 'acp-9', NULL);
INSERT INTO events (session_id, seq, kind, data) VALUES
    ('v1-session', 0, 'turn-start',
     '{\"kind\":\"turn-start\",\"sessionId\":\"v1-session\",\"prompt\":[{\"type\":\"text\",\"text\":\"Fix the session_info parser\"}]}'),
    ('v1-session', 1, 'text-delta',
     '{\"kind\":\"text-delta\",\"sessionId\":\"v1-session\",\"text\":\"Done: crates/old/src/info.rs\"}');
INSERT INTO drafts VALUES ('v1-session', 'unsent words', 3000);
PRAGMA user_version = 1;
";

#[test]
fn a_version_1_file_migrates_and_its_old_rows_become_searchable() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(V1_SQL)
        .unwrap();

    let (store, warnings) = Store::open(&path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let version: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, i64::from(SCHEMA_VERSION));
    let s = store.session("v1-session").unwrap();
    assert_eq!(s.shown_title(), Some("Fix the session_info parser"));
    assert_eq!(s.launch.unwrap().program, "npx");
    assert_eq!(store.events("v1-session").unwrap().len(), 2);
    assert_eq!(
        store.draft("v1-session").unwrap().as_deref(),
        Some("unsent words")
    );
    assert_eq!(store.unindexed().unwrap(), 2);
    let hits = store.search("old/src/info", 10).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(
        (hits[0].session_id.as_str(), hits[0].seq),
        ("v1-session", 1)
    );
    assert_eq!(store.unindexed().unwrap(), 0);
    // Opening again migrates nothing more.
    drop(store);
    let (store, _) = Store::open(&path).unwrap();
    assert_eq!(store.search("session_info", 10).unwrap().len(), 1);
}

#[test]
fn drafts_are_kept_per_session_and_forgotten_when_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir);
    let (rec, _) = Recorder::start(&path, quick()).unwrap();
    rec.set_draft("s-1", "half a thought");
    rec.set_draft("s-2", "first");
    rec.set_draft("s-2", "second");
    rec.flush();
    let (store, _) = Store::open(&path).unwrap();
    assert_eq!(
        store.draft("s-1").unwrap().as_deref(),
        Some("half a thought")
    );
    assert_eq!(store.draft("s-2").unwrap().as_deref(), Some("second"));
    rec.set_draft("s-1", "");
    rec.finish();
    assert_eq!(store.draft("s-1").unwrap(), None);
    store.set_draft("s-3", "typed in the window").unwrap();
    assert_eq!(
        store.draft("s-3").unwrap().as_deref(),
        Some("typed in the window")
    );
}

fn garbage_file(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn set_aside_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".corrupt-"))
        .collect();
    v.sort();
    v
}

#[test]
fn a_file_that_is_not_a_database_is_moved_aside_and_a_fresh_one_made() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir);
    let junk = b"this is not a database, it is a shopping list\n".repeat(200);
    garbage_file(&path, &junk);
    let (store, warnings) = Store::open(&path).unwrap();
    let [
        StoreWarning::SetAside {
            path: p, moved_to, ..
        },
    ] = warnings.as_slice()
    else {
        panic!("{warnings:?}")
    };
    assert_eq!(p, &path);
    let name = moved_to.file_name().unwrap().to_string_lossy().into_owned();
    let secs = name.strip_prefix("history.sqlite3.corrupt-").unwrap();
    assert!(secs.bytes().all(|b| b.is_ascii_digit()), "{name}");
    // Kept byte for byte, and named in the message.
    assert!(std::fs::read(moved_to).unwrap() == junk);
    assert!(
        warnings[0]
            .to_string()
            .contains(&moved_to.display().to_string())
    );
    assert!(store.sessions().unwrap().is_empty());
    drop(store);
    // The fresh file records as usual.
    record(&path, &[("s-1", turn("s-1", "fresh"))]);
    assert_eq!(Store::open(&path).unwrap().0.sessions().unwrap().len(), 1);
}

#[test]
fn a_database_damaged_where_opening_reads_is_moved_aside_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir);
    record(&path, &[("s-1", turn("s-1", "doomed"))]);
    // Everything checkpointed into the main file, then its schema page overwritten after the
    // 100-byte header.
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        c.pragma_update(None, "journal_mode", "delete").unwrap();
    }
    let mut bytes = std::fs::read(&path).unwrap();
    for b in &mut bytes[100..4096] {
        *b = 0xA5;
    }
    std::fs::write(&path, &bytes).unwrap();
    let (store, warnings) = Store::open(&path).unwrap();
    assert!(
        matches!(warnings.as_slice(), [StoreWarning::SetAside { .. }]),
        "{warnings:?}"
    );
    assert!(store.sessions().unwrap().is_empty());
    let aside = set_aside_files(path.parent().unwrap());
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert!(std::fs::read(&aside[0]).unwrap() == bytes);
}

#[test]
fn damage_found_while_running_is_checked_whole_at_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir);
    record(
        &path,
        &[
            ("s-1", turn("s-1", "fine")),
            ("s-2", turn("s-2", "also fine")),
        ],
    );
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        c.pragma_update(None, "journal_mode", "delete").unwrap();
    }
    // Every page but the first damaged: opening reads only the header and the schema (the
    // first page), so it does not see it.
    let mut bytes = std::fs::read(&path).unwrap();
    // The page size is the header's big-endian u16 at offset 16 (1 means 65,536).
    let page = match u16::from_be_bytes([bytes[16], bytes[17]]) {
        1 => 65_536,
        n => usize::from(n),
    };
    for b in &mut bytes[page..] {
        *b = 0x5A;
    }
    std::fs::write(&path, &bytes).unwrap();
    let (store, warnings) = Store::open(&path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    drop(store);
    // A run that met SQLITE_CORRUPT leaves a marker: the next open checks the whole file.
    let mut marker = path.as_os_str().to_owned();
    marker.push(".damaged");
    std::fs::write(&marker, "database disk image is malformed").unwrap();
    let (store, warnings) = Store::open(&path).unwrap();
    assert!(
        matches!(warnings.as_slice(), [StoreWarning::SetAside { .. }]),
        "{warnings:?}"
    );
    assert!(!Path::new(&marker).exists());
    assert!(store.sessions().unwrap().is_empty());
    let aside = set_aside_files(path.parent().unwrap());
    assert_eq!(aside.len(), 1, "{aside:?}");
    // Kept as it was (the first open set its header to WAL; the pages are untouched).
    let moved = std::fs::read(&aside[0]).unwrap();
    assert!(moved.len() == bytes.len() && moved[page..] == bytes[page..]);
    drop(store);
    // A marker on a sound file: checked, kept as it is.
    std::fs::write(&marker, "malformed").unwrap();
    let (_, warnings) = Store::open(&path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(!Path::new(&marker).exists());
}

#[test]
fn a_file_locked_by_another_program_is_named_and_history_goes_off() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir);
    record(&path, &[("s-1", turn("s-1", "locked"))]);
    // Another program holding the file exclusively (a database tool, another build of ours).
    let other = rusqlite::Connection::open(&path).unwrap();
    other
        .execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;")
        .unwrap();
    let opts = RecorderOptions {
        open: OpenOptions {
            busy_timeout: Duration::from_millis(100),
            ..OpenOptions::default()
        },
        ..quick()
    };
    let Err(err) = Recorder::start(&path, opts.clone()) else {
        panic!("a locked file was opened for writing")
    };
    assert!(
        matches!(&err, StoreError::Locked { path: p } if p == &path),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains(&path.display().to_string()) && msg.contains("history is off"),
        "{msg}"
    );
    assert!(matches!(
        Store::open_with(&path, &opts.open),
        Err(StoreError::Locked { .. })
    ));
    // Released: the same file opens, nothing lost.
    other
        .execute_batch("COMMIT; PRAGMA locking_mode = NORMAL;")
        .unwrap();
    drop(other);
    let (store, _) = Store::open(&path).unwrap();
    assert_eq!(
        store.events("s-1").unwrap(),
        snapshot(&turn("s-1", "locked"))
    );
}

#[test]
fn a_newer_file_is_opened_read_only_and_never_downgraded() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir);
    record(&path, &[("s-1", turn("s-1", "future"))]);
    let newer = i64::from(SCHEMA_VERSION) + 1;
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", newer)
        .unwrap();

    let (mut store, warnings) = Store::open(&path).unwrap();
    assert_eq!(
        warnings,
        [StoreWarning::NewerFormat {
            path: path.clone(),
            found: SCHEMA_VERSION + 1
        }]
    );
    assert!(store.read_only());
    // Readable...
    assert_eq!(store.sessions().unwrap().len(), 1);
    // (what was indexed before is found; nothing is indexed now, which would write)
    store.search("future", 5).unwrap();
    // ...never written.
    assert!(matches!(
        store.delete("s-1"),
        Err(StoreError::ReadOnly { .. })
    ));
    assert!(matches!(
        store.set_draft("s-1", "x"),
        Err(StoreError::ReadOnly { .. })
    ));
    let Err(StoreError::ReadOnly { found, .. }) = Recorder::start(&path, quick()) else {
        panic!("a newer file was opened for recording")
    };
    assert_eq!(found, SCHEMA_VERSION + 1);
    drop(store);
    let version: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, newer);
    assert_eq!(Store::open(&path).unwrap().0.sessions().unwrap().len(), 1);
}

#[test]
fn a_full_disk_loses_nothing_stored_and_says_so_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir);
    let before = turn("s-1", "stored before");
    record(&path, &[("s-1", before.clone())]);
    let pages: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .unwrap();

    // The file may not grow any more: the next commit fails as on a full disk.
    let heard: Arc<Mutex<Vec<StoreWarning>>> = Arc::default();
    let sink = heard.clone();
    let opts = RecorderOptions {
        open: OpenOptions {
            max_page_count: Some(pages),
            ..OpenOptions::default()
        },
        retry_interval: Duration::from_millis(50),
        on_warning: Some(Arc::new(move |w: &StoreWarning| {
            sink.lock().unwrap().push(w.clone())
        })),
        ..quick()
    };
    let (rec, _) = Recorder::start(&path, opts).unwrap();
    let big: Vec<StreamEvent> = (0..2_000)
        .map(|i| text("s-2", &format!("{i:>200}"), &format!("m{i}")))
        .collect();
    rec.begin("s-2", meta("/home/u/other"));
    rec.events("s-2", &big);
    rec.flush();
    {
        let heard = heard.lock().unwrap();
        let [
            StoreWarning::WriteFailed {
                path: p,
                disk_full: true,
                ..
            },
        ] = heard.as_slice()
        else {
            panic!("{heard:?}")
        };
        assert_eq!(p, &path);
        let msg = heard[0].to_string();
        assert!(
            msg.contains(&path.display().to_string()) && msg.contains("disk is full"),
            "{msg}"
        );
    }
    rec.end("s-2");
    let at_end = rec.finish();
    assert!(
        at_end
            .iter()
            .any(|w| matches!(w, StoreWarning::Lost { session, events, .. }
            if session == "s-2" && *events == 2_000)),
        "{at_end:?}"
    );

    let c = rusqlite::Connection::open(&path).unwrap();
    let check: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let (store, _) = Store::open(&path).unwrap();
    assert_eq!(store.events("s-1").unwrap(), snapshot(&before));
    assert!(matches!(store.session("s-2"), Err(StoreError::NotFound(_))));
}

#[test]
fn a_busy_file_loses_nothing_once_writing_works_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir);
    record(&path, &[("s-1", turn("s-1", "first"))]);
    // Another writer holds the write lock longer than our busy timeout: commits fail, then
    // succeed once it lets go; everything comes through, in order.
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN IMMEDIATE;").unwrap();
    let heard: Arc<Mutex<Vec<StoreWarning>>> = Arc::default();
    let sink = heard.clone();
    let opts = RecorderOptions {
        open: OpenOptions {
            busy_timeout: Duration::from_millis(20),
            ..OpenOptions::default()
        },
        retry_interval: Duration::from_millis(20),
        on_warning: Some(Arc::new(move |w: &StoreWarning| {
            sink.lock().unwrap().push(w.clone())
        })),
        ..quick()
    };
    // Opening takes the write lock once: start before the other program takes it.
    other.execute_batch("ROLLBACK;").unwrap();
    let (rec, _) = Recorder::start(&path, opts).unwrap();
    other.execute_batch("BEGIN IMMEDIATE;").unwrap();
    let live = turn("s-2", "second");
    rec.begin("s-2", meta("/home/u/other"));
    for batch in live.chunks(3) {
        rec.events("s-2", batch);
        // What waits for the writer is merged: never more entries than the thread has.
        assert!(
            rec.waiting() <= snapshot(&live).len() + 2,
            "{}",
            rec.waiting()
        );
    }
    rec.flush();
    assert!(
        heard.lock().unwrap().iter().any(|w| matches!(
            w,
            StoreWarning::WriteFailed {
                disk_full: false,
                ..
            }
        )),
        "{:?}",
        heard.lock().unwrap()
    );
    other.execute_batch("ROLLBACK;").unwrap();
    rec.end("s-2");
    rec.flush();
    let rest = rec.finish();
    assert!(
        heard
            .lock()
            .unwrap()
            .iter()
            .any(|w| matches!(w, StoreWarning::WriteRecovered { .. })),
        "{:?} {rest:?}",
        heard.lock().unwrap()
    );
    assert!(
        !rest.iter().any(|w| matches!(w, StoreWarning::Lost { .. })),
        "{rest:?}"
    );
    let (store, _) = Store::open(&path).unwrap();
    assert_eq!(store.events("s-2").unwrap(), snapshot(&live));
}
