//! Unix: every open is relative to a directory fd, one component at a time, with `O_NOFOLLOW`.
//!
//! `Roots::resolve` checks a path; between that check and the use, anyone who can write inside
//! the root could swap a folder or the file for a symlink to elsewhere. Here a symlink met on
//! the way is refused (`FsError::SymlinkSwapped`), never followed: a canonical path has none,
//! so any symlink seen now appeared after the check. Renames inside the walked folders cannot
//! redirect us either, since we hold the folders' fds, not their names.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::error::{FsError, write_error};

/// A folder opened without following symlinks, with its path for messages.
pub(crate) struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

/// What is at a name in a folder (not following a symlink there).
pub(crate) enum Entry {
    Missing,
    File(FileMeta),
    Symlink,
    Other(&'static str),
}

pub(crate) struct FileMeta {
    mode: u32,
    uid: u32,
    gid: u32,
}

impl FileMeta {
    /// No write bit for anyone. Looked at in the mode itself because root passes every
    /// permission check: a file someone made read-only must stay so even for root.
    pub(crate) fn is_read_only(&self) -> bool {
        self.mode & 0o222 == 0
    }
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// New folders: `rwx` for all, narrowed by the umask like any folder the user's tools create.
const NEW_DIR_MODE: u32 = 0o777;
/// A new file: `rw` for all, narrowed by the umask, as an editor would create it.
pub(crate) const NEW_FILE_MODE: u32 = 0o666;
/// A temp file replacing an existing one starts private; it gets the old file's mode just before
/// the rename.
pub(crate) const REPLACEMENT_TEMP_MODE: u32 = 0o600;

impl Dir {
    /// Opens a canonical root by walking it from `/` without following symlinks.
    pub(crate) fn open_root(root: &Path) -> Result<Dir, FsError> {
        let fd = rustix::fs::openat(rustix::fs::CWD, "/", DIR_FLAGS, Mode::empty())
            .map_err(|e| FsError::io("open the folder", "/", e.into()))?;
        let mut dir = Dir {
            fd,
            path: PathBuf::from("/"),
        };
        for c in root.components() {
            match c {
                Component::RootDir => {}
                Component::Normal(name) => dir = dir.child(name, false)?,
                _ => {
                    return Err(FsError::InvalidPath {
                        path: root.to_owned(),
                        reason: "a session folder must be canonical",
                    });
                }
            }
        }
        Ok(dir)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The folder `name` in this one; created (and then opened, still without following) when
    /// missing and `create` is set.
    pub(crate) fn child(&self, name: &OsStr, create: bool) -> Result<Dir, FsError> {
        let path = self.path.join(name);
        let mut made = false;
        loop {
            match rustix::fs::openat(&self.fd, name, DIR_FLAGS, Mode::empty()) {
                Ok(fd) => return Ok(Dir { fd, path }),
                Err(Errno::NOENT) if create && !made => {
                    match rustix::fs::mkdirat(
                        &self.fd,
                        name,
                        Mode::from_bits_truncate(mode_bits(NEW_DIR_MODE)),
                    ) {
                        // Someone else made it first: fine, open whatever is there now
                        // (a symlink is still refused by the open).
                        Ok(()) => {
                            made = true;
                            // The new folder's entry is in this folder: fsync it, or a crash
                            // could lose the folder (and the file the write then puts in it)
                            // after the write reported success.
                            rustix::fs::fsync(&self.fd).map_err(|e| {
                                write_error(
                                    "record the new folder on disk (fsync)",
                                    &path,
                                    e.into(),
                                )
                            })?;
                        }
                        Err(Errno::EXIST) => made = true,
                        Err(e) => return Err(write_error("create the folder", &path, e.into())),
                    }
                }
                Err(Errno::NOENT) => return Err(FsError::NotFound { path }),
                Err(e) => return Err(self.refused(name, path, "open the folder", e)),
            }
        }
    }

    /// Opens the regular file `name` for reading, without following a symlink.
    pub(crate) fn open_read(&self, name: &OsStr) -> Result<(File, u64), FsError> {
        let path = self.path.join(name);
        // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever; it
        // changes nothing for regular files, and anything else is refused below.
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
        let fd = match rustix::fs::openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Err(FsError::NotFound { path }),
            Err(e) => return Err(self.refused(name, path, "open", e)),
        };
        let st = rustix::fs::fstat(&fd)
            .map_err(|e| FsError::io("read the metadata of", &path, e.into()))?;
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => {}
            other => {
                return Err(FsError::NotAFile {
                    path,
                    what: describe(other),
                });
            }
        }
        let size = u64::try_from(st.st_size).unwrap_or(0);
        Ok((File::from(fd), size))
    }

    /// What is at `name`, without following a symlink.
    pub(crate) fn entry(&self, name: &OsStr) -> Result<Entry, FsError> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(match FileType::from_raw_mode(st.st_mode) {
                FileType::RegularFile => Entry::File(FileMeta {
                    mode: raw_mode(st.st_mode),
                    uid: st.st_uid,
                    gid: st.st_gid,
                }),
                FileType::Symlink => Entry::Symlink,
                other => Entry::Other(describe(other)),
            }),
            Err(Errno::NOENT) => Ok(Entry::Missing),
            Err(e) => Err(FsError::io("look at", self.path.join(name), e.into())),
        }
    }

    /// Whether we may write the existing file `name` in place (the OS's own check, for users
    /// other than root; root passes it, which is why `FileMeta::is_read_only` exists).
    pub(crate) fn may_write(&self, name: &OsStr) -> bool {
        !matches!(
            rustix::fs::accessat(
                &self.fd,
                name,
                rustix::fs::Access::WRITE_OK,
                AtFlags::empty()
            ),
            Err(Errno::ACCESS | Errno::PERM | Errno::ROFS)
        )
    }

    /// Creates `name` exclusively (never an existing file, never through a symlink).
    pub(crate) fn create_new(&self, name: &OsStr, mode: u32) -> io::Result<File> {
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            flags,
            Mode::from_bits_truncate(mode_bits(mode)),
        )?;
        Ok(File::from(fd))
    }

    pub(crate) fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        Ok(rustix::fs::renameat(&self.fd, from, &self.fd, to)?)
    }

    pub(crate) fn remove(&self, name: &OsStr) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())?)
    }

    /// Makes a rename in this folder durable.
    pub(crate) fn sync(&self) -> io::Result<()> {
        Ok(rustix::fs::fsync(&self.fd)?)
    }

    /// An open that failed: a symlink at `name` means it was swapped in after the check.
    /// O_NOFOLLOW reports a symlink as ELOOP on Linux, EMLINK on FreeBSD, ENOTDIR with
    /// O_DIRECTORY on some systems: look at what is there rather than trust the errno.
    fn refused(&self, name: &OsStr, path: PathBuf, op: &'static str, e: Errno) -> FsError {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                FsError::SymlinkSwapped { path }
            }
            // A file where the path needs a folder (`notes.txt/x`): the agent's path is wrong.
            Ok(_) if e == Errno::NOTDIR => FsError::InvalidPath {
                path,
                reason: "a part of it is a file, not a folder; check the path",
            },
            _ => FsError::io(op, path, e.into()),
        }
    }
}

/// Gives the replacement the old file's owner (best effort: only root may, and a failure just
/// leaves us as the owner) and mode, owner first since chown clears setuid/setgid bits.
pub(crate) fn keep_mode(file: &File, old: &FileMeta) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let now = file.metadata()?;
    if (now.uid(), now.gid()) != (old.uid, old.gid) {
        let _ = std::os::unix::fs::fchown(file, Some(old.uid), Some(old.gid));
    }
    file.set_permissions(std::fs::Permissions::from_mode(old.mode & 0o7777))
}

fn describe(t: FileType) -> &'static str {
    match t {
        FileType::Directory => "a folder",
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO (named pipe)",
        FileType::Socket => "a socket",
        FileType::CharacterDevice | FileType::BlockDevice => "a device",
        _ => "not a regular file",
    }
}

// st_mode and mode_t are u32 on Linux but u16 on macOS and the BSDs.
#[allow(clippy::unnecessary_cast)]
fn raw_mode(m: rustix::fs::RawMode) -> u32 {
    m as u32
}

#[allow(clippy::unnecessary_cast)]
fn mode_bits(m: u32) -> rustix::fs::RawMode {
    (m & 0o7777) as rustix::fs::RawMode
}

/// The name itself, for temp file names built from it.
pub(crate) fn name_bytes(name: &OsStr) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    name.as_bytes().to_vec()
}

pub(crate) fn name_from_bytes(bytes: Vec<u8>) -> OsString {
    use std::os::unix::ffi::OsStringExt;
    OsString::from_vec(bytes)
}
