//! `fs/read_text_file`: a window of lines, streamed, never more than the window kept.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::error::FsError;
use super::roots::Resolved;

/// Most text one read returns: 24 MiB. The answer travels as one JSON-RPC line, and the
/// TypeScript ACP SDK (Gemini CLI, claude-code-acp) refuses messages over 32 MiB by default;
/// JSON escaping grows ordinary text by a few percent (quotes, backslashes, tabs), so 24 MiB
/// leaves room. Larger files are read in parts with `line`/`limit`, which the error says.
pub const MAX_READ_BYTES: u64 = 24 * 1024 * 1024;

/// Bytes at the start of a file searched for a NUL to call it binary: 8 KiB, the heuristic of
/// git and diff (binary formats put NULs in their headers; text virtually never has one).
pub const SNIFF_BYTES: usize = 8 * 1024;

/// Read buffer. 256 KiB makes syscalls and per-chunk work negligible next to the newline scan
/// when skipping to a far line (bench/fs-read.sh), and is nothing next to the read cap.
const READ_BUF_BYTES: usize = 256 * 1024;

/// Reads lines `line ..= line + limit - 1` of a text file (`line` 1-based, `limit` a number of
/// lines; both optional, meaning "from the start" and "to the end").
///
/// - Lines end at `\n`. The text is returned byte for byte: a line keeps its ending (`\n` or
///   `\r\n`), the last line of the window included, and a BOM stays (so an agent writing the
///   text back changes nothing it did not mean to).
/// - `line: 0` is read as 1. The spec says 1-based; an agent counting from 0 means the first
///   line, and refusing would only fail its task.
/// - A `line` past the end gives empty text, as does `limit: 0`.
/// - Reading stops after the window: the lines before it are scanned, never kept, and nothing
///   after it is read (beyond the 8 KiB sniffed for NULs).
/// - Refused: a NUL in the first 8 KiB (`Binary`), invalid UTF-8 in the window (`InvalidUtf8`),
///   more than `MAX_READ_BYTES` of text (`TooLarge`, checked against the file's size up front
///   for a whole-file read), a missing file (`NotFound`, the spec's -32002).
/// - A file deleted while being read keeps being read on unix (the open fd); one truncated
///   meanwhile gives the text read until then.
pub fn read_text_file(
    resolved: &Resolved,
    line: Option<u32>,
    limit: Option<u32>,
) -> Result<String, FsError> {
    let (root, rel) = resolved.anchor()?;
    let (dir, name) = super::walk(root, rel, false)?;
    let name = name.ok_or_else(|| FsError::NotAFile {
        path: resolved.path().to_owned(),
        what: "a folder",
    })?;
    let (file, size) = dir.open_read(name)?;
    read_window(file, size, resolved.path(), line, limit)
}

/// The window read itself, over any reader (`size` is the file's size when opened).
pub(crate) fn read_window(
    reader: impl Read,
    size: u64,
    path: &Path,
    line: Option<u32>,
    limit: Option<u32>,
) -> Result<String, FsError> {
    let first = u64::from(line.unwrap_or(1).max(1));
    let too_large = || FsError::TooLarge {
        path: path.to_owned(),
        size,
        limit: MAX_READ_BYTES,
    };
    if first == 1 && limit.is_none() && size > MAX_READ_BYTES {
        return Err(too_large());
    }
    let mut to_skip = first - 1;
    let mut left = limit.map(u64::from);
    let mut done = left == Some(0);
    let mut reader = BufReader::with_capacity(READ_BUF_BYTES, reader);
    let mut out: Vec<u8> = Vec::new();
    let mut sniffed = 0usize;
    let mut offset = 0u64;
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(FsError::io("read", path, e)),
        };
        if buf.is_empty() {
            break;
        }
        let n = buf.len();
        if sniffed < SNIFF_BYTES {
            let k = (SNIFF_BYTES - sniffed).min(n);
            if let Some(i) = memchr::memchr(0, &buf[..k]) {
                return Err(FsError::Binary {
                    path: path.to_owned(),
                    offset: offset + i as u64,
                });
            }
            sniffed += k;
        }
        if !done {
            let mut start = 0;
            if to_skip > 0 {
                match nth_newline(buf, to_skip) {
                    Ok(i) => {
                        start = i + 1;
                        to_skip = 0;
                    }
                    Err(seen) => to_skip -= seen,
                }
            }
            if to_skip == 0 {
                let rest = &buf[start..];
                let take = match left {
                    None => rest.len(),
                    Some(l) => match nth_newline(rest, l) {
                        Ok(i) => {
                            done = true;
                            i + 1
                        }
                        Err(seen) => {
                            left = Some(l - seen);
                            rest.len()
                        }
                    },
                };
                if (out.len() + take) as u64 > MAX_READ_BYTES {
                    return Err(too_large());
                }
                out.extend_from_slice(&rest[..take]);
            }
        }
        offset += n as u64;
        reader.consume(n);
        if done && sniffed >= SNIFF_BYTES {
            break;
        }
    }
    String::from_utf8(out).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let newlines = memchr::memchr_iter(b'\n', &bytes[..valid]).count() as u64;
        FsError::InvalidUtf8 {
            path: path.to_owned(),
            line: first + newlines,
        }
    })
}

/// Index of the `n`-th (1-based) `\n` in `buf`, or how many there are when fewer.
fn nth_newline(buf: &[u8], n: u64) -> Result<usize, u64> {
    // Far away (skipping to a line, or a long window): count the buffer's newlines in one
    // vectorised pass and skip it whole when the target is not in it; stopping at each of the
    // ~1,300 newlines of a buffer of 200-byte lines costs more. bench/fs-read.sh, line
    // 5,000,000 of 1 GB: 265 ms with memchr_iter alone, 214 ms with the count, ~180 ms for
    // `dd` just reading the file. Below 1,024 lines the target is usually in this buffer.
    if n > 1024 {
        let count = count_newlines(buf);
        if count < n {
            return Err(count);
        }
    }
    let mut seen = 0u64;
    for i in memchr::memchr_iter(b'\n', buf) {
        seen += 1;
        if seen == n {
            return Ok(i);
        }
    }
    Err(seen)
}

pub(crate) fn count_newlines(buf: &[u8]) -> u64 {
    // Per block of 224 bytes (7 vectors of 32, under 256) a u8 count cannot overflow, and u8 lanes keep the vector wide.
    buf.chunks(224)
        .map(|block| u64::from(block.iter().fold(0u8, |n, &b| n + u8::from(b == b'\n'))))
        .sum()
}
