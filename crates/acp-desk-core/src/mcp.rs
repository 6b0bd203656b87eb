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

use crate::secrets::{EnvValue, SecretRef};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_urls_drop_what_may_hold_a_token() {
        assert_eq!(
            shown_url("https://user:pw@mcp.example.com:8443/v1/mcp?token=abc#x"),
            "https://mcp.example.com:8443/v1/mcp"
        );
        assert_eq!(shown_url("not a url"), "<invalid URL>");
    }
}
