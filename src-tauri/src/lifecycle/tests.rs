#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::Path;

use acp_desk_app::observer::{Observer, SessionStatus};
use acp_desk_app::registry::SessionInfo;
use acp_desk_core::events::SessionState;
use acp_desk_store::{LaunchOrigin, StoredLaunch};

use super::close::{CloseAction, close_action};
use super::instance::{dbus_id, no_session_bus, parse_second_launch};
use super::{Turns, quit_question};
use crate::Launch;

fn info(id: &str) -> SessionInfo {
    SessionInfo {
        id: id.into(),
        folder: "/p/a".into(),
        agent: "demo".into(),
        launch: StoredLaunch {
            origin: LaunchOrigin::Named,
            program: "acp-desk-demo-agent".into(),
            args: Vec::new(),
            args_redacted: false,
            env_names: Vec::new(),
        },
    }
}

fn state(state: SessionState) -> SessionStatus {
    SessionStatus::State {
        state,
        detail: None,
    }
}

#[test]
fn turns_count_the_sessions_prompting_until_their_next_status_or_close() {
    let turns = Turns::default();
    let (s1, s2) = (info("s1"), info("s2"));
    turns.on_status(&s1, &SessionStatus::Opened);
    turns.on_status(&s1, &state(SessionState::Starting));
    turns.on_status(&s1, &state(SessionState::Ready));
    assert_eq!(turns.running(), 0);
    turns.on_status(&s1, &state(SessionState::Prompting));
    turns.on_status(&s2, &state(SessionState::Prompting));
    // Told twice (a status repeated): still one turn of s1.
    turns.on_status(&s1, &state(SessionState::Prompting));
    assert_eq!(turns.running(), 2);
    turns.on_status(&s1, &state(SessionState::Ready));
    assert_eq!(turns.running(), 1);
    // An agent that died mid-turn, and a session closed mid-turn, run no turn.
    turns.on_status(&s2, &state(SessionState::Dead));
    assert_eq!(turns.running(), 0);
    turns.on_status(&s1, &state(SessionState::Prompting));
    turns.on_status(&s1, &SessionStatus::Closed);
    assert_eq!(turns.running(), 0);
}

#[test]
fn the_quit_question_counts_the_running_turns_and_none_means_no_question() {
    assert_eq!(quit_question(0), None);
    assert_eq!(
        quit_question(1).unwrap(),
        "1 session is still working. Quit anyway? Its turn stops and its agent ends."
    );
    assert_eq!(
        quit_question(3).unwrap(),
        "3 sessions are still working. Quit anyway? Their turns stop and their agents end."
    );
}

#[test]
fn closing_hides_only_with_a_tray_host_and_the_setting_on() {
    assert_eq!(close_action(true, true), CloseAction::Hide);
    // Stock GNOME: no tray to come back from.
    assert_eq!(close_action(false, true), CloseAction::Quit);
    assert_eq!(close_action(true, false), CloseAction::Quit);
    assert_eq!(close_action(false, false), CloseAction::Quit);
}

#[test]
fn a_second_launch_resolves_its_folder_against_its_own_working_folder() {
    let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // The program name comes first, as the plugin passes it; it is not the folder.
    assert_eq!(
        parse_second_launch(argv(&["/usr/bin/acp-desk", "proj"]), "/home/u/work"),
        Launch {
            folder: Some("/home/u/work/proj".into()),
            agent: None
        }
    );
    assert_eq!(
        parse_second_launch(
            argv(&["acp-desk", "--agent", "claude", "/abs/proj", "--new-window"]),
            "/elsewhere"
        ),
        Launch {
            folder: Some("/abs/proj".into()),
            agent: Some("claude".into())
        }
    );
    assert_eq!(
        parse_second_launch(argv(&["acp-desk"]), "/home/u"),
        Launch::default()
    );
    // No working folder known (the plugin sends "" when the second launch had none): left
    // relative, for the window's folder check to name.
    assert_eq!(
        parse_second_launch(argv(&["acp-desk", "proj"]), "").folder,
        Some("proj".into())
    );
}

#[test]
fn the_dbus_name_is_the_identifier_or_one_per_moved_data_folder() {
    assert_eq!(dbus_id(None), "dev.acpdesk.desk");
    let a = dbus_id(Some(Path::new("/tmp/test-a/data")));
    let b = dbus_id(Some(Path::new("/tmp/test-b/data")));
    assert_ne!(a, b);
    assert_eq!(a, dbus_id(Some(Path::new("/tmp/test-a/data"))), "stable");
    // A valid D-Bus name once the plugin adds `.SingleInstance`: elements of [A-Za-z0-9_-]
    // not starting with a digit.
    let name = format!("{a}.SingleInstance");
    zbus::names::WellKnownName::try_from(name.as_str()).unwrap();
    assert!(a.starts_with("dev.acpdesk.desk.d"), "{a}");
}

#[test]
fn the_identifier_is_the_one_in_tauri_conf() {
    let conf: serde_json::Value =
        serde_json::from_str(include_str!("../../../tauri.conf.json")).unwrap();
    assert_eq!(conf["identifier"], acp_desk_core::paths::APP_IDENTIFIER);
}

#[test]
fn without_a_session_bus_address_or_socket_there_is_no_bus() {
    let dir = tempfile::tempdir().unwrap();
    let none = no_session_bus(None, Some(dir.path()));
    if cfg!(target_os = "linux") {
        assert!(none.unwrap().contains("DBUS_SESSION_BUS_ADDRESS"));
        assert!(no_session_bus(Some("".as_ref()), None).is_some());
        std::fs::write(dir.path().join("bus"), "").unwrap();
        assert_eq!(
            no_session_bus(None, Some(dir.path())),
            None,
            "zbus's fallback"
        );
    }
    assert_eq!(
        no_session_bus(Some("unix:path=/run/user/1/bus".as_ref()), None),
        None
    );
}

#[test]
fn open_recent_labels_name_the_folder_and_its_agent_and_the_path_where_names_repeat() {
    use super::recent::labels;
    use std::path::PathBuf;
    let recent = vec![
        (PathBuf::from("/home/u/proj"), Some("claude".to_string())),
        (PathBuf::from("/home/u/R&D"), None),
        (PathBuf::from("/work/proj"), Some("demo".to_string())),
        (PathBuf::from("/"), None),
    ];
    assert_eq!(
        labels(&recent),
        [
            "/home/u/proj — claude",
            // A single `&` would underline the D.
            "R&&D",
            "/work/proj — demo",
            "/",
        ]
    );
}
