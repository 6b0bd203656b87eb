//! `ACP_DESK_DEMO_RECORD`: what the client sent to open a session, kept for tests that must
//! assert what reached the agent (MCP servers, env secrets) where it arrived rather than
//! what the client believes it sent.
//!
//! One JSON object per line, appended: `{"method": "session/new", "params": <as received>}`,
//! plus `"env": {"NAME": "value" | null}` when `ACP_DESK_DEMO_RECORD_ENV=NAME[,NAME...]` names
//! variables to copy from the agent's own environment (null: not set). The file is the
//! request side of a test: values in it are as secret as what the client passed.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;

use serde_json::{Map, Value, json};

pub const RECORD_VAR: &str = "ACP_DESK_DEMO_RECORD";
pub const RECORD_ENV_VAR: &str = "ACP_DESK_DEMO_RECORD_ENV";

#[derive(Debug, Clone, Default)]
pub struct Recorder {
    file: Option<PathBuf>,
    env_names: Vec<String>,
}

impl Recorder {
    pub fn from_env() -> Self {
        Self::new(
            std::env::var_os(RECORD_VAR)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            std::env::var(RECORD_ENV_VAR).ok().as_deref(),
        )
    }

    fn new(file: Option<PathBuf>, env_names: Option<&str>) -> Self {
        let env_names = env_names
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
            .collect();
        Recorder { file, env_names }
    }

    pub fn line(&self, method: &str, params: &Value) -> Value {
        let mut line = json!({ "method": method, "params": params });
        if !self.env_names.is_empty() {
            let env: Map<String, Value> = self
                .env_names
                .iter()
                .map(|name| {
                    let value = std::env::var(name).map_or(Value::Null, Value::String);
                    (name.clone(), value)
                })
                .collect();
            line["env"] = Value::Object(env);
        }
        line
    }

    /// Appends one line, written whole, so concurrent agents recording to one file keep
    /// lines intact. An error says which file and why; the caller fails the request with
    /// it, since a test reading a record that silently lacks a line would mislead.
    pub fn record(&self, method: &str, params: &Value) -> Result<(), String> {
        let Some(path) = &self.file else {
            return Ok(());
        };
        let mut text = self.line(method, params).to_string();
        text.push('\n');
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| {
                format!(
                    "{RECORD_VAR}: cannot append to {}: {e} (point it at a writable file, or unset it)",
                    path.display()
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_whole_lines_with_the_params_as_received() {
        let dir = std::env::temp_dir().join(format!("demo-record-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("record.jsonl");
        let _ = std::fs::remove_file(&file);
        let r = Recorder::new(
            Some(file.clone()),
            Some(" PATH , ACP_DESK_DEMO_NOT_SET_X ,"),
        );
        let params = json!({"cwd": "/p", "mcpServers": [{"name": "a", "extra": 1}]});
        r.record("session/new", &params).unwrap();
        r.record("session/load", &json!({"sessionId": "s"}))
            .unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["method"], "session/new");
        assert_eq!(lines[0]["params"], params);
        assert_eq!(lines[0]["env"]["PATH"], std::env::var("PATH").unwrap());
        assert!(lines[0]["env"]["ACP_DESK_DEMO_NOT_SET_X"].is_null());
        assert_eq!(lines[1]["method"], "session/load");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn without_a_file_nothing_is_written_and_an_unwritable_one_is_named() {
        assert!(
            Recorder::new(None, None)
                .record("session/new", &json!({}))
                .is_ok()
        );
        let bad = Recorder::new(Some(PathBuf::from("/nonexistent-dir-x/r.jsonl")), None);
        let e = bad.record("session/new", &json!({})).unwrap_err();
        assert!(
            e.contains("/nonexistent-dir-x/r.jsonl") && e.contains(RECORD_VAR),
            "{e}"
        );
        assert!(
            Recorder::new(None, None)
                .line("m", &json!(1))
                .get("env")
                .is_none()
        );
    }
}
