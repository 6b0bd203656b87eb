//! What happened while a session started, step by step: how long the process took to start and
//! `initialize` to be answered, the answer as the agent sent it, what it printed on stdout that
//! was not JSON, and how the start ended when it failed (the agent exited, no answer in time, an
//! answer that is not ACP). Front ends get it from [`super::start_traced`] (on failure too) and
//! [`super::SessionHandle::start_trace`]; `agents::check` turns it into a report.
//!
//! It is the owner's record of the start, filled by the parts that see each step (`start()` the
//! spawn, the handshake `initialize`, the owner's skipped lines, the ending how it failed) and
//! handed over once, with the answer to `start()`'s caller.

use std::time::Duration;

use agent_client_protocol_schema::v1 as acp;
use tokio::time::Instant;

use crate::events::AgentExit;
use crate::process::SpawnError;

/// The record of a session's start. `Default` is the record of a start that has not begun.
#[derive(Debug, Clone, Default)]
pub struct StartTrace {
    /// How long starting the agent's process took (the spawn, not the agent's own boot, which
    /// is part of `initialize`). `None`: no process was started (see `spawn_failure`), or the
    /// agent is reached over a stream ([`super::start_over`]).
    pub spawn: Option<Duration>,
    /// Why the process could not be started.
    pub spawn_failure: Option<SpawnFailure>,
    /// The process we started: the supervisor on Linux, the agent itself elsewhere.
    pub pid: Option<u32>,
    /// From `initialize` sent to its answer, or to the failure that ended the wait for it (the
    /// agent exited, the start timed out). `None`: `initialize` was never sent.
    pub initialize: Option<Duration>,
    /// The `result` of the agent's answer to `initialize`, as it sent it (before it is read as
    /// ACP: `agentCapabilities` here is exactly what the agent reported).
    pub initialize_result: Option<serde_json::Value>,
    /// The agent answered `initialize` with a JSON-RPC error.
    pub initialize_error: Option<acp::Error>,
    /// The answer is not a valid ACP `InitializeResponse`: why (serde's words).
    pub invalid_answer: Option<String>,
    /// The protocol version the agent answered with, when it answered.
    pub protocol_version: Option<u16>,
    /// Lines on the agent's stdout that were not JSON (skipped by the JSON-RPC peer), during
    /// the start.
    pub not_json_lines: u64,
    /// The first of them, cut (at most [`crate::jsonrpc::PREVIEW_CHARS`] characters).
    pub first_not_json: Option<String>,
    /// The agent's process ended before the start completed: how, and its last stderr lines.
    pub exit: Option<AgentExit>,
    /// No answer within `SessionOptions::start_timeout`.
    pub timed_out: bool,
    /// When `initialize` went out (for `initialize`).
    sent_at: Option<Instant>,
    /// The start is over (ready or failed): later events no longer belong to it.
    done: bool,
}

/// Why an agent's process could not be started, as front ends tell the user what to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpawnFailure {
    /// The program does not exist (at the path given, or on PATH).
    NotFound,
    /// It exists but may not be executed (no execute permission, a folder).
    NotExecutable,
    /// `acp-desk-supervisor` is missing (Linux): an installation problem of ours.
    NoSupervisor,
    /// Anything else the OS refused (the message says what).
    Other,
}

impl SpawnFailure {
    pub fn of(e: &SpawnError) -> Self {
        match e {
            SpawnError::NotFound { .. } => SpawnFailure::NotFound,
            SpawnError::NotExecutable { .. } => SpawnFailure::NotExecutable,
            SpawnError::NoSupervisor => SpawnFailure::NoSupervisor,
            // The program itself was found before spawning: a "not found" now is its folder
            // or its interpreter, which the message names.
            SpawnError::Io { source, .. } => match source.kind() {
                std::io::ErrorKind::PermissionDenied => SpawnFailure::NotExecutable,
                _ => SpawnFailure::Other,
            },
        }
    }
}

impl StartTrace {
    pub(super) fn initialize_sent(&mut self) {
        self.sent_at = Some(Instant::now());
    }

    fn stop_clock(&mut self) {
        if self.initialize.is_none()
            && let Some(at) = self.sent_at
        {
            self.initialize = Some(at.elapsed());
        }
    }

    /// The agent answered `initialize` (a result or an error).
    pub(super) fn initialize_answered(
        &mut self,
        result: &Result<Box<serde_json::value::RawValue>, acp::Error>,
    ) {
        self.stop_clock();
        match result {
            Ok(raw) => self.initialize_result = serde_json::from_str(raw.get()).ok(),
            Err(e) => self.initialize_error = Some(e.clone()),
        }
    }

    pub(super) fn not_json(&mut self, preview: &str) {
        if self.done {
            return;
        }
        self.not_json_lines += 1;
        if self.first_not_json.is_none() {
            self.first_not_json = Some(preview.to_owned());
        }
    }

    /// The start failed: the wait for `initialize` (if any) ends here.
    pub(super) fn failed(&mut self) {
        self.stop_clock();
    }

    /// Handed to `start()`'s caller: nothing after this belongs to the start.
    pub(super) fn finish(&mut self) -> StartTrace {
        self.done = true;
        self.clone()
    }
}
