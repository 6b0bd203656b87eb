//! Every source of agents joined: the listing a front end shows, `--agent NAME`, and the agent
//! new sessions default to.
//!
//! **Precedence** (one id, one agent): the user's settings (`agent_servers`), then AIP-44
//! manifests, then the ACP registry, then the built-ins (the catalog and the demo agent). The
//! listing shows one entry per id, the one [`resolve_in`] starts, with `also_defined_in` naming
//! the other sources that define it.
//!
//! **A registry agent with a built-in's id** (gemini, goose, opencode) is one agent, not two:
//! when the built-in's program is installed on this machine its local launch is used (a local
//! install beats a download, and is what the user set up and signed in to); otherwise the
//! registry's distribution (npx, uvx or a binary to install). Either way `also_defined_in`
//! names the other.
//!
//! **The default agent for new sessions**: the agent last chosen in the window (the app passes
//! it in), else `default_agent` in the settings, else the first `agent_servers` entry in the
//! file's order, else the first installed built-in in catalog order, else the demo agent.
//!
//! Blocking: everything here reads files and looks programs up ([`super::detect`], cached).

use std::path::{Path, PathBuf};

use super::catalog::{self, BuiltinAgent};
use super::detect::{self, Detection, ProgramCache, Where};
use super::manifest::{self, Manifest};
use super::registry::{self, RegistryAgent, RegistryIndex, RegistryLaunch};
use super::{
    AgentEntry, AgentError, AgentListing, AgentSource, AgentStatus, ConfigProblem, LaunchSpec,
    ProblemSeverity, Sources, demo_agent, demo_agent_path,
};
use crate::settings::{self, AgentServer, Loaded};

/// What `--agent NAME` starts, and where its definition came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub spec: LaunchSpec,
    pub source: AgentSource,
    /// The AIP-44 manifest describing it (a manifest agent, or a settings entry naming one):
    /// its `audit` applies to the session (`Manifest::apply_audit`), Check compares its
    /// capabilities.
    pub manifest: Option<Manifest>,
}

/// The reasons [`AgentListing::default_reason`] gives.
pub mod reason {
    pub const LAST_CHOSEN: &str = "last chosen in the window";
    pub const DEFAULT_AGENT: &str = "default_agent in settings";
    pub const FIRST_ENTRY: &str = "first agent_servers entry";
    pub const FIRST_INSTALLED: &str = "first installed agent";
    pub const DEMO: &str = "the demo agent: nothing else is installed";
}

/// `<config_dir>/agents`, where manifests live.
fn agents_dir(sources: &Sources) -> PathBuf {
    sources.config_dir.join("agents")
}

/// Every agent of every source, one entry per id (see the module docs for precedence), and
/// the default for new sessions. `cwd` is where relative commands are looked up. Blocking.
pub fn listing(sources: &Sources, cwd: &Path) -> AgentListing {
    let loaded = settings::load_from(&sources.settings_file);
    let at = Where::from_sources(sources);
    let cache = ProgramCache::global();
    let settings_file = sources.settings_file.display().to_string();
    let (manifests, manifest_problems) = manifest::load_dir(&agents_dir(sources));
    let (index, registry_problems) = registry::load(&sources.data_dir);

    let mut problems = loaded.problems.clone();
    let from_settings = settings_candidates(
        &loaded,
        &settings_file,
        &manifests,
        &agents_dir(sources),
        cwd,
        &at,
        cache,
        &mut problems,
    );
    // A manifest without a launch of its own that a settings entry names is that entry's
    // description, shown in it, not a second agent.
    let described: Vec<&str> = loaded
        .settings
        .agent_servers
        .iter()
        .filter_map(|(_, s)| s.manifest.as_deref())
        .collect();
    let from_manifests: Vec<AgentEntry> = manifests
        .iter()
        .filter(|m| m.launch.is_some() || !described.contains(&m.id()))
        .map(|m| manifest_entry(m, &at, cache))
        .chain(invalid_manifest_entries(
            &manifests,
            &manifest_problems,
            &agents_dir(sources),
        ))
        .collect();
    // `demo` is reserved for the built-in (the settings reader refuses it the same way).
    let (reserved, from_manifests): (Vec<AgentEntry>, Vec<AgentEntry>) =
        from_manifests.into_iter().partition(|e| e.id == "demo");
    for e in reserved {
        problems.push(ConfigProblem {
            file: e.manifest_file.clone().unwrap_or_else(|| agents_dir(sources).display().to_string()),
            line: None,
            column: None,
            field: Some("name".into()),
            message: "`demo` is the name of ACP Desk's built-in demo agent, which cannot be replaced; this manifest is not used: rename its folder and `name`".into(),
            severity: ProblemSeverity::Error,
        });
    }
    let from_registry: Vec<AgentEntry> = index
        .agents
        .iter()
        .map(|a| registry_entry(a, &index, sources, &at))
        .collect();
    let mut builtins = vec![demo_entry()];
    builtins.extend(
        catalog::BUILTIN
            .iter()
            .map(|a| builtin_entry(a, &detect::detect_builtin(a, &at, cache), &at, cache).0),
    );
    problems.extend(manifest_problems);
    problems.extend(registry_problems);

    let agents = join(from_settings, from_manifests, from_registry, builtins);
    problems.extend(agents.iter().filter_map(shadowing));
    let (default_agent, default_reason) =
        default_rule(&loaded, &agents, &settings_file, &mut problems);
    AgentListing {
        agents,
        default_agent,
        default_reason: default_reason.into(),
        settings_file,
        problems,
        registry: Some(index.info()),
    }
}

/// Keeps one entry per id, the one [`resolve_in`] starts: settings, then manifests, then the
/// registry, then the built-ins; except that an installed built-in beats a registry agent of
/// the same id (a local install beats a download). The others are named in its
/// `also_defined_in`. The result is in the listing's order: demo, settings, manifests,
/// built-ins, registry.
fn join(
    from_settings: Vec<AgentEntry>,
    from_manifests: Vec<AgentEntry>,
    from_registry: Vec<AgentEntry>,
    builtins: Vec<AgentEntry>,
) -> Vec<AgentEntry> {
    // A registry agent listed under another id than the built-in it is (codex-acp is codex)
    // is shown once, as the built-in (which has its own launch through npx when it is not
    // installed); `--agent <registry id>` still starts the registry's distribution.
    let mut builtins = builtins;
    let from_registry: Vec<AgentEntry> = from_registry
        .into_iter()
        .filter(|r| {
            let alias_of = catalog::BUILTIN
                .iter()
                .find(|b| b.id != r.id && b.registry_ids.contains(&r.id.as_str()));
            match alias_of.and_then(|b| builtins.iter_mut().find(|e| e.id == b.id)) {
                Some(b) => {
                    if !b.also_defined_in.contains(&AgentSource::Registry) {
                        b.also_defined_in.push(AgentSource::Registry);
                    }
                    false
                }
                None => true,
            }
        })
        .collect();
    let mut winners: Vec<AgentEntry> = Vec::new();
    let installed_builtin = |id: &str| {
        builtins
            .iter()
            .any(|b| b.id == id && b.status == AgentStatus::Found)
    };
    let candidates = from_settings
        .into_iter()
        .chain(from_manifests)
        .chain(from_registry)
        .chain(builtins.iter().cloned());
    for c in candidates {
        match winners.iter().position(|w| w.id == c.id) {
            Some(i) => {
                let w = &mut winners[i];
                let local_beats_download = w.source == AgentSource::Registry
                    && c.source == AgentSource::Builtin
                    && installed_builtin(&c.id);
                if local_beats_download {
                    let mut also = std::mem::take(&mut w.also_defined_in);
                    also.push(AgentSource::Registry);
                    *w = AgentEntry {
                        also_defined_in: also,
                        ..c
                    };
                } else {
                    if w.source == AgentSource::Registry && c.source == AgentSource::Builtin {
                        // The registry's download is used until it is installed locally; how
                        // to install it (and sign in) is still worth saying.
                        w.install_command = w.install_command.take().or(c.install_command);
                        w.hint = w.hint.take().or(c.hint);
                    }
                    if w.source != c.source && !w.also_defined_in.contains(&c.source) {
                        w.also_defined_in.push(c.source);
                    }
                }
            }
            None => winners.push(c),
        }
    }
    let rank = |e: &AgentEntry| match (e.id.as_str(), e.source) {
        ("demo", AgentSource::Builtin) => 0,
        (_, AgentSource::Settings) => 1,
        (_, AgentSource::Manifest) => 2,
        (_, AgentSource::Builtin) => 3,
        (_, AgentSource::Registry) => 4,
    };
    // Stable: each group keeps its own order (the settings file's, the catalog's, ...).
    winners.sort_by_key(rank);
    winners
}

/// Said when one of the user's own definitions (settings, manifest) shares its id with another
/// source: deliberate when overriding a built-in, a surprise when two of the user's files
/// collide. Either way the user learns which one runs and how to keep both.
fn shadowing(e: &AgentEntry) -> Option<ConfigProblem> {
    // Overriding a built-in or registry agent from the settings is a feature (the entry says
    // "also defined in"); two of the user's own files naming one agent is the ambiguity.
    let user_files =
        e.source == AgentSource::Settings && e.also_defined_in.contains(&AgentSource::Manifest);
    if !user_files {
        return None;
    }
    let name = |s: &AgentSource| match s {
        AgentSource::Settings => "your settings",
        AgentSource::Manifest => "a manifest",
        AgentSource::Registry => "the ACP registry",
        AgentSource::Builtin => "ACP Desk's built-in agents",
    };
    let others: Vec<&str> = e.also_defined_in.iter().map(name).collect();
    Some(ConfigProblem {
        file: e
            .manifest_file
            .clone()
            .filter(|_| e.source == AgentSource::Manifest)
            .or_else(|| e.origin.clone())
            .unwrap_or_default(),
        line: None,
        column: None,
        field: Some(match e.source {
            AgentSource::Manifest => "name".into(),
            _ => format!("agent_servers.{}", e.id),
        }),
        message: format!(
            "`{}` is also defined by {}; this definition ({}) is the one used (settings, then manifests, then the registry, then built-in). Rename one to keep both.",
            e.id,
            others.join(" and "),
            name(&e.source)
        ),
        severity: ProblemSeverity::Warning,
    })
}

fn default_rule(
    loaded: &Loaded,
    agents: &[AgentEntry],
    settings_file: &str,
    problems: &mut Vec<ConfigProblem>,
) -> (String, &'static str) {
    if let Some(name) = &loaded.settings.default_agent {
        match agents.iter().find(|a| a.id == *name) {
            Some(a) if a.status != AgentStatus::Invalid => {
                return (name.clone(), reason::DEFAULT_AGENT);
            }
            found => problems.push(ConfigProblem {
                file: settings_file.into(),
                line: None,
                column: None,
                field: Some("default_agent".into()),
                message: match found {
                    Some(_) => format!(
                        "`{name}` has errors (see its entry), so new sessions use the next agent of the default rule"
                    ),
                    None => format!(
                        "`{name}` is not an agent ACP Desk knows (see `acp-desk-cli agents`); new sessions use the next agent of the default rule"
                    ),
                },
                severity: ProblemSeverity::Warning,
            }),
        }
    }
    if let Some((name, _)) = loaded.settings.agent_servers.first() {
        return (name.clone(), reason::FIRST_ENTRY);
    }
    if let Some(a) = catalog::BUILTIN.iter().find(|b| {
        agents.iter().any(|a| {
            a.id == b.id && a.source == AgentSource::Builtin && a.status == AgentStatus::Found
        })
    }) {
        return (a.id.into(), reason::FIRST_INSTALLED);
    }
    ("demo".into(), reason::DEMO)
}

/// The agent new sessions use: `last_chosen` (the window's last choice) when it is still a
/// usable agent, else the listing's default. Returns the id and why.
pub fn default_for_new_sessions(
    listing: &AgentListing,
    last_chosen: Option<&str>,
) -> (String, String) {
    if let Some(last) = last_chosen
        && listing
            .get(last)
            .is_some_and(|a| a.status != AgentStatus::Invalid)
    {
        return (last.into(), reason::LAST_CHOSEN.into());
    }
    (
        listing.default_agent.clone(),
        listing.default_reason.clone(),
    )
}

/// Resolves `--agent NAME` over every source, in precedence order (the module docs). An agent
/// that is defined but not installed still resolves when there is a program to try (starting
/// it then fails with its own clear reason, which is what Check reports); an entry with errors,
/// a manifest we cannot drive, or a registry binary not installed yet does not. Blocking.
pub fn resolve_in(sources: &Sources, name: &str) -> Result<Resolved, AgentError> {
    if name == "demo" {
        // Reserved (the settings reader and the listing say so to an entry named `demo`):
        // `--agent demo` works whatever the files say.
        return Ok(Resolved {
            spec: demo_agent()?,
            source: AgentSource::Builtin,
            manifest: None,
        });
    }
    let loaded = settings::load_from(&sources.settings_file);
    if let Some(s) = loaded.settings.agent_server(name) {
        let manifest = match &s.manifest {
            Some(m) => find_manifest(sources, m),
            None => None,
        };
        return Ok(Resolved {
            spec: settings_spec(name, s),
            source: AgentSource::Settings,
            manifest,
        });
    }
    if loaded.invalid_agents.iter().any(|n| n == name)
        && let Some(first) = first_error(loaded.agent_problems(name))
    {
        return Err(AgentError::Invalid {
            name: name.into(),
            problem: Box::new(first),
        });
    }
    let (manifests, manifest_problems) = manifest::load_dir(&agents_dir(sources));
    if let Some(m) = manifests.iter().find(|m| m.id() == name) {
        if let Err(why) = &m.drivable {
            return Err(AgentError::Unavailable {
                name: name.into(),
                reason: why.clone(),
            });
        }
        // Its own launch, else the settings entry that names it.
        let spec = m.launch_spec().or_else(|| {
            loaded
                .settings
                .agent_servers
                .iter()
                .find(|(_, s)| s.manifest.as_deref() == Some(name))
                .map(|(_, s)| settings_spec(name, s))
        });
        return match spec {
            Some(spec) => Ok(Resolved {
                spec,
                source: AgentSource::Manifest,
                manifest: Some(m.clone()),
            }),
            None => Err(AgentError::Unavailable {
                name: name.into(),
                reason: no_launch_hint(m),
            }),
        };
    }
    let agents_dir = agents_dir(sources);
    if let Some(first) = manifest_problems.iter().find(|p| {
        p.severity == ProblemSeverity::Error
            && manifest_folder(&agents_dir, &p.file).as_deref() == Some(name)
    }) {
        return Err(AgentError::Invalid {
            name: name.into(),
            problem: Box::new(first.clone()),
        });
    }
    let at = Where::from_sources(sources);
    let cache = ProgramCache::global();
    let builtin = catalog::builtin(name).map(|a| (a, detect::detect_builtin(a, &at, cache)));
    // A local install beats a download.
    if let Some((agent, detection @ Detection::Found { .. })) = &builtin {
        return Ok(builtin_resolved(agent, detection, &at, cache));
    }
    let (index, _) = registry::load(&sources.data_dir);
    if let Some(agent) = index.find(name) {
        return match agent.launch(
            registry::current_platform(),
            &sources.data_dir,
            Some(&at.path),
        ) {
            RegistryLaunch::Ready { spec, .. } | RegistryLaunch::NeedsRunner { spec, .. } => {
                Ok(Resolved {
                    spec,
                    source: AgentSource::Registry,
                    manifest: None,
                })
            }
            RegistryLaunch::NotInstalled { hint, .. }
            | RegistryLaunch::Unavailable { hint, .. } => Err(AgentError::Unavailable {
                name: name.into(),
                reason: hint,
            }),
        };
    }
    if let Some((agent, detection)) = &builtin {
        return Ok(builtin_resolved(agent, detection, &at, cache));
    }
    let mut known: Vec<String> = vec!["demo".into()];
    known.extend(loaded.settings.agent_servers.iter().map(|(n, _)| n.clone()));
    known.extend(manifests.iter().map(|m| m.id().to_owned()));
    known.extend(catalog::BUILTIN.iter().map(|a| a.id.to_string()));
    let mut seen = std::collections::HashSet::new();
    known.retain(|k| seen.insert(k.clone()));
    let mut known = known.join(", ");
    if !index.agents.is_empty() {
        known.push_str(&format!(
            " and the {} agents of the {} (`acp-desk-cli agents` lists them all)",
            index.agents.len(),
            index.origin()
        ));
    }
    Err(AgentError::Unknown(
        name.into(),
        known,
        sources.settings_file.display().to_string(),
    ))
}

/// The entry's first error (what makes it unusable), else its first problem.
fn first_error(problems: Vec<ConfigProblem>) -> Option<ConfigProblem> {
    let error = problems
        .iter()
        .position(|p| p.severity == ProblemSeverity::Error);
    let mut problems = problems;
    match error {
        Some(i) => Some(problems.swap_remove(i)),
        None => problems.into_iter().next(),
    }
}

/// Check for an agent by name, over every source: resolves it (as `--agent` would), runs
/// [`super::check::check`], turns a not-installed failure's fix into the agent's own install
/// command, and for an agent described by a manifest lists every difference between the
/// capabilities the manifest declares and those `initialize` reported. An agent that cannot be
/// resolved (unknown, an entry with errors, a registry binary not installed, a manifest we
/// cannot drive) is the error, not a report: there is nothing to start. The lookups run on the
/// blocking pool.
pub async fn check_agent(
    sources: &Sources,
    name: &str,
    cwd: &Path,
    limits: super::check::CheckLimits,
) -> Result<super::check::CheckReport, AgentError> {
    let (s, n) = (sources.clone(), name.to_owned());
    let resolved = tokio::task::spawn_blocking(move || resolve_in(&s, &n))
        .await
        .map_err(|e| AgentError::Unavailable {
            name: name.into(),
            reason: format!("looking the agent up stopped: {e}"),
        })??;
    let mut report = super::check::check(&resolved.spec, cwd, limits).await;
    if resolved.source == AgentSource::Builtin
        && let Some(agent) = catalog::builtin(name)
    {
        report.suggest_install(&agent.install_hint());
    }
    if let Some(m) = &resolved.manifest
        && let Some(declared) = m.declared_capabilities()
        && let Some(reported) = &report.capabilities
    {
        match serde_json::from_value::<agent_client_protocol_schema::v1::AgentCapabilities>(
            reported.clone(),
        ) {
            Ok(reported) => {
                report.differences = manifest::compare_capabilities(declared, &reported);
            }
            // `initialize` was checked already; capabilities that do not parse are the same
            // failure a session would meet, said here rather than compared.
            Err(e) => report.warnings.push(format!(
                "its agentCapabilities could not be read to compare with {} ({e})",
                m.file.display()
            )),
        }
    }
    Ok(report)
}

fn builtin_resolved(
    agent: &BuiltinAgent,
    detection: &Detection,
    at: &Where,
    cache: &ProgramCache,
) -> Resolved {
    Resolved {
        spec: builtin_entry(agent, detection, at, cache).1,
        source: AgentSource::Builtin,
        manifest: None,
    }
}

/// The manifest `name` under the config folder, if it loads.
fn find_manifest(sources: &Sources, name: &str) -> Option<Manifest> {
    let file = agents_dir(sources).join(name).join(manifest::FILE_NAME);
    let text = std::fs::read_to_string(&file).ok()?;
    manifest::parse(&file, &text).ok()
}

/// The folder name of `<agents_dir>/<name>/ACP.md`, when `file` is one.
fn manifest_folder(agents_dir: &Path, file: &str) -> Option<String> {
    let file = Path::new(file);
    let dir = file.parent()?;
    (dir.parent()? == agents_dir)
        .then(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .flatten()
}

fn no_launch_hint(m: &Manifest) -> String {
    format!(
        "{} says what the agent is but not how to start it: add `metadata.acp-desk: {{command, args}}` to it, or an `agent_servers` entry with \"manifest\": \"{}\" in the settings file",
        m.file.display(),
        m.id()
    )
}

fn settings_spec(name: &str, s: &AgentServer) -> LaunchSpec {
    LaunchSpec {
        name: name.into(),
        command: s.command.clone(),
        args: s.args.clone(),
        env: s.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        cwd: None,
    }
}

fn command_line(program: &str, args: &[String]) -> String {
    std::iter::once(program.to_owned())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn blank_entry(id: &str, name: &str, source: AgentSource) -> AgentEntry {
    AgentEntry {
        id: id.into(),
        name: name.into(),
        description: None,
        version: None,
        source,
        also_defined_in: Vec::new(),
        origin: None,
        command: String::new(),
        env_names: Vec::new(),
        status: AgentStatus::Missing,
        hint: None,
        install_command: None,
        installable: false,
        manifest_file: None,
        problems: Vec::new(),
    }
}

fn demo_entry() -> AgentEntry {
    let demo = demo_agent_path();
    let mut e = blank_entry("demo", "Demo agent", AgentSource::Builtin);
    e.description = Some("Scripted, no model: shows what ACP Desk can display.".into());
    e.origin = Some("shipped with ACP Desk".into());
    e.command = demo
        .as_ref()
        .map_or_else(|| "acp-desk-demo-agent".into(), |p| p.display().to_string());
    e.status = if demo.as_ref().is_some_and(|p| p.is_file()) {
        AgentStatus::Found
    } else {
        AgentStatus::Missing
    };
    e.hint = Some(match demo {
        Some(_) => "Say “hello” to it to see what ACP Desk can show.".into(),
        None => AgentError::DemoMissing.to_string(),
    });
    e
}

/// A built-in's entry and its launch: the installed program when detected, else npx when the
/// agent has an npx launch and npx is there, else the bare program name (which fails to start
/// with "not found", the reason Check gives).
fn builtin_entry(
    a: &BuiltinAgent,
    detection: &Detection,
    at: &Where,
    cache: &ProgramCache,
) -> (AgentEntry, LaunchSpec) {
    let mut e = blank_entry(a.id, a.name, AgentSource::Builtin);
    e.description = Some(a.description.into());
    e.origin = Some("built in".into());
    e.install_command = Some(a.install_command.into());
    let args: Vec<String> = a.args.iter().map(|s| (*s).to_owned()).collect();
    let spec = |command: String, args: Vec<String>| LaunchSpec {
        name: a.id.into(),
        command,
        args,
        env: Vec::new(),
        cwd: None,
    };
    let npx = a.npx.filter(|_| {
        !matches!(detection, Detection::Found { .. })
            && detect::on_path("npx", &at.path, cache).is_found()
    });
    let launch = match (detection, npx) {
        (
            Detection::Found {
                program, version, ..
            },
            _,
        ) => {
            e.status = AgentStatus::Found;
            e.version = version.clone();
            e.hint = Some(a.setup.into());
            spec(program.display().to_string(), args)
        }
        (_, Some(npx_args)) => {
            e.status = AgentStatus::Downloads;
            e.hint = Some(format!(
                "npx fetches {} on first use (slow the first time); `{}` installs it for good. {}",
                a.npm_packages.first().copied().unwrap_or(a.program),
                a.install_command,
                a.setup
            ));
            let mut args: Vec<String> = npx_args.iter().map(|s| (*s).to_owned()).collect();
            args.extend(a.args.iter().map(|s| (*s).to_owned()));
            spec("npx".into(), args)
        }
        (Detection::NotExecutable(p), None) => {
            e.status = AgentStatus::Missing;
            e.hint = Some(format!(
                "{} is there but not executable: `chmod +x {}`, or reinstall with `{}`.",
                p.display(),
                p.display(),
                a.install_command
            ));
            spec(p.display().to_string(), args)
        }
        (Detection::Missing, None) => {
            e.status = AgentStatus::Missing;
            e.hint = Some(a.install_hint());
            spec(a.program.into(), args)
        }
    };
    e.command = command_line(&launch.command, &launch.args);
    (e, launch)
}

#[allow(clippy::too_many_arguments)]
fn settings_candidates(
    loaded: &Loaded,
    settings_file: &str,
    manifests: &[Manifest],
    agents_dir: &Path,
    cwd: &Path,
    at: &Where,
    cache: &ProgramCache,
    problems: &mut Vec<ConfigProblem>,
) -> Vec<AgentEntry> {
    let mut out = Vec::new();
    for (name, s) in &loaded.settings.agent_servers {
        let mut e = blank_entry(name, name, AgentSource::Settings);
        e.origin = Some(settings_file.into());
        e.command = command_line(&s.command, &s.args);
        e.env_names = settings_spec(name, s).env_shown();
        e.problems = loaded.agent_problems(name);
        match detect::find_command(&s.command, cwd, at, cache) {
            Detection::Found { version, .. } => {
                e.status = AgentStatus::Found;
                e.version = version;
            }
            Detection::NotExecutable(p) => {
                e.hint = Some(format!(
                    "{} is not executable: `chmod +x` it, or fix `command` of `{name}` in the settings file.",
                    p.display()
                ));
            }
            Detection::Missing => {
                e.hint = Some(format!(
                    "`{}` was not found (on the PATH, or as a path); install it, or fix `command` of `{name}` in the settings file.",
                    s.command
                ));
            }
        }
        if let Some(m_name) = &s.manifest {
            match manifests.iter().find(|m| m.id() == m_name) {
                Some(m) => {
                    e.name = m.definition.name.clone();
                    e.description = Some(m.definition.description.clone());
                    e.version = Some(m.definition.version.clone());
                    e.manifest_file = Some(m.file.display().to_string());
                    // A manifest with a launch of its own is also listed (and joined by id);
                    // one without is only this entry's description, named here.
                    if m.id() == name && m.launch.is_none() {
                        e.also_defined_in.push(AgentSource::Manifest);
                    }
                }
                None => {
                    let p = ConfigProblem {
                        file: settings_file.into(),
                        line: None,
                        column: None,
                        field: Some(format!("agent_servers.{name}.manifest")),
                        message: format!(
                            "names the manifest `{m_name}`, but {} is missing or has errors (see its problems); the entry is used without it",
                            agents_dir.join(m_name).join(manifest::FILE_NAME).display()
                        ),
                        severity: ProblemSeverity::Warning,
                    };
                    e.problems.push(p.clone());
                    problems.push(p);
                }
            }
        }
        out.push(e);
    }
    for name in &loaded.invalid_agents {
        let mut e = blank_entry(name, name, AgentSource::Settings);
        e.origin = Some(settings_file.into());
        e.status = AgentStatus::Invalid;
        e.problems = loaded.agent_problems(name);
        let errors = e
            .problems
            .iter()
            .filter(|p| p.severity == ProblemSeverity::Error)
            .count();
        e.hint = Some(match errors {
            1 => "its entry in the settings file has an error; fix it to use this agent".into(),
            n => {
                format!("its entry in the settings file has {n} errors; fix them to use this agent")
            }
        });
        out.push(e);
    }
    out
}

fn manifest_entry(m: &Manifest, at: &Where, cache: &ProgramCache) -> AgentEntry {
    let d = &m.definition;
    let mut e = blank_entry(m.id(), &d.name, AgentSource::Manifest);
    e.description = Some(d.description.clone());
    e.version = Some(d.version.clone());
    e.origin = Some(m.file.display().to_string());
    e.manifest_file = Some(m.file.display().to_string());
    e.problems = m.problems.clone();
    match (&m.drivable, &m.launch) {
        (Err(why), _) => {
            e.status = AgentStatus::Unsupported;
            e.hint = Some(why.clone());
        }
        (Ok(()), None) => {
            e.status = AgentStatus::Missing;
            e.hint = Some(no_launch_hint(m));
        }
        (Ok(()), Some(launch)) => {
            e.command = command_line(&launch.command, &launch.args);
            e.env_names = launch.env_names();
            match detect::find_command(&launch.command, m.dir(), at, cache) {
                Detection::Found { .. } => e.status = AgentStatus::Found,
                Detection::NotExecutable(p) => {
                    e.hint = Some(format!(
                        "{} is not executable: `chmod +x` it, or fix `metadata.acp-desk.command` in {}.",
                        p.display(),
                        m.file.display()
                    ))
                }
                Detection::Missing => {
                    e.hint = Some(format!(
                        "`{}` was not found (on the PATH, or as a path): install it, or fix `metadata.acp-desk.command` in {}.",
                        launch.command,
                        m.file.display()
                    ))
                }
            }
        }
    }
    e
}

/// A manifest folder whose `ACP.md` has errors: listed as invalid, with them.
fn invalid_manifest_entries(
    loaded: &[Manifest],
    problems: &[ConfigProblem],
    agents_dir: &Path,
) -> Vec<AgentEntry> {
    let mut out: Vec<AgentEntry> = Vec::new();
    for p in problems
        .iter()
        .filter(|p| p.severity == ProblemSeverity::Error)
    {
        let Some(folder) = manifest_folder(agents_dir, &p.file) else {
            continue;
        };
        if loaded.iter().any(|m| m.id() == folder) {
            continue;
        }
        match out.iter_mut().find(|e| e.id == folder) {
            Some(e) => e.problems.push(p.clone()),
            None => {
                let mut e = blank_entry(&folder, &folder, AgentSource::Manifest);
                e.status = AgentStatus::Invalid;
                e.origin = Some(p.file.clone());
                e.manifest_file = Some(p.file.clone());
                e.hint =
                    Some("its ACP.md has errors (see its problems); fix them to use it".into());
                e.problems.push(p.clone());
                out.push(e);
            }
        }
    }
    out
}

fn registry_entry(
    a: &RegistryAgent,
    index: &RegistryIndex,
    sources: &Sources,
    at: &Where,
) -> AgentEntry {
    let mut e = blank_entry(&a.id, &a.name, AgentSource::Registry);
    e.description = Some(a.description.clone());
    e.version = Some(a.version.clone());
    e.origin = Some(index.origin());
    let launch = a.launch(
        registry::current_platform(),
        &sources.data_dir,
        Some(&at.path),
    );
    e.hint = launch.hint().map(str::to_owned);
    match launch {
        RegistryLaunch::Ready { spec, kind } => {
            e.status = match kind {
                registry::DistributionKind::Binary => AgentStatus::Found,
                registry::DistributionKind::Npx | registry::DistributionKind::Uvx => {
                    AgentStatus::Downloads
                }
            };
            e.command = command_line(&spec.command, &spec.args);
            e.env_names = spec.env.iter().map(|(k, _)| k.clone()).collect();
        }
        RegistryLaunch::NeedsRunner { spec, .. } => {
            e.status = AgentStatus::Missing;
            e.command = command_line(&spec.command, &spec.args);
            e.env_names = spec.env.iter().map(|(k, _)| k.clone()).collect();
        }
        RegistryLaunch::NotInstalled { target, .. } => {
            e.status = AgentStatus::NotInstalled;
            e.installable = true;
            e.command = command_line(&target.cmd, &target.args);
            e.env_names = target.env.keys().cloned().collect();
            e.install_command = Some(format!("acp-desk-cli agents install {}", a.id));
            if target.sha256.is_none() {
                // The registry's format makes the checksum optional and most entries omit it;
                // the user deciding to install should know nothing but HTTPS vouches for it.
                let unverified = "The registry gives no SHA-256 for this download: Install fetches it over HTTPS only and cannot check the file itself.";
                e.hint = Some(match e.hint.take() {
                    Some(h) => format!("{h} {unverified}"),
                    None => unverified.into(),
                });
            }
        }
        RegistryLaunch::Unavailable { .. } => {
            e.status = AgentStatus::Unavailable;
        }
    }
    e
}

#[cfg(test)]
mod tests;
