//! Interactive terminals with real programs on a real pty under the real supervisor. The
//! supervisor binary must be built (`cargo test -p acp-desk-core` builds it; with `--lib`
//! alone run `cargo build -p acp-desk-core --bins` first).

#![allow(clippy::unwrap_used)] // test code: a panic with the error is the failure report

use std::time::Duration;

use super::*;

/// Generous: the machine running the tests may be loaded; no test asserts a time.
const DEADLINE: Duration = Duration::from_secs(30);

fn opts() -> TerminalOptions {
    let opts = TerminalOptions::default();
    assert!(
        opts.supervisor.as_ref().is_some_and(|p| p.is_file()),
        "acp-desk-supervisor not built: run `cargo build -p acp-desk-core --bins`"
    );
    opts
}

fn sh(script: &str, cols: u16, rows: u16) -> InteractiveCommand {
    InteractiveCommand {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        env: Vec::new(),
        cwd: PathBuf::from("/"),
        size: TermSize { cols, rows },
    }
}

fn start(cmd: InteractiveCommand) -> (Interactive, InteractiveOutput) {
    Interactive::start(cmd, &opts()).unwrap()
}

/// Reads output until `want` is in it (returns all output so far).
async fn until(out: &mut InteractiveOutput, text: &mut String, want: &str) {
    tokio::time::timeout(DEADLINE, async {
        while !text.contains(want) {
            match out.next().await {
                Some(InteractiveEvent::Output(s)) => text.push_str(&s),
                Some(InteractiveEvent::Exited(status)) => {
                    panic!("exited ({status:?}) before printing {want:?}; output: {text:?}")
                }
                None => panic!("output ended before {want:?}; output: {text:?}"),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{want:?} never came; output: {text:?}"));
}

/// Reads the rest of the output and the exit status.
async fn to_exit(out: &mut InteractiveOutput, text: &mut String) -> ExitStatus {
    tokio::time::timeout(DEADLINE, async {
        loop {
            match out.next().await {
                Some(InteractiveEvent::Output(s)) => text.push_str(&s),
                Some(InteractiveEvent::Exited(status)) => return status,
                None => panic!("output ended without an exit; output: {text:?}"),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("never exited; output: {text:?}"))
}

fn is_live(pid: i32) -> bool {
    u32::try_from(pid).is_ok_and(crate::process::is_running)
}

async fn all_end(pids: &[i32]) {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while pids.iter().any(|&p| is_live(p)) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "still running: {:?}",
            pids.iter().filter(|&&p| is_live(p)).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn what_is_typed_reaches_a_program_reading_its_terminal() {
    let (term, mut out) = start(sh("read x; echo got:$x", 80, 24));
    // Typed before the program reads: the tty keeps it (and echoes it) until then.
    term.write(b"hello world\r").unwrap();
    let mut text = String::new();
    let status = to_exit(&mut out, &mut text).await;
    assert!(text.contains("got:hello world"), "{text:?}");
    // The terminal echoed the typing, as a terminal does.
    assert!(text.contains("hello world\r\n"), "{text:?}");
    assert_eq!(status, ExitStatus::new().exit_code(0));
    assert_eq!(term.exit_status(), Some(ExitStatus::new().exit_code(0)));
    // After the exit: refused, saying so.
    assert!(matches!(term.write(b"x"), Err(InteractiveError::Ended)));
    assert_eq!(out.next().await, None);
}

#[tokio::test]
async fn the_program_has_a_terminal_and_owns_the_keyboard() {
    // Its stdin and stdout are the tty, and its process group is the tty's foreground group
    // (`ps`'s tpgid), so it can read without SIGTTIN and Ctrl-C goes to it.
    let script = r#"[ -t 0 ] && [ -t 1 ] && echo tty:yes || echo tty:no
pg=$(ps -o pgid= -p $$ | tr -d ' '); fg=$(ps -o tpgid= -p $$ | tr -d ' ')
[ "$pg" = "$fg" ] && echo fg:yes || echo "fg:no($pg/$fg)""#;
    let (_term, mut out) = start(sh(script, 80, 24));
    let mut text = String::new();
    let status = to_exit(&mut out, &mut text).await;
    assert!(text.contains("tty:yes"), "{text:?}");
    assert!(text.contains("fg:yes"), "{text:?}");
    assert_eq!(status.exit_code, Some(0));
}

#[tokio::test]
async fn ctrl_c_typed_interrupts_the_program_not_the_supervisor() {
    let (term, mut out) = start(sh(
        "trap 'echo interrupted; exit 7' INT; echo ready; while :; do sleep 0.1; done",
        80,
        24,
    ));
    let mut text = String::new();
    until(&mut out, &mut text, "ready").await;
    term.write(b"\x03").unwrap();
    let status = to_exit(&mut out, &mut text).await;
    assert!(text.contains("interrupted"), "{text:?}");
    assert_eq!(status, ExitStatus::new().exit_code(7));
}

#[tokio::test]
async fn the_size_is_the_callers_and_a_resize_is_seen_by_stty() {
    let (term, mut out) = start(sh(
        "stty size; echo asked; read x; stty size; echo done",
        91,
        27,
    ));
    let mut text = String::new();
    until(&mut out, &mut text, "asked").await;
    assert!(text.contains("27 91"), "{text:?}");
    term.resize(TermSize {
        cols: 132,
        rows: 43,
    })
    .unwrap();
    term.write(b"\r").unwrap();
    let status = to_exit(&mut out, &mut text).await;
    assert!(text.contains("43 132"), "{text:?}");
    assert_eq!(status.exit_code, Some(0));
    // After the exit a resize is nothing to report; a nonsense size is refused all the same.
    term.resize(TermSize { cols: 10, rows: 5 }).unwrap();
    assert!(matches!(
        term.resize(TermSize { cols: 0, rows: 5 }),
        Err(InteractiveError::BadSize { .. })
    ));
}

#[tokio::test]
async fn a_resize_sends_sigwinch() {
    let (term, mut out) = start(sh(
        "trap 'echo winch:$(stty size)' WINCH; echo ready; read x",
        80,
        24,
    ));
    let mut text = String::new();
    until(&mut out, &mut text, "ready").await;
    term.resize(TermSize {
        cols: 100,
        rows: 30,
    })
    .unwrap();
    until(&mut out, &mut text, "winch:30 100").await;
    term.kill();
    to_exit(&mut out, &mut text).await;
}

#[tokio::test]
async fn kill_ends_the_whole_tree_and_reports_the_signal() {
    // A child in the program's group, one that left it (setsid), and the program itself, all
    // waiting on the terminal or forever.
    let (term, mut out) = start(sh(
        "sleep 300 & echo pid:$!; setsid sleep 301 & echo pid:$!; echo pid:$$; read x",
        80,
        24,
    ));
    let mut text = String::new();
    until(&mut out, &mut text, "pid:").await;
    let deadline = tokio::time::Instant::now() + DEADLINE;
    let pids = loop {
        let pids: Vec<i32> = text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("pid:"))
            .filter_map(|p| p.parse().ok())
            .collect();
        if pids.len() == 3 {
            break pids;
        }
        assert!(tokio::time::Instant::now() < deadline, "{text:?}");
        if let Some(InteractiveEvent::Output(s)) = out.next().await {
            text.push_str(&s);
        }
    };
    let supervisor = term.pid().unwrap() as i32;
    assert!(pids.iter().all(|&p| is_live(p)), "{pids:?}");
    term.kill();
    let status = to_exit(&mut out, &mut text).await;
    assert_eq!(status.signal.as_deref(), Some("SIGTERM"), "{status:?}");
    all_end(&pids).await;
    all_end(&[supervisor]).await;
}

#[tokio::test]
async fn dropping_the_terminal_ends_the_program() {
    let (term, mut out) = start(sh("echo pid:$$; read x", 80, 24));
    let mut text = String::new();
    until(&mut out, &mut text, "\n").await;
    let pid: i32 = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("pid:"))
        .and_then(|p| p.parse().ok())
        .unwrap();
    let supervisor = term.pid().unwrap() as i32;
    drop(term);
    all_end(&[pid, supervisor]).await;
}

#[tokio::test]
async fn a_missing_program_or_folder_is_refused_at_start() {
    let mut cmd = sh("true", 80, 24);
    cmd.program = "no-such-program-acp-desk".into();
    let e = Interactive::start(cmd, &opts()).unwrap_err();
    assert!(e.to_string().contains("no-such-program-acp-desk"), "{e}");
    let mut cmd = sh("true", 80, 24);
    cmd.cwd = PathBuf::from("/no/such/folder/acp-desk");
    let e = Interactive::start(cmd, &opts()).unwrap_err();
    assert!(e.to_string().contains("is not a folder"), "{e}");
    let e = Interactive::start(sh("true", 0, 0), &opts()).unwrap_err();
    assert!(matches!(e, InteractiveError::BadSize { .. }), "{e}");
}

#[tokio::test]
async fn the_env_is_set_over_ours_and_debug_shows_names_only() {
    let mut cmd = sh("echo v:$LOGIN_TEST_VALUE", 80, 24);
    cmd.env
        .push(("LOGIN_TEST_VALUE".into(), "s3cret-value".into()));
    let shown = format!("{cmd:?}");
    assert!(shown.contains("LOGIN_TEST_VALUE"), "{shown}");
    assert!(!shown.contains("s3cret-value"), "{shown}");
    let (_term, mut out) = start(cmd);
    let mut text = String::new();
    to_exit(&mut out, &mut text).await;
    assert!(text.contains("v:s3cret-value"), "{text:?}");
}
