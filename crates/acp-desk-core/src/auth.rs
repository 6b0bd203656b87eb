//! Signing in to an agent: its `authMethods` (the `initialize` answer) as actions a front end
//! offers, classified once here, in the issue's order:
//!
//! 1. `type: "terminal"` ([`AuthHow::Terminal`]): the agent's own launch run again with the
//!    method's `args` appended and its `env` laid over the launch's, in an interactive terminal.
//!    Only exit status 0 is success. Never passed to `authenticate`; a `_meta["terminal-auth"]`
//!    it also carries is ignored.
//! 2. An untyped method carrying `_meta["terminal-auth"]` ([`AuthHow::TerminalCommand`],
//!    claude-code-acp's `claude-login`, whose `authenticate` is not implemented): the command it
//!    names, run after the user agrees when it differs from the launch. Exit status 0 is success.
//! 3. An untyped method whose `_meta` asks for an API key ([`AuthHow::ApiKey`], Gemini CLI's
//!    `gemini-api-key`: `_meta: {"api-key": {"provider": "google"}}`): the key is asked once,
//!    kept in the keychain under [`api_key_ref`], and sent as
//!    `authenticate {methodId, _meta: {"api-key": KEY}}` on every start of that agent, before
//!    `session/new`, `load` or `resume` (Gemini keeps it only in its process's memory).
//! 4. Any other method ([`AuthHow::Agent`]): `authenticate {methodId}` when the user picks it.
//!
//! What ACP Desk advertises for it ([`crate::session::advertised_client_capabilities`]):
//! `clientCapabilities.auth.terminal` and the older `_meta["terminal-auth"]`, both, since agents
//! check one or the other (notes/field-2026-12.md).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use agent_client_protocol_schema::v1 as acp;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agents::LaunchSpec;
use crate::secrets::{EnvValue, SecretError, SecretRef};

mod login;
pub use login::{LoginError, ResolvedLogin, resolve_login};

/// The `_meta` key of a terminal login (claude-code-acp) and of the client's older capability.
pub const TERMINAL_AUTH_META: &str = "terminal-auth";
/// The `_meta` key that marks an API-key method (Gemini CLI), and carries the key in
/// `authenticate`.
pub const API_KEY_META: &str = "api-key";

/// How long the agent may take to answer the `authenticate` the user chose
/// (`SessionOptions::authenticate`): it may open a browser and wait for the user there. It
/// replaces the start's budget (`SessionOptions::start_timeout`) while it runs; the budget
/// starts afresh when the agent answers.
pub const AUTHENTICATE_TIMEOUT: Duration = Duration::from_secs(300);

/// How long reading the stored API keys from the keychain may take at a start (an unlock
/// prompt nobody answers, a hung bus): after it the agent starts without them, with a notice.
pub const KEY_READ_TIMEOUT: Duration = Duration::from_secs(20);

/// One way to sign in to the agent, as offered to the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthAction {
    /// The agent's `methodId`.
    pub method_id: String,
    /// The agent's name for it ("Log in with Claude Code").
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub how: AuthHow,
}

/// How an [`AuthAction`] is carried out. The env maps are what the agent sent (never a secret
/// of the user's: those stay in the launch's env, read at spawn time).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "via", rename_all = "kebab-case")]
pub enum AuthHow {
    /// `type: "terminal"`: the launch, with `args` appended and `env` over the launch's.
    Terminal {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        args: Vec<String>,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        env: BTreeMap<String, String>,
    },
    /// `_meta["terminal-auth"]` on an untyped method: a command of the agent's choosing.
    #[serde(rename_all = "camelCase")]
    TerminalCommand {
        command: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        args: Vec<String>,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        env: BTreeMap<String, String>,
        /// The agent's label for it ("Claude Code Login").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label: Option<String>,
    },
    /// `authenticate` with an API key from the keychain (`_meta["api-key"]`).
    ApiKey {
        /// `_meta["api-key"].provider` ("google"), when the agent named one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
    },
    /// `authenticate {methodId}`: the agent does the rest (it may open a browser).
    Agent,
}

impl AuthHow {
    /// For people, in a list of actions: "a login in a terminal", "an API key", "the agent
    /// signs you in".
    pub fn describe(&self) -> &'static str {
        match self {
            AuthHow::Terminal { .. } | AuthHow::TerminalCommand { .. } => "a login in a terminal",
            AuthHow::ApiKey { .. } => "an API key",
            AuthHow::Agent => "the agent signs you in",
        }
    }

    /// Whether it runs in a terminal (never through `authenticate`).
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            AuthHow::Terminal { .. } | AuthHow::TerminalCommand { .. }
        )
    }
}

/// The agent's `authMethods`, classified (the module docs), in the agent's order.
pub fn classify(methods: &[acp::AuthMethod]) -> Vec<AuthAction> {
    methods.iter().map(classify_one).collect()
}

fn classify_one(method: &acp::AuthMethod) -> AuthAction {
    let how = match method {
        acp::AuthMethod::Terminal(t) => AuthHow::Terminal {
            args: t.args.clone(),
            env: t.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        },
        // `AuthMethod` is non-exhaustive: anything else is the agent's to handle.
        _ => classify_meta(method.meta()),
    };
    AuthAction {
        method_id: method.id().0.to_string(),
        name: method.name().to_owned(),
        description: method.description().map(str::to_owned),
        how,
    }
}

fn classify_meta(meta: Option<&acp::Meta>) -> AuthHow {
    let Some(meta) = meta else {
        return AuthHow::Agent;
    };
    if let Some(t) = meta.get(TERMINAL_AUTH_META).and_then(Value::as_object)
        && let Some(command) = t.get("command").and_then(Value::as_str)
        && !command.trim().is_empty()
    {
        let strings = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        let env = t
            .get("env")
            .and_then(Value::as_object)
            .map(|o| {
                o.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        return AuthHow::TerminalCommand {
            command: command.to_owned(),
            args: strings(t.get("args")),
            env,
            label: t.get("label").and_then(Value::as_str).map(str::to_owned),
        };
    }
    if let Some(key) = meta.get(API_KEY_META) {
        let provider = key
            .get("provider")
            .and_then(Value::as_str)
            .map(str::to_owned);
        return AuthHow::ApiKey { provider };
    }
    AuthHow::Agent
}

/// The keychain name of the API key for `agent`'s method `method_id`:
/// `agent-auth/<agent>/<method>`, each part reduced to the characters a [`SecretRef`] allows
/// (others become `_`), so a command-line agent's name works too.
pub fn api_key_ref(agent: &str, method_id: &str) -> Result<SecretRef, SecretError> {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-:@".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    SecretRef::new(&format!("agent-auth/{}/{}", clean(agent), clean(method_id)))
}

/// What runs for a terminal login ([`AuthHow::Terminal`], [`AuthHow::TerminalCommand`]): the
/// program, its args, the env over the user's (the launch's, secrets still as refs, then the
/// method's), and the folder. `differs_from_launch`: the program or its leading args are not
/// the agent's own launch, so the user is asked first.
#[derive(Clone)]
pub struct LoginSpec {
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, EnvValue)>,
    pub cwd: Option<PathBuf>,
    pub differs_from_launch: bool,
    /// For people: "Claude Code Login", else the method's name.
    pub label: String,
}

impl std::fmt::Debug for LoginSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginSpec")
            .field("command", &self.command)
            .field("args", &self.args)
            .field(
                "env",
                &crate::agents::EnvNames(self.env.iter().map(|(k, _)| k.as_str())),
            )
            .field("cwd", &self.cwd)
            .field("differs_from_launch", &self.differs_from_launch)
            .field("label", &self.label)
            .finish()
    }
}

/// The terminal login of `action` for the agent started by `launch`; `None` for a method that
/// goes through `authenticate`.
pub fn login_spec(action: &AuthAction, launch: &LaunchSpec) -> Option<LoginSpec> {
    let overlay = |env: &BTreeMap<String, String>| -> Vec<(String, EnvValue)> {
        let mut out: Vec<(String, EnvValue)> = launch
            .env
            .iter()
            .filter(|(k, _)| !env.contains_key(k))
            .cloned()
            .collect();
        out.extend(
            env.iter()
                .map(|(k, v)| (k.clone(), EnvValue::Plain(v.clone()))),
        );
        out
    };
    match &action.how {
        AuthHow::Terminal { args, env } => Some(LoginSpec {
            command: launch.command.clone(),
            args: launch.args.iter().chain(args).cloned().collect(),
            env: overlay(env),
            cwd: launch.cwd.clone(),
            differs_from_launch: false,
            label: action.name.clone(),
        }),
        AuthHow::TerminalCommand {
            command,
            args,
            env,
            label,
        } => {
            let same = *command == launch.command && args.starts_with(&launch.args);
            Some(LoginSpec {
                command: command.clone(),
                args: args.clone(),
                env: overlay(env),
                cwd: launch.cwd.clone(),
                differs_from_launch: !same,
                label: label.clone().unwrap_or_else(|| action.name.clone()),
            })
        }
        AuthHow::ApiKey { .. } | AuthHow::Agent => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn methods(json: &str) -> Vec<acp::AuthMethod> {
        serde_json::from_str(json).expect("auth methods")
    }

    #[test]
    fn classifies_in_the_issues_order() {
        // claude-code-acp 0.16.2 (with our `_meta["terminal-auth"]`), Gemini CLI's API key, a
        // typed terminal method that also carries terminal-auth meta, a plain agent method.
        let got = classify(&methods(
            r#"[
              {"id":"claude-login","name":"Log in with Claude Code","description":"Run `claude /login` in the terminal",
               "_meta":{"terminal-auth":{"command":"node","args":["/x/cli.js"],"label":"Claude Code Login"}}},
              {"id":"gemini-api-key","name":"Use Gemini API key","_meta":{"api-key":{"provider":"google"}}},
              {"id":"tui","name":"Terminal","type":"terminal","args":["--login"],"env":{"A":"1"},
               "_meta":{"terminal-auth":{"command":"other"}}},
              {"id":"oauth","name":"Sign in with Google"}
            ]"#,
        ));
        let hows: Vec<&AuthHow> = got.iter().map(|a| &a.how).collect();
        assert!(
            matches!(hows[0], AuthHow::TerminalCommand { command, args, label, .. }
            if command == "node" && args == &["/x/cli.js"] && label.as_deref() == Some("Claude Code Login"))
        );
        assert_eq!(
            hows[1],
            &AuthHow::ApiKey {
                provider: Some("google".into())
            }
        );
        assert!(matches!(hows[2], AuthHow::Terminal { args, env }
            if args == &["--login"] && env.get("A").map(String::as_str) == Some("1")));
        assert_eq!(hows[3], &AuthHow::Agent);
        assert_eq!(got[0].method_id, "claude-login");
        assert!(hows[0].is_terminal() && hows[2].is_terminal() && !hows[1].is_terminal());
    }

    #[test]
    fn login_specs_and_whether_they_differ_from_the_launch() {
        let launch = LaunchSpec {
            name: "x".into(),
            command: "node".into(),
            args: vec!["/a/index.js".into()],
            env: vec![
                ("A".into(), EnvValue::Plain("launch".into())),
                (
                    "K".into(),
                    EnvValue::Secret(SecretRef::new("k").expect("ref")),
                ),
            ],
            cwd: None,
        };
        let got = classify(&methods(
            r#"[{"id":"t","name":"T","type":"terminal","args":["--login"],"env":{"A":"method"}},
                {"id":"c","name":"C","_meta":{"terminal-auth":{"command":"node","args":["/a/cli.js"]}}},
                {"id":"k","name":"K","_meta":{"api-key":{}}}]"#,
        ));
        let t = login_spec(&got[0], &launch).expect("terminal");
        assert_eq!(t.args, ["/a/index.js", "--login"]);
        assert!(!t.differs_from_launch);
        let a = t.env.iter().find(|(k, _)| k == "A").map(|(_, v)| v.clone());
        assert_eq!(a, Some(EnvValue::Plain("method".into())));
        assert!(
            t.env
                .iter()
                .any(|(k, v)| k == "K" && matches!(v, EnvValue::Secret(_)))
        );
        let c = login_spec(&got[1], &launch).expect("command");
        assert!(c.differs_from_launch);
        assert_eq!(c.label, "C");
        assert!(login_spec(&got[2], &launch).is_none());
    }

    #[test]
    fn api_key_refs_are_valid_for_any_agent_name() {
        let r = api_key_ref("gemini", "gemini-api-key").expect("ref");
        assert_eq!(r.as_str(), "agent-auth/gemini/gemini-api-key");
        let r = api_key_ref("npx @google/gemini-cli --acp", "k").expect("ref");
        assert_eq!(r.as_str(), "agent-auth/npx_@google_gemini-cli_--acp/k");
    }
}
