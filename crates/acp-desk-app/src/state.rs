//! The app's own state file: everything ACP Desk itself remembers between runs.
//!
//! The user's settings file is the user's (`acp_desk_core::settings` only reads it); what the
//! app writes goes here instead: switches changed in the window, first-time notices seen,
//! recent folders (with the agent last used in each), the agent chosen for new sessions, the sidebar, the theme and zoom, which
//! sessions were open, and what the user decided about projects' own MCP config files.
//! One JSON file, `state.json` in [`acp_desk_core::paths::data_dir`] (`ACP_DESK_DATA_DIR`
//! moves it, for tests and portable installs).
//!
//! # The file
//!
//! - `{"version": 1, ...}`. The version changes only for a change an older ACP Desk would
//!   misread; adding a field does not change it.
//! - **Unknown fields are kept**, at the top level and inside `sidebar` and each open session,
//!   and written back unchanged. The file is rewritten on every change, so an older ACP Desk
//!   run after a newer one (or next to it) would otherwise erase the newer one's state each
//!   time it saved; keeping them is what lets new fields come without a version change.
//! - A missing file is [`AppState::default`]. A file that is not valid JSON of this shape is
//!   renamed to `state.json.bad-<unix secs>` (kept for the user, never overwritten) and the
//!   state starts from the defaults; [`StateFile::open`] returns a [`StateWarning`] for the
//!   caller to show.
//! - A file we cannot read (permissions, IO error) or one from a newer format is left as it
//!   is: the state starts from the defaults, changes are kept in memory only, and the warning
//!   says so. Overwriting what we could not read could destroy it.
//! - Writes are atomic ([`acp_desk_core::atomic_file::write_atomic`]): a crash leaves the old
//!   file or the new one.
//! - Only the app writes this file (the CLI does not); two app instances at once each write
//!   their own state and the last write wins, which costs at most a recent folder.
//!
//! # Blocking
//!
//! [`StateFile::open`] and [`StateFile::update`] do file IO, including an fsync: call them on
//! the blocking pool (`tokio::task::spawn_blocking`) or a thread of your own, never on an async
//! worker. A `std::sync::Mutex<StateFile>` shared by those calls is enough: it is held for one
//! small write.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use acp_desk_core::atomic_file;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The state file's name in the data folder.
pub const STATE_FILE_NAME: &str = "state.json";

/// The format this build reads and writes; a file with a greater version is left untouched.
pub const FORMAT_VERSION: u32 = 1;

/// Recent folders kept, most recent first.
pub const MAX_RECENT_FOLDERS: usize = 20;

/// The zoom factors View → Zoom In / Zoom Out step through (1.0 is 100 %); a saved zoom is
/// kept within the first and the last.
pub const ZOOM_LEVELS: [f64; 11] = [0.5, 0.67, 0.75, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0];

/// Everything the app remembers. `AppState::default()` is a first run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AppState {
    /// On/off switches the user changed in the window, by the switch's id. A switch that is
    /// not here has its built-in default (which the code owning the switch knows).
    pub switches: BTreeMap<String, bool>,
    /// Ids of the first-time notices the user has seen (and should not see again).
    pub notices_seen: BTreeSet<String>,
    /// Folders sessions were opened in, most recent first, without duplicates, at most
    /// [`MAX_RECENT_FOLDERS`] (kept so by every [`StateFile::update`]; use
    /// [`AppState::add_recent_folder`]).
    pub recent_folders: Vec<PathBuf>,
    /// The agent last used in each recent folder (its launch name), by folder: what File →
    /// Open Recent opens it with. A map beside `recent_folders` rather than a new shape of its
    /// entries, so that the file still reads in an older ACP Desk (which keeps this field as
    /// it is). Only folders in `recent_folders` (kept so by every [`StateFile::update`]); a
    /// folder without an entry (an agent given as a command line, a file from before this
    /// field) opens with the agent for new sessions.
    pub recent_agents: BTreeMap<PathBuf, String>,
    /// The agent last chosen for new sessions (its launch name); `None`: the listing's default.
    pub new_session_agent: Option<String>,
    pub sidebar: Sidebar,
    /// The sessions open when the app last saved, in sidebar order: the window restores them
    /// at its next start (set with [`AppState::set_open_sessions`]).
    pub open_sessions: Vec<OpenSession>,
    /// Which of [`AppState::open_sessions`] was shown (its index); `None`: none was, or a file
    /// from before this field. Kept within the list by every [`StateFile::update`].
    pub shown_session: Option<usize>,
    /// The window's colours (View → Theme). Default: the system's.
    pub theme: Theme,
    /// The webview's zoom factor (View → Zoom), 1.0 = 100 %, within [`ZOOM_LEVELS`]' range
    /// (kept so by every [`StateFile::update`]). Default 1.0.
    pub zoom: f64,
    /// Decisions on projects' own MCP config files (`.mcp.json`, ...), by folder (canonical),
    /// then file name: the digest agreed to and use/ignore ([`crate::project_mcp`]). Default:
    /// none, so every such file is offered before it is used.
    pub project_mcp: crate::project_mcp::Approvals,
    /// Fields of a newer ACP Desk, written back as they were (see the module docs).
    #[serde(flatten)]
    unknown: Map<String, Value>,
}

impl Default for AppState {
    fn default() -> Self {
        AppState {
            switches: BTreeMap::new(),
            notices_seen: BTreeSet::new(),
            recent_folders: Vec::new(),
            recent_agents: BTreeMap::new(),
            new_session_agent: None,
            sidebar: Sidebar::default(),
            open_sessions: Vec::new(),
            shown_session: None,
            theme: Theme::System,
            zoom: 1.0,
            project_mcp: BTreeMap::new(),
            unknown: Map::new(),
        }
    }
}

/// The window's colours. A value this build does not know (a newer ACP Desk's) reads as
/// `system`, rather than making the whole file unreadable.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Theme {
    Light,
    Dark,
    /// Follow the OS (`prefers-color-scheme`). Last: serde's catch-all must be.
    #[default]
    #[serde(other)]
    System,
}

/// A step of View → Zoom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoomStep {
    In,
    Out,
    /// Back to 100 %.
    Reset,
}

/// The sidebar as the user left it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Sidebar {
    /// Default: shown.
    pub shown: bool,
    /// Width in CSS pixels; `None`: the window's default. The window clamps it to what fits.
    pub width: Option<u32>,
    #[serde(flatten)]
    unknown: Map<String, Value>,
}

impl Default for Sidebar {
    fn default() -> Self {
        Sidebar {
            shown: true,
            width: None,
            unknown: Map::new(),
        }
    }
}

/// One session that was open: where, and with which agent.
///
/// Which sessions were open is the window's state, so it lives here rather than in the history
/// store: the store is shared with the CLI, whose sessions are never open in a window, and the
/// sidebar's order is the window's. The session's transcript and draft are in the store, under
/// [`OpenSession::session_id`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenSession {
    pub folder: PathBuf,
    /// The agent's launch name.
    pub agent: String,
    /// The id the history store keeps the session under (ACP Desk's session id); absent for a
    /// session that was never recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(flatten)]
    unknown: Map<String, Value>,
}

impl OpenSession {
    pub fn new(folder: impl Into<PathBuf>, agent: impl Into<String>) -> Self {
        OpenSession {
            folder: folder.into(),
            agent: agent.into(),
            session_id: None,
            unknown: Map::new(),
        }
    }

    /// The same, recorded in the history under `id`.
    pub fn with_session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }
}

impl AppState {
    /// Puts `folder` first in the recent folders (moving it there if it was already listed)
    /// and drops the oldest past [`MAX_RECENT_FOLDERS`]. Folders are compared as given:
    /// callers pass canonical paths.
    pub fn add_recent_folder(&mut self, folder: impl Into<PathBuf>) {
        self.recent_folders.insert(0, folder.into());
        self.normalize();
    }

    /// [`AppState::add_recent_folder`], remembering the agent used there: `Some` (a launch
    /// name) replaces the folder's agent, `None` (a session whose agent was a command line,
    /// which may hold secrets and is never kept here) forgets it.
    pub fn add_recent(&mut self, folder: impl Into<PathBuf>, agent: Option<String>) {
        let folder = folder.into();
        match agent {
            Some(agent) => self.recent_agents.insert(folder.clone(), agent),
            None => self.recent_agents.remove(&folder),
        };
        self.add_recent_folder(folder);
    }

    /// The recent folders, most recent first, each with the agent last used there.
    pub fn recent(&self) -> Vec<(&Path, Option<&str>)> {
        self.recent_folders
            .iter()
            .map(|f| (f.as_path(), self.recent_agents.get(f).map(String::as_str)))
            .collect()
    }

    /// File → Open Recent → Clear Recent.
    pub fn clear_recent(&mut self) {
        self.recent_folders.clear();
        self.recent_agents.clear();
    }

    /// The window's sessions, in sidebar order, and the one shown (an index into them). An
    /// entry with the same history id as one already kept keeps that one's unknown fields (a
    /// newer ACP Desk's), so rewriting the list on every change loses nothing of theirs.
    pub fn set_open_sessions(&mut self, sessions: Vec<OpenSession>, shown: Option<usize>) {
        let mut sessions = sessions;
        for s in &mut sessions {
            let Some(id) = &s.session_id else { continue };
            if let Some(old) = self
                .open_sessions
                .iter()
                .find(|o| o.session_id.as_ref() == Some(id))
            {
                for (k, v) in &old.unknown {
                    s.unknown.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        }
        self.open_sessions = sessions;
        self.shown_session = shown;
        self.normalize();
    }

    /// The shown session, if [`AppState::shown_session`] names one.
    pub fn shown(&self) -> Option<&OpenSession> {
        self.shown_session.and_then(|i| self.open_sessions.get(i))
    }

    /// The user's value for switch `id`, if they changed it.
    pub fn switch(&self, id: &str) -> Option<bool> {
        self.switches.get(id).copied()
    }

    pub fn notice_seen(&self, id: &str) -> bool {
        self.notices_seen.contains(id)
    }

    /// Notes that notice `id` was shown. Returns whether it was new.
    pub fn mark_notice_seen(&mut self, id: impl Into<String>) -> bool {
        self.notices_seen.insert(id.into())
    }

    /// Zooms one step: to the next of [`ZOOM_LEVELS`] above or below the current factor (a
    /// factor between two levels goes to the nearer one in that direction), or back to 1.0.
    /// Returns the new factor.
    pub fn zoom_step(&mut self, step: ZoomStep) -> f64 {
        const EPSILON: f64 = 1e-6;
        let (min, max) = (ZOOM_LEVELS[0], ZOOM_LEVELS[ZOOM_LEVELS.len() - 1]);
        self.zoom = match step {
            ZoomStep::Reset => 1.0,
            ZoomStep::In => ZOOM_LEVELS
                .into_iter()
                .find(|z| *z > self.zoom + EPSILON)
                .unwrap_or(max),
            ZoomStep::Out => ZOOM_LEVELS
                .into_iter()
                .rev()
                .find(|z| *z < self.zoom - EPSILON)
                .unwrap_or(min),
        };
        self.normalize();
        self.zoom
    }

    /// Keeps the invariants the fields document, whatever a caller or a hand-edited file did:
    /// recent folders without duplicates (the first, most recent, one kept), capped; the zoom
    /// within [`ZOOM_LEVELS`]' range; the shown session one of the open ones.
    fn normalize(&mut self) {
        if self
            .shown_session
            .is_some_and(|i| i >= self.open_sessions.len())
        {
            self.shown_session = None;
        }
        let mut seen = BTreeSet::new();
        self.recent_folders.retain(|f| seen.insert(f.clone()));
        self.recent_folders.truncate(MAX_RECENT_FOLDERS);
        let recent: BTreeSet<&PathBuf> = self.recent_folders.iter().collect();
        self.recent_agents.retain(|f, _| recent.contains(f));
        let (min, max) = (ZOOM_LEVELS[0], ZOOM_LEVELS[ZOOM_LEVELS.len() - 1]);
        self.zoom = if self.zoom.is_finite() {
            self.zoom.clamp(min, max)
        } else {
            1.0
        };
    }

    /// What goes to disk: JSON strings cannot hold a path that is not UTF-8 (possible on
    /// unix), and one such path must not make every save fail, so those entries stay in memory
    /// only.
    fn storable(&self) -> AppState {
        let mut s = self.clone();
        let utf8 = |p: &Path| p.to_str().is_some();
        s.recent_folders.retain(|f| utf8(f));
        s.recent_agents.retain(|f, _| utf8(f));
        s.project_mcp.retain(|f, _| utf8(f));
        // The shown one keeps its place among those that are stored.
        let shown = s.shown_session.and_then(|i| {
            let kept = s.open_sessions.get(i).is_some_and(|o| utf8(&o.folder));
            kept.then(|| {
                s.open_sessions[..i]
                    .iter()
                    .filter(|o| utf8(&o.folder))
                    .count()
            })
        });
        s.open_sessions.retain(|o| utf8(&o.folder));
        s.shown_session = shown;
        s
    }
}

/// The file on disk: the version, then the state's fields.
#[derive(Serialize, Deserialize)]
struct FileFormat {
    version: u32,
    #[serde(flatten)]
    state: AppState,
}

/// Only the version, to refuse a newer file before reading its fields with our own shape.
#[derive(Deserialize)]
struct VersionOnly {
    version: u32,
}

/// The state could not be saved. The change is kept in memory, and the next successful
/// [`StateFile::update`] writes it.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("could not save the app state file {}: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
}

/// Shown to the user once: the state file was not used as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateWarning {
    /// The file could not be parsed; it was renamed to `moved_to` and the state starts from the
    /// defaults.
    SetAside { moved_to: PathBuf, reason: String },
    /// The file could not be read (or, corrupt, could not be set aside); it is left as it is
    /// and this run's changes are not saved.
    Unreadable { path: PathBuf, reason: String },
    /// The file was written by a newer ACP Desk; it is left as it is and this run's changes
    /// are not saved.
    NewerFormat { path: PathBuf, found: u32 },
}

impl fmt::Display for StateWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateWarning::SetAside { moved_to, reason } => write!(
                f,
                "the app state file could not be read ({reason}); it was kept as {} and ACP \
                 Desk starts with its default window state (recent folders, sidebar, notices)",
                moved_to.display()
            ),
            StateWarning::Unreadable { path, reason } => write!(
                f,
                "the app state file {} could not be read ({reason}); it was left as it is, and \
                 changes to the window state will not be saved until it is fixed",
                path.display()
            ),
            StateWarning::NewerFormat { path, found } => write!(
                f,
                "the app state file {} was written by a newer ACP Desk (format {found}); it was \
                 left as it is, and changes to the window state will not be saved",
                path.display()
            ),
        }
    }
}

/// The app's state, backed by its file. Blocking (see the module docs).
#[derive(Debug)]
pub struct StateFile {
    path: PathBuf,
    state: AppState,
    /// The file must be left as it is (unreadable, newer format): changes stay in memory.
    frozen: bool,
    /// The in-memory state has changes the file lacks (a write failed).
    unsaved: bool,
}

impl StateFile {
    /// `<data dir>/state.json`.
    pub fn default_path() -> PathBuf {
        acp_desk_core::paths::data_dir().join(STATE_FILE_NAME)
    }

    /// Opens [`StateFile::default_path`].
    pub fn open_default() -> (StateFile, Option<StateWarning>) {
        StateFile::open(StateFile::default_path())
    }

    /// Loads `path`. Never fails: whatever is wrong with the file, the app starts (from the
    /// defaults) and the warning says what happened to the file.
    pub fn open(path: impl Into<PathBuf>) -> (StateFile, Option<StateWarning>) {
        let path = path.into();
        let (state, frozen, warning) = load(&path);
        if let Some(w) = &warning {
            tracing::warn!(file = %path.display(), "{w}");
        }
        let file = StateFile {
            path,
            state,
            frozen,
            unsaved: false,
        };
        (file, warning)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Whether changes reach the file (false after an [`StateWarning::Unreadable`] or
    /// [`StateWarning::NewerFormat`] warning: they are kept in memory only).
    pub fn saves(&self) -> bool {
        !self.frozen
    }

    /// Applies `change` and saves, when it changed anything (or an earlier save failed).
    ///
    /// On an error the change stays applied in memory (the window keeps showing what the user
    /// did) and the next successful update writes it. When the file is left alone
    /// ([`StateFile::saves`] is false) the change is applied in memory and `Ok` is returned.
    pub fn update(&mut self, change: impl FnOnce(&mut AppState)) -> Result<(), StateError> {
        let before = self.state.clone();
        change(&mut self.state);
        self.state.normalize();
        if self.frozen || (self.state == before && !self.unsaved) {
            return Ok(());
        }
        match self.save() {
            Ok(()) => {
                self.unsaved = false;
                Ok(())
            }
            Err(e) => {
                self.unsaved = true;
                tracing::warn!("{e}");
                Err(e)
            }
        }
    }

    fn save(&self) -> Result<(), StateError> {
        let write_error = |source| StateError::Write {
            path: self.path.clone(),
            source,
        };
        let file = FileFormat {
            version: FORMAT_VERSION,
            state: self.state.storable(),
        };
        let mut bytes = serde_json::to_vec_pretty(&file).map_err(|e| write_error(e.into()))?;
        bytes.push(b'\n');
        atomic_file::write_atomic(&self.path, &bytes).map_err(write_error)
    }
}

/// The state in the file, whether the file must be left alone, and what to tell the user.
fn load(path: &Path) -> (AppState, bool, Option<StateWarning>) {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        // No file yet (a parent that is a file means no file too; saving will say why).
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            return (AppState::default(), false, None);
        }
        Err(e) => {
            let warning = StateWarning::Unreadable {
                path: path.to_owned(),
                reason: e.to_string(),
            };
            return (AppState::default(), true, Some(warning));
        }
    };
    // The version first: a newer file is left alone even if its fields would not parse as ours.
    if let Ok(VersionOnly { version }) = serde_json::from_slice(&bytes)
        && version > FORMAT_VERSION
    {
        let warning = StateWarning::NewerFormat {
            path: path.to_owned(),
            found: version,
        };
        return (AppState::default(), true, Some(warning));
    }
    match serde_json::from_slice::<FileFormat>(&bytes) {
        Ok(f) => {
            let mut state = f.state;
            state.normalize();
            (state, false, None)
        }
        Err(e) => match atomic_file::set_aside(path) {
            Ok(moved_to) => {
                let warning = StateWarning::SetAside {
                    moved_to,
                    reason: e.to_string(),
                };
                (AppState::default(), false, Some(warning))
            }
            Err(io) => {
                let warning = StateWarning::Unreadable {
                    path: path.to_owned(),
                    reason: format!("{e}; it could not be set aside either: {io}"),
                };
                (AppState::default(), true, Some(warning))
            }
        },
    }
}

#[cfg(test)]
mod tests;

mod recorder;
pub use recorder::StateRecorder;
