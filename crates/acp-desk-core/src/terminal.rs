//! Terminals the agent asks for (`terminal/create`, `output`, `wait_for_exit`, `kill`,
//! `release`): one [`Terminals`] per session, each command on its own pty.
//!
//! How a terminal runs (Linux):
//!
//! ```text
//! pty (portable-pty; setsid, the pty is the controlling tty)
//!  └─ acp-desk-supervisor --grace-ms 1000 -- PROGRAM ARGS   (subreaper, session leader)
//!      └─ PROGRAM (own process group)  └─ … children, setsid or not
//! reader thread: blocking read of the pty master → StreamDecoder → OutputBuffer + TerminalEvent::Output
//! waiter thread: waitid(supervisor) → exit status → TerminalEvent::Exited, wait_for_exit futures
//! ```
//!
//! - **Whole tree.** The supervisor (see `supervisor.rs`) is a subreaper: children that call
//!   `setsid` are reparented to it, and it ends every descendant (SIGTERM, [`KILL_GRACE`],
//!   SIGKILL until none is left) on kill, and on its own when the command exits and leaves
//!   background processes behind (a terminal's output would otherwise never reach EOF).
//! - **Dying with the app.** No lifeline pipe here: portable-pty closes every fd above 2 in the
//!   child. The pty master is the lifeline instead: when ACP Desk dies (even by SIGKILL) the
//!   kernel closes the master, hangs up the tty and sends SIGHUP to the session leader, the
//!   supervisor, which ends the tree (tested: a process holding a terminal is SIGKILLed).
//! - **Limits, honestly.** The command runs in a process group of its own, which is not the
//!   pty's foreground group (the supervisor's is): a command that reads the terminal or changes
//!   its modes is stopped (SIGTTIN/SIGTTOU). ACP has no way to write to a terminal, so such a
//!   command would wait forever anyway; it is ended by kill/release/close like any other. The
//!   supervisor reports "killed by signal N" as exit code 128 + N, so codes 129–159 are
//!   reported as signals (as shells do): a command that really exits 130 reads as SIGINT.
//! - **Other Unix (unverified, only Linux builds here):** no supervisor; the command is the
//!   pty's session leader, kill is SIGTERM to its process group, SIGKILL after the grace.
//!   Children that leave the group (setsid) survive. **Windows (unverified):** the process is
//!   killed, not its tree (a job object would be the fix).
//!
//! Commands: ACP's `command` + `args` is run directly. Agents also send a whole shell line as
//! `command` with no `args` (claude-code-acp does), so a command without args that contains
//! whitespace or shell syntax runs as `bash -c COMMAND` (`/bin/sh` without bash). A program
//! that does not exist is an error at create ([`TerminalError::NotFound`], looked up like
//! `process::resolve_command`, in the request's `PATH` when it sets one); inside a shell line it
//! is the shell's business (exit code 127 and its message in the output), as in a real
//! terminal.
//!
//! Output: text from a streaming UTF-8 decoder, at most the limit kept (cut from the start at a
//! character boundary). Each decoded chunk goes once to the session's channel as a delta.
//! Reads are coalesced while more is ready (a delta is sent once it reaches [`DELTA_MAX_BYTES`],
//! so it holds at most that plus one read), so a flood gives few large events (~50 KiB each in
//! `bench/terminal-flood.sh`) and a command that prints a line now and then small ones at once. The channel is
//! bounded and the reader thread blocks on it when it is full: the pty fills and the command
//! blocks on its writes, so a slow consumer slows the command and nothing grows in between.

pub mod interactive;
mod output;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use agent_client_protocol_schema::v1 as acp;
use portable_pty::{CommandBuilder, MasterPty, PtySize};
use tokio::sync::{mpsc, watch};

use crate::jsonrpc::codes;
use crate::process;
use output::{OutputBuffer, StreamDecoder};

/// Exit status as ACP spells it (`exitCode?`, `signal?`).
pub type ExitStatus = acp::TerminalExitStatus;

/// Output kept when the agent gives no `outputByteLimit`: a long build or test log fits, and a
/// `terminal/output` answer stays a line any agent's JSON reader takes. claude-code-acp asks
/// for 32 000.
pub const DEFAULT_OUTPUT_BYTE_LIMIT: usize = 1024 * 1024;
/// The most an agent may ask to keep: the same 16 MiB as the longest JSON-RPC line we accept
/// (`jsonrpc::Limits::max_line_bytes`); an answer is one line and escaping only grows it.
pub const MAX_OUTPUT_BYTE_LIMIT: usize = 16 * 1024 * 1024;
/// An `Output` delta is sent once it reaches this size (it may exceed it by one read). Big
/// enough that a 100 MB flood is ~2000 events, small enough that a UI applying one per frame
/// stays smooth.
pub const DELTA_MAX_BYTES: usize = 64 * 1024;
/// One read of the pty. Linux hands out at most a few KiB per read of a pty; this only has to
/// be larger than that.
const READ_CHUNK: usize = 16 * 1024;
/// Between SIGTERM and SIGKILL on kill/release/close. Shorter than an agent's 2 s: a command has
/// no session state to save, and agents kill terminals mostly on timeouts, when waiting long is
/// exactly what they don't want.
pub const KILL_GRACE: Duration = Duration::from_millis(1000);
/// After the process exits, how long the output may stay silent (not EOF) before the exit is
/// published anyway: the pty reaches EOF only when every holder of its slave has closed it, and
/// without the supervisor a leftover background process could hold it forever.
const DRAIN_IDLE: Duration = Duration::from_millis(500);
/// How often the waiter re-checks the drain (it is woken on progress too; this is the idle clock).
const DRAIN_POLL: Duration = Duration::from_millis(50);
/// Terminal size: wide enough that tools cutting lines at the terminal width (ps, progress
/// bars) keep most of a line; about what a terminal card in the UI shows.
const PTY_COLS: u16 = 120;
const PTY_ROWS: u16 = 40;

#[derive(Debug, thiserror::Error)]
pub enum TerminalError {
    #[error("no terminal `{id}` in this session (never created, or already released)")]
    Unknown { id: String },
    #[error("the command `{command}` was not found{where_}")]
    NotFound { command: String, where_: String },
    #[error("the working directory {} {reason}", cwd.display())]
    BadCwd { cwd: PathBuf, reason: &'static str },
    #[error(
        "acp-desk-supervisor was not found next to this program; reinstall ACP Desk (developers: `cargo build --workspace --bins`), or set ACP_DESK_SUPERVISOR to its path"
    )]
    NoSupervisor,
    #[error("terminals need a Tokio runtime (create was called outside one)")]
    NoRuntime,
    #[error("could not start `{command}`: {message}")]
    Spawn { command: String, message: String },
}

impl TerminalError {
    /// The JSON-RPC error code to answer the agent's request with: what the agent asked for is
    /// wrong (unknown id, missing program, bad folder) → invalid params; our side failed →
    /// internal error.
    pub fn rpc_code(&self) -> i32 {
        match self {
            Self::Unknown { .. } | Self::NotFound { .. } | Self::BadCwd { .. } => {
                codes::INVALID_PARAMS
            }
            Self::NoSupervisor | Self::NoRuntime | Self::Spawn { .. } => codes::INTERNAL_ERROR,
        }
    }
}

/// What the session hands to [`Terminals::create`]: an ACP `terminal/create` whose `cwd` the
/// caller has resolved (absolute, already checked against the session's roots).
#[derive(Debug, Clone)]
pub struct TerminalRequest {
    pub command: String,
    pub args: Vec<String>,
    /// Set over the user's environment (inherited first, then these, in order).
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    pub output_byte_limit: Option<u64>,
}

impl TerminalRequest {
    pub fn from_acp(req: acp::CreateTerminalRequest, cwd: PathBuf) -> Self {
        Self {
            command: req.command,
            args: req.args,
            env: req.env.into_iter().map(|e| (e.name, e.value)).collect(),
            cwd,
            output_byte_limit: req.output_byte_limit,
        }
    }
}

/// Sent on the session's channel, in order per terminal: `Output`s, then one `Exited` (after
/// the last output unless the output stayed open past [`DRAIN_IDLE`] after the exit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminalEvent {
    /// Newly decoded text, never resent; consumers keep at most the terminal's limit.
    Output {
        terminal_id: acp::TerminalId,
        data: String,
    },
    Exited {
        terminal_id: acp::TerminalId,
        exit_status: ExitStatus,
    },
}

#[derive(Debug, Clone)]
pub struct TerminalOptions {
    /// `acp-desk-supervisor` (Linux). Default: `process::supervisor_path()`.
    pub supervisor: Option<PathBuf>,
    pub kill_grace: Duration,
}

impl Default for TerminalOptions {
    fn default() -> Self {
        Self {
            supervisor: process::supervisor_path(),
            kill_grace: KILL_GRACE,
        }
    }
}

/// A session's terminals. Dropping it (or [`Terminals::close_all`]) ends every one of them.
pub struct Terminals {
    events: mpsc::Sender<TerminalEvent>,
    opts: TerminalOptions,
    next_id: u64,
    terminals: HashMap<acp::TerminalId, Terminal>,
}

struct Terminal {
    shared: Arc<Shared>,
    exit_rx: watch::Receiver<Option<ExitStatus>>,
    released: watch::Sender<bool>,
}

/// What the handle, the reader thread and the waiter thread share.
struct Shared {
    state: Mutex<State>,
    /// Wakes the waiter when the reader makes progress or reaches EOF.
    progress: Condvar,
    exit_tx: watch::Sender<Option<ExitStatus>>,
    pid: Option<u32>,
    supervised: bool,
    kill_grace: Duration,
    /// Windows: the only way to kill (unverified).
    #[cfg(not(unix))]
    killer: Mutex<Box<dyn portable_pty::ChildKiller + Send + Sync>>,
}

struct State {
    output: OutputBuffer,
    eof: bool,
    last_progress: Instant,
    /// The reader is blocked on a full channel: slow consumer, not a silent pty.
    in_send: bool,
    /// The process is waited for: its pid may not be signalled any more.
    reaped: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind; keep serving it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// SIGTERM to the tree; the supervisor (or, elsewhere, a timer) escalates to SIGKILL.
    fn terminate(self: &Arc<Self>) {
        let st = self.lock();
        if st.reaped {
            return;
        }
        #[cfg(unix)]
        if let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) {
            // The lock is held, so the waiter cannot reap in between: the pid is still ours.
            if self.supervised {
                // SAFETY: kill(2) on our own unreaped child.
                unsafe {
                    libc::kill(pid, libc::SIGTERM);
                }
            } else {
                // SAFETY: kill(2) on the process group of our own unreaped child.
                unsafe {
                    libc::kill(-pid, libc::SIGTERM);
                }
                drop(st);
                let shared = self.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(shared.kill_grace);
                    let st = shared.lock();
                    if !st.reaped {
                        // SAFETY: as above, still unreaped under the lock.
                        unsafe {
                            libc::kill(-pid, libc::SIGKILL);
                        }
                    }
                });
            }
        }
        #[cfg(not(unix))]
        {
            drop(st);
            if let Ok(mut k) = self.killer.lock() {
                let _ = k.kill();
            }
        }
    }
}

impl Terminal {
    fn output(&self) -> acp::TerminalOutputResponse {
        let st = self.shared.lock();
        acp::TerminalOutputResponse::new(st.output.text(), st.output.truncated())
            .exit_status(self.exit_rx.borrow().clone())
    }
}

impl Terminals {
    /// `events` receives every terminal's output deltas and exits; keep it bounded (a few
    /// dozen): a full channel pauses the commands, it does not lose output.
    pub fn new(events: mpsc::Sender<TerminalEvent>, opts: TerminalOptions) -> Self {
        Self {
            events,
            opts,
            next_id: 0,
            terminals: HashMap::new(),
        }
    }

    /// Starts the command and returns at once; output and exit arrive as events. Blocks on the
    /// file system and on starting the process: a caller that must not block runs
    /// [`Terminals::start`] on the blocking pool and [`Terminals::adopt`]s its result.
    pub fn create(&mut self, req: TerminalRequest) -> Result<acp::TerminalId, TerminalError> {
        let id = self.reserve_id();
        let started = Self::start(req, &self.opts)?;
        self.adopt(id, started)
    }

    /// The options terminals start with (for [`Terminals::start`] off the session's task).
    pub fn options(&self) -> &TerminalOptions {
        &self.opts
    }

    /// A fresh id for a terminal about to be started.
    pub fn reserve_id(&mut self) -> acp::TerminalId {
        self.next_id += 1;
        acp::TerminalId::new(format!("term-{}", self.next_id))
    }

    /// The blocking part of creating a terminal: checks the working folder, finds the program,
    /// opens the pty and starts the command. Dropping the result (never adopted) closes the pty,
    /// which ends the command.
    pub fn start(req: TerminalRequest, opts: &TerminalOptions) -> Result<Started, TerminalError> {
        if !req.cwd.is_absolute() {
            return Err(TerminalError::BadCwd {
                cwd: req.cwd,
                reason: "is not an absolute path",
            });
        }
        if !req.cwd.is_dir() {
            return Err(TerminalError::BadCwd {
                cwd: req.cwd,
                reason: "is not a folder",
            });
        }
        let limit = req
            .output_byte_limit
            .map(|l| usize::try_from(l).unwrap_or(usize::MAX))
            .unwrap_or(DEFAULT_OUTPUT_BYTE_LIMIT)
            .min(MAX_OUTPUT_BYTE_LIMIT);
        let (program, args) = plan_command(&req)?;
        let spawned = spawn(
            &PtyCommand {
                command: &req.command,
                program: &program,
                args: &args,
                env: &req.env,
                cwd: &req.cwd,
                size: PtySize {
                    rows: PTY_ROWS,
                    cols: PTY_COLS,
                    pixel_width: 0,
                    pixel_height: 0,
                },
                foreground: false,
            },
            opts,
        )?;
        Ok(Started {
            req,
            program,
            args,
            limit,
            spawned,
        })
    }

    /// Makes a started command the session's terminal `id` (from [`Terminals::reserve_id`]):
    /// its output and exit now arrive as events. Does not block.
    pub fn adopt(
        &mut self,
        id: acp::TerminalId,
        started: Started,
    ) -> Result<acp::TerminalId, TerminalError> {
        let Started {
            req,
            program,
            args,
            limit,
            spawned,
        } = started;
        let running = run(
            Run {
                id: &id,
                command: &req.command,
                program: &program,
                args: args.len(),
                limit,
                kill_grace: self.opts.kill_grace,
                events: self.events.clone(),
            },
            spawned,
        )?;
        self.terminals.insert(id.clone(), running.terminal);
        Ok(id)
    }

    /// Output so far (at most the limit), whether some was cut, and the exit status once the
    /// command has exited and its output has been read to the end.
    pub fn output(
        &self,
        id: &acp::TerminalId,
    ) -> Result<acp::TerminalOutputResponse, TerminalError> {
        Ok(self.get(id)?.output())
    }

    /// A future for the exit status, independent of `self`: spawn it or select on it so the
    /// session's owner keeps running. Any number may wait. Resolves also when the terminal is
    /// released meanwhile (release kills, and the kill's status is the answer).
    pub fn wait_for_exit(
        &self,
        id: &acp::TerminalId,
    ) -> Result<impl Future<Output = ExitStatus> + Send + 'static, TerminalError> {
        let mut rx = self.get(id)?.exit_rx.clone();
        Ok(async move {
            match rx.wait_for(Option::is_some).await {
                Ok(status) => status.clone().unwrap_or_default(),
                // The sender lives in `Shared`, which the waiter thread keeps until it has
                // published: unreachable, but an empty status beats a panic.
                Err(_) => ExitStatus::default(),
            }
        })
    }

    /// Ends the command and everything it started (SIGTERM, the grace period, SIGKILL). Returns
    /// at once; the terminal stays readable and reports the exit as usual.
    pub fn kill(&self, id: &acp::TerminalId) -> Result<(), TerminalError> {
        self.get(id)?.shared.terminate();
        Ok(())
    }

    /// Kills the command if it runs and forgets the terminal: its id is unknown afterwards.
    /// Waiters already waiting still get the exit status.
    pub fn release(&mut self, id: &acp::TerminalId) -> Result<(), TerminalError> {
        let t = self
            .terminals
            .remove(id)
            .ok_or_else(|| TerminalError::Unknown { id: id.to_string() })?;
        release(t);
        Ok(())
    }

    /// Ends and forgets every terminal (the session is closing).
    pub fn close_all(&mut self) {
        for (_, t) in self.terminals.drain() {
            release(t);
        }
    }

    /// Ids of the terminals not released.
    pub fn ids(&self) -> Vec<acp::TerminalId> {
        self.terminals.keys().cloned().collect()
    }

    fn get(&self, id: &acp::TerminalId) -> Result<&Terminal, TerminalError> {
        self.terminals
            .get(id)
            .ok_or_else(|| TerminalError::Unknown { id: id.to_string() })
    }

    #[cfg(test)]
    fn buffer_capacity(&self, id: &acp::TerminalId) -> Option<usize> {
        Some(self.terminals.get(id)?.shared.lock().output.capacity())
    }

    #[cfg(test)]
    fn pid(&self, id: &acp::TerminalId) -> Option<u32> {
        self.terminals.get(id)?.shared.pid
    }
}

impl Drop for Terminals {
    fn drop(&mut self) {
        self.close_all();
    }
}

/// What [`run`] needs besides the spawned process: who it is, how much output to keep, where
/// its events go.
struct Run<'a> {
    id: &'a acp::TerminalId,
    /// As the caller named it, for error messages.
    command: &'a str,
    /// The program started (logged; never the args: they may hold a key).
    program: &'a Path,
    args: usize,
    limit: usize,
    kill_grace: Duration,
    events: mpsc::Sender<TerminalEvent>,
}

/// A running command: the handle [`Terminals`] keeps, and the pty master, which the reader
/// closes after EOF unless someone else holds it too (an interactive terminal resizes it).
struct Running {
    terminal: Terminal,
    master: SharedMaster,
}

/// The pty master, shared by the reader thread and whoever resizes it.
type SharedMaster = Arc<Mutex<Box<dyn MasterPty + Send>>>;

/// Starts the reader and the waiter threads of a spawned command. Does not block.
fn run(run: Run<'_>, spawned: Spawned) -> Result<Running, TerminalError> {
    let handle = tokio::runtime::Handle::try_current().map_err(|_| TerminalError::NoRuntime)?;
    let Run {
        id,
        command,
        program,
        args,
        limit,
        kill_grace,
        events,
    } = run;
    let (exit_tx, exit_rx) = watch::channel(None);
    let (released, released_rx) = watch::channel(false);
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            output: OutputBuffer::new(limit),
            eof: false,
            last_progress: Instant::now(),
            in_send: false,
            reaped: false,
        }),
        progress: Condvar::new(),
        exit_tx,
        pid: spawned.pid,
        supervised: spawned.supervised,
        kill_grace,
        #[cfg(not(unix))]
        killer: Mutex::new(spawned.child.clone_killer()),
    });
    let outbox = Outbox {
        id: id.clone(),
        events,
        released: released_rx,
        handle,
    };
    // The program only: the agent's command line may hold a key (`curl -H "Authorization: …"`).
    tracing::info!(
        terminal = %id,
        pid = spawned.pid,
        supervised = spawned.supervised,
        args,
        "terminal started: {}",
        program.display(),
    );
    let reader_shared = shared.clone();
    let reader_outbox = outbox.clone();
    let master: SharedMaster = Arc::new(Mutex::new(spawned.master));
    let reader_master = master.clone();
    let reader = spawned.reader;
    std::thread::Builder::new()
        .name(format!("terminal-read-{id}"))
        .spawn(move || read_loop(reader, reader_master, reader_shared, reader_outbox))
        .map_err(|e| spawn_error(command, e))?;
    let waiter_shared = shared.clone();
    #[cfg(unix)]
    let child = ();
    #[cfg(not(unix))]
    let child = spawned.child;
    let waited = std::thread::Builder::new()
        .name(format!("terminal-wait-{id}"))
        .spawn(move || wait_loop(child, waiter_shared, outbox));
    if let Err(e) = waited {
        // The reader is running; without a waiter nothing would ever report the exit.
        shared.terminate();
        return Err(spawn_error(command, e));
    }
    Ok(Running {
        terminal: Terminal {
            shared,
            exit_rx,
            released,
        },
        master,
    })
}

fn release(t: Terminal) {
    // First: the reader stops sending events for it (a released terminal's output is nobody's).
    t.released.send_replace(true);
    t.shared.terminate();
}

/// Sends a terminal's events: waits while the channel is full (backpressure), but not once the
/// terminal is released or the receiver is gone.
#[derive(Clone)]
struct Outbox {
    id: acp::TerminalId,
    events: mpsc::Sender<TerminalEvent>,
    released: watch::Receiver<bool>,
    handle: tokio::runtime::Handle,
}

impl Outbox {
    fn send(&mut self, event: TerminalEvent, shared: &Shared) {
        if *self.released.borrow() {
            return;
        }
        let event = match self.events.try_send(event) {
            Ok(()) | Err(mpsc::error::TrySendError::Closed(_)) => return,
            Err(mpsc::error::TrySendError::Full(e)) => e,
        };
        shared.lock().in_send = true;
        let (events, released) = (&self.events, &mut self.released);
        // Handle::block_on on this plain thread (never a runtime thread): the futures only need
        // tokio's sync primitives, so this works even while the runtime shuts down.
        self.handle.block_on(async {
            tokio::select! {
                _ = events.send(event) => {}
                _ = released.wait_for(|r| *r) => {}
            }
        });
        let mut st = shared.lock();
        st.in_send = false;
        st.last_progress = Instant::now();
    }
}

fn read_loop(
    mut reader: Box<dyn Read + Send>,
    master: SharedMaster,
    shared: Arc<Shared>,
    mut outbox: Outbox,
) {
    let mut decoder = StreamDecoder::new();
    let mut raw = vec![0u8; READ_CHUNK];
    let mut pending = String::new();
    loop {
        match reader.read(&mut raw) {
            Ok(0) => break,
            Ok(n) => decoder.decode(&raw[..n], false, &mut pending),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // Linux reports the end of a pty (every slave fd closed) as EIO.
            Err(_) => break,
        }
        {
            let mut st = shared.lock();
            st.last_progress = Instant::now();
        }
        if pending.len() >= DELTA_MAX_BYTES || !more_ready(&master) {
            flush(&mut pending, &shared, &mut outbox);
        }
    }
    decoder.decode(&[], true, &mut pending);
    flush(&mut pending, &shared, &mut outbox);
    shared.lock().eof = true;
    shared.progress.notify_all();
    // The master closes here, after EOF (closing it earlier would hang up the command), unless
    // an interactive terminal's handle still holds it.
    drop(master);
}

fn flush(pending: &mut String, shared: &Shared, outbox: &mut Outbox) {
    if pending.is_empty() {
        return;
    }
    let data = std::mem::take(pending);
    shared.lock().output.push(&data);
    shared.progress.notify_all();
    let terminal_id = outbox.id.clone();
    outbox.send(TerminalEvent::Output { terminal_id, data }, shared);
}

/// Whether another read would return at once: keep coalescing while a flood lasts, send at
/// once when the command pauses.
#[cfg(unix)]
fn more_ready(master: &SharedMaster) -> bool {
    let fd = master
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .as_raw_fd();
    let Some(fd) = fd else {
        return false;
    };
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd; the fd is the master, which this reader's own reference keeps
    // open for the duration of the call.
    let r = unsafe { libc::poll(&mut p, 1, 0) };
    r > 0 && p.revents & libc::POLLIN != 0
}

#[cfg(not(unix))]
fn more_ready(_master: &SharedMaster) -> bool {
    false
}

#[cfg(unix)]
type WaitChild = ();
#[cfg(not(unix))]
type WaitChild = Box<dyn portable_pty::Child + Send + Sync>;

fn wait_loop(child: WaitChild, shared: Arc<Shared>, mut outbox: Outbox) {
    let status = wait_child(child, &shared);
    // Publish once the output is complete (EOF), or once it has been silent for DRAIN_IDLE
    // (something still holds the pty open) and the reader is not merely waiting on a slow
    // consumer.
    {
        let mut st = shared.lock();
        while !st.eof && (st.in_send || st.last_progress.elapsed() < DRAIN_IDLE) {
            st = shared
                .progress
                .wait_timeout(st, DRAIN_POLL)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }
    tracing::debug!(terminal = %outbox.id, ?status, "terminal exited");
    shared.exit_tx.send_replace(Some(status.clone()));
    let terminal_id = outbox.id.clone();
    outbox.send(
        TerminalEvent::Exited {
            terminal_id,
            exit_status: status,
        },
        &shared,
    );
}

#[cfg(unix)]
fn wait_child(_child: WaitChild, shared: &Shared) -> ExitStatus {
    let Some(pid) = shared.pid.and_then(|p| i32::try_from(p).ok()) else {
        shared.lock().reaped = true;
        return ExitStatus::default();
    };
    // Wait without reaping first: the pid stays ours (a zombie) until `reaped` is set under the
    // lock, so a concurrent kill never signals a recycled pid.
    loop {
        // SAFETY: waitid with a zeroed out-struct of the right type.
        let r = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break;
        }
    }
    let mut st = shared.lock();
    st.reaped = true;
    let mut status = 0;
    // SAFETY: waitpid on our own child with a valid out-pointer.
    let r = unsafe { libc::waitpid(pid, &mut status, 0) };
    drop(st);
    if r != pid {
        tracing::warn!(pid, "could not wait for a terminal's process");
        return ExitStatus::default();
    }
    decode_wait_status(status, shared.supervised)
}

#[cfg(not(unix))]
fn wait_child(mut child: WaitChild, shared: &Shared) -> ExitStatus {
    let status = child.wait();
    shared.lock().reaped = true;
    match status {
        Ok(s) => ExitStatus::new().exit_code(s.exit_code()),
        Err(_) => ExitStatus::default(),
    }
}

#[cfg(unix)]
fn decode_wait_status(status: i32, supervised: bool) -> ExitStatus {
    if libc::WIFSIGNALED(status) {
        return ExitStatus::new().signal(signal_name(libc::WTERMSIG(status)));
    }
    let code = libc::WEXITSTATUS(status);
    // The supervisor exits 128 + N for a command killed by signal N.
    if supervised && (129..160).contains(&code) {
        return ExitStatus::new().signal(signal_name(code - 128));
    }
    ExitStatus::new().exit_code(code as u32)
}

#[cfg(unix)]
fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return format!("SIG{sig}"),
    };
    name.to_string()
}

/// Characters that make a lone `command` a shell line rather than a program name.
const SHELL_SYNTAX: &[char] = &[
    ' ', '\t', '\n', '|', '&', ';', '<', '>', '(', ')', '$', '`', '\\', '"', '\'', '*', '?', '[',
    '#', '~', '=', '%', '{', '}', '!',
];

/// The program to start and its arguments (see the module doc on shell lines).
fn plan_command(req: &TerminalRequest) -> Result<(PathBuf, Vec<String>), TerminalError> {
    if req.command.trim().is_empty() {
        return Err(TerminalError::NotFound {
            command: req.command.clone(),
            where_: " (the command is empty)".into(),
        });
    }
    let path_override = req
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str());
    if req.args.is_empty() && req.command.contains(SHELL_SYNTAX) {
        // A path to a program whose name has spaces (`/opt/My Tools/run`) is that program, not
        // a shell line that would split it.
        if req.command.contains('/') {
            let program = req.cwd.join(&req.command);
            if is_executable_file(&program) {
                return Ok((program, Vec::new()));
            }
        }
        let shell =
            resolve("bash", &req.cwd, path_override).unwrap_or_else(|_| PathBuf::from("/bin/sh"));
        return Ok((shell, vec!["-c".into(), req.command.clone()]));
    }
    Ok((
        resolve(&req.command, &req.cwd, path_override)?,
        req.args.clone(),
    ))
}

/// Whether `p` is a regular file (symlinks followed) that may be executed.
fn is_executable_file(p: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(p) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    meta.is_file()
}

/// `process::resolve_command`, in the request's `PATH` when it sets one.
fn resolve(command: &str, cwd: &Path, path: Option<&str>) -> Result<PathBuf, TerminalError> {
    let not_found = |where_: &str| TerminalError::NotFound {
        command: command.into(),
        where_: where_.into(),
    };
    let p = Path::new(command);
    let Some(path) = path.filter(|_| p.components().count() == 1 && !p.is_absolute()) else {
        return process::resolve_command(command, cwd).map_err(|e| match e {
            process::SpawnError::NotFound { where_, .. } => not_found(&where_),
            other => TerminalError::Spawn {
                command: command.into(),
                message: other.to_string(),
            },
        });
    };
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .filter_map(|dir| dir.join(command).to_str().map(str::to_owned))
        .find_map(|candidate| process::resolve_command(&candidate, cwd).ok())
        .ok_or_else(|| not_found(" on the PATH the agent gave"))
}

/// A command started by [`Terminals::start`], waiting to be [`Terminals::adopt`]ed.
pub struct Started {
    req: TerminalRequest,
    program: PathBuf,
    args: Vec<String>,
    limit: usize,
    spawned: Spawned,
}

struct Spawned {
    master: Box<dyn MasterPty + Send>,
    reader: Box<dyn Read + Send>,
    pid: Option<u32>,
    supervised: bool,
    #[cfg(not(unix))]
    child: Box<dyn portable_pty::Child + Send + Sync>,
}

fn spawn_error(command: &str, e: impl std::fmt::Display) -> TerminalError {
    TerminalError::Spawn {
        command: command.into(),
        message: e.to_string(),
    }
}

/// What [`spawn`] starts on a new pty.
struct PtyCommand<'a> {
    /// As the caller named it, for error messages.
    command: &'a str,
    program: &'a Path,
    args: &'a [String],
    /// Set over our own environment, in order.
    env: &'a [(String, String)],
    cwd: &'a Path,
    size: PtySize,
    /// The command's process group becomes the pty's foreground group (it reads the keyboard;
    /// Ctrl-C reaches it): interactive terminals only.
    foreground: bool,
}

fn spawn(pty: &PtyCommand<'_>, opts: &TerminalOptions) -> Result<Spawned, TerminalError> {
    let PtyCommand {
        command,
        program,
        args,
        env,
        cwd,
        size,
        foreground,
    } = *pty;
    let err = |e: &dyn std::fmt::Display| spawn_error(command, e);
    #[cfg(target_os = "linux")]
    let (mut cmd, supervised) = {
        // Like agents (ARCHITECTURE.md, invariant 8): without it a command's setsid children
        // could outlive the session, so refuse rather than run half-guarded.
        let sup = opts
            .supervisor
            .as_ref()
            .ok_or(TerminalError::NoSupervisor)?;
        let mut cmd = CommandBuilder::new(sup);
        cmd.arg("--grace-ms");
        cmd.arg(opts.kill_grace.as_millis().to_string());
        if foreground {
            cmd.arg("--foreground");
        }
        cmd.arg("--");
        cmd.arg(program);
        cmd.args(args);
        (cmd, true)
    };
    #[cfg(not(target_os = "linux"))]
    let (mut cmd, supervised) = {
        // Elsewhere the command is the pty's session leader, so its group is the foreground one.
        let _ = (&opts.supervisor, foreground);
        let mut cmd = CommandBuilder::new(program);
        cmd.args(args);
        (cmd, false)
    };
    // CommandBuilder starts from our own environment; the agent's variables go over it.
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.cwd(cwd);

    let pair = portable_pty::native_pty_system()
        .openpty(size)
        .map_err(|e| err(&e))?;
    let child = pair.slave.spawn_command(cmd).map_err(|e| err(&e))?;
    // Only the child may hold the slave: the reader sees EOF once the child's side is closed.
    drop(pair.slave);
    let reader = match pair.master.try_clone_reader() {
        Ok(r) => r,
        Err(e) => {
            // Dropping the master hangs the tty up, which ends the command (SIGHUP to the
            // session leader); someone still has to reap it.
            let mut child = child;
            std::thread::spawn(move || {
                let _ = child.wait();
            });
            return Err(err(&e));
        }
    };
    let pid = child.process_id();
    // Unix: the waiter uses waitid/waitpid on the pid; the std Child inside does nothing on drop.
    #[cfg(unix)]
    drop(child);
    Ok(Spawned {
        master: pair.master,
        reader,
        pid,
        supervised,
        #[cfg(not(unix))]
        child,
    })
}
