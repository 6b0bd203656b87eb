//! Output: StreamEvents as JSON lines (`--json`) or a rendering for people; and the terminal
//! asker: permission requests (`--permission ask`) and the agent's questions (on a terminal,
//! `elicit.rs`), one at a time.

use std::collections::VecDeque;
use std::io::{BufWriter, IsTerminal, Write};

use acp_desk_core::events::{
    AgentPromptEvent, BackgroundTaskPhase, ElicitationEvent, NoticeSeverity, PermissionResolution,
    StreamEvent, TurnEndReason,
};
use acp_desk_core::schema::v1 as acp;
use acp_desk_core::{EventBatch, SessionHandle};
use tokio::sync::mpsc;

use crate::AskMsg;

/// Runs on its own thread until the engine drops its event sender.
/// The agent's background tasks as the printer has seen them (for `run --wait-tasks`).
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskCount {
    /// Running now.
    pub open: usize,
    /// `background-task` events seen: changes with each.
    pub seen: u64,
}

/// `ask`: the terminal asker, which gets the questions, and the permission requests when
/// `permissions` (`--permission ask`). `tasks` hears of every `background-task`.
pub fn print_events(
    mut rx: mpsc::Receiver<EventBatch>,
    json: bool,
    ask: Option<mpsc::UnboundedSender<AskMsg>>,
    permissions: bool,
    tasks: tokio::sync::watch::Sender<TaskCount>,
) -> std::io::Result<()> {
    let mut open_tasks = std::collections::HashSet::new();
    let stdout = std::io::stdout();
    let color = !json && stdout.is_terminal();
    let mut out = BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut human = Human::new(color, ask.is_some() && permissions, ask.is_some());
    while let Some(batch) = rx.blocking_recv() {
        let mut next = Some(batch);
        // Drain what is queued before flushing: one write per burst, not per event.
        while let Some(batch) = next {
            // A remembered rule settles a request in the step that raised it, so both events
            // are in one batch: such a request is never put to the user.
            let settled_here: Vec<String> = batch
                .iter()
                .filter_map(|e| match e {
                    StreamEvent::AgentPromptSettled { request_id, .. }
                    | StreamEvent::ElicitationSettled { request_id, .. } => {
                        Some(request_id.clone())
                    }
                    _ => None,
                })
                .collect();
            for ev in batch {
                if let StreamEvent::BackgroundTask { task, .. } = &ev {
                    if task.is_open() {
                        open_tasks.insert(task.task_id.clone());
                    } else {
                        open_tasks.remove(&task.task_id);
                    }
                    let open = open_tasks.len();
                    tasks.send_modify(|c| {
                        c.open = open;
                        c.seen += 1;
                    });
                }
                if let StreamEvent::SessionContinued { .. } = &ev {
                    // The contract: `run --continue` says on stderr how it continued.
                    eprintln!("acp-desk-cli: {}", continued_line(&ev));
                }
                if let Some(ask) = &ask {
                    match &ev {
                        StreamEvent::AgentPrompt(p)
                            if permissions && !settled_here.contains(&p.request_id) =>
                        {
                            let _ = ask.send(AskMsg::Prompt(p.clone()));
                        }
                        StreamEvent::AgentPromptSettled { request_id, .. } if permissions => {
                            let _ = ask.send(AskMsg::Settled(request_id.clone()));
                        }
                        StreamEvent::Elicitation(e) if !settled_here.contains(&e.request_id) => {
                            let _ = ask.send(AskMsg::Question(e.clone()));
                        }
                        StreamEvent::ElicitationSettled { request_id, .. } => {
                            let _ = ask.send(AskMsg::Settled(request_id.clone()));
                        }
                        _ => {}
                    }
                }
                if json {
                    serde_json::to_writer(&mut out, &ev)?;
                    out.write_all(b"\n")?;
                } else {
                    human.render(&mut out, &ev)?;
                }
            }
            next = rx.try_recv().ok();
        }
        out.flush()?;
    }
    if !json {
        human.finish(&mut out)?;
    }
    out.flush()
}

/// How a session was continued, in a line (`run --continue`'s stderr, the transcript's marker).
pub fn continued_line(ev: &StreamEvent) -> String {
    use acp_desk_core::events::{ContinuationMode, ContinuationOutcome};
    let StreamEvent::SessionContinued {
        session_id,
        mode,
        outcome,
        detail,
        ..
    } = ev
    else {
        return String::new();
    };
    let what = match (mode, outcome) {
        (ContinuationMode::Continue, ContinuationOutcome::Resumed) => {
            "resumed (session/resume): the agent has the earlier conversation"
        }
        (ContinuationMode::Continue, ContinuationOutcome::Loaded) => {
            "loaded (session/load): the agent has the earlier conversation"
        }
        (ContinuationMode::Continue, ContinuationOutcome::New) => {
            "new (session/new): this agent cannot continue the old conversation; it starts a new one in the same folder"
        }
        (ContinuationMode::Import, ContinuationOutcome::Loaded) => "loaded (session/load)",
        (ContinuationMode::Import, ContinuationOutcome::Resumed) => {
            "resumed (session/resume): the earlier conversation cannot be shown"
        }
        (ContinuationMode::Import, ContinuationOutcome::New) => "new (session/new)",
    };
    let mut line = format!("continuing {session_id}: {what}");
    if let Some(d) = detail {
        line.push_str(&format!(" ({d})"));
    }
    line
}

/// A stored thread rendered for people, as `run` renders a live one.
pub fn write_transcript(
    out: &mut dyn Write,
    events: &[StreamEvent],
    color: bool,
) -> std::io::Result<()> {
    let mut out = out;
    let mut human = Human::new(color, false, false);
    for ev in events {
        human.render(&mut out, ev)?;
    }
    human.finish(&mut out)
}

/// What the last line printed was, so blocks of text and tool lines get their own lines.
#[derive(PartialEq, Eq, Clone, Copy)]
enum Mode {
    LineStart,
    Text,
    Thought,
}

struct Human {
    color: bool,
    mode: Mode,
    /// Titles by tool call id: updates usually carry none.
    titles: std::collections::HashMap<String, String>,
    agent_shown: bool,
    /// The terminal asker shows permission requests itself, with their options.
    asking: bool,
    /// ...and the agent's questions.
    questions: bool,
    /// Each terminal's unfinished last line: output is shown by whole lines, each marked as
    /// the terminal's.
    term_partial: std::collections::HashMap<String, String>,
}

/// A terminal line longer than this is shown in pieces (a progress bar redrawn with `\r`
/// never ends its line, and must not be held whole).
const TERM_LINE_MAX: usize = 4096;

impl Human {
    fn new(color: bool, asking: bool, questions: bool) -> Self {
        Self {
            color,
            mode: Mode::LineStart,
            titles: std::collections::HashMap::new(),
            agent_shown: false,
            asking,
            questions,
            term_partial: std::collections::HashMap::new(),
        }
    }

    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    fn line_start(&mut self, w: &mut impl Write) -> std::io::Result<()> {
        if self.mode != Mode::LineStart {
            writeln!(w)?;
            self.mode = Mode::LineStart;
        }
        Ok(())
    }

    fn finish(&mut self, w: &mut impl Write) -> std::io::Result<()> {
        self.line_start(w)
    }

    fn render(&mut self, w: &mut impl Write, ev: &StreamEvent) -> std::io::Result<()> {
        match ev {
            StreamEvent::TextDelta { text, .. } => {
                if self.mode == Mode::Thought {
                    self.line_start(w)?;
                }
                write!(w, "{text}")?;
                // Text that ends its own line leaves us at the start of the next one.
                self.mode = if text.ends_with('\n') {
                    Mode::LineStart
                } else {
                    Mode::Text
                };
            }
            StreamEvent::Thought { text, .. } => {
                if self.mode != Mode::Thought {
                    self.line_start(w)?;
                    write!(w, "{}", self.paint("2", "thinking: "))?;
                }
                write!(w, "{}", self.paint("2;3", text))?;
                self.mode = Mode::Thought;
            }
            StreamEvent::ToolCall(tc) => {
                self.line_start(w)?;
                let status = tc.status.map(|s| enum_str(&s)).unwrap_or_default();
                let kind = tc.tool_kind.map(|k| enum_str(&k)).unwrap_or_default();
                if !tc.tool_name.is_empty() {
                    self.titles
                        .insert(tc.tool_call_id.clone(), tc.tool_name.clone());
                }
                let title = self
                    .titles
                    .get(&tc.tool_call_id)
                    .cloned()
                    .unwrap_or_else(|| format!("tool call {}", tc.tool_call_id));
                let head = if tc.is_update { "  ↳" } else { "⚙" };
                let mut line = format!("{head} {title}");
                if !kind.is_empty() && !tc.is_update {
                    line.push_str(&format!(" [{kind}]"));
                }
                if !status.is_empty() {
                    line.push_str(&format!(" ({status})"));
                }
                writeln!(w, "{}", self.paint("36", &line))?;
                for c in tc.content.iter().flatten() {
                    if let acp::ToolCallContent::Diff(d) = c {
                        let what = if d.old_text.is_none() {
                            "new file"
                        } else {
                            "edit"
                        };
                        writeln!(
                            w,
                            "    {what} {} ({} lines)",
                            d.path.display(),
                            d.new_text.lines().count()
                        )?;
                    }
                }
            }
            StreamEvent::ToolResult { .. } => {}
            StreamEvent::AgentPrompt(_) if self.asking => {
                self.line_start(w)?;
            }
            StreamEvent::AgentPrompt(p) => {
                self.line_start(w)?;
                let text = p
                    .text
                    .clone()
                    .unwrap_or_else(|| "Permission requested".into());
                writeln!(w, "{}", self.paint("33;1", &format!("? {text}")))?;
                if let Some(input) = &p.raw_input {
                    writeln!(w, "    input: {input}")?;
                }
            }
            StreamEvent::AgentPromptSettled {
                outcome,
                by,
                feedback,
                ..
            } => {
                self.line_start(w)?;
                let what = match outcome {
                    PermissionResolution::Selected { option_id, .. } => {
                        format!("answered {option_id}")
                    }
                    PermissionResolution::Cancelled { .. } => "cancelled".into(),
                };
                let by = enum_str(by);
                writeln!(w, "{}", self.paint("33", &format!("  → {what} (by {by})")))?;
                if let Some(f) = feedback {
                    writeln!(w, "    feedback: {f}")?;
                }
            }
            StreamEvent::Elicitation(_) if self.questions => {
                self.line_start(w)?;
            }
            StreamEvent::Elicitation(e) => {
                self.line_start(w)?;
                writeln!(
                    w,
                    "{}",
                    self.paint("33;1", &format!("? The agent asks: {}", e.message))
                )?;
                if let Some(url) = &e.url {
                    writeln!(w, "    page: {url}")?;
                }
                let names: Vec<&str> = e.fields.iter().flatten().map(|f| f.label()).collect();
                if !names.is_empty() {
                    writeln!(w, "    fields: {}", names.join(", "))?;
                }
            }
            StreamEvent::ElicitationSettled { action, by, .. } => {
                self.line_start(w)?;
                let what = match action {
                    acp_desk_core::elicitation::ElicitationAction::Accept => "answered",
                    acp_desk_core::elicitation::ElicitationAction::Decline => "declined",
                    acp_desk_core::elicitation::ElicitationAction::Cancel => "cancelled",
                };
                let by = match by {
                    acp_desk_core::events::SettledBy::Rule => {
                        "no terminal to ask on: ask again in a terminal or in the window".into()
                    }
                    other => format!("by {}", enum_str(other)),
                };
                writeln!(w, "{}", self.paint("33", &format!("  → {what} ({by})")))?;
            }
            StreamEvent::ElicitationComplete { .. } => {
                self.line_start(w)?;
                writeln!(
                    w,
                    "{}",
                    self.paint("33", "  → the agent says the page is done")
                )?;
            }
            StreamEvent::BackgroundTask { phase, task, .. } => {
                let name = task
                    .name
                    .clone()
                    .or_else(|| task.description.clone())
                    .unwrap_or_else(|| task.task_id.clone());
                let line = match phase {
                    BackgroundTaskPhase::Started => {
                        let kind = task.task_kind.as_deref().unwrap_or("task");
                        Some(format!("⧗ background {kind} started: {name}"))
                    }
                    BackgroundTaskPhase::Updated => {
                        task.summary.as_ref().map(|s| format!("  ⧗ {name}: {s}"))
                    }
                    BackgroundTaskPhase::Settled => {
                        let status = task.status.map(|s| enum_str(&s)).unwrap_or_default();
                        let mut l = format!("⧗ background task {status}: {name}");
                        if task.settled_by == Some(acp_desk_core::events::TaskSettledBy::SessionEnd)
                        {
                            l.push_str(" (the session ended)");
                        } else if let Some(s) = &task.summary {
                            l.push_str(&format!(" - {s}"));
                        }
                        if let Some(f) = &task.output_file {
                            l.push_str(&format!("\n    output: {f}"));
                        }
                        Some(l)
                    }
                };
                if let Some(line) = line {
                    self.line_start(w)?;
                    writeln!(w, "{}", self.paint("34", &line))?;
                }
            }
            // The end of a turn, checkpointed: how to review and undo it. The before side says
            // nothing unless it failed (the notice says that already).
            StreamEvent::Checkpoint {
                phase: acp_desk_core::events::CheckpointPhase::After,
                turn: Some(turn),
                summary: Some(s),
                session_id,
                ..
            } if s.files > 0 => {
                self.line_start(w)?;
                let line = format!(
                    "  ↺ turn {turn} changed {} file(s), +{} −{}: `acp-desk-cli changes {session_id} --turn {turn}`, undo with `acp-desk-cli revert {session_id} --turn {turn}`",
                    s.files, s.added, s.removed
                );
                writeln!(w, "{}", self.paint("2", &line))?;
            }
            StreamEvent::TurnStart { prompt, .. } => {
                self.line_start(w)?;
                let text: Vec<&str> = prompt
                    .iter()
                    .filter_map(|b| match b {
                        acp::ContentBlock::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect();
                writeln!(
                    w,
                    "{}",
                    self.paint("1", &format!("> {}", text.join("\n  ")))
                )?;
            }
            StreamEvent::TurnEnd {
                reason,
                stop_reason,
                ..
            } => {
                self.line_start(w)?;
                let why = match (reason, stop_reason) {
                    (TurnEndReason::Completed, Some(acp::StopReason::MaxTokens)) => {
                        "stopped at the token limit".to_string()
                    }
                    (TurnEndReason::Completed, Some(acp::StopReason::Refusal)) => {
                        "the agent refused".to_string()
                    }
                    (r, _) => enum_str(r),
                };
                writeln!(w, "{}", self.paint("2", &format!("— turn ended: {why}")))?;
            }
            StreamEvent::Error { error, .. } => {
                self.line_start(w)?;
                writeln!(
                    w,
                    "{}",
                    self.paint("31;1", &format!("error: {}", error.message))
                )?;
            }
            StreamEvent::Plan { entries, .. } => {
                self.line_start(w)?;
                writeln!(w, "{}", self.paint("35", "plan:"))?;
                for e in entries {
                    let mark = match e.status {
                        acp::PlanEntryStatus::Completed => "[x]",
                        acp::PlanEntryStatus::InProgress => "[~]",
                        _ => "[ ]",
                    };
                    writeln!(w, "  {mark} {}", e.content)?;
                }
            }
            StreamEvent::UsageUpdate {
                size,
                used,
                cost,
                origin,
                ..
            } => {
                self.line_start(w)?;
                if origin.as_deref() == Some("task-notification") {
                    writeln!(
                        w,
                        "{}",
                        self.paint(
                            "34",
                            "— the agent worked on its own, after a background task ended"
                        )
                    )?;
                }
                let mut s = format!("usage: {used}/{size} tokens of context");
                if let Some(c) = cost {
                    s.push_str(&format!(", cost {:.4} {}", c.amount, c.currency));
                }
                writeln!(w, "{}", self.paint("2", &s))?;
            }
            StreamEvent::Notice {
                severity,
                title,
                description,
                ..
            } => {
                self.line_start(w)?;
                let code = match severity {
                    NoticeSeverity::Error => "31",
                    NoticeSeverity::Warning => "33",
                    NoticeSeverity::Info => "2",
                };
                writeln!(w, "{}", self.paint(code, &format!("note: {title}")))?;
                if let Some(d) = description {
                    writeln!(w, "  {}", d.replace('\n', "\n  "))?;
                }
            }
            StreamEvent::SessionContinued { .. } => {
                self.line_start(w)?;
                writeln!(
                    w,
                    "{}",
                    self.paint("2", &format!("--- {}", continued_line(ev)))
                )?;
            }
            StreamEvent::McpServers { servers, .. } => {
                // Names only; why a server was skipped is the warning notice that follows.
                let given: Vec<String> = servers
                    .iter()
                    .filter(|r| r.passed)
                    .map(|r| r.name.clone())
                    .collect();
                let skipped: Vec<String> = servers
                    .iter()
                    .filter(|r| !r.passed)
                    .map(|r| r.name.clone())
                    .collect();
                let mut line = format!(
                    "--- MCP servers given to the agent: {}",
                    if given.is_empty() {
                        "none".to_owned()
                    } else {
                        given.join(", ")
                    }
                );
                if !skipped.is_empty() {
                    line.push_str(&format!("; not given: {}", skipped.join(", ")));
                }
                self.line_start(w)?;
                writeln!(w, "{}", self.paint("2", &line))?;
            }
            StreamEvent::SessionStatus {
                status,
                detail,
                agent,
                ..
            } => {
                use acp_desk_core::events::SessionState;
                if *status == SessionState::Ready && !self.agent_shown {
                    self.agent_shown = true;
                    if let Some(a) = agent.as_ref().filter(|a| a.name.is_some()) {
                        let name = a
                            .title
                            .clone()
                            .or_else(|| a.name.clone())
                            .unwrap_or_default();
                        let version = a.version.clone().unwrap_or_default();
                        writeln!(
                            w,
                            "{}",
                            self.paint("2", &format!("agent: {name} {version}"))
                        )?;
                    }
                }
                if *status == SessionState::Dead
                    && let Some(d) = detail.as_ref().filter(|d| !d.starts_with("Session closed"))
                {
                    self.line_start(w)?;
                    writeln!(w, "{}", self.paint("2", d))?;
                }
            }
            StreamEvent::TerminalOutput {
                terminal_id,
                data,
                exit_status,
                ..
            } => {
                let mut partial = self.term_partial.remove(terminal_id).unwrap_or_default();
                partial.extend(data.chars().filter(|c| *c != '\r'));
                let mut lines: Vec<String> = Vec::new();
                while let Some(i) = partial.find('\n') {
                    lines.push(partial[..i].to_string());
                    partial.drain(..=i);
                }
                if partial.len() > TERM_LINE_MAX || (exit_status.is_some() && !partial.is_empty()) {
                    lines.push(std::mem::take(&mut partial));
                }
                if !lines.is_empty() || exit_status.is_some() {
                    self.line_start(w)?;
                }
                for l in lines {
                    writeln!(w, "{} {l}", self.paint("2", "  │"))?;
                }
                if let Some(status) = exit_status {
                    let how = match (&status.exit_code, &status.signal) {
                        (Some(c), _) => format!("exited with code {c}"),
                        (None, Some(s)) => format!("killed by {s}"),
                        (None, None) => "ended".into(),
                    };
                    let line = format!("  └ terminal {terminal_id} {how}");
                    writeln!(w, "{}", self.paint("2", &line))?;
                } else {
                    self.term_partial.insert(terminal_id.clone(), partial);
                }
            }
            StreamEvent::FileChanged {
                path, created, via, ..
            } => {
                self.line_start(w)?;
                let what = match (via, created) {
                    (_, true) => "created",
                    (Some(acp_desk_core::events::FileChangeVia::Watcher), false) => "changed",
                    (_, false) => "wrote",
                };
                writeln!(w, "{}", self.paint("36", &format!("  ✎ {what} {path}")))?;
            }
            // Commands, modes and other state matter to a UI, not to a transcript.
            _ => {}
        }
        Ok(())
    }
}

fn enum_str<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The one reader of stdin for the whole run. It reads a line only when one is asked for
/// ([`TerminalLines::next`]), so that a program run in this terminal afterwards (a sign-in's
/// login) gets the keys typed while it runs; a read cannot be cancelled, so a line asked for and
/// no longer awaited goes to the next caller.
pub struct TerminalLines {
    want: std::sync::Mutex<std::sync::mpsc::Sender<()>>,
    got: tokio::sync::Mutex<mpsc::UnboundedReceiver<Option<String>>>,
    outstanding: std::sync::atomic::AtomicBool,
}

/// The process's [`TerminalLines`], its thread started on first use.
pub fn terminal_lines() -> &'static TerminalLines {
    static LINES: std::sync::OnceLock<TerminalLines> = std::sync::OnceLock::new();
    LINES.get_or_init(|| {
        let (want_tx, want_rx) = std::sync::mpsc::channel::<()>();
        let (line_tx, line_rx) = mpsc::unbounded_channel::<Option<String>>();
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            while want_rx.recv().is_ok() {
                let mut line = String::new();
                match stdin.read_line(&mut line) {
                    Ok(0) | Err(_) => {
                        let _ = line_tx.send(None);
                        return;
                    }
                    Ok(_) => {
                        if line_tx.send(Some(line.trim().to_string())).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        TerminalLines {
            want: std::sync::Mutex::new(want_tx),
            got: tokio::sync::Mutex::new(line_rx),
            outstanding: std::sync::atomic::AtomicBool::new(false),
        }
    })
}

impl TerminalLines {
    /// The next line typed (trimmed); `None` at end of input. Cancel-safe.
    pub async fn next(&self) -> Option<String> {
        use std::sync::atomic::Ordering;
        let mut got = self.got.lock().await;
        if !self.outstanding.swap(true, Ordering::SeqCst) {
            let want = self
                .want
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if want.send(()).is_err() {
                return None;
            }
        }
        let line = got.recv().await.flatten();
        self.outstanding.store(false, Ordering::SeqCst);
        line
    }
}

/// What the terminal asker puts to the user, one at a time.
enum Waiting {
    Permission(Box<AgentPromptEvent>),
    Question(Box<ElicitationEvent>),
}

impl Waiting {
    fn id(&self) -> &str {
        match self {
            Waiting::Permission(p) => &p.request_id,
            Waiting::Question(q) => &q.request_id,
        }
    }
}

/// Asks the user about parked permission requests and the agent's questions, one at a time, on
/// the terminal. Ctrl-D at a question cancels it.
pub async fn ask_loop(mut rx: mpsc::UnboundedReceiver<AskMsg>, handle: SessionHandle) {
    let lines = terminal_lines();
    let mut queue: VecDeque<Waiting> = VecDeque::new();
    // Input ended (Ctrl-D): nobody can answer any more, and a question left open would hold the
    // turn (the watchdog waits for the user): what comes is answered at once.
    let mut input_ended = false;
    let add = |queue: &mut VecDeque<Waiting>, msg: AskMsg| match msg {
        AskMsg::Prompt(p) => queue.push_back(Waiting::Permission(p)),
        AskMsg::Question(q) => queue.push_back(Waiting::Question(q)),
        AskMsg::Settled(id) => queue.retain(|w| w.id() != id),
    };
    loop {
        let Some(current) = queue.pop_front() else {
            match rx.recv().await {
                Some(msg) => add(&mut queue, msg),
                None => return,
            }
            continue;
        };
        let id = current.id().to_owned();
        if input_ended {
            let r = match current {
                Waiting::Permission(_) => {
                    handle
                        .respond_permission(&id, PermissionResolution::cancelled())
                        .await
                }
                Waiting::Question(_) => {
                    handle
                        .answer_elicitation(
                            &id,
                            acp_desk_core::elicitation::ElicitationAnswer::Cancel,
                        )
                        .await
                }
            };
            if let Err(e) = r {
                tracing::debug!("answering {id} after the end of input: {e}");
            }
            continue;
        }
        let mut asking = match current {
            Waiting::Permission(p) => {
                show_options(&p);
                Err(p)
            }
            Waiting::Question(q) => {
                let (a, first) = crate::elicit::Asking::new(q);
                eprint!("{first}");
                Ok(a)
            }
        };
        loop {
            tokio::select! {
                msg = rx.recv() => match msg {
                    Some(AskMsg::Settled(s)) if s == id => {
                        eprintln!("\n(answered elsewhere: {id})");
                        break;
                    }
                    Some(msg) => add(&mut queue, msg),
                    None => return,
                },
                line = lines.next() => {
                    match &mut asking {
                        Err(p) => {
                            let Some(line) = line else {
                                input_ended = true;
                                if let Err(e) = handle.respond_permission(&id, PermissionResolution::cancelled()).await {
                                    eprintln!("acp-desk-cli: {e}");
                                }
                                break;
                            };
                            match parse_answer(p, &line) {
                                Some(resolution) => {
                                    if let Err(e) = handle.respond_permission(&id, resolution).await {
                                        eprintln!("acp-desk-cli: {e}");
                                    }
                                    break;
                                }
                                None => eprint!("Type a number from the list (or c to cancel): "),
                            }
                        }
                        Ok(a) => match a.feed(line.as_deref()) {
                            crate::elicit::Next::Ask(s) => eprint!("{s}"),
                            crate::elicit::Next::Answer(answer) => {
                                if let Err(e) = handle.answer_elicitation(&id, answer).await {
                                    eprintln!("acp-desk-cli: {e}");
                                }
                                input_ended |= line.is_none();
                                break;
                            }
                        },
                    }
                }
            }
        }
    }
}

fn show_options(p: &AgentPromptEvent) {
    let mut s = String::new();
    s.push_str(&format!(
        "\n{}\n",
        p.text
            .clone()
            .unwrap_or_else(|| "The agent asks for permission.".into())
    ));
    if let Some(input) = &p.raw_input {
        s.push_str(&format!("  input: {input}\n"));
    }
    for (i, o) in p.options.iter().enumerate() {
        s.push_str(&format!(
            "  {}) {} [{}]\n",
            i + 1,
            o.name,
            enum_str(&o.kind)
        ));
    }
    s.push_str(
        "  c) cancel\nAnswer (a rejection may be followed by feedback, e.g. `3 use cargo check`): ",
    );
    eprint!("{s}");
}

fn parse_answer(p: &AgentPromptEvent, line: &str) -> Option<PermissionResolution> {
    let line = line.trim();
    if line.eq_ignore_ascii_case("c") {
        return Some(PermissionResolution::cancelled());
    }
    let (num, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let n: usize = num.parse().ok()?;
    let option = p.options.get(n.checked_sub(1)?)?;
    let feedback = rest.trim();
    Some(PermissionResolution::Selected {
        option_id: option.option_id.0.to_string(),
        feedback: (!feedback.is_empty()).then(|| feedback.to_string()),
    })
}
