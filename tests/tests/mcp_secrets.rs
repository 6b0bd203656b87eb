//! "The secret appears nowhere but in the request that needs it" (issue 17), across processes
//! with a real Secret Service (`tests/keychain/run.sh`): random secrets stored with
//! `acp-desk-cli secret set`, a session whose http MCP server has a `credential_ref` to one,
//! whose stdio MCP server and agent env have `{"secret": ...}` values; then every file the runs
//! wrote (config, data: the history database with its WAL, audit logs, logs, state; the
//! project; the throwaway HOME), also read while a session is live (so the history's WAL is
//! among them), and every captured stdout/stderr is searched for each secret,
//! raw, base64 (at every alignment) and JSON-escaped. The only place allowed is the agent's
//! record of what it received: the request side.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::hash::{BuildHasher, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use base64::Engine;
use common::*;
use serde_json::{Value, json};

/// A value nobody else has, with the characters JSON escapes (`"` and `\`), so its escaped
/// form differs from the raw one and both are searched.
fn random_secret(label: &str) -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos(),
    );
    h.write_u32(std::process::id());
    h.write(label.as_bytes());
    format!("{label}-{:016x}-q\"b\\s", h.finish())
}

/// Every form in which `secret` would betray itself in a file: raw, JSON-escaped, and the
/// base64 cores of it at each of the three alignments it can have inside a longer encoded
/// string (the characters that depend on neighbours dropped).
fn forms(secret: &str) -> Vec<(String, Vec<u8>)> {
    let mut out = vec![("raw".to_owned(), secret.as_bytes().to_vec())];
    let escaped = serde_json::to_string(secret).unwrap();
    out.push((
        "json-escaped".to_owned(),
        escaped.as_bytes()[1..escaped.len() - 1].to_vec(),
    ));
    for engine in [
        base64::engine::general_purpose::STANDARD,
        base64::engine::general_purpose::URL_SAFE,
    ] {
        for pad in 0..3usize {
            let mut bytes = vec![b'x'; pad];
            bytes.extend_from_slice(secret.as_bytes());
            let encoded = engine.encode(&bytes);
            // Characters touched by the padding prefix or the unknown tail are dropped.
            let start = (pad * 4).div_ceil(3);
            let end = encoded.len().saturating_sub(4);
            if end > start + 8 {
                out.push((
                    format!("base64 (offset {pad})"),
                    encoded.as_bytes()[start..end].to_vec(),
                ));
            }
        }
    }
    out
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => files_under(&p, out),
            Ok(t) if t.is_file() => out.push(p),
            _ => {}
        }
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

struct Rig {
    dir: tempfile::TempDir,
    /// Everything the CLI runs printed, by run.
    captured: Vec<(String, Vec<u8>)>,
}

impl Rig {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn cli(&mut self, label: &str, args: &[&str], stdin: Option<&str>) -> (Option<i32>, String) {
        let mut child = Command::new(bin("acp-desk-cli"))
            .args(args)
            .current_dir(self.path("project"))
            .env("ACP_DESK_CONFIG_DIR", self.path("config"))
            .env("ACP_DESK_DATA_DIR", self.path("data"))
            // As much logging as there is: a secret must not be in any of it.
            .env("ACP_DESK_LOG", "trace")
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if let Some(text) = stdin {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        let out = child.wait_with_output().unwrap();
        self.captured
            .push((format!("{label} stdout"), out.stdout.clone()));
        self.captured
            .push((format!("{label} stderr"), out.stderr.clone()));
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), stderr)
    }
}

impl Rig {
    /// Runs `args` (a turn that streams for a while) and, once the history's write-ahead log
    /// holds rows, reads every file under the rig while the session is live (SQLite folds the
    /// WAL into the database and deletes it when the last connection closes), then stops the
    /// run with Ctrl-C. Returns the snapshot, labelled by path.
    #[cfg(unix)]
    fn snapshot_mid_run(&mut self, label: &str, args: &[&str]) -> Vec<(String, Vec<u8>)> {
        let child = Command::new(bin("acp-desk-cli"))
            .args(args)
            .current_dir(self.path("project"))
            .env("ACP_DESK_CONFIG_DIR", self.path("config"))
            .env("ACP_DESK_DATA_DIR", self.path("data"))
            .env("ACP_DESK_LOG", "trace")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + HANG;
        let wal = loop {
            let mut files = Vec::new();
            files_under(&self.path("data"), &mut files);
            let wal = files.into_iter().find(|f| {
                f.to_string_lossy().ends_with("-wal")
                    && std::fs::metadata(f).is_ok_and(|m| m.len() > 0)
            });
            if let Some(wal) = wal {
                break wal;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{label}: no history WAL appeared"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        // The first turn (a permission, audited) ends at once; the second streams for 30 s.
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let mut files = Vec::new();
        files_under(self.dir.path(), &mut files);
        let snapshot: Vec<(String, Vec<u8>)> = files
            .iter()
            .filter(|f| **f != self.path("agent-record.jsonl"))
            .map(|f| {
                (
                    format!("{} (while {label} ran)", f.display()),
                    std::fs::read(f).unwrap_or_default(),
                )
            })
            .collect();
        assert!(
            snapshot
                .iter()
                .any(|(p, b)| p.starts_with(&wal.display().to_string()) && !b.is_empty()),
            "{label}: the WAL was read"
        );
        // SAFETY: signalling our own child.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGINT);
        }
        let out = child.wait_with_output().unwrap();
        self.captured.push((format!("{label} stdout"), out.stdout));
        self.captured.push((format!("{label} stderr"), out.stderr));
        snapshot
    }
}

/// Named like keychain.rs's module: `cargo test -- --skip real_secret_service::` and nextest's
/// default filter leave it out of the plain run; scripts/test runs it inside the harness.
mod real_secret_service {
    use super::*;

    #[test]
    fn secrets_appear_only_in_the_request_that_needs_them() {
        assert_eq!(
            std::env::var("ACP_DESK_KEYCHAIN_HARNESS").as_deref(),
            Ok("1"),
            "run this inside the harness, which gives it a throwaway Secret Service (never the user's own keyring): \
         tests/keychain/run.sh cargo nextest run -p acp-desk-tests --test mcp_secrets --ignore-default-filter"
        );
        let mut rig = Rig {
            dir: tempfile::tempdir().unwrap(),
            captured: Vec::new(),
        };
        std::fs::create_dir_all(rig.path("project")).unwrap();
        std::fs::create_dir_all(rig.path("config")).unwrap();
        let header_secret = random_secret("http-token");
        let stdio_secret = random_secret("stdio-env");
        let agent_secret = random_secret("agent-env");
        for (name, value) in [
            ("mcp-web-token", &header_secret),
            ("mcp-files-key", &stdio_secret),
            ("agent-key", &agent_secret),
        ] {
            let (code, stderr) = rig.cli(
                &format!("secret set {name}"),
                &["secret", "set", name],
                Some(value),
            );
            assert_eq!(code, Some(0), "secret set {name}: {stderr}");
        }

        let record = rig.path("agent-record.jsonl");
        let settings = json!({
            "agent_servers": {"rec": {
                "command": bin("acp-desk-demo-agent"),
                "args": ["--session-methods", "load,resume", "--session-dir", rig.path("data").join("demo-sessions")],
                "env": {
                    "ACP_DESK_DEMO_RECORD": record,
                    "ACP_DESK_DEMO_RECORD_ENV": "AGENT_KEY",
                    "AGENT_KEY": {"secret": "agent-key"},
                },
            }},
            "mcp_servers": {
                "web": {"url": "http://127.0.0.1:9/mcp", "credential_ref": "mcp-web-token"},
                "files": {
                    "command": bin("acp-desk-demo-agent"),
                    "env": {"FILES_KEY": {"secret": "mcp-files-key"}},
                },
            },
        });
        std::fs::write(
            rig.path("config").join("settings.json"),
            serde_json::to_vec_pretty(&settings).unwrap(),
        )
        .unwrap();

        // A turn with a permission (audited), its continuation (resume), a load, the listings.
        let runs: [(&str, Vec<&str>); 3] = [
            (
                "run",
                vec![
                    "run",
                    "--agent",
                    "rec",
                    "--permission",
                    "allow",
                    "--json",
                    "permission",
                ],
            ),
            ("history list", vec!["history", "list", "--json"]),
            ("secret list", vec!["secret", "list", "--json"]),
        ];
        for (label, args) in &runs {
            let (code, stderr) = rig.cli(label, args, None);
            assert_eq!(code, Some(0), "{label}: {stderr}");
        }
        let list = String::from_utf8(rig.captured[rig.captured.len() - 4].1.clone()).unwrap();
        let id = serde_json::from_str::<Value>(list.lines().next().unwrap()).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        for (label, via) in [("continue (resume)", "auto"), ("continue (load)", "load")] {
            let (code, stderr) = rig.cli(
                label,
                &[
                    "run",
                    "--continue",
                    &id,
                    "--continue-via",
                    via,
                    "--permission",
                    "allow",
                    "--json",
                    "permission",
                ],
                None,
            );
            assert_eq!(code, Some(0), "{label}: {stderr}");
        }
        let (code, stderr) = rig.cli("history show", &["history", "show", &id, "--json"], None);
        assert_eq!(code, Some(0), "history show: {stderr}");
        #[cfg(unix)]
        let live = rig.snapshot_mid_run(
            "a live session",
            &[
                "run",
                "--agent",
                "rec",
                "--permission",
                "allow",
                "--json",
                "permission",
                "slow",
            ],
        );
        #[cfg(not(unix))]
        let live: Vec<(String, Vec<u8>)> = Vec::new();

        // Where it must be: each request carried its secret, where it arrived.
        let received: Vec<Value> = std::fs::read_to_string(&record)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let methods: Vec<&str> = received
            .iter()
            .map(|l| l["method"].as_str().unwrap())
            .collect();
        assert_eq!(
            methods,
            [
                "session/new",
                "session/resume",
                "session/load",
                "session/new"
            ]
        );
        for line in &received {
            assert_eq!(line["env"]["AGENT_KEY"], agent_secret.as_str(), "{line}");
            let servers = line["params"]["mcpServers"].as_array().unwrap();
            let web = servers.iter().find(|s| s["name"] == "web").unwrap();
            assert_eq!(
                web["headers"],
                json!([{"name": "Authorization", "value": format!("Bearer {header_secret}")}]),
                "a bare token becomes a Bearer header"
            );
            let files = servers.iter().find(|s| s["name"] == "files").unwrap();
            assert_eq!(
                files["env"],
                json!([{"name": "FILES_KEY", "value": stdio_secret}])
            );
        }

        // Where it must not be: anywhere else.
        let mut files = Vec::new();
        files_under(rig.dir.path(), &mut files);
        let history = files.iter().any(|f| {
            let n = f.to_string_lossy();
            n.ends_with(".sqlite") || n.ends_with(".db") || n.ends_with(".sqlite3")
        });
        assert!(history, "the history database was written: {files:?}");
        let mut searched: Vec<(String, Vec<u8>)> = rig.captured.clone();
        searched.extend(live);
        let mut home_files = Vec::new();
        if let Some(home) =
            std::env::var_os("ACP_DESK_KEYCHAIN_TMP").or_else(|| std::env::var_os("HOME"))
        {
            // The harness's throwaway HOME and XDG folders, except the keyring's own store (its
            // job is to hold them, encrypted).
            files_under(Path::new(&home), &mut home_files);
            home_files.retain(|f| !f.components().any(|c| c.as_os_str() == "keyrings"));
        }
        for f in files.iter().chain(&home_files) {
            if *f == record {
                continue;
            }
            searched.push((
                f.display().to_string(),
                std::fs::read(f).unwrap_or_default(),
            ));
        }
        let mut leaks = Vec::new();
        for secret in [&header_secret, &stdio_secret, &agent_secret] {
            for (form, needle) in forms(secret) {
                for (place, bytes) in &searched {
                    if contains(bytes, &needle) {
                        leaks.push(format!("{secret:?} ({form}) in {place}"));
                    }
                }
            }
        }
        assert!(
            leaks.is_empty(),
            "secrets found outside the request ({} places searched, a live WAL among them):\n{}",
            searched.len(),
            leaks.join("\n")
        );
        // The search itself works: the record holds every form it must.
        let record_bytes = std::fs::read(&record).unwrap();
        for secret in [&header_secret, &stdio_secret, &agent_secret] {
            let (_, escaped) = &forms(secret)[1];
            assert!(
                contains(&record_bytes, escaped),
                "the search would find {secret:?} JSON-escaped"
            );
        }
    }

    /// Secrets named but not stored, with the real keychain: a missing MCP credential skips
    /// that server and the session goes on; a missing agent env secret stops the start before
    /// the agent runs, saying how to store it.
    #[test]
    fn missing_secrets_skip_the_server_or_stop_the_start_saying_how_to_store_them() {
        assert_eq!(
            std::env::var("ACP_DESK_KEYCHAIN_HARNESS").as_deref(),
            Ok("1"),
            "run this inside tests/keychain/run.sh"
        );
        let mut rig = Rig {
            dir: tempfile::tempdir().unwrap(),
            captured: Vec::new(),
        };
        std::fs::create_dir_all(rig.path("project")).unwrap();
        std::fs::create_dir_all(rig.path("config")).unwrap();
        let record = rig.path("agent-record.jsonl");
        let settings = |agent_env: Value| {
            json!({
                "agent_servers": {"rec": {
                    "command": bin("acp-desk-demo-agent"),
                    "env": agent_env,
                }},
                "mcp_servers": {
                    "web": {"url": "http://127.0.0.1:9/mcp", "credential_ref": "never-stored-web"},
                    "files": {"command": bin("acp-desk-demo-agent")},
                },
            })
        };
        let settings_file = rig.path("config").join("settings.json");
        let write = |v: Value| {
            std::fs::write(&settings_file, serde_json::to_vec_pretty(&v).unwrap()).unwrap()
        };
        write(settings(json!({"ACP_DESK_DEMO_RECORD": record})));
        let (code, stderr) = rig.cli(
            "missing credential",
            &["run", "--agent", "rec", "--json", "hello"],
            None,
        );
        assert_eq!(code, Some(0), "the session goes on: {stderr}");
        let stdout = String::from_utf8(rig.captured[0].1.clone()).unwrap();
        let report = stdout
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|e| e["kind"] == "mcp-servers")
            .expect("an mcp-servers event");
        let web = report["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "web")
            .unwrap();
        assert_eq!(web["passed"], false);
        let reason = web["reason"].as_str().unwrap();
        assert!(
            reason.contains("never-stored-web") && reason.contains("secret set"),
            "the reason names the secret and how to store it: {reason}"
        );
        let line: Value = serde_json::from_str(
            std::fs::read_to_string(&record)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        let names: Vec<&str> = line["params"]["mcpServers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["files"], "what reached the agent");

        std::fs::remove_file(&record).unwrap();
        write(settings(json!({
            "ACP_DESK_DEMO_RECORD": record,
            "AGENT_KEY": {"secret": "never-stored-agent-key"},
        })));
        let (code, stderr) = rig.cli(
            "missing agent secret",
            &["run", "--agent", "rec", "--json", "hello"],
            None,
        );
        assert_ne!(code, Some(0), "the start fails: {stderr}");
        assert!(
            stderr.contains("never-stored-agent-key") && stderr.contains("acp-desk-cli secret set"),
            "the message names the secret and how to store it: {stderr}"
        );
        assert!(!record.exists(), "the agent never ran");
    }
}
