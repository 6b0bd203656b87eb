//! Attaching to a session: the compacted snapshot rebuilds the same thread as the live events.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::collections::HashMap;

use acp_desk_core::compact::{Compactor, TERMINAL_KEEP_BYTES, cut_start};
use acp_desk_core::events::ToolCallEvent;
use acp_desk_core::{PermissionPolicy, StreamEvent};
use common::*;
use serde_json::Value;

/// What a UI shows, folded from events the way a UI applies them.
#[derive(Debug, Default, PartialEq)]
struct View {
    /// The thread in order: merged text runs, tool cards (by id), and other entries as JSON.
    items: Vec<String>,
    tools: HashMap<String, Value>,
    latest: HashMap<&'static str, Value>,
    title: Option<Option<String>>,
    /// Terminals by id: output kept (at most `VIEW_TERMINAL_LIMIT`), exit status, truncated.
    terminals: HashMap<String, (String, Option<Value>, bool)>,
}

/// The output a view keeps per terminal, as a UI keeps its terminal's limit. Small, so the cut
/// is exercised; any limit up to `TERMINAL_KEEP_BYTES` must fold the same.
const VIEW_TERMINAL_LIMIT: usize = 150;

/// A tool card as the contract describes it (events/tool_call.rs, "The merge rule"), stated as a query
/// over the call's events rather than as an incremental merge: each field shows the value of the
/// last event that carried one. Independent of `ToolCallEvent::merge`, which the compactor uses.
fn card(events: &[Value]) -> Value {
    let carries = |field: &str, v: &Value| match (field, v) {
        (_, Value::Null) => false,
        ("toolName", Value::String(s)) => !s.is_empty(),
        ("arguments", Value::Object(o)) => !o.is_empty(),
        _ => true,
    };
    let mut card = serde_json::Map::new();
    for field in [
        "sessionId",
        "toolCallId",
        "toolName",
        "arguments",
        "toolKind",
        "status",
        "content",
        "locations",
        "rawOutput",
        "_meta",
    ] {
        let last = events
            .iter()
            .filter_map(|e| e.get(field))
            .rfind(|v| carries(field, v));
        if let Some(v) = last {
            card.insert(field.into(), v.clone());
        }
    }
    Value::Object(card)
}

fn fold(events: &[StreamEvent]) -> View {
    let mut v = View::default();
    let mut calls: HashMap<String, Vec<Value>> = HashMap::new();
    let mut last_run: Option<(String, Option<String>)> = None;
    for ev in events {
        let run = match ev {
            StreamEvent::TextDelta {
                text, message_id, ..
            } => Some(("text", text, message_id)),
            StreamEvent::Thought {
                text, message_id, ..
            } => Some(("thought", text, message_id)),
            StreamEvent::UserMessageDelta {
                text, message_id, ..
            } => Some(("user", text, message_id)),
            _ => None,
        };
        if let Some((kind, text, id)) = run {
            let key = (kind.to_string(), id.clone());
            if last_run.as_ref() == Some(&key) {
                v.items.last_mut().unwrap().push_str(text);
            } else {
                v.items.push(format!("{kind}:{text}"));
                last_run = Some(key);
            }
            continue;
        }
        match ev {
            StreamEvent::TerminalOutput {
                terminal_id,
                data,
                exit_status,
                truncated,
                ..
            } => {
                let t = v.terminals.entry(terminal_id.clone()).or_insert_with(|| {
                    v.items.push(format!("term:{terminal_id}"));
                    last_run = None;
                    Default::default()
                });
                t.0.push_str(data);
                if cut_start(&mut t.0, VIEW_TERMINAL_LIMIT) || *truncated == Some(true) {
                    t.2 = true;
                }
                if let Some(s) = exit_status {
                    t.1 = Some(serde_json::to_value(s).unwrap());
                }
            }
            StreamEvent::ToolCall(tc) => {
                let seen = calls.entry(tc.tool_call_id.clone()).or_insert_with(|| {
                    v.items.push(format!("tool:{}", tc.tool_call_id));
                    last_run = None;
                    Vec::new()
                });
                seen.push(serde_json::to_value(tc).unwrap());
            }
            StreamEvent::Plan { .. }
            | StreamEvent::UsageUpdate { .. }
            | StreamEvent::AvailableCommands { .. }
            | StreamEvent::SessionStatus { .. }
            | StreamEvent::Modes { .. }
            | StreamEvent::CurrentMode { .. }
            | StreamEvent::ConfigOptions { .. } => {
                v.latest
                    .insert(ev.kind(), serde_json::to_value(ev).unwrap());
            }
            StreamEvent::SessionInfo { title, .. } => {
                if title.is_some() {
                    v.title = title.clone();
                }
            }
            other => {
                v.items.push(serde_json::to_string(other).unwrap());
                last_run = None;
            }
        }
    }
    for (id, events) in calls {
        v.tools.insert(id, card(&events));
    }
    v
}

/// A view that attaches at several points (the snapshot so far, then the rest live) folds the
/// same thread as one that saw every event.
fn attaching_mid_stream_folds_the_same(live: &[StreamEvent]) {
    for cut in [1, live.len() / 3, live.len() / 2, live.len() - 1] {
        let mut c = Compactor::new();
        for ev in &live[..cut] {
            c.apply(ev);
        }
        let mut attached = c.snapshot();
        attached.extend_from_slice(&live[cut..]);
        assert_eq!(fold(&attached), fold(live), "cut at {cut}");
    }
}

async fn live_events(prompts: &[&str]) -> Vec<StreamEvent> {
    run(&[], PermissionPolicy::AllowOnce, prompts).await
}

#[tokio::test]
async fn the_snapshot_rebuilds_the_same_thread_in_far_fewer_events() {
    let live = live_events(&[
        "stream",
        "plan",
        "edit",
        "permission",
        "usage",
        "unknown-update",
    ])
    .await;
    let mut c = Compactor::new();
    for ev in &live {
        c.apply(ev);
    }
    let snap = c.snapshot();
    assert_eq!(snap.len(), c.len());
    assert_eq!(fold(&snap), fold(&live));
    assert!(
        snap.len() * 3 < live.len(),
        "{} live events compacted only to {}",
        live.len(),
        snap.len()
    );
    // One event per tool call, announcing it, at its latest state.
    let calls: Vec<&ToolCallEvent> = snap
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCall(t) => Some(&**t),
            _ => None,
        })
        .collect();
    let mut ids: Vec<&str> = calls.iter().map(|t| t.tool_call_id.as_str()).collect();
    ids.sort();
    let n = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), n);
    assert!(calls.iter().all(|t| !t.is_update));
    // Compacting a snapshot again (a re-attach of a re-attach) keeps the same thread.
    let mut again = Compactor::new();
    for ev in &snap {
        again.apply(ev);
    }
    assert!(again.len() <= snap.len());
    assert_eq!(fold(&again.snapshot()), fold(&snap));
}

#[tokio::test]
async fn a_snapshot_taken_mid_stream_plus_the_rest_equals_the_whole() {
    let live = live_events(&["stream", "edit", "plan"]).await;
    attaching_mid_stream_folds_the_same(&live);
}

#[test]
fn replaced_state_does_not_pile_up() {
    let mut c = Compactor::new();
    for i in 0..10_000u64 {
        c.apply(&StreamEvent::UsageUpdate {
            session_id: "s".into(),
            size: 100,
            used: i,
            cost: None,
            tokens_in: None,
            tokens_out: None,
            model: None,
            size_inferred: None,
            reported_size: None,
            origin: None,
            meta: None,
        });
    }
    assert_eq!(c.len(), 1);
    let snap = c.snapshot();
    assert!(matches!(
        snap[0],
        StreamEvent::UsageUpdate { used: 9_999, .. }
    ));
}

#[tokio::test]
async fn terminal_output_merges_per_terminal_and_folds_the_same() {
    let live = live_events(&["stream", "terminal", "files", "plan"]).await;
    let deltas = live
        .iter()
        .filter(|e| matches!(e, StreamEvent::TerminalOutput { .. }))
        .count();
    let mut c = Compactor::new();
    for ev in &live {
        c.apply(ev);
    }
    let snap = c.snapshot();
    assert_eq!(fold(&snap), fold(&live));
    // One event per terminal that sent any, carrying its exit status.
    let terms: Vec<&StreamEvent> = snap
        .iter()
        .filter(|e| matches!(e, StreamEvent::TerminalOutput { .. }))
        .collect();
    assert!(
        terms.len() < deltas,
        "{} deltas, {} merged",
        deltas,
        terms.len()
    );
    let mut ids: Vec<String> = terms
        .iter()
        .map(|e| match e {
            StreamEvent::TerminalOutput {
                terminal_id,
                exit_status,
                ..
            } => {
                assert!(exit_status.is_some(), "{terminal_id} lost its exit status");
                terminal_id.clone()
            }
            _ => unreachable!(),
        })
        .collect();
    let n = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n);
    // Attaching mid-stream, terminals included.
    attaching_mid_stream_folds_the_same(&live);
}

fn term(id: &str, data: &str) -> StreamEvent {
    StreamEvent::TerminalOutput {
        session_id: "s".into(),
        terminal_id: id.into(),
        data: data.into(),
        exit_status: None,
        truncated: None,
        output_byte_limit: None,
    }
}

#[test]
fn interleaved_terminals_coalesce_per_terminal_within_a_frame() {
    // What the hub's per-frame compactor does with a burst from two terminals.
    let mut c = Compactor::new();
    for i in 0..100 {
        c.apply(&term("a", &format!("a{i} ")));
        c.apply(&term("b", &format!("b{i} ")));
    }
    let snap = c.snapshot();
    assert_eq!(snap.len(), 2);
    let StreamEvent::TerminalOutput {
        data, truncated, ..
    } = &snap[0]
    else {
        panic!("not a terminal event")
    };
    assert!(data.starts_with("a0 a1 ") && data.ends_with("a99 "));
    assert_eq!(*truncated, None);
}

#[test]
fn merged_terminal_output_is_bounded_and_cut_at_a_character_boundary() {
    let mut c = Compactor::new();
    // 20 MiB of two-byte characters, in deltas of an odd byte count (a char never splits
    // across events, but the cut point falls mid-character unless adjusted).
    let chunk = format!("x{}", "é".repeat(512 * 1024));
    let mut whole = String::new();
    for _ in 0..20 {
        c.apply(&term("t", &chunk));
        whole.push_str(&chunk);
    }
    let snap = c.snapshot();
    let StreamEvent::TerminalOutput {
        data, truncated, ..
    } = &snap[0]
    else {
        panic!("not a terminal event")
    };
    assert!(data.len() <= TERMINAL_KEEP_BYTES);
    assert!(data.len() > TERMINAL_KEEP_BYTES - 4);
    assert!(whole.ends_with(data.as_str()));
    assert_eq!(*truncated, Some(true));
}

#[test]
fn a_terminal_keeps_its_own_limit_and_a_flood_stays_bounded() {
    const LIMIT: usize = 1024 * 1024;
    const DELTA: usize = 64 * 1024;
    // 100 MB through a terminal whose limit is 1 MiB.
    const DELTAS: usize = 100 * 1024 * 1024 / DELTA;
    let delta = |i: usize| {
        let tag = format!("<{i:07}>");
        tag.repeat(DELTA / tag.len())
    };
    let mut c = Compactor::new();
    let mut first = term("t", "start\n");
    if let StreamEvent::TerminalOutput {
        output_byte_limit, ..
    } = &mut first
    {
        *output_byte_limit = Some(LIMIT as u64);
    }
    c.apply(&first);
    for i in 0..DELTAS {
        c.apply(&term("t", &delta(i)));
        assert!(
            c.terminal_bytes() <= 2 * LIMIT + DELTA,
            "{} bytes held after delta {i}",
            c.terminal_bytes()
        );
    }
    // The tail: the last deltas, cut to the limit.
    let mut tail = String::new();
    for i in (0..DELTAS).rev() {
        tail.insert_str(0, &delta(i));
        if tail.len() >= LIMIT {
            break;
        }
    }
    cut_start(&mut tail, LIMIT);
    let snap = c.snapshot();
    let StreamEvent::TerminalOutput {
        data,
        truncated,
        output_byte_limit,
        ..
    } = &snap[0]
    else {
        panic!("not a terminal event")
    };
    assert_eq!(data.len(), LIMIT);
    assert!(*data == tail, "the snapshot is not the output's tail");
    assert_eq!(*truncated, Some(true));
    assert_eq!(
        *output_byte_limit,
        Some(LIMIT as u64),
        "the limit stays on the event"
    );
}
