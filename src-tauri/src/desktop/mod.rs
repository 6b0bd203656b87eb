//! The shell's side of being a desktop citizen: what the attention policy
//! (`acp_desk_app::attention`) decides reaches the desktop here. OS notifications with their
//! actions (`notify`), the tray icon, title and menu (`tray`), the launcher count (`launcher`),
//! the window's urgency hint, and the way back: a click shows the window on the session's
//! dialog (`show-request`), Allow / Reject answer through `sessions.respond`, the dialog's own
//! path. Window focus goes to the policy from here.
//!
//! Threads: the policy calls [`Shell`] on its own thread. Notifications are D-Bus round trips
//! made there; everything that touches the tray or the window is handed to the main thread
//! (`run_on_main_thread`) and done there only, so no lock of ours is ever held while waiting
//! for the main thread.

mod launcher;
mod notify;
pub mod tray;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use acp_desk_app::attention::{Attention, Desktop, Notification, Switches, Waiting};
use acp_desk_core::events::PermissionResolution;
use tauri::{AppHandle, Emitter, Manager, Runtime, UserAttentionType, WindowEvent};

use crate::AppState;
use crate::ipc::{AppEvent, DesktopNotice, ShowRequest};
use launcher::{Badge, Launcher};
use notify::{Invoked, Notifier};
use tray::{Tray, TrayAction};

pub use notify::notify_plain;

/// The name of the app's `.desktop` file without `.desktop` (the package installs
/// `acp-desk.desktop`): the launcher count's app uri, the notifications' `desktop-entry` hint
/// and their icon name.
pub const DESKTOP_ID: &str = "acp-desk";
/// The app's name as notifications show it.
pub const APP_NAME: &str = "ACP Desk";
/// The main window's label (tauri.conf.json).
const MAIN: &str = "main";

/// Said once when the platform has no notification service, for a window that asks later.
static NOTICE: OnceLock<String> = OnceLock::new();

/// The notice the window shows at its start, if the notification service was found missing
/// before it asked (`app_info`); later it comes as `desktop-notice`.
pub fn notice() -> Option<String> {
    NOTICE.get().cloned()
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the tray, badge and urgency hint show now (touched on the main thread only).
#[derive(Default)]
struct Shown {
    waiting: Waiting,
    urgent: bool,
    badge: Option<Badge>,
}

struct Inner<R: Runtime> {
    app: AppHandle<R>,
    notifier: Notifier,
    tray: Tray<R>,
    launcher: Launcher,
    focused: AtomicBool,
    shown: Mutex<Shown>,
    attention: OnceLock<Arc<Attention>>,
}

/// The desktop the attention policy talks to.
pub struct Shell<R: Runtime> {
    inner: Arc<Inner<R>>,
}

impl<R: Runtime> Desktop for Shell<R> {
    fn waiting_changed(&self, waiting: &Waiting) {
        let inner = self.inner.clone();
        let waiting = waiting.clone();
        if let Err(e) = self
            .inner
            .app
            .run_on_main_thread(move || inner.redraw(Some(waiting), None))
        {
            tracing::debug!("could not redraw the tray: {e}");
        }
    }

    fn show(&self, n: &Notification) {
        self.inner.notifier.show(n);
    }

    fn withdraw(&self, session_id: &str) {
        self.inner.notifier.withdraw(session_id);
    }
}

impl<R: Runtime> Inner<R> {
    /// Draws the tray, badge and urgency hint for `waiting` (or, with `None`, for what was last
    /// told, after a change of focus or visibility). `visible`: the window was just shown or
    /// hidden (on Linux `is_visible` says so only once the toolkit has done it). Main thread
    /// only.
    fn redraw(&self, waiting: Option<Waiting>, visible: Option<bool>) {
        let window = self.app.get_webview_window(MAIN);
        let focused = self.focused.load(Ordering::SeqCst);
        let visible = visible.unwrap_or_else(|| {
            window
                .as_ref()
                .and_then(|w| w.is_visible().ok())
                .unwrap_or(false)
        });
        let mut shown = lock(&self.shown);
        let newly = waiting
            .as_ref()
            .is_some_and(|w| w.total() > shown.waiting.total());
        if let Some(w) = waiting {
            shown.waiting = w;
        }
        let total = shown.waiting.total();
        let urgent = total > 0 && !focused && (newly || shown.urgent);
        if let Some(w) = &window
            && ((urgent && newly) || urgent != shown.urgent)
        {
            let kind = urgent.then_some(UserAttentionType::Informational);
            if let Err(e) = w.request_user_attention(kind) {
                tracing::debug!("could not change the window's urgency hint: {e}");
            }
        }
        shown.urgent = urgent;
        let badge = Badge {
            count: total,
            urgent,
        };
        if shown.badge != Some(badge) {
            self.launcher.set(window.as_ref(), badge);
            shown.badge = Some(badge);
        }
        self.tray.update(&self.app, &shown.waiting, visible);
    }

    fn focus_changed(&self, focused: bool) {
        self.focused.store(focused, Ordering::SeqCst);
        if let Some(a) = self.attention.get() {
            a.set_focused(focused);
            if focused {
                // The user may have come back from editing the settings file: its switches are
                // read again (a small file, off the main thread).
                let a = a.clone();
                tauri::async_runtime::spawn_blocking(move || a.set_switches(switches()));
            }
        }
        self.redraw(None, None);
    }
}

/// Starts the desktop side: the tray, the notifications, the policy observing every session,
/// focus from the main window. Called once from the app's `setup` (main thread).
pub fn start<R: Runtime>(app: &AppHandle<R>) {
    let handle = app.clone();
    let notifier = Notifier::new(move |invoked| act(&handle, invoked));
    let tray = Tray::start(app, on_tray);
    let window = app.get_webview_window(MAIN);
    let focused = window
        .as_ref()
        .and_then(|w| w.is_focused().ok())
        .unwrap_or(false);
    let inner = Arc::new(Inner {
        app: app.clone(),
        notifier,
        tray,
        launcher: Launcher::default(),
        focused: AtomicBool::new(focused),
        shown: Mutex::new(Shown::default()),
        attention: OnceLock::new(),
    });
    let switches = switches();
    match Attention::start(
        Arc::new(Shell {
            inner: inner.clone(),
        }),
        switches,
    ) {
        Ok(attention) => {
            attention.set_focused(focused);
            app.state::<AppState>()
                .sessions
                .registry()
                .add_observer(attention.clone());
            let _ = inner.attention.set(attention);
        }
        Err(e) => tracing::warn!(
            "nothing outside the window will say when an agent waits (the tray, notifications): {e}"
        ),
    }
    if let Some(w) = &window {
        let focus = inner.clone();
        w.on_window_event(move |event| {
            if let WindowEvent::Focused(f) = event {
                focus.focus_changed(*f);
            }
        });
    }
    // Only worth saying when a notification would be sent at all.
    if switches.permission_requests || switches.turn_end {
        check_service(app, inner.clone());
    }
    app.manage(Running { inner });
}

/// What `finish` and `window_shown` reach through the app's state.
struct Running<R: Runtime> {
    inner: Arc<Inner<R>>,
}

/// Tells the tray and the policy that the window was just shown (`true`) or hidden (`false`)
/// by someone else (closing to the tray, a second launch), so the tray's Show/Hide follows and
/// a hidden window counts as unfocused. Any thread: the redraw is handed to the main thread.
pub fn window_shown<R: Runtime>(app: &AppHandle<R>, visible: bool) {
    let Some(r) = app.try_state::<Running<R>>() else {
        return;
    };
    if !visible {
        r.inner.focused.store(false, Ordering::SeqCst);
        if let Some(a) = r.inner.attention.get() {
            a.set_focused(false);
        }
    }
    let inner = r.inner.clone();
    if let Err(e) = app.run_on_main_thread(move || inner.redraw(None, Some(visible))) {
        tracing::debug!("could not redraw the tray: {e}");
    }
}

/// The app exits: the policy's thread ends and our notifications leave the screen (their
/// actions would reach no one).
pub fn finish<R: Runtime>(app: &AppHandle<R>) {
    if let Some(r) = app.try_state::<Running<R>>() {
        if let Some(a) = r.inner.attention.get() {
            a.finish();
        }
        r.inner.notifier.withdraw_all();
    }
}

/// The `notifications` switches of the settings file (their defaults when it cannot be read:
/// the settings' own reader says why in the window).
fn switches() -> Switches {
    Switches::from(&acp_desk_core::settings::load().settings.notifications)
}

/// Asks the notification service who it is, once, off the main thread; without one the window
/// is told (once) and the log says why.
fn check_service<R: Runtime>(app: &AppHandle<R>, inner: Arc<Inner<R>>) {
    let app = app.clone();
    let spawned = std::thread::Builder::new()
        .name("notification-service".into())
        .spawn(move || match inner.notifier.server() {
            Ok(server) => tracing::info!("notifications go to {server}"),
            Err(e) => {
                tracing::warn!("no notification service: {e}");
                // The D-Bus error stays in the log: it says nothing a user can act on.
                let message = "No notification service answers on this desktop, so ACP Desk \
                    cannot tell you when an agent waits for you while its window is in the \
                    background. Start one (your desktop's own, or dunst or mako) and restart \
                    ACP Desk; or turn this off with \"notifications\": {\"permission_requests\": \
                    false, \"turn_end\": false} in the settings file (Help → Open Settings File)."
                    .to_string();
                if NOTICE.set(message.clone()).is_ok()
                    && let Err(e) =
                        app.emit(AppEvent::DesktopNotice.name(), DesktopNotice { message })
                {
                    tracing::warn!("could not tell the window there are no notifications: {e}");
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("could not check for a notification service: {e}");
    }
}

/// What the user did with a notification (the listener's thread).
fn act<R: Runtime>(app: &AppHandle<R>, invoked: Invoked) {
    match invoked {
        Invoked::Show {
            session_id,
            request_id,
        } => show_session(app, session_id, request_id),
        Invoked::Respond {
            session_id,
            request_id,
            option_id,
        } => {
            let app = app.clone();
            tauri::async_runtime::spawn(async move {
                let resolution = PermissionResolution::Selected {
                    option_id,
                    feedback: None,
                };
                let answered = app
                    .state::<AppState>()
                    .sessions
                    .respond(&session_id, &request_id, resolution)
                    .await;
                // Ids only: the request's title may be a command line.
                if let Err(e) = answered {
                    tracing::warn!(
                        "the answer to request {request_id} of session {session_id} from its notification was not taken: {e}"
                    );
                }
            });
        }
    }
}

/// Shows, unminimizes and focuses the main window, then asks it to show the session.
fn show_session<R: Runtime>(app: &AppHandle<R>, session: String, request_id: Option<String>) {
    show_window(app);
    if let Err(e) = app.emit(
        AppEvent::ShowRequest.name(),
        ShowRequest {
            session,
            request_id,
        },
    ) {
        tracing::warn!("could not ask the window to show a session: {e}");
    }
}

fn show_window<R: Runtime>(app: &AppHandle<R>) {
    let Some(w) = app.get_webview_window(MAIN) else {
        return;
    };
    let shown = w
        .show()
        .and_then(|_| w.unminimize())
        .and_then(|_| w.set_focus());
    if let Err(e) = shown {
        tracing::warn!("could not bring the window forward: {e}");
    }
    window_shown(app, true);
}

/// A tray menu item (main thread).
fn on_tray<R: Runtime>(app: &AppHandle<R>, action: TrayAction) {
    match action {
        TrayAction::ShowHide => {
            let Some(w) = app.get_webview_window(MAIN) else {
                return;
            };
            if w.is_visible().unwrap_or(false) {
                if let Err(e) = w.hide() {
                    tracing::warn!("could not hide the window: {e}");
                }
                // A hidden window is not in front, whatever the toolkit last said of focus.
                window_shown(app, false);
            } else {
                show_window(app);
            }
        }
        // Asks first when turns run (lifecycle owns what quitting means).
        TrayAction::Quit => crate::lifecycle::request_quit(app),
        TrayAction::ShowRequest {
            session_id,
            request_id,
        } => show_session(app, session_id, Some(request_id)),
    }
}
