//! A project's own MCP config, used only as the user agreed to it (issue 17, ARCHITECTURE.md
//! invariant 56). A repository may carry `.mcp.json`, `.cursor/mcp.json` or `.vscode/mcp.json`
//! (read by `acp_desk_core::mcp::project`); each names programs to run and URLs to call,
//! written by whoever wrote the repository. So a file is never used on its own:
//!
//! - [`offer`] says what the folder's undecided files would add (every server's name,
//!   transport, full command line or shown URL, env and header **names**, problems), for the
//!   window's card and the CLI's note;
//! - the user's decision is kept in the app's state file per (folder, file) with the digest
//!   (SHA-256 of the bytes) it was made on ([`record`]): `use` or `ignore`;
//! - [`approved_servers`] reads the files again at each session start and passes the servers of
//!   a file only when its digest now is the one agreed to: an edited file (a new digest) is
//!   offered again and not used until the user agrees again.
//!
//! Reading the files is blocking: call these on the blocking pool.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use acp_desk_core::agents::problem::{ConfigProblem, ProblemSeverity};
use acp_desk_core::mcp::project::{self, ProjectMcpFile};
use acp_desk_core::mcp::{McpConfigTransport, McpServerConfig, shown_url};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::AppError;
use crate::state::AppState;

/// What the user decided about one file: use its servers in this folder's sessions, or do not
/// ask again (about these bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProjectMcpChoice {
    Use,
    Ignore,
}

/// One decision in the state file: `projectMcp.<folder>.<file> = {digest, decision}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectMcpApproval {
    /// SHA-256 (hex) of the file's bytes the decision was made on.
    pub digest: String,
    /// `use` or `ignore`, kept as written: a value a newer ACP Desk wrote that this one does not
    /// know is never used, asked again, and written back as it was.
    decision: String,
    /// Fields of a newer ACP Desk, written back as they were.
    #[serde(flatten)]
    pub(crate) unknown: Map<String, Value>,
}

impl ProjectMcpApproval {
    pub fn new(digest: impl Into<String>, choice: ProjectMcpChoice) -> Self {
        ProjectMcpApproval {
            digest: digest.into(),
            decision: choice.as_str().to_owned(),
            unknown: Map::new(),
        }
    }

    /// The decision; `None`: one this build does not know.
    pub fn decision(&self) -> Option<ProjectMcpChoice> {
        match self.decision.as_str() {
            "use" => Some(ProjectMcpChoice::Use),
            "ignore" => Some(ProjectMcpChoice::Ignore),
            _ => None,
        }
    }
}

impl ProjectMcpChoice {
    pub fn as_str(self) -> &'static str {
        match self {
            ProjectMcpChoice::Use => "use",
            ProjectMcpChoice::Ignore => "ignore",
        }
    }
}

/// The decisions, by folder (canonical) then file name (`.mcp.json`, ...).
pub type Approvals = BTreeMap<PathBuf, BTreeMap<String, ProjectMcpApproval>>;

/// What a folder's undecided config files would add to its sessions.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectMcpOffer {
    /// The folder (canonical), as the decision must name it.
    pub folder: String,
    pub files: Vec<OfferedFile>,
}

/// One config file offered.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OfferedFile {
    /// Its name in the folder (`.mcp.json`, `.cursor/mcp.json`, `.vscode/mcp.json`): what a
    /// decision names.
    pub file: String,
    /// The tool it was written for ("Claude Code", "Cursor", "VS Code").
    pub tool: String,
    pub path: String,
    /// SHA-256 (hex) of the bytes shown: a decision is on these.
    pub digest: String,
    /// The decision on an earlier version of the file, which no longer holds (the file
    /// changed); `None`: never decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<ProjectMcpChoice>,
    /// Every server listed, usable or not, in the file's order.
    pub servers: Vec<OfferedServer>,
    /// Problems not about a listed server (the file, a skipped entry, an unknown key).
    pub problems: Vec<ConfigProblem>,
}

/// One server as the user must see it before agreeing: everything it would run or call.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OfferedServer {
    pub name: String,
    /// `stdio`, `http` or `sse`.
    pub transport: String,
    /// stdio: the program and every argument, as the file writes them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// http and sse: the URL without user info, query or fragment ([`shown_url`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shown_url: Option<String>,
    /// The URL has user info, a query or a fragment not shown (where tokens hide).
    pub url_has_hidden_parts: bool,
    /// Environment variable names (stdio); values are never shown.
    pub env: Vec<String>,
    /// Header names (http, sse); values are never shown.
    pub headers: Vec<String>,
    /// Whether the server would be passed; false: held back, `problems` says why.
    pub usable: bool,
    pub problems: Vec<ConfigProblem>,
}

/// The folder's config files that are not decided as they are now (never decided, or changed
/// since); `None` when there are none (or none that says anything). Blocking.
pub fn offer(state: &AppState, folder: &Path) -> Option<ProjectMcpOffer> {
    let decided = state.project_mcp.get(folder);
    let files: Vec<OfferedFile> = project::find(folder)
        .into_iter()
        .filter_map(|f| {
            let approval = decided.and_then(|d| d.get(f.name));
            let previous = approval.and_then(ProjectMcpApproval::decision);
            if approval.is_some_and(|a| a.digest == f.digest) && previous.is_some() {
                return None;
            }
            offered_file(&f, previous)
        })
        .collect();
    (!files.is_empty()).then(|| ProjectMcpOffer {
        folder: folder.display().to_string(),
        files,
    })
}

/// `None` for a file that says nothing worth asking about (no server, no error).
fn offered_file(f: &ProjectMcpFile, previous: Option<ProjectMcpChoice>) -> Option<OfferedFile> {
    let mut all: Vec<(bool, &McpServerConfig)> = f
        .servers
        .iter()
        .map(|s| (true, s))
        .chain(f.held_back.iter().map(|s| (false, s)))
        .collect();
    // Usable and held-back servers each keep the file's order; merged back into it here.
    all.sort_by_key(|(_, s)| f.order.iter().position(|n| *n == s.name));
    let servers: Vec<OfferedServer> = all
        .into_iter()
        .map(|(usable, s)| offered_server(f, s, usable))
        .collect();
    let problems: Vec<ConfigProblem> = f
        .problems
        .iter()
        .filter(|p| !servers.iter().any(|s| s.problems.iter().any(|sp| sp == *p)))
        .cloned()
        .collect();
    let has_error = problems
        .iter()
        .any(|p| p.severity == ProblemSeverity::Error);
    if servers.is_empty() && !has_error {
        return None;
    }
    Some(OfferedFile {
        file: f.name.to_owned(),
        tool: f.kind.tool().to_owned(),
        path: f.path.display().to_string(),
        digest: f.digest.clone(),
        previous,
        servers,
        problems,
    })
}

fn offered_server(f: &ProjectMcpFile, s: &McpServerConfig, usable: bool) -> OfferedServer {
    let problems = f.problems_of(&s.name).into_iter().cloned().collect();
    let base = OfferedServer {
        name: s.name.clone(),
        transport: String::new(),
        command: None,
        shown_url: None,
        url_has_hidden_parts: false,
        env: Vec::new(),
        headers: Vec::new(),
        usable,
        problems,
    };
    match &s.transport {
        McpConfigTransport::Stdio { command, args, env } => OfferedServer {
            transport: "stdio".into(),
            command: Some(std::iter::once(command).chain(args).cloned().collect()),
            env: env.keys().cloned().collect(),
            ..base
        },
        McpConfigTransport::Http { url, headers } | McpConfigTransport::Sse { url, headers } => {
            let transport = if matches!(s.transport, McpConfigTransport::Sse { .. }) {
                "sse"
            } else {
                "http"
            };
            OfferedServer {
                transport: transport.into(),
                shown_url: Some(shown_url(url)),
                url_has_hidden_parts: has_hidden_parts(url),
                headers: headers.keys().cloned().collect(),
                ..base
            }
        }
    }
}

fn has_hidden_parts(url: &str) -> bool {
    url::Url::parse(url).map_or(true, |u| {
        !u.username().is_empty()
            || u.password().is_some()
            || u.query().is_some()
            || u.fragment().is_some()
    })
}

/// The servers of `folder`'s config files the user agreed to use, as the files are now: a file
/// whose digest differs from the one agreed to gives none (it is offered again). Held-back
/// servers (placeholders) never. Blocking.
pub fn approved_servers(state: &AppState, folder: &Path) -> Vec<McpServerConfig> {
    let Some(decided) = state.project_mcp.get(folder) else {
        return Vec::new();
    };
    project::find(folder)
        .into_iter()
        .filter(|f| {
            decided.get(f.name).is_some_and(|a| {
                a.decision() == Some(ProjectMcpChoice::Use) && a.digest == f.digest
            })
        })
        .flat_map(|f| f.servers)
        .collect()
}

/// Checks a decision the window sends: `file` must be one of the names looked for, and its
/// bytes now must be those shown (`digest`); otherwise the user would agree to something they
/// did not see. Blocking.
pub fn check_decision(folder: &Path, file: &str, digest: &str) -> Result<(), AppError> {
    if project::kind_of(file).is_none() {
        return Err(AppError::Internal(format!(
            "`{file}` is not a project MCP config file ACP Desk reads (the window only names .mcp.json, .cursor/mcp.json or .vscode/mcp.json)"
        )));
    }
    let now = project::find(folder).into_iter().find(|f| f.name == file);
    match now {
        Some(f) if f.digest == digest && !f.digest.is_empty() => Ok(()),
        Some(_) => Err(AppError::ProjectConfigChanged(format!(
            "{} changed since it was shown; look at what it would run now and decide again",
            folder.join(file).display()
        ))),
        None => Err(AppError::ProjectConfigChanged(format!(
            "{} is gone (or can no longer be read); nothing was recorded",
            folder.join(file).display()
        ))),
    }
}

/// Records the decision on (`folder`, `file`) at `digest`, replacing an earlier one.
pub fn record(
    state: &mut AppState,
    folder: &Path,
    file: &str,
    digest: &str,
    choice: ProjectMcpChoice,
) {
    let entry = state
        .project_mcp
        .entry(folder.to_owned())
        .or_default()
        .entry(file.to_owned());
    match entry {
        std::collections::btree_map::Entry::Occupied(mut o) => {
            let a = o.get_mut();
            a.digest = digest.to_owned();
            a.decision = choice.as_str().to_owned();
        }
        std::collections::btree_map::Entry::Vacant(v) => {
            v.insert(ProjectMcpApproval::new(digest, choice));
        }
    }
}

/// What a front end without a window says about a folder's files (the CLI's note): one line
/// per file, then one per server and its problems.
pub fn describe(files: &[OfferedFile]) -> Vec<String> {
    let mut lines = Vec::new();
    for f in files {
        let usable = f.servers.iter().filter(|s| s.usable).count();
        lines.push(format!(
            "{} ({}'s MCP config) would add {usable} MCP server{}:",
            f.path,
            f.tool,
            if usable == 1 { "" } else { "s" }
        ));
        for s in &f.servers {
            lines.push(format!("  {}", server_line(s)));
            for p in &s.problems {
                lines.push(format!("    {p}"));
            }
        }
        for p in &f.problems {
            lines.push(format!("  {p}"));
        }
    }
    lines
}

/// `NAME (stdio): COMMAND ARGS... [env: A, B]`, or `NAME (http): URL [headers: H]`, with
/// "not used" when held back.
pub fn server_line(s: &OfferedServer) -> String {
    let target = match (&s.command, &s.shown_url) {
        (Some(cmd), _) => shell_words::join(cmd),
        (None, Some(url)) if s.url_has_hidden_parts => format!("{url} (+ a query not shown)"),
        (None, Some(url)) => url.clone(),
        (None, None) => String::new(),
    };
    let mut line = format!("{} ({}): {target}", s.name, s.transport);
    if !s.env.is_empty() {
        line.push_str(&format!(" [env: {}]", s.env.join(", ")));
    }
    if !s.headers.is_empty() {
        line.push_str(&format!(" [headers: {}]", s.headers.join(", ")));
    }
    if !s.usable {
        line.push_str(" — not used, see below");
    }
    line
}

/// Every server of every file found in `folder`, usable ones only, with the files offered:
/// what `acp-desk-cli run --project-mcp` passes (the user asked for them on the command line,
/// having been shown them). Blocking.
pub fn all_servers(folder: &Path) -> (Vec<McpServerConfig>, Vec<OfferedFile>) {
    let files = project::find(folder);
    let offered = files.iter().filter_map(|f| offered_file(f, None)).collect();
    let servers = files.into_iter().flat_map(|f| f.servers).collect();
    (servers, offered)
}

impl crate::Registry {
    /// "Restart session with them": ends the session's agent if it still runs, then starts a new
    /// one continuing the conversation ([`crate::Registry::reconnect`]: resume, else load, else
    /// a new session, said in the thread) with `project` as the project's MCP servers. Refused
    /// while the agent is still starting.
    pub async fn restart_with_project_mcp(
        &self,
        id: &str,
        project: Vec<McpServerConfig>,
    ) -> Result<crate::SessionInfo, AppError> {
        self.end_agent(id).await?;
        self.reconnect_with(id, Some(project), None).await
    }

    /// Ends the session's agent if it still runs and waits until its pump handed on its last
    /// event: what a restart does first. Refused while the agent is still starting.
    pub(crate) async fn end_agent(&self, id: &str) -> Result<(), AppError> {
        let session = self.get(id)?;
        if !*session.ended.borrow() {
            match session.handle() {
                // Ends the agent's tree within the engine's graces (invariant 8).
                Ok(handle) => handle.close().await,
                Err(AppError::SessionStarting(m)) => return Err(AppError::SessionStarting(m)),
                // A failed start ends by itself.
                Err(_) => {}
            }
            let mut ended = session.ended.clone();
            // An error means the pump is gone, which is an end too.
            let _ = ended.wait_for(|e| *e).await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
