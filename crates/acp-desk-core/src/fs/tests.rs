#![allow(clippy::unwrap_used)]

use std::cell::Cell;
use std::io;
use std::path::{Path, PathBuf};

use super::write::{FaultHook, Step, write_with_hook};
use super::*;

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    roots: Roots,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("root");
    let outside = base.join("outside");
    std::fs::create_dir(&root).unwrap();
    std::fs::create_dir(&outside).unwrap();
    let roots = Roots::new(&root, Vec::<PathBuf>::new()).unwrap();
    Fixture {
        _tmp: tmp,
        root,
        outside,
        roots,
    }
}

/// Names in a folder other than `keep`.
fn others(dir: &Path, keep: &[&str]) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect()
}

// ---------------------------------------------------------------- roots

#[test]
fn relative_paths_are_refused_as_invalid_params() {
    let f = fixture();
    let e = f.roots.resolve("src/main.rs").unwrap_err();
    assert!(matches!(e, FsError::Relative { .. }), "{e:?}");
    assert_eq!(e.jsonrpc_code(), -32602);
    assert!(e.to_string().contains("absolute"), "{e}");
    assert!(matches!(f.roots.resolve(""), Err(FsError::Relative { .. })));
}

#[test]
fn an_existing_file_resolves_inside_its_root() {
    let f = fixture();
    std::fs::write(f.root.join("a.txt"), "x").unwrap();
    let r = f.roots.resolve(f.root.join("a.txt")).unwrap();
    assert_eq!(r.path(), f.root.join("a.txt"));
    assert_eq!(r.root(), Some(f.root.as_path()));
    assert!(r.is_inside());
}

#[test]
fn dotdot_is_resolved_and_can_lead_outside() {
    let f = fixture();
    std::fs::create_dir(f.root.join("sub")).unwrap();
    std::fs::write(f.root.join("a.txt"), "x").unwrap();
    let r = f.roots.resolve(f.root.join("sub/../a.txt")).unwrap();
    assert_eq!(r.path(), f.root.join("a.txt"));
    assert!(r.is_inside());

    let r = f.roots.resolve(f.root.join("../outside/new.txt")).unwrap();
    assert_eq!(r.path(), f.outside.join("new.txt"));
    assert!(!r.is_inside());
    assert!(matches!(
        read_text_file(&r, None, None),
        Err(FsError::OutsideRoots { .. })
    ));
}

#[cfg(unix)]
#[test]
fn symlinks_are_resolved_both_ways() {
    let f = fixture();
    std::fs::write(f.outside.join("secret.txt"), "s").unwrap();
    std::os::unix::fs::symlink(&f.outside, f.root.join("out")).unwrap();
    let r = f.roots.resolve(f.root.join("out/secret.txt")).unwrap();
    assert_eq!(r.path(), f.outside.join("secret.txt"));
    assert!(!r.is_inside());
    let e = read_text_file(&r, None, None).unwrap_err();
    assert!(matches!(e, FsError::OutsideRoots { .. }), "{e:?}");
    assert_eq!(e.jsonrpc_code(), -32603);

    // A link outside pointing in leads inside.
    std::fs::write(f.root.join("in.txt"), "i").unwrap();
    std::os::unix::fs::symlink(&f.root, f.outside.join("to-root")).unwrap();
    let r = f.roots.resolve(f.outside.join("to-root/in.txt")).unwrap();
    assert_eq!(r.path(), f.root.join("in.txt"));
    assert!(r.is_inside());
}

#[test]
fn a_path_that_does_not_exist_yet_is_resolved_from_its_deepest_existing_folder() {
    let f = fixture();
    std::fs::create_dir(f.root.join("a")).unwrap();
    let r = f
        .roots
        .resolve(f.root.join("a/./new/deeper/file.txt"))
        .unwrap();
    assert_eq!(r.path(), f.root.join("a/new/deeper/file.txt"));
    assert!(r.is_inside());

    let e = f
        .roots
        .resolve(f.root.join("a/new/../../../outside/x"))
        .unwrap_err();
    assert!(matches!(e, FsError::InvalidPath { .. }), "{e:?}");
    assert!(e.to_string().contains(".."), "{e}");
}

#[cfg(unix)]
#[test]
fn a_dangling_symlink_is_followed_to_where_it_points() {
    let f = fixture();
    std::os::unix::fs::symlink(f.outside.join("new.txt"), f.root.join("link")).unwrap();
    let r = f.roots.resolve(f.root.join("link")).unwrap();
    assert_eq!(r.path(), f.outside.join("new.txt"));
    assert!(!r.is_inside());
    assert!(matches!(
        write_text_file(&r, "x"),
        Err(FsError::OutsideRoots { .. })
    ));
    assert!(!f.outside.join("new.txt").exists());

    // Relative, through a missing folder, inside.
    std::os::unix::fs::symlink("newdir", f.root.join("dlink")).unwrap();
    let r = f.roots.resolve(f.root.join("dlink/file.txt")).unwrap();
    assert_eq!(r.path(), f.root.join("newdir/file.txt"));
    assert!(r.is_inside());

    // A loop is an error, not a hang.
    std::os::unix::fs::symlink(f.root.join("loop2"), f.root.join("loop1")).unwrap();
    std::os::unix::fs::symlink(f.root.join("loop1"), f.root.join("loop2")).unwrap();
    assert!(f.roots.resolve(f.root.join("loop1/x")).is_err());
}

#[test]
fn nested_roots_report_the_deepest_and_added_roots_count() {
    let f = fixture();
    std::fs::create_dir(f.root.join("pkg")).unwrap();
    let mut roots = Roots::new(&f.root, [f.root.join("pkg")]).unwrap();
    let r = roots.resolve(f.root.join("pkg/x.txt")).unwrap();
    assert_eq!(r.root(), Some(f.root.join("pkg").as_path()));

    assert!(!roots.resolve(f.outside.join("x.txt")).unwrap().is_inside());
    roots.add_root(&f.outside).unwrap();
    roots.add_root(&f.outside).unwrap();
    assert_eq!(roots.roots().len(), 3);
    assert!(roots.resolve(f.outside.join("x.txt")).unwrap().is_inside());
    assert!(matches!(
        roots.add_root(f.root.join("missing")),
        Err(FsError::NotFound { .. })
    ));
    assert!(matches!(
        roots.add_root("relative"),
        Err(FsError::Relative { .. })
    ));
}

#[test]
fn an_approved_outside_path_can_be_used() {
    let f = fixture();
    std::fs::write(f.outside.join("o.txt"), "outside\n").unwrap();
    let r = f.roots.resolve(f.outside.join("o.txt")).unwrap();
    assert!(!r.is_approved_outside());
    let r = r.approved_by_user();
    assert!(r.is_approved_outside());
    assert_eq!(read_text_file(&r, None, None).unwrap(), "outside\n");
}

// ---------------------------------------------------------------- check vs use

#[cfg(unix)]
#[test]
fn a_symlink_planted_mid_path_after_the_check_is_refused() {
    let f = fixture();
    std::fs::create_dir_all(f.root.join("a/b")).unwrap();
    std::fs::write(f.root.join("a/b/f.txt"), "inside\n").unwrap();
    std::fs::create_dir_all(f.outside.join("b")).unwrap();
    std::fs::write(f.outside.join("b/f.txt"), "secret\n").unwrap();

    let r = f.roots.resolve(f.root.join("a/b/f.txt")).unwrap();
    assert!(r.is_inside());
    // The swap, between check and use.
    std::fs::rename(f.root.join("a"), f.root.join("a-old")).unwrap();
    std::os::unix::fs::symlink(&f.outside, f.root.join("a")).unwrap();

    let e = read_text_file(&r, None, None).unwrap_err();
    assert!(matches!(e, FsError::SymlinkSwapped { .. }), "{e:?}");
    assert!(e.to_string().contains("symbolic link"), "{e}");
    let e = write_text_file(&r, "pwned\n").unwrap_err();
    assert!(matches!(e, FsError::SymlinkSwapped { .. }), "{e:?}");
    assert_eq!(
        std::fs::read_to_string(f.outside.join("b/f.txt")).unwrap(),
        "secret\n"
    );
    assert_eq!(
        others(&f.outside.join("b"), &["f.txt"]),
        Vec::<String>::new()
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_swapped_in_for_the_file_after_the_check_is_refused() {
    let f = fixture();
    std::fs::write(f.root.join("f.txt"), "inside\n").unwrap();
    std::fs::write(f.outside.join("secret.txt"), "secret\n").unwrap();
    let r = f.roots.resolve(f.root.join("f.txt")).unwrap();
    std::fs::remove_file(f.root.join("f.txt")).unwrap();
    std::os::unix::fs::symlink(f.outside.join("secret.txt"), f.root.join("f.txt")).unwrap();

    let e = read_text_file(&r, None, None).unwrap_err();
    assert!(matches!(e, FsError::SymlinkSwapped { .. }), "{e:?}");
    let e = write_text_file(&r, "pwned\n").unwrap_err();
    assert!(matches!(e, FsError::SymlinkSwapped { .. }), "{e:?}");
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret.txt")).unwrap(),
        "secret\n"
    );
    assert_eq!(others(&f.root, &["f.txt"]), Vec::<String>::new());
}

#[cfg(unix)]
#[test]
fn a_symlink_swapped_in_for_a_folder_to_be_created_is_refused() {
    let f = fixture();
    let r = f.roots.resolve(f.root.join("new/f.txt")).unwrap();
    std::os::unix::fs::symlink(&f.outside, f.root.join("new")).unwrap();
    let e = write_text_file(&r, "x").unwrap_err();
    assert!(matches!(e, FsError::SymlinkSwapped { .. }), "{e:?}");
    assert_eq!(others(&f.outside, &[]), Vec::<String>::new());
}

// ---------------------------------------------------------------- reads

fn file_with(f: &Fixture, name: &str, content: &[u8]) -> Resolved {
    let p = f.root.join(name);
    std::fs::write(&p, content).unwrap();
    f.roots.resolve(p).unwrap()
}

#[test]
fn windows_are_one_based_and_keep_line_endings() {
    let f = fixture();
    let r = file_with(&f, "t.txt", b"\xEF\xBB\xBFone\r\ntwo\r\nthree\nfour");
    assert_eq!(
        read_text_file(&r, None, None).unwrap(),
        "\u{feff}one\r\ntwo\r\nthree\nfour"
    );
    assert_eq!(
        read_text_file(&r, Some(2), Some(2)).unwrap(),
        "two\r\nthree\n"
    );
    assert_eq!(read_text_file(&r, Some(4), Some(5)).unwrap(), "four");
    assert_eq!(read_text_file(&r, Some(3), None).unwrap(), "three\nfour");
    assert_eq!(
        read_text_file(&r, None, Some(1)).unwrap(),
        "\u{feff}one\r\n"
    );
    // line 0 is read as 1.
    assert_eq!(
        read_text_file(&r, Some(0), Some(1)).unwrap(),
        read_text_file(&r, Some(1), Some(1)).unwrap()
    );
    assert_eq!(read_text_file(&r, Some(5), None).unwrap(), "");
    assert_eq!(read_text_file(&r, Some(99), Some(3)).unwrap(), "");
    assert_eq!(read_text_file(&r, Some(1), Some(0)).unwrap(), "");
    let empty = file_with(&f, "e.txt", b"");
    assert_eq!(read_text_file(&empty, None, None).unwrap(), "");
}

#[test]
fn windows_across_read_buffers_match_a_plain_split() {
    // Lines of varying length, some longer than the 256 KiB buffer.
    let mut text = String::new();
    for i in 0..3000u32 {
        let len = if i % 997 == 0 {
            300_000
        } else {
            (i * 37 % 500) as usize
        };
        text.push_str(&format!("{i}:"));
        text.push_str(&"é".repeat(len / 2));
        text.push('\n');
    }
    text.push_str("tail without newline");
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let expect = |line: usize, limit: Option<usize>| -> String {
        let from = line.max(1) - 1;
        let to = limit.map_or(lines.len(), |l| (from + l).min(lines.len()));
        if from >= lines.len() {
            return String::new();
        }
        lines[from..to].concat()
    };
    for (line, limit) in [
        (1, Some(1)),
        (2, Some(10)),
        (997, Some(3)),
        (998, Some(1)),
        (1500, Some(600)),
        (2990, None),
        (2994, Some(1000)),
        (3001, Some(1)),
        (3002, Some(1)),
        (1, None),
    ] {
        let got = super::read::read_window(
            io::Cursor::new(text.as_bytes()),
            text.len() as u64,
            Path::new("/t"),
            Some(line as u32),
            limit.map(|l| l as u32),
        )
        .unwrap();
        assert!(got == expect(line, limit), "line {line} limit {limit:?}");
    }
}

#[test]
fn the_fast_newline_count_counts() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let bytes: Vec<u8> = (0..100_000)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            if seed.is_multiple_of(3) {
                b'\n'
            } else {
                seed as u8
            }
        })
        .collect();
    for len in [0, 1, 223, 224, 225, 255, 256, 4096, 99_999, 100_000] {
        let slice = &bytes[..len];
        let naive = slice.iter().filter(|&&b| b == b'\n').count() as u64;
        assert_eq!(super::read::count_newlines(slice), naive, "{len}");
    }
    assert_eq!(super::read::count_newlines(&[b'\n'; 1000]), 1000);
}

#[test]
fn binary_files_are_refused_by_a_nul_in_the_first_8_kib() {
    let f = fixture();
    let mut content = b"text\n".repeat(100);
    content.push(0);
    let r = file_with(&f, "b.bin", &content);
    let e = read_text_file(&r, Some(1), Some(1)).unwrap_err();
    assert!(matches!(e, FsError::Binary { offset: 500, .. }), "{e:?}");
    assert!(e.to_string().contains("binary"), "{e}");

    // A NUL further in is text as far as we can tell.
    let mut content = b"text\n".repeat(2000);
    content.push(0);
    let r = file_with(&f, "late.txt", &content);
    assert!(read_text_file(&r, None, None).unwrap().ends_with('\0'));
}

#[test]
fn invalid_utf8_is_refused_with_its_line() {
    let f = fixture();
    let r = file_with(&f, "latin1.txt", b"ok\nok\ncaf\xe9\nok\n");
    let e = read_text_file(&r, None, None).unwrap_err();
    assert!(matches!(e, FsError::InvalidUtf8 { line: 3, .. }), "{e:?}");
    let e = read_text_file(&r, Some(2), Some(2)).unwrap_err();
    assert!(matches!(e, FsError::InvalidUtf8 { line: 3, .. }), "{e:?}");
    // A window without the bad line reads fine.
    assert_eq!(read_text_file(&r, Some(4), None).unwrap(), "ok\n");
}

#[test]
fn too_large_reads_are_refused_up_front_or_at_the_cap() {
    let f = fixture();
    let p = f.root.join("big.log");
    let file = std::fs::File::create(&p).unwrap();
    // Sparse: no disk used; refused from its size before any read.
    file.set_len(MAX_READ_BYTES + 1).unwrap();
    let r = f.roots.resolve(&p).unwrap();
    let e = read_text_file(&r, None, None).unwrap_err();
    assert!(
        matches!(e, FsError::TooLarge { size, limit, .. } if size == MAX_READ_BYTES + 1 && limit == MAX_READ_BYTES),
        "{e:?}"
    );
    assert!(e.to_string().contains("line/limit"), "{e}");

    // A window whose text passes the cap (one endless line) stops at it.
    use std::io::Read;
    let endless = io::repeat(b'a').take(MAX_READ_BYTES * 2);
    let e = super::read::read_window(endless, 0, Path::new("/x"), Some(1), Some(1)).unwrap_err();
    assert!(matches!(e, FsError::TooLarge { .. }), "{e:?}");
}

#[test]
fn a_missing_file_is_not_found_and_maps_to_32002() {
    let f = fixture();
    let r = f.roots.resolve(f.root.join("nope/missing.txt")).unwrap();
    let e = read_text_file(&r, None, None).unwrap_err();
    assert!(matches!(e, FsError::NotFound { .. }), "{e:?}");
    assert_eq!(e.jsonrpc_code(), -32002);
    assert_eq!(e.jsonrpc_message(), "Resource not found");
    let wire = serde_json::to_value(e.to_acp_error()).unwrap();
    assert_eq!(wire["code"], -32002);
    assert_eq!(wire["message"], "Resource not found");
    assert!(
        wire["data"]["details"]
            .as_str()
            .unwrap()
            .contains("does not exist")
    );
    let r = f.roots.resolve(f.root.join("missing.txt")).unwrap();
    assert!(matches!(
        read_text_file(&r, Some(3), Some(1)),
        Err(FsError::NotFound { .. })
    ));
}

#[test]
fn folders_and_other_non_files_are_refused() {
    let f = fixture();
    std::fs::create_dir(f.root.join("d")).unwrap();
    let r = f.roots.resolve(f.root.join("d")).unwrap();
    let e = read_text_file(&r, None, None).unwrap_err();
    assert!(
        matches!(
            e,
            FsError::NotAFile {
                what: "a folder",
                ..
            }
        ),
        "{e:?}"
    );
    let r = f.roots.resolve(&f.root).unwrap();
    assert!(matches!(
        read_text_file(&r, None, None),
        Err(FsError::NotAFile { .. })
    ));
    assert!(matches!(
        write_text_file(&r, "x"),
        Err(FsError::NotAFile { .. })
    ));
}

#[cfg(unix)]
#[test]
fn a_fifo_is_refused_without_waiting_for_a_writer() {
    let f = fixture();
    let p = f.root.join("pipe");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &p,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_bits_truncate(0o644),
        0,
    )
    .unwrap();
    let r = f.roots.resolve(&p).unwrap();
    let e = read_text_file(&r, None, None).unwrap_err();
    assert!(matches!(e, FsError::NotAFile { .. }), "{e:?}");
    assert!(matches!(
        write_text_file(&r, "x"),
        Err(FsError::NotAFile { .. })
    ));
}

#[cfg(unix)]
#[test]
fn a_file_deleted_while_read_keeps_being_read_or_is_not_found() {
    let f = fixture();
    let content = "line of text that is not short at all\n".repeat(20_000);
    let p = f.root.join("vanishing.txt");
    std::fs::write(&p, &content).unwrap();
    let r = f.roots.resolve(&p).unwrap();

    // Deterministic: opened, then deleted, then read.
    let (dir, name) = super::walk(r.root().unwrap(), Path::new("vanishing.txt"), false).unwrap();
    let (file, size) = dir.open_read(name.unwrap()).unwrap();
    std::fs::remove_file(&p).unwrap();
    let text = super::read::read_window(file, size, &p, None, None).unwrap();
    assert_eq!(text, content);

    // Racing: deleted and recreated while reads run.
    std::fs::write(&p, &content).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churn = {
        let (p, stop, content) = (p.clone(), stop.clone(), content.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = std::fs::remove_file(&p);
                let _ = std::fs::write(&p, &content);
            }
        })
    };
    let (mut ok, mut missing) = (0, 0);
    for _ in 0..300 {
        match read_text_file(&r, None, None) {
            // Recreated by truncate-and-write, so a read may see a prefix.
            Ok(t) => {
                assert!(content.starts_with(&t));
                ok += 1;
            }
            Err(FsError::NotFound { .. }) => missing += 1,
            Err(e) => panic!("unexpected {e:?}"),
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    churn.join().unwrap();
    assert_eq!(ok + missing, 300);
}

// ---------------------------------------------------------------- compat

#[test]
fn quirks_follow_what_the_agent_says_it_is_whatever_launched_it() {
    use agent_client_protocol_schema::v1::Implementation;
    let said = |name: &str| Compat::for_agent_info(&Implementation::new(name, "0.61.0"));
    assert!(said("gemini-cli").missing_file_reads_empty);
    assert!(said("Gemini-CLI").missing_file_reads_empty);
    for other in [
        "claude-code-acp",
        "acp-desk-demo-agent",
        "gemini-cli-fork",
        "",
    ] {
        assert!(!said(other).missing_file_reads_empty, "{other}");
    }
    // The launch's quirks and the agent's own add up; neither takes one away.
    let gemini = said("gemini-cli");
    let none = Compat::default();
    assert_eq!(none.or(gemini), gemini);
    assert_eq!(gemini.or(none), gemini);
    assert_eq!(none.or(none), none);
}

#[test]
fn gemini_reads_a_missing_file_as_empty_text_and_nobody_else_does() {
    for gemini in [
        "gemini",
        "gemini --acp",
        "/usr/local/bin/gemini --experimental-acp",
        "npx -y @google/gemini-cli@0.61.0 --acp",
        "node /opt/node_modules/@google/gemini-cli/dist/index.js --acp",
        "gemini.cmd --acp",
    ] {
        assert!(
            Compat::for_agent(gemini).missing_file_reads_empty,
            "{gemini}"
        );
    }
    for other in [
        "claude",
        "codex-acp",
        "npx @zed-industries/claude-agent-acp",
        "geminix --acp",
        "opencode acp",
        "",
        "'unbalanced",
    ] {
        assert!(
            !Compat::for_agent(other).missing_file_reads_empty,
            "{other}"
        );
    }
    let spec = |name: &str, command: &str, args: &[&str]| crate::agents::LaunchSpec {
        name: name.into(),
        command: command.into(),
        args: args.iter().map(|s| s.to_string()).collect(),
        env: Vec::new(),
        cwd: None,
    };
    assert!(Compat::for_launch(&spec("gemini", "gemini", &["--acp"])).missing_file_reads_empty);
    assert!(
        Compat::for_launch(&spec("mine", "npx", &["@google/gemini-cli"])).missing_file_reads_empty
    );
    assert!(
        !Compat::for_launch(&spec(
            "claude",
            "npx",
            &["@zed-industries/claude-agent-acp"]
        ))
        .missing_file_reads_empty
    );

    let f = fixture();
    let r = f.roots.resolve(f.root.join("new.txt")).unwrap();
    let gemini = Compat::for_agent("gemini");
    assert_eq!(gemini.on_read(read_text_file(&r, None, None)).unwrap(), "");
    assert!(matches!(
        Compat::default().on_read(read_text_file(&r, None, None)),
        Err(FsError::NotFound { .. })
    ));
    // Only "missing" is softened.
    let out = f.roots.resolve(f.outside.join("x")).unwrap();
    assert!(matches!(
        gemini.on_read(read_text_file(&out, None, None)),
        Err(FsError::OutsideRoots { .. })
    ));
}

// ---------------------------------------------------------------- writes

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

#[test]
fn a_write_creates_the_file_and_its_folders_inside_the_root() {
    let f = fixture();
    let r = f.roots.resolve(f.root.join("a/b/new.txt")).unwrap();
    let rec = write_text_file(&r, "hello\r\n").unwrap();
    assert_eq!(
        std::fs::read(f.root.join("a/b/new.txt")).unwrap(),
        b"hello\r\n"
    );
    assert!(rec.created);
    assert_eq!(rec.before, None);
    assert_eq!(rec.before_hash, None);
    assert_eq!(rec.after_hash, ContentHash::of(b"hello\r\n"));
    assert_eq!(
        others(&f.root.join("a/b"), &["new.txt"]),
        Vec::<String>::new()
    );
}

#[test]
fn content_hashes_are_sha256() {
    assert_eq!(
        ContentHash::of(b"abc").to_hex(),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn a_write_outside_the_roots_changes_nothing_there() {
    let f = fixture();
    let r = f.roots.resolve(f.outside.join("new/dir/x.txt")).unwrap();
    let e = write_text_file(&r, "x").unwrap_err();
    assert!(matches!(e, FsError::OutsideRoots { .. }), "{e:?}");
    assert_eq!(others(&f.outside, &[]), Vec::<String>::new());
    let r = f.roots.resolve(f.root.join("../outside/y.txt")).unwrap();
    assert!(write_text_file(&r, "y").is_err());
    assert!(!f.outside.join("y.txt").exists());
}

#[test]
fn a_replacement_keeps_bytes_mode_and_the_old_text() {
    let f = fixture();
    let p = f.root.join("script.sh");
    std::fs::write(&p, "#!/bin/sh\necho old\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o750)).unwrap();
    }
    let r = f.roots.resolve(&p).unwrap();
    let new = "\u{feff}#!/bin/sh\r\necho new\r\n\r\n";
    let rec = write_text_file(&r, new).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), new.as_bytes());
    assert!(!rec.created);
    assert_eq!(rec.before.as_deref(), Some("#!/bin/sh\necho old\n"));
    assert_eq!(
        rec.before_hash,
        Some(ContentHash::of(b"#!/bin/sh\necho old\n"))
    );
    assert_eq!(rec.after_hash, ContentHash::of(new.as_bytes()));
    assert_eq!(rec.path, p);
    #[cfg(unix)]
    assert_eq!(mode(&p), 0o750);
    assert_eq!(others(&f.root, &["script.sh"]), Vec::<String>::new());
    // Back and forth: read returns exactly what was written.
    assert_eq!(read_text_file(&r, None, None).unwrap(), new);
}

#[test]
fn a_large_or_binary_old_file_keeps_only_its_hash() {
    let f = fixture();
    let big = "x".repeat(MAX_BEFORE_BYTES as usize + 1);
    let r = file_with(&f, "big.txt", big.as_bytes());
    let rec = write_text_file(&r, "small").unwrap();
    assert_eq!(rec.before, None);
    assert_eq!(rec.before_hash, Some(ContentHash::of(big.as_bytes())));

    let r = file_with(&f, "bin.dat", b"\x00\xff\x00");
    let rec = write_text_file(&r, "text").unwrap();
    assert_eq!(rec.before, None);
    assert_eq!(rec.before_hash, Some(ContentHash::of(b"\x00\xff\x00")));
}

#[cfg(unix)]
#[test]
fn a_read_only_file_is_refused_even_for_root() {
    use std::os::unix::fs::PermissionsExt;
    let f = fixture();
    let p = f.root.join("ro.txt");
    std::fs::write(&p, "keep me").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
    let r = f.roots.resolve(&p).unwrap();
    let e = write_text_file(&r, "changed").unwrap_err();
    assert!(matches!(e, FsError::ReadOnly { .. }), "{e:?}");
    assert!(e.to_string().contains("read-only"), "{e}");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "keep me");
    assert_eq!(mode(&p), 0o444);
    assert_eq!(others(&f.root, &["ro.txt"]), Vec::<String>::new());
}

#[cfg(unix)]
#[test]
fn a_new_file_gets_the_usual_mode() {
    let f = fixture();
    let r = f.roots.resolve(f.root.join("n.txt")).unwrap();
    write_text_file(&r, "x").unwrap();
    // 0o666 narrowed by the umask: never executable, never private-only by accident.
    let m = mode(&f.root.join("n.txt"));
    assert_eq!(m & 0o111, 0);
    assert_eq!(m & 0o600, 0o600);
}

// ---------------------------------------------------------------- faults

/// Fails the `nth` time `step` comes with `errno`.
struct FailAt {
    step: Step,
    nth: usize,
    errno: i32,
    seen: Cell<usize>,
}

impl FailAt {
    fn new(step: Step, nth: usize, errno: i32) -> Self {
        FailAt {
            step,
            nth,
            errno,
            seen: Cell::new(0),
        }
    }
}

impl FaultHook for FailAt {
    fn before(&self, step: Step) -> io::Result<()> {
        if step == self.step {
            self.seen.set(self.seen.get() + 1);
            if self.seen.get() == self.nth {
                return Err(io::Error::from_raw_os_error(self.errno));
            }
        }
        Ok(())
    }
}

#[cfg(unix)]
const ENOSPC: i32 = libc::ENOSPC;
#[cfg(unix)]
const EIO: i32 = libc::EIO;
#[cfg(not(unix))]
const ENOSPC: i32 = 112; // ERROR_DISK_FULL
#[cfg(not(unix))]
const EIO: i32 = 1117; // ERROR_IO_DEVICE

fn old_file(f: &Fixture) -> (PathBuf, Resolved) {
    let p = f.root.join("doc.txt");
    std::fs::write(&p, "old text\n").unwrap();
    (p.clone(), f.roots.resolve(p).unwrap())
}

#[test]
fn a_full_disk_midway_leaves_the_old_file_and_no_temp() {
    let f = fixture();
    let (p, r) = old_file(&f);
    // 3 MiB: the second 1 MiB piece fails, after one piece reached the temp file.
    let new = "y".repeat(3 * 1024 * 1024);
    let hook = FailAt::new(Step::Write, 2, ENOSPC);
    let e = write_with_hook(&r, &new, &hook).unwrap_err();
    assert!(matches!(e, FsError::DiskFull { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("the disk is full") && msg.contains("free space and retry"),
        "{msg}"
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "old text\n");
    assert_eq!(others(&f.root, &["doc.txt"]), Vec::<String>::new());
    assert_eq!(e.jsonrpc_code(), -32603);

    let hook = FailAt::new(Step::CreateTemp, 1, ENOSPC);
    assert!(matches!(
        write_with_hook(&r, "z", &hook),
        Err(FsError::DiskFull { .. })
    ));
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "old text\n");
}

#[test]
fn fsync_chmod_or_rename_failures_leave_the_old_file_and_no_temp() {
    let f = fixture();
    let (p, r) = old_file(&f);
    for (step, what) in [
        (Step::SyncFile, "fsync"),
        (Step::SetMode, "permissions"),
        (Step::Rename, "rename"),
    ] {
        let hook = FailAt::new(step, 1, EIO);
        let e = write_with_hook(&r, "new text\n", &hook).unwrap_err();
        assert!(matches!(e, FsError::WriteFailed { .. }), "{step:?}: {e:?}");
        let msg = e.to_string();
        assert!(
            msg.contains(what) && msg.contains("left unchanged"),
            "{msg}"
        );
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "old text\n",
            "{step:?}"
        );
        assert_eq!(
            others(&f.root, &["doc.txt"]),
            Vec::<String>::new(),
            "{step:?}"
        );
    }
    // A full disk reported by fsync (delayed allocation) is still "the disk is full".
    let hook = FailAt::new(Step::SyncFile, 1, ENOSPC);
    assert!(matches!(
        write_with_hook(&r, "new text\n", &hook),
        Err(FsError::DiskFull { .. })
    ));
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "old text\n");
}

#[test]
fn a_folder_fsync_failure_after_the_rename_is_not_a_failed_write() {
    let f = fixture();
    let (p, r) = old_file(&f);
    let hook = FailAt::new(Step::SyncFolder, 1, EIO);
    let rec = write_with_hook(&r, "new text\n", &hook).unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "new text\n");
    assert_eq!(rec.before.as_deref(), Some("old text\n"));
}

#[test]
fn temp_names_are_recognisable_and_fit() {
    use std::ffi::OsStr;
    let long = "n".repeat(255);
    for target in ["a.txt", ".hidden", long.as_str()] {
        let name = super::write::temp_name(OsStr::new(target), u64::MAX);
        let s = name.to_string_lossy();
        assert!(s.len() <= 255, "{}", s.len());
        assert!(s.starts_with('.') && s.contains(TEMP_MARKER), "{s}");
        assert!(is_temp_file_name(&name), "{s}");
    }
    for not in [
        "a.txt",
        ".a.txt.acpdesk-tmp-",
        ".a.txt.acpdesk-tmp-xyz",
        "a.txt.acpdesk-tmp-0123456789abcdef",
    ] {
        assert!(!is_temp_file_name(OsStr::new(not)), "{not}");
    }
}

// ---------------------------------------------------------------- change set

#[test]
fn the_change_set_keeps_the_first_before_and_the_latest_after() {
    let f = fixture();
    let (p, r) = old_file(&f);
    let mut set = ChangeSet::new();
    set.record_write(&write_text_file(&r, "v1\n").unwrap());
    set.record_external(f.root.join("other.rs"));
    set.record_write(&write_text_file(&r, "v2\n").unwrap());
    let n = f.roots.resolve(f.root.join("new.txt")).unwrap();
    set.record_write(&write_text_file(&n, "n\n").unwrap());
    set.record_external(&p);
    set.record_external(f.root.join(".doc.txt.acpdesk-tmp-0123456789abcdef"));

    let e = set.entries();
    assert_eq!(e.len(), 3);
    assert_eq!(e[0].path, p);
    assert_eq!(e[0].before.as_deref(), Some("old text\n"));
    assert_eq!(e[0].after_hash, Some(ContentHash::of(b"v2\n")));
    assert_eq!(e[0].source, ChangeSource::FsWrite);
    assert!(e[0].seen_by_watcher);
    assert!(!e[0].created);
    assert_eq!(e[1].source, ChangeSource::Watcher);
    assert_eq!(e[1].after_hash, None);
    assert!(e[2].created);
    assert_eq!(
        set.get(&p).unwrap().before_hash,
        Some(ContentHash::of(b"old text\n"))
    );

    let taken = set.take();
    assert_eq!(taken.len(), 3);
    assert!(set.is_empty());
    set.record_external(&p);
    assert_eq!(set.entries()[0].source, ChangeSource::Watcher);
}

// ---------------------------------------------------------------- SIGKILL

/// The child side of `sigkill_leaves_the_old_or_the_new_text`: writes versions of the file
/// until killed. Does nothing when run as an ordinary test.
#[test]
fn sigkill_child_writer() {
    let Some(dir) = std::env::var_os(KILL_CHILD_ENV) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let roots = Roots::new(&dir, Vec::<PathBuf>::new()).unwrap();
    let r = roots.resolve(dir.join(KILL_TARGET)).unwrap();
    let current = std::fs::read_to_string(dir.join(KILL_TARGET)).unwrap();
    let mut k = version_of(&current).unwrap() + 1;
    loop {
        write_text_file(&r, &versioned(k)).unwrap();
        k += 1;
    }
}

const KILL_CHILD_ENV: &str = "ACPDESK_FS_KILL_CHILD_DIR";
const KILL_TARGET: &str = "target.txt";

/// Version `k` of the file: a header naming `k`, then 256 to 768 KiB of lines naming `k`, so
/// a mix of two versions or a cut-off one cannot pass for a whole version. (Small enough that
/// the unoptimised test build writes several versions per round.)
fn versioned(k: u64) -> String {
    let line = format!("{k:>12} {}\n", "f".repeat(51));
    let lines = (1 + (k % 3) as usize) * 256 * 1024 / line.len();
    format!("version {k}\n{}", line.repeat(lines))
}

fn version_of(text: &str) -> Option<u64> {
    text.lines().next()?.strip_prefix("version ")?.parse().ok()
}

#[cfg(unix)]
#[test]
fn sigkill_leaves_the_old_or_the_new_text() {
    use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(tmp.path()).unwrap();
    let target = dir.join(KILL_TARGET);
    std::fs::write(&target, versioned(0)).unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut last_version = 0;
    let mut progressed = 0;
    for round in 0..20 {
        let mut child = std::process::Command::new(&exe)
            .args([
                "--exact",
                "fs::tests::sigkill_child_writer",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(KILL_CHILD_ENV, &dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // 20..150 ms: past the child's start-up, and anywhere within its writes.
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let wait = Duration::from_millis(20 + (seed >> 33) % 130);
        let started = Instant::now();
        std::thread::sleep(wait);
        child.kill().unwrap();
        let status = child.wait().unwrap();
        assert!(
            !status.success(),
            "round {round}: the child ended by itself: {status:?}"
        );

        let text = std::fs::read_to_string(&target).unwrap();
        let k = version_of(&text).unwrap_or_else(|| panic!("round {round}: no header"));
        assert!(
            text == versioned(k),
            "round {round}: version {k} is partial or mixed"
        );
        if k > last_version {
            progressed += 1;
        }
        last_version = k;
        for name in others(&dir, &[KILL_TARGET]) {
            assert!(
                is_temp_file_name(std::ffi::OsStr::new(&name)),
                "round {round}: unexpected {name}"
            );
        }
        eprintln!(
            "round {round}: killed after {:?}, file at version {k}, {} temp file(s) left",
            started.elapsed(),
            others(&dir, &[KILL_TARGET]).len()
        );
    }
    // The kills must have landed while the child was writing, not before it started.
    assert!(
        progressed >= 5,
        "the child made progress in only {progressed} rounds"
    );
}

#[test]
fn a_path_through_a_file_is_invalid_params_not_an_internal_error() {
    let f = fixture();
    std::fs::write(f.root.join("file.txt"), "x").unwrap();
    let r = f.roots.resolve(f.root.join("file.txt/x")).unwrap();
    let e = read_text_file(&r, None, None).unwrap_err();
    assert_eq!(e.jsonrpc_code(), -32602, "{e:?}");
    assert!(e.to_string().contains("is a file, not a folder"), "{e}");
    let r = f.roots.resolve(f.root.join("file.txt/x/y.txt")).unwrap();
    let e = write_text_file(&r, "y").unwrap_err();
    assert_eq!(e.jsonrpc_code(), -32602, "{e:?}");
    assert_eq!(
        std::fs::read_to_string(f.root.join("file.txt")).unwrap(),
        "x"
    );
}

#[test]
fn a_write_creating_folders_makes_them() {
    // The folders a write creates are fsynced into their parents (not observable here beyond
    // the write succeeding; the fsync's failure path is the same as mkdir's).
    let f = fixture();
    let r = f.roots.resolve(f.root.join("a/b/c.txt")).unwrap();
    write_text_file(&r, "c").unwrap();
    assert_eq!(
        std::fs::read_to_string(f.root.join("a/b/c.txt")).unwrap(),
        "c"
    );
}
