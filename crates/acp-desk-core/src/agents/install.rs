//! Installing a registry agent's binary on the user's click: download the archive the registry
//! names for this platform into the data folder, check its SHA-256, extract it, make the
//! command executable, then launch it from there.
//!
//! Layout: `<data_dir>/agents/<id>/<version>/` is one installed version, complete by
//! construction: everything happens in `<data_dir>/agents/<id>/.installing-*` and the finished
//! folder is renamed into place as the last step, so a failure or a crash leaves no
//! `<version>` folder (a crash can leave an `.installing-*` folder, removed by the next install
//! of that agent). The folder holds `.acp-desk-install.json` (what was installed, from where,
//! which command), which is also what marks it as ours.
//!
//! Archives never write outside their folder: entries with absolute paths or `..` are refused,
//! nothing is written through a symbolic link, and links may not point outside.
//! Blocking throughout (network and disk): async callers run it on the blocking pool.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

use super::LaunchSpec;
use super::registry::{BinaryTarget, PLATFORMS, RegistryAgent, is_executable, safe_relative};

/// The marker file of a finished install, inside `<version>/`.
pub const INSTALL_MARKER: &str = ".acp-desk-install.json";
/// Prefix of the folders an install works in, beside the versions.
const STAGING_PREFIX: &str = ".installing-";
/// A staging folder older than this is a crashed install's leftover (an install in progress
/// touches its folder far more often than this).
const STALE_STAGING: Duration = Duration::from_secs(60 * 60);
/// Agent archives are tens of MB; a download past this is refused rather than filling the disk.
const MAX_DOWNLOAD_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// Extracted archives past this are refused (a decompression bomb, or the wrong file).
const MAX_EXTRACTED_BYTES: u64 = 8 * 1024 * 1024 * 1024;
/// Progress is reported at most this often while downloading (in bytes).
const PROGRESS_STEP: u64 = 256 * 1024;

/// What an install is doing, for a progress bar.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstallProgress {
    /// The registry id of the agent being installed.
    pub agent: String,
    pub phase: InstallPhase,
    /// Bytes of the archive downloaded so far.
    pub downloaded: u64,
    /// The archive's size, when the server said it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum InstallPhase {
    Downloading,
    Verifying,
    Extracting,
    /// Done: the agent can start.
    Installed,
}

/// Why an install did not happen. Every variant means nothing was installed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InstallError {
    #[error("no agent `{id}` in the {origin}; its agents: {known}")]
    UnknownAgent {
        id: String,
        origin: String,
        known: String,
    },
    #[error(
        "{agent} has no binary to install: it starts through {how}, which fetches it on first use"
    )]
    NotABinary { agent: String, how: String },
    #[error(
        "{agent} has no build for this platform ({platform}); the registry has binaries for {platforms} only"
    )]
    Unavailable {
        agent: String,
        platform: String,
        platforms: String,
    },
    #[error(
        "downloading {url} failed: the server answered HTTP {status}. Nothing was installed. {hint}"
    )]
    Http {
        url: String,
        status: u16,
        hint: &'static str,
    },
    #[error(
        "could not download {url}: {message}. Nothing was installed; check the network connection (and the proxy, if you use one) and try again."
    )]
    Network { url: String, message: String },
    #[error(
        "the download of {url} ended after {received} of {expected} bytes. Nothing was installed; try again."
    )]
    Truncated {
        url: String,
        received: u64,
        expected: u64,
    },
    #[error(
        "{url} is larger than {limit_mb} MB, more than any agent needs; refused, nothing was installed."
    )]
    TooLarge { url: String, limit_mb: u64 },
    #[error(
        "the download of {url} does not match the registry's SHA-256: expected {expected}, got {actual}. Nothing was installed: the file was damaged or replaced. Try again; if it persists, the registry entry or the release is wrong (tell the agent's publisher)."
    )]
    Sha256Mismatch {
        url: String,
        expected: String,
        actual: String,
    },
    #[error(
        "{url} has no SHA-256 in the registry and is not an https address, so nothing vouches for what it would download; refused. Import a registry file that gives its SHA-256."
    )]
    Unverifiable { url: String },
    #[error("{url} is not a readable {format} archive ({message}). Nothing was installed.")]
    BadArchive {
        url: String,
        format: &'static str,
        message: String,
    },
    #[error(
        "the archive {url} has an entry that would land outside its folder ({entry}); refused, nothing was installed."
    )]
    UnsafeEntry { url: String, entry: String },
    #[error(
        "the archive {url} has no {cmd}, the command the registry names (it has: {found}). Nothing was installed; the registry entry does not match the release."
    )]
    MissingCommand {
        url: String,
        cmd: String,
        found: String,
    },
    #[error("could not write {path}: {message}. Nothing was installed.")]
    Io { path: String, message: String },
}

/// Installs `agent`'s binary for `platform` under `data_dir` and returns how to start it.
/// Already installed: returns at once. Blocking (downloads).
pub fn install(
    agent: &RegistryAgent,
    platform: &str,
    data_dir: &Path,
    progress: &mut dyn FnMut(InstallProgress),
) -> Result<LaunchSpec, InstallError> {
    let target = target_for(agent, platform)?;
    let report = |progress: &mut dyn FnMut(InstallProgress), phase, downloaded, total| {
        progress(InstallProgress {
            agent: agent.id.clone(),
            phase,
            downloaded,
            total,
        });
    };
    if let Some(program) = installed_command(agent, target, data_dir) {
        report(progress, InstallPhase::Installed, 0, None);
        return Ok(spec(agent, target, program));
    }
    let url = target.archive.clone();
    if target.sha256.is_none() && !url.starts_with("https://") {
        return Err(InstallError::Unverifiable { url });
    }
    let kind = ArchiveKind::of(&url)?;
    let agent_dir = data_dir.join("agents").join(&agent.id);
    fs::create_dir_all(&agent_dir).map_err(|e| io_err(&agent_dir, e))?;
    remove_stale_staging(&agent_dir);
    let staging = Staging::create(&agent_dir, &agent.version)?;

    let download = staging.path.join("download");
    // With no SHA-256, https is all that vouches for the file: a redirect may not leave it.
    let https_only = target.sha256.is_none();
    let (actual, size) = fetch(&url, &download, https_only, &mut |downloaded, total| {
        report(progress, InstallPhase::Downloading, downloaded, total);
    })?;
    report(progress, InstallPhase::Verifying, size, Some(size));
    if let Some(expected) = &target.sha256
        && *expected != actual
    {
        return Err(InstallError::Sha256Mismatch {
            url,
            expected: expected.clone(),
            actual,
        });
    }
    report(progress, InstallPhase::Extracting, size, Some(size));
    let root = staging.path.join("root");
    fs::create_dir(&root).map_err(|e| io_err(&root, e))?;
    kind.extract(&download, &root, &url, &target.cmd)?;
    let cmd = find_command(&root, &target.cmd, &url)?;
    make_executable(&root.join(&cmd))?;
    let marker = serde_json::json!({
        "id": agent.id,
        "version": agent.version,
        "archive": url,
        "sha256": actual,
        "sha256Checked": target.sha256.is_some(),
        "cmd": cmd.to_string_lossy(),
        "installedAt": crate::audit::rfc3339(SystemTime::now()),
    });
    let marker_file = root.join(INSTALL_MARKER);
    // The archive may have a file (or a link) of that name: ours replaces it, never through it.
    if fs::symlink_metadata(&marker_file).is_ok() {
        fs::remove_file(&marker_file).map_err(|e| io_err(&marker_file, e))?;
    }
    write_synced(&marker_file, format!("{marker:#}\n").as_bytes())
        .map_err(|e| io_err(&marker_file, e))?;

    let dest = agent_dir.join(&agent.version);
    if let Err(e) = fs::rename(&root, &dest) {
        // Another install of the same version finished first: use it if it is whole, else
        // replace what is there (a version folder someone emptied by hand).
        if installed_command(agent, target, data_dir).is_none() {
            if dest.exists() {
                fs::remove_dir_all(&dest).map_err(|e| io_err(&dest, e))?;
            }
            fs::rename(&root, &dest).map_err(|_| io_err(&dest, e))?;
        }
    }
    #[cfg(unix)]
    if let Ok(d) = fs::File::open(&agent_dir) {
        // The rename is durable once the folder is.
        let _ = d.sync_all();
    }
    drop(staging);
    let program = installed_command(agent, target, data_dir).ok_or_else(|| InstallError::Io {
        path: dest.display().to_string(),
        message: "the installed command is not there after the install".into(),
    })?;
    report(progress, InstallPhase::Installed, size, Some(size));
    tracing::info!(agent = %agent.id, version = %agent.version, "registry agent installed");
    Ok(spec(agent, target, program))
}

/// Installs the registry agent `id` (from the registry [`super::registry::load`] uses under
/// `data_dir`) for this platform: what the window's Install and `agents install` do. Blocking.
pub fn install_by_id(
    data_dir: &Path,
    id: &str,
    progress: &mut dyn FnMut(InstallProgress),
) -> Result<LaunchSpec, InstallError> {
    let (index, _) = super::registry::load(data_dir);
    let Some(agent) = index.find(id) else {
        return Err(InstallError::UnknownAgent {
            id: id.into(),
            origin: index.origin(),
            known: index
                .agents
                .iter()
                .map(|a| a.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        });
    };
    install(
        agent,
        super::registry::current_platform(),
        data_dir,
        progress,
    )
}

/// The installed executable of `agent`'s `target`, if that version is installed (complete,
/// with its marker, the command there and executable). Blocking (looks at files).
pub fn installed_command(
    agent: &RegistryAgent,
    target: &BinaryTarget,
    data_dir: &Path,
) -> Option<PathBuf> {
    let dir = install_dir(data_dir, agent);
    let marker: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.join(INSTALL_MARKER)).ok()?).ok()?;
    // The marker names the command actually found (it may sit in the archive's one folder).
    let cmd = marker
        .get("cmd")
        .and_then(|c| c.as_str())
        .unwrap_or(&target.cmd);
    if !safe_relative(cmd) {
        return None;
    }
    let program = dir.join(cmd);
    if !is_executable(&program) {
        return None;
    }
    Some(std::path::absolute(&program).unwrap_or(program))
}

/// `<data_dir>/agents/<id>/<version>`.
pub fn install_dir(data_dir: &Path, agent: &RegistryAgent) -> PathBuf {
    data_dir.join("agents").join(&agent.id).join(&agent.version)
}

fn target_for<'a>(
    agent: &'a RegistryAgent,
    platform: &str,
) -> Result<&'a BinaryTarget, InstallError> {
    if let Some(t) = agent.distribution.binary.get(platform) {
        return Ok(t);
    }
    if agent.distribution.binary.is_empty() {
        let how = match (&agent.distribution.npx, &agent.distribution.uvx) {
            (Some(_), _) => "npx (Node.js)",
            (None, Some(_)) => "uvx (uv)",
            (None, None) => "no distribution ACP Desk knows",
        };
        return Err(InstallError::NotABinary {
            agent: agent.name.clone(),
            how: how.into(),
        });
    }
    let platforms: Vec<&str> = agent.binary_platforms();
    debug_assert!(platforms.iter().all(|p| PLATFORMS.contains(p)));
    Err(InstallError::Unavailable {
        agent: agent.name.clone(),
        platform: platform.into(),
        platforms: platforms.join(", "),
    })
}

fn spec(agent: &RegistryAgent, target: &BinaryTarget, program: PathBuf) -> LaunchSpec {
    LaunchSpec {
        name: agent.id.clone(),
        command: program.display().to_string(),
        args: target.args.clone(),
        env: target
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone().into()))
            .collect(),
        cwd: None,
    }
}

fn io_err(path: &Path, e: io::Error) -> InstallError {
    InstallError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// The working folder of one install; removed on drop (success or failure alike: by then
/// what is kept was renamed out of it).
struct Staging {
    path: PathBuf,
}

impl Staging {
    fn create(agent_dir: &Path, version: &str) -> Result<Staging, InstallError> {
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = agent_dir.join(format!(
            "{STAGING_PREFIX}{version}-{}-{nanos:x}",
            std::process::id()
        ));
        fs::create_dir(&path).map_err(|e| io_err(&path, e))?;
        Ok(Staging { path })
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if let Err(e) = fs::remove_dir_all(&self.path)
            && e.kind() != io::ErrorKind::NotFound
        {
            tracing::warn!(path = %self.path.display(), error = %e, "could not remove an install's working folder");
        }
    }
}

fn remove_stale_staging(agent_dir: &Path) {
    let Ok(entries) = fs::read_dir(agent_dir) else {
        return;
    };
    for entry in entries.flatten() {
        let stale = entry
            .file_name()
            .to_string_lossy()
            .starts_with(STAGING_PREFIX)
            && entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > STALE_STAGING);
        if stale && let Err(e) = fs::remove_dir_all(entry.path()) {
            tracing::warn!(path = %entry.path().display(), error = %e, "could not remove a crashed install's leftover");
        }
    }
}

fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = fs::File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

// ---------------------------------------------------------------------------------------------
// Download

/// Downloads `url` into `dest`; returns the lowercase hex SHA-256 and the size.
fn fetch(
    url: &str,
    dest: &Path,
    https_only: bool,
    progress: &mut dyn FnMut(u64, Option<u64>),
) -> Result<(String, u64), InstallError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_recv_response(Some(Duration::from_secs(60)))
        // Per read, not for the whole body: a large archive on a slow line may take long.
        .timeout_per_read(Some(Duration::from_secs(60)))
        .user_agent(concat!("acp-desk/", env!("CARGO_PKG_VERSION")))
        .https_only(https_only)
        .build()
        .into();
    let network = |e: ureq::Error| match e {
        ureq::Error::StatusCode(status) => InstallError::Http {
            url: url.into(),
            status,
            hint: match status {
                404 | 410 => {
                    "The release is gone: the registry entry is out of date; import a newer registry file."
                }
                401 | 403 => "The server refused the download.",
                500..=599 => "The server had a problem; try again later.",
                _ => "Try again later; if it persists, the registry entry may be out of date.",
            },
        },
        ureq::Error::RequireHttpsOnly(to) => InstallError::Network {
            url: url.into(),
            message: format!(
                "it redirects to {to}, not https, and with no SHA-256 in the registry only https downloads are accepted"
            ),
        },
        other => InstallError::Network {
            url: url.into(),
            message: other.to_string(),
        },
    };
    let mut response = agent.get(url).call().map_err(network)?;
    let total = response.body().content_length();
    if total.is_some_and(|t| t > MAX_DOWNLOAD_BYTES) {
        return Err(InstallError::TooLarge {
            url: url.into(),
            limit_mb: MAX_DOWNLOAD_BYTES / (1024 * 1024),
        });
    }
    let mut reader = response.body_mut().as_reader();
    let mut file = fs::File::create(dest).map_err(|e| io_err(dest, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut received: u64 = 0;
    let mut reported: u64 = 0;
    progress(0, total);
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                // With a Content-Length, a connection that ends early is a truncated download
                // (ureq says "unexpected EOF"); say it in those words.
                if let Some(expected) = total
                    && received < expected
                {
                    return Err(InstallError::Truncated {
                        url: url.into(),
                        received,
                        expected,
                    });
                }
                return Err(InstallError::Network {
                    url: url.into(),
                    message: e.to_string(),
                });
            }
        };
        let chunk = buf.get(..n).unwrap_or_default();
        received += n as u64;
        if received > MAX_DOWNLOAD_BYTES {
            return Err(InstallError::TooLarge {
                url: url.into(),
                limit_mb: MAX_DOWNLOAD_BYTES / (1024 * 1024),
            });
        }
        hasher.update(chunk);
        file.write_all(chunk).map_err(|e| io_err(dest, e))?;
        if received - reported >= PROGRESS_STEP {
            reported = received;
            progress(received, total);
        }
    }
    if let Some(expected) = total
        && received != expected
    {
        return Err(InstallError::Truncated {
            url: url.into(),
            received,
            expected,
        });
    }
    file.sync_all().map_err(|e| io_err(dest, e))?;
    progress(received, total);
    let digest = hasher.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok((hex, received))
}

// ---------------------------------------------------------------------------------------------
// Extraction

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArchiveKind {
    Zip,
    TarGz,
    TarBz2,
    Tar,
    /// The download is the executable itself.
    Raw,
}

impl ArchiveKind {
    /// From the address's path, as the registry's format does (`.zip`, `.tar.gz`/`.tgz`,
    /// `.tar.bz2`/`.tbz2`, else the raw executable).
    fn of(url: &str) -> Result<ArchiveKind, InstallError> {
        let path = url::Url::parse(url)
            .map(|u| u.path().to_ascii_lowercase())
            .unwrap_or_else(|_| url.to_ascii_lowercase());
        let kind = if path.ends_with(".zip") {
            ArchiveKind::Zip
        } else if path.ends_with(".tar.gz") || path.ends_with(".tgz") {
            ArchiveKind::TarGz
        } else if path.ends_with(".tar.bz2") || path.ends_with(".tbz2") {
            ArchiveKind::TarBz2
        } else if path.ends_with(".tar") {
            ArchiveKind::Tar
        } else if let Some(ext) = [
            ".tar.xz", ".txz", ".xz", ".zst", ".7z", ".rar", ".gz", ".bz2",
        ]
        .into_iter()
        .find(|e| path.ends_with(e))
        {
            return Err(InstallError::BadArchive {
                url: url.into(),
                format: "supported",
                message: format!(
                    "{ext} archives are not in the registry's format (.zip, .tar.gz, .tgz, .tar.bz2, .tbz2 or the executable itself)"
                ),
            });
        } else {
            ArchiveKind::Raw
        };
        Ok(kind)
    }

    fn name(self) -> &'static str {
        match self {
            ArchiveKind::Zip => "zip",
            ArchiveKind::TarGz => "tar.gz",
            ArchiveKind::TarBz2 => "tar.bz2",
            ArchiveKind::Tar => "tar",
            ArchiveKind::Raw => "raw",
        }
    }

    fn extract(self, file: &Path, root: &Path, url: &str, cmd: &str) -> Result<(), InstallError> {
        let open = || fs::File::open(file).map_err(|e| io_err(file, e));
        let ctx = Ctx {
            root,
            url,
            format: self.name(),
        };
        match self {
            ArchiveKind::Zip => extract_zip(open()?, &ctx),
            ArchiveKind::TarGz => extract_tar(flate2::read::GzDecoder::new(open()?), &ctx),
            ArchiveKind::TarBz2 => extract_tar(bzip2::read::BzDecoder::new(open()?), &ctx),
            ArchiveKind::Tar => extract_tar(open()?, &ctx),
            ArchiveKind::Raw => {
                let dest = root.join(cmd);
                if let Some(parent) = dest.parent() {
                    fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
                }
                fs::copy(file, &dest).map_err(|e| io_err(&dest, e))?;
                Ok(())
            }
        }
    }
}

struct Ctx<'a> {
    root: &'a Path,
    url: &'a str,
    format: &'static str,
}

impl Ctx<'_> {
    fn bad(&self, message: impl std::fmt::Display) -> InstallError {
        InstallError::BadArchive {
            url: self.url.into(),
            format: self.format,
            message: message.to_string(),
        }
    }
    fn unsafe_entry(&self, entry: &Path) -> InstallError {
        InstallError::UnsafeEntry {
            url: self.url.into(),
            entry: entry.display().to_string(),
        }
    }

    /// An entry's path, refused unless relative and without `..`.
    fn check_path(&self, entry: &Path) -> Result<(), InstallError> {
        let ok = entry
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if ok {
            Ok(())
        } else {
            Err(self.unsafe_entry(entry))
        }
    }

    /// Nothing is written through a symbolic link: every folder above `entry` that exists must
    /// be a real folder.
    fn check_no_link_above(&self, entry: &Path) -> Result<(), InstallError> {
        let mut at = self.root.to_path_buf();
        let parts: Vec<Component<'_>> = entry.components().collect();
        for c in parts.iter().take(parts.len().saturating_sub(1)) {
            at.push(c);
            match fs::symlink_metadata(&at) {
                Ok(m) if m.file_type().is_symlink() => return Err(self.unsafe_entry(entry)),
                _ => {}
            }
        }
        Ok(())
    }

    /// A link's target, relative to the link's folder, must stay inside the archive's folder.
    fn check_link(&self, entry: &Path, target: &Path) -> Result<(), InstallError> {
        let mut depth: i64 = entry
            .parent()
            .map_or(0, |p| {
                p.components()
                    .filter(|c| matches!(c, Component::Normal(_)))
                    .count()
            })
            .try_into()
            .unwrap_or(i64::MAX);
        // `..` only in front: after a name, `..` could climb out of a folder that is itself
        // a link elsewhere.
        let mut seen_name = false;
        for c in target.components() {
            match c {
                Component::Normal(_) => {
                    seen_name = true;
                    depth += 1;
                }
                Component::CurDir => {}
                Component::ParentDir if !seen_name => {
                    depth -= 1;
                    if depth < 0 {
                        return Err(self.unsafe_entry(entry));
                    }
                }
                _ => return Err(self.unsafe_entry(entry)),
            }
        }
        Ok(())
    }
}

fn extract_tar<R: Read>(reader: R, ctx: &Ctx<'_>) -> Result<(), InstallError> {
    let mut archive = tar::Archive::new(reader);
    archive.set_overwrite(true);
    let mut extracted: u64 = 0;
    for entry in archive.entries().map_err(|e| ctx.bad(e))? {
        let mut entry = entry.map_err(|e| ctx.bad(e))?;
        let path = entry.path().map_err(|e| ctx.bad(e))?.into_owned();
        ctx.check_path(&path)?;
        let kind = entry.header().entry_type();
        if kind.is_pax_global_extensions() {
            continue;
        }
        if kind.is_symlink() || kind.is_hard_link() {
            let target = entry
                .link_name()
                .map_err(|e| ctx.bad(e))?
                .ok_or_else(|| ctx.bad(format!("the link {} has no target", path.display())))?
                .into_owned();
            if kind.is_symlink() {
                ctx.check_link(&path, &target)?;
            } else {
                // A hard link's target is a path from the archive's top.
                ctx.check_path(&target)?;
            }
        } else if !(kind.is_file() || kind.is_dir() || kind.is_contiguous()) {
            return Err(ctx.bad(format!(
                "{} is a device, pipe or other special file, which no agent needs",
                path.display()
            )));
        }
        extracted = extracted.saturating_add(entry.size());
        if extracted > MAX_EXTRACTED_BYTES {
            return Err(ctx.bad("it unpacks to more than 8 GB"));
        }
        ctx.check_no_link_above(&path)?;
        // unpack_in also refuses to write outside `root` (it checks the real parent folder).
        match entry.unpack_in(ctx.root) {
            Ok(true) => {}
            Ok(false) => return Err(ctx.unsafe_entry(&path)),
            Err(e) => return Err(ctx.bad(format!("{}: {e}", path.display()))),
        }
    }
    Ok(())
}

fn extract_zip(file: fs::File, ctx: &Ctx<'_>) -> Result<(), InstallError> {
    let mut archive = zip::ZipArchive::new(io::BufReader::new(file)).map_err(|e| ctx.bad(e))?;
    let mut extracted: u64 = 0;
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(|e| ctx.bad(e))?;
        let raw_name = entry.name().map_err(|e| ctx.bad(e))?.into_owned();
        let Some(path) = entry.enclosed_name() else {
            return Err(ctx.unsafe_entry(Path::new(&raw_name)));
        };
        ctx.check_path(&path)?;
        // enclosed_name accepts `a/../b`; we do not (see check_path), on the raw name too.
        ctx.check_path(Path::new(&raw_name))?;
        ctx.check_no_link_above(&path)?;
        extracted = extracted.saturating_add(entry.size());
        if extracted > MAX_EXTRACTED_BYTES {
            return Err(ctx.bad("it unpacks to more than 8 GB"));
        }
        let dest = ctx.root.join(&path);
        if entry.is_dir() {
            fs::create_dir_all(&dest).map_err(|e| io_err(&dest, e))?;
            continue;
        }
        if let Some(parent) = dest.parent() {
            fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
        }
        if fs::symlink_metadata(&dest).is_ok() {
            // A later entry of the same name replaces the earlier, never through it.
            fs::remove_file(&dest).map_err(|e| io_err(&dest, e))?;
        }
        if entry.is_symlink() {
            let mut target = String::new();
            entry
                .read_to_string(&mut target)
                .map_err(|e| ctx.bad(format!("{}: {e}", path.display())))?;
            ctx.check_link(&path, Path::new(&target))?;
            make_symlink(Path::new(&target), &dest)?;
            continue;
        }
        let mut out = fs::File::create(&dest).map_err(|e| io_err(&dest, e))?;
        io::copy(&mut entry, &mut out).map_err(|e| ctx.bad(format!("{}: {e}", path.display())))?;
        #[cfg(unix)]
        if let Some(mode) = entry.unix_mode() {
            use std::os::unix::fs::PermissionsExt;
            // Permission bits only: no setuid/setgid/sticky from a download.
            fs::set_permissions(&dest, fs::Permissions::from_mode(mode & 0o777))
                .map_err(|e| io_err(&dest, e))?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn make_symlink(target: &Path, link: &Path) -> Result<(), InstallError> {
    std::os::unix::fs::symlink(target, link).map_err(|e| io_err(link, e))
}

#[cfg(not(unix))]
fn make_symlink(target: &Path, link: &Path) -> Result<(), InstallError> {
    // Windows needs a privilege for symbolic links; release archives for it do not use them.
    Err(io_err(
        link,
        io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "symbolic links (to {}) are not supported here",
                target.display()
            ),
        ),
    ))
}

/// The command, relative to `root`: where the registry says, or inside the archive's one
/// top folder (archives often wrap their files in one). Refused when it resolves outside.
fn find_command(root: &Path, cmd: &str, url: &str) -> Result<PathBuf, InstallError> {
    let relative: PathBuf = Path::new(cmd)
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect();
    let mut candidates = vec![relative.clone()];
    let top: Vec<PathBuf> = fs::read_dir(root)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    if let [only] = top.as_slice()
        && only.is_dir()
        && let Some(name) = only.file_name()
    {
        candidates.push(Path::new(name).join(&relative));
    }
    let real_root = root.canonicalize().map_err(|e| io_err(root, e))?;
    for c in candidates {
        let full = root.join(&c);
        if let Ok(real) = full.canonicalize()
            && real.is_file()
        {
            if !real.starts_with(&real_root) {
                return Err(InstallError::UnsafeEntry {
                    url: url.into(),
                    entry: c.display().to_string(),
                });
            }
            return Ok(c);
        }
    }
    let mut names: Vec<String> = top
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    names.sort();
    let found = if names.is_empty() {
        "nothing".to_string()
    } else if names.len() > 10 {
        format!("{}, and {} more", names[..10].join(", "), names.len() - 10)
    } else {
        names.join(", ")
    };
    Err(InstallError::MissingCommand {
        url: url.into(),
        cmd: cmd.into(),
        found,
    })
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<(), InstallError> {
    use std::os::unix::fs::PermissionsExt;
    let real = path.canonicalize().map_err(|e| io_err(path, e))?;
    let mode = fs::metadata(&real)
        .map_err(|e| io_err(&real, e))?
        .permissions()
        .mode();
    fs::set_permissions(&real, fs::Permissions::from_mode((mode & 0o777) | 0o755))
        .map_err(|e| io_err(&real, e))
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> Result<(), InstallError> {
    Ok(())
}

#[cfg(test)]
#[path = "install_tests.rs"]
mod tests;
