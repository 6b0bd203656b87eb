//! The client's file service: what answers an agent's `fs/read_text_file` and
//! `fs/write_text_file`.
//!
//! - [`Roots`] holds the session's folders; [`Roots::resolve`] says where a path really leads
//!   (absolute paths only; `..` and symlinks resolved) and whether a root holds it. Anything
//!   outside is refused unless the session, after asking the user, calls
//!   [`Resolved::approved_by_user`].
//! - [`read_text_file`] and [`write_text_file`] then walk the checked path again from the
//!   root, one folder fd at a time with `O_NOFOLLOW` (unix), so a symlink planted after the
//!   check is refused rather than followed. Other platforms use a plain-path fallback that does
//!   not have this guarantee (see `sys_other.rs`).
//! - Writes are atomic (temp file, fsync, rename, fsync of the folder) and return a
//!   [`WriteRecord`] (old text, hashes) that the session folds into the turn's [`ChangeSet`].
//! - [`FsError`] says what happened and what to do, and maps to the JSON-RPC error for the
//!   agent ([`FsError::jsonrpc_code`], [`FsError::to_acp_error`]).
//! - [`Compat`] holds per-agent quirks (Gemini CLI reads a missing file as empty text).
//!
//! Everything here is blocking: the session runs it off its owner task (`spawn_blocking`).

mod changes;
mod compat;
mod error;
mod read;
mod roots;
mod write;

#[cfg_attr(unix, path = "sys_unix.rs")]
#[cfg_attr(not(unix), path = "sys_other.rs")]
mod sys;

#[cfg(test)]
mod tests;

use std::ffi::OsStr;
use std::path::{Component, Path};

pub use changes::{Change, ChangeSet, ChangeSource};
pub use compat::Compat;
pub use error::{FsError, RESOURCE_NOT_FOUND};
pub use read::{MAX_READ_BYTES, SNIFF_BYTES, read_text_file};
pub use roots::{FolderId, Resolved, Roots};
pub use write::{
    ContentHash, MAX_BEFORE_BYTES, TEMP_MARKER, WriteRecord, is_temp_file_name, write_text_file,
};

/// Opens the folder holding `rel` below `root`, one component at a time without following
/// symlinks (creating missing folders when `create`), and returns it with the last name
/// (`None` when `rel` is empty, i.e. the root itself).
fn walk<'a>(
    root: &Path,
    rel: &'a Path,
    create: bool,
) -> Result<(sys::Dir, Option<&'a OsStr>), FsError> {
    let mut names = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(name) => names.push(name),
            // `Resolved` paths are canonical: anything else means one was built by hand.
            _ => {
                return Err(FsError::InvalidPath {
                    path: root.join(rel),
                    reason: "it is not canonical; resolve it with Roots::resolve first",
                });
            }
        }
    }
    let mut dir = sys::Dir::open_root(root)?;
    let Some((last, parents)) = names.split_last() else {
        return Ok((dir, None));
    };
    for name in parents {
        dir = dir.child(name, create)?;
    }
    Ok((dir, Some(*last)))
}
