//! Times checkpoints of a folder (`bench/checkpoint.sh` builds the folder and compares with
//! plain git): `checkpoint_bench DIR [CHANGED_FILE]`. The shadow repository goes to a temp
//! folder. Prints `key value` lines.

use std::path::PathBuf;
use std::time::Instant;

use acp_desk_core::checkpoint::{CheckpointSettings, Checkpoints, StepKind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args_os().skip(1);
    let dir = PathBuf::from(
        args.next()
            .ok_or("usage: checkpoint_bench DIR [CHANGED_FILE]")?,
    );
    let changed = args.next().map(PathBuf::from);
    let data = tempfile::tempdir()?;
    let settings = CheckpointSettings::default();
    let t = Instant::now();
    let cp = Checkpoints::open(data.path(), &dir, &settings, None, &[])?;
    println!("open_ms {}", t.elapsed().as_millis());
    let session = "bench";
    let first = cp.begin(session, StepKind::Turn, None)?;
    println!("first_begin_ms {}", first.took.as_millis());
    for n in &first.notes {
        println!("note {n}");
    }
    let t = Instant::now();
    cp.finish(session, first.turn, &[], &[])?;
    println!("finish_unchanged_ms {}", t.elapsed().as_millis());
    let after_first = cp.storage()?.bytes;
    println!("storage_after_first_bytes {after_first}");
    let mut unchanged = Vec::new();
    for _ in 0..5 {
        let s = cp.begin(session, StepKind::Turn, None)?;
        unchanged.push(s.took.as_millis());
        cp.finish(session, s.turn, &[], &[])?;
    }
    unchanged.sort_unstable();
    println!(
        "unchanged_begin_ms_median {}",
        unchanged[unchanged.len() / 2]
    );
    println!("unchanged_begin_ms_all {unchanged:?}");
    if let Some(file) = changed {
        let before = cp.storage()?.bytes;
        let mut times = Vec::new();
        let rounds = 5u64;
        for i in 0..rounds {
            let mut bytes = std::fs::read(&file)?;
            bytes.extend_from_slice(format!("changed {i}\n").as_bytes());
            std::fs::write(&file, bytes)?;
            let s = cp.begin(session, StepKind::Turn, None)?;
            times.push(s.took.as_millis());
            cp.finish(session, s.turn, &[], &[])?;
        }
        times.sort_unstable();
        let after = cp.storage()?.bytes;
        println!("one_changed_begin_ms_median {}", times[times.len() / 2]);
        println!("one_changed_begin_ms_all {times:?}");
        println!("changed_file_bytes {}", std::fs::metadata(&file)?.len());
        println!(
            "storage_per_changed_checkpoint_bytes {}",
            (after.saturating_sub(before)) / rounds
        );
    }
    let s = cp.storage()?;
    println!("storage_final_bytes {} steps {}", s.bytes, s.steps);
    Ok(())
}
