//! Gemini CLI 0.61.0's API-key sign-in, against its real wire shapes: the replay agent
//! (`tests/fake-agents/gemini-replay.mjs`) answers `initialize` with the bytes the real package
//! sent and refuses `session/new` with its real -32000 until `authenticate {methodId:
//! "gemini-api-key", _meta: {"api-key": KEY}}` arrived in that process (tests/fixtures/README.md).
//! The key is stored once with `acp-desk-cli auth gemini --method gemini-api-key` (stdin), then
//! sent on a first and on a second `run`, each a new process; it never shows in the CLI's
//! output, logs (trace), history or audit log, nor in the settings.
//!
//! These need the Secret Service of `tests/keychain/run.sh` (never the user's own keyring):
//! `scripts/test` runs them as `tests/keychain/run.sh cargo nextest run -p acp-desk-tests --test
//! gemini_auth --ignore-default-filter`. The plain workspace run leaves them out
//! (`.config/nextest.toml`'s default filter); run any other way, each fails saying how to run it.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

mod real_secret_service {
    use std::path::{Path, PathBuf};
    use std::process::{Command, Output, Stdio};

    use acp_desk_core::secrets::{Keychain, OsKeychain};
    use serde_json::Value;

    use super::common::{bin, repo_root};

    fn harness() {
        assert_eq!(
            std::env::var("ACP_DESK_KEYCHAIN_HARNESS").as_deref(),
            Ok("1"),
            "the Gemini sign-in tests need the throwaway Secret Service: run them as \
             `tests/keychain/run.sh cargo nextest run -p acp-desk-tests --test gemini_auth --ignore-default-filter`"
        );
    }

    struct World {
        dir: tempfile::TempDir,
    }

    impl World {
        /// Settings naming the replay agent `gemini`, its received messages logged.
        fn new() -> World {
            let dir = tempfile::tempdir().unwrap();
            let w = World { dir };
            std::fs::create_dir_all(w.config()).unwrap();
            let settings = serde_json::json!({
                "agent_servers": {
                    "gemini": {
                        "command": "node",
                        "args": [repo_root().join("tests/fake-agents/gemini-replay.mjs")],
                        "env": {"GEMINI_REPLAY_LOG": w.received_file()},
                    }
                }
            });
            std::fs::write(w.config().join("settings.json"), settings.to_string()).unwrap();
            std::fs::create_dir_all(w.project()).unwrap();
            w
        }

        fn config(&self) -> PathBuf {
            self.dir.path().join("config")
        }
        fn data(&self) -> PathBuf {
            self.dir.path().join("data")
        }
        fn project(&self) -> PathBuf {
            self.dir.path().join("project")
        }
        fn received_file(&self) -> PathBuf {
            self.dir.path().join("agent-received.jsonl")
        }

        fn cli(&self, args: &[&str], stdin: Option<&[u8]>) -> Output {
            let mut cmd = Command::new(bin("acp-desk-cli"));
            cmd.args(args)
                .current_dir(self.project())
                .env("ACP_DESK_CONFIG_DIR", self.config())
                .env("ACP_DESK_DATA_DIR", self.data())
                .env("ACP_DESK_LOG", "trace")
                .stdin(if stdin.is_some() {
                    Stdio::piped()
                } else {
                    Stdio::null()
                })
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = cmd.spawn().unwrap();
            if let Some(input) = stdin {
                super::common::feed_stdin(&mut child, input);
            }
            child.wait_with_output().unwrap()
        }

        /// What each agent process received, by pid, in the order the processes started.
        fn received(&self) -> Vec<Vec<Value>> {
            let text = std::fs::read_to_string(self.received_file()).unwrap_or_default();
            let mut by_pid: Vec<(u64, Vec<Value>)> = Vec::new();
            for line in text.lines() {
                let v: Value = serde_json::from_str(line).unwrap();
                let pid = v["pid"].as_u64().unwrap();
                let msg = v["received"].clone();
                match by_pid.iter_mut().find(|(p, _)| *p == pid) {
                    Some((_, msgs)) => msgs.push(msg),
                    None => by_pid.push((pid, vec![msg])),
                }
            }
            by_pid.into_iter().map(|(_, m)| m).collect()
        }
    }

    fn text(out: &Output) -> String {
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }

    /// Every file under `dir` (history, audit logs, settings, state): none holds `needle`.
    fn nowhere_under(dir: &Path, needle: &str) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries {
            let path = e.unwrap().path();
            if path.is_dir() {
                nowhere_under(&path, needle);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                let hit = bytes.windows(needle.len()).any(|w| w == needle.as_bytes());
                assert!(!hit, "the key is in {}", path.display());
            }
        }
    }

    fn methods(msgs: &[Value]) -> Vec<&str> {
        msgs.iter()
            .filter_map(|m| m["method"].as_str())
            .collect::<Vec<_>>()
    }

    /// The one process's `authenticate` carried the key, and came before `session/new`.
    fn authenticated_before_new(msgs: &[Value], key: &str) {
        let names = methods(msgs);
        let auth = names
            .iter()
            .position(|m| *m == "authenticate")
            .unwrap_or_else(|| panic!("no authenticate sent: {names:?}"));
        let new = names
            .iter()
            .position(|m| *m == "session/new")
            .unwrap_or_else(|| panic!("no session/new: {names:?}"));
        assert!(auth < new, "authenticate after session/new: {names:?}");
        let sent = msgs.iter().find(|m| m["method"] == "authenticate").unwrap();
        assert_eq!(sent["params"]["methodId"], "gemini-api-key");
        assert_eq!(sent["params"]["_meta"]["api-key"], key);
    }

    #[test]
    fn the_key_stored_once_is_sent_on_a_first_and_a_second_start_and_shown_nowhere() {
        harness();
        let world = World::new();
        let key = "AIzaSy-replay-test-KEY-5be1c0";

        // Not signed in: Gemini's own refusal, and the command that signs in named.
        let before = world.cli(&["run", "--agent", "gemini", "hello"], None);
        assert_eq!(before.status.code(), Some(1), "{}", text(&before));
        let said = text(&before);
        assert!(
            said.contains("Gemini API key is missing or not configured."),
            "{said}"
        );
        assert!(
            said.contains("acp-desk-cli auth gemini --method gemini-api-key"),
            "{said}"
        );
        // Four methods: `auth` without --method lists them and does nothing.
        let list = world.cli(&["auth", "gemini"], None);
        assert_eq!(list.status.code(), Some(2), "{}", text(&list));
        for id in ["oauth-personal", "gemini-api-key", "vertex-ai", "gateway"] {
            assert!(
                text(&list).contains(&format!("acp-desk-cli auth gemini --method {id}")),
                "{}",
                text(&list)
            );
        }

        let stored = world.cli(
            &["auth", "gemini", "--method", "gemini-api-key"],
            Some(format!("{key}\n").as_bytes()),
        );
        assert_eq!(stored.status.code(), Some(0), "{}", text(&stored));
        assert!(!text(&stored).contains(key), "{}", text(&stored));
        assert!(
            text(&stored).contains("agent-auth/gemini/gemini-api-key"),
            "{}",
            text(&stored)
        );
        // In the keychain, where the engine reads it.
        let name = acp_desk_core::auth::api_key_ref("gemini", "gemini-api-key").unwrap();
        assert_eq!(OsKeychain::new().get(&name).unwrap().unwrap().expose(), key);
        let checked_by = world.received().len();

        // Two runs, two agent processes: each gets the key before session/new.
        for turn in ["first", "second"] {
            let run = world.cli(
                &[
                    "run",
                    "--agent",
                    "gemini",
                    "--json",
                    &format!("{turn} prompt"),
                ],
                None,
            );
            let said = text(&run);
            assert_eq!(run.status.code(), Some(0), "{said}");
            assert!(
                !said.contains(key),
                "the key is in the CLI's output: {said}"
            );
            assert!(
                said.contains("replayed Gemini: signed in with an API key"),
                "{said}"
            );
        }
        let processes = world.received();
        assert_eq!(
            processes.len(),
            checked_by + 2,
            "one agent process per run: {processes:?}"
        );
        for msgs in &processes[checked_by..] {
            authenticated_before_new(msgs, key);
        }
        // The first process (the refused run) got no authenticate: nothing was stored then.
        assert!(!methods(&processes[0]).contains(&"authenticate"));

        nowhere_under(&world.data(), key);
        nowhere_under(&world.config(), key);
        let history = world.cli(&["history", "list", "--json"], None);
        assert!(!text(&history).contains(key));
    }

    /// The demo agent's API-key method with a key it refuses: `auth` stores it, the check start
    /// is refused, and the message says how to replace it, never the key.
    #[test]
    fn a_refused_key_is_reported_with_how_to_replace_it() {
        harness();
        let world = World::new();
        let demo = format!("'{}'", bin("acp-desk-demo-agent").display());
        let wrong = "demo-WRONG-key-77aa";
        let mut cmd = Command::new(bin("acp-desk-cli"));
        cmd.args(["auth", "--agent-command", &demo, "--method", "demo-api-key"])
            .current_dir(world.project())
            .env("ACP_DESK_CONFIG_DIR", world.config())
            .env("ACP_DESK_DATA_DIR", world.data())
            .env("ACP_DESK_LOG", "trace")
            .env("ACP_DESK_DEMO_AUTH", "api-key")
            .env("ACP_DESK_DEMO_API_KEY", "demo-RIGHT-key")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        super::common::feed_stdin(&mut child, format!("{wrong}\n").as_bytes());
        let out = child.wait_with_output().unwrap();
        let said = text(&out);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(!said.contains(wrong), "the key is in the output: {said}");
        assert!(said.contains("did not start with it"), "{said}");
        assert!(
            said.contains("acp-desk-cli secret delete agent-auth/"),
            "{said}"
        );
        nowhere_under(&world.data(), wrong);
    }
}
