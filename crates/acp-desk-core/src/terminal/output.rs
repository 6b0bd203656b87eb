//! A terminal's retained output: pty bytes decoded as a stream, kept up to a byte limit that is
//! enforced by cutting from the start at a character boundary (ACP `outputByteLimit`).

use encoding_rs::{CoderResult, Decoder, UTF_8};

/// Below this much dead prefix the retained text is not moved: with a tiny (or zero) limit,
/// compacting on every push would cost a memmove per read for nothing.
const COMPACT_MIN_BYTES: usize = 64 * 1024;

/// Pty bytes to text. A multi-byte character split across reads is completed by the next read;
/// invalid bytes become U+FFFD (encoding_rs's WHATWG UTF-8 decoder, which is what browsers do).
pub(crate) struct StreamDecoder {
    decoder: Decoder,
}

impl StreamDecoder {
    pub(crate) fn new() -> Self {
        // No BOM handling: a terminal's output is a byte stream, not a document; a leading
        // EF BB BF is text the command printed.
        Self {
            decoder: UTF_8.new_decoder_without_bom_handling(),
        }
    }

    /// Appends the text of `bytes` to `out`. `last` flushes a trailing incomplete sequence as
    /// U+FFFD (end of output).
    pub(crate) fn decode(&mut self, mut bytes: &[u8], last: bool, out: &mut String) {
        loop {
            // encoding_rs writes only into spare capacity; this bound is exact for UTF-8 and
            // saturates rather than overflowing.
            let need = self
                .decoder
                .max_utf8_buffer_length(bytes.len())
                .unwrap_or(bytes.len().saturating_mul(3).saturating_add(4));
            out.reserve(need);
            let (result, read, _replaced) = self.decoder.decode_to_string(bytes, out, last);
            bytes = &bytes[read..];
            match result {
                CoderResult::InputEmpty => return,
                CoderResult::OutputFull => continue,
            }
        }
    }
}

/// At most `limit` bytes of the most recent output.
pub(crate) struct OutputBuffer {
    /// `text[start..]` is the retained output; the prefix is dead and dropped in bulk
    /// (amortised O(1) per byte instead of a memmove of the whole buffer per read).
    text: String,
    start: usize,
    limit: usize,
    truncated: bool,
}

impl OutputBuffer {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            text: String::new(),
            start: 0,
            limit,
            truncated: false,
        }
    }

    pub(crate) fn push(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        if self.start > 0 && self.text.len() + s.len() > self.text.capacity() {
            // Reuse the dead prefix rather than growing: capacity then stays within about twice
            // the limit plus a delta.
            self.compact();
        }
        self.text.push_str(s);
        if self.text.len() - self.start > self.limit {
            let mut cut = self.text.len() - self.limit;
            // Forward to the next boundary: the retained part may be a little under the limit,
            // never over it, and never starts inside a character.
            while !self.text.is_char_boundary(cut) {
                cut += 1;
            }
            self.start = cut;
            self.truncated = true;
        }
        if self.start >= self.limit.max(COMPACT_MIN_BYTES) {
            self.compact();
        }
    }

    fn compact(&mut self) {
        self.text.drain(..self.start);
        self.start = 0;
    }

    pub(crate) fn text(&self) -> &str {
        &self.text[self.start..]
    }

    pub(crate) fn truncated(&self) -> bool {
        self.truncated
    }

    /// Bytes held, dead prefix included (for tests of the memory bound).
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.text.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(chunks: &[&[u8]]) -> String {
        let mut d = StreamDecoder::new();
        let mut out = String::new();
        for c in chunks {
            d.decode(c, false, &mut out);
        }
        d.decode(&[], true, &mut out);
        out
    }

    #[test]
    fn split_characters_are_joined() {
        // "é" = C3 A9, "€" = E2 82 AC, "😀" = F0 9F 98 80, split at every possible place.
        let s = "aé€😀z".as_bytes();
        for i in 0..s.len() {
            for j in i..s.len() {
                assert_eq!(decode_all(&[&s[..i], &s[i..j], &s[j..]]), "aé€😀z");
            }
        }
    }

    #[test]
    fn invalid_bytes_become_replacement() {
        assert_eq!(decode_all(&[b"a\xffb"]), "a\u{FFFD}b");
        // An incomplete sequence at the end of output.
        assert_eq!(decode_all(&[b"a\xe2\x82"]), "a\u{FFFD}");
        // An incomplete sequence followed by ASCII in the next read.
        assert_eq!(decode_all(&[b"a\xe2", b"b"]), "a\u{FFFD}b");
    }

    #[test]
    fn leading_bom_is_kept() {
        assert_eq!(decode_all(&[b"\xef\xbb\xbfx"]), "\u{FEFF}x");
    }

    #[test]
    fn limit_cuts_from_the_start_at_a_boundary() {
        let mut b = OutputBuffer::new(5);
        b.push("ab");
        assert_eq!((b.text(), b.truncated()), ("ab", false));
        b.push("c€"); // 2 + 1 + 3 = 6 bytes: one must go
        assert_eq!((b.text(), b.truncated()), ("bc€", true));
        // "€" is 3 bytes; keeping 5 of "bc€d€" (9 bytes) would start inside the first "€".
        b.push("d€");
        assert_eq!(b.text(), "d€");
        assert!(b.text().len() <= 5);
    }

    #[test]
    fn zero_limit_keeps_nothing() {
        let mut b = OutputBuffer::new(0);
        b.push("abc");
        assert_eq!((b.text(), b.truncated()), ("", true));
    }

    #[test]
    fn memory_stays_bounded() {
        let limit = 1000;
        let mut b = OutputBuffer::new(limit);
        let chunk = "x€".repeat(3000);
        for _ in 0..200 {
            b.push(&chunk);
            assert!(b.text().len() <= limit);
        }
        assert!(b.truncated());
        assert!(b.capacity() <= 2 * COMPACT_MIN_BYTES + 2 * chunk.len());
    }
}
