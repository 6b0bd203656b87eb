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
    let Err(AgentError::Unavailable { name, reason }) = resolve_in(&w.sources, "opencode") else {
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
