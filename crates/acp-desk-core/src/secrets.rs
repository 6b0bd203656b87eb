//! Secrets in the OS keychain (issue 17): MCP servers' `credentialRef`s and env values written
//! as `{"secret": REF}` in the settings. A secret is stored under its REF (a name the user
//! chooses, like `github-mcp`) and read at launch; it never lands in settings, logs, the audit
//! log, history, StreamEvents or the UI.
//!
//! Rules kept here:
//! - [`SecretValue`] has no `Serialize`, and its `Debug`/`Display` print `<hidden>`: a value
//!   that ends up in a log line or an event by mistake says so instead of leaking.
//! - Every [`Keychain`] call is blocking (D-Bus, the macOS keychain): callers run it on the
//!   blocking pool, never on the window's thread or a session's owner.
//! - [`MemoryKeychain`] is for tests; the front ends use [`OsKeychain`].

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;

/// The name a secret is stored under: 1 to [`SecretRef::MAX_LEN`] characters of ASCII letters,
/// digits and `. _ - / : @`. Names only: a ref is shown, logged and stored freely.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct SecretRef(String);

impl SecretRef {
    pub const MAX_LEN: usize = 128;

    /// Checks `name`; the error says what is wrong, for the settings problem or the CLI.
    pub fn new(name: &str) -> Result<SecretRef, SecretError> {
        let bad = |why: &str| {
            Err(SecretError::InvalidRef {
                name: name.chars().take(Self::MAX_LEN).collect(),
                why: why.into(),
            })
        };
        if name.is_empty() {
            return bad("a secret's name cannot be empty");
        }
        if name.chars().count() > Self::MAX_LEN {
            return bad("a secret's name is at most 128 characters");
        }
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/:@".contains(c))
        {
            return bad("use letters, digits and . _ - / : @ only (like `github-mcp`)");
        }
        Ok(SecretRef(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SecretRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretRef({})", self.0)
    }
}

impl fmt::Display for SecretRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A secret's value. Not `Serialize`; `Debug` and `Display` print `<hidden>`. The one way to
/// the text is [`SecretValue::expose`], called where the value goes into the request or the
/// environment that needs it.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(String);

impl SecretValue {
    pub fn new(value: String) -> SecretValue {
        SecretValue(value)
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<hidden>")
    }
}

impl fmt::Display for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<hidden>")
    }
}

/// An env value in the settings: the text itself, or `{"secret": REF}`, read from the keychain
/// at launch.
#[derive(Clone, PartialEq, Eq)]
pub enum EnvValue {
    Plain(String),
    Secret(SecretRef),
}

impl fmt::Debug for EnvValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EnvValue::Plain(_) => f.write_str("<hidden>"),
            EnvValue::Secret(r) => write!(f, "{{secret: {r}}}"),
        }
    }
}

/// Why a keychain call failed. Messages say what happened and what to do; they never hold a
/// value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("`{name}` is not a valid secret name: {why}")]
    InvalidRef { name: String, why: String },
    /// No keychain service answers (Linux: nothing owns `org.freedesktop.secrets` on the
    /// session bus).
    #[error(
        "no keychain service is running ({detail}). On Linux, start a Secret Service (GNOME Keyring, KeePassXC with Secret Service on, or KWallet) and try again"
    )]
    NoService { detail: String },
    /// The keychain is locked and the user did not unlock it.
    #[error("the keychain is locked ({detail}): unlock it (log in again, or open your keyring app) and try again")]
    Locked { detail: String },
    /// Anything else the keychain said.
    #[error("the keychain refused: {detail}")]
    Backend { detail: String },
}

/// Where secrets live. Blocking; implementations are `Send + Sync` and shared as
/// `Arc<dyn Keychain>`.
pub trait Keychain: Send + Sync + 'static {
    /// The secret stored under `name`, `None` when there is none.
    fn get(&self, name: &SecretRef) -> Result<Option<SecretValue>, SecretError>;
    /// Stores (or replaces) the secret under `name`.
    fn set(&self, name: &SecretRef, value: &SecretValue) -> Result<(), SecretError>;
    /// Removes it; `false` when there was none.
    fn delete(&self, name: &SecretRef) -> Result<bool, SecretError>;
    /// Every name stored by ACP Desk, sorted. Names only.
    fn list(&self) -> Result<Vec<SecretRef>, SecretError>;
}

/// A keychain in memory, for tests.
#[derive(Default)]
pub struct MemoryKeychain {
    items: Mutex<BTreeMap<SecretRef, SecretValue>>,
}

impl MemoryKeychain {
    pub fn new() -> MemoryKeychain {
        MemoryKeychain::default()
    }

    fn items(&self) -> std::sync::MutexGuard<'_, BTreeMap<SecretRef, SecretValue>> {
        // A test that panicked while holding it leaves plain data behind: keep using it.
        self.items
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Keychain for MemoryKeychain {
    fn get(&self, name: &SecretRef) -> Result<Option<SecretValue>, SecretError> {
        Ok(self.items().get(name).cloned())
    }

    fn set(&self, name: &SecretRef, value: &SecretValue) -> Result<(), SecretError> {
        self.items().insert(name.clone(), value.clone());
        Ok(())
    }

    fn delete(&self, name: &SecretRef) -> Result<bool, SecretError> {
        Ok(self.items().remove(name).is_some())
    }

    fn list(&self) -> Result<Vec<SecretRef>, SecretError> {
        Ok(self.items().keys().cloned().collect())
    }
}

/// The headers a `credentialRef`'s secret stands for: a JSON object of strings is a set of
/// headers; anything else is a bare token, `Authorization: Bearer <token>` (surrounding
/// whitespace trimmed). Brokered headers win over static ones of the same name (compared
/// case-insensitively), as the seed says; the caller merges.
pub fn credential_headers(secret: &SecretValue) -> Vec<(String, SecretValue)> {
    let text = secret.expose().trim();
    if text.starts_with('{')
        && let Ok(serde_json::Value::Object(map)) = serde_json::from_str(text)
        && map.values().all(serde_json::Value::is_string)
    {
        return map
            .into_iter()
            .filter_map(|(k, v)| match v {
                serde_json::Value::String(s) => Some((k, SecretValue::new(s))),
                _ => None,
            })
            .collect();
    }
    vec![(
        "Authorization".to_owned(),
        SecretValue::new(format!("Bearer {text}")),
    )]
}

/// The keychain of the OS: Secret Service on Linux, the login keychain on macOS, the
/// Credential Manager on Windows. Secrets are stored under the service
/// [`OsKeychain::SERVICE`] with the ref as the user name.
pub struct OsKeychain {
    _private: (),
}

impl OsKeychain {
    pub const SERVICE: &'static str = crate::paths::APP_IDENTIFIER;

    pub fn new() -> OsKeychain {
        OsKeychain { _private: () }
    }
}

impl Default for OsKeychain {
    fn default() -> Self {
        OsKeychain::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_are_checked() {
        assert!(SecretRef::new("github-mcp").is_ok());
        assert!(SecretRef::new("team/api:key@prod").is_ok());
        assert!(SecretRef::new("").is_err());
        assert!(SecretRef::new("has space").is_err());
        assert!(SecretRef::new(&"x".repeat(129)).is_err());
    }

    #[test]
    fn values_never_print() {
        let v = SecretValue::new("s3cret".into());
        assert_eq!(format!("{v:?} {v}"), "<hidden> <hidden>");
        let e = EnvValue::Plain("s3cret".into());
        assert!(!format!("{e:?}").contains("s3cret"));
    }

    #[test]
    fn a_bare_token_is_a_bearer_header_and_an_object_is_headers() {
        let h = credential_headers(&SecretValue::new(" tok \n".into()));
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].0, "Authorization");
        assert_eq!(h[0].1.expose(), "Bearer tok");
        let h = credential_headers(&SecretValue::new(r#"{"X-Api-Key": "k", "X-Org": "o"}"#.into()));
        let names: Vec<_> = h.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["X-Api-Key", "X-Org"]);
        // Not an object of strings: the whole text is a token.
        let h = credential_headers(&SecretValue::new(r#"{"n": 1}"#.into()));
        assert_eq!(h[0].1.expose(), r#"Bearer {"n": 1}"#);
    }

    #[test]
    fn the_memory_keychain_round_trips() {
        let k = MemoryKeychain::new();
        let r = SecretRef::new("a").unwrap();
        assert_eq!(k.get(&r).unwrap(), None);
        k.set(&r, &SecretValue::new("v".into())).unwrap();
        assert_eq!(k.get(&r).unwrap().unwrap().expose(), "v");
        assert_eq!(k.list().unwrap(), vec![r.clone()]);
        assert!(k.delete(&r).unwrap());
        assert!(!k.delete(&r).unwrap());
    }
}
