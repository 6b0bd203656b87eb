//! What the shell's integration test binaries share.

use std::time::Duration;

/// Polls `ok` every 20 ms until it holds; fails the test after 20 s, naming `what`.
pub async fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !ok() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
