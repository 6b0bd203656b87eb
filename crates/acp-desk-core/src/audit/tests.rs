use super::*;
use serde_json::Value;
use std::time::Duration;

fn options() -> Vec<acp::PermissionOption> {
    vec![
        acp::PermissionOption::new(
            "allow_always",
            "Always Allow",
            acp::PermissionOptionKind::AllowAlways,
        ),
        acp::PermissionOption::new("reject", "Reject", acp::PermissionOptionKind::RejectOnce),
    ]
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn write_everything(log: &AuditLog) {
    log.session_started(
        "claude",
        Path::new("/p"),
        &[PathBuf::from("/p"), "/q".into()],
    );
    log.permission_asked(
        "toolu_1#1",
        "toolu_1",
        Some("Write /p/a.txt"),
        Some(acp::ToolKind::Edit),
        &options(),
    );
    log.permission_answered(
        "toolu_1#1",
        SettledBy::Rule,
        &PermissionResolution::selected("allow_always"),
        &options(),
    );
    log.permission_answered(
        "toolu_2#1",
        SettledBy::Stop,
        &PermissionResolution::cancelled(),
        &options(),
    );
    log.file_written(
        Path::new("/p/a.txt"),
        None,
        Some("ab".repeat(32)),
        true,
        WriteVia::FsWrite,
    );
    log.file_written(
        Path::new("/p/b.txt"),
        Some("cd".repeat(32)),
        Some("ef".repeat(32)),
        false,
        WriteVia::Watcher,
    );
    let env = vec![acp::EnvVariable::new("API_TOKEN", "sk-very-secret")];
    log.command_run(CommandRun {
        terminal_id: "term-1".into(),
        command: "cargo".into(),
        args: vec!["test".into()],
        cwd: Some("/p".into()),
        env_names: CommandRun::env_names(&env),
        exit_code: Some(101),
        signal: None,
    });
    log.session_ended(Some("closed"));
}

#[test]
fn lines_are_json_with_the_documented_fields() {
    let dir = tempfile::tempdir().unwrap();
    let log = AuditLog::open(dir.path(), "sess/1", AuditKind::On).unwrap();
    let path = log.path().unwrap().to_owned();
    write_everything(&log);
    assert_eq!(log.close(), None);

    // <dir>/<YYYY-MM-DD>/<session>.jsonl, the id made file-safe.
    assert_eq!(path.file_name().unwrap(), "sess_1.jsonl");
    let day = path
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap();
    assert_eq!(day.len(), 10, "{day}");
    assert_eq!(path.parent().unwrap().parent().unwrap(), dir.path());

    let l = lines(&path);
    let events: Vec<&str> = l.iter().map(|v| v["event"].as_str().unwrap()).collect();
    assert_eq!(
        events,
        [
            "session-started",
            "permission-asked",
            "permission-answered",
            "permission-answered",
            "file-written",
            "file-written",
            "command-run",
            "session-ended"
        ]
    );
    for v in &l {
        assert_eq!(v["session"], "sess/1");
        let ts = v["ts"].as_str().unwrap();
        assert!(
            ts.len() == 24 && ts.ends_with('Z') && &ts[10..11] == "T",
            "{ts}"
        );
        assert!(ts.starts_with(day));
    }
    assert_eq!(l[0]["agent"], "claude");
    assert_eq!(l[0]["roots"], serde_json::json!(["/p", "/q"]));
    assert_eq!(l[1]["requestId"], "toolu_1#1");
    assert_eq!(l[1]["toolCallId"], "toolu_1");
    assert_eq!(l[1]["title"], "Write /p/a.txt");
    assert_eq!(l[1]["kind"], "edit");
    assert_eq!(l[1]["options"][0]["optionId"], "allow_always");
    assert_eq!(l[1]["options"][0]["kind"], "allow_always");
    assert_eq!(l[2]["by"], "rule");
    assert_eq!(l[2]["optionId"], "allow_always");
    assert_eq!(l[2]["optionKind"], "allow_always");
    assert!(l[2].get("cancelled").is_none());
    assert!(l[2]["at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(l[3]["by"], "stop");
    assert_eq!(l[3]["cancelled"], true);
    assert!(l[3].get("optionId").is_none());
    assert_eq!(l[4]["path"], "/p/a.txt");
    assert_eq!(l[4]["created"], true);
    assert_eq!(l[4]["via"], "fs-write");
    assert!(l[4].get("beforeHash").is_none());
    assert_eq!(l[4]["afterHash"], "ab".repeat(32));
    assert_eq!(l[5]["via"], "watcher");
    assert_eq!(l[5]["beforeHash"], "cd".repeat(32));
    assert_eq!(l[6]["terminalId"], "term-1");
    assert_eq!(l[6]["command"], "cargo");
    assert_eq!(l[6]["args"], serde_json::json!(["test"]));
    assert_eq!(l[6]["cwd"], "/p");
    assert_eq!(l[6]["exitCode"], 101);
    assert_eq!(l[6]["envNames"], serde_json::json!(["API_TOKEN"]));
    assert_eq!(l[7]["reason"], "closed");

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("sk-very-secret"));
}

#[test]
fn a_second_open_appends() {
    let dir = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        let log = AuditLog::open(dir.path(), "s", AuditKind::On).unwrap();
        log.session_ended(None);
        assert_eq!(log.close(), None);
    }
    let path = AuditLog::file_path(dir.path(), "s");
    assert_eq!(lines(&path).len(), 2);
}

#[test]
fn off_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let log = AuditLog::open(dir.path(), "s", AuditKind::from_manifest(Some("off"))).unwrap();
    assert!(!log.is_on());
    assert_eq!(log.path(), None);
    write_everything(&log);
    assert_eq!(log.take_warning(), None);
    assert_eq!(log.close(), None);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    assert_eq!(AuditKind::from_manifest(Some("governance")), AuditKind::On);
    assert_eq!(AuditKind::from_manifest(None), AuditKind::On);
}

#[test]
fn an_unwritable_folder_gives_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    // A file where the folder should be: creating the folder fails even as root.
    let blocker = dir.path().join("audit");
    std::fs::write(&blocker, b"not a folder").unwrap();
    let log = AuditLog::open(&blocker, "s", AuditKind::On).unwrap();
    write_everything(&log);
    // The writer reports asynchronously: wait for it without asserting on timing.
    let mut warning = None;
    for _ in 0..500 {
        warning = log.take_warning();
        if warning.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let warning = warning.expect("one warning");
    assert!(warning.reason.contains("could not open"), "{warning}");
    write_everything(&log);
    assert!(!log.is_on());
    assert_eq!(log.take_warning(), None, "reported once");
    assert_eq!(log.close(), None);
}

/// Fails every write after `ok` successful ones, counting attempts.
struct FailingSink {
    ok: usize,
    attempts: Arc<Mutex<usize>>,
    written: Arc<Mutex<Vec<u8>>>,
}

impl Write for FailingSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut n = self.attempts.lock().unwrap();
        *n += 1;
        if *n > self.ok {
            return Err(io::Error::from_raw_os_error(28));
        }
        self.written.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_failing_write_gives_one_warning_and_the_log_goes_quiet() {
    let attempts = Arc::new(Mutex::new(0));
    let written = Arc::new(Mutex::new(Vec::new()));
    let sink = FailingSink {
        ok: 2,
        attempts: attempts.clone(),
        written: written.clone(),
    };
    let log = AuditLog::with_sink("s", PathBuf::from("/injected.jsonl"), Box::new(sink)).unwrap();
    for _ in 0..3 {
        write_everything(&log);
    }
    let warning = log.close().expect("a warning");
    assert!(warning.reason.contains("disk is full"), "{warning}");
    assert_eq!(warning.path, Path::new("/injected.jsonl"));
    // Two lines made it, whole; after the failure nothing more was tried.
    let text = String::from_utf8(written.lock().unwrap().clone()).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(text.ends_with('\n'));
    assert_eq!(*attempts.lock().unwrap(), 3);
}

#[test]
fn a_failing_write_warning_is_taken_once() {
    let sink = FailingSink {
        ok: 0,
        attempts: Arc::default(),
        written: Arc::default(),
    };
    let log = AuditLog::with_sink("s", PathBuf::from("/x"), Box::new(sink)).unwrap();
    log.session_ended(None);
    let mut seen = 0;
    for _ in 0..500 {
        if log.take_warning().is_some() {
            seen += 1;
        }
        if !log.is_on() && seen > 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    log.session_ended(None);
    seen += usize::from(log.take_warning().is_some());
    assert_eq!(seen, 1);
}

#[test]
fn rfc3339_format() {
    assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    let t = UNIX_EPOCH + Duration::from_millis(951_782_400_123); // leap day 2000
    assert_eq!(rfc3339(t), "2000-02-29T00:00:00.123Z");
    let t = UNIX_EPOCH + Duration::from_secs(4_102_444_799); // end of 2099
    assert_eq!(rfc3339(t), "2099-12-31T23:59:59.000Z");
}

#[test]
fn file_names_are_safe() {
    assert_eq!(file_safe("s-1_a.b"), "s-1_a.b");
    assert_eq!(file_safe("../etc"), "_.._etc");
    assert_eq!(file_safe(""), "_");
    assert_eq!(file_safe("a/b\\c:d"), "a_b_c_d");
}
