//! The window's sessions as the last run left them: which were open (the state file, in
//! sidebar order, with the one shown) joined with what the history store keeps of each (its
//! transcript and its draft), for the window to show at once, before any agent starts.
//!
//! - Nothing here starts an agent: the window starts a restored session's agent when the user
//!   returns to it (or at once, by the `restored_sessions_start` setting).
//! - A session whose folder is gone (or is no folder any more) still comes back, with its
//!   transcript and [`RestoredSession::folder_problem`] naming the folder, so the window can say
//!   so and offer to remove it; it is never continued there.
//! - A history that cannot be read costs the transcripts and drafts, never the sidebar:
//!   [`RestoredSession::history_problem`] says why.
//! - Blocking (the folders' metadata, SQLite): call it on the blocking pool.

use acp_desk_core::StreamEvent;
use acp_desk_store::{Store, StoreError};
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::AppError;
use crate::state::AppState;

/// One session the window had open, as it comes back.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RestoredSession {
    /// Its id in the history (ACP Desk's session id); `None` for one never recorded (its agent
    /// never started): it comes back without a transcript.
    pub session_id: Option<String>,
    pub folder: String,
    /// The agent's launch name, to start it again with.
    pub agent: String,
    /// Its title in the history (the agent's, else the first prompt's first line).
    pub title: Option<String>,
    /// The unsent text of its composer ("" for none).
    pub draft: String,
    /// Its stored transcript, as a snapshot holds it.
    pub events: Vec<StreamEvent>,
    /// Why it cannot continue in its folder (gone, a file, unreadable), naming the folder.
    pub folder_problem: Option<String>,
    /// Why its transcript or draft could not be read from the history.
    pub history_problem: Option<String>,
}

/// What the window restores: its sessions in sidebar order and the index of the one shown.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RestoredSessions {
    pub sessions: Vec<RestoredSession>,
    pub shown: Option<u32>,
}

/// The open sessions of `state`, each with its transcript and draft from `store` (`None`, or
/// `Err`: the history could not be opened, and the error says why on every session).
pub fn restored_sessions(state: &AppState, store: Result<&Store, &StoreError>) -> RestoredSessions {
    let sessions = state
        .open_sessions
        .iter()
        .map(|open| {
            let folder = open.folder.display().to_string();
            let folder_problem = match crate::check_folder(&folder) {
                Ok(_) => None,
                Err(e) => Some(folder_problem(&folder, &e)),
            };
            let mut restored = RestoredSession {
                session_id: open.session_id.clone(),
                folder,
                agent: open.agent.clone(),
                title: None,
                draft: String::new(),
                events: Vec::new(),
                folder_problem,
                history_problem: None,
            };
            if let Some(id) = &open.session_id {
                match store {
                    Ok(store) => from_history(store, id, &mut restored),
                    Err(e) => restored.history_problem = Some(e.to_string()),
                }
            }
            restored
        })
        .collect();
    RestoredSessions {
        sessions,
        shown: state.shown_session.and_then(|i| u32::try_from(i).ok()),
    }
}

/// Fills in what the history keeps of session `id`; a failure is noted in `restored`.
fn from_history(store: &Store, id: &str, restored: &mut RestoredSession) {
    let mut read = || -> Result<(), StoreError> {
        // The draft first: a session that was never recorded may still have one.
        restored.draft = store.draft(id)?.unwrap_or_default();
        restored.title = store.session(id)?.shown_title().map(str::to_owned);
        restored.events = store.events(id)?;
        Ok(())
    };
    if let Err(e) = read() {
        restored.history_problem = Some(match e {
            StoreError::NotFound(_) => format!(
                "the history has no session {id} (it was deleted, or never stored): its \
                 transcript cannot be shown"
            ),
            e => e.to_string(),
        });
    }
}

fn folder_problem(folder: &str, e: &AppError) -> String {
    match e {
        AppError::FolderMissing(_) => format!(
            "The folder {folder} is gone (moved or deleted?): this session cannot continue \
             there. Its transcript is still in the history."
        ),
        AppError::NotAFolder(_) => format!(
            "{folder} is a file now, not a folder: this session cannot continue there. Its \
             transcript is still in the history."
        ),
        e => format!("{e} This session cannot continue there."),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use acp_desk_store::{LaunchOrigin, Recorder, RecorderOptions, SessionMeta, StoredLaunch};

    use super::*;
    use crate::state::OpenSession;

    fn meta(folder: &str) -> SessionMeta {
        SessionMeta {
            agent: "demo".into(),
            launch: StoredLaunch {
                origin: LaunchOrigin::Named,
                program: "acp-desk-demo-agent".into(),
                args: Vec::new(),
                args_redacted: false,
                env_names: Vec::new(),
            },
            folder: folder.into(),
        }
    }

    #[test]
    fn sessions_come_back_in_order_with_transcript_and_draft_and_a_gone_folder_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir(&project).unwrap();
        let project = std::fs::canonicalize(project).unwrap();
        let gone = dir.path().join("gone");
        let db = dir.path().join("history.sqlite3");
        let (recorder, _) = Recorder::start(&db, RecorderOptions::default()).unwrap();
        recorder.begin("s1", meta(&project.display().to_string()));
        recorder.events(
            "s1",
            &[StreamEvent::TextDelta {
                session_id: "s1".into(),
                text: "stored answer".into(),
                message_id: None,
                content: None,
            }],
        );
        recorder.end("s1");
        // A session that was never sent has a draft and no rows.
        recorder.set_draft("s2", "half a thought");
        recorder.finish();
        let mut state = AppState::default();
        state.set_open_sessions(
            vec![
                OpenSession::new(&gone, "demo").with_session_id("s2"),
                OpenSession::new(&project, "demo").with_session_id("s1"),
                OpenSession::new(&project, "broken"),
            ],
            Some(1),
        );
        let (store, _) = Store::open(&db).unwrap();
        let r = restored_sessions(&state, Ok(&store));
        assert_eq!(r.shown, Some(1));
        let [a, b, c] = &r.sessions[..] else {
            panic!("{r:?}")
        };
        assert_eq!(a.draft, "half a thought");
        let problem = a.folder_problem.as_deref().unwrap();
        assert!(problem.contains(&gone.display().to_string()), "{problem}");
        assert!(problem.contains("is gone"), "{problem}");
        // Never stored as a session: the draft is there, the missing transcript is said.
        assert!(a.history_problem.is_some());
        assert_eq!(b.folder_problem, None);
        assert_eq!(b.history_problem, None);
        assert_eq!(b.events.len(), 1);
        assert!(
            matches!(&b.events[0], StreamEvent::TextDelta { text, .. } if text == "stored answer")
        );
        assert_eq!((c.session_id.as_deref(), c.events.len()), (None, 0));
        assert_eq!(c.history_problem, None);
    }
}
