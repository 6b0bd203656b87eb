//! Small files of our own (the app's state, and the like) replaced atomically, and corrupt ones
//! set aside instead of overwritten.
//!
//! For files ACP Desk owns in its config and data folders, not for the agent's writes into a
//! project (those go through [`crate::fs`], which also keeps the old file's mode and works on
//! folder handles). Blocking: async callers run these on the blocking pool.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Tries at a free temp name: names are unique per process and time, so a clash means the
/// leftover of a crashed run with the same pid.
const TEMP_NAME_TRIES: usize = 16;

/// Replaces `path` with `bytes`: a temp file in the same folder (created if missing), fsync,
/// rename over `path`, fsync of the folder (unix). A crash at any moment leaves the old file or
/// the new one, never a mix; what it can leave is the temp file, named like
/// [`crate::fs::write_text_file`]'s (`.{name}.acpdesk-tmp-{16 hex}`, see
/// [`crate::fs::is_temp_file_name`]). On an error we see, the temp file is removed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} has no file name", path.display()),
        )
    })?;
    std::fs::create_dir_all(dir)?;
    let (mut file, tmp) = create_temp(dir, name)?;
    let result = (|| {
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)?;
        // The rename is durable only once the folder is; without this a crash could bring the
        // old file back after we reported success.
        #[cfg(unix)]
        std::fs::File::open(dir)?.sync_all()?;
        Ok(())
    })();
    if result.is_err()
        && let Err(e) = std::fs::remove_file(&tmp)
        && e.kind() != io::ErrorKind::NotFound
    {
        tracing::warn!(path = %tmp.display(), error = %e, "could not remove a temporary file after a failed write");
    }
    result
}

fn create_temp(dir: &Path, name: &std::ffi::OsStr) -> io::Result<(std::fs::File, PathBuf)> {
    let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
    for _ in 0..TEMP_NAME_TRIES {
        let mut tmp_name = OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(crate::fs::TEMP_MARKER);
        tmp_name.push(format!("{:016x}", unique_suffix()));
        let tmp = dir.join(tmp_name);
        // create_new: never truncate a file someone else is writing.
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// 64 bits from the clock, the pid and a per-process counter, mixed (splitmix64's finaliser)
/// so that close inputs give unrelated names.
pub(crate) fn unique_suffix() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let counter = COUNTER.fetch_add(1, Ordering::Relaxed);
    let pid = u64::from(std::process::id());
    let mut x = nanos ^ pid.rotate_left(32) ^ counter.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Renames a file we could not parse to `<path>.bad-<unix secs>` (`-1`, `-2`, ... appended when
/// that name is taken) so that it is kept for the user to look at, never silently dropped or
/// overwritten. Returns where it went.
pub fn set_aside(path: &Path) -> io::Result<PathBuf> {
    set_aside_as(path, "bad")
}

/// [`set_aside`] as `<path>.<label>-<unix secs>` (the history's damaged database is `corrupt`).
pub fn set_aside_as(path: &Path, label: &str) -> io::Result<PathBuf> {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{label}-{secs}"));
    let mut target = PathBuf::from(&name);
    let mut n = 1;
    // symlink_metadata: a dangling link of that name is taken too.
    while target.symlink_metadata().is_ok() {
        let mut alt = name.clone();
        alt.push(format!("-{n}"));
        target = PathBuf::from(alt);
        n += 1;
    }
    std::fs::rename(path, &target)?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writes_replaces_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sub").join("state.json");
        write_atomic(&file, b"one").unwrap();
        write_atomic(&file, b"two").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"two");
        assert_eq!(names(&dir.path().join("sub")), vec!["state.json"]);
    }

    #[test]
    fn a_failed_write_is_an_error_and_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        // A file where the folder should be: fails even for root.
        let blocker = dir.path().join("blocker");
        std::fs::write(&blocker, b"not a folder").unwrap();
        assert!(write_atomic(&blocker.join("state.json"), b"x").is_err());
        assert_eq!(std::fs::read(&blocker).unwrap(), b"not a folder");
        // The rename fails (a folder in the target's place): the temp file is removed.
        let target = dir.path().join("state.json");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("keep"), b"").unwrap();
        assert!(write_atomic(&target, b"x").is_err());
        assert_eq!(names(dir.path()), vec!["blocker", "state.json"]);
    }

    #[test]
    fn temp_names_are_ours() {
        let dir = tempfile::tempdir().unwrap();
        let (_f, tmp) = create_temp(dir.path(), std::ffi::OsStr::new("state.json")).unwrap();
        assert!(crate::fs::is_temp_file_name(tmp.file_name().unwrap()));
    }

    #[test]
    fn set_aside_keeps_every_bad_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state.json");
        std::fs::write(&file, b"first").unwrap();
        let a = set_aside(&file).unwrap();
        std::fs::write(&file, b"second").unwrap();
        let b = set_aside(&file).unwrap();
        assert_ne!(a, b);
        assert!(!file.exists());
        assert_eq!(std::fs::read(&a).unwrap(), b"first");
        assert_eq!(std::fs::read(&b).unwrap(), b"second");
        let a_name = a.file_name().unwrap().to_string_lossy().into_owned();
        let secs = a_name.strip_prefix("state.json.bad-").unwrap();
        assert!(secs.bytes().all(|c| c.is_ascii_digit()), "{a_name}");
    }
}
