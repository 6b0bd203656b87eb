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

use std::path::Path;

use super::catalog::{self, BuiltinAgent};
use super::detect::{self, Detection, ProgramCache, Where};
use super::{
    AgentEntry, AgentError, AgentListing, AgentSource, AgentStatus, ConfigProblem, LaunchSpec,
    ProblemSeverity, Sources, demo_agent, demo_agent_path,
};
use crate::settings::{self, AgentServer, Loaded};

/// What `--agent NAME` starts, and where its definition came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub spec: LaunchSpec,
    pub source: AgentSource,
}

/// The reasons [`AgentListing::default_reason`] gives.
pub mod reason {
    pub const LAST_CHOSEN: &str = "last chosen in the window";
    pub const DEFAULT_AGENT: &str = "default_agent in settings";
    pub const FIRST_ENTRY: &str = "first agent_servers entry";
    pub const FIRST_INSTALLED: &str = "first installed agent";
    pub const DEMO: &str = "the demo agent: nothing else is installed";
}

/// One candidate definition of an id, from one source.
struct Candidate {
    entry: AgentEntry,
}

/// Every agent of every source, one entry per id (see the module docs for precedence), and
/// the default for new sessions. `cwd` is where relative commands are looked up. Blocking.
pub fn listing(sources: &Sources, cwd: &Path) -> AgentListing {
    let loaded = settings::load_from(&sources.settings_file);
    let at = Where::from_sources(sources);
    let cache = ProgramCache::global();
    let settings_file = sources.settings_file.display().to_string();

    let demo = vec![Candidate {
        entry: demo_entry(),
    }];
    let from_settings = settings_candidates(&loaded, &settings_file, cwd, &at, cache);
    let builtins: Vec<Candidate> = catalog::BUILTIN
        .iter()
        .map(|a| Candidate {
            entry: builtin_entry(a, &detect::detect_builtin(a, &at, cache), &at, cache).0,
        })
        .collect();

    // In precedence order; the listing's order is the groups' order below.
    let groups: Vec<(AgentSource, Vec<Candidate>)> = vec![
        (AgentSource::Settings, from_settings),
        (
            AgentSource::Builtin,
            demo.into_iter().chain(builtins).collect(),
        ),
    ];
    let mut problems = loaded.problems.clone();
    let agents = join(groups);
    let (default_agent, default_reason) =
        default_rule(&loaded, &agents, &settings_file, &mut problems);
    AgentListing {
        agents,
        default_agent,
        default_reason: default_reason.into(),
        settings_file,
        problems,
    }
}

/// Keeps one entry per id: the first source in precedence order wins; the others are named in
/// its `also_defined_in`. The result is in the listing's order: demo, settings, manifests,
/// built-ins, registry.
fn join(groups: Vec<(AgentSource, Vec<Candidate>)>) -> Vec<AgentEntry> {
    let mut winners: Vec<AgentEntry> = Vec::new();
    for (_, candidates) in groups {
        for c in candidates {
            match winners.iter_mut().find(|w| w.id == c.entry.id) {
                Some(w) => {
                    if !w.also_defined_in.contains(&c.entry.source) && w.source != c.entry.source {
                        w.also_defined_in.push(c.entry.source);
                    }
                }
                None => winners.push(c.entry),
            }
        }
    }
    let rank = |e: &AgentEntry| match (e.id.as_str(), e.source) {
        ("demo", AgentSource::Builtin) => 0,
        (_, AgentSource::Settings) => 1,
        (_, AgentSource::Manifest) => 2,
        (_, AgentSource::Builtin) => 3,
        (_, AgentSource::Registry) => 4,
    };
    // Stable: each group keeps its own order (the settings file's, the catalog's).
    winners.sort_by_key(rank);
    winners
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

/// Resolves `--agent NAME` over every source, in precedence order. An agent that is defined
/// but not installed still resolves (starting it then fails with its own clear reason, which
/// is what Check reports); an entry with errors does not. Blocking.
pub fn resolve_in(sources: &Sources, name: &str) -> Result<Resolved, AgentError> {
    let loaded = settings::load_from(&sources.settings_file);
    if let Some(s) = loaded.settings.agent_server(name) {
        return Ok(Resolved {
            spec: settings_spec(name, s),
            source: AgentSource::Settings,
        });
    }
    if loaded.invalid_agents.iter().any(|n| n == name) {
        let problems = loaded.agent_problems(name);
        if let Some(first) = problems.into_iter().next() {
            return Err(AgentError::Invalid {
                name: name.into(),
                problem: Box::new(first),
            });
        }
    }
    if name == "demo" {
        return Ok(Resolved {
            spec: demo_agent()?,
            source: AgentSource::Builtin,
        });
    }
    if let Some(agent) = catalog::builtin(name) {
        let at = Where::from_sources(sources);
        let cache = ProgramCache::global();
        let detection = detect::detect_builtin(agent, &at, cache);
        let (_, spec) = builtin_entry(agent, &detection, &at, cache);
        return Ok(Resolved {
            spec,
            source: AgentSource::Builtin,
        });
    }
    let mut known: Vec<String> = vec!["demo".into()];
    known.extend(loaded.settings.agent_servers.iter().map(|(n, _)| n.clone()));
    known.extend(catalog::BUILTIN.iter().map(|a| a.id.to_string()));
    Err(AgentError::Unknown(
        name.into(),
        known.join(", "),
        sources.settings_file.display().to_string(),
    ))
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
        Some(_) => "Scripted, no model: say “hello” to see what it can show.".into(),
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

fn settings_candidates(
    loaded: &Loaded,
    settings_file: &str,
    cwd: &Path,
    at: &Where,
    cache: &ProgramCache,
) -> Vec<Candidate> {
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
        out.push(Candidate { entry: e });
    }
    for name in &loaded.invalid_agents {
        let mut e = blank_entry(name, name, AgentSource::Settings);
        e.origin = Some(settings_file.into());
        e.status = AgentStatus::Invalid;
        e.problems = loaded.agent_problems(name);
        e.hint = Some(format!(
            "its entry in the settings file has errors ({} problem(s)); fix them to use it",
            e.problems.len()
        ));
        out.push(Candidate { entry: e });
    }
    out
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

    fn world() -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_owned();
        let bin = root.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(root.join("config")).unwrap();
        let sources = Sources::isolated(&root, OsString::from(&bin));
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
    }

    #[test]
    fn nothing_installed_means_the_demo_agent_and_every_builtin_says_how_to_get_it() {
        let w = world();
        let l = listing(&w.sources, &w.root);
        assert_eq!(l.agents[0].id, "demo");
        assert_eq!(
            (l.default_agent.as_str(), l.default_reason.as_str()),
            ("demo", reason::DEMO)
        );
        for a in catalog::BUILTIN {
            let e = l.get(a.id).unwrap();
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
        assert!(l.problems.is_empty());
    }

    #[test]
    fn installed_builtins_npx_and_the_first_installed_default() {
        let w = world();
        program(&w.bin, "npx");
        let goose = program(&w.bin, "goose");
        program(&w.bin, "opencode");
        let l = listing(&w.sources, &w.root);
        let g = l.get("goose").unwrap();
        assert_eq!(g.status, AgentStatus::Found);
        assert_eq!(g.command, format!("{} acp", goose.display()));
        // npx agents download on first use; they are not "installed".
        let c = l.get("claude").unwrap();
        assert_eq!(c.status, AgentStatus::Downloads);
        assert_eq!(c.command, "npx -y @agentclientprotocol/claude-agent-acp");
        assert_eq!(l.get("gemini").unwrap().status, AgentStatus::Missing);
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
        // Not installed: still resolves to its program, so starting it says "not found".
        assert_eq!(
            resolve_in(&w.sources, "gemini").unwrap().spec.command,
            "gemini"
        );
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
        assert_eq!(g[0].also_defined_in, vec![AgentSource::Builtin]);
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
            "the listing carries the settings' problems"
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
}
