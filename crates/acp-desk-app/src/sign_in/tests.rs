#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use acp_desk_core::events::{ErrorInfo, SessionState};
use acp_desk_core::secrets::MemoryKeychain;

use super::*;

fn text(t: &str) -> acp::ContentBlock {
    acp::ContentBlock::Text(acp::TextContent::new(t))
}

fn turn_start(t: &str) -> StreamEvent {
    StreamEvent::TurnStart {
        session_id: "e1".into(),
        prompt: vec![text(t)],
    }
}

fn turn_end(reason: TurnEndReason) -> StreamEvent {
    StreamEvent::TurnEnd {
        session_id: "e1".into(),
        reason,
        stop_reason: None,
    }
}

fn error(kind: ErrorKind) -> StreamEvent {
    StreamEvent::Error {
        session_id: Some("e1".into()),
        error: ErrorInfo::of_kind(kind, "x"),
    }
}

fn action(id: &str, how: AuthHow) -> AuthAction {
    AuthAction {
        method_id: id.into(),
        name: format!("Sign in {id}"),
        description: None,
        how,
    }
}

fn status(actions: Option<Vec<AuthAction>>) -> StreamEvent {
    StreamEvent::SessionStatus {
        session_id: "e1".into(),
        status: SessionState::Dead,
        detail: None,
        agent: Some(AgentIdentity {
            launch_name: "demo".into(),
            name: None,
            title: None,
            version: None,
            acp_session_id: None,
            prompt_capabilities: None,
            session_methods: None,
            auth_methods: actions,
        }),
    }
}

#[test]
fn the_prompt_kept_is_the_last_turns_when_a_login_stopped_it() {
    use ErrorKind::{AuthRequired, RateLimit};
    use TurnEndReason::{Completed, Error};
    assert_eq!(prompt_hit_by_login(&[]), None);
    let hit = [
        turn_start("first"),
        turn_end(Completed),
        turn_start("second"),
        error(AuthRequired),
        turn_end(Error),
    ];
    assert_eq!(prompt_hit_by_login(&hit), Some(vec![text("second")]));
    // The restarted agent said auth-required again at its start: still kept.
    let mut again = hit.to_vec();
    again.extend([error(AuthRequired), status(None)]);
    assert_eq!(prompt_hit_by_login(&again), Some(vec![text("second")]));
    // Sent again and through: nothing kept, so never sent twice.
    let mut sent = hit.to_vec();
    sent.extend([turn_start("second"), turn_end(Completed)]);
    assert_eq!(prompt_hit_by_login(&sent), None);
    // Another kind of failure, or an auth failure after a turn that went through, is not a
    // login that stopped the prompt.
    let other = [turn_start("a"), error(RateLimit), turn_end(Error)];
    assert_eq!(prompt_hit_by_login(&other), None);
    let later = [turn_start("a"), turn_end(Completed), error(AuthRequired)];
    assert_eq!(prompt_hit_by_login(&later), None);
}

#[test]
fn methods_are_checked_against_what_the_agent_offers_with_what_to_do_instead() {
    let actions = vec![
        action("browser", AuthHow::Agent),
        action(
            "key",
            AuthHow::ApiKey {
                provider: Some("google".into()),
            },
        ),
        action(
            "login",
            AuthHow::Terminal {
                args: vec!["login".into()],
                env: BTreeMap::new(),
            },
        ),
    ];
    let via = SignInVia::Authenticate;
    assert_eq!(
        check_method(&actions, "demo", "browser", via)
            .unwrap()
            .method_id,
        "browser"
    );
    let e = check_method(&actions, "demo", "nope", via)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("does not offer the sign-in method `nope`") && e.contains("`browser`"),
        "{e}"
    );
    let e = check_method(&actions, "demo", "login", via)
        .unwrap_err()
        .to_string();
    assert!(e.contains("login terminal"), "{e}");
    let e = check_method(&actions, "demo", "key", via)
        .unwrap_err()
        .to_string();
    assert!(e.contains("API key"), "{e}");
    assert!(check_method(&actions, "demo", "key", SignInVia::ApiKey).is_ok());
    assert!(check_method(&actions, "demo", "browser", SignInVia::ApiKey).is_err());
    let e = check_method(&[], "demo", "x", via).unwrap_err().to_string();
    assert!(e.contains("offers no sign-in methods"), "{e}");
}

#[test]
fn a_key_is_stored_trimmed_under_its_name_and_no_error_repeats_it() {
    let keychain = MemoryKeychain::new();
    let key = SecretValue::new("  sk-test-123\n".into());
    let name = store_api_key(&keychain, "gemini", "gemini-api-key", &key).unwrap();
    assert_eq!(name.to_string(), "agent-auth/gemini/gemini-api-key");
    assert_eq!(
        keychain.get(&name).unwrap().unwrap().expose(),
        "sk-test-123"
    );
    for bad in ["", "   ", "sk-one sk-two", "sk-a\nsk-b"] {
        let e = store_api_key(&keychain, "gemini", "m", &SecretValue::new(bad.into()))
            .unwrap_err()
            .to_string();
        assert!(matches!(
            store_api_key(&keychain, "gemini", "m", &SecretValue::new(bad.into())),
            Err(AppError::InvalidInput(_))
        ));
        for part in bad.split_whitespace() {
            assert!(!e.contains(part), "{e}");
        }
    }
    let huge = SecretValue::new("k".repeat(MAX_API_KEY_BYTES + 1));
    assert!(store_api_key(&keychain, "gemini", "m", &huge).is_err());
    assert_eq!(keychain.list().unwrap(), vec![name]);
}

#[test]
fn the_notice_quotes_the_start_of_the_prompt() {
    assert_eq!(
        resend_notice(&[text("fix   the\nbug")]),
        "Signed in. Sending your prompt again: “fix the bug”"
    );
    let long = "word ".repeat(40);
    let n = resend_notice(&[text(&long)]);
    assert!(n.ends_with("…”"), "{n}");
    let link = acp::ContentBlock::ResourceLink(acp::ResourceLink::new("a.rs", "file:///p/a.rs"));
    assert_eq!(
        resend_notice(std::slice::from_ref(&link)),
        "Signed in. Sending your prompt again (with 1 attachment)."
    );
    assert_eq!(
        resend_notice(&[text("look"), link.clone(), link]),
        "Signed in. Sending your prompt again: “look” (with 2 attachments)"
    );
}

#[test]
fn the_actions_and_identity_come_from_the_latest_status() {
    let thread = [
        status(Some(vec![action("a", AuthHow::Agent)])),
        turn_start("x"),
    ];
    assert_eq!(offered_actions(&thread).unwrap()[0].method_id, "a");
    assert!(agent_identity(&thread).is_some());
    assert_eq!(offered_actions(&[status(None)]), None);
}
