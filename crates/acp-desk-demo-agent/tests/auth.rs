//! The sign-in scenarios (`ACP_DESK_DEMO_AUTH` and friends), spoken to the real binary over
//! pipes, and its `login` subcommand run in a real pty.

#![allow(
    clippy::unwrap_used,
    reason = "test harness helpers: a panic is the test failure we want"
)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(20);
const EXE: &str = env!("CARGO_BIN_EXE_acp-desk-demo-agent");

/// A folder of its own under the temp dir, removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("demo-auth-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Agent {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    next_id: u64,
}

impl Agent {
    fn spawn(env: &[(&str, &str)]) -> Agent {
        let mut cmd = Command::new(EXE);
        for var in [
            "ACP_DESK_DEMO_AUTH",
            "ACP_DESK_DEMO_AUTH_AT",
            "ACP_DESK_DEMO_AUTH_DIR",
            "ACP_DESK_DEMO_API_KEY",
            "ACP_DESK_DEMO_RECORD",
        ] {
            cmd.env_remove(var);
        }
        let mut child = cmd
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let Ok(v) = serde_json::from_str(&line) else {
                    break;
                };
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take().unwrap();
        Agent {
            child,
            stdin,
            lines,
            next_id: 1,
        }
    }

    /// Sends a request and returns its response (skipping notifications).
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
        loop {
            let v = self.lines.recv_timeout(TIMEOUT).expect("an answer in time");
            if v.get("id") == Some(&json!(id)) && v.get("method").is_none() {
                return v;
            }
        }
    }

    fn initialize(&mut self, caps: Value) -> Vec<Value> {
        let r = self.call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": caps}),
        );
        r["result"]["authMethods"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    fn new_session(&mut self) -> Value {
        self.call("session/new", json!({"cwd": "/tmp", "mcpServers": []}))
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ids(methods: &[Value]) -> Vec<&str> {
    methods.iter().map(|m| m["id"].as_str().unwrap()).collect()
}

fn both_caps() -> Value {
    json!({"auth": {"terminal": true}, "_meta": {"terminal-auth": true}})
}

#[test]
fn methods_follow_what_the_client_advertised() {
    let dir = Dir::new("caps");
    let d = dir.0.to_str().unwrap();
    let env = [
        ("ACP_DESK_DEMO_AUTH", "agent,api-key,terminal,terminal-meta"),
        ("ACP_DESK_DEMO_AUTH_DIR", d),
    ];
    let all = Agent::spawn(&env).initialize(both_caps());
    assert_eq!(
        ids(&all),
        [
            "demo-terminal-login",
            "demo-meta-login",
            "demo-api-key",
            "demo-login"
        ]
    );
    assert_eq!(all[0]["type"], "terminal");
    assert_eq!(all[0]["args"], json!(["login"]));
    assert_eq!(
        all[0]["env"]["ACP_DESK_DEMO_LOGIN_METHOD"],
        "demo-terminal-login"
    );
    let meta = &all[1]["_meta"]["terminal-auth"];
    assert!(all[1].get("type").is_none(), "untyped: {}", all[1]);
    assert!(
        meta["command"].is_string() && meta["label"].is_string(),
        "{meta}"
    );
    assert_eq!(all[2]["_meta"]["api-key"]["provider"], "demo");
    // Without the client's capabilities, no terminal methods (the schema's rule, and
    // claude-code-acp's check of `_meta["terminal-auth"]`).
    let none = Agent::spawn(&env).initialize(json!({}));
    assert_eq!(ids(&none), ["demo-api-key", "demo-login"]);
    let typed_only = Agent::spawn(&env).initialize(json!({"auth": {"terminal": true}}));
    assert_eq!(
        ids(&typed_only),
        ["demo-terminal-login", "demo-api-key", "demo-login"]
    );
}

#[test]
fn the_agent_method_persists_a_marker_for_the_next_process() {
    let dir = Dir::new("agent");
    let d = dir.0.to_str().unwrap();
    let env = [
        ("ACP_DESK_DEMO_AUTH", "agent"),
        ("ACP_DESK_DEMO_AUTH_DIR", d),
    ];
    let mut a = Agent::spawn(&env);
    a.initialize(json!({}));
    let refused = a.new_session();
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    let ok = a.call("authenticate", json!({"methodId": "demo-login"}));
    assert!(ok.get("result").is_some(), "{ok}");
    assert!(a.new_session()["result"]["sessionId"].is_string());
    assert!(dir.0.join("signed-in").is_file());
    drop(a);
    let mut b = Agent::spawn(&env);
    b.initialize(json!({}));
    assert!(
        b.new_session()["result"]["sessionId"].is_string(),
        "signed in by the marker"
    );
}

#[test]
fn an_api_key_is_checked_and_kept_in_memory_only() {
    let dir = Dir::new("key");
    let d = dir.0.to_str().unwrap();
    let record = dir.0.join("record.jsonl");
    let env = [
        ("ACP_DESK_DEMO_AUTH", "api-key"),
        ("ACP_DESK_DEMO_AUTH_DIR", d),
        ("ACP_DESK_DEMO_API_KEY", "sk-demo-right"),
        ("ACP_DESK_DEMO_RECORD", record.to_str().unwrap()),
    ];
    let mut a = Agent::spawn(&env);
    a.initialize(json!({}));
    assert_eq!(a.new_session()["error"]["code"], -32000);
    let wrong = a.call(
        "authenticate",
        json!({"methodId": "demo-api-key", "_meta": {"api-key": "sk-demo-wrong"}}),
    );
    assert_eq!(wrong["error"]["code"], -32000, "{wrong}");
    let message = wrong["error"]["message"].as_str().unwrap();
    assert!(
        !message.contains("sk-demo"),
        "the key is not echoed: {message}"
    );
    let missing = a.call("authenticate", json!({"methodId": "demo-api-key"}));
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    let right = a.call(
        "authenticate",
        json!({"methodId": "demo-api-key", "_meta": {"api-key": "sk-demo-right"}}),
    );
    assert!(right.get("result").is_some(), "{right}");
    assert!(a.new_session()["result"]["sessionId"].is_string());
    drop(a);
    assert!(!dir.0.join("signed-in").exists(), "no marker for a key");
    let mut b = Agent::spawn(&env);
    b.initialize(json!({}));
    assert_eq!(
        b.new_session()["error"]["code"],
        -32000,
        "a new process needs the key again"
    );
    let text = std::fs::read_to_string(&record).unwrap();
    let sent: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let auths: Vec<&Value> = sent
        .iter()
        .filter(|l| l["method"] == "authenticate")
        .collect();
    assert_eq!(auths.len(), 3, "every authenticate is recorded: {text}");
    assert_eq!(auths[2]["params"]["_meta"]["api-key"], "sk-demo-right");
}

#[test]
fn terminal_methods_are_never_authenticated() {
    let dir = Dir::new("term");
    let d = dir.0.to_str().unwrap();
    let env = [
        ("ACP_DESK_DEMO_AUTH", "terminal,terminal-meta"),
        ("ACP_DESK_DEMO_AUTH_DIR", d),
    ];
    let mut a = Agent::spawn(&env);
    a.initialize(both_caps());
    let t = a.call("authenticate", json!({"methodId": "demo-terminal-login"}));
    assert_eq!(t["error"]["code"], -32602, "{t}");
    let m = a.call("authenticate", json!({"methodId": "demo-meta-login"}));
    assert_eq!(m["error"]["code"], -32603, "{m}");
    assert_eq!(a.new_session()["error"]["code"], -32000);
    // A login in another process (the marker) signs this running agent in.
    std::fs::write(dir.0.join("signed-in"), "demo-terminal-login\n").unwrap();
    assert!(a.new_session()["result"]["sessionId"].is_string());
}

#[test]
fn auth_at_prompt_opens_the_session_and_refuses_prompts() {
    let dir = Dir::new("prompt");
    let d = dir.0.to_str().unwrap();
    let env = [
        ("ACP_DESK_DEMO_AUTH", "agent"),
        ("ACP_DESK_DEMO_AUTH_AT", "prompt"),
        ("ACP_DESK_DEMO_AUTH_DIR", d),
    ];
    let mut a = Agent::spawn(&env);
    a.initialize(json!({}));
    let session = a.new_session()["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": "refuse"}]});
    let refused = a.call("session/prompt", prompt.clone());
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    a.call("authenticate", json!({"methodId": "demo-login"}));
    let ok = a.call("session/prompt", prompt);
    assert_eq!(ok["result"]["stopReason"], "refusal", "{ok}");
}

#[test]
fn bad_settings_are_named() {
    let out = Command::new(EXE)
        .env("ACP_DESK_DEMO_AUTH", "agent,oauth")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ACP_DESK_DEMO_AUTH") && err.contains("oauth"),
        "{err}"
    );
    let out = Command::new(EXE)
        .env("ACP_DESK_DEMO_AUTH", "agent")
        .env("ACP_DESK_DEMO_AUTH_AT", "later")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn login_refuses_without_a_terminal() {
    let dir = Dir::new("notty");
    let out = Command::new(EXE)
        .arg("login")
        .env("ACP_DESK_DEMO_AUTH_DIR", &dir.0)
        .stdin(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a terminal"));
    assert!(!dir.0.join("signed-in").exists());
}

/// Runs `login` with its stdin and stdout on a new pty, types `typed`, returns the exit code
/// and what it printed.
#[cfg(unix)]
fn login_in_pty(dir: &std::path::Path, code: Option<&str>, typed: &str) -> (Option<i32>, String) {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};

    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two fds into the given ints; the other pointers may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty");
    // SAFETY: both fds were just opened by openpty and are owned here only.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut cmd = Command::new(EXE);
    cmd.arg("login")
        .env("ACP_DESK_DEMO_AUTH_DIR", dir)
        .env("ACP_DESK_DEMO_LOGIN_METHOD", "demo-terminal-login")
        .env_remove("ACP_DESK_DEMO_LOGIN_CODE")
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave))
        .stderr(Stdio::null());
    if let Some(c) = code {
        cmd.env("ACP_DESK_DEMO_LOGIN_CODE", c);
    }
    let mut child = cmd.spawn().unwrap();
    drop(cmd);
    let mut file = std::fs::File::from(master);
    file.write_all(typed.as_bytes()).unwrap();
    file.flush().unwrap();
    let status = child.wait().unwrap();
    // Output until the pty's other end is gone (EIO on Linux).
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = file.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    (status.code(), String::from_utf8_lossy(&out).into_owned())
}

#[cfg(unix)]
#[test]
fn login_reads_the_code_from_its_terminal() {
    let dir = Dir::new("pty");
    let (code, out) = login_in_pty(&dir.0, None, "nope\n");
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("Wrong code"), "{out}");
    assert!(!dir.0.join("signed-in").exists());
    let (code, out) = login_in_pty(&dir.0, None, "demo\n");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("Enter the login code"), "{out}");
    let marker = std::fs::read_to_string(dir.0.join("signed-in")).unwrap();
    assert_eq!(marker.trim(), "demo-terminal-login");
    std::fs::remove_file(dir.0.join("signed-in")).unwrap();
    let (code, out) = login_in_pty(&dir.0, Some("4711"), "4711\n");
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("the code in ACP_DESK_DEMO_LOGIN_CODE"),
        "a code of the user's is not shown: {out}"
    );
    assert!(dir.0.join("signed-in").is_file());
}
