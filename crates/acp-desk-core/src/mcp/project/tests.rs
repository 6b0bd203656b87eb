#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use super::*;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/project-mcp")
}

fn one(case: &str) -> ProjectMcpFile {
    let mut files = find(&fixtures().join(case));
    assert_eq!(files.len(), 1, "{files:?}");
    files.remove(0)
}

fn names(servers: &[McpServerConfig]) -> Vec<&str> {
    servers.iter().map(|s| s.name.as_str()).collect()
}

/// `(line, field)` of each problem, the fields a user looks for.
fn places(file: &ProjectMcpFile) -> Vec<(Option<u32>, Option<&str>, ProblemSeverity)> {
    file.problems
        .iter()
        .map(|p| (p.line, p.field.as_deref(), p.severity))
        .collect()
}

#[test]
fn claude_code_servers_load_and_each_bad_entry_is_a_problem_at_its_line() {
    let dir = fixtures().join("claude");
    let file = one("claude");
    assert_eq!(file.name, ".mcp.json");
    assert_eq!(file.kind, ProjectMcpKind::ClaudeCode);
    assert_eq!(file.path, dir.join(".mcp.json"));
    let bytes = std::fs::read(dir.join(".mcp.json")).unwrap();
    let hex: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(file.digest, hex);
    assert_eq!(file.digest.len(), 64);

    assert_eq!(names(&file.servers), ["files", "tracker", "events"]);
    let source = McpSource::Project(dir.join(".mcp.json"));
    assert_eq!(
        file.servers[0],
        McpServerConfig {
            name: "files".into(),
            source: source.clone(),
            transport: McpConfigTransport::Stdio {
                command: "npx".into(),
                args: vec![
                    "-y".into(),
                    "@modelcontextprotocol/server-filesystem".into(),
                    "./docs".into()
                ],
                env: BTreeMap::from([
                    (
                        "API_TOKEN".into(),
                        EnvValue::Plain("tok-in-the-repo".into())
                    ),
                    ("LOG_LEVEL".into(), EnvValue::Plain("debug".into())),
                ]),
            },
            credential_ref: None,
        }
    );
    assert_eq!(
        file.servers[1].transport,
        McpConfigTransport::Http {
            url: "https://mcp.example.com/v1/mcp?key=query-secret".into(),
            headers: BTreeMap::from([("X-Team".into(), "core".into())]),
        }
    );
    assert!(matches!(
        &file.servers[2].transport,
        McpConfigTransport::Sse { url, headers } if url == "http://localhost:9000/sse" && headers.is_empty()
    ));
    assert_eq!(names(&file.held_back), ["needs-env"]);

    use ProblemSeverity::{Error, Warning};
    assert_eq!(
        places(&file),
        [
            (Some(16), Some("mcpServers.needs-env.args[2]"), Error),
            (Some(18), Some("mcpServers.typo.comand"), Warning),
            (Some(18), Some("mcpServers.typo"), Error),
            (Some(19), Some("mcpServers.bad-args.args"), Error),
            (Some(20), Some("mcpServers.ftp.url"), Error),
            (Some(22), Some("extra"), Warning),
        ]
    );
    let placeholder = &file.problems[0].message;
    assert!(
        placeholder.contains("${GITHUB_TOKEN}") && placeholder.contains("not used"),
        "{placeholder}"
    );
    assert!(file.problems[2].message.contains("needs `command`"));
    assert_eq!(file.problems_of("typo").len(), 2);
    assert!(
        file.problems_of("type").is_empty(),
        "a prefix is not a name"
    );
    // Values never reach a problem: they may be secrets.
    for p in &file.problems {
        assert!(!p.to_string().contains("tok-in-the-repo"), "{p}");
        assert!(!p.to_string().contains("--all"), "{p}");
    }
}

#[test]
fn cursor_files_take_comments_trailing_commas_and_a_url_without_type_as_http() {
    let file = one("cursor");
    assert_eq!(file.name, ".cursor/mcp.json");
    assert_eq!(file.kind, ProjectMcpKind::Cursor);
    assert!(file.problems.is_empty(), "{:?}", file.problems);
    assert_eq!(names(&file.servers), ["remote", "local"]);
    assert!(matches!(
        &file.servers[0].transport,
        McpConfigTransport::Http { headers, .. } if headers.contains_key("Authorization")
    ));
    assert!(matches!(
        &file.servers[1].transport,
        McpConfigTransport::Stdio { command, args, .. } if command == "python3" && args == &["-m", "mcp_local"]
    ));
}

#[test]
fn vscode_placeholders_and_env_files_hold_a_server_back_with_a_problem() {
    let file = one("vscode");
    assert_eq!(file.kind, ProjectMcpKind::VsCode);
    assert_eq!(names(&file.servers), ["playwright"]);
    assert_eq!(names(&file.held_back), ["github", "home", "with-env-file"]);
    let github = file.problems_of("github");
    assert_eq!(github.len(), 1);
    assert_eq!(
        github[0].field.as_deref(),
        Some("servers.github.headers.Authorization")
    );
    assert_eq!(github[0].line, Some(9));
    assert!(github[0].message.contains("${input:gh-token}"));
    assert!(github[0].message.contains("VS Code asks the user for"));
    let home = file.problems_of("home");
    assert!(
        home[0].message.contains("environment variable HOME"),
        "{}",
        home[0].message
    );
    // `envFile` is named (its value is not ours to read).
    let env_file: Vec<_> = file
        .problems_of("with-env-file")
        .iter()
        .map(|p| p.field.clone().unwrap())
        .collect();
    assert_eq!(env_file, ["servers.with-env-file.envFile"]);
    // An unknown transport and a ws: URL: both said, the server skipped (not held back).
    let odd: Vec<_> = file
        .problems_of("odd")
        .iter()
        .map(|p| (p.field.clone().unwrap(), p.severity))
        .collect();
    assert_eq!(
        odd,
        [
            ("servers.odd.type".to_string(), ProblemSeverity::Error),
            ("servers.odd.url".to_string(), ProblemSeverity::Error),
        ]
    );
    assert!(
        file.problems_of("odd")[0]
            .message
            .contains("`websocket` is not one of")
    );
    // `inputs` is VS Code's own: not reported as unknown.
    assert!(
        file.problems
            .iter()
            .all(|p| p.field.as_deref() != Some("inputs"))
    );
}

#[test]
fn a_file_that_is_not_json_is_one_problem_and_no_servers() {
    let file = one("broken");
    assert!(file.servers.is_empty() && file.held_back.is_empty());
    assert_eq!(file.problems.len(), 1);
    let p = &file.problems[0];
    assert_eq!(p.line, Some(1));
    assert!(p.message.starts_with("not valid JSON"), "{}", p.message);
    assert!(!file.digest.is_empty(), "a broken file has a digest too");
}

#[test]
fn every_file_is_found_in_order_and_a_folder_without_any_gives_none() {
    let files = find(&fixtures().join("all"));
    let found: Vec<(&str, Vec<&str>)> = files.iter().map(|f| (f.name, names(&f.servers))).collect();
    assert_eq!(
        found,
        [
            (".mcp.json", vec!["one"]),
            (".cursor/mcp.json", vec!["two"]),
            (".vscode/mcp.json", vec!["three"]),
        ]
    );
    assert!(find(&fixtures()).is_empty());
    assert!(find(Path::new("/nonexistent/acp-desk")).is_empty());
    assert_eq!(kind_of(".vscode/mcp.json"), Some(ProjectMcpKind::VsCode));
    assert_eq!(kind_of("../.mcp.json"), None);
}

#[test]
fn a_changed_byte_is_a_new_digest() {
    let a = parse(
        ".mcp.json",
        ProjectMcpKind::ClaudeCode,
        Path::new("/p/.mcp.json"),
        r#"{"mcpServers": {"a": {"command": "x"}}}"#,
    );
    let b = parse(
        ".mcp.json",
        ProjectMcpKind::ClaudeCode,
        Path::new("/p/.mcp.json"),
        r#"{"mcpServers": {"a": {"command": "y"}}}"#,
    );
    assert_eq!(a.servers.len(), 1);
    assert_ne!(a.digest, b.digest);
    // The empty input's SHA-256, an independent check of the hex.
    assert_eq!(
        digest(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

#[test]
fn big_files_and_things_that_are_not_files_are_refused_without_reading_them() {
    let dir = tempfile::tempdir().unwrap();
    let big = vec![b' '; usize::try_from(MAX_FILE_BYTES).unwrap() + 1];
    std::fs::write(dir.path().join(".mcp.json"), &big).unwrap();
    std::fs::create_dir(dir.path().join(".cursor")).unwrap();
    std::fs::create_dir(dir.path().join(".cursor/mcp.json")).unwrap();
    let files = find(dir.path());
    assert_eq!(files.len(), 2);
    assert!(
        files[0].problems[0].message.contains("more than the"),
        "{:?}",
        files[0].problems
    );
    assert!(files[1].problems[0].message.contains("not a regular file"));
    assert!(files.iter().all(|f| f.servers.is_empty()));
}

#[cfg(unix)]
#[test]
fn a_fifo_is_refused_at_once_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".mcp.json");
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let files = find(dir.path());
    assert_eq!(files.len(), 1);
    assert!(files[0].problems[0].message.contains("not a regular file"));
}
