//! The shell on Tauri's mock runtime (no display): commands answer through real IPC, errors
//! cross as `{code, message}`; and sessions with the real demo agent (built by
//! `cargo build --workspace --bins`), attached views getting the snapshot and then live frames.

// Test helpers too: a panic with the error is exactly the failure report wanted here.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

mod support;
use support::wait_for;

use acp_desk_core::StreamEvent;
use acp_desk_core::events::PermissionResolution;
use acp_desk_core::hub::RecordingView;
use acp_desk_shell::files;
use acp_desk_shell::ipc::{IpcError, PromptPart};
use acp_desk_shell::sessions::Sessions;
use acp_desk_shell::{Launch, build_app};
use serde_json::{Value, json};
use tauri::Manager;
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{INVOKE_KEY, get_ipc_response, mock_builder, mock_context, noop_assets};
use tauri::webview::InvokeRequest;

/// Settings, rules and audit logs of this test process only, never the user's real folders.
fn isolated() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
        // SAFETY: set once, before any session starts, by whichever test comes first; every test
        // reads the same values.
        unsafe {
            std::env::set_var("ACP_DESK_CONFIG_DIR", dir.path().join("config"));
            std::env::set_var("ACP_DESK_DATA_DIR", dir.path().join("data"));
        }
        std::fs::write(
            dir.path().join("config/settings.json"),
            r#"{"agent_servers": {"broken": {"command": "/nonexistent/agent"}}}"#,
        )
        .unwrap();
        dir
    })
    .path()
}

fn text_parts(text: &str) -> Vec<PromptPart> {
    vec![PromptPart::Text { text: text.into() }]
}

fn invoke(
    webview: &tauri::WebviewWindow<tauri::test::MockRuntime>,
    cmd: &str,
    args: Value,
) -> Result<Value, Value> {
    get_ipc_response(
        webview,
        InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            // tauri://localhost is the app's own origin on Linux.
            url: "tauri://localhost".parse().unwrap(),
            body: InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|b| b.deserialize::<Value>().unwrap())
}

fn mock_app(
    launch: Launch,
) -> (
    tauri::App<tauri::test::MockRuntime>,
    tauri::WebviewWindow<tauri::test::MockRuntime>,
) {
    isolated();
    let app = build_app(mock_builder(), launch)
        .build(mock_context(noop_assets()))
        .unwrap();
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    (app, webview)
}

#[test]
fn app_info_names_the_folder_and_agent_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let launch = Launch::parse([
        "--agent".to_string(),
        "demo".into(),
        dir.path().display().to_string(),
    ]);
    let (_app, webview) = mock_app(launch);
    let info = invoke(&webview, "app_info", json!({})).unwrap();
    assert_eq!(info["initialFolder"], dir.path().display().to_string());
    assert_eq!(info["initialAgent"], "demo");
    // No listing at start: the window asks for it once it is up (detection never holds it).
    assert!(info.get("agents").is_none(), "{info}");
    let listing = invoke(&webview, "agents_list", json!({})).unwrap();
    let agents = listing["agents"].as_array().unwrap();
    assert_eq!(agents[0]["id"], "demo");
    assert!(agents.iter().any(|a| a["id"] == "claude"));
    // The test's settings file defines `broken`, from the settings.
    let broken = agents.iter().find(|a| a["id"] == "broken").unwrap();
    assert_eq!(broken["source"], "settings");
    assert_eq!(broken["status"], "missing");
}

/// "Use for new sessions": remembered in the state file, so the next listing (this run's and
/// the next's) names it with its reason; an id the listing does not have is refused.
#[test]
fn the_agent_for_new_sessions_is_remembered_and_an_unknown_one_refused() {
    let (_app, webview) = mock_app(Launch::default());
    let chosen = invoke(
        &webview,
        "agents_use_for_new_sessions",
        json!({"id": "gemini"}),
    )
    .unwrap();
    assert_eq!(chosen["defaultAgent"], "gemini");
    assert_eq!(chosen["defaultReason"], "last chosen in the window");
    // The state file's writer applies it on its thread: the listing says it once written.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let listing = invoke(&webview, "agents_list", json!({})).unwrap();
        // (Before the write, the default is the settings' first entry, `broken`.)
        if listing["defaultReason"] == "last chosen in the window" {
            assert_eq!(listing["defaultAgent"], "gemini");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{listing}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let err = invoke(
        &webview,
        "agents_use_for_new_sessions",
        json!({"id": "no-such-agent"}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "agent-unknown", "{err}");
    invoke(
        &webview,
        "agents_use_for_new_sessions",
        json!({"id": "demo"}),
    )
    .unwrap();
}

/// Check of a manifest agent (the demo agent described by an ACP.md that claims audio, which it
/// does not take): the difference is listed with what each side says.
#[test]
fn check_lists_where_a_manifest_and_the_agents_answer_differ() {
    let root = isolated();
    let demo = acp_desk_core::agents::demo_agent_path().unwrap();
    let dir = root.join("config/agents/described-demo");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("ACP.md"),
        format!(
            "---\nname: described-demo\nid: example.described-demo\ndescription: The demo agent, described.\nversion: 1.0.0\nkind: server\ntransport: stdio\nmetadata:\n  aip44:\n    acp_rev: c0945895a63233bfdbdf95990104c11f5d8d8991\n    tier: basic\n    operator: OPERATOR.md\n    capabilities:\n      agent:\n        promptCapabilities: {{image: true, audio: true, embeddedContext: true}}\n  acp-desk:\n    command: {}\n---\nThe demo agent.\n",
            demo.display()
        ),
    )
    .unwrap();
    let (_app, webview) = mock_app(Launch::default());
    let report = invoke(&webview, "agent_check", json!({"id": "described-demo"})).unwrap();
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(
        report["differences"],
        // The manifest declares no mcpCapabilities; the demo agent takes http and sse.
        json!([
            {"path": "agent.promptCapabilities.audio", "declared": true, "reported": false},
            {"path": "agent.mcpCapabilities.http", "declared": null, "reported": true},
            {"path": "agent.mcpCapabilities.sse", "declared": null, "reported": true}
        ]),
        "{report}"
    );
}

/// Check of the demo agent through IPC: its name and version, each step timed; an unknown
/// agent is refused with its code.
#[test]
fn check_reports_the_demo_agent_and_refuses_an_unknown_one() {
    let (_app, webview) = mock_app(Launch::default());
    let report = invoke(&webview, "agent_check", json!({"id": "demo"})).unwrap();
    assert_eq!(report["ok"], true, "{report}");
    assert!(
        report["agentName"].as_str().unwrap().contains("demo"),
        "{report}"
    );
    assert!(report["agentVersion"].is_string(), "{report}");
    let steps: Vec<&str> = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["start", "initialize"]);
    let err = invoke(&webview, "agent_check", json!({"id": "no-such-agent"})).unwrap_err();
    assert_eq!(err["code"], "agent-unknown", "{err}");
}

#[test]
fn errors_cross_as_code_and_message() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "x").unwrap();
    let (_app, webview) = mock_app(Launch::default());
    let err = invoke(
        &webview,
        "open_session",
        json!({"folder": file.display().to_string(), "agent": "demo"}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "not-a-folder");
    assert!(err["message"].as_str().unwrap().contains("is a file"));
    let err = invoke(
        &webview,
        "open_session",
        json!({"folder": dir.path().display().to_string(), "agent": "no-such-agent"}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "agent-unknown");
    let err = invoke(&webview, "cancel", json!({"session": "s99"})).unwrap_err();
    assert_eq!(err["code"], "session-unknown");
    let err = invoke(
        &webview,
        "open_session",
        json!({"folder": dir.path().join("gone").display().to_string(), "agent": "demo"}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "folder-missing");
}

#[test]
fn every_command_is_granted_to_the_main_window() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let set = std::fs::read_to_string(format!("{root}/permissions/app-commands.toml")).unwrap();
    for name in acp_desk_shell::commands::COMMAND_NAMES {
        let perm = format!("\"allow-{}\"", name.replace('_', "-"));
        assert!(
            set.contains(&perm),
            "permissions/app-commands.toml lacks {perm}"
        );
    }
    let cap = std::fs::read_to_string(format!("{root}/capabilities/default.json")).unwrap();
    let cap: Value = serde_json::from_str(&cap).unwrap();
    let perms = cap["permissions"].as_array().unwrap();
    assert!(perms.contains(&json!("allow-app-commands")));
    // Nothing that reaches the disk or runs programs from the webview.
    for p in perms {
        let p = p.as_str().unwrap();
        for banned in ["fs:", "shell:", "http:", "opener:"] {
            assert!(!p.starts_with(banned), "the window must not get {p}");
        }
    }
}

/// The capability grants exactly what the UI calls (ARCHITECTURE.md, "Capabilities"): the app's
/// commands, listening to events, and the window calls `ui/src/lib/backend.ts` makes (the one
/// module importing `@tauri-apps/*`). No plugin's JS permission: the UI calls no plugin, so the
/// dialog, clipboard, opener, window-state and single-instance plugins are used from Rust only.
#[test]
fn the_window_is_granted_only_what_the_ui_calls() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let backend = std::fs::read_to_string(format!("{root}/ui/src/lib/backend.ts")).unwrap();
    let mut want: Vec<String> = vec![
        "allow-app-commands".into(),
        "core:event:allow-listen".into(),
        "core:event:allow-unlisten".into(),
    ];
    // Each `getCurrentWindow().setTitle(...)`-style call needs `core:window:allow-set-title`.
    for call in backend.split("getCurrentWindow().").skip(1) {
        let method: String = call.chars().take_while(|c| c.is_alphanumeric()).collect();
        let mut kebab = String::new();
        for c in method.chars() {
            if c.is_uppercase() {
                kebab.push('-');
            }
            kebab.push(c.to_ascii_lowercase());
        }
        want.push(format!("core:window:allow-{kebab}"));
    }
    // Every quoted `@tauri-apps/...` specifier, whatever the quote: static and dynamic imports.
    let specifiers = |text: &str| -> Vec<String> {
        ["'@tauri-apps/", "\"@tauri-apps/", "`@tauri-apps/"]
            .iter()
            .flat_map(|q| {
                text.match_indices(q)
                    .map(|(at, _)| {
                        text[at + 1..]
                            .chars()
                            .take_while(|c| !matches!(c, '\'' | '"' | '`'))
                            .collect::<String>()
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    for module in specifiers(&backend) {
        assert!(
            [
                "@tauri-apps/api/core",
                "@tauri-apps/api/event",
                "@tauri-apps/api/window"
            ]
            .contains(&module.as_str()),
            "backend.ts imports {module}: grant what it needs in capabilities/default.json \
             and list it here"
        );
    }
    want.sort();
    want.dedup();
    let cap = std::fs::read_to_string(format!("{root}/capabilities/default.json")).unwrap();
    let cap: Value = serde_json::from_str(&cap).unwrap();
    let mut got: Vec<String> = cap["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(cap["windows"], json!(["main"]));
    assert!(
        cap.get("remote").is_none(),
        "no remote origin gets anything"
    );
    // No other UI module reaches Tauri.
    let mut stack = vec![std::path::PathBuf::from(format!("{root}/ui/src"))];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                stack.push(path);
            } else if (name.ends_with(".ts") || name.ends_with(".svelte"))
                && !name.ends_with(".test.ts")
                && name != "backend.ts"
            {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(
                    specifiers(&text).is_empty(),
                    "{} imports @tauri-apps: only backend.ts may",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn the_app_and_the_cli_share_one_identifier() {
    let conf = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../tauri.conf.json"))
        .unwrap();
    let conf: Value = serde_json::from_str(&conf).unwrap();
    assert_eq!(conf["identifier"], acp_desk_core::paths::APP_IDENTIFIER);
}

/// The menu bar as (submenu, items) with each item as its id, `-` for a separator or
/// `predefined:LABEL`, `check:ID` for a check item.
fn menu_outline(
    items: &[tauri::menu::MenuItemKind<tauri::test::MockRuntime>],
) -> Vec<(String, Vec<String>)> {
    use tauri::menu::MenuItemKind as K;
    let item = |i: &K<tauri::test::MockRuntime>| match i {
        K::MenuItem(m) => m.id().0.clone(),
        K::Check(c) => format!("check:{}", c.id().0),
        K::Predefined(p) => match p.text().unwrap().as_str() {
            "" => "-".to_string(),
            t => format!("predefined:{}", t.replace('&', "")),
        },
        K::Submenu(s) => format!("submenu:{}", s.text().unwrap()),
        K::Icon(i) => i.id().0.clone(),
    };
    items
        .iter()
        .map(|top| match top {
            K::Submenu(s) => {
                let mut inner = Vec::new();
                for i in s.items().unwrap() {
                    inner.push(item(&i));
                    if let K::Submenu(sub) = &i {
                        inner.extend(
                            sub.items()
                                .unwrap()
                                .iter()
                                .map(|j| format!("  {}", item(j))),
                        );
                    }
                }
                (s.text().unwrap().replace('&', ""), inner)
            }
            other => (item(other), Vec::new()),
        })
        .collect()
}

#[test]
fn the_menu_bar_has_file_edit_view_window_and_help() {
    let (app, _webview) = mock_app(Launch::default());
    let menu = app.menu().expect("the app has a menu bar");
    let outline = menu_outline(&menu.items().unwrap());
    let want: Vec<(&str, Vec<&str>)> = vec![
        (
            "File",
            vec![
                "open-folder",
                "submenu:Open &Recent",
                "  no-recent",
                "  -",
                "  clear-recent",
                "close-session",
                "-",
                "quit",
            ],
        ),
        (
            "Edit",
            vec![
                "undo",
                "redo",
                "-",
                "predefined:Cut",
                "predefined:Copy",
                "predefined:Paste",
                "-",
                "predefined:Select All",
            ],
        ),
        (
            "View",
            vec![
                "toggle-sidebar",
                "-",
                "zoom-in",
                "zoom-out",
                "zoom-reset",
                "-",
                "submenu:&Theme",
                "  check:theme-system",
                "  check:theme-light",
                "  check:theme-dark",
            ],
        ),
        ("Window", vec!["minimize", "maximize"]),
        (
            "Help",
            vec![
                "about",
                "-",
                "open-settings",
                "open-logs",
                "copy-diagnostics",
            ],
        ),
    ];
    let want: Vec<(String, Vec<String>)> = want
        .into_iter()
        .map(|(t, v)| (t.to_string(), v.into_iter().map(String::from).collect()))
        .collect();
    assert_eq!(outline, want);
}

#[test]
fn the_usual_shortcuts_each_on_one_item() {
    use acp_desk_shell::menu::ITEMS;
    let shortcut = |id: &str| ITEMS.iter().find(|i| i.0 == id).and_then(|i| i.2);
    for (id, keys) in [
        ("open-folder", "CmdOrCtrl+O"),
        ("close-session", "CmdOrCtrl+W"),
        ("quit", "CmdOrCtrl+Q"),
        ("undo", "CmdOrCtrl+Z"),
        ("redo", "CmdOrCtrl+Shift+Z"),
        ("toggle-sidebar", "CmdOrCtrl+B"),
        ("zoom-in", "CmdOrCtrl+="),
        ("zoom-out", "CmdOrCtrl+-"),
        ("zoom-reset", "CmdOrCtrl+0"),
        ("minimize", "CmdOrCtrl+M"),
    ] {
        assert_eq!(shortcut(id), Some(keys), "{id}");
    }
    let mut all: Vec<&str> = ITEMS.iter().filter_map(|i| i.2).collect();
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), n, "a shortcut is on two items");
    // Cut, Copy, Paste and Select All keep the OS's own keys.
    for taken in ["CmdOrCtrl+X", "CmdOrCtrl+C", "CmdOrCtrl+V", "CmdOrCtrl+A"] {
        assert!(!all.contains(&taken), "{taken}");
    }
}

/// File → Open Recent shows the state file's folders with their agents, follows the list as it
/// changes, opens the chosen one with its agent (`folder-chosen`, as a chosen folder opens), and
/// Clear Recent empties it.
#[test]
fn open_recent_lists_the_folders_with_their_agents_and_opens_one_with_its_agent() {
    use acp_desk_shell::AppState;
    use tauri::Listener;
    use tauri::menu::MenuItemKind as K;
    let (app, _webview) = mock_app(Launch::default());
    let recorder = app.state::<AppState>().recorder.clone().unwrap();
    recorder.update(|s| {
        s.clear_recent();
        s.add_recent("/p/b", None);
        s.add_recent("/p/a", Some("claude".into()));
    });
    acp_desk_shell::menu::apply_saved(app.handle());
    let labels = || -> Vec<(String, String, bool)> {
        let items = app.menu().unwrap().items().unwrap();
        let Some(K::Submenu(sub)) = acp_desk_shell::menu::find(&items, "open-recent") else {
            panic!("no Open Recent")
        };
        sub.items()
            .unwrap()
            .iter()
            .filter_map(|i| match i {
                K::MenuItem(m) => {
                    Some((m.id().0.clone(), m.text().unwrap(), m.is_enabled().unwrap()))
                }
                _ => None,
            })
            .collect()
    };
    let wait_for = |want: &[(&str, &str, bool)]| {
        let want: Vec<(String, String, bool)> = want
            .iter()
            .map(|(i, l, e)| (i.to_string(), l.to_string(), *e))
            .collect();
        for _ in 0..200 {
            if labels() == want {
                return;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        assert_eq!(labels(), want);
    };
    wait_for(&[
        ("recent-0", "a — claude", true),
        ("recent-1", "b", true),
        ("clear-recent", "Clear Recent", true),
    ]);
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    app.listen_any("folder-chosen", move |e| {
        tx.send(serde_json::from_str(e.payload()).unwrap()).unwrap();
    });
    acp_desk_shell::menu::on_event(app.handle(), "recent-0");
    acp_desk_shell::menu::on_event(app.handle(), "recent-1");
    let got: Vec<Value> = (0..2)
        .map(|_| rx.recv_timeout(Duration::from_secs(10)).unwrap())
        .collect();
    assert_eq!(
        got,
        [
            json!({"path": "/p/a", "agent": "claude"}),
            json!({"path": "/p/b"})
        ]
    );
    // A session opened elsewhere comes first, with its agent.
    recorder.update(|s| s.add_recent("/q/b", Some("demo".into())));
    wait_for(&[
        ("recent-0", "/q/b — demo", true),
        ("recent-1", "a — claude", true),
        ("recent-2", "/p/b", true),
        ("clear-recent", "Clear Recent", true),
    ]);
    acp_desk_shell::menu::on_event(app.handle(), "clear-recent");
    wait_for(&[
        ("no-recent", "No Recent Folders", false),
        ("clear-recent", "Clear Recent", false),
    ]);
    recorder.finish();
    assert!(
        recorder
            .state(Duration::ZERO)
            .unwrap()
            .recent_folders
            .is_empty()
    );
}

#[test]
fn menu_items_the_window_acts_on_arrive_as_menu_action_events() {
    use tauri::Listener;
    let (app, _webview) = mock_app(Launch::default());
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    app.listen_any("menu-action", move |e| {
        tx.send(serde_json::from_str(e.payload()).unwrap()).unwrap();
    });
    for id in [
        "close-session",
        "toggle-sidebar",
        "undo",
        "redo",
        "theme-dark",
    ] {
        acp_desk_shell::menu::on_event(app.handle(), id);
    }
    let got: Vec<Value> = (0..5)
        .map(|_| rx.recv_timeout(Duration::from_secs(10)).unwrap())
        .collect();
    assert_eq!(
        got,
        [
            json!({"action": "close-session"}),
            json!({"action": "toggle-sidebar"}),
            json!({"action": "undo"}),
            json!({"action": "redo"}),
            json!({"action": "theme", "theme": "dark"}),
        ]
    );
    // Only the chosen theme is ticked.
    let items = app.menu().unwrap().items().unwrap();
    for (id, ticked) in [
        ("theme-system", false),
        ("theme-light", false),
        ("theme-dark", true),
    ] {
        let Some(tauri::menu::MenuItemKind::Check(c)) = acp_desk_shell::menu::find(&items, id)
        else {
            panic!("no {id}")
        };
        assert_eq!(c.is_checked().unwrap(), ticked, "{id}");
    }
    // Items done in Rust say nothing to the window.
    acp_desk_shell::menu::on_event(app.handle(), "minimize");
    assert!(rx.recv_timeout(Duration::from_millis(200)).is_err());
}

#[test]
fn zoom_and_theme_chosen_in_the_menu_are_saved() {
    let (app, webview) = mock_app(Launch::default());
    let recorder = app
        .state::<acp_desk_shell::AppState>()
        .recorder
        .clone()
        .unwrap();
    // Other tests' apps share this process's state file: start from 100 %.
    for id in [
        "zoom-reset",
        "zoom-in",
        "zoom-in",
        "zoom-in",
        "zoom-out",
        "theme-light",
    ] {
        acp_desk_shell::menu::on_event(app.handle(), id);
    }
    recorder.finish();
    let after = recorder.state(Duration::ZERO).unwrap();
    assert_eq!(after.zoom, 1.25, "100 % → 110 → 125 → 150 → 125");
    assert_eq!(after.theme, acp_desk_app::state::Theme::Light);
    // And the window starts with it: app_info says the theme.
    let info = invoke(&webview, "app_info", json!({})).unwrap();
    assert_eq!(info["theme"], "light");
}

type View = RecordingView;

trait Text {
    fn text(&self) -> String;
}

impl Text for View {
    fn text(&self) -> String {
        self.events()
            .iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_with_the_demo_agent_streams_to_views_attached_before_and_after() {
    isolated();
    let dir = tempfile::tempdir().unwrap();
    let sessions = Sessions::default();
    let info = sessions
        .open(&dir.path().display().to_string(), "demo")
        .unwrap();
    let early = View::default();
    sessions.attach(&info.id, Box::new(early.clone())).unwrap();
    // Prompting before the agent is ready says so instead of queueing.
    let ready = || {
        early.events().iter().any(|e| {
            matches!(e, StreamEvent::SessionStatus { status, .. }
                if *status == acp_desk_core::events::SessionState::Ready)
        })
    };
    wait_for("ready", ready).await;
    let end = sessions
        .prompt(&info.id, text_parts("stream"))
        .await
        .unwrap();
    assert_eq!(
        end.reason,
        acp_desk_core::events::TurnEndReason::Completed,
        "{end:?}"
    );
    wait_for("the turn-end frame", || {
        early
            .events()
            .iter()
            .any(|e| matches!(e, StreamEvent::TurnEnd { .. }))
    })
    .await;
    let late = View::default();
    sessions.attach(&info.id, Box::new(late.clone())).unwrap();
    let frames = late.frames();
    assert!(frames[0].snapshot, "a late view starts with the snapshot");
    assert_eq!(late.text(), early.text());
    assert!(early.text().contains("ledgerline"));
    // (How frames merge is the hub's unit tests' business: here the agent streams slower than
    // the frame interval, so any count would be a statement about timing.)

    // A permission request, answered through the shell.
    let id = info.id.clone();
    let prompt = sessions.prompt(&id, text_parts("permission"));
    tokio::pin!(prompt);
    let request = loop {
        tokio::select! {
            r = &mut prompt => panic!("the turn ended before asking: {r:?}"),
            () = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
        let asked = early.events().into_iter().find_map(|e| match e {
            StreamEvent::AgentPrompt(p) => Some(p),
            _ => None,
        });
        if let Some(p) = asked {
            break p;
        }
    };
    let allow = request
        .options
        .iter()
        .find(|o| o.kind == acp_desk_core::schema::v1::PermissionOptionKind::AllowOnce)
        .unwrap();
    sessions
        .respond(
            &id,
            &request.request_id,
            PermissionResolution::selected(allow.option_id.to_string()),
        )
        .await
        .unwrap();
    let end = prompt.await.unwrap();
    assert_eq!(end.reason, acp_desk_core::events::TurnEndReason::Completed);
    // Answering again is a clear error.
    let again = sessions
        .respond(
            &id,
            &request.request_id,
            PermissionResolution::selected(allow.option_id.to_string()),
        )
        .await
        .unwrap_err();
    assert!(matches!(
        again,
        acp_desk_shell::ipc::IpcError::PermissionUnknown(_)
    ));

    // Modes and config options go to the agent; its refusal comes back with its words.
    sessions.set_mode(&id, "plan").await.unwrap();
    let err = sessions.set_mode(&id, "yolo").await.unwrap_err();
    assert!(
        matches!(&err, IpcError::AgentRefused(m) if m.contains("yolo")),
        "{err:?}"
    );
    sessions
        .set_config_option(&id, "brief", acp_desk_shell::ipc::ConfigValue::Bool(true))
        .await
        .unwrap();
    wait_for("the current-mode event", || {
        early.events().iter().any(|e| {
            matches!(e, StreamEvent::CurrentMode { current_mode_id, .. } if current_mode_id == "plan")
        })
    })
    .await;

    // A file part reaches the agent embedded (the demo agent accepts embedded context).
    std::fs::write(dir.path().join("notes.md"), "# Notes\nremember the milk\n").unwrap();
    let parts = vec![
        PromptPart::Text {
            text: "stream, and see".into(),
        },
        PromptPart::File {
            path: "notes.md".into(),
        },
    ];
    sessions.prompt(&id, parts).await.unwrap();
    wait_for("the second turn-start", || {
        early.events().iter().any(|e| match e {
            StreamEvent::TurnStart { prompt, .. } => prompt.iter().any(|b| {
                matches!(b, acp_desk_core::schema::v1::ContentBlock::Resource(r)
                    if serde_json::to_string(r).unwrap().contains("remember the milk"))
            }),
            _ => false,
        })
    })
    .await;

    let pid = sessions.pid(&id).unwrap();
    sessions.close_all().await;
    assert!(sessions.is_empty());
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists() || is_zombie(pid),
        "the agent ended with its session"
    );
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_cannot_start_says_why_to_the_view() {
    // The settings of `isolated()` define an agent named `broken`.
    isolated();
    let dir = tempfile::tempdir().unwrap();
    let sessions = Sessions::default();
    let info = sessions
        .open(&dir.path().display().to_string(), "broken")
        .unwrap();
    let view = View::default();
    sessions.attach(&info.id, Box::new(view.clone())).unwrap();
    wait_for("an error event", || {
        view.events()
            .iter()
            .any(|e| matches!(e, StreamEvent::Error { .. }))
    })
    .await;
    wait_for("the session is dead", || {
        view.events().iter().any(|e| {
            matches!(e, StreamEvent::SessionStatus { status, detail: Some(d), .. }
                if *status == acp_desk_core::events::SessionState::Dead && d.contains("/nonexistent/agent"))
        })
    })
    .await;
    let err = sessions
        .prompt(&info.id, text_parts("hi"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, acp_desk_shell::ipc::IpcError::AgentUnavailable(_)),
        "{err:?}"
    );
    assert!(err.to_string().contains("/nonexistent/agent"), "{err}");
}

/// Reconnect through the shell: the built-in demo (which advertises neither load nor resume)
/// crashes; Reconnect starts it again in the same session, which says plainly that the agent
/// cannot continue the old conversation, keeps the thread, and takes the next prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_session_reconnects_in_place_and_takes_the_next_prompt() {
    use acp_desk_core::events::{ErrorKind, SessionState};
    isolated();
    let dir = tempfile::tempdir().unwrap();
    let sessions = Sessions::default();
    let info = sessions
        .open(&dir.path().display().to_string(), "demo")
        .unwrap();
    let view = View::default();
    sessions.attach(&info.id, Box::new(view.clone())).unwrap();
    let status_is = |s: SessionState| {
        let v = view.clone();
        move || {
            v.events().iter().rev().find_map(|e| match e {
                StreamEvent::SessionStatus { status, .. } => Some(*status),
                _ => None,
            }) == Some(s)
        }
    };
    wait_for("ready", status_is(SessionState::Ready)).await;
    let _ = sessions.prompt(&info.id, text_parts("crash")).await;
    wait_for("dead", status_is(SessionState::Dead)).await;
    let died = view
        .events()
        .into_iter()
        .find_map(|e| match e {
            StreamEvent::Error { error, .. } => Some(error),
            _ => None,
        })
        .unwrap();
    assert_eq!(died.kind(), ErrorKind::AgentExited);
    assert_eq!(died.exit.as_ref().and_then(|x| x.code), Some(3));
    // Refused while the agent runs is tested in tests/tests/reconnect.rs; here, it is dead.
    let again = sessions.reconnect(&info.id).await.unwrap();
    assert_eq!(again.id, info.id);
    wait_for("ready again", status_is(SessionState::Ready)).await;
    let end = sessions
        .prompt(&info.id, text_parts("stream"))
        .await
        .unwrap();
    assert_eq!(end.reason, acp_desk_core::events::TurnEndReason::Completed);
    let text = view.text();
    assert!(text.contains("crash now"), "the thread is kept: {text}");
    assert!(
        text.contains("ledgerline"),
        "the next prompt is answered: {text}"
    );
    let said_new = view.events().iter().any(|e| {
        matches!(e, StreamEvent::SessionContinued { outcome, .. }
            if serde_json::to_value(outcome).unwrap() == "new")
    });
    assert!(
        said_new,
        "an agent without load or resume continues as a new session, saying so"
    );
    sessions.close(&info.id).await.unwrap();
}

fn caps(image: bool, embedded: bool) -> acp_desk_core::schema::v1::PromptCapabilities {
    acp_desk_core::schema::v1::PromptCapabilities::new()
        .image(image)
        .embedded_context(embedded)
}

/// A canonical project folder with a file, and a file outside it.
fn project() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    let outside = dir.path().join("secret.txt");
    std::fs::write(&outside, "password\n").unwrap();
    let root = std::fs::canonicalize(root).unwrap();
    (dir, root, outside)
}

#[test]
fn file_parts_are_links_or_embedded_by_the_agents_capability() {
    use acp_desk_core::schema::v1::{ContentBlock, EmbeddedResourceResource};
    let (_dir, root, _) = project();
    let file = || PromptPart::File {
        path: "src/main.rs".into(),
    };
    let parts = vec![
        PromptPart::Text {
            text: "look".into(),
        },
        file(),
    ];
    let blocks = files::prompt_blocks(&root, parts.clone(), &caps(false, false)).unwrap();
    assert!(matches!(&blocks[0], ContentBlock::Text(t) if t.text == "look"));
    let ContentBlock::ResourceLink(link) = &blocks[1] else {
        panic!("{:?}", blocks[1])
    };
    assert_eq!(link.name, "main.rs");
    assert_eq!(link.uri, format!("file://{}/src/main.rs", root.display()));
    assert_eq!(link.size, Some(13));
    assert_eq!(link.mime_type.as_deref(), Some("text/x-rust"));

    let blocks = files::prompt_blocks(&root, parts, &caps(false, true)).unwrap();
    let ContentBlock::Resource(r) = &blocks[1] else {
        panic!("{:?}", blocks[1])
    };
    let EmbeddedResourceResource::TextResourceContents(t) = &r.resource else {
        panic!("text")
    };
    assert_eq!(t.text, "fn main() {}\n");

    // Too big or not text: a link even when embedding is allowed.
    std::fs::write(root.join("big.txt"), "x".repeat(300 * 1024)).unwrap();
    std::fs::write(root.join("blob.bin"), [0xFFu8, 0xFE, 0x00, 0x80]).unwrap();
    for path in ["big.txt", "blob.bin"] {
        let blocks = files::prompt_blocks(
            &root,
            vec![PromptPart::File { path: path.into() }],
            &caps(true, true),
        )
        .unwrap();
        assert!(matches!(blocks[0], ContentBlock::ResourceLink(_)), "{path}");
    }
    // An absolute path inside the folder is accepted.
    let abs = root.join("src/main.rs").display().to_string();
    assert!(
        files::prompt_blocks(
            &root,
            vec![PromptPart::File { path: abs }],
            &caps(false, false)
        )
        .is_ok()
    );
    // A folder is not a file.
    let err = files::prompt_blocks(
        &root,
        vec![PromptPart::File { path: "src".into() }],
        &caps(false, false),
    )
    .unwrap_err();
    assert!(matches!(err, IpcError::InvalidInput(_)), "{err:?}");
}

#[test]
fn paths_outside_the_session_folder_are_refused() {
    let (_dir, root, outside) = project();
    std::os::unix::fs::symlink(&outside, root.join("link-out")).unwrap();
    for path in [
        "../secret.txt".to_string(),
        "src/../../secret.txt".to_string(),
        outside.display().to_string(),
        "link-out".to_string(),
    ] {
        let err = files::prompt_blocks(
            &root,
            vec![PromptPart::File { path: path.clone() }],
            &caps(true, true),
        )
        .unwrap_err();
        assert!(matches!(err, IpcError::PathOutside(_)), "{path}: {err:?}");
        assert!(
            err.to_string().contains("outside the session's folder"),
            "{err}"
        );
        let err = files::resolve_inside(&root, &path).unwrap_err();
        assert!(matches!(err, IpcError::PathOutside(_)), "{path}: {err:?}");
    }
    // `..` that stays inside is fine.
    assert!(files::resolve_inside(&root, "src/../src/main.rs").is_ok());
    assert!(matches!(
        files::resolve_inside(&root, "missing.txt"),
        Err(IpcError::InvalidInput(_))
    ));
}

#[test]
fn images_need_the_agents_capability_a_known_type_and_a_sane_size() {
    use base64::Engine as _;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let (_dir, root, _) = project();
    let png = b64(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    let image = |mime: &str, data: String| PromptPart::Image {
        mime_type: mime.into(),
        data,
        name: Some("shot.png".into()),
    };
    let err = files::prompt_blocks(
        &root,
        vec![image("image/png", png.clone())],
        &caps(false, true),
    )
    .unwrap_err();
    assert!(
        matches!(&err, IpcError::InvalidInput(m) if m.contains("this agent does not accept images")),
        "{err:?}"
    );
    let blocks = files::prompt_blocks(
        &root,
        vec![image("image/png", png.clone())],
        &caps(true, false),
    )
    .unwrap();
    assert!(matches!(
        &blocks[0],
        acp_desk_core::schema::v1::ContentBlock::Image(i) if i.mime_type == "image/png" && i.data == png
    ));
    for (mime, data) in [
        ("image/svg+xml", b64(b"<svg/>")),
        ("image/jpeg", png.clone()),
        ("image/png", "not base64!".to_string()),
        ("image/png", b64(&vec![0u8; 10 * 1024 * 1024 + 1])),
    ] {
        let err =
            files::prompt_blocks(&root, vec![image(mime, data)], &caps(true, true)).unwrap_err();
        assert!(matches!(err, IpcError::InvalidInput(_)), "{mime}: {err:?}");
    }
    // Nothing to say is refused before anything is read.
    assert!(files::is_empty_prompt(&[PromptPart::Text {
        text: "  ".into()
    }]));
    assert!(!files::is_empty_prompt(&[PromptPart::File {
        path: "a".into()
    }]));
}

#[test]
fn the_file_list_honours_gitignore_skips_hidden_folders_and_is_capped() {
    let (_dir, root, _) = project();
    std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
    std::fs::create_dir_all(root.join("target/debug")).unwrap();
    std::fs::write(root.join("target/debug/app"), "bin").unwrap();
    std::fs::write(root.join("build.log"), "log").unwrap();
    std::fs::create_dir_all(root.join(".git/objects")).unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref").unwrap();
    std::fs::create_dir_all(root.join("docs/a b")).unwrap();
    std::fs::write(root.join("docs/a b/c.md"), "c").unwrap();
    std::fs::write(root.join(".env.example"), "X=1").unwrap();
    let listed = files::list_files(&root);
    assert_eq!(
        listed.files,
        vec![".env.example", ".gitignore", "docs/a b/c.md", "src/main.rs"]
    );
    assert!(!listed.truncated);
    let capped = files::list_files_capped(&root, 2);
    assert_eq!(capped.files.len(), 2);
    assert!(capped.truncated);
    let exact = files::list_files_capped(&root, 4);
    assert!(!exact.truncated, "exactly the cap is not truncated");
}

#[test]
fn commands_refuse_outside_paths_and_links_that_are_not_web_or_mail() {
    let (dir, root, outside) = project();
    let (_app, webview) = mock_app(Launch::default());
    let info = invoke(
        &webview,
        "open_session",
        json!({"folder": root.display().to_string(), "agent": "demo"}),
    )
    .unwrap();
    let session = info["id"].as_str().unwrap();
    for (cmd, args) in [
        (
            "open_path",
            json!({"session": session, "path": "../secret.txt", "line": 3}),
        ),
        (
            "open_path",
            json!({"session": session, "path": outside.display().to_string()}),
        ),
        (
            "reveal_path",
            json!({"session": session, "path": "../secret.txt"}),
        ),
    ] {
        let err = invoke(&webview, cmd, args).unwrap_err();
        assert_eq!(err["code"], "path-outside", "{cmd}: {err}");
    }
    for url in [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "data:text/html,<b>x</b>",
    ] {
        let err = invoke(&webview, "open_url", json!({"url": url})).unwrap_err();
        assert_eq!(err["code"], "invalid-input", "{url}: {err}");
    }
    let listed = invoke(&webview, "list_files", json!({"session": session})).unwrap();
    assert_eq!(
        listed,
        json!({"files": ["src/main.rs"], "truncated": false})
    );
    let err = invoke(
        &webview,
        "prompt",
        json!({"session": session, "parts": [{"type": "text", "text": " "}]}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "invalid-input");
    invoke(&webview, "close_session", json!({"session": session})).unwrap();
    drop(dir);
}

/// `history.enabled: false` in the settings: the window's sessions are not recorded, and the
/// History view says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_history_off_in_the_settings_nothing_is_recorded() {
    use acp_desk_shell::history::History;
    isolated();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.sqlite3");
    let sessions = Sessions::default();
    let history = History::off(file.clone(), &dir.path().join("settings.json"));
    let status = history.status();
    assert!(!status.recording, "{status:?}");
    assert_eq!(status.notices.len(), 1);
    assert!(status.notices[0].off);
    assert!(
        status.notices[0]
            .message
            .contains("`history.enabled` is false"),
        "{status:?}"
    );
    assert!(history.recorder().is_none());
    let info = sessions
        .open(&dir.path().display().to_string(), "demo")
        .unwrap();
    let view = View::default();
    sessions.attach(&info.id, Box::new(view.clone())).unwrap();
    wait_for("ready", || {
        view.events().iter().any(|e| {
            matches!(e, StreamEvent::SessionStatus { status, .. }
                if *status == acp_desk_core::events::SessionState::Ready)
        })
    })
    .await;
    sessions
        .prompt(&info.id, text_parts("stream"))
        .await
        .unwrap();
    sessions.close(&info.id).await.unwrap();
    // Reading the History view opens the file; nothing was recorded in it.
    assert_eq!(history.list(sessions.registry()).unwrap(), vec![]);
}

/// The window's history: a session with the demo agent is recorded as it runs, listed (open,
/// so not deletable), found by search, exported, and continuable once closed; then deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_windows_sessions_are_recorded_listed_searched_exported_and_deleted() {
    use acp_desk_shell::history::{ExportFormat, History};
    isolated();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.sqlite3");
    let sessions = Sessions::default();
    let history = History::start_at(sessions.registry(), file.clone());
    assert!(history.status().recording, "{:?}", history.status());
    assert!(history.status().notices.is_empty());
    let info = sessions
        .open(&dir.path().display().to_string(), "demo")
        .unwrap();
    let view = View::default();
    sessions.attach(&info.id, Box::new(view.clone())).unwrap();
    wait_for("ready", || {
        view.events().iter().any(|e| {
            matches!(e, StreamEvent::SessionStatus { status, .. }
                if *status == acp_desk_core::events::SessionState::Ready)
        })
    })
    .await;
    sessions
        .prompt(&info.id, text_parts("stream"))
        .await
        .unwrap();
    let recorder = history.recorder().unwrap().clone();
    let stored_id = recorder.history_id(&info.id).unwrap();
    recorder.recorder().flush();

    let listed = history.list(sessions.registry()).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].id.as_str(), listed[0].open),
        (stored_id.as_str(), true)
    );
    let err = history
        .deletable(sessions.registry(), &stored_id)
        .unwrap_err();
    assert!(
        matches!(err, IpcError::InvalidInput(ref m) if m.contains("close it first")),
        "{err:?}"
    );
    let Err(err) = history.continue_request(sessions.registry(), &stored_id) else {
        panic!("an open session was continued a second time");
    };
    assert!(matches!(err, IpcError::InvalidInput(_)), "{err:?}");

    let hits = history.search("ledgerline").unwrap();
    assert!(!hits.is_empty());
    assert_eq!(hits[0].session_id, stored_id);
    assert!(
        hits[0]
            .snippet
            .iter()
            .any(|p| p.hit && p.text.eq_ignore_ascii_case("ledgerline"))
    );
    let stored = history.events(sessions.registry(), &stored_id).unwrap();
    assert_eq!(stored.seqs.len(), stored.events.len());
    assert!(
        stored.seqs.contains(&hits[0].seq),
        "the hit's row is in the transcript"
    );
    let (name, md) = history.export(&stored_id, ExportFormat::Markdown).unwrap();
    assert!(name.ends_with(".md") && md.contains("ledgerline"), "{name}");
    let (_, jsonl) = history.export(&stored_id, ExportFormat::Jsonl).unwrap();
    assert_eq!(jsonl.lines().count(), stored.events.len());

    sessions.close(&info.id).await.unwrap();
    recorder.recorder().flush();
    let listed = history.list(sessions.registry()).unwrap();
    assert!(!listed[0].open);
    assert_eq!(listed[0].status, "dead");
    // Closed, it can be continued (the request names the stored id; opening it is the engine's
    // tests' business) and deleted.
    let before = history
        .events(sessions.registry(), &stored_id)
        .unwrap()
        .events
        .len();
    let Ok(request) = history.continue_request(sessions.registry(), &stored_id) else {
        panic!("a closed session could not be continued");
    };
    let again = sessions.registry().open(request);
    let view = View::default();
    sessions.attach(&again.id, Box::new(view.clone())).unwrap();
    wait_for("session-continued", || {
        view.events()
            .iter()
            .any(|e| matches!(e, StreamEvent::SessionContinued { .. }))
    })
    .await;
    // Under the stored id: the history appends to the same transcript.
    assert_eq!(
        recorder.history_id(&again.id).as_deref(),
        Some(stored_id.as_str())
    );
    let listed = history.list(sessions.registry()).unwrap();
    assert_eq!((listed.len(), listed[0].open), (1, true));
    sessions.close(&again.id).await.unwrap();
    recorder.recorder().flush();
    let after = history.events(sessions.registry(), &stored_id).unwrap();
    assert!(
        after.events.len() > before,
        "{} <= {before}",
        after.events.len()
    );
    assert!(
        after
            .events
            .iter()
            .any(|e| matches!(e, StreamEvent::SessionContinued { .. }))
    );
    // The transcript an agent that started afresh is sent: a Markdown copy in the data folder.
    let (copy, text) = history.context_file(&stored_id).unwrap();
    assert!(
        copy.starts_with(isolated().join("data/context")),
        "{copy:?}"
    );
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), text);
    assert!(text.contains("ledgerline"));
    history.deletable(sessions.registry(), &stored_id).unwrap();
    history.delete(&stored_id).unwrap();
    assert!(history.list(sessions.registry()).unwrap().is_empty());
    let err = history.events(sessions.registry(), &stored_id).unwrap_err();
    assert!(matches!(err, IpcError::SessionUnknown(_)), "{err:?}");
    history.finish();
}

/// A history file another program holds: the app starts, history is off, and the window is
/// told so, naming the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_history_file_that_cannot_be_opened_is_said_and_the_app_goes_on() {
    use acp_desk_shell::history::History;
    isolated();
    let dir = tempfile::tempdir().unwrap();
    // A folder where the file should be: it cannot be opened as a database.
    let file = dir.path().join("history.sqlite3");
    std::fs::create_dir_all(file.join("x")).unwrap();
    let sessions = Sessions::default();
    let history = History::start_at(sessions.registry(), file.clone());
    let status = history.status();
    assert!(!status.recording);
    assert_eq!(status.notices.len(), 1, "{status:?}");
    assert!(status.notices[0].off);
    assert!(
        status.notices[0]
            .message
            .contains(&file.display().to_string()),
        "{status:?}"
    );
    let err = history.list(sessions.registry()).unwrap_err();
    assert!(
        matches!(err, IpcError::HistoryUnavailable(ref m) if m.contains("history.sqlite3")),
        "{err:?}"
    );
    // Sessions still open without it.
    let info = sessions
        .open(&dir.path().display().to_string(), "demo")
        .unwrap();
    sessions.close(&info.id).await.unwrap();
}

#[test]
fn the_sidebar_and_a_draft_saved_through_ipc_come_back_through_restored_sessions() {
    let (app, webview) = mock_app(Launch::default());
    let state = app.state::<acp_desk_shell::AppState>();
    let folder = tempfile::tempdir().unwrap();
    let folder = std::fs::canonicalize(folder.path()).unwrap();
    let gone = folder.join("gone");
    invoke(
        &webview,
        "save_draft",
        json!({"sessionId": "s-restart-1", "text": "half a thought"}),
    )
    .unwrap();
    let sessions = json!([
        {"sessionId": "s-restart-1", "folder": folder, "agent": "demo"},
        {"sessionId": null, "folder": gone, "agent": "demo"},
    ]);
    // An index past the list is the UI's bug, refused.
    let refused = invoke(
        &webview,
        "set_open_sessions",
        json!({"sessions": sessions, "shown": 2}),
    )
    .unwrap_err();
    assert_eq!(refused["code"], "internal");
    invoke(
        &webview,
        "set_open_sessions",
        json!({"sessions": sessions, "shown": 1}),
    )
    .unwrap();
    state.history.recorder().unwrap().recorder().flush();
    let recorder = state.recorder.clone().unwrap();
    recorder.finish();
    assert_eq!(
        recorder
            .state(Duration::ZERO)
            .unwrap()
            .shown()
            .map(|o| o.folder.clone()),
        Some(gone.clone())
    );
    let restored = invoke(&webview, "restored_sessions", json!({})).unwrap();
    assert_eq!(restored["shown"], 1);
    assert_eq!(restored["startAtOnce"], false);
    let [a, b] = restored["sessions"].as_array().unwrap().as_slice() else {
        panic!("{restored}")
    };
    assert_eq!(a["draft"], "half a thought", "{a}");
    assert_eq!(a["folderProblem"], Value::Null);
    let problem = b["folderProblem"].as_str().unwrap();
    assert!(problem.contains(&gone.display().to_string()), "{problem}");
}

/// The MCP servers & secrets view's commands through real IPC (issue 17, rule 57): a secret
/// stored from the window reaches the keychain, and no answer or error carries its value.
#[test]
fn a_secret_stored_from_the_window_reaches_the_keychain_and_never_comes_back() {
    use acp_desk_core::secrets::{Keychain, MemoryKeychain, SecretRef};
    isolated();
    let keychain = std::sync::Arc::new(MemoryKeychain::new());
    let app = acp_desk_shell::build_app_with(mock_builder(), Launch::default(), keychain.clone())
        .build(mock_context(noop_assets()))
        .unwrap();
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    const VALUE: &str = "sk-window-7f3a9c";
    let listed = invoke(&webview, "secrets_list", json!({})).unwrap();
    assert_eq!(listed["available"], true, "{listed}");
    assert_eq!(listed["secrets"], json!([]));

    let after = invoke(
        &webview,
        "secret_set",
        json!({"name": "github-mcp", "value": VALUE}),
    )
    .unwrap();
    assert!(!after.to_string().contains(VALUE), "{after}");
    assert_eq!(
        after["secrets"],
        json!([{"name": "github-mcp", "stored": true, "usedBy": []}])
    );
    let name = SecretRef::new("github-mcp").unwrap();
    assert_eq!(keychain.get(&name).unwrap().unwrap().expose(), VALUE);

    // A bad name is refused naming the name, never the value.
    let err = invoke(
        &webview,
        "secret_set",
        json!({"name": "bad name", "value": VALUE}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "invalid-input", "{err}");
    assert!(!err.to_string().contains(VALUE), "{err}");
    let servers = invoke(&webview, "mcp_servers_list", json!({})).unwrap();
    assert!(!servers.to_string().contains(VALUE), "{servers}");

    let gone = invoke(&webview, "secret_delete", json!({"name": "github-mcp"})).unwrap();
    assert_eq!(gone["secrets"], json!([]));
    assert_eq!(keychain.get(&name).unwrap(), None);
    let err = invoke(&webview, "secret_delete", json!({"name": "github-mcp"})).unwrap_err();
    assert_eq!(err["code"], "invalid-input", "{err}");
}
