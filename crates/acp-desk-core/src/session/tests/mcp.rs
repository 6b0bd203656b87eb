//! MCP servers in the handshake (issue 17): exactly what the agent receives in `session/new`,
//! `session/resume` and `session/load` per `mcpCapabilities`, the `mcp-servers` report and
//! its notice, and the brokered secret found in the request and nowhere else the engine
//! emitted.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::mcp::{McpConfigTransport, McpServerConfig, McpSource};
use crate::secrets::{EnvValue, Keychain, MemoryKeychain, SecretRef, SecretValue};

const TOKEN: &str = "tok-5f0b1e-very-secret";
const ENV_SECRET: &str = "env-9c2d-very-secret";

fn secret(name: &str) -> SecretRef {
    SecretRef::new(name).unwrap()
}

fn keychain() -> Arc<MemoryKeychain> {
    let k = MemoryKeychain::new();
    k.set(&secret("web-token"), &SecretValue::new(TOKEN.into()))
        .unwrap();
    k.set(&secret("files-token"), &SecretValue::new(ENV_SECRET.into()))
        .unwrap();
    Arc::new(k)
}

/// A stdio server with a plain and a secret env value, an http one with a static header, a
/// static `authorization` the credential replaces, and a credential; an sse one; an http one
/// whose credential is not stored; a second `files` from the settings that the manifest's
/// replaces.
fn servers() -> Vec<McpServerConfig> {
    vec![
        McpServerConfig {
            name: "files".into(),
            source: McpSource::Manifest("reviewer".into()),
            transport: McpConfigTransport::Stdio {
                command: "mcp-files".into(),
                args: vec!["--root".into(), ".".into()],
                env: BTreeMap::from([
                    ("K".into(), EnvValue::Plain("v".into())),
                    ("TOKEN".into(), EnvValue::Secret(secret("files-token"))),
                ]),
            },
            credential_ref: Some(secret("web-token")),
        },
        McpServerConfig {
            name: "web".into(),
            source: McpSource::Settings,
            transport: McpConfigTransport::Http {
                url: "https://mcp.example.com/mcp".into(),
                headers: BTreeMap::from([
                    ("X-Team".into(), "a".into()),
                    ("authorization".into(), "static-x".into()),
                ]),
            },
            credential_ref: Some(secret("web-token")),
        },
        McpServerConfig {
            name: "events".into(),
            source: McpSource::Settings,
            transport: McpConfigTransport::Sse {
                url: "https://sse.example.com/events".into(),
                headers: BTreeMap::new(),
            },
            credential_ref: None,
        },
        McpServerConfig {
            name: "nocred".into(),
            source: McpSource::Settings,
            transport: McpConfigTransport::Http {
                url: "https://other.example.com/mcp".into(),
                headers: BTreeMap::new(),
            },
            credential_ref: Some(secret("absent")),
        },
        McpServerConfig {
            name: "files".into(),
            source: McpSource::Settings,
            transport: McpConfigTransport::Stdio {
                command: "other-files".into(),
                args: Vec::new(),
                env: BTreeMap::new(),
            },
            credential_ref: None,
        },
    ]
}

fn files_json() -> Value {
    json!({"name": "files", "command": "mcp-files", "args": ["--root", "."],
        "env": [{"name": "K", "value": "v"}, {"name": "TOKEN", "value": ENV_SECRET}]})
}

fn web_json() -> Value {
    json!({"type": "http", "name": "web", "url": "https://mcp.example.com/mcp",
        "headers": [{"name": "X-Team", "value": "a"},
                    {"name": "Authorization", "value": format!("Bearer {TOKEN}")}]})
}

fn events_json() -> Value {
    json!({"type": "sse", "name": "events", "url": "https://sse.example.com/events", "headers": []})
}

fn with_servers(o: &mut SessionOptions) {
    o.mcp_servers = servers();
    o.keychain = Some(keychain() as Arc<dyn Keychain>);
}

fn reports(evs: &[StreamEvent]) -> Vec<crate::mcp::McpServerReport> {
    evs.iter()
        .find_map(|e| match e {
            StreamEvent::McpServers { servers, .. } => Some(servers.clone()),
            _ => None,
        })
        .expect("an mcp-servers event")
}

fn warnings(evs: &[StreamEvent]) -> Vec<String> {
    evs.iter()
        .filter_map(|e| match e {
            StreamEvent::Notice {
                severity: crate::events::NoticeSeverity::Warning,
                title,
                description,
                ..
            } => Some(format!("{title} {}", description.as_deref().unwrap_or(""))),
            _ => None,
        })
        .collect()
}

/// Starts a session whose agent advertises `mcp` (the `mcpCapabilities` object); returns
/// the `session/new` params' `mcpServers`, the events up to ready, the handle's trace.
async fn new_session_with(mcp: Value) -> (Value, Vec<StreamEvent>, Rig, SessionHandle) {
    new_session_tuned(mcp, |_| {}).await
}

async fn new_session_tuned(
    mcp: Value,
    tune: impl FnOnce(&mut SessionOptions),
) -> (Value, Vec<StreamEvent>, Rig, SessionHandle) {
    let (mut rig, started) = rig(|o| {
        with_servers(o);
        tune(o);
    });
    let init = rig.peer.expect("initialize").await;
    rig.peer
        .respond(
            &init,
            json!({"protocolVersion": 1, "agentCapabilities": {"mcpCapabilities": mcp}}),
        )
        .await;
    let new = rig.peer.expect("session/new").await;
    rig.peer.respond(&new, json!({"sessionId": "acp-1"})).await;
    let handle = started.await.unwrap().unwrap();
    let evs = rig.events_until("session-status:ready").await;
    (new["params"]["mcpServers"].clone(), evs, rig, handle)
}

#[tokio::test(start_paused = true)]
async fn servers_go_in_session_new_as_the_capabilities_allow() {
    let cases = [
        (json!({}), vec![files_json()]),
        (json!({"http": true}), vec![files_json(), web_json()]),
        (json!({"sse": true}), vec![files_json(), events_json()]),
        (
            json!({"http": true, "sse": true}),
            vec![files_json(), web_json(), events_json()],
        ),
    ];
    for (caps, expected) in cases {
        let (sent, evs, _rig, handle) = new_session_with(caps.clone()).await;
        assert_eq!(sent, Value::Array(expected), "with mcpCapabilities {caps}");
        let r = reports(&evs);
        let names: Vec<(&str, bool)> = r.iter().map(|r| (r.name.as_str(), r.passed)).collect();
        let http = caps["http"] == true;
        let sse = caps["sse"] == true;
        assert_eq!(
            names,
            [
                ("files", true),
                ("web", http),
                ("events", sse),
                ("nocred", false),
                ("files", false)
            ]
        );
        if !http {
            let why = r[1].reason.as_deref().unwrap();
            assert!(
                why.contains("`scripted`") && why.contains("mcpCapabilities.http"),
                "{why}"
            );
        }
        assert!(
            r[3].reason
                .as_deref()
                .unwrap()
                .contains("store it with `acp-desk-cli secret set absent`"),
            "{:?}",
            r[3].reason
        );
        assert_eq!(
            r[4].reason.as_deref(),
            Some("replaced by the server of the same name from the agent's manifest `reviewer`")
        );
        assert_eq!(
            r[0].notes[0],
            "credentialRef is ignored on a stdio server: give it secrets through its env, as {\"secret\": \"NAME\"}"
        );
        // `mcp-files` is on no PATH here: passed as written, and said.
        assert!(
            r[0].notes[1].starts_with("`mcp-files`: it is not on PATH;"),
            "{:?}",
            r[0].notes
        );
        assert_eq!(r[1].credential.as_deref(), Some("web-token"));
        assert!(r[1].notes[0].contains("authorization"), "{:?}", r[1].notes);
        let w = warnings(&evs);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("nocred") && w[0].contains("files"),
            "{}",
            w[0]
        );
        // Before ready, after initialize.
        let kinds = labels(&evs);
        let at = kinds.iter().position(|k| k == "mcp-servers").unwrap();
        assert!(
            at < kinds
                .iter()
                .position(|k| k == "session-status:ready")
                .unwrap()
        );
        handle.close().await;
    }
}

#[tokio::test(start_paused = true)]
async fn no_servers_configured_means_an_empty_list_and_no_event() {
    let (mut rig, started) = rig(|_| {});
    let init = rig.peer.expect("initialize").await;
    rig.peer
        .respond(
            &init,
            json!({"protocolVersion": 1, "agentCapabilities": {}}),
        )
        .await;
    let new = rig.peer.expect("session/new").await;
    assert_eq!(new["params"]["mcpServers"], json!([]));
    rig.peer.respond(&new, json!({"sessionId": "acp-1"})).await;
    started.await.unwrap().unwrap();
    let evs = rig.events_until("session-status:ready").await;
    assert!(!labels(&evs).iter().any(|k| k == "mcp-servers"));
}

#[tokio::test(start_paused = true)]
async fn resume_and_load_carry_the_same_servers() {
    let (mut rig, started) = rig(|o| {
        with_servers(o);
        o.opening = Opening::Continue {
            session_id: "s-stored".into(),
            acp_session_id: Some("acp-1".into()),
            via: ContinueVia::Auto,
        };
    });
    let init = rig.peer.expect("initialize").await;
    rig.peer
        .respond(
            &init,
            json!({"protocolVersion": 1, "agentCapabilities": {
                "loadSession": true, "sessionCapabilities": {"resume": {}},
                "mcpCapabilities": {"http": true}
            }}),
        )
        .await;
    let expected = json!([files_json(), web_json()]);
    let resume = rig.peer.expect("session/resume").await;
    assert_eq!(resume["params"]["mcpServers"], expected);
    rig.peer
        .respond_error(&resume, -32002, "Resource not found")
        .await;
    let load = rig.peer.expect("session/load").await;
    assert_eq!(load["params"]["mcpServers"], expected);
    rig.peer.respond(&load, json!({})).await;
    started.await.unwrap().unwrap();
    let evs = rig.events_until("session-status:ready").await;
    // One report per start, however many ways were tried.
    assert_eq!(
        labels(&evs).iter().filter(|k| *k == "mcp-servers").count(),
        1
    );
}

#[tokio::test(start_paused = true)]
async fn a_check_sends_no_servers_and_reads_no_secret() {
    struct Refusing;
    impl Keychain for Refusing {
        fn get(&self, _: &SecretRef) -> Result<Option<SecretValue>, crate::secrets::SecretError> {
            panic!("a ListOnly start must not read the keychain")
        }
        fn set(&self, _: &SecretRef, _: &SecretValue) -> Result<(), crate::secrets::SecretError> {
            unreachable!()
        }
        fn delete(&self, _: &SecretRef) -> Result<bool, crate::secrets::SecretError> {
            unreachable!()
        }
        fn list(&self) -> Result<Vec<SecretRef>, crate::secrets::SecretError> {
            unreachable!()
        }
    }
    let (mut rig, started) = rig(|o| {
        o.mcp_servers = servers();
        o.keychain = Some(Arc::new(Refusing));
        o.opening = Opening::ListOnly;
    });
    let init = rig.peer.expect("initialize").await;
    rig.peer
        .respond(
            &init,
            json!({"protocolVersion": 1, "agentCapabilities": {"mcpCapabilities": {"http": true}}}),
        )
        .await;
    let handle = started.await.unwrap().unwrap();
    let evs = rig.events_until("session-status:ready").await;
    assert!(!labels(&evs).iter().any(|k| k == "mcp-servers"));
    handle.close().await;
    assert_eq!(rig.peer.rest_until_closed().await, Vec::<Value>::new());
}

#[tokio::test(start_paused = true)]
async fn the_brokered_secret_is_in_the_request_and_nowhere_else() {
    let audit = tempfile::tempdir().unwrap();
    let audit_dir = audit.path().to_path_buf();
    let (sent, mut evs, mut rig, handle) = new_session_tuned(json!({"http": true}), |o| {
        o.audit = AuditKind::On;
        o.audit_dir = audit_dir;
    })
    .await;
    assert!(sent.to_string().contains(&format!("Bearer {TOKEN}")));
    assert!(sent.to_string().contains(ENV_SECRET));
    // A turn, then the end: every event the session emitted.
    let prompting = tokio::spawn({
        let h = handle.clone();
        async move { h.prompt(vec![text_block("hi")]).await }
    });
    let prompt = rig.peer.expect("session/prompt").await;
    rig.peer
        .update(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "ok"}}))
        .await;
    rig.peer
        .respond(&prompt, json!({"stopReason": "end_turn"}))
        .await;
    prompting.await.unwrap().unwrap();
    let trace = format!("{:?}", handle.start_trace());
    handle.close().await;
    evs.extend(rig.rest().await);
    let mut opts = SessionOptions::new("/tmp");
    with_servers(&mut opts);
    let launch = crate::mcp::read_secrets(&opts.mcp_servers, opts.keychain.as_deref(), &opts.cwd);
    let mut audit_text = String::new();
    for entry in walk(audit.path()) {
        audit_text.push_str(&std::fs::read_to_string(entry).unwrap());
    }
    assert!(audit_text.contains("session"), "the audit log was written");
    let everything = [
        audit_text,
        serde_json::to_string(&evs).unwrap(),
        format!("{evs:?}"),
        trace,
        format!("{opts:?}"),
        format!("{launch:?}"),
        format!("{:?}", servers()),
    ]
    .join("\n");
    for secret in [TOKEN, ENV_SECRET] {
        assert!(
            !everything.contains(secret),
            "{secret} leaked into what the engine emitted"
        );
    }
    assert!(everything.contains("web-token"), "refs are named");
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[tokio::test(start_paused = true)]
async fn each_start_reads_the_keychain_again() {
    let kc = keychain();
    let first = {
        let kc = kc.clone();
        let (mut rig, _started) = rig(move |o| {
            o.mcp_servers = servers();
            o.keychain = Some(kc);
        });
        rig.peer.handshake_answer_new_only().await
    };
    kc.set(&secret("web-token"), &SecretValue::new("rotated".into()))
        .unwrap();
    let (mut rig, _started) = rig(move |o| {
        o.mcp_servers = servers();
        o.keychain = Some(kc);
    });
    let second = rig.peer.handshake_answer_new_only().await;
    assert_ne!(first, second);
    assert!(second.to_string().contains("Bearer rotated"));
}

impl Peer {
    /// `initialize` (http MCP servers taken) and `session/new`; returns the `mcpServers` sent.
    async fn handshake_answer_new_only(&mut self) -> Value {
        let init = self.expect("initialize").await;
        self.respond(
            &init,
            json!({"protocolVersion": 1, "agentCapabilities": {"mcpCapabilities": {"http": true}}}),
        )
        .await;
        let new = self.expect("session/new").await;
        self.respond(&new, json!({"sessionId": "acp-1"})).await;
        new["params"]["mcpServers"].clone()
    }
}

#[tokio::test]
async fn an_agent_env_secret_not_stored_fails_the_start_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let spec = LaunchSpec {
        name: "needs-key".into(),
        command: "sh".into(),
        args: vec!["-c".into(), format!("touch '{}'", marker.display())],
        env: vec![("API_KEY".into(), EnvValue::Secret(secret("anthropic-key")))],
        cwd: None,
    };
    let mut opts = quiet_options(dir.path());
    opts.keychain = Some(Arc::new(MemoryKeychain::new()));
    let (tx, mut rx) = mpsc::channel(8);
    let err = start(spec, opts, tx).await.err().unwrap();
    assert_eq!(
        err.to_string(),
        "the agent was not started: its env API_KEY needs the secret `anthropic-key`, and it is not in the keychain: store it with `acp-desk-cli secret set anthropic-key` or in the window's Secrets, then start the agent again"
    );
    assert!(matches!(err, EngineError::SecretUnavailable { .. }));
    assert_eq!(
        crate::error_kind::of_start_failure(&err),
        crate::error_kind::ErrorKind::StartFailed
    );
    assert!(!marker.exists(), "nothing was started");
    assert!(
        rx.recv().await.is_none(),
        "no events for a start that never began"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn an_agent_env_secret_reaches_the_agents_environment_and_only_there() {
    use sha2::Digest;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("hash");
    // Not an ACP agent: it writes its variable's hash and exits; the start then fails, and
    // what it wrote is the proof the value reached its environment.
    let spec = LaunchSpec {
        name: "prints-hash".into(),
        command: "sh".into(),
        args: vec![
            "-c".into(),
            format!("printf %s \"$API_KEY\" | sha256sum > '{}'", out.display()),
        ],
        env: vec![("API_KEY".into(), EnvValue::Secret(secret("anthropic-key")))],
        cwd: None,
    };
    let kc = MemoryKeychain::new();
    kc.set(
        &secret("anthropic-key"),
        &SecretValue::new(ENV_SECRET.into()),
    )
    .unwrap();
    let mut opts = quiet_options(dir.path());
    opts.keychain = Some(Arc::new(kc));
    let (tx, mut rx) = mpsc::channel(64);
    let collect = tokio::spawn(async move {
        let mut all = Vec::new();
        while let Some(b) = rx.recv().await {
            all.extend(b);
        }
        all
    });
    let (result, trace) = start_traced(spec.clone(), opts, tx).await;
    let err = result.err().unwrap();
    let evs = collect.await.unwrap();
    let written = std::fs::read_to_string(&out).unwrap();
    let want: String = sha2::Sha256::digest(ENV_SECRET.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(written.starts_with(&want), "{written}");
    let everything = format!(
        "{}\n{evs:?}\n{trace:?}\n{err}\n{err:?}\n{spec:?}",
        serde_json::to_string(&evs).unwrap()
    );
    assert!(!everything.contains(ENV_SECRET));
}
