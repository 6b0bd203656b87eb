//! Access outside the session's folders. A request for a path outside the roots is carried out
//! when the user's "allow" on the agent's own request for a tool call naming that path covers
//! it (this turn, by the call's kind); otherwise it is parked as our own `agent-prompt` with
//! three options (allow once, add the folder to the session, reject) and carried out or refused
//! when it is settled. Policies never grant it (invariant 17).

use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1::{self as acp, RequestId};

use crate::events::{AgentPromptEvent, NoticeSeverity, SettledBy, StreamEvent};
use crate::fs::{FolderId, FsError, Resolved};
use crate::jsonrpc::codes;
use crate::session::PermissionPolicy;
use crate::session::owner::Owner;
use crate::session::permissions::{Parked, ParkedKind};

#[cfg(test)]
#[path = "outside_tests.rs"]
mod tests;

/// Option ids of the client's own permission requests (chosen by kind, like any other).
const OPT_ALLOW_ONCE: &str = "acpdesk-allow-once";

const OPT_ADD_FOLDER: &str = "acpdesk-add-folder";

const OPT_REJECT: &str = "acpdesk-reject";

/// Fewest plain names a folder offered for adding to the session must have: `/`, `/home`,
/// `/etc`, `/usr` hold the whole system or every user's files, and one click must not grant
/// them. Two names down (`/srv/app`, `/tmp/x`) is as broad as a project folder gets.
const MIN_FOLDER_DEPTH: usize = 2;

/// The folder "Add … to the session" adds, fixed (canonical, and which folder it is) when the
/// user is asked, so the answer adds exactly what the question named.
#[derive(Debug, Clone)]
pub(in crate::session) struct FolderOffer {
    path: PathBuf,
    id: FolderId,
}

/// What a parked outside-the-roots request does once the user allows it.
/// `offer`: the folder offered for adding when the user was asked (`None` before, or when
/// none could be offered).
pub(in crate::session) enum ClientOp {
    Read {
        resolved: Resolved,
        line: Option<u32>,
        limit: Option<u32>,
        offer: Option<FolderOffer>,
    },
    Write {
        resolved: Resolved,
        content: String,
        offer: Option<FolderOffer>,
    },
    Terminal {
        req: Box<acp::CreateTerminalRequest>,
        cwd: Resolved,
        offer: Option<FolderOffer>,
    },
}

impl ClientOp {
    fn resolved(&self) -> &Resolved {
        match self {
            ClientOp::Read { resolved, .. } | ClientOp::Write { resolved, .. } => resolved,
            ClientOp::Terminal { cwd, .. } => cwd,
        }
    }

    fn with_resolved(self, r: Resolved) -> ClientOp {
        match self {
            ClientOp::Read {
                line, limit, offer, ..
            } => ClientOp::Read {
                resolved: r,
                line,
                limit,
                offer,
            },
            ClientOp::Write { content, offer, .. } => ClientOp::Write {
                resolved: r,
                content,
                offer,
            },
            ClientOp::Terminal { req, offer, .. } => ClientOp::Terminal { req, cwd: r, offer },
        }
    }

    fn offer(&self) -> Option<&FolderOffer> {
        match self {
            ClientOp::Read { offer, .. }
            | ClientOp::Write { offer, .. }
            | ClientOp::Terminal { offer, .. } => offer.as_ref(),
        }
    }

    fn set_offer(&mut self, o: Option<FolderOffer>) {
        match self {
            ClientOp::Read { offer, .. }
            | ClientOp::Write { offer, .. }
            | ClientOp::Terminal { offer, .. } => *offer = o,
        }
    }

    /// The folder "Add … to the session" would add: the file's folder, or the terminal's
    /// working folder, canonical. Never a nearer existing ancestor: for a file in a folder
    /// that does not exist yet, that would be a much broader folder than the one named.
    fn folder(&self) -> Option<&Path> {
        let path = self.resolved().path();
        match self {
            ClientOp::Terminal { .. } => Some(path),
            _ => path.parent(),
        }
    }
}

/// Why `folder` is too broad to offer adding to the session, if it is: the file system's root
/// or a folder near it, the user's home or a folder holding it, or a folder holding one of the
/// session's folders (adding it would widen the session far past what the agent asked for).
fn too_broad(folder: &Path, roots: &[PathBuf], home: Option<&Path>) -> Option<&'static str> {
    let depth = folder
        .components()
        .filter(|c| matches!(c, std::path::Component::Normal(_)))
        .count();
    if depth < MIN_FOLDER_DEPTH {
        return Some("it is the file system's root or a folder right below it");
    }
    if home.is_some_and(|h| h.starts_with(folder)) {
        return Some("it is your home folder or holds it");
    }
    if roots.iter().any(|r| r.starts_with(folder)) {
        return Some("it holds one of this session's folders");
    }
    None
}

/// The user's home folder, canonical when it can be (roots and offers are canonical).
fn home_folder() -> Option<PathBuf> {
    let home = directories::BaseDirs::new()?.home_dir().to_path_buf();
    Some(std::fs::canonicalize(&home).unwrap_or(home))
}

/// What the user's "allow" on the agent's own permission request lets the client do, without
/// asking again, with a path the tool call names; decided by the call's kind, so allowing a
/// read never lets the agent write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Grant {
    /// `read`, `search`, `fetch`, `think`: `fs/read_text_file` of that path.
    Read,
    /// `edit`, `delete`, `move`: reading and writing that path.
    ReadWrite,
    /// `execute`: a terminal whose working folder is that path; no file access (the command's
    /// own reads and writes happen inside the terminal, not through the client).
    Terminal,
}

impl Grant {
    /// `None` for the kinds that say nothing about what is done (`other`, `switch_mode`, none):
    /// they cover nothing, and the client asks.
    fn of(kind: Option<acp::ToolKind>) -> Option<Grant> {
        use acp::ToolKind as K;
        match kind? {
            K::Read | K::Search | K::Fetch | K::Think => Some(Grant::Read),
            K::Edit | K::Delete | K::Move => Some(Grant::ReadWrite),
            K::Execute => Some(Grant::Terminal),
            _ => None,
        }
    }

    fn covers(self, op: &ClientOp) -> bool {
        matches!(
            (self, op),
            (Grant::Read | Grant::ReadWrite, ClientOp::Read { .. })
                | (Grant::ReadWrite, ClientOp::Write { .. })
                | (Grant::Terminal, ClientOp::Terminal { .. })
        )
    }
}

/// A path the user allowed a tool call for, canonical as it was when the user answered (a
/// symlink planted at that name later leads elsewhere and is not covered).
#[derive(Debug, Clone)]
pub(in crate::session) struct Approved {
    path: PathBuf,
    grant: Grant,
}

impl Owner {
    /// Carries out `op` if its path is inside the roots (or the user already allowed a tool
    /// call naming it this turn); otherwise asks the user, or refuses when nobody is asked.
    pub(super) async fn access(
        &mut self,
        id: &RequestId,
        op: ClientOp,
        method: &str,
    ) -> Result<(), acp::Error> {
        let resolved = op.resolved();
        if resolved.is_inside() {
            return self.perform(id, op);
        }
        // Canonical to canonical only: the name the agent sent may lead elsewhere by now.
        let covered = self
            .client
            .approved
            .iter()
            .any(|a| a.path == resolved.path() && a.grant.covers(&op));
        if covered {
            tracing::info!(
                "{method} outside the roots ({}) covered by the user's answer to the agent's request",
                resolved.path().display()
            );
            let r = op.resolved().clone().approved_by_user();
            return self.perform(id, op.with_resolved(r));
        }
        if self.opts.permission_policy != PermissionPolicy::Ask {
            let path = resolved.path().display().to_string();
            self.notice(
                NoticeSeverity::Warning,
                format!("The agent asked for `{path}`, outside this session's folders; refused."),
                Some("Access outside the session's folders is only granted when you are asked (not with --permission allow/reject/cancel); add the folder to the session (--add-dir) to allow it.".into()),
            );
            return Err(acp::Error::new(
                codes::INTERNAL_ERROR,
                format!(
                    "`{path}` is outside this session's folders, and this session does not ask the user for such access; ACP Desk refused it (the user can add its folder to the session)"
                ),
            )
            .data(serde_json::json!({ "path": path })));
        }
        self.ask_access(id, op, method).await;
        Ok(())
    }

    /// The user allowed the agent's own request for a tool call of `kind` naming `paths`:
    /// remembers them, canonical now, for the rest of the turn.
    pub(in crate::session) fn approve_paths(
        &mut self,
        paths: Vec<PathBuf>,
        kind: Option<acp::ToolKind>,
    ) {
        let Some(grant) = Grant::of(kind) else {
            return;
        };
        for p in paths {
            // A path that cannot be resolved (a loop, a relative path) covers nothing.
            if let Ok(r) = self.client.roots.resolve(&p) {
                self.client.approved.push(Approved {
                    path: r.path().to_path_buf(),
                    grant,
                });
            }
        }
    }

    /// The folder to offer adding to the session for `op`, or why none is offered.
    fn folder_offer(&self, op: &ClientOp) -> Result<FolderOffer, &'static str> {
        let folder = op.folder().ok_or("it has no folder")?;
        let id = FolderId::of(folder).ok_or("its folder does not exist (yet)")?;
        if let Some(why) = too_broad(folder, self.client.roots.roots(), home_folder().as_deref()) {
            return Err(why);
        }
        Ok(FolderOffer {
            path: folder.to_path_buf(),
            id,
        })
    }

    /// Parks the request and emits our own `agent-prompt` about it.
    async fn ask_access(&mut self, id: &RequestId, mut op: ClientOp, method: &str) {
        let n = self.perms.next_number();
        let path = op.resolved().path().to_path_buf();
        let target = self
            .thread
            .running_call_naming(&path)
            .or_else(|| self.thread.running_call_naming(op.resolved().requested()))
            .unwrap_or_else(|| format!("acpdesk-access-{n}"));
        let request_id = format!("{target}#{n}");
        let (verb, kind) = match &op {
            ClientOp::Read { .. } => ("read", acp::ToolKind::Read),
            ClientOp::Write { .. } => ("write", acp::ToolKind::Edit),
            ClientOp::Terminal { .. } => ("run a command in", acp::ToolKind::Execute),
        };
        let shown = path.display().to_string();
        let raw_input = match &op {
            ClientOp::Terminal { req, .. } => serde_json::json!({
                "method": method, "cwd": shown, "command": req.command, "args": req.args,
            }),
            ClientOp::Read { line, limit, .. } => serde_json::json!({
                "method": method, "path": shown, "line": line, "limit": limit,
            }),
            ClientOp::Write { content, .. } => serde_json::json!({
                "method": method, "path": shown, "bytes": content.len(),
            }),
        };
        let offer = self.folder_offer(&op);
        let mut options = vec![acp::PermissionOption::new(
            OPT_ALLOW_ONCE,
            "Allow once",
            acp::PermissionOptionKind::AllowOnce,
        )];
        let folder_note = match &offer {
            Ok(o) => {
                let folder = o.path.display();
                options.push(acp::PermissionOption::new(
                    OPT_ADD_FOLDER,
                    format!("Add {folder} to the session"),
                    acp::PermissionOptionKind::AllowAlways,
                ));
                format!(
                    " \"Add {folder} to the session\" lets the agent read and write everything in `{folder}`, and run commands there, until the session ends."
                )
            }
            Err(why) => format!(" Adding its folder to the session is not offered: {why}."),
        };
        options.push(acp::PermissionOption::new(
            OPT_REJECT,
            "Reject",
            acp::PermissionOptionKind::RejectOnce,
        ));
        op.set_offer(offer.ok());
        self.audit.permission_asked(
            &request_id,
            &target,
            Some(&format!("Access outside the session's folders: {shown}")),
            Some(kind),
            &options,
        );
        let prompt = AgentPromptEvent {
            session_id: self.id.clone(),
            request_id: request_id.clone(),
            options: options.clone(),
            text: Some(format!(
                "Allow the agent to {verb} `{shown}`? It is outside this session's folders.{folder_note}"
            )),
            tool_name: Some(format!("Access outside the session's folders: {shown}")),
            raw_input: Some(raw_input),
            meta: None,
            target_tool_call_id: target,
            tool_kind: Some(kind),
            content: None,
            locations: Some(vec![acp::ToolCallLocation::new(path)]),
        };
        self.emit(StreamEvent::AgentPrompt(Box::new(prompt)));
        self.perms.park(
            request_id.clone(),
            Parked {
                rpc_id: id.clone(),
                options,
                kind: ParkedKind::Client(Box::new(op)),
            },
        );
        self.after_park(&request_id).await;
    }

    /// A parked outside-the-roots request was settled: carry it out, adding the folder to the
    /// session first for "Add FOLDER to the session", or refuse it.
    pub(in crate::session) fn access_answered(
        &mut self,
        id: RequestId,
        op: ClientOp,
        kind: Option<acp::PermissionOptionKind>,
        by: SettledBy,
    ) {
        let path = op.resolved().path().display().to_string();
        let op = match kind {
            Some(acp::PermissionOptionKind::AllowOnce) => {
                let r = op.resolved().clone().approved_by_user();
                op.with_resolved(r)
            }
            Some(acp::PermissionOptionKind::AllowAlways) => {
                // Exactly the folder the question named, if it is still that folder; never
                // "approved anyway": the user allowed adding a folder, not this access alone.
                let added = match op.offer() {
                    Some(o) => self
                        .client
                        .roots
                        .add_checked_root(&o.path, o.id)
                        .map(|()| o.path.clone()),
                    None => Err(FsError::OutsideRoots {
                        path: op.resolved().path().to_path_buf(),
                    }),
                };
                match added {
                    Ok(folder) => {
                        tracing::info!("folder {} added to the session", folder.display());
                        self.watch_folder(folder.clone());
                        self.notice(
                            NoticeSeverity::Info,
                            format!(
                                "`{}` was added to this session's folders.",
                                folder.display()
                            ),
                            None,
                        );
                    }
                    Err(e) => {
                        tracing::warn!("could not add the folder: {e}");
                        self.notice(
                            NoticeSeverity::Warning,
                            format!("The folder for `{path}` was not added to this session; the agent's request was refused."),
                            Some(e.to_string()),
                        );
                        self.reply::<()>(&id, Err(e.to_acp_error()));
                        return;
                    }
                }
                // Resolved again: inside the new root now, unless its path changed meanwhile.
                match self.client.roots.resolve(op.resolved().requested()) {
                    Ok(r) if r.is_inside() => op.with_resolved(r),
                    Ok(r) => {
                        let e = FsError::OutsideRoots {
                            path: r.path().to_path_buf(),
                        };
                        self.reply::<()>(&id, Err(e.to_acp_error()));
                        return;
                    }
                    Err(e) => {
                        self.reply::<()>(&id, Err(e.to_acp_error()));
                        return;
                    }
                }
            }
            None if by == SettledBy::Agent => {
                // The agent withdrew it (`$/cancel_request`): ACP's answer is -32800.
                let err = acp::Error::new(
                    codes::REQUEST_CANCELLED,
                    format!("the request for `{path}` was cancelled by the agent"),
                );
                self.reply::<()>(&id, Err(err));
                return;
            }
            _ => {
                let why = match (kind, by) {
                    (Some(_), _) => "the user refused access to it".to_string(),
                    (None, SettledBy::User) => "the user refused access to it (the request was cancelled)".to_string(),
                    (None, _) => "the user refused access to it (the request was cancelled before the user answered: the turn stopped or ended)".to_string(),
                };
                let err = acp::Error::new(
                    codes::INTERNAL_ERROR,
                    format!("`{path}` is outside this session's folders and {why}; do not retry unless the user asks"),
                )
                .data(serde_json::json!({ "path": path }));
                self.reply::<()>(&id, Err(err));
                return;
            }
        };
        if let Err(e) = self.perform(&id, op) {
            self.reply::<()>(&id, Err(e));
        }
    }

    /// Does the checked operation: file IO on the blocking pool, a terminal at once.
    fn perform(&mut self, id: &RequestId, op: ClientOp) -> Result<(), acp::Error> {
        match op {
            ClientOp::Read {
                resolved,
                line,
                limit,
                ..
            } => self.perform_read(id, resolved, line, limit),
            ClientOp::Write {
                resolved, content, ..
            } => self.perform_write(id, resolved, content),
            ClientOp::Terminal { req, cwd, .. } => {
                // Again: others may have been created while the user was asked.
                self.check_terminal_count()?;
                self.check_in_flight()?;
                self.perform_terminal(id, *req, cwd)
            }
        }
    }
}
