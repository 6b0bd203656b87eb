//! The "MCP servers & secrets" view's commands (issue 17): the secrets in the keychain and the
//! names the settings and manifests use, storing and removing one, and the configured MCP
//! servers with their credential's state.
//!
//! Rules kept here (ARCHITECTURE rule 57):
//! - A secret typed in the window goes to the keychain only: `secret_set` wraps it in a
//!   [`SecretValue`] at once; it is never logged, never part of an answer or an error, and no
//!   command reads a value back (the listing says "stored" or "missing", names only).
//! - Every keychain call blocks (D-Bus, the macOS keychain): all of them run on the blocking
//!   pool, never on the window's thread.
//! - Env and header values of the configured servers never cross: a row carries the command as
//!   written (no args), or the URL without user info, query or fragment ([`mcp::shown_url`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use acp_desk_core::agents::{ConfigProblem, manifest};
use acp_desk_core::mcp;
use acp_desk_core::secrets::{Keychain, SecretError, SecretRef, SecretValue};
use acp_desk_core::settings;
use schemars::JsonSchema;
use serde::Serialize;
use tauri::{AppHandle, Manager, Runtime};

use crate::AppState;
use crate::ipc::IpcError;

/// The largest secret the window stores: a token or a JSON object of a few headers is far
/// smaller; more is a paste gone wrong (a whole file), refused before it reaches the keychain.
pub const MAX_SECRET_BYTES: usize = 64 * 1024;

/// The keychain the app uses: the OS's.
pub fn os_keychain() -> Arc<dyn Keychain> {
    Arc::new(acp_desk_core::secrets::OsKeychain::new())
}

/// One secret name: stored in the keychain, used by the settings or a manifest, or both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretEntry {
    pub name: String,
    /// The keychain holds a value under it (false too when the keychain cannot be read).
    pub stored: bool,
    /// Where the settings and manifests name it ("MCP server `github` (settings)"); empty: no
    /// one uses it (a leftover, or stored ahead of its use).
    pub used_by: Vec<String>,
}

/// What `secrets_list` answers: names and where they are used, never a value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretsListing {
    /// A keychain service answered. False: `problem` says why and what to do; `secrets` then
    /// lists only the names in use, none stored.
    pub available: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The settings file (where `{"secret": NAME}` and `credential_ref` are written).
    pub settings_file: String,
    /// Sorted by name.
    pub secrets: Vec<SecretEntry>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpTransportKind {
    Stdio,
    Http,
    Sse,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpSourceKind {
    Settings,
    Manifest,
}

/// One configured MCP server as the view shows it. No env or header values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerRow {
    pub name: String,
    pub transport: McpTransportKind,
    pub source: McpSourceKind,
    /// The manifest's name (source `manifest`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_detail: Option<String>,
    /// stdio: the command as written, without its arguments; http/sse: the URL without user
    /// info, query or fragment.
    pub target: String,
    /// The agents that get it (the settings' `agents`); absent: every agent (settings), or the
    /// manifest's own agent (`source_detail`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<String>>,
    /// The keychain entry whose secret becomes its headers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
    /// Whether the keychain holds `credential`; absent when there is none or the keychain
    /// cannot be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credential_stored: Option<bool>,
    /// Env names and header names it is configured with (names only), and what is odd about
    /// it, for a person.
    pub notes: Vec<String>,
}

/// What `mcp_servers_list` answers.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServersListing {
    pub settings_file: String,
    /// The settings' servers in file order, then each manifest's (manifests by name).
    pub servers: Vec<McpServerRow>,
    /// Problems of the settings' `mcp_servers` and the manifests' `mcp_servers` fields.
    pub problems: Vec<ConfigProblem>,
    /// The keychain could not be read (so `credentialStored` is absent): why, what to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keychain_problem: Option<String>,
}

/// The configuration this view reads: the settings and the manifests (blocking file reads).
struct Config {
    settings_file: std::path::PathBuf,
    settings: settings::Settings,
    settings_problems: Vec<ConfigProblem>,
    manifests: Vec<manifest::Manifest>,
    manifest_problems: Vec<ConfigProblem>,
}

impl Config {
    fn read() -> Config {
        let sources = acp_desk_core::agents::Sources::default_for_user();
        let loaded = settings::load_from(&sources.settings_file);
        let (manifests, manifest_problems) = manifest::load_dir(&sources.config_dir.join("agents"));
        Config {
            settings_file: sources.settings_file,
            settings: loaded.settings,
            settings_problems: loaded.problems,
            manifests,
            manifest_problems,
        }
    }
}

/// Where each secret name is used, for a person: `(name, "MCP server `x` (settings)")`. Names
/// that are not valid refs are left out (the settings or manifest problem says so).
fn uses(config: &Config) -> BTreeMap<SecretRef, Vec<String>> {
    let mut out: BTreeMap<SecretRef, Vec<String>> = BTreeMap::new();
    let mut add = |name: &str, what: String| {
        if let Ok(r) = SecretRef::new(name) {
            out.entry(r).or_default().push(what);
        }
    };
    for (name, server) in &config.settings.mcp_servers {
        if let Some(r) = &server.credential_ref {
            add(r.as_str(), format!("MCP server `{name}` (settings)"));
        }
    }
    for m in &config.manifests {
        for s in m.definition.metadata.aip44.mcp_servers.iter().flatten() {
            if let Some(r) = &s.credential_ref {
                add(
                    r,
                    format!("MCP server `{}` (manifest `{}`)", s.name, m.id()),
                );
            }
        }
    }
    out
}

/// What the keychain said, as the window shows it.
fn keychain_error(e: SecretError) -> IpcError {
    match e {
        SecretError::InvalidRef { .. } => IpcError::InvalidInput(e.to_string()),
        SecretError::NoService { .. } | SecretError::Locked { .. } => {
            IpcError::KeychainUnavailable(e.to_string())
        }
        SecretError::Backend { .. } => IpcError::KeychainUnavailable(format!(
            "{e}; nothing was changed: try again, or use `acp-desk-cli secret` to see what the keychain says"
        )),
    }
}

/// The listing, built from the keychain's names and the configuration's. Never fails: an
/// unreadable keychain is `available: false` with its problem. Blocking.
pub fn listing(keychain: &dyn Keychain) -> SecretsListing {
    let config = Config::read();
    listing_with(keychain, &config)
}

fn listing_with(keychain: &dyn Keychain, config: &Config) -> SecretsListing {
    let mut used = uses(config);
    let (stored, problem) = match keychain.list() {
        Ok(names) => (names, None),
        Err(e) => (Vec::new(), Some(keychain_error(e).to_string())),
    };
    for name in &stored {
        used.entry(name.clone()).or_default();
    }
    let secrets = used
        .into_iter()
        .map(|(name, used_by)| SecretEntry {
            stored: stored.contains(&name),
            name: name.to_string(),
            used_by,
        })
        .collect();
    SecretsListing {
        available: problem.is_none(),
        problem,
        settings_file: config.settings_file.display().to_string(),
        secrets,
    }
}

fn names<V>(map: &BTreeMap<String, V>) -> String {
    map.keys()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// "runs with `A`, `B` set" / "sends the header `X`": names only.
fn notes_for<V>(kind: &str, map: &BTreeMap<String, V>) -> Vec<String> {
    let n = map.len();
    match (kind, n) {
        (_, 0) => Vec::new(),
        ("env", _) => vec![format!("runs with {} set", names(map))],
        (_, 1) => vec![format!("sends the header {}", names(map))],
        _ => vec![format!("sends the headers {}", names(map))],
    }
}

/// The configured servers, with whether each credential is stored. Blocking.
pub fn servers(keychain: &dyn Keychain) -> McpServersListing {
    let config = Config::read();
    servers_with(keychain, &config)
}

fn servers_with(keychain: &dyn Keychain, config: &Config) -> McpServersListing {
    let (stored, keychain_problem) = match keychain.list() {
        Ok(names) => (Some(names), None),
        Err(e) => (None, Some(keychain_error(e).to_string())),
    };
    let stored_state = |credential: &Option<String>| -> Option<bool> {
        let r = SecretRef::new(credential.as_deref()?).ok()?;
        stored.as_ref().map(|names| names.contains(&r))
    };
    let mut servers = Vec::new();
    for (name, s) in &config.settings.mcp_servers {
        let (transport, target, notes) = match &s.transport {
            settings::McpTransport::Stdio { command, env, .. } => (
                McpTransportKind::Stdio,
                command.clone(),
                notes_for("env", env),
            ),
            settings::McpTransport::Http { url, headers } => (
                McpTransportKind::Http,
                mcp::shown_url(url),
                notes_for("headers", headers),
            ),
            settings::McpTransport::Sse { url, headers } => (
                McpTransportKind::Sse,
                mcp::shown_url(url),
                notes_for("headers", headers),
            ),
        };
        let credential = s.credential_ref.as_ref().map(|r| r.as_str().to_owned());
        servers.push(McpServerRow {
            name: name.clone(),
            transport,
            source: McpSourceKind::Settings,
            source_detail: None,
            target,
            agents: None,
            credential_stored: stored_state(&credential),
            credential,
            notes,
        });
    }
    for m in &config.manifests {
        for s in m.definition.metadata.aip44.mcp_servers.iter().flatten() {
            use acp_desk_core::agents::manifest::AcpMcpTransport;
            let reference = s.reference.clone().unwrap_or_default();
            let (transport, target) = match s.transport {
                AcpMcpTransport::Stdio => (McpTransportKind::Stdio, reference),
                AcpMcpTransport::Http => (McpTransportKind::Http, mcp::shown_url(&reference)),
                AcpMcpTransport::Sse => (McpTransportKind::Sse, mcp::shown_url(&reference)),
            };
            let mut notes = Vec::new();
            if let Some(env) = &s.env {
                notes.extend(notes_for("env", env));
            }
            if let Some(headers) = &s.headers {
                notes.extend(notes_for("headers", headers));
            }
            let mut credential = s.credential_ref.clone();
            if transport == McpTransportKind::Stdio && credential.is_some() {
                notes.push(
                    "its credentialRef is ignored: only http and sse servers take a credential"
                        .into(),
                );
                credential = None;
            }
            if let Some(c) = &credential
                && let Err(e) = SecretRef::new(c)
            {
                notes.push(e.to_string());
            }
            servers.push(McpServerRow {
                name: s.name.clone(),
                transport,
                source: McpSourceKind::Manifest,
                source_detail: Some(m.id().to_owned()),
                target,
                agents: None,
                credential_stored: stored_state(&credential),
                credential,
                notes,
            });
        }
    }
    let problems = config
        .settings_problems
        .iter()
        .chain(&config.manifest_problems)
        .filter(|p| {
            p.field.as_deref().is_some_and(|f| {
                f.starts_with("mcp_servers") || f.starts_with("metadata.aip44.mcp_servers")
            })
        })
        .cloned()
        .collect();
    McpServersListing {
        settings_file: config.settings_file.display().to_string(),
        servers,
        problems,
        keychain_problem,
    }
}

/// Stores `value` under `name` (replacing what was there). The value is checked for size and
/// emptiness only; errors name the secret, never its value. Blocking.
pub fn store(keychain: &dyn Keychain, name: &str, value: SecretValue) -> Result<(), IpcError> {
    let name = SecretRef::new(name).map_err(keychain_error)?;
    if value.expose().trim().is_empty() {
        return Err(IpcError::InvalidInput(format!(
            "the value for `{name}` is empty: paste the token (or a JSON object of headers) and store it again"
        )));
    }
    if value.expose().len() > MAX_SECRET_BYTES {
        return Err(IpcError::InvalidInput(format!(
            "the value for `{name}` is over {} KiB, more than a token or a set of headers: check what was pasted",
            MAX_SECRET_BYTES / 1024
        )));
    }
    keychain.set(&name, &value).map_err(keychain_error)?;
    tracing::info!("stored the secret `{name}` in the keychain");
    Ok(())
}

/// Removes the secret `name`; removing one that is not there is said, not an error of the
/// keychain. Blocking.
pub fn remove(keychain: &dyn Keychain, name: &str) -> Result<(), IpcError> {
    let name = SecretRef::new(name).map_err(keychain_error)?;
    if !keychain.delete(&name).map_err(keychain_error)? {
        return Err(IpcError::InvalidInput(format!(
            "the keychain holds no secret `{name}` (removed meanwhile?): the list is up to date now"
        )));
    }
    tracing::info!("removed the secret `{name}` from the keychain");
    Ok(())
}

/// Runs `f` with the app's keychain on the blocking pool.
async fn with_keychain<R: Runtime, T: Send + 'static>(
    app: AppHandle<R>,
    what: &'static str,
    f: impl FnOnce(&dyn Keychain) -> Result<T, IpcError> + Send + 'static,
) -> Result<T, IpcError> {
    let keychain = app.state::<AppState>().keychain.clone();
    tauri::async_runtime::spawn_blocking(move || f(keychain.as_ref()))
        .await
        .map_err(|e| IpcError::task_failed(what, &e))?
}

/// The secret names stored and used, each stored or missing and where it is used.
#[tauri::command]
pub async fn secrets_list<R: Runtime>(app: AppHandle<R>) -> Result<SecretsListing, IpcError> {
    with_keychain(app, "list the secrets", |k| Ok(listing(k))).await
}

/// Stores a secret typed in the window; the listing afterwards (names only).
#[tauri::command]
pub async fn secret_set<R: Runtime>(
    app: AppHandle<R>,
    name: String,
    value: String,
) -> Result<SecretsListing, IpcError> {
    let value = SecretValue::new(value);
    with_keychain(app, "store the secret", move |k| {
        store(k, &name, value)?;
        Ok(listing(k))
    })
    .await
}

/// Removes a secret from the keychain; the listing afterwards.
#[tauri::command]
pub async fn secret_delete<R: Runtime>(
    app: AppHandle<R>,
    name: String,
) -> Result<SecretsListing, IpcError> {
    with_keychain(app, "remove the secret", move |k| {
        remove(k, &name)?;
        Ok(listing(k))
    })
    .await
}

/// The configured MCP servers (settings, manifests), with their credential's state.
#[tauri::command]
pub async fn mcp_servers_list<R: Runtime>(
    app: AppHandle<R>,
) -> Result<McpServersListing, IpcError> {
    with_keychain(app, "list the MCP servers", |k| Ok(servers(k))).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_desk_core::secrets::MemoryKeychain;

    fn read_config(dir: &std::path::Path) -> Config {
        let file = dir.join("settings.json");
        let loaded = settings::load_from(&file);
        let (manifests, manifest_problems) = manifest::load_dir(&dir.join("agents"));
        Config {
            settings_file: file,
            settings: loaded.settings,
            settings_problems: loaded.problems,
            manifests,
            manifest_problems,
        }
    }

    fn config(settings_json: &str) -> (tempfile::TempDir, Config) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("settings.json"), settings_json).unwrap();
        let config = read_config(dir.path());
        (dir, config)
    }

    /// A keychain whose service is not running.
    struct NoService;
    impl Keychain for NoService {
        fn get(&self, _: &SecretRef) -> Result<Option<SecretValue>, SecretError> {
            Err(self.err())
        }
        fn set(&self, _: &SecretRef, _: &SecretValue) -> Result<(), SecretError> {
            Err(self.err())
        }
        fn delete(&self, _: &SecretRef) -> Result<bool, SecretError> {
            Err(self.err())
        }
        fn list(&self) -> Result<Vec<SecretRef>, SecretError> {
            Err(self.err())
        }
    }
    impl NoService {
        fn err(&self) -> SecretError {
            SecretError::NoService {
                detail: "org.freedesktop.secrets is not on the bus".into(),
            }
        }
    }

    const SETTINGS: &str = r#"{
      "mcp_servers": {
        "github": {"url": "https://u:p@api.example.com/mcp?token=QTOKEN", "headers": {"X-Team": "HVALUE"}, "credential_ref": "github-mcp"},
        "files": {"command": "mcp-files", "args": ["--root", "/secret/arg"], "env": {"FILES_KEY": "EVALUE"}},
        "events": {"type": "sse", "url": "https://events.example.com/sse", "credential_ref": "events-key"}
      }
    }"#;

    #[test]
    fn names_used_and_stored_are_listed_with_where_they_are_used() {
        let (_dir, config) = config(SETTINGS);
        let k = MemoryKeychain::new();
        k.set(
            &SecretRef::new("github-mcp").unwrap(),
            &SecretValue::new("tok".into()),
        )
        .unwrap();
        k.set(
            &SecretRef::new("leftover").unwrap(),
            &SecretValue::new("x".into()),
        )
        .unwrap();
        let l = listing_with(&k, &config);
        assert!(l.available);
        assert_eq!(l.problem, None);
        let by: Vec<_> = l
            .secrets
            .iter()
            .map(|s| (s.name.as_str(), s.stored, s.used_by.clone()))
            .collect();
        assert_eq!(
            by,
            vec![
                (
                    "events-key",
                    false,
                    vec!["MCP server `events` (settings)".into()]
                ),
                (
                    "github-mcp",
                    true,
                    vec!["MCP server `github` (settings)".into()]
                ),
                ("leftover", true, vec![]),
            ]
        );
    }

    #[test]
    fn without_a_keychain_the_names_in_use_are_listed_with_what_to_do() {
        let (_dir, config) = config(SETTINGS);
        let l = listing_with(&NoService, &config);
        assert!(!l.available);
        let problem = l.problem.unwrap();
        assert!(
            problem.contains("no keychain service is running"),
            "{problem}"
        );
        assert!(problem.contains("start a Secret Service"), "{problem}");
        assert_eq!(l.secrets.len(), 2);
        assert!(l.secrets.iter().all(|s| !s.stored));
        let s = servers_with(&NoService, &config);
        assert!(s.keychain_problem.is_some());
        assert!(s.servers.iter().all(|r| r.credential_stored.is_none()));
    }

    #[test]
    fn server_rows_carry_names_and_shown_urls_never_values() {
        let (_dir, config) = config(SETTINGS);
        let k = MemoryKeychain::new();
        k.set(
            &SecretRef::new("events-key").unwrap(),
            &SecretValue::new("tok".into()),
        )
        .unwrap();
        let l = servers_with(&k, &config);
        let text = serde_json::to_string(&l).unwrap();
        for secret in ["QTOKEN", "HVALUE", "EVALUE", "/secret/arg", "u:p"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        let names: Vec<_> = l.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["github", "files", "events"]);
        let github = &l.servers[0];
        assert_eq!(github.transport, McpTransportKind::Http);
        assert_eq!(github.target, "https://api.example.com/mcp");
        assert_eq!(github.credential.as_deref(), Some("github-mcp"));
        assert_eq!(github.credential_stored, Some(false));
        assert_eq!(github.notes, ["sends the header `X-Team`"]);
        let files = &l.servers[1];
        assert_eq!(
            (files.transport, files.target.as_str()),
            (McpTransportKind::Stdio, "mcp-files")
        );
        assert_eq!(files.notes, ["runs with `FILES_KEY` set"]);
        assert_eq!(files.credential_stored, None);
        assert_eq!(l.servers[2].transport, McpTransportKind::Sse);
        assert_eq!(l.servers[2].credential_stored, Some(true));
    }

    #[test]
    fn a_manifests_servers_are_listed_under_it_and_its_credential_counts_as_used() {
        let (dir, _) = config("{}");
        let agent = dir.path().join("agents/good-server");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::copy(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../crates/acp-desk-core/tests/fixtures/manifests/good-server/ACP.md"
            ),
            agent.join("ACP.md"),
        )
        .unwrap();
        let config = read_config(dir.path());
        assert_eq!(config.manifests.len(), 1, "{:?}", config.manifest_problems);
        let l = servers_with(&MemoryKeychain::new(), &config);
        let text = serde_json::to_string(&l).unwrap();
        for secret in [
            "secret-token-value",
            "secret-header-value",
            "server-filesystem",
        ] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        let rows: Vec<_> = l
            .servers
            .iter()
            .map(|s| {
                (
                    s.name.as_str(),
                    s.source,
                    s.source_detail.as_deref(),
                    s.target.as_str(),
                    s.credential.as_deref(),
                    s.credential_stored,
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                (
                    "files",
                    McpSourceKind::Manifest,
                    Some("good-server"),
                    "npx",
                    None,
                    None
                ),
                (
                    "docs",
                    McpSourceKind::Manifest,
                    Some("good-server"),
                    "https://docs.example.invalid/mcp",
                    Some("vault/docs"),
                    Some(false)
                ),
            ]
        );
        assert_eq!(l.servers[0].notes, ["runs with `FILES_TOKEN` set"]);
        let secrets = listing_with(&MemoryKeychain::new(), &config).secrets;
        assert_eq!(secrets.len(), 1);
        assert_eq!(secrets[0].name, "vault/docs");
        assert_eq!(
            secrets[0].used_by,
            ["MCP server `docs` (manifest `good-server`)"]
        );
    }

    #[test]
    fn storing_checks_the_name_and_the_value_and_never_says_the_value() {
        let k = MemoryKeychain::new();
        let e = store(&k, "has space", SecretValue::new("VALUE1".into())).unwrap_err();
        assert!(matches!(e, IpcError::InvalidInput(_)), "{e:?}");
        assert!(!e.to_string().contains("VALUE1"));
        let e = store(&k, "ok", SecretValue::new("  \n".into())).unwrap_err();
        assert!(e.to_string().contains("empty"), "{e}");
        let big = "V".repeat(MAX_SECRET_BYTES + 1);
        let e = store(&k, "ok", SecretValue::new(big)).unwrap_err();
        assert!(!e.to_string().contains("VVVV"), "{e}");
        store(&k, "ok", SecretValue::new("VALUE2".into())).unwrap();
        let r = SecretRef::new("ok").unwrap();
        assert_eq!(k.get(&r).unwrap().unwrap().expose(), "VALUE2");
        let e = store(&NoService, "ok", SecretValue::new("VALUE3".into())).unwrap_err();
        assert!(matches!(e, IpcError::KeychainUnavailable(_)), "{e:?}");
        assert!(!e.to_string().contains("VALUE3"));
    }

    #[test]
    fn removing_says_when_there_was_nothing() {
        let k = MemoryKeychain::new();
        store(&k, "a", SecretValue::new("v".into())).unwrap();
        remove(&k, "a").unwrap();
        let e = remove(&k, "a").unwrap_err();
        assert!(e.to_string().contains("holds no secret `a`"), "{e}");
    }
}
