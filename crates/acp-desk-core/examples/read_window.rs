//! Prints lines `line ..= line + limit - 1` of a file through `fs::read_text_file`, the way the
//! session answers `fs/read_text_file` (the file's folder is the session's root). Used by
//! bench/fs-read.sh to compare with `sed -n`.
//!
//! Usage: read_window <absolute path> <line> <limit>

use std::io::Write;
use std::path::PathBuf;

use acp_desk_core::fs::{Roots, read_text_file};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, line, limit] = args.as_slice() else {
        eprintln!("usage: read_window <absolute path> <line> <limit>");
        std::process::exit(2);
    };
    let path = PathBuf::from(path);
    let folder = path.parent().ok_or("the file must be in a folder")?;
    let roots = Roots::new(folder, Vec::<PathBuf>::new())?;
    let resolved = roots.resolve(&path)?;
    let text = read_text_file(&resolved, Some(line.parse()?), Some(limit.parse()?))?;
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(())
}
