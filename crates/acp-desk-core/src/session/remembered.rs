//! Remembered "always" answers: a matching rule (or the optional "reads inside the folders"
//! policy) settles the agent's permission request at once, `by: rule`, before the session's
//! `PermissionPolicy`; the user's own `allow_always` / `reject_always` answer is stored as an
//! exact rule for this agent and project.
//!
//! The client remembers "always" itself because agents often scope their own "always" to one
//! call. Only the agent's requests are remembered and answered by rules: the client's own
//! requests for access outside the session's folders keep asking (their "always" adds the
//! folder to the session instead), and a rule's "allow" never grants such access (only the
//! user's answer does, invariant 17).
//!
//! Saving a rule and re-reading the file (at each turn's start, so that a rule revoked with
//! `acp-desk-cli rules revoke` stops applying) are file IO, so they run on the blocking pool.
//! [`Rules`] takes the store's (async) lock before handing it over, so a lookup that comes later
//! waits for that save or reload to finish (one small file) and never sees the rules as they
//! were before it. A rule whose save failed still applies for the session (`unsaved`).

use std::path::PathBuf;
use std::sync::Arc;

use agent_client_protocol_schema::v1 as acp;
use tokio::sync::mpsc;

use super::client::Done;
use super::owner::Owner;
use super::permissions::ParkedKind;
use crate::events::{NoticeSeverity, PermissionResolution};
use crate::rules::{Decision, NewRule, Rule, RuleStore, Subject, ToolMatcher, is_read_inside};

/// The session's remembered answers: the store (shared with the blocking pool that saves and
/// reloads it), the answers given this session whose save has not finished, and what they are
/// kept for (this agent, this project).
pub(super) struct Rules {
    store: Option<Arc<tokio::sync::Mutex<RuleStore>>>,
    /// A problem with the rules file, shown once the session is ready.
    notice: Option<String>,
    /// "Always" answers given this session whose save has not finished: they apply at once,
    /// before the store has them (the agent's next request can come before the save ends).
    unsaved: Vec<(ToolMatcher, Decision)>,
    agent: String,
    /// The session's canonical cwd: the "project" rules are kept for.
    project: PathBuf,
    /// Answer reads whose every path is inside the session's folders with allow.
    allow_reads_inside_roots: bool,
}

impl Rules {
    /// Opens the rules store on the blocking pool. A corrupt file (set aside) or one that
    /// cannot be read gives a notice for the session to show; an unreadable store means no
    /// remembered answers apply this session. `path: None`: none applied, none stored.
    pub(super) async fn open(
        path: Option<PathBuf>,
        agent: String,
        project: PathBuf,
        allow_reads_inside_roots: bool,
    ) -> Self {
        let (store, notice) = match path {
            None => (None, None),
            Some(path) => match tokio::task::spawn_blocking(move || RuleStore::open(path)).await {
                Ok(Ok((store, warning))) => (
                    Some(Arc::new(tokio::sync::Mutex::new(store))),
                    warning.map(|w| w.to_string()),
                ),
                Ok(Err(e)) => (None, Some(e.to_string())),
                Err(e) => (
                    None,
                    Some(format!("the permission rules could not be loaded: {e}")),
                ),
            },
        };
        Self {
            store,
            notice,
            unsaved: Vec::new(),
            agent,
            project,
            allow_reads_inside_roots,
        }
    }

    /// No store: nothing remembered, nothing stored (tests).
    #[cfg(test)]
    pub(super) fn none(project: PathBuf) -> Self {
        Self {
            store: None,
            notice: None,
            unsaved: Vec::new(),
            agent: "test".into(),
            project,
            allow_reads_inside_roots: false,
        }
    }

    /// The problem with the rules file, once.
    pub(super) fn take_notice(&mut self) -> Option<String> {
        self.notice.take()
    }

    /// The decision of the rules matching `subject`: a Reject beats an Allow.
    async fn decision_for(&self, subject: &Subject) -> Option<Decision> {
        let exact = subject.exact_matcher();
        let unsaved: Vec<Decision> = self
            .unsaved
            .iter()
            .filter(|(t, _)| Some(t) == exact.as_ref())
            .map(|(_, d)| *d)
            .collect();
        let stored = match &self.store {
            Some(store) => {
                let store = store.lock().await;
                store
                    .find(&self.agent, &self.project, subject)
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

    /// The user answered "always": keep it as an exact rule for this agent and project; the
    /// save's outcome comes back as [`Done::RuleSaved`].
    async fn remember(
        &mut self,
        subject: &Subject,
        kind: Option<acp::PermissionOptionKind>,
        done: &mpsc::UnboundedSender<Done>,
    ) {
        let decision = match kind {
            Some(acp::PermissionOptionKind::AllowAlways) => Decision::Allow,
            Some(acp::PermissionOptionKind::RejectAlways) => Decision::Reject,
            _ => return,
        };
        let Some(store) = self.store.clone() else {
            return;
        };
        let Some(tool) = subject.exact_matcher() else {
            // Nothing (command, path, title) to pin the answer to: it applies to this call only.
            tracing::info!("an \"always\" answer with nothing to remember it by; not kept");
            return;
        };
        self.unsaved.push((tool.clone(), decision));
        let new = NewRule {
            agent: self.agent.clone(),
            project: self.project.clone(),
            tool: tool.clone(),
            decision,
            note: None,
        };
        let tx = done.clone();
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

    /// A save finished: the rule is the store's now (or stays unsaved, for this session).
    fn saved(&mut self, tool: &ToolMatcher, decision: Decision, ok: bool) {
        if !ok {
            return;
        }
        if let Some(i) = self
            .unsaved
            .iter()
            .position(|(t, d)| t == tool && *d == decision)
        {
            self.unsaved.remove(i);
        }
    }

    /// Picks up rules another process (the CLI's `rules revoke`, another window) changed.
    pub(super) async fn reload(&self) {
        let Some(store) = self.store.clone() else {
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

impl Owner {
    /// How a remembered rule (or the reads policy) answers the parked request, if one does and
    /// the request offers an option of the wanted kind.
    pub(super) async fn remembered_answer(&self, request_id: &str) -> Option<PermissionResolution> {
        use acp::PermissionOptionKind as K;
        let parked = self.perms.get(request_id)?;
        let ParkedKind::Agent { subject, .. } = &parked.kind else {
            return None;
        };
        let rules = &self.perms.rules;
        // Chosen by kind (invariant 6); "once" first: the rule, not the agent, remembers.
        let wanted: &[K] = match rules.decision_for(subject).await {
            Some(Decision::Allow) => &[K::AllowOnce, K::AllowAlways],
            Some(Decision::Reject) => &[K::RejectOnce, K::RejectAlways],
            None if rules.allow_reads_inside_roots
                && is_read_inside(subject, self.client.roots.roots()) =>
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

    /// The user answered "always": kept as a rule.
    pub(super) async fn remember(
        &mut self,
        subject: &Subject,
        kind: Option<acp::PermissionOptionKind>,
    ) {
        let done = self.client.done_tx.clone();
        self.perms.rules.remember(subject, kind, &done).await;
    }

    pub(super) fn on_rule_saved(
        &mut self,
        tool: ToolMatcher,
        decision: Decision,
        result: Result<Rule, String>,
    ) {
        self.perms.rules.saved(&tool, decision, result.is_ok());
        match result {
            Ok(rule) => {
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
                );
            }
            Err(e) => {
                // It still applies for this session (it stays unsaved).
                self.notice(
                    NoticeSeverity::Warning,
                    "Your \"always\" answer applies to this session only: it could not be saved."
                        .into(),
                    Some(e),
                );
            }
        }
    }
}
