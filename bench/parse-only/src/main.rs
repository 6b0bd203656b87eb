//! Flood baseline: the least work a correct ACP client must do to consume a prompt turn.
//!
//! `parse-only [--prompt TEXT] -- CMD ARGS...` spawns the agent with piped stdin/stdout,
//! sends `initialize`, `session/new` (cwd = current directory, no MCP servers) and one
//! `session/prompt`, then reads the agent's stdout line by line (one reused `String`) and parses
//! every line with `serde_json`: `session/update` notifications into the schema crate's typed
//! [`SessionNotification`], everything else into a small envelope. Nothing is rendered, stored or
//! answered. When the response to the prompt arrives it prints
//! `notifications=N bytes=B seconds=S rate=R/s` to stderr (counted from sending the prompt to
//! reading its response), then its own peak RSS on a second line, closes the agent's stdin,
//! waits for it and exits 0.

use std::env;
use std::error::Error;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, Stdio};
use std::time::Instant;

use agent_client_protocol_schema::v1::SessionNotification;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

const USAGE: &str = "usage: parse-only [--prompt TEXT] -- AGENT_COMMAND [ARGS...]";
const INITIALIZE_ID: u64 = 1;
const SESSION_NEW_ID: u64 = 2;
const PROMPT_ID: u64 = 3;

/// Any JSON-RPC message, parsed only as far as needed to route it. `params` and `result` are
/// kept raw (validated, not built into values) so that only `session/update` params get parsed
/// into typed structs.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NewSessionResult {
    session_id: String,
}

struct Args {
    prompt: String,
    command: Vec<String>,
}

fn parse_args() -> Result<Args> {
    let mut prompt = String::from("flood");
    let mut args = env::args().skip(1);
    let mut command = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--prompt" => prompt = args.next().ok_or("--prompt needs a value")?,
            "-h" | "--help" => return Err(USAGE.into()),
            "--" => {
                command.extend(args.by_ref());
                break;
            }
            other if other.starts_with("--") => {
                return Err(format!("unknown option {other}\n{USAGE}").into());
            }
            _ => {
                command.push(arg);
                command.extend(args.by_ref());
                break;
            }
        }
    }
    if command.is_empty() {
        return Err(USAGE.into());
    }
    Ok(Args { prompt, command })
}

/// The client side of the connection: writes requests, reads and parses lines.
struct Peer {
    stdin: Option<ChildStdin>,
    reader: BufReader<ChildStdout>,
    line: String,
    notifications: u64,
    untyped_notifications: u64,
    bytes: u64,
}

impl Peer {
    fn send(&mut self, id: u64, method: &str, params: Value) -> Result<()> {
        let stdin = self.stdin.as_mut().ok_or("agent stdin already closed")?;
        let mut message = serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )?;
        message.push(b'\n');
        stdin
            .write_all(&message)
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("writing {method} to the agent: {e}"))?;
        Ok(())
    }

    /// Reads and parses lines until the response with `id`; returns its raw `result`.
    fn read_until_response(&mut self, id: u64) -> Result<Option<Box<RawValue>>> {
        loop {
            self.line.clear();
            let n = self
                .reader
                .read_line(&mut self.line)
                .map_err(|e| format!("reading the agent's stdout: {e}"))?;
            if n == 0 {
                return Err(
                    format!("the agent closed its stdout before answering request {id}").into(),
                );
            }
            self.bytes += n as u64;
            let text = self.line.trim_end();
            if text.is_empty() {
                continue;
            }
            let envelope: Envelope<'_> = serde_json::from_str(text).map_err(|e| {
                format!("agent sent a line that is not JSON-RPC ({e}): {text:.200}")
            })?;
            match envelope.method.as_deref() {
                Some("session/update") => {
                    self.notifications += 1;
                    let params = envelope.params.map_or("null", RawValue::get);
                    if serde_json::from_str::<SessionNotification>(params).is_err() {
                        self.untyped_notifications += 1;
                    }
                }
                Some(_) => {} // other notifications or agent requests: ignored, never answered
                None => {
                    if envelope.id.as_ref().and_then(Value::as_u64) == Some(id) {
                        if let Some(error) = envelope.error {
                            return Err(format!("request {id} failed: {error}").into());
                        }
                        return Ok(envelope.result.map(RawValue::to_owned));
                    }
                }
            }
        }
    }
}

fn run(args: Args) -> Result<()> {
    let cwd = env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    let mut child: Child = Command::new(&args.command[0])
        .args(&args.command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("spawning {:?}: {e}", args.command[0]))?;
    let stdout = child.stdout.take().ok_or("agent stdout is not piped")?;
    let mut peer = Peer {
        stdin: child.stdin.take(),
        reader: BufReader::with_capacity(64 * 1024, stdout),
        line: String::with_capacity(4096),
        notifications: 0,
        untyped_notifications: 0,
        bytes: 0,
    };

    peer.send(
        INITIALIZE_ID,
        "initialize",
        json!({
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": false},
            "clientInfo": {"name": "parse-only", "version": env!("CARGO_PKG_VERSION")},
        }),
    )?;
    peer.read_until_response(INITIALIZE_ID)?;

    peer.send(
        SESSION_NEW_ID,
        "session/new",
        json!({"cwd": cwd, "mcpServers": []}),
    )?;
    let result = peer
        .read_until_response(SESSION_NEW_ID)?
        .ok_or("session/new returned no result")?;
    let session: NewSessionResult = serde_json::from_str(result.get())
        .map_err(|e| format!("session/new result: {e}: {}", result.get()))?;

    peer.notifications = 0;
    peer.untyped_notifications = 0;
    peer.bytes = 0;
    let started = Instant::now();
    peer.send(
        PROMPT_ID,
        "session/prompt",
        json!({"sessionId": session.session_id, "prompt": [{"type": "text", "text": args.prompt}]}),
    )?;
    peer.read_until_response(PROMPT_ID)?;
    let seconds = started.elapsed().as_secs_f64();

    let rate = if seconds > 0.0 {
        peer.notifications as f64 / seconds
    } else {
        0.0
    };
    eprintln!(
        "notifications={} bytes={} seconds={seconds:.3} rate={rate:.0}/s",
        peer.notifications, peer.bytes
    );
    if let Some(kib) = own_peak_rss_kib() {
        eprintln!("parse-only: own_peak_rss_kib={kib} (this process only, VmHWM)");
    }
    if peer.untyped_notifications > 0 {
        eprintln!(
            "parse-only: warning: {} session/update notifications did not parse as SessionNotification",
            peer.untyped_notifications
        );
    }

    drop(peer.stdin.take());
    drop(peer);
    let status = child
        .wait()
        .map_err(|e| format!("waiting for the agent: {e}"))?;
    if !status.success() {
        eprintln!("parse-only: note: agent exited with {status}");
    }
    Ok(())
}

/// Peak resident set size of this process alone (`VmHWM`, Linux only). `/usr/bin/time` cannot
/// give this: its figure also covers the agent, which is our child.
fn own_peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() -> ExitCode {
    let result = parse_args().and_then(run);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("parse-only: {e}");
            ExitCode::FAILURE
        }
    }
}
