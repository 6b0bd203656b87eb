//! One session's events fanned out to the views attached to it (windows, reloads), for front
//! ends that cannot make the engine wait.
//!
//! The engine sends [`EventBatch`](crate::EventBatch)es on a bounded channel and waits when it
//! is full (backpressure). A webview must never be the one it waits on: a busy or frozen page
//! would stall the agent. So the app layer's pump (`acp-desk-app`) drains the channel at once
//! into a [`Hub`], which
//! - keeps the whole thread compacted (a [`Compactor`]) for views that attach later;
//! - folds the events that arrived since the last send into a pending frame, where text deltas
//!   merge per message and a tool call's updates merge into one event: a flood costs memory in
//!   proportion to what it changed, not to how many messages it took;
//! - sends that frame to every view at most once per [`FRAME_INTERVAL`].
//!
//! Attaching flushes the pending frame to the views already there, then gives the new view the
//! snapshot, all under the hub's lock: a new view sees every event exactly once.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::compact::Compactor;
use crate::events::StreamEvent;

/// How often views get a frame at most. The UI applies events once per animation frame
/// (60 Hz: 16.7 ms), so sending more often would only queue work in the webview; sending less
/// often would make streaming text visibly stutter.
pub const FRAME_INTERVAL: Duration = Duration::from_millis(16);

/// What a view receives: the thread so far (`snapshot: true`, replacing whatever the view
/// held), then live frames in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StreamFrame {
    pub snapshot: bool,
    pub events: Vec<StreamEvent>,
}

/// Where frames go: a Tauri channel in the app, a vector in tests.
pub trait FrameSink: Send {
    /// Hands the frame over without waiting. `false`: the view is gone; the hub forgets it.
    fn send(&self, frame: StreamFrame) -> bool;
}

/// A view that keeps every frame it gets, for tests and tools that read a session's stream the
/// way a window does. Clones share the frames.
#[derive(Clone, Default)]
pub struct RecordingView(Arc<Mutex<Vec<StreamFrame>>>);

impl FrameSink for RecordingView {
    fn send(&self, frame: StreamFrame) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(frame);
        true
    }
}

impl RecordingView {
    /// Every frame so far, the snapshot first.
    pub fn frames(&self) -> Vec<StreamFrame> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The events of every frame so far, in order.
    pub fn events(&self) -> Vec<StreamEvent> {
        self.frames().into_iter().flat_map(|f| f.events).collect()
    }
}

pub struct Hub {
    thread: Compactor,
    pending: Compactor,
    views: Vec<Box<dyn FrameSink>>,
}

impl Default for Hub {
    fn default() -> Self {
        Self {
            thread: Compactor::new(),
            pending: Compactor::for_frames(),
            views: Vec::new(),
        }
    }
}

impl Hub {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes events from the engine. Nothing is sent until [`Hub::flush`].
    pub fn push(&mut self, events: &[StreamEvent]) {
        for ev in events {
            self.thread.apply(ev);
            self.pending.apply(ev);
        }
    }

    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Sends the pending frame to every view.
    pub fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let events = std::mem::replace(&mut self.pending, Compactor::for_frames()).snapshot();
        let frame = StreamFrame {
            snapshot: false,
            events,
        };
        self.views.retain(|v| v.send(frame.clone()));
    }

    /// Adds a view: it gets the thread so far, then every later frame.
    pub fn attach(&mut self, view: Box<dyn FrameSink>) {
        self.flush();
        let snapshot = StreamFrame {
            snapshot: true,
            events: self.thread.snapshot(),
        };
        if view.send(snapshot) {
            self.views.push(view);
        }
    }

    pub fn views(&self) -> usize {
        self.views.len()
    }

    /// The thread so far, compacted.
    pub fn snapshot(&self) -> Vec<StreamEvent> {
        self.thread.snapshot()
    }
}

pub type SharedHub = Arc<Mutex<Hub>>;

/// The hub, whatever a panic elsewhere left it as.
pub fn lock(hub: &SharedHub) -> std::sync::MutexGuard<'_, Hub> {
    // A panic while holding the lock leaves a hub that is still consistent event by event.
    hub.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{SessionState, StreamEvent};

    #[derive(Clone, Default)]
    struct Recorder(Arc<Mutex<Vec<StreamFrame>>>, Arc<Mutex<bool>>);

    impl FrameSink for Recorder {
        fn send(&self, frame: StreamFrame) -> bool {
            if *self.1.lock().unwrap() {
                return false;
            }
            self.0.lock().unwrap().push(frame);
            true
        }
    }

    fn text(t: &str) -> StreamEvent {
        StreamEvent::TextDelta {
            session_id: "s".into(),
            text: t.into(),
            content: None,
            message_id: None,
        }
    }

    fn status(s: SessionState) -> StreamEvent {
        StreamEvent::SessionStatus {
            session_id: "s".into(),
            status: s,
            detail: None,
            agent: None,
        }
    }

    fn texts(frames: &[StreamFrame]) -> String {
        frames
            .iter()
            .flat_map(|f| &f.events)
            .filter_map(|e| match e {
                StreamEvent::TextDelta { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn deltas_merge_into_one_event_per_frame() {
        let mut hub = Hub::new();
        let view = Recorder::default();
        hub.attach(Box::new(view.clone()));
        hub.push(&[text("a"), text("b")]);
        hub.push(&[text("c")]);
        hub.flush();
        hub.flush(); // nothing pending: nothing sent
        let frames = view.0.lock().unwrap().clone();
        assert_eq!(frames.len(), 2, "snapshot + one frame: {frames:?}");
        assert!(frames[0].snapshot && frames[0].events.is_empty());
        assert!(!frames[1].snapshot);
        assert_eq!(frames[1].events, vec![text("abc")]);
    }

    #[test]
    fn a_late_view_gets_everything_once() {
        let mut hub = Hub::new();
        let early = Recorder::default();
        hub.attach(Box::new(early.clone()));
        hub.push(&[status(SessionState::Ready), text("he")]);
        // Not flushed yet when the second view attaches: the early view must still get it, and
        // the late one must not get it twice (once in the snapshot, once live).
        let late = Recorder::default();
        hub.attach(Box::new(late.clone()));
        hub.push(&[text("llo")]);
        hub.flush();
        let early = early.0.lock().unwrap().clone();
        let late = late.0.lock().unwrap().clone();
        assert_eq!(texts(&early), "hello");
        assert_eq!(texts(&late), "hello");
        assert!(late[0].snapshot);
        assert_eq!(
            late[0].events,
            vec![status(SessionState::Ready), text("he")]
        );
    }

    #[test]
    fn a_known_call_stays_an_update_in_later_frames() {
        use crate::events::ToolCallEvent;
        let call = |is_update: bool, status| {
            StreamEvent::ToolCall(Box::new(ToolCallEvent {
                session_id: "s".into(),
                tool_call_id: "c1".into(),
                tool_name: if is_update {
                    String::new()
                } else {
                    "Read".into()
                },
                arguments: serde_json::Value::Null,
                is_update,
                tool_kind: None,
                status: Some(status),
                content: None,
                locations: None,
                raw_output: None,
                meta: None,
            }))
        };
        let mut hub = Hub::new();
        let view = Recorder::default();
        hub.attach(Box::new(view.clone()));
        hub.push(&[call(
            false,
            agent_client_protocol_schema::v1::ToolCallStatus::Pending,
        )]);
        hub.flush();
        hub.push(&[call(
            true,
            agent_client_protocol_schema::v1::ToolCallStatus::Completed,
        )]);
        hub.flush();
        let frames = view.0.lock().unwrap().clone();
        let is_update = |f: &StreamFrame| match &f.events[0] {
            StreamEvent::ToolCall(tc) => tc.is_update,
            other => panic!("{other:?}"),
        };
        assert!(!is_update(&frames[1]));
        assert!(is_update(&frames[2]), "a later frame's update must say so");
        // A view attaching now gets the call announced (isUpdate false) in its snapshot.
        let late = Recorder::default();
        hub.attach(Box::new(late.clone()));
        assert!(!is_update(&late.0.lock().unwrap()[0]));
    }

    #[test]
    fn gone_views_are_forgotten() {
        let mut hub = Hub::new();
        let view = Recorder::default();
        hub.attach(Box::new(view.clone()));
        *view.1.lock().unwrap() = true;
        hub.push(&[text("x")]);
        hub.flush();
        assert_eq!(hub.views(), 0);
    }
}
