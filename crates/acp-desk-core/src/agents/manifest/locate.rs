//! Finding the line of a field in YAML text, for problems found after parsing (the YAML value
//! keeps no positions). Block style only (what manifests are written in): a key is a line
//! `key:` at its mapping's indentation, a list item a line `- ` at its list's. A field written
//! in flow style (`{a: 1}`) or not found gives the line of its nearest found ancestor.

/// One step of a field path: `metadata.aip44.mcp_servers[1].name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Seg {
    Key(String),
    Index(usize),
}

/// `a.b[2].c` as segments. Keys may hold `-` (`metadata.acp-desk`); a key holding `.` or `[`
/// cannot be named (vendor keys like that get their parent's line).
pub(super) fn segments(path: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let mut rest = part;
        if let Some(open) = rest.find('[') {
            let key = &rest[..open];
            if !key.is_empty() {
                out.push(Seg::Key(key.to_string()));
            }
            rest = &rest[open..];
            while let Some(stripped) = rest.strip_prefix('[') {
                let Some(close) = stripped.find(']') else {
                    break;
                };
                if let Ok(i) = stripped[..close].parse() {
                    out.push(Seg::Index(i));
                }
                rest = &stripped[close + 1..];
            }
        } else if !rest.is_empty() {
            out.push(Seg::Key(rest.to_string()));
        }
    }
    out
}

struct Line<'a> {
    /// Indentation of the raw line.
    indent: usize,
    /// Where the content starts after any `- ` list markers, and the content from there.
    inner_indent: usize,
    inner: &'a str,
    dash: bool,
    blank: bool,
}

fn classify(raw: &str) -> Line<'_> {
    let indent = raw.len() - raw.trim_start_matches(' ').len();
    let mut inner = &raw[indent..];
    let mut inner_indent = indent;
    let dash = inner == "-" || inner.starts_with("- ");
    while inner == "-" || inner.starts_with("- ") {
        let after = &inner[1..];
        let spaces = after.len() - after.trim_start_matches(' ').len();
        inner_indent += 1 + spaces;
        inner = &after[spaces..];
    }
    let t = inner.trim();
    Line {
        indent,
        inner_indent,
        inner,
        dash,
        blank: t.is_empty() || t.starts_with('#'),
    }
}

fn is_key(text: &str, key: &str) -> bool {
    for quoted in [key.to_string(), format!("\"{key}\""), format!("'{key}'")] {
        if let Some(rest) = text.strip_prefix(quoted.as_str())
            && rest.trim_start().starts_with(':')
        {
            return true;
        }
    }
    false
}

/// The 0-based index, in `text`'s lines, of the deepest segment of `path` found.
pub(super) fn line_of(text: &str, path: &[Seg]) -> Option<usize> {
    let lines: Vec<Line<'_>> = text.lines().map(classify).collect();
    let (mut start, mut end) = (0, lines.len());
    // Whether the block is one list item, whose first line holds `- ` before its first key.
    let mut item = false;
    let mut found = None;
    for seg in path {
        let Some(first) = (start..end).find(|&i| !lines[i].blank) else {
            return found;
        };
        match seg {
            Seg::Key(key) => {
                let at = if item && first == start {
                    lines[first].inner_indent
                } else {
                    lines[first].indent
                };
                let hit = (first..end).find(|&i| {
                    let l = &lines[i];
                    let here = if item && i == start {
                        l.inner_indent == at
                    } else {
                        l.indent == at && !l.dash
                    };
                    !l.blank && here && is_key(l.inner, key)
                });
                let Some(hit) = hit else {
                    return found;
                };
                found = Some(hit);
                // Its value: the lines below it that are deeper, or `- ` items at its own
                // indentation (YAML allows a list flush with its key).
                let stop = (hit + 1..end)
                    .find(|&i| {
                        let l = &lines[i];
                        !l.blank && (l.indent < at || (l.indent == at && !l.dash))
                    })
                    .unwrap_or(end);
                (start, end, item) = (hit + 1, stop, false);
            }
            Seg::Index(n) => {
                if !lines[first].dash {
                    return found;
                }
                let at = lines[first].indent;
                let items: Vec<usize> = (first..end)
                    .filter(|&i| lines[i].dash && lines[i].indent == at)
                    .collect();
                let Some(&hit) = items.get(*n) else {
                    return found;
                };
                let stop = items.get(n + 1).copied().unwrap_or(end);
                found = Some(hit);
                (start, end, item) = (hit, stop, true);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const YAML: &str = "\
name: a
# a comment
metadata:
  aip44:
    acp_rev: x
    tier: basic
    mcp_servers:
      - name: one
        transport: stdio
      - name: two
        transport: sse
  acp-desk:
    command: x
    args:
    - a
    - b
tags: [a, b]
";

    fn at(path: &str) -> Option<usize> {
        line_of(YAML, &segments(path)).map(|i| i + 1)
    }

    #[test]
    fn finds_keys_items_and_falls_back_to_the_parent() {
        assert_eq!(at("name"), Some(1));
        assert_eq!(at("metadata"), Some(3));
        assert_eq!(at("metadata.aip44.tier"), Some(6));
        assert_eq!(at("metadata.aip44.mcp_servers"), Some(7));
        assert_eq!(at("metadata.aip44.mcp_servers[0]"), Some(8));
        assert_eq!(at("metadata.aip44.mcp_servers[0].name"), Some(8));
        assert_eq!(at("metadata.aip44.mcp_servers[1].transport"), Some(11));
        assert_eq!(at("metadata.acp-desk.args[1]"), Some(16));
        assert_eq!(at("metadata.acp-desk.command"), Some(13));
        // Not there: the nearest ancestor found.
        assert_eq!(at("metadata.aip44.audit"), Some(4));
        assert_eq!(at("metadata.aip44.mcp_servers[5]"), Some(7));
        assert_eq!(at("tags[1]"), Some(17));
        assert_eq!(at("nope"), None);
        assert_eq!(
            segments("a.b-c[2][3].d"),
            vec![
                Seg::Key("a".into()),
                Seg::Key("b-c".into()),
                Seg::Index(2),
                Seg::Index(3),
                Seg::Key("d".into())
            ]
        );
    }
}
