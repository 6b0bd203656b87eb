//! The OS keychain for real: `acp-desk-cli secret` and `OsKeychain` against gnome-keyring's
//! Secret Service, across processes, cross-checked with `secret-tool` (libsecret, another
//! client of the same service).
//!
//! These need the Secret Service of `tests/keychain/run.sh` (never the user's own keyring):
//! `scripts/test` runs them as `tests/keychain/run.sh cargo nextest run -p acp-desk-tests --test
//! keychain --ignore-default-filter`. The plain workspace run leaves them out
//! (`.config/nextest.toml`'s default filter); run any other way, each fails saying how to run it.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

mod real_secret_service {
    use std::io::Write;
    use std::path::PathBuf;
    use std::process::{Command, Output, Stdio};

    use acp_desk_core::secrets::{Keychain, OsKeychain, SecretError, SecretRef, SecretValue};
    use serde_json::Value;

    use super::common::{bin, repo_root};

    /// Refuses to run outside the harness, loudly: these tests write to the keychain.
    fn harness() {
        assert_eq!(
            std::env::var("ACP_DESK_KEYCHAIN_HARNESS").as_deref(),
            Ok("1"),
            "the keychain tests need the throwaway Secret Service: run them as \
             `tests/keychain/run.sh cargo nextest run -p acp-desk-tests --test keychain --ignore-default-filter`"
        );
    }

    /// A config folder of its own: a settings file and a manifest that name secrets.
    struct World {
        dir: tempfile::TempDir,
    }

    impl World {
        fn new() -> World {
            World {
                dir: tempfile::tempdir().unwrap(),
            }
        }

        fn config(&self) -> PathBuf {
            self.dir.path().join("config")
        }

        fn with_settings(self, json: &str) -> World {
            std::fs::create_dir_all(self.config()).unwrap();
            std::fs::write(self.config().join("settings.json"), json).unwrap();
            self
        }

        fn with_manifest(self) -> World {
            let from =
                repo_root().join("crates/acp-desk-core/tests/fixtures/manifests/good-server");
            let to = self.config().join("agents/good-server");
            std::fs::create_dir_all(&to).unwrap();
            for f in std::fs::read_dir(&from).unwrap() {
                let f = f.unwrap();
                std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
            }
            self
        }

        fn cli(&self, args: &[&str], stdin: Option<&[u8]>) -> Run {
            self.cli_env(args, stdin, &[])
        }

        fn cli_env(&self, args: &[&str], stdin: Option<&[u8]>, env: &[(&str, &str)]) -> Run {
            let mut cmd = Command::new(bin("acp-desk-cli"));
            cmd.args(args)
                .current_dir(self.dir.path())
                .env("ACP_DESK_CONFIG_DIR", self.config())
                .env("ACP_DESK_DATA_DIR", self.dir.path().join("data"))
                .env("ACP_DESK_LOG", "trace")
                .envs(env.iter().copied())
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
            Run(child.wait_with_output().unwrap())
        }
    }

    struct Run(Output);

    impl Run {
        fn code(&self) -> Option<i32> {
            self.0.status.code()
        }
        fn stdout(&self) -> String {
            String::from_utf8_lossy(&self.0.stdout).into_owned()
        }
        fn stderr(&self) -> String {
            String::from_utf8_lossy(&self.0.stderr).into_owned()
        }
        /// Neither stream holds `value` (the CLI ran with every log level on).
        fn never_shows(&self, value: &str) -> &Run {
            assert!(
                !self.stdout().contains(value) && !self.stderr().contains(value),
                "the value leaked:\nstdout: {}\nstderr: {}",
                self.stdout(),
                self.stderr()
            );
            self
        }
        fn rows(&self) -> Vec<Value> {
            self.stdout()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
                .collect()
        }
    }

    /// What another client of the Secret Service reads under our service and `name`.
    fn secret_tool_lookup(name: &str) -> Option<Vec<u8>> {
        let out = Command::new("secret-tool")
            .args(["lookup", "service", OsKeychain::SERVICE, "username", name])
            .stdin(Stdio::null())
            .output()
            .expect("secret-tool (libsecret-tools) is needed: run scripts/deps --tests");
        out.status.success().then_some(out.stdout)
    }

    fn secret_tool_store(name: &str, value: &[u8]) {
        let mut child = Command::new("secret-tool")
            .args([
                "store",
                "--label=stored by the test",
                "service",
                OsKeychain::SERVICE,
                "username",
                name,
            ])
            .stdin(Stdio::piped())
            .spawn()
            .expect("secret-tool (libsecret-tools) is needed: run scripts/deps --tests");
        child.stdin.take().unwrap().write_all(value).unwrap();
        assert!(child.wait().unwrap().success());
    }

    fn row<'a>(rows: &'a [Value], name: &str) -> &'a Value {
        rows.iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no row for {name}: {rows:?}"))
    }

    #[test]
    fn a_secret_set_in_one_process_is_listed_and_read_in_others_then_deleted() {
        harness();
        let world = World::new();
        let value = "ghp_cross-process-VALUE-7f3a";
        let set = world.cli(
            &["secret", "set", "github-mcp"],
            Some(format!("{value}\n").as_bytes()),
        );
        set.never_shows(value);
        assert_eq!(set.code(), Some(0), "{}", set.stderr());
        assert!(set.stdout().contains("stored the secret `github-mcp`"));

        // Another process: the CLI lists the name...
        let list = world.cli(&["secret", "list", "--json"], None);
        list.never_shows(value);
        assert_eq!(list.code(), Some(0), "{}", list.stderr());
        assert_eq!(row(&list.rows(), "github-mcp")["stored"], true);
        // ...and libsecret reads the value, stored without the trailing newline.
        assert_eq!(secret_tool_lookup("github-mcp").unwrap(), value.as_bytes());
        // ...and OsKeychain in this process reads it too.
        let name = SecretRef::new("github-mcp").unwrap();
        let got = OsKeychain::new().get(&name).unwrap().unwrap();
        assert_eq!(got.expose(), value);

        // Replacing keeps one item.
        let again = world.cli(&["secret", "set", "github-mcp"], Some(b"second\n"));
        assert_eq!(again.code(), Some(0), "{}", again.stderr());
        assert_eq!(secret_tool_lookup("github-mcp").unwrap(), b"second");

        let delete = world.cli(&["secret", "delete", "github-mcp"], None);
        assert_eq!(delete.code(), Some(0), "{}", delete.stderr());
        assert!(delete.stdout().contains("deleted the secret `github-mcp`"));
        assert_eq!(secret_tool_lookup("github-mcp"), None);
        let list = world.cli(&["secret", "list", "--json"], None);
        assert!(list.rows().iter().all(|r| r["name"] != "github-mcp"));

        // A second delete says there was none, with the usage status.
        let delete = world.cli(&["secret", "delete", "github-mcp"], None);
        assert_eq!(delete.code(), Some(2));
        assert!(
            delete.stderr().contains("no secret `github-mcp` is stored"),
            "{}",
            delete.stderr()
        );
    }

    #[test]
    fn list_says_where_the_settings_and_manifests_use_each_name_and_what_is_missing() {
        harness();
        let world = World::new()
            .with_settings(
                r#"{"mcp_servers": {"github": {"url": "https://mcp.example.invalid/", "credential_ref": "list-github"}},
                    "agent_servers": {"claude": {"command": "claude-code-acp",
                      "env": {"ANTHROPIC_API_KEY": {"secret": "list-anthropic"}, "PLAIN": "plain-env-value"}}}}"#,
            )
            .with_manifest();
        let set = world.cli(&["secret", "set", "list-github"], Some(b"v1"));
        assert_eq!(set.code(), Some(0), "{}", set.stderr());
        assert!(
            set.stdout()
                .contains("used by mcp_servers.github (credential_ref)"),
            "{}",
            set.stdout()
        );
        let unused = world.cli(&["secret", "set", "list-unused"], Some(b"v2"));
        assert!(unused.stderr().contains("no setting or manifest uses"));

        let rows = world.cli(&["secret", "list", "--json"], None).rows();
        let github = row(&rows, "list-github");
        assert_eq!(github["stored"], true);
        assert_eq!(
            github["usedBy"],
            serde_json::json!(["mcp_servers.github (credential_ref)"])
        );
        let docs = row(&rows, "vault/docs");
        assert_eq!(docs["stored"], false);
        assert_eq!(
            docs["usedBy"],
            serde_json::json!(["manifest good-server: mcp_servers.docs (credentialRef)"])
        );
        assert_eq!(row(&rows, "list-unused")["usedBy"], serde_json::json!([]));
        let anthropic = row(&rows, "list-anthropic");
        assert_eq!(anthropic["stored"], false);
        assert_eq!(
            anthropic["usedBy"],
            serde_json::json!(["agent_servers.claude.env.ANTHROPIC_API_KEY"])
        );

        let text = world.cli(&["secret", "list"], None);
        assert_eq!(text.code(), Some(0), "{}", text.stderr());
        let line = |name: &str| {
            text.stdout()
                .lines()
                .find(|l| l.starts_with(&format!("{name}\t")))
                .unwrap_or_else(|| panic!("no line for {name}: {}", text.stdout()))
                .to_owned()
        };
        assert!(line("vault/docs").contains("NOT STORED"));
        assert!(line("list-github").contains("\tstored\t"));
        assert!(text.stderr().contains("acp-desk-cli secret set REF"));
        // Names only: the manifest's own header and env values stay out.
        for v in [
            "plain-env-value",
            "secret-token-value",
            "secret-header-value",
            "secret-env-value",
            "v1",
            "v2",
        ] {
            text.never_shows(v);
        }
        for name in ["list-github", "list-unused"] {
            world.cli(&["secret", "delete", name], None);
        }
    }

    #[test]
    fn no_secret_service_is_exit_1_with_what_to_do_and_no_value() {
        harness();
        let world = World::new();
        let value = "never-stored-VALUE-91c2";
        let no_bus = [("DBUS_SESSION_BUS_ADDRESS", "disabled:")];
        let set = world.cli_env(
            &["secret", "set", "nowhere"],
            Some(value.as_bytes()),
            &no_bus,
        );
        set.never_shows(value);
        assert_eq!(set.code(), Some(1));
        for words in [
            "could not store the secret `nowhere`",
            "no keychain service is running",
            "org.freedesktop.secrets",
            "start a Secret Service",
        ] {
            assert!(set.stderr().contains(words), "{words}: {}", set.stderr());
        }
        let list = world.cli_env(&["secret", "list"], None, &no_bus);
        assert_eq!(list.code(), Some(1));
        assert!(list.stderr().contains("no keychain service is running"));
        let delete = world.cli_env(&["secret", "delete", "nowhere"], None, &no_bus);
        assert_eq!(delete.code(), Some(1));
        assert!(delete.stderr().contains("no keychain service is running"));
        // The live service never got it.
        assert_eq!(secret_tool_lookup("nowhere"), None);
    }

    #[test]
    fn bad_input_is_refused_and_stores_nothing() {
        harness();
        let world = World::new();
        let empty = world.cli(&["secret", "set", "bad-input"], Some(b"\n"));
        assert_eq!(empty.code(), Some(2));
        assert!(empty.stderr().contains("nothing stored: stdin was empty"));
        let binary = world.cli(&["secret", "set", "bad-input"], Some(&[0xff, 0xfe, 0x00]));
        assert_eq!(binary.code(), Some(2));
        assert!(binary.stderr().contains("not UTF-8"));
        let name = world.cli(&["secret", "set", "has space"], Some(b"v"));
        assert_eq!(name.code(), Some(2));
        assert!(name.stderr().contains("not a valid secret name"));
        assert_eq!(secret_tool_lookup("bad-input"), None);
    }

    #[test]
    fn os_keychain_round_trips_and_names_a_secret_that_is_not_text() {
        harness();
        let k = OsKeychain::new();
        let name = SecretRef::new("os/round-trip").unwrap();
        let value = SecretValue::new("{\"X-Api-Key\": \"k\u{e9}y\"}".into());
        assert_eq!(k.get(&name).unwrap(), None);
        k.set(&name, &value).unwrap();
        assert_eq!(k.get(&name).unwrap().as_ref(), Some(&value));
        assert!(k.list().unwrap().contains(&name));
        assert!(k.delete(&name).unwrap());
        assert!(!k.delete(&name).unwrap());
        assert!(!k.list().unwrap().contains(&name));

        // Put there by another tool: bytes that are not UTF-8.
        secret_tool_store("os/binary", &[0xff, 0x73, 0x33, 0x63]);
        let name = SecretRef::new("os/binary").unwrap();
        let err = k.get(&name).unwrap_err();
        let shown = err.to_string();
        assert!(matches!(err, SecretError::Backend { .. }), "{err:?}");
        assert!(shown.contains("`os/binary` is not UTF-8 text"), "{shown}");
        assert!(
            shown.contains("acp-desk-cli secret set os/binary"),
            "{shown}"
        );
        assert!(!shown.contains("s3c"), "{shown}");
        // Still listed (a name is a name), and deletable.
        assert!(k.list().unwrap().contains(&name));
        assert!(k.delete(&name).unwrap());
    }

    #[test]
    fn a_locked_keyring_is_told_as_locked() {
        harness();
        let k = OsKeychain::new();
        let name = SecretRef::new("locked/one").unwrap();
        k.set(&name, &SecretValue::new("v".into())).unwrap();
        let lock = Command::new("dbus-send")
            .args([
                "--session",
                "--print-reply",
                "--dest=org.freedesktop.secrets",
                "/org/freedesktop/secrets",
                "org.freedesktop.Secret.Service.Lock",
                "array:objpath:/org/freedesktop/secrets/collection/login",
            ])
            .output()
            .unwrap();
        assert!(lock.status.success(), "{lock:?}");
        // No desktop to prompt on (the harness has no DISPLAY): the unlock fails at once.
        let err = k.get(&name).unwrap_err();
        assert!(matches!(err, SecretError::Locked { .. }), "{err:?}");
        assert!(err.to_string().contains("unlock it"), "{err}");
        unlock_login(&std::env::var("ACP_DESK_KEYCHAIN_PASSWORD").unwrap());
        assert!(
            k.delete(&name).unwrap(),
            "unlocked again, the item is there"
        );
    }

    /// Unlocks the login keyring again with the harness's password, without a prompt:
    /// gnome-keyring's own interface for it, over a `plain` session (the bus is the harness's).
    fn unlock_login(password: &str) {
        use zbus::zvariant::{ObjectPath, OwnedObjectPath, OwnedValue, Value};
        const DEST: Option<&str> = Some("org.freedesktop.secrets");
        const PATH: &str = "/org/freedesktop/secrets";
        let conn = zbus::blocking::Connection::session().unwrap();
        let reply = conn
            .call_method(
                DEST,
                PATH,
                Some("org.freedesktop.Secret.Service"),
                "OpenSession",
                &("plain", Value::from("")),
            )
            .unwrap();
        let (_, session): (OwnedValue, OwnedObjectPath) = reply.body().deserialize().unwrap();
        let login = ObjectPath::try_from("/org/freedesktop/secrets/collection/login").unwrap();
        let master = (
            session,
            Vec::<u8>::new(),
            password.as_bytes().to_vec(),
            "text/plain",
        );
        conn.call_method(
            DEST,
            PATH,
            Some("org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface"),
            "UnlockWithMasterPassword",
            &(login, master),
        )
        .unwrap();
    }

    /// A keychain that was not there at the first call is found at the next one: the failed
    /// connection is not kept.
    #[test]
    fn a_keychain_that_appears_later_is_found_on_the_next_call() {
        harness();
        let real = std::env::var("DBUS_SESSION_BUS_ADDRESS").unwrap();
        let k = OsKeychain::new();
        // SAFETY: each test runs alone in its process (nextest), or one at a time (scripts/test's
        // fallback passes --test-threads=1): nothing else reads the environment meanwhile.
        unsafe { std::env::set_var("DBUS_SESSION_BUS_ADDRESS", "disabled:") };
        let err = k.list().unwrap_err();
        assert!(matches!(err, SecretError::NoService { .. }), "{err:?}");
        // SAFETY: as above.
        unsafe { std::env::set_var("DBUS_SESSION_BUS_ADDRESS", &real) };
        assert!(k.list().is_ok());
    }

    /// `secret set` on a real terminal: what is typed is not echoed, and the terminal's echo is
    /// back on however the CLI ends (an answer, or Ctrl-C).
    #[cfg(unix)]
    mod on_a_terminal {
        use std::io::{Read, Write};
        use std::sync::{Arc, Mutex};
        use std::time::{Duration, Instant};

        use portable_pty::{CommandBuilder, PtySize, native_pty_system};

        use super::{bin, harness, secret_tool_lookup};

        struct Terminal {
            master: Box<dyn portable_pty::MasterPty + Send>,
            child: Box<dyn portable_pty::Child + Send + Sync>,
            writer: Box<dyn Write + Send>,
            seen: Arc<Mutex<Vec<u8>>>,
            _config: tempfile::TempDir,
        }

        impl Terminal {
            fn run(args: &[&str]) -> Terminal {
                let pair = native_pty_system()
                    .openpty(PtySize {
                        rows: 24,
                        cols: 120,
                        pixel_width: 0,
                        pixel_height: 0,
                    })
                    .unwrap();
                let config = tempfile::tempdir().unwrap();
                let mut cmd = CommandBuilder::new(bin("acp-desk-cli"));
                cmd.args(args);
                cmd.env("ACP_DESK_CONFIG_DIR", config.path().join("config"));
                cmd.env("ACP_DESK_DATA_DIR", config.path().join("data"));
                cmd.env("ACP_DESK_LOG", "trace");
                let child = pair.slave.spawn_command(cmd).unwrap();
                drop(pair.slave);
                let mut reader = pair.master.try_clone_reader().unwrap();
                let writer = pair.master.take_writer().unwrap();
                let seen = Arc::new(Mutex::new(Vec::new()));
                let into = seen.clone();
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    while let Ok(n) = reader.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        into.lock().unwrap().extend_from_slice(&buf[..n]);
                    }
                });
                Terminal {
                    master: pair.master,
                    child,
                    writer,
                    seen,
                    _config: config,
                }
            }

            fn seen(&self) -> String {
                String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
            }

            /// Whether the terminal echoes (its line discipline, as the CLI left it).
            fn echoes(&self) -> bool {
                let fd = self.master.as_raw_fd().unwrap();
                // SAFETY: a plain struct the call fills; `fd` is the open master of this pty.
                let mut t: libc::termios = unsafe { std::mem::zeroed() };
                assert_eq!(unsafe { libc::tcgetattr(fd, &mut t) }, 0);
                t.c_lflag & libc::ECHO != 0
            }

            fn wait_for(&self, what: &str, check: impl Fn(&Terminal) -> bool) {
                let deadline = Instant::now() + Duration::from_secs(30);
                while !check(self) {
                    assert!(
                        Instant::now() < deadline,
                        "never saw {what}; the terminal showed: {}",
                        self.seen()
                    );
                    std::thread::sleep(Duration::from_millis(20));
                }
            }

            fn type_in(&mut self, bytes: &[u8]) {
                self.writer.write_all(bytes).unwrap();
                self.writer.flush().unwrap();
            }

            fn exit_code(&mut self) -> u32 {
                self.child.wait().unwrap().exit_code()
            }
        }

        fn asked_with_echo_off(t: &Terminal, name: &str) {
            t.wait_for("the prompt", |t| {
                t.seen()
                    .contains(&format!("Secret for {name} (typing is hidden):"))
            });
            t.wait_for("echo off", |t| !t.echoes());
        }

        #[test]
        fn typed_secret_is_not_echoed_and_echo_comes_back() {
            harness();
            let value = "pty-typed-VALUE-3d1e";
            let mut t = Terminal::run(&["secret", "set", "tty/typed"]);
            assert!(t.echoes(), "a new terminal echoes");
            asked_with_echo_off(&t, "tty/typed");
            t.type_in(format!("{value}\r").as_bytes());
            assert_eq!(t.exit_code(), 0, "{}", t.seen());
            t.wait_for("the confirmation", |t| {
                t.seen().contains("stored the secret")
            });
            assert!(!t.seen().contains(value), "echoed: {}", t.seen());
            assert!(t.echoes(), "echo is back on");
            assert_eq!(secret_tool_lookup("tty/typed").unwrap(), value.as_bytes());
            assert_eq!(
                super::World::new()
                    .cli(&["secret", "delete", "tty/typed"], None)
                    .code(),
                Some(0)
            );
        }

        #[test]
        fn ctrl_c_at_the_prompt_stores_nothing_and_restores_echo() {
            harness();
            let mut t = Terminal::run(&["secret", "set", "tty/cancelled"]);
            asked_with_echo_off(&t, "tty/cancelled");
            t.type_in(b"half-typed\x03");
            assert_eq!(t.exit_code(), 130, "{}", t.seen());
            t.wait_for("the note", |t| {
                t.seen().contains("interrupted; nothing stored")
            });
            assert!(!t.seen().contains("half-typed"), "echoed: {}", t.seen());
            assert!(t.echoes(), "echo is back on after Ctrl-C");
            assert_eq!(secret_tool_lookup("tty/cancelled"), None);
        }
    }
}
