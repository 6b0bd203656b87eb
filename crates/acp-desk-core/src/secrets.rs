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
use std::sync::{Arc, Mutex};

/// The name a secret is stored under: 1 to [`SecretRef::MAX_LEN`] characters of ASCII letters,
/// digits and `. _ - / : @`. Names only: a ref is shown, logged and stored freely.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct SecretRef(String);

impl SecretRef {
    pub const MAX_LEN: usize = 128;

    /// Checks `name`; the error says what is wrong, for the settings problem or the CLI.
    pub fn new(name: &str) -> Result<SecretRef, SecretError> {
        let allowed = |c: char| c.is_ascii_alphanumeric() || "._-/:@".contains(c);
        let token = looks_like_token(name);
        // A rejected name is echoed only when it cannot be a pasted value: the error reaches
        // settings problems, the CLI and the window.
        let shown = if !token && name.len() <= 64 && name.chars().all(allowed) {
            format!("`{name}`")
        } else {
            "this name".to_owned()
        };
        let bad = |why: &str| {
            Err(SecretError::InvalidRef {
                name: shown.clone(),
                why: why.into(),
            })
        };
        if token {
            return bad(
                "this looks like a secret's value, not its name: choose a name (like `github-mcp`) and store the value under it with `acp-desk-cli secret set NAME`",
            );
        }
        if name.is_empty() {
            return bad("a secret's name cannot be empty");
        }
        if name.chars().count() > Self::MAX_LEN {
            return bad("a secret's name is at most 128 characters");
        }
        if !name.chars().all(allowed) {
            return bad("use letters, digits and . _ - / : @ only (like `github-mcp`)");
        }
        Ok(SecretRef(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Well-known token shapes (GitHub, OpenAI/Anthropic, Slack, GitLab, AWS, Google, Hugging
/// Face), or a long run of letters and digits without a separator: a value pasted where a name
/// goes.
fn looks_like_token(name: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "ghp_",
        "gho_",
        "ghs_",
        "ghu_",
        "ghr_",
        "github_pat_",
        "sk-",
        "xoxb-",
        "xoxp-",
        "xapp-",
        "glpat-",
        "AKIA",
        "AIza",
        "hf_",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
        || (name.len() >= 32 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
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
    /// `name` is the rejected name in backticks, or "this name" when it may be a pasted value.
    #[error("{name} is not a valid secret name: {why}")]
    InvalidRef { name: String, why: String },
    /// No keychain service answers (Linux: nothing owns `org.freedesktop.secrets` on the
    /// session bus).
    #[error(
        "no keychain service is running ({detail}). On Linux, start a Secret Service (GNOME Keyring, KeePassXC with Secret Service on, or KWallet) and try again"
    )]
    NoService { detail: String },
    /// The keychain is locked and the user did not unlock it.
    #[error(
        "the keychain is locked ({detail}): unlock it (log in again, or open your keyring app) and try again"
    )]
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

/// Where the settings and the manifests name each secret, said for a person:
/// `mcp_servers.github (credential_ref)`, `agent_servers.claude.env.ANTHROPIC_API_KEY`,
/// `manifest docs-agent: mcp_servers.docs (credentialRef)`. A name that is not a valid ref is
/// left out (reading the file reported it). Names only; no keychain call.
pub fn uses(
    settings: &crate::settings::Settings,
    manifests: &[crate::agents::manifest::Manifest],
) -> BTreeMap<SecretRef, Vec<String>> {
    let mut uses: BTreeMap<SecretRef, Vec<String>> = BTreeMap::new();
    let mut add = |name: &SecretRef, place: String| {
        uses.entry(name.clone()).or_default().push(place);
    };
    let env_uses = |env: &BTreeMap<String, EnvValue>| -> Vec<(SecretRef, String)> {
        env.iter()
            .filter_map(|(var, value)| match value {
                EnvValue::Secret(name) => Some((name.clone(), var.clone())),
                EnvValue::Plain(_) => None,
            })
            .collect()
    };
    for (agent, entry) in &settings.agent_servers {
        for (name, var) in env_uses(&entry.env) {
            add(&name, format!("agent_servers.{agent}.env.{var}"));
        }
    }
    for (server, entry) in &settings.mcp_servers {
        if let crate::mcp::McpConfigTransport::Stdio { env, .. } = &entry.transport {
            for (name, var) in env_uses(env) {
                add(&name, format!("mcp_servers.{server}.env.{var}"));
            }
        }
        if let Some(name) = &entry.credential_ref {
            let place = match entry.transport {
                crate::mcp::McpConfigTransport::Stdio { .. } => {
                    format!("mcp_servers.{server} (credential_ref, ignored on a stdio server)")
                }
                _ => format!("mcp_servers.{server} (credential_ref)"),
            };
            add(name, place);
        }
    }
    for manifest in manifests {
        for server in manifest
            .definition
            .metadata
            .aip44
            .mcp_servers
            .iter()
            .flatten()
        {
            if let Some(name) = server
                .credential_ref
                .as_deref()
                .and_then(|n| SecretRef::new(n).ok())
            {
                add(
                    &name,
                    format!(
                        "manifest {}: mcp_servers.{} (credentialRef)",
                        manifest.id(),
                        server.name
                    ),
                );
            }
        }
    }
    uses
}

/// [`uses`] for the user's own settings file and manifests (blocking file reads), with the
/// problems reading them gave.
pub fn uses_for_user() -> (
    BTreeMap<SecretRef, Vec<String>>,
    Vec<crate::agents::ConfigProblem>,
) {
    let loaded = crate::settings::load();
    let (manifests, mut problems) =
        crate::agents::manifest::load_dir(&crate::paths::config_dir().join("agents"));
    problems.splice(0..0, loaded.problems.iter().cloned());
    (uses(&loaded.settings, &manifests), problems)
}

/// The keychain of the OS: Secret Service on Linux, the login keychain on macOS, the
/// Credential Manager on Windows. Secrets are stored under the service
/// [`OsKeychain::SERVICE`] with the ref as the user name (Secret Service attributes
/// `service` and `username`, as `secret-tool` shows them).
///
/// The store is connected on the first call, not at construction, and a failed connection
/// is not kept: a keychain started (or unlocked, or restarted) after the app is found on the
/// next call. Any failure other than "no such item" drops the connection for the same reason.
pub struct OsKeychain {
    store: Mutex<Option<Arc<keyring_core::CredentialStore>>>,
}

impl OsKeychain {
    pub const SERVICE: &'static str = crate::paths::APP_IDENTIFIER;

    pub fn new() -> OsKeychain {
        OsKeychain {
            store: Mutex::new(None),
        }
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<Arc<keyring_core::CredentialStore>>> {
        self.store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn connected(&self) -> Result<Arc<keyring_core::CredentialStore>, SecretError> {
        let mut slot = self.slot();
        if let Some(store) = slot.as_ref() {
            return Ok(store.clone());
        }
        let store = os_store::create().map_err(|e| keychain_error(&e, None))?;
        *slot = Some(store.clone());
        Ok(store)
    }

    fn entry(&self, name: &SecretRef) -> Result<keyring_core::Entry, SecretError> {
        let store = self.connected()?;
        os_store::entry(&store, name).map_err(|e| self.failed(&e, Some(name)))
    }

    /// Maps `err` and forgets the connection, so the next call connects afresh.
    fn failed(&self, err: &keyring_core::Error, name: Option<&SecretRef>) -> SecretError {
        *self.slot() = None;
        keychain_error(err, name)
    }
}

impl Default for OsKeychain {
    fn default() -> Self {
        OsKeychain::new()
    }
}

impl Keychain for OsKeychain {
    fn get(&self, name: &SecretRef) -> Result<Option<SecretValue>, SecretError> {
        match self.entry(name)?.get_secret() {
            // The bytes of a non-UTF-8 secret are dropped here, never put in the error.
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => Ok(Some(SecretValue::new(text))),
                Err(_) => Err(not_text(name)),
            },
            Err(keyring_core::Error::NoEntry) => Ok(None),
            Err(e) => Err(self.failed(&e, Some(name))),
        }
    }

    fn set(&self, name: &SecretRef, value: &SecretValue) -> Result<(), SecretError> {
        self.entry(name)?
            .set_secret(value.expose().as_bytes())
            .map_err(|e| self.failed(&e, Some(name)))
    }

    fn delete(&self, name: &SecretRef) -> Result<bool, SecretError> {
        match self.entry(name)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring_core::Error::NoEntry) => Ok(false),
            Err(e) => Err(self.failed(&e, Some(name))),
        }
    }

    fn list(&self) -> Result<Vec<SecretRef>, SecretError> {
        let store = self.connected()?;
        let spec = std::collections::HashMap::from([("service", Self::SERVICE)]);
        let found = store.search(&spec).map_err(|e| self.failed(&e, None))?;
        let mut names = std::collections::BTreeSet::new();
        for entry in found {
            let user = match entry.get_attributes() {
                Ok(attributes) => attributes.get("username").cloned(),
                // Removed between the search and now.
                Err(keyring_core::Error::NoEntry) => continue,
                Err(e) => return Err(self.failed(&e, None)),
            };
            // Stores whose attributes are named otherwise (macOS, Windows) say it here.
            let Some(user) = user.or_else(|| entry.get_specifiers().map(|(_, user)| user)) else {
                continue;
            };
            match SecretRef::new(&user) {
                Ok(name) => {
                    names.insert(name);
                }
                // Put there by another tool under our service name: not ours to show.
                Err(_) => {
                    tracing::debug!(name = %user, "a keychain item under our service has a name we do not use; skipped")
                }
            }
        }
        Ok(names.into_iter().collect())
    }
}

fn not_text(name: &SecretRef) -> SecretError {
    SecretError::Backend {
        detail: format!(
            "the secret stored under `{name}` is not UTF-8 text; store it again with `acp-desk-cli secret set {name}` or in the window's Secrets"
        ),
    }
}

/// What a keychain error says, without any value: keyring-core's `BadEncoding` and
/// `BadDataFormat` carry the stored bytes and `Ambiguous` the items, so they are described,
/// never formatted.
fn keychain_error(err: &keyring_core::Error, name: Option<&SecretRef>) -> SecretError {
    use keyring_core::Error as K;
    let backend = |detail: String| SecretError::Backend { detail };
    let named = name
        .map(|n| format!("`{n}`"))
        .unwrap_or_else(|| "a secret".into());
    match err {
        K::PlatformFailure(inner) | K::NoStorageAccess(inner) => platform_error(inner.as_ref()),
        K::NoEntry => backend(format!("no secret is stored under {named}")),
        K::BadEncoding(_) => match name {
            Some(name) => not_text(name),
            None => backend("a stored secret is not UTF-8 text".into()),
        },
        K::BadDataFormat(_, _) => backend(format!(
            "the secret stored under {named} is malformed in the keychain; store it again"
        )),
        K::Ambiguous(items) => backend(format!(
            "{} keychain items are stored for {named} under the service {}; remove the extra ones in your keyring app (or all of them, then store it again)",
            items.len(),
            OsKeychain::SERVICE
        )),
        K::BadStoreFormat(why) => backend(format!("the keychain's data is malformed: {why}")),
        K::TooLong(what, limit) => backend(format!(
            "the keychain accepts at most {limit} characters in an item's {what}"
        )),
        K::Invalid(what, why) => backend(format!("the keychain refused the item's {what}: {why}")),
        K::NoDefaultStore => backend("no keychain store is set up".into()),
        K::NotSupportedByStore(why) => backend(format!("this keychain cannot do that: {why}")),
        // keyring-core is pinned; a new kind is named, not formatted (it may carry data).
        #[allow(unreachable_patterns)]
        _ => backend("the keychain failed in a way ACP Desk does not know".into()),
    }
}

fn platform_error(inner: &(dyn std::error::Error + Send + Sync + 'static)) -> SecretError {
    #[cfg(all(unix, not(target_os = "macos")))]
    if let Some(err) = inner.downcast_ref::<secret_service::Error>() {
        return secret_service_error(err);
    }
    SecretError::Backend {
        detail: inner.to_string(),
    }
}

#[cfg(all(unix, not(target_os = "macos")))]
fn secret_service_error(err: &secret_service::Error) -> SecretError {
    use secret_service::Error as S;
    const NO_OWNER: &str = "nothing owns org.freedesktop.secrets on the D-Bus session bus";
    let no_service = |detail: &str| SecretError::NoService {
        detail: detail.into(),
    };
    let unowned = |name: &str| {
        name == "org.freedesktop.DBus.Error.ServiceUnknown"
            || name == "org.freedesktop.DBus.Error.NameHasNoOwner"
    };
    let fdo_unowned = |e: &zbus::fdo::Error| {
        matches!(
            e,
            zbus::fdo::Error::ServiceUnknown(_) | zbus::fdo::Error::NameHasNoOwner(_)
        )
    };
    let locked = |detail: &str| SecretError::Locked {
        detail: detail.into(),
    };
    match err {
        S::Unavailable => {
            no_service("no D-Bus session bus, or nothing on it owns org.freedesktop.secrets")
        }
        S::Zbus(zbus::Error::MethodError(name, _, _)) if unowned(name.as_str()) => {
            no_service(NO_OWNER)
        }
        S::Zbus(zbus::Error::FDO(e)) if fdo_unowned(e) => no_service(NO_OWNER),
        S::ZbusFdo(e) if fdo_unowned(e) => no_service(NO_OWNER),
        S::Zbus(zbus::Error::InputOutput(e) | zbus::Error::Connection(e, _)) => {
            no_service(&format!("the D-Bus session bus cannot be reached: {e}"))
        }
        S::Zbus(zbus::Error::Address(_)) => no_service("the D-Bus session bus address is unusable"),
        S::Locked => locked("the collection is locked"),
        S::Prompt => locked("the unlock prompt was dismissed, or could not be shown"),
        // What gnome-keyring answers when there is no default collection to use and no
        // prompt could create one.
        S::NoResult => locked("it has no unlocked default keyring to keep secrets in"),
        S::PromptDisconnected => locked("the unlock prompt closed before it was answered"),
        other => SecretError::Backend {
            detail: other.to_string(),
        },
    }
}

/// The one store per platform (the workspace's Cargo.toml says why these).
mod os_store {
    use super::{OsKeychain, SecretRef};
    use keyring_core::{CredentialStore, Entry, Result};
    use std::sync::Arc;

    #[cfg(all(unix, not(target_os = "macos")))]
    pub(super) fn create() -> Result<Arc<CredentialStore>> {
        Ok(zbus_secret_service_keyring_store::Store::new()?)
    }

    #[cfg(target_os = "macos")]
    pub(super) fn create() -> Result<Arc<CredentialStore>> {
        Ok(apple_native_keyring_store::keychain::Store::new()?)
    }

    #[cfg(windows)]
    pub(super) fn create() -> Result<Arc<CredentialStore>> {
        Ok(windows_native_keyring_store::Store::new()?)
    }

    #[cfg(not(any(unix, windows)))]
    pub(super) fn create() -> Result<Arc<CredentialStore>> {
        Err(keyring_core::Error::NotSupportedByStore(
            "ACP Desk has no keychain store for this platform".into(),
        ))
    }

    /// The item for `name`. On Linux it gets a label for the keyring app ("ACP Desk:
    /// github-mcp") when it is created; the other stores take no label.
    pub(super) fn entry(store: &Arc<CredentialStore>, name: &SecretRef) -> Result<Entry> {
        #[cfg(all(unix, not(target_os = "macos")))]
        {
            let label = format!("ACP Desk: {name}");
            let modifiers = std::collections::HashMap::from([("label", label.as_str())]);
            Entry::new_in_store_with_modifiers(
                store,
                OsKeychain::SERVICE,
                name.as_str(),
                &modifiers,
            )
        }
        #[cfg(not(all(unix, not(target_os = "macos"))))]
        {
            Entry::new_in_store(store, OsKeychain::SERVICE, name.as_str())
        }
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
        // A value pasted as a name is refused and never echoed.
        for token in [
            "ghp_abcdefghijklmnop0123",
            "sk-ant-api03-xyz",
            &"a1".repeat(20),
        ] {
            let e = SecretRef::new(token).unwrap_err().to_string();
            assert!(e.contains("looks like a secret's value"), "{e}");
            assert!(!e.contains(token), "{e}");
        }
        let e = SecretRef::new("tok+en/with=base64")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("tok+en"), "{e}");
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
        let h = credential_headers(&SecretValue::new(
            r#"{"X-Api-Key": "k", "X-Org": "o"}"#.into(),
        ));
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

    /// Every error kind keyring-core and secret-service produce, built around a value, is
    /// described without it (the stored bytes ride in `BadEncoding` / `BadDataFormat`).
    #[test]
    fn os_keychain_errors_never_hold_the_value() {
        use keyring_core::Error as K;
        let value = "s3cret-value-\u{e9}";
        let bytes = value.as_bytes().to_vec();
        let name = SecretRef::new("github-mcp").unwrap();
        let boxed = |e: Box<dyn std::error::Error + Send + Sync>| e;
        let mut errors = vec![
            K::BadEncoding(bytes.clone()),
            K::BadDataFormat(bytes.clone(), boxed(value.into())),
            K::NoEntry,
            K::NoDefaultStore,
            K::BadStoreFormat("bad".into()),
            K::TooLong("username".into(), 64),
            K::Invalid("label".into(), "cannot be empty".into()),
            K::NotSupportedByStore("no search".into()),
            K::Ambiguous(Vec::new()),
            K::PlatformFailure(boxed("some platform failure".into())),
        ];
        #[cfg(all(unix, not(target_os = "macos")))]
        {
            use secret_service::Error as S;
            for e in [
                S::Unavailable,
                S::Locked,
                S::Prompt,
                S::PromptDisconnected,
                S::NoResult,
                S::Crypto("bad padding"),
                S::ZbusFdo(zbus::fdo::Error::ServiceUnknown("gone".into())),
                S::Zbus(zbus::Error::Address("disabled:".into())),
            ] {
                errors.push(K::PlatformFailure(boxed(Box::new(e))));
            }
        }
        for err in &errors {
            for name in [Some(&name), None] {
                let mapped = keychain_error(err, name);
                let shown = format!("{mapped} {mapped:?}");
                assert!(!shown.contains(value), "{err:?} became {shown}");
                assert!(!shown.contains("s3cret"), "{shown}");
            }
        }
        // `BadDataFormat`'s inner error may say anything: it is never formatted.
        assert!(matches!(
            keychain_error(&errors[1], Some(&name)),
            SecretError::Backend { .. }
        ));
    }

    #[cfg(all(unix, not(target_os = "macos")))]
    #[test]
    fn no_service_and_locked_are_told_apart() {
        use keyring_core::Error as K;
        use secret_service::Error as S;
        let wrap = |e: S| K::PlatformFailure(Box::new(e));
        let map = |e: S| keychain_error(&wrap(e), None);
        assert!(matches!(map(S::Unavailable), SecretError::NoService { .. }));
        assert!(matches!(
            map(S::ZbusFdo(zbus::fdo::Error::NameHasNoOwner("x".into()))),
            SecretError::NoService { .. }
        ));
        assert!(matches!(
            map(S::Zbus(zbus::Error::FDO(Box::new(
                zbus::fdo::Error::ServiceUnknown("x".into())
            )))),
            SecretError::NoService { .. }
        ));
        assert!(matches!(map(S::Locked), SecretError::Locked { .. }));
        assert!(matches!(map(S::Prompt), SecretError::Locked { .. }));
        assert!(matches!(
            keychain_error(&K::NoStorageAccess(Box::new(S::Locked)), None),
            SecretError::Locked { .. }
        ));
        assert!(matches!(map(S::NoResult), SecretError::Locked { .. }));
        assert!(matches!(
            map(S::Crypto("bad padding")),
            SecretError::Backend { .. }
        ));
        let message = map(S::Unavailable).to_string();
        assert!(message.contains("org.freedesktop.secrets"), "{message}");
        assert!(message.contains("start a Secret Service"), "{message}");
    }

    #[test]
    fn uses_name_every_place_a_ref_is_used_and_no_value() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        std::fs::write(
            &file,
            r#"{
              "agent_servers": {"claude": {"command": "claude-code-acp",
                 "env": {"ANTHROPIC_API_KEY": {"secret": "anthropic-key"}, "PLAIN": "plain-value"}}},
              "mcp_servers": {
                "github": {"url": "https://mcp.example.invalid/", "credential_ref": "github-mcp"},
                "files": {"command": "files-mcp", "env": {"TOKEN": {"secret": "github-mcp"}}}
              }
            }"#,
        )
        .unwrap();
        let loaded = crate::settings::load_from(&file);
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        let manifest_file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/manifests/good-server/ACP.md");
        let text = std::fs::read_to_string(&manifest_file).unwrap();
        let manifest = crate::agents::manifest::parse(&manifest_file, &text).unwrap();
        let uses = uses(&loaded.settings, &[manifest]);
        let shown: Vec<(&str, Vec<&str>)> = uses
            .iter()
            .map(|(k, v)| (k.as_str(), v.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(
            shown,
            [
                (
                    "anthropic-key",
                    vec!["agent_servers.claude.env.ANTHROPIC_API_KEY"]
                ),
                (
                    "github-mcp",
                    // The file's order.
                    vec![
                        "mcp_servers.github (credential_ref)",
                        "mcp_servers.files.env.TOKEN"
                    ]
                ),
                (
                    "vault/docs",
                    vec!["manifest good-server: mcp_servers.docs (credentialRef)"]
                ),
            ]
        );
        assert!(!format!("{uses:?}").contains("plain-value"));
    }
}
