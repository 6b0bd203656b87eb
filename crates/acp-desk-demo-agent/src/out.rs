//! The single stdout writer and the JSON-RPC envelopes.
//!
//! Every message is written as one whole line under one lock, so turn threads and the
//! dispatcher can never interleave bytes of different messages.

use std::io::{self, BufWriter, Stdout, Write};
use std::sync::{Mutex, MutexGuard, PoisonError};

use agent_client_protocol_schema::v1::{SessionId, SessionNotification, SessionUpdate};
use serde::Serialize;
use serde_json::Value;

use crate::journal::Journal;

#[derive(Serialize)]
struct Notification<'a, P> {
    jsonrpc: &'static str,
    method: &'a str,
    params: P,
}

#[derive(Serialize)]
struct Request<'a, P> {
    jsonrpc: &'static str,
    id: u64,
    method: &'a str,
    params: P,
}

#[derive(Serialize)]
struct Success<'a, R> {
    jsonrpc: &'static str,
    id: &'a Value,
    result: R,
}

#[derive(Serialize)]
struct Failure<'a> {
    jsonrpc: &'static str,
    id: &'a Value,
    error: &'a RpcError,
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, Serialize)]
pub struct RpcError {
    pub code: i32,
    pub message: String,
}

impl RpcError {
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
        }
    }
    pub fn invalid_params(message: impl std::fmt::Display) -> Self {
        RpcError::new(-32602, format!("Invalid params: {message}"))
    }
    pub fn method_not_found(method: &str) -> Self {
        RpcError::new(-32601, format!("Method not found: {method}"))
    }
}

pub struct Out {
    inner: Mutex<BufWriter<Stdout>>,
    /// The sessions' conversations, noted from the updates written here (a load's replay is
    /// written past it, with [`Out::replay`]).
    pub journal: Journal,
}

impl Out {
    pub fn stdout(journal: Journal) -> Self {
        Out {
            // Large enough that the flood writes few syscalls.
            inner: Mutex::new(BufWriter::with_capacity(256 * 1024, io::stdout())),
            journal,
        }
    }

    pub fn lock(&self) -> MutexGuard<'_, BufWriter<Stdout>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes `line` (which must not contain a newline) plus a newline, then flushes.
    pub fn line(&self, line: &[u8]) -> io::Result<()> {
        let mut w = self.lock();
        w.write_all(line)?;
        w.write_all(b"\n")?;
        w.flush()
    }

    fn message<T: Serialize>(&self, msg: &T) -> io::Result<()> {
        // Serialized before locking so a serialization error cannot leave half a line.
        let bytes = serde_json::to_vec(msg)?;
        self.line(&bytes)
    }

    pub fn respond<R: Serialize>(&self, id: &Value, result: R) -> io::Result<()> {
        self.message(&Success {
            jsonrpc: "2.0",
            id,
            result,
        })
    }

    pub fn respond_error(&self, id: &Value, error: &RpcError) -> io::Result<()> {
        self.message(&Failure {
            jsonrpc: "2.0",
            id,
            error,
        })
    }

    pub fn request<P: Serialize>(&self, id: u64, method: &str, params: P) -> io::Result<()> {
        self.message(&Request {
            jsonrpc: "2.0",
            id,
            method,
            params,
        })
    }

    pub fn update(&self, session_id: &SessionId, update: SessionUpdate) -> io::Result<()> {
        self.journal.note(&session_id.0, &update);
        self.notify(
            "session/update",
            SessionNotification::new(session_id.clone(), update),
        )
    }

    /// A `session/update` that is not noted in the journal: a replay of what it holds.
    pub fn replay(&self, session_id: &SessionId, update: SessionUpdate) -> io::Result<()> {
        self.notify(
            "session/update",
            SessionNotification::new(session_id.clone(), update),
        )
    }

    /// A `session/update` whose `update` object is written as given, unvalidated.
    pub fn raw_update(&self, session_id: &SessionId, update: &Value) -> io::Result<()> {
        self.notify(
            "session/update",
            serde_json::json!({"sessionId": session_id, "update": update}),
        )
    }

    pub fn notify<P: Serialize>(&self, method: &str, params: P) -> io::Result<()> {
        self.message(&Notification {
            jsonrpc: "2.0",
            method,
            params,
        })
    }

    pub fn flush(&self) {
        let _ = self.lock().flush();
    }
}

/// Logs to stderr without panicking when stderr is closed (unlike `eprintln!`).
#[macro_export]
macro_rules! log {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "demo-agent: {}", format_args!($($arg)*));
    }};
}
