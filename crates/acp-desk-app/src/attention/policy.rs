//! The notification policy, pure: every input carries its `Instant`, every decision is an
//! [`Output`], and [`Policy::next_deadline`] says when to call again with [`Input::Tick`].
//! The attention thread drives it with the real clock; the unit tests with made-up ones.
//!
//! The rules:
//! - A request notifies once it has waited the delay (2 s, [`super::NOTIFY_DELAY`]) while the
//!   window is unfocused. One still waiting when the window loses focus later notifies then.
//!   While the window is focused nothing notifies.
//! - At most one notification per session: a newer request of a session that has one on screen
//!   replaces it (same session id), and its body counts the others waiting there ("and 2 more").
//! - A request answered (or cancelled, or settled by a rule) leaves; when nothing waits in the
//!   session any more its permission notification is withdrawn. When the answered one was the
//!   request the notification names (its Allow and Reject answer that one), the notification is
//!   replaced by one naming the newest request still waiting that had notified, or withdrawn.
//!   A dead session's requests are all gone; a closed session's notification, whatever it is
//!   about, is withdrawn.
//! - Focus gained withdraws nothing: the user may still want what is on screen.
//! - A turn that ends while the window is unfocused notifies ("finished", "stopped", "failed:
//!   ..."), with Show only, unless the session's permission notification is on screen (it is
//!   still relevant, and one per session).
//! - Switches: `permission_requests` off shows no permission notification (and withdraws those
//!   on screen); `turn_end` off shows no turn-end one. The waiting list (tray, badge) is kept
//!   either way.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::text;
use super::{
    Notification, NotificationAbout, NotificationAction, Switches, Waiting, WaitingRequest,
    WaitingSession,
};

/// A session as texts name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRef {
    /// The registry's id.
    pub session_id: String,
    /// [`text::agent_name`].
    pub agent: String,
    pub folder: PathBuf,
    /// [`text::folder_name`].
    pub folder_name: String,
}

impl SessionRef {
    pub fn of(info: &crate::registry::SessionInfo) -> Self {
        SessionRef {
            session_id: info.id.clone(),
            agent: text::agent_name(info),
            folder: info.folder.clone(),
            folder_name: text::folder_name(&info.folder),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// An `agent-prompt`: a permission request is waiting.
    RequestArrived {
        session: SessionRef,
        request: WaitingRequest,
    },
    /// An `agent-prompt-settled`: it is not waiting any more.
    Settled {
        session_id: String,
        request_id: String,
    },
    /// The session died (`session-status: dead`): nothing of it waits any more.
    SessionDead {
        session_id: String,
    },
    /// The session was closed: nothing of it waits, nothing of it stays on screen.
    SessionClosed {
        session_id: String,
    },
    /// A `turn-end`, with its text ([`text::turn_end`]).
    TurnEnded {
        session: SessionRef,
        text: &'static str,
    },
    FocusChanged {
        focused: bool,
    },
    Switches(Switches),
    /// Time passed (the deadline came).
    Tick,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Show the session's notification, or replace the one it has.
    Show(Notification),
    /// Close the session's notification.
    Withdraw(String),
    /// The waiting requests changed.
    WaitingChanged(Waiting),
}

struct Pending {
    request: WaitingRequest,
    arrived: Instant,
    /// A notification was shown for it (it is not due again).
    notified: bool,
}

struct Session {
    info: SessionRef,
    /// Oldest first.
    requests: Vec<Pending>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum OnScreen {
    Permission { request_id: String },
    TurnEnded,
}

pub struct Policy {
    delay: Duration,
    focused: bool,
    switches: Switches,
    /// Sessions with requests waiting, in the order their first one arrived.
    sessions: Vec<Session>,
    /// The notification each session has on screen, by registry id.
    on_screen: HashMap<String, OnScreen>,
}

impl Policy {
    /// The window counts as unfocused until told otherwise: better one notification too many
    /// than an agent waiting unseen because the shell never said where the focus was.
    pub fn new(switches: Switches, delay: Duration) -> Self {
        Policy {
            delay,
            focused: false,
            switches,
            sessions: Vec::new(),
            on_screen: HashMap::new(),
        }
    }

    /// Takes one input at `now`; returns what to do, in order.
    pub fn handle(&mut self, input: Input, now: Instant) -> Vec<Output> {
        let mut out = Vec::new();
        match input {
            Input::RequestArrived { session, request } => {
                self.arrived(session, request, now, &mut out)
            }
            Input::Settled {
                session_id,
                request_id,
            } => self.settled(&session_id, &request_id, &mut out),
            Input::SessionDead { session_id } => self.gone(&session_id, false, &mut out),
            Input::SessionClosed { session_id } => self.gone(&session_id, true, &mut out),
            Input::TurnEnded { session, text } => self.turn_ended(session, text, &mut out),
            Input::FocusChanged { focused } => self.focused = focused,
            Input::Switches(switches) => self.switches_changed(switches, &mut out),
            Input::Tick => {}
        }
        self.notify_due(now, &mut out);
        out
    }

    /// When a waiting request becomes due; `None` while nothing can notify (focused, switched
    /// off, nothing waiting that has not notified): the next input wakes the caller.
    pub fn next_deadline(&self) -> Option<Instant> {
        if !self.may_notify() {
            return None;
        }
        self.sessions
            .iter()
            .flat_map(|s| &s.requests)
            .filter(|p| !p.notified)
            .map(|p| self.due_at(p))
            .min()
    }

    /// The requests waiting now.
    pub fn waiting(&self) -> Waiting {
        Waiting {
            sessions: self
                .sessions
                .iter()
                .map(|s| WaitingSession {
                    session_id: s.info.session_id.clone(),
                    agent: s.info.agent.clone(),
                    folder: s.info.folder.clone(),
                    folder_name: s.info.folder_name.clone(),
                    requests: s.requests.iter().map(|p| p.request.clone()).collect(),
                })
                .collect(),
        }
    }

    fn may_notify(&self) -> bool {
        !self.focused && self.switches.permission_requests
    }

    fn due_at(&self, p: &Pending) -> Instant {
        p.arrived.checked_add(self.delay).unwrap_or(p.arrived)
    }

    fn arrived(
        &mut self,
        session: SessionRef,
        request: WaitingRequest,
        now: Instant,
        out: &mut Vec<Output>,
    ) {
        let pending = Pending {
            request,
            arrived: now,
            notified: false,
        };
        match self
            .sessions
            .iter_mut()
            .find(|s| s.info.session_id == session.session_id)
        {
            Some(s) => {
                // The engine never repeats a request id; a replay of one is not a new request.
                if s.requests
                    .iter()
                    .any(|p| p.request.request_id == pending.request.request_id)
                {
                    return;
                }
                s.info = session;
                s.requests.push(pending);
            }
            None => self.sessions.push(Session {
                info: session,
                requests: vec![pending],
            }),
        }
        out.push(Output::WaitingChanged(self.waiting()));
    }

    fn settled(&mut self, session_id: &str, request_id: &str, out: &mut Vec<Output>) {
        let Some(i) = self.index(session_id) else {
            return;
        };
        let before = self.sessions[i].requests.len();
        self.sessions[i]
            .requests
            .retain(|p| p.request.request_id != request_id);
        if self.sessions[i].requests.len() == before {
            return;
        }
        if self.sessions[i].requests.is_empty() {
            self.sessions.remove(i);
            out.push(Output::WaitingChanged(self.waiting()));
            self.withdraw_permission(session_id, out);
            return;
        }
        out.push(Output::WaitingChanged(self.waiting()));
        let names_it = matches!(
            self.on_screen.get(session_id),
            Some(OnScreen::Permission { request_id: on }) if on == request_id
        );
        if names_it {
            // Its actions would answer a request that is gone: name another, or go.
            match self.permission_notification(i) {
                Some(n) => self.show(n, out),
                None => self.withdraw_permission(session_id, out),
            }
        }
    }

    fn gone(&mut self, session_id: &str, closed: bool, out: &mut Vec<Output>) {
        if let Some(i) = self.index(session_id) {
            self.sessions.remove(i);
            out.push(Output::WaitingChanged(self.waiting()));
        }
        if closed {
            if self.on_screen.remove(session_id).is_some() {
                out.push(Output::Withdraw(session_id.to_owned()));
            }
        } else {
            self.withdraw_permission(session_id, out);
        }
    }

    fn turn_ended(&mut self, session: SessionRef, text: &'static str, out: &mut Vec<Output>) {
        if self.focused || !self.switches.turn_end {
            return;
        }
        let waiting_here = self.index(&session.session_id).is_some();
        let permission_shown = matches!(
            self.on_screen.get(&session.session_id),
            Some(OnScreen::Permission { .. })
        );
        if waiting_here && permission_shown {
            return;
        }
        self.show(
            Notification {
                session_id: session.session_id.clone(),
                summary: text::summary(&session.agent, &session.folder_name),
                body: text.to_owned(),
                actions: vec![NotificationAction::Show],
                about: NotificationAbout::TurnEnded,
            },
            out,
        );
    }

    fn switches_changed(&mut self, switches: Switches, out: &mut Vec<Output>) {
        self.switches = switches;
        if !switches.permission_requests {
            let shown: Vec<String> = self
                .on_screen
                .iter()
                .filter(|(_, o)| matches!(o, OnScreen::Permission { .. }))
                .map(|(id, _)| id.clone())
                .collect();
            for id in shown {
                self.withdraw_permission(&id, out);
            }
        }
    }

    fn notify_due(&mut self, now: Instant, out: &mut Vec<Output>) {
        if !self.may_notify() {
            return;
        }
        for i in 0..self.sessions.len() {
            let delay = self.delay;
            let mut any = false;
            for p in &mut self.sessions[i].requests {
                if !p.notified && p.arrived.checked_add(delay).unwrap_or(p.arrived) <= now {
                    p.notified = true;
                    any = true;
                }
            }
            if any && let Some(n) = self.permission_notification(i) {
                self.show(n, out);
            }
        }
    }

    /// The session's permission notification: about its newest request that notified, counting
    /// the others waiting there.
    fn permission_notification(&self, i: usize) -> Option<Notification> {
        let s = &self.sessions[i];
        let subject = &s.requests.iter().rev().find(|p| p.notified)?.request;
        let mut actions = vec![NotificationAction::Show];
        if let Some(option_id) = &subject.allow_option_id {
            actions.push(NotificationAction::Allow {
                request_id: subject.request_id.clone(),
                option_id: option_id.clone(),
            });
        }
        if let Some(option_id) = &subject.reject_option_id {
            actions.push(NotificationAction::Reject {
                request_id: subject.request_id.clone(),
                option_id: option_id.clone(),
            });
        }
        Some(Notification {
            session_id: s.info.session_id.clone(),
            summary: text::summary(&s.info.agent, &s.info.folder_name),
            body: text::permission_body(subject, &s.info.folder_name, s.requests.len() - 1),
            actions,
            about: NotificationAbout::Permission {
                request_id: subject.request_id.clone(),
            },
        })
    }

    fn show(&mut self, n: Notification, out: &mut Vec<Output>) {
        let on = match &n.about {
            NotificationAbout::Permission { request_id } => OnScreen::Permission {
                request_id: request_id.clone(),
            },
            NotificationAbout::TurnEnded => OnScreen::TurnEnded,
        };
        self.on_screen.insert(n.session_id.clone(), on);
        out.push(Output::Show(n));
    }

    fn withdraw_permission(&mut self, session_id: &str, out: &mut Vec<Output>) {
        if matches!(
            self.on_screen.get(session_id),
            Some(OnScreen::Permission { .. })
        ) {
            self.on_screen.remove(session_id);
            out.push(Output::Withdraw(session_id.to_owned()));
        }
    }

    fn index(&self, session_id: &str) -> Option<usize> {
        self.sessions
            .iter()
            .position(|s| s.info.session_id == session_id)
    }
}
