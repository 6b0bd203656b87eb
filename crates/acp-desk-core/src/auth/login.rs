//! A terminal login made ready to run: the [`LoginSpec`]'s secret env values read from the
//! keychain, for the spawn only (the text is in [`ResolvedLogin`]'s env and nowhere else; its
//! `Debug` shows names).

use std::path::{Path, PathBuf};

use super::LoginSpec;
use crate::secrets::{EnvValue, Keychain, SecretError, SecretRef};
use crate::terminal::interactive::{InteractiveCommand, TermSize};

/// A login with every env value as text. `Debug` shows env names only.
#[derive(Clone)]
pub struct ResolvedLogin {
    pub command: String,
    pub args: Vec<String>,
    /// Over the user's environment, in order; secrets read from the keychain.
    pub env: Vec<(String, String)>,
    /// The launch's folder, when it names one.
    pub cwd: Option<PathBuf>,
    pub label: String,
}

impl std::fmt::Debug for ResolvedLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolvedLogin")
            .field("command", &self.command)
            .field("args", &self.args.len())
            .field(
                "env",
                &crate::agents::EnvNames(self.env.iter().map(|(k, _)| k.as_str())),
            )
            .field("cwd", &self.cwd)
            .field("label", &self.label)
            .finish()
    }
}

impl ResolvedLogin {
    /// What [`crate::terminal::interactive::Interactive::start`] runs: in the launch's folder,
    /// else `folder` (the session's, or the user's home for an agent signed in from the
    /// Agents view), at `size`.
    pub fn into_command(self, folder: &Path, size: TermSize) -> InteractiveCommand {
        InteractiveCommand {
            program: self.command,
            args: self.args,
            env: self.env,
            cwd: self.cwd.unwrap_or_else(|| folder.to_path_buf()),
            size,
        }
    }
}

/// Why a login could not be made ready. Never holds a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoginError {
    #[error(
        "the login needs the secret `{name}` (its env {var}), which is not in the keychain: store it with `acp-desk-cli secret set {name}` or in the window's Secrets, then sign in again"
    )]
    SecretMissing { name: SecretRef, var: String },
    #[error("the login needs the secret `{name}` (its env {var}), which could not be read: {why}")]
    SecretUnreadable {
        name: SecretRef,
        var: String,
        why: SecretError,
    },
}

impl LoginError {
    /// The keychain itself failed (no service, locked, refused), rather than a secret missing.
    pub fn is_keychain(&self) -> bool {
        matches!(self, LoginError::SecretUnreadable { .. })
    }
}

/// `spec` with its env's secrets read from `keychain` (blocking: call it on the blocking pool).
/// `None`: no keychain, which is fine as long as the env holds no secret.
pub fn resolve_login(
    spec: &LoginSpec,
    keychain: Option<&dyn Keychain>,
) -> Result<ResolvedLogin, LoginError> {
    let mut env = Vec::with_capacity(spec.env.len());
    for (var, value) in &spec.env {
        let text = match value {
            EnvValue::Plain(text) => text.clone(),
            EnvValue::Secret(name) => {
                let got = match keychain {
                    Some(kc) => kc.get(name),
                    None => Err(SecretError::Backend {
                        detail: "this program was started without a keychain".into(),
                    }),
                };
                match got {
                    Ok(Some(v)) => v.expose().to_owned(),
                    Ok(None) => {
                        return Err(LoginError::SecretMissing {
                            name: name.clone(),
                            var: var.clone(),
                        });
                    }
                    Err(why) => {
                        return Err(LoginError::SecretUnreadable {
                            name: name.clone(),
                            var: var.clone(),
                            why,
                        });
                    }
                }
            }
        };
        env.push((var.clone(), text));
    }
    Ok(ResolvedLogin {
        command: spec.command.clone(),
        args: spec.args.clone(),
        env,
        cwd: spec.cwd.clone(),
        label: spec.label.clone(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::secrets::{MemoryKeychain, SecretValue};

    fn spec(env: Vec<(String, EnvValue)>) -> LoginSpec {
        LoginSpec {
            command: "agent".into(),
            args: vec!["--login".into()],
            env,
            cwd: None,
            differs_from_launch: false,
            label: "Log in".into(),
        }
    }

    #[test]
    fn secrets_are_read_for_the_spawn_and_never_shown() {
        let kc = MemoryKeychain::new();
        let name = SecretRef::new("agent-token").unwrap();
        kc.set(&name, &SecretValue::new("tok-123-secret".into()))
            .unwrap();
        let login = spec(vec![
            ("PLAIN".into(), EnvValue::Plain("p".into())),
            ("TOKEN".into(), EnvValue::Secret(name)),
        ]);
        let r = resolve_login(&login, Some(&kc)).unwrap();
        assert_eq!(
            r.env,
            [
                ("PLAIN".to_owned(), "p".to_owned()),
                ("TOKEN".to_owned(), "tok-123-secret".to_owned())
            ]
        );
        let shown = format!("{r:?}");
        assert!(
            shown.contains("TOKEN") && !shown.contains("tok-123"),
            "{shown}"
        );
        let cmd = r.into_command(Path::new("/tmp"), TermSize { cols: 80, rows: 24 });
        assert_eq!(cmd.cwd, Path::new("/tmp"));
        assert!(!format!("{cmd:?}").contains("tok-123"));
    }

    #[test]
    fn a_missing_secret_or_keychain_says_what_to_do() {
        let name = SecretRef::new("gone").unwrap();
        let login = spec(vec![("TOKEN".into(), EnvValue::Secret(name))]);
        let e = resolve_login(&login, Some(&MemoryKeychain::new())).unwrap_err();
        assert!(!e.is_keychain());
        assert!(
            e.to_string().contains("acp-desk-cli secret set gone"),
            "{e}"
        );
        let e = resolve_login(&login, None).unwrap_err();
        assert!(e.is_keychain());
        assert!(e.to_string().contains("without a keychain"), "{e}");
        // Nothing secret in the env: no keychain needed.
        let plain = spec(vec![("A".into(), EnvValue::Plain("1".into()))]);
        assert!(resolve_login(&plain, None).is_ok());
    }
}
