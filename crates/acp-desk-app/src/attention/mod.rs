//! Attention: what the desktop shows outside the window when a session needs the user (a
//! permission request waits, a turn ended in the background). Tauri-free; the shell implements
//! [`Desktop`] (tray, badge, launcher count, OS notifications) and registers [`Attention`] as a
//! registry observer.
//!
//! - [`Attention`] is the [`Observer`](crate::Observer): its calls only turn events into
//!   [`policy::Input`]s (already reduced to the texts below) and send them to its own thread,
//!   which never blocks the pump (ARCHITECTURE.md invariant 42).
//! - [`Policy`] is pure: inputs with explicit `Instant`s in, [`policy::Output`]s out, and
//!   [`Policy::next_deadline`] for the thread to sleep until. The rules (delay, focus,
//!   replacement, withdrawal, turn end) are written at [`Policy`].
//! - [`text`] holds the only strings a desktop surface may show about a request or a turn
//!   (invariant 41): a sensitive call's title, input, content or locations never reach one.

mod observer;
pub mod policy;
pub mod text;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use acp_desk_core::error_kind::ErrorKind;
use acp_desk_core::schema::v1 as acp;
use acp_desk_core::settings::Notifications;

pub use policy::Policy;

use crate::registry::lock;

/// How long a permission request waits before it notifies (the user may be about to answer it
/// in the window, or a rule settles it at once).
pub const NOTIFY_DELAY: Duration = Duration::from_secs(2);

/// What the tray, the badge, the launcher count and the window title show. Sessions in the order
/// their first waiting request arrived; only sessions with at least one waiting request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Waiting {
    pub sessions: Vec<WaitingSession>,
}

impl Waiting {
    /// Requests waiting, over every session.
    pub fn total(&self) -> usize {
        self.sessions.iter().map(|s| s.requests.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.sessions.iter().all(|s| s.requests.is_empty())
    }
}

/// A session with requests waiting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitingSession {
    /// The registry's id (`s1`, ...): what the window selects.
    pub session_id: String,
    /// The agent's name as texts show it ([`text::agent_name`]): `SessionInfo.agent` for an
    /// agent chosen by name, the program's file name for a command line (whose arguments may
    /// hold a secret).
    pub agent: String,
    pub folder: PathBuf,
    /// The folder's last path component, what texts say ("proj").
    pub folder_name: String,
    /// Oldest first.
    pub requests: Vec<WaitingRequest>,
}

/// One waiting permission request, reduced to what the desktop may show and do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitingRequest {
    /// `AgentPromptEvent.request_id`: pass it back to respond.
    pub request_id: String,
    pub kind: RequestKind,
    /// The ONLY text about the request any desktop surface may show (tray item, notification):
    /// for read-only kinds the tool's title ("Read README.md"); for every other kind the kind
    /// only ("wants to run a command"). Never the raw title or command of a sensitive call.
    pub line: String,
    /// Some only for a read-only kind whose title is shown, with an `allow_once` or
    /// `allow_always` option (`allow_once` preferred).
    pub allow_option_id: Option<String>,
    /// `reject_once` preferred, else `reject_always`; `None`: no Reject action.
    pub reject_option_id: Option<String>,
}

/// read, search, fetch, think are read-only; execute, edit, delete, move, switch_mode, other,
/// a kind this build does not know, and a request with no kind are sensitive (kind shown only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    ReadOnly(acp::ToolKind),
    Sensitive(Option<acp::ToolKind>),
    /// The agent asks the user (`elicitation`): shown as "asks you a question", never its
    /// message or fields (either may quote anything); Show only, the answer is the window's.
    Question,
}

/// One OS notification. At most one per session on screen: `show` for a session that already
/// has one REPLACES it (same D-Bus id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    pub session_id: String,
    /// "claude in proj" (agent and folder name).
    pub summary: String,
    /// "wants to run a command in proj" / "Read README.md", + " and 2 more"; "finished".
    pub body: String,
    /// [`NotificationAction::Show`] always first.
    pub actions: Vec<NotificationAction>,
    pub about: NotificationAbout,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotificationAction {
    /// Show the window on the session (and its dialog, for a permission request).
    Show,
    Allow {
        request_id: String,
        option_id: String,
    },
    Reject {
        request_id: String,
        option_id: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotificationAbout {
    /// The request the notification names (the newest one it was shown for).
    Permission {
        request_id: String,
    },
    TurnEnded,
}

/// Implemented by the shell (src-tauri/src/desktop). Called from the attention thread, never
/// from a session pump; may block briefly (a D-Bus call).
pub trait Desktop: Send + Sync + 'static {
    /// Tray icon, title and menu, badge, launcher count, urgency hint.
    fn waiting_changed(&self, waiting: &Waiting);
    /// Shows the session's notification, or replaces the one it has.
    fn show(&self, n: &Notification);
    /// Closes the session's notification (answered, closed), if it has one.
    fn withdraw(&self, session_id: &str);
}

/// Which notifications are on: the settings file's `notifications` section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switches {
    pub permission_requests: bool,
    pub turn_end: bool,
}

impl Default for Switches {
    fn default() -> Self {
        Switches::from(&Notifications::default())
    }
}

impl From<&Notifications> for Switches {
    fn from(n: &Notifications) -> Self {
        Switches {
            permission_requests: n.permission_requests,
            turn_end: n.turn_end,
        }
    }
}

/// What the attention thread is told.
enum Message {
    Input(policy::Input),
    Finish,
}

/// The observer and its thread. Register it with `registry.add_observer(attention.clone())`;
/// the thread runs the [`Policy`] with a real clock and calls the [`Desktop`].
pub struct Attention {
    tx: mpsc::Sender<Message>,
    waiting: Arc<Mutex<Waiting>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Per session (registry id): the kind of the last `error` since its turn started, so that
    /// a failed turn's text can name a generic reason.
    turn_errors: Mutex<std::collections::HashMap<String, ErrorKind>>,
}

impl Attention {
    /// Starts the thread with the real delay ([`NOTIFY_DELAY`]).
    pub fn start(
        desktop: Arc<dyn Desktop>,
        switches: Switches,
    ) -> Result<Arc<Attention>, std::io::Error> {
        Attention::start_with_delay(desktop, switches, NOTIFY_DELAY)
    }

    /// [`Attention::start`] with another delay: for tests, which should not sleep 2 s. The
    /// shell uses `start`.
    pub fn start_with_delay(
        desktop: Arc<dyn Desktop>,
        switches: Switches,
        delay: Duration,
    ) -> Result<Arc<Attention>, std::io::Error> {
        let (tx, rx) = mpsc::channel();
        let waiting = Arc::new(Mutex::new(Waiting::default()));
        let snapshot = waiting.clone();
        let thread = std::thread::Builder::new()
            .name("acp-desk-attention".into())
            .spawn(move || run(rx, Policy::new(switches, delay), desktop, snapshot))?;
        Ok(Arc::new(Attention {
            tx,
            waiting,
            thread: Mutex::new(Some(thread)),
            turn_errors: Mutex::new(std::collections::HashMap::new()),
        }))
    }

    /// The window's focus (a hidden or minimized window is unfocused).
    pub fn set_focused(&self, focused: bool) {
        self.send(policy::Input::FocusChanged { focused });
    }

    /// The settings' switches changed.
    pub fn set_switches(&self, switches: Switches) {
        self.send(policy::Input::Switches(switches));
    }

    /// The requests waiting now, as the thread last saw them.
    pub fn waiting(&self) -> Waiting {
        lock(&self.waiting).clone()
    }

    /// Ends the thread (app exit) and waits for it; later calls do nothing. Notifications
    /// already on screen stay: the shell closes them when it goes.
    pub fn finish(&self) {
        let _ = self.tx.send(Message::Finish);
        let thread = lock(&self.thread).take();
        if let Some(t) = thread
            && t.thread().id() != std::thread::current().id()
            && t.join().is_err()
        {
            tracing::warn!("the attention thread panicked");
        }
    }

    fn send(&self, input: policy::Input) {
        // An unbounded channel: sending never waits. After `finish` nobody listens and the
        // input is dropped, as it should be at exit.
        let _ = self.tx.send(Message::Input(input));
    }
}

impl Drop for Attention {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The attention thread: sleeps until the next input or the policy's next deadline.
fn run(
    rx: mpsc::Receiver<Message>,
    mut policy: Policy,
    desktop: Arc<dyn Desktop>,
    snapshot: Arc<Mutex<Waiting>>,
) {
    loop {
        let message = match policy.next_deadline() {
            Some(deadline) => {
                match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                    Ok(m) => Some(m),
                    Err(mpsc::RecvTimeoutError::Timeout) => None,
                    Err(mpsc::RecvTimeoutError::Disconnected) => return,
                }
            }
            None => match rx.recv() {
                Ok(m) => Some(m),
                Err(_) => return,
            },
        };
        let input = match message {
            Some(Message::Input(input)) => input,
            Some(Message::Finish) => return,
            None => policy::Input::Tick,
        };
        for output in policy.handle(input, Instant::now()) {
            if let policy::Output::WaitingChanged(w) = &output {
                *lock(&snapshot) = w.clone();
            }
            // A desktop that panics (a D-Bus library's bug) must not end notifications for the
            // rest of the run: it is logged and the next output goes on.
            let call = std::panic::AssertUnwindSafe(|| match &output {
                policy::Output::Show(n) => desktop.show(n),
                policy::Output::Withdraw(session_id) => desktop.withdraw(session_id),
                policy::Output::WaitingChanged(w) => desktop.waiting_changed(w),
            });
            if std::panic::catch_unwind(call).is_err() {
                tracing::error!("the desktop panicked while showing attention; going on");
            }
        }
    }
}
