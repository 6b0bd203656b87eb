use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use acp_desk_core::StreamEvent;
use acp_desk_core::error_kind::ErrorKind;
use acp_desk_core::events::{AgentPromptEvent, TurnEndReason};
use acp_desk_core::schema::v1 as acp;
use acp_desk_core::settings::Notifications;
use acp_desk_store::{LaunchOrigin, StoredLaunch};

use super::policy::{Input, Output, Policy, SessionRef};
use super::*;
use crate::observer::{Observer, SessionStatus};
use crate::registry::SessionInfo;

const ON: Switches = Switches {
    permission_requests: true,
    turn_end: true,
};

/// The recorded claude-code-acp session whose shell call is titled with its command line.
const CLAUDE_ALLOW_RUN: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/real-agents/transcripts/claude-code-acp-allow-run.jsonl"
));

fn session(id: &str, folder: &str) -> SessionRef {
    SessionRef {
        session_id: id.into(),
        agent: "claude".into(),
        folder: PathBuf::from(folder),
        folder_name: text::folder_name(std::path::Path::new(folder)),
    }
}

fn info(id: &str, agent: &str, folder: &str, origin: LaunchOrigin, program: &str) -> SessionInfo {
    SessionInfo {
        id: id.into(),
        folder: PathBuf::from(folder),
        agent: agent.into(),
        launch: StoredLaunch {
            origin,
            program: program.into(),
            args: Vec::new(),
            args_redacted: false,
            env_names: Vec::new(),
        },
    }
}

fn options() -> Vec<acp::PermissionOption> {
    vec![
        acp::PermissionOption::new(
            "always",
            "Always Allow",
            acp::PermissionOptionKind::AllowAlways,
        ),
        acp::PermissionOption::new("once", "Allow", acp::PermissionOptionKind::AllowOnce),
        acp::PermissionOption::new(
            "never",
            "Always Reject",
            acp::PermissionOptionKind::RejectAlways,
        ),
        acp::PermissionOption::new("no", "Reject", acp::PermissionOptionKind::RejectOnce),
    ]
}

fn prompt(
    request_id: &str,
    kind: Option<acp::ToolKind>,
    title: &str,
    options: Vec<acp::PermissionOption>,
) -> AgentPromptEvent {
    AgentPromptEvent {
        session_id: "engine-id".into(),
        request_id: request_id.into(),
        options,
        // As the engine words them (thread.rs): the dialog's question, and the call's title
        // (`None` when it has none).
        text: Some(if title.is_empty() {
            "Allow this tool call?".into()
        } else {
            format!("Allow {title}?")
        }),
        tool_name: (!title.is_empty()).then(|| title.into()),
        raw_input: Some(serde_json::json!({ "command": title })),
        meta: None,
        target_tool_call_id: request_id.split('#').next().unwrap_or(request_id).into(),
        tool_kind: kind,
        content: None,
        locations: None,
    }
}

fn read(request_id: &str, title: &str) -> WaitingRequest {
    text::request(&prompt(
        request_id,
        Some(acp::ToolKind::Read),
        title,
        options(),
    ))
}

fn run_cmd(request_id: &str) -> WaitingRequest {
    text::request(&prompt(
        request_id,
        Some(acp::ToolKind::Execute),
        "rm -rf build",
        options(),
    ))
}

fn arrive(id: &str, request: WaitingRequest) -> Input {
    Input::RequestArrived {
        session: session(id, "/home/u/proj"),
        request,
    }
}

fn settled(id: &str, request_id: &str) -> Input {
    Input::Settled {
        session_id: id.into(),
        request_id: request_id.into(),
    }
}

fn unfocused() -> Policy {
    let mut p = Policy::new(ON, NOTIFY_DELAY);
    p.handle(Input::FocusChanged { focused: false }, Instant::now());
    p
}

fn shows(out: &[Output]) -> Vec<&Notification> {
    out.iter()
        .filter_map(|o| match o {
            Output::Show(n) => Some(n),
            _ => None,
        })
        .collect()
}

fn withdrawn(out: &[Output]) -> Vec<&str> {
    out.iter()
        .filter_map(|o| match o {
            Output::Withdraw(s) => Some(s.as_str()),
            _ => None,
        })
        .collect()
}

fn waiting_changes(out: &[Output]) -> Vec<&Waiting> {
    out.iter()
        .filter_map(|o| match o {
            Output::WaitingChanged(w) => Some(w),
            _ => None,
        })
        .collect()
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

// ---- delay ----

#[test]
fn a_request_notifies_after_the_delay_and_not_before() {
    let t0 = Instant::now();
    let mut p = unfocused();
    let out = p.handle(arrive("s1", run_cmd("a#1")), t0);
    assert!(shows(&out).is_empty());
    assert_eq!(p.next_deadline(), Some(t0 + NOTIFY_DELAY));
    assert!(shows(&p.handle(Input::Tick, t0 + ms(1900))).is_empty());
    let out = p.handle(Input::Tick, t0 + ms(2000));
    let n = shows(&out);
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].session_id, "s1");
    assert_eq!(n[0].summary, "claude in proj");
    assert_eq!(n[0].body, "wants to run a command in proj");
    assert_eq!(
        n[0].about,
        NotificationAbout::Permission {
            request_id: "a#1".into()
        }
    );
    // Once: later ticks show nothing more, and nothing is due any more.
    assert!(shows(&p.handle(Input::Tick, t0 + ms(5000))).is_empty());
    assert_eq!(p.next_deadline(), None);
}

#[test]
fn a_request_settled_within_the_delay_never_notifies() {
    let t0 = Instant::now();
    let mut p = unfocused();
    p.handle(arrive("s1", run_cmd("a#1")), t0);
    let out = p.handle(settled("s1", "a#1"), t0 + ms(10));
    assert!(withdrawn(&out).is_empty(), "nothing was on screen");
    assert_eq!(waiting_changes(&out), vec![&Waiting::default()]);
    assert_eq!(p.next_deadline(), None);
    assert!(shows(&p.handle(Input::Tick, t0 + ms(3000))).is_empty());
}

// ---- focus ----

#[test]
fn nothing_notifies_while_focused() {
    let t0 = Instant::now();
    let mut p = Policy::new(ON, NOTIFY_DELAY);
    p.handle(Input::FocusChanged { focused: true }, t0);
    p.handle(arrive("s1", run_cmd("a#1")), t0);
    assert_eq!(p.next_deadline(), None);
    assert!(shows(&p.handle(Input::Tick, t0 + ms(10_000))).is_empty());
    // ...but it is waiting: the tray shows it.
    assert_eq!(p.waiting().total(), 1);
}

#[test]
fn losing_focus_later_notifies_a_request_still_waiting_then() {
    let t0 = Instant::now();
    let mut p = Policy::new(ON, NOTIFY_DELAY);
    p.handle(Input::FocusChanged { focused: true }, t0);
    p.handle(arrive("s1", run_cmd("a#1")), t0);
    let out = p.handle(Input::FocusChanged { focused: false }, t0 + ms(9000));
    assert_eq!(shows(&out).len(), 1);
}

#[test]
fn losing_focus_before_the_delay_waits_for_the_rest_of_it() {
    let t0 = Instant::now();
    let mut p = Policy::new(ON, NOTIFY_DELAY);
    p.handle(Input::FocusChanged { focused: true }, t0);
    p.handle(arrive("s1", run_cmd("a#1")), t0);
    assert!(shows(&p.handle(Input::FocusChanged { focused: false }, t0 + ms(500))).is_empty());
    assert_eq!(p.next_deadline(), Some(t0 + NOTIFY_DELAY));
    assert_eq!(shows(&p.handle(Input::Tick, t0 + NOTIFY_DELAY)).len(), 1);
}

#[test]
fn focus_regained_does_not_withdraw() {
    let t0 = Instant::now();
    let mut p = unfocused();
    p.handle(arrive("s1", run_cmd("a#1")), t0);
    assert_eq!(shows(&p.handle(Input::Tick, t0 + NOTIFY_DELAY)).len(), 1);
    let out = p.handle(Input::FocusChanged { focused: true }, t0 + ms(3000));
    assert!(out.is_empty(), "{out:?}");
    // Answered in the window, it goes.
    let out = p.handle(settled("s1", "a#1"), t0 + ms(4000));
    assert_eq!(withdrawn(&out), vec!["s1"]);
}

#[test]
fn the_policy_starts_unfocused() {
    let t0 = Instant::now();
    let mut p = Policy::new(ON, NOTIFY_DELAY);
    p.handle(arrive("s1", run_cmd("a#1")), t0);
    assert_eq!(shows(&p.handle(Input::Tick, t0 + NOTIFY_DELAY)).len(), 1);
}

// ---- replacement ----

#[test]
fn a_newer_request_replaces_the_sessions_notification_with_and_n_more() {
    let t0 = Instant::now();
    let mut p = unfocused();
    p.handle(arrive("s1", run_cmd("a#1")), t0);
    assert_eq!(shows(&p.handle(Input::Tick, t0 + ms(2000))).len(), 1);
    p.handle(arrive("s1", run_cmd("b#1")), t0 + ms(2500));
    p.handle(arrive("s1", read("c#1", "Read README.md")), t0 + ms(2600));
    let out = p.handle(Input::Tick, t0 + ms(4500));
    let n = shows(&out);
    assert_eq!(n.len(), 1, "{out:?}");
    assert_eq!(n[0].session_id, "s1", "same session: it replaces");
    // "and N more" counts every other request waiting there, due or not.
    assert_eq!(n[0].body, "wants to run a command in proj and 2 more");
    let out = p.handle(Input::Tick, t0 + ms(4600));
    let n = shows(&out);
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].session_id, "s1");
    assert_eq!(n[0].body, "Read README.md and 2 more");
    assert_eq!(
        n[0].about,
        NotificationAbout::Permission {
            request_id: "c#1".into()
        }
    );
    assert!(withdrawn(&out).is_empty(), "replaced, not withdrawn");
}

#[test]
fn requests_due_together_make_one_notification() {
    let t0 = Instant::now();
    let mut p = Policy::new(ON, NOTIFY_DELAY);
    p.handle(Input::FocusChanged { focused: true }, t0);
    p.handle(arrive("s1", run_cmd("a#1")), t0);
    p.handle(arrive("s1", run_cmd("b#1")), t0 + ms(100));
    p.handle(arrive("s1", run_cmd("c#1")), t0 + ms(200));
    let out = p.handle(Input::FocusChanged { focused: false }, t0 + ms(5000));
    let n = shows(&out);
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].body, "wants to run a command in proj and 2 more");
}

// ---- answered, closed ----

#[test]
fn answering_one_of_several_shrinks_waiting_and_keeps_the_notification() {
    let t0 = Instant::now();
    let mut p = unfocused();
    p.handle(arrive("s1", run_cmd("a#1")), t0);
    p.handle(arrive("s1", run_cmd("b#1")), t0 + ms(10));
    p.handle(Input::Tick, t0 + ms(3000));
    let out = p.handle(settled("s1", "a#1"), t0 + ms(4000));
    let w = waiting_changes(&out);
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].total(), 1);
    assert_eq!(w[0].sessions[0].requests[0].request_id, "b#1");
    assert!(withdrawn(&out).is_empty());
    assert!(shows(&out).is_empty(), "b#1 is the one on screen still");
    let out = p.handle(settled("s1", "b#1"), t0 + ms(5000));
    assert_eq!(withdrawn(&out), vec!["s1"]);
    assert!(waiting_changes(&out)[0].is_empty());
}

#[test]
fn answering_the_request_the_notification_names_moves_it_to_another() {
    let t0 = Instant::now();
    let mut p = unfocused();
    p.handle(arrive("s1", read("a#1", "Read a.txt")), t0);
    p.handle(arrive("s1", read("b#1", "Read b.txt")), t0 + ms(10));
    p.handle(Input::Tick, t0 + ms(3000));
    let out = p.handle(settled("s1", "b#1"), t0 + ms(4000));
    let n = shows(&out);
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].body, "Read a.txt");
    assert!(n[0].actions.iter().all(|a| match a {
        NotificationAction::Show => true,
        NotificationAction::Allow { request_id, .. }
        | NotificationAction::Reject { request_id, .. } => request_id == "a#1",
    }));
}

#[test]
fn answering_the_named_one_withdraws_when_the_rest_has_not_notified_yet() {
    let t0 = Instant::now();
    let mut p = unfocused();
    p.handle(arrive("s1", run_cmd("a#1")), t0);
    p.handle(Input::Tick, t0 + ms(2000));
    p.handle(arrive("s1", run_cmd("b#1")), t0 + ms(2100));
    let out = p.handle(settled("s1", "a#1"), t0 + ms(2200));
    assert_eq!(withdrawn(&out), vec!["s1"]);
    // b#1 notifies on its own when due.
    let n = p.handle(Input::Tick, t0 + ms(4100));
    assert_eq!(shows(&n)[0].body, "wants to run a command in proj");
}

#[test]
fn a_settled_request_of_another_session_or_unknown_changes_nothing() {
    let t0 = Instant::now();
    let mut p = unfocused();
    p.handle(arrive("s1", run_cmd("a#1")), t0);
    assert!(p.handle(settled("s2", "a#1"), t0).is_empty());
    assert!(p.handle(settled("s1", "zzz"), t0).is_empty());
    assert_eq!(p.waiting().total(), 1);
}

#[test]
fn a_repeated_request_id_is_not_a_second_request() {
    let t0 = Instant::now();
    let mut p = unfocused();
    p.handle(arrive("s1", run_cmd("a#1")), t0);
    assert!(
        p.handle(arrive("s1", run_cmd("a#1")), t0 + ms(5))
            .is_empty()
    );
    assert_eq!(p.waiting().total(), 1);
}

#[test]
fn a_closed_session_is_withdrawn_and_leaves_waiting() {
    let t0 = Instant::now();
    let mut p = unfocused();
    p.handle(arrive("s1", run_cmd("a#1")), t0);
    p.handle(arrive("s2", run_cmd("b#1")), t0);
    p.handle(Input::Tick, t0 + NOTIFY_DELAY);
    let out = p.handle(
        Input::SessionClosed {
            session_id: "s1".into(),
        },
        t0 + ms(3000),
    );
    assert_eq!(withdrawn(&out), vec!["s1"]);
    let w = waiting_changes(&out);
    assert_eq!(w[0].sessions.len(), 1);
    assert_eq!(w[0].sessions[0].session_id, "s2");
}

#[test]
fn a_dead_session_withdraws_its_permission_notification() {
    let t0 = Instant::now();
    let mut p = unfocused();
    p.handle(arrive("s1", run_cmd("a#1")), t0);
    p.handle(Input::Tick, t0 + NOTIFY_DELAY);
    let out = p.handle(
        Input::SessionDead {
            session_id: "s1".into(),
        },
        t0 + ms(3000),
    );
    assert_eq!(withdrawn(&out), vec!["s1"]);
    assert!(p.waiting().is_empty());
    assert_eq!(p.next_deadline(), None);
}

#[test]
fn a_session_closed_before_its_request_was_due_never_notifies() {
    let t0 = Instant::now();
    let mut p = unfocused();
    p.handle(arrive("s1", run_cmd("a#1")), t0);
    let out = p.handle(
        Input::SessionClosed {
            session_id: "s1".into(),
        },
        t0 + ms(100),
    );
    assert!(withdrawn(&out).is_empty());
    assert!(shows(&p.handle(Input::Tick, t0 + ms(3000))).is_empty());
}

// ---- sessions ----

#[test]
fn two_sessions_make_two_notifications() {
    let t0 = Instant::now();
    let mut p = unfocused();
    p.handle(arrive("s1", run_cmd("a#1")), t0);
    p.handle(
        Input::RequestArrived {
            session: session("s2", "/home/u/other"),
            request: read("b#1", "Read notes.md"),
        },
        t0 + ms(10),
    );
    let out = p.handle(Input::Tick, t0 + ms(2010));
    let n = shows(&out);
    assert_eq!(n.len(), 2);
    assert_eq!(n[0].session_id, "s1");
    assert_eq!(n[1].session_id, "s2");
    assert_eq!(n[1].summary, "claude in other");
    assert_eq!(n[1].body, "Read notes.md");
}

#[test]
fn waiting_keeps_sessions_in_the_order_their_first_request_came() {
    let t0 = Instant::now();
    let mut p = unfocused();
    p.handle(arrive("s2", run_cmd("a#1")), t0);
    p.handle(arrive("s1", run_cmd("b#1")), t0);
    let out = p.handle(arrive("s2", run_cmd("c#1")), t0);
    let w = waiting_changes(&out)[0];
    assert_eq!(w.total(), 3);
    let ids: Vec<&str> = w.sessions.iter().map(|s| s.session_id.as_str()).collect();
    assert_eq!(ids, vec!["s2", "s1"]);
    assert_eq!(w.sessions[0].folder_name, "proj");
    assert_eq!(w.sessions[0].agent, "claude");
    // s2 empties and comes back: now after s1.
    p.handle(settled("s2", "a#1"), t0);
    p.handle(settled("s2", "c#1"), t0);
    p.handle(arrive("s2", run_cmd("d#1")), t0);
    let ids: Vec<String> = p
        .waiting()
        .sessions
        .into_iter()
        .map(|s| s.session_id)
        .collect();
    assert_eq!(ids, vec!["s1", "s2"]);
}

// ---- switches ----

#[test]
fn permission_switch_off_notifies_nothing_but_keeps_waiting() {
    let t0 = Instant::now();
    let off = Switches {
        permission_requests: false,
        turn_end: true,
    };
    let mut p = Policy::new(off, NOTIFY_DELAY);
    let out = p.handle(arrive("s1", run_cmd("a#1")), t0);
    assert_eq!(waiting_changes(&out)[0].total(), 1);
    assert_eq!(p.next_deadline(), None);
    assert!(shows(&p.handle(Input::Tick, t0 + ms(10_000))).is_empty());
}

#[test]
fn switching_permissions_off_withdraws_what_is_shown() {
    let t0 = Instant::now();
    let mut p = unfocused();
    p.handle(arrive("s1", run_cmd("a#1")), t0);
    p.handle(Input::Tick, t0 + NOTIFY_DELAY);
    let out = p.handle(
        Input::Switches(Switches {
            permission_requests: false,
            turn_end: true,
        }),
        t0 + ms(3000),
    );
    assert_eq!(withdrawn(&out), vec!["s1"]);
}

#[test]
fn turn_end_switch_off_notifies_no_turn_end() {
    let mut p = Policy::new(
        Switches {
            permission_requests: true,
            turn_end: false,
        },
        NOTIFY_DELAY,
    );
    let out = p.handle(
        Input::TurnEnded {
            session: session("s1", "/home/u/proj"),
            text: "finished",
        },
        Instant::now(),
    );
    assert!(out.is_empty());
}

#[test]
fn switches_come_from_the_settings() {
    let s = Switches::from(&Notifications {
        permission_requests: false,
        turn_end: true,
    });
    assert_eq!(
        s,
        Switches {
            permission_requests: false,
            turn_end: true
        }
    );
    assert_eq!(Switches::default(), ON);
}

// ---- turn end ----

#[test]
fn a_turn_end_notifies_only_while_unfocused() {
    let t0 = Instant::now();
    let mut p = Policy::new(ON, NOTIFY_DELAY);
    p.handle(Input::FocusChanged { focused: true }, t0);
    let end = || Input::TurnEnded {
        session: session("s1", "/home/u/proj"),
        text: "finished",
    };
    assert!(p.handle(end(), t0).is_empty());
    p.handle(Input::FocusChanged { focused: false }, t0);
    let out = p.handle(end(), t0);
    let n = shows(&out);
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].summary, "claude in proj");
    assert_eq!(n[0].body, "finished");
    assert_eq!(n[0].actions, vec![NotificationAction::Show]);
    assert_eq!(n[0].about, NotificationAbout::TurnEnded);
}

#[test]
fn a_turn_end_does_not_replace_a_permission_notification_still_relevant() {
    let t0 = Instant::now();
    let mut p = unfocused();
    p.handle(arrive("s1", run_cmd("a#1")), t0);
    p.handle(Input::Tick, t0 + NOTIFY_DELAY);
    let out = p.handle(
        Input::TurnEnded {
            session: session("s1", "/home/u/proj"),
            text: "stopped",
        },
        t0 + ms(3000),
    );
    assert!(out.is_empty(), "{out:?}");
}

#[test]
fn a_request_replaces_a_turn_end_notification_and_closing_withdraws_it() {
    let t0 = Instant::now();
    let mut p = unfocused();
    p.handle(
        Input::TurnEnded {
            session: session("s1", "/home/u/proj"),
            text: "finished",
        },
        t0,
    );
    // A dead session keeps its turn-end notification: it still says what happened.
    let out = p.handle(
        Input::SessionDead {
            session_id: "s1".into(),
        },
        t0,
    );
    assert!(withdrawn(&out).is_empty());
    let out = p.handle(
        Input::SessionClosed {
            session_id: "s1".into(),
        },
        t0,
    );
    assert_eq!(withdrawn(&out), vec!["s1"]);
}

#[test]
fn turn_end_texts_are_generic() {
    use TurnEndReason as R;
    assert_eq!(
        text::turn_end(R::Completed, Some(acp::StopReason::EndTurn), None),
        "finished"
    );
    assert_eq!(text::turn_end(R::Completed, None, None), "finished");
    assert_eq!(
        text::turn_end(R::Completed, Some(acp::StopReason::MaxTokens), None),
        "stopped: max tokens"
    );
    assert_eq!(
        text::turn_end(R::Completed, Some(acp::StopReason::Refusal), None),
        "stopped: the agent refused"
    );
    assert_eq!(text::turn_end(R::Cancelled, None, None), "stopped");
    assert_eq!(
        text::turn_end(R::MaxTurns, Some(acp::StopReason::MaxTurnRequests), None),
        "stopped: too many steps"
    );
    assert_eq!(
        text::turn_end(R::WatchdogTimeout, None, None),
        "failed: the agent stopped responding"
    );
    assert_eq!(text::turn_end(R::Error, None, None), "failed");
    assert_eq!(
        text::turn_end(R::Error, None, Some(ErrorKind::RateLimit)),
        "failed: rate limited"
    );
    for kind in ErrorKind::ALL {
        let t = text::turn_end(R::Error, None, Some(*kind));
        assert!(t.starts_with("failed"), "{kind:?}: {t}");
    }
}

// ---- text per kind ----

/// Every `ToolKind` of the pinned schema, and no kind.
const KINDS: &[(Option<acp::ToolKind>, &str, bool)] = &[
    (Some(acp::ToolKind::Read), "Read README.md", true),
    (Some(acp::ToolKind::Search), "Read README.md", true),
    (Some(acp::ToolKind::Fetch), "Read README.md", true),
    (Some(acp::ToolKind::Think), "Read README.md", true),
    (
        Some(acp::ToolKind::Execute),
        "wants to run a command",
        false,
    ),
    (Some(acp::ToolKind::Edit), "wants to edit a file", false),
    (Some(acp::ToolKind::Delete), "wants to delete a file", false),
    (Some(acp::ToolKind::Move), "wants to move a file", false),
    (
        Some(acp::ToolKind::SwitchMode),
        "wants to switch mode",
        false,
    ),
    (Some(acp::ToolKind::Other), "wants to use a tool", false),
    (None, "wants to use a tool", false),
];

#[test]
fn the_line_per_kind() {
    for (kind, line, read_only) in KINDS {
        let r = text::request(&prompt("x#1", *kind, "Read README.md", options()));
        assert_eq!(r.line, *line, "{kind:?}");
        assert_eq!(matches!(r.kind, RequestKind::ReadOnly(_)), *read_only);
        assert_eq!(
            r.allow_option_id.is_some(),
            *read_only,
            "Allow only for read-only kinds: {kind:?}"
        );
        assert_eq!(r.reject_option_id.as_deref(), Some("no"), "{kind:?}");
    }
}

#[test]
fn every_kind_of_the_schema_is_listed() {
    // Every kind the wire can carry, as the schema spells them: a kind added to the pinned
    // schema fails here until it is placed (the `_` arm makes it sensitive meanwhile).
    let schema = serde_json::to_value(schemars::schema_for!(acp::ToolKind)).unwrap_or_default();
    let mut names: Vec<String> = Vec::new();
    collect_enum_strings(&schema, &mut names);
    let mut listed: Vec<String> = KINDS
        .iter()
        .filter_map(|(k, _, _)| k.as_ref())
        .map(|k| {
            serde_json::to_value(k)
                .unwrap_or_default()
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    names.sort();
    listed.sort();
    assert!(!names.is_empty(), "{schema}");
    assert_eq!(names, listed);
}

fn collect_enum_strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(o) => {
            for (k, v) in o {
                if k == "const"
                    && let Some(s) = v.as_str()
                {
                    out.push(s.to_owned());
                } else if k == "enum"
                    && let Some(a) = v.as_array()
                {
                    out.extend(a.iter().filter_map(|s| s.as_str().map(str::to_owned)));
                } else {
                    collect_enum_strings(v, out);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| collect_enum_strings(v, out)),
        _ => {}
    }
}

#[test]
fn a_read_only_call_without_a_title_shows_its_kind_and_no_allow() {
    let mut p = prompt("x#1", Some(acp::ToolKind::Read), "", options());
    let r = text::request(&p);
    assert_eq!(r.line, "wants to read a file");
    assert_eq!(r.allow_option_id, None);
    // The engine's question is worded even without a title: it must not become the line.
    assert_eq!(p.text.as_deref(), Some("Allow this tool call?"));
    p.text = None;
    assert_eq!(text::request(&p).line, "wants to read a file");
    let n = text::permission_body(&r, "proj", 0);
    assert_eq!(n, "wants to read a file in proj");
}

#[test]
fn a_title_is_one_line_trimmed_and_capped() {
    let shown = |t: &str| text::title_line(t).map(|t| t.shown);
    let whole = |t: &str| text::title_line(t).map(|t| t.whole);
    assert_eq!(
        shown("  Read a.txt\nand then\u{1b}[31m more ").as_deref(),
        Some("Read a.txt")
    );
    assert_eq!(whole("  Read a.txt\nand then more "), Some(false));
    assert_eq!(
        shown("Read\t\u{202e}a  b\u{7}").as_deref(),
        Some("Read a b")
    );
    assert_eq!(whole("Read\t\u{202e}a  b\u{7}\n  "), Some(true));
    assert_eq!(shown(" \n "), None);
    let long = format!("Read {}", "x".repeat(200));
    let t = shown(&long).unwrap_or_default();
    assert_eq!(t.chars().count(), text::TITLE_MAX_CHARS);
    assert!(t.ends_with('…'));
    assert_eq!(whole(&long), Some(false));
    let wide = "Read ".to_owned() + &"é".repeat(100);
    assert_eq!(
        shown(&wide).unwrap_or_default().chars().count(),
        text::TITLE_MAX_CHARS
    );
}

#[test]
fn a_cut_title_offers_no_allow() {
    // The engine's outside-the-folder read: the path that matters is at the end of the title.
    let long = format!(
        "Access outside the session's folders: /home/me/{}/.ssh/id_ed25519",
        "deep/".repeat(12)
    );
    let r = read("r#1", &long);
    assert!(r.line.ends_with('…'), "{}", r.line);
    assert_eq!(r.allow_option_id, None);
    assert_eq!(r.reject_option_id.as_deref(), Some("no"));
    let two_lines = read("r#2", "Read a.txt\nand b.txt");
    assert_eq!(two_lines.line, "Read a.txt");
    assert_eq!(two_lines.allow_option_id, None);
    let whole = read("r#3", "Read README.md");
    assert_eq!(whole.line, "Read README.md");
    assert_eq!(whole.allow_option_id.as_deref(), Some("once"));
}

// ---- options ----

#[test]
fn options_picked() {
    let o = options();
    assert_eq!(text::allow_option(&o).as_deref(), Some("once"));
    assert_eq!(text::reject_option(&o).as_deref(), Some("no"));
    let only_always = vec![
        acp::PermissionOption::new("a", "Always", acp::PermissionOptionKind::AllowAlways),
        acp::PermissionOption::new("r", "Never", acp::PermissionOptionKind::RejectAlways),
    ];
    assert_eq!(text::allow_option(&only_always).as_deref(), Some("a"));
    assert_eq!(text::reject_option(&only_always).as_deref(), Some("r"));
    let allow_only = vec![acp::PermissionOption::new(
        "ok",
        "OK",
        acp::PermissionOptionKind::AllowOnce,
    )];
    assert_eq!(text::reject_option(&allow_only), None);
    let r = text::request(&prompt(
        "x#1",
        Some(acp::ToolKind::Read),
        "Read a",
        allow_only,
    ));
    assert_eq!(r.allow_option_id.as_deref(), Some("ok"));
    assert_eq!(r.reject_option_id, None);
}

#[test]
fn actions_follow_the_options() {
    let t0 = Instant::now();
    let mut p = unfocused();
    p.handle(arrive("s1", read("a#1", "Read a")), t0);
    p.handle(arrive("s2", run_cmd("b#1")), t0);
    let no_reject = text::request(&prompt(
        "c#1",
        Some(acp::ToolKind::Execute),
        "x",
        vec![acp::PermissionOption::new(
            "ok",
            "OK",
            acp::PermissionOptionKind::AllowOnce,
        )],
    ));
    p.handle(arrive("s3", no_reject), t0);
    let out = p.handle(Input::Tick, t0 + NOTIFY_DELAY);
    let n = shows(&out);
    assert_eq!(
        n[0].actions,
        vec![
            NotificationAction::Show,
            NotificationAction::Allow {
                request_id: "a#1".into(),
                option_id: "once".into()
            },
            NotificationAction::Reject {
                request_id: "a#1".into(),
                option_id: "no".into()
            },
        ]
    );
    assert_eq!(
        n[1].actions,
        vec![
            NotificationAction::Show,
            NotificationAction::Reject {
                request_id: "b#1".into(),
                option_id: "no".into()
            },
        ]
    );
    assert_eq!(n[2].actions, vec![NotificationAction::Show]);
}

// ---- names ----

#[test]
fn agent_and_folder_names() {
    let named = info("s1", "claude", "/home/u/proj", LaunchOrigin::Named, "npx");
    assert_eq!(text::agent_name(&named), "claude");
    let typed = info(
        "s1",
        "/opt/bin/my-agent --api-key sk-secret-123",
        "/home/u/proj",
        LaunchOrigin::CommandLine,
        "/opt/bin/my-agent",
    );
    assert_eq!(text::agent_name(&typed), "my-agent");
    assert_eq!(
        text::folder_name(std::path::Path::new("/home/u/proj")),
        "proj"
    );
    assert_eq!(text::folder_name(std::path::Path::new("/")), "/");
}

// ---- the real claude-code-acp shell request ----

fn transcript() -> Vec<StreamEvent> {
    CLAUDE_ALLOW_RUN
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<StreamEvent>(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Everything of the recorded shell call that must never reach a desktop surface.
const COMMAND_BITS: &[&str] = &["echo", "hi-from-bash", "out.txt", "cat ", "Write hi"];

fn assert_no_command(what: &str) {
    for bit in COMMAND_BITS {
        assert!(!what.contains(bit), "{bit:?} leaked into {what}");
    }
}

#[test]
fn the_real_claude_shell_request_shows_no_command_text() {
    let events = transcript();
    let p = events
        .iter()
        .find_map(|e| match e {
            StreamEvent::AgentPrompt(p) => Some(p),
            _ => None,
        })
        .expect("the transcript has a permission request");
    // The recording is what we think it is: the title is the command line.
    assert!(
        p.text
            .as_deref()
            .unwrap_or("")
            .contains("echo hi-from-bash")
    );
    let r = text::request(p);
    assert_eq!(r.line, "wants to run a command");
    assert_eq!(r.allow_option_id, None);
    assert_eq!(r.reject_option_id.as_deref(), Some("reject"));
    assert_no_command(&format!("{r:?}"));

    let t0 = Instant::now();
    let mut policy = unfocused();
    let claude = info(
        "s1",
        "claude",
        "/home/u/proj",
        LaunchOrigin::Named,
        "claude-code-acp",
    );
    let mut all = policy.handle(
        Input::RequestArrived {
            session: SessionRef::of(&claude),
            request: r,
        },
        t0,
    );
    all.extend(policy.handle(Input::Tick, t0 + NOTIFY_DELAY));
    let n = shows(&all);
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].summary, "claude in proj");
    assert_eq!(n[0].body, "wants to run a command in proj");
    assert!(
        !n[0]
            .actions
            .iter()
            .any(|a| matches!(a, NotificationAction::Allow { .. })),
        "no Allow for a command"
    );
    assert_no_command(&format!("{all:?}"));
    assert_no_command(&format!("{:?}", policy.waiting()));
}

// ---- the thread ----

#[derive(Debug, Clone, PartialEq, Eq)]
enum Call {
    Waiting(Waiting),
    Show(Notification),
    Withdraw(String),
}

#[derive(Default)]
struct Recording {
    calls: Mutex<Vec<Call>>,
    changed: Condvar,
}

impl Recording {
    /// Waits (generously) until `pred` holds for the calls so far; returns them.
    fn wait_for(&self, what: &str, pred: impl Fn(&[Call]) -> bool) -> Vec<Call> {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut calls = crate::registry::lock(&self.calls);
        while !pred(&calls) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "timed out waiting for {what}: {calls:?}");
            calls = self
                .changed
                .wait_timeout(calls, left)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
        calls.clone()
    }

    fn push(&self, call: Call) {
        crate::registry::lock(&self.calls).push(call);
        self.changed.notify_all();
    }
}

impl Desktop for Recording {
    fn waiting_changed(&self, waiting: &Waiting) {
        self.push(Call::Waiting(waiting.clone()));
    }
    fn show(&self, n: &Notification) {
        self.push(Call::Show(n.clone()));
    }
    fn withdraw(&self, session_id: &str) {
        self.push(Call::Withdraw(session_id.to_owned()));
    }
}

#[test]
fn the_thread_notifies_the_real_shell_request_and_withdraws_it_when_answered() {
    let desktop = Arc::new(Recording::default());
    let attention = Attention::start_with_delay(desktop.clone(), ON, ms(20)).expect("thread");
    attention.set_focused(false);
    let claude = info(
        "s1",
        "claude",
        "/home/u/proj",
        LaunchOrigin::Named,
        "claude-code-acp",
    );
    attention.on_status(&claude, &SessionStatus::Opened);
    let events = transcript();
    // The recording's rule answered the request at once; here the user has not yet.
    let (settle, rest): (Vec<StreamEvent>, Vec<StreamEvent>) = events
        .into_iter()
        .partition(|e| matches!(e, StreamEvent::AgentPromptSettled { .. }));
    let before_end: Vec<StreamEvent> = rest
        .iter()
        .filter(|e| !matches!(e, StreamEvent::TurnEnd { .. }))
        .cloned()
        .collect();
    attention.on_batch(&claude, &before_end);

    let calls = desktop.wait_for("the notification", |c| {
        c.iter().any(|c| matches!(c, Call::Show(_)))
    });
    let Some(Call::Waiting(first)) = calls.first() else {
        panic!("waiting_changed first: {calls:?}");
    };
    assert_eq!(first.total(), 1);
    assert_eq!(first.sessions[0].session_id, "s1");
    let shown: Vec<&Notification> = calls
        .iter()
        .filter_map(|c| match c {
            Call::Show(n) => Some(n),
            _ => None,
        })
        .collect();
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].body, "wants to run a command in proj");
    assert_eq!(attention.waiting().total(), 1);
    assert_no_command(&format!("{calls:?}"));

    attention.on_batch(&claude, &settle);
    let calls = desktop.wait_for("the withdrawal", |c| {
        c.iter().any(|c| matches!(c, Call::Withdraw(_)))
    });
    assert!(calls.contains(&Call::Withdraw("s1".into())));
    assert!(calls.contains(&Call::Waiting(Waiting::default())));

    // The turn ends in the background: its notification, generic.
    let end: Vec<StreamEvent> = rest
        .into_iter()
        .filter(|e| matches!(e, StreamEvent::TurnEnd { .. }))
        .collect();
    attention.on_batch(&claude, &end);
    let calls = desktop.wait_for("the turn end", |c| {
        c.iter()
            .any(|c| matches!(c, Call::Show(n) if n.about == NotificationAbout::TurnEnded))
    });
    let Some(Call::Show(n)) = calls.last() else {
        panic!("{calls:?}");
    };
    assert_eq!(
        (n.summary.as_str(), n.body.as_str()),
        ("claude in proj", "finished")
    );

    attention.on_status(&claude, &SessionStatus::Closed);
    desktop.wait_for("the close", |c| {
        c.iter().filter(|c| matches!(c, Call::Withdraw(_))).count() == 2
    });
    attention.finish();
    attention.finish();
}

#[test]
fn a_failed_turn_says_a_generic_reason_from_the_error_kind() {
    let desktop = Arc::new(Recording::default());
    let attention = Attention::start_with_delay(desktop.clone(), ON, ms(20)).expect("thread");
    attention.set_focused(false);
    let s = info("s1", "claude", "/home/u/proj", LaunchOrigin::Named, "x");
    attention.on_batch(
        &s,
        &[
            StreamEvent::TurnStart {
                session_id: "e".into(),
                prompt: Vec::new(),
            },
            StreamEvent::Error {
                session_id: Some("e".into()),
                error: acp_desk_core::events::ErrorInfo::of_kind(
                    ErrorKind::AgentExited,
                    "bash: curl -H 'Authorization: secret' failed",
                ),
            },
            StreamEvent::TurnEnd {
                session_id: "e".into(),
                reason: TurnEndReason::Error,
                stop_reason: None,
            },
        ],
    );
    let calls = desktop.wait_for("the turn end", |c| !c.is_empty());
    assert_eq!(
        calls,
        vec![Call::Show(Notification {
            session_id: "s1".into(),
            summary: "claude in proj".into(),
            body: "failed: the agent exited".into(),
            actions: vec![NotificationAction::Show],
            about: NotificationAbout::TurnEnded,
        })]
    );
    attention.finish();
}

#[test]
fn observer_calls_return_at_once_even_with_a_stuck_desktop() {
    struct Gated {
        gate: Mutex<()>,
        rec: Recording,
    }
    impl Desktop for Gated {
        fn waiting_changed(&self, w: &Waiting) {
            drop(crate::registry::lock(&self.gate));
            self.rec.waiting_changed(w);
        }
        fn show(&self, n: &Notification) {
            self.rec.show(n);
        }
        fn withdraw(&self, session_id: &str) {
            self.rec.withdraw(session_id);
        }
    }
    let desktop = Arc::new(Gated {
        gate: Mutex::new(()),
        rec: Recording::default(),
    });
    let held = crate::registry::lock(&desktop.gate);
    let attention = Attention::start_with_delay(desktop.clone(), ON, ms(20)).expect("thread");
    attention.set_focused(true);
    let s = info("s1", "claude", "/home/u/proj", LaunchOrigin::Named, "x");
    // The desktop is stuck on its first call; the pump's calls go on regardless (were they to
    // wait for it, this loop would never end).
    for i in 0..1000 {
        let p = prompt(
            &format!("r#{i}"),
            Some(acp::ToolKind::Execute),
            "x",
            options(),
        );
        attention.on_batch(&s, &[StreamEvent::AgentPrompt(Box::new(p))]);
    }
    assert!(
        desktop
            .rec
            .wait_for("nothing yet", |c| c.is_empty())
            .is_empty()
    );
    drop(held);
    // ...and nothing was lost.
    let calls = desktop.rec.wait_for("every request", |c| c.len() == 1000);
    assert_eq!(calls.last(), Some(&Call::Waiting(attention.waiting())));
    assert_eq!(attention.waiting().total(), 1000);
    attention.finish();
}

#[test]
fn a_question_notifies_with_agent_and_folder_and_offers_show_only() {
    let desktop = Arc::new(Recording::default());
    let attention = Attention::start_with_delay(desktop.clone(), ON, ms(20)).expect("thread");
    attention.set_focused(false);
    let s = info("s1", "claude", "/home/u/proj", LaunchOrigin::Named, "x");
    let ask = acp_desk_core::events::ElicitationEvent {
        session_id: "e".into(),
        request_id: "e1".into(),
        mode: acp_desk_core::events::ElicitationModeKind::Form,
        message: "Paste the token sk-live-123 here".into(),
        tool_call_id: None,
        title: Some("Deploy key".into()),
        description: None,
        fields: Some(Vec::new()),
        url: None,
        host: None,
    };
    attention.on_batch(&s, &[StreamEvent::Elicitation(Box::new(ask))]);
    let calls = desktop.wait_for("the question", |c| {
        c.iter().any(|c| matches!(c, Call::Show(_)))
    });
    let shown: Vec<&Notification> = calls
        .iter()
        .filter_map(|c| match c {
            Call::Show(n) => Some(n),
            _ => None,
        })
        .collect();
    assert_eq!(
        *shown[0],
        Notification {
            session_id: "s1".into(),
            summary: "claude in proj".into(),
            body: "asks you a question in proj".into(),
            actions: vec![NotificationAction::Show],
            about: NotificationAbout::Permission {
                request_id: "e1".into()
            },
        }
    );
    let waiting = attention.waiting();
    assert_eq!(waiting.total(), 1);
    let text = format!("{waiting:?}{calls:?}");
    assert!(
        !text.contains("sk-live") && !text.contains("Deploy key"),
        "{text}"
    );
    attention.on_batch(
        &s,
        &[StreamEvent::ElicitationSettled {
            session_id: "e".into(),
            request_id: "e1".into(),
            action: acp_desk_core::elicitation::ElicitationAction::Cancel,
            by: acp_desk_core::events::SettledBy::Stop,
            awaiting_completion: None,
        }],
    );
    desktop.wait_for("the withdrawal", |c| {
        c.iter()
            .any(|c| matches!(c, Call::Withdraw(id) if id == "s1"))
    });
    assert_eq!(attention.waiting().total(), 0);
    attention.finish();
}
