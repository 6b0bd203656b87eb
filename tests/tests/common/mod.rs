//! Shared helpers: where the workspace's binaries are, running sessions, and checking that no
//! process is left behind.
#![allow(dead_code)]

#[cfg(unix)]
pub mod terminal;

use std::path::PathBuf;
use std::time::Duration;

use acp_desk_core::agents::LaunchSpec;
use acp_desk_core::{SessionOptions, StreamEvent};
use serde_json::Value;
use tokio::sync::mpsc;

/// Hang guard for whole tests: a session that does not end in this time is a bug (a hang), not a
/// slow machine. Never a performance assertion.
pub const HANG: Duration = Duration::from_secs(60);

/// The cargo target folder of the running test (`target/debug`). The test command builds every
/// binary of the workspace first (`cargo build --workspace --bins`).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    exe.parent()
        .and_then(|deps| deps.parent())
        .expect("target dir")
        .to_path_buf()
}

pub fn bin(name: &str) -> PathBuf {
    let p = target_dir().join(name);
    assert!(
        p.is_file(),
        "{} is missing: run `cargo build --workspace --bins` first (scripts/test does)",
        p.display()
    );
    p
}

/// Writes `input` to a child's stdin and closes it. A child may refuse its arguments and exit
/// before reading (the CLI checks a secret's name first): the broken pipe that then follows is
/// its answer, not the test's failure; the exit code and stderr say what it did.
pub fn feed_stdin(child: &mut std::process::Child, input: &[u8]) {
    use std::io::Write;
    let mut stdin = child.stdin.take().expect("stdin was piped");
    match stdin.write_all(input) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.expect("writing the child's stdin"),
    }
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

pub fn demo(flags: &[&str]) -> LaunchSpec {
    LaunchSpec {
        name: "demo".into(),
        command: bin("acp-desk-demo-agent").to_string_lossy().into_owned(),
        args: flags.iter().map(|s| s.to_string()).collect(),
        env: Vec::new(),
        cwd: None,
    }
}

/// The TypeScript SDK agent (tests/ts-agent), which needs `npm ci` there first.
pub fn ts_agent_command() -> String {
    let dir = repo_root().join("tests/ts-agent");
    assert!(
        dir.join("node_modules/@agentclientprotocol/sdk").is_dir(),
        "the TS SDK interop agent is not installed: run `npm ci --prefix tests/ts-agent` (scripts/test does)"
    );
    format!("node {}", dir.join("agent.mjs").display())
}

pub fn opts(dir: &std::path::Path) -> SessionOptions {
    let mut o = SessionOptions::new(dir);
    o.cancel_grace = Duration::from_secs(2);
    o.process.eof_grace = Duration::from_millis(300);
    o.process.term_grace = Duration::from_millis(700);
    // Tests never touch the user's own rules or audit log; those that test them pass
    // temporary folders.
    o.rules_file = None;
    o.audit = acp_desk_core::audit::AuditKind::Off;
    o
}

/// Collects events on a task until the engine drops its sender.
pub struct Collector {
    pub rx: mpsc::Receiver<acp_desk_core::EventBatch>,
    /// Events of a batch not yet handed out by `until`.
    pending: std::collections::VecDeque<StreamEvent>,
}

pub fn channel() -> (mpsc::Sender<acp_desk_core::EventBatch>, Collector) {
    let (tx, rx) = mpsc::channel(16);
    (
        tx,
        Collector {
            rx,
            pending: Default::default(),
        },
    )
}

impl Collector {
    /// Everything until the session's sender is dropped (after `close`).
    pub async fn all(mut self) -> Vec<StreamEvent> {
        let mut v: Vec<StreamEvent> = self.pending.drain(..).collect();
        let collect = async {
            while let Some(batch) = self.rx.recv().await {
                v.extend(batch);
            }
        };
        tokio::time::timeout(HANG, collect)
            .await
            .expect("hang: the event stream did not end");
        v
    }

    /// Waits for the next permission request (`agent-prompt`), keeping the events before it.
    pub async fn next_prompt(
        &mut self,
        seen: &mut Vec<StreamEvent>,
    ) -> Box<acp_desk_core::events::AgentPromptEvent> {
        match self
            .until(seen, |e| matches!(e, StreamEvent::AgentPrompt(_)))
            .await
        {
            StreamEvent::AgentPrompt(p) => p,
            other => unreachable!("until returned {other:?}"),
        }
    }

    /// Waits for the first event matching `pred`, keeping the ones before it.
    pub async fn until(
        &mut self,
        seen: &mut Vec<StreamEvent>,
        pred: impl Fn(&StreamEvent) -> bool,
    ) -> StreamEvent {
        loop {
            while self.pending.is_empty() {
                let batch = tokio::time::timeout(HANG, self.rx.recv())
                    .await
                    .expect("hang: no event in time")
                    .expect("the session ended before the event came");
                self.pending.extend(batch);
            }
            let Some(ev) = self.pending.pop_front() else {
                continue;
            };
            let hit = pred(&ev);
            seen.push(ev.clone());
            if hit {
                return ev;
            }
        }
    }
}

pub fn kinds(evs: &[StreamEvent]) -> Vec<&'static str> {
    evs.iter().map(StreamEvent::kind).collect()
}

pub fn json(evs: &[StreamEvent]) -> Vec<Value> {
    evs.iter()
        .map(|e| serde_json::to_value(e).expect("serializes"))
        .collect()
}

pub fn text(evs: &[StreamEvent]) -> String {
    evs.iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// Every live process below `pid` (itself included), from /proc.
#[cfg(target_os = "linux")]
pub fn tree(pid: u32) -> Vec<u32> {
    let mut out: Vec<u32> = alive(pid).then_some(pid).into_iter().collect();
    out.extend(
        acp_desk_core::supervisor::live_descendants(pid as i32)
            .into_iter()
            .map(|p| p as u32),
    );
    out
}

/// Whether `pid` is a live process (not a zombie).
#[cfg(target_os = "linux")]
pub fn alive(pid: u32) -> bool {
    acp_desk_core::process::is_running(pid)
}

/// Waits (bounded) until none of `pids` is alive; returns those still alive.
#[cfg(target_os = "linux")]
pub async fn wait_gone(pids: &[u32], within: Duration) -> Vec<u32> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|p| alive(*p)).collect();
        if left.is_empty() || tokio::time::Instant::now() >= deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Starts a demo-agent session in a fresh temporary folder.
pub async fn session(
    flags: &[&str],
) -> (acp_desk_core::SessionHandle, Collector, tempfile::TempDir) {
    session_with(demo(flags)).await
}

pub async fn session_with(
    spec: LaunchSpec,
) -> (acp_desk_core::SessionHandle, Collector, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (tx, rx) = channel();
    let h = acp_desk_core::start(spec, opts(dir.path()), tx)
        .await
        .expect("the session starts");
    (h, rx, dir)
}

pub type Turn =
    tokio::task::JoinHandle<Result<acp_desk_core::TurnOutcome, acp_desk_core::EngineError>>;

/// Sends a prompt on a task of its own, so the test can act while the turn runs.
pub fn spawn_prompt(h: &acp_desk_core::SessionHandle, text: &str) -> Turn {
    let h = h.clone();
    let block = acp_desk_core::text_block(text);
    tokio::spawn(async move { h.prompt(vec![block]).await })
}

/// Waits (bounded) for a spawned turn to end.
pub async fn finish(turn: Turn) -> acp_desk_core::TurnOutcome {
    tokio::time::timeout(HANG, turn)
        .await
        .expect("hang: the turn did not end")
        .expect("the turn task")
        .expect("the turn")
}

/// Runs prompts, one turn each, in one demo-agent session answering permission requests by
/// `policy`; returns every event after closing.
pub async fn run(
    flags: &[&str],
    policy: acp_desk_core::PermissionPolicy,
    prompts: &[&str],
) -> Vec<StreamEvent> {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut o = opts(dir.path());
    o.permission_policy = policy;
    let (tx, rx) = channel();
    let collect = tokio::spawn(rx.all());
    let h = acp_desk_core::start(demo(flags), o, tx)
        .await
        .expect("the session starts");
    for p in prompts {
        tokio::time::timeout(HANG, h.prompt(vec![acp_desk_core::text_block(*p)]))
            .await
            .expect("hang: the turn did not end")
            .expect("the turn");
    }
    h.close().await;
    drop(h);
    collect.await.expect("the collector")
}

/// A folder of extra demo-agent scenarios (`--scenario-dir`), for tests that need a script of
/// their own. Each item is (name, keywords, steps as JSON).
pub fn scenario_dir(scenarios: &[(&str, &[&str], serde_json::Value)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, keywords, steps) in scenarios {
        let file = serde_json::json!({
            "name": name,
            "description": format!("test scenario {name}"),
            "keywords": keywords,
            "steps": steps,
        });
        std::fs::write(
            dir.path().join(format!("{name}.json")),
            serde_json::to_vec_pretty(&file).expect("json"),
        )
        .expect("write scenario");
    }
    dir
}
