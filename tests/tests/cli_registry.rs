//! `acp-desk-cli agents import-registry FILE` and `agents install NAME` (issue 16): a registry
//! file imported from disk, then its binary agent installed from a local HTTP server (a std
//! listener on 127.0.0.1; nothing from the internet).
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report
#![cfg(all(target_os = "linux", target_arch = "x86_64"))] // the registry entry is linux-x86_64's

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};

use common::*;
use sha2::Digest;

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn cli(root: &Path, args: &[&str]) -> Out {
    let out = Command::new(bin("acp-desk-cli"))
        .args(args)
        .current_dir(root)
        .env("ACP_DESK_CONFIG_DIR", root.join("config"))
        .env("ACP_DESK_DATA_DIR", root.join("data"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Out {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Serves `body` at every path, for `requests` requests, then ends.
fn serve(body: Vec<u8>, requests: usize) -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let t = std::thread::spawn(move || {
        for stream in listener.incoming().take(requests) {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap() > 2 {
                line.clear();
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).unwrap();
            stream.write_all(&body).unwrap();
        }
    });
    (port, t)
}

#[test]
fn import_a_registry_file_then_install_its_binary_agent() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // The "agent": a shell script in a release-like archive (one top folder) that prints its
    // arguments when asked, and is the demo agent otherwise (so `run` can drive it).
    let pkg = root.join("release/pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(
        pkg.join("my-agent"),
        format!(
            "#!/bin/sh\nif [ \"$1\" = say ]; then echo \"agent $*\"; exit 0; fi\nexec '{}'\n",
            bin("acp-desk-demo-agent").display()
        ),
    )
    .unwrap();
    let tarball = root.join("a.tar.gz");
    let ok = Command::new("tar")
        .arg("-czf")
        .arg(&tarball)
        .arg("-C")
        .arg(root.join("release"))
        .arg("pkg")
        .status()
        .unwrap();
    assert!(ok.success());
    let archive = std::fs::read(&tarball).unwrap();
    let sha: String = sha2::Sha256::digest(&archive)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let (port, server) = serve(archive, 1);

    // Another format first: refused, nothing imported.
    let settings = root.join("settings.json");
    std::fs::write(&settings, r#"{"agent_servers": {}}"#).unwrap();
    let out = cli(
        root,
        &["agents", "import-registry", settings.to_str().unwrap()],
    );
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("is not an ACP registry file: it has `agent_servers`"),
        "{}",
        out.stderr
    );
    assert!(!root.join("data/registry/registry.json").exists());
    let out = cli(root, &["agents", "install", "local-agent"]);
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr.contains(
            "no agent `local-agent` in the ACP registry snapshot 2026-02-07 (3de1678); its agents: auggie,"
        ),
        "{}",
        out.stderr
    );

    let registry = root.join("registry.json");
    std::fs::write(
        &registry,
        format!(
            r#"{{"version": "1.0.0", "agents": [
{{"id": "local-agent", "name": "Local", "version": "0.1.0", "description": "test", "distribution": {{"binary": {{"linux-x86_64": {{"archive": "http://127.0.0.1:{port}/a.tar.gz", "sha256": "{sha}", "cmd": "./my-agent", "args": ["acp"], "env": {{"SECRET_TOKEN": "hunter2"}}}}}}}}}},
{{"id": "Bad"}}
]}}"#
        ),
    )
    .unwrap();
    let out = cli(
        root,
        &["agents", "import-registry", registry.to_str().unwrap()],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stdout.starts_with(&format!(
            "imported 1 agents (1 skipped); ACP registry imported from {} on ",
            registry.display()
        )),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains(&format!(
            "acp-desk-cli: error: {}:3:1: agents[1].id: \"Bad\" is not a registry id",
            registry.display()
        )),
        "{}",
        out.stderr
    );

    let out = cli(root, &["agents", "install", "local-agent"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    server.join().unwrap();
    let installed = root.join("data/agents/local-agent/0.1.0/pkg/my-agent");
    assert_eq!(
        out.stdout,
        format!(
            "local-agent 0.1.0 installed: {} acp (env: SECRET_TOKEN)\n",
            installed.display()
        )
    );
    assert!(!out.stdout.contains("hunter2") && !out.stderr.contains("hunter2"));
    for phase in [
        "downloading",
        "checking the SHA-256",
        "extracting",
        "installed",
    ] {
        assert!(out.stderr.contains(phase), "{}", out.stderr);
    }
    let ran = Command::new(&installed)
        .args(["say", "hi"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "agent say hi\n");
    // Installed already: no download (the server is gone), the same answer.
    let again = cli(root, &["agents", "install", "local-agent"]);
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert_eq!(again.stdout, out.stdout);

    // And `run --agent` starts it from the data folder: a real turn.
    let run = cli(root, &["run", "--agent", "local-agent", "--json", "hello"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let ends: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["kind"] == "turn-end")
        .collect();
    assert_eq!(ends.len(), 1, "{}", run.stdout);
    assert_eq!(ends[0]["reason"], "completed", "{}", run.stdout);
}
