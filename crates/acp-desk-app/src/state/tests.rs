#![allow(clippy::unwrap_used)]

use super::*;

fn state_path(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join(STATE_FILE_NAME)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_missing_file_is_the_defaults_and_is_not_created_until_a_change() {
    let dir = tempfile::tempdir().unwrap();
    let path = state_path(&dir);
    let (mut file, warning) = StateFile::open(&path);
    assert!(warning.is_none());
    assert!(file.saves());
    assert_eq!(file.state(), &AppState::default());
    assert!(file.state().sidebar.shown, "the sidebar is shown at first");
    // Nothing changed: nothing written.
    file.update(|_| {}).unwrap();
    file.update(|s| s.sidebar.shown = true).unwrap();
    assert!(!path.exists());
}

#[test]
fn round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = state_path(&dir);
    let (mut file, _) = StateFile::open(&path);
    file.update(|s| {
        s.switches.insert("allowReadsInsideRoots".into(), true);
        s.switches.insert("followOutput".into(), false);
        assert!(s.mark_notice_seen("welcome"));
        assert!(!s.mark_notice_seen("welcome"));
        s.add_recent_folder("/home/u/a");
        s.add_recent_folder("/home/u/b");
        s.new_session_agent = Some("claude".into());
        s.sidebar = Sidebar {
            shown: false,
            width: Some(280),
            ..Sidebar::default()
        };
        s.open_sessions = vec![
            OpenSession::new("/home/u/b", "claude").with_session_id("s18c0-1-1"),
            OpenSession::new("/home/u/a", "demo"),
            OpenSession::new("/home/u/b", "claude"),
        ];
    })
    .unwrap();
    let expected = file.state().clone();
    drop(file);

    let json = read_json(&path);
    assert_eq!(json["version"], 1);
    assert_eq!(json["recentFolders"][0], "/home/u/b");
    assert_eq!(json["sidebar"]["width"], 280);
    assert_eq!(json["openSessions"][1]["agent"], "demo");
    assert_eq!(json["openSessions"][0]["sessionId"], "s18c0-1-1");
    assert!(json["openSessions"][1].get("sessionId").is_none());

    let (file, warning) = StateFile::open(&path);
    assert!(warning.is_none());
    assert_eq!(file.state(), &expected);
    let s = file.state();
    assert_eq!(s.switch("allowReadsInsideRoots"), Some(true));
    assert_eq!(s.switch("followOutput"), Some(false));
    assert_eq!(s.switch("never-changed"), None);
    assert!(s.notice_seen("welcome"));
    assert!(!s.notice_seen("other"));
    assert_eq!(
        s.recent_folders,
        vec![PathBuf::from("/home/u/b"), PathBuf::from("/home/u/a")]
    );
    // Sidebar order kept, duplicates allowed (two sessions in one folder).
    let order: Vec<_> = s
        .open_sessions
        .iter()
        .map(|o| (o.folder.to_str().unwrap(), o.agent.as_str()))
        .collect();
    assert_eq!(
        order,
        vec![
            ("/home/u/b", "claude"),
            ("/home/u/a", "demo"),
            ("/home/u/b", "claude")
        ]
    );
    assert_eq!(files_in(dir.path()), vec![STATE_FILE_NAME]);
}

#[test]
fn a_corrupt_file_is_set_aside_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let path = state_path(&dir);
    for text in [
        "{oops",
        "",
        r#"{"recentFolders": []}"#,
        r#"{"version": 1, "recentFolders": 5}"#,
    ] {
        std::fs::write(&path, text).unwrap();
        let (mut file, warning) = StateFile::open(&path);
        let Some(StateWarning::SetAside { moved_to, reason }) = warning.clone() else {
            panic!("{text:?}: {warning:?}")
        };
        assert!(!reason.is_empty());
        assert!(
            warning
                .unwrap()
                .to_string()
                .contains(&*moved_to.to_string_lossy())
        );
        let name = moved_to.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("state.json.bad-"), "{name}");
        assert_eq!(std::fs::read_to_string(&moved_to).unwrap(), text);
        assert!(!path.exists());
        assert_eq!(file.state(), &AppState::default());
        // The app goes on and saves a good file in its place.
        assert!(file.saves());
        file.update(|s| s.add_recent_folder("/p")).unwrap();
        assert_eq!(read_json(&path)["recentFolders"][0], "/p");
        std::fs::remove_file(&path).unwrap();
    }
    // Every bad file kept, even several in the same second.
    let bad = files_in(dir.path());
    assert_eq!(bad.len(), 4, "{bad:?}");
}

#[test]
fn unknown_fields_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = state_path(&dir);
    std::fs::write(
        &path,
        r#"{
            "version": 1,
            "recentFolders": ["/a"],
            "windowGeometry": {"x": 10, "y": 20, "maximized": false},
            "sidebar": {"shown": false, "collapsedGroups": ["old"]},
            "openSessions": [{"folder": "/a", "agent": "demo", "pinned": true}]
        }"#,
    )
    .unwrap();
    let (mut file, warning) = StateFile::open(&path);
    assert!(warning.is_none());
    assert!(!file.state().sidebar.shown);
    assert_eq!(file.state().open_sessions[0].agent, "demo");
    file.update(|s| {
        s.add_recent_folder("/b");
        s.sidebar.width = Some(300);
    })
    .unwrap();
    let json = read_json(&path);
    assert_eq!(json["version"], 1);
    assert_eq!(
        json["windowGeometry"],
        serde_json::json!({"x": 10, "y": 20, "maximized": false})
    );
    assert_eq!(
        json["sidebar"],
        serde_json::json!({"shown": false, "width": 300, "collapsedGroups": ["old"]})
    );
    assert_eq!(json["openSessions"][0]["pinned"], true);
    assert_eq!(json["recentFolders"], serde_json::json!(["/b", "/a"]));
}

#[test]
fn recent_folders_are_deduplicated_and_capped() {
    let mut s = AppState::default();
    for i in 0..30 {
        s.add_recent_folder(format!("/p/{i}"));
    }
    s.add_recent_folder("/p/25");
    assert_eq!(s.recent_folders.len(), MAX_RECENT_FOLDERS);
    assert_eq!(s.recent_folders[0], PathBuf::from("/p/25"));
    assert_eq!(s.recent_folders[1], PathBuf::from("/p/29"));
    let mut unique = s.recent_folders.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), s.recent_folders.len());
    // The oldest fell off.
    assert!(!s.recent_folders.contains(&PathBuf::from("/p/0")));

    // A hand-edited file is put right on load, and a caller pushing by hand on update.
    let dir = tempfile::tempdir().unwrap();
    let path = state_path(&dir);
    let many: Vec<String> = (0..25).map(|i| format!("/q/{}", i % 22)).collect();
    std::fs::write(
        &path,
        serde_json::to_vec(&serde_json::json!({"version": 1, "recentFolders": many})).unwrap(),
    )
    .unwrap();
    let (mut file, _) = StateFile::open(&path);
    let r = &file.state().recent_folders;
    assert_eq!(r.len(), MAX_RECENT_FOLDERS);
    assert_eq!(r[0], PathBuf::from("/q/0"));
    file.update(|s| s.recent_folders.push("/q/0".into()))
        .unwrap();
    assert_eq!(file.state().recent_folders.len(), MAX_RECENT_FOLDERS);
    assert_eq!(
        file.state()
            .recent_folders
            .iter()
            .filter(|p| p.as_os_str() == "/q/0")
            .count(),
        1
    );
}

#[test]
fn a_failed_write_is_an_error_and_keeps_the_change_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    // Tests run as root, for whom a read-only folder is writable: make the parent a file.
    let parent = dir.path().join("data");
    let path = parent.join(STATE_FILE_NAME);
    let (mut file, warning) = StateFile::open(&path);
    assert!(warning.is_none());
    std::fs::write(&parent, b"a file, not a folder").unwrap();
    let err = file.update(|s| s.add_recent_folder("/kept")).unwrap_err();
    let StateError::Write { path: p, .. } = &err;
    assert_eq!(p, &path);
    assert!(err.to_string().contains("state.json"), "{err}");
    assert_eq!(
        file.state().recent_folders,
        vec![PathBuf::from("/kept")],
        "the change stays in memory"
    );
    assert_eq!(std::fs::read(&parent).unwrap(), b"a file, not a folder");

    // Once writing works again, the next update (even one changing nothing) saves it.
    std::fs::remove_file(&parent).unwrap();
    file.update(|_| {}).unwrap();
    let (reopened, _) = StateFile::open(&path);
    assert_eq!(
        reopened.state().recent_folders,
        vec![PathBuf::from("/kept")]
    );
}

#[test]
fn an_unreadable_file_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = state_path(&dir);
    // A folder in the file's place cannot be read, even by root.
    std::fs::create_dir(&path).unwrap();
    let (mut file, warning) = StateFile::open(&path);
    assert!(
        matches!(warning, Some(StateWarning::Unreadable { .. })),
        "{warning:?}"
    );
    assert!(!file.saves());
    file.update(|s| s.add_recent_folder("/in-memory")).unwrap();
    assert_eq!(file.state().recent_folders.len(), 1);
    assert!(path.is_dir());
    assert_eq!(files_in(dir.path()), vec![STATE_FILE_NAME]);
}

#[test]
fn a_newer_format_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = state_path(&dir);
    // Fields a newer format might have changed the shape of.
    let text = r#"{"version": 2, "recentFolders": {"pinned": ["/a"]}}"#;
    std::fs::write(&path, text).unwrap();
    let (mut file, warning) = StateFile::open(&path);
    assert_eq!(
        warning,
        Some(StateWarning::NewerFormat {
            path: path.clone(),
            found: 2
        })
    );
    assert_eq!(file.state(), &AppState::default());
    file.update(|s| s.add_recent_folder("/b")).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    assert_eq!(files_in(dir.path()), vec![STATE_FILE_NAME]);
}

#[cfg(unix)]
#[test]
fn a_path_that_is_not_utf8_stays_in_memory_and_does_not_stop_saving() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let path = state_path(&dir);
    let odd = PathBuf::from(std::ffi::OsStr::from_bytes(b"/home/u/caf\xe9"));
    let (mut file, _) = StateFile::open(&path);
    file.update(|s| {
        s.add_recent_folder("/ok");
        s.add_recent_folder(odd.clone());
        s.open_sessions.push(OpenSession::new(odd.clone(), "demo"));
    })
    .unwrap();
    assert_eq!(file.state().recent_folders[0], odd);
    let json = read_json(&path);
    assert_eq!(json["recentFolders"], serde_json::json!(["/ok"]));
    assert_eq!(json["openSessions"], serde_json::json!([]));
}

#[test]
fn theme_and_zoom_are_saved_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = state_path(&dir);
    let (mut file, _) = StateFile::open(&path);
    assert_eq!(file.state().theme, Theme::System);
    assert_eq!(file.state().zoom, 1.0);
    file.update(|s| {
        s.theme = Theme::Dark;
        s.zoom_step(ZoomStep::In);
        s.zoom_step(ZoomStep::In);
    })
    .unwrap();
    let json = read_json(&path);
    assert_eq!(json["theme"], "dark");
    assert_eq!(json["zoom"], 1.25);
    let (file, warning) = StateFile::open(&path);
    assert!(warning.is_none());
    assert_eq!(file.state().theme, Theme::Dark);
    assert_eq!(file.state().zoom, 1.25);
}

#[test]
fn a_theme_this_build_does_not_know_reads_as_system_and_a_wild_zoom_is_clamped() {
    let dir = tempfile::tempdir().unwrap();
    let path = state_path(&dir);
    std::fs::write(
        &path,
        r#"{"version": 1, "theme": "high-contrast", "zoom": 40, "recentFolders": ["/p"]}"#,
    )
    .unwrap();
    let (file, warning) = StateFile::open(&path);
    assert!(warning.is_none(), "not a corrupt file: {warning:?}");
    assert_eq!(file.state().theme, Theme::System);
    assert_eq!(file.state().zoom, 2.0);
    assert_eq!(file.state().recent_folders, [PathBuf::from("/p")]);
}

#[test]
fn zoom_steps_through_the_levels_and_stops_at_the_ends() {
    let mut s = AppState::default();
    // A plain walk up from 100 % and down again, written out rather than computed.
    let ups: Vec<f64> = (0..6).map(|_| s.zoom_step(ZoomStep::In)).collect();
    assert_eq!(ups, [1.1, 1.25, 1.5, 1.75, 2.0, 2.0]);
    assert_eq!(s.zoom_step(ZoomStep::Reset), 1.0);
    let downs: Vec<f64> = (0..7).map(|_| s.zoom_step(ZoomStep::Out)).collect();
    assert_eq!(downs, [0.9, 0.8, 0.75, 0.67, 0.5, 0.5, 0.5]);
    // Between two levels (a hand-edited file): to the nearer level in that direction.
    s.zoom = 1.2;
    assert_eq!(s.zoom_step(ZoomStep::In), 1.25);
    s.zoom = 1.2;
    assert_eq!(s.zoom_step(ZoomStep::Out), 1.1);
}

#[test]
fn open_sessions_and_the_shown_one_round_trip_in_sidebar_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = state_path(&dir);
    let (mut file, _) = StateFile::open(&path);
    file.update(|s| {
        s.set_open_sessions(
            vec![
                OpenSession::new("/p/b", "demo").with_session_id("s1a-1-1"),
                OpenSession::new("/p/a", "claude").with_session_id("s1a-1-2"),
                // Never recorded (its agent never started): kept, without an id.
                OpenSession::new("/p/c", "broken"),
            ],
            Some(1),
        )
    })
    .unwrap();
    drop(file);
    let json = read_json(&path);
    assert_eq!(json["shownSession"], 1);
    assert_eq!(json["openSessions"][1]["sessionId"], "s1a-1-2");

    let (file, warning) = StateFile::open(&path);
    assert!(warning.is_none());
    let s = file.state();
    let listed: Vec<_> = s
        .open_sessions
        .iter()
        .map(|o| {
            (
                o.folder.to_str().unwrap(),
                o.agent.as_str(),
                o.session_id.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("/p/b", "demo", Some("s1a-1-1")),
            ("/p/a", "claude", Some("s1a-1-2")),
            ("/p/c", "broken", None),
        ]
    );
    assert_eq!(
        s.shown().and_then(|o| o.session_id.as_deref()),
        Some("s1a-1-2")
    );

    // Closing every session: nothing shown, and the file says so.
    let (mut file, _) = StateFile::open(&path);
    file.update(|s| s.set_open_sessions(Vec::new(), None))
        .unwrap();
    let json = read_json(&path);
    assert_eq!(json["openSessions"], serde_json::json!([]));
    assert_eq!(json["shownSession"], Value::Null);
}

#[test]
fn a_state_file_from_before_open_sessions_still_loads() {
    let dir = tempfile::tempdir().unwrap();
    let path = state_path(&dir);
    // What ACP Desk wrote before the sidebar was kept: no `openSessions`, no `shownSession`.
    std::fs::write(
        &path,
        r#"{"version": 1, "recentFolders": ["/a"], "theme": "dark", "zoom": 1.25}"#,
    )
    .unwrap();
    let (file, warning) = StateFile::open(&path);
    assert!(warning.is_none(), "{warning:?}");
    let s = file.state();
    assert_eq!(s.recent_folders, [PathBuf::from("/a")]);
    assert_eq!(s.theme, Theme::Dark);
    assert!(s.open_sessions.is_empty());
    assert_eq!(s.shown_session, None);
    assert!(s.shown().is_none());

    // Open sessions without history ids or a shown one (the first shape of the field).
    std::fs::write(
        &path,
        r#"{"version": 1, "openSessions": [{"folder": "/a", "agent": "demo"}]}"#,
    )
    .unwrap();
    let (file, warning) = StateFile::open(&path);
    assert!(warning.is_none(), "{warning:?}");
    assert_eq!(file.state().open_sessions, [OpenSession::new("/a", "demo")]);
    assert_eq!(file.state().shown_session, None);
}

#[test]
fn a_shown_session_past_the_list_is_none_and_unknown_fields_of_a_session_survive_a_rewrite() {
    let dir = tempfile::tempdir().unwrap();
    let path = state_path(&dir);
    std::fs::write(
        &path,
        r#"{"version": 1, "shownSession": 4,
            "openSessions": [{"folder": "/a", "agent": "demo", "sessionId": "s1", "pinned": true}]}"#,
    )
    .unwrap();
    let (mut file, warning) = StateFile::open(&path);
    assert!(warning.is_none());
    assert_eq!(
        file.state().shown_session,
        None,
        "a hand-edited index past the list"
    );
    file.update(|s| {
        s.set_open_sessions(
            vec![
                OpenSession::new("/b", "demo").with_session_id("s2"),
                OpenSession::new("/a", "demo").with_session_id("s1"),
            ],
            Some(0),
        )
    })
    .unwrap();
    let json = read_json(&path);
    assert_eq!(
        json["openSessions"][1]["pinned"], true,
        "a newer ACP Desk's field"
    );
    assert!(json["openSessions"][0].get("pinned").is_none());
    assert_eq!(json["shownSession"], 0);
}

#[test]
fn recent_folders_keep_their_last_agent_and_old_files_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = state_path(&dir);
    // A file from before `recentAgents`: its folders have no agent, and nothing is lost.
    std::fs::write(
        &path,
        r#"{"version": 1, "recentFolders": ["/p/old", "/p/b"]}"#,
    )
    .unwrap();
    let (mut file, warning) = StateFile::open(&path);
    assert!(warning.is_none());
    assert_eq!(
        file.state().recent(),
        [(Path::new("/p/old"), None), (Path::new("/p/b"), None)]
    );
    file.update(|s| {
        s.add_recent("/p/a", Some("claude".into()));
        s.add_recent("/p/b", Some("demo".into()));
        // Opened again with another agent: the last one is kept.
        s.add_recent("/p/a", Some("gemini".into()));
    })
    .unwrap();
    let json = read_json(&path);
    assert_eq!(
        json["recentFolders"],
        serde_json::json!(["/p/a", "/p/b", "/p/old"])
    );
    // The folders' list keeps its old shape (an older ACP Desk reads it); the agents beside it.
    assert_eq!(
        json["recentAgents"],
        serde_json::json!({"/p/a": "gemini", "/p/b": "demo"})
    );
    let (mut file, _) = StateFile::open(&path);
    assert_eq!(
        file.state().recent(),
        [
            (Path::new("/p/a"), Some("gemini")),
            (Path::new("/p/b"), Some("demo")),
            (Path::new("/p/old"), None)
        ]
    );
    // A command-line agent forgets the folder's agent; a folder falling off the list takes
    // its agent along.
    file.update(|s| {
        s.add_recent("/p/b", None);
        for i in 0..MAX_RECENT_FOLDERS {
            s.add_recent(format!("/q/{i}"), Some("demo".into()));
        }
    })
    .unwrap();
    assert!(
        file.state()
            .recent_agents
            .keys()
            .all(|f| f.starts_with("/q"))
    );
    assert_eq!(file.state().recent_agents.len(), MAX_RECENT_FOLDERS);
    // A hand-edited agent for a folder not in the list is dropped on load.
    std::fs::write(
        &path,
        r#"{"version": 1, "recentFolders": ["/p/a"], "recentAgents": {"/p/a": "x", "/gone": "y"}}"#,
    )
    .unwrap();
    let (mut file, _) = StateFile::open(&path);
    assert_eq!(file.state().recent(), [(Path::new("/p/a"), Some("x"))]);
    assert_eq!(file.state().recent_agents.len(), 1);
    file.update(AppState::clear_recent).unwrap();
    let json = read_json(&path);
    assert_eq!(json["recentFolders"], serde_json::json!([]));
    assert_eq!(json["recentAgents"], serde_json::json!({}));
}
