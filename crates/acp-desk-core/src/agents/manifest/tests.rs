#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};

use super::*;
use crate::agents::problem::ProblemSeverity;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/manifests")
}

fn fixture(name: &str) -> (PathBuf, Result<Manifest, Vec<ConfigProblem>>) {
    let file = fixtures().join(name).join(FILE_NAME);
    let text = std::fs::read_to_string(&file).unwrap();
    let parsed = parse(&file, &text);
    (file, parsed)
}

fn good(name: &str) -> Manifest {
    match fixture(name).1 {
        Ok(m) => m,
        Err(p) => panic!("{name} should be valid: {p:#?}"),
    }
}

fn bad(name: &str) -> Vec<ConfigProblem> {
    match fixture(name).1 {
        Ok(m) => panic!("{name} should be invalid: {m:#?}"),
        Err(p) => p,
    }
}

/// The problem about `field` (exactly one), checked for its severity, line and words.
fn about<'a>(
    problems: &'a [ConfigProblem],
    field: &str,
    severity: ProblemSeverity,
    line: Option<u32>,
    words: &[&str],
) -> &'a ConfigProblem {
    let hits: Vec<_> = problems
        .iter()
        .filter(|p| p.field.as_deref() == Some(field))
        .collect();
    assert_eq!(hits.len(), 1, "one problem about {field}: {problems:#?}");
    let p = hits[0];
    assert_eq!(p.severity, severity, "{p}");
    assert_eq!(p.line, line, "line of {p}");
    for w in words {
        assert!(p.message.contains(w), "`{w}` not in: {p}");
    }
    p
}

fn in_memory(folder: &str, text: &str) -> Result<Manifest, Vec<ConfigProblem>> {
    parse(&Path::new("/cfg/agents").join(folder).join(FILE_NAME), text)
}

const MINIMAL: &str = "---
name: mini
id: mini
description: The fewest fields.
version: 1.0.0
kind: server
transport: stdio
metadata:
  aip44:
    acp_rev: c0945895
    tier: basic
---
";

#[test]
fn a_full_manifest_keeps_every_field_and_vendor_key() {
    let m = good("good-server");
    let d = &m.definition;
    assert_eq!(m.folder, "good-server");
    assert_eq!(m.id(), "good-server");
    assert_eq!(d.id, "example.good-server");
    assert_eq!(d.version, "1.2.3");
    assert_eq!(d.kind, AcpRole::Server);
    assert_eq!(d.transport, AcpTransports::One(AcpTransport::Stdio));
    assert_eq!(
        d.tags.as_deref(),
        Some(&["coding".to_string(), "local".to_string()][..])
    );
    assert_eq!(
        d.extensions.get("x-future-field"),
        Some(&serde_json::json!("kept as an extension"))
    );
    assert_eq!(
        d.metadata.vendor.get("other-vendor"),
        Some(&serde_json::json!({"anything": [1, 2, 3]}))
    );
    let aip = &d.metadata.aip44;
    assert_eq!(aip.tier, AcpTier::Basic);
    assert_eq!(aip.operator.as_deref(), Some("OPERATOR.md"));
    assert_eq!(
        aip.extensions.get("x-vendor-extension"),
        Some(&serde_json::json!({"depth": 2}))
    );
    let caps = m.declared_capabilities().unwrap();
    let agent = caps.agent.as_ref().unwrap();
    assert_eq!(agent.load_session, Some(true));
    let prompt = agent.prompt_capabilities.as_ref().unwrap();
    assert_eq!(
        (prompt.image, prompt.audio, prompt.embedded_context),
        (Some(true), None, Some(true))
    );
    assert_eq!(
        caps.client
            .as_ref()
            .unwrap()
            .fs
            .as_ref()
            .unwrap()
            .write_text_file,
        Some(true)
    );
    let servers = aip.mcp_servers.as_ref().unwrap();
    assert_eq!(servers.len(), 2);
    assert_eq!(servers[0].transport, AcpMcpTransport::Stdio);
    assert_eq!(servers[1].credential_ref.as_deref(), Some("vault/docs"));
    assert_eq!(m.drivable, Ok(()));
    assert!(m.problems.is_empty(), "{:#?}", m.problems);
    assert!(m.body.contains("# Good server"));

    // The launch: a relative command with a `/` comes from the manifest's folder.
    let launch = m.launch.as_ref().unwrap();
    let dir = fixtures().join("good-server");
    assert_eq!(launch.command, dir.join("bin/agent.sh").to_string_lossy());
    assert_eq!(launch.args, vec!["--acp", "--verbose"]);
    assert_eq!(launch.env_names(), vec!["AGENT_TOKEN", "LOG_LEVEL"]);
    let spec = m.launch_spec().unwrap();
    assert_eq!(spec.name, "good-server");
    assert_eq!(
        spec.env,
        vec![
            ("AGENT_TOKEN".to_string(), "secret-env-value".into()),
            ("LOG_LEVEL".to_string(), "debug".into())
        ]
    );

    // Secrets stay out of logs: Debug names env variables and headers without their values.
    let shown = format!("{m:?}");
    for secret in [
        "secret-env-value",
        "secret-token-value",
        "secret-header-value",
    ] {
        assert!(!shown.contains(secret), "{secret} leaked into Debug");
    }
    assert!(shown.contains("AGENT_TOKEN") && shown.contains("FILES_TOKEN"));

    // `audit.ref` relative to the manifest's folder.
    assert_eq!(m.audit(), (AuditKind::On, Some(dir.join("audit-here"))));
}

#[test]
fn cross_field_rules_are_warnings_and_audit_off_turns_the_log_off() {
    let m = good("good-bridge");
    assert_eq!(
        m.definition.transport,
        AcpTransports::List(vec![AcpTransport::Stdio, AcpTransport::Websocket])
    );
    assert_eq!(m.drivable, Ok(()));
    assert!(m.launch.is_none());
    about(
        &m.problems,
        "metadata.aip44.sandbox",
        ProblemSeverity::Warning,
        Some(9),
        &["SANDBOX.md", "tier: sandboxed", "used anyway"],
    );
    assert_eq!(m.problems.len(), 1, "{:#?}", m.problems);
    assert_eq!(m.audit(), (AuditKind::Off, None));
    let mut opts = crate::SessionOptions::new("/tmp");
    opts.audit_dir = PathBuf::from("/elsewhere");
    m.apply_audit(&mut opts);
    assert_eq!(opts.audit, AuditKind::Off);

    // A server without OPERATOR.md: a warning on the field, the manifest still loads.
    let m = in_memory("mini", MINIMAL).unwrap();
    about(
        &m.problems,
        "metadata.aip44.operator",
        ProblemSeverity::Warning,
        Some(9),
        &["OPERATOR.md", "kind: server"],
    );
    assert_eq!(m.audit(), (AuditKind::On, None));
    let mut opts = crate::SessionOptions::new("/tmp");
    let before = opts.audit_dir.clone();
    m.apply_audit(&mut opts);
    assert_eq!((opts.audit, opts.audit_dir), (AuditKind::On, before));
}

#[test]
fn audit_ref_sets_the_folder_and_a_url_is_not_one() {
    let with = |audit: &str| {
        let text = MINIMAL.replace("    tier: basic\n", &format!("    tier: basic\n{audit}"));
        in_memory("mini", &text).unwrap()
    };
    let m = with("    audit:\n      ref: /var/audit/mini\n");
    let mut opts = crate::SessionOptions::new("/tmp");
    m.apply_audit(&mut opts);
    assert_eq!(
        (opts.audit, opts.audit_dir),
        (AuditKind::On, PathBuf::from("/var/audit/mini"))
    );
    let m = with("    audit:\n      kind: external\n      ref: https://audit.example.invalid/x\n");
    assert_eq!(m.audit(), (AuditKind::On, None));
    about(
        &m.problems,
        "metadata.aip44.audit.ref",
        ProblemSeverity::Warning,
        Some(14),
        &["not a folder", "default folder"],
    );
}

#[test]
fn a_client_manifest_is_not_an_agent_and_websocket_only_is_unsupported() {
    let m = good("a-client");
    assert!(m.problems.is_empty(), "{:#?}", m.problems);
    let why = m.drivable.unwrap_err();
    assert!(
        why.contains("not an agent") && why.contains("kind: server"),
        "{why}"
    );

    let m = good("websocket-only");
    let why = m.drivable.as_ref().unwrap_err();
    assert!(
        why.contains("websocket only") && why.contains("stdio"),
        "{why}"
    );
    about(
        &m.problems,
        "transport",
        ProblemSeverity::Warning,
        Some(7),
        &["does not include `stdio`", "unsupported"],
    );
}

#[test]
fn no_front_matter_bad_yaml_and_unclosed_front_matter_are_named() {
    let p = bad("no-front-matter");
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].line, Some(1));
    assert!(p[0].message.starts_with("no front matter"), "{}", p[0]);
    assert!(p[0].file.ends_with("no-front-matter/ACP.md"));

    let p = bad("bad-yaml");
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(p[0].message.contains("not valid YAML"), "{}", p[0]);
    // The unclosed `[` opens on file line 4; libyaml notices on a later line of the file,
    // never on a line of the front matter counted from its own start.
    let line = p[0].line.unwrap();
    assert!((4..=6).contains(&line), "{}", p[0]);
    assert!(
        p[0].message.contains(&format!("line {line}")),
        "the message's lines count from the file's start: {}",
        p[0]
    );

    let p = in_memory("mini", "---\nname: mini\n").unwrap_err();
    assert!(p[0].message.contains("never closed"), "{}", p[0]);
    let p = in_memory("mini", "---\n# nothing\n---\nbody\n").unwrap_err();
    assert!(p[0].message.contains("not a mapping"), "{}", p[0]);
    let p = in_memory("mini", "---\n---\n").unwrap_err();
    assert!(p[0].message.contains("front matter is empty"), "{}", p[0]);
    let p = in_memory("mini", "---\n- a\n- b\n---\n").unwrap_err();
    assert!(p[0].message.contains("a list, not a mapping"), "{}", p[0]);
    // YAML's duplicate keys are an error, with the file's line.
    let p = in_memory(
        "mini",
        &MINIMAL.replace("id: mini\n", "id: mini\nid: again\n"),
    )
    .unwrap_err();
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(p[0].message.contains("duplicate"), "{}", p[0]);
    assert_eq!(p[0].line, Some(4), "{}", p[0]);
    // A byte-order mark and CRLF line ends are fine.
    let crlf = format!("\u{feff}{}", MINIMAL.replace('\n', "\r\n"));
    assert!(in_memory("mini", &crlf).is_ok());
}

#[test]
fn missing_fields_are_each_named_with_what_to_add() {
    let p = bad("missing-fields");
    about(
        &p,
        "id",
        ProblemSeverity::Error,
        None,
        &["missing", "add `id:"],
    );
    about(
        &p,
        "description",
        ProblemSeverity::Error,
        None,
        &["missing"],
    );
    about(
        &p,
        "version",
        ProblemSeverity::Error,
        None,
        &["missing", "1.0.0"],
    );
    // A missing nested field gets its parent's line.
    about(
        &p,
        "metadata.aip44.acp_rev",
        ProblemSeverity::Error,
        Some(6),
        &["missing", "acp_rev"],
    );
    about(
        &p,
        "metadata.aip44.operator",
        ProblemSeverity::Warning,
        Some(6),
        &[],
    );
    assert_eq!(p.len(), 5, "{p:#?}");
    for x in &p {
        assert!(x.file.ends_with("missing-fields/ACP.md"), "{x}");
    }
    let shown = p[0].to_string();
    assert!(
        shown.contains("missing-fields/ACP.md: id: missing"),
        "{shown}"
    );

    let no_meta = "---\nname: mini\nid: mini\ndescription: d\nversion: 1.0.0\nkind: server\ntransport: stdio\n---\n";
    let p = in_memory("mini", no_meta).unwrap_err();
    about(
        &p,
        "metadata",
        ProblemSeverity::Error,
        None,
        &["missing", "aip44"],
    );
    let p = in_memory(
        "mini",
        &no_meta.replace("transport: stdio\n", "transport: stdio\nmetadata: {}\n"),
    )
    .unwrap_err();
    about(
        &p,
        "metadata.aip44",
        ProblemSeverity::Error,
        Some(8),
        &["missing", "tier: basic"],
    );
}

#[test]
fn a_name_must_be_kebab_case_and_equal_its_folder() {
    let p = bad("wrong-folder");
    assert_eq!(p.len(), 1, "{p:#?}");
    about(
        &p,
        "name",
        ProblemSeverity::Error,
        Some(2),
        &["`other-name`", "folder `wrong-folder`", "rename"],
    );
    let p = in_memory("My_Agent", &MINIMAL.replace("name: mini", "name: My_Agent")).unwrap_err();
    about(
        &p,
        "name",
        ProblemSeverity::Error,
        Some(2),
        &["not kebab case", "my-agent"],
    );
    for ok in ["a", "my-agent", "agent-2"] {
        assert!(validate::is_kebab(ok), "{ok}");
    }
    for no in ["", "-a", "a-", "a--b", "A", "a_b", "a b"] {
        assert!(!validate::is_kebab(no), "{no}");
    }
}

#[test]
fn wrong_values_are_each_named_on_their_line() {
    let p = bad("bad-values");
    use ProblemSeverity::{Error, Warning};
    about(&p, "version", Error, Some(5), &["number 1.0", "quotes"]);
    about(
        &p,
        "kind",
        Error,
        Some(6),
        &["`agent`", "`server` or `bridge`"],
    );
    about(
        &p,
        "transport[1]",
        Error,
        Some(7),
        &["`carrier-pigeon`", "`stdio`"],
    );
    about(&p, "tags", Error, Some(8), &["list of text", "text"]);
    about(
        &p,
        "metadata.aip44.tier",
        Error,
        Some(12),
        &["`gold`", "`basic`"],
    );
    about(
        &p,
        "metadata.aip44.capabilities.agent.loadSession",
        Error,
        Some(15),
        &["true or false", "text"],
    );
    about(
        &p,
        "metadata.aip44.capabilities.agent.load_session",
        Warning,
        Some(16),
        &["did you mean `loadSession`?"],
    );
    about(
        &p,
        "metadata.aip44.capabilities.agent.promptCapabilities.image",
        Error,
        Some(18),
        &["true or false", "a number"],
    );
    about(
        &p,
        "metadata.aip44.audit.kind",
        Error,
        Some(20),
        &["`loud`", "`off`"],
    );
    about(
        &p,
        "metadata.aip44.mcp_servers[0].transport",
        Error,
        Some(23),
        &["`ftp`", "`sse`"],
    );
    about(
        &p,
        "metadata.aip44.mcp_servers[1].name",
        Error,
        Some(24),
        &["`files` names another MCP server"],
    );
    about(
        &p,
        "metadata.aip44.mcp_servers[1].args[0]",
        Error,
        Some(26),
        &["number 1"],
    );
    about(
        &p,
        "metadata.acp-desk.command",
        Error,
        Some(30),
        &["missing", "add `command:"],
    );
    about(
        &p,
        "metadata.acp-desk.args",
        Error,
        Some(31),
        &["list of text"],
    );
    let port = about(
        &p,
        "metadata.acp-desk.env.PORT",
        Error,
        Some(33),
        &["not text", "quotes"],
    );
    // An env value may be a secret: never repeated in the message.
    assert!(!port.message.contains("8080"), "{port}");
    about(
        &p,
        "metadata.aip44.mcp_servers[2].ref",
        Error,
        Some(29),
        &["not an http(s) URL", "https://"],
    );
    // The stdio MCP server [1] has no `ref`; [0] has none either, but is not stdio.
    about(
        &p,
        "metadata.aip44.mcp_servers[1].ref",
        Warning,
        Some(24),
        &["`stdio` MCP server", "nothing to start"],
    );
    assert!(
        !p.iter()
            .any(|x| x.field.as_deref() == Some("metadata.aip44.mcp_servers[0].ref"))
    );
}

#[test]
fn a_folder_of_manifests_loads_the_good_ones_whatever_the_bad_ones_say() {
    let (manifests, problems) = load_dir(&fixtures());
    let ids: Vec<&str> = manifests.iter().map(Manifest::id).collect();
    assert_eq!(
        ids,
        vec!["a-client", "good-bridge", "good-server", "websocket-only"]
    );
    let files_with_errors: std::collections::BTreeSet<String> = problems
        .iter()
        .filter(|p| p.severity == ProblemSeverity::Error)
        .map(|p| {
            Path::new(&p.file)
                .parent()
                .and_then(Path::file_name)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(
        files_with_errors.into_iter().collect::<Vec<_>>(),
        vec![
            "bad-values",
            "bad-yaml",
            "missing-fields",
            "no-front-matter",
            "wrong-folder"
        ]
    );
    let empty = problems
        .iter()
        .find(|p| p.file.ends_with("empty-folder"))
        .unwrap();
    assert_eq!(empty.severity, ProblemSeverity::Warning);
    assert!(empty.message.contains("has no ACP.md"), "{empty}");
    // Loaded manifests' warnings are in the list too.
    assert!(
        problems
            .iter()
            .any(|p| p.field.as_deref() == Some("metadata.aip44.sandbox"))
    );
    // A missing folder: nothing, silently.
    let (m, p) = load_dir(&fixtures().join("no-such-folder"));
    assert!(m.is_empty() && p.is_empty());
    // A file beside the folders is said to be in the wrong place.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mine.md"), MINIMAL).unwrap();
    std::fs::create_dir(dir.path().join("mini")).unwrap();
    std::fs::write(dir.path().join("mini").join(FILE_NAME), MINIMAL).unwrap();
    std::fs::create_dir(dir.path().join("latin1")).unwrap();
    std::fs::write(
        dir.path().join("latin1").join(FILE_NAME),
        b"---\nname: caf\xe9\n---\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("huge")).unwrap();
    let huge = format!("{MINIMAL}{}", "x".repeat(MAX_BYTES as usize));
    std::fs::write(dir.path().join("huge").join(FILE_NAME), huge).unwrap();
    let (m, p) = load_dir(dir.path());
    assert_eq!(m.len(), 1);
    assert!(p.iter().any(|x| x.file.ends_with("huge/ACP.md")
        && x.message.contains("at most 1048576 bytes")
        && x.severity == ProblemSeverity::Error));
    assert!(p.iter().any(|x| x.file.ends_with("mine.md")
        && x.message.contains("<name>/ACP.md")
        && x.severity == ProblemSeverity::Warning));
    assert!(p.iter().any(|x| x.file.ends_with("latin1/ACP.md")
        && x.message.contains("UTF-8")
        && x.severity == ProblemSeverity::Error));
}

#[test]
fn every_capability_difference_is_listed() {
    use agent_client_protocol_schema::v1 as acp;
    let declared = good("good-server").declared_capabilities().unwrap().clone();
    // Declared: loadSession, image, embeddedContext true; http false; audio and sse unsaid.
    let reported = acp::AgentCapabilities::new()
        .load_session(false)
        .prompt_capabilities(
            acp::PromptCapabilities::new()
                .image(true)
                .audio(true)
                .embedded_context(false),
        )
        .mcp_capabilities(acp::McpCapabilities::new().http(true).sse(false));
    let diffs = compare_capabilities(&declared, &reported);
    let got: Vec<(&str, Option<bool>, Option<bool>)> = diffs
        .iter()
        .map(|d| {
            (
                d.path.as_str(),
                d.declared.as_ref().and_then(Value::as_bool),
                d.reported.as_ref().and_then(Value::as_bool),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("agent.loadSession", Some(true), Some(false)),
            ("agent.promptCapabilities.audio", None, Some(true)),
            (
                "agent.promptCapabilities.embeddedContext",
                Some(true),
                Some(false)
            ),
            ("agent.mcpCapabilities.http", Some(false), Some(true)),
        ]
    );
    // Agreement (declared false or unsaid, reported false; true and true): nothing.
    let same = acp::AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(
            acp::PromptCapabilities::new()
                .image(true)
                .embedded_context(true),
        );
    assert!(compare_capabilities(&declared, &same).is_empty());
    // A manifest declaring nothing: every reported true is a difference.
    let all = acp::AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(
            acp::PromptCapabilities::new()
                .image(true)
                .audio(true)
                .embedded_context(true),
        )
        .mcp_capabilities(acp::McpCapabilities::new().http(true).sse(true));
    let diffs = compare_capabilities(&AcpCapabilities::default(), &all);
    assert_eq!(diffs.len(), 6);
    assert!(diffs.iter().all(|d| d.declared.is_none()));
}

#[test]
fn our_own_manifest_is_a_valid_client_declaring_what_we_advertise() {
    let own = own_manifest();
    assert_eq!(own.kind, AcpRole::Client);
    assert_eq!(own.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(own.metadata.aip44.acp_rev, ACP_REV);
    let offered = crate::session::advertised_client_capabilities();
    let client = own
        .metadata
        .aip44
        .capabilities
        .as_ref()
        .unwrap()
        .client
        .as_ref()
        .unwrap();
    let fs = client.fs.as_ref().unwrap();
    assert_eq!(
        (fs.read_text_file, fs.write_text_file, client.terminal),
        (
            Some(offered.fs.read_text_file),
            Some(offered.fs.write_text_file),
            Some(offered.terminal)
        )
    );
    assert_eq!(
        (fs.read_text_file, fs.write_text_file, client.terminal),
        (Some(true), Some(true), Some(true))
    );

    let text = render(&own).unwrap();
    assert!(text.starts_with("---\nname: acp-desk\n"), "{text}");
    let back = parse(Path::new("/somewhere/acp-desk/ACP.md"), &text).unwrap();
    assert!(back.problems.is_empty(), "{:#?}", back.problems);
    assert_eq!(back.definition, own);
    assert!(back.drivable.unwrap_err().contains("not an agent"));
    assert!(back.body.contains("# acp-desk"));
}

#[test]
fn render_writes_back_every_field_and_kept_key() {
    let m = good("good-server");
    let text = render(&m.definition).unwrap();
    let again = parse(&m.file, &text).unwrap();
    assert_eq!(again.definition, m.definition);
    assert_eq!(again.launch, m.launch);
    assert!(again.problems.is_empty(), "{:#?}", again.problems);
}
