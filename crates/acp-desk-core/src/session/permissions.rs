//! Permission requests: the agent's `session/request_permission` and our own questions about
//! access outside the session's folders, parked until someone answers them (the user, a
//! remembered rule, the session's policy, a stop, the agent withdrawing it, the watchdog).
//!
//! [`Permissions`] owns what is parked and checks answers against it; settling
//! ([`Owner::settle`]) then does what the answer means: the agent is answered, an "always" is
//! remembered, paths are approved for the turn or a folder added, feedback kept for the next
//! prompt, `agent-prompt-settled` emitted.

use std::collections::HashMap;
use std::path::PathBuf;

use agent_client_protocol_schema::v1::{self as acp, RequestId};

use super::client::ClientOp;
use super::owner::Owner;
use super::remembered::Rules;
use super::{EngineError, PermissionPolicy};
use crate::events::{NoticeSeverity, PermissionResolution, SettledBy, StreamEvent};
use crate::rules::Subject;
use crate::thread;

/// Permission requests that may wait for an answer at once. People answer a handful; an agent
/// with more than this waiting is looping, and must not grow our memory.
pub(super) const MAX_PARKED: usize = 64;

/// A parked request, keyed by its request id (the id we hand out in `agent-prompt`).
pub(super) struct Parked {
    /// The JSON-RPC id of the agent's request, which the answer goes to: not the request id.
    pub(super) rpc_id: RequestId,
    pub(super) options: Vec<acp::PermissionOption>,
    pub(super) kind: ParkedKind,
}

pub(super) enum ParkedKind {
    /// The agent's `session/request_permission`, with the paths its tool call names and its
    /// kind (an answer by the user allowing it covers the access that kind implies to those
    /// paths for the turn), and what rules match it on.
    Agent {
        paths: Vec<PathBuf>,
        kind: Option<acp::ToolKind>,
        subject: Box<Subject>,
    },
    /// A request of the agent for a path outside the roots, waiting for the user.
    Client(Box<ClientOp>),
}

/// A parked request taken out with a checked answer: what settling it needs.
pub(super) struct Settlement {
    /// The JSON-RPC id of the agent's request (see [`Parked::rpc_id`]).
    pub(super) rpc_id: RequestId,
    pub(super) options: Vec<acp::PermissionOption>,
    pub(super) kind: ParkedKind,
    /// The answer the agent gets.
    pub(super) outcome: acp::RequestPermissionOutcome,
    /// The kind of the option chosen; `None` when cancelled.
    pub(super) selected: Option<acp::PermissionOptionKind>,
    /// Feedback kept: only with a rejection, and only when it says something.
    pub(super) feedback: Option<String>,
}

/// The session's parked permission requests and what answers them without the user.
pub(super) struct Permissions {
    /// By request id.
    parked: HashMap<String, Parked>,
    /// Numbers the request ids (`<toolCallId>#<n>`): tool call ids repeat across requests.
    counter: u64,
    /// Feedback given with rejections, sent at the head of the next prompt.
    feedback: Vec<String>,
    /// Remembered "always" answers.
    pub(super) rules: Rules,
}

impl Permissions {
    pub(super) fn new(rules: Rules) -> Self {
        Self {
            parked: HashMap::new(),
            counter: 0,
            feedback: Vec::new(),
            rules,
        }
    }

    /// The next request's number.
    pub(super) fn next_number(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    pub(super) fn park(&mut self, request_id: String, parked: Parked) {
        self.parked.insert(request_id, parked);
    }

    pub(super) fn get(&self, request_id: &str) -> Option<&Parked> {
        self.parked.get(request_id)
    }

    pub(super) fn len(&self) -> usize {
        self.parked.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.parked.is_empty()
    }

    /// Every parked request's id, in a stable order (settling all of them emits one event
    /// each, and consumers should see the same order each time).
    pub(super) fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.parked.keys().cloned().collect();
        ids.sort();
        ids
    }

    /// The parked request that JSON-RPC request `id` raised, if it still waits.
    pub(super) fn by_rpc_id(&self, id: &RequestId) -> Option<String> {
        self.parked
            .iter()
            .find(|(_, p)| p.rpc_id == *id)
            .map(|(k, _)| k.clone())
    }

    /// Checks `resolution` against the request parked as `request_id` and takes it out. An
    /// unknown request or an option it never offered is refused, and the request stays.
    pub(super) fn take(
        &mut self,
        request_id: &str,
        resolution: &PermissionResolution,
    ) -> Result<Settlement, EngineError> {
        let Some(parked) = self.parked.get(request_id) else {
            return Err(EngineError::UnknownPermission(request_id.into()));
        };
        let (outcome, selected, feedback) = match resolution {
            PermissionResolution::Cancelled { .. } => {
                (acp::RequestPermissionOutcome::Cancelled, None, None)
            }
            PermissionResolution::Selected {
                option_id,
                feedback,
            } => {
                let Some(option) = parked
                    .options
                    .iter()
                    .find(|o| *o.option_id.0 == **option_id)
                else {
                    return Err(EngineError::UnknownOption(
                        request_id.into(),
                        option_id.clone(),
                    ));
                };
                let is_reject = matches!(
                    option.kind,
                    acp::PermissionOptionKind::RejectOnce | acp::PermissionOptionKind::RejectAlways
                );
                (
                    acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(
                        option.option_id.clone(),
                    )),
                    Some(option.kind),
                    feedback
                        .clone()
                        .filter(|f| is_reject && !f.trim().is_empty()),
                )
            }
        };
        let Some(parked) = self.parked.remove(request_id) else {
            return Err(EngineError::UnknownPermission(request_id.into()));
        };
        Ok(Settlement {
            rpc_id: parked.rpc_id,
            options: parked.options,
            kind: parked.kind,
            outcome,
            selected,
            feedback,
        })
    }

    pub(super) fn keep_feedback(&mut self, feedback: String) {
        self.feedback.push(feedback);
    }

    /// The feedback given since the last prompt, as the text that goes at the head of the next.
    pub(super) fn take_feedback(&mut self) -> Option<String> {
        if self.feedback.is_empty() {
            return None;
        }
        Some(
            self.feedback
                .drain(..)
                .map(|f| format!("Feedback on the request I rejected: {f}"))
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }
}

impl Owner {
    /// The agent's `session/request_permission`: parked as an `agent-prompt`, unless it is
    /// answered at once.
    pub(super) async fn on_permission(
        &mut self,
        id: RequestId,
        req: acp::RequestPermissionRequest,
    ) {
        let n = self.perms.next_number();
        let request_id = format!("{}#{n}", req.tool_call.tool_call_id.0);
        let options = req.options.clone();
        let prompt = self
            .thread
            .permission_request(req, request_id.clone(), &mut self.out);
        let paths = thread::paths_named(
            prompt.locations.as_deref().unwrap_or_default(),
            prompt.raw_input.as_ref(),
        );
        let subject = Box::new(Subject::from_prompt(&prompt, Some(&self.opts.cwd)));
        let kind = prompt.tool_kind;
        self.audit.permission_asked(
            &request_id,
            &prompt.target_tool_call_id,
            prompt.tool_name.as_deref(),
            prompt.tool_kind,
            &options,
        );
        self.out.push(StreamEvent::AgentPrompt(Box::new(prompt)));
        self.perms.park(
            request_id.clone(),
            Parked {
                rpc_id: id,
                options,
                kind: ParkedKind::Agent {
                    paths,
                    kind,
                    subject,
                },
            },
        );
        self.after_park(&request_id).await;
    }

    /// A request was just parked: answers it at once when the turn is stopping, too many
    /// wait, a remembered rule or the policy decides.
    pub(super) async fn after_park(&mut self, request_id: &str) {
        if self.turn_stopping() {
            // Asked after the user pressed Stop: the answer is already known.
            let _ = self
                .settle(
                    request_id,
                    PermissionResolution::cancelled(),
                    SettledBy::Stop,
                )
                .await;
            return;
        }
        if self.perms.len() > MAX_PARKED {
            self.notice(
                NoticeSeverity::Warning,
                format!(
                    "The agent has more than {MAX_PARKED} permission requests waiting; this one was answered `cancelled`."
                ),
                None,
            );
            let _ = self
                .settle(
                    request_id,
                    PermissionResolution::cancelled(),
                    SettledBy::Rule,
                )
                .await;
            return;
        }
        // Remembered answers come before the policy (DESIGN.md: the CLI applies them before
        // its --permission policy).
        if let Some(resolution) = self.remembered_answer(request_id).await {
            let _ = self.settle(request_id, resolution, SettledBy::Rule).await;
            return;
        }
        let options = self
            .perms
            .get(request_id)
            .map(|p| p.options.clone())
            .unwrap_or_default();
        let wanted = match self.opts.permission_policy {
            PermissionPolicy::Ask => return,
            PermissionPolicy::AllowOnce => Some(acp::PermissionOptionKind::AllowOnce),
            PermissionPolicy::RejectOnce => Some(acp::PermissionOptionKind::RejectOnce),
            PermissionPolicy::Cancel => None,
        };
        let resolution = match wanted {
            Some(kind) => match options.iter().find(|o| o.kind == kind) {
                Some(o) => PermissionResolution::selected(o.option_id.0.to_string()),
                None => {
                    let title = format!(
                        "The agent offered no {} option; the request was answered `cancelled`.",
                        serde_json::to_value(kind)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_default()
                    );
                    self.notice(NoticeSeverity::Warning, title, None);
                    PermissionResolution::cancelled()
                }
            },
            None => PermissionResolution::cancelled(),
        };
        let _ = self.settle(request_id, resolution, SettledBy::Rule).await;
    }

    /// The user's answer (a front end's `respond_permission`).
    pub(super) async fn answer_permission(
        &mut self,
        request_id: &str,
        resolution: PermissionResolution,
    ) -> Result<(), EngineError> {
        let r = self.settle(request_id, resolution, SettledBy::User).await;
        // The idle clock restarts when the agent gets its answer.
        self.touch_turn();
        r
    }

    /// Answers a parked permission request and emits `agent-prompt-settled`.
    pub(super) async fn settle(
        &mut self,
        request_id: &str,
        resolution: PermissionResolution,
        by: SettledBy,
    ) -> Result<(), EngineError> {
        let s = self.perms.take(request_id, &resolution)?;
        self.audit
            .permission_answered(request_id, by, &resolution, &s.options);
        match s.kind {
            ParkedKind::Agent {
                paths,
                kind,
                subject,
            } => {
                if by == SettledBy::User {
                    self.remember(&subject, s.selected).await;
                }
                if let Some(conn) = &self.conn {
                    let response = acp::RequestPermissionResponse::new(s.outcome);
                    let r = conn.respond(&s.rpc_id, Ok(response));
                    self.sent("a permission answer", r);
                }
                // Only the user's own "allow" covers access outside the roots; a policy
                // answering the agent's requests never grants that.
                let allowed = matches!(
                    s.selected,
                    Some(
                        acp::PermissionOptionKind::AllowOnce
                            | acp::PermissionOptionKind::AllowAlways
                    )
                );
                if allowed && by == SettledBy::User {
                    self.approve_paths(paths, kind);
                }
            }
            ParkedKind::Client(op) => {
                self.access_answered(s.rpc_id, *op, s.selected, by);
            }
        }
        if let Some(f) = &s.feedback {
            self.perms.keep_feedback(f.clone());
        }
        let outcome = match resolution {
            PermissionResolution::Selected { option_id, .. } => {
                PermissionResolution::selected(option_id)
            }
            c => c,
        };
        let ev = StreamEvent::AgentPromptSettled {
            session_id: self.id.clone(),
            request_id: request_id.into(),
            outcome,
            by,
            feedback: s.feedback,
        };
        self.emit(ev);
        Ok(())
    }

    /// Answers every parked request `cancelled`.
    pub(super) async fn settle_all(&mut self, by: SettledBy) {
        for id in self.perms.ids() {
            let _ = self
                .settle(&id, PermissionResolution::cancelled(), by)
                .await;
        }
    }

    /// `$/cancel_request`: the agent withdrew a request; a parked one is settled `by: agent`.
    pub(super) async fn on_cancel_request(&mut self, id: RequestId) {
        if self.withdraw_elicitation(&id) {
            return;
        }
        match self.perms.by_rpc_id(&id) {
            Some(request_id) => {
                let _ = self
                    .settle(
                        &request_id,
                        PermissionResolution::cancelled(),
                        SettledBy::Agent,
                    )
                    .await;
            }
            None => tracing::debug!("$/cancel_request for {id}, which is not pending"),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use super::*;

    fn rules() -> Rules {
        Rules::none(std::env::temp_dir())
    }

    fn option(id: &str, kind: acp::PermissionOptionKind) -> acp::PermissionOption {
        acp::PermissionOption::new(id.to_string(), id.to_string(), kind)
    }

    fn parked(request: i64) -> Parked {
        Parked {
            rpc_id: RequestId::Number(request),
            options: vec![
                option("yes", acp::PermissionOptionKind::AllowOnce),
                option("no", acp::PermissionOptionKind::RejectOnce),
            ],
            kind: ParkedKind::Agent {
                paths: Vec::new(),
                kind: None,
                subject: Box::new(Subject {
                    kind: acp::ToolKind::Other,
                    title: None,
                    command: None,
                    paths: Vec::new(),
                }),
            },
        }
    }

    fn selected(id: &str, feedback: Option<&str>) -> PermissionResolution {
        PermissionResolution::Selected {
            option_id: id.into(),
            feedback: feedback.map(str::to_string),
        }
    }

    #[test]
    fn an_answer_is_checked_against_what_was_offered_and_a_refused_one_keeps_the_request() {
        let mut p = Permissions::new(rules());
        p.park("t#1".into(), parked(7));
        assert!(matches!(
            p.take("t#2", &selected("yes", None)),
            Err(EngineError::UnknownPermission(id)) if id == "t#2"
        ));
        assert!(matches!(
            p.take("t#1", &selected("maybe", None)),
            Err(EngineError::UnknownOption(id, opt)) if id == "t#1" && opt == "maybe"
        ));
        assert_eq!(p.len(), 1, "a refused answer leaves the request waiting");
        let s = p.take("t#1", &selected("yes", None)).unwrap();
        assert_eq!(s.rpc_id, RequestId::Number(7));
        assert_eq!(s.selected, Some(acp::PermissionOptionKind::AllowOnce));
        assert!(
            matches!(s.outcome, acp::RequestPermissionOutcome::Selected(ref o) if &*o.option_id.0 == "yes")
        );
        assert!(p.is_empty());
        assert!(
            matches!(
                p.take("t#1", &selected("yes", None)),
                Err(EngineError::UnknownPermission(_))
            ),
            "answered once only"
        );
    }

    #[test]
    fn feedback_is_kept_only_with_a_rejection_that_says_something() {
        let mut p = Permissions::new(rules());
        for n in 1..=4 {
            p.park(format!("t#{n}"), parked(n));
        }
        let allow = p.take("t#1", &selected("yes", Some("fine"))).unwrap();
        assert_eq!(allow.feedback, None, "feedback goes with a rejection only");
        let blank = p.take("t#2", &selected("no", Some("  \n"))).unwrap();
        assert_eq!(blank.feedback, None);
        let cancelled = p.take("t#3", &PermissionResolution::cancelled()).unwrap();
        assert_eq!(cancelled.selected, None);
        assert!(matches!(
            cancelled.outcome,
            acp::RequestPermissionOutcome::Cancelled
        ));
        let reject = p
            .take("t#4", &selected("no", Some("use the other file")))
            .unwrap();
        assert_eq!(reject.feedback.as_deref(), Some("use the other file"));

        assert_eq!(p.take_feedback(), None);
        p.keep_feedback("first".into());
        p.keep_feedback("second".into());
        assert_eq!(
            p.take_feedback().as_deref(),
            Some(
                "Feedback on the request I rejected: first\nFeedback on the request I rejected: second"
            )
        );
        assert_eq!(p.take_feedback(), None, "sent once");
    }

    #[test]
    fn requests_are_found_by_their_json_rpc_id_and_listed_in_a_stable_order() {
        let mut p = Permissions::new(rules());
        p.park("b#2".into(), parked(2));
        p.park("a#1".into(), parked(1));
        assert_eq!(p.ids(), vec!["a#1".to_string(), "b#2".to_string()]);
        assert_eq!(p.by_rpc_id(&RequestId::Number(2)).as_deref(), Some("b#2"));
        assert_eq!(p.by_rpc_id(&RequestId::Number(3)), None);
        assert_eq!((p.next_number(), p.next_number()), (1, 2));
    }
}
