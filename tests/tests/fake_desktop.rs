//! The end-to-end tests' fake desktop (src/bin/fake-desktop.rs) against a private bus: what an
//! app sends it (a notification as notify-rust sends one, a tray item as libayatana-appindicator
//! registers one, a launcher count) is what the tests read back, and what the tests ask of it (a
//! click on a notification's button, on a tray menu entry) reaches the app as a desktop's would.
//! Needs `dbus-daemon` (Debian's dbus-daemon; `scripts/deps --tests`).

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use zbus::blocking::{Connection, MessageIterator, connection};
use zbus::interface;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, OwnedValue, StructureBuilder, Value};

const FAKE: &str = env!("CARGO_BIN_EXE_fake-desktop");

/// A private bus and the fake desktop on it; both end when dropped.
struct Desktop {
    address: String,
    bus: Child,
    fake: Child,
}

impl Desktop {
    fn start(args: &[&str]) -> Desktop {
        let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("e2e/session-bus.conf");
        let mut bus = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .args(["--print-address", "--nofork"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon runs (Debian: dbus-daemon; scripts/deps --tests)");
        let mut address = String::new();
        BufReader::new(bus.stdout.take().expect("piped"))
            .read_line(&mut address)
            .expect("dbus-daemon prints its address");
        let address = address.trim().to_owned();
        let fake = Command::new(FAKE)
            .arg("serve")
            .args(args)
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .spawn()
            .expect("fake-desktop starts");
        let desktop = Desktop { address, bus, fake };
        let deadline = Instant::now() + Duration::from_secs(10);
        while desktop.call(&["ping"]).is_err() {
            assert!(
                Instant::now() < deadline,
                "fake-desktop never answered on the bus"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        desktop
    }

    fn connect(&self) -> Connection {
        connection::Builder::address(self.address.as_str())
            .expect("an address")
            .build()
            .expect("the private bus answers")
    }

    /// `fake-desktop call ARGS` as the node tests run it: its output, or its error message.
    fn call(&self, args: &[&str]) -> Result<String, String> {
        let out = Command::new(FAKE)
            .arg("call")
            .args(args)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .output()
            .expect("fake-desktop runs");
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
        }
    }

    fn json(&self, args: &[&str]) -> Json {
        serde_json::from_str(&self.call(args).expect("the call succeeds")).expect("JSON")
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        let _ = self.fake.kill();
        let _ = self.fake.wait();
        let _ = self.bus.kill();
        let _ = self.bus.wait();
    }
}

/// Notify as notify-rust sends it (`Notification::new().summary().body().action()...show()`).
fn notify(conn: &Connection, replaces: u32, summary: &str, actions: &[&str]) -> u32 {
    let mut hints: HashMap<&str, Value<'_>> = HashMap::new();
    hints.insert("urgency", Value::U8(2));
    hints.insert("desktop-entry", Value::from("acp-desk"));
    conn.call_method(
        Some("org.freedesktop.Notifications"),
        "/org/freedesktop/Notifications",
        Some("org.freedesktop.Notifications"),
        "Notify",
        &(
            "ACP Desk",
            replaces,
            "acp-desk",
            summary,
            "wants to run a command in proj",
            actions,
            hints,
            -1i32,
        ),
    )
    .expect("Notify answers")
    .body()
    .deserialize::<u32>()
    .expect("an id")
}

fn next_signal(signals: &mut MessageIterator) -> (String, u32, Json) {
    let msg = signals.next().expect("a signal").expect("a message");
    let member = msg
        .header()
        .member()
        .map(|m| m.to_string())
        .unwrap_or_default();
    let body = msg.body();
    let value = if member == "ActionInvoked" {
        let (id, key): (u32, String) = body.deserialize().expect("(us)");
        (id, Json::from(key))
    } else {
        let (id, reason): (u32, u32) = body.deserialize().expect("(uu)");
        (id, Json::from(reason))
    };
    (member, value.0, value.1)
}

#[test]
fn records_notifications_and_invokes_their_actions() {
    let desktop = Desktop::start(&[]);
    let app = desktop.connect();
    let mut signals = MessageIterator::for_match_rule(
        "type='signal',interface='org.freedesktop.Notifications'",
        &app,
        None,
    )
    .expect("a match rule");

    let first = notify(
        &app,
        0,
        "claude in proj",
        &["default", "Show", "reject", "Reject"],
    );
    let replaced = notify(&app, first, "claude in proj", &["default", "Show"]);
    assert_eq!(replaced, first, "a replacing Notify keeps the id");
    let other = notify(&app, 0, "demo in notes", &["default", "Show"]);
    assert_ne!(other, first);

    let calls = desktop.json(&["notifications"]);
    let calls = calls.as_array().expect("a list");
    assert_eq!(calls.len(), 3, "every Notify is recorded: {calls:?}");
    assert_eq!(calls[0]["summary"], "claude in proj");
    assert_eq!(calls[0]["body"], "wants to run a command in proj");
    assert_eq!(calls[0]["app_name"], "ACP Desk");
    assert_eq!(calls[0]["actions"][1]["key"], "reject");
    assert_eq!(calls[0]["actions"][1]["label"], "Reject");
    assert_eq!(calls[0]["hints"]["urgency"], 2);
    assert_eq!(calls[0]["hints"]["desktop-entry"], "acp-desk");
    assert_eq!(calls[0]["expire_timeout"], -1);
    assert_eq!(
        (
            calls[1]["replaces_id"].clone(),
            calls[1]["replaced"].clone()
        ),
        (first.into(), true.into())
    );
    assert!(
        calls[0]["at_ms"].as_f64().expect("a time") <= calls[1]["at_ms"].as_f64().expect("a time")
    );

    // A click on Reject: the app hears ActionInvoked, then the server closes it (dismissed).
    desktop
        .call(&["invoke-action", &first.to_string(), "reject"])
        .expect("invoked");
    assert_eq!(
        next_signal(&mut signals),
        ("ActionInvoked".into(), first, "reject".into())
    );
    assert_eq!(
        next_signal(&mut signals),
        ("NotificationClosed".into(), first, 2.into())
    );
    let err = desktop
        .call(&["invoke-action", &first.to_string(), "reject"])
        .expect_err("closed");
    assert!(err.contains("is not open"), "{err}");

    // The app withdraws the other one.
    app.call_method(
        Some("org.freedesktop.Notifications"),
        "/org/freedesktop/Notifications",
        Some("org.freedesktop.Notifications"),
        "CloseNotification",
        &(other,),
    )
    .expect("CloseNotification answers");
    assert_eq!(
        next_signal(&mut signals),
        ("NotificationClosed".into(), other, 3.into())
    );
    let calls = desktop.json(&["notifications"]);
    assert_eq!(calls[2]["closed"]["reason"], 3);
    assert_eq!(calls[2]["closed"]["by"], "client");
    assert_eq!(calls[1]["closed"]["by"], "action reject");

    let info: (String, String, String, String) = app
        .call_method(
            Some("org.freedesktop.Notifications"),
            "/org/freedesktop/Notifications",
            Some("org.freedesktop.Notifications"),
            "GetServerInformation",
            &(),
        )
        .expect("GetServerInformation answers")
        .body()
        .deserialize()
        .expect("(ssss)");
    assert_eq!(info.0, "fake-desktop");

    desktop.call(&["reset"]).expect("reset");
    assert_eq!(desktop.json(&["notifications"]), Json::Array(vec![]));
}

/// A tray item as libayatana-appindicator serves one (what Tauri's tray uses on Linux).
struct Item;

#[interface(name = "org.kde.StatusNotifierItem")]
impl Item {
    #[zbus(property)]
    fn title(&self) -> String {
        "ACP Desk".into()
    }
    #[zbus(property)]
    fn icon_name(&self) -> String {
        "/tmp/tray-icon-waiting.png".into()
    }
    #[zbus(property, name = "XAyatanaLabel")]
    fn x_ayatana_label(&self) -> String {
        "2".into()
    }
    #[zbus(property)]
    fn menu(&self) -> OwnedObjectPath {
        ObjectPath::from_static_str_unchecked("/menu").into()
    }
}

/// Its menu, the way libdbusmenu-gtk lays out a GTK menu.
struct Menu {
    clicked: Arc<Mutex<Vec<(i32, String)>>>,
}

fn node(
    id: i32,
    props: &[(&str, Value<'static>)],
    children: Vec<Value<'static>>,
) -> Value<'static> {
    let props: HashMap<String, Value<'static>> = props
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.try_clone().expect("plain")))
        .collect();
    let children: Vec<Value<'static>> = children
        .into_iter()
        .map(|c| Value::Value(Box::new(c)))
        .collect();
    Value::Structure(
        StructureBuilder::new()
            .add_field(id)
            .add_field(props)
            .append_field(Value::from(zbus::zvariant::Array::from(children)))
            .build()
            .expect("a layout node"),
    )
}

/// `(ia{sv}av)`: id, properties, children.
type LayoutNode = (i32, HashMap<String, OwnedValue>, Vec<OwnedValue>);

#[interface(name = "com.canonical.dbusmenu")]
impl Menu {
    fn get_layout(&self, _parent: i32, _depth: i32, _props: Vec<String>) -> (u32, LayoutNode) {
        let children = vec![
            node(
                1,
                &[
                    ("label", "2 requests waiting".into()),
                    ("enabled", false.into()),
                ],
                vec![],
            ),
            node(
                2,
                &[("label", "claude in proj: wants to run a command".into())],
                vec![],
            ),
            node(3, &[("type", "separator".into())], vec![]),
            node(4, &[("label", "_Quit".into())], vec![]),
        ];
        let children = children
            .into_iter()
            .map(|c| OwnedValue::try_from(Value::Value(Box::new(c))).expect("owned"))
            .collect();
        (7, (0, HashMap::new(), children))
    }

    fn event(&self, id: i32, event: String, _data: OwnedValue, _timestamp: u32) {
        self.clicked.lock().expect("not poisoned").push((id, event));
    }
}

#[test]
fn reads_a_registered_tray_item_and_clicks_its_menu() {
    let desktop = Desktop::start(&[]);
    let clicked = Arc::new(Mutex::new(Vec::new()));
    let app = connection::Builder::address(desktop.address.as_str())
        .expect("an address")
        .serve_at("/org/ayatana/NotificationItem/acp_desk", Item)
        .expect("served")
        .serve_at(
            "/menu",
            Menu {
                clicked: clicked.clone(),
            },
        )
        .expect("served")
        .build()
        .expect("the private bus answers");
    app.call_method(
        Some("org.kde.StatusNotifierWatcher"),
        "/StatusNotifierWatcher",
        Some("org.kde.StatusNotifierWatcher"),
        "RegisterStatusNotifierItem",
        &("/org/ayatana/NotificationItem/acp_desk",),
    )
    .expect("the watcher takes the item");
    let host: bool = zbus::blocking::Proxy::new(
        &app,
        "org.kde.StatusNotifierWatcher",
        "/StatusNotifierWatcher",
        "org.kde.StatusNotifierWatcher",
    )
    .expect("a proxy")
    .get_property("IsStatusNotifierHostRegistered")
    .expect("the property");
    assert!(host, "a tray host is there");

    let tray = desktop.json(&["tray"]);
    let item = &tray["items"][0];
    let unique = app.unique_name().expect("a name").to_string();
    assert_eq!(item["bus_name"], unique.as_str());
    assert_eq!(
        tray["registered"][0],
        format!("{unique}/org/ayatana/NotificationItem/acp_desk")
    );
    assert_eq!(item["alive"], true);
    assert_eq!(item["props"]["Title"], "ACP Desk");
    assert_eq!(item["props"]["XAyatanaLabel"], "2");
    assert_eq!(item["menu"]["revision"], 7);
    let shown: Vec<(&str, bool)> = item["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| (e["text"].as_str().unwrap_or("?"), e["enabled"] == true))
        .collect();
    assert_eq!(
        shown,
        [
            ("2 requests waiting", false),
            ("claude in proj: wants to run a command", true),
            ("Quit", true)
        ],
        "the entries as shown, separators left out"
    );

    let chosen = desktop.json(&["click-tray", "claude in proj"]);
    assert_eq!(chosen["id"], 2);
    desktop.call(&["click-tray", "Quit"]).expect("clicked");
    assert_eq!(
        *clicked.lock().expect("not poisoned"),
        [(2, "clicked".into()), (4, "clicked".into())]
    );
    let err = desktop
        .call(&["click-tray", "Hide"])
        .expect_err("no such entry");
    assert!(err.contains("no tray menu entry \"Hide\""), "{err}");

    // The app goes away: so does its item.
    drop(app);
    let deadline = Instant::now() + Duration::from_secs(5);
    while desktop.json(&["tray"])["registered"] != Json::Array(vec![]) {
        assert!(
            Instant::now() < deadline,
            "the item of a gone app stays registered"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn records_launcher_counts_and_switches_services() {
    let desktop = Desktop::start(&["--no-notifications"]);
    let app = desktop.connect();
    let mut props: HashMap<&str, Value<'_>> = HashMap::new();
    props.insert("count", Value::I64(3));
    props.insert("count-visible", Value::Bool(true));
    app.emit_signal(
        None::<&str>,
        "/com/canonical/unity/launcherentry/1",
        "com.canonical.Unity.LauncherEntry",
        "Update",
        &("application://acp-desk.desktop", props),
    )
    .expect("emitted");
    let deadline = Instant::now() + Duration::from_secs(5);
    let launcher = loop {
        let got = desktop.json(&["launcher"]);
        if got.as_array().is_some_and(|a| !a.is_empty()) {
            break got;
        }
        assert!(
            Instant::now() < deadline,
            "the Update signal was not recorded"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(launcher[0]["app_uri"], "application://acp-desk.desktop");
    assert_eq!(launcher[0]["props"]["count"], 3);
    assert_eq!(launcher[0]["props"]["count-visible"], true);

    assert_eq!(
        desktop.call(&["has-owner", "org.freedesktop.Notifications"]),
        Ok("false".into())
    );
    assert_eq!(
        desktop.call(&["has-owner", "org.kde.StatusNotifierWatcher"]),
        Ok("true".into())
    );
    desktop
        .call(&["set-service", "org.kde.StatusNotifierWatcher", "off"])
        .expect("released");
    assert_eq!(
        desktop.call(&["has-owner", "org.kde.StatusNotifierWatcher"]),
        Ok("false".into())
    );
    desktop
        .call(&["set-service", "org.freedesktop.Notifications", "on"])
        .expect("taken");
    assert_eq!(
        desktop.call(&["has-owner", "org.freedesktop.Notifications"]),
        Ok("true".into())
    );
    let err = desktop
        .call(&["set-service", "org.example.Other", "on"])
        .expect_err("not ours");
    assert!(
        err.contains("is not a service of the fake desktop"),
        "{err}"
    );
}
