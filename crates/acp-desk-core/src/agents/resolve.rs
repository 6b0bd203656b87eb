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
        e.env_names = s.env.keys().cloned().collect();
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
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::ffi::OsString;
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

    fn program(dir: &Path, name: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    struct World {
        _dir: tempfile::TempDir,
        root: PathBuf,
        bin: PathBuf,
        sources: Sources,
    }

    /// A registry of our own (imported into the data folder, as a user would), so the tests
    /// do not depend on the shipped snapshot: two ids the catalog has too, one of its own, one
    /// with no build for this platform.
    fn registry_file(root: &Path) -> PathBuf {
        let here = registry::current_platform();
        let other = if here == "windows-aarch64" {
            "darwin-x86_64"
        } else {
            "windows-aarch64"
        };
        let agent = |id: &str, distribution: serde_json::Value| {
            serde_json::json!({
                "id": id, "name": format!("{id} (registry)"), "version": "1.0.0",
                "description": format!("{id} from the registry"), "authors": ["someone"],
                "license": "MIT", "distribution": distribution,
            })
        };
        let binary = |platform: &str| {
            serde_json::json!({"binary": {platform: {
                "archive": "https://example.invalid/agent.tar.gz",
                "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
                "cmd": "./agent", "args": ["acp"],
            }}})
        };
        let file = root.join("registry.json");
        let text = serde_json::json!({"version": "1.0.0", "agents": [
            agent("gemini", serde_json::json!({"npx": {"package": "@google/gemini-cli@0.27.3", "args": ["--experimental-acp"]}})),
            agent("opencode", binary(here)),
            agent("reg-only", serde_json::json!({"npx": {"package": "reg-only-agent", "env": {"REG_TOKEN": "t0ken"}}})),
            agent("elsewhere", binary(other)),
        ]});
        std::fs::write(&file, text.to_string()).unwrap();
        file
    }

    fn world() -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_owned();
        let bin = root.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(root.join("config")).unwrap();
        let sources = Sources::isolated(&root, OsString::from(&bin));
        registry::import(&registry_file(&root), &sources.data_dir).unwrap();
        World {
            _dir: dir,
            root,
            bin,
            sources,
        }
    }

    impl World {
        fn settings(&self, text: &str) {
            std::fs::write(&self.sources.settings_file, text).unwrap();
        }

        fn manifest(&self, name: &str, text: &str) -> PathBuf {
            let dir = self.sources.config_dir.join("agents").join(name);
            std::fs::create_dir_all(&dir).unwrap();
            let file = dir.join("ACP.md");
            std::fs::write(&file, text).unwrap();
            file
        }
    }

    fn manifest_text(name: &str, kind: &str, launch: Option<&str>) -> String {
        let launch = launch
            .map(|c| format!("  acp-desk:\n    command: {c}\n    args: [--acp]\n    env:\n      M_TOKEN: m-secret\n"))
            .unwrap_or_default();
        format!(
            "---\nname: {name}\nid: example.{name}\ndescription: The {name} agent.\nversion: 2.0.0\nkind: {kind}\ntransport: stdio\nmetadata:\n  aip44:\n    acp_rev: c0945895a63233bfdbdf95990104c11f5d8d8991\n    tier: basic\n    operator: OPERATOR.md\n{launch}---\n\n# {name}\n"
        )
    }

    #[test]
    fn nothing_installed_means_the_demo_agent_and_every_agent_says_how_to_get_it() {
        let w = world();
        let l = listing(&w.sources, &w.root);
        assert_eq!(l.agents[0].id, "demo");
        assert_eq!(
            (l.default_agent.as_str(), l.default_reason.as_str()),
            ("demo", reason::DEMO)
        );
        for a in catalog::BUILTIN {
            let e = l.get(a.id).unwrap();
            if ["gemini", "opencode"].contains(&a.id) {
                // Not installed here: the registry's launch, the catalog's named beside it.
                assert_eq!(e.source, AgentSource::Registry, "{}", a.id);
                assert_eq!(e.also_defined_in, vec![AgentSource::Builtin], "{}", a.id);
                continue;
            }
            assert_eq!(e.source, AgentSource::Builtin);
            assert_eq!(
                e.status,
                AgentStatus::Missing,
                "{}: no npx on this PATH",
                a.id
            );
            assert_eq!(e.install_command.as_deref(), Some(a.install_command));
            assert!(e.hint.as_deref().unwrap().contains(a.install_command));
        }
        // npx missing: says to install Node.js; the catalog's install command stays.
        let g = l.get("gemini").unwrap();
        assert_eq!(g.status, AgentStatus::Missing);
        assert!(g.hint.as_deref().unwrap().contains("Node.js"), "{g:?}");
        assert_eq!(
            g.install_command.as_deref(),
            Some("npm install -g @google/gemini-cli")
        );
        let o = l.get("opencode").unwrap();
        assert_eq!((o.status, o.installable), (AgentStatus::NotInstalled, true));
        assert_eq!(
            o.install_command.as_deref(),
            Some("acp-desk-cli agents install opencode")
        );
        let e = l.get("elsewhere").unwrap();
        assert_eq!(e.status, AgentStatus::Unavailable, "shown, not hidden");
        assert!(
            e.hint
                .as_deref()
                .unwrap()
                .contains("No build for this platform")
        );
        assert_eq!(l.get("reg-only").unwrap().env_names, vec!["REG_TOKEN"]);
        assert!(!serde_json::to_string(&l).unwrap().contains("t0ken"));
        let info = l.registry.as_ref().unwrap();
        assert_eq!(
            (info.kind, info.agents),
            (registry::RegistrySourceKind::Imported, 4)
        );
        assert!(l.problems.is_empty(), "{:?}", l.problems);
        // The registry comes last in the listing.
        let last: Vec<&str> = l
            .agents
            .iter()
            .rev()
            .take(2)
            .map(|a| a.id.as_str())
            .collect();
        assert_eq!(last, vec!["elsewhere", "reg-only"]);
        let Err(AgentError::Unavailable { name, reason }) = resolve_in(&w.sources, "opencode")
        else {
            panic!("a binary not installed yet does not start")
        };
        assert_eq!(name, "opencode");
        assert!(reason.contains("agents install opencode"), "{reason}");
        assert!(matches!(
            resolve_in(&w.sources, "elsewhere"),
            Err(AgentError::Unavailable { .. })
        ));
    }

    #[test]
    fn a_local_install_beats_a_download_and_the_first_installed_is_the_default() {
        let w = world();
        program(&w.bin, "npx");
        let goose = program(&w.bin, "goose");
        let opencode = program(&w.bin, "opencode");
        let l = listing(&w.sources, &w.root);
        let g = l.get("goose").unwrap();
        assert_eq!(g.status, AgentStatus::Found);
        assert_eq!(g.command, format!("{} acp", goose.display()));
        // Installed here: the catalog's local launch, the registry named beside it.
        let o: Vec<&AgentEntry> = l.agents.iter().filter(|a| a.id == "opencode").collect();
        assert_eq!(o.len(), 1, "one agent, not two");
        assert_eq!(
            (o[0].source, o[0].status),
            (AgentSource::Builtin, AgentStatus::Found)
        );
        assert_eq!(o[0].also_defined_in, vec![AgentSource::Registry]);
        let r = resolve_in(&w.sources, "opencode").unwrap();
        assert_eq!(
            (r.spec.command.as_str(), r.source),
            (opencode.to_str().unwrap(), AgentSource::Builtin)
        );
        // Not installed, in the registry through npx: downloads on first use.
        let gem = l.get("gemini").unwrap();
        assert!(
            gem.hint
                .as_deref()
                .unwrap()
                .contains("npm install -g @google/gemini-cli")
        );
        assert_eq!(
            (gem.source, gem.status),
            (AgentSource::Registry, AgentStatus::Downloads)
        );
        assert_eq!(
            gem.command,
            "npx -y @google/gemini-cli@0.27.3 --experimental-acp"
        );
        let r = resolve_in(&w.sources, "gemini").unwrap();
        assert_eq!(
            (r.spec.command.as_str(), r.source),
            ("npx", AgentSource::Registry)
        );
        // npx agents download on first use; they are not "installed".
        let c = l.get("claude").unwrap();
        assert_eq!(c.status, AgentStatus::Downloads);
        assert_eq!(c.command, "npx -y @agentclientprotocol/claude-agent-acp");
        // goose comes before opencode in the catalog.
        assert_eq!(
            (l.default_agent.as_str(), l.default_reason.as_str()),
            ("goose", reason::FIRST_INSTALLED)
        );
        let r = resolve_in(&w.sources, "goose").unwrap();
        assert_eq!(r.spec.command, goose.display().to_string());
        assert_eq!(r.spec.args, vec!["acp"]);
        assert_eq!(
            resolve_in(&w.sources, "claude").unwrap().spec.command,
            "npx"
        );
        // Not installed and in no registry: still resolves to its program, so starting it
        // says "not found" (what Check reports).
        assert_eq!(
            resolve_in(&w.sources, "copilot").unwrap().spec.command,
            "copilot"
        );
    }

    #[test]
    fn manifests_join_between_settings_and_the_registry() {
        let w = world();
        let agent = program(&w.bin, "m-agent");
        w.manifest(
            "my-manifest",
            &manifest_text("my-manifest", "server", Some("m-agent")),
        );
        w.manifest("a-client", &manifest_text("a-client", "client", None));
        w.manifest("broken", "---\nname: broken\n---\n");
        // Described by a manifest, launched by a settings entry.
        w.manifest("described", &manifest_text("described", "server", None));
        // A manifest with the id of a registry agent wins over it.
        w.manifest(
            "reg-only",
            &manifest_text("reg-only", "bridge", Some("m-agent")),
        );
        w.settings(
            r#"{"agent_servers": {"mine": {"command": "m-agent", "manifest": "described"},
                                  "ghost": {"command": "m-agent", "manifest": "no-such"}}}"#,
        );
        let l = listing(&w.sources, &w.root);
        let ids: Vec<&str> = l.agents.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(
            &ids[..7],
            &[
                "demo",
                "mine",
                "ghost",
                "a-client",
                "my-manifest",
                "reg-only",
                "broken"
            ],
            "{ids:?}"
        );
        assert!(
            !ids.contains(&"described"),
            "shown as `mine`, whose description it is"
        );
        let m = l.get("my-manifest").unwrap();
        assert_eq!(
            (m.source, m.status),
            (AgentSource::Manifest, AgentStatus::Found)
        );
        assert_eq!(m.command, "m-agent --acp");
        assert_eq!(m.env_names, vec!["M_TOKEN"]);
        assert_eq!(m.version.as_deref(), Some("2.0.0"));
        assert!(
            m.manifest_file
                .as_deref()
                .unwrap()
                .ends_with("my-manifest/ACP.md")
        );
        assert!(!serde_json::to_string(&l).unwrap().contains("m-secret"));
        assert_eq!(l.get("a-client").unwrap().status, AgentStatus::Unsupported);
        let b = l.get("broken").unwrap();
        assert_eq!(b.status, AgentStatus::Invalid);
        assert!(!b.problems.is_empty());
        let r = l.get("reg-only").unwrap();
        assert_eq!(r.source, AgentSource::Manifest);
        assert_eq!(r.also_defined_in, vec![AgentSource::Registry]);
        let mine = l.get("mine").unwrap();
        assert_eq!(mine.description.as_deref(), Some("The described agent."));
        assert!(mine.manifest_file.is_some());
        let ghost = l.get("ghost").unwrap();
        assert_eq!(ghost.problems.len(), 1);
        assert_eq!(
            ghost.problems[0].field.as_deref(),
            Some("agent_servers.ghost.manifest")
        );

        let r = resolve_in(&w.sources, "my-manifest").unwrap();
        assert_eq!(
            (r.spec.command.as_str(), r.source),
            ("m-agent", AgentSource::Manifest)
        );
        assert_eq!(r.manifest.as_ref().unwrap().id(), "my-manifest");
        let r = resolve_in(&w.sources, "mine").unwrap();
        assert_eq!(r.source, AgentSource::Settings);
        assert_eq!(r.manifest.as_ref().unwrap().id(), "described");
        // The manifest's own id resolves to the entry that launches it.
        let r = resolve_in(&w.sources, "described").unwrap();
        assert_eq!(
            (r.spec.name.as_str(), r.source),
            ("described", AgentSource::Manifest)
        );
        assert_eq!(r.spec.command, "m-agent");
        assert!(matches!(
            resolve_in(&w.sources, "a-client"),
            Err(AgentError::Unavailable { .. })
        ));
        let Err(AgentError::Invalid { name, problem }) = resolve_in(&w.sources, "broken") else {
            panic!("a manifest with errors does not start")
        };
        assert_eq!(name, "broken");
        assert!(problem.file.ends_with("broken/ACP.md"));
        assert!(agent.is_file());
    }

    #[test]
    fn settings_come_first_in_file_order_and_override_a_builtin_of_the_same_name() {
        let w = world();
        program(&w.bin, "goose");
        let mine = program(&w.bin, "my-agent");
        w.settings(
            r#"{
  // not alphabetical on purpose
  "agent_servers": {
    "zz-mine": {"command": "my-agent", "env": {"TOKEN": "s3cret"}},
    "gemini": {"command": "/opt/gemini", "args": ["--acp"]},
    "broken": {"command": 5},
  },
}"#,
        );
        let l = listing(&w.sources, &w.root);
        let ids: Vec<&str> = l.agents.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(&ids[..4], &["demo", "zz-mine", "gemini", "broken"]);
        assert_eq!(
            (l.default_agent.as_str(), l.default_reason.as_str()),
            ("zz-mine", reason::FIRST_ENTRY)
        );
        let z = l.get("zz-mine").unwrap();
        assert_eq!(
            (z.status, z.source),
            (AgentStatus::Found, AgentSource::Settings)
        );
        assert_eq!(z.env_names, vec!["TOKEN"]);
        // Env values never reach the listing.
        assert!(!serde_json::to_string(&l).unwrap().contains("s3cret"));
        let g: Vec<&AgentEntry> = l.agents.iter().filter(|a| a.id == "gemini").collect();
        assert_eq!(g.len(), 1, "one entry per id");
        assert_eq!(g[0].source, AgentSource::Settings);
        assert_eq!(
            g[0].also_defined_in,
            vec![AgentSource::Registry, AgentSource::Builtin]
        );
        assert_eq!(g[0].status, AgentStatus::Missing);
        let b = l.get("broken").unwrap();
        assert_eq!(b.status, AgentStatus::Invalid);
        assert_eq!(b.problems.len(), 1);
        assert_eq!(
            b.problems[0].field.as_deref(),
            Some("agent_servers.broken.command")
        );
        assert_eq!(
            l.problems.len(),
            1,
            "the listing carries the settings' problems (an override is no problem)"
        );
        let r = resolve_in(&w.sources, "gemini").unwrap();
        assert_eq!(
            (r.spec.command.as_str(), r.source),
            ("/opt/gemini", AgentSource::Settings)
        );
        let r = resolve_in(&w.sources, "zz-mine").unwrap();
        assert_eq!(r.spec.command, "my-agent");
        assert_eq!(r.spec.env, vec![("TOKEN".into(), "s3cret".into())]);
        assert!(mine.is_file());
        let Err(AgentError::Invalid { name, problem }) = resolve_in(&w.sources, "broken") else {
            panic!("an entry with errors must not resolve")
        };
        assert_eq!(name, "broken");
        assert_eq!(problem.line, Some(6));
        let Err(AgentError::Unknown(name, known, file)) = resolve_in(&w.sources, "nope") else {
            panic!("nope is unknown")
        };
        assert_eq!(name, "nope");
        for k in ["demo", "zz-mine", "gemini", "claude", "copilot"] {
            assert!(known.contains(k), "{known} lacks {k}");
        }
        assert!(file.ends_with("settings.json"));
    }

    #[test]
    fn the_default_rule() {
        let w = world();
        program(&w.bin, "goose");
        w.settings(r#"{"agent_servers": {"b": {"command": "b"}, "a": {"command": "a"}}, "default_agent": "a"}"#);
        let l = listing(&w.sources, &w.root);
        assert_eq!(
            (l.default_agent.as_str(), l.default_reason.as_str()),
            ("a", reason::DEFAULT_AGENT)
        );
        // The window's last choice wins while it is an agent.
        assert_eq!(
            default_for_new_sessions(&l, Some("goose")),
            ("goose".into(), reason::LAST_CHOSEN.into())
        );
        assert_eq!(
            default_for_new_sessions(&l, Some("gone")),
            ("a".into(), reason::DEFAULT_AGENT.into())
        );
        assert_eq!(default_for_new_sessions(&l, None).0, "a");
        // A default_agent that is no agent: a warning, and the next rule.
        w.settings(r#"{"agent_servers": {"b": {"command": "b"}}, "default_agent": "nope"}"#);
        let l = listing(&w.sources, &w.root);
        assert_eq!(
            (l.default_agent.as_str(), l.default_reason.as_str()),
            ("b", reason::FIRST_ENTRY)
        );
        assert_eq!(l.problems.len(), 1);
        assert_eq!(l.problems[0].field.as_deref(), Some("default_agent"));
        assert_eq!(l.problems[0].severity, ProblemSeverity::Warning);
        // A default_agent naming a built-in.
        w.settings(r#"{"default_agent": "goose"}"#);
        assert_eq!(
            listing(&w.sources, &w.root).default_reason,
            reason::DEFAULT_AGENT
        );
    }

    #[test]
    fn a_broken_settings_file_still_lists_and_resolves_the_rest() {
        let w = world();
        w.settings("{\"agent_servers\": {oops");
        let l = listing(&w.sources, &w.root);
        assert_eq!(l.agents[0].id, "demo");
        assert_eq!(l.problems.len(), 1);
        assert_eq!(l.problems[0].line, Some(1));
        assert!(resolve_in(&w.sources, "goose").is_ok());
    }

    #[test]
    fn demo_is_reserved_and_zed_entries_for_builtins_do_not_turn_them_off() {
        let w = world();
        program(&w.bin, "goose");
        // Zed's own entries for its built-in agents have no command; a `demo` entry would hide
        // the demo agent, and a manifest named demo likewise.
        w.settings(
            r#"{"agent_servers": {
                "demo": {"command": 3},
                "goose": {"default_mode": "auto"},
                "claude": {"ignore_system_version": false}
            }}"#,
        );
        w.manifest("demo", &manifest_text("demo", "server", Some("/bin/false")));
        let l = listing(&w.sources, &w.root);
        let demo: Vec<_> = l.agents.iter().filter(|a| a.id == "demo").collect();
        assert_eq!(demo.len(), 1);
        assert_eq!(demo[0].source, AgentSource::Builtin);
        let said = |field: &str| {
            l.problems
                .iter()
                .find(|p| p.field.as_deref() == Some(field))
                .unwrap_or_else(|| panic!("no problem for {field}: {:?}", l.problems))
                .clone()
        };
        assert!(
            said("agent_servers.demo")
                .message
                .contains("built-in demo agent")
        );
        assert_eq!(said("name").severity, ProblemSeverity::Error);
        let goose = said("agent_servers.goose");
        assert_eq!(goose.severity, ProblemSeverity::Warning);
        assert!(
            goose.message.contains("built-in `goose`"),
            "{}",
            goose.message
        );
        // The built-ins still work, and `demo` is never an entry with errors.
        let g = resolve_in(&w.sources, "goose").unwrap();
        assert_eq!(g.source, AgentSource::Builtin);
        assert!(
            l.agents
                .iter()
                .any(|a| a.id == "claude" && a.status != AgentStatus::Invalid)
        );
        match resolve_in(&w.sources, "demo") {
            Ok(r) => assert_eq!(r.source, AgentSource::Builtin),
            Err(e) => assert!(matches!(e, AgentError::DemoMissing), "{e}"),
        }
    }

    #[test]
    fn an_entry_with_an_error_is_refused_with_the_error_not_a_warning() {
        let w = world();
        w.settings(r#"{"agent_servers": {"mine": {"default_mode": "x", "args": ["a"]}}}"#);
        let Err(AgentError::Invalid { problem, .. }) = resolve_in(&w.sources, "mine") else {
            panic!("mine should be invalid")
        };
        assert_eq!(problem.severity, ProblemSeverity::Error);
        assert_eq!(problem.field.as_deref(), Some("agent_servers.mine.command"));
        let l = listing(&w.sources, &w.root);
        let mine = l.get("mine").unwrap();
        assert_eq!(
            mine.hint.as_deref(),
            Some("its entry in the settings file has an error; fix it to use this agent")
        );
    }

    #[test]
    fn a_registry_agent_under_another_id_is_its_builtin_once() {
        let w = world();
        let file = w.root.join("aliases.json");
        let agent = |id: &str| {
            serde_json::json!({"id": id, "name": id, "version": "1.0.0", "description": "d",
                "authors": ["a"], "license": "MIT",
                "distribution": {"npx": {"package": format!("@x/{id}")}}})
        };
        std::fs::write(
            &file,
            serde_json::json!({"version": "1.0.0", "agents": [agent("codex-acp"), agent("github-copilot")]})
                .to_string(),
        )
        .unwrap();
        registry::import(&file, &w.sources.data_dir).unwrap();
        let l = listing(&w.sources, &w.root);
        assert!(l.get("codex-acp").is_none());
        assert!(l.get("github-copilot").is_none());
        assert!(
            l.get("codex")
                .unwrap()
                .also_defined_in
                .contains(&AgentSource::Registry)
        );
        assert!(
            l.get("copilot")
                .unwrap()
                .also_defined_in
                .contains(&AgentSource::Registry)
        );
        // The registry id still starts the registry's distribution.
        let r = resolve_in(&w.sources, "codex-acp").unwrap();
        assert_eq!(r.source, AgentSource::Registry);
    }

    #[test]
    fn debug_shows_env_names_never_values() {
        let spec = LaunchSpec {
            name: "a".into(),
            command: "c".into(),
            args: vec![],
            env: vec![("API_KEY".into(), "s3cret-value".into())],
            cwd: None,
        };
        let shown = format!("{spec:?}");
        assert!(
            shown.contains("API_KEY") && !shown.contains("s3cret"),
            "{shown}"
        );
        let w = world();
        w.settings(r#"{"agent_servers": {"m": {"command": "x", "env": {"TOKEN": "s3cret-value"}}},
            "mcp_servers": {"h": {"url": "https://h.example/mcp", "headers": {"Authorization": "Bearer s3cret-value"}}}}"#);
        let loaded = settings::load_from(&w.sources.settings_file);
        let shown = format!("{:?}", loaded.settings);
        assert!(
            shown.contains("TOKEN") && shown.contains("Authorization"),
            "{shown}"
        );
        assert!(!shown.contains("s3cret"), "{shown}");
    }

    #[test]
    fn settings_and_a_manifest_naming_one_agent_is_said() {
        let w = world();
        w.settings(r#"{"agent_servers": {"twin": {"command": "/bin/true"}}}"#);
        w.manifest("twin", &manifest_text("twin", "server", Some("/bin/false")));
        let l = listing(&w.sources, &w.root);
        let p = l
            .problems
            .iter()
            .find(|p| p.field.as_deref() == Some("agent_servers.twin"))
            .unwrap();
        assert_eq!(p.severity, ProblemSeverity::Warning);
        assert_eq!(
            p.message,
            "`twin` is also defined by a manifest; this definition (your settings) is the one used (settings, then manifests, then the registry, then built-in). Rename one to keep both."
        );
        assert_eq!(
            resolve_in(&w.sources, "twin").unwrap().spec.command,
            "/bin/true"
        );
    }

    #[test]
    fn a_binary_without_a_sha256_says_it_cannot_be_checked() {
        let w = world();
        let file = w.root.join("unchecked.json");
        let here = registry::current_platform();
        std::fs::write(
            &file,
            serde_json::json!({"version": "1.0.0", "agents": [{
                "id": "unchecked", "name": "Unchecked", "version": "1.0.0", "description": "d",
                "authors": ["a"], "license": "MIT",
                "distribution": {"binary": {here: {"archive": "https://example.invalid/a.tar.gz", "cmd": "./a"}}}
            }]})
            .to_string(),
        )
        .unwrap();
        registry::import(&file, &w.sources.data_dir).unwrap();
        let l = listing(&w.sources, &w.root);
        let e = l.get("unchecked").unwrap();
        assert_eq!(e.status, AgentStatus::NotInstalled);
        assert!(
            e.hint.as_deref().unwrap_or("").contains("no SHA-256"),
            "{:?}",
            e.hint
        );
    }
}
