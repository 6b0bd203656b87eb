//! Continuing a stored session, opening one the agent listed, and asking an agent for its own
//! sessions: what the history view, the CLI's `run --continue` and Reconnect build on.
//!
//! - [`continue_request`]: a stored session (`acp_desk_store::SessionRecord`) → an
//!   [`OpenRequest`] that starts its agent again as it was started and continues it under the
//!   stored id (`Opening::Continue`). The engine's events then carry that id, so the
//!   [`HistoryRecorder`](crate::HistoryRecorder) appends after the stored rows
//!   (`Recorder::begin` with a stored id), and a load's replay is never emitted, so never
//!   stored twice.
//! - [`import_request`]: a session from the agent's `session/list` → an [`OpenRequest`] that
//!   loads it under a new id of ours (`Opening::Import`): the replay is emitted, so it is shown
//!   and stored as the transcript.
//! - [`Registry::list_agent_sessions`]: the agent's own sessions in a folder.

use std::path::{Path, PathBuf};

use acp_desk_core::agents::LaunchSpec;
use acp_desk_core::agents::manifest::Manifest;
use acp_desk_core::schema::v1 as acp;
use acp_desk_core::{ContinueVia, Opening};
use acp_desk_store::{LaunchOrigin, SessionRecord};

use crate::error::AppError;
use crate::registry::{OpenRequest, Registry, check_folder, resolve_agent_full};

/// How to start a stored session's agent again: by its name when it was chosen by name (the
/// settings and the catalog say how today), else from its stored command line.
///
/// A command line with redacted arguments (they looked like secrets, which the history never
/// keeps) cannot start it again: [`AppError::InvalidInput`], saying to choose the agent.
pub fn stored_launch_spec(record: &SessionRecord) -> Result<LaunchSpec, AppError> {
    stored_launch(record).map(|(spec, _)| spec)
}

/// [`stored_launch_spec`], with the manifest of an agent chosen by name that one describes
/// (its `audit` applies to the continued session, ARCHITECTURE.md invariant 33).
fn stored_launch(record: &SessionRecord) -> Result<(LaunchSpec, Option<Manifest>), AppError> {
    let Some(launch) = &record.launch else {
        return Err(AppError::InvalidInput(format!(
            "the stored session {} does not say how its agent `{}` was started: choose the agent to continue it with (acp-desk-cli: `run --continue ID --agent NAME`, or `--agent-command`)",
            record.id, record.agent
        )));
    };
    match launch.origin {
        LaunchOrigin::Named => resolve_agent_full(&record.agent).map(|r| (r.spec, r.manifest)),
        LaunchOrigin::CommandLine if !launch.relaunchable_from_args() => {
            Err(AppError::InvalidInput(format!(
                "the stored session {} was started with the command line `{}`, some of whose arguments looked like secrets and were not stored: it cannot be restarted from it. Choose the agent to continue it with (acp-desk-cli: `run --continue ID --agent NAME`, or `--agent-command` with the command line again).",
                record.id, launch.program
            )))
        }
        LaunchOrigin::CommandLine => Ok((
            LaunchSpec {
                name: record.agent.clone(),
                command: launch.program.clone(),
                args: launch.args.clone(),
                // Only the names were stored; a command line typed by the user set none.
                env: Vec::new(),
                cwd: None,
            },
            None,
        )),
    }
}

/// The stored session's folder, canonical; gone or unusable: an error naming the session and
/// the folder (the stored record is untouched). Reads the disk: call it off the async threads.
pub fn stored_folder(record: &SessionRecord) -> Result<PathBuf, AppError> {
    check_folder(&record.folder).map_err(|e| {
        let why = e.to_string();
        let msg = format!(
            "the stored session {} cannot be continued: its folder {} is not usable ({why}). Its transcript is kept; restore the folder to continue it.",
            record.id, record.folder
        );
        match e {
            AppError::FolderMissing(_) => AppError::FolderMissing(msg),
            AppError::NotAFolder(_) => AppError::NotAFolder(msg),
            _ => AppError::FolderUnreadable(msg),
        }
    })
}

/// An [`OpenRequest`] continuing the stored session `record` (see the module docs): its agent
/// as [`stored_launch_spec`] starts it, in its folder ([`stored_folder`]), under its id. The
/// caller may adjust the request's options (permissions, the tap) before
/// [`Registry::open`]; it must keep `options.cwd` and `options.opening`, and the audit log
/// that a manifest agent's manifest set (`options.audit`, `options.audit_dir`).
pub fn continue_request(record: &SessionRecord, via: ContinueVia) -> Result<OpenRequest, AppError> {
    let (spec, manifest) = stored_launch(record)?;
    let origin = record.launch.as_ref().map(|l| l.origin).unwrap_or_default();
    Ok(
        continue_request_with(record, via, record.agent.clone(), spec, origin)?
            .with_manifest(manifest.as_ref()),
    )
}

/// [`continue_request`] with an agent the user chose instead of the stored launch (one whose
/// command line was redacted, an agent renamed since): the stored session goes on under its
/// id; the agent resumes or loads it if it knows it, else it starts afresh and says so.
pub fn continue_request_with(
    record: &SessionRecord,
    via: ContinueVia,
    agent: String,
    spec: LaunchSpec,
    origin: LaunchOrigin,
) -> Result<OpenRequest, AppError> {
    let folder = stored_folder(record)?;
    let mut request = OpenRequest::new(folder, agent, spec);
    request.origin = origin;
    request.options.opening = Opening::Continue {
        session_id: record.id.clone(),
        acp_session_id: record.acp_session_id.clone(),
        via,
    };
    Ok(request)
}

/// An [`OpenRequest`] opening the agent's own session `acp_session_id` (from
/// [`Registry::list_agent_sessions`]) in `folder` (canonical), under a new id of ours.
pub fn import_request(
    agent: impl Into<String>,
    spec: LaunchSpec,
    folder: PathBuf,
    acp_session_id: impl Into<String>,
) -> OpenRequest {
    let mut request = OpenRequest::new(folder, agent, spec);
    request.options.opening = Opening::Import {
        acp_session_id: acp_session_id.into(),
    };
    request
}

impl Registry {
    /// The agent's own sessions in `folder` (`session/list`, every page). A session of
    /// `agent` open in this registry whose agent runs is asked; else the agent is started for
    /// the question alone (`initialize`, then `session/list`: no session, no audit log, no
    /// folder watcher) and ended before this returns, leaving no process behind. An agent that
    /// does not offer `session/list` gets `AppError::Engine(EngineError::AgentRefused)`.
    pub async fn list_agent_sessions(
        &self,
        agent: &str,
        spec: LaunchSpec,
        folder: &Path,
    ) -> Result<Vec<acp::SessionInfo>, AppError> {
        let cwd = folder.to_path_buf();
        self.with_agent(agent, spec, folder, |h| {
            let cwd = cwd.clone();
            async move { h.list_all_sessions(Some(cwd)).await }
        })
        .await
    }
}
