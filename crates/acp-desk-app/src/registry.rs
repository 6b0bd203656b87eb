//! The open sessions: each an engine session, the hub its views attach to, and the pump that
//! hands its events to the hub, the observers and the tap.
//!
//! Opening returns at once: the agent starts on a task of its own, and its progress
//! (`session-status starting`, then `ready` or the error) reaches views and observers like any
//! other event. Calls that need the agent before it is ready get
//! [`AppError::SessionStarting`]; [`Registry::started`] waits for it instead.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use acp_desk_core::agents::{self, LaunchSpec};
use acp_desk_core::events::PermissionResolution;
use acp_desk_core::hub::{FrameSink, Hub, SharedHub};
use acp_desk_core::mcp::McpServerConfig;
use acp_desk_core::schema::v1 as acp;
use acp_desk_core::{EventBatch, Opening, SessionHandle, SessionOptions, StreamEvent, TurnOutcome};
use acp_desk_store::{LaunchOrigin, StoredLaunch};
use tokio::runtime::Handle;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use crate::error::AppError;
use crate::observer::Observer;
use crate::pump::{Pump, StartReport, lock_hub};

/// How many event batches the engine may queue for the pump. The pump takes them at once, so
/// this only absorbs scheduling hiccups; the hub bounds the rest by merging.
pub const ENGINE_QUEUE: usize = 64;

/// The same with a tap: the pump then waits for the tap, so what the engine may run ahead of
/// the tap's reader is this plus the tap's own capacity; keep it to a batch or two.
pub const TAPPED_ENGINE_QUEUE: usize = 2;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these locks leaves plain data that is still consistent.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One open session, as front ends and observers name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// The registry's id for the session (`s1`, `s2`, ...), unique in this registry. The
    /// engine's events carry the engine's own id.
    pub id: String,
    /// The session's folder, canonical: what paths from front ends must lie inside.
    pub folder: PathBuf,
    /// The agent's name as the user chose it (`demo`, a settings name, a command).
    pub agent: String,
    /// How the agent was started, without secrets (environment variable names only,
    /// secret-looking arguments redacted): what the history keeps to start it again.
    pub launch: StoredLaunch,
}

#[cfg(test)]
impl SessionInfo {
    /// A session of the demo agent in `folder`, for the app's unit tests.
    pub(crate) fn demo(id: &str, folder: &str) -> Self {
        SessionInfo {
            id: id.into(),
            folder: PathBuf::from(folder),
            agent: "demo".into(),
            launch: StoredLaunch {
                origin: LaunchOrigin::Named,
                program: "acp-desk-demo-agent".into(),
                args: Vec::new(),
                args_redacted: false,
                env_names: Vec::new(),
            },
        }
    }
}

/// What to open: the agent, how to run the session, and who else reads its events.
pub struct OpenRequest {
    /// The agent's name as the user chose it; kept in [`SessionInfo::agent`].
    pub agent: String,
    pub spec: LaunchSpec,
    /// The engine's options. `options.cwd` is the session's folder, canonical (see
    /// [`check_folder`]).
    pub options: SessionOptions,
    /// Views may attach: a hub keeps the compacted thread for them. Off for a headless front
    /// end that reads the tap: no copy of the thread is then kept, and [`Registry::attach`] and
    /// [`Registry::snapshot`] refuse.
    pub views: bool,
    /// A primary consumer with backpressure (the CLI's printer): gets every batch exactly as the
    /// engine emitted it, in order, and the pump waits while it is full, so a slow reader slows
    /// the agent instead of growing memory. Closed when the engine is done. The app's own
    /// start-failure events (see [`Observer`]) are not on it: the opener hears of that failure
    /// from [`Registry::started`].
    pub tap: Option<mpsc::Sender<EventBatch>>,
    /// How the user chose the agent: by name (the default) or as a command line, which says how
    /// the history starts it again ([`SessionInfo::launch`]).
    pub origin: LaunchOrigin,
    /// The agent's AIP-44 manifest ([`OpenRequest::with_manifest`]): its
    /// `metadata.aip44.mcp_servers` go to the session.
    pub manifest: Option<agents::manifest::Manifest>,
    /// A project's own MCP servers the user agreed to (`.mcp.json` and the like, from the
    /// project's approvals): the most specific source, over the manifest's and the settings'.
    pub project_mcp: Vec<McpServerConfig>,
}

impl OpenRequest {
    /// A session in `folder` (canonical) with the engine's default options, views and no tap.
    pub fn new(folder: PathBuf, agent: impl Into<String>, spec: LaunchSpec) -> Self {
        Self {
            agent: agent.into(),
            spec,
            options: SessionOptions::new(folder),
            views: true,
            tap: None,
            origin: LaunchOrigin::Named,
            manifest: None,
            project_mcp: Vec::new(),
        }
    }

    /// For a session of an agent described by an AIP-44 manifest: the manifest's `audit`
    /// (`kind: off`: no audit log; `ref`: its folder), ARCHITECTURE.md invariant 33. `None`: as
    /// is. Call it before a front end's own switches (`--no-audit` wins).
    pub fn with_manifest(mut self, manifest: Option<&agents::manifest::Manifest>) -> Self {
        if let Some(m) = manifest {
            m.apply_audit(&mut self.options);
        }
        self.manifest = manifest.cloned();
        self
    }
}

/// What a session's MCP servers are chosen from ([`acp_desk_core::mcp::servers_for`]) each
/// time its agent starts (open, reconnect), so a reconnect takes the settings as they are
/// then; the secrets are read by the engine at every start.
#[derive(Clone, Default)]
pub(crate) struct McpInputs {
    /// The agent's id (what `mcp_servers.NAME.agents` names).
    pub(crate) agent: String,
    pub(crate) manifest: Option<agents::manifest::Manifest>,
    pub(crate) project: Vec<McpServerConfig>,
}

impl McpInputs {
    /// The servers for this start: the options' own when the opener set them, else from the
    /// settings file (read here: blocking), the manifest and the project's.
    fn servers(&self, options: &SessionOptions) -> Vec<McpServerConfig> {
        if !options.mcp_servers.is_empty() || options.opening == Opening::ListOnly {
            return options.mcp_servers.clone();
        }
        let loaded = acp_desk_core::settings::load();
        acp_desk_core::mcp::servers_for(
            &loaded.settings,
            &self.agent,
            self.manifest.as_ref(),
            &self.project,
        )
    }
}

enum Engine {
    Starting,
    Running(SessionHandle),
    Failed(AppError),
    Closed,
}

pub(crate) struct Session {
    pub(crate) info: SessionInfo,
    pub(crate) hub: Option<SharedHub>,
    engine: watch::Sender<Engine>,
    /// Set by the pump once the engine is done and every event was handed on.
    pub(crate) ended: watch::Receiver<bool>,
    /// Tells the pump the session left the registry; taken by whoever removes it.
    pub(crate) removed: Mutex<Option<oneshot::Sender<()>>>,
    pub(crate) pump: Mutex<Option<JoinHandle<()>>>,
    /// How its agent was started, to start it again (`Registry::reconnect`): the spec and the
    /// options as the opener gave them.
    pub(crate) relaunch: (LaunchSpec, SessionOptions),
    /// What its MCP servers are chosen from, at each start.
    pub(crate) mcp: McpInputs,
    /// The pump's queue, for the app's own events in the thread (a sign-in's notice); weak, so
    /// the queue still closes when the engine is done.
    pub(crate) events: mpsc::WeakSender<EventBatch>,
    /// The engine's id for the session (its events and checkpoints carry it), once it started.
    pub(crate) engine_id: Mutex<Option<String>>,
}

impl Session {
    pub(crate) fn handle(&self) -> Result<SessionHandle, AppError> {
        match &*self.engine.borrow() {
            Engine::Running(h) => Ok(h.clone()),
            Engine::Starting => Err(AppError::SessionStarting(
                "the agent is still starting; try again in a moment".into(),
            )),
            Engine::Failed(e) => Err(e.clone()),
            Engine::Closed => Err(AppError::SessionEnded("the session was closed".into())),
        }
    }

    /// Drops a start under way, which ends its agent (the start task returns; its pump then
    /// ends): a sign-in that waits on the user may be replaced by another. `false`: no start
    /// was under way.
    pub(crate) fn abort_start(&self) -> bool {
        self.engine.send_if_modified(|e| {
            if matches!(e, Engine::Starting) {
                *e = Engine::Closed;
                true
            } else {
                false
            }
        })
    }

    /// Waits until the agent is ready (its handle) or its start failed (why).
    pub(crate) async fn wait_started(&self) -> Result<SessionHandle, AppError> {
        let mut engine = self.engine.subscribe();
        // The sender lives in `self`: the wait ends with the state's change.
        let _ = engine.wait_for(|e| !matches!(e, Engine::Starting)).await;
        self.handle()
    }

    pub(crate) fn hub(&self) -> Result<&SharedHub, AppError> {
        self.hub.as_ref().ok_or_else(|| {
            AppError::Internal(format!(
                "the session `{}` was opened without views",
                self.info.id
            ))
        })
    }
}

/// The open sessions of one front end (the app's window, a CLI run).
///
/// Each session has a pump on `runtime` that drains the engine's events at once into its hub
/// (views attach there and never make the engine wait), its observers and its tap.
pub struct Registry {
    pub(crate) runtime: Handle,
    pub(crate) open: Mutex<BTreeMap<String, Arc<Session>>>,
    counter: AtomicU64,
    observers: Mutex<Vec<Arc<dyn Observer>>>,
    /// Prompts kept until their session's agent is signed in (`crate::sign_in`), by id.
    pub(crate) kept: crate::sign_in::KeptPrompts,
    /// Where sessions opened without their own checkpoint options take checkpoints
    /// ([`Registry::take_checkpoints`]); `None`: they take none.
    pub(crate) checkpoints: Mutex<Option<std::path::PathBuf>>,
    /// Stored sessions the front end shows without an agent (restored at start), by their
    /// history id: their folder, so that their checkpoints can be reviewed and undone
    /// ([`Registry::know_stored`]).
    pub(crate) stored: Mutex<BTreeMap<String, PathBuf>>,
}

/// Resolves an agent name over every source (settings, manifests, registry, built-in) to how
/// to start it. Blocking.
pub fn resolve_agent(agent: &str) -> Result<LaunchSpec, AppError> {
    resolve_agent_full(agent).map(|r| r.spec)
}

/// [`resolve_agent`], with where it came from and its manifest (whose `audit` the session's
/// options take: [`OpenRequest::with_manifest`]). Blocking.
pub fn resolve_agent_full(agent: &str) -> Result<agents::Resolved, AppError> {
    agents::resolve_in(&agents::Sources::default_for_user(), agent).map_err(|e| match e {
        agents::AgentError::Unknown(..) => AppError::AgentUnknown(e.to_string()),
        _ => AppError::AgentUnavailable(e.to_string()),
    })
}

/// Checks a folder the user gave us (dialog, command line, drop: all come here) and returns it
/// canonical. Reads the disk: call it off the async threads.
pub fn check_folder(path: &str) -> Result<PathBuf, AppError> {
    let raw = Path::new(path);
    if path.trim().is_empty() {
        return Err(AppError::InvalidInput(
            "no folder was given: open one with File → Open Folder".into(),
        ));
    }
    let meta = match std::fs::metadata(raw) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(AppError::FolderMissing(format!(
                "{path} does not exist (was it moved or deleted?). Open another folder."
            )));
        }
        Err(e) => {
            return Err(AppError::FolderUnreadable(format!(
                "{path} cannot be opened: {e}. Check its permissions, or open another folder."
            )));
        }
    };
    if !meta.is_dir() {
        return Err(AppError::NotAFolder(format!(
            "{path} is a file, not a folder. Drop or open the project's folder instead."
        )));
    }
    if let Err(e) = std::fs::read_dir(raw) {
        return Err(AppError::FolderUnreadable(format!(
            "{path} cannot be read: {e}. Check its permissions, or open another folder."
        )));
    }
    std::fs::canonicalize(raw).map_err(|e| {
        AppError::FolderUnreadable(format!(
            "{path} cannot be resolved: {e}. Open another folder."
        ))
    })
}

impl Registry {
    /// An empty registry whose sessions' tasks run on `runtime` (the shell passes Tauri's
    /// tokio runtime, the CLI its own).
    pub fn new(runtime: Handle) -> Self {
        Self {
            runtime,
            open: Mutex::new(BTreeMap::new()),
            counter: AtomicU64::new(0),
            observers: Mutex::new(Vec::new()),
            kept: Default::default(),
            checkpoints: Mutex::new(None),
            stored: Mutex::new(BTreeMap::new()),
        }
    }

    /// Adds an observer for every session opened from now on (each observer sees a session
    /// whole, from `Opened` to `Closed`, or not at all).
    pub fn add_observer(&self, observer: Arc<dyn Observer>) {
        lock(&self.observers).push(observer);
    }

    pub(crate) fn get(&self, id: &str) -> Result<Arc<Session>, AppError> {
        lock(&self.open).get(id).cloned().ok_or_else(|| {
            AppError::SessionUnknown(format!(
                "no open session has the id `{id}` (it may have been closed)"
            ))
        })
    }

    /// Opens a session; its agent starts in the background. Nothing is checked here: the
    /// folder comes from [`check_folder`] (or the front end's own checks), the agent from
    /// [`resolve_agent`].
    pub fn open(&self, request: OpenRequest) -> SessionInfo {
        let OpenRequest {
            agent,
            spec,
            options,
            views,
            tap,
            origin,
            manifest,
            project_mcp,
        } = request;
        let mcp = McpInputs {
            agent: agent.clone(),
            manifest,
            project: project_mcp,
        };
        let id = format!("s{}", self.counter.fetch_add(1, Ordering::Relaxed) + 1);
        let info = SessionInfo {
            id: id.clone(),
            folder: options.cwd.clone(),
            agent,
            launch: StoredLaunch::from_spec(&spec, origin),
        };
        let hub = views.then(|| Arc::new(Mutex::new(Hub::new())));
        self.launch(info.clone(), hub, spec, options, mcp, tap);
        tracing::info!(session = %info.id, folder = %info.folder.display(), agent = %info.agent, "session opened");
        info
    }

    /// Puts the session `info` in the registry (replacing one of the same id) and starts its
    /// pump and its agent: [`Registry::open`]'s work, and a reconnect's with the same hub.
    pub(crate) fn launch(
        &self,
        info: SessionInfo,
        hub: Option<SharedHub>,
        spec: LaunchSpec,
        options: SessionOptions,
        mcp: McpInputs,
        tap: Option<mpsc::Sender<EventBatch>>,
    ) {
        let id = info.id.clone();
        let mut options = options;
        if options.checkpoints.is_none() {
            options.checkpoints = self.checkpoint_options();
        }
        let (ended_tx, ended) = watch::channel(false);
        let (removed, removed_rx) = oneshot::channel();
        let queue = if tap.is_some() {
            TAPPED_ENGINE_QUEUE
        } else {
            ENGINE_QUEUE
        };
        let (events, events_rx) = mpsc::channel(queue);
        // `authenticate` is for this start only: a later reconnect does not sign in again.
        let relaunch = SessionOptions {
            authenticate: None,
            ..options.clone()
        };
        let session = Arc::new(Session {
            info: info.clone(),
            hub: hub.clone(),
            engine: watch::channel(Engine::Starting).0,
            ended,
            removed: Mutex::new(Some(removed)),
            pump: Mutex::new(None),
            relaunch: (spec.clone(), relaunch),
            mcp: mcp.clone(),
            events: events.downgrade(),
            engine_id: Mutex::new(None),
        });
        let (report, report_rx) = oneshot::channel();
        let observers = lock(&self.observers).clone();
        options
            .unwatched
            .extend(observers.iter().flat_map(|o| o.own_files()));
        let pump = Pump {
            info: info.clone(),
            hub,
            observers,
            tap,
            ended: ended_tx,
        };
        *lock(&session.pump) = Some(
            self.runtime
                .spawn(pump.run(events_rx, report_rx, removed_rx)),
        );
        lock(&self.open).insert(id, session.clone());
        self.runtime
            .spawn(start(session, spec, options, mcp, events, report));
    }

    /// Waits until the session's agent is ready and returns its handle, or why it did not
    /// start. Calls on the handle are the registry's calls (the registry only looks the handle
    /// up); the session's events reach everyone through its pump either way.
    pub async fn started(&self, id: &str) -> Result<SessionHandle, AppError> {
        self.get(id)?.wait_started().await
    }

    /// Waits until the session's engine has ended (the agent died, failed to start, or the
    /// session was closed) and each of its events reached the views, the observers and the tap.
    pub async fn wait_ended(&self, id: &str) -> Result<(), AppError> {
        let mut ended = self.get(id)?.ended.clone();
        // An error means the pump is gone, which also means it is done.
        let _ = ended.wait_for(|done| *done).await;
        Ok(())
    }

    /// The session's engine handle, once its agent runs.
    pub fn handle(&self, id: &str) -> Result<SessionHandle, AppError> {
        self.get(id)?.handle()
    }

    /// Attaches a view: it gets the thread so far, then live frames, nothing missed or doubled.
    pub fn attach(&self, id: &str, view: Box<dyn FrameSink>) -> Result<(), AppError> {
        let session = self.get(id)?;
        lock_hub(session.hub()?).attach(view);
        Ok(())
    }

    /// Runs one turn; returns when it ends. The turn's events reach everyone through the pump.
    pub async fn prompt(
        &self,
        id: &str,
        blocks: Vec<acp::ContentBlock>,
    ) -> Result<TurnOutcome, AppError> {
        if blocks.is_empty() {
            return Err(AppError::InvalidInput("the prompt is empty".into()));
        }
        let handle = self.handle(id)?;
        // A new prompt replaces one kept for after a sign-in.
        self.kept.forget(id);
        Ok(handle.prompt(blocks).await?)
    }

    /// `session/set_mode`; the change also arrives as a `current-mode` event.
    pub async fn set_mode(&self, id: &str, mode_id: &str) -> Result<(), AppError> {
        if mode_id.trim().is_empty() {
            return Err(AppError::InvalidInput("no mode was given".into()));
        }
        let handle = self.handle(id)?;
        Ok(handle.set_mode(mode_id).await?)
    }

    /// `session/set_config_option`; the agent's options also arrive as a `config-options` event.
    pub async fn set_config_option(
        &self,
        id: &str,
        config_id: &str,
        value: impl Into<acp::SessionConfigOptionValue>,
    ) -> Result<(), AppError> {
        if config_id.trim().is_empty() {
            return Err(AppError::InvalidInput("no config option was given".into()));
        }
        let handle = self.handle(id)?;
        Ok(handle.set_config_option(config_id, value).await?)
    }

    /// Stops the running turn: it ends `cancelled`. A no-op between turns.
    pub fn cancel(&self, id: &str) -> Result<(), AppError> {
        Ok(self.handle(id)?.cancel()?)
    }

    /// Answers a parked permission request (`agent-prompt`).
    pub async fn respond(
        &self,
        id: &str,
        request_id: &str,
        resolution: PermissionResolution,
    ) -> Result<(), AppError> {
        let handle = self.handle(id)?;
        Ok(handle.respond_permission(request_id, resolution).await?)
    }

    /// Answers the agent's question `request_id` (an `elicitation`).
    pub async fn answer_elicitation(
        &self,
        id: &str,
        request_id: &str,
        answer: acp_desk_core::elicitation::ElicitationAnswer,
    ) -> Result<(), AppError> {
        let handle = self.handle(id)?;
        Ok(handle.answer_elicitation(request_id, answer).await?)
    }

    /// Stops one of the agent's background tasks.
    pub async fn stop_background_task(&self, id: &str, task_id: &str) -> Result<(), AppError> {
        let handle = self.handle(id)?;
        Ok(handle.stop_background_task(task_id).await?)
    }

    /// Closes a session: its agent is asked to end, then made to (a start under way is
    /// dropped, which ends the agent). Returns once the engine has ended and the observers have
    /// heard `Closed`.
    pub async fn close(&self, id: &str) -> Result<(), AppError> {
        let session = self.remove(id)?;
        end(&session, false).await;
        Ok(())
    }

    /// [`Registry::close`] without the grace: the agent's whole tree is killed at once.
    pub async fn close_now(&self, id: &str) -> Result<(), AppError> {
        let session = self.remove(id)?;
        end(&session, true).await;
        Ok(())
    }

    fn remove(&self, id: &str) -> Result<Arc<Session>, AppError> {
        self.kept.forget(id);
        lock(&self.open)
            .remove(id)
            .ok_or_else(|| AppError::SessionUnknown(format!("no open session has the id `{id}`")))
    }

    /// Closes every session (the window is closing, the app quits, a page reloads), in
    /// parallel: each may take the full grace of a deaf agent.
    pub async fn close_all(&self) {
        let all = std::mem::take(&mut *lock(&self.open));
        for id in all.keys() {
            self.kept.forget(id);
        }
        let mut closing = tokio::task::JoinSet::new();
        for session in all.into_values() {
            closing.spawn_on(async move { end(&session, false).await }, &self.runtime);
        }
        while let Some(done) = closing.join_next().await {
            if let Err(e) = done {
                tracing::warn!("closing a session failed: {e}");
            }
        }
    }

    /// The open sessions, in the order they were opened.
    pub fn list(&self) -> Vec<SessionInfo> {
        let open = lock(&self.open);
        let mut all: Vec<_> = open.values().map(|s| s.info.clone()).collect();
        // Ids are `s<n>`: sort by n, not as text (s10 after s9).
        all.sort_by_key(|i| i.id[1..].parse::<u64>().unwrap_or(u64::MAX));
        all
    }

    pub fn len(&self) -> usize {
        lock(&self.open).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The thread so far of a session (compacted), for tests and diagnostics.
    pub fn snapshot(&self, id: &str) -> Result<Vec<StreamEvent>, AppError> {
        let session = self.get(id)?;
        Ok(lock_hub(session.hub()?).snapshot())
    }

    /// The agent's process id (its supervisor's on Linux), once it runs.
    pub fn pid(&self, id: &str) -> Result<u32, AppError> {
        self.handle(id)?
            .pid()
            .ok_or_else(|| AppError::SessionEnded("the agent has no process".into()))
    }

    pub fn info(&self, id: &str) -> Result<SessionInfo, AppError> {
        Ok(self.get(id)?.info.clone())
    }

    /// How the session's agent is (re)started: the spec as the opener gave it, secrets still
    /// refs. A terminal login runs the agent's launch with the method's args (`auth::login_spec`).
    pub fn launch_spec(&self, id: &str) -> Result<LaunchSpec, AppError> {
        Ok(self.get(id)?.relaunch.0.clone())
    }
}

/// Starts the engine session and records how that went; dropped (with the start under way)
/// when the session is closed first.
async fn start(
    session: Arc<Session>,
    spec: LaunchSpec,
    options: SessionOptions,
    mcp: McpInputs,
    events: mpsc::Sender<EventBatch>,
    report: oneshot::Sender<StartReport>,
) {
    let mut options = options;
    // The settings file is read at each start (a reconnect takes it as it is then).
    let chosen = tokio::task::spawn_blocking({
        let options = options.clone();
        move || mcp.servers(&options)
    })
    .await;
    match chosen {
        Ok(servers) => options.mcp_servers = servers,
        Err(e) => tracing::warn!(session = %session.info.id, "MCP servers not chosen: {e}"),
    }
    let mut state = session.engine.subscribe();
    let closed = async move {
        let _ = state.wait_for(|e| matches!(e, Engine::Closed)).await;
    };
    // Dropping a start under way ends its agent: the engine's owner ends when the handle it
    // was to return is dropped, and before the owner runs there is no process.
    let started = tokio::select! {
        started = acp_desk_core::start(spec, options, events) => started,
        () = closed => return,
    };
    match started {
        Ok(handle) => {
            *lock(&session.engine_id) = Some(handle.id().to_owned());
            let mut handle = Some(handle);
            session.engine.send_if_modified(|e| {
                if let (Engine::Starting, Some(h)) = (&*e, handle.take()) {
                    *e = Engine::Running(h);
                    true
                } else {
                    false
                }
            });
            let _ = report.send(StartReport::Started);
            // Closed while the last step of the start ran: end the agent now.
            if let Some(h) = handle {
                h.close().await;
            }
        }
        Err(e) => {
            let err = AppError::from(e);
            // The first line only: the lines after it are the agent's error output, which is
            // logged at debug only (it may print a key).
            let said = err.to_string();
            let first = said.lines().next().unwrap_or_default();
            tracing::info!(session = %session.info.id, "the agent did not start: {first}");
            session.engine.send_if_modified(|e| {
                if matches!(e, Engine::Starting) {
                    *e = Engine::Failed(err.clone());
                    true
                } else {
                    false
                }
            });
            let _ = report.send(StartReport::Failed(err));
        }
    }
}

/// Ends a session taken out of the registry: its engine, then its pump.
async fn end(session: &Session, now: bool) {
    let previous = session.engine.send_replace(Engine::Closed);
    if let Engine::Running(handle) = previous {
        if now {
            handle.close_now().await;
        } else {
            handle.close().await;
        }
    }
    if let Some(removed) = lock(&session.removed).take() {
        let _ = removed.send(());
    }
    let pump = lock(&session.pump).take();
    if let Some(pump) = pump
        && let Err(e) = pump.await
    {
        tracing::warn!(session = %session.info.id, "the session's pump failed: {e}");
    }
    tracing::info!(session = %session.info.id, "session closed");
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn folders_are_checked_with_messages_that_say_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("notes.txt");
        std::fs::write(&file, "x").unwrap();
        let ok = check_folder(dir.path().to_str().unwrap()).unwrap();
        assert_eq!(ok, std::fs::canonicalize(dir.path()).unwrap());
        let Err(AppError::NotAFolder(m)) = check_folder(file.to_str().unwrap()) else {
            panic!("a file is not a folder")
        };
        assert!(m.contains("is a file") && m.contains("folder"), "{m}");
        let gone = dir.path().join("gone");
        let Err(AppError::FolderMissing(m)) = check_folder(gone.to_str().unwrap()) else {
            panic!("a missing folder")
        };
        assert!(m.contains("does not exist"), "{m}");
        assert!(matches!(check_folder("  "), Err(AppError::InvalidInput(_))));
    }

    #[tokio::test]
    async fn unknown_sessions_are_named_in_the_error() {
        let registry = Registry::new(Handle::current());
        let err = registry.cancel("s9").unwrap_err();
        assert!(
            matches!(&err, AppError::SessionUnknown(m) if m.contains("`s9`")),
            "{err:?}"
        );
        assert!(matches!(
            registry.close("s9").await,
            Err(AppError::SessionUnknown(_))
        ));
        assert!(registry.is_empty());
    }
}
