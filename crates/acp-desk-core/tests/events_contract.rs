//! The StreamEvent contract: the seed's kinds and field names, spelled as the seed spells them
//! (shared/seeds/002_*.txt), and every addition listed in `events::ADDITIONS`.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use acp_desk_core::events::*;
use acp_desk_core::schema::v1 as acp;
use acp_desk_core::thread::Thread;
use serde_json::{Value, json};

fn to_json(ev: &StreamEvent) -> Value {
    serde_json::to_value(ev).unwrap()
}

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

fn meta() -> acp::Meta {
    let mut m = acp::Meta::new();
    m.insert("vendor/x".into(), json!(1));
    m
}

/// One instance of every variant, with every optional field set.
fn all_events() -> Vec<StreamEvent> {
    let sid = || "s1".to_string();
    vec![
        StreamEvent::TextDelta {
            session_id: sid(),
            text: "hi".into(),
            content: None,
            message_id: Some("m1".into()),
        },
        StreamEvent::Thought {
            session_id: sid(),
            text: "hmm".into(),
            content: None,
            message_id: None,
        },
        StreamEvent::ToolCall(Box::new(ToolCallEvent {
            session_id: sid(),
            tool_call_id: "t1".into(),
            tool_name: "Read".into(),
            arguments: json!({"path": "/a"}),
            is_update: true,
            tool_kind: Some(acp::ToolKind::Read),
            status: Some(acp::ToolCallStatus::InProgress),
            content: Some(vec![]),
            locations: Some(vec![]),
            raw_output: Some(json!({"ok": true})),
            meta: Some(meta()),
        })),
        StreamEvent::ToolResult {
            session_id: sid(),
            tool_call_id: "t1".into(),
            result: json!({"content": [], "rawOutput": null}),
            is_error: Some(false),
        },
        StreamEvent::AgentPrompt(Box::new(AgentPromptEvent {
            session_id: sid(),
            request_id: "t1#1".into(),
            options: vec![acp::PermissionOption::new(
                "proceed_once",
                "Allow",
                acp::PermissionOptionKind::AllowOnce,
            )],
            text: Some("Allow Read?".into()),
            tool_name: Some("Read".into()),
            raw_input: Some(json!({"path": "/a"})),
            meta: Some(meta()),
            target_tool_call_id: "t1".into(),
            tool_kind: Some(acp::ToolKind::Read),
            content: None,
            locations: None,
        })),
        StreamEvent::AgentPromptSettled {
            session_id: sid(),
            request_id: "t1#1".into(),
            outcome: PermissionResolution::selected("proceed_once"),
            by: SettledBy::User,
            feedback: Some("no".into()),
        },
        StreamEvent::TurnStart {
            session_id: sid(),
            prompt: vec![acp_desk_core::text_block("hello")],
        },
        StreamEvent::TurnEnd {
            session_id: sid(),
            reason: TurnEndReason::WatchdogTimeout,
            stop_reason: Some(acp::StopReason::EndTurn),
        },
        StreamEvent::Error {
            session_id: Some(sid()),
            error: ErrorInfo {
                exit: Some(acp_desk_core::events::AgentExit {
                    code: Some(1),
                    signal: None,
                    stderr_tail: vec!["panic: boom".into()],
                }),
                ..ErrorInfo::new(Some(-32603), "boom", Some(json!({})))
            },
        },
        StreamEvent::Plan {
            session_id: sid(),
            title: Some("Plan".into()),
            entries: vec![acp::PlanEntry::new(
                "step",
                acp::PlanEntryPriority::High,
                acp::PlanEntryStatus::InProgress,
            )],
        },
        StreamEvent::UsageUpdate {
            session_id: sid(),
            size: 200_000,
            used: 1234,
            cost: Some(acp::Cost::new(0.5, "USD")),
            tokens_in: Some(10),
            tokens_out: Some(20),
            model: Some("m".into()),
            size_inferred: Some(true),
            reported_size: Some(100_000),
            origin: Some("task-notification".into()),
            meta: Some(meta()),
        },
        StreamEvent::Checkpoint {
            session_id: sid(),
            phase: acp_desk_core::events::CheckpointPhase::After,
            turn: Some(2),
            summary: Some(acp_desk_core::checkpoint::ChangeSummary {
                files: 3,
                added: 10,
                removed: 2,
            }),
            notes: vec!["1 file(s) over 10 MB are not in the checkpoint".into()],
            error: None,
            waited_ms: Some(12),
        },
        StreamEvent::BackgroundTask {
            session_id: sid(),
            phase: BackgroundTaskPhase::Settled,
            task: BackgroundTaskInfo {
                task_id: "bg1".into(),
                task_kind: Some("shell".into()),
                description: None,
                output_file: None,
                status: Some(BackgroundTaskStatus::Completed),
                summary: Some("done".into()),
                tool_call_id: None,
                name: Some("sleep 2".into()),
                can_stop: Some(true),
                settled_by: Some(acp_desk_core::events::TaskSettledBy::Agent),
            },
        },
        StreamEvent::Elicitation(Box::new(acp_desk_core::events::ElicitationEvent {
            session_id: sid(),
            request_id: "e1".into(),
            mode: acp_desk_core::events::ElicitationModeKind::Form,
            message: "Which colour?".into(),
            tool_call_id: Some("t1".into()),
            title: None,
            description: None,
            fields: Some(Vec::new()),
            url: None,
            host: None,
        })),
        StreamEvent::ElicitationSettled {
            session_id: sid(),
            request_id: "e1".into(),
            action: acp_desk_core::elicitation::ElicitationAction::Accept,
            by: acp_desk_core::events::SettledBy::User,
            awaiting_completion: Some(true),
        },
        StreamEvent::ElicitationComplete {
            session_id: sid(),
            request_id: "e1".into(),
        },
        StreamEvent::AvailableCommands {
            session_id: sid(),
            commands: vec![CommandInfo {
                name: "review".into(),
                description: Some("Review".into()),
                input: Some(None),
                meta: None,
            }],
        },
        StreamEvent::UserMessageDelta {
            session_id: sid(),
            text: "earlier".into(),
            content: None,
            message_id: None,
        },
        StreamEvent::SessionStatus {
            session_id: sid(),
            status: SessionState::Dead,
            detail: Some("exited".into()),
            agent: None,
        },
        StreamEvent::Modes {
            session_id: sid(),
            current_mode_id: "ask".into(),
            available_modes: vec![],
        },
        StreamEvent::CurrentMode {
            session_id: sid(),
            current_mode_id: "code".into(),
        },
        StreamEvent::ConfigOptions {
            session_id: sid(),
            config_options: vec![],
        },
        StreamEvent::SessionInfo {
            session_id: sid(),
            title: Some(None),
            updated_at: None,
        },
        StreamEvent::Notice {
            session_id: sid(),
            severity: NoticeSeverity::Warning,
            title: "t".into(),
            description: None,
            source: NoticeSource::Client,
        },
        StreamEvent::UnknownUpdate {
            session_id: sid(),
            update: json!({"sessionUpdate": "_vendor", "x": 1}),
        },
        StreamEvent::TerminalOutput {
            session_id: sid(),
            terminal_id: "term-1".into(),
            data: "ok\n".into(),
            exit_status: Some(acp::TerminalExitStatus::new().exit_code(0)),
            truncated: Some(true),
            output_byte_limit: Some(1024),
        },
        StreamEvent::FileChanged {
            session_id: sid(),
            path: "/p/a.txt".into(),
            created: true,
            via: Some(acp_desk_core::events::FileChangeVia::FsWrite),
            tool_call_id: Some("call-1".into()),
        },
        StreamEvent::SessionContinued {
            session_id: sid(),
            mode: ContinuationMode::Continue,
            outcome: ContinuationOutcome::Loaded,
            acp_session_id: Some("agent-1".into()),
            detail: Some("session/resume failed".into()),
        },
        StreamEvent::McpServers {
            session_id: sid(),
            servers: vec![acp_desk_core::mcp::McpServerReport {
                name: "docs".into(),
                transport: acp_desk_core::mcp::McpTransportKind::Http,
                source: acp_desk_core::mcp::McpSourceKind::Manifest,
                source_detail: Some("reviewer".into()),
                target: "https://mcp.example.com/mcp".into(),
                passed: false,
                reason: Some("the agent `x` does not take http MCP servers".into()),
                credential: Some("docs-token".into()),
                notes: vec![],
            }],
        },
    ]
}

#[test]
fn every_kind_is_a_seed_kind_or_a_listed_addition() {
    let added: Vec<&str> = ADDITIONS.iter().map(|(k, _)| *k).collect();
    for ev in all_events() {
        let v = to_json(&ev);
        let kind = v["kind"].as_str().unwrap();
        assert_eq!(kind, ev.kind());
        assert!(
            SEED_KINDS.contains(&kind) || added.contains(&kind),
            "{kind} is neither in the seed nor in events::ADDITIONS"
        );
        // Round trip: what the UI gets parses back to the same event.
        let back: StreamEvent = serde_json::from_value(v).unwrap();
        assert_eq!(back, ev);
    }
}

#[test]
fn seed_kinds_keep_the_seed_spelling() {
    let evs = all_events();
    let by_kind = |k: &str| {
        evs.iter()
            .map(to_json)
            .find(|v| v["kind"] == k)
            .unwrap_or_else(|| panic!("no {k}"))
    };
    assert_eq!(
        keys(&by_kind("text-delta")),
        ["kind", "messageId", "sessionId", "text"]
    );
    let tc = by_kind("tool-call");
    for k in [
        "kind",
        "sessionId",
        "toolCallId",
        "toolName",
        "arguments",
        "isUpdate",
        "_meta",
    ] {
        assert!(tc.get(k).is_some(), "tool-call lacks {k}: {tc}");
    }
    assert_eq!(tc["isUpdate"], true);
    assert_eq!(tc["toolKind"], "read");
    assert_eq!(tc["status"], "in_progress");
    assert_eq!(tc["_meta"]["vendor/x"], 1);
    assert_eq!(
        keys(&by_kind("tool-result")),
        ["isError", "kind", "result", "sessionId", "toolCallId"]
    );
    let ap = by_kind("agent-prompt");
    for k in [
        "toolCallId",
        "options",
        "text",
        "toolName",
        "rawInput",
        "_meta",
    ] {
        assert!(ap.get(k).is_some(), "agent-prompt lacks {k}: {ap}");
    }
    assert_eq!(ap["options"][0]["kind"], "allow_once");
    assert_eq!(ap["targetToolCallId"], "t1");
    // The request id is `request_id` in Rust, but the seed's `toolCallId` on the wire.
    assert_eq!(ap["toolCallId"], "t1#1");
    assert_eq!(by_kind("agent-prompt-settled")["toolCallId"], "t1#1");
    let te = by_kind("turn-end");
    assert_eq!(te["reason"], "watchdog-timeout");
    assert_eq!(te["stopReason"], "end_turn");
    let err = by_kind("error");
    assert_eq!(err["error"]["code"], -32603);
    assert_eq!(err["error"]["message"], "boom");
    let plan = by_kind("plan");
    assert_eq!(plan["entries"][0]["priority"], "high");
    assert_eq!(plan["entries"][0]["status"], "in_progress");
    let usage = by_kind("usage_update");
    for k in [
        "size",
        "used",
        "cost",
        "tokensIn",
        "tokensOut",
        "model",
        "sizeInferred",
        "reportedSize",
        "origin",
        "_meta",
    ] {
        assert!(usage.get(k).is_some(), "usage_update lacks {k}: {usage}");
    }
    assert_eq!(usage["cost"], json!({"amount": 0.5, "currency": "USD"}));
    let bg = by_kind("background-task");
    assert_eq!(bg["phase"], "settled");
    assert_eq!(bg["task"]["taskId"], "bg1");
    assert_eq!(bg["task"]["taskKind"], "shell");
    let cmds = by_kind("available-commands");
    assert_eq!(cmds["commands"][0]["name"], "review");
    assert_eq!(cmds["commands"][0]["input"], Value::Null);
}

#[test]
fn turn_end_reasons_map_from_stop_reasons() {
    use acp::StopReason::*;
    let r = TurnEndReason::from_stop_reason;
    assert_eq!(r(&EndTurn), TurnEndReason::Completed);
    assert_eq!(r(&MaxTokens), TurnEndReason::Completed);
    assert_eq!(r(&Refusal), TurnEndReason::Completed);
    assert_eq!(r(&MaxTurnRequests), TurnEndReason::MaxTurns);
    assert_eq!(r(&Cancelled), TurnEndReason::Cancelled);
    let all = [
        (TurnEndReason::Completed, "completed"),
        (TurnEndReason::Cancelled, "cancelled"),
        (TurnEndReason::MaxTurns, "max_turns"),
        (TurnEndReason::Error, "error"),
        (TurnEndReason::WatchdogTimeout, "watchdog-timeout"),
    ];
    for (r, s) in all {
        assert_eq!(serde_json::to_value(r).unwrap(), s);
    }
}

#[test]
fn permission_resolution_is_the_seeds_shape() {
    let sel: PermissionResolution =
        serde_json::from_value(json!({"optionId": "a", "feedback": "why"})).unwrap();
    assert_eq!(
        sel,
        PermissionResolution::Selected {
            option_id: "a".into(),
            feedback: Some("why".into())
        }
    );
    let c: PermissionResolution = serde_json::from_value(json!({"cancelled": true})).unwrap();
    assert_eq!(c, PermissionResolution::cancelled());
    assert_eq!(
        serde_json::to_value(&c).unwrap(),
        json!({"cancelled": true})
    );
    assert!(serde_json::from_value::<PermissionResolution>(json!({"cancelled": false})).is_err());
    assert!(serde_json::from_value::<PermissionResolution>(json!({})).is_err());
}

/// Every value the schema allows for a `kind` property, wherever it is declared.
fn schema_kinds(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            if let Some(kind) = o.get("properties").and_then(|p| p.get("kind")) {
                if let Some(c) = kind.get("const").and_then(Value::as_str) {
                    out.push(c.to_string());
                }
                for e in kind
                    .get("enum")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    out.extend(e.as_str().map(str::to_string));
                }
            }
            for child in o.values() {
                schema_kinds(child, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|c| schema_kinds(c, out)),
        _ => {}
    }
}

#[test]
fn json_schema_names_every_kind() {
    let schema = serde_json::to_value(schemars::schema_for!(StreamEvent)).unwrap();
    let mut in_schema = Vec::new();
    schema_kinds(&schema, &mut in_schema);
    in_schema.sort();
    let mut ours: Vec<String> = all_events().iter().map(|e| e.kind().to_string()).collect();
    ours.sort();
    assert_eq!(
        in_schema, ours,
        "the schema's kinds are exactly the events' kinds"
    );
    let mut listed: Vec<String> = StreamEvent::KINDS.iter().map(|k| k.to_string()).collect();
    listed.sort();
    assert_eq!(
        listed, in_schema,
        "StreamEvent::KINDS lists exactly the schema's kinds, each once"
    );
}

/// Fails to compile when a variant is added without an instance in `all_events()`.
#[allow(dead_code)]
fn every_variant_has_an_instance(e: &StreamEvent) {
    match e {
        StreamEvent::TextDelta { .. }
        | StreamEvent::Thought { .. }
        | StreamEvent::ToolCall(_)
        | StreamEvent::ToolResult { .. }
        | StreamEvent::AgentPrompt(_)
        | StreamEvent::AgentPromptSettled { .. }
        | StreamEvent::TurnStart { .. }
        | StreamEvent::TurnEnd { .. }
        | StreamEvent::Error { .. }
        | StreamEvent::Plan { .. }
        | StreamEvent::UsageUpdate { .. }
        | StreamEvent::BackgroundTask { .. }
        | StreamEvent::Checkpoint { .. }
        | StreamEvent::Elicitation(_)
        | StreamEvent::ElicitationSettled { .. }
        | StreamEvent::ElicitationComplete { .. }
        | StreamEvent::AvailableCommands { .. }
        | StreamEvent::UserMessageDelta { .. }
        | StreamEvent::SessionStatus { .. }
        | StreamEvent::Modes { .. }
        | StreamEvent::CurrentMode { .. }
        | StreamEvent::ConfigOptions { .. }
        | StreamEvent::SessionInfo { .. }
        | StreamEvent::Notice { .. }
        | StreamEvent::UnknownUpdate { .. }
        | StreamEvent::TerminalOutput { .. }
        | StreamEvent::FileChanged { .. }
        | StreamEvent::SessionContinued { .. }
        | StreamEvent::McpServers { .. } => {}
    }
}

#[test]
fn all_events_has_one_instance_of_each_variant() {
    let mut kinds: Vec<&str> = all_events().iter().map(StreamEvent::kind).collect();
    let n = kinds.len();
    kinds.sort();
    kinds.dedup();
    assert_eq!(kinds.len(), n, "one instance per kind");
    assert_eq!(
        n, 29,
        "update this count with every_variant_has_an_instance"
    );
}

#[test]
fn kept_tool_payloads_are_bounded() {
    // 400 running calls with 1 MiB of output each: every event carries its payload, but the
    // thread keeps at most 16 MiB of them.
    let mut t = Thread::new("s1");
    let big = "x".repeat(1024 * 1024);
    let mut carried = 0;
    for i in 0..400 {
        let mut out = Vec::new();
        t.apply(
            update(json!({"sessionUpdate": "tool_call", "toolCallId": format!("t{i}"), "title": "big", "rawOutput": {"text": big}})),
            &mut out,
        );
        carried += out
            .iter()
            .filter(|e| matches!(e, StreamEvent::ToolCall(c) if c.raw_output.is_some()))
            .count();
        assert!(
            t.kept_payload_bytes() <= 17 * 1024 * 1024,
            "{}",
            t.kept_payload_bytes()
        );
    }
    assert_eq!(carried, 400);
    // A call whose payload was dropped says so in its result.
    let mut out = Vec::new();
    t.apply(
        update(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t0", "status": "completed"}),
        ),
        &mut out,
    );
    let result = out
        .iter()
        .find_map(|e| match e {
            StreamEvent::ToolResult { result, .. } => Some(result.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(result["payloadDropped"], true);
}

fn update(v: Value) -> acp::SessionUpdate {
    serde_json::from_value(v).unwrap()
}

#[test]
fn tool_calls_merge_by_id_and_result_once() {
    let mut t = Thread::new("s1");
    let mut out = Vec::new();
    // claude-code-acp announces a call twice: the second is an update, not a new card.
    t.apply(
        update(json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read File", "rawInput": {}})),
        &mut out,
    );
    t.apply(
        update(json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read src/a.rs", "kind": "read", "rawInput": {"file_path": "src/a.rs"}})),
        &mut out,
    );
    t.apply(
        update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "fn a() {}"}}]})),
        &mut out,
    );
    // A late duplicate completion must not produce a second tool-result.
    t.apply(
        update(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"}),
        ),
        &mut out,
    );
    let v: Vec<Value> = out.iter().map(to_json).collect();
    assert_eq!(v[0]["isUpdate"], false);
    assert_eq!(v[1]["isUpdate"], true);
    assert_eq!(v[1]["toolName"], "Read src/a.rs");
    assert_eq!(v[2]["kind"], "tool-call");
    assert_eq!(
        v[2]["toolName"], "",
        "an untitled update carries an empty name"
    );
    assert_eq!(v[2]["arguments"], Value::Null);
    assert_eq!(v[3]["kind"], "tool-result");
    assert_eq!(v[3]["isError"], false);
    assert_eq!(v[3]["result"]["content"][0]["content"]["text"], "fn a() {}");
    assert_eq!(v.iter().filter(|e| e["kind"] == "tool-result").count(), 1);
    assert_eq!(t.tool("c1").unwrap().title(), "Read src/a.rs");
}

#[test]
fn a_permission_request_can_introduce_a_tool_call() {
    // Gemini CLI and Codex sometimes announce a call only inside the permission request.
    let mut t = Thread::new("s1");
    let mut out = Vec::new();
    let req: acp::RequestPermissionRequest = serde_json::from_value(json!({
        "sessionId": "a1",
        "toolCall": {"toolCallId": "x9", "title": "Run rm -rf build", "kind": "execute", "rawInput": {"command": "rm -rf build"}},
        "options": [
            {"optionId": "proceed_once", "name": "Yes", "kind": "allow_once"},
            {"optionId": "cancel", "name": "No", "kind": "reject_once"}
        ]
    }))
    .unwrap();
    let prompt = t.permission_request(req, "x9#1".into(), &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(to_json(&out[0])["isUpdate"], false);
    assert_eq!(prompt.target_tool_call_id, "x9");
    assert_eq!(prompt.request_id, "x9#1");
    assert_eq!(prompt.tool_name.as_deref(), Some("Run rm -rf build"));
    assert_eq!(prompt.raw_input, Some(json!({"command": "rm -rf build"})));
}

#[test]
fn unmapped_variants_pass_through() {
    let mut t = Thread::new("s1");
    let mut out = Vec::new();
    t.apply(
        update(json!({"sessionUpdate": "compaction_summary_chunk", "compactionId": "c", "content": {"type": "text", "text": "x"}})),
        &mut out,
    );
    let v = to_json(&out[0]);
    assert_eq!(v["kind"], "unknown-update");
    assert_eq!(v["update"]["sessionUpdate"], "compaction_summary_chunk");
}

#[test]
fn state_updates_map_to_their_kinds() {
    let mut t = Thread::new("s1");
    let mut out = Vec::new();
    t.apply(
        update(json!({"sessionUpdate": "current_mode_update", "currentModeId": "architect"})),
        &mut out,
    );
    t.apply(
        update(json!({"sessionUpdate": "session_info_update", "title": null})),
        &mut out,
    );
    t.apply(
        update(json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "earlier"}})),
        &mut out,
    );
    t.apply(
        update(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "resource_link", "name": "a.rs", "uri": "file:///a.rs"}})),
        &mut out,
    );
    let v: Vec<Value> = out.iter().map(to_json).collect();
    assert_eq!(
        v[0],
        json!({"kind": "current-mode", "sessionId": "s1", "currentModeId": "architect"})
    );
    // `null` clears the title; an absent field would leave it unchanged.
    assert_eq!(
        v[1],
        json!({"kind": "session-info", "sessionId": "s1", "title": null})
    );
    assert_eq!(v[2]["kind"], "user-message-delta");
    assert_eq!(v[2]["text"], "earlier");
    // Non-text blocks travel whole in `content`.
    assert_eq!(v[3]["kind"], "text-delta");
    assert_eq!(v[3]["content"]["type"], "resource_link");
    assert_eq!(v[3]["content"]["uri"], "file:///a.rs");
}

/// The `usage_update` fields that ACP or an agent's `_meta` carries are filled; the seed's
/// others stay absent (see their doc comments). The update is the shape claude-agent-acp's own
/// recorded scenarios send (`_claude/model`, `_claude/origin`).
#[test]
fn usage_updates_fill_what_the_agent_sends() {
    let mut t = Thread::new("s1");
    let mut out = Vec::new();
    t.apply(
        update(json!({
            "sessionUpdate": "usage_update", "size": 200000, "used": 2,
            "cost": {"amount": 0.5, "currency": "USD"},
            "_meta": {"_claude/model": "claude-sonnet-4-6", "_claude/origin": {"kind": "human"}}
        })),
        &mut out,
    );
    t.apply(
        update(json!({"sessionUpdate": "usage_update", "size": 1000, "used": 10})),
        &mut out,
    );
    let v: Vec<Value> = out.iter().map(to_json).collect();
    assert_eq!(
        keys(&v[0]),
        [
            "_meta",
            "cost",
            "kind",
            "model",
            "origin",
            "sessionId",
            "size",
            "used"
        ]
    );
    assert_eq!(v[0]["size"], 200000);
    assert_eq!(v[0]["used"], 2);
    assert_eq!(v[0]["cost"], json!({"amount": 0.5, "currency": "USD"}));
    assert_eq!(v[0]["model"], "claude-sonnet-4-6");
    assert_eq!(v[0]["origin"], "human");
    assert_eq!(keys(&v[1]), ["kind", "sessionId", "size", "used"]);
}

#[test]
fn terminal_output_is_spelled_as_design_md_defines_it() {
    let ev = StreamEvent::TerminalOutput {
        session_id: "s1".into(),
        terminal_id: "term-1".into(),
        data: "é\n".into(),
        exit_status: None,
        truncated: None,
        output_byte_limit: None,
    };
    assert_eq!(
        serde_json::to_value(&ev).unwrap(),
        json!({"kind": "terminal-output", "sessionId": "s1", "terminalId": "term-1", "data": "é\n"})
    );
    // The terminal's first event carries its limit.
    let first = StreamEvent::TerminalOutput {
        session_id: "s1".into(),
        terminal_id: "term-1".into(),
        data: String::new(),
        exit_status: None,
        truncated: None,
        output_byte_limit: Some(200),
    };
    assert_eq!(
        serde_json::to_value(&first).unwrap(),
        json!({"kind": "terminal-output", "sessionId": "s1", "terminalId": "term-1", "data": "",
               "outputByteLimit": 200})
    );
    let last = StreamEvent::TerminalOutput {
        session_id: "s1".into(),
        terminal_id: "term-1".into(),
        data: String::new(),
        exit_status: Some(acp::TerminalExitStatus::new().signal("SIGTERM".to_string())),
        truncated: Some(true),
        output_byte_limit: None,
    };
    assert_eq!(
        serde_json::to_value(&last).unwrap(),
        json!({"kind": "terminal-output", "sessionId": "s1", "terminalId": "term-1", "data": "",
               "exitStatus": {"signal": "SIGTERM"}, "truncated": true})
    );
    assert!(ADDITIONS.iter().any(|(k, _)| *k == "terminal-output"));
}
