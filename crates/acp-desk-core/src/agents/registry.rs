//! The public ACP registry (`agentclientprotocol/registry`): its combined file (`registry.json`,
//! `{version, agents: [...], extensions: [...]}`) read and checked, the dated snapshot ACP Desk
//! ships (`data/acp-registry-snapshot.json`, built by `scripts/build-registry-snapshot.py`), a
//! newer file imported from disk into the data folder, and how a registry agent starts on this
//! platform (npx, uvx, or a binary installed by [`super::install`]).
//!
//! Reading is lenient where the registry may grow and strict where a mistake would run the
//! wrong thing: unknown fields are ignored (the registry adds some, e.g. `preview`), but an
//! agent whose id, version or launch is wrong is skipped with a [`ConfigProblem`] naming the
//! agent and the field, and the other agents are still used. A file that is not a registry at
//! all is a [`RegistryError`] that says what it looks like instead.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::SystemTime;

use serde_json::Value;
use serde_json::value::RawValue;

use super::{ConfigProblem, LaunchSpec, ProblemSeverity};

/// The six platform keys of `distribution.binary`, as the registry spells them.
pub const PLATFORMS: [&str; 6] = [
    "darwin-aarch64",
    "darwin-x86_64",
    "linux-aarch64",
    "linux-x86_64",
    "windows-aarch64",
    "windows-x86_64",
];

/// The snapshot, embedded so that registry agents are listed with no network and no setup.
const SNAPSHOT_JSON: &str = include_str!("../../data/acp-registry-snapshot.json");
/// How problems in the embedded snapshot name their file.
const SNAPSHOT_FILE: &str = "crates/acp-desk-core/data/acp-registry-snapshot.json";

/// A registry file larger than this is refused unread: the real one is about 100 KB, so a
/// file this size is the wrong file, and reading it whole would only cost memory.
const MAX_REGISTRY_BYTES: u64 = 16 * 1024 * 1024;

/// Archive kinds the registry forbids (installers): refused when reading, not at download.
const INSTALLER_SUFFIXES: [&str; 5] = [".dmg", ".pkg", ".deb", ".rpm", ".msi"];

/// Every agent of one registry file, and where the file came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryIndex {
    /// The file's `version` (the registry format's, `1.0.0` today).
    pub version: String,
    /// The usable agents, in the file's order.
    pub agents: Vec<RegistryAgent>,
    pub source: RegistrySource,
}

/// Where a [`RegistryIndex`] came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistrySource {
    /// The snapshot built into ACP Desk, from this commit of `agentclientprotocol/registry`,
    /// dated (`YYYY-MM-DD`) by that commit.
    Snapshot { commit: String, date: String },
    /// A file the user imported (`import`): `file` is where it was imported from, `copy` the
    /// copy in the data folder that is read, `imported_at` RFC 3339 (UTC).
    Imported {
        file: String,
        copy: PathBuf,
        imported_at: String,
    },
}

/// Which kind of source, for the UI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RegistrySourceKind {
    Snapshot,
    Imported,
}

/// A summary of the registry in use, for the listing (no launch details in it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistryInfo {
    pub kind: RegistrySourceKind,
    /// What to show: "ACP registry snapshot 2026-02-07 (3de1678)", "ACP registry imported
    /// from FILE on DATE".
    pub label: String,
    /// The snapshot's commit of `agentclientprotocol/registry`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The snapshot's date (`YYYY-MM-DD`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// The imported file (where it was imported from).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// When it was imported (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub imported_at: Option<String>,
    /// How many agents it lists that ACP Desk can use.
    pub agents: u32,
}

/// One agent of the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryAgent {
    /// `^[a-z][a-z0-9-]*$`: also a folder name in the data folder.
    pub id: String,
    pub name: String,
    /// Semantic version (`1.2.3`, maybe with a suffix): also a folder name.
    pub version: String,
    pub description: String,
    pub repository: Option<String>,
    pub website: Option<String>,
    pub authors: Vec<String>,
    /// SPDX identifier or `proprietary`.
    pub license: Option<String>,
    /// The icon's address (the registry's build sets it).
    pub icon: Option<String>,
    pub distribution: Distribution,
}

/// How an agent is distributed: at least one of the three is there.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Distribution {
    pub npx: Option<PackageDist>,
    pub uvx: Option<PackageDist>,
    /// By platform key (one of [`PLATFORMS`]).
    pub binary: BTreeMap<String, BinaryTarget>,
}

/// An npm (npx) or PyPI (uvx) package that is the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageDist {
    /// The package, maybe with a version (`@scope/name@1.2.3`, `name==1.2.3`).
    pub package: String,
    /// The package's executable to run, when it is not the package's default one.
    pub cmd: Option<String>,
    pub args: Vec<String>,
    /// Merged over the user's environment. Values never leave the engine (names only).
    pub env: BTreeMap<String, String>,
}

/// One platform's binary: an archive to download and the command in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryTarget {
    /// http(s) address of a .zip, .tar.gz/.tgz, .tar.bz2/.tbz2, or the raw executable.
    pub archive: String,
    /// Lowercase hex SHA-256 of the archive, when the registry gives one.
    pub sha256: Option<String>,
    /// The executable, relative to the extracted archive (`./codex-acp`); checked to stay in it.
    pub cmd: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
}

/// Which distribution a launch uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DistributionKind {
    Npx,
    Uvx,
    Binary,
}

/// How a registry agent starts on one platform, given what is installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryLaunch {
    /// It can start: through npx or uvx (which fetch the package on first use), or an
    /// installed binary.
    Ready {
        spec: LaunchSpec,
        kind: DistributionKind,
    },
    /// It starts through `runner` (`npx` or `uvx`), which is not on PATH; `hint` says how to
    /// install it. `spec` is what would run.
    NeedsRunner {
        runner: &'static str,
        spec: LaunchSpec,
        hint: String,
    },
    /// A binary for this platform that is not installed yet ([`super::install::install`]).
    NotInstalled { target: BinaryTarget, hint: String },
    /// No distribution for this platform: binaries only for `platforms`.
    Unavailable {
        platforms: Vec<String>,
        hint: String,
    },
}

impl RegistryLaunch {
    /// What to tell the user about this launch, if anything.
    pub fn hint(&self) -> Option<&str> {
        match self {
            RegistryLaunch::Ready { .. } => None,
            RegistryLaunch::NeedsRunner { hint, .. }
            | RegistryLaunch::NotInstalled { hint, .. }
            | RegistryLaunch::Unavailable { hint, .. } => Some(hint),
        }
    }
}

/// A registry file that cannot be used at all (nothing in it is read).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("could not read the registry file {file}: {message}")]
    Read { file: String, message: String },
    #[error(
        "{file}:{line}:{column}: this is not JSON ({message}). A registry file is the ACP registry's registry.json."
    )]
    NotJson {
        file: String,
        line: u32,
        column: u32,
        message: String,
    },
    #[error(
        "{file} is not an ACP registry file: {reason}. Expected the registry's combined file (registry.json: {{\"version\": \"1.0.0\", \"agents\": [...]}})."
    )]
    NotRegistry { file: String, reason: String },
    #[error("{file}: none of its {count} agents can be used; the first problem: {first}")]
    NoUsableAgent {
        file: String,
        count: usize,
        first: String,
        problems: Vec<ConfigProblem>,
    },
    #[error("could not save the imported registry file to {file}: {message}")]
    Write { file: String, message: String },
}

impl RegistryError {
    /// The same, as one problem of the file (for a listing's problems): the file and place
    /// in their own fields, not repeated in the message.
    pub fn to_problem(&self) -> ConfigProblem {
        let (file, line, column, message) = match self {
            RegistryError::Read { file, message } => {
                (file, None, None, format!("could not read it: {message}"))
            }
            RegistryError::NotJson {
                file,
                line,
                column,
                message,
            } => (
                file,
                Some(*line),
                Some(*column),
                format!(
                    "this is not JSON ({message}). A registry file is the ACP registry's registry.json."
                ),
            ),
            RegistryError::NotRegistry { file, reason } => (
                file,
                None,
                None,
                format!(
                    "not an ACP registry file: {reason}. Expected the registry's combined file \
                     (registry.json: {{\"version\": \"1.0.0\", \"agents\": [...]}})."
                ),
            ),
            RegistryError::NoUsableAgent {
                file, count, first, ..
            } => (
                file,
                None,
                None,
                format!("none of its {count} agents can be used; the first problem: {first}"),
            ),
            RegistryError::Write { file, message } => {
                (file, None, None, format!("could not save it: {message}"))
            }
        };
        ConfigProblem {
            file: file.clone(),
            line,
            column,
            field: None,
            message,
            severity: ProblemSeverity::Error,
        }
    }
}

/// What [`parse`] found in one registry file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedRegistry {
    pub version: String,
    pub agents: Vec<RegistryAgent>,
    /// Skipped agents and parts (errors), ignored parts (warnings).
    pub problems: Vec<ConfigProblem>,
    /// How many entries the file's `agents` list has (usable or not).
    pub listed: usize,
    /// `_source.commit` and `_source.date`, written by our snapshot builder.
    pub built_from: Option<(String, String)>,
}

/// This machine's platform key (`linux-x86_64`, ...), or `unknown` on one the registry does
/// not build for (then every binary is unavailable; npx and uvx still work).
pub fn current_platform() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("macos", "aarch64") => "darwin-aarch64",
        ("macos", "x86_64") => "darwin-x86_64",
        ("linux", "aarch64") => "linux-aarch64",
        ("linux", "x86_64") => "linux-x86_64",
        ("windows", "aarch64") => "windows-aarch64",
        ("windows", "x86_64") => "windows-x86_64",
        _ => "unknown",
    }
}

/// The snapshot built into ACP Desk (parsed once). Its problems, if any, are logged: a test
/// keeps the embedded file free of them.
pub fn snapshot() -> RegistryIndex {
    static SNAPSHOT: OnceLock<RegistryIndex> = OnceLock::new();
    SNAPSHOT
        .get_or_init(|| {
            let parsed = match parse(SNAPSHOT_FILE, SNAPSHOT_JSON) {
                Ok(p) => p,
                Err(e) => {
                    tracing::error!(error = %e, "the built-in ACP registry snapshot does not parse");
                    ParsedRegistry {
                        version: String::new(),
                        agents: Vec::new(),
                        problems: Vec::new(),
                        listed: 0,
                        built_from: None,
                    }
                }
            };
            for p in &parsed.problems {
                tracing::error!(problem = %p, "a problem in the built-in ACP registry snapshot");
            }
            let (commit, date) = parsed
                .built_from
                .unwrap_or_else(|| ("unknown".into(), "unknown".into()));
            RegistryIndex {
                version: parsed.version,
                agents: parsed.agents,
                source: RegistrySource::Snapshot { commit, date },
            }
        })
        .clone()
}

/// Where an imported registry file is kept: `<data_dir>/registry/registry.json`.
pub fn imported_file(data_dir: &Path) -> PathBuf {
    data_dir.join("registry").join("registry.json")
}

/// What we know of the import, beside the copy (the copy stays byte for byte the user's file).
fn imported_meta_file(data_dir: &Path) -> PathBuf {
    data_dir.join("registry").join("imported.json")
}

/// The registry in use: the imported file when there is one and it can be used, else the
/// snapshot. Blocking (reads a file). The problems are those of the file used, and, when an
/// imported file had to be passed over, why.
pub fn load(data_dir: &Path) -> (RegistryIndex, Vec<ConfigProblem>) {
    let copy = imported_file(data_dir);
    if !copy.exists() {
        return (snapshot(), Vec::new());
    }
    let copy_name = copy.display().to_string();
    match read_limited(&copy).and_then(|text| parse(&copy_name, &text)) {
        Ok(parsed) if !parsed.agents.is_empty() => {
            let (file, imported_at) = read_meta(data_dir);
            let index = RegistryIndex {
                version: parsed.version,
                agents: parsed.agents,
                source: RegistrySource::Imported {
                    file: file.unwrap_or_else(|| copy_name.clone()),
                    copy,
                    imported_at: imported_at.unwrap_or_else(|| "unknown".into()),
                },
            };
            (index, parsed.problems)
        }
        other => {
            let why = match other {
                Ok(parsed) => no_usable_agent(&copy_name, parsed.listed, parsed.problems),
                Err(e) => e,
            };
            let snap = snapshot();
            let mut problem = why.to_problem();
            problem.message = format!(
                "{} The built-in {} is used instead; import a registry file again to replace it.",
                problem.message,
                label(&snap.source)
            );
            (snap, vec![problem])
        }
    }
}

/// Imports a registry file: reads and checks it, then copies it (unchanged) into the data
/// folder, where [`load`] prefers it over the snapshot. Blocking. Nothing is copied unless
/// at least one agent in it can be used; the problems of the others come back with it.
pub fn import(
    file: &Path,
    data_dir: &Path,
) -> Result<(RegistryIndex, Vec<ConfigProblem>), RegistryError> {
    let name = file.display().to_string();
    let text = read_limited(file)?;
    let parsed = parse(&name, &text)?;
    if parsed.agents.is_empty() {
        return Err(no_usable_agent(&name, parsed.listed, parsed.problems));
    }
    let copy = imported_file(data_dir);
    let write_err = |target: &Path, e: std::io::Error| RegistryError::Write {
        file: target.display().to_string(),
        message: e.to_string(),
    };
    crate::atomic_file::write_atomic(&copy, text.as_bytes()).map_err(|e| write_err(&copy, e))?;
    let imported_at = crate::audit::rfc3339(SystemTime::now());
    // Absolute, so the label still names the file when the CLI ran elsewhere.
    let from = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let meta = serde_json::json!({
        "importedFrom": from.display().to_string(),
        "importedAt": imported_at,
    });
    let meta_file = imported_meta_file(data_dir);
    crate::atomic_file::write_atomic(&meta_file, format!("{meta:#}\n").as_bytes())
        .map_err(|e| write_err(&meta_file, e))?;
    Ok((
        RegistryIndex {
            version: parsed.version,
            agents: parsed.agents,
            source: RegistrySource::Imported {
                file: from.display().to_string(),
                copy,
                imported_at,
            },
        },
        parsed.problems,
    ))
}

fn no_usable_agent(file: &str, count: usize, problems: Vec<ConfigProblem>) -> RegistryError {
    RegistryError::NoUsableAgent {
        file: file.into(),
        count,
        first: problems
            .first()
            .map_or_else(|| "it lists no agents".into(), ToString::to_string),
        problems,
    }
}

fn read_meta(data_dir: &Path) -> (Option<String>, Option<String>) {
    let Ok(text) = std::fs::read_to_string(imported_meta_file(data_dir)) else {
        return (None, None);
    };
    let Ok(v) = serde_json::from_str::<Value>(&text) else {
        return (None, None);
    };
    let field = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    (field("importedFrom"), field("importedAt"))
}

fn read_limited(file: &Path) -> Result<String, RegistryError> {
    let name = file.display().to_string();
    let read_err = |message: String| RegistryError::Read {
        file: name.clone(),
        message,
    };
    let meta = std::fs::metadata(file).map_err(|e| read_err(e.to_string()))?;
    if !meta.is_file() {
        return Err(read_err("it is not a file".into()));
    }
    if meta.len() > MAX_REGISTRY_BYTES {
        return Err(RegistryError::NotRegistry {
            file: name.clone(),
            reason: format!(
                "it is {} MB, and a registry file is well under {} MB",
                meta.len() / (1024 * 1024),
                MAX_REGISTRY_BYTES / (1024 * 1024)
            ),
        });
    }
    let bytes = std::fs::read(file).map_err(|e| read_err(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| RegistryError::NotRegistry {
        file: name.clone(),
        reason: format!(
            "it is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ),
    })
}

/// "ACP registry snapshot 2026-02-07 (3de1678)" / "ACP registry imported from FILE on DATE".
fn label(source: &RegistrySource) -> String {
    match source {
        RegistrySource::Snapshot { commit, date } => {
            let short: String = commit.chars().take(7).collect();
            format!("ACP registry snapshot {date} ({short})")
        }
        RegistrySource::Imported {
            file, imported_at, ..
        } => {
            let day: String = imported_at.chars().take(10).collect();
            format!("ACP registry imported from {file} on {day}")
        }
    }
}

impl RegistryIndex {
    pub fn find(&self, id: &str) -> Option<&RegistryAgent> {
        self.agents.iter().find(|a| a.id == id)
    }

    /// Where its agents come from, for `AgentEntry::origin`.
    pub fn origin(&self) -> String {
        label(&self.source)
    }

    pub fn info(&self) -> RegistryInfo {
        let count = u32::try_from(self.agents.len()).unwrap_or(u32::MAX);
        match &self.source {
            RegistrySource::Snapshot { commit, date } => RegistryInfo {
                kind: RegistrySourceKind::Snapshot,
                label: self.origin(),
                commit: Some(commit.clone()),
                date: Some(date.clone()),
                file: None,
                imported_at: None,
                agents: count,
            },
            RegistrySource::Imported {
                file, imported_at, ..
            } => RegistryInfo {
                kind: RegistrySourceKind::Imported,
                label: self.origin(),
                commit: None,
                date: None,
                file: Some(file.clone()),
                imported_at: Some(imported_at.clone()),
                agents: count,
            },
        }
    }
}

impl RegistryAgent {
    /// How this agent starts on `platform` (a [`PLATFORMS`] key, usually
    /// [`current_platform`]), given what is installed under `data_dir` and the programs on
    /// `path` (`None`: this process's PATH). Blocking (looks at files).
    ///
    /// Preference: an installed binary, then npx, then uvx when their runner is found, then a
    /// binary to install, then npx/uvx with the runner missing; an agent with none of these
    /// for this platform is unavailable.
    pub fn launch(&self, platform: &str, data_dir: &Path, path: Option<&OsStr>) -> RegistryLaunch {
        let binary = self.distribution.binary.get(platform);
        if let Some(target) = binary
            && let Some(program) = super::install::installed_command(self, target, data_dir)
        {
            return RegistryLaunch::Ready {
                spec: self.spec(
                    program.display().to_string(),
                    target.args.clone(),
                    &target.env,
                ),
                kind: DistributionKind::Binary,
            };
        }
        let runners = [
            (DistributionKind::Npx, "npx", self.distribution.npx.as_ref()),
            (DistributionKind::Uvx, "uvx", self.distribution.uvx.as_ref()),
        ];
        let mut missing = None;
        for (kind, runner, dist) in runners {
            let Some(dist) = dist else { continue };
            let spec = self.package_spec(kind, dist);
            if find_program(runner, path).is_some() {
                return RegistryLaunch::Ready { spec, kind };
            }
            missing.get_or_insert((runner, spec));
        }
        if let Some(target) = binary {
            return RegistryLaunch::NotInstalled {
                target: target.clone(),
                hint: format!(
                    "Not installed: Install (or `acp-desk-cli agents install {}`) downloads {} into \
                     ACP Desk's data folder{}.",
                    self.id,
                    target.archive,
                    if target.sha256.is_some() {
                        " and checks its SHA-256"
                    } else {
                        " (the registry gives no SHA-256 for it; only an https download is accepted)"
                    }
                ),
            };
        }
        if let Some((runner, spec)) = missing {
            return RegistryLaunch::NeedsRunner {
                runner,
                spec,
                hint: runner_hint(runner),
            };
        }
        let platforms: Vec<String> = self.distribution.binary.keys().cloned().collect();
        let hint = format!(
            "No build for this platform ({platform}); {} has binaries for {} only.",
            self.name,
            platforms.join(", ")
        );
        RegistryLaunch::Unavailable { platforms, hint }
    }

    /// `npx -y <package> [args]` or `npx -y --package <package> <cmd> [args]`; `uvx <package>
    /// [args]` or `uvx --from <package> <cmd> [args]`.
    fn package_spec(&self, kind: DistributionKind, dist: &PackageDist) -> LaunchSpec {
        let mut args: Vec<String> = Vec::new();
        match kind {
            DistributionKind::Npx => {
                // -y: npx would otherwise ask on the agent's stdin whether to install.
                args.push("-y".into());
                if let Some(cmd) = &dist.cmd {
                    args.extend(["--package".into(), dist.package.clone(), cmd.clone()]);
                } else {
                    args.push(dist.package.clone());
                }
            }
            DistributionKind::Uvx | DistributionKind::Binary => {
                // `uvx name==1.2` is not a valid call: a version specifier needs --from.
                let cmd = dist.cmd.clone().or_else(|| {
                    (uv_requirement_name(&dist.package) != dist.package)
                        .then(|| uv_requirement_name(&dist.package).to_string())
                });
                match cmd {
                    Some(cmd) => args.extend(["--from".into(), dist.package.clone(), cmd]),
                    None => args.push(dist.package.clone()),
                }
            }
        }
        args.extend(dist.args.iter().cloned());
        let runner = if kind == DistributionKind::Npx {
            "npx"
        } else {
            "uvx"
        };
        self.spec(runner.into(), args, &dist.env)
    }

    fn spec(
        &self,
        command: String,
        args: Vec<String>,
        env: &BTreeMap<String, String>,
    ) -> LaunchSpec {
        LaunchSpec {
            name: self.id.clone(),
            command,
            args,
            env: env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone().into()))
                .collect(),
            cwd: None,
        }
    }

    /// The platforms this agent has a binary for.
    pub fn binary_platforms(&self) -> Vec<&str> {
        self.distribution
            .binary
            .keys()
            .map(String::as_str)
            .collect()
    }
}

/// `name` of a PyPI requirement (`name==1.2`, `name>=1`, `name[extra]@...`).
fn uv_requirement_name(package: &str) -> &str {
    let end = package
        .find(['=', '<', '>', '!', '~', '@', '[', ';', ' '])
        .unwrap_or(package.len());
    &package[..end]
}

fn runner_hint(runner: &str) -> String {
    match runner {
        "npx" => "Needs Node.js: npx was not found on PATH. Install Node.js (nodejs.org, or your \
                  system's package manager, e.g. `sudo apt install nodejs npm`), then restart \
                  ACP Desk; npx downloads the agent on first use."
            .into(),
        _ => "Needs uv: uvx was not found on PATH. Install uv (`pipx install uv`, `pip install \
              uv`, or see docs.astral.sh/uv), then restart ACP Desk; uvx downloads the agent on \
              first use."
            .into(),
    }
}

/// Looks `program` up in `path` (else this process's PATH) as `execvp` would.
fn find_program(program: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    let own;
    let path = match path {
        Some(p) => p,
        None => {
            own = std::env::var_os("PATH").unwrap_or_default();
            &own
        }
    };
    std::env::split_paths(path).find_map(|dir| {
        let candidate = dir.join(program);
        if is_executable(&candidate) {
            return Some(candidate);
        }
        #[cfg(windows)]
        for ext in ["exe", "cmd", "bat"] {
            let c = candidate.with_extension(ext);
            if c.is_file() {
                return Some(c);
            }
        }
        None
    })
}

#[cfg(unix)]
pub(crate) fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(not(unix))]
pub(crate) fn is_executable(p: &Path) -> bool {
    p.is_file()
}

mod parse;
pub use parse::parse;
pub(crate) use parse::safe_relative;
#[cfg(test)]
use parse::{valid_id, valid_version};

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
