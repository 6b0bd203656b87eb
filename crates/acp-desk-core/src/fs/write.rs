//! `fs/write_text_file`: atomic replacement, never a half-written file.
//!
//! The new text goes to a temp file in the target's folder, is flushed to disk, gets the old
//! file's mode, and is renamed over the target; then the folder is flushed. A crash (even
//! SIGKILL) at any moment leaves the old file or the new one, never a mix. What a crash can
//! leave behind is the temp file, named `.{name}.acpdesk-tmp-{16 hex digits}` (see
//! [`is_temp_file_name`]) next to the target; on a failure we can see, it is removed.
//!
//! Replacing by rename gives the file a new inode: hard links to the old file keep the old text,
//! and extended attributes and ACLs are not carried over (mode and, for root, owner are).

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use super::error::{FsError, is_disk_full};
use super::roots::Resolved;
use super::sys::{self, Dir, Entry};

/// Old text kept in a [`WriteRecord`]: 8 MiB. Enough for any source file an agent edits, so
/// the change can be shown and undone; past it only the hash is kept, so a turn that rewrites
/// big generated files does not hold them all in memory.
pub const MAX_BEFORE_BYTES: u64 = 8 * 1024 * 1024;

/// Marks our temp files: `.{name}.acpdesk-tmp-{16 hex}`.
pub const TEMP_MARKER: &str = ".acpdesk-tmp-";

/// Bytes of the target's name kept in the temp file's name. File names are at most 255 bytes
/// on the common file systems; the marker and the suffix take 30.
const TEMP_NAME_KEEP: usize = 200;

/// Tries at a free temp name before giving up. Names are unique per process and time, so a
/// clash means leftovers of a crashed run with the same pid; a few tries get past them.
const TEMP_NAME_TRIES: u64 = 16;

/// The new text is written in pieces of this size so that a failure (a fault in tests, a full
/// disk in life) can happen partway, as it does on a real disk; the size does not matter for
/// speed beyond a few KiB.
const WRITE_CHUNK: usize = 1024 * 1024;

/// SHA-256 of a file's bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContentHash(pub [u8; 32]);

impl ContentHash {
    pub fn of(bytes: &[u8]) -> Self {
        ContentHash(Sha256::digest(bytes).into())
    }

    pub fn to_hex(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ContentHash({self})")
    }
}

/// What one write changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteRecord {
    /// The canonical path written.
    pub path: PathBuf,
    /// The old text: `None` when the file was created, or when it was larger than
    /// `MAX_BEFORE_BYTES` or not UTF-8 (then only `before_hash` is known).
    pub before: Option<String>,
    /// Hash of the old bytes; `None` when the file was created.
    pub before_hash: Option<ContentHash>,
    pub after_hash: ContentHash,
    pub created: bool,
}

/// The steps of a write, for fault injection in tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    CreateTemp,
    /// Before each piece of the new text.
    Write,
    SetMode,
    SyncFile,
    Rename,
    SyncFolder,
}

/// Called before each step; an error is taken as that step's failure. Lets tests make a
/// write fail the way root cannot otherwise provoke (a full disk, a failing fsync).
pub(crate) trait FaultHook {
    fn before(&self, step: Step) -> io::Result<()>;
}

struct NoFaults;

impl FaultHook for NoFaults {
    fn before(&self, _: Step) -> io::Result<()> {
        Ok(())
    }
}

/// Writes `content` to the resolved file, byte for byte (line endings and BOM as given),
/// atomically (see the module doc). Missing folders on the way are created, below the root
/// only. An existing file keeps its mode (and, when we are root, its owner); a file with no
/// write bit in its mode is refused (`ReadOnly`) even for root, as is one the OS would not let
/// us write in place. On any failure before the rename the old file is untouched and the temp
/// file removed. A failure to flush the folder after the rename is only logged: the new text
/// is already in place and visible, so reporting the write as failed would be false; what is
/// lost is the guarantee that the rename survives a power cut.
pub fn write_text_file(resolved: &Resolved, content: &str) -> Result<WriteRecord, FsError> {
    write_with_hook(resolved, content, &NoFaults)
}

pub(crate) fn write_with_hook(
    resolved: &Resolved,
    content: &str,
    hook: &dyn FaultHook,
) -> Result<WriteRecord, FsError> {
    let path = resolved.path().to_owned();
    let (root, rel) = resolved.anchor()?;
    let (dir, name) = super::walk(root, rel, true)?;
    let name = name.ok_or_else(|| FsError::NotAFile {
        path: path.clone(),
        what: "a folder",
    })?;

    let old = match dir.entry(name)? {
        Entry::Missing => None,
        Entry::Symlink => return Err(FsError::SymlinkSwapped { path }),
        Entry::Other(what) => return Err(FsError::NotAFile { path, what }),
        Entry::File(meta) => {
            if meta.is_read_only() || !dir.may_write(name) {
                return Err(FsError::ReadOnly { path });
            }
            Some(meta)
        }
    };
    let (before, before_hash) = match old {
        Some(_) => {
            let (text, hash) = read_before(&dir, name)?;
            (text, Some(hash))
        }
        None => (None, None),
    };

    let step_err = |step: &'static str, e: io::Error| {
        if is_disk_full(&e) {
            FsError::DiskFull { path: path.clone() }
        } else {
            FsError::WriteFailed {
                step,
                path: path.clone(),
                source: e,
            }
        }
    };

    let mode = if old.is_some() {
        sys::REPLACEMENT_TEMP_MODE
    } else {
        sys::NEW_FILE_MODE
    };
    hook.before(Step::CreateTemp)
        .map_err(|e| step_err("create a temporary file", e))?;
    let (mut file, temp) =
        create_temp(&dir, name, mode).map_err(|e| step_err("create a temporary file", e))?;
    let guard = TempGuard {
        dir: &dir,
        name: &temp,
    };

    for piece in content.as_bytes().chunks(WRITE_CHUNK) {
        hook.before(Step::Write)
            .and_then(|()| file.write_all(piece))
            .map_err(|e| step_err("write the new text", e))?;
    }
    if let Some(meta) = &old {
        hook.before(Step::SetMode)
            .and_then(|()| sys::keep_mode(&file, meta))
            .map_err(|e| step_err("give the new file the old one's permissions", e))?;
    }
    hook.before(Step::SyncFile)
        .and_then(|()| file.sync_all())
        .map_err(|e| step_err("flush the new text to disk (fsync)", e))?;
    drop(file);
    hook.before(Step::Rename)
        .and_then(|()| dir.rename(&temp, name))
        .map_err(|e| step_err("move the new file into place (rename)", e))?;
    std::mem::forget(guard);

    if let Err(e) = hook.before(Step::SyncFolder).and_then(|()| dir.sync()) {
        tracing::warn!(
            path = %path.display(),
            error = %e,
            "wrote the file, but flushing its folder failed: the change may not survive a power cut"
        );
    }

    Ok(WriteRecord {
        path,
        before,
        before_hash,
        after_hash: ContentHash::of(content.as_bytes()),
        created: old.is_none(),
    })
}

/// The old file's text (when small enough and UTF-8) and hash, streamed.
fn read_before(dir: &Dir, name: &OsStr) -> Result<(Option<String>, ContentHash), FsError> {
    let (mut file, size) = dir.open_read(name)?;
    let path = dir.path().join(name);
    let mut hasher = Sha256::new();
    let mut kept: Option<Vec<u8>> = (size <= MAX_BEFORE_BYTES).then(Vec::new);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(FsError::io("read the current text of", &path, e)),
        };
        let piece = &buf[..n];
        hasher.update(piece);
        if let Some(k) = &mut kept {
            if (k.len() + n) as u64 > MAX_BEFORE_BYTES {
                kept = None;
            } else {
                k.extend_from_slice(piece);
            }
        }
    }
    let text = kept.and_then(|k| String::from_utf8(k).ok());
    Ok((text, ContentHash(hasher.finalize().into())))
}

/// Removes the temp file unless the rename took it.
struct TempGuard<'a> {
    dir: &'a Dir,
    name: &'a OsStr,
}

impl Drop for TempGuard<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.dir.remove(self.name) {
            tracing::warn!(
                path = %self.dir.path().join(self.name).display(),
                error = %e,
                "could not remove a temporary file after a failed write"
            );
        }
    }
}

fn create_temp(dir: &Dir, target: &OsStr, mode: u32) -> io::Result<(std::fs::File, OsString)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
    for _ in 0..TEMP_NAME_TRIES {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = temp_name(target, unique_suffix(n));
        match dir.create_new(&name, mode) {
            Ok(f) => return Ok((f, name)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// 64 bits from the pid, a per-process counter and the clock: unique across our own
/// concurrent writes, and across processes unless a pid is reused within a clock tick.
fn unique_suffix(counter: u64) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let pid = u64::from(std::process::id());
    // A multiplicative mix (splitmix64's constants) so close inputs give unrelated names.
    let mut x = nanos ^ pid.rotate_left(32) ^ counter.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

pub(crate) fn temp_name(target: &OsStr, suffix: u64) -> OsString {
    let mut bytes = vec![b'.'];
    let name = sys::name_bytes(target);
    bytes.extend_from_slice(&name[..name.len().min(TEMP_NAME_KEEP)]);
    bytes.extend_from_slice(TEMP_MARKER.as_bytes());
    bytes.extend_from_slice(format!("{suffix:016x}").as_bytes());
    sys::name_from_bytes(bytes)
}

/// Whether a file name is one of our temp files (what a crash may leave next to a target; a
/// folder watcher should ignore these).
pub fn is_temp_file_name(name: &OsStr) -> bool {
    let name = name.to_string_lossy();
    let Some(at) = name.rfind(TEMP_MARKER) else {
        return false;
    };
    let suffix = &name[at + TEMP_MARKER.len()..];
    name.starts_with('.') && suffix.len() == 16 && suffix.bytes().all(|b| b.is_ascii_hexdigit())
}
