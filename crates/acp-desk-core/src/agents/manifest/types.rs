//! The AIP-44 `AcpDefinition` as seed 002 writes it (its TypeScript, lines 1–126), in serde.
//! Field names are the file's: snake_case under `metadata.aip44` (`acp_rev`, `mcp_servers`),
//! camelCase inside `capabilities` and on MCP servers (`credentialRef`), as the seed spells them.
//! Keys the seed leaves open (`metadata.<vendor>`, `metadata.aip44.<extension>`, top-level
//! extensions) are kept in maps, never dropped.
//!
//! `Debug` never prints an env or header value (MCP servers, our launch key): names only, so a
//! definition can be logged.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `client` drives a subprocess (ACP Desk is one); `server` exposes an agent; `bridge` is both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AcpRole {
    Client,
    Server,
    Bridge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AcpTransport {
    Stdio,
    Websocket,
}

/// `transport: AcpTransport | AcpTransport[]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AcpTransports {
    One(AcpTransport),
    List(Vec<AcpTransport>),
}

impl AcpTransports {
    pub fn includes(&self, t: AcpTransport) -> bool {
        match self {
            AcpTransports::One(one) => *one == t,
            AcpTransports::List(list) => list.contains(&t),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AcpTier {
    Basic,
    GovernanceAware,
    Sandboxed,
}

/// Mirror of upstream ACP `initialize` capabilities. `None` everywhere: the manifest does not
/// say.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AcpCapabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<AcpClientCapabilities>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AcpAgentCapabilities>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AcpClientCapabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs: Option<AcpFsCapabilities>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AcpFsCapabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_text_file: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_text_file: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AcpAgentCapabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_session: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_capabilities: Option<AcpPromptCapabilities>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_capabilities: Option<AcpMcpCapabilities>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AcpPromptCapabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedded_context: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AcpMcpCapabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sse: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AcpAuditKind {
    Governance,
    External,
    Off,
}

/// `audit: {ref?, kind?}`: where the audit log goes, or `kind: off` for none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcpAuditConfig {
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<AcpAuditKind>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AcpMcpTransport {
    Stdio,
    Http,
    Sse,
}

/// One MCP server to mount through `session/new.mcpServers`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcpMcpServer {
    pub name: String,
    pub transport: AcpMcpTransport,
    /// The command of a `stdio` server; the URL of an `http`/`sse` one.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
    #[serde(
        default,
        rename = "credentialRef",
        skip_serializing_if = "Option::is_none"
    )]
    pub credential_ref: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
}

impl fmt::Debug for AcpMcpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header and env values may be tokens: names only.
        f.debug_struct("AcpMcpServer")
            .field("name", &self.name)
            .field("transport", &self.transport)
            .field("reference", &self.reference)
            .field("header_names", &self.headers.as_ref().map(names))
            .field("credential_ref", &self.credential_ref)
            .field("args", &self.args)
            .field("env_names", &self.env.as_ref().map(names))
            .finish()
    }
}

fn names(map: &BTreeMap<String, String>) -> Vec<&str> {
    map.keys().map(String::as_str).collect()
}

/// AIP-44's binding layer, `metadata.aip44`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Aip44Extensions {
    /// Commit SHA of the upstream ACP repository this manifest validates against.
    pub acp_rev: String,
    pub tier: AcpTier,
    /// Overrides the tier's defaults when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<AcpCapabilities>,
    /// AIP-9 OPERATOR.md ref; the seed requires it for `kind: server` (we warn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governance: Option<String>,
    /// AIP-36 SANDBOX.md ref; the seed requires it for `tier: sandboxed` (we warn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<AcpAuditConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<Vec<AcpMcpServer>>,
    /// Namespaced vendor sub-keys, kept as written.
    #[serde(flatten)]
    pub extensions: BTreeMap<String, Value>,
}

/// Our vendor key, `metadata.acp-desk`: how to start the agent a manifest describes.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcpDeskMetadata {
    pub command: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
}

impl fmt::Debug for AcpDeskMetadata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AcpDeskMetadata")
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env_names", &names(&self.env))
            .finish()
    }
}

/// `metadata`: `aip44`, our launch key, and every other vendor's keys as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcpMetadata {
    pub aip44: Aip44Extensions,
    #[serde(default, rename = "acp-desk", skip_serializing_if = "Option::is_none")]
    pub acp_desk: Option<AcpDeskMetadata>,
    #[serde(flatten)]
    pub vendor: BTreeMap<String, Value>,
}

/// The front matter of an AIP-44 `ACP.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcpDefinition {
    /// Kebab case; must equal the folder's name.
    pub name: String,
    /// Stable runtime id.
    pub id: String,
    pub description: String,
    /// Semver of this manifest.
    pub version: String,
    pub kind: AcpRole,
    pub transport: AcpTransports,
    pub metadata: AcpMetadata,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Top-level extension keys, kept for forward compatibility.
    #[serde(flatten)]
    pub extensions: BTreeMap<String, Value>,
}
