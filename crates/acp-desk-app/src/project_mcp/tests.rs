#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use super::*;
use crate::state::StateFile;

const CLAUDE: &str = r#"{
  "mcpServers": {
    "files": { "command": "npx", "args": ["-y", "server-fs", "--root", "./docs"], "env": { "TOKEN": "tok-123" } },
    "gh": { "command": "gh-mcp", "args": ["--token", "${GITHUB_TOKEN}"] },
    "tracker": { "type": "http", "url": "https://u:pw@mcp.example.com/v1?key=k-456", "headers": { "X-Key": "h-789" } },
    "nope": { "comand": "x" }
  }
}"#;

fn folder_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn an_undecided_file_is_offered_with_everything_it_would_run_and_no_values() {
    let dir = folder_with(&[(".mcp.json", CLAUDE)]);
    let offer = offer(&AppState::default(), dir.path()).unwrap();
    assert_eq!(offer.files.len(), 1);
    let f = &offer.files[0];
    assert_eq!(
        (f.file.as_str(), f.tool.as_str()),
        (".mcp.json", "Claude Code")
    );
    assert_eq!(f.previous, None);
    let rows: Vec<(&str, bool)> = f
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.usable))
        .collect();
    // The file's order, held-back servers in their place.
    assert_eq!(rows, [("files", true), ("gh", false), ("tracker", true)]);
    assert_eq!(
        f.servers[0].command.as_deref().unwrap(),
        ["npx", "-y", "server-fs", "--root", "./docs"]
    );
    assert_eq!(f.servers[0].env, ["TOKEN"]);
    assert_eq!(f.servers[1].problems.len(), 1);
    let tracker = &f.servers[2];
    assert_eq!(tracker.transport, "http");
    assert_eq!(
        tracker.shown_url.as_deref(),
        Some("https://mcp.example.com/v1")
    );
    assert!(tracker.url_has_hidden_parts);
    assert_eq!(tracker.headers, ["X-Key"]);
    // The skipped entry's problems are the file's (it has no row of its own).
    assert!(
        f.problems
            .iter()
            .any(|p| p.field.as_deref() == Some("mcpServers.nope"))
    );
    let json = serde_json::to_string(&offer).unwrap();
    for secret in ["tok-123", "k-456", "h-789", "pw@"] {
        assert!(!json.contains(secret), "{secret} in {json}");
    }
    let note = describe(&offer.files).join("\n");
    assert!(
        note.contains("files (stdio): npx -y server-fs --root ./docs [env: TOKEN]"),
        "{note}"
    );
    assert!(
        note.contains("https://mcp.example.com/v1 (+ a query not shown) [headers: X-Key]"),
        "{note}"
    );
    assert!(
        note.contains("gh (stdio): gh-mcp --token '${GITHUB_TOKEN}' — not used"),
        "{note}"
    );
    assert!(!note.contains("tok-123"));
}

#[test]
fn servers_are_used_only_after_use_and_only_while_the_file_is_unchanged() {
    let dir = folder_with(&[(".mcp.json", CLAUDE)]);
    let folder = dir.path();
    let mut state = AppState::default();
    assert!(
        approved_servers(&state, folder).is_empty(),
        "never on its own"
    );

    let digest = offer(&state, folder).unwrap().files[0].digest.clone();
    check_decision(folder, ".mcp.json", &digest).unwrap();
    record(
        &mut state,
        folder,
        ".mcp.json",
        &digest,
        ProjectMcpChoice::Use,
    );
    let used: Vec<String> = approved_servers(&state, folder)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(
        used,
        ["files", "tracker"],
        "held-back servers are never passed"
    );
    assert!(offer(&state, folder).is_none(), "decided: not asked again");

    // One byte changed: not used, and offered again naming the earlier decision.
    std::fs::write(folder.join(".mcp.json"), CLAUDE.replace("./docs", "./src")).unwrap();
    assert!(approved_servers(&state, folder).is_empty());
    let again = offer(&state, folder).unwrap();
    assert_eq!(again.files[0].previous, Some(ProjectMcpChoice::Use));
    assert_ne!(again.files[0].digest, digest);
    // A decision on what was shown before is refused: the user did not see this version.
    let stale = check_decision(folder, ".mcp.json", &digest).unwrap_err();
    assert!(
        matches!(stale, AppError::ProjectConfigChanged(_)),
        "{stale:?}"
    );
    assert!(stale.to_string().contains("changed since it was shown"));

    record(
        &mut state,
        folder,
        ".mcp.json",
        &again.files[0].digest,
        ProjectMcpChoice::Ignore,
    );
    assert!(approved_servers(&state, folder).is_empty());
    assert!(offer(&state, folder).is_none());
}

#[test]
fn decisions_are_per_folder_and_per_file() {
    let a = folder_with(&[
        (
            ".mcp.json",
            r#"{"mcpServers": {"one": {"command": "one"}}}"#,
        ),
        (
            ".vscode/mcp.json",
            r#"{"servers": {"two": {"type": "stdio", "command": "two"}}}"#,
        ),
    ]);
    let b = folder_with(&[(
        ".mcp.json",
        r#"{"mcpServers": {"one": {"command": "one"}}}"#,
    )]);
    let mut state = AppState::default();
    let offered = offer(&state, a.path()).unwrap();
    assert_eq!(offered.files.len(), 2);
    let vscode = &offered.files[1];
    record(
        &mut state,
        a.path(),
        &vscode.file,
        &vscode.digest,
        ProjectMcpChoice::Use,
    );
    let used: Vec<String> = approved_servers(&state, a.path())
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(used, ["two"]);
    let left: Vec<String> = offer(&state, a.path())
        .unwrap()
        .files
        .into_iter()
        .map(|f| f.file)
        .collect();
    assert_eq!(left, [".mcp.json"]);
    // The same bytes in another folder are another decision.
    assert!(approved_servers(&state, b.path()).is_empty());
    assert!(offer(&state, b.path()).is_some());
}

#[test]
fn only_the_files_looked_for_can_be_named_and_a_gone_file_is_said() {
    let dir = folder_with(&[(".mcp.json", CLAUDE)]);
    let e = check_decision(dir.path(), "../etc/passwd", "x").unwrap_err();
    assert!(matches!(e, AppError::Internal(_)));
    let e = check_decision(dir.path(), ".cursor/mcp.json", "x").unwrap_err();
    assert!(matches!(e, AppError::ProjectConfigChanged(_)));
    assert!(e.to_string().contains("is gone"));
}

#[test]
fn decisions_survive_the_state_file_and_a_newer_decision_is_asked_again() {
    let dir = folder_with(&[(".mcp.json", CLAUDE)]);
    let folder = dir.path().to_owned();
    let data = tempfile::tempdir().unwrap();
    let path = data.path().join("state.json");
    let digest = offer(&AppState::default(), &folder).unwrap().files[0]
        .digest
        .clone();
    {
        let (mut file, _) = StateFile::open(&path);
        let (f, d) = (folder.clone(), digest.clone());
        file.update(move |s| record(s, &f, ".mcp.json", &d, ProjectMcpChoice::Use))
            .unwrap();
    }
    let (file, warning) = StateFile::open(&path);
    assert!(warning.is_none());
    assert_eq!(approved_servers(file.state(), &folder).len(), 2);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("\"projectMcp\"") && text.contains(&digest),
        "{text}"
    );
    assert!(
        !text.contains("tok-123"),
        "no value of the file reaches the state file"
    );

    // A newer ACP Desk's decision ("always"?) and field: kept, never read as use.
    let newer = text.replace(
        "\"decision\": \"use\"",
        "\"decision\": \"trusted\", \"by\": \"policy\"",
    );
    std::fs::write(&path, newer).unwrap();
    let (mut file, warning) = StateFile::open(&path);
    assert!(warning.is_none(), "{warning:?}");
    assert!(approved_servers(file.state(), &folder).is_empty());
    assert!(offer(file.state(), &folder).is_some());
    file.update(|s| s.zoom = 1.25).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"by\": \"policy\""), "{text}");
    assert!(text.contains("\"decision\": \"trusted\""), "{text}");
}
