//! Remembered "always" answers on the session's owner: a matching rule (or the optional "reads
//! inside the folders" policy) settles the agent's permission request at once, `by: rule`,
//! before the session's `PermissionPolicy`; the user's own `allow_always` / `reject_always`
//! answer is stored as an exact rule for this agent and project.
//!
//! The client remembers "always" itself because agents often scope their own "always" to one
//! call. Only the agent's requests are remembered and answered by rules: the client's own
//! requests for access outside the session's folders keep asking (their "always" adds the
//! folder to the session instead), and a rule's "allow" never grants such access (only the
//! user's answer does, invariant 17).
//!
//! Saving a rule and re-reading the file (at each turn's start, so that a rule revoked with
//! `acp-desk-cli rules revoke` stops applying) are file IO, so they run on the blocking pool. The
//! owner takes the store's (async) lock before handing it over, so a lookup that comes later
//! waits for that save or reload to finish (one small file) and never sees the rules as they
//! were before it. A rule whose save failed still applies for the session (`unsaved_rules`).

use agent_client_protocol_schema::v1 as acp;

use super::services::Done;
use super::{Owner, ParkedKind};
use crate::events::{NoticeSeverity, PermissionResolution};
use crate::rules::{Decision, NewRule, Rule, RuleStore, Subject, ToolMatcher, is_read_inside};

impl Owner {
    /// How a remembered rule (or the reads policy) answers the parked request, if one does and
    /// the request offers an option of the wanted kind.
    pub(super) async fn remembered_answer(
        &self,
        correlation: &str,
    ) -> Option<PermissionResolution> {
        use acp::PermissionOptionKind as K;
        let parked = self.parked.get(correlation)?;
        let ParkedKind::Agent { subject, .. } = &parked.kind else {
            return None;
        };
        // Chosen by kind (invariant 6); "once" first: the rule, not the agent, remembers.
        let wanted: &[K] = match self.rule_for(subject).await {
            Some(Decision::Allow) => &[K::AllowOnce, K::AllowAlways],
            Some(Decision::Reject) => &[K::RejectOnce, K::RejectAlways],
            None if self.opts.allow_reads_inside_roots
                && is_read_inside(subject, self.roots.roots()) =>
            {
                tracing::info!("read inside the session's folders allowed by the reads policy");
                &[K::AllowOnce, K::AllowAlways]
            }
            None => return None,
        };
        let option = wanted
            .iter()
            .find_map(|k| parked.options.iter().find(|o| o.kind == *k));
        if option.is_none() {
            tracing::info!("a rule matched, but the request offers no option of its kind; asking");
        }
        option.map(|o| PermissionResolution::selected(o.option_id.0.to_string()))
    }

    /// The decision of the rules matching `subject`: a Reject beats an Allow.
    async fn rule_for(&self, subject: &Subject) -> Option<Decision> {
        let exact = subject.exact_matcher();
        let unsaved: Vec<Decision> = self
            .unsaved_rules
            .iter()
            .filter(|(t, _)| Some(t) == exact.as_ref())
            .map(|(_, d)| *d)
            .collect();
        let stored = match &self.rules {
            Some(store) => {
                let store = store.lock().await;
                store
                    .find(&self.identity.launch_name, &self.project, subject)
                    .map(|rule| {
                        tracing::info!(rule = %rule.id, "permission request answered by a remembered rule");
                        rule.decision
                    })
            }
            None => None,
        };
        if stored == Some(Decision::Reject) || unsaved.contains(&Decision::Reject) {
            Some(Decision::Reject)
        } else {
            stored.or_else(|| unsaved.first().copied())
        }
    }

    /// The user answered "always": keep it as an exact rule for this agent and project.
    pub(super) async fn remember(
        &mut self,
        subject: &Subject,
        kind: Option<acp::PermissionOptionKind>,
    ) {
        let decision = match kind {
            Some(acp::PermissionOptionKind::AllowAlways) => Decision::Allow,
            Some(acp::PermissionOptionKind::RejectAlways) => Decision::Reject,
            _ => return,
        };
        let Some(store) = self.rules.clone() else {
            return;
        };
        let Some(tool) = subject.exact_matcher() else {
            // Nothing (command, path, title) to pin the answer to: it applies to this call only.
            tracing::info!("an \"always\" answer with nothing to remember it by; not kept");
            return;
        };
        self.unsaved_rules.push((tool.clone(), decision));
        let new = NewRule {
            agent: self.identity.launch_name.clone(),
            project: self.project.clone(),
            tool: tool.clone(),
            decision,
            note: None,
        };
        let tx = self.done_tx.clone();
        let mut store = store.lock_owned().await;
        tokio::task::spawn_blocking(move || {
            let result = store.add(new).map_err(|e| e.to_string());
            drop(store);
            let _ = tx.send(Done::RuleSaved {
                tool,
                decision,
                result,
            });
        });
    }

    pub(super) async fn on_rule_saved(
        &mut self,
        tool: ToolMatcher,
        decision: Decision,
        result: Result<Rule, String>,
    ) {
        match result {
            Ok(rule) => {
                if let Some(i) = self
                    .unsaved_rules
                    .iter()
                    .position(|(t, d)| *t == tool && *d == decision)
                {
                    self.unsaved_rules.remove(i);
                }
                let verb = match decision {
                    Decision::Allow => "allow",
                    Decision::Reject => "reject",
                };
                self.notice(
                    NoticeSeverity::Info,
                    format!("Remembered: ACP Desk will {verb} this request of the agent in this project without asking."),
                    Some(format!(
                        "{}\nRevoke it with `acp-desk-cli rules revoke {}`.",
                        RuleStore::describe(&rule),
                        rule.id
                    )),
                )
                .await;
            }
            Err(e) => {
                // It still applies for this session (it stays in `unsaved_rules`).
                self.notice(
                    NoticeSeverity::Warning,
                    "Your \"always\" answer applies to this session only: it could not be saved."
                        .into(),
                    Some(e),
                )
                .await;
            }
        }
    }

    /// Picks up rules another process (the CLI's `rules revoke`, another window) changed.
    pub(super) async fn reload_rules(&self) {
        let Some(store) = self.rules.clone() else {
            return;
        };
        let mut store = store.lock_owned().await;
        tokio::task::spawn_blocking(move || match store.reload() {
            Ok(Some(w)) => tracing::warn!("{w}"),
            Ok(None) => {}
            Err(e) => tracing::warn!("permission rules not reloaded: {e}"),
        });
    }
}
