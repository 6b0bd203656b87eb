//! The one path by which a session ends, whatever ended it.
//!
//! Every cause (the user closed it, the agent exited, it stopped reading its input, it ignored a
//! stop, it did not start in time, its handshake failed) is an [`Ending`]. The loop hands the
//! first one to [`Owner::end`], which does the same steps in the same order for each:
//! 1. a turn being closed is stopped politely first (`session/cancel`) while the agent can
//!    still hear it;
//! 2. what can be said before the agent goes is emitted;
//! 3. the agent's input closes, its terminals end, pending events go out, and the agent's
//!    process ends the way the cause calls for (politely, at once, or awaited when it is
//!    exiting anyway);
//! 4. what needs its exit status (an agent that exited) is emitted;
//! 5. the session is dead: the turn ends (every parked request answered `cancelled`),
//!    `start()`'s caller is answered, `session-status: dead` goes out;
//! 6. the audit log is closed and flushed, then the last events go out.

use std::time::Duration;

use super::EngineError;
use super::owner::Owner;
use crate::events::{NoticeSeverity, SessionState, SettledBy, TurnEndReason};

/// What ends a session.
#[derive(Debug)]
pub(super) enum Ending {
    /// A front end closed it (`now`: kill the agent's tree without a grace period), or every
    /// handle was dropped.
    Closed { why: &'static str, now: bool },
    /// The agent's output closed: it exited or broke the pipe.
    Exited { error: Option<String> },
    /// The agent stopped reading its input (our queue to it is full).
    Stuck,
    /// The agent did not stop within the cancel grace after being asked to.
    IgnoredCancel,
    /// No answer to `initialize`/`session/new` within the start timeout.
    StartTimeout,
    /// The handshake failed: what `start()`'s caller hears.
    StartFailed(EngineError),
}

/// How the agent's process is ended.
enum Stop {
    /// Stdin closed, then SIGTERM, then SIGKILL.
    Politely,
    /// SIGKILL of the tree now: it is deaf, or the user asked.
    Now,
    /// It closed its output, so it is probably exiting: wait a little, then politely.
    Await,
}

/// Up to how long an agent that closed its output gets to exit on its own.
const EXIT_WAIT: Duration = Duration::from_secs(3);

impl Owner {
    pub(super) async fn end(&mut self, ending: Ending) {
        let starting = self.life.ready.is_some();
        // 1. A turn being closed: the agent is told to stop while it can still hear it.
        if matches!(ending, Ending::Closed { .. }) && self.turn.is_some() {
            self.stop_turn(SettledBy::Stop).await;
        }
        // 2. What is known before the agent goes.
        let stop = match &ending {
            Ending::Closed { now: true, .. } | Ending::Stuck | Ending::IgnoredCancel => Stop::Now,
            Ending::Closed { now: false, .. } | Ending::StartTimeout | Ending::StartFailed(_) => {
                Stop::Politely
            }
            Ending::Exited { .. } => Stop::Await,
        };
        match &ending {
            Ending::Stuck => {
                let n = self.opts.limits.outbound_capacity;
                let message = stuck_message(n);
                self.emit_error(
                    None,
                    format!("{message} Start a new session to continue."),
                    None,
                )
                .await;
            }
            Ending::IgnoredCancel => {
                let secs = self.opts.cancel_grace.as_secs_f32();
                self.notice(
                    NoticeSeverity::Warning,
                    format!(
                        "The agent did not stop within {secs:.1} s of being asked to; it was ended."
                    ),
                    Some("Start a new session to continue.".into()),
                )
                .await;
            }
            Ending::StartTimeout => {
                let secs = self.opts.start_timeout.as_secs();
                let err = EngineError::StartFailed(format!(
                    "no answer to initialize/session/new within {secs} s"
                ));
                self.emit_error(None, err.to_string(), None).await;
                self.life.start_error = Some(err);
            }
            Ending::StartFailed(err) => {
                self.emit_error(None, err.to_string(), None).await;
                self.life.start_error = Some(err.clone());
            }
            Ending::Closed { .. } | Ending::Exited { .. } => {}
        }
        // 3. The agent's input closes (once queued lines are written); its terminals end with
        // it (nobody can use them any more); then the agent ends.
        self.conn = None;
        self.client.terminals.close_all();
        self.log_unfinished_commands();
        self.client.term_state.clear();
        self.flush().await;
        let status = match stop {
            Stop::Now => self.agent.kill().await,
            Stop::Politely => self.agent.terminate().await,
            Stop::Await => match self.agent.wait_timeout(EXIT_WAIT).await {
                Some(s) => Some(s),
                None => self.agent.terminate().await,
            },
        };
        let exit = self.agent.describe_exit(status);
        // 4. Why, in the words each cause gets: `dead` for commands after the end, `detail`
        // for `session-status: dead`, `audit` for the log.
        let (dead, detail, reason) = match &ending {
            Ending::Closed { why, .. } => (why.to_string(), format!("Session {why}."), None),
            Ending::StartTimeout => {
                let why = "did not start in time";
                (why.to_string(), format!("Session {why}."), None)
            }
            Ending::StartFailed(err) => (err.to_string(), err.to_string(), None),
            Ending::Stuck => {
                let message = stuck_message(self.opts.limits.outbound_capacity);
                if starting {
                    self.life.start_error = Some(EngineError::StartFailed(message.clone()));
                }
                (message.clone(), message, Some(TurnEndReason::Error))
            }
            Ending::IgnoredCancel => {
                let why = "the agent was ended after it ignored a request to stop".to_string();
                (why.clone(), why, Some(self.stopped_reason()))
            }
            Ending::Exited { error } => {
                let (message, detail) = self.exit_words(&exit, error.as_deref(), starting);
                if starting {
                    let err = EngineError::StartFailed(detail.clone());
                    self.emit_error(None, err.to_string(), None).await;
                    self.life.start_error = Some(err);
                } else {
                    let tail = self.agent.stderr_tail();
                    self.emit_error(
                        None,
                        format!("{message} Start a new session to continue."),
                        Some(serde_json::json!({ "stderrTail": tail })),
                    )
                    .await;
                }
                (message, detail, Some(TurnEndReason::Error))
            }
        };
        // 5. Dead from here on: the turn's end must not announce the session `ready` again.
        self.life.dead = Some(dead.clone());
        let turn_reason = reason.unwrap_or_else(|| self.stopped_reason());
        self.end_turn(turn_reason, None).await;
        self.settle_all(SettledBy::Stop).await;
        tracing::info!("session {} ended ({dead}); agent {exit}", self.id);
        if let Some(ready) = self.life.ready.take() {
            let err = self
                .life
                .start_error
                .take()
                .unwrap_or_else(|| EngineError::SessionEnded(dead.clone()));
            let _ = ready.send(Err(err));
        }
        if !self.life.announced_dead {
            self.emit_status(SessionState::Dead, Some(detail)).await;
        }
        // 6. Every audit line on disk before `close()` returns (a CLI exits right after).
        self.end_audit(&dead).await;
        self.flush().await;
    }

    /// "The agent exited with code 1 during the turn." and the same with the last lines of its
    /// error output.
    fn exit_words(&self, exit: &str, error: Option<&str>, starting: bool) -> (String, String) {
        let mut message = format!("The agent {exit}");
        if let Some(e) = error {
            message.push_str(&format!(" ({e})"));
        }
        let during = if starting {
            " while starting"
        } else if self.turn.is_some() {
            " during the turn"
        } else {
            ""
        };
        message = format!("{message}{during}.");
        let mut detail = message.clone();
        let tail = self.agent.stderr_tail();
        if !tail.is_empty() {
            let last: Vec<&str> = tail
                .iter()
                .rev()
                .take(10)
                .rev()
                .map(String::as_str)
                .collect();
            detail.push_str(&format!(
                "\nLast lines of its error output:\n{}",
                last.join("\n")
            ));
        }
        (message, detail)
    }
}

fn stuck_message(waiting: usize) -> String {
    format!(
        "The agent stopped reading its input ({waiting} messages were waiting for it); it was ended."
    )
}
