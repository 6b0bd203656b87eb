//! The user's settings file, read-only.
//!
//! One JSON file, [`crate::paths::settings_file`], written by the user (by hand or by their
//! editor), shared by the CLI and the app. It is Zed-style JSON: comments (`//`, `/* */`) and
//! trailing commas are accepted, because Zed's own settings files have them and a user who
//! annotates the file must not be told it is broken. Nothing looser than that is accepted
//! (no missing commas, bare keys or single quotes): those are typos, and guessing what they
//! meant would hide them. Keys we do not know are ignored, so a file shared with Zed or with a
//! newer ACP Desk still loads.
//!
//! **This module never writes the file**, and has no function that could: the file is the
//! user's, comments and layout included, and a program rewriting it would lose them. What the
//! app itself remembers (window state, choices made in the window) goes to its own state file
//! in the data folder (`acp-desk-app`'s `state` module), never here.
//!
//! Reading is blocking file IO: async callers run [`load`] on the blocking pool.
//!
//! # Adding a setting
//!
//! New settings are fields of [`Settings`], each with a default (`#[serde(default)]`, or a
//! `default = "..."` function when the default is not the type's own), so that a file without
//! the key, and a missing file, mean the default. Document each field with its JSON key, its
//! default and who reads it.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Everything ACP Desk reads from the settings file. `Settings::default()` is what a missing
/// file means.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// `agent_servers` (Zed's shape): agents the user added, by the name `--agent` takes. An
    /// entry overrides the built-in agent of the same name. Default: none.
    pub agent_servers: BTreeMap<String, AgentServer>,
    /// `restored_sessions_start`: when the agents of the sessions the window restores at its
    /// start (the sidebar as it was) are started. Read by the desktop shell. Default
    /// `"on_return"`.
    pub restored_sessions_start: RestoredStart,
}

/// When a restored session's agent starts. A value not listed here makes the file malformed
/// (named with its line), like any other typo: guessing would hide it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RestoredStart {
    /// When the user returns to the session (shows it, or types in it): the transcript is
    /// shown from the history at once, and no agent runs for a session nobody looks at.
    #[default]
    OnReturn,
    /// Every restored session's agent starts with the window.
    AtOnce,
}

/// Zed-style settings entry: `{"agent_servers": {"Name": {"command", "args", "env"}}}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AgentServer {
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// The settings file could not be used. Both variants read "could not read the settings file
/// PATH: REASON", the message front ends have always shown.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The file exists but could not be read (permissions, a folder in its place, ...).
    #[error("could not read the settings file {}: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    /// The file is not valid JSON (with comments) or does not have the settings' shape.
    #[error("could not read the settings file {}: {reason}", path.display())]
    Malformed { path: PathBuf, reason: String },
}

impl SettingsError {
    /// The settings file concerned.
    pub fn path(&self) -> &Path {
        match self {
            SettingsError::Read { path, .. } | SettingsError::Malformed { path, .. } => path,
        }
    }

    /// Why, without the file's name (for messages that name the file themselves).
    pub fn reason(&self) -> String {
        match self {
            SettingsError::Read { source, .. } => source.to_string(),
            SettingsError::Malformed { reason, .. } => reason.clone(),
        }
    }
}

/// Reads [`crate::paths::settings_file`]. Blocking.
pub fn load() -> Result<Settings, SettingsError> {
    load_from(&crate::paths::settings_file())
}

/// Reads the settings file at `path`: a missing file is [`Settings::default`]. Blocking.
pub fn load_from(path: &Path) -> Result<Settings, SettingsError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text).map_err(|reason| SettingsError::Malformed {
            path: path.to_owned(),
            reason,
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Settings::default()),
        Err(source) => Err(SettingsError::Read {
            path: path.to_owned(),
            source,
        }),
    }
}

/// Zed's dialect: JSON plus comments and trailing commas (see the module docs).
fn parse_options() -> jsonc_parser::ParseOptions {
    jsonc_parser::ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// The reason is the parser's message, with the line and column.
fn parse(text: &str) -> Result<Settings, String> {
    // A file holding nothing but comments or whitespace (everything commented out) is the
    // defaults, as a missing file is; so is a top-level `null`.
    jsonc_parser::parse_to_serde_value::<Option<Settings>>(text, &parse_options())
        .map(Option::unwrap_or_default)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn write(dir: &tempfile::TempDir, text: &str) -> PathBuf {
        let file = dir.path().join("settings.json");
        std::fs::write(&file, text).unwrap();
        file
    }

    #[test]
    fn comments_and_trailing_commas_are_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(
            &dir,
            r#"// Zed-style settings
            {
                /* my agents */
                "agent_servers": {
                    "mine": {
                        "command": "/bin/my-agent", // the wrapper
                        "args": ["--acp",],
                        "env": {"A": "1",},
                    },
                },
            }
            "#,
        );
        let before = std::fs::read(&file).unwrap();
        let s = load_from(&file).unwrap();
        // Read, never rewritten: the user's comments stay.
        assert_eq!(std::fs::read(&file).unwrap(), before);
        let mine = &s.agent_servers["mine"];
        assert_eq!(mine.command, "/bin/my-agent");
        assert_eq!(mine.args, vec!["--acp"]);
        assert_eq!(mine.env["A"], "1");
    }

    #[test]
    fn unknown_keys_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(
            &dir,
            r#"{"theme": "One Dark", "agent_servers": {"a": {"command": "x", "future": 1}},
                "vim_mode": true}"#,
        );
        let s = load_from(&file).unwrap();
        assert_eq!(s.agent_servers["a"].command, "x");
    }

    #[test]
    fn restored_sessions_start_on_return_unless_the_file_says_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let none = write(&dir, r#"{"agent_servers": {}}"#);
        assert_eq!(
            load_from(&none).unwrap().restored_sessions_start,
            RestoredStart::OnReturn
        );
        let at_once = write(&dir, r#"{"restored_sessions_start": "at_once"}"#);
        assert_eq!(
            load_from(&at_once).unwrap().restored_sessions_start,
            RestoredStart::AtOnce
        );
        let typo = write(&dir, r#"{"restored_sessions_start": "at-once"}"#);
        let e = load_from(&typo).unwrap_err();
        assert!(e.to_string().contains("at-once"), "{e}");
    }

    #[test]
    fn a_missing_or_commented_out_file_is_the_defaults() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            load_from(&dir.path().join("missing.json")).unwrap(),
            Settings::default()
        );
        for text in ["", "  \n", "// {\"agent_servers\": {}}\n", "{}", "null"] {
            let file = write(&dir, text);
            assert_eq!(load_from(&file).unwrap(), Settings::default(), "{text:?}");
        }
    }

    #[test]
    fn a_malformed_file_names_the_file_and_the_place() {
        let dir = tempfile::tempdir().unwrap();
        for text in [
            "{nope",
            // Looser than Zed's dialect: typos, not accepted.
            r#"{"agent_servers": {"a": {"command": "x"} "b": {"command": "y"}}}"#,
            r#"{agent_servers: {}}"#,
            r#"{"agent_servers": {"a": {"command": 'x'}}}"#,
            // Valid JSON, wrong shape.
            r#"{"agent_servers": {"a": {"args": []}}}"#,
            r#""agents""#,
            "5",
        ] {
            let file = write(&dir, text);
            let err = load_from(&file).unwrap_err();
            assert!(matches!(err, SettingsError::Malformed { .. }), "{text}");
            assert_eq!(err.path(), file);
            let msg = err.to_string();
            assert!(
                msg.starts_with(&format!(
                    "could not read the settings file {}: ",
                    file.display()
                )),
                "{msg}"
            );
            assert!(msg.ends_with(&err.reason()), "{msg}");
        }
        let file = write(&dir, "{\n  \"agent_servers\": {\n    \"a\": 1\n  }\n}");
        let reason = load_from(&file).unwrap_err().reason();
        assert!(reason.contains("line 3"), "{reason}");
    }

    #[test]
    fn an_unreadable_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        // A folder where the file should be: unreadable even for root.
        let file = dir.path().join("settings.json");
        std::fs::create_dir(&file).unwrap();
        let err = load_from(&file).unwrap_err();
        assert!(matches!(err, SettingsError::Read { .. }), "{err}");
        assert!(err.to_string().contains("settings.json"));
    }
}
