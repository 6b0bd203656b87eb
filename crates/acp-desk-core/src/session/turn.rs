//! A turn's life: the prompt goes out, the agent works (watched for silence), the user may stop
//! it, and it ends, once, through [`Owner::end_turn`], whoever ends it (the agent's answer, the
//! watchdog's stop, the session's end).

use agent_client_protocol_schema::v1 as acp;
use serde_json::value::RawValue;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::checkpoints::TurnCheckpoint;
use super::handshake::AUTH_REQUIRED;
use super::owner::{Owner, Pending};
use super::{EngineError, TurnOutcome};
use crate::events::{
    ErrorInfo, ErrorKind, NoticeSeverity, SessionState, SettledBy, StreamEvent, TurnEndReason,
};
use crate::jsonrpc::codes;

pub(super) struct Turn {
    /// Our `session/prompt` request, once sent.
    pub(super) request: Option<acp::RequestId>,
    reply: Option<oneshot::Sender<Result<TurnOutcome, EngineError>>>,
    /// Set when the user stopped the turn: the agent is ended if the turn is still running then.
    pub(super) cancel_deadline: Option<Instant>,
    /// The last sign of life from the agent during this turn (or the last answer we gave it).
    pub(super) last_activity: Instant,
    /// The watchdog stopped this turn: it ends `watchdog-timeout`, not `cancelled`.
    watchdog: bool,
    /// The prompt waits for the turn's `before` checkpoint (`session/checkpoints.rs`).
    pub(super) waiting_checkpoint: bool,
    /// The prompt, until it is sent.
    prompt: Option<acp::PromptRequest>,
    /// The turn's checkpoint, once taken.
    pub(super) checkpoint: Option<TurnCheckpoint>,
}

impl Owner {
    /// A front end's prompt: a new turn, unless one runs.
    pub(super) async fn start_turn(
        &mut self,
        blocks: Vec<acp::ContentBlock>,
        reply: oneshot::Sender<Result<TurnOutcome, EngineError>>,
    ) {
        if self.turn.is_some() {
            let _ = reply.send(Err(EngineError::TurnInProgress));
            return;
        }
        let Some(session) = self.acp_session.clone() else {
            let _ = reply.send(Err(EngineError::SessionEnded("not started".into())));
            return;
        };
        let mut prompt = Vec::with_capacity(blocks.len() + 1);
        if let Some(text) = self.perms.take_feedback() {
            prompt.push(acp::ContentBlock::Text(acp::TextContent::new(text)));
        }
        prompt.extend(blocks);
        // A new turn: a new change set, and earlier answers cover nothing any more.
        self.client.new_turn();
        self.watch.new_turn();
        self.thread.new_turn();
        self.turn_ended_at = None;
        self.perms.rules.reload().await;
        let ev = StreamEvent::TurnStart {
            session_id: self.id.clone(),
            prompt: prompt.clone(),
        };
        self.emit(ev);
        self.emit_status(SessionState::Prompting, None);
        let req = acp::PromptRequest::new(session, prompt);
        self.turn = Some(Turn {
            request: None,
            reply: Some(reply),
            cancel_deadline: None,
            last_activity: Instant::now(),
            watchdog: false,
            waiting_checkpoint: false,
            prompt: Some(req),
            checkpoint: None,
        });
        // The prompt waits for the checkpoint: the agent must not change a file before the
        // folder as it was is kept.
        if self.checkpoint_before_turn() {
            if let Some(t) = self.turn.as_mut() {
                t.waiting_checkpoint = true;
            }
            return;
        }
        self.send_prompt().await;
    }

    /// The running turn's prompt goes to the agent.
    pub(super) async fn send_prompt(&mut self) {
        let Some(req) = self.turn.as_mut().and_then(|t| {
            t.waiting_checkpoint = false;
            t.last_activity = Instant::now();
            t.prompt.take()
        }) else {
            return;
        };
        if let Some(id) = self.request("session/prompt", &req, Pending::Prompt) {
            if let Some(t) = self.turn.as_mut() {
                t.request = Some(id);
            }
        } else {
            self.emit_error(ErrorInfo::of_kind(
                ErrorKind::AgentExited,
                "could not send the prompt: the agent's input is closed",
            ));
            self.end_turn(TurnEndReason::Error, None).await;
        }
    }

    /// The agent answered `session/prompt`.
    pub(super) async fn on_prompt_done(&mut self, result: Result<Box<RawValue>, acp::Error>) {
        let cancelled = self
            .turn
            .as_ref()
            .is_some_and(|t| t.cancel_deadline.is_some());
        match result {
            Ok(raw) => match serde_json::from_str::<acp::PromptResponse>(raw.get()) {
                Ok(resp) => {
                    let mut reason = TurnEndReason::from_stop_reason(&resp.stop_reason);
                    if cancelled {
                        // The user (or the watchdog) stopped it; an agent that still says
                        // end_turn finished something, but the turn is what was stopped.
                        reason = self.stopped_reason();
                    }
                    self.end_turn(reason, Some(resp.stop_reason)).await;
                }
                Err(e) => {
                    self.emit_error(ErrorInfo {
                        code: Some(i64::from(codes::INVALID_PARAMS)),
                        ..ErrorInfo::of_kind(
                            ErrorKind::Protocol,
                            format!("the agent's answer to session/prompt is not valid ACP: {e}"),
                        )
                    });
                    self.end_turn(TurnEndReason::Error, None).await;
                }
            },
            Err(e) => {
                let code = i32::from(e.code);
                if cancelled || code == codes::REQUEST_CANCELLED {
                    let reason = self.stopped_reason();
                    self.end_turn(reason, None).await;
                } else {
                    // Classified by the agent's own code and words, not our rewording.
                    let mut error = ErrorInfo::new(Some(i64::from(code)), e.message, e.data);
                    if code == AUTH_REQUIRED {
                        // Seen with claude-agent-acp: the session opens, the first prompt says so.
                        let detail = self.auth_required_detail(&error.message);
                        error.message = EngineError::AuthRequired(detail).to_string();
                    }
                    self.emit_error(error);
                    self.end_turn(TurnEndReason::Error, None).await;
                }
            }
        }
    }

    /// Ends the running turn, if one runs: whatever the agent left parked is answered
    /// `cancelled`, `turn-end` goes out (then `ready`, unless the session is dead), and
    /// `prompt()` returns after consumers got `turn-end`.
    pub(super) async fn end_turn(
        &mut self,
        reason: TurnEndReason,
        stop_reason: Option<acp::StopReason>,
    ) {
        let Some(mut turn) = self.turn.take() else {
            return;
        };

        // Whatever the agent left parked is moot once its turn is over.
        self.settle_all(SettledBy::Stop).await;
        // The agent moved on without the answer (it ended the turn); a stopped turn's were
        // settled by the stop already.
        if let Some(prompt) = turn.request.clone() {
            let by = if reason == TurnEndReason::Completed {
                SettledBy::Agent
            } else {
                SettledBy::Stop
            };
            self.settle_elicitations(Some(&prompt), by);
        }
        self.client.approved.clear();
        self.turn_ended_at = Some(Instant::now());
        let ev = StreamEvent::TurnEnd {
            session_id: self.id.clone(),
            reason,
            stop_reason,
        };
        self.emit(ev);
        if self.life.dead.is_none() && self.conn.is_some() {
            self.emit_status(SessionState::Ready, None);
        }
        // Consumers see `turn-end` before `prompt()` returns.
        self.flush().await;
        let outcome = TurnOutcome {
            reason,
            stop_reason,
        };
        match turn.checkpoint.take() {
            // `prompt()` returns once the turn's end is checkpointed: a front end that reverts
            // (or exits) right after finds the step complete.
            Some(cp) => self.checkpoint_after_turn(cp, turn.reply.take(), outcome),
            None => {
                if let Some(reply) = turn.reply.take() {
                    let _ = reply.send(Ok(outcome));
                }
            }
        }
    }

    /// Stop (Esc, Ctrl-C). Between turns it cancels the questions the agent asked on its own
    /// (an autonomous cycle): nobody else would.
    pub(super) async fn cancel_turn(&mut self) {
        if self.turn.is_none() {
            self.settle_elicitations_outside_turns(SettledBy::Stop);
        }
        self.stop_turn(SettledBy::Stop).await;
    }

    /// `session/cancel`, parked permissions answered `cancelled` (by `by`), and the cancel
    /// grace started: the turn ends when the agent answers, or the agent is ended.
    pub(super) async fn stop_turn(&mut self, by: SettledBy) {
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        if turn.waiting_checkpoint {
            // Nothing went to the agent yet: the turn ends here.
            let reason = self.stopped_reason();
            self.end_turn(reason, None).await;
            return;
        }
        if turn.cancel_deadline.is_some() {
            return;
        }
        turn.cancel_deadline = Some(Instant::now() + self.opts.cancel_grace);
        let prompt = turn.request.clone();
        if let (Some(conn), Some(session)) = (&self.conn, &self.acp_session) {
            let n = acp::CancelNotification::new(session.clone());
            let r = conn.notify("session/cancel", &n);
            self.sent("session/cancel", r);
        }
        // ACP: the client MUST answer every pending permission request `cancelled` on cancel.
        self.settle_all(by).await;
        // The turn's questions too: nobody will answer them for a stopped turn.
        if let Some(prompt) = prompt {
            self.settle_elicitations(Some(&prompt), by);
        }
    }

    /// Whether a stop was asked for the running turn (answers to new requests are then known).
    pub(super) fn turn_stopping(&self) -> bool {
        self.turn
            .as_ref()
            .is_some_and(|t| t.cancel_deadline.is_some())
    }

    /// How a stopped turn ends: `watchdog-timeout` when the watchdog stopped it.
    pub(super) fn stopped_reason(&self) -> TurnEndReason {
        if self.turn.as_ref().is_some_and(|t| t.watchdog) {
            TurnEndReason::WatchdogTimeout
        } else {
            TurnEndReason::Cancelled
        }
    }

    /// The agent did something (or got an answer): the idle clock starts again.
    pub(super) fn touch_turn(&mut self) {
        if let Some(t) = self.turn.as_mut() {
            t.last_activity = Instant::now();
        }
    }

    /// When the running turn counts as idle, if it can: not while a permission request waits
    /// for the user, nor once the user stopped the turn (the cancel grace governs that).
    pub(super) fn idle_deadline(&self) -> Option<Instant> {
        let timeout = self.opts.turn_idle_timeout?;
        let turn = self.turn.as_ref()?;
        // A running terminal is work, not silence: agents wait for builds and tests.
        if turn.cancel_deadline.is_some()
            || turn.waiting_checkpoint
            || !self.perms.is_empty()
            || !self.asks.is_empty()
            || self.terminal_running()
        {
            return None;
        }
        Some(turn.last_activity + timeout)
    }

    /// The agent went silent mid-turn: stop the turn as Stop would (the agent is asked to
    /// cancel, and ended if it does not answer within the cancel grace); it ends
    /// `watchdog-timeout`.
    pub(super) async fn watchdog_expired(&mut self) {
        let secs = self
            .opts
            .turn_idle_timeout
            .map(|d| d.as_secs_f32())
            .unwrap_or_default();
        self.notice(
            NoticeSeverity::Warning,
            format!("The agent sent nothing for {secs:.0} s; the turn was stopped."),
            Some(
                "Send a new prompt to go on, or start a new session if the agent is stuck.".into(),
            ),
        );
        if let Some(t) = self.turn.as_mut() {
            t.watchdog = true;
        }
        self.stop_turn(SettledBy::Watchdog).await;
    }
}
