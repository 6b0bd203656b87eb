//! What can go wrong in the file service, worded for the person reading the agent's transcript,
//! and how each case travels back to the agent as a JSON-RPC error.

use std::io;
use std::path::PathBuf;

use agent_client_protocol_schema::v1 as acp;

use crate::jsonrpc::codes;

/// `-32002`, the ACP spec's "Resource not found" (absent from `jsonrpc::codes`, which holds the
/// plain JSON-RPC codes).
pub const RESOURCE_NOT_FOUND: i32 = -32002;

/// Every message says what happened and what to do. Front ends and the session match on the
/// variant, never on the text.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    #[error(
        "`{path}` is a relative path; ACP file requests must use absolute paths (resend it as an absolute path)"
    )]
    Relative { path: PathBuf },

    #[error("`{path}` cannot be used: {reason}")]
    InvalidPath { path: PathBuf, reason: &'static str },

    #[error(
        "`{path}` is outside this session's folders; add its folder to the session (or approve this access) and retry"
    )]
    OutsideRoots { path: PathBuf },

    #[error("`{path}` does not exist; check the path (to create it, write it)")]
    NotFound { path: PathBuf },

    #[error("`{path}` is {what}, not a regular file; only regular files can be read or written")]
    NotAFile { path: PathBuf, what: &'static str },

    #[error(
        "`{path}` looks binary (NUL byte at offset {offset}); only UTF-8 text files can be read as text (if it is UTF-16, convert it to UTF-8)"
    )]
    Binary { path: PathBuf, offset: u64 },

    #[error(
        "`{path}` is not valid UTF-8 (at line {line}); only UTF-8 text files can be read as text (convert it to UTF-8, or read another range with line/limit)"
    )]
    InvalidUtf8 { path: PathBuf, line: u64 },

    #[error(
        "`{path}` is too large to read at once ({size} bytes, the limit is {limit}); read it in parts with line/limit"
    )]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },

    #[error(
        "`{path}` is read-only (no write permission in its mode); make it writable (chmod u+w) if it should change, then retry"
    )]
    ReadOnly { path: PathBuf },

    /// A symlink appeared on the path after it was checked (or the path leads through a symlink
    /// to somewhere that was not checked): refused rather than followed.
    #[error(
        "`{path}` changed into a symbolic link after it was checked, so it was not followed; check what replaced it, then retry"
    )]
    SymlinkSwapped { path: PathBuf },

    /// The folder the user was asked to add to the session is no longer the one shown (a part
    /// of its path was replaced, e.g. by a symbolic link, while the question was open).
    #[error(
        "`{path}` changed while the user was asked to add it to the session (it was replaced, perhaps by a symbolic link), so it was not added; ask again if it is still needed"
    )]
    FolderChanged { path: PathBuf },

    #[error(
        "the disk is full: `{path}` could not be written and was left unchanged; free space and retry"
    )]
    DiskFull { path: PathBuf },

    /// A step of an atomic write failed before the rename: nothing was changed.
    #[error("could not write `{path}`: {step} failed ({source}); the file was left unchanged; {hint}", hint = io_hint(source))]
    WriteFailed {
        step: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    #[error("could not {op} `{path}`: {source}; {hint}", hint = io_hint(source))]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

fn io_hint(e: &io::Error) -> &'static str {
    match e.kind() {
        io::ErrorKind::PermissionDenied => {
            "check the permissions of the file and its folders, then retry"
        }
        io::ErrorKind::NotADirectory => {
            "a file is in the way where a folder is expected; check the path"
        }
        io::ErrorKind::IsADirectory => {
            "a folder is in the way where a file is expected; check the path"
        }
        io::ErrorKind::ReadOnlyFilesystem => {
            "the file system is mounted read-only; the change cannot be made there"
        }
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => "free space and retry",
        _ => "check the path and the disk, then retry",
    }
}

impl FsError {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        FsError::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// The JSON-RPC error code for the agent. `NotFound` is the spec's `-32002` "Resource not
    /// found" (what agents test for before creating a file). A relative path or an unusable one
    /// is the agent's mistake in the request itself, so `-32602` invalid params; everything else
    /// is a refusal or a failure on our side of a well-formed request: `-32603` internal error,
    /// with our message saying which.
    pub fn jsonrpc_code(&self) -> i32 {
        match self {
            FsError::NotFound { .. } => RESOURCE_NOT_FOUND,
            FsError::Relative { .. } | FsError::InvalidPath { .. } => codes::INVALID_PARAMS,
            _ => codes::INTERNAL_ERROR,
        }
    }

    /// The JSON-RPC error message: the spec's fixed "Resource not found" for `-32002` (agents
    /// may compare it), our full message otherwise.
    pub fn jsonrpc_message(&self) -> String {
        match self {
            FsError::NotFound { .. } => "Resource not found".to_owned(),
            other => other.to_string(),
        }
    }

    /// The error object to answer the agent's request with: code and message as above, and
    /// `data: {"path", "details"}` so the full explanation also reaches agents on `-32002`.
    pub fn to_acp_error(&self) -> acp::Error {
        let path = self.path().display().to_string();
        acp::Error::new(self.jsonrpc_code(), self.jsonrpc_message())
            .data(serde_json::json!({ "path": path, "details": self.to_string() }))
    }

    /// The path the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            FsError::Relative { path }
            | FsError::InvalidPath { path, .. }
            | FsError::OutsideRoots { path }
            | FsError::NotFound { path }
            | FsError::NotAFile { path, .. }
            | FsError::Binary { path, .. }
            | FsError::InvalidUtf8 { path, .. }
            | FsError::TooLarge { path, .. }
            | FsError::ReadOnly { path }
            | FsError::SymlinkSwapped { path }
            | FsError::FolderChanged { path }
            | FsError::DiskFull { path }
            | FsError::WriteFailed { path, .. }
            | FsError::Io { path, .. } => path,
        }
    }
}

/// Whether an I/O error means "no space left" (`ENOSPC`, or a quota, `EDQUOT`): both leave the
/// user the same thing to do.
pub(crate) fn is_disk_full(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded
    )
}

/// An I/O error while writing `path`, as `DiskFull` when that is what it is.
pub(crate) fn write_error(op: &'static str, path: &std::path::Path, e: io::Error) -> FsError {
    if is_disk_full(&e) {
        FsError::DiskFull {
            path: path.to_owned(),
        }
    } else {
        FsError::io(op, path, e)
    }
}
