//! Non-unix fallback (Windows): plain std path operations.
//!
//! NOT safe against a swap between check and use: each step checks that no symlink is at the
//! name and then opens the name by path, so a symlink (or junction) planted in between is
//! followed. Unverified: it compiles and passes clippy for x86_64-pc-windows-gnu, but no test
//! has run it. Making it sound needs handle-relative opens (`NtCreateFile` with a root directory
//! handle, or `GetFinalPathNameByHandle` after opening), left for the Windows port.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use super::error::{FsError, write_error};

pub(crate) struct Dir {
    path: PathBuf,
}

pub(crate) enum Entry {
    Missing,
    File(FileMeta),
    Symlink,
    Other(&'static str),
}

pub(crate) struct FileMeta {
    read_only: bool,
}

impl FileMeta {
    pub(crate) fn is_read_only(&self) -> bool {
        self.read_only
    }
}

/// Modes do not exist here; the values only keep the callers platform-neutral.
pub(crate) const NEW_FILE_MODE: u32 = 0o666;
pub(crate) const REPLACEMENT_TEMP_MODE: u32 = 0o600;

impl Dir {
    pub(crate) fn open_root(root: &Path) -> Result<Dir, FsError> {
        match std::fs::symlink_metadata(root) {
            Ok(m) if m.is_dir() => Ok(Dir {
                path: root.to_owned(),
            }),
            Ok(_) => Err(FsError::SymlinkSwapped {
                path: root.to_owned(),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(FsError::NotFound {
                path: root.to_owned(),
            }),
            Err(e) => Err(FsError::io("open the folder", root, e)),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn child(&self, name: &OsStr, create: bool) -> Result<Dir, FsError> {
        let path = self.path.join(name);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => Err(FsError::SymlinkSwapped { path }),
            Ok(m) if m.is_dir() => Ok(Dir { path }),
            Ok(_) => Err(FsError::io(
                "open the folder",
                path,
                io::Error::from(io::ErrorKind::NotADirectory),
            )),
            Err(e) if e.kind() == io::ErrorKind::NotFound && create => {
                match std::fs::create_dir(&path) {
                    Ok(()) => Ok(Dir { path }),
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(Dir { path }),
                    Err(e) => Err(write_error("create the folder", &path, e)),
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(FsError::NotFound { path }),
            Err(e) => Err(FsError::io("open the folder", path, e)),
        }
    }

    pub(crate) fn open_read(&self, name: &OsStr) -> Result<(File, u64), FsError> {
        let path = self.path.join(name);
        match self.entry(name)? {
            Entry::Missing => return Err(FsError::NotFound { path }),
            Entry::Symlink => return Err(FsError::SymlinkSwapped { path }),
            Entry::Other(what) => return Err(FsError::NotAFile { path, what }),
            Entry::File(_) => {}
        }
        let file = File::open(&path).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => FsError::NotFound { path: path.clone() },
            _ => FsError::io("open", &path, e),
        })?;
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        Ok((file, size))
    }

    pub(crate) fn entry(&self, name: &OsStr) -> Result<Entry, FsError> {
        let path = self.path.join(name);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => Ok(Entry::Symlink),
            Ok(m) if m.is_file() => Ok(Entry::File(FileMeta {
                read_only: m.permissions().readonly(),
            })),
            Ok(m) if m.is_dir() => Ok(Entry::Other("a folder")),
            Ok(_) => Ok(Entry::Other("not a regular file")),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Entry::Missing),
            Err(e) => Err(FsError::io("look at", path, e)),
        }
    }

    pub(crate) fn may_write(&self, _name: &OsStr) -> bool {
        true
    }

    pub(crate) fn create_new(&self, name: &OsStr, _mode: u32) -> io::Result<File> {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.path.join(name))
    }

    pub(crate) fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        std::fs::rename(self.path.join(from), self.path.join(to))
    }

    pub(crate) fn remove(&self, name: &OsStr) -> io::Result<()> {
        std::fs::remove_file(self.path.join(name))
    }

    /// std cannot flush a folder here; the rename is as durable as the OS makes it.
    pub(crate) fn sync(&self) -> io::Result<()> {
        Ok(())
    }
}

/// A writable file's attributes need no copying (a read-only one is refused before).
pub(crate) fn keep_mode(_file: &File, _old: &FileMeta) -> io::Result<()> {
    Ok(())
}

pub(crate) fn name_bytes(name: &OsStr) -> Vec<u8> {
    name.to_string_lossy().into_owned().into_bytes()
}

pub(crate) fn name_from_bytes(bytes: Vec<u8>) -> OsString {
    OsString::from(String::from_utf8_lossy(&bytes).into_owned())
}
