//! An interactive terminal: a command on a pty that a person types into (a terminal login,
//! `auth::login_spec`). The agents' terminals ([`super::Terminals`]) only show output; this
//! one also takes input bytes and resizes, and its command owns the keyboard.
//!
//! It is the same machinery as an agent's terminal, not a copy: the pty and the supervisor
//! ([`super::spawn`], with `--foreground`), the reader (streaming UTF-8 decoding, coalesced
//! deltas, backpressure), the waiter (one exit status, after the output is drained) and the
//! kill of the whole tree (SIGTERM, the grace, SIGKILL; the pty master as the lifeline when ACP
//! Desk dies). What differs:
//!
//! - **Foreground.** The command's process group is made the pty's foreground group before it
//!   runs (the supervisor's `--foreground`), so it may read the keyboard (no SIGTTIN) and
//!   Ctrl-C (`\x03` written as input) reaches it, not the supervisor.
//! - **Input** goes through a writer thread with a bounded queue ([`INPUT_QUEUE`] writes):
//!   writing to a pty blocks once the program stops reading, and a caller (the window's
//!   `login_input`) must never wait on that. A full queue is an error the caller shows.
//! - **Size** is the caller's (the window's terminal box) and follows it ([`Interactive::resize`],
//!   which the program sees as SIGWINCH and `stty size`).
//! - **No kept output**: every chunk goes once to [`InteractiveOutput`]; nothing is retained.
//! - **The command** is run as given (`program` + `args`, looked up on `PATH`, the env's own
//!   `PATH` first when it sets one): no shell line, since it comes from our own LoginSpec.
//!
//! Dropping the [`Interactive`] ends the command and everything it started.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc as std_mpsc;

use agent_client_protocol_schema::v1 as acp;
use portable_pty::PtySize;
use tokio::sync::mpsc;

use super::{
    ExitStatus, PtyCommand, Run, SharedMaster, Terminal, TerminalError, TerminalEvent,
    TerminalOptions, release, resolve, spawn,
};

/// Writes waiting for the program to read them. A person types far slower than any program
/// reads; this only fills when the program has stopped reading its terminal.
pub const INPUT_QUEUE: usize = 256;
/// Output events waiting for the consumer; a full queue pauses the program (backpressure).
const OUTPUT_QUEUE: usize = 64;
/// The smallest terminal accepted: a box too small to show a line is a caller's bug, and a
/// zero size confuses programs (`stty size` says `0 0`, curses divides by it).
pub const MIN_COLS: u16 = 2;
pub const MIN_ROWS: u16 = 1;

/// A terminal's size in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermSize {
    pub cols: u16,
    pub rows: u16,
}

impl TermSize {
    fn pty(self) -> Result<PtySize, InteractiveError> {
        if self.cols < MIN_COLS || self.rows < MIN_ROWS {
            return Err(InteractiveError::BadSize {
                cols: self.cols,
                rows: self.rows,
            });
        }
        Ok(PtySize {
            rows: self.rows,
            cols: self.cols,
            pixel_width: 0,
            pixel_height: 0,
        })
    }
}

/// What to run. `Debug` shows env names only: values may be secrets (read from the keychain
/// for this spawn).
#[derive(Clone)]
pub struct InteractiveCommand {
    pub program: String,
    pub args: Vec<String>,
    /// Set over our own environment, in order.
    pub env: Vec<(String, String)>,
    /// Absolute, an existing folder.
    pub cwd: PathBuf,
    pub size: TermSize,
}

impl std::fmt::Debug for InteractiveCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InteractiveCommand")
            .field("program", &self.program)
            .field("args", &self.args.len())
            .field(
                "env",
                &crate::agents::EnvNames(self.env.iter().map(|(k, _)| k.as_str())),
            )
            .field("cwd", &self.cwd)
            .field("size", &self.size)
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum InteractiveError {
    /// It could not start (program not found, bad folder, no supervisor, the pty).
    #[error(transparent)]
    Start(#[from] TerminalError),
    #[error(
        "a terminal of {cols}×{rows} is too small (at least {MIN_COLS}×{MIN_ROWS}): make the terminal's box larger"
    )]
    BadSize { cols: u16, rows: u16 },
    /// Input after the program has ended (or closed its terminal).
    #[error("the program has ended: what was typed did not reach it")]
    Ended,
    #[error(
        "the program is not reading what is typed ({INPUT_QUEUE} writes are waiting): wait for it, or cancel it"
    )]
    InputFull,
    #[error("the terminal could not be resized: {0}")]
    Resize(String),
}

/// One thing the terminal said, in order: `Output`s, then one `Exited`, then nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InteractiveEvent {
    /// Text decoded from the pty (UTF-8, a character split across reads completed by the next).
    Output(String),
    /// How the command ended: `exitCode`, or `signal` ("SIGTERM" after a kill).
    Exited(ExitStatus),
}

/// The output side of an [`Interactive`].
#[derive(Debug)]
pub struct InteractiveOutput {
    rx: mpsc::Receiver<TerminalEvent>,
}

impl InteractiveOutput {
    /// The next event; `None` after `Exited` (or when the terminal was dropped first).
    pub async fn next(&mut self) -> Option<InteractiveEvent> {
        match self.rx.recv().await? {
            TerminalEvent::Output { data, .. } => Some(InteractiveEvent::Output(data)),
            TerminalEvent::Exited { exit_status, .. } => {
                self.rx.close();
                Some(InteractiveEvent::Exited(exit_status))
            }
        }
    }
}

/// A command running on a pty with the keyboard. Dropping it ends the command's whole tree.
pub struct Interactive {
    id: acp::TerminalId,
    terminal: Option<Terminal>,
    master: SharedMaster,
    input: std_mpsc::SyncSender<Vec<u8>>,
}

impl std::fmt::Debug for Interactive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interactive")
            .field("id", &self.id.to_string())
            .field("pid", &self.pid())
            .finish()
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Interactive {
    /// Starts `command` on a new pty of its size. Blocks on the file system and on starting
    /// the process (run it on the blocking pool); needs a Tokio runtime. Output and the exit
    /// arrive on the [`InteractiveOutput`].
    pub fn start(
        command: InteractiveCommand,
        opts: &TerminalOptions,
    ) -> Result<(Interactive, InteractiveOutput), InteractiveError> {
        let size = command.size.pty()?;
        let cwd = &command.cwd;
        if !cwd.is_absolute() {
            return Err(TerminalError::BadCwd {
                cwd: cwd.clone(),
                reason: "is not an absolute path",
            }
            .into());
        }
        if !cwd.is_dir() {
            return Err(TerminalError::BadCwd {
                cwd: cwd.clone(),
                reason: "is not a folder",
            }
            .into());
        }
        if command.program.trim().is_empty() {
            return Err(TerminalError::NotFound {
                command: command.program.clone(),
                where_: " (the command is empty)".into(),
            }
            .into());
        }
        let path_override = command
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.as_str());
        let program = resolve(&command.program, cwd, path_override)?;
        let spawned = spawn(
            &PtyCommand {
                command: &command.program,
                program: &program,
                args: &command.args,
                env: &command.env,
                cwd,
                size,
                foreground: true,
            },
            opts,
        )?;
        let writer = spawned
            .master
            .take_writer()
            .map_err(|e| super::spawn_error(&command.program, e))?;
        let id = acp::TerminalId::new(format!(
            "interactive-{}",
            NEXT_ID.fetch_add(1, Ordering::Relaxed)
        ));
        let (events, rx) = mpsc::channel(OUTPUT_QUEUE);
        // If anything below fails, dropping `spawned` (or the running terminal) closes the
        // pty, which hangs up and so ends the command.
        let running = super::run(
            Run {
                id: &id,
                command: &command.program,
                program: &program,
                args: command.args.len(),
                limit: 0,
                kill_grace: opts.kill_grace,
                events,
            },
            spawned,
        )?;
        let (input, queue) = std_mpsc::sync_channel::<Vec<u8>>(INPUT_QUEUE);
        let wrote = std::thread::Builder::new()
            .name(format!("terminal-write-{id}"))
            .spawn(move || write_loop(writer, queue));
        if let Err(e) = wrote {
            release(running.terminal);
            return Err(super::spawn_error(&command.program, e).into());
        }
        Ok((
            Interactive {
                id,
                terminal: Some(running.terminal),
                master: running.master,
                input,
            },
            InteractiveOutput { rx },
        ))
    }

    /// Sends `bytes` to the program as if typed (`\r` is Enter, `\x03` Ctrl-C). Never blocks:
    /// queued for the writer thread.
    pub fn write(&self, bytes: &[u8]) -> Result<(), InteractiveError> {
        if bytes.is_empty() {
            return Ok(());
        }
        if self.exit_status().is_some() {
            return Err(InteractiveError::Ended);
        }
        self.input.try_send(bytes.to_vec()).map_err(|e| match e {
            std_mpsc::TrySendError::Full(_) => InteractiveError::InputFull,
            std_mpsc::TrySendError::Disconnected(_) => InteractiveError::Ended,
        })
    }

    /// The terminal's new size; the program gets SIGWINCH. After the exit it does nothing.
    pub fn resize(&self, size: TermSize) -> Result<(), InteractiveError> {
        let size = size.pty()?;
        if self.exit_status().is_some() {
            return Ok(());
        }
        self.master
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .resize(size)
            .map_err(|e| InteractiveError::Resize(e.to_string()))
    }

    /// Ends the program and everything it started (SIGTERM, the grace, SIGKILL). Returns at
    /// once; the exit arrives as usual (`signal: SIGTERM` or `SIGKILL`, or the program's own
    /// code when it handled SIGTERM and exited).
    pub fn kill(&self) {
        if let Some(t) = &self.terminal {
            t.shared.terminate();
        }
    }

    /// The process started (the supervisor's on Linux: the root of the tree).
    pub fn pid(&self) -> Option<u32> {
        self.terminal.as_ref().and_then(|t| t.shared.pid)
    }

    /// The exit status, once the program has ended and its output was read.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.terminal
            .as_ref()
            .and_then(|t| t.exit_rx.borrow().clone())
    }

    /// A future for the exit status, independent of `self`.
    pub fn wait(&self) -> impl Future<Output = ExitStatus> + Send + use<> {
        let rx = self.terminal.as_ref().map(|t| t.exit_rx.clone());
        async move {
            let Some(mut rx) = rx else {
                return ExitStatus::default();
            };
            match rx.wait_for(Option::is_some).await {
                Ok(s) => s.clone().unwrap_or_default(),
                Err(_) => ExitStatus::default(),
            }
        }
    }
}

impl Drop for Interactive {
    fn drop(&mut self) {
        if let Some(t) = self.terminal.take() {
            release(t);
        }
    }
}

fn write_loop(mut writer: Box<dyn std::io::Write + Send>, queue: std_mpsc::Receiver<Vec<u8>>) {
    while let Ok(bytes) = queue.recv() {
        // EIO once the program has closed the terminal: nobody reads any more.
        if writer
            .write_all(&bytes)
            .and_then(|()| writer.flush())
            .is_err()
        {
            break;
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests;
