//! Process-level tests: spawn the real binary and speak ACP to it over pipes.

#![allow(
    clippy::unwrap_used,
    reason = "test harness helpers: a panic is the test failure we want"
)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use agent_client_protocol_schema::v1::{
    PermissionOptionKind, RequestPermissionRequest, SessionNotification, SessionUpdate, StopReason,
    ToolCallContent,
};
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(20);

struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Agent {
    fn spawn(flags: &[&str]) -> Agent {
        let mut child = Command::new(env!("CARGO_BIN_EXE_acp-desk-demo-agent"))
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the demo agent");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        // A thread, so a hung agent fails the test by timeout instead of blocking it forever.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Agent {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn next(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(TIMEOUT)
            .expect("agent sent nothing in time");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Collects messages until the response with `id`, answering permission requests with
    /// `answer` (given the parsed request).
    fn until_response(
        &mut self,
        id: &Value,
        mut answer: impl FnMut(&RequestPermissionRequest) -> Value,
    ) -> (Vec<Value>, Value) {
        let deadline = Instant::now() + TIMEOUT;
        let mut seen = Vec::new();
        while Instant::now() < deadline {
            let msg = self.next();
            if msg.get("method") == Some(&json!("session/request_permission")) {
                let request: RequestPermissionRequest =
                    serde_json::from_value(msg["params"].clone()).unwrap();
                let result = answer(&request);
                self.send(json!({"jsonrpc": "2.0", "id": msg["id"], "result": result}));
                seen.push(msg);
                continue;
            }
            if msg.get("id") == Some(id) && msg.get("method").is_none() {
                return (seen, msg);
            }
            seen.push(msg);
        }
        panic!("no response to {id} in time");
    }

    fn initialize_and_open(&mut self) -> String {
        self.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
        let init = self.next();
        assert_eq!(init["id"], 1);
        assert_eq!(init["result"]["protocolVersion"], 1);
        assert_eq!(init["result"]["agentInfo"]["name"], "acp-desk-demo-agent");
        self.new_session()
    }

    fn new_session(&mut self) -> String {
        self.send(
            json!({"jsonrpc": "2.0", "id": "new", "method": "session/new",
            "params": {"cwd": "/tmp/demo-project", "mcpServers": []}}),
        );
        let response = self.next();
        assert_eq!(response["id"], "new", "string ids are echoed verbatim");
        let session = response["result"]["sessionId"].as_str().unwrap().to_owned();
        let commands = self.next();
        assert_eq!(
            commands["params"]["update"]["sessionUpdate"], "available_commands_update",
            "commands follow the session/new response"
        );
        let usage = self.next();
        assert_eq!(
            usage["params"]["update"]["sessionUpdate"], "usage_update",
            "a starting usage meter follows the commands"
        );
        assert_eq!(response["result"]["modes"]["currentModeId"], "ask");
        session
    }

    fn prompt(&mut self, id: u64, session: &str, text: &str) {
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}}),
        );
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn updates(messages: &[Value]) -> Vec<SessionUpdate> {
    messages
        .iter()
        .filter(|m| m.get("method") == Some(&json!("session/update")))
        .map(|m| {
            serde_json::from_value::<SessionNotification>(m["params"].clone())
                .unwrap()
                .update
        })
        .collect()
}

fn stop_reason(response: &Value) -> StopReason {
    serde_json::from_value(response["result"]["stopReason"].clone())
        .unwrap_or_else(|e| panic!("no stop reason ({e}): {response}"))
}

fn message_text(updates: &[SessionUpdate]) -> String {
    updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::AgentMessageChunk(c) => match &c.content {
                agent_client_protocol_schema::v1::ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[test]
fn edit_scenario_streams_a_diff_and_ends_the_turn() {
    let mut agent = Agent::spawn(&[]);
    let session = agent.initialize_and_open();
    agent.prompt(7, &session, "please edit main.rs");
    let (seen, response) = agent.until_response(&json!(7), |_| panic!("no permission here"));
    assert_eq!(stop_reason(&response), StopReason::EndTurn);

    let updates = updates(&seen);
    let diff = updates.iter().find_map(|u| {
        let content = match u {
            SessionUpdate::ToolCall(tc) => &tc.content,
            SessionUpdate::ToolCallUpdate(tcu) => tcu.fields.content.as_ref()?,
            _ => return None,
        };
        content.iter().find_map(|c| match c {
            ToolCallContent::Diff(d) => Some(d.clone()),
            _ => None,
        })
    });
    let diff = diff.expect("a tool call with diff content");
    assert_eq!(
        diff.path,
        std::path::Path::new("/tmp/demo-project/src/main.rs")
    );
    assert!(diff.old_text.is_some());
    assert!(updates.iter().any(
        |u| matches!(u, SessionUpdate::ToolCall(tc) if tc.tool_call_id.0.as_ref() == "demo-edit-1")
    ));
    assert!(message_text(&updates).contains("not touched"));
}

#[test]
fn permission_allow_chosen_by_kind_plays_the_allow_branch() {
    let mut agent = Agent::spawn(&[]);
    let session = agent.initialize_and_open();
    agent.prompt(2, &session, "ask my permission");
    let mut asked = 0;
    let (seen, response) = agent.until_response(&json!(2), |request| {
        asked += 1;
        let option = request
            .options
            .iter()
            .find(|o| o.kind == PermissionOptionKind::AllowOnce)
            .expect("an allow_once option");
        assert_ne!(option.option_id.0.as_ref(), "allow_once");
        json!({"outcome": {"outcome": "selected", "optionId": option.option_id}})
    });
    assert_eq!(asked, 1);
    assert_eq!(stop_reason(&response), StopReason::EndTurn);
    let updates = updates(&seen);
    let completed = updates.iter().any(|u| {
        matches!(u, SessionUpdate::ToolCallUpdate(tcu)
            if tcu.fields.status == Some(agent_client_protocol_schema::v1::ToolCallStatus::Completed))
    });
    assert!(completed, "the allow branch completes the tool call");
    assert!(message_text(&updates).contains("simulated"));
}

#[test]
fn permission_reject_plays_the_reject_branch() {
    let mut agent = Agent::spawn(&[]);
    let session = agent.initialize_and_open();
    agent.prompt(2, &session, "approve?");
    let (seen, response) = agent.until_response(&json!(2), |request| {
        let option = request
            .options
            .iter()
            .find(|o| o.kind == PermissionOptionKind::RejectOnce)
            .unwrap();
        json!({"outcome": {"outcome": "selected", "optionId": option.option_id}})
    });
    assert_eq!(stop_reason(&response), StopReason::EndTurn);
    assert!(message_text(&updates(&seen)).contains("You rejected"));
}

#[test]
fn cancel_during_a_parked_permission_ends_the_turn_cancelled() {
    let mut agent = Agent::spawn(&[]);
    let session = agent.initialize_and_open();
    agent.prompt(3, &session, "permission");
    let request = loop {
        let msg = agent.next();
        if msg.get("method") == Some(&json!("session/request_permission")) {
            break msg;
        }
    };
    agent.send(json!({"jsonrpc": "2.0", "method": "session/cancel",
        "params": {"sessionId": session}}));
    agent.send(json!({"jsonrpc": "2.0", "id": request["id"],
        "result": {"outcome": {"outcome": "cancelled"}}}));
    let (_, response) = agent.until_response(&json!(3), |_| panic!("asked twice"));
    assert_eq!(stop_reason(&response), StopReason::Cancelled);
}

#[test]
fn cancel_stops_the_slow_scenario_promptly() {
    let mut agent = Agent::spawn(&[]);
    let session = agent.initialize_and_open();
    agent.prompt(4, &session, "go slow");
    let first = agent.next();
    assert_eq!(
        first["params"]["update"]["sessionUpdate"],
        "agent_message_chunk"
    );
    let started = Instant::now();
    agent.send(json!({"jsonrpc": "2.0", "method": "session/cancel",
        "params": {"sessionId": session}}));
    let (_, response) = agent.until_response(&json!(4), |_| panic!("no permission here"));
    assert_eq!(stop_reason(&response), StopReason::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn errors_unknown_methods_bad_params_and_auth() {
    let mut agent = Agent::spawn(&["--auth-required", "--prompt-caps", "image,embedded"]);
    agent.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1}}));
    let init = agent.next();
    assert_eq!(init["result"]["authMethods"][0]["id"], "demo-login");
    let caps = &init["result"]["agentCapabilities"]["promptCapabilities"];
    assert_eq!(
        (
            caps["image"].clone(),
            caps["audio"].clone(),
            caps["embeddedContext"].clone()
        ),
        (json!(true), json!(false), json!(true))
    );

    agent.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": "/tmp", "mcpServers": []}}));
    let refused = agent.next();
    assert_eq!(refused["error"]["code"], -32000);
    assert_eq!(refused["error"]["message"], "Authentication required");

    agent.send(json!({"jsonrpc": "2.0", "id": 3, "method": "authenticate",
        "params": {"methodId": "nope"}}));
    assert_eq!(agent.next()["error"]["code"], -32602);
    agent.send(json!({"jsonrpc": "2.0", "id": 4, "method": "authenticate",
        "params": {"methodId": "demo-login"}}));
    assert!(agent.next().get("result").is_some());

    agent.send(json!({"jsonrpc": "2.0", "id": 5, "method": "session/load", "params": {}}));
    assert_eq!(agent.next()["error"]["code"], -32601);
    agent.send(
        json!({"jsonrpc": "2.0", "id": 6, "method": "session/prompt",
        "params": {"sessionId": 12}}),
    );
    assert_eq!(agent.next()["error"]["code"], -32602);
    agent.send(
        json!({"jsonrpc": "2.0", "id": 7, "method": "session/prompt",
        "params": {"sessionId": "nope", "prompt": []}}),
    );
    assert_eq!(agent.next()["error"]["code"], -32602);

    let session = agent.new_session();
    agent.prompt(8, &session, "refuse");
    let (_, response) = agent.until_response(&json!(8), |_| panic!("no permission here"));
    assert_eq!(stop_reason(&response), StopReason::Refusal);
}

#[test]
fn eof_exits_zero_and_crash_exits_three() {
    let mut agent = Agent::spawn(&[]);
    agent.stdin = None;
    assert_eq!(wait_bounded(&mut agent.child), Some(0));

    let mut agent = Agent::spawn(&[]);
    let session = agent.initialize_and_open();
    agent.prompt(9, &session, "crash");
    assert_eq!(wait_bounded(&mut agent.child), Some(3));
}

#[test]
fn ignore_cancel_keeps_playing_an_extra_dir_scenario() {
    let dir = std::env::temp_dir().join(format!("demo-agent-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("nap.json"),
        r#"{"name": "nap", "description": "short nap", "keywords": ["nap"],
            "steps": [{"say": {"text": "napping in {cwd}", "chunk_chars": 0}}, {"sleep": {"ms": 800}},
                      {"say": {"text": "awake"}}]}"#,
    )
    .unwrap();
    let dir_arg = dir.to_str().unwrap().to_owned();
    let mut agent = Agent::spawn(&["--ignore-cancel", "--scenario-dir", &dir_arg]);
    let session = agent.initialize_and_open();
    agent.prompt(5, &session, "take a nap");
    let first = agent.next();
    assert_eq!(
        first["params"]["update"]["content"]["text"],
        "napping in /tmp/demo-project"
    );
    agent.send(json!({"jsonrpc": "2.0", "method": "session/cancel",
        "params": {"sessionId": session}}));
    let (seen, response) = agent.until_response(&json!(5), |_| panic!("no permission here"));
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(stop_reason(&response), StopReason::EndTurn);
    assert_eq!(message_text(&updates(&seen)), "awake");
}

/// The exit code, waiting at most 30 s: a broken exit path fails the test instead of hanging it.
fn wait_bounded(child: &mut std::process::Child) -> Option<i32> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the agent did not exit"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn modes_and_config_options_are_offered_and_set() {
    let mut agent = Agent::spawn(&[]);
    let session = agent.initialize_and_open();
    agent.send(
        json!({"jsonrpc": "2.0", "id": 10, "method": "session/set_mode",
        "params": {"sessionId": session, "modeId": "plan"}}),
    );
    let reply = agent.next();
    assert_eq!(reply["id"], 10);
    assert!(reply["result"].is_object(), "{reply}");
    let update = agent.next();
    assert_eq!(
        update["params"]["update"]["sessionUpdate"],
        "current_mode_update"
    );
    assert_eq!(update["params"]["update"]["currentModeId"], "plan");
    agent.send(
        json!({"jsonrpc": "2.0", "id": 11, "method": "session/set_mode",
        "params": {"sessionId": session, "modeId": "yolo"}}),
    );
    let refused = agent.next();
    assert_eq!(refused["error"]["code"], -32602);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("yolo")
    );

    agent.send(
        json!({"jsonrpc": "2.0", "id": 12, "method": "session/set_config_option",
        "params": {"sessionId": session, "configId": "model", "value": "demo-deep"}}),
    );
    let reply = agent.next();
    let options = reply["result"]["configOptions"].as_array().unwrap();
    let model = options.iter().find(|o| o["id"] == "model").unwrap();
    assert_eq!(model["currentValue"], "demo-deep");
    assert_eq!(model["category"], "model");
    agent.send(
        json!({"jsonrpc": "2.0", "id": 13, "method": "session/set_config_option",
        "params": {"sessionId": session, "configId": "brief", "type": "boolean", "value": true}}),
    );
    let reply = agent.next();
    let options = reply["result"]["configOptions"].as_array().unwrap();
    let brief = options.iter().find(|o| o["id"] == "brief").unwrap();
    assert_eq!(
        (brief["type"].clone(), brief["currentValue"].clone()),
        (json!("boolean"), json!(true))
    );
    agent.send(
        json!({"jsonrpc": "2.0", "id": 14, "method": "session/set_config_option",
        "params": {"sessionId": session, "configId": "model", "value": "gpt-9"}}),
    );
    assert_eq!(agent.next()["error"]["code"], -32602);
}
