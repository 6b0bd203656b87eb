//! Playing one prompt turn: runs on its own thread so the dispatcher stays free to route
//! `session/cancel` and the client's answers to our permission requests while steps play.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use agent_client_protocol_schema::v1::{
    AvailableCommandsUpdate, ContentBlock, ContentChunk, CreateTerminalRequest,
    CreateTerminalResponse, CurrentModeUpdate, KillTerminalRequest, PermissionOptionKind,
    ReadTextFileRequest, ReadTextFileResponse, ReleaseTerminalRequest, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SessionId, SessionInfoUpdate,
    SessionUpdate, StopReason, Terminal, TerminalExitStatus, TerminalId, TerminalOutputRequest,
    TerminalOutputResponse, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind, WaitForTerminalExitRequest, WaitForTerminalExitResponse,
    WriteTextFileRequest,
};
use serde_json::Value;

use crate::log;
use crate::out::Out;
use crate::scenario::{
    DEFAULT_CHUNK_CHARS, DEFAULT_DELAY_MS, FloodStep, PermissionStep, ReadFileStep, Step,
    TermAction, TerminalStep, TextStep, WaitManyAction, WriteDirectlyStep, WriteFileStep,
    split_chunks,
};

/// Longest a `wait_many` waits for all its answers: far past any scenario's command, short
/// enough that a client that never answers fails the test instead of hanging it.
const WAIT_MANY_TIMEOUT: Duration = Duration::from_secs(60);

/// Characters of file or terminal text quoted in a report line: enough to see what came back.
const PREVIEW_CHARS: usize = 200;

/// How long a cancelled turn waits for the client to answer our parked permission request
/// with `cancelled` (as ACP requires) before responding to the prompt anyway, so a client
/// that forgets to answer does not hang the turn forever.
const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// How many flood chunks are written per writer lock, between cancel checks.
const FLOOD_BATCH: u64 = 4096;

/// Events the dispatcher forwards to a running turn.
#[derive(Debug)]
pub enum TurnEvent {
    Cancel,
    Response { id: u64, message: Value },
}

/// State shared by the dispatcher and the turn threads.
pub struct Shared {
    pub out: Out,
    /// The JSON-RPC id of our next outgoing request.
    next_rpc_id: AtomicU64,
    /// Our outgoing requests awaiting an answer, by JSON-RPC id.
    pub pending: Mutex<HashMap<u64, Sender<TurnEvent>>>,
    /// Running turns, by session id.
    pub turns: Mutex<HashMap<String, Sender<TurnEvent>>>,
    flood_runs: AtomicU64,
    /// Background tasks announced (AIR `async_task_spawned`), for `_session/async_task/stop`.
    pub tasks: Mutex<HashMap<String, crate::asks::Task>>,
    /// What the client said in `initialize` it lets us ask.
    pub asks: crate::asks::ClientAsks,
}

pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub fn new(out: Out) -> Self {
        Shared {
            out,
            next_rpc_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            turns: Mutex::new(HashMap::new()),
            flood_runs: AtomicU64::new(0),
            tasks: Mutex::new(HashMap::new()),
            asks: crate::asks::ClientAsks::default(),
        }
    }
}

pub enum Flow {
    Continue,
    Stop(StopReason),
}

pub struct Turn {
    pub(crate) shared: Arc<Shared>,
    session_id: SessionId,
    /// The session's cwd: relative paths in scenarios are resolved against it.
    cwd: PathBuf,
    tx: Sender<TurnEvent>,
    rx: Receiver<TurnEvent>,
    pub(crate) cancelled: bool,
}

impl Turn {
    pub fn new(
        shared: Arc<Shared>,
        session_id: SessionId,
        cwd: PathBuf,
        tx: Sender<TurnEvent>,
        rx: Receiver<TurnEvent>,
    ) -> Self {
        Turn {
            shared,
            session_id,
            cwd,
            tx,
            rx,
            cancelled: false,
        }
    }

    /// Plays the steps and returns the stop reason for the prompt response.
    pub fn run(&mut self, steps: &[Step]) -> anyhow::Result<StopReason> {
        let flow = self.play(steps)?;
        // A cancel that raced with the last step still has to be honoured in the response.
        self.poll();
        Ok(match flow {
            _ if self.cancelled => StopReason::Cancelled,
            Flow::Stop(reason) => reason,
            Flow::Continue => StopReason::EndTurn,
        })
    }

    pub(crate) fn play(&mut self, steps: &[Step]) -> anyhow::Result<Flow> {
        for step in steps {
            self.poll();
            if self.cancelled {
                return Ok(Flow::Stop(StopReason::Cancelled));
            }
            if let Flow::Stop(reason) = self.step(step)? {
                return Ok(Flow::Stop(reason));
            }
        }
        Ok(Flow::Continue)
    }

    pub(crate) fn session_id(&self) -> &SessionId {
        &self.session_id
    }

    pub(crate) fn out(&self) -> &Out {
        &self.shared.out
    }

    fn update(&self, update: SessionUpdate) -> io::Result<()> {
        self.out().update(&self.session_id, update)
    }

    fn step(&mut self, step: &Step) -> anyhow::Result<Flow> {
        match step {
            Step::Say(t) => return self.stream_text(t, SessionUpdate::AgentMessageChunk),
            Step::Think(t) => return self.stream_text(t, SessionUpdate::AgentThoughtChunk),
            Step::Plan(plan) => self.update(SessionUpdate::Plan(plan.clone()))?,
            Step::ToolCall(tc) => self.update(SessionUpdate::ToolCall(tc.clone()))?,
            Step::ToolCallUpdate(u) => self.update(SessionUpdate::ToolCallUpdate(u.clone()))?,
            Step::Permission(p) => return self.permission(p),
            Step::Usage(u) => self.update(SessionUpdate::UsageUpdate(u.clone()))?,
            Step::Commands(c) => self.update(SessionUpdate::AvailableCommandsUpdate(
                AvailableCommandsUpdate::new(c.clone()),
            ))?,
            Step::Mode(m) => self.update(SessionUpdate::CurrentModeUpdate(
                CurrentModeUpdate::new(m.current_mode_id.clone()),
            ))?,
            Step::Info(i) => self.update(SessionUpdate::SessionInfoUpdate(
                SessionInfoUpdate::new().title(i.title.clone()),
            ))?,
            Step::Update(raw) => {
                if crate::asks::note_task(&self.shared, &self.session_id, raw) {
                    self.out().raw_update(&self.session_id, raw)?;
                }
            }
            Step::Elicit(e) => return self.elicit(e),
            Step::Later(l) => self.later(l),
            Step::RawLine(line) => self.out().line(line.as_bytes())?,
            Step::LongLine(l) => write_long_line(&mut *self.out().lock(), l.bytes)?,
            Step::Sleep(s) => {
                if self.wait(Duration::from_millis(s.ms)) {
                    return Ok(Flow::Stop(StopReason::Cancelled));
                }
            }
            Step::Exit(e) => {
                log!("exit step: exiting with code {} mid-turn", e.code);
                // Holding the lock keeps other threads from starting a line we would cut.
                let mut w = self.out().lock();
                let _ = w.flush();
                std::process::exit(e.code);
            }
            Step::Stop(reason) => return Ok(Flow::Stop(*reason)),
            Step::Flood(f) => return self.flood(f),
            Step::ReadFile(r) => self.read_file(r)?,
            Step::WriteFile(w) => self.write_file(w)?,
            Step::Terminal(t) => self.terminal(t)?,
            Step::WriteDirectly(w) => self.write_directly(w)?,
        }
        Ok(Flow::Continue)
    }

    fn stream_text(
        &mut self,
        t: &TextStep,
        variant: fn(ContentChunk) -> SessionUpdate,
    ) -> anyhow::Result<Flow> {
        let delay = Duration::from_millis(t.delay_ms.unwrap_or(DEFAULT_DELAY_MS));
        let chunks = split_chunks(&t.text, t.chunk_chars.unwrap_or(DEFAULT_CHUNK_CHARS));
        for (i, chunk) in chunks.into_iter().enumerate() {
            if i > 0 && self.wait(delay) {
                return Ok(Flow::Stop(StopReason::Cancelled));
            }
            self.update(variant(ContentChunk::new(ContentBlock::from(chunk))))?;
        }
        Ok(Flow::Continue)
    }

    /// Drains pending events without blocking.
    fn poll(&mut self) {
        while let Ok(event) = self.rx.try_recv() {
            self.handle(event);
        }
    }

    fn handle(&mut self, event: TurnEvent) {
        match event {
            TurnEvent::Cancel => self.cancelled = true,
            TurnEvent::Response { id, .. } => {
                log!("ignoring a late response to our request {id}");
            }
        }
    }

    /// Sleeps up to `duration`, waking early on cancel. Returns whether the turn is cancelled.
    pub(crate) fn wait(&mut self, duration: Duration) -> bool {
        let deadline = Instant::now() + duration;
        while !self.cancelled {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match self.rx.recv_timeout(left) {
                Ok(event) => self.handle(event),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => std::thread::sleep(left),
            }
        }
        self.cancelled
    }

    fn permission(&mut self, p: &PermissionStep) -> anyhow::Result<Flow> {
        let request = RequestPermissionRequest::new(
            self.session_id.clone(),
            p.tool_call.clone(),
            p.options.clone(),
        );
        let (id, answer) = self.request("session/request_permission", &request)?;
        let Some(message) = answer else {
            log!("the client did not answer permission request {id} after session/cancel");
            return Ok(Flow::Stop(StopReason::Cancelled));
        };
        if let Some(error) = message.get("error") {
            log!("permission request {id} failed: {error}");
            return self.play(&p.on_reject);
        }
        let response: RequestPermissionResponse =
            match serde_json::from_value(message.get("result").cloned().unwrap_or(Value::Null)) {
                Ok(r) => r,
                Err(e) => {
                    log!("unparseable answer to permission request {id}: {e}; treating as reject");
                    return self.play(&p.on_reject);
                }
            };
        match response.outcome {
            RequestPermissionOutcome::Cancelled => {
                // The branch still plays after a session/cancel: it is the scripted reaction.
                let was_cancelled = std::mem::take(&mut self.cancelled);
                let flow = self.play(&p.on_cancelled)?;
                self.cancelled |= was_cancelled;
                Ok(match flow {
                    Flow::Continue => Flow::Stop(StopReason::Cancelled),
                    stop => stop,
                })
            }
            RequestPermissionOutcome::Selected(selected) => {
                let kind = p
                    .options
                    .iter()
                    .find(|o| o.option_id == selected.option_id)
                    .map(|o| o.kind);
                match kind {
                    Some(PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways) => {
                        self.play(&p.on_allow)
                    }
                    Some(_) => self.play(&p.on_reject),
                    None => {
                        log!(
                            "the client selected unknown option {:?}; treating as reject",
                            selected.option_id.0
                        );
                        self.play(&p.on_reject)
                    }
                }
            }
            _ => {
                log!("unsupported permission outcome; treating as reject");
                self.play(&p.on_reject)
            }
        }
    }

    /// Sends a request to the client and waits for the answer message (`None`: none came before
    /// the turn was cancelled). Returns the request's id with it.
    pub(crate) fn request<P: serde::Serialize>(
        &mut self,
        method: &str,
        params: &P,
    ) -> anyhow::Result<(u64, Option<Value>)> {
        let id = self.shared.next_rpc_id.fetch_add(1, Ordering::Relaxed);
        lock(&self.shared.pending).insert(id, self.tx.clone());
        let sent = self.out().request(id, method, params);
        let answer = match sent {
            Ok(()) => self.await_response(id),
            Err(e) => {
                lock(&self.shared.pending).remove(&id);
                return Err(e.into());
            }
        };
        lock(&self.shared.pending).remove(&id);
        Ok((id, answer))
    }

    /// Sends one of the client methods and waits for its answer: the result, or the error's
    /// code and message.
    fn call<P: serde::Serialize>(
        &mut self,
        method: &str,
        params: &P,
    ) -> anyhow::Result<Result<Value, (i64, String)>> {
        let (_, answer) = self.request(method, params)?;
        let Some(message) = answer else {
            return Ok(Err((
                -32800,
                "no answer after the turn was cancelled".into(),
            )));
        };
        if let Some(error) = message.get("error") {
            let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
            let text = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            return Ok(Err((code, text)));
        }
        Ok(Ok(message.get("result").cloned().unwrap_or(Value::Null)))
    }

    /// One line of streamed text reporting what a client call gave.
    pub(crate) fn report(&self, line: String) -> io::Result<()> {
        log!("{line}");
        self.update(SessionUpdate::AgentMessageChunk(ContentChunk::new(
            ContentBlock::from(format!("{line}\n")),
        )))
    }

    fn resolve(&self, path: &str, as_is: bool) -> PathBuf {
        if as_is || Path::new(path).is_absolute() {
            PathBuf::from(path)
        } else {
            self.cwd.join(path)
        }
    }

    fn read_file(&mut self, r: &ReadFileStep) -> anyhow::Result<()> {
        let path = self.resolve(&r.path, r.as_is);
        let req = ReadTextFileRequest::new(self.session_id.clone(), path.clone())
            .line(r.line)
            .limit(r.limit);
        let mut what = format!("fs/read_text_file {}", path.display());
        if r.line.is_some() || r.limit.is_some() {
            let n = |v: Option<u32>| v.map_or("-".to_owned(), |v| v.to_string());
            what.push_str(&format!(" (line {}, limit {})", n(r.line), n(r.limit)));
        }
        let line = match self.call("fs/read_text_file", &req)? {
            Ok(v) => {
                let resp: ReadTextFileResponse = serde_json::from_value(v)?;
                let check = match &r.expect {
                    Some(e) if *e == resp.content => " - as expected".to_owned(),
                    Some(e) => format!(" - MISMATCH: expected {e:?}"),
                    None => String::new(),
                };
                format!(
                    "{what}: ok, {} lines: {}{check}{}",
                    resp.content.lines().count(),
                    preview(&resp.content),
                    unexpected_success(r.expect_error)
                )
            }
            Err((code, message)) => failed(&what, code, &message, r.expect_error),
        };
        self.report(line)?;
        Ok(())
    }

    fn write_directly(&mut self, w: &WriteDirectlyStep) -> anyhow::Result<()> {
        let path = self.resolve(&w.path, false);
        let what = format!(
            "wrote {} directly ({} bytes)",
            path.display(),
            w.content.len()
        );
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, &w.content));
        let line = match written {
            Ok(()) => format!("{what}: ok"),
            Err(e) => format!("{what}: UNEXPECTED error: {e}"),
        };
        self.report(line)?;
        Ok(())
    }

    fn write_file(&mut self, w: &WriteFileStep) -> anyhow::Result<()> {
        let path = self.resolve(&w.path, w.as_is);
        let req =
            WriteTextFileRequest::new(self.session_id.clone(), path.clone(), w.content.clone());
        let what = format!(
            "fs/write_text_file {} ({} bytes)",
            path.display(),
            w.content.len()
        );
        let line = match self.call("fs/write_text_file", &req)? {
            Ok(_) => format!("{what}: ok{}", unexpected_success(w.expect_error)),
            Err((code, message)) => failed(&what, code, &message, w.expect_error),
        };
        self.report(line)?;
        Ok(())
    }

    fn terminal(&mut self, t: &TerminalStep) -> anyhow::Result<()> {
        let mut req = CreateTerminalRequest::new(self.session_id.clone(), t.command.clone())
            .args(t.args.clone())
            .output_byte_limit(t.output_byte_limit);
        if let Some(cwd) = &t.cwd {
            req = req.cwd(self.resolve(cwd, false));
        }
        let shown = std::iter::once(t.command.as_str())
            .chain(t.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        let id = match self.call("terminal/create", &req)? {
            Ok(v) => {
                let resp: CreateTerminalResponse = serde_json::from_value(v)?;
                self.report(format!(
                    "terminal/create `{shown}`: ok, {}{}",
                    resp.terminal_id,
                    unexpected_success(t.expect_error)
                ))?;
                resp.terminal_id
            }
            Err((code, message)) => {
                let what = format!("terminal/create `{shown}`");
                self.report(failed(&what, code, &message, t.expect_error))?;
                return Ok(());
            }
        };
        if let Some(call) = &t.tool_call_id {
            let tc = ToolCall::new(call.clone(), format!("Run `{shown}`"))
                .kind(ToolKind::Execute)
                .status(ToolCallStatus::InProgress)
                .content(vec![ToolCallContent::Terminal(Terminal::new(id.clone()))]);
            self.update(SessionUpdate::ToolCall(tc))?;
        }
        for action in &t.then {
            if self.cancelled {
                break;
            }
            match action {
                TermAction::Wait => self.terminal_wait(t, &id)?,
                TermAction::Output => self.terminal_output(t, &id)?,
                TermAction::Kill => {
                    let r = self.call(
                        "terminal/kill",
                        &KillTerminalRequest::new(self.session_id.clone(), id.clone()),
                    )?;
                    self.report(simple("terminal/kill", &id, r))?;
                }
                TermAction::Release => {
                    let r = self.call(
                        "terminal/release",
                        &ReleaseTerminalRequest::new(self.session_id.clone(), id.clone()),
                    )?;
                    self.report(simple("terminal/release", &id, r))?;
                }
                TermAction::Sleep(ms) => {
                    self.wait(Duration::from_millis(*ms));
                }
                TermAction::WaitMany(w) => self.terminal_wait_many(&id, w)?,
            }
        }
        if let Some(call) = &t.tool_call_id {
            let u = ToolCallUpdate::new(
                call.clone(),
                ToolCallUpdateFields::new().status(ToolCallStatus::Completed),
            );
            self.update(SessionUpdate::ToolCallUpdate(u))?;
        }
        Ok(())
    }

    fn terminal_wait(&mut self, t: &TerminalStep, id: &TerminalId) -> anyhow::Result<()> {
        let req = WaitForTerminalExitRequest::new(self.session_id.clone(), id.clone());
        let line = match self.call("terminal/wait_for_exit", &req)? {
            Ok(v) => {
                let resp: WaitForTerminalExitResponse = serde_json::from_value(v)?;
                format!(
                    "terminal/wait_for_exit {id}: {}{}",
                    exit_text(&resp.exit_status),
                    exit_check(t, &resp.exit_status)
                )
            }
            Err((code, message)) => format!("terminal/wait_for_exit {id}: error {code}: {message}"),
        };
        self.report(line)?;
        Ok(())
    }

    /// Sends all the waits (and the read) before reading any answer, as an agent running
    /// several tools at once does; reports how many waits were answered, and whether the read
    /// was answered while they still waited.
    fn terminal_wait_many(&mut self, id: &TerminalId, w: &WaitManyAction) -> anyhow::Result<()> {
        let send = |this: &Self, method: &str, params: Value| -> io::Result<u64> {
            let rid = this.shared.next_rpc_id.fetch_add(1, Ordering::Relaxed);
            lock(&this.shared.pending).insert(rid, this.tx.clone());
            this.out().request(rid, method, params)?;
            Ok(rid)
        };
        let req = serde_json::to_value(WaitForTerminalExitRequest::new(
            self.session_id.clone(),
            id.clone(),
        ))?;
        let mut waits = std::collections::HashSet::new();
        for _ in 0..w.count {
            waits.insert(send(self, "terminal/wait_for_exit", req.clone())?);
        }
        let read = match &w.read {
            Some(p) => {
                let path = self.resolve(p, false);
                let req = ReadTextFileRequest::new(self.session_id.clone(), path.clone());
                let rid = send(self, "fs/read_text_file", serde_json::to_value(req)?)?;
                Some((rid, path))
            }
            None => None,
        };
        let mut release = if w.release {
            let req = ReleaseTerminalRequest::new(self.session_id.clone(), id.clone());
            Some(send(self, "terminal/release", serde_json::to_value(req)?)?)
        } else {
            None
        };
        let (mut answered, mut errors) = (0usize, Vec::new());
        let mut statuses = std::collections::BTreeSet::new();
        let mut read_report = None;
        let deadline = Instant::now() + WAIT_MANY_TIMEOUT;
        while !waits.is_empty() || (read.is_some() && read_report.is_none()) || release.is_some() {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(event) = self.rx.recv_timeout(left) else {
                break;
            };
            let TurnEvent::Response { id: got, message } = event else {
                self.cancelled = true;
                break;
            };
            lock(&self.shared.pending).remove(&got);
            let error = message.get("error").map(|e| {
                let code = e.get("code").and_then(Value::as_i64).unwrap_or(0);
                let text = e.get("message").and_then(Value::as_str).unwrap_or_default();
                format!("error {code}: {text}")
            });
            if waits.remove(&got) {
                match error {
                    Some(e) => errors.push(e),
                    None => {
                        answered += 1;
                        let status = message
                            .get("result")
                            .cloned()
                            .and_then(|v| serde_json::from_value(v).ok())
                            .map_or_else(
                                || "no status".to_owned(),
                                |r: WaitForTerminalExitResponse| exit_text(&r.exit_status),
                            );
                        statuses.insert(status);
                    }
                }
            } else if release == Some(got) {
                release = None;
                let r = error.map_or_else(|| "ok".to_owned(), |e| format!("{e} - UNEXPECTED"));
                self.report(format!("terminal/release {id}: {r}"))?;
            } else if let Some((rid, path)) = &read
                && *rid == got
            {
                let when = if waits.is_empty() {
                    "UNEXPECTED: answered only after the waits"
                } else {
                    "answered while the waits waited"
                };
                read_report = Some(match error {
                    Some(e) => format!("fs/read_text_file {}: {e} - UNEXPECTED", path.display()),
                    None => format!("fs/read_text_file {}: ok, {when}", path.display()),
                });
            }
        }
        for rid in &waits {
            lock(&self.shared.pending).remove(rid);
        }
        if let Some(r) = read_report {
            self.report(r)?;
        }
        let statuses: Vec<String> = statuses.into_iter().collect();
        let mut line = format!(
            "terminal/wait_for_exit {id} x{}: {answered} answered, {} errors, {} unanswered; {}",
            w.count,
            errors.len(),
            waits.len(),
            statuses.join(" / ")
        );
        if let Some(e) = errors.first() {
            line.push_str(&format!(" (first: {e}) - UNEXPECTED"));
        } else if !waits.is_empty() {
            line.push_str(" - UNEXPECTED");
        }
        self.report(line)?;
        Ok(())
    }

    fn terminal_output(&mut self, t: &TerminalStep, id: &TerminalId) -> anyhow::Result<()> {
        let req = TerminalOutputRequest::new(self.session_id.clone(), id.clone());
        let line = match self.call("terminal/output", &req)? {
            Ok(v) => {
                let resp: TerminalOutputResponse = serde_json::from_value(v)?;
                let mut checks = String::new();
                if let Some(limit) = t.output_byte_limit {
                    if resp.output.len() as u64 <= limit {
                        checks.push_str(&format!(" - within the {limit}-byte limit"));
                    } else {
                        checks.push_str(&format!(" - OVER THE {limit}-BYTE LIMIT"));
                    }
                }
                if let Some(want) = t.expect_truncated
                    && want != resp.truncated
                {
                    checks.push_str(&format!(" - MISMATCH: expected truncated {want}"));
                }
                if let Some(want) = &t.expect_output_contains
                    && !resp.output.contains(want.as_str())
                {
                    checks.push_str(&format!(" - MISMATCH: expected output containing {want:?}"));
                }
                let exit = resp
                    .exit_status
                    .as_ref()
                    .map(|s| format!(", {}", exit_text(s)))
                    .unwrap_or_else(|| ", running".into());
                format!(
                    "terminal/output {id}: {} bytes, truncated {}{exit}: {}{checks}",
                    resp.output.len(),
                    resp.truncated,
                    preview(&resp.output)
                )
            }
            Err((code, message)) => format!("terminal/output {id}: error {code}: {message}"),
        };
        self.report(line)?;
        Ok(())
    }

    /// Waits for the answer to request `id`. `None` when the turn was cancelled and the
    /// client did not answer within [`CANCEL_GRACE`].
    fn await_response(&mut self, id: u64) -> Option<Value> {
        let mut grace = self.cancelled.then(|| Instant::now() + CANCEL_GRACE);
        loop {
            let event = match grace {
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return None;
                    }
                    match self.rx.recv_timeout(left) {
                        Ok(event) => event,
                        Err(_) => continue,
                    }
                }
                None => self.rx.recv().ok()?,
            };
            match event {
                TurnEvent::Cancel => {
                    self.cancelled = true;
                    grace.get_or_insert_with(|| Instant::now() + CANCEL_GRACE);
                }
                TurnEvent::Response { id: got, message } if got == id => return Some(message),
                other => self.handle(other),
            }
        }
    }

    fn flood(&mut self, f: &FloodStep) -> anyhow::Result<Flow> {
        let session = serde_json::to_string(&self.session_id)?;
        let run = self.shared.flood_runs.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let mut next = 0;
        while next < f.chunks {
            self.poll();
            if self.cancelled {
                self.out().flush();
                return Ok(Flow::Stop(StopReason::Cancelled));
            }
            let end = (next + FLOOD_BATCH).min(f.chunks);
            let mut w = self.out().lock();
            for i in next..end {
                write_flood_chunk(&mut *w, &session, i, f.chunk_bytes)?;
                if f.tool_every > 0 && (i + 1) % f.tool_every == 0 {
                    write_flood_tool(&mut *w, &session, run, (i + 1) / f.tool_every)?;
                }
            }
            next = end;
        }
        self.out().lock().flush()?;
        log!(
            "flood: {} chunks written in {:.3}s",
            f.chunks,
            started.elapsed().as_secs_f64()
        );
        Ok(Flow::Continue)
    }
}

/// One `agent_message_chunk` line whose text is exactly `chunk_bytes` bytes (when the counter
/// fits) and unique per `i`, preformatted because serde would make the agent the bottleneck.
/// `session` is the session id as a JSON string literal.
pub fn write_flood_chunk<W: Write>(
    w: &mut W,
    session: &str,
    i: u64,
    chunk_bytes: usize,
) -> io::Result<()> {
    // The text is "chunk ....42\n": 6 bytes of prefix and 1 of newline around the counter.
    let width = chunk_bytes.saturating_sub(7);
    writeln!(
        w,
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":{session},"update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"chunk {i:.>width$}\n"}}}}}}}}"#
    )
}

/// A pending `tool_call` followed by its completing `tool_call_update`.
pub fn write_flood_tool<W: Write>(w: &mut W, session: &str, run: u64, n: u64) -> io::Result<()> {
    writeln!(
        w,
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":{session},"update":{{"sessionUpdate":"tool_call","toolCallId":"flood-{run}-{n}","title":"Flood tool call {n}","kind":"read","status":"pending"}}}}}}"#
    )?;
    writeln!(
        w,
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":{session},"update":{{"sessionUpdate":"tool_call_update","toolCallId":"flood-{run}-{n}","status":"completed"}}}}}}"#
    )
}

/// One line of exactly `bytes` bytes (plus the newline): a JSON string literal of `x`s, so
/// it is valid JSON but not a JSON-RPC message.
pub fn write_long_line<W: Write>(w: &mut W, bytes: usize) -> io::Result<()> {
    static PAD: [u8; 64 * 1024] = [b'x'; 64 * 1024];
    let (quote, mut left) = if bytes >= 2 {
        (true, bytes - 2)
    } else {
        (false, bytes)
    };
    if quote {
        w.write_all(b"\"")?;
    }
    while left > 0 {
        let n = left.min(PAD.len());
        w.write_all(&PAD[..n])?;
        left -= n;
    }
    if quote {
        w.write_all(b"\"")?;
    }
    w.write_all(b"\n")?;
    w.flush()
}

/// The start of `text` as a quoted string, at most [`PREVIEW_CHARS`] characters.
fn preview(text: &str) -> String {
    let cut: String = text.chars().take(PREVIEW_CHARS).collect();
    if cut.len() < text.len() {
        format!("{cut:?}...")
    } else {
        format!("{cut:?}")
    }
}

/// The report line of a client method that answered with an error.
fn failed(what: &str, code: i64, message: &str, expected: Option<i64>) -> String {
    format!(
        "{what}: error {code}: {message}{}",
        error_check(expected, code)
    )
}

fn error_check(expected: Option<i64>, code: i64) -> String {
    match expected {
        Some(c) if c == code => " - the expected error".into(),
        Some(c) => format!(" - UNEXPECTED error (expected {c})"),
        None => " - UNEXPECTED error".into(),
    }
}

fn unexpected_success(expected: Option<i64>) -> String {
    expected
        .map(|c| format!(" - UNEXPECTED success (expected error {c})"))
        .unwrap_or_default()
}

fn simple(method: &str, id: &TerminalId, r: Result<Value, (i64, String)>) -> String {
    match r {
        Ok(_) => format!("{method} {id}: ok"),
        Err((code, message)) => format!("{method} {id}: error {code}: {message}"),
    }
}

fn exit_text(s: &TerminalExitStatus) -> String {
    match (&s.exit_code, &s.signal) {
        (Some(c), _) => format!("exited with code {c}"),
        (None, Some(sig)) => format!("killed by {sig}"),
        (None, None) => "ended (no status)".into(),
    }
}

fn exit_check(t: &TerminalStep, s: &TerminalExitStatus) -> String {
    let mut out = String::new();
    if let Some(want) = t.expect_exit_code
        && s.exit_code != Some(want)
    {
        out.push_str(&format!(" - MISMATCH: expected exit code {want}"));
    }
    if let Some(want) = &t.expect_signal
        && s.signal.as_deref() != Some(want.as_str())
    {
        out.push_str(&format!(" - MISMATCH: expected signal {want}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol_schema::v1::{SessionNotification, ToolCallStatus};

    fn parse_lines(buf: &[u8]) -> Vec<SessionNotification> {
        std::str::from_utf8(buf)
            .unwrap()
            .lines()
            .map(|line| {
                let v: Value = serde_json::from_str(line).unwrap();
                assert_eq!(v["jsonrpc"], "2.0");
                assert_eq!(v["method"], "session/update");
                serde_json::from_value(v["params"].clone()).unwrap()
            })
            .collect()
    }

    #[test]
    fn flood_lines_are_valid_acp_with_exact_sizes() {
        let session = serde_json::to_string("demo-session-1").unwrap();
        let mut buf = Vec::new();
        for i in [0, 7, 99_999] {
            write_flood_chunk(&mut buf, &session, i, 32).unwrap();
        }
        write_flood_tool(&mut buf, &session, 3, 5).unwrap();
        let parsed = parse_lines(&buf);
        assert_eq!(parsed.len(), 5);
        let mut texts = Vec::new();
        for n in &parsed[..3] {
            let SessionUpdate::AgentMessageChunk(chunk) = &n.update else {
                panic!("not a message chunk: {n:?}");
            };
            let ContentBlock::Text(t) = &chunk.content else {
                panic!("not text");
            };
            assert_eq!(t.text.len(), 32);
            texts.push(t.text.clone());
        }
        texts.dedup();
        assert_eq!(texts.len(), 3);
        let SessionUpdate::ToolCall(tc) = &parsed[3].update else {
            panic!("not a tool call");
        };
        assert_eq!(tc.status, ToolCallStatus::Pending);
        let SessionUpdate::ToolCallUpdate(u) = &parsed[4].update else {
            panic!("not a tool call update");
        };
        assert_eq!(u.tool_call_id, tc.tool_call_id);
        assert_eq!(u.fields.status, Some(ToolCallStatus::Completed));
    }

    #[test]
    fn long_line_has_exact_length() {
        for n in [0, 1, 2, 3, 70_000] {
            let mut buf = Vec::new();
            write_long_line(&mut buf, n).unwrap();
            assert_eq!(buf.len(), n + 1);
            assert_eq!(buf.last(), Some(&b'\n'));
            if n >= 2 {
                let _: String = serde_json::from_slice(&buf[..n]).unwrap();
            }
        }
    }
}
