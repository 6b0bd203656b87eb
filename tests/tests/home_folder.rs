//! "Add … to the session" is never offered for the user's home folder. Its own test binary:
//! it sets `HOME`, which no other test may see (and which must not change while other threads
//! read the environment).
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use acp_desk_core::events::{PermissionResolution, TurnEndReason};
use acp_desk_core::schema::v1 as acp;
use common::*;
use serde_json::json;

#[test]
fn adding_the_home_folder_is_not_offered_but_a_folder_inside_it_is() {
    let home = tempfile::tempdir().unwrap();
    let home_path = home.path().canonicalize().unwrap();
    std::fs::write(home_path.join(".bashrc"), "alias x=y\n").unwrap();
    std::fs::create_dir(home_path.join("notes")).unwrap();
    std::fs::write(home_path.join("notes/a.txt"), "a\n").unwrap();
    // SAFETY: this binary holds this one test and no runtime or other thread exists yet, so
    // nothing reads the environment while it changes.
    unsafe { std::env::set_var("HOME", &home_path) };
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let steps = json!([
            {"read_file": {"path": format!("{}/.bashrc", home_path.display()), "expect_error": -32603}},
            {"read_file": {"path": format!("{}/notes/a.txt", home_path.display()), "expect_error": -32603}}
        ]);
        let scenarios = scenario_dir(&[("home-test", &["read-home"], steps)]);
        let flags = ["--scenario-dir", scenarios.path().to_str().unwrap()];
        let (h, mut rx, _dir) = session(&flags).await;
        let turn = spawn_prompt(&h, "read-home");
        let mut seen = Vec::new();
        let mut asks = Vec::new();
        for _ in 0..2 {
            let p = rx.next_prompt(&mut seen).await;
            let reject = p
                .options
                .iter()
                .find(|o| o.kind == acp::PermissionOptionKind::RejectOnce)
                .unwrap()
                .option_id
                .0
                .to_string();
            h.respond_permission(&p.request_id, PermissionResolution::selected(reject))
                .await
                .unwrap();
            asks.push(p);
        }
        let drain = tokio::spawn(rx.all());
        assert_eq!(finish(turn).await.reason, TurnEndReason::Completed);
        h.close().await;
        drop(h);
        drain.await.unwrap();
        let kinds = |p: &acp_desk_core::events::AgentPromptEvent| -> Vec<_> {
            p.options.iter().map(|o| o.kind).collect()
        };
        use acp::PermissionOptionKind as K;
        assert_eq!(kinds(&asks[0]), [K::AllowOnce, K::RejectOnce]);
        let text = asks[0].text.clone().unwrap();
        assert!(text.contains("your home folder"), "{text}");
        assert_eq!(kinds(&asks[1]), [K::AllowOnce, K::AllowAlways, K::RejectOnce]);
        assert_eq!(
            asks[1].options[1].name,
            format!("Add {}/notes to the session", home_path.display())
        );
    });
}
