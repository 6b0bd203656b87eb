//! The agent's questions to the user (`elicitation/create`), parked like permission requests
//! until someone answers: the user (checked against the fields first), the session's policy, a
//! stop, the end of the turn that asked, the agent withdrawing it, the session's end.
//!
//! Form mode is answered with the values; URL mode with the user's consent to open the page
//! (the front end opens it, never the engine), after which the agent's `elicitation/complete`
//! says the page is done. The audit log records who answered and the names of the fields
//! answered, never their values; events never carry the values either.

use std::collections::BTreeMap;

use agent_client_protocol_schema::v1::{self as acp, RequestId};
use serde_json::value::RawValue;

use super::owner::Owner;
use super::permissions::MAX_PARKED;
use super::{ElicitationPolicy, EngineError};
use crate::elicitation::{self, ElicitationAction, ElicitationAnswer, ElicitationField};
use crate::events::{
    ElicitationEvent, ElicitationModeKind, NoticeSeverity, SettledBy, StreamEvent,
};
use crate::jsonrpc::codes;

/// URL-mode requests accepted and waiting for `elicitation/complete`, at most: an agent that
/// never completes them must not grow our memory (the oldest is forgotten).
const MAX_AWAITING: usize = 64;

enum Asked {
    Form { fields: Vec<ElicitationField> },
    Url { elicitation_id: String },
}

struct Parked {
    rpc_id: RequestId,
    asked: Asked,
    /// The prompt request that was running when it was asked, or that the agent tied it to
    /// (request scope): when that turn ends, the question is moot.
    turn: Option<RequestId>,
}

/// The session's open elicitations.
#[derive(Default)]
pub(super) struct Elicitations {
    /// By number (`e<n>`), so settling them all goes in the order they were asked.
    parked: BTreeMap<u64, Parked>,
    counter: u64,
    /// URL mode, accepted: the agent's `elicitationId` → our request id, oldest first.
    awaiting: Vec<(String, String)>,
}

fn number_of(request_id: &str) -> Option<u64> {
    request_id.strip_prefix('e')?.parse().ok()
}

impl Elicitations {
    pub(super) fn is_empty(&self) -> bool {
        self.parked.is_empty()
    }

    fn by_rpc_id(&self, id: &RequestId) -> Option<u64> {
        self.parked
            .iter()
            .find(|(_, p)| p.rpc_id == *id)
            .map(|(n, _)| *n)
    }
}

fn invalid(message: impl Into<String>) -> acp::Error {
    acp::Error::new(codes::INVALID_PARAMS, message.into())
}

impl Owner {
    /// `elicitation/create`: checked, shown as an `elicitation` event and parked (or answered
    /// at once by a stop, the policy, or because too many wait).
    pub(super) fn on_elicitation(&mut self, id: RequestId, params: Option<Box<RawValue>>) {
        let raw = params.as_deref().map(RawValue::get).unwrap_or("null");
        let req = match serde_json::from_str::<acp::CreateElicitationRequest>(raw) {
            Ok(req) => req,
            Err(e) => return self.reply::<()>(&id, Err(invalid(format!("invalid params: {e}")))),
        };
        let running = self.turn.as_ref().and_then(|t| t.request.clone());
        let (tool_call_id, turn) = match req.scope() {
            acp::ElicitationScope::Session(s) => {
                if let Err(e) = self.check_session(&s.session_id) {
                    return self.reply::<()>(&id, Err(e));
                }
                (s.tool_call_id.as_ref().map(|t| t.0.to_string()), running)
            }
            acp::ElicitationScope::Request(r) => {
                if !self.pending.contains_key(&r.request_id) {
                    return self.reply::<()>(
                        &id,
                        Err(invalid(format!(
                            "the elicitation is tied to request {}, which is not waiting for an answer",
                            r.request_id
                        ))),
                    );
                }
                (None, Some(r.request_id.clone()))
            }
            _ => {
                return self.reply::<()>(
                    &id,
                    Err(invalid(
                        "the elicitation's scope is neither a session nor a request",
                    )),
                );
            }
        };
        self.asks.counter += 1;
        let n = self.asks.counter;
        let request_id = format!("e{n}");
        let mut ev = ElicitationEvent {
            session_id: self.id.clone(),
            request_id: request_id.clone(),
            mode: ElicitationModeKind::Form,
            message: req.message.clone(),
            tool_call_id,
            title: None,
            description: None,
            fields: None,
            url: None,
            host: None,
        };
        let asked = match &req.mode {
            acp::ElicitationMode::Form(form) => {
                let fields = elicitation::fields_in_order(
                    &form.requested_schema,
                    &elicitation::property_order(raw),
                );
                ev.title.clone_from(&form.requested_schema.title);
                ev.description
                    .clone_from(&form.requested_schema.description);
                ev.fields = Some(fields.clone());
                Asked::Form { fields }
            }
            acp::ElicitationMode::Url(u) => {
                let Some(host) = elicitation::url_host(&u.url) else {
                    return self.reply::<()>(
                        &id,
                        Err(invalid(
                            "an elicitation's url must be an absolute http or https address",
                        )),
                    );
                };
                ev.mode = ElicitationModeKind::Url;
                ev.url = Some(u.url.clone());
                ev.host = Some(host);
                Asked::Url {
                    elicitation_id: u.elicitation_id.0.to_string(),
                }
            }
            other => {
                let mode = match other {
                    acp::ElicitationMode::Other(o) => o.mode.clone(),
                    _ => "unknown".into(),
                };
                return self.reply::<()>(
                    &id,
                    Err(invalid(format!(
                        "elicitation mode `{mode}` is not supported; ACP Desk supports form and url"
                    ))),
                );
            }
        };
        let names: Vec<String> = ev.fields.iter().flatten().map(|f| f.name.clone()).collect();
        self.audit
            .elicitation_asked(&request_id, ev.mode, &names, ev.host.as_deref());
        self.emit(StreamEvent::Elicitation(Box::new(ev)));
        self.asks.parked.insert(
            n,
            Parked {
                rpc_id: id,
                asked,
                turn,
            },
        );
        if self.turn_stopping() {
            let _ =
                self.settle_elicitation(&request_id, ElicitationAnswer::Cancel, SettledBy::Stop);
        } else if self.asks.parked.len() > MAX_PARKED {
            self.notice(
                NoticeSeverity::Warning,
                format!(
                    "The agent has more than {MAX_PARKED} questions waiting; this one was answered `cancel`."
                ),
                None,
            );
            let _ =
                self.settle_elicitation(&request_id, ElicitationAnswer::Cancel, SettledBy::Rule);
        } else {
            let by_policy = match self.opts.elicitation_policy {
                ElicitationPolicy::Ask => None,
                ElicitationPolicy::Decline => Some(ElicitationAnswer::Decline),
                ElicitationPolicy::Cancel => Some(ElicitationAnswer::Cancel),
            };
            if let Some(answer) = by_policy {
                let _ = self.settle_elicitation(&request_id, answer, SettledBy::Rule);
            }
        }
    }

    /// The user's answer (a front end's `answer_elicitation`). An accept is checked against the
    /// fields first; a refused one leaves the question open.
    pub(super) fn answer_elicitation(
        &mut self,
        request_id: &str,
        answer: ElicitationAnswer,
    ) -> Result<(), EngineError> {
        let r = self.settle_elicitation(request_id, answer, SettledBy::User);
        self.touch_turn();
        r
    }

    /// Answers an open elicitation and emits `elicitation-settled`.
    pub(super) fn settle_elicitation(
        &mut self,
        request_id: &str,
        answer: ElicitationAnswer,
        by: SettledBy,
    ) -> Result<(), EngineError> {
        let unknown = || EngineError::UnknownElicitation(request_id.to_owned());
        let n = number_of(request_id).ok_or_else(unknown)?;
        let parked = self.asks.parked.get(&n).ok_or_else(unknown)?;
        let (action, answered) = match (&parked.asked, &answer) {
            (Asked::Form { fields }, ElicitationAnswer::Accept { content }) => {
                let content = content.clone().unwrap_or_default();
                let errors = elicitation::validate(fields, &content);
                if !errors.is_empty() {
                    return Err(EngineError::InvalidAnswer { errors });
                }
                let sent = elicitation::content_to_send(&content);
                let names: Vec<String> = sent.keys().cloned().collect();
                (
                    acp::ElicitationAction::Accept(
                        acp::ElicitationAcceptAction::new().content(to_content(sent)),
                    ),
                    names,
                )
            }
            (Asked::Url { .. }, ElicitationAnswer::Accept { content }) => {
                if content.as_ref().is_some_and(|c| !c.is_empty()) {
                    return Err(EngineError::InvalidAnswer {
                        errors: vec![elicitation::FieldError {
                            field: String::new(),
                            message: "a url elicitation is accepted without values".into(),
                        }],
                    });
                }
                (
                    acp::ElicitationAction::Accept(acp::ElicitationAcceptAction::new()),
                    Vec::new(),
                )
            }
            (_, ElicitationAnswer::Decline) => (acp::ElicitationAction::Decline, Vec::new()),
            (_, ElicitationAnswer::Cancel) => (acp::ElicitationAction::Cancel, Vec::new()),
        };
        let Some(parked) = self.asks.parked.remove(&n) else {
            return Err(unknown());
        };
        if let Some(conn) = &self.conn {
            let r = conn.respond(
                &parked.rpc_id,
                Ok(acp::CreateElicitationResponse::new(action)),
            );
            self.sent("an answer to a question", r);
        }
        let kind = answer.action();
        self.audit
            .elicitation_answered(request_id, by, kind, &answered);
        let mut awaiting = None;
        if let (Asked::Url { elicitation_id }, ElicitationAction::Accept) = (parked.asked, kind) {
            if self.asks.awaiting.len() >= MAX_AWAITING {
                self.asks.awaiting.remove(0);
            }
            self.asks
                .awaiting
                .push((elicitation_id, request_id.to_owned()));
            awaiting = Some(true);
        }
        self.emit(StreamEvent::ElicitationSettled {
            session_id: self.id.clone(),
            request_id: request_id.to_owned(),
            action: kind,
            by,
            awaiting_completion: awaiting,
        });
        Ok(())
    }

    /// Cancels the open elicitations of the turn that asked (`prompt`), or every one (`None`).
    pub(super) fn settle_elicitations(&mut self, prompt: Option<&RequestId>, by: SettledBy) {
        let ids: Vec<u64> = self
            .asks
            .parked
            .iter()
            .filter(|(_, p)| prompt.is_none() || p.turn.as_ref() == prompt)
            .map(|(n, _)| *n)
            .collect();
        for n in ids {
            let _ = self.settle_elicitation(&format!("e{n}"), ElicitationAnswer::Cancel, by);
        }
    }

    /// Cancels the open questions asked while no turn of ours ran (an autonomous cycle).
    pub(super) fn settle_elicitations_outside_turns(&mut self, by: SettledBy) {
        let ids: Vec<u64> = self
            .asks
            .parked
            .iter()
            .filter(|(_, p)| p.turn.is_none())
            .map(|(n, _)| *n)
            .collect();
        for n in ids {
            let _ = self.settle_elicitation(&format!("e{n}"), ElicitationAnswer::Cancel, by);
        }
    }

    /// `$/cancel_request` for one of our open questions: settled `by: agent`; `false` when the
    /// request is not one.
    pub(super) fn withdraw_elicitation(&mut self, id: &RequestId) -> bool {
        let Some(n) = self.asks.by_rpc_id(id) else {
            return false;
        };
        let _ = self.settle_elicitation(
            &format!("e{n}"),
            ElicitationAnswer::Cancel,
            SettledBy::Agent,
        );
        true
    }

    /// `elicitation/complete`: the page of a url-mode request is done. A request still open
    /// (the user never answered) is settled first, `by: agent`.
    pub(super) fn on_elicitation_complete(&mut self, params: Option<Box<RawValue>>) {
        let raw = params.as_deref().map(RawValue::get).unwrap_or("null");
        let n = match serde_json::from_str::<acp::CompleteElicitationNotification>(raw) {
            Ok(n) => n,
            Err(e) => {
                tracing::warn!("malformed elicitation/complete ignored: {e}");
                return;
            }
        };
        let wanted = n.elicitation_id.0.to_string();
        let open = self.asks.parked.iter().find_map(|(k, p)| match &p.asked {
            Asked::Url { elicitation_id } if *elicitation_id == wanted => Some(*k),
            _ => None,
        });
        let request_id = if let Some(k) = open {
            let request_id = format!("e{k}");
            let _ =
                self.settle_elicitation(&request_id, ElicitationAnswer::Cancel, SettledBy::Agent);
            Some(request_id)
        } else {
            let at = self.asks.awaiting.iter().position(|(e, _)| *e == wanted);
            at.map(|i| self.asks.awaiting.remove(i).1)
        };
        match request_id {
            Some(request_id) => {
                self.touch_turn();
                self.emit(StreamEvent::ElicitationComplete {
                    session_id: self.id.clone(),
                    request_id,
                });
            }
            None => tracing::debug!("elicitation/complete for {wanted}, which is not ours"),
        }
    }
}

fn to_content(
    map: serde_json::Map<String, serde_json::Value>,
) -> BTreeMap<String, acp::ElicitationContentValue> {
    map.into_iter()
        .filter_map(|(k, v)| {
            serde_json::from_value::<acp::ElicitationContentValue>(v)
                .ok()
                .map(|v| (k, v))
        })
        .collect()
}
