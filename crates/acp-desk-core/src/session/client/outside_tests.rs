//! The pure rules of client access outside the roots: which folder may be offered, what an
//! allowed tool call covers, and which paths a tool call names.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};

use serde_json::json;

use super::*;

#[test]
fn no_folder_near_the_root_home_or_holding_a_root_is_offered() {
    let roots = [PathBuf::from("/work/proj")];
    let home = Some(Path::new("/home/u"));
    for folder in ["/", "/home", "/etc", "/tmp", "/home/u", "/work"] {
        assert!(
            too_broad(Path::new(folder), &roots, home).is_some(),
            "{folder} must not be offered"
        );
    }
    // A folder holding home, deeper than the depth rule catches.
    let deep_home = Some(Path::new("/var/lib/users/u"));
    assert!(too_broad(Path::new("/var/lib"), &[], deep_home).is_some());
    assert!(too_broad(Path::new("/var/lib/users"), &[], deep_home).is_some());
    // Folders beside the session's, or inside home, are fine.
    for folder in ["/work/other", "/home/u/notes", "/tmp/x", "/srv/app/data"] {
        assert_eq!(too_broad(Path::new(folder), &roots, home), None, "{folder}");
    }
}

fn resolved(p: &str) -> Resolved {
    let roots = crate::fs::Roots::new(std::env::temp_dir(), Vec::<PathBuf>::new()).unwrap();
    roots.resolve(p).unwrap()
}

fn read(p: &str) -> ClientOp {
    ClientOp::Read {
        resolved: resolved(p),
        line: None,
        limit: None,
        offer: None,
    }
}

fn write(p: &str) -> ClientOp {
    ClientOp::Write {
        resolved: resolved(p),
        content: String::new(),
        offer: None,
    }
}

fn terminal(p: &str) -> ClientOp {
    let req = acp::CreateTerminalRequest::new("s", "true");
    ClientOp::Terminal {
        req: Box::new(req),
        cwd: resolved(p),
        offer: None,
    }
}

#[test]
fn an_allowed_tool_call_covers_only_what_its_kind_does() {
    use acp::ToolKind as K;
    let (r, w, t) = (read("/a/b"), write("/a/b"), terminal("/a"));
    let covers = |k: K| {
        let g = Grant::of(Some(k));
        [&r, &w, &t].map(|op| g.is_some_and(|g| g.covers(op)))
    };
    for k in [K::Read, K::Search, K::Fetch, K::Think] {
        assert_eq!(
            covers(k),
            [true, false, false],
            "{k:?}: a read never covers a write"
        );
    }
    for k in [K::Edit, K::Delete, K::Move] {
        assert_eq!(covers(k), [true, true, false], "{k:?}");
    }
    assert_eq!(covers(K::Execute), [false, false, true]);
    assert_eq!(covers(K::Other), [false, false, false]);
    assert_eq!(Grant::of(None), None);
}

#[test]
fn paths_named_takes_locations_and_path_keys_never_free_text() {
    let locations = [acp::ToolCallLocation::new("/loc/a.rs")];
    let raw = json!({
        "file_path": "/p/file",
        "abs_path": "/p/abs",
        "notebook_path": "/p/nb.ipynb",
        "path": "relative/ignored",
        "cwd": "/p/cwd",
        "paths": ["/p/one", "/p/two", 3],
        "content": "see /etc/shadow",
        "new_string": "/etc/passwd",
        "old_string": "/root/.ssh/id_rsa",
        "command": "cat /etc/hostname",
        "nested": {"file_path": "/nested/ignored"}
    });
    let got = crate::thread::paths_named(&locations, Some(&raw));
    let mut got: Vec<String> = got.iter().map(|p| p.display().to_string()).collect();
    got.sort();
    assert_eq!(
        got,
        [
            "/loc/a.rs",
            "/p/abs",
            "/p/cwd",
            "/p/file",
            "/p/nb.ipynb",
            "/p/one",
            "/p/two"
        ]
    );
    // A raw input that is a bare string (a command line) names nothing.
    assert!(crate::thread::paths_named(&[], Some(&json!("cat /etc/hostname"))).is_empty());
}
