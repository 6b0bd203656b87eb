//! A session's pump: the one task that takes the engine's event batches and hands each to the
//! session's hub (views), its observers and its tap, in the engine's order. When the engine's
//! channel closes it settles how the start ended, so a start failure the engine could not
//! report reaches everyone exactly once, after everything the engine said.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use acp_desk_core::events::{ErrorInfo, ErrorKind, SessionState, StreamEvent};
use acp_desk_core::hub::{FRAME_INTERVAL, SharedHub};
use acp_desk_core::{EngineError, EventBatch};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use crate::error::AppError;
use crate::observer::{Observer, SessionStatus};
use crate::registry::SessionInfo;

/// How the start task's `acp_desk_core::start` ended. A start task that was dropped (the
/// session was closed while starting) sends nothing.
#[derive(Debug)]
pub(crate) enum StartReport {
    Started,
    Failed(AppError),
}

pub(crate) struct Pump {
    pub(crate) info: SessionInfo,
    /// `None`: the session takes no views (a headless front end with its tap).
    pub(crate) hub: Option<SharedHub>,
    pub(crate) observers: Vec<Arc<dyn Observer>>,
    pub(crate) tap: Option<mpsc::Sender<EventBatch>>,
    /// Set once the engine is done and every event was handed on.
    pub(crate) ended: watch::Sender<bool>,
}

pub(crate) use acp_desk_core::hub::lock as lock_hub;

fn has_pending(hub: &Option<SharedHub>) -> bool {
    hub.as_ref().is_some_and(|h| lock_hub(h).has_pending())
}

fn flush(hub: &Option<SharedHub>, next_send: &mut Instant) {
    if let Some(h) = hub {
        lock_hub(h).flush();
    }
    *next_send = Instant::now() + FRAME_INTERVAL;
}

fn is_dead(ev: &StreamEvent) -> bool {
    matches!(
        ev,
        StreamEvent::SessionStatus {
            status: SessionState::Dead,
            ..
        }
    )
}

/// The kind of a start failure the app reports itself.
fn kind_of_failure(err: &AppError) -> ErrorKind {
    match err {
        AppError::Engine(e) => acp_desk_core::error_kind::of_start_failure(e),
        AppError::Internal(_) => ErrorKind::Other,
        _ => ErrorKind::StartFailed,
    }
}

/// What views heard when a start failed without the engine saying so (the texts the shell
/// always pushed): an `error`, then `session-status: dead` under the app's session id.
fn failure_events(id: &str, err: &AppError) -> EventBatch {
    let message = err.to_string();
    vec![
        StreamEvent::Error {
            session_id: None,
            error: ErrorInfo::of_kind(kind_of_failure(err), message.clone()),
        },
        StreamEvent::SessionStatus {
            session_id: id.to_string(),
            status: SessionState::Dead,
            detail: Some(message),
            agent: None,
        },
    ]
}

impl Pump {
    /// Runs until the session is removed from the registry (`removed` fires or is dropped).
    /// Never waits on a view (a frame is handed over, not awaited); waits on the tap, which is
    /// the tap's purpose. Observers are called inline: one that blocks stalls this pump and,
    /// through the engine's bounded channel, the agent, which is why the [`Observer`] contract
    /// says to hand work to a thread of one's own.
    pub(crate) async fn run(
        mut self,
        mut events: mpsc::Receiver<EventBatch>,
        start: oneshot::Receiver<StartReport>,
        removed: oneshot::Receiver<()>,
    ) {
        self.status(&SessionStatus::Opened);
        let mut next_send = Instant::now();
        let mut saw_dead = false;
        loop {
            let pending = has_pending(&self.hub);
            tokio::select! {
                batch = events.recv() => match batch {
                    Some(batch) => {
                        saw_dead |= batch.iter().any(is_dead);
                        self.deliver(&batch, &mut next_send);
                        self.feed_tap(batch, &mut next_send).await;
                    }
                    None => break,
                },
                () = tokio::time::sleep_until(next_send), if pending => {
                    flush(&self.hub, &mut next_send);
                }
            }
        }
        // Every sender is gone: the engine's owner ended (or never ran), so it will say
        // nothing more. The tap's reader learns the stream ended.
        self.tap = None;
        // The start task reports right after `start` returns, which is no later than the
        // channel closing; a dropped report means the session was closed while starting.
        if let Ok(StartReport::Failed(err)) = start.await {
            // The engine ends every failure it reports with `session-status: dead`; without
            // one it could not report (the program never ran, its task died): say it here.
            if !saw_dead {
                // Nothing ran for these two (a program not found, a secret not readable):
                // expected to come without events, said to the user by `failure_events`.
                if !matches!(
                    err,
                    AppError::Engine(EngineError::Spawn(_) | EngineError::SecretUnavailable { .. })
                ) {
                    tracing::warn!(session = %self.info.id, "the agent's start failed unreported: {err}");
                }
                let batch = failure_events(&self.info.id, &err);
                self.deliver(&batch, &mut next_send);
            }
        }
        flush(&self.hub, &mut next_send);
        self.ended.send_replace(true);
        let _ = removed.await;
        self.status(&SessionStatus::Closed);
    }

    /// Hands one batch to the hub and the observers.
    fn deliver(&mut self, batch: &[StreamEvent], next_send: &mut Instant) {
        if let Some(hub) = &self.hub {
            let mut h = lock_hub(hub);
            h.push(batch);
            if Instant::now() >= *next_send {
                h.flush();
                *next_send = Instant::now() + FRAME_INTERVAL;
            }
        }
        let info = &self.info;
        each(&mut self.observers, info, |o| o.on_batch(info, batch));
        for ev in batch {
            if let StreamEvent::SessionStatus { status, detail, .. } = ev {
                self.status(&SessionStatus::State {
                    state: *status,
                    detail: detail.clone(),
                });
            }
        }
    }

    fn status(&mut self, status: &SessionStatus) {
        let info = &self.info;
        each(&mut self.observers, info, |o| o.on_status(info, status));
    }

    /// Gives the batch to the tap, waiting while it is full (that wait is the backpressure
    /// that slows the engine, and so the agent); views still get their frames meanwhile.
    async fn feed_tap(&mut self, batch: EventBatch, next_send: &mut Instant) {
        let Some(tap) = &self.tap else {
            return;
        };
        let sent = loop {
            let pending = has_pending(&self.hub);
            tokio::select! {
                permit = tap.reserve() => break match permit {
                    Ok(permit) => {
                        permit.send(batch);
                        true
                    }
                    Err(_) => false,
                },
                () = tokio::time::sleep_until(*next_send), if pending => {
                    flush(&self.hub, next_send);
                }
            }
        };
        if !sent {
            // As with the engine's own channel: a reader that went away is not the session's
            // end; the views and observers still get everything.
            tracing::debug!(session = %self.info.id, "the tap's reader is gone");
            self.tap = None;
        }
    }
}

/// Calls every observer; one that panics is dropped (for this session) rather than taking the
/// pump, and with it the session's views, down.
fn each(observers: &mut Vec<Arc<dyn Observer>>, info: &SessionInfo, call: impl Fn(&dyn Observer)) {
    observers.retain(|o| match catch_unwind(AssertUnwindSafe(|| call(o.as_ref()))) {
        Ok(()) => true,
        Err(_) => {
            tracing::error!(session = %info.id, "an observer panicked; it no longer sees this session");
            false
        }
    });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Mutex;

    use super::*;

    #[derive(Default)]
    struct Recording(Mutex<Vec<String>>);

    impl Observer for Recording {
        fn on_batch(&self, _: &SessionInfo, events: &[StreamEvent]) {
            let kinds: Vec<_> = events.iter().map(StreamEvent::kind).collect();
            self.0
                .lock()
                .unwrap()
                .push(format!("batch {}", kinds.join(",")));
        }
        fn on_status(&self, _: &SessionInfo, status: &SessionStatus) {
            let s = match status {
                SessionStatus::Opened => "opened".to_string(),
                SessionStatus::State { state, detail } => {
                    format!("{state:?} {}", detail.clone().unwrap_or_default())
                }
                SessionStatus::Closed => "closed".to_string(),
            };
            self.0.lock().unwrap().push(s.trim().to_string());
        }
    }

    struct Panicky;

    impl Observer for Panicky {
        fn on_batch(&self, _: &SessionInfo, _: &[StreamEvent]) {
            panic!("an observer's bug");
        }
    }

    type View = acp_desk_core::hub::RecordingView;

    fn status(s: SessionState, detail: Option<&str>) -> StreamEvent {
        StreamEvent::SessionStatus {
            session_id: "e1".into(),
            status: s,
            detail: detail.map(Into::into),
            agent: None,
        }
    }

    fn error(m: &str) -> StreamEvent {
        StreamEvent::Error {
            session_id: Some("e1".into()),
            error: ErrorInfo::new(None, m, None),
        }
    }

    struct Run {
        engine: mpsc::Sender<EventBatch>,
        start: oneshot::Sender<StartReport>,
        removed: oneshot::Sender<()>,
        task: tokio::task::JoinHandle<()>,
        hub: SharedHub,
        view: View,
        tap: mpsc::Receiver<EventBatch>,
        recorded: Arc<Recording>,
    }

    /// A pump with a view attached to its hub, a recording observer after a panicking one, and
    /// (with `tap`) a tap; the test plays the engine.
    fn run_pump(tap: bool) -> Run {
        let hub: SharedHub = Arc::new(Mutex::new(acp_desk_core::hub::Hub::new()));
        let view = View::default();
        lock_hub(&hub).attach(Box::new(view.clone()));
        let recorded = Arc::new(Recording::default());
        let (tap_tx, tap_rx) = mpsc::channel(1);
        let (engine, rx) = mpsc::channel(1);
        let (start, start_rx) = oneshot::channel();
        let (removed, removed_rx) = oneshot::channel();
        let pump = Pump {
            info: SessionInfo::demo("s1", "/p"),
            hub: Some(hub.clone()),
            observers: vec![Arc::new(Panicky), recorded.clone()],
            tap: tap.then_some(tap_tx),
            ended: watch::channel(false).0,
        };
        let task = tokio::spawn(pump.run(rx, start_rx, removed_rx));
        Run {
            engine,
            start,
            removed,
            task,
            hub,
            view,
            tap: tap_rx,
            recorded,
        }
    }

    async fn drain(tap: &mut mpsc::Receiver<EventBatch>) -> Vec<EventBatch> {
        let mut out = Vec::new();
        while let Some(b) = tap.recv().await {
            out.push(b);
        }
        out
    }

    #[tokio::test(start_paused = true)]
    async fn a_failure_the_engine_reported_is_not_said_twice() {
        let mut r = run_pump(true);
        let reported = vec![
            status(SessionState::Starting, None),
            error("the agent exited"),
            status(SessionState::Dead, Some("the agent exited")),
        ];
        r.engine.send(reported.clone()).await.unwrap();
        let err = AppError::Engine(EngineError::StartFailed("the agent exited".into()));
        r.start.send(StartReport::Failed(err)).unwrap();
        drop(r.engine);
        assert_eq!(drain(&mut r.tap).await, vec![reported.clone()]);
        r.removed.send(()).unwrap();
        r.task.await.unwrap();
        // (Views get `starting` folded away: a frame keeps a session's latest status.)
        let events = r.view.events();
        assert_eq!(
            events.iter().filter(|e| is_dead(e)).count(),
            1,
            "{events:?}"
        );
        assert_eq!(events.iter().filter(|e| e.kind() == "error").count(), 1);
        assert_eq!(
            *r.recorded.0.lock().unwrap(),
            [
                "opened",
                "batch session-status,error,session-status",
                "Starting",
                "Dead the agent exited",
                "closed"
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_failure_the_engine_could_not_report_is_said_once_after_its_events() {
        for err in [
            EngineError::Spawn("no-such-agent was not found on PATH".into()),
            // The owner task died: it may have said `starting`, never `dead`.
            EngineError::StartFailed("the session task ended".into()),
        ] {
            let mut r = run_pump(true);
            let said = matches!(err, EngineError::StartFailed(_));
            if said {
                r.engine
                    .send(vec![status(SessionState::Starting, None)])
                    .await
                    .unwrap();
            }
            // The channel closes before the report arrives: the pump waits for the report.
            drop(r.engine);
            let tapped = drain(&mut r.tap).await;
            let message = err.to_string();
            r.start
                .send(StartReport::Failed(AppError::Engine(err)))
                .unwrap();
            r.removed.send(()).unwrap();
            r.task.await.unwrap();
            // The tap carries the engine's events only.
            assert_eq!(tapped.len(), usize::from(said));
            let events = r.view.events();
            let dead: Vec<_> = events.iter().filter(|e| is_dead(e)).collect();
            assert_eq!(dead.len(), 1, "{events:?}");
            assert_eq!(
                events.last().unwrap(),
                &StreamEvent::SessionStatus {
                    session_id: "s1".into(),
                    status: SessionState::Dead,
                    detail: Some(message.clone()),
                    agent: None,
                }
            );
            assert!(matches!(
                &events[events.len() - 2],
                StreamEvent::Error { session_id: None, error } if error.message == message
            ));
            let recorded = r.recorded.0.lock().unwrap().clone();
            let mut expected = vec!["opened".to_string()];
            if said {
                expected.extend(["batch session-status".into(), "Starting".into()]);
            }
            expected.extend([
                "batch error,session-status".into(),
                format!("Dead {message}"),
                "closed".into(),
            ]);
            assert_eq!(recorded, expected);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_session_closed_while_starting_gets_no_invented_failure() {
        let mut r = run_pump(true);
        drop(r.engine);
        drop(r.start);
        assert!(drain(&mut r.tap).await.is_empty());
        drop(r.removed);
        r.task.await.unwrap();
        assert!(r.view.events().is_empty());
        assert_eq!(*r.recorded.0.lock().unwrap(), ["opened", "closed"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_tap_holds_the_engine_and_loses_nothing() {
        let mut r = run_pump(true);
        let engine = r.engine.clone();
        let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = sent.clone();
        // The tap holds one batch and the engine channel one: the sender runs ahead of the
        // reader by at most a few batches and waits for it, and every batch arrives in order.
        let send = tokio::spawn(async move {
            for i in 0..200 {
                engine.send(vec![error(&i.to_string())]).await.unwrap();
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        });
        // Nobody reads the tap yet: however long we wait, the sender is held after a few
        // batches (one in the tap, one held by the pump, one in the engine's channel).
        tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        let ahead = sent.load(std::sync::atomic::Ordering::SeqCst);
        assert!(
            ahead <= 3,
            "the engine ran {ahead} batches ahead of a tap nobody read"
        );
        assert!(!send.is_finished());
        let mut got = Vec::new();
        while got.len() < 200 {
            let batch = r.tap.recv().await.unwrap();
            got.extend(batch);
            tokio::task::yield_now().await;
        }
        send.await.unwrap();
        let expected: Vec<_> = (0..200).map(|i| error(&i.to_string())).collect();
        assert_eq!(got, expected);
        drop(r.engine);
        r.start.send(StartReport::Started).unwrap();
        r.removed.send(()).unwrap();
        r.task.await.unwrap();
        assert_eq!(r.view.events(), expected, "views get every event too");
        assert_eq!(r.recorded.0.lock().unwrap().len(), 202);
    }

    #[tokio::test(start_paused = true)]
    async fn a_gone_tap_stops_nothing_else() {
        let r = run_pump(true);
        drop(r.tap);
        for i in 0..5 {
            r.engine.send(vec![error(&i.to_string())]).await.unwrap();
        }
        drop(r.engine);
        r.start.send(StartReport::Started).unwrap();
        r.removed.send(()).unwrap();
        r.task.await.unwrap();
        assert_eq!(r.view.events().len(), 5);
    }

    #[tokio::test(start_paused = true)]
    async fn views_get_merged_frames_and_never_hold_the_engine() {
        let Run {
            engine,
            start,
            removed,
            task,
            hub,
            view,
            ..
        } = run_pump(false);
        // 1000 batches back to back through a channel of one: the pump keeps taking them, and
        // the view gets them merged, far fewer frames than batches.
        let text = |t: &str| StreamEvent::TextDelta {
            session_id: "e1".into(),
            text: t.into(),
            content: None,
            message_id: None,
        };
        for i in 0..1000 {
            engine.send(vec![text(&i.to_string())]).await.unwrap();
        }
        drop(engine);
        start.send(StartReport::Started).unwrap();
        removed.send(()).unwrap();
        task.await.unwrap();
        let frames = view.frames();
        let expected: String = (0..1000).map(|i| i.to_string()).collect();
        let got: String = view
            .events()
            .iter()
            .map(|e| match e {
                StreamEvent::TextDelta { text, .. } => text.clone(),
                _ => String::new(),
            })
            .collect();
        assert_eq!(got, expected);
        assert!(
            frames.len() < 50,
            "{} frames for 1000 batches",
            frames.len()
        );
        assert_eq!(lock_hub(&hub).snapshot(), vec![text(&expected)]);
    }
}
