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
            env: env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
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

// ---------------------------------------------------------------------------------------------
// Parsing

/// Reads one registry file's text. `file` names it in every problem and error.
pub fn parse(file: &str, text: &str) -> Result<ParsedRegistry, RegistryError> {
    let not_registry = |reason: String| RegistryError::NotRegistry {
        file: file.into(),
        reason,
    };
    let top: Value = serde_json::from_str(text).map_err(|e| RegistryError::NotJson {
        file: file.into(),
        line: u32::try_from(e.line()).unwrap_or(u32::MAX),
        column: u32::try_from(e.column()).unwrap_or(u32::MAX),
        message: e.to_string(),
    })?;
    let Some(obj) = top.as_object() else {
        return Err(not_registry(format!("its top level is {}", kind_of(&top))));
    };
    let Some(agents) = obj.get("agents") else {
        if obj.contains_key("id") && obj.contains_key("distribution") {
            return Err(not_registry(
                "it is one agent's agent.json (from the registry repository), not the combined \
                 registry.json the registry publishes"
                    .into(),
            ));
        }
        if obj.contains_key("agent_servers") {
            return Err(not_registry(
                "it has `agent_servers`: it is a settings file (put it in ACP Desk's settings \
                 file instead)"
                    .into(),
            ));
        }
        let keys: Vec<&str> = obj.keys().map(String::as_str).take(8).collect();
        return Err(not_registry(format!(
            "it has no `agents` list (its keys: {})",
            if keys.is_empty() {
                "none".to_string()
            } else {
                keys.join(", ")
            }
        )));
    };
    if !agents.is_array() {
        return Err(not_registry(format!(
            "`agents` is {}, not a list of agents",
            kind_of(agents)
        )));
    }
    let version = match obj.get("version") {
        Some(Value::String(v)) => v.clone(),
        Some(other) => {
            return Err(not_registry(format!(
                "`version` is {}, not a version string like \"1.0.0\"",
                kind_of(other)
            )));
        }
        None => return Err(not_registry("it has no `version`".into())),
    };
    let major = version.split('.').next().unwrap_or_default();
    if major != "1" {
        return Err(not_registry(format!(
            "its format version is {version:?}; ACP Desk reads version 1.x of the registry format \
             (a newer ACP Desk may read this one)"
        )));
    }
    let built_from = obj.get("_source").and_then(|s| {
        Some((
            s.get("commit")?.as_str()?.to_string(),
            s.get("date")?.as_str()?.to_string(),
        ))
    });

    // Once more, borrowing each agent's text, for the line each agent starts on.
    let starts = agent_offsets(text);
    let mut checker = Checker {
        file,
        problems: Vec::new(),
        line: None,
        column: None,
    };
    let mut out: Vec<RegistryAgent> = Vec::new();
    for (i, agent) in agents.as_array().into_iter().flatten().enumerate() {
        let place = starts.get(i).map(|&off| line_column(text, off));
        checker.line = place.map(|p| p.0);
        checker.column = place.map(|p| p.1);
        if let Some(a) = checker.agent(i, agent) {
            if out.iter().any(|o| o.id == a.id) {
                checker.error(
                    format!("agents.{}", a.id),
                    format!(
                        "a second agent with the id `{}`: only the first is used",
                        a.id
                    ),
                );
                continue;
            }
            out.push(a);
        }
    }
    Ok(ParsedRegistry {
        version,
        listed: agents.as_array().map_or(0, Vec::len),
        agents: out,
        problems: checker.problems,
        built_from,
    })
}

/// Byte offsets of the items of the top-level `agents` list.
fn agent_offsets(text: &str) -> Vec<usize> {
    #[derive(serde::Deserialize)]
    struct Top<'a> {
        #[serde(borrow, default)]
        agents: Vec<&'a RawValue>,
    }
    let base = text.as_ptr() as usize;
    serde_json::from_str::<Top<'_>>(text)
        .map(|t| {
            t.agents
                .iter()
                .map(|r| (r.get().as_ptr() as usize).saturating_sub(base))
                .collect()
        })
        .unwrap_or_default()
}

fn line_column(text: &str, offset: usize) -> (u32, u32) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |n| n + 1) + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

struct Checker<'a> {
    file: &'a str,
    problems: Vec<ConfigProblem>,
    /// Where the agent being checked starts.
    line: Option<u32>,
    column: Option<u32>,
}

impl Checker<'_> {
    fn push(&mut self, field: String, message: String, severity: ProblemSeverity) {
        self.problems.push(ConfigProblem {
            file: self.file.into(),
            line: self.line,
            column: self.column,
            field: Some(field),
            message,
            severity,
        });
    }
    fn error(&mut self, field: String, message: String) {
        self.push(field, message, ProblemSeverity::Error);
    }
    fn warning(&mut self, field: String, message: String) {
        self.push(field, message, ProblemSeverity::Warning);
    }

    fn agent(&mut self, index: usize, v: &Value) -> Option<RegistryAgent> {
        let Some(obj) = v.as_object() else {
            self.error(
                format!("agents[{index}]"),
                format!(
                    "an agent must be an object, found {}; it is skipped",
                    kind_of(v)
                ),
            );
            return None;
        };
        let id = match obj.get("id") {
            Some(Value::String(id)) if valid_id(id) => id.clone(),
            Some(Value::String(id)) => {
                self.error(
                    format!("agents[{index}].id"),
                    format!(
                        "{id:?} is not a registry id (lowercase letters, digits and hyphens, \
                         starting with a letter); this agent is skipped"
                    ),
                );
                return None;
            }
            Some(other) => {
                self.error(
                    format!("agents[{index}].id"),
                    format!(
                        "must be a string, found {}; this agent is skipped",
                        kind_of(other)
                    ),
                );
                return None;
            }
            None => {
                self.error(
                    format!("agents[{index}]"),
                    "has no `id`; this agent is skipped".into(),
                );
                return None;
            }
        };
        let at = |f: &str| format!("agents.{id}.{f}");
        let mut ok = true;
        let mut required = |this: &mut Self, key: &str| -> Option<String> {
            match obj.get(key) {
                Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
                Some(Value::String(_)) => {
                    this.error(at(key), "is empty; this agent is skipped".into());
                    ok = false;
                    None
                }
                Some(other) => {
                    this.error(
                        at(key),
                        format!(
                            "must be a string, found {}; this agent is skipped",
                            kind_of(other)
                        ),
                    );
                    ok = false;
                    None
                }
                None => {
                    this.error(at(key), "is missing; this agent is skipped".into());
                    ok = false;
                    None
                }
            }
        };
        let name = required(self, "name");
        let version = required(self, "version");
        let description = required(self, "description");
        if let Some(v) = &version
            && !valid_version(v)
        {
            self.error(
                at("version"),
                format!(
                    "{v:?} is not a semantic version like 1.2.3 (the registry requires one); this \
                     agent is skipped"
                ),
            );
            ok = false;
        }
        let optional = |this: &mut Self, key: &str| -> Option<String> {
            match obj.get(key) {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(other) => {
                    this.warning(
                        at(key),
                        format!("must be a string, found {}; ignored", kind_of(other)),
                    );
                    None
                }
            }
        };
        let repository = optional(self, "repository");
        let website = optional(self, "website");
        let license = optional(self, "license");
        let icon = optional(self, "icon");
        let authors = match obj.get("authors") {
            None | Some(Value::Null) => Vec::new(),
            Some(v) => self
                .strings(&at("authors"), v, ProblemSeverity::Warning)
                .unwrap_or_default(),
        };
        let distribution = match obj.get("distribution") {
            Some(d) => self.distribution(&id, d),
            None => {
                self.error(
                    at("distribution"),
                    "is missing (it says how to start the agent: npx, uvx or binary); this agent \
                     is skipped"
                        .into(),
                );
                None
            }
        };
        match (ok, name, version, description, distribution) {
            (true, Some(name), Some(version), Some(description), Some(distribution)) => {
                Some(RegistryAgent {
                    id,
                    name,
                    version,
                    description,
                    repository,
                    website,
                    authors,
                    license,
                    icon,
                    distribution,
                })
            }
            _ => None,
        }
    }

    fn distribution(&mut self, id: &str, v: &Value) -> Option<Distribution> {
        let at = |f: &str| format!("agents.{id}.distribution{f}");
        let Some(obj) = v.as_object() else {
            self.error(
                at(""),
                format!(
                    "must be an object, found {}; this agent is skipped",
                    kind_of(v)
                ),
            );
            return None;
        };
        let mut d = Distribution::default();
        for (kind, dist) in obj {
            match kind.as_str() {
                "npx" | "uvx" => {
                    let p = self.package(&at(&format!(".{kind}")), dist);
                    if kind == "npx" {
                        d.npx = p;
                    } else {
                        d.uvx = p;
                    }
                }
                "binary" => d.binary = self.binary(&at(".binary"), dist),
                // A kind of distribution newer than this reader: the others may still do.
                _ => {}
            }
        }
        if d.npx.is_none() && d.uvx.is_none() && d.binary.is_empty() {
            let kinds: Vec<&str> = obj.keys().map(String::as_str).collect();
            self.error(
                at(""),
                format!(
                    "has no distribution ACP Desk can use (npx, uvx or binary){}; this agent is \
                     skipped",
                    if kinds.is_empty() {
                        String::new()
                    } else {
                        format!(", only: {}", kinds.join(", "))
                    }
                ),
            );
            return None;
        }
        Some(d)
    }

    fn package(&mut self, field: &str, v: &Value) -> Option<PackageDist> {
        let Some(obj) = v.as_object() else {
            self.error(
                field.into(),
                format!(
                    "must be an object, found {}; this distribution is skipped",
                    kind_of(v)
                ),
            );
            return None;
        };
        let package = match obj.get("package") {
            Some(Value::String(p)) if !p.trim().is_empty() && !p.starts_with('-') => p.clone(),
            Some(Value::String(p)) => {
                self.error(
                    format!("{field}.package"),
                    format!("{p:?} is not a package name; this distribution is skipped"),
                );
                return None;
            }
            Some(other) => {
                self.error(
                    format!("{field}.package"),
                    format!(
                        "must be a string, found {}; this distribution is skipped",
                        kind_of(other)
                    ),
                );
                return None;
            }
            None => {
                self.error(
                    format!("{field}.package"),
                    "is missing; this distribution is skipped".into(),
                );
                return None;
            }
        };
        let cmd = match obj.get("cmd") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) if !c.trim().is_empty() && !c.starts_with('-') => {
                Some(c.clone())
            }
            Some(other) => {
                self.error(
                    format!("{field}.cmd"),
                    format!(
                        "must be the name of the package's executable, found {}; this \
                         distribution is skipped",
                        describe(other)
                    ),
                );
                return None;
            }
        };
        let args = self.args(field, obj)?;
        let env = self.env(field, obj)?;
        Some(PackageDist {
            package,
            cmd,
            args,
            env,
        })
    }

    fn binary(&mut self, field: &str, v: &Value) -> BTreeMap<String, BinaryTarget> {
        let mut out = BTreeMap::new();
        let Some(obj) = v.as_object() else {
            self.error(
                field.into(),
                format!(
                    "must be an object of platforms, found {}; the binaries are skipped",
                    kind_of(v)
                ),
            );
            return out;
        };
        for (platform, target) in obj {
            let at = format!("{field}.{platform}");
            if !PLATFORMS.contains(&platform.as_str()) {
                self.warning(
                    at,
                    format!(
                        "unknown platform (expected one of {}); ignored",
                        PLATFORMS.join(", ")
                    ),
                );
                continue;
            }
            if let Some(t) = self.target(&at, target) {
                out.insert(platform.clone(), t);
            }
        }
        out
    }

    fn target(&mut self, field: &str, v: &Value) -> Option<BinaryTarget> {
        let skipped = "this platform's binary is skipped";
        let Some(obj) = v.as_object() else {
            self.error(
                field.into(),
                format!("must be an object, found {}; {skipped}", kind_of(v)),
            );
            return None;
        };
        let archive = match obj.get("archive") {
            Some(Value::String(a)) => a.clone(),
            Some(other) => {
                self.error(
                    format!("{field}.archive"),
                    format!("must be an address, found {}; {skipped}", kind_of(other)),
                );
                return None;
            }
            None => {
                self.error(format!("{field}.archive"), format!("is missing; {skipped}"));
                return None;
            }
        };
        match url::Url::parse(&archive) {
            Ok(u) if matches!(u.scheme(), "https" | "http") => {
                let path = u.path().to_ascii_lowercase();
                if let Some(ext) = INSTALLER_SUFFIXES.iter().find(|s| path.ends_with(*s)) {
                    self.error(
                        format!("{field}.archive"),
                        format!(
                            "{archive} is an installer ({ext}), which the registry does not allow \
                             and ACP Desk does not run; {skipped}"
                        ),
                    );
                    return None;
                }
            }
            Ok(u) => {
                self.error(
                    format!("{field}.archive"),
                    format!(
                        "{archive}: only http(s) downloads are supported, not {}:; {skipped}",
                        u.scheme()
                    ),
                );
                return None;
            }
            Err(e) => {
                self.error(
                    format!("{field}.archive"),
                    format!("{archive:?} is not an address ({e}); {skipped}"),
                );
                return None;
            }
        }
        let sha256 = match obj.get("sha256") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Some(s.to_ascii_lowercase())
            }
            Some(other) => {
                self.error(
                    format!("{field}.sha256"),
                    format!(
                        "must be 64 hexadecimal digits, found {}; {skipped}",
                        describe(other)
                    ),
                );
                return None;
            }
        };
        let cmd = match obj.get("cmd") {
            Some(Value::String(c)) if safe_relative(c) => c.clone(),
            Some(Value::String(c)) => {
                self.error(
                    format!("{field}.cmd"),
                    format!(
                        "{c:?} must be a path inside the archive (like ./agent), not absolute and \
                         without `..`; {skipped}"
                    ),
                );
                return None;
            }
            Some(other) => {
                self.error(
                    format!("{field}.cmd"),
                    format!("must be a string, found {}; {skipped}", kind_of(other)),
                );
                return None;
            }
            None => {
                self.error(
                    format!("{field}.cmd"),
                    format!("is missing (the executable in the archive); {skipped}"),
                );
                return None;
            }
        };
        let args = self.args(field, obj)?;
        let env = self.env(field, obj)?;
        Some(BinaryTarget {
            archive,
            sha256,
            cmd,
            args,
            env,
        })
    }

    fn args(&mut self, field: &str, obj: &serde_json::Map<String, Value>) -> Option<Vec<String>> {
        match obj.get("args") {
            None | Some(Value::Null) => Some(Vec::new()),
            Some(v) => self.strings(&format!("{field}.args"), v, ProblemSeverity::Error),
        }
    }

    fn strings(
        &mut self,
        field: &str,
        v: &Value,
        severity: ProblemSeverity,
    ) -> Option<Vec<String>> {
        let what = if severity == ProblemSeverity::Error {
            "this distribution is skipped"
        } else {
            "ignored"
        };
        let list = v.as_array().and_then(|items| {
            items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
        });
        if list.is_none() {
            self.push(
                field.into(),
                format!("must be a list of strings, found {}; {what}", describe(v)),
                severity,
            );
        }
        list
    }

    fn env(
        &mut self,
        field: &str,
        obj: &serde_json::Map<String, Value>,
    ) -> Option<BTreeMap<String, String>> {
        let Some(v) = obj.get("env").filter(|v| !v.is_null()) else {
            return Some(BTreeMap::new());
        };
        let Some(map) = v.as_object() else {
            self.error(
                format!("{field}.env"),
                format!(
                    "must be an object of variable names to strings, found {}; this distribution \
                     is skipped",
                    kind_of(v)
                ),
            );
            return None;
        };
        let mut out = BTreeMap::new();
        for (k, val) in map {
            // The value is never quoted back: env values may be secrets.
            let Some(s) = val.as_str() else {
                self.error(
                    format!("{field}.env.{k}"),
                    format!(
                        "must be a string, found {}; this distribution is skipped",
                        kind_of(val)
                    ),
                );
                return None;
            };
            if k.is_empty() || k.contains('=') || k.contains('\0') {
                self.error(
                    format!("{field}.env"),
                    format!("{k:?} is not a variable name; this distribution is skipped"),
                );
                return None;
            }
            out.insert(k.clone(), s.to_string());
        }
        Some(out)
    }
}

/// A short description of a wrong value: strings are quoted (cut), others named by kind.
fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => {
            let cut: String = s.chars().take(40).collect();
            if cut.len() < s.len() {
                format!("{cut:?}…")
            } else {
                format!("{cut:?}")
            }
        }
        other => kind_of(other).into(),
    }
}

fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// `^[0-9]+\.[0-9]+\.[0-9]+` (the registry's pattern), then only characters that keep it one
/// safe folder name (`-rc.1`, `+build`).
fn valid_version(v: &str) -> bool {
    let mut parts = v.splitn(3, '.');
    let (Some(a), Some(b), Some(rest)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    let patch_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits(a)
        && digits(b)
        && patch_len > 0
        && v.len() <= 64
        && rest
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'+'))
}

/// A relative path with only normal parts (and `.`): stays inside the folder it is joined to.
pub(crate) fn safe_relative(p: &str) -> bool {
    use std::path::Component;
    let path = Path::new(p);
    !p.trim().is_empty()
        && !p.contains('\\')
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        && path.components().any(|c| matches!(c, Component::Normal(_)))
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
