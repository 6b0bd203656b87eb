//! The session's folders, and where a path the agent names really leads.
//!
//! Resolution is the *check*; the *use* (read, write) walks the checked path again from the root
//! with symlinks refused (see `sys`), so a symlink planted in between is not followed.

use std::io;
use std::path::{Component, Path, PathBuf};

use super::error::FsError;

/// Longest chain of dangling symlinks followed while resolving a path that does not exist yet:
/// Linux's own limit (`MAXSYMLINKS`, 40), so we give up exactly where the kernel would (a loop).
const MAX_SYMLINK_HOPS: u32 = 40;

/// The session's folders: its `cwd` and the folders added to it, each canonical (absolute,
/// symlinks resolved) since creation.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    roots: Vec<PathBuf>,
}

/// Where a path leads: `path` is canonical (symlinks and `..` resolved; a part that does not
/// exist yet appended as given), `root` the session folder holding it, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    requested: PathBuf,
    path: PathBuf,
    root: Option<PathBuf>,
    approved_outside: bool,
}

impl Roots {
    /// The session's roots: `cwd` first, then `added`. Each must be an existing folder.
    pub fn new<P: AsRef<Path>>(
        cwd: impl AsRef<Path>,
        added: impl IntoIterator<Item = P>,
    ) -> Result<Self, FsError> {
        let mut roots = Roots::default();
        roots.add_root(cwd)?;
        for p in added {
            roots.add_root(p)?;
        }
        Ok(roots)
    }

    /// Adds a folder (canonicalized now; a folder already present is not added twice).
    pub fn add_root(&mut self, path: impl AsRef<Path>) -> Result<(), FsError> {
        let path = path.as_ref();
        if !path.is_absolute() {
            return Err(FsError::Relative {
                path: path.to_owned(),
            });
        }
        let canonical = std::fs::canonicalize(path).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => FsError::NotFound {
                path: path.to_owned(),
            },
            _ => FsError::io("open the session folder", path, e),
        })?;
        if !canonical.is_dir() {
            return Err(FsError::InvalidPath {
                path: path.to_owned(),
                reason: "a session folder must be a folder, and this is a file",
            });
        }
        if !self.roots.contains(&canonical) {
            self.roots.push(canonical);
        }
        Ok(())
    }

    /// Adds `folder` as the user saw it when asked: it must still be canonical (no part of it
    /// replaced by a symbolic link since) and still the same folder (`id`, from
    /// [`FolderId::of`] at asking time). Otherwise [`FsError::FolderChanged`], and nothing is
    /// added: adding whatever the path leads to now would grant a folder nobody was asked about.
    pub fn add_checked_root(&mut self, folder: &Path, id: FolderId) -> Result<(), FsError> {
        let changed = || FsError::FolderChanged {
            path: folder.to_owned(),
        };
        let canonical = std::fs::canonicalize(folder).map_err(|_| changed())?;
        if canonical != folder || FolderId::of(folder) != Some(id) {
            return Err(changed());
        }
        if !self.roots.contains(&canonical) {
            self.roots.push(canonical);
        }
        Ok(())
    }

    /// The canonical roots, `cwd` first.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Where `path` leads and which root holds it. Relative paths are refused (ACP paths are
    /// absolute). `..` and symlinks are resolved; for a path that does not exist yet, the
    /// deepest existing ancestor is canonicalized and the rest appended, which must then be
    /// plain names (`missing/../x` is refused, as the OS itself cannot walk through a missing
    /// folder). A dangling symlink is followed to where it points, as a write would create it.
    /// Nested roots: the deepest root holding the path is the one reported.
    pub fn resolve(&self, path: impl AsRef<Path>) -> Result<Resolved, FsError> {
        let requested = path.as_ref();
        if !requested.is_absolute() {
            return Err(FsError::Relative {
                path: requested.to_owned(),
            });
        }
        let canonical = canonical_target(requested)?;
        let root = self
            .roots
            .iter()
            .filter(|r| canonical.starts_with(r))
            .max_by_key(|r| r.components().count())
            .cloned();
        Ok(Resolved {
            requested: requested.to_owned(),
            path: canonical,
            root,
            approved_outside: false,
        })
    }
}

/// Which folder a path is, as the file system knows it (device and inode on unix), so a folder
/// swapped for another (or for a symlink) under the same name is told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FolderId {
    #[cfg(unix)]
    dev: u64,
    #[cfg(unix)]
    ino: u64,
}

impl FolderId {
    /// `None` unless `path` is a folder itself (a symlink to one is not: it is not followed).
    pub fn of(path: &Path) -> Option<FolderId> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        if !meta.is_dir() {
            return None;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(FolderId {
                dev: meta.dev(),
                ino: meta.ino(),
            })
        }
        // Elsewhere only the canonical-path check of `add_checked_root` applies.
        #[cfg(not(unix))]
        Some(FolderId {})
    }
}

impl Resolved {
    /// The path as the agent sent it.
    pub fn requested(&self) -> &Path {
        &self.requested
    }

    /// The canonical path that will be read or written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The session folder holding it, `None` when it is outside every root.
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    pub fn is_inside(&self) -> bool {
        self.root.is_some()
    }

    /// For a path outside the roots that the user has allowed: reads and writes then walk it
    /// from the file system's root, still refusing symlinks that appear after the check; a
    /// write creates the missing folders on the way too (the user approved the path).
    /// Only the session calls this, after asking; nothing outside the roots is ever used
    /// without it.
    pub fn approved_by_user(mut self) -> Resolved {
        if self.root.is_none() {
            self.root = self.path.ancestors().last().map(Path::to_path_buf);
            self.approved_outside = true;
        }
        self
    }

    /// Whether the user's approval is what lets it be used.
    pub fn is_approved_outside(&self) -> bool {
        self.approved_outside
    }

    /// The root to walk from and the path below it; refused when outside (and not approved).
    pub(crate) fn anchor(&self) -> Result<(&Path, &Path), FsError> {
        let outside = || FsError::OutsideRoots {
            path: self.path.clone(),
        };
        let root = self.root.as_deref().ok_or_else(outside)?;
        let rel = self.path.strip_prefix(root).map_err(|_| outside())?;
        Ok((root, rel))
    }
}

/// The canonical form of an absolute path that may not exist yet.
fn canonical_target(path: &Path) -> Result<PathBuf, FsError> {
    let mut current = path.to_path_buf();
    for _ in 0..=MAX_SYMLINK_HOPS {
        match split_existing(&current, path)? {
            Step::Done(p) => return Ok(p),
            Step::Dangling(next) => current = next,
        }
    }
    Err(FsError::InvalidPath {
        path: path.to_owned(),
        reason: "it leads through too many symbolic links (a loop?); fix the links",
    })
}

enum Step {
    Done(PathBuf),
    /// A dangling symlink on the way: resolve again from where it points.
    Dangling(PathBuf),
}

fn split_existing(path: &Path, requested: &Path) -> Result<Step, FsError> {
    let comps: Vec<Component<'_>> = path.components().collect();
    // Longest prefix first: the common case (the file exists) costs one canonicalize.
    for n in (1..=comps.len()).rev() {
        let prefix: PathBuf = comps[..n].iter().collect();
        let rest = &comps[n..];
        match std::fs::canonicalize(&prefix) {
            Ok(mut canonical) => {
                for c in rest {
                    match c {
                        Component::Normal(name) => canonical.push(name),
                        Component::CurDir => {}
                        _ => {
                            return Err(FsError::InvalidPath {
                                path: requested.to_owned(),
                                reason: "it has `..` after a folder that does not exist; \
                                         remove the `..` or create the folder first",
                            });
                        }
                    }
                }
                return Ok(Step::Done(canonical));
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                let is_link = std::fs::symlink_metadata(&prefix)
                    .map(|m| m.file_type().is_symlink())
                    .unwrap_or(false);
                if is_link {
                    let target = std::fs::read_link(&prefix)
                        .map_err(|e| FsError::io("read the symbolic link", &prefix, e))?;
                    // A relative target is relative to the link's folder; an absolute one
                    // replaces everything (PathBuf::join does exactly that).
                    let mut next = prefix.parent().unwrap_or(&prefix).join(target);
                    next.extend(rest.iter().map(|c| c.as_os_str()));
                    return Ok(Step::Dangling(next));
                }
            }
            Err(e) => return Err(FsError::io("resolve", requested, e)),
        }
    }
    Err(FsError::NotFound {
        path: requested.to_owned(),
    })
}
