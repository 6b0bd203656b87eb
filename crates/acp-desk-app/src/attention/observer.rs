//! [`Attention`] as a registry [`Observer`]: each call reads the few events that matter, reduces
//! them to [`Input`]s (a request to its [`text::request`], a turn end to its text) and sends them
//! to the attention thread over an unbounded channel. Nothing here waits (invariant 42), and
//! nothing of a sensitive call but its kind leaves this file (invariant 41).

use acp_desk_core::StreamEvent;
use acp_desk_core::events::SessionState;

use super::policy::{Input, SessionRef};
use super::{Attention, text};
use crate::observer::{Observer, SessionStatus};
use crate::registry::{SessionInfo, lock};

impl Observer for Attention {
    fn on_batch(&self, session: &SessionInfo, events: &[StreamEvent]) {
        for event in events {
            match event {
                StreamEvent::AgentPrompt(p) => self.send(Input::RequestArrived {
                    session: SessionRef::of(session),
                    request: text::request(p),
                }),
                StreamEvent::AgentPromptSettled { request_id, .. } => self.send(Input::Settled {
                    session_id: session.id.clone(),
                    request_id: request_id.clone(),
                }),
                StreamEvent::Elicitation(e) => self.send(Input::RequestArrived {
                    session: SessionRef::of(session),
                    request: text::question(&e.request_id),
                }),
                StreamEvent::ElicitationSettled { request_id, .. } => {
                    self.send(Input::Settled {
                        session_id: session.id.clone(),
                        request_id: request_id.clone(),
                    });
                }
                StreamEvent::TurnStart { .. } => {
                    lock(&self.turn_errors).remove(&session.id);
                }
                StreamEvent::Error { error, .. } => {
                    lock(&self.turn_errors).insert(session.id.clone(), error.kind());
                }
                StreamEvent::TurnEnd {
                    reason,
                    stop_reason,
                    ..
                } => {
                    let error = lock(&self.turn_errors).remove(&session.id);
                    self.send(Input::TurnEnded {
                        session: SessionRef::of(session),
                        text: text::turn_end(*reason, *stop_reason, error),
                    });
                }
                _ => {}
            }
        }
    }

    fn on_status(&self, session: &SessionInfo, status: &SessionStatus) {
        match status {
            SessionStatus::State {
                state: SessionState::Dead,
                ..
            } => self.send(Input::SessionDead {
                session_id: session.id.clone(),
            }),
            SessionStatus::Closed => {
                lock(&self.turn_errors).remove(&session.id);
                self.send(Input::SessionClosed {
                    session_id: session.id.clone(),
                });
            }
            _ => {}
        }
    }
}
