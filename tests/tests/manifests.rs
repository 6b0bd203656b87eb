//! AIP-44 manifests end to end: a manifest agent's `audit` reaching the session's audit log (the
//! demo agent described by an `ACP.md`), and `acp-desk-cli manifest` printing a manifest that
//! the same validator accepts.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use acp_desk_core::agents::manifest::{self, AcpRole, Manifest};
use acp_desk_core::audit::AuditKind;
use common::*;

/// `<root>/agents/<name>/ACP.md` describing the demo agent, with `audit` as given (YAML lines
/// under `audit:`, or none).
fn demo_manifest(root: &Path, name: &str, audit: &[&str]) -> Manifest {
    let dir = root.join("agents").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let mut audit_yaml = String::new();
    if !audit.is_empty() {
        audit_yaml.push_str("    audit:\n");
        for line in audit {
            audit_yaml.push_str(&format!("      {line}\n"));
        }
    }
    let text = format!(
        "---\nname: {name}\nid: {name}\ndescription: The demo agent, described by a manifest.\nversion: 1.0.0\nkind: server\ntransport: stdio\nmetadata:\n  aip44:\n    acp_rev: {rev}\n    tier: basic\n    operator: OPERATOR.md\n{audit_yaml}  acp-desk:\n    command: {demo}\n    env:\n      DEMO_SECRET: not-for-logs\n---\nThe demo agent.\n",
        rev = manifest::ACP_REV,
        demo = bin("acp-desk-demo-agent").display(),
    );
    let file = dir.join(manifest::FILE_NAME);
    std::fs::write(&file, &text).unwrap();
    let m = manifest::parse(&file, &text).unwrap();
    assert!(m.problems.is_empty(), "{:#?}", m.problems);
    m
}

/// Every file below `dir` (none when it does not exist).
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files_below(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Starts the manifest's agent as the front ends do (its launch, its audit applied to the
/// options, the audit log on by default in `default_audit`), runs one turn and closes.
async fn run_manifest_agent(m: &Manifest, project: &Path, default_audit: &Path) -> String {
    let mut o = opts(project);
    // What a user's session has: the log on, in the default folder.
    o.audit = AuditKind::On;
    o.audit_dir = default_audit.to_path_buf();
    o.watch_roots = false;
    m.apply_audit(&mut o);
    let (tx, rx) = channel();
    let collect = tokio::spawn(rx.all());
    let h = acp_desk_core::start(m.launch_spec().unwrap(), o, tx)
        .await
        .expect("the manifest's agent starts");
    let id = h.id().to_string();
    tokio::time::timeout(HANG, h.prompt(vec![acp_desk_core::text_block("hello")]))
        .await
        .expect("hang: the turn did not end")
        .expect("the turn");
    h.close().await;
    drop(h);
    collect.await.unwrap();
    id
}

#[tokio::test]
async fn a_manifest_agent_with_audit_off_writes_no_audit_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let project = root.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let default_audit = root.join("data/audit");
    let m = demo_manifest(&root, "quiet-demo", &["kind: off"]);
    assert_eq!(m.audit(), (AuditKind::Off, None));
    run_manifest_agent(&m, &project, &default_audit).await;
    assert!(
        files_below(&root.join("data")).is_empty(),
        "audit kind off wrote {:?}",
        files_below(&root.join("data"))
    );

    // The same agent without `audit`: the log is written, in the default folder (the control).
    let m = demo_manifest(&root, "loud-demo", &[]);
    let id = run_manifest_agent(&m, &project, &default_audit).await;
    let written = files_below(&default_audit);
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(written[0].ends_with(format!("{id}.jsonl")), "{written:?}");
}

#[tokio::test]
async fn a_manifest_agent_with_audit_ref_writes_its_log_there() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let project = root.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let default_audit = root.join("data/audit");
    let there = root.join("elsewhere/audit");
    let m = demo_manifest(
        &root,
        "audited-demo",
        &["kind: governance", &format!("ref: {}", there.display())],
    );
    assert_eq!(m.audit(), (AuditKind::On, Some(there.clone())));
    let id = run_manifest_agent(&m, &project, &default_audit).await;
    assert!(files_below(&default_audit).is_empty());
    let written = files_below(&there);
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(written[0].ends_with(format!("{id}.jsonl")), "{written:?}");
    let text = std::fs::read_to_string(&written[0]).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["event"], "session-started");
    assert_eq!(first["agent"], "audited-demo");
    // The launch's env value is nowhere in the log.
    assert!(!text.contains("not-for-logs"));

    // A relative ref is taken from the manifest's folder.
    let m = demo_manifest(&root, "relative-demo", &["ref: logs"]);
    let id = run_manifest_agent(&m, &project, &default_audit).await;
    let written = files_below(&root.join("agents/relative-demo/logs"));
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(written[0].ends_with(format!("{id}.jsonl")));
}

fn cli(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(bin("acp-desk-cli"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_printed_manifest_parses_back_and_passes_the_validator_as_a_client() {
    let (code, text, stderr) = cli(&["manifest"]);
    assert_eq!(code, Some(0), "{stderr}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("acp-desk").join(manifest::FILE_NAME);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, &text).unwrap();
    // Through the folder loader, as a manifest in the agents folder would be.
    let (loaded, problems) = manifest::load_dir(dir.path());
    assert!(problems.is_empty(), "{problems:#?}");
    let [m] = loaded.as_slice() else {
        panic!("one manifest: {loaded:#?}")
    };
    assert_eq!(m.definition, manifest::own_manifest());
    assert_eq!(m.definition.kind, AcpRole::Client);
    assert_eq!(m.definition.version, env!("CARGO_PKG_VERSION"));
    let why = m.drivable.as_ref().unwrap_err();
    assert!(why.contains("not an agent"), "{why}");
    let client = m
        .definition
        .metadata
        .aip44
        .capabilities
        .as_ref()
        .and_then(|c| c.client.as_ref())
        .unwrap();
    let offered = acp_desk_core::session::advertised_client_capabilities();
    assert_eq!(client.terminal, Some(offered.terminal));
    let fs = client.fs.as_ref().unwrap();
    assert_eq!(fs.read_text_file, Some(offered.fs.read_text_file));
    assert_eq!(fs.write_text_file, Some(offered.fs.write_text_file));

    let (code, json, stderr) = cli(&["manifest", "--json"]);
    assert_eq!(code, Some(0), "{stderr}");
    let def: manifest::AcpDefinition = serde_json::from_str(&json).unwrap();
    assert_eq!(def, manifest::own_manifest());
}

#[test]
fn the_readme_example_manifest_is_valid() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let section = readme
        .split("## Describing an agent with ACP.md")
        .nth(1)
        .expect("the README's manifest section");
    let block = section
        .split("```yaml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("its yaml block");
    let m = manifest::parse(Path::new("/cfg/agents/my-agent/ACP.md"), block)
        .unwrap_or_else(|p| panic!("the README's example is invalid: {p:#?}"));
    assert!(m.problems.is_empty(), "{:#?}", m.problems);
    assert_eq!(m.drivable, Ok(()));
    let launch = m.launch.as_ref().unwrap();
    assert_eq!(
        (launch.command.as_str(), launch.args.as_slice()),
        ("my-agent", &["--acp".to_string()][..])
    );
    assert_eq!(m.audit().0, AuditKind::On);
    assert!(m.audit().1.unwrap().ends_with("my-agent-audit"));
}

/// `acp-desk-cli` with its own config and data folders.
fn cli_in(config: &Path, data: &Path, cwd: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(bin("acp-desk-cli"))
        .args(args)
        .current_dir(cwd)
        .env("ACP_DESK_CONFIG_DIR", config)
        .env("ACP_DESK_DATA_DIR", data)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `run --agent NAME` of manifest agents through the CLI, as a user runs them: the manifest's
/// audit setting reaches the session, also when the session is continued later.
#[test]
fn the_cli_runs_manifest_agents_with_their_audit_setting() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (config, data, project) = (root.join("config"), root.join("data"), root.join("project"));
    std::fs::create_dir_all(&project).unwrap();
    let there = root.join("there");
    demo_manifest(&config, "quiet-demo", &["kind: off"]);
    demo_manifest(
        &config,
        "there-demo",
        &[&format!("ref: {}", there.display())],
    );
    demo_manifest(&config, "loud-demo", &[]);
    let run = |args: &[&str]| {
        let (code, stdout, stderr) = cli_in(&config, &data, &project, args);
        assert_eq!(code, Some(0), "{stderr}");
        // Env values of the launch never reach the output.
        assert!(!stdout.contains("not-for-logs") && !stderr.contains("not-for-logs"));
    };
    let audit = data.join("audit");

    run(&["run", "--agent", "quiet-demo", "hello"]);
    assert!(files_below(&audit).is_empty(), "{:?}", files_below(&audit));
    // Continued later with its stored agent: still no audit log.
    let (_, list, _) = cli_in(&config, &data, &project, &["history", "list", "--json"]);
    let id = list
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["agent"] == "quiet-demo")
        .and_then(|r| r["id"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("quiet-demo's session is stored: {list}"));
    run(&["run", "--continue", &id, "hello again"]);
    assert!(files_below(&audit).is_empty(), "{:?}", files_below(&audit));

    run(&["run", "--agent", "there-demo", "hello"]);
    assert!(files_below(&audit).is_empty(), "{:?}", files_below(&audit));
    assert_eq!(files_below(&there).len(), 1, "{:?}", files_below(&there));

    // The control: a manifest agent without `audit` logs in the data folder.
    run(&["run", "--agent", "loud-demo", "hello"]);
    assert_eq!(files_below(&audit).len(), 1, "{:?}", files_below(&audit));
    // `--no-audit` wins over a manifest's `ref`.
    run(&["run", "--no-audit", "--agent", "there-demo", "hello"]);
    assert_eq!(files_below(&there).len(), 1, "{:?}", files_below(&there));
}
