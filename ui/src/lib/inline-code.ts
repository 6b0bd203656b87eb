// `code` spans in short texts we show as plain text (option labels, "Permission for …" lines,
// errors and notices): agents and our own messages write paths and commands in backticks.
// Only code spans, by CommonMark's rule; everything else stays text. The result is rendered as
// text nodes and <code> elements (InlineCode.svelte), never as HTML, so it is safe by
// construction, whatever the text holds.

export interface Span {
  code: boolean;
  text: string;
}

/**
 * Splits `text` into plain and code spans. A code span opens with a run of backticks and
 * closes with the next run of the same length; one space on each side is dropped when both are
 * there (so `` `x` `` can hold a backtick). A run with no match is plain text.
 */
export function codeSpans(text: string): Span[] {
  const out: Span[] = [];
  let plain = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] !== '`') {
      const next = text.indexOf('`', i);
      const end = next < 0 ? text.length : next;
      plain += text.slice(i, end);
      i = end;
      continue;
    }
    let n = 0;
    while (text[i + n] === '`') n++;
    const close = closingRun(text, i + n, n);
    if (close < 0) {
      plain += text.slice(i, i + n);
      i += n;
      continue;
    }
    let code = text.slice(i + n, close).replace(/\n/g, ' ');
    if (code.startsWith(' ') && code.endsWith(' ') && code.trim() !== '') code = code.slice(1, -1);
    if (plain) out.push({ code: false, text: plain });
    plain = '';
    out.push({ code: true, text: code });
    i = close + n;
  }
  if (plain) out.push({ code: false, text: plain });
  return out;
}

/** Where the next run of exactly `n` backticks from `from` starts, or -1. */
function closingRun(text: string, from: number, n: number): number {
  let j = text.indexOf('`', from);
  while (j >= 0) {
    let m = 0;
    while (text[j + m] === '`') m++;
    if (m === n) return j;
    j = text.indexOf('`', j + m);
  }
  return -1;
}
