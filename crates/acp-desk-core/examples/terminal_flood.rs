//! Terminal flood: runs `head -c BYTES /dev/zero | tr '\0' a` in a terminal with a 1 MiB output
//! limit, consumes every delta the way a session would, and prints throughput and peak RSS.
//! Not a test (nothing is asserted beyond completeness); see `bench/terminal-flood.sh`.
//!
//! Usage: terminal_flood [BYTES] [LIMIT]   (defaults: 100000000 and 1048576)
//! Needs `acp-desk-supervisor` next to it (or one folder up) or in ACP_DESK_SUPERVISOR.

use std::time::Instant;

use acp_desk_core::terminal::{TerminalEvent, TerminalOptions, TerminalRequest, Terminals};

/// Events buffered between the terminal and this consumer: what a session would give it.
const EVENT_CHANNEL: usize = 16;

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let bytes: u64 = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(100_000_000);
    let limit: u64 = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(1024 * 1024);

    let (tx, mut rx) = tokio::sync::mpsc::channel(EVENT_CHANNEL);
    let mut terminals = Terminals::new(tx, TerminalOptions::default());
    let rss_before = peak_rss_kib();
    let start = Instant::now();
    let id = terminals.create(TerminalRequest {
        command: format!("head -c {bytes} /dev/zero | tr '\\0' a"),
        args: Vec::new(),
        env: Vec::new(),
        cwd: std::env::current_dir()?,
        output_byte_limit: Some(limit),
    })?;
    let (mut received, mut events, mut largest) = (0u64, 0u64, 0usize);
    let status = loop {
        match rx.recv().await.ok_or("event channel closed")? {
            TerminalEvent::Output { data, .. } => {
                received += data.len() as u64;
                events += 1;
                largest = largest.max(data.len());
            }
            TerminalEvent::Exited { exit_status, .. } => break exit_status,
        }
    };
    let secs = start.elapsed().as_secs_f64();
    let out = terminals.output(&id)?;
    if received != bytes {
        return Err(format!("received {received} bytes, expected {bytes}").into());
    }
    println!(
        "bytes={received} seconds={secs:.3} throughput={:.1} MB/s events={events} avg_delta={} B largest_delta={largest} B",
        received as f64 / secs / 1e6,
        received / events.max(1),
    );
    println!(
        "retained={} B truncated={} exit={:?} peak_rss_before={} KiB peak_rss={} KiB",
        out.output.len(),
        out.truncated,
        status,
        rss_before.unwrap_or(0),
        peak_rss_kib().unwrap_or(0),
    );
    Ok(())
}
