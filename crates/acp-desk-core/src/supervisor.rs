//! `acp-desk-supervisor`: a small process between ACP Desk and each agent (Linux).
//!
//! Why it exists: agents are process trees (`npx` → `node` → the agent → its tools), several
//! ignore stdin EOF, some tools call `setsid` to leave their process group, and
//! `PR_SET_PDEATHSIG` only reaches a direct child (and fires when the *thread* that spawned it
//! exits, not the process). The supervisor:
//!
//! - is a child subreaper (`PR_SET_CHILD_SUBREAPER`), so every descendant that is orphaned,
//!   setsid or not, is reparented to it and stays findable;
//! - holds the read end of a "lifeline" pipe whose write end only ACP Desk holds: when ACP Desk
//!   dies (even by SIGKILL) or drops the agent, the pipe reads EOF and the supervisor ends the
//!   whole tree;
//! - on SIGTERM (a polite close) sends SIGTERM to every descendant, waits the grace period, then
//!   SIGKILLs whatever is left, and repeats until nothing is left; on SIGUSR1 it does the same
//!   with no grace period;
//! - when the agent exits by itself, ends what it left behind the same way and exits with the
//!   agent's status (`128 + signal` when it was killed by one).
//!
//! Usage: `acp-desk-supervisor --lifeline-fd N --grace-ms MS [--foreground] -- COMMAND ARGS...`
//! stdin, stdout and stderr pass straight through to the agent. `--foreground` (an interactive
//! terminal, `terminal::interactive`): the command's own process group becomes the foreground
//! group of the controlling terminal, so it may read the keyboard and Ctrl-C reaches it (not
//! the supervisor), as in a shell.

#[cfg(target_os = "linux")]
pub use linux::{live_descendants, main};

/// The exit code the supervisor uses when it could not start the agent at all.
pub const EXIT_SPAWN_FAILED: i32 = 127;

/// How the supervisor's stderr line begins when the OS refused to run the agent's program
/// (then the program, then the OS's reason): Check reads it (`agents/check.rs`).
pub const SPAWN_FAILED_LINE: &str = "acp-desk-supervisor: could not start";

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::{HashMap, HashSet};
    use std::os::unix::process::CommandExt;
    use std::time::{Duration, Instant};

    use super::EXIT_SPAWN_FAILED;

    struct Args {
        lifeline_fd: i32,
        grace: Duration,
        foreground: bool,
        command: Vec<String>,
    }

    fn parse_args() -> Result<Args, String> {
        let mut args = std::env::args().skip(1);
        let mut lifeline_fd = -1;
        let mut grace = Duration::from_millis(2000);
        let mut foreground = false;
        while let Some(a) = args.next() {
            match a.as_str() {
                "--foreground" => foreground = true,
                "--lifeline-fd" => {
                    lifeline_fd = args
                        .next()
                        .and_then(|v| v.parse().ok())
                        .ok_or("--lifeline-fd needs a number")?;
                }
                "--grace-ms" => {
                    grace = Duration::from_millis(
                        args.next()
                            .and_then(|v| v.parse().ok())
                            .ok_or("--grace-ms needs a number")?,
                    );
                }
                "--" => {
                    let command: Vec<String> = args.collect();
                    if command.is_empty() {
                        return Err("no command after --".into());
                    }
                    return Ok(Args {
                        lifeline_fd,
                        grace,
                        foreground,
                        command,
                    });
                }
                other => return Err(format!("unknown argument {other}")),
            }
        }
        Err(
            "usage: acp-desk-supervisor --lifeline-fd N --grace-ms MS [--foreground] -- COMMAND ARGS..."
                .into(),
        )
    }

    pub fn main() -> i32 {
        let args = match parse_args() {
            Ok(a) => a,
            Err(e) => {
                eprintln!("acp-desk-supervisor: {e}");
                return 2;
            }
        };
        // SAFETY: plain syscalls on our own process, before any thread exists.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
            if args.lifeline_fd >= 0 {
                // The agent must not inherit the lifeline, or it would keep it open.
                libc::fcntl(args.lifeline_fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
        // SIGTERM, SIGINT, SIGHUP and SIGCHLD are read through a signalfd, so the main loop can
        // wait for signals and the lifeline together without async-signal-safety concerns.
        let sfd = match block_signals_into_fd() {
            Ok(fd) => fd,
            Err(e) => {
                eprintln!("acp-desk-supervisor: signalfd: {e}");
                return EXIT_SPAWN_FAILED;
            }
        };
        let mut cmd = std::process::Command::new(&args.command[0]);
        cmd.args(&args.command[1..]);
        let foreground = args.foreground;
        // SAFETY: only async-signal-safe calls (sigprocmask, setpgid, tcsetpgrp) between fork
        // and exec.
        unsafe {
            cmd.pre_exec(move || {
                // Its own process group: a Ctrl-C meant for ACP Desk's terminal never reaches it.
                libc::setpgid(0, 0);
                if foreground {
                    // A background group asking for the terminal gets SIGTTOU unless it is
                    // blocked: block it for this one call (the mask is cleared right after).
                    let mut ttou: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut ttou);
                    libc::sigaddset(&mut ttou, libc::SIGTTOU);
                    libc::sigprocmask(libc::SIG_BLOCK, &ttou, std::ptr::null_mut());
                    // Done in the child, before exec: the command cannot read the terminal
                    // before it owns it. Fails harmlessly without a controlling terminal.
                    libc::tcsetpgrp(0, libc::getpid());
                }
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
                Ok(())
            });
        }
        let child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("{} `{}`: {e}", super::SPAWN_FAILED_LINE, args.command[0]);
                return EXIT_SPAWN_FAILED;
            }
        };
        let agent = child.id() as i32;
        // The Child handle is not used for waiting: waitpid(-1) below reaps everything.
        std::mem::forget(child);

        loop {
            let mut fds = [
                libc::pollfd {
                    fd: sfd,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: args.lifeline_fd,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let nfds = if args.lifeline_fd >= 0 { 2 } else { 1 };
            // SAFETY: fds is a valid array of nfds pollfd structs.
            let r = unsafe { libc::poll(fds.as_mut_ptr(), nfds, -1) };
            if r < 0 {
                continue;
            }
            if nfds == 2 && fds[1].revents != 0 {
                // ACP Desk is gone or dropped the agent.
                return end_tree(args.grace, agent).unwrap_or(0);
            }
            if fds[0].revents != 0 {
                let sig = read_signal(sfd);
                if sig == libc::SIGCHLD {
                    if let Some(status) = reap_all(agent) {
                        end_tree(args.grace, -1);
                        return status;
                    }
                } else if sig == libc::SIGUSR1 {
                    // "Now": no grace period (ACP Desk's close_now, an agent deaf to cancel).
                    return end_tree(Duration::ZERO, agent).unwrap_or(128 + libc::SIGKILL);
                } else if sig > 0 {
                    return end_tree(args.grace, agent).unwrap_or(128 + sig);
                }
            }
        }
    }

    fn block_signals_into_fd() -> std::io::Result<i32> {
        // SAFETY: sigset manipulation and signalfd on our own process.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for s in [
                libc::SIGTERM,
                libc::SIGINT,
                libc::SIGHUP,
                libc::SIGCHLD,
                libc::SIGUSR1,
            ] {
                libc::sigaddset(&mut set, s);
            }
            libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(fd)
        }
    }

    fn read_signal(sfd: i32) -> i32 {
        // SAFETY: reading one signalfd_siginfo into a zeroed struct of the right size.
        unsafe {
            let mut info: libc::signalfd_siginfo = std::mem::zeroed();
            let n = libc::read(
                sfd,
                (&mut info as *mut libc::signalfd_siginfo).cast(),
                std::mem::size_of::<libc::signalfd_siginfo>(),
            );
            if n as usize == std::mem::size_of::<libc::signalfd_siginfo>() {
                info.ssi_signo as i32
            } else {
                -1
            }
        }
    }

    /// Reaps every exited child; returns the agent's exit status once it is among them.
    fn reap_all(agent: i32) -> Option<i32> {
        let mut agent_status = None;
        loop {
            let mut status = 0;
            // SAFETY: waitpid with a valid out-pointer.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                return agent_status;
            }
            if pid == agent {
                agent_status = Some(if libc::WIFEXITED(status) {
                    libc::WEXITSTATUS(status)
                } else if libc::WIFSIGNALED(status) {
                    128 + libc::WTERMSIG(status)
                } else {
                    1
                });
            }
        }
    }

    /// Every live (non-zombie) process below us, read from /proc.
    fn descendants() -> Vec<i32> {
        live_descendants(std::process::id() as i32)
    }

    /// Every live (non-zombie) process below `root`, read from /proc.
    pub fn live_descendants(root: i32) -> Vec<i32> {
        let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
        let mut zombies = HashSet::new();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<i32>().ok())
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // The command name may contain spaces and parentheses: fields start after the last ')'.
            let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                continue;
            };
            let mut fields = rest.split_whitespace();
            let state = fields.next().unwrap_or("");
            let Some(ppid) = fields.next().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            if state == "Z" || state == "X" {
                zombies.insert(pid);
            }
            children.entry(ppid).or_default().push(pid);
        }
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(p) = stack.pop() {
            if let Some(kids) = children.get(&p) {
                for &k in kids {
                    stack.push(k);
                    if !zombies.contains(&k) {
                        out.push(k);
                    }
                }
            }
        }
        out
    }

    fn signal_all(pids: &[i32], sig: i32) {
        for &p in pids {
            // SAFETY: kill(2) on a pid we found below us.
            unsafe {
                libc::kill(p, sig);
            }
        }
    }

    /// SIGTERM to the whole tree, the grace period, then SIGKILL until nothing is left.
    /// Returns the agent's exit status when it was reaped here (`agent` = -1: already reaped).
    fn end_tree(grace: Duration, agent: i32) -> Option<i32> {
        let mut status = reap_all(agent);
        let first = descendants();
        if first.is_empty() {
            return status;
        }
        signal_all(&first, libc::SIGTERM);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            status = status.or(reap_all(agent));
            if descendants().is_empty() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // Processes may fork while we kill; a few rounds catch the stragglers.
        for _ in 0..50 {
            let left = descendants();
            if left.is_empty() {
                break;
            }
            signal_all(&left, libc::SIGKILL);
            std::thread::sleep(Duration::from_millis(10));
            status = status.or(reap_all(agent));
        }
        // Killed processes become zombies a moment later; reap them all before we exit, or they
        // are left to an init that may never reap them.
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let mut st = 0;
            // SAFETY: waitpid with a valid out-pointer.
            let pid = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) };
            if pid == agent && status.is_none() {
                status = Some(if libc::WIFEXITED(st) {
                    libc::WEXITSTATUS(st)
                } else {
                    128 + libc::WTERMSIG(st)
                });
            }
            if pid < 0 || Instant::now() >= deadline {
                // No child left (ECHILD), or the budget is spent.
                break;
            }
            if pid == 0 {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        status
    }
}
