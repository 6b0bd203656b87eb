//! The app's open sessions: each an engine session, the hub its views attach to, and the pump
//! that drains the engine into the hub.
//!
//! Opening returns at once: the agent starts in the background and its progress (`session-status
//! starting`, then `ready` or the error) reaches the views like any other event. Commands given
//! before it is ready get `session-starting`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use acp_desk_core::agents::LaunchSpec;
use acp_desk_core::events::{ErrorInfo, PermissionResolution, SessionState, StreamEvent};
use acp_desk_core::hub::{FrameSink, Hub, SharedHub, pump};
use acp_desk_core::{EngineError, SessionHandle, SessionOptions, agents};
use tokio::sync::mpsc;

use crate::files;
use crate::ipc::{ConfigValue, IpcError, ProjectFiles, PromptPart, SessionInfo, TurnEnd};

/// How many event batches the engine may queue for the pump. The pump takes them at once, so
/// this only absorbs scheduling hiccups; the hub bounds the rest by merging.
const ENGINE_QUEUE: usize = 64;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding one of these locks leaves plain data that is still consistent.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

enum Engine {
    Starting,
    Running(SessionHandle),
    Failed(IpcError),
    Closed,
}

struct Session {
    info: SessionInfo,
    /// The session's folder, canonical: what paths from the window must lie inside.
    folder: PathBuf,
    hub: SharedHub,
    engine: Mutex<Engine>,
}

impl Session {
    fn handle(&self) -> Result<SessionHandle, IpcError> {
        match &*lock(&self.engine) {
            Engine::Running(h) => Ok(h.clone()),
            Engine::Starting => Err(IpcError::SessionStarting(
                "the agent is still starting; try again in a moment".into(),
            )),
            Engine::Failed(e) => Err(e.clone()),
            Engine::Closed => Err(IpcError::SessionEnded("the session was closed".into())),
        }
    }
}

#[derive(Default)]
pub struct Sessions {
    open: Mutex<BTreeMap<String, Arc<Session>>>,
    counter: AtomicU64,
}

/// Resolves an agent name (settings, demo, catalog) to how to start it.
pub fn resolve_agent(agent: &str) -> Result<LaunchSpec, IpcError> {
    agents::resolve(agent).map_err(|e| match e {
        agents::AgentError::Unknown(..) => IpcError::AgentUnknown(e.to_string()),
        _ => IpcError::AgentUnavailable(e.to_string()),
    })
}

/// Checks a folder the user gave us (dialog, command line, drop: all come here).
pub fn check_folder(path: &str) -> Result<PathBuf, IpcError> {
    let raw = Path::new(path);
    if path.trim().is_empty() {
        return Err(IpcError::InvalidInput(
            "no folder was given: open one with File → Open Folder".into(),
        ));
    }
    let meta = match std::fs::metadata(raw) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(IpcError::FolderMissing(format!(
                "{path} does not exist (was it moved or deleted?). Open another folder."
            )));
        }
        Err(e) => {
            return Err(IpcError::FolderUnreadable(format!(
                "{path} cannot be opened: {e}. Check its permissions, or open another folder."
            )));
        }
    };
    if !meta.is_dir() {
        return Err(IpcError::NotAFolder(format!(
            "{path} is a file, not a folder. Drop or open the project's folder instead."
        )));
    }
    if let Err(e) = std::fs::read_dir(raw) {
        return Err(IpcError::FolderUnreadable(format!(
            "{path} cannot be read: {e}. Check its permissions, or open another folder."
        )));
    }
    std::fs::canonicalize(raw).map_err(|e| {
        IpcError::FolderUnreadable(format!(
            "{path} cannot be resolved: {e}. Open another folder."
        ))
    })
}

impl Sessions {
    fn get(&self, id: &str) -> Result<Arc<Session>, IpcError> {
        lock(&self.open).get(id).cloned().ok_or_else(|| {
            IpcError::SessionUnknown(format!(
                "no open session has the id `{id}` (it may have been closed)"
            ))
        })
    }

    /// Opens a session in `folder` with `agent`; the agent starts in the background.
    pub fn open(&self, folder: &str, agent: &str) -> Result<SessionInfo, IpcError> {
        let folder = check_folder(folder)?;
        let spec = resolve_agent(agent)?;
        Ok(self.open_checked(folder, spec, agent))
    }

    /// [`Sessions::open`] once the folder and the agent are checked.
    pub fn open_checked(&self, folder: PathBuf, spec: LaunchSpec, agent: &str) -> SessionInfo {
        let id = format!("s{}", self.counter.fetch_add(1, Ordering::Relaxed) + 1);
        let info = SessionInfo {
            id: id.clone(),
            folder: folder.display().to_string(),
            agent: agent.to_string(),
        };
        let session = Arc::new(Session {
            info: info.clone(),
            folder: folder.clone(),
            hub: Arc::new(Mutex::new(Hub::new())),
            engine: Mutex::new(Engine::Starting),
        });
        let (tx, rx) = mpsc::channel(ENGINE_QUEUE);
        tauri::async_runtime::spawn(pump(session.hub.clone(), rx));
        lock(&self.open).insert(id, session.clone());
        let opts = SessionOptions::new(folder);
        let key = info.id.clone();
        tauri::async_runtime::spawn(async move {
            let shell_events = tx.clone();
            let outcome = acp_desk_core::start(spec, opts, tx).await;
            let err = match outcome {
                Ok(handle) => {
                    let too_late = {
                        let mut engine = lock(&session.engine);
                        if matches!(*engine, Engine::Closed) {
                            Some(handle)
                        } else {
                            *engine = Engine::Running(handle);
                            None
                        }
                    };
                    // Closed while starting: end the agent now.
                    if let Some(handle) = too_late {
                        handle.close().await;
                    }
                    return;
                }
                Err(e) => e,
            };
            // The engine reports its own failures as events and ends with `session-status
            // dead`; a spawn failure (before its task runs) or a task that died says nothing.
            // Its events are already queued ahead of ours, but the pump may not have taken them
            // yet: give it a moment before looking.
            let spawn = matches!(err, EngineError::Spawn(_));
            let err = IpcError::from(err);
            if !spawn {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            let said_dead = lock(&session.hub).snapshot().iter().any(|ev| {
                matches!(
                    ev,
                    StreamEvent::SessionStatus {
                        status: SessionState::Dead,
                        ..
                    }
                )
            });
            if !said_dead {
                let _ = shell_events.try_send(vec![
                    StreamEvent::Error {
                        session_id: None,
                        error: ErrorInfo {
                            code: None,
                            message: err.to_string(),
                            data: None,
                        },
                    },
                    StreamEvent::SessionStatus {
                        session_id: key.clone(),
                        status: SessionState::Dead,
                        detail: Some(err.to_string()),
                        agent: None,
                    },
                ]);
            }
            let mut engine = lock(&session.engine);
            if !matches!(*engine, Engine::Closed) {
                *engine = Engine::Failed(err);
            }
        });
        tracing::info!(session = %info.id, folder = %info.folder, agent = %info.agent, "session opened");
        info
    }

    pub fn attach(&self, id: &str, view: Box<dyn FrameSink>) -> Result<(), IpcError> {
        let session = self.get(id)?;
        lock(&session.hub).attach(view);
        Ok(())
    }

    /// Runs one turn with the composer's parts, turned into ACP content blocks (files read and
    /// images checked on the blocking pool).
    pub async fn prompt(&self, id: &str, parts: Vec<PromptPart>) -> Result<TurnEnd, IpcError> {
        if files::is_empty_prompt(&parts) {
            return Err(IpcError::InvalidInput("the prompt is empty".into()));
        }
        let session = self.get(id)?;
        let handle = session.handle()?;
        let caps = handle.prompt_capabilities().clone();
        let folder = session.folder.clone();
        let blocks = blocking(move || files::prompt_blocks(&folder, parts, &caps)).await?;
        Ok(handle.prompt(blocks).await?.into())
    }

    pub async fn set_mode(&self, id: &str, mode_id: &str) -> Result<(), IpcError> {
        if mode_id.trim().is_empty() {
            return Err(IpcError::InvalidInput("no mode was given".into()));
        }
        let handle = self.get(id)?.handle()?;
        Ok(handle.set_mode(mode_id).await?)
    }

    pub async fn set_config_option(
        &self,
        id: &str,
        config_id: &str,
        value: ConfigValue,
    ) -> Result<(), IpcError> {
        if config_id.trim().is_empty() {
            return Err(IpcError::InvalidInput("no config option was given".into()));
        }
        let handle = self.get(id)?.handle()?;
        Ok(handle.set_config_option(config_id, value).await?)
    }

    /// The session folder's files for the `@` picker. Works while the agent starts, and after
    /// it died: it is about the folder, not the agent.
    pub async fn list_files(&self, id: &str) -> Result<ProjectFiles, IpcError> {
        let folder = self.get(id)?.folder.clone();
        blocking(move || Ok(files::list_files(&folder))).await
    }

    /// `path` resolved inside the session's folder (for opening or revealing it), or
    /// `path-outside`.
    pub async fn path_inside(&self, id: &str, path: String) -> Result<PathBuf, IpcError> {
        let folder = self.get(id)?.folder.clone();
        blocking(move || files::resolve_inside(&folder, &path)).await
    }

    pub fn cancel(&self, id: &str) -> Result<(), IpcError> {
        Ok(self.get(id)?.handle()?.cancel()?)
    }

    pub async fn respond(
        &self,
        id: &str,
        request_id: &str,
        resolution: PermissionResolution,
    ) -> Result<(), IpcError> {
        let handle = self.get(id)?.handle()?;
        Ok(handle.respond_permission(request_id, resolution).await?)
    }

    /// Closes a session: its agent is asked to end, then made to.
    pub async fn close(&self, id: &str) -> Result<(), IpcError> {
        let session = lock(&self.open).remove(id).ok_or_else(|| {
            IpcError::SessionUnknown(format!("no open session has the id `{id}`"))
        })?;
        close_session(&session).await;
        Ok(())
    }

    /// Closes every session (the window is closing or the app quits).
    pub async fn close_all(&self) {
        let all = std::mem::take(&mut *lock(&self.open));
        // In parallel: each may take the full grace of a deaf agent.
        let mut closing = tokio::task::JoinSet::new();
        for session in all.into_values() {
            closing.spawn(async move { close_session(&session).await });
        }
        while closing.join_next().await.is_some() {}
    }

    pub fn len(&self) -> usize {
        lock(&self.open).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The thread so far of a session (compacted), for tests and diagnostics.
    pub fn snapshot(&self, id: &str) -> Result<Vec<StreamEvent>, IpcError> {
        Ok(lock(&self.get(id)?.hub).snapshot())
    }

    /// The agent's process id, once it runs.
    pub fn pid(&self, id: &str) -> Result<u32, IpcError> {
        self.get(id)?
            .handle()?
            .pid()
            .ok_or_else(|| IpcError::SessionEnded("the agent has no process".into()))
    }

    pub fn info(&self, id: &str) -> Result<SessionInfo, IpcError> {
        Ok(self.get(id)?.info.clone())
    }
}

/// Runs disk work on the blocking pool: a hung network mount must not stall the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, IpcError> + Send + 'static,
) -> Result<T, IpcError> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(|e| IpcError::InvalidInput(format!("the work was interrupted: {e}")))?
}

async fn close_session(session: &Session) {
    let previous = std::mem::replace(&mut *lock(&session.engine), Engine::Closed);
    if let Engine::Running(handle) = previous {
        handle.close().await;
    }
    tracing::info!(session = %session.info.id, "session closed");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_checked_with_messages_that_say_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("notes.txt");
        std::fs::write(&file, "x").unwrap();
        let ok = check_folder(dir.path().to_str().unwrap()).unwrap();
        assert_eq!(ok, std::fs::canonicalize(dir.path()).unwrap());
        let Err(IpcError::NotAFolder(m)) = check_folder(file.to_str().unwrap()) else {
            panic!("a file is not a folder")
        };
        assert!(m.contains("is a file") && m.contains("folder"), "{m}");
        let gone = dir.path().join("gone");
        let Err(IpcError::FolderMissing(m)) = check_folder(gone.to_str().unwrap()) else {
            panic!("a missing folder")
        };
        assert!(m.contains("does not exist"), "{m}");
        assert!(matches!(check_folder("  "), Err(IpcError::InvalidInput(_))));
    }
}
