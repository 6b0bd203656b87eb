//! OS notifications. Linux: the freedesktop `org.freedesktop.Notifications` service, spoken to
//! over one session-bus connection of ours that both sends `Notify` and listens for
//! `ActionInvoked` / `NotificationClosed`. Servers such as GNOME Shell address those signals to
//! the connection that sent the notification, and a replaced notification keeps its id: with
//! notify-rust's handle (a new connection per `show`, a blocking waiter per handle) a replaced
//! notification's waiter would hear the replacement's clicks too, or never hear anything and
//! stay blocked. notify-rust is used for what it does well here: the one-off `notify_plain`, and
//! macOS / Windows (no actions there: notify-rust does not report them; unverified).

use acp_desk_app::attention::{Notification, NotificationAbout, NotificationAction};

/// What the user did with a notification, as the shell acts on it. (Only Linux reports actions:
/// elsewhere nothing makes one.)
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(not(all(unix, not(target_os = "macos"))), allow(dead_code))]
pub enum Invoked {
    /// The body was clicked (`default`) or Show was chosen: show the window on the session
    /// (on its request's dialog when the notification was about one).
    Show {
        session_id: String,
        request_id: Option<String>,
    },
    /// Allow or Reject: answer the request with this option, as the dialog would.
    Respond {
        session_id: String,
        request_id: String,
        option_id: String,
    },
}

/// The D-Bus action keys. `default` is the spec's key for a click on the body.
#[cfg_attr(not(all(unix, not(target_os = "macos"))), allow(dead_code))]
mod keys {
    pub const DEFAULT: &str = "default";
    pub const SHOW: &str = "show";
    pub const ALLOW: &str = "allow";
    pub const REJECT: &str = "reject";
}
use keys::{ALLOW, DEFAULT, REJECT, SHOW};

/// The actions list `Notify` takes: key, label, key, label...
#[cfg_attr(not(all(unix, not(target_os = "macos"))), allow(dead_code))]
fn action_list(n: &Notification) -> Vec<&'static str> {
    let mut out = vec![DEFAULT, "Show"];
    for a in &n.actions {
        out.extend_from_slice(match a {
            NotificationAction::Show => &[SHOW, "Show"],
            NotificationAction::Allow { .. } => &[ALLOW, "Allow"],
            NotificationAction::Reject { .. } => &[REJECT, "Reject"],
        });
    }
    out
}

/// What the action key `key` of notification `n` means.
#[cfg_attr(not(all(unix, not(target_os = "macos"))), allow(dead_code))]
fn invoked(n: &Notification, key: &str) -> Option<Invoked> {
    let respond = |request_id: &String, option_id: &String| Invoked::Respond {
        session_id: n.session_id.clone(),
        request_id: request_id.clone(),
        option_id: option_id.clone(),
    };
    match key {
        DEFAULT | SHOW => Some(Invoked::Show {
            session_id: n.session_id.clone(),
            request_id: match &n.about {
                NotificationAbout::Permission { request_id } => Some(request_id.clone()),
                NotificationAbout::TurnEnded => None,
            },
        }),
        ALLOW => n.actions.iter().find_map(|a| match a {
            NotificationAction::Allow {
                request_id,
                option_id,
            } => Some(respond(request_id, option_id)),
            _ => None,
        }),
        REJECT => n.actions.iter().find_map(|a| match a {
            NotificationAction::Reject {
                request_id,
                option_id,
            } => Some(respond(request_id, option_id)),
            _ => None,
        }),
        _ => None,
    }
}

/// A one-off notification with no actions (lifecycle's "still running in the tray"). Returns at
/// once: the D-Bus call runs on a thread of its own, so the caller may be the main thread.
pub fn notify_plain(summary: &str, body: &str) {
    let (summary, body) = (summary.to_string(), body.to_string());
    let spawned = std::thread::Builder::new()
        .name("notify-plain".into())
        .spawn(move || {
            let mut n = notify_rust::Notification::new();
            n.summary(&summary).body(&body);
            #[cfg(all(unix, not(target_os = "macos")))]
            n.appname(super::APP_NAME)
                .icon(super::DESKTOP_ID)
                .hint(notify_rust::Hint::DesktopEntry(super::DESKTOP_ID.into()));
            if let Err(e) = n.show() {
                tracing::warn!("could not show a notification: {e}");
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("could not start showing a notification: {e}");
    }
}

#[cfg(all(unix, not(target_os = "macos")))]
pub use linux::Notifier;

#[cfg(not(all(unix, not(target_os = "macos"))))]
pub use other::Notifier;

#[cfg(all(unix, not(target_os = "macos")))]
mod linux {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
    use std::time::Instant;

    use acp_desk_app::attention::Notification;
    use zbus::blocking::{Connection, MessageIterator};
    use zbus::zvariant::Value;

    use super::{Invoked, action_list, invoked};

    const NAME: &str = "org.freedesktop.Notifications";
    const PATH: &str = "/org/freedesktop/Notifications";

    type OnAction = Box<dyn Fn(Invoked) + Send + Sync>;

    /// The session's notification on screen: its D-Bus id (passed back as `replaces_id`) and
    /// what it offered (an action key is read against it).
    struct OnScreen {
        id: u32,
        notification: Notification,
    }

    #[derive(Default)]
    struct Screen {
        by_session: HashMap<String, OnScreen>,
    }

    impl Screen {
        fn session_of(&self, id: u32) -> Option<&OnScreen> {
            self.by_session.values().find(|s| s.id == id)
        }
    }

    struct Inner {
        conn: Connection,
        screen: Mutex<Screen>,
        on_action: OnAction,
        /// Whether the server reads the body as markup (`body-markup`), asked once it answers.
        markup: OnceLock<bool>,
        /// The bus name of the server that answered our last `Notify`: only its signals are
        /// actions (any client on the bus can send an `ActionInvoked`, and ids are sequential).
        server: Mutex<Option<String>>,
    }

    impl Inner {
        fn body_markup(&self) -> bool {
            if let Some(m) = self.markup.get() {
                return *m;
            }
            let caps = self
                .conn
                .call_method(Some(NAME), PATH, Some(NAME), "GetCapabilities", &())
                .and_then(|r| r.body().deserialize::<Vec<String>>());
            match caps {
                Ok(caps) => *self
                    .markup
                    .get_or_init(|| caps.iter().any(|c| c == "body-markup")),
                // Not cached: the server may not be up yet. Escaped meanwhile, the safe side.
                Err(_) => true,
            }
        }
    }

    /// A body as text, for a server that reads markup: a tool's title such as
    /// `Read <span size="1">…</span>` must show as written, not hide part of itself next to an
    /// Allow button (the spec's markup is a small XML subset, so the XML escapes are enough).
    pub(super) fn escape_markup(text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            match c {
                '&' => out.push_str("&amp;"),
                '<' => out.push_str("&lt;"),
                '>' => out.push_str("&gt;"),
                '"' => out.push_str("&quot;"),
                '\'' => out.push_str("&apos;"),
                c => out.push(c),
            }
        }
        out
    }

    /// The notifications of the app's sessions. Connects on first use; a bus that cannot be
    /// reached is logged once and every call after that does nothing.
    pub struct Notifier {
        inner: OnceLock<Option<Arc<Inner>>>,
        on_action: Mutex<Option<OnAction>>,
    }

    fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        m.lock().unwrap_or_else(PoisonError::into_inner)
    }

    impl Notifier {
        /// `on_action` is called on the listener thread for each action the user takes.
        pub fn new(on_action: impl Fn(Invoked) + Send + Sync + 'static) -> Self {
            Self {
                inner: OnceLock::new(),
                on_action: Mutex::new(Some(Box::new(on_action))),
            }
        }

        fn inner(&self) -> Option<&Arc<Inner>> {
            self.inner
                .get_or_init(|| {
                    let on_action = lock(&self.on_action).take()?;
                    match connect(on_action) {
                        Ok(inner) => Some(inner),
                        Err(e) => {
                            tracing::warn!(
                                "notifications are off: the session bus cannot be reached ({e})"
                            );
                            None
                        }
                    }
                })
                .as_ref()
        }

        /// `GetServerInformation`: the server's name, or why there is none.
        pub fn server(&self) -> Result<String, String> {
            let Some(inner) = self.inner() else {
                return Err("the session bus cannot be reached".into());
            };
            let reply = inner
                .conn
                .call_method(Some(NAME), PATH, Some(NAME), "GetServerInformation", &())
                .map_err(|e| e.to_string())?;
            let (name, vendor, version, spec): (String, String, String, String) =
                reply.body().deserialize().map_err(|e| e.to_string())?;
            Ok(format!("{name} {version} ({vendor}, spec {spec})"))
        }

        /// Shows `n`, replacing the session's notification on screen if there is one.
        pub fn show(&self, n: &Notification) {
            let Some(inner) = self.inner() else { return };
            // Held across the call: a second `show` of the session must not race this one to
            // a second notification.
            let mut screen = lock(&inner.screen);
            let replaces = screen
                .by_session
                .get(&n.session_id)
                .map(|s| s.id)
                .unwrap_or(0);
            let mut hints: HashMap<&str, Value> = HashMap::new();
            hints.insert("desktop-entry", Value::from(super::super::DESKTOP_ID));
            hints.insert("urgency", Value::U8(1));
            let body = if inner.body_markup() {
                escape_markup(&n.body)
            } else {
                n.body.clone()
            };
            let asked = Instant::now();
            let reply = inner.conn.call_method(
                Some(NAME),
                PATH,
                Some(NAME),
                "Notify",
                &(
                    super::super::APP_NAME,
                    replaces,
                    super::super::DESKTOP_ID,
                    n.summary.as_str(),
                    body.as_str(),
                    action_list(n),
                    hints,
                    -1i32,
                ),
            );
            let reply = reply.and_then(|r| {
                let id = r.body().deserialize::<u32>()?;
                Ok((id, r.header().sender().map(|s| s.to_string())))
            });
            match reply {
                Ok((id, sender)) => {
                    *lock(&inner.server) = sender;
                    tracing::debug!(
                        "notification {id} for session {} shown in {:?}",
                        n.session_id,
                        asked.elapsed()
                    );
                    screen.by_session.insert(
                        n.session_id.clone(),
                        OnScreen {
                            id,
                            notification: n.clone(),
                        },
                    );
                }
                // The summary and body stay out of the log: the policy allows them on screen,
                // not in files.
                Err(e) => tracing::warn!(
                    "could not show the notification of session {}: {e}",
                    n.session_id
                ),
            }
        }

        /// Closes the session's notification, if one is on screen.
        pub fn withdraw(&self, session_id: &str) {
            let Some(inner) = self.inner.get().and_then(Option::as_ref) else {
                return;
            };
            let Some(gone) = lock(&inner.screen).by_session.remove(session_id) else {
                return;
            };
            close(&inner.conn, gone.id);
        }

        /// Closes every notification of ours (the app quits: their actions would reach no one).
        pub fn withdraw_all(&self) {
            let Some(inner) = self.inner.get().and_then(Option::as_ref) else {
                return;
            };
            let gone: Vec<OnScreen> = lock(&inner.screen)
                .by_session
                .drain()
                .map(|(_, s)| s)
                .collect();
            for s in gone {
                close(&inner.conn, s.id);
            }
        }
    }

    fn close(conn: &Connection, id: u32) {
        if let Err(e) = conn.call_method(Some(NAME), PATH, Some(NAME), "CloseNotification", &id) {
            tracing::debug!("could not close notification {id}: {e}");
        }
    }

    fn connect(on_action: OnAction) -> zbus::Result<Arc<Inner>> {
        let conn = Connection::session()?;
        // Signals from the server only, whoever it addresses them to (the spec allows both).
        let rule = zbus::MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .interface(NAME)?
            .path(PATH)?
            .build();
        let signals = MessageIterator::for_match_rule(rule, &conn, Some(64))?;
        let inner = Arc::new(Inner {
            conn,
            screen: Mutex::new(Screen::default()),
            on_action,
            markup: OnceLock::new(),
            server: Mutex::new(None),
        });
        let listener = Arc::downgrade(&inner);
        std::thread::Builder::new()
            .name("notifications".into())
            .spawn(move || listen(signals, listener))
            .map_err(|e| zbus::Error::Failure(format!("no listener thread: {e}")))?;
        Ok(inner)
    }

    fn listen(signals: MessageIterator, inner: std::sync::Weak<Inner>) {
        for msg in signals {
            let Some(inner) = inner.upgrade() else { return };
            let msg = match msg {
                Ok(m) => m,
                Err(e) => {
                    tracing::debug!("a notification signal could not be read: {e}");
                    continue;
                }
            };
            let header = msg.header();
            let sender = header.sender().map(|s| s.as_str());
            if sender.is_none() || lock(&inner.server).as_deref() != sender {
                tracing::debug!("a notification signal from {sender:?}, not our server: ignored");
                continue;
            }
            match header.member().map(|m| m.as_str()) {
                Some("ActionInvoked") => {
                    let Ok((id, key)) = msg.body().deserialize::<(u32, String)>() else {
                        continue;
                    };
                    let action = lock(&inner.screen)
                        .session_of(id)
                        .and_then(|s| invoked(&s.notification, &key));
                    match action {
                        Some(action) => (inner.on_action)(action),
                        None => tracing::debug!("action {key} on notification {id}: not ours"),
                    }
                }
                Some("NotificationClosed") => {
                    let Ok((id, _reason)) = msg.body().deserialize::<(u32, u32)>() else {
                        continue;
                    };
                    // A later notification of the session is a new one, not a replacement
                    // of one the user dismissed.
                    lock(&inner.screen).by_session.retain(|_, s| s.id != id);
                }
                _ => {}
            }
        }
        tracing::debug!("the notification listener ended (the bus connection closed)");
    }
}

/// macOS and Windows: shown through notify-rust, without actions (it does not report them
/// there) and without replacing or closing (unverified on those platforms).
#[cfg(not(all(unix, not(target_os = "macos"))))]
mod other {
    use acp_desk_app::attention::Notification;

    use super::Invoked;

    pub struct Notifier;

    impl Notifier {
        pub fn new(on_action: impl Fn(Invoked) + Send + Sync + 'static) -> Self {
            let _ = on_action;
            Self
        }

        pub fn server(&self) -> Result<String, String> {
            Ok(std::env::consts::OS.to_string())
        }

        pub fn show(&self, n: &Notification) {
            let mut out = notify_rust::Notification::new();
            out.summary(&n.summary).body(&n.body);
            if let Err(e) = out.show() {
                tracing::warn!(
                    "could not show the notification of session {}: {e}",
                    n.session_id
                );
            }
        }

        pub fn withdraw(&self, session_id: &str) {
            let _ = session_id;
        }

        pub fn withdraw_all(&self) {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn permission(actions: Vec<NotificationAction>) -> Notification {
        Notification {
            session_id: "s1".into(),
            summary: "claude in proj".into(),
            body: "wants to run a command in proj".into(),
            actions,
            about: NotificationAbout::Permission {
                request_id: "t#1".into(),
            },
        }
    }

    #[test]
    fn the_body_and_show_open_the_request_and_reject_answers_it() {
        let n = permission(vec![
            NotificationAction::Show,
            NotificationAction::Reject {
                request_id: "t#1".into(),
                option_id: "no".into(),
            },
        ]);
        assert_eq!(
            action_list(&n),
            ["default", "Show", "show", "Show", "reject", "Reject"]
        );
        let show = Invoked::Show {
            session_id: "s1".into(),
            request_id: Some("t#1".into()),
        };
        assert_eq!(invoked(&n, "default"), Some(show.clone()));
        assert_eq!(invoked(&n, "show"), Some(show));
        assert_eq!(
            invoked(&n, "reject"),
            Some(Invoked::Respond {
                session_id: "s1".into(),
                request_id: "t#1".into(),
                option_id: "no".into(),
            })
        );
        // Allow was not offered: a server that sends it anyway answers nothing.
        assert_eq!(invoked(&n, "allow"), None);
        assert_eq!(invoked(&n, "made-up"), None);
    }

    #[test]
    fn a_turn_end_notification_only_shows_the_session() {
        let n = Notification {
            about: NotificationAbout::TurnEnded,
            ..permission(vec![NotificationAction::Show])
        };
        assert_eq!(action_list(&n), ["default", "Show", "show", "Show"]);
        assert_eq!(
            invoked(&n, "default"),
            Some(Invoked::Show {
                session_id: "s1".into(),
                request_id: None,
            })
        );
        assert_eq!(invoked(&n, "reject"), None);
    }

    #[cfg(all(unix, not(target_os = "macos")))]
    #[test]
    fn a_title_cannot_hide_itself_in_markup() {
        assert_eq!(
            linux::escape_markup(r#"Read <span size="1">a</span> & 'b'"#),
            "Read &lt;span size=&quot;1&quot;&gt;a&lt;/span&gt; &amp; &apos;b&apos;"
        );
    }
}
