//! The one path by which a session ends, whatever ended it.
//!
//! Every cause (the user closed it, the agent exited, it stopped reading its input, it ignored a
//! stop, it did not start in time, its handshake failed) is an [`Ending`]. The loop hands the
//! first one to [`Owner::end`], which does the same steps in the same order for each:
//! 1. closing: a running turn is stopped politely (`session/cancel`, parked requests answered
//!    `cancelled`) while the agent can still hear it, then `session/close` when the agent
//!    advertised it (its answer awaited up to `CLOSE_WAIT`; not when closing "now"); any other
//!    cause: the agent can no longer be told anything, so its input closes now;
//! 2. an agent that closed its output is exiting: it gets a moment to, for its exit status;
//! 3. what happened is said, in the words each cause gets;
//! 4. the session is dead: the turn ends (`turn-end` before the agent is made to go, so the
//!    front end hears it at once), parked requests are answered `cancelled`;
//! 5. the agent's input closes, its terminals end, events go out, and its process ends the way
//!    the cause calls for (politely, or at once);
//! 6. `session-status: dead`, the audit log closed and flushed, the last events out; only then
//!    is a `start()` still waiting answered, so its caller has every event first.

use std::time::Duration;

use agent_client_protocol_schema::v1 as acp;

use super::EngineError;
use super::owner::Owner;
use crate::error_kind::{self, ErrorKind};
use crate::events::{AgentExit, ErrorInfo, NoticeSeverity, SessionState, SettledBy, TurnEndReason};
use crate::jsonrpc::Inbound;
use crate::process;

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

/// Up to how long an agent that closed its output gets to exit on its own.
const EXIT_WAIT: Duration = Duration::from_secs(3);

/// Up to how long a closing session waits for the agent's answer to `session/close` before it
/// ends the agent anyway (rule 9: nothing waits forever on an agent).
const CLOSE_WAIT: Duration = Duration::from_secs(2);

impl Owner {
    pub(super) async fn end(&mut self, ending: Ending) {
        let starting = self.life.ready.is_some();
        if starting {
            // The step under way (initialize) took until here, not until the agent is ended.
            self.trace.failed();
        }
        // 1. Closing: the agent hears the stop (and its answers) first. Otherwise nothing more
        // reaches it: its input closes now.
        if let Ending::Closed { now, .. } = &ending {
            if self.turn.is_some() {
                self.stop_turn(SettledBy::Stop).await;
            }
            if !*now {
                self.close_at_agent().await;
            }
        } else {
            self.conn = None;
            self.flush().await;
        }
        // 2. An agent that closed its output: how it exited (it is ended if it does not).
        let exited = match &ending {
            Ending::Exited { .. } => Some(match self.agent.wait_timeout(EXIT_WAIT).await {
                Some(s) => Some(s),
                None => self.agent.terminate().await,
            }),
            _ => None,
        };
        // 3. The words: `dead` for commands after the end, `detail` for `session-status:
        // dead` (and the audit log's last line), and how the turn ends.
        let (dead, detail, turn_reason) = self.say_why(&ending, exited, starting);
        // 4. Dead from here on: the turn's end must not announce the session `ready` again.
        self.life.dead = Some(dead.clone());
        let turn_reason = turn_reason.unwrap_or_else(|| self.stopped_reason());
        self.end_turn(turn_reason, None).await;
        self.settle_all(SettledBy::Stop).await;
        self.settle_elicitations(None, SettledBy::Stop);
        self.settle_tasks_at_end();
        // 5. The agent's input closes (once queued lines are written), its terminals end with
        // it (nobody can use them any more), then the agent ends.
        self.conn = None;
        self.close_terminals();
        self.flush().await;
        let status = match (&ending, exited) {
            (_, Some(status)) => status,
            (Ending::Closed { now: true, .. } | Ending::Stuck | Ending::IgnoredCancel, _) => {
                self.agent.kill().await
            }
            _ => self.agent.terminate().await,
        };
        tracing::info!(
            "session {} ended ({dead}); agent {}",
            self.id,
            self.agent.describe_exit(status)
        );
        // 6. The last word, every audit line on disk before `close()` returns (a CLI exits
        // right after), then `start()`'s caller.
        self.emit_status(SessionState::Dead, Some(detail));
        self.end_audit(&dead).await;
        self.flush().await;
        if self.life.ready.is_some() {
            let err = self
                .life
                .start_error
                .take()
                .unwrap_or_else(|| EngineError::SessionEnded(dead.clone()));
            self.answer_start(Err(err));
        }
    }

    /// `session/close`, when the agent advertised it and a session is open at the agent: sent,
    /// and its answer awaited (up to [`CLOSE_WAIT`]) so an agent that saves on close has the
    /// time to. What else arrives meanwhile is handled as usual (a stopped turn's last updates
    /// and answer); the agent's output closing ends the wait. Its answer, even an error, only
    /// ends the wait: the session closes either way.
    async fn close_at_agent(&mut self) {
        let advertised = self.identity.session_methods.is_some_and(|m| m.close);
        let (Some(session), Some(conn), true) = (self.acp_session.clone(), &self.conn, advertised)
        else {
            return;
        };
        let id = match conn.request("session/close", &acp::CloseSessionRequest::new(session)) {
            Ok(id) => id,
            Err(e) => {
                tracing::debug!("could not send session/close: {e}");
                return;
            }
        };
        self.flush().await;
        let deadline = tokio::time::Instant::now() + CLOSE_WAIT;
        loop {
            let batch = match tokio::time::timeout_at(deadline, self.inbound.recv()).await {
                Ok(Some(batch)) => batch,
                Ok(None) => return,
                Err(_) => {
                    tracing::debug!("no answer to session/close in time; ending the agent");
                    return;
                }
            };
            let mut answered = false;
            for msg in batch {
                match msg {
                    Inbound::Response { id: got, result } if got == id => {
                        if let Err(e) = result {
                            tracing::debug!("the agent refused session/close: {}", e.message);
                        }
                        answered = true;
                    }
                    Inbound::Closed { .. } => answered = true,
                    msg => self.on_inbound(msg).await,
                }
            }
            self.flush().await;
            if answered {
                return;
            }
        }
    }

    /// Emits what each cause says (an `error` or a notice) and keeps the reason a `start()`
    /// still waiting will get.
    fn say_why(
        &mut self,
        ending: &Ending,
        exited: Option<Option<std::process::ExitStatus>>,
        starting: bool,
    ) -> (String, String, Option<TurnEndReason>) {
        match ending {
            Ending::Closed { why, .. } => (why.to_string(), format!("Session {why}."), None),
            Ending::StartTimeout => {
                self.trace.timed_out = true;
                let secs = self.opts.start_timeout.as_secs();
                let err =
                    EngineError::StartFailed(self.authenticate_timed_out().unwrap_or_else(|| {
                        format!("no answer to initialize/session/new within {secs} s")
                    }));
                self.emit_error(ErrorInfo::of_kind(
                    ErrorKind::AgentUnresponsive,
                    err.to_string(),
                ));
                self.life.start_error = Some(err);
                let why = "did not start in time";
                (why.to_string(), format!("Session {why}."), None)
            }
            Ending::StartFailed(err) => {
                self.emit_error(ErrorInfo::of_kind(
                    error_kind::of_start_failure(err),
                    err.to_string(),
                ));
                self.life.start_error = Some(err.clone());
                (err.to_string(), err.to_string(), None)
            }
            Ending::Stuck => {
                let message = stuck_message(self.opts.limits.outbound_capacity);
                // No remedy in the words: what a front end offers (Reconnect, a new session,
                // `run --continue`) it says itself, by the kind.
                self.emit_error(ErrorInfo::of_kind(
                    ErrorKind::AgentUnresponsive,
                    message.clone(),
                ));
                if starting {
                    self.life.start_error = Some(EngineError::StartFailed(message.clone()));
                }
                (message.clone(), message, Some(TurnEndReason::Error))
            }
            Ending::IgnoredCancel => {
                let secs = self.opts.cancel_grace.as_secs_f32();
                self.notice(
                    NoticeSeverity::Warning,
                    format!(
                        "The agent did not stop within {secs:.1} s of being asked to; it was ended."
                    ),
                    Some("Start a new session to continue.".into()),
                );
                let why = "the agent was ended after it ignored a request to stop".to_string();
                (why.clone(), why, None)
            }
            Ending::Exited { error } => {
                let exit = self.agent.describe_exit(exited.flatten());
                let (message, detail) = self.exit_words(&exit, error.as_deref(), starting);
                // Structured for the card; the same lines are in `detail` for people.
                let (code, signal) = process::exit_parts(exited.flatten());
                let exit = AgentExit {
                    code,
                    signal,
                    stderr_tail: self.agent.stderr_tail(),
                };
                if starting {
                    self.trace.exit = Some(exit.clone());
                    let err = EngineError::StartFailed(detail.clone());
                    self.emit_error(ErrorInfo {
                        exit: Some(exit),
                        ..ErrorInfo::of_kind(ErrorKind::AgentExited, err.to_string())
                    });
                    self.life.start_error = Some(err);
                } else {
                    self.emit_error(ErrorInfo {
                        exit: Some(exit),
                        ..ErrorInfo::of_kind(ErrorKind::AgentExited, message.clone())
                    });
                }
                (message, detail, Some(TurnEndReason::Error))
            }
        }
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
