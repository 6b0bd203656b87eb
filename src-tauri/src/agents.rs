//! The Agents view's commands: the listing (every source, detected), Check, Install (a registry
//! binary, with its progress on a channel), the agent for new sessions (the app's state file),
//! and opening the files agents come from. The engine decides everything
//! (`acp_desk_core::agents`); this only runs it off the main thread and answers the window.
//!
//! - Detection and file reads block: every command runs them on the blocking pool, and the
//!   window's start never waits for them (`app_info` carries no listing; the UI asks for it
//!   once it is up, ARCHITECTURE rule 39).
//! - The webview names agents by id only: the files opened, the command copied and the agent
//!   installed are the listing's own, never a path or a command line the webview sent.
//! - The settings file is created only when there is none (`create_new`: never over a file),
//!   from a commented template, so that "Open settings file" always opens a file to write in;
//!   it is never rewritten (rule 22).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use acp_desk_core::agents::install::InstallProgress;
use acp_desk_core::agents::registry::RegistryInfo;
use acp_desk_core::agents::{
    self, AgentEntry, AgentListing, CheckLimits, CheckReport, ConfigProblem, Sources,
};
use schemars::JsonSchema;
use serde::Serialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_clipboard_manager::ClipboardExt;
use tauri_plugin_dialog::DialogExt;
use tauri_plugin_opener::OpenerExt;

use crate::AppState;
use crate::ipc::IpcError;

/// How long the listing waits for the state file's first read (the agent last chosen).
const STATE_WAIT: Duration = Duration::from_secs(5);

/// What a new settings file says (JSON with comments, as the settings reader takes it).
pub const SETTINGS_TEMPLATE: &str = r#"// ACP Desk's settings. JSON with comments and trailing commas; ACP Desk only reads this file.
// Agents: paste entries from Zed's `agent_servers` (command, args, env), in the order you want.
{
  // The agent new sessions use, unless you choose another in the window.
  // "default_agent": "my-agent",
  "agent_servers": {
    // "my-agent": { "command": "my-agent", "args": ["--acp"], "env": {} },
    // An env value may name a secret in the OS keychain (stored in the window's MCP servers &
    // secrets, or with `acp-desk-cli secret set NAME`): "env": { "API_KEY": { "secret": "my-key" } }
  },
  // MCP servers every agent's sessions get ("agents": [...] limits one to those agents).
  // A program: { "command": "/usr/bin/mcp-server", "args": [], "env": {} }; a URL: { "url":
  // "https://host/mcp", "headers": {}, "credential_ref": "NAME" } ("type": "sse" for SSE).
  "mcp_servers": {
  },
  // Closing the window keeps ACP Desk in the tray (when the desktop has one); false: it quits.
  // "close_to_tray": true,
}
"#;

/// What importing a registry file did.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistryImported {
    /// The registry now in use (the imported file).
    pub registry: RegistryInfo,
    /// Its entries that cannot be used (they are left out; the others are listed).
    pub problems: Vec<ConfigProblem>,
    pub listing: AgentListing,
}

/// The sources of the user's agents (settings, manifests, registry, data folder).
fn sources() -> Sources {
    Sources::default_for_user()
}

/// Where agents are looked up and checked from (relative commands, Check's working folder):
/// the home folder, not the process's folder, which is `/` for an app started from a menu.
pub(crate) fn here() -> PathBuf {
    directories::BaseDirs::new()
        .map(|b| b.home_dir().to_path_buf())
        .unwrap_or_else(std::env::temp_dir)
}

/// Check's limit for `initialize`: an agent run through npx or uvx may download itself first
/// (a cold npm cache takes well over the default), so it gets longer.
fn check_limits(id: &str) -> CheckLimits {
    let runner = agents::resolve_in(&sources(), id).is_ok_and(|r| {
        let program = std::path::Path::new(&r.spec.command)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned());
        matches!(program.as_deref(), Some("npx" | "uvx" | "bunx" | "pnpx"))
    });
    if runner {
        CheckLimits {
            initialize: std::time::Duration::from_secs(180),
        }
    } else {
        CheckLimits::default()
    }
}

/// The listing, with the agent for new sessions by the default rule: the one last chosen in
/// the window (the state file), else what the settings and detection say. Blocking.
pub fn listing_for_window(state: &AppState) -> AgentListing {
    let last = state
        .recorder
        .as_ref()
        .and_then(|r| r.state(STATE_WAIT))
        .and_then(|s| s.new_session_agent);
    with_default(agents::listing(&sources(), &here()), last.as_deref())
}

fn with_default(mut listing: AgentListing, last_chosen: Option<&str>) -> AgentListing {
    let (id, reason) = agents::default_for_new_sessions(&listing, last_chosen);
    listing.default_agent = id;
    listing.default_reason = reason;
    listing
}

fn entry<'l>(listing: &'l AgentListing, id: &str) -> Result<&'l AgentEntry, IpcError> {
    listing.agents.iter().find(|a| a.id == id).ok_or_else(|| {
        IpcError::AgentUnknown(format!(
            "there is no agent `{id}` (any more): open the Agents view again to see the current list"
        ))
    })
}

/// Runs `f` with the app's state on the blocking pool.
async fn blocking<R: Runtime, T: Send + 'static>(
    app: AppHandle<R>,
    what: &'static str,
    f: impl FnOnce(&AppHandle<R>, &AppState) -> Result<T, IpcError> + Send + 'static,
) -> Result<T, IpcError> {
    tauri::async_runtime::spawn_blocking(move || f(&app, &app.state::<AppState>()))
        .await
        .map_err(|e| IpcError::task_failed(what, &e))?
}

/// Every agent (built-in, registry, settings, manifests), found or not, with the problems of
/// the files they come from and the agent for new sessions.
#[tauri::command]
pub async fn agents_list<R: Runtime>(app: AppHandle<R>) -> Result<AgentListing, IpcError> {
    blocking(app, "list the agents", |_, s| Ok(listing_for_window(s))).await
}

/// Starts the agent, runs `initialize`, ends it: what it said, each step's time, or why it
/// failed and what to do. Nothing is left running.
#[tauri::command]
pub async fn agent_check(id: String) -> Result<CheckReport, IpcError> {
    // Resolving (on the blocking pool inside), Check, a built-in's install command as the fix,
    // a manifest's declared capabilities against the answer: all the engine's.
    let limits = {
        let id = id.clone();
        tauri::async_runtime::spawn_blocking(move || check_limits(&id))
            .await
            .unwrap_or_default()
    };
    agents::check_agent(&sources(), &id, &here(), limits)
        .await
        .map_err(|e| match e {
            agents::AgentError::Unknown(..) => IpcError::AgentUnknown(e.to_string()),
            _ => IpcError::AgentUnavailable(e.to_string()),
        })
}

/// Downloads a registry agent's binary for this computer into the data folder (checked
/// against its sha256, unpacked), reporting progress; the listing afterwards.
#[tauri::command]
pub async fn agent_install<R: Runtime>(
    app: AppHandle<R>,
    id: String,
    on_progress: Channel<InstallProgress>,
) -> Result<AgentListing, IpcError> {
    blocking(app, "install the agent", move |_, s| {
        install(&sources(), &id, &mut |p| {
            // A closed window is no reason to stop the install.
            let _ = on_progress.send(p);
        })?;
        Ok(listing_for_window(s))
    })
    .await
}

/// Installs registry agent `id` (blocking).
fn install(
    sources: &Sources,
    id: &str,
    progress: &mut dyn FnMut(InstallProgress),
) -> Result<(), IpcError> {
    let (index, _problems) = agents::registry::load(&sources.data_dir);
    let Some(agent) = index.find(id) else {
        return Err(IpcError::AgentUnknown(format!(
            "`{id}` is not in the ACP registry ACP Desk reads; only registry agents are installed with Install"
        )));
    };
    agents::install::install(
        agent,
        agents::registry::current_platform(),
        &sources.data_dir,
        progress,
    )
    .map_err(|e| IpcError::InvalidInput(e.to_string()))?;
    Ok(())
}

/// New sessions start with `id` from now on (and in the next run: the state file's
/// `new_session_agent`); the listing with it as the default.
#[tauri::command]
pub async fn agents_use_for_new_sessions<R: Runtime>(
    app: AppHandle<R>,
    id: String,
) -> Result<AgentListing, IpcError> {
    blocking(app, "choose the agent", move |_, s| {
        let listing = agents::listing(&sources(), &here());
        entry(&listing, &id)?;
        if let Some(r) = &s.recorder {
            let chosen = id.clone();
            r.update(move |state| state.new_session_agent = Some(chosen));
        }
        Ok(with_default(listing, Some(&id)))
    })
    .await
}

/// Creates the settings file from [`SETTINGS_TEMPLATE`] when there is none (never over one);
/// says whether it did. Blocking.
pub fn ensure_settings_file(file: &Path) -> Result<bool, IpcError> {
    if file.exists() {
        return Ok(false);
    }
    let failed = |e: std::io::Error| {
        IpcError::InvalidInput(format!(
            "could not create the settings file {}: {e}; create it yourself to add agents",
            file.display()
        ))
    };
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(file)
    {
        Ok(mut f) => {
            f.write_all(SETTINGS_TEMPLATE.as_bytes()).map_err(failed)?;
            Ok(true)
        }
        // Made meanwhile (by the user's editor, another window): theirs, left as it is.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(failed(e)),
    }
}

fn open_file<R: Runtime>(app: &AppHandle<R>, file: &Path, what: &str) -> Result<(), IpcError> {
    app.opener()
        .open_path(file.display().to_string(), None::<&str>)
        .map_err(|e| {
            IpcError::InvalidInput(format!(
                "could not open {what} {}: {e}; open it in your editor yourself",
                file.display()
            ))
        })
}

/// The settings file in the user's editor, made from a short template when there is none.
#[tauri::command]
pub async fn agents_open_settings<R: Runtime>(app: AppHandle<R>) -> Result<(), IpcError> {
    blocking(app, "open the settings file", |app, _| {
        let file = sources().settings_file;
        ensure_settings_file(&file)?;
        crate::files::check_openable(&file)?;
        open_file(app, &file, "the settings file")
    })
    .await
}

/// A manifest agent's ACP.md in the user's editor.
#[tauri::command]
pub async fn agents_open_manifest<R: Runtime>(
    app: AppHandle<R>,
    id: String,
) -> Result<(), IpcError> {
    blocking(app, "open the manifest", move |app, _| {
        let listing = agents::listing(&sources(), &here());
        let Some(file) = entry(&listing, &id)?.manifest_file.clone() else {
            return Err(IpcError::InvalidInput(format!(
                "`{id}` has no manifest (ACP.md): it comes from {}",
                listing.settings_file
            )));
        };
        let file = PathBuf::from(file);
        crate::files::check_openable(&file)?;
        open_file(app, &file, "the manifest")
    })
    .await
}

/// A registry file the user picks (the file dialog, from Rust) becomes the registry ACP Desk
/// reads (a copy in the data folder); the listing afterwards, or `None` when the user
/// cancelled. A file of another format is refused, naming what is wrong, and the registry in
/// use stays.
#[tauri::command]
pub async fn agents_import_registry<R: Runtime>(
    app: AppHandle<R>,
) -> Result<Option<RegistryImported>, IpcError> {
    blocking(app, "import the registry file", |app, s| {
        let chosen = app
            .dialog()
            .file()
            .set_title("Import an ACP registry file")
            .add_filter("ACP registry (JSON)", &["json"])
            .blocking_pick_file();
        let Some(chosen) = chosen else {
            return Ok(None);
        };
        let file = chosen
            .into_path()
            .map_err(|e| IpcError::InvalidInput(format!("the chosen file cannot be read: {e}")))?;
        let (index, problems) =
            agents::registry::import(&file, &sources().data_dir).map_err(|e| {
                IpcError::InvalidInput(format!(
                    "{e}; nothing was imported, the registry in use stays"
                ))
            })?;
        Ok(Some(RegistryImported {
            registry: index.info(),
            problems,
            listing: listing_for_window(s),
        }))
    })
    .await
}

/// Puts an agent's install command (as the listing gives it) on the clipboard.
#[tauri::command]
pub async fn agents_copy_install_command<R: Runtime>(
    app: AppHandle<R>,
    id: String,
) -> Result<(), IpcError> {
    blocking(app, "copy the install command", move |app, _| {
        let listing = agents::listing(&sources(), &here());
        let Some(command) = entry(&listing, &id)?.install_command.clone() else {
            return Err(IpcError::InvalidInput(format!(
                "`{id}` has no install command to copy"
            )));
        };
        app.clipboard()
            .write_text(command)
            .map_err(|e| IpcError::InvalidInput(format!("could not write to the clipboard: {e}")))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_is_a_settings_file_without_problems() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        std::fs::write(&file, SETTINGS_TEMPLATE).unwrap();
        let loaded = acp_desk_core::settings::load_from(&file);
        assert_eq!(loaded.problems, vec![]);
        assert!(loaded.settings.agent_servers.is_empty());
    }

    #[test]
    fn the_settings_file_is_made_once_and_never_written_over() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sub").join("settings.json");
        assert!(ensure_settings_file(&file).unwrap());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), SETTINGS_TEMPLATE);
        std::fs::write(&file, "{\"agent_servers\": {}}").unwrap();
        assert!(!ensure_settings_file(&file).unwrap());
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "{\"agent_servers\": {}}"
        );
    }
}
