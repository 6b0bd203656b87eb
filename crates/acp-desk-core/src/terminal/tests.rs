//! Terminals on a real pty under the real supervisor (Linux). The supervisor binary must be
//! built (`cargo test -p acp-desk-core` builds it; with `--lib` alone run
//! `cargo build -p acp-desk-core --bins` first).

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

fn terminals(capacity: usize) -> (Terminals, mpsc::Receiver<TerminalEvent>) {
    let (tx, rx) = mpsc::channel(capacity);
    (Terminals::new(tx, opts()), rx)
}

fn req(command: &str, args: &[&str]) -> TerminalRequest {
    TerminalRequest {
        command: command.into(),
        args: args.iter().map(|s| s.to_string()).collect(),
        env: Vec::new(),
        cwd: PathBuf::from("/"),
        output_byte_limit: None,
    }
}

fn sh(script: &str) -> TerminalRequest {
    req("sh", &["-c", script])
}

/// Every delta of `id` until its exit, and the exit status.
async fn run_to_exit(
    rx: &mut mpsc::Receiver<TerminalEvent>,
    id: &acp::TerminalId,
) -> (Vec<String>, ExitStatus) {
    let mut deltas = Vec::new();
    let status = tokio::time::timeout(DEADLINE, async {
        loop {
            match rx.recv().await.expect("event channel closed") {
                TerminalEvent::Output { terminal_id, data } if terminal_id == *id => {
                    deltas.push(data)
                }
                TerminalEvent::Exited {
                    terminal_id,
                    exit_status,
                } if terminal_id == *id => return exit_status,
                _ => {}
            }
        }
    })
    .await
    .expect("terminal did not exit");
    (deltas, status)
}

/// Reads events until the output so far contains `n` lines "pid:N"; returns the pids.
async fn read_pids(
    rx: &mut mpsc::Receiver<TerminalEvent>,
    n: usize,
) -> (Vec<i32>, acp::TerminalId) {
    let mut text = String::new();
    tokio::time::timeout(DEADLINE, async {
        loop {
            if let TerminalEvent::Output { terminal_id, data } =
                rx.recv().await.expect("event channel closed")
            {
                text.push_str(&data);
                let pids = parse_pids(&text);
                if pids.len() >= n {
                    return (pids, terminal_id);
                }
            }
        }
    })
    .await
    .expect("pids not printed")
}

fn parse_pids(text: &str) -> Vec<i32> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("pid:"))
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// A process that runs (zombies have ended: they only wait to be reaped).
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
async fn echo_output_and_exit_code() {
    let (mut terms, mut rx) = terminals(16);
    let id = terms.create(req("echo", &["hello", "world"])).unwrap();
    let (deltas, status) = run_to_exit(&mut rx, &id).await;
    // A pty turns \n into \r\n, as a terminal shows it.
    assert_eq!(deltas.concat(), "hello world\r\n");
    assert_eq!(status, ExitStatus::new().exit_code(0));
    let out = terms.output(&id).unwrap();
    assert_eq!(out.output, "hello world\r\n");
    assert!(!out.truncated);
    assert_eq!(out.exit_status, Some(ExitStatus::new().exit_code(0)));
}

#[tokio::test]
async fn shell_line_without_args_runs_in_a_shell() {
    let (mut terms, mut rx) = terminals(16);
    let id = terms.create(req("echo a && echo b | tr b c", &[])).unwrap();
    let (deltas, status) = run_to_exit(&mut rx, &id).await;
    assert_eq!(deltas.concat(), "a\r\nc\r\n");
    assert_eq!(status.exit_code, Some(0));
    // A missing program inside a shell line: the shell's 127 and message.
    let id = terms
        .create(req("no-such-command-acp-desk 2>&1", &[]))
        .unwrap();
    let (deltas, status) = run_to_exit(&mut rx, &id).await;
    assert_eq!(status.exit_code, Some(127));
    assert!(deltas.concat().contains("no-such-command-acp-desk"));
}

#[cfg(unix)]
#[tokio::test]
async fn a_lone_path_with_spaces_to_a_program_runs_that_program() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("My Tools");
    std::fs::create_dir(&folder).unwrap();
    let program = folder.join("say hi");
    std::fs::write(&program, "#!/bin/sh\necho hi-from-the-program\n").unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (mut terms, mut rx) = terminals(16);
    let id = terms.create(req(program.to_str().unwrap(), &[])).unwrap();
    let (deltas, status) = run_to_exit(&mut rx, &id).await;
    assert_eq!(deltas.concat(), "hi-from-the-program\r\n");
    assert_eq!(status.exit_code, Some(0));
    // Not executable: still a shell line (which then fails to find `/…/My`).
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o644)).unwrap();
    let id = terms.create(req(program.to_str().unwrap(), &[])).unwrap();
    let (_, status) = run_to_exit(&mut rx, &id).await;
    assert_ne!(status.exit_code, Some(0));
}

#[tokio::test]
async fn multibyte_characters_split_across_reads_stay_whole() {
    let (mut terms, mut rx) = terminals(16);
    // "€" = E2 82 AC, written in two pieces with a pause so they arrive in separate reads;
    // then an invalid byte.
    let id = terms
        .create(sh(r"printf '\342\202'; sleep 0.3; printf '\254|\377|\n'"))
        .unwrap();
    let (deltas, status) = run_to_exit(&mut rx, &id).await;
    assert_eq!(status.exit_code, Some(0));
    assert_eq!(deltas.concat(), "€|\u{FFFD}|\r\n");
    assert!(
        deltas.iter().all(|d| !d.is_empty()),
        "no empty deltas: {deltas:?}"
    );
}

#[tokio::test]
async fn output_limit_cuts_from_the_start_at_a_character_boundary() {
    let (mut terms, mut rx) = terminals(16);
    let mut r = sh(r"printf 'aaaaaaaaa\342\202\254\342\202\254\342\202\254'");
    r.output_byte_limit = Some(10);
    let id = terms.create(r).unwrap();
    let (deltas, _) = run_to_exit(&mut rx, &id).await;
    assert_eq!(deltas.concat(), "aaaaaaaaa€€€");
    let out = terms.output(&id).unwrap();
    // 18 bytes, keep at most 10: byte 8 starts a character, so "a€€€" (exactly 10).
    assert_eq!(out.output, "a€€€");
    assert!(out.truncated);

    // 19 bytes, keep at most 8: byte 11 is inside the first "€", so the cut moves on to 13 and
    // keeps less than the limit.
    let mut r = sh(r"printf 'aaaaaaaaaa\342\202\254\342\202\254\342\202\254'");
    r.output_byte_limit = Some(8);
    let id = terms.create(r).unwrap();
    run_to_exit(&mut rx, &id).await;
    let out = terms.output(&id).unwrap();
    assert_eq!(out.output, "€€");
    assert!(out.truncated);
}

#[tokio::test]
async fn exit_codes_and_signals() {
    let (mut terms, mut rx) = terminals(16);
    let id = terms.create(sh("exit 3")).unwrap();
    assert_eq!(
        run_to_exit(&mut rx, &id).await.1,
        ExitStatus::new().exit_code(3)
    );
    let id = terms.create(sh("kill -TERM $$")).unwrap();
    assert_eq!(
        run_to_exit(&mut rx, &id).await.1,
        ExitStatus::new().signal("SIGTERM".to_string())
    );
    let id = terms.create(sh("kill -KILL $$")).unwrap();
    assert_eq!(
        run_to_exit(&mut rx, &id).await.1,
        ExitStatus::new().signal("SIGKILL".to_string())
    );
}

#[tokio::test]
async fn several_waiters_get_the_exit_status() {
    let (mut terms, _rx) = terminals(16);
    let id = terms.create(sh("sleep 0.3; exit 4")).unwrap();
    let waiters: Vec<_> = (0..3)
        .map(|_| tokio::spawn(terms.wait_for_exit(&id).unwrap()))
        .collect();
    for w in waiters {
        let status = tokio::time::timeout(DEADLINE, w).await.unwrap().unwrap();
        assert_eq!(status, ExitStatus::new().exit_code(4));
    }
    // After the exit, waiting returns at once.
    let again = tokio::time::timeout(DEADLINE, terms.wait_for_exit(&id).unwrap())
        .await
        .unwrap();
    assert_eq!(again.exit_code, Some(4));
}

#[tokio::test]
async fn kill_ends_the_whole_tree_and_keeps_the_output() {
    let (mut terms, mut rx) = terminals(16);
    // A background child, a child in a session of its own, and a foreground one.
    let id = terms
        .create(sh(
            "sleep 100 & echo pid:$!; setsid sleep 100 & echo pid:$!; echo pid:$$; sleep 100",
        ))
        .unwrap();
    let (mut pids, _) = read_pids(&mut rx, 3).await;
    let supervisor = terms.pid(&id).unwrap() as i32;
    pids.extend(crate::supervisor::live_descendants(supervisor));
    assert!(pids.len() >= 4, "{pids:?}");
    let waiter = terms.wait_for_exit(&id).unwrap();
    terms.kill(&id).unwrap();
    let status = tokio::time::timeout(DEADLINE, waiter).await.unwrap();
    assert_eq!(status.signal.as_deref(), Some("SIGTERM"), "{status:?}");
    all_end(&pids).await;
    assert!(!is_live(supervisor));
    // Killed, not released: still readable.
    let out = terms.output(&id).unwrap();
    assert_eq!(parse_pids(&out.output).len(), 3);
    assert_eq!(out.exit_status, Some(status));
    terms.release(&id).unwrap();
}

#[tokio::test]
async fn release_kills_and_forgets() {
    let (mut terms, mut rx) = terminals(16);
    let id = terms.create(sh("echo pid:$$; sleep 100")).unwrap();
    let (pids, _) = read_pids(&mut rx, 1).await;
    let waiter = terms.wait_for_exit(&id).unwrap();
    terms.release(&id).unwrap();
    // A waiter from before the release still gets the status.
    let status = tokio::time::timeout(DEADLINE, waiter).await.unwrap();
    assert!(status.signal.is_some(), "{status:?}");
    all_end(&pids).await;
    for err in [
        terms.output(&id).err(),
        terms.kill(&id).err(),
        terms.wait_for_exit(&id).err(),
        terms.release(&id).err(),
    ] {
        let err = err.expect("released id must be unknown");
        assert!(matches!(err, TerminalError::Unknown { .. }), "{err}");
        assert_eq!(err.rpc_code(), codes::INVALID_PARAMS);
    }
}

#[tokio::test]
async fn unknown_id_is_a_clear_error() {
    let (terms, _rx) = terminals(16);
    let err = terms.output(&acp::TerminalId::new("nope")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no terminal `nope` in this session (never created, or already released)"
    );
    assert_eq!(err.rpc_code(), -32602);
}

#[tokio::test]
async fn env_is_merged_over_ours() {
    let (mut terms, mut rx) = terminals(16);
    let mut r = sh(r#"printf '%s|%s|%s' "$ACP_DESK_T" "$HOME" "${PATH:+inherited}""#);
    r.env = vec![
        ("ACP_DESK_T".into(), "first".into()),
        ("HOME".into(), "/overridden".into()),
        ("ACP_DESK_T".into(), "last wins".into()),
    ];
    let id = terms.create(r).unwrap();
    let (deltas, _) = run_to_exit(&mut rx, &id).await;
    assert_eq!(deltas.concat(), "last wins|/overridden|inherited");
}

#[tokio::test]
async fn path_from_the_request_is_used_to_find_the_program() {
    let (mut terms, _rx) = terminals(16);
    let mut r = req("sh", &["-c", "true"]);
    r.env = vec![("PATH".into(), "/nonexistent-acp-desk".into())];
    let err = terms.create(r).unwrap_err();
    assert!(matches!(err, TerminalError::NotFound { .. }), "{err}");
}

#[tokio::test]
async fn cwd_is_honoured_and_checked() {
    let (mut terms, mut rx) = terminals(16);
    let dir = tempfile::tempdir().unwrap();
    let mut r = req("pwd", &[]);
    r.cwd = dir.path().to_path_buf();
    let id = terms.create(r).unwrap();
    let (deltas, _) = run_to_exit(&mut rx, &id).await;
    assert_eq!(
        deltas.concat().trim_end(),
        dir.path().canonicalize().unwrap().to_str().unwrap()
    );
    let mut r = req("pwd", &[]);
    r.cwd = "relative".into();
    assert!(matches!(terms.create(r), Err(TerminalError::BadCwd { .. })));
    let mut r = req("pwd", &[]);
    r.cwd = dir.path().join("missing");
    let err = terms.create(r).unwrap_err();
    assert!(matches!(err, TerminalError::BadCwd { .. }));
    assert_eq!(err.rpc_code(), codes::INVALID_PARAMS);
}

#[tokio::test]
async fn missing_command_is_an_error_at_create() {
    let (mut terms, _rx) = terminals(16);
    let err = terms
        .create(req("no-such-command-acp-desk", &["x"]))
        .unwrap_err();
    assert!(matches!(err, TerminalError::NotFound { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "the command `no-such-command-acp-desk` was not found on PATH"
    );
    assert_eq!(err.rpc_code(), codes::INVALID_PARAMS);
    assert!(terms.ids().is_empty());
}

#[tokio::test]
async fn a_flood_keeps_memory_bounded() {
    const TOTAL: usize = 100_000_000;
    const LIMIT: usize = 1024 * 1024;
    let (mut terms, mut rx) = terminals(16);
    let mut r = req("head -c 100000000 /dev/zero | tr '\\0' a", &[]);
    r.output_byte_limit = Some(LIMIT as u64);
    let id = terms.create(r).unwrap();
    let mut received = 0usize;
    let mut events = 0usize;
    let mut max_capacity = 0usize;
    let status = tokio::time::timeout(Duration::from_secs(300), async {
        loop {
            match rx.recv().await.unwrap() {
                TerminalEvent::Output { data, .. } => {
                    assert!(data.len() <= DELTA_MAX_BYTES + READ_CHUNK * 3);
                    assert!(data.bytes().all(|b| b == b'a'));
                    received += data.len();
                    events += 1;
                    if events.is_multiple_of(64) {
                        max_capacity = max_capacity.max(terms.buffer_capacity(&id).unwrap());
                    }
                }
                TerminalEvent::Exited { exit_status, .. } => return exit_status,
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(status.exit_code, Some(0));
    assert_eq!(received, TOTAL);
    // Coalesced: far fewer events than the pty's few-KiB reads.
    assert!(events < TOTAL / 8192, "{events} events");
    let out = terms.output(&id).unwrap();
    assert!(out.truncated);
    assert!(out.output.len() <= LIMIT && out.output.len() > LIMIT - 4);
    // Retained text plus at most one dead prefix of the same size and one delta.
    assert!(
        max_capacity <= 2 * LIMIT + 4 * DELTA_MAX_BYTES,
        "{max_capacity}"
    );
}

#[tokio::test]
async fn a_slow_consumer_pauses_the_command() {
    let (mut terms, mut rx) = terminals(1);
    let id = terms.create(req("yes", &[])).unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    // Nothing was read: the reader is blocked on the channel, the command on the pty.
    let held = terms.output(&id).unwrap().output.len();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(terms.output(&id).unwrap().output.len(), held);
    assert!(held <= 2 * DELTA_MAX_BYTES + 3 * READ_CHUNK, "{held}");
    // Reading again lets it go on.
    for _ in 0..20 {
        rx.recv().await.unwrap();
    }
    assert!(terms.output(&id).unwrap().output.len() > held);
    let waiter = terms.wait_for_exit(&id).unwrap();
    terms.kill(&id).unwrap();
    // Exited arrives in order after the output the consumer has not read yet.
    tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let status = tokio::time::timeout(DEADLINE, waiter).await.unwrap();
    assert!(status.signal.is_some());
}

#[tokio::test]
async fn dropping_terminals_ends_everything() {
    let (mut terms, mut rx) = terminals(16);
    terms
        .create(sh("setsid sleep 100 & echo pid:$!; echo pid:$$; sleep 100"))
        .unwrap();
    terms
        .create(sh("sleep 100 & echo pid:$!; echo pid:$$; sleep 100"))
        .unwrap();
    let mut pids = Vec::new();
    let mut supervisors = Vec::new();
    for id in terms.ids() {
        supervisors.push(terms.pid(&id).unwrap() as i32);
    }
    let deadline = tokio::time::Instant::now() + DEADLINE;
    let mut text = HashMap::<acp::TerminalId, String>::new();
    while pids.len() < 4 {
        assert!(tokio::time::Instant::now() < deadline);
        if let Some(TerminalEvent::Output { terminal_id, data }) = rx.recv().await {
            let t = text.entry(terminal_id).or_default();
            t.push_str(&data);
            pids = text.values().flat_map(|t| parse_pids(t)).collect();
        }
    }
    drop(terms);
    pids.extend(supervisors);
    all_end(&pids).await;
}

/// The pty master closing (what happens when ACP Desk dies, even by SIGKILL) ends the tree.
/// Runs `lifeline_helper` in a child process and SIGKILLs it.
#[tokio::test]
async fn the_tree_dies_with_the_app() {
    use tokio::io::AsyncBufReadExt;
    let exe = std::env::current_exe().unwrap();
    let mut child = tokio::process::Command::new(exe)
        .args([
            "--exact",
            "terminal::tests::lifeline_helper",
            "--ignored",
            "--nocapture",
        ])
        .env("ACP_DESK_LIFELINE_HELPER", "1")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let pids = tokio::time::timeout(DEADLINE, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(rest) = line.strip_prefix("pids:") {
                return rest
                    .split(',')
                    .map(|p| p.parse::<i32>().unwrap())
                    .collect::<Vec<_>>();
            }
        }
        panic!("the helper printed no pids");
    })
    .await
    .unwrap();
    assert!(pids.len() >= 4, "{pids:?}");
    assert!(pids.iter().all(|&p| is_live(p)));
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    all_end(&pids).await;
}

#[tokio::test]
#[ignore = "run by the_tree_dies_with_the_app"]
async fn lifeline_helper() {
    if std::env::var_os("ACP_DESK_LIFELINE_HELPER").is_none() {
        return;
    }
    let (mut terms, mut rx) = terminals(16);
    let id = terms
        .create(sh("setsid sleep 100 & echo pid:$!; echo pid:$$; sleep 100"))
        .unwrap();
    let (mut pids, _) = read_pids(&mut rx, 2).await;
    let supervisor = terms.pid(&id).unwrap() as i32;
    pids.extend(crate::supervisor::live_descendants(supervisor));
    pids.push(supervisor);
    let list: Vec<String> = pids.iter().map(|p| p.to_string()).collect();
    println!("pids:{}", list.join(","));
    // Keep everything open until killed.
    tokio::time::sleep(Duration::from_secs(120)).await;
    drop(terms);
}
