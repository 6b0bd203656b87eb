//! A project's own MCP config through real IPC on Tauri's mock runtime: the offer shows what a
//! folder's `.mcp.json` would run, a decision is kept by digest in the app's state file, and a
//! file changed since it was shown is refused rather than agreed to unseen (invariant 56).

#![allow(clippy::unwrap_used)] // test code: a panic with the error is the failure report

use acp_desk_shell::{Launch, build_app};
use serde_json::{Value, json};
use tauri::Manager;
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{INVOKE_KEY, get_ipc_response, mock_builder, mock_context, noop_assets};
use tauri::webview::InvokeRequest;

/// Config and data folders of this test process only.
fn isolated() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        // SAFETY: set once, before the app starts, by whichever test comes first.
        unsafe {
            std::env::set_var("ACP_DESK_CONFIG_DIR", dir.path().join("config"));
            std::env::set_var("ACP_DESK_DATA_DIR", dir.path().join("data"));
        }
        dir
    })
    .path()
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
            url: "tauri://localhost".parse().unwrap(),
            body: InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|b| b.deserialize::<Value>().unwrap())
}

#[test]
fn a_folder_config_is_offered_decided_by_digest_and_a_changed_file_refused() {
    let data = isolated().join("data");
    let app = build_app(mock_builder(), Launch::default())
        .build(mock_context(noop_assets()))
        .unwrap();
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    let project = tempfile::tempdir().unwrap();
    let folder = project.path().canonicalize().unwrap();
    let config = folder.join(".mcp.json");
    std::fs::write(
        &config,
        r#"{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "server-fs"], "env": {"KEY": "v-secret"}}}}"#,
    )
    .unwrap();
    let f = folder.display().to_string();

    let offer = invoke(&webview, "project_mcp_offer", json!({"folder": f})).unwrap();
    assert_eq!(offer["folder"], f);
    let file = &offer["files"][0];
    assert_eq!(file["file"], ".mcp.json");
    assert_eq!(
        file["servers"][0]["command"],
        json!(["npx", "-y", "server-fs"])
    );
    assert_eq!(file["servers"][0]["env"], json!(["KEY"]));
    assert!(!offer.to_string().contains("v-secret"), "{offer}");
    let digest = file["digest"].as_str().unwrap().to_owned();

    // Another path than the three names: refused as ours (the window never sends one).
    let err = invoke(
        &webview,
        "project_mcp_decide",
        json!({"folder": f, "file": "../x.json", "digest": digest, "decision": "use"}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "internal", "{err}");

    invoke(
        &webview,
        "project_mcp_decide",
        json!({"folder": f, "file": ".mcp.json", "digest": digest, "decision": "use"}),
    )
    .unwrap();
    // Recorded before the answer: the next offer (and session) sees it.
    let none = invoke(&webview, "project_mcp_offer", json!({"folder": f})).unwrap();
    assert_eq!(none, Value::Null);
    let state = std::fs::read_to_string(data.join("state.json")).unwrap();
    assert!(
        state.contains(&digest) && !state.contains("v-secret"),
        "{state}"
    );
    let shell = app.state::<acp_desk_shell::AppState>();
    let used = acp_desk_shell::project_mcp::approved_servers(&shell, &folder);
    assert_eq!(used.len(), 1);
    assert_eq!(used[0].name, "fs");

    // Edited after the decision: not used, offered again; the old digest is refused.
    std::fs::write(&config, r#"{"mcpServers": {"fs": {"command": "curl"}}}"#).unwrap();
    assert!(acp_desk_shell::project_mcp::approved_servers(&shell, &folder).is_empty());
    let again = invoke(&webview, "project_mcp_offer", json!({"folder": f})).unwrap();
    assert_eq!(again["files"][0]["previous"], "use");
    assert_eq!(again["files"][0]["servers"][0]["command"], json!(["curl"]));
    let err = invoke(
        &webview,
        "project_mcp_decide",
        json!({"folder": f, "file": ".mcp.json", "digest": digest, "decision": "use"}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "project-config-changed", "{err}");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("changed since it was shown")
    );

    let missing = invoke(
        &webview,
        "project_mcp_offer",
        json!({"folder": "/nonexistent/p"}),
    )
    .unwrap_err();
    assert_eq!(missing["code"], "folder-missing", "{missing}");
}
