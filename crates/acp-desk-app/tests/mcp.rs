//! The app layer chooses each session's MCP servers (issue 17): the settings' (for every
//! agent, or the agents an entry names), the project's the opener passes, the manifest's;
//! a reconnect chooses and reads the secrets again. With the demo agent (built by
//! `cargo build --workspace --bins`).

// Test helpers too: a panic with the error is exactly the failure report wanted here.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use acp_desk_app::{OpenRequest, Registry};
use acp_desk_core::agents::LaunchSpec;
use acp_desk_core::events::SessionState;
use acp_desk_core::hub::RecordingView;
use acp_desk_core::mcp::{McpConfigTransport, McpServerConfig, McpServerReport, McpSource};
use acp_desk_core::secrets::{Keychain, MemoryKeychain, SecretRef, SecretValue};
use acp_desk_core::{StreamEvent, text_block};
use tokio::runtime::Handle;

const HANG: Duration = Duration::from_secs(60);

/// This test binary's own config folder, with a settings file of MCP servers.
fn isolated() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("acp-desk-app-mcp");
        std::fs::create_dir_all(dir.join("config")).unwrap();
        std::fs::write(
            dir.join("config").join("settings.json"),
            r#"{"mcp_servers": {
  "everyone": {"command": "mcp-everyone", "env": {"TOKEN": {"secret": "mcp-app-token"}}},
  "for-others": {"command": "mcp-other", "agents": ["someone-else"]},
  "for-demo": {"command": "mcp-demo", "agents": ["demo"]},
  "proj": {"command": "settings-proj"}
}}"#,
        )
        .unwrap();
        // SAFETY: set once, before any session starts; every test reads the same values.
        unsafe {
            std::env::set_var("ACP_DESK_CONFIG_DIR", dir.join("config"));
            std::env::set_var("ACP_DESK_DATA_DIR", dir.join("data"));
        }
    });
}

fn demo() -> LaunchSpec {
    let path = acp_desk_core::agents::demo_agent_path()
        .filter(|p| p.is_file())
        .expect("the demo agent is missing: run `cargo build --workspace --bins` first");
    LaunchSpec {
        name: "demo".into(),
        command: path.display().to_string(),
        args: Vec::new(),
        env: Vec::new(),
        cwd: None,
    }
}

fn reports(view: &RecordingView) -> Vec<Vec<McpServerReport>> {
    view.events()
        .into_iter()
        .filter_map(|e| match e {
            StreamEvent::McpServers { servers, .. } => Some(servers),
            _ => None,
        })
        .collect()
}

fn status(view: &RecordingView) -> Option<SessionState> {
    view.events().iter().rev().find_map(|e| match e {
        StreamEvent::SessionStatus { status, .. } => Some(*status),
        _ => None,
    })
}

async fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    tokio::time::timeout(HANG, async {
        while !ok() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_start_chooses_the_servers_and_reads_their_secrets_again() {
    isolated();
    let dir = tempfile::tempdir().unwrap();
    let keychain = Arc::new(MemoryKeychain::new());
    let registry = Registry::new(Handle::current());
    let mut request = OpenRequest::new(std::fs::canonicalize(dir.path()).unwrap(), "demo", demo());
    request.options.rules_file = None;
    request.options.audit = acp_desk_core::audit::AuditKind::Off;
    request.options.watch_roots = false;
    request.options.keychain = Some(keychain.clone() as Arc<dyn Keychain>);
    request.project_mcp = vec![McpServerConfig {
        name: "proj".into(),
        source: McpSource::Project("/p/.mcp.json".into()),
        transport: McpConfigTransport::Stdio {
            command: "./proj-mcp".into(),
            args: Vec::new(),
            env: BTreeMap::new(),
        },
        credential_ref: None,
    }];
    let info = registry.open(request);
    let view = RecordingView::default();
    registry.attach(&info.id, Box::new(view.clone())).unwrap();
    wait_for("ready", || status(&view) == Some(SessionState::Ready)).await;
    let first = reports(&view);
    assert_eq!(first.len(), 1, "one report per start");
    let seen: Vec<(&str, bool)> = first[0]
        .iter()
        .map(|r| (r.name.as_str(), r.passed))
        .collect();
    // The project's first, then the settings' for this agent, then for every agent; the
    // settings' `proj` replaced by the project's; `for-others` not this agent's at all.
    assert_eq!(
        seen,
        [
            ("proj", true),
            ("for-demo", true),
            ("everyone", false),
            ("proj", false)
        ]
    );
    assert!(
        first[0][2]
            .reason
            .as_deref()
            .unwrap()
            .contains("acp-desk-cli secret set mcp-app-token"),
        "{:?}",
        first[0][2].reason
    );
    // The secret is stored meanwhile; the agent dies; a reconnect reads it.
    keychain
        .set(
            &SecretRef::new("mcp-app-token").unwrap(),
            &SecretValue::new("app-secret-value".into()),
        )
        .unwrap();
    let _ = registry.prompt(&info.id, vec![text_block("crash")]).await;
    wait_for("dead", || status(&view) == Some(SessionState::Dead)).await;
    registry.reconnect(&info.id).await.unwrap();
    wait_for("a second report", || reports(&view).len() == 2).await;
    let again = reports(&view).pop().unwrap();
    let everyone = again.iter().find(|r| r.name == "everyone").unwrap();
    assert!(everyone.passed, "{everyone:?}");
    let shown = serde_json::to_string(&view.events()).unwrap();
    assert!(!shown.contains("app-secret-value"));
    registry.close_all().await;
}
