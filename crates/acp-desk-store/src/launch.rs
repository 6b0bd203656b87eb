//! How a stored session's agent was started, without its secrets.
//!
//! The engine describes a launch as a `LaunchSpec`: a launch name, the program, its arguments,
//! environment variables with their values, a working folder. The audit log records a
//! session's launch by its launch name only (`session-started`), and the commands an agent
//! runs by program, arguments as given and environment variable names (`command-run`); it
//! redacts nothing in arguments. The history keeps more than the audit log's launch (a stored
//! session is to be relaunched) but no secret:
//!
//! - environment variables by name only, never their values (users keep API keys there);
//! - the program as given;
//! - the arguments, each one that looks like a secret replaced by [`REDACTED`]
//!   ([`redact_args`]: values of flags named like a key, token, secret or password, `NAME=value`
//!   with such a name, URLs carrying a password, known token prefixes, long opaque strings);
//!   `args_redacted` says whether any was;
//! - how it was chosen ([`LaunchOrigin`]): an agent by name is relaunched by resolving the name
//!   again (the settings, the catalog), so its stored arguments are only shown; a command line
//!   is relaunched from `program` and `args`, which a redacted one cannot be (the front end
//!   asks for the command line again).

use acp_desk_core::agents::LaunchSpec;
use serde::{Deserialize, Serialize};

/// What a secret-looking argument is stored as.
pub const REDACTED: &str = "<redacted>";

/// How the user chose the agent, which says how to start it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LaunchOrigin {
    /// By name (`demo`, a catalog agent, an `agent_servers` entry): resolve the name again.
    #[default]
    Named,
    /// A command line the user typed (`--agent-command`): run `program` with `args`.
    CommandLine,
}

/// A launch as the history keeps it (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredLaunch {
    pub origin: LaunchOrigin,
    pub program: String,
    pub args: Vec<String>,
    /// Some argument was replaced by [`REDACTED`]: `args` cannot start the agent again.
    #[serde(default)]
    pub args_redacted: bool,
    /// The names of the environment variables the launch set; never their values.
    #[serde(default)]
    pub env_names: Vec<String>,
}

impl StoredLaunch {
    pub fn from_spec(spec: &LaunchSpec, origin: LaunchOrigin) -> Self {
        let (args, args_redacted) = redact_args(&spec.args);
        StoredLaunch {
            origin,
            program: spec.command.clone(),
            args,
            args_redacted,
            env_names: spec.env.iter().map(|(name, _)| name.clone()).collect(),
        }
    }

    /// Whether `program` and `args` can start the agent again as it was started.
    pub fn relaunchable_from_args(&self) -> bool {
        !self.args_redacted
    }
}

/// Words in a flag's or a variable's name that say its value is a secret.
const SECRET_NAME_WORDS: &[&str] = &[
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "auth",
    "credential",
    "bearer",
    "cookie",
];

/// Prefixes of well-known API tokens.
const TOKEN_PREFIXES: &[&str] = &[
    "sk-",
    "sk_",
    "pk_",
    "rk_",
    "ghp_",
    "gho_",
    "ghs_",
    "ghu_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "AKIA",
    "ASIA",
    "AIza",
    "ya29.",
    "eyJ",
];

/// A run of this many letters and digits (with both) is taken for a token: words, version
/// numbers and uuids have shorter runs between their separators.
const OPAQUE_RUN_CHARS: usize = 24;

fn secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SECRET_NAME_WORDS.iter().any(|w| name.contains(w))
}

fn looks_like_token(s: &str) -> bool {
    if TOKEN_PREFIXES
        .iter()
        .any(|p| s.starts_with(p) && s.len() >= p.len() + 8)
    {
        return true;
    }
    s.split(|c: char| !c.is_ascii_alphanumeric()).any(|run| {
        run.len() >= OPAQUE_RUN_CHARS
            && run.bytes().any(|b| b.is_ascii_digit())
            && run.bytes().any(|b| b.is_ascii_alphabetic())
    })
}

/// `scheme://user:password@host...` with the password replaced.
fn redact_url_password(s: &str) -> Option<String> {
    let (scheme, rest) = s.split_once("://")?;
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (userinfo, _) = rest[..authority_end].rsplit_once('@')?;
    let (user, _) = userinfo.split_once(':')?;
    let host_and_rest = &rest[userinfo.len()..];
    Some(format!("{scheme}://{user}:{REDACTED}{host_and_rest}"))
}

/// One argument, redacted when it looks like a secret on its own (a token, a URL with a
/// password, `NAME=value` or `--flag=value` with a secret-looking name).
fn redact_one(arg: &str) -> Option<String> {
    if let Some(url) = redact_url_password(arg) {
        return Some(url);
    }
    if let Some((name, value)) = arg.split_once('=')
        && !value.is_empty()
        && secret_name(name.trim_start_matches('-'))
    {
        return Some(format!("{name}={REDACTED}"));
    }
    // An HTTP header given as an argument (`--header "Authorization: Bearer …"`): the name
    // says it is a secret, or the value is an auth scheme's credentials.
    if let Some((name, value)) = arg.split_once(':')
        && !value.trim().is_empty()
        && !name.contains(char::is_whitespace)
        && (secret_name(name) || auth_scheme(value.trim()))
    {
        return Some(format!("{name}: {REDACTED}"));
    }
    if auth_scheme(arg) {
        return Some(REDACTED.to_string());
    }
    looks_like_token(arg).then(|| REDACTED.to_string())
}

/// `Bearer …`, `Basic …`, `Token …`: credentials whatever their length.
fn auth_scheme(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once(' ') else {
        return false;
    };
    ["bearer", "basic", "token", "digest"].contains(&scheme.to_ascii_lowercase().as_str())
        && !rest.trim().is_empty()
}

/// The arguments with each secret-looking one replaced by [`REDACTED`] (see the module docs),
/// and whether any was. A flag with a secret-looking name (`--api-key`, `-token`) redacts the
/// argument after it when that is not itself a flag.
pub fn redact_args(args: &[String]) -> (Vec<String>, bool) {
    let mut out = Vec::with_capacity(args.len());
    let mut redacted = false;
    let mut value_is_secret = false;
    for arg in args {
        if value_is_secret && !arg.starts_with('-') {
            out.push(REDACTED.to_string());
            redacted = true;
            value_is_secret = false;
            continue;
        }
        value_is_secret = false;
        if let Some(r) = redact_one(arg) {
            out.push(r);
            redacted = true;
            continue;
        }
        if arg.starts_with('-') && !arg.contains('=') && secret_name(arg.trim_start_matches('-')) {
            value_is_secret = true;
        }
        out.push(arg.clone());
    }
    (out, redacted)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn redact(args: &[&str]) -> (Vec<String>, bool) {
        redact_args(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn credentials_in_headers_are_redacted() {
        let (out, any) = redact(&[
            "--header",
            "Authorization: Bearer shorttok99",
            "-H",
            "X-Api-Key: abc",
            "Bearer short",
            "Accept: text/html",
            "https://example.com:8080/path",
        ]);
        assert!(any);
        assert_eq!(
            out,
            [
                "--header",
                "Authorization: <redacted>",
                "-H",
                "X-Api-Key: <redacted>",
                "<redacted>",
                "Accept: text/html",
                "https://example.com:8080/path",
            ]
        );
    }

    #[test]
    fn secrets_in_arguments_are_redacted_and_the_rest_kept() {
        let (out, any) = redact(&[
            "-y",
            "@agentclientprotocol/claude-agent-acp",
            "--api-key",
            "abc123",
            "--token=t0ps3cret",
            "OPENAI_API_KEY=sk-live-0123456789",
            "--model",
            "opus",
            "https://me:hunter2@proxy.example/v1",
            "ghp_0123456789abcdefghij",
            "dGhpcyBpcyBhIHNlY3JldCB0b2tlbg==",
            "--verbose",
            "/home/u/projects/acp/node_modules/.bin/agent",
        ]);
        assert!(any);
        assert_eq!(
            out,
            [
                "-y",
                "@agentclientprotocol/claude-agent-acp",
                "--api-key",
                REDACTED,
                "--token=<redacted>",
                "OPENAI_API_KEY=<redacted>",
                "--model",
                "opus",
                "https://me:<redacted>@proxy.example/v1",
                REDACTED,
                REDACTED,
                "--verbose",
                "/home/u/projects/acp/node_modules/.bin/agent",
            ]
        );
        let joined = out.join(" ");
        for secret in ["abc123", "t0ps3cret", "sk-live", "hunter2", "ghp_0123"] {
            assert!(!joined.contains(secret), "{secret} kept in {joined}");
        }
    }

    #[test]
    fn ordinary_command_lines_are_kept_whole() {
        for args in [
            &["--acp"][..],
            &["acp"],
            &["-y", "@agentclientprotocol/codex-acp"],
            &[
                "agent-client-protocol-schema-1.20.0",
                "123e4567-e89b-12d3-a456-426614174000",
            ],
            &[
                "node",
                "tests/ts-agent/agent.mjs",
                "--scenario-dir",
                "/tmp/x",
            ],
            // A flag with a secret-looking name followed by another flag has no value.
            &["--no-auth", "--json"],
        ] {
            let (out, any) = redact(args);
            assert!(!any, "{args:?} -> {out:?}");
            assert_eq!(out, args);
        }
    }

    #[test]
    fn a_launch_keeps_environment_names_never_values() {
        let spec = LaunchSpec {
            name: "mine".into(),
            command: "/opt/agent".into(),
            args: vec!["--acp".into()],
            env: vec![("ANTHROPIC_API_KEY".into(), "sk-ant-very-secret".into())],
            cwd: None,
        };
        let l = StoredLaunch::from_spec(&spec, LaunchOrigin::Named);
        assert_eq!(l.env_names, ["ANTHROPIC_API_KEY"]);
        let json = serde_json::to_string(&l).unwrap();
        assert!(!json.contains("sk-ant"), "{json}");
        assert!(l.relaunchable_from_args());
    }
}
