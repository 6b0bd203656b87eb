use std::ffi::OsString;

use super::*;

/// A registry file with one agent per line, so that each agent's problems name its line.
fn file_of(agents: &[&str]) -> String {
    format!(
        "{{\"version\": \"1.0.0\", \"agents\": [\n{}\n]}}",
        agents.join(",\n")
    )
}

fn messages(parsed: &ParsedRegistry) -> Vec<String> {
    parsed.problems.iter().map(ToString::to_string).collect()
}

const GOOD_NPX: &str = r#"{"id": "good", "name": "Good", "version": "1.2.3", "description": "d", "distribution": {"npx": {"package": "@x/good@1.2.3", "args": ["--acp"], "env": {"TOKEN_MODE": "secret-value"}}}}"#;

#[test]
fn the_snapshot_loads_with_the_agents_of_its_date() {
    let index = snapshot();
    assert_eq!(
        index.source,
        RegistrySource::Snapshot {
            commit: "3de1678346d1b37b6c3f07de503043ebcbb9cbdb".into(),
            date: "2026-02-07".into()
        }
    );
    assert_eq!(index.origin(), "ACP registry snapshot 2026-02-07 (3de1678)");
    let parsed = parse(SNAPSHOT_FILE, SNAPSHOT_JSON).unwrap();
    assert!(parsed.problems.is_empty(), "{:?}", messages(&parsed));
    let ids: Vec<&str> = index.agents.iter().map(|a| a.id.as_str()).collect();
    // shared/notes/acp-protocol.md §4 lists these as the registry's entries of February 2026.
    assert_eq!(
        ids,
        [
            "auggie",
            "claude-code-acp",
            "codex-acp",
            "factory-droid",
            "gemini",
            "github-copilot",
            "kimi",
            "mistral-vibe",
            "opencode",
            "qoder",
            "qwen-code"
        ]
    );
    let info = index.info();
    assert_eq!(info.agents, 11);
    assert_eq!(info.kind, RegistrySourceKind::Snapshot);
    assert_eq!(info.date.as_deref(), Some("2026-02-07"));

    let gemini = index.find("gemini").unwrap();
    let npx = gemini.distribution.npx.as_ref().unwrap();
    assert_eq!(npx.package, "@google/gemini-cli@0.27.3");
    assert_eq!(npx.args, ["--experimental-acp"]);
    let auggie = index.find("auggie").unwrap();
    assert_eq!(
        auggie
            .distribution
            .npx
            .as_ref()
            .unwrap()
            .env
            .get("AUGMENT_DISABLE_AUTO_UPDATE"),
        Some(&"1".to_string())
    );
    let claude = index.find("claude-code-acp").unwrap();
    assert_eq!(
        claude.distribution.npx.as_ref().unwrap().package,
        "@zed-industries/claude-code-acp@0.16.0"
    );
    let codex = index.find("codex-acp").unwrap();
    assert_eq!(codex.binary_platforms(), PLATFORMS.to_vec());
    assert_eq!(codex.distribution.binary["linux-x86_64"].cmd, "./codex-acp");
    let droid = index.find("factory-droid").unwrap();
    assert!(!droid.distribution.binary.contains_key("windows-aarch64"));
    assert_eq!(
        droid.distribution.binary["linux-x86_64"].args,
        ["exec", "--output-format", "acp"]
    );
    let kimi = index.find("kimi").unwrap();
    assert_eq!(
        kimi.binary_platforms(),
        [
            "darwin-aarch64",
            "linux-aarch64",
            "linux-x86_64",
            "windows-x86_64"
        ]
    );
    let opencode = index.find("opencode").unwrap();
    assert_eq!(opencode.distribution.binary["linux-x86_64"].args, ["acp"]);
    assert!(opencode.icon.as_deref().unwrap().ends_with("/opencode.svg"));
}

#[test]
fn a_good_file_reads_every_field_and_ignores_unknown_ones() {
    let sha = "AB".repeat(32);
    let text = format!(
        r#"{{"version": "1.0.0", "extensions": [], "somethingNew": 1, "agents": [
  {{"id": "full", "name": "Full", "version": "0.9.1-rc.1", "description": "All fields",
    "repository": "https://example.com/r", "website": "https://example.com", "authors": ["A", "B"],
    "license": "MIT", "license_url": "https://example.com/l", "icon": "https://example.com/i.svg",
    "preview": {{"version": "1.0.0", "distribution": {{}}}},
    "distribution": {{
      "npx": {{"package": "@s/full@0.9.1", "cmd": "full-acp", "args": ["--acp"], "env": {{"A": "1"}}}},
      "uvx": {{"package": "full-py==0.9.1", "args": ["serve"]}},
      "binary": {{"linux-x86_64": {{"archive": "https://example.com/full.tar.gz", "sha256": "{sha}", "cmd": "./bin/full", "args": ["acp"], "env": {{"B": "2"}}}}}}
    }}}}
]}}"#
    );
    let parsed = parse("reg.json", &text).unwrap();
    assert!(parsed.problems.is_empty(), "{:?}", messages(&parsed));
    assert_eq!(parsed.version, "1.0.0");
    assert_eq!(parsed.built_from, None);
    let a = &parsed.agents[0];
    assert_eq!(
        (a.id.as_str(), a.name.as_str(), a.version.as_str()),
        ("full", "Full", "0.9.1-rc.1")
    );
    assert_eq!(a.description, "All fields");
    assert_eq!(a.repository.as_deref(), Some("https://example.com/r"));
    assert_eq!(a.website.as_deref(), Some("https://example.com"));
    assert_eq!(a.authors, ["A", "B"]);
    assert_eq!(a.license.as_deref(), Some("MIT"));
    assert_eq!(a.icon.as_deref(), Some("https://example.com/i.svg"));
    let npx = a.distribution.npx.as_ref().unwrap();
    assert_eq!(npx.cmd.as_deref(), Some("full-acp"));
    assert_eq!(npx.env.get("A").map(String::as_str), Some("1"));
    let uvx = a.distribution.uvx.as_ref().unwrap();
    assert_eq!(uvx.package, "full-py==0.9.1");
    let bin = &a.distribution.binary["linux-x86_64"];
    assert_eq!(bin.sha256.as_deref(), Some(sha.to_lowercase().as_str()));
    assert_eq!(bin.cmd, "./bin/full");
    assert_eq!(bin.env.get("B").map(String::as_str), Some("2"));
}

#[test]
fn files_of_another_format_are_refused_with_what_they_look_like() {
    let err = |text: &str| parse("/x/reg.json", text).unwrap_err().to_string();
    assert_eq!(
        err("{\"version\": \"1.0.0\",\n  \"agents\": [,]}"),
        "/x/reg.json:2:14: this is not JSON (expected value at line 2 column 14). A registry file is the ACP registry's registry.json."
    );
    let expected = "Expected the registry's combined file (registry.json: {\"version\": \"1.0.0\", \"agents\": [...]}).";
    assert_eq!(
        err("[1, 2]"),
        format!("/x/reg.json is not an ACP registry file: its top level is a list. {expected}")
    );
    assert_eq!(
        err(GOOD_NPX),
        format!(
            "/x/reg.json is not an ACP registry file: it is one agent's agent.json (from the registry repository), not the combined registry.json the registry publishes. {expected}"
        )
    );
    assert_eq!(
        err(r#"{"agent_servers": {"a": {"command": "a"}}}"#),
        format!(
            "/x/reg.json is not an ACP registry file: it has `agent_servers`: it is a settings file (put it in ACP Desk's settings file instead). {expected}"
        )
    );
    assert_eq!(
        err(r#"{"name": "x", "items": []}"#),
        format!(
            "/x/reg.json is not an ACP registry file: it has no `agents` list (its keys: name, items). {expected}"
        )
    );
    assert_eq!(
        err(r#"{"version": "1.0.0", "agents": {"a": 1}}"#),
        format!(
            "/x/reg.json is not an ACP registry file: `agents` is an object, not a list of agents. {expected}"
        )
    );
    assert_eq!(
        err(r#"{"agents": []}"#),
        format!("/x/reg.json is not an ACP registry file: it has no `version`. {expected}")
    );
    assert_eq!(
        err(r#"{"version": "2.0.0", "agents": []}"#),
        format!(
            "/x/reg.json is not an ACP registry file: its format version is \"2.0.0\"; ACP Desk reads version 1.x of the registry format (a newer ACP Desk may read this one). {expected}"
        )
    );
    // As a problem, the file and place are fields of their own.
    let p = parse("/x/reg.json", "{oops").unwrap_err().to_problem();
    assert_eq!(
        (p.file.as_str(), p.line, p.column),
        ("/x/reg.json", Some(1), Some(2))
    );
    assert!(p.message.starts_with("this is not JSON"), "{}", p.message);
    assert_eq!(p.to_string(), format!("/x/reg.json:1:2: {}", p.message));
    let p = parse("/x/reg.json", "[]").unwrap_err().to_problem();
    assert_eq!(
        p.to_string(),
        format!("/x/reg.json: not an ACP registry file: its top level is a list. {expected}")
    );
}

#[test]
fn each_bad_agent_is_skipped_with_its_line_and_field_and_the_others_load() {
    let text = file_of(&[
        GOOD_NPX,
        r#"{"id": "Bad_Id", "name": "n", "version": "1.0.0", "description": "d", "distribution": {"npx": {"package": "p"}}}"#,
        r#"{"id": "noname", "version": "1.0.0", "description": "d", "distribution": {"npx": {"package": "p"}}}"#,
        r#"{"id": "badver", "name": "n", "version": "latest", "description": "d", "distribution": {"npx": {"package": "p"}}}"#,
        r#"{"id": "nodist", "name": "n", "version": "1.0.0", "description": "d"}"#,
        r#"{"id": "future", "name": "n", "version": "1.0.0", "description": "d", "distribution": {"docker": {"image": "x"}}}"#,
        r#"{"id": "badsha", "name": "n", "version": "1.0.0", "description": "d", "distribution": {"binary": {"linux-x86_64": {"archive": "https://e.com/a.zip", "sha256": "abc", "cmd": "./a"}}}}"#,
        r#"{"id": "escape", "name": "n", "version": "1.0.0", "description": "d", "distribution": {"binary": {"linux-x86_64": {"archive": "https://e.com/a.zip", "cmd": "../../bin/sh"}}}}"#,
        r#"{"id": "installer", "name": "n", "version": "1.0.0", "description": "d", "distribution": {"binary": {"darwin-aarch64": {"archive": "https://e.com/a.dmg", "cmd": "./a"}}}}"#,
        r#"{"id": "ftp", "name": "n", "version": "1.0.0", "description": "d", "distribution": {"binary": {"linux-x86_64": {"archive": "ftp://e.com/a", "cmd": "./a"}}}}"#,
        r#"{"id": "badargs", "name": "n", "version": "1.0.0", "description": "d", "distribution": {"npx": {"package": "p", "args": "--acp"}}}"#,
        r#"{"id": "badenv", "name": "n", "version": "1.0.0", "description": "d", "distribution": {"uvx": {"package": "p", "env": {"KEY": 12345}}}}"#,
        r#"{"id": "mixed", "name": "Mixed", "version": "1.0.0", "description": "d", "authors": "me", "distribution": {"npx": {"package": 5}, "binary": {"plan9-mips": {"archive": "https://e.com/a", "cmd": "./a"}, "linux-x86_64": {"archive": "https://e.com/a", "cmd": "./a"}}}}"#,
        r#"{"id": "good", "name": "Again", "version": "1.0.0", "description": "d", "distribution": {"npx": {"package": "p"}}}"#,
        r#""just a string""#,
    ]);
    let parsed = parse("r.json", &text).unwrap();
    let ids: Vec<&str> = parsed.agents.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["good", "mixed"]);
    assert_eq!(
        parsed.agents[0].name, "Good",
        "the first of two same ids is used"
    );
    let mixed = &parsed.agents[1];
    assert!(mixed.distribution.npx.is_none());
    assert_eq!(mixed.binary_platforms(), ["linux-x86_64"]);
    assert!(mixed.authors.is_empty());
    let platforms = PLATFORMS.join(", ");
    assert_eq!(
        messages(&parsed),
        [
            "r.json:3:1: agents[1].id: \"Bad_Id\" is not a registry id (lowercase letters, digits and hyphens, starting with a letter); this agent is skipped".to_string(),
            "r.json:4:1: agents.noname.name: is missing; this agent is skipped".into(),
            "r.json:5:1: agents.badver.version: \"latest\" is not a semantic version like 1.2.3 (the registry requires one); this agent is skipped".into(),
            "r.json:6:1: agents.nodist.distribution: is missing (it says how to start the agent: npx, uvx or binary); this agent is skipped".into(),
            "r.json:7:1: agents.future.distribution: has no distribution ACP Desk can use (npx, uvx or binary), only: docker; this agent is skipped".into(),
            "r.json:8:1: agents.badsha.distribution.binary.linux-x86_64.sha256: must be 64 hexadecimal digits, found \"abc\"; this platform's binary is skipped".into(),
            "r.json:8:1: agents.badsha.distribution: has no distribution ACP Desk can use (npx, uvx or binary), only: binary; this agent is skipped".into(),
            "r.json:9:1: agents.escape.distribution.binary.linux-x86_64.cmd: \"../../bin/sh\" must be a path inside the archive (like ./agent), not absolute and without `..`; this platform's binary is skipped".into(),
            "r.json:9:1: agents.escape.distribution: has no distribution ACP Desk can use (npx, uvx or binary), only: binary; this agent is skipped".into(),
            "r.json:10:1: agents.installer.distribution.binary.darwin-aarch64.archive: https://e.com/a.dmg is an installer (.dmg), which the registry does not allow and ACP Desk does not run; this platform's binary is skipped".into(),
            "r.json:10:1: agents.installer.distribution: has no distribution ACP Desk can use (npx, uvx or binary), only: binary; this agent is skipped".into(),
            "r.json:11:1: agents.ftp.distribution.binary.linux-x86_64.archive: ftp://e.com/a: only http(s) downloads are supported, not ftp:; this platform's binary is skipped".into(),
            "r.json:11:1: agents.ftp.distribution: has no distribution ACP Desk can use (npx, uvx or binary), only: binary; this agent is skipped".into(),
            "r.json:12:1: agents.badargs.distribution.npx.args: must be a list of strings, found \"--acp\"; this distribution is skipped".into(),
            "r.json:12:1: agents.badargs.distribution: has no distribution ACP Desk can use (npx, uvx or binary), only: npx; this agent is skipped".into(),
            "r.json:13:1: agents.badenv.distribution.uvx.env.KEY: must be a string, found a number; this distribution is skipped".into(),
            "r.json:13:1: agents.badenv.distribution: has no distribution ACP Desk can use (npx, uvx or binary), only: uvx; this agent is skipped".into(),
            "r.json:14:1: agents.mixed.authors: must be a list of strings, found \"me\"; ignored".into(),
            "r.json:14:1: agents.mixed.distribution.npx.package: must be a string, found a number; this distribution is skipped".into(),
            format!("r.json:14:1: agents.mixed.distribution.binary.plan9-mips: unknown platform (expected one of {platforms}); ignored"),
            "r.json:15:1: agents.good: a second agent with the id `good`: only the first is used".into(),
            "r.json:16:1: agents[14]: an agent must be an object, found a string; it is skipped".into(),
        ]
    );
    let warnings: Vec<&str> = parsed
        .problems
        .iter()
        .filter(|p| p.severity == ProblemSeverity::Warning)
        .filter_map(|p| p.field.as_deref())
        .collect();
    assert_eq!(
        warnings,
        [
            "agents.mixed.authors",
            "agents.mixed.distribution.binary.plan9-mips"
        ]
    );
    // An env value is never quoted back (it may be a secret).
    assert!(text.contains("12345") && !messages(&parsed).concat().contains("12345"));
}

/// A folder with fake `npx` / `uvx` programs, as a PATH.
fn fake_path(programs: &[&str]) -> (tempfile::TempDir, OsString) {
    let dir = tempfile::tempdir().unwrap();
    for p in programs {
        let file = dir.path().join(p);
        std::fs::write(&file, "#!/bin/sh\nexit 0\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    let path = dir.path().as_os_str().to_owned();
    (dir, path)
}

fn agent(distribution: &str) -> RegistryAgent {
    let text = file_of(&[&format!(
        r#"{{"id": "a", "name": "A", "version": "1.0.0", "description": "d", "distribution": {distribution}}}"#
    )]);
    let mut parsed = parse("t.json", &text).unwrap();
    assert!(parsed.problems.is_empty(), "{:?}", messages(&parsed));
    parsed.agents.remove(0)
}

#[test]
fn npx_and_uvx_agents_launch_through_their_runner_or_say_it_is_missing() {
    let data = tempfile::tempdir().unwrap();
    let (_bin, with_both) = fake_path(&["npx", "uvx"]);
    let (_empty, without) = fake_path(&[]);
    let launch =
        |a: &RegistryAgent, path: &OsString| a.launch("linux-x86_64", data.path(), Some(path));

    let npx = agent(r#"{"npx": {"package": "@x/a@1.0.0", "args": ["--acp"], "env": {"K": "v"}}}"#);
    let RegistryLaunch::Ready { spec, kind } = launch(&npx, &with_both) else {
        panic!("npx found: ready")
    };
    assert_eq!(kind, DistributionKind::Npx);
    assert_eq!((spec.name.as_str(), spec.command.as_str()), ("a", "npx"));
    assert_eq!(spec.args, ["-y", "@x/a@1.0.0", "--acp"]);
    assert_eq!(spec.env, [("K".to_string(), "v".into())]);

    let with_cmd =
        agent(r#"{"npx": {"package": "@x/tools@2.0.0", "cmd": "a-acp", "args": ["--stdio"]}}"#);
    let RegistryLaunch::Ready { spec, .. } = launch(&with_cmd, &with_both) else {
        panic!()
    };
    assert_eq!(
        spec.args,
        ["-y", "--package", "@x/tools@2.0.0", "a-acp", "--stdio"]
    );

    let RegistryLaunch::NeedsRunner { runner, spec, hint } = launch(&npx, &without) else {
        panic!("npx missing")
    };
    assert_eq!(runner, "npx");
    assert_eq!(spec.command, "npx");
    assert!(
        hint.starts_with("Needs Node.js: npx was not found on PATH. Install Node.js"),
        "{hint}"
    );

    let uvx = agent(r#"{"uvx": {"package": "a-agent", "args": ["acp"]}}"#);
    let RegistryLaunch::Ready { spec, kind } = launch(&uvx, &with_both) else {
        panic!()
    };
    assert_eq!(kind, DistributionKind::Uvx);
    assert_eq!(
        (spec.command.as_str(), spec.args.as_slice()),
        ("uvx", &["a-agent".to_string(), "acp".into()][..])
    );
    let pinned = agent(r#"{"uvx": {"package": "a-agent==1.0.0"}}"#);
    let RegistryLaunch::Ready { spec, .. } = launch(&pinned, &with_both) else {
        panic!()
    };
    assert_eq!(spec.args, ["--from", "a-agent==1.0.0", "a-agent"]);
    let uvx_cmd = agent(r#"{"uvx": {"package": "a-agent@1.0.0", "cmd": "a-acp"}}"#);
    let RegistryLaunch::Ready { spec, .. } = launch(&uvx_cmd, &with_both) else {
        panic!()
    };
    assert_eq!(spec.args, ["--from", "a-agent@1.0.0", "a-acp"]);
    let RegistryLaunch::NeedsRunner { runner, hint, .. } = launch(&uvx, &without) else {
        panic!()
    };
    assert_eq!(runner, "uvx");
    assert!(
        hint.starts_with("Needs uv: uvx was not found on PATH. Install uv"),
        "{hint}"
    );
}

#[test]
fn binary_agents_are_not_installed_or_unavailable_never_hidden() {
    let data = tempfile::tempdir().unwrap();
    let (_empty, path) = fake_path(&[]);
    let bin = agent(
        r#"{"binary": {"darwin-aarch64": {"archive": "https://e.com/a-mac.zip", "cmd": "./a"}, "linux-x86_64": {"archive": "https://e.com/a.tar.gz", "sha256": "00000000000000000000000000000000000000000000000000000000000000ff", "cmd": "./a", "args": ["acp"]}}}"#,
    );
    let RegistryLaunch::NotInstalled { target, hint } =
        bin.launch("linux-x86_64", data.path(), Some(&path))
    else {
        panic!("not installed")
    };
    assert_eq!(target.archive, "https://e.com/a.tar.gz");
    assert_eq!(
        hint,
        "Not installed: Install (or `acp-desk-cli agents install a`) downloads https://e.com/a.tar.gz into ACP Desk's data folder and checks its SHA-256."
    );
    let RegistryLaunch::Unavailable { platforms, hint } =
        bin.launch("windows-x86_64", data.path(), Some(&path))
    else {
        panic!("unavailable")
    };
    assert_eq!(platforms, ["darwin-aarch64", "linux-x86_64"]);
    assert_eq!(
        hint,
        "No build for this platform (windows-x86_64); A has binaries for darwin-aarch64, linux-x86_64 only."
    );
    // A binary to install is preferred over an npx whose Node.js is missing; npx when found.
    let both = agent(
        r#"{"npx": {"package": "a"}, "binary": {"linux-x86_64": {"archive": "https://e.com/a", "cmd": "./a"}}}"#,
    );
    assert!(matches!(
        both.launch("linux-x86_64", data.path(), Some(&path)),
        RegistryLaunch::NotInstalled { .. }
    ));
    let (_bin, npx) = fake_path(&["npx"]);
    assert!(matches!(
        both.launch("linux-x86_64", data.path(), Some(&npx)),
        RegistryLaunch::Ready {
            kind: DistributionKind::Npx,
            ..
        }
    ));
    assert!(matches!(
        both.launch("windows-x86_64", data.path(), Some(&path)),
        RegistryLaunch::NeedsRunner { runner: "npx", .. }
    ));
}

#[test]
fn current_platform_is_one_of_the_registry_keys_here() {
    let p = current_platform();
    if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        assert_eq!(p, "linux-x86_64");
    }
    assert!(PLATFORMS.contains(&p) || p == "unknown");
}

#[test]
fn an_imported_file_is_used_over_the_snapshot_and_a_bad_one_is_refused() {
    let data = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    assert_eq!(load(data.path()), (snapshot(), Vec::new()));

    // Another format: refused, nothing copied, the snapshot still used.
    let settings = src.path().join("settings.json");
    std::fs::write(&settings, r#"{"agent_servers": {}}"#).unwrap();
    let err = import(&settings, data.path()).unwrap_err();
    assert!(matches!(err, RegistryError::NotRegistry { .. }), "{err}");
    assert!(err.to_string().contains("it is a settings file"), "{err}");
    assert!(!imported_file(data.path()).exists());
    // A registry whose every agent is bad: refused too.
    let all_bad = src.path().join("bad.json");
    std::fs::write(
        &all_bad,
        file_of(&[r#"{"id": "x", "name": "x", "version": "x", "description": "d", "distribution": {"npx": {"package": "p"}}}"#]),
    )
    .unwrap();
    let err = import(&all_bad, data.path()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: none of its 1 agents can be used; the first problem: {}:2:1: agents.x.version: \"x\" is not a semantic version like 1.2.3 (the registry requires one); this agent is skipped",
            all_bad.display(),
            all_bad.display()
        )
    );
    assert!(!imported_file(data.path()).exists());
    let missing = import(&src.path().join("nope.json"), data.path()).unwrap_err();
    assert!(
        missing.to_string().starts_with(&format!(
            "could not read the registry file {}: ",
            src.path().join("nope.json").display()
        )),
        "{missing}"
    );

    // A good one (with a bad agent in it): copied byte for byte, and used from then on.
    let good = src.path().join("registry.json");
    let text = file_of(&[
        GOOD_NPX,
        r#"{"id": "broken", "name": "b", "version": "1.0.0", "description": "d"}"#,
    ]);
    std::fs::write(&good, &text).unwrap();
    let (index, problems) = import(&good, data.path()).unwrap();
    assert_eq!(index.agents.len(), 1);
    assert_eq!(problems.len(), 1);
    assert_eq!(
        problems[0].field.as_deref(),
        Some("agents.broken.distribution")
    );
    assert_eq!(
        std::fs::read_to_string(imported_file(data.path())).unwrap(),
        text
    );
    let RegistrySource::Imported {
        file, imported_at, ..
    } = &index.source
    else {
        panic!("imported")
    };
    assert_eq!(file, &good.display().to_string());
    let (loaded, load_problems) = load(data.path());
    assert_eq!(loaded.agents, index.agents);
    assert_eq!(loaded.source, index.source);
    // The same problems, naming the copy that load reads.
    assert_eq!(load_problems.len(), 1);
    assert_eq!(
        load_problems[0].file,
        imported_file(data.path()).display().to_string()
    );
    assert_eq!(
        (
            &load_problems[0].field,
            &load_problems[0].message,
            load_problems[0].line
        ),
        (&problems[0].field, &problems[0].message, problems[0].line)
    );
    let info = loaded.info();
    assert_eq!(info.kind, RegistrySourceKind::Imported);
    assert_eq!(info.agents, 1);
    assert_eq!(
        info.label,
        format!(
            "ACP registry imported from {} on {}",
            good.display(),
            &imported_at[..10]
        )
    );

    // The copy damaged later: the snapshot again, with the reason.
    std::fs::write(imported_file(data.path()), "{broken").unwrap();
    let (fallback, problems) = load(data.path());
    assert_eq!(fallback, snapshot());
    assert_eq!(problems.len(), 1);
    assert_eq!(
        problems[0].to_string(),
        format!(
            "{}:1:2: this is not JSON (key must be a string at line 1 column 2). A registry file is the ACP registry's registry.json. The built-in ACP registry snapshot 2026-02-07 (3de1678) is used instead; import a registry file again to replace it.",
            imported_file(data.path()).display()
        )
    );
}

#[test]
fn versions_and_ids_are_safe_folder_names() {
    for ok in ["1.2.3", "0.0.1-rc.1", "10.20.30+build.5", "1.9.0"] {
        assert!(valid_version(ok), "{ok}");
    }
    for bad in [
        "1.2",
        "v1.2.3",
        "1.2.x",
        "1.2.3/../../x",
        "latest",
        "1..2.3",
        "",
    ] {
        assert!(!valid_version(bad), "{bad}");
    }
    for ok in ["a", "codex-acp", "a1"] {
        assert!(valid_id(ok), "{ok}");
    }
    for bad in ["", "1a", "A", "a_b", "a/b", ".."] {
        assert!(!valid_id(bad), "{bad}");
    }
    for ok in ["./a", "a", "bin/a", "./bin/a.exe"] {
        assert!(safe_relative(ok), "{ok}");
    }
    for bad in ["", ".", "/bin/sh", "../a", "a/../../b", "a\\..\\b", "C:\\a"] {
        assert!(!safe_relative(bad), "{bad}");
    }
}
