//! Times the `@` picker's file listing on a folder: `cargo run -p acp-desk-shell --example
//! list_files -- FOLDER` (docs/PERFORMANCE.md has the figures).

fn main() {
    let Some(folder) = std::env::args().nth(1) else {
        eprintln!("usage: list_files FOLDER");
        std::process::exit(2);
    };
    let root = match std::fs::canonicalize(&folder) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{folder}: {e}");
            std::process::exit(1);
        }
    };
    for run in 1..=3 {
        let started = std::time::Instant::now();
        let listed = acp_desk_shell::files::list_files(&root);
        println!(
            "run {run}: {} files listed, truncated {}, {:.1} ms",
            listed.files.len(),
            listed.truncated,
            started.elapsed().as_secs_f64() * 1000.0
        );
    }
    let started = std::time::Instant::now();
    let listed = acp_desk_shell::files::list_files_capped(&root, usize::MAX);
    println!(
        "uncapped: {} files, {:.1} ms",
        listed.files.len(),
        started.elapsed().as_secs_f64() * 1000.0
    );
}
