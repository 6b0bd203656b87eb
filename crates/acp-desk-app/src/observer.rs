//! Observers: what the history store, the tray and OS notifications see of every session.

use acp_desk_core::StreamEvent;
use acp_desk_core::events::SessionState;

use crate::registry::SessionInfo;

/// A change in a session's life, as its observers hear of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionStatus {
    /// The session was opened; its agent starts now. Comes before anything else of it.
    Opened,
    /// The session's `session-status` event (starting, ready, prompting, dead), with its
    /// detail; told right after the batch that carried it.
    State {
        state: SessionState,
        detail: Option<String>,
    },
    /// The session was closed and left the registry. Its engine has ended and every event
    /// came before this; nothing of the session follows.
    Closed,
}

/// Sees every session a [`Registry`](crate::Registry) opens once the observer is registered:
/// each session's event batches in order, and each change of its status.
///
/// Per session, the calls come in one order from one task (the session's pump):
/// [`SessionStatus::Opened`], then each batch followed by the `State` of each `session-status`
/// event in it, then [`SessionStatus::Closed`]. Batches are the engine's own, as it emitted
/// them (not the merged frames views get), plus, when the agent could not start and the engine
/// could not say so (the program could not be run), the app's `error` + `session-status: dead`.
/// Sessions run on their own pumps, so calls for different sessions may come concurrently.
///
/// The calls come from the pump that feeds the session's views: they must return at once. An
/// observer with real work (writing to a database, talking to the OS) hands it to a thread of
/// its own through a channel that never blocks the caller. An observer that panics is logged
/// and dropped for that session; the session goes on.
pub trait Observer: Send + Sync {
    /// A batch of the session's events.
    fn on_batch(&self, session: &SessionInfo, events: &[StreamEvent]) {
        let _ = (session, events);
    }

    /// A change of the session's status.
    fn on_status(&self, session: &SessionInfo, status: &SessionStatus) {
        let _ = (session, status);
    }

    /// Files this observer writes (the history file and its journal): sessions opened in a
    /// folder that holds them must not report them as the agent's changes, so the registry
    /// gives them to the engine's folder watcher to leave out.
    fn own_files(&self) -> Vec<std::path::PathBuf> {
        Vec::new()
    }
}
