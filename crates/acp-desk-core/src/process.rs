//! Agent processes: spawning (through the supervisor on Linux), stderr capture, and ending the
//! whole process tree.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::agents::LaunchSpec;

/// How many stderr lines are kept for the message shown when an agent dies.
pub const STDERR_TAIL_LINES: usize = 40;
/// Longest stderr line kept (agents print whole stack traces and JSON blobs on one line).
pub const STDERR_LINE_MAX: usize = 2000;

#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error(
        "the agent command `{command}` was not found{where_}. Install the agent, or give its full path."
    )]
    NotFound { command: String, where_: String },
    /// The program is there but may not be run: no execute permission, or a folder. Found
    /// before spawning: through the supervisor the OS's refusal would only be its exit code.
    #[error(
        "the agent command `{command}` ({}) is not executable. Make it executable (`chmod +x`), or run it through its interpreter (`node FILE`, `python3 FILE`).",
        path.display()
    )]
    NotExecutable { command: String, path: PathBuf },
    #[error(
        "acp-desk-supervisor was not found next to this program; reinstall ACP Desk (developers: `cargo build --workspace --bins`), or set ACP_DESK_SUPERVISOR to its path"
    )]
    NoSupervisor,
    #[error("could not start the agent `{command}`: {source}")]
    Io {
        command: String,
        source: std::io::Error,
    },
}

#[derive(Debug, Clone, Copy)]
pub struct ProcessOptions {
    /// After closing the agent's stdin, how long it gets to exit by itself before SIGTERM.
    pub eof_grace: Duration,
    /// Between SIGTERM and SIGKILL.
    pub term_grace: Duration,
}

impl Default for ProcessOptions {
    fn default() -> Self {
        Self {
            // Well-behaved agents exit on EOF within milliseconds; several real ones never do
            // (notes/real-agents.md), so waiting longer only delays closing.
            eof_grace: Duration::from_millis(500),
            // Time for an agent to flush its own state (session files) on SIGTERM.
            term_grace: Duration::from_millis(2000),
        }
    }
}

/// A running agent. Dropping it ends the agent's whole process tree (on Linux through the
/// supervisor's lifeline; elsewhere by killing the process group or the process).
pub struct AgentProcess {
    child: Child,
    opts: ProcessOptions,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    supervised: bool,
    /// Write end of the supervisor's lifeline pipe: closing it ends the tree.
    #[cfg(target_os = "linux")]
    lifeline: Option<std::os::fd::OwnedFd>,
    exit: Option<std::process::ExitStatus>,
    /// The agent's process group (non-Linux Unix), kept past the leader's exit.
    #[cfg(all(unix, not(target_os = "linux")))]
    pgid: Option<i32>,
}

pub struct Spawned {
    pub process: AgentProcess,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
}

/// Looks a command up the way `execvp` would, so a missing agent gets a clear error at once
/// instead of a process that dies on start.
pub fn resolve_command(command: &str, cwd: &Path) -> Result<PathBuf, SpawnError> {
    let p = Path::new(command);
    if p.components().count() > 1 || p.is_absolute() {
        let full = if p.is_absolute() {
            p.to_path_buf()
        } else {
            cwd.join(p)
        };
        return if is_executable(&full) {
            Ok(full)
        } else if full.exists() {
            Err(SpawnError::NotExecutable {
                command: command.into(),
                path: full,
            })
        } else {
            Err(SpawnError::NotFound {
                command: command.into(),
                where_: String::new(),
            })
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    // A file of that name that may not be run: said when nothing runnable is found (execvp
    // would skip it too).
    let mut not_executable = None;
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(command);
        if is_executable(&candidate) {
            return Ok(candidate);
        }
        if not_executable.is_none() && candidate.is_file() {
            not_executable = Some(candidate.clone());
        }
        #[cfg(windows)]
        for ext in ["exe", "cmd", "bat"] {
            let c = candidate.with_extension(ext);
            if c.is_file() {
                return Ok(c);
            }
        }
    }
    match not_executable {
        Some(path) => Err(SpawnError::NotExecutable {
            command: command.into(),
            path,
        }),
        None => Err(SpawnError::NotFound {
            command: command.into(),
            where_: " on PATH".into(),
        }),
    }
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// Where `acp-desk-supervisor` is: `ACP_DESK_SUPERVISOR`, else next to the running executable
/// (or one folder up, for test binaries in `target/*/deps`).
pub fn supervisor_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ACP_DESK_SUPERVISOR") {
        return Some(PathBuf::from(p));
    }
    sibling_executable("acp-desk-supervisor")
}

/// An executable of ours installed next to the running one (the cargo target folder in
/// development, the app's folder or sidecars in packages).
pub fn sibling_executable(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let file = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    let dir = exe.parent()?;
    [Some(dir), dir.parent()]
        .into_iter()
        .flatten()
        .map(|d| d.join(&file))
        .find(|p| p.is_file())
}

impl AgentProcess {
    pub fn spawn(
        spec: &LaunchSpec,
        cwd: &Path,
        opts: ProcessOptions,
    ) -> Result<Spawned, SpawnError> {
        let program = resolve_command(&spec.command, spec.cwd.as_deref().unwrap_or(cwd))?;
        let workdir = spec.cwd.as_deref().unwrap_or(cwd);
        let io_err = |source| SpawnError::Io {
            command: spec.command.clone(),
            source,
        };

        #[cfg(target_os = "linux")]
        let (mut cmd, lifeline, supervised) = match supervisor_path() {
            Some(sup) => {
                let (read_end, write_end) = lifeline_pipe().map_err(io_err)?;
                let mut cmd = tokio::process::Command::new(sup);
                cmd.arg("--lifeline-fd")
                    .arg(std::os::fd::AsRawFd::as_raw_fd(&read_end).to_string())
                    .arg("--grace-ms")
                    .arg(opts.term_grace.as_millis().to_string())
                    .arg("--")
                    .arg(&program)
                    .args(&spec.args);
                let raw = std::os::fd::AsRawFd::as_raw_fd(&read_end);
                // SAFETY: fcntl on an fd we own, between fork and exec (async-signal-safe).
                unsafe {
                    cmd.pre_exec(move || {
                        // Only this child may inherit the read end.
                        if libc::fcntl(raw, libc::F_SETFD, 0) < 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                        Ok(())
                    });
                }
                // The read end closes in our process when `read_end` drops after spawn.
                (cmd, Some((read_end, write_end)), true)
            }
            None => {
                // Without it an agent's leftovers could keep its output open and outlive the
                // session: refuse rather than run agents half-guarded.
                return Err(SpawnError::NoSupervisor);
            }
        };
        #[cfg(not(target_os = "linux"))]
        let (mut cmd, supervised) = {
            // Unverified on macOS and Windows (only Linux builds here): the agent gets its own
            // process group (Unix) and is killed with it; Windows kills the process (a job
            // object would be the real fix).
            let mut cmd = tokio::process::Command::new(&program);
            cmd.args(&spec.args);
            (cmd, false)
        };

        cmd.current_dir(workdir)
            .envs(spec.env.iter().filter_map(|(k, v)| match v {
                crate::secrets::EnvValue::Plain(text) => Some((k, text)),
                // `session::start` reads every secret before the spawn; one left here was
                // never read: unset rather than its name as the value.
                crate::secrets::EnvValue::Secret(_) => {
                    tracing::warn!(
                        "env {k} of the agent is a secret that was not read: left unset"
                    );
                    None
                }
            }))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Never for the supervisor: killing it outright would orphan the tree it is ending.
            .kill_on_drop(!supervised);
        // Its own process group: a Ctrl-C in ACP Desk's terminal is ours to handle (as
        // session/cancel), not the agent's.
        #[cfg(unix)]
        cmd.process_group(0);
        #[cfg(windows)]
        {
            const CREATE_NO_WINDOW: u32 = 0x0800_0000;
            cmd.creation_flags(CREATE_NO_WINDOW);
        }

        let mut child = cmd.spawn().map_err(io_err)?;
        #[cfg(target_os = "linux")]
        let lifeline = lifeline.map(|(read_end, write_end)| {
            drop(read_end);
            write_end
        });

        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| io_err(std::io::Error::other("no stdin")))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io_err(std::io::Error::other("no stdout")))?;
        let stderr_tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL_LINES)));
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(pump_stderr(stderr, spec.name.clone(), stderr_tail.clone()));
        }
        // The program, never its arguments or environment: either may hold a key.
        tracing::info!(
            agent = %spec.name,
            pid = child.id(),
            supervised,
            args = spec.args.len(),
            "started {}",
            program.display(),
        );
        #[cfg(all(unix, not(target_os = "linux")))]
        let pgid = child.id().map(|p| p as i32);
        Ok(Spawned {
            process: AgentProcess {
                child,
                opts,
                stderr_tail,
                supervised,
                #[cfg(target_os = "linux")]
                lifeline,
                exit: None,
                #[cfg(all(unix, not(target_os = "linux")))]
                pgid,
            },
            stdin,
            stdout,
        })
    }

    pub fn is_supervised(&self) -> bool {
        self.supervised
    }

    /// The pid we started: the supervisor's on Linux, the agent's elsewhere.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The last lines the agent wrote to stderr.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr_tail
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Waits up to `timeout` for the process to exit.
    pub async fn wait_timeout(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        if let Some(s) = self.exit {
            return Some(s);
        }
        match tokio::time::timeout(timeout, self.child.wait()).await {
            Ok(Ok(status)) => {
                self.exit = Some(status);
                Some(status)
            }
            _ => None,
        }
    }

    /// Ends the agent and everything it started: (stdin is already closed by the caller) a short
    /// wait for a voluntary exit, SIGTERM, the grace period, SIGKILL.
    pub async fn terminate(&mut self) -> Option<std::process::ExitStatus> {
        if let Some(s) = self.wait_timeout(self.opts.eof_grace).await {
            return Some(s);
        }
        self.signal_term();
        // The supervisor does its own SIGTERM → grace → SIGKILL of the tree; give it that long
        // plus a margin before killing it outright.
        let budget = self.opts.term_grace + Duration::from_millis(1500);
        if let Some(s) = self.wait_timeout(budget).await {
            return Some(s);
        }
        tracing::warn!("agent did not stop after SIGTERM; killing it");
        self.kill_now();
        self.wait_timeout(Duration::from_secs(2)).await
    }

    /// Ends the agent at once (SIGKILL of the tree), for a deaf agent.
    pub async fn kill(&mut self) -> Option<std::process::ExitStatus> {
        self.kill_now();
        self.wait_timeout(self.opts.term_grace + Duration::from_secs(2))
            .await
    }

    fn signal_term(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.child.id() {
            // Supervised: the supervisor forwards it to the tree. Unsupervised: the agent's group.
            let target = if self.supervised {
                pid as i32
            } else {
                -(pid as i32)
            };
            // SAFETY: kill(2) on our own child (or its process group).
            unsafe {
                libc::kill(target, libc::SIGTERM);
            }
        }
        #[cfg(not(unix))]
        {
            let _ = self.child.start_kill();
        }
    }

    fn kill_now(&mut self) {
        #[cfg(target_os = "linux")]
        if self.supervised {
            // SIGUSR1 asks the supervisor to SIGKILL the tree at once; the closed lifeline is the
            // fallback should the signal be lost.
            self.lifeline = None;
            if let Some(pid) = self.child.id() {
                // SAFETY: kill(2) on our own child.
                unsafe {
                    libc::kill(pid as i32, libc::SIGUSR1);
                }
            }
            return;
        }
        #[cfg(unix)]
        if let Some(pid) = self.child.id() {
            // SAFETY: kill(2) on our own child's process group.
            unsafe {
                libc::kill(-(pid as i32), libc::SIGKILL);
            }
        }
        let _ = self.child.start_kill();
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        // Linux: closing the lifeline tells the supervisor to end the tree (SIGTERM, grace,
        // SIGKILL); it must go before anything else could signal the supervisor.
        #[cfg(target_os = "linux")]
        drop(self.lifeline.take());
        // Elsewhere kill the group, even when its leader has exited (its children may not
        // have); `kill_on_drop` covers the process itself.
        #[cfg(all(unix, not(target_os = "linux")))]
        if let Some(pgid) = self.pgid {
            // SAFETY: kill(2) on the process group we created for the agent.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

#[cfg(target_os = "linux")]
fn lifeline_pipe() -> std::io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 writes two fds into the array; both are owned by us afterwards. O_CLOEXEC so
    // that no other child we start inherits the write end (which would keep the lifeline alive).
    let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fresh fds from pipe2, owned exactly once each.
    unsafe {
        Ok((
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        ))
    }
}

async fn pump_stderr(
    stderr: tokio::process::ChildStderr,
    agent: String,
    tail: Arc<Mutex<VecDeque<String>>>,
) {
    let mut lines = BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match lines.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let mut line = String::from_utf8_lossy(&buf).trim_end().to_string();
        if line.len() > STDERR_LINE_MAX {
            let mut cut = STDERR_LINE_MAX;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push('…');
        }
        tracing::debug!(target: "agent_stderr", agent = %agent, "{line}");
        if let Ok(mut t) = tail.lock() {
            if t.len() == STDERR_TAIL_LINES {
                t.pop_front();
            }
            t.push_back(line);
        }
    }
}

/// Whether `pid` is a process that runs: a zombie has ended (it only waits to be reaped, and
/// PID 1 of a container may never reap it). Reads `/proc`; for tests and diagnostics.
#[cfg(target_os = "linux")]
pub fn is_running(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    let state = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next())
        .unwrap_or("");
    !state.is_empty() && state != "Z" && state != "X"
}

/// The exit code and the signal of an exit status, as `describe_exit` reads them (the
/// supervisor reports an agent killed by a signal as 128 + signal). `(None, None)`: it had not
/// exited.
pub fn exit_parts(status: Option<std::process::ExitStatus>) -> (Option<i32>, Option<i32>) {
    let Some(s) = status else {
        return (None, None);
    };
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = s.signal() {
            return (None, Some(sig));
        }
    }
    match s.code() {
        Some(c) if c > 128 && c < 160 => (None, Some(c - 128)),
        code => (code, None),
    }
}

/// "exited with code 3" / "was killed by signal 9", for messages.
pub fn describe_exit(status: Option<std::process::ExitStatus>) -> String {
    match status {
        None => "is not responding".into(),
        Some(s) => {
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                if let Some(sig) = s.signal() {
                    return format!("was killed by signal {sig}");
                }
            }
            match s.code() {
                // The supervisor reports an agent killed by a signal as 128 + signal.
                Some(c) if c > 128 && c < 160 => format!("was killed by signal {}", c - 128),
                Some(c) => format!("exited with code {c}"),
                None => "exited".into(),
            }
        }
    }
}
