//! Is there a tray to close into? A StatusNotifierItem tray icon is only seen when a host
//! (a panel, a dock, GNOME's AppIndicator extension) has registered with the
//! StatusNotifierWatcher. Stock GNOME has no watcher at all; closing the window there must quit,
//! or the app would run on with no way back to it.

use std::time::Duration;

use zbus::blocking::fdo::DBusProxy;
use zbus::blocking::{Connection, Proxy, connection};
use zbus::names::BusName;
use zbus::proxy::CacheProperties;

/// The watcher's well-known name, and its interface's.
pub const WATCHER: &str = "org.kde.StatusNotifierWatcher";
const WATCHER_PATH: &str = "/StatusNotifierWatcher";

/// Each D-Bus call may take this long: the question is asked when the window closes, and a
/// hung bus must not keep the window on screen.
const TIMEOUT: Duration = Duration::from_millis(700);

/// Whether a tray host is registered on the session bus: `org.kde.StatusNotifierWatcher` has
/// an owner and its `IsStatusNotifierHostRegistered` property is true. No session bus, no
/// watcher, or no answer in time: false. Blocking (a connection and two calls): call it off
/// the main thread. macOS (the menu bar) and Windows (the notification area) always have one
/// (unverified: only Linux builds here).
pub fn tray_host_present() -> bool {
    if cfg!(any(target_os = "macos", target_os = "windows")) {
        return true;
    }
    match ask() {
        Ok(present) => present,
        Err(e) => {
            tracing::debug!("no tray host: {e}");
            false
        }
    }
}

fn ask() -> zbus::Result<bool> {
    let conn: Connection = connection::Builder::session()?
        .method_timeout(TIMEOUT)
        .build()?;
    let watcher = BusName::try_from(WATCHER)?;
    if !DBusProxy::new(&conn)?.name_has_owner(watcher.clone())? {
        return Ok(false);
    }
    let proxy: Proxy<'_> = zbus::blocking::proxy::Builder::new(&conn)
        .destination(watcher)?
        .path(WATCHER_PATH)?
        .interface(WATCHER)?
        .cache_properties(CacheProperties::No)
        .build()?;
    proxy.get_property::<bool>("IsStatusNotifierHostRegistered")
}
