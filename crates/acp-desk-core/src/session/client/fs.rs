//! `fs/read_text_file` and `fs/write_text_file`: resolved and checked (client/outside.rs), then
//! done on the blocking pool; a write goes into the turn's change set, the audit log and a
//! `file-changed` event, unless the file changed on disk since the agent read it.

use agent_client_protocol_schema::v1::{self as acp, RequestId};
use serde_json::value::RawValue;

use super::{ClientOp, Done, parse};
use crate::audit::WriteVia;
use crate::events::{FileChangeVia, NoticeSeverity, StreamEvent};
use crate::fs::{self, FsError, Resolved, WriteRecord};
use crate::jsonrpc::codes;
use crate::session::owner::Owner;
use crate::watch::Conflict;

impl Owner {
    pub(super) fn fs_read(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), acp::Error> {
        let req: acp::ReadTextFileRequest = parse(params)?;
        self.check_session(&req.session_id)?;
        let (line, limit) = (req.line, req.limit);
        self.resolve_then_access(id, "fs/read_text_file", req.path, move |resolved| {
            ClientOp::Read {
                resolved,
                line,
                limit,
                offer: None,
            }
        })
    }

    pub(super) fn fs_write(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), acp::Error> {
        let req: acp::WriteTextFileRequest = parse(params)?;
        self.check_session(&req.session_id)?;
        let content = req.content;
        self.resolve_then_access(id, "fs/write_text_file", req.path, move |resolved| {
            ClientOp::Write {
                resolved,
                content,
                offer: None,
            }
        })
    }

    /// Reads the checked file on the blocking pool ([`Done::Read`]).
    pub(super) fn perform_read(
        &mut self,
        id: &RequestId,
        resolved: Resolved,
        line: Option<u32>,
        limit: Option<u32>,
    ) -> Result<(), acp::Error> {
        self.check_in_flight()?;
        let compat = self.client.compat;
        let rid = id.clone();
        let reads = self.client.reads.clone();
        self.spawn_io(id, move || {
            let result = compat.on_read(fs::read_text_file(&resolved, line, limit));
            if result.is_ok()
                && let Ok(mut r) = reads.lock()
            {
                // From the disk, not the text returned: a window of lines is not the
                // file. A change in the instant between the read and this goes unseen.
                r.note_read(resolved.path());
            }
            Done::Read { id: rid, result }
        });
        Ok(())
    }

    /// Writes the checked file on the blocking pool ([`Done::Write`], or [`Done::Conflict`]).
    pub(super) fn perform_write(
        &mut self,
        id: &RequestId,
        resolved: Resolved,
        content: String,
    ) -> Result<(), acp::Error> {
        self.check_in_flight()?;
        let rid = id.clone();
        let reads = self.client.reads.clone();
        let checkpoint = self.checkpoint_for_write();
        self.spawn_io(id, move || {
            let path = resolved.path();
            // Checked right before the write, on the same thread: the agent must not
            // overwrite changes it never saw.
            let conflict = reads.lock().ok().and_then(|r| r.check_before_write(path));
            if let Some(conflict) = conflict {
                return Done::Conflict { id: rid, conflict };
            }
            // An ignored file (a `.env`) is in no checkpoint: kept as it is now, so that the
            // turn can be undone.
            crate::session::checkpoints::save_before_write(checkpoint.as_ref(), path);
            let result = fs::write_text_file(&resolved, &content);
            if result.is_ok()
                && let Ok(mut r) = reads.lock()
            {
                r.note_written(path, &content);
            }
            Done::Write { id: rid, result }
        });
        Ok(())
    }

    pub(super) fn on_read_done(&mut self, id: &RequestId, result: Result<String, FsError>) {
        let r = result
            .map(acp::ReadTextFileResponse::new)
            .map_err(|e| e.to_acp_error());
        self.reply(id, r);
    }

    pub(super) fn on_write_done(&mut self, id: &RequestId, result: Result<WriteRecord, FsError>) {
        match result {
            Ok(rec) => {
                self.client.changes.record_write(&rec);
                self.audit.file_written(
                    &rec.path,
                    rec.before_hash.map(|h| h.to_hex()),
                    Some(rec.after_hash.to_hex()),
                    rec.created,
                    WriteVia::FsWrite,
                );
                let ev = StreamEvent::FileChanged {
                    session_id: self.id.clone(),
                    path: rec.path.display().to_string(),
                    created: rec.created,
                    via: Some(FileChangeVia::FsWrite),
                    tool_call_id: self.thread.call_naming(&rec.path),
                };
                self.emit(ev);
                self.reply(id, Ok(acp::WriteTextFileResponse::new()));
            }
            Err(e) => self.reply::<()>(id, Err(e.to_acp_error())),
        }
    }

    /// The agent wanted to write a file that changed on disk since it read it. Refused: writing
    /// would silently throw away changes (the user's, usually) the agent never saw; the agent
    /// is told to read the file again, which clears the conflict.
    pub(super) fn write_conflict(&mut self, id: &RequestId, conflict: Conflict) {
        let path = conflict.path.display().to_string();
        tracing::warn!("write refused: {conflict}");
        self.notice(
            NoticeSeverity::Warning,
            format!("Conflict: `{path}` changed on disk after the agent read it; its write was refused."),
            Some("Nothing was written. The agent was asked to read the file again before changing it.".into()),
        );
        let err = acp::Error::new(
            codes::INTERNAL_ERROR,
            format!(
                "`{path}` changed on disk after you last read it (someone else edited it); nothing was written. Read it again and redo your change on its current text"
            ),
        )
        .data(serde_json::json!({ "path": path, "conflict": true }));
        self.reply::<()>(id, Err(err));
    }
}
