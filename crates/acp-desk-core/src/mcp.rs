//! MCP servers for every agent (issue 17): which servers a session gets, from where, and what
//! reaches the agent. Sources: the settings' `mcp_servers` (every agent, or those its `agents`
//! list names), the agent's AIP-44 manifest (`metadata.aip44.mcp_servers`), and a project's own
//! config (`.mcp.json` and the like, `mcp/project.rs`) only once the user agreed to it.
//!
//! A session's servers go in `session/new`, `session/load` and `session/resume` as the agent's
//! `mcpCapabilities` allow (stdio always; http and sse when advertised); every server skipped is
//! named, with the reason, in the `mcp-servers` event and a notice. Secrets (`credentialRef`,
//! `{"secret": REF}` env values) are read from the keychain at launch
//! ([`crate::secrets::Keychain`]) and exist only in the request that carries them.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use agent_client_protocol_schema::v1 as acp;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::agents::manifest::{AcpMcpServer, AcpMcpTransport, Manifest};
use crate::secrets::{EnvValue, Keychain, SecretError, SecretRef, SecretValue, credential_headers};
use crate::settings::Settings;

pub mod project;

/// Where a configured server comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpSource {
    /// The settings file's `mcp_servers`.
    Settings,
    /// The AIP-44 manifest of that name (`agents/<name>/ACP.md`).
    Manifest(String),
    /// A project's own config file (absolute path), agreed to by the user.
    Project(PathBuf),
}

/// How a configured server is reached. Values may be secrets: `Debug` shows names only.
#[derive(Clone, PartialEq, Eq)]
pub enum McpConfigTransport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, EnvValue>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
    Sse {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

impl fmt::Debug for McpConfigTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::agents::EnvNames;
        match self {
            McpConfigTransport::Stdio { command, args, env } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", &args.len())
                .field("env", &EnvNames(env.keys().map(String::as_str)))
                .finish(),
            McpConfigTransport::Http { url, headers }
            | McpConfigTransport::Sse { url, headers } => f
                .debug_struct("Url")
                .field("url", &crate::mcp::shown_url(url))
                .field("headers", &EnvNames(headers.keys().map(String::as_str)))
                .finish(),
        }
    }
}

/// One configured MCP server, secrets not yet read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerConfig {
    pub name: String,
    pub source: McpSource,
    pub transport: McpConfigTransport,
    /// A keychain entry whose secret becomes headers (http and sse only; on stdio it is
    /// reported as ignored).
    pub credential_ref: Option<SecretRef>,
}

/// A URL as it may be shown or logged: scheme, host, port and path; no user info, query or
/// fragment (where tokens hide). Unparsable: `<invalid URL>`.
pub fn shown_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(u) => {
            let host = u.host_str().unwrap_or("");
            match u.port() {
                Some(p) => format!("{}://{host}:{p}{}", u.scheme(), u.path()),
                None => format!("{}://{host}{}", u.scheme(), u.path()),
            }
        }
        Err(_) => "<invalid URL>".to_owned(),
    }
}

/// The servers for a session of `agent_id`, most specific first: `project` (a project's own
/// servers, given only once the user agreed to them), then the agent's manifest's
/// (`metadata.aip44.mcp_servers`), then the settings entries whose `agents` names this agent,
/// then the settings entries for every agent. A name may come more than once: the first of a
/// name is the one used; [`read_secrets`] reports the later ones as skipped, "replaced by" the
/// first. A manifest server without a `ref`, or with a `credentialRef` that is not a valid
/// name, is left out (the manifest's warnings say so). Pure: nothing is read.
pub fn servers_for(
    settings: &Settings,
    agent_id: &str,
    manifest: Option<&Manifest>,
    project: &[McpServerConfig],
) -> Vec<McpServerConfig> {
    let mut out: Vec<McpServerConfig> = project.to_vec();
    if let Some(m) = manifest
        && let Some(servers) = &m.definition.metadata.aip44.mcp_servers
    {
        out.extend(servers.iter().filter_map(|s| from_manifest(m.id(), s)));
    }
    let from_settings = |scoped: bool| {
        settings
            .mcp_servers
            .iter()
            .filter(move |(_, s)| s.agents.is_some() == scoped && s.applies_to(agent_id))
            .map(|(name, s)| McpServerConfig {
                name: name.clone(),
                source: McpSource::Settings,
                transport: s.transport.clone(),
                credential_ref: s.credential_ref.clone(),
            })
    };
    out.extend(from_settings(true));
    out.extend(from_settings(false));
    out
}

fn from_manifest(manifest: &str, s: &AcpMcpServer) -> Option<McpServerConfig> {
    let reference = s.reference.clone().filter(|r| !r.trim().is_empty())?;
    let credential_ref = match &s.credential_ref {
        Some(r) => Some(SecretRef::new(r).ok()?),
        None => None,
    };
    let headers = s.headers.clone().unwrap_or_default();
    let transport = match s.transport {
        AcpMcpTransport::Stdio => McpConfigTransport::Stdio {
            command: reference,
            args: s.args.clone().unwrap_or_default(),
            env: s
                .env
                .iter()
                .flatten()
                .map(|(k, v)| (k.clone(), EnvValue::Plain(v.clone())))
                .collect(),
        },
        AcpMcpTransport::Http => McpConfigTransport::Http {
            url: reference,
            headers,
        },
        AcpMcpTransport::Sse => McpConfigTransport::Sse {
            url: reference,
            headers,
        },
    };
    Some(McpServerConfig {
        name: s.name.clone(),
        source: McpSource::Manifest(manifest.to_owned()),
        transport,
        credential_ref,
    })
}

/// A server's transport, as reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpTransportKind {
    Stdio,
    Http,
    Sse,
}

/// Where a reported server comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpSourceKind {
    Settings,
    Manifest,
    Project,
}

/// One configured server as the `mcp-servers` event reports it: whether the agent got it,
/// and if not, why. Names, commands and URLs as shown ([`shown_url`]); never a value of an
/// env variable, a header or a secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerReport {
    pub name: String,
    pub transport: McpTransportKind,
    pub source: McpSourceKind,
    /// The manifest's name, or the project's config file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_detail: Option<String>,
    /// stdio: the command as written (no arguments); http and sse: the URL as shown.
    pub target: String,
    /// The agent got it (in `session/new`, `session/load` or `session/resume`).
    pub passed: bool,
    /// Why it was skipped, said for a person, with what to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The keychain entry its headers come from (http and sse), by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
    /// What else to know (a `credentialRef` ignored on a stdio server, headers replaced).
    #[serde(default)]
    pub notes: Vec<String>,
}

impl McpServerConfig {
    /// Its report, passed and without notes yet.
    pub fn report(&self) -> McpServerReport {
        let (transport, target) = match &self.transport {
            McpConfigTransport::Stdio { command, .. } => (McpTransportKind::Stdio, command.clone()),
            McpConfigTransport::Http { url, .. } => (McpTransportKind::Http, shown_url(url)),
            McpConfigTransport::Sse { url, .. } => (McpTransportKind::Sse, shown_url(url)),
        };
        let (source, source_detail) = match &self.source {
            McpSource::Settings => (McpSourceKind::Settings, None),
            McpSource::Manifest(m) => (McpSourceKind::Manifest, Some(m.clone())),
            McpSource::Project(p) => (McpSourceKind::Project, Some(p.display().to_string())),
        };
        let credential = match (&self.transport, &self.credential_ref) {
            (McpConfigTransport::Stdio { .. }, _) | (_, None) => None,
            (_, Some(r)) => Some(r.to_string()),
        };
        McpServerReport {
            name: self.name.clone(),
            transport,
            source,
            source_detail,
            target,
            passed: true,
            reason: None,
            credential,
            notes: Vec::new(),
        }
    }

    /// "the manifest `x`", "the project's /p/.mcp.json", "the settings".
    fn origin_words(&self) -> String {
        match &self.source {
            McpSource::Settings => "the settings".into(),
            McpSource::Manifest(m) => format!("the agent's manifest `{m}`"),
            McpSource::Project(p) => format!("the project's {}", p.display()),
        }
    }
}

/// A session's servers with their secrets read ([`read_secrets`]), before the agent said
/// which transports it takes. Holds secret values: its `Debug` shows the reports only, and
/// it is never serialized; the servers leave it only into the request that carries them.
#[derive(Clone, Default)]
pub struct McpLaunch {
    entries: Vec<LaunchEntry>,
}

#[derive(Clone)]
struct LaunchEntry {
    report: McpServerReport,
    /// `None`: skipped already (replaced, a secret missing); `report.reason` says why.
    server: Option<acp::McpServer>,
}

impl fmt::Debug for McpLaunch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| &e.report))
            .finish()
    }
}

impl McpLaunch {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// What an agent named `agent` whose `initialize` answer says `caps` gets, and the report
    /// of every configured server (passed or why not). stdio servers always pass; http and sse
    /// ones only when the agent advertises `mcpCapabilities.http` / `.sse`.
    pub fn for_agent(
        &self,
        agent: &str,
        caps: &acp::McpCapabilities,
    ) -> (Vec<acp::McpServer>, Vec<McpServerReport>) {
        let mut servers = Vec::new();
        let mut reports = Vec::new();
        for e in &self.entries {
            let mut report = e.report.clone();
            if let Some(server) = &e.server {
                let missing = match report.transport {
                    McpTransportKind::Stdio => None,
                    McpTransportKind::Http => (!caps.http).then_some("http"),
                    McpTransportKind::Sse => (!caps.sse).then_some("sse"),
                };
                match missing {
                    None => servers.push(server.clone()),
                    Some(kind) => {
                        report.passed = false;
                        report.reason = Some(format!(
                            "the agent `{agent}` does not take {kind} MCP servers (its initialize answer has no agentCapabilities.mcpCapabilities.{kind}); use a stdio server, or an agent that takes {kind}"
                        ));
                    }
                }
            }
            reports.push(report);
        }
        (servers, reports)
    }
}

/// What to tell a person whose secret `name` could not be read.
fn unreadable(name: &SecretRef, got: &Result<Option<SecretValue>, SecretError>) -> String {
    match got {
        Ok(_) => format!(
            "the secret `{name}`, which is not in the keychain: store it with `acp-desk-cli secret set {name}` or in the window's Secrets, then reconnect"
        ),
        Err(e) => format!("the secret `{name}`, which could not be read: {e}"),
    }
}

/// The answer when no keychain was given to the session.
fn no_keychain() -> Result<Option<SecretValue>, SecretError> {
    Err(SecretError::Backend {
        detail: "this program was started without a keychain".into(),
    })
}

/// Reads every secret `servers` need (their `credentialRef`s, their `{"secret": REF}` env
/// values), each name once, and builds the ACP servers: a server whose secret cannot be read
/// is skipped with the reason (the session goes on without it), as is one whose name a server
/// before it took (see [`servers_for`]). Blocking (the keychain): call it on the blocking
/// pool.
/// A stdio server's command goes out as an absolute path, as ACP asks (`McpServerStdio.command`):
/// looked up the way the agent's own start is (`process::resolve_command`: PATH, or against
/// `cwd` for a relative path with a slash).
pub fn read_secrets(
    servers: &[McpServerConfig],
    keychain: Option<&dyn Keychain>,
    cwd: &std::path::Path,
) -> McpLaunch {
    let mut cache: BTreeMap<SecretRef, Result<Option<SecretValue>, SecretError>> = BTreeMap::new();
    let mut read = |name: &SecretRef| {
        cache
            .entry(name.clone())
            .or_insert_with(|| match keychain {
                Some(k) => k.get(name),
                None => no_keychain(),
            })
            .clone()
    };
    let mut entries: Vec<LaunchEntry> = Vec::new();
    for (i, config) in servers.iter().enumerate() {
        let mut report = config.report();
        if let Some(first) = servers[..i].iter().find(|s| s.name == config.name) {
            report.passed = false;
            report.reason = Some(format!(
                "replaced by the server of the same name from {}",
                first.origin_words()
            ));
            entries.push(LaunchEntry {
                report,
                server: None,
            });
            continue;
        }
        let server = match &config.transport {
            McpConfigTransport::Stdio { command, args, env } => {
                if config.credential_ref.is_some() {
                    report.notes.push(
                        "credentialRef is ignored on a stdio server: give it secrets through its env, as {\"secret\": \"NAME\"}".into(),
                    );
                }
                let mut vars = Vec::new();
                let mut failed = None;
                for (k, v) in env {
                    match v {
                        EnvValue::Plain(text) => vars.push(acp::EnvVariable::new(k, text)),
                        EnvValue::Secret(name) => match read(name) {
                            Ok(Some(value)) => {
                                vars.push(acp::EnvVariable::new(k, value.expose()));
                            }
                            got => {
                                failed =
                                    Some(format!("its env {k} needs {}", unreadable(name, &got)));
                                break;
                            }
                        },
                    }
                }
                let program = match crate::process::resolve_command(command, cwd) {
                    Ok(full) => full,
                    Err(e) => {
                        let why = match e {
                            crate::process::SpawnError::NotExecutable { path, .. } => {
                                format!("{} is not executable", path.display())
                            }
                            _ => "it is not on PATH".to_owned(),
                        };
                        // The agent may know a PATH we do not (its own env): pass it on, said.
                        report.notes.push(format!(
                            "`{command}`: {why}; it is passed as written and the agent may fail to start it: install it or give its full path"
                        ));
                        std::path::PathBuf::from(command)
                    }
                };
                match failed {
                    Some(why) => Err(why),
                    None => Ok(acp::McpServer::Stdio(
                        acp::McpServerStdio::new(&config.name, program)
                            .args(args.clone())
                            .env(vars),
                    )),
                }
            }
            McpConfigTransport::Http { url, headers }
            | McpConfigTransport::Sse { url, headers } => {
                let brokered = match &config.credential_ref {
                    None => Ok(Vec::new()),
                    Some(name) => match read(name) {
                        Ok(Some(secret)) => {
                            let headers = credential_headers(&secret);
                            // The agent would fail on it with a less clear error, or the header
                            // would split: refused here, naming the secret, never the value.
                            let bad_name = |k: &str| {
                                k.is_empty()
                                    || !k.bytes().all(|b| {
                                        b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
                                    })
                            };
                            if headers.iter().any(|(k, v)| {
                                bad_name(k) || v.expose().chars().any(|c| c.is_control())
                            }) {
                                Err(format!(
                                    "its credential `{name}` is not a usable header (a line break or control character in the value, or an invalid header name): store it again with `acp-desk-cli secret set {name}`"
                                ))
                            } else {
                                Ok(headers)
                            }
                        }
                        got => Err(format!("its credential needs {}", unreadable(name, &got))),
                    },
                };
                brokered.map(|brokered| {
                    let mut out = Vec::new();
                    for (k, v) in headers {
                        if brokered.iter().any(|(b, _)| b.eq_ignore_ascii_case(k)) {
                            report.notes.push(format!(
                                "the header {k} comes from the keychain (credentialRef), not from the configuration"
                            ));
                        } else {
                            out.push(acp::HttpHeader::new(k, v));
                        }
                    }
                    out.extend(
                        brokered
                            .iter()
                            .map(|(k, v)| acp::HttpHeader::new(k, v.expose())),
                    );
                    if matches!(config.transport, McpConfigTransport::Sse { .. }) {
                        acp::McpServer::Sse(acp::McpServerSse::new(&config.name, url).headers(out))
                    } else {
                        acp::McpServer::Http(
                            acp::McpServerHttp::new(&config.name, url).headers(out),
                        )
                    }
                })
            }
        };
        match server {
            Ok(server) => entries.push(LaunchEntry {
                report,
                server: Some(server),
            }),
            Err(why) => {
                report.passed = false;
                report.reason = Some(why);
                entries.push(LaunchEntry {
                    report,
                    server: None,
                });
            }
        }
    }
    McpLaunch { entries }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::secrets::MemoryKeychain;

    const MANIFEST: &str = "---
name: reviewer
id: reviewer
description: Reviews.
version: 1.0.0
kind: server
transport: stdio
metadata:
  aip44:
    acp_rev: c0945895
    tier: basic
    mcp_servers:
      - name: shared
        transport: http
        ref: https://manifest.example.com/mcp
        credentialRef: docs
      - name: local
        transport: stdio
        ref: npx
        args: [-y, some-server]
        env: {MODE: fast}
        credentialRef: ignored-here
      - name: bad-ref
        transport: http
        ref: https://x.example.com/mcp
        credentialRef: has space
---
";

    fn manifest() -> Manifest {
        let file = Path::new("/cfg/agents/reviewer/ACP.md");
        crate::agents::manifest::parse(file, MANIFEST).unwrap()
    }

    fn settings() -> Settings {
        let l = crate::settings::parse(
            "settings.json",
            r#"{"mcp_servers": {
  "everyone": {"command": "mcp-all"},
  "shared": {"url": "https://settings.example.com/mcp"},
  "only-claude": {"url": "https://c.example.com/mcp", "agents": ["claude"]},
  "only-reviewer": {"url": "https://r.example.com/mcp", "agents": ["reviewer", "x"]}
}}"#,
        );
        assert!(l.problems.is_empty(), "{:?}", l.problems);
        l.settings
    }

    fn project() -> McpServerConfig {
        McpServerConfig {
            name: "everyone".into(),
            source: McpSource::Project("/p/.mcp.json".into()),
            transport: McpConfigTransport::Stdio {
                command: "./tools/mcp".into(),
                args: Vec::new(),
                env: BTreeMap::new(),
            },
            credential_ref: None,
        }
    }

    fn names(servers: &[McpServerConfig]) -> Vec<(&str, &McpSource)> {
        servers
            .iter()
            .map(|s| (s.name.as_str(), &s.source))
            .collect()
    }

    #[test]
    fn servers_come_most_specific_first_and_scoped_by_agents() {
        let m = manifest();
        let got = servers_for(&settings(), "reviewer", Some(&m), &[project()]);
        let manifest_src = McpSource::Manifest("reviewer".into());
        assert_eq!(
            names(&got),
            [
                ("everyone", &McpSource::Project("/p/.mcp.json".into())),
                ("shared", &manifest_src),
                // `bad-ref`'s credentialRef is not a valid name: left out (the manifest warns).
                ("local", &manifest_src),
                ("only-reviewer", &McpSource::Settings),
                ("everyone", &McpSource::Settings),
                ("shared", &McpSource::Settings),
            ]
        );
        // Another agent: the settings' servers for every agent only.
        let got = servers_for(&settings(), "codex", None, &[]);
        assert_eq!(
            names(&got),
            [
                ("everyone", &McpSource::Settings),
                ("shared", &McpSource::Settings)
            ]
        );
        let local = servers_for(&settings(), "reviewer", Some(&m), &[])
            .into_iter()
            .find(|s| s.name == "local")
            .unwrap();
        assert_eq!(
            local.transport,
            McpConfigTransport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "some-server".into()],
                env: BTreeMap::from([("MODE".into(), EnvValue::Plain("fast".into()))]),
            }
        );
    }

    #[test]
    fn a_manifests_bad_credential_ref_is_a_warning_naming_the_server() {
        let m = manifest();
        let p = m
            .problems
            .iter()
            .find(|p| p.field.as_deref() == Some("metadata.aip44.mcp_servers[2].credentialRef"))
            .unwrap();
        assert!(p.message.contains("not given to sessions"), "{p}");
    }

    #[test]
    fn replaced_servers_and_missing_credentials_are_reported_with_what_to_do() {
        let m = manifest();
        let servers = servers_for(&settings(), "reviewer", Some(&m), &[project()]);
        let kc = MemoryKeychain::new();
        let launch = read_secrets(&servers, Some(&kc), std::path::Path::new("/"));
        let (sent, reports) = launch.for_agent("reviewer", &acp::McpCapabilities::new().http(true));
        let passed: Vec<&str> = reports
            .iter()
            .filter(|r| r.passed)
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(passed, ["everyone", "local", "only-reviewer"]);
        assert_eq!(sent.len(), 3);
        let why = |name: &str, source: McpSourceKind| {
            reports
                .iter()
                .find(|r| r.name == name && r.source == source)
                .and_then(|r| r.reason.clone())
                .unwrap()
        };
        assert_eq!(
            why("shared", McpSourceKind::Manifest),
            "its credential needs the secret `docs`, which is not in the keychain: store it with `acp-desk-cli secret set docs` or in the window's Secrets, then reconnect"
        );
        assert_eq!(
            why("everyone", McpSourceKind::Settings),
            "replaced by the server of the same name from the project's /p/.mcp.json"
        );
        assert_eq!(
            why("shared", McpSourceKind::Settings),
            "replaced by the server of the same name from the agent's manifest `reviewer`"
        );
        let local = reports.iter().find(|r| r.name == "local").unwrap();
        assert_eq!(local.credential, None);
        assert!(local.notes[0].starts_with("credentialRef is ignored on a stdio server"));
        assert_eq!(local.target, "npx");
        assert_eq!(local.source_detail.as_deref(), Some("reviewer"));
        // No keychain at all: said so, the server skipped.
        let launch = read_secrets(&servers, None, std::path::Path::new("/"));
        let (_, reports) = launch.for_agent("reviewer", &acp::McpCapabilities::new().http(true));
        let r = reports.iter().find(|r| r.credential.is_some()).unwrap();
        assert!(
            r.reason
                .as_deref()
                .unwrap()
                .contains("this program was started without a keychain"),
            "{:?}",
            r.reason
        );
    }

    #[test]
    fn a_credential_of_headers_wins_over_static_ones_whatever_their_case() {
        let kc = MemoryKeychain::new();
        kc.set(
            &SecretRef::new("docs").unwrap(),
            &SecretValue::new(r#"{"X-Api-Key": "k1", "authorization": "Token t"}"#.into()),
        )
        .unwrap();
        let server = McpServerConfig {
            name: "docs".into(),
            source: McpSource::Settings,
            transport: McpConfigTransport::Sse {
                url: "https://u:p@docs.example.com/sse?key=q".into(),
                headers: BTreeMap::from([
                    ("AUTHORIZATION".into(), "static".into()),
                    ("X-Keep".into(), "yes".into()),
                ]),
            },
            credential_ref: Some(SecretRef::new("docs").unwrap()),
        };
        let launch = read_secrets(&[server], Some(&kc), std::path::Path::new("/"));
        let (sent, reports) = launch.for_agent("a", &acp::McpCapabilities::new().sse(true));
        assert_eq!(
            serde_json::to_value(&sent).unwrap(),
            serde_json::json!([{"type": "sse", "name": "docs",
                "url": "https://u:p@docs.example.com/sse?key=q",
                "headers": [{"name": "X-Keep", "value": "yes"},
                            {"name": "X-Api-Key", "value": "k1"},
                            {"name": "authorization", "value": "Token t"}]}])
        );
        assert_eq!(reports[0].target, "https://docs.example.com/sse");
        let shown = format!("{launch:?} {reports:?}");
        for secret in ["k1", "Token t", "u:p", "key=q"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
    }

    #[test]
    fn a_credential_that_cannot_be_a_header_skips_its_server_naming_the_secret_only() {
        let kc = crate::secrets::MemoryKeychain::new();
        let name = SecretRef::new("web-token").unwrap();
        let server = McpServerConfig {
            name: "web".into(),
            source: McpSource::Settings,
            transport: McpConfigTransport::Http {
                url: "https://mcp.example.com/mcp".into(),
                headers: BTreeMap::new(),
            },
            credential_ref: Some(name.clone()),
        };
        for bad in ["zqv\r\nX-Evil: 1", r#"{"bad name": "zqv"}"#] {
            kc.set(&name, &SecretValue::new(bad.into())).unwrap();
            let launch = read_secrets(
                std::slice::from_ref(&server),
                Some(&kc),
                std::path::Path::new("/"),
            );
            let (sent, r) = launch.for_agent("a", &acp::McpCapabilities::new().http(true));
            assert!(sent.is_empty());
            assert!(!r[0].passed);
            let why = r[0].reason.clone().unwrap_or_default();
            assert!(why.contains("`web-token` is not a usable header"), "{why}");
            assert!(!why.contains("zqv") && !why.contains("Evil"), "{why}");
        }
    }

    #[test]
    fn shown_urls_drop_what_may_hold_a_token() {
        assert_eq!(
            shown_url("https://user:pw@mcp.example.com:8443/v1/mcp?token=abc#x"),
            "https://mcp.example.com:8443/v1/mcp"
        );
        assert_eq!(shown_url("not a url"), "<invalid URL>");
    }
}
