//! Installs against a local HTTP server (a std listener on 127.0.0.1 in a thread): nothing
//! comes from the internet.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use std::ffi::OsString;

use super::*;
use crate::agents::registry::{Distribution, RegistryLaunch, parse};

/// What the server answers for one path.
#[derive(Clone)]
struct Reply {
    status: u16,
    body: Vec<u8>,
    /// Sends only this many bytes of the body (Content-Length still says all of it).
    cut_at: Option<usize>,
}

impl Reply {
    fn ok(body: Vec<u8>) -> Reply {
        Reply {
            status: 200,
            body,
            cut_at: None,
        }
    }
}

/// Serves fixed replies until dropped; unknown paths get 404.
struct Server {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    fn start(routes: HashMap<String, Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                serve(stream, &routes);
            }
        });
        Server {
            port,
            stop,
            thread: Some(thread),
        }
    }
    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(stream: TcpStream, routes: &HashMap<String, Reply>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) if line == "\r\n" => break,
            Ok(_) => {}
        }
    }
    let path = first.split_whitespace().nth(1).unwrap_or("/").to_string();
    let reply = routes.get(&path).cloned().unwrap_or(Reply {
        status: 404,
        body: b"not found".to_vec(),
        cut_at: None,
    });
    let mut out = stream;
    let head = format!(
        "HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        reply.status,
        reply.body.len()
    );
    let _ = out.write_all(head.as_bytes());
    let body = &reply.body[..reply.cut_at.unwrap_or(reply.body.len())];
    let _ = out.write_all(body);
    let _ = out.flush();
}

const SCRIPT: &[u8] = b"#!/bin/sh\necho \"hello from the test agent $*\"\n";

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A tar of `(path, bytes, mode)` files, paths written as given (even `../x`).
fn tar_of(files: &[(&str, &[u8], u32)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (path, bytes, mode) in files {
        let mut h = tar::Header::new_gnu();
        // Raw name bytes: `set_path` refuses `..`, and the test needs archives that have it.
        let name = &mut h.as_gnu_mut().unwrap().name;
        name[..path.len()].copy_from_slice(path.as_bytes());
        h.set_size(bytes.len() as u64);
        h.set_mode(*mode);
        h.set_entry_type(tar::EntryType::Regular);
        h.set_cksum();
        b.append(&h, *bytes).unwrap();
    }
    b.into_inner().unwrap()
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn bz2(bytes: &[u8]) -> Vec<u8> {
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn zip_of(files: &[(&str, &[u8], u32)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (path, bytes, mode) in files {
        let opts = zip::write::SimpleFileOptions::default().unix_permissions(*mode);
        w.start_file(*path, opts).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// One registry agent whose linux-x86_64 binary is `url`.
fn agent_for(url: &str, sha256: Option<&str>, cmd: &str) -> RegistryAgent {
    let sha = sha256.map_or(String::new(), |s| format!(r#", "sha256": "{s}""#));
    let text = format!(
        r#"{{"version": "1.0.0", "agents": [{{"id": "test-agent", "name": "Test Agent", "version": "1.2.3", "description": "d",
        "distribution": {{"binary": {{"linux-x86_64": {{"archive": "{url}"{sha}, "cmd": "{cmd}", "args": ["acp"], "env": {{"MODE": "x"}}}}}}}}}}]}}"#
    );
    let mut parsed = parse("t.json", &text).unwrap();
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    parsed.agents.remove(0)
}

const PLATFORM: &str = "linux-x86_64";

/// Installs and returns the result and every progress report.
fn run(
    agent: &RegistryAgent,
    data: &Path,
) -> (Result<LaunchSpec, InstallError>, Vec<InstallProgress>) {
    let mut seen = Vec::new();
    let r = install(agent, PLATFORM, data, &mut |p| seen.push(p));
    (r, seen)
}

/// Nothing of a failed install is left: no version folder, no working folder.
fn assert_nothing_installed(data: &Path) {
    let dir = data.join("agents").join("test-agent");
    let left: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        left.is_empty(),
        "left behind in {}: {left:?}",
        dir.display()
    );
}

/// The spec points at an executable file in the data folder, and it runs.
fn assert_runs(spec: &LaunchSpec, data: &Path) {
    let program = Path::new(&spec.command);
    assert!(program.is_absolute(), "{}", spec.command);
    assert!(
        program.starts_with(std::path::absolute(data).unwrap()),
        "{} is not in the data folder",
        spec.command
    );
    assert!(is_executable(program), "{} is not executable", spec.command);
    assert_eq!(spec.args, ["acp"]);
    assert_eq!(spec.env, [("MODE".to_string(), "x".into())]);
    let out = std::process::Command::new(program)
        .args(&spec.args)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "hello from the test agent acp\n"
    );
}

#[cfg(unix)]
#[test]
fn a_good_tar_gz_installs_atomically_and_launches_from_the_data_folder() {
    let archive = gz(&tar_of(&[
        ("my-agent", SCRIPT, 0o644),
        ("lib/data.txt", b"data", 0o644),
    ]));
    let server = Server::start(HashMap::from([(
        "/a.tar.gz".to_string(),
        Reply::ok(archive.clone()),
    )]));
    let data = tempfile::tempdir().unwrap();
    let agent = agent_for(
        &server.url("/a.tar.gz"),
        Some(&sha256_hex(&archive)),
        "./my-agent",
    );
    let (_empty, path) = (tempfile::tempdir().unwrap(), OsString::new());
    assert!(matches!(
        agent.launch(PLATFORM, data.path(), Some(&path)),
        RegistryLaunch::NotInstalled { .. }
    ));

    // A crashed install's working folder (old) is removed; one in progress (new) is not.
    let agent_dir = data.path().join("agents/test-agent");
    let (old, new) = (
        agent_dir.join(".installing-crashed"),
        agent_dir.join(".installing-busy"),
    );
    for d in [&old, &new] {
        std::fs::create_dir_all(d.join("root")).unwrap();
    }
    let two_hours_ago = SystemTime::now() - Duration::from_secs(2 * 60 * 60);
    std::fs::File::open(&old)
        .unwrap()
        .set_modified(two_hours_ago)
        .unwrap();

    let (spec, progress) = run(&agent, data.path());
    let spec = spec.unwrap();
    assert_runs(&spec, data.path());
    assert!(!old.exists());
    std::fs::remove_dir_all(&new).unwrap();
    let dir = install_dir(data.path(), &agent);
    assert_eq!(dir, data.path().join("agents/test-agent/1.2.3"));
    assert_eq!(
        std::fs::read_to_string(dir.join("lib/data.txt")).unwrap(),
        "data"
    );
    let marker: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join(INSTALL_MARKER)).unwrap()).unwrap();
    assert_eq!(marker["sha256"], sha256_hex(&archive));
    assert_eq!(marker["sha256Checked"], true);
    assert_eq!(marker["cmd"], "my-agent");
    // Only the version folder is left (the working folder is gone).
    let names: Vec<String> = std::fs::read_dir(data.path().join("agents/test-agent"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["1.2.3"]);

    let phases: Vec<InstallPhase> = progress.iter().map(|p| p.phase).collect();
    assert_eq!(phases.first(), Some(&InstallPhase::Downloading));
    assert_eq!(phases.last(), Some(&InstallPhase::Installed));
    for phase in [InstallPhase::Verifying, InstallPhase::Extracting] {
        assert!(phases.contains(&phase), "{phases:?}");
    }
    let size = archive.len() as u64;
    assert!(progress.iter().all(|p| p.agent == "test-agent"));
    assert!(progress.iter().any(|p| p.phase == InstallPhase::Downloading
        && p.downloaded == size
        && p.total == Some(size)));

    // The launch now runs the installed binary; a second install does not download again.
    let RegistryLaunch::Ready { spec: ready, kind } =
        agent.launch(PLATFORM, data.path(), Some(&path))
    else {
        panic!("installed: ready")
    };
    assert_eq!(kind, crate::agents::registry::DistributionKind::Binary);
    assert_eq!(ready, spec);
    drop(server);
    let (again, progress) = run(&agent, data.path());
    assert_eq!(again.unwrap(), spec);
    assert_eq!(progress.len(), 1);
}

#[cfg(unix)]
#[test]
fn zip_tar_bz2_raw_and_a_wrapping_folder_install_too() {
    // With a file of the marker's name: ours replaces it (it names the command to run).
    let zip = zip_of(&[
        ("bin/my-agent", SCRIPT, 0o755),
        ("README", b"r", 0o644),
        (INSTALL_MARKER, br#"{"cmd": "README"}"#, 0o644),
    ]);
    let tbz = bz2(&tar_of(&[("pkg-1.2.3/my-agent", SCRIPT, 0o755)]));
    let server = Server::start(HashMap::from([
        ("/a.zip".to_string(), Reply::ok(zip.clone())),
        ("/a.tbz2".to_string(), Reply::ok(tbz.clone())),
        ("/my-agent".to_string(), Reply::ok(SCRIPT.to_vec())),
    ]));
    for (path, bytes, cmd) in [
        ("/a.zip", &zip, "./bin/my-agent"),
        // The archive's files sit in one folder: the command is found in it.
        ("/a.tbz2", &tbz, "./my-agent"),
        ("/my-agent", &SCRIPT.to_vec(), "./my-agent"),
    ] {
        let data = tempfile::tempdir().unwrap();
        let agent = agent_for(&server.url(path), Some(&sha256_hex(bytes)), cmd);
        let (spec, _) = run(&agent, data.path());
        let spec = spec.unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_runs(&spec, data.path());
    }
}

#[test]
fn a_wrong_sha256_installs_nothing_and_names_both_hashes() {
    let archive = gz(&tar_of(&[("my-agent", SCRIPT, 0o755)]));
    let server = Server::start(HashMap::from([(
        "/a.tgz".to_string(),
        Reply::ok(archive.clone()),
    )]));
    let data = tempfile::tempdir().unwrap();
    let wrong = "0".repeat(64);
    let url = server.url("/a.tgz");
    let agent = agent_for(&url, Some(&wrong), "./my-agent");
    let (r, _) = run(&agent, data.path());
    let err = r.unwrap_err();
    assert_eq!(
        err,
        InstallError::Sha256Mismatch {
            url: url.clone(),
            expected: wrong.clone(),
            actual: sha256_hex(&archive)
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "the download of {url} does not match the registry's SHA-256: expected {wrong}, got {}. Nothing was installed: the file was damaged or replaced. Try again; if it persists, the registry entry or the release is wrong (tell the agent's publisher).",
            sha256_hex(&archive)
        )
    );
    assert_nothing_installed(data.path());
}

#[test]
fn a_truncated_download_installs_nothing() {
    let archive = gz(&tar_of(&[
        ("my-agent", SCRIPT, 0o755),
        ("big", &[7u8; 50_000], 0o644),
    ]));
    let half = archive.len() / 2;
    let server = Server::start(HashMap::from([(
        "/a.tar.gz".to_string(),
        Reply {
            status: 200,
            body: archive.clone(),
            cut_at: Some(half),
        },
    )]));
    let data = tempfile::tempdir().unwrap();
    let url = server.url("/a.tar.gz");
    let agent = agent_for(&url, Some(&sha256_hex(&archive)), "./my-agent");
    let (r, _) = run(&agent, data.path());
    let err = r.unwrap_err();
    assert_eq!(
        err,
        InstallError::Truncated {
            url: url.clone(),
            received: half as u64,
            expected: archive.len() as u64
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "the download of {url} ended after {half} of {} bytes. Nothing was installed; try again.",
            archive.len()
        )
    );
    assert_nothing_installed(data.path());
}

#[test]
fn an_http_error_names_the_status() {
    let server = Server::start(HashMap::new());
    let data = tempfile::tempdir().unwrap();
    let url = server.url("/gone.tar.gz");
    let agent = agent_for(&url, Some(&"a".repeat(64)), "./my-agent");
    let (r, _) = run(&agent, data.path());
    assert_eq!(
        r.unwrap_err().to_string(),
        format!(
            "downloading {url} failed: the server answered HTTP 404. Nothing was installed. The release is gone: the registry entry is out of date; import a newer registry file."
        )
    );
    assert_nothing_installed(data.path());
    // Nobody listening: a network error, said as such.
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{closed}/a.zip");
    let (r, _) = run(&agent_for(&url, Some(&"a".repeat(64)), "./a"), data.path());
    let err = r.unwrap_err();
    assert!(matches!(err, InstallError::Network { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with(&format!("could not download {url}: ")),
        "{err}"
    );
}

#[test]
fn archives_with_paths_outside_their_folder_are_refused() {
    let evil_tar = gz(&tar_of(&[
        ("my-agent", SCRIPT, 0o755),
        ("../evil", b"x", 0o644),
    ]));
    let abs_tar = gz(&tar_of(&[("/tmp/evil-abs", b"x", 0o644)]));
    let evil_zip = zip_of(&[("my-agent", SCRIPT, 0o755), ("a/../../evil", b"x", 0o644)]);
    let server = Server::start(HashMap::from([
        ("/evil.tar.gz".to_string(), Reply::ok(evil_tar.clone())),
        ("/abs.tar.gz".to_string(), Reply::ok(abs_tar.clone())),
        ("/evil.zip".to_string(), Reply::ok(evil_zip.clone())),
    ]));
    for (path, bytes, entry) in [
        ("/evil.tar.gz", &evil_tar, "../evil"),
        ("/abs.tar.gz", &abs_tar, "/tmp/evil-abs"),
        ("/evil.zip", &evil_zip, "a/../../evil"),
    ] {
        let data = tempfile::tempdir().unwrap();
        let url = server.url(path);
        let agent = agent_for(&url, Some(&sha256_hex(bytes)), "./my-agent");
        let (r, _) = run(&agent, data.path());
        let err = r.unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "the archive {url} has an entry that would land outside its folder ({entry}); refused, nothing was installed."
            )
        );
        assert_nothing_installed(data.path());
        assert!(!data.path().join("agents/test-agent/evil").exists());
        assert!(!data.path().join("agents/evil").exists());
    }
    assert!(!Path::new("/tmp/evil-abs").exists());
}

#[cfg(unix)]
#[test]
fn links_out_of_the_archive_are_refused() {
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Symlink);
    h.set_size(0);
    h.set_mode(0o777);
    b.append_link(&mut h, "escape", "../../outside").unwrap();
    let archive = gz(&b.into_inner().unwrap());
    let server = Server::start(HashMap::from([(
        "/l.tar.gz".to_string(),
        Reply::ok(archive.clone()),
    )]));
    let data = tempfile::tempdir().unwrap();
    let url = server.url("/l.tar.gz");
    let agent = agent_for(&url, Some(&sha256_hex(&archive)), "./escape");
    let (r, _) = run(&agent, data.path());
    assert!(
        matches!(r, Err(InstallError::UnsafeEntry { ref entry, .. }) if entry == "escape"),
        "{r:?}"
    );
    assert_nothing_installed(data.path());
}

#[test]
fn an_archive_without_the_command_says_what_it_has() {
    let archive = gz(&tar_of(&[
        ("other-agent", SCRIPT, 0o755),
        ("README.md", b"r", 0o644),
    ]));
    let server = Server::start(HashMap::from([(
        "/a.tar.gz".to_string(),
        Reply::ok(archive.clone()),
    )]));
    let data = tempfile::tempdir().unwrap();
    let url = server.url("/a.tar.gz");
    let agent = agent_for(&url, Some(&sha256_hex(&archive)), "./my-agent");
    let (r, _) = run(&agent, data.path());
    assert_eq!(
        r.unwrap_err().to_string(),
        format!(
            "the archive {url} has no ./my-agent, the command the registry names (it has: README.md, other-agent). Nothing was installed; the registry entry does not match the release."
        )
    );
    assert_nothing_installed(data.path());
}

#[test]
fn a_damaged_archive_and_an_unverifiable_download_are_refused() {
    let server = Server::start(HashMap::from([(
        "/a.zip".to_string(),
        Reply::ok(b"this is not a zip".to_vec()),
    )]));
    let data = tempfile::tempdir().unwrap();
    let url = server.url("/a.zip");
    let agent = agent_for(&url, Some(&sha256_hex(b"this is not a zip")), "./a");
    let (r, _) = run(&agent, data.path());
    let err = r.unwrap_err();
    assert!(
        matches!(err, InstallError::BadArchive { format: "zip", .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with(&format!("{url} is not a readable zip archive (")),
        "{err}"
    );
    assert_nothing_installed(data.path());
    // No sha256 and plain http: nothing would vouch for the download.
    let agent = agent_for(&url, None, "./a");
    let (r, progress) = run(&agent, data.path());
    assert_eq!(
        r.unwrap_err().to_string(),
        format!(
            "{url} has no SHA-256 in the registry and is not an https address, so nothing vouches for what it would download; refused. Import a registry file that gives its SHA-256."
        )
    );
    assert!(progress.is_empty());
}

#[test]
fn agents_without_a_binary_for_this_platform_cannot_be_installed() {
    let data = tempfile::tempdir().unwrap();
    let agent = agent_for("https://e.com/a.zip", None, "./a");
    let err = install(&agent, "windows-aarch64", data.path(), &mut |_| {}).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Test Agent has no build for this platform (windows-aarch64); the registry has binaries for linux-x86_64 only"
    );
    let npx =
        RegistryAgent {
            distribution: Distribution {
                npx: agent.distribution.npx.clone().or(Some(
                    crate::agents::registry::PackageDist {
                        package: "p".into(),
                        cmd: None,
                        args: Vec::new(),
                        env: Default::default(),
                    },
                )),
                ..Distribution::default()
            },
            ..agent
        };
    assert_eq!(
        install(&npx, PLATFORM, data.path(), &mut |_| {})
            .unwrap_err()
            .to_string(),
        "Test Agent has no binary to install: it starts through npx (Node.js), which fetches it on first use"
    );
    assert!(!data.path().join("agents").exists());
}

#[cfg(all(unix, target_os = "linux", target_arch = "x86_64"))]
#[test]
fn install_by_id_uses_the_imported_registry() {
    let archive = gz(&tar_of(&[("my-agent", SCRIPT, 0o644)]));
    let server = Server::start(HashMap::from([(
        "/a.tar.gz".to_string(),
        Reply::ok(archive.clone()),
    )]));
    let data = tempfile::tempdir().unwrap();
    let err = install_by_id(data.path(), "test-agent", &mut |_| {}).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "no agent `test-agent` in the ACP registry snapshot 2026-02-07 (3de1678); its agents: auggie, claude-code-acp,"
        ),
        "{err}"
    );
    let file = data.path().join("new-registry.json");
    std::fs::write(
        &file,
        format!(
            r#"{{"version": "1.0.0", "agents": [{{"id": "test-agent", "name": "Test Agent", "version": "1.2.3", "description": "d",
            "distribution": {{"binary": {{"linux-x86_64": {{"archive": "{}", "sha256": "{}", "cmd": "./my-agent", "args": ["acp"], "env": {{"MODE": "x"}}}}}}}}}}]}}"#,
            server.url("/a.tar.gz"),
            sha256_hex(&archive)
        ),
    )
    .unwrap();
    crate::agents::registry::import(&file, data.path()).unwrap();
    let spec = install_by_id(data.path(), "test-agent", &mut |_| {}).unwrap();
    assert_runs(&spec, data.path());
}
