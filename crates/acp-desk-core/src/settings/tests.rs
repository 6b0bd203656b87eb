#![allow(clippy::unwrap_used)]

use super::*;

fn write(dir: &tempfile::TempDir, text: &str) -> std::path::PathBuf {
    let file = dir.path().join("settings.json");
    std::fs::write(&file, text).unwrap();
    file
}

fn names(s: &Settings) -> Vec<&str> {
    s.agent_servers.iter().map(|(n, _)| n.as_str()).collect()
}

#[test]
fn comments_trailing_commas_and_the_file_order_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        &dir,
        r#"// Zed-style settings
            {
                /* my agents */
                "agent_servers": {
                    "zeta": {
                        "command": "/bin/my-agent", // the wrapper
                        "args": ["--acp",],
                        "env": {"A": "1",},
                    },
                    "alpha": {"type": "custom", "command": "alpha"},
                    "mid": {"command": "mid", "manifest": "mid-agent"},
                },
                "default_agent": "mid",
                "notifications": {"turn_end": false},
                "history": {"enabled": false},
            }
            "#,
    );
    let before = std::fs::read(&file).unwrap();
    let l = load_from(&file);
    // Read, never rewritten: the user's comments stay.
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert_eq!(l.problems, vec![]);
    let s = l.settings;
    assert_eq!(names(&s), vec!["zeta", "alpha", "mid"], "the file's order");
    let zeta = s.agent_server("zeta").unwrap();
    assert_eq!(zeta.command, "/bin/my-agent");
    assert_eq!(zeta.args, vec!["--acp"]);
    assert_eq!(zeta.env["A"], "1".into());
    assert_eq!(
        s.agent_server("mid").unwrap().manifest.as_deref(),
        Some("mid-agent")
    );
    assert_eq!(s.default_agent.as_deref(), Some("mid"));
    assert_eq!(
        s.notifications,
        Notifications {
            permission_requests: true,
            turn_end: false
        }
    );
    assert!(!s.history.enabled);
}

#[test]
fn unknown_keys_are_listed_as_ignored_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        &dir,
        "{\"theme\": \"One Dark\",\n \"agent_servers\": {\"a\": {\"command\": \"x\",\n   \"future\": 1}},\n \"history\": {\"enabeld\": false}}",
    );
    let l = load_from(&file);
    assert_eq!(l.settings.agent_server("a").unwrap().command, "x");
    assert_eq!(
        l.settings.agent_server("a").unwrap().ignored,
        vec!["future"]
    );
    assert_eq!(l.settings.ignored, vec!["theme"]);
    assert!(l.settings.history.enabled, "a typo leaves the default");
    let shown: Vec<String> = l.problems.iter().map(ToString::to_string).collect();
    let f = file.display();
    assert_eq!(
        shown,
        vec![
            format!(
                "{f}:1:2: theme: not a setting ACP Desk reads: ignored (check its spelling if you meant one)"
            ),
            format!(
                "{f}:3:4: agent_servers.a.future: not a setting ACP Desk reads: ignored (check its spelling if you meant one)"
            ),
            format!(
                "{f}:4:14: history.enabeld: not a setting ACP Desk reads: ignored (check its spelling if you meant one)"
            ),
        ]
    );
    assert!(
        l.problems
            .iter()
            .all(|p| p.severity == ProblemSeverity::Warning)
    );
    assert!(l.invalid_agents.is_empty());
}

#[test]
fn bad_types_are_named_with_line_and_field_and_the_valid_part_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        &dir,
        r#"{
  "agent_servers": {
    "good": {"command": "good-agent", "args": ["--acp"]},
    "bad-args": {"command": "x", "args": ["--port", 8080]},
    "no-command": {"args": []},
    "secret-env": {"command": "y", "env": {"TOKEN": 12345}},
    "not-an-object": "z",
    "good": {"command": "again"},
    "last": {"command": "last-agent"}
  },
  "default_agent": 3,
  "history": {"enabled": "no"},
  "restored_sessions_start": "at-once"
}"#,
    );
    let l = load_from(&file);
    assert_eq!(names(&l.settings), vec!["good", "last"]);
    assert_eq!(
        l.settings.agent_server("good").unwrap().command,
        "good-agent"
    );
    assert_eq!(
        l.invalid_agents,
        vec!["bad-args", "no-command", "secret-env", "not-an-object"]
    );
    assert_eq!(l.settings.default_agent, None);
    assert!(l.settings.history.enabled);
    assert_eq!(l.settings.restored_sessions_start, RestoredStart::OnReturn);
    let got: Vec<(Option<u32>, Option<&str>, &str)> = l
        .problems
        .iter()
        .map(|p| (p.line, p.field.as_deref(), p.message.as_str()))
        .collect();
    let expected: Vec<(Option<u32>, Option<&str>, &str)> = vec![
        (
            Some(4),
            Some("agent_servers.bad-args.args[1]"),
            "expected a string, found a number (quote it: arguments are strings) (so `agent_servers.bad-args` is skipped until this is fixed)",
        ),
        (
            Some(5),
            Some("agent_servers.no-command.command"),
            "missing: an agent_servers entry needs `command`, the program to run (Zed's entries for its own built-in agents have none: remove the entry to use ACP Desk's built-in agent of that name) (so `agent_servers.no-command` is skipped until this is fixed)",
        ),
        (
            Some(6),
            Some("agent_servers.secret-env.env.TOKEN"),
            "expected a text, or {\"secret\": \"NAME\"} for a secret stored in the keychain (`acp-desk-cli secret set NAME`), found a number (so `agent_servers.secret-env` is skipped until this is fixed)",
        ),
        (
            Some(7),
            Some("agent_servers.not-an-object"),
            "expected an object ({ ... }), found a string (so `agent_servers.not-an-object` is skipped until this is fixed)",
        ),
        (
            Some(8),
            Some("agent_servers.good"),
            "`good` is defined twice (first on line 3); the first one is used, rename or remove this one",
        ),
        (
            Some(11),
            Some("default_agent"),
            "expected a string, found a number",
        ),
        (
            Some(12),
            Some("history.enabled"),
            "expected true or false, found a string; the default is used",
        ),
        (
            Some(13),
            Some("restored_sessions_start"),
            "`at-once` is not one of \"on_return\", \"at_once\"; \"on_return\" is used",
        ),
    ];
    assert_eq!(got, expected);
    // The value of an env variable (maybe a secret) is never quoted.
    assert!(l.problems.iter().all(|p| !p.message.contains("12345")));
    assert!(
        l.problems
            .iter()
            .all(|p| p.severity == ProblemSeverity::Error)
    );
    assert_eq!(l.agent_problems("bad-args").len(), 1);
    assert_eq!(l.agent_problems("bad").len(), 0, "bad-args is not bad");
    // Column: where the value starts.
    assert_eq!(l.problems[0].column, Some(53));
}

#[test]
fn a_syntax_error_is_one_problem_and_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    for (text, line) in [
        ("{nope", 1),
        // Looser than Zed's dialect: typos, not accepted.
        (
            "{\"agent_servers\": {\n  \"a\": {\"command\": \"x\"} \"b\": {\"command\": \"y\"}}}",
            2,
        ),
        ("{agent_servers: {}}", 1),
        ("{\"agent_servers\": {\"a\": {\"command\": 'x'}}}", 1),
    ] {
        let file = write(&dir, text);
        let l = load_from(&file);
        assert_eq!(l.settings, Settings::default(), "{text}");
        assert_eq!(l.problems.len(), 1, "{text}");
        let p = &l.problems[0];
        assert_eq!((p.line, p.field.as_deref()), (Some(line), None), "{text}");
        assert!(p.message.starts_with("not valid JSON: "), "{}", p.message);
        assert!(
            p.to_string()
                .starts_with(&format!("{}:{line}:", file.display()))
        );
    }
    for text in [r#""agents""#, "5", "[]"] {
        let l = load_from(&write(&dir, text));
        assert_eq!(l.settings, Settings::default(), "{text}");
        assert_eq!(l.problems.len(), 1, "{text}");
        assert!(
            l.problems[0].message.contains("must hold one JSON object"),
            "{text}"
        );
    }
}

#[test]
fn a_missing_or_commented_out_file_is_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        load_from(&dir.path().join("missing.json")),
        Loaded::default()
    );
    for text in ["", "  \n", "// {\"agent_servers\": {}}\n", "{}", "null"] {
        let file = write(&dir, text);
        assert_eq!(load_from(&file), Loaded::default(), "{text:?}");
    }
}

#[test]
fn an_unreadable_file_is_one_problem() {
    let dir = tempfile::tempdir().unwrap();
    // A folder where the file should be: unreadable even for root.
    let file = dir.path().join("settings.json");
    std::fs::create_dir(&file).unwrap();
    let l = load_from(&file);
    assert_eq!(l.settings, Settings::default());
    assert_eq!(l.problems.len(), 1);
    assert!(l.problems[0].to_string().contains("settings.json"));
    assert!(l.problems[0].message.contains("could not read"));
}

#[test]
fn mcp_servers_take_zeds_context_servers_shape() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        &dir,
        r#"{"mcp_servers": {
  "files": {"command": "mcp-files", "args": ["--root", "."], "env": {"K": "v"}},
  "web": {"url": "https://mcp.example.com/mcp", "headers": {"X-Team": "a"}, "credential_ref": "web"},
  "events": {"type": "sse", "url": "http://localhost:9000/sse"},
  "both": {"command": "x", "url": "https://x"},
  "neither": {"args": []},
  "ftp": {"url": "ftp://x"},
  "stdio-cred": {"command": "y", "credential_ref": "nope"}
}}"#,
    );
    let l = load_from(&file);
    let got: Vec<&str> = l
        .settings
        .mcp_servers
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(got, vec!["files", "web", "events", "stdio-cred"]);
    let (_, files) = &l.settings.mcp_servers[0];
    assert_eq!(
        files.transport,
        McpTransport::Stdio {
            command: "mcp-files".into(),
            args: vec!["--root".into(), ".".into()],
            env: BTreeMap::from([("K".into(), "v".into())]),
        }
    );
    let (_, web) = &l.settings.mcp_servers[1];
    assert!(matches!(&web.transport, McpTransport::Http { url, headers }
            if url == "https://mcp.example.com/mcp" && headers["X-Team"] == "a"));
    assert_eq!(
        web.credential_ref.as_ref().map(SecretRef::as_str),
        Some("web")
    );
    assert!(matches!(
        &l.settings.mcp_servers[2].1.transport,
        McpTransport::Sse { .. }
    ));
    // Kept on a program, so that the session's report says it is ignored there too.
    assert_eq!(
        l.settings.mcp_servers[3].1.credential_ref,
        Some(SecretRef::new("nope").unwrap())
    );
    let fields: Vec<(Option<&str>, ProblemSeverity)> = l
        .problems
        .iter()
        .map(|p| (p.field.as_deref(), p.severity))
        .collect();
    assert_eq!(
        fields,
        vec![
            (Some("mcp_servers.both"), ProblemSeverity::Error),
            (Some("mcp_servers.neither"), ProblemSeverity::Error),
            (Some("mcp_servers.ftp.url"), ProblemSeverity::Error),
            (
                Some("mcp_servers.stdio-cred.credential_ref"),
                ProblemSeverity::Warning
            ),
        ]
    );
}

#[test]
fn close_to_tray_is_on_unless_the_file_says_false() {
    let dir = tempfile::tempdir().unwrap();
    assert!(Settings::default().close_to_tray);
    let off = load_from(&write(&dir, r#"{"close_to_tray": false}"#));
    assert!(!off.settings.close_to_tray);
    assert!(off.problems.is_empty(), "{:?}", off.problems);
    assert!(off.settings.ignored.is_empty());
    // A wrong shape is named, and the default kept.
    let bad = load_from(&write(&dir, "{\n  \"close_to_tray\": \"no\"\n}"));
    assert!(bad.settings.close_to_tray);
    let got: Vec<_> = bad
        .problems
        .iter()
        .map(|p| (p.line, p.field.as_deref(), p.message.as_str()))
        .collect();
    assert_eq!(
        got,
        [(
            Some(2),
            Some("close_to_tray"),
            "expected true or false, found a string; the default is used"
        )]
    );
}

#[test]
fn env_values_may_name_a_keychain_secret_and_bad_ones_are_named_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        &dir,
        r#"{"agent_servers": {
  "ok": {"command": "a", "env": {"PLAIN": "p", "KEY": {"secret": "anthropic-key"}}},
  "bad-name": {"command": "b", "env": {"KEY": {"secret": "has space"}}},
  "extra": {"command": "c", "env": {"KEY": {"secret": "k", "value": "x"}}},
  "empty": {"command": "d", "env": {"KEY": {}}},
  "number": {"command": "e", "env": {"KEY": {"secret": 3}}}
},
"mcp_servers": {
  "tool": {"command": "t", "env": {"TOKEN": {"secret": "tool-token"}}},
  "broken": {"command": "t", "env": {"TOKEN": {"secret": ""}}}
}}"#,
    );
    let l = load_from(&file);
    let ok = l.settings.agent_server("ok").unwrap();
    assert_eq!(ok.env["PLAIN"], EnvValue::Plain("p".into()));
    assert_eq!(
        ok.env["KEY"],
        EnvValue::Secret(SecretRef::new("anthropic-key").unwrap())
    );
    // The secret's name, never a value, in what may be printed.
    assert!(format!("{ok:?}").contains("KEY"));
    assert_eq!(l.invalid_agents, ["bad-name", "extra", "empty", "number"]);
    let got: Vec<(Option<u32>, Option<&str>)> = l
        .problems
        .iter()
        .map(|p| (p.line, p.field.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            (Some(3), Some("agent_servers.bad-name.env.KEY.secret")),
            (Some(4), Some("agent_servers.extra.env.KEY.value")),
            (Some(5), Some("agent_servers.empty.env.KEY")),
            (Some(6), Some("agent_servers.number.env.KEY.secret")),
            (Some(10), Some("mcp_servers.broken.env.TOKEN.secret")),
        ]
    );
    assert!(
        l.problems[0].message.contains("use letters, digits"),
        "{}",
        l.problems[0]
    );
    assert!(
        l.problems[2].message.contains("missing `secret`"),
        "{}",
        l.problems[2]
    );
    let names: Vec<&str> = l
        .settings
        .mcp_servers
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(names, ["tool"]);
    assert!(matches!(&l.settings.mcp_servers[0].1.transport,
        McpTransport::Stdio { env, .. } if env["TOKEN"] == EnvValue::Secret(SecretRef::new("tool-token").unwrap())));
}

#[test]
fn an_mcp_server_may_be_given_to_some_agents_only() {
    let l = parse(
        "settings.json",
        r#"{"mcp_servers": {
  "all": {"command": "a"},
  "some": {"command": "b", "agents": ["claude", "codex"]},
  "none": {"command": "c", "agents": []},
  "wrong": {"command": "d", "agents": "claude"},
  "bad-cred": {"url": "https://x.example.com/mcp", "credential_ref": "a b"}
}}"#,
    );
    let names: Vec<&str> = l
        .settings
        .mcp_servers
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(names, ["all", "some", "none"]);
    let all = &l.settings.mcp_servers[0].1;
    let some = &l.settings.mcp_servers[1].1;
    assert_eq!(all.agents, None);
    assert!(all.applies_to("anything"));
    assert!(some.applies_to("codex") && !some.applies_to("gemini"));
    assert!(!l.settings.mcp_servers[2].1.applies_to("claude"));
    let got: Vec<(Option<u32>, Option<&str>, ProblemSeverity)> = l
        .problems
        .iter()
        .map(|p| (p.line, p.field.as_deref(), p.severity))
        .collect();
    assert_eq!(
        got,
        [
            (
                Some(4),
                Some("mcp_servers.none.agents"),
                ProblemSeverity::Warning
            ),
            (
                Some(5),
                Some("mcp_servers.wrong.agents"),
                ProblemSeverity::Error
            ),
            (
                Some(6),
                Some("mcp_servers.bad-cred.credential_ref"),
                ProblemSeverity::Error
            ),
        ]
    );
    assert!(l.problems[0].message.contains("no agent gets this server"));
}

#[test]
fn checkpoints_are_on_by_default_and_each_number_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let d = Settings::default().checkpoints;
    assert!(d.enabled);
    assert_eq!(d.max_file_bytes, 10 * 1024 * 1024);
    let s = load_from(&write(
        &dir,
        r#"{"checkpoints": {"enabled": false, "max_file_mb": 2, "budget_mb": 100, "max_age_days": 7, "max_wait_secs": 5}}"#,
    ));
    assert!(s.problems.is_empty(), "{:?}", s.problems);
    let c = s.settings.checkpoints;
    assert!(!c.enabled);
    assert_eq!(
        (
            c.max_file_bytes,
            c.budget_bytes,
            c.max_age_days,
            c.max_wait_secs
        ),
        (2 * 1024 * 1024, 100 * 1024 * 1024, 7, 5)
    );
    let bad = load_from(&write(
        &dir,
        "{\"checkpoints\": {\n  \"budget_mb\": 0,\n  \"max_age_days\": \"a week\",\n  \"keep\": 1\n}}",
    ));
    assert_eq!(bad.settings.checkpoints, d, "the defaults are kept");
    let got: Vec<_> = bad
        .problems
        .iter()
        .map(|p| (p.line, p.field.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            (Some(2), Some("checkpoints.budget_mb")),
            (Some(3), Some("checkpoints.max_age_days")),
            (Some(4), Some("checkpoints.keep")),
        ]
    );
}
