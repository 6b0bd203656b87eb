//! The count on the app's launcher icon. Linux: the `com.canonical.Unity.LauncherEntry`
//! `Update` signal on the session bus, which Ubuntu's dock, KDE's task manager and others read
//! (Tauri's `set_badge_count` does nothing there without Unity itself). macOS: the dock badge.
//! Windows: the taskbar button's overlay icon. Those two are behind `cfg` and unverified here.

#[cfg(not(target_os = "linux"))]
use tauri::{Runtime, WebviewWindow};

/// The launcher count as a dock reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Badge {
    pub count: usize,
    pub urgent: bool,
}

#[cfg(target_os = "linux")]
pub use linux::Launcher;

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::HashMap;
    use std::sync::mpsc;

    use tauri::{Runtime, WebviewWindow};
    use zbus::blocking::Connection;
    use zbus::zvariant::Value;

    use super::Badge;

    /// Any stable path under the interface's prefix: docks match on the app uri.
    const PATH: &str = "/com/canonical/unity/launcherentry/acp_desk";
    const INTERFACE: &str = "com.canonical.Unity.LauncherEntry";

    /// The app uri docks know the app by: its `.desktop` file's name.
    pub fn app_uri() -> String {
        format!("application://{}.desktop", super::super::DESKTOP_ID)
    }

    /// The signal's properties for `badge`.
    pub fn properties(badge: Badge) -> HashMap<&'static str, Value<'static>> {
        HashMap::from([
            (
                "count",
                Value::I64(i64::try_from(badge.count).unwrap_or(i64::MAX)),
            ),
            ("count-visible", Value::Bool(badge.count > 0)),
            ("urgent", Value::Bool(badge.urgent)),
        ])
    }

    /// Sends on a thread of its own: the count changes on the main thread, which must never
    /// wait for the bus (connecting to it, a full socket).
    pub struct Launcher {
        tx: Option<mpsc::Sender<Badge>>,
    }

    impl Default for Launcher {
        fn default() -> Self {
            let (tx, rx) = mpsc::channel::<Badge>();
            let spawned = std::thread::Builder::new()
                .name("launcher-count".into())
                .spawn(move || send_all(rx));
            match spawned {
                Ok(_) => Self { tx: Some(tx) },
                Err(e) => {
                    tracing::info!("no launcher count: {e}");
                    Self { tx: None }
                }
            }
        }
    }

    impl Launcher {
        pub fn set<R: Runtime>(&self, _window: Option<&WebviewWindow<R>>, badge: Badge) {
            if let Some(tx) = &self.tx {
                // The thread ends only when the bus cannot be reached: then nothing is sent.
                let _ = tx.send(badge);
            }
        }
    }

    fn send_all(rx: mpsc::Receiver<Badge>) {
        let conn = match Connection::session() {
            Ok(c) => c,
            Err(e) => {
                tracing::info!("no launcher count: the session bus cannot be reached ({e})");
                return;
            }
        };
        while let Ok(mut badge) = rx.recv() {
            // Only the latest count matters.
            while let Ok(newer) = rx.try_recv() {
                badge = newer;
            }
            let sent = conn.emit_signal(
                None::<&str>,
                PATH,
                INTERFACE,
                "Update",
                &(app_uri(), properties(badge)),
            );
            if let Err(e) = sent {
                tracing::debug!("could not send the launcher count: {e}");
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_signal_says_the_count_and_hides_a_zero() {
            assert_eq!(app_uri(), "application://acp-desk.desktop");
            let p = properties(Badge {
                count: 3,
                urgent: true,
            });
            assert_eq!(p["count"], Value::I64(3));
            assert_eq!(p["count-visible"], Value::Bool(true));
            assert_eq!(p["urgent"], Value::Bool(true));
            let p = properties(Badge {
                count: 0,
                urgent: false,
            });
            assert_eq!(p["count-visible"], Value::Bool(false));
            assert_eq!(p["urgent"], Value::Bool(false));
        }
    }
}

/// macOS: the dock badge (unverified here).
#[cfg(target_os = "macos")]
#[derive(Default)]
pub struct Launcher;

#[cfg(target_os = "macos")]
impl Launcher {
    pub fn set<R: Runtime>(&self, window: Option<&WebviewWindow<R>>, badge: Badge) {
        let Some(w) = window else { return };
        let count = (badge.count > 0).then(|| i64::try_from(badge.count).unwrap_or(i64::MAX));
        if let Err(e) = w.set_badge_count(count) {
            tracing::debug!("could not set the dock badge: {e}");
        }
    }
}

/// Windows: the waiting icon as the taskbar button's overlay (unverified here).
#[cfg(windows)]
#[derive(Default)]
pub struct Launcher;

#[cfg(windows)]
impl Launcher {
    pub fn set<R: Runtime>(&self, window: Option<&WebviewWindow<R>>, badge: Badge) {
        let Some(w) = window else { return };
        let icon = if badge.count > 0 {
            tauri::image::Image::from_bytes(super::tray::ICON_WAITING).ok()
        } else {
            None
        };
        if let Err(e) = w.set_overlay_icon(icon) {
            tracing::debug!("could not set the taskbar overlay: {e}");
        }
    }
}

/// Elsewhere (the BSDs): no launcher count.
#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
#[derive(Default)]
pub struct Launcher;

#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
impl Launcher {
    pub fn set<R: Runtime>(&self, window: Option<&WebviewWindow<R>>, badge: Badge) {
        let _ = (window, badge);
    }
}
