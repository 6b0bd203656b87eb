//! The desktop of the end-to-end tests, on a private session bus (`tests/e2e/run.sh` starts it in
//! `dbus-run-session`). One process plays what a Linux desktop offers an app:
//!
//! - `org.freedesktop.Notifications`: records every `Notify` (a notification library reports
//!   success whether or not anything was shown, so the tests look at what reached the server),
//!   honours `replaces_id`, emits `NotificationClosed`, and emits `ActionInvoked` on request;
//! - `org.kde.StatusNotifierWatcher`: what a tray host runs; it takes the registrations of tray
//!   items and, when asked, reads the item (`org.kde.StatusNotifierItem`) and its menu
//!   (`com.canonical.dbusmenu`), and clicks a menu item;
//! - a recorder of the launcher count (`com.canonical.Unity.LauncherEntry` `Update` signals).
//!
//! The tests drive it through `dev.acpdesk.FakeDesktop` (methods answering JSON), or through the
//! client mode of this binary: `fake-desktop call notifications` prints that JSON.
//!
//! `fake-desktop serve [--no-watcher] [--no-notifications]` starts without the tray host (stock
//! GNOME) or without a notification server; `call set-service NAME on|off` switches one later.

use std::collections::{HashMap, HashSet};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value as Json, json};
use zbus::message::Header;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::{OwnedValue, Type, Value};
use zbus::{Connection, fdo, interface};

const CONTROL_NAME: &str = "dev.acpdesk.FakeDesktop";
const CONTROL_PATH: &str = "/dev/acpdesk/FakeDesktop";
const NOTIFICATIONS_NAME: &str = "org.freedesktop.Notifications";
const NOTIFICATIONS_PATH: &str = "/org/freedesktop/Notifications";
const WATCHER_NAME: &str = "org.kde.StatusNotifierWatcher";
const WATCHER_PATH: &str = "/StatusNotifierWatcher";
const ITEM_INTERFACE: &str = "org.kde.StatusNotifierItem";
const MENU_INTERFACE: &str = "com.canonical.dbusmenu";

/// What the fake desktop has seen, shared by its interfaces and its signal recorders.
#[derive(Default)]
struct State {
    last_id: u32,
    /// Every `Notify` call, oldest first, with when and how it was closed once it is.
    notifications: Vec<Json>,
    open: HashSet<u32>,
    items: Vec<Item>,
    hosts: Vec<String>,
    launcher: Vec<Json>,
}

#[derive(Clone)]
struct Item {
    /// What the item passed to `RegisterStatusNotifierItem` (a bus name or an object path).
    service: String,
    bus_name: String,
    path: String,
    at_ms: f64,
}

impl Item {
    /// The watcher's name for it, as `RegisteredStatusNotifierItems` lists it.
    fn full_name(&self) -> String {
        format!("{}{}", self.bus_name, self.path)
    }
}

type Shared = Arc<Mutex<State>>;

fn lock(state: &Shared) -> MutexGuard<'_, State> {
    // A panicking handler must not take the recordings of the other tests with it.
    state.lock().unwrap_or_else(|e| e.into_inner())
}

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

fn failed(what: impl std::fmt::Display) -> fdo::Error {
    fdo::Error::Failed(what.to_string())
}

/// A D-Bus value as JSON, for the tests to read. Byte arrays (icon pixmaps, image hints) are
/// reduced to their length: the tests check that an image is there, not its pixels.
fn to_json(value: &Value<'_>) -> Json {
    match value {
        Value::U8(v) => json!(v),
        Value::Bool(v) => json!(v),
        Value::I16(v) => json!(v),
        Value::U16(v) => json!(v),
        Value::I32(v) => json!(v),
        Value::U32(v) => json!(v),
        Value::I64(v) => json!(v),
        Value::U64(v) => json!(v),
        Value::F64(v) => json!(v),
        Value::Str(v) => json!(v.as_str()),
        Value::Signature(v) => json!(v.to_string()),
        Value::ObjectPath(v) => json!(v.as_str()),
        Value::Value(v) => to_json(v),
        Value::Array(a) if a.element_signature().to_string() == "y" => json!({ "bytes": a.len() }),
        Value::Array(a) => Json::Array(a.inner().iter().map(to_json).collect()),
        Value::Dict(d) => Json::Object(
            d.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Value::Str(s) => s.as_str().to_owned(),
                        other => to_json(other).to_string(),
                    };
                    (key, to_json(v))
                })
                .collect(),
        ),
        Value::Structure(s) => Json::Array(s.fields().iter().map(to_json).collect()),
        #[allow(unreachable_patterns)]
        other => json!(format!("{other:?}")),
    }
}

fn map_to_json(map: &HashMap<String, OwnedValue>) -> Json {
    Json::Object(map.iter().map(|(k, v)| (k.clone(), to_json(v))).collect())
}

struct Notifications {
    state: Shared,
}

#[interface(name = "org.freedesktop.Notifications")]
impl Notifications {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        #[zbus(header)] header: Header<'_>,
        app_name: String,
        replaces_id: u32,
        app_icon: String,
        summary: String,
        body: String,
        actions: Vec<String>,
        hints: HashMap<String, OwnedValue>,
        expire_timeout: i32,
    ) -> u32 {
        let at_ms = now_ms();
        let mut state = lock(&self.state);
        // The spec: a non-zero replaces_id is the id of a notification this server gave out, and
        // the answer is that same id (the notification is updated in place).
        let id = if replaces_id != 0 && replaces_id <= state.last_id {
            replaces_id
        } else {
            state.last_id += 1;
            state.last_id
        };
        let replaced = state.open.contains(&id);
        state.open.insert(id);
        let pairs: Vec<Json> = actions
            .chunks(2)
            .map(|p| json!({ "key": p[0], "label": p.get(1).cloned().unwrap_or_default() }))
            .collect();
        state.notifications.push(json!({
            "id": id,
            "app_name": app_name,
            "replaces_id": replaces_id,
            "replaced": replaced,
            "app_icon": app_icon,
            "summary": summary,
            "body": body,
            "actions": pairs,
            "hints": map_to_json(&hints),
            "expire_timeout": expire_timeout,
            "sender": header.sender().map(|s| s.to_string()),
            "at_ms": at_ms,
            "closed": null,
        }));
        id
    }

    async fn close_notification(
        &self,
        id: u32,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
    ) -> fdo::Result<()> {
        // 3: closed by a call to CloseNotification.
        if close(&self.state, id, 3, "client") {
            Self::notification_closed(&emitter, id, 3).await?;
        }
        Ok(())
    }

    fn get_capabilities(&self) -> Vec<String> {
        vec!["actions".into(), "body".into()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "fake-desktop".into(),
            "acp-desk tests".into(),
            env!("CARGO_PKG_VERSION").into(),
            "1.2".into(),
        )
    }

    #[zbus(signal)]
    async fn notification_closed(
        emitter: &SignalEmitter<'_>,
        id: u32,
        reason: u32,
    ) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn action_invoked(
        emitter: &SignalEmitter<'_>,
        id: u32,
        action_key: &str,
    ) -> zbus::Result<()>;
}

/// Marks notification `id` closed; false when it was not open.
fn close(state: &Shared, id: u32, reason: u32, by: &str) -> bool {
    let mut state = lock(state);
    if !state.open.remove(&id) {
        return false;
    }
    let at_ms = now_ms();
    for n in state
        .notifications
        .iter_mut()
        .filter(|n| n["id"] == id && n["closed"].is_null())
    {
        n["closed"] = json!({ "reason": reason, "by": by, "at_ms": at_ms });
    }
    true
}

struct Watcher {
    state: Shared,
}

#[interface(name = "org.kde.StatusNotifierWatcher")]
impl Watcher {
    async fn register_status_notifier_item(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        service: String,
    ) -> fdo::Result<()> {
        let sender = header.sender().map(|s| s.to_string()).unwrap_or_default();
        // libayatana-appindicator passes its object path and is known by its connection; other
        // items pass a bus name and serve /StatusNotifierItem (what KDE's watcher does too).
        let (bus_name, path) = if service.starts_with('/') {
            (sender, service.clone())
        } else {
            (service.clone(), "/StatusNotifierItem".to_owned())
        };
        let item = Item {
            service,
            bus_name,
            path,
            at_ms: now_ms(),
        };
        let name = item.full_name();
        {
            let mut state = lock(&self.state);
            state.items.retain(|i| i.full_name() != name);
            state.items.push(item);
        }
        Self::status_notifier_item_registered(&emitter, &name).await?;
        self.registered_status_notifier_items_changed(&emitter)
            .await?;
        Ok(())
    }

    async fn register_status_notifier_host(
        &self,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        service: String,
    ) -> fdo::Result<()> {
        lock(&self.state).hosts.push(service);
        Self::status_notifier_host_registered(&emitter).await?;
        Ok(())
    }

    #[zbus(property)]
    fn registered_status_notifier_items(&self) -> Vec<String> {
        lock(&self.state)
            .items
            .iter()
            .map(Item::full_name)
            .collect()
    }

    /// This fake is the host too: a tray that shows items is what the app looks for.
    #[zbus(property)]
    fn is_status_notifier_host_registered(&self) -> bool {
        true
    }

    #[zbus(property)]
    fn protocol_version(&self) -> i32 {
        0
    }

    #[zbus(signal)]
    async fn status_notifier_item_registered(
        emitter: &SignalEmitter<'_>,
        service: &str,
    ) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn status_notifier_item_unregistered(
        emitter: &SignalEmitter<'_>,
        service: &str,
    ) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn status_notifier_host_registered(emitter: &SignalEmitter<'_>) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn status_notifier_host_unregistered(emitter: &SignalEmitter<'_>) -> zbus::Result<()>;
}

/// A dbusmenu layout node as `GetLayout` sends it: `(ia{sv}av)`.
#[derive(serde::Deserialize, Type)]
struct Layout(i32, HashMap<String, OwnedValue>, Vec<OwnedValue>);

/// A menu label as shown: GTK mnemonics (`_Quit`, `__` for a real underscore) removed.
fn shown_label(label: &str) -> String {
    let mut out = String::new();
    let mut chars = label.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '_' {
            if chars.peek() == Some(&'_') {
                chars.next();
                out.push('_');
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn menu_node(id: i32, props: Json, children: Vec<Json>) -> Json {
    let label = props["label"].as_str().unwrap_or_default().to_owned();
    json!({
        "id": id,
        "label": label,
        "text": shown_label(&label),
        // dbusmenu: an absent property has its default value.
        "enabled": props["enabled"].as_bool().unwrap_or(true),
        "visible": props["visible"].as_bool().unwrap_or(true),
        "type": props["type"].as_str().unwrap_or("standard"),
        "props": props,
        "children": children,
    })
}

/// A child of a layout (a variant holding `(ia{sv}av)`), walked as a plain value.
fn menu_child(value: &Value<'_>) -> Option<Json> {
    match value {
        Value::Value(inner) => menu_child(inner),
        Value::Structure(s) => {
            let [Value::I32(id), props, Value::Array(children)] = s.fields() else {
                return None;
            };
            let children = children.inner().iter().filter_map(menu_child).collect();
            Some(menu_node(*id, to_json(props), children))
        }
        _ => None,
    }
}

async fn read_menu(conn: &Connection, bus: &str, path: &str) -> zbus::Result<Json> {
    let reply = conn
        .call_method(
            Some(bus),
            path,
            Some(MENU_INTERFACE),
            "GetLayout",
            &(0i32, -1i32, Vec::<String>::new()),
        )
        .await?;
    let (revision, Layout(id, props, children)): (u32, Layout) = reply.body().deserialize()?;
    let children = children.iter().filter_map(|c| menu_child(c)).collect();
    Ok(json!({ "revision": revision, "root": menu_node(id, map_to_json(&props), children) }))
}

/// Every visible, non-separator entry of a menu tree, depth first.
fn entries(node: &Json, out: &mut Vec<Json>) {
    for child in node["children"].as_array().into_iter().flatten() {
        if child["visible"] == true && child["type"] != "separator" {
            out.push(child.clone());
        }
        entries(child, out);
    }
}

/// The item as a tray host sees it now: its properties and its menu.
async fn read_item(conn: &Connection, item: &Item) -> Json {
    let alive = match (
        fdo::DBusProxy::new(conn).await,
        zbus::names::BusName::try_from(item.bus_name.as_str()),
    ) {
        (Ok(dbus), Ok(name)) => dbus.name_has_owner(name).await.unwrap_or(false),
        _ => false,
    };
    let mut out = json!({
        "service": item.service,
        "bus_name": item.bus_name,
        "path": item.path,
        "registered_at_ms": item.at_ms,
        "alive": alive,
    });
    if !alive {
        return out;
    }
    let props = conn
        .call_method(
            Some(item.bus_name.as_str()),
            item.path.as_str(),
            Some("org.freedesktop.DBus.Properties"),
            "GetAll",
            &(ITEM_INTERFACE,),
        )
        .await
        .and_then(|r| r.body().deserialize::<HashMap<String, OwnedValue>>());
    match props {
        Ok(props) => {
            out["props"] = map_to_json(&props);
            if let Some(menu) = out["props"]["Menu"].as_str().map(str::to_owned) {
                out["menu"] = match read_menu(conn, &item.bus_name, &menu).await {
                    Ok(m) => {
                        let mut flat = Vec::new();
                        entries(&m["root"], &mut flat);
                        out["entries"] = Json::Array(flat);
                        m
                    }
                    Err(e) => json!({ "error": e.to_string() }),
                };
            }
        }
        Err(e) => out["error"] = json!(e.to_string()),
    }
    out
}

struct Control {
    state: Shared,
}

#[interface(name = "dev.acpdesk.FakeDesktop")]
impl Control {
    fn ping(&self) -> String {
        "pong".into()
    }

    /// Every Notify call so far, oldest first.
    fn notifications(&self) -> String {
        Json::Array(lock(&self.state).notifications.clone()).to_string()
    }

    /// Every launcher `Update` signal so far, oldest first.
    fn launcher(&self) -> String {
        Json::Array(lock(&self.state).launcher.clone()).to_string()
    }

    /// The registered tray items as they are now (properties, menu), the hosts, and what is
    /// registered: `{items: [...], hosts: [...], registered: [...]}`.
    async fn tray(&self, #[zbus(connection)] conn: &Connection) -> String {
        let (items, hosts) = {
            let state = lock(&self.state);
            (state.items.clone(), state.hosts.clone())
        };
        let mut read = Vec::new();
        for item in &items {
            read.push(read_item(conn, item).await);
        }
        let registered: Vec<String> = items.iter().map(Item::full_name).collect();
        json!({ "items": read, "hosts": hosts, "registered": registered }).to_string()
    }

    /// What a user's click on a notification's button (`key`, or "default" for its body) does:
    /// `ActionInvoked`, then the server closes it (reason 2, dismissed), as servers without the
    /// `resident` hint do.
    async fn invoke_action(
        &self,
        #[zbus(connection)] conn: &Connection,
        id: u32,
        key: String,
    ) -> fdo::Result<()> {
        if !lock(&self.state).open.contains(&id) {
            return Err(failed(format!("notification {id} is not open")));
        }
        conn.emit_signal(
            None::<&str>,
            NOTIFICATIONS_PATH,
            NOTIFICATIONS_NAME,
            "ActionInvoked",
            &(id, key.as_str()),
        )
        .await
        .map_err(failed)?;
        if close(&self.state, id, 2, &format!("action {key}")) {
            conn.emit_signal(
                None::<&str>,
                NOTIFICATIONS_PATH,
                NOTIFICATIONS_NAME,
                "NotificationClosed",
                &(id, 2u32),
            )
            .await
            .map_err(failed)?;
        }
        Ok(())
    }

    /// Clicks the tray menu entry shown as `label` (exactly, else the one entry containing it).
    /// Answers the clicked entry as JSON.
    async fn click_tray_item(
        &self,
        #[zbus(connection)] conn: &Connection,
        label: String,
    ) -> fdo::Result<String> {
        let items = lock(&self.state).items.clone();
        let mut seen = Vec::new();
        for item in &items {
            let read = read_item(conn, item).await;
            let Some(menu) = read["props"]["Menu"].as_str() else {
                continue;
            };
            let all = read["entries"].as_array().cloned().unwrap_or_default();
            seen.extend(all.iter().map(|e| e["text"].clone()));
            let exact: Vec<&Json> = all.iter().filter(|e| e["text"] == label.as_str()).collect();
            let containing: Vec<&Json> = all
                .iter()
                .filter(|e| {
                    e["text"]
                        .as_str()
                        .is_some_and(|t| t.contains(label.as_str()))
                })
                .collect();
            let chosen = match (exact.as_slice(), containing.as_slice()) {
                ([one, ..], _) | ([], [one]) => *one,
                ([], []) => continue,
                ([], _) => {
                    return Err(failed(format!(
                        "more than one tray menu entry contains {label:?}: {containing:?}"
                    )));
                }
            };
            let id = chosen["id"]
                .as_i64()
                .and_then(|i| i32::try_from(i).ok())
                .unwrap_or(0);
            conn.call_method(
                Some(item.bus_name.as_str()),
                menu,
                Some(MENU_INTERFACE),
                "Event",
                &(id, "clicked", Value::I32(0), 0u32),
            )
            .await
            .map_err(failed)?;
            return Ok(chosen.to_string());
        }
        Err(failed(format!(
            "no tray menu entry {label:?}; the entries: {seen:?}"
        )))
    }

    /// A left click on the tray icon (`Activate` of the item).
    async fn activate_tray(&self, #[zbus(connection)] conn: &Connection) -> fdo::Result<()> {
        let items = lock(&self.state).items.clone();
        let item = items
            .last()
            .ok_or_else(|| failed("no tray item is registered"))?;
        conn.call_method(
            Some(item.bus_name.as_str()),
            item.path.as_str(),
            Some(ITEM_INTERFACE),
            "Activate",
            &(0i32, 0i32),
        )
        .await
        .map_err(failed)?;
        Ok(())
    }

    /// Forgets what was recorded (between tests); open notifications stay open.
    fn reset(&self) {
        let mut state = lock(&self.state);
        state.notifications.clear();
        state.launcher.clear();
    }

    /// Takes (`on`) or gives up one of the desktop's names: the notification server
    /// (org.freedesktop.Notifications) or the tray host (org.kde.StatusNotifierWatcher).
    async fn set_service(
        &self,
        #[zbus(connection)] conn: &Connection,
        name: String,
        on: bool,
    ) -> fdo::Result<()> {
        if ![NOTIFICATIONS_NAME, WATCHER_NAME].contains(&name.as_str()) {
            return Err(failed(format!(
                "{name} is not a service of the fake desktop ({NOTIFICATIONS_NAME}, {WATCHER_NAME})"
            )));
        }
        let name = zbus::names::WellKnownName::try_from(name).map_err(failed)?;
        if on {
            conn.request_name(name).await.map_err(failed)?;
        } else {
            conn.release_name(name).await.map_err(failed)?;
        }
        Ok(())
    }
}

fn serve(args: &[String]) -> anyhow::Result<()> {
    for a in args {
        if !["--no-watcher", "--no-notifications"].contains(&a.as_str()) {
            anyhow::bail!("unknown option {a}: serve takes --no-watcher, --no-notifications");
        }
    }
    let state = Shared::default();
    let conn = zbus::blocking::connection::Builder::session()?
        .serve_at(
            NOTIFICATIONS_PATH,
            Notifications {
                state: state.clone(),
            },
        )?
        .serve_at(
            WATCHER_PATH,
            Watcher {
                state: state.clone(),
            },
        )?
        .serve_at(
            CONTROL_PATH,
            Control {
                state: state.clone(),
            },
        )?
        .build()?;

    // Recorders first, names last: once a name is taken an app may act on it at once.
    let launcher = zbus::blocking::MessageIterator::for_match_rule(
        "type='signal',interface='com.canonical.Unity.LauncherEntry',member='Update'",
        &conn,
        None,
    )?;
    let owners = zbus::blocking::MessageIterator::for_match_rule(
        "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged'",
        &conn,
        None,
    )?;
    if !args.iter().any(|a| a == "--no-notifications") {
        conn.request_name(NOTIFICATIONS_NAME)?;
    }
    if !args.iter().any(|a| a == "--no-watcher") {
        conn.request_name(WATCHER_NAME)?;
    }
    conn.request_name(CONTROL_NAME)?;

    let recorded = state.clone();
    std::thread::spawn(move || {
        for msg in launcher.flatten() {
            let header = msg.header();
            let Ok((app_uri, props)) = msg
                .body()
                .deserialize::<(String, HashMap<String, OwnedValue>)>()
            else {
                continue;
            };
            lock(&recorded).launcher.push(json!({
                "app_uri": app_uri,
                "props": map_to_json(&props),
                "path": header.path().map(|p| p.to_string()),
                "sender": header.sender().map(|s| s.to_string()),
                "at_ms": now_ms(),
            }));
        }
    });

    // A tray item whose connection is gone is unregistered, as a real watcher does.
    for msg in owners.flatten() {
        let Ok((name, _old, new)) = msg.body().deserialize::<(String, String, String)>() else {
            continue;
        };
        if !new.is_empty() {
            continue;
        }
        let gone: Vec<String> = {
            let mut state = lock(&state);
            let gone = state
                .items
                .iter()
                .filter(|i| i.bus_name == name)
                .map(Item::full_name)
                .collect();
            state.items.retain(|i| i.bus_name != name);
            gone
        };
        for item in gone {
            conn.emit_signal(
                None::<&str>,
                WATCHER_PATH,
                WATCHER_NAME,
                "StatusNotifierItemUnregistered",
                &(item,),
            )?;
        }
    }
    Ok(())
}

fn call(args: &[String]) -> anyhow::Result<String> {
    let conn = zbus::blocking::Connection::session()?;
    let method = |member: &str, body: &dyn erased::Body| -> anyhow::Result<String> {
        let reply = body.call(&conn, member)?;
        Ok(reply)
    };
    let usage = "fake-desktop call: ping | notifications | tray | launcher | reset \
                 | invoke-action ID KEY | click-tray LABEL | activate-tray \
                 | set-service NAME on|off | has-owner NAME | names";
    match args {
        [m] if m == "ping" => method("Ping", &()),
        [m] if m == "notifications" => method("Notifications", &()),
        [m] if m == "tray" => method("Tray", &()),
        [m] if m == "launcher" => method("Launcher", &()),
        [m] if m == "reset" => method("Reset", &()),
        [m] if m == "activate-tray" => method("ActivateTray", &()),
        [m, id, key] if m == "invoke-action" => {
            let id: u32 = id
                .parse()
                .map_err(|_| anyhow::anyhow!("{id} is not a notification id"))?;
            method("InvokeAction", &(id, key.clone()))
        }
        [m, label] if m == "click-tray" => method("ClickTrayItem", &(label.clone(),)),
        [m, name, on] if m == "set-service" => method(
            "SetService",
            &(name.clone(), matches!(on.as_str(), "on" | "true")),
        ),
        [m] if m == "names" => {
            let dbus = zbus::blocking::fdo::DBusProxy::new(&conn)?;
            let names: Vec<String> = dbus
                .list_names()?
                .into_iter()
                .map(|n| n.to_string())
                .filter(|n| !n.starts_with(':'))
                .collect();
            Ok(serde_json::to_string(&names)?)
        }
        [m, name] if m == "has-owner" => {
            let dbus = zbus::blocking::fdo::DBusProxy::new(&conn)?;
            let name = zbus::names::BusName::try_from(name.as_str())?;
            Ok(dbus.name_has_owner(name)?.to_string())
        }
        _ => anyhow::bail!("{usage}"),
    }
}

/// The client's calls have bodies of different types; this calls the control interface with any.
mod erased {
    use super::{CONTROL_NAME, CONTROL_PATH};

    pub trait Body {
        fn call(&self, conn: &zbus::blocking::Connection, member: &str) -> anyhow::Result<String>;
    }

    impl<T: serde::Serialize + zbus::zvariant::DynamicType> Body for T {
        fn call(&self, conn: &zbus::blocking::Connection, member: &str) -> anyhow::Result<String> {
            let reply = conn.call_method(
                Some(CONTROL_NAME),
                CONTROL_PATH,
                Some(CONTROL_NAME),
                member,
                self,
            )?;
            let body = reply.body();
            // Methods without an answer reply with an empty body.
            if body.signature().to_string().is_empty() {
                return Ok(String::new());
            }
            Ok(body.deserialize::<String>()?)
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("serve") => serve(&args[1..]).map(|()| String::new()),
        Some("call") => call(&args[1..]),
        _ => Err(anyhow::anyhow!(
            "usage: fake-desktop serve [--no-watcher] [--no-notifications] | fake-desktop call METHOD [ARGS]"
        )),
    };
    match result {
        Ok(out) => {
            if !out.is_empty() {
                println!("{out}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("fake-desktop: {e:#}");
            ExitCode::FAILURE
        }
    }
}
