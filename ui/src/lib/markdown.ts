// Agent text is untrusted: Markdown is rendered by a maintained parser (marked) and the HTML is
// then sanitized (DOMPurify) with an allow-list that has no scripts, styles (neither `<style>`
// nor `style=`: CSS could fake our own UI), frames, forms, media, SVG or remote images. Links
// never navigate the webview: the click is caught (see Markdown.svelte) and handed to the app.
// The app's CSP allows inline styles (`style-src 'self' 'unsafe-inline'`: xterm's DOM renderer
// injects <style> elements), so forbidding `style` here is what keeps agent text from styling
// the page. Images: only inline PNG/JPEG/GIF/WebP `data:` URIs survive (no remote, no `file:`,
// no SVG); the CSP's `img-src 'self' data:` blocks the rest too.
//
// RAW HTML. The sanitizer works on a parsed DOM, and the HTML parser has already decided what
// is text by then: after an unclosed `<style>`, `<script>`, `<textarea>`, `<title>`, `<xmp>`,
// `<iframe>`, `<noembed>`, `<noframes>`, `<noscript>` or `<plaintext>` the rest of the input
// is that element's content, and DOMPurify drops it (or, for `<template>`, `<svg>`, `<math>`,
// `<select>`, comments and `<![CDATA[`, drops it with the element or never sees it as text).
// The agent's words after such a tag vanished (issue 12). So only raw tags named on the
// allow-list reach the parser as tags (and DOMPurify still filters their attributes); any
// other raw HTML (tags, comments, `<!...>`, `<?...?>`) is rendered as the text it is, so no
// markup can turn the words after it into something else. marked hands raw HTML over one tag
// at a time inside paragraphs, and as a whole block at a line's start; a block is split into
// tags and text by marked's own inline lexer (its text stays raw, as CommonMark says, and is
// escaped). Text marked would emit unescaped (after an inline `<pre>`, `<code>`, `<kbd>` or
// `<script>`, its "raw block") is escaped too: a bare `<` there could open a tag.
//
// STREAMING. An agent message grows by small appends. Re-parsing it from its start on every
// chunk is quadratic; instead a `MarkdownStream` freezes the HTML of leading blocks and re-lexes
// only the tail. The freezing rule (marked's lexer is block-by-block and never looks back):
//
//   The tail is lexed into top-level tokens. A BOUNDARY is a point between two top-level
//   tokens where the text so far ends with a blank line AND at least TWO non-space tokens
//   follow. Everything before the last boundary is frozen, one segment per boundary.
//
// Why this is safe while text is only appended:
// - An unclosed fence (``` with no closing fence) swallows everything to the end of the text,
//   so it is always the last token and no boundary lies inside or after it. Same for HTML
//   blocks of kinds 1-5 (`<pre>`, `<!--`...), which may contain blank lines.
// - A list can continue after a blank line (a loose list, an indented paragraph), and the
//   block after the blank line can still turn into its next item (`3` becomes `3. third`).
//   Only the last block's text can change, so once a block after the blank line is itself
//   followed by another, the lexer has ended the list for good.
// - Setext headings (`text\n---`), tables (`| a |\n|---|`) and lazy continuations change the
//   LAST block only, which is never frozen (it is not followed by a token).
// - Reference-style link definitions (`[x]: https://...`) change links in EARLIER blocks, and
//   carriage returns are normalised by the lexer: a message that has either is rendered whole
//   on every update (the rare slow path; the output is the same either way).
//
// Each segment is sanitized on its own, so `renderMarkdown(text)` (all segments joined) is
// exactly what any sequence of appends ends with; markdown.test.ts checks it for many chunkings.
import DOMPurify from 'dompurify';
import { Lexer, Marked, type Token } from 'marked';
import {
  escapeHtml,
  fenceLanguage,
  highlightCode,
  highlighterLoaded,
  knownLanguage,
  loadHighlighter,
} from './highlight';

/** Code blocks with a language rendered plain because highlight.js was not loaded yet: a stream
 * that rendered one renders again once it is (see `MarkdownStream.update`). */
let plainCodeBlocks = 0;

/** `breaks`: a single newline is a line break. Off for prose (Markdown's rule); on for tool
 * output, which is lines (search hits, listings) far more often than paragraphs. */
const makeMarked = (breaks: boolean) =>
  new Marked({
    gfm: true,
    breaks,
    async: false,
    renderer: {
      code({ text, lang }) {
        // The first block that names a language loads highlight.js (highlight.ts); until it
        // is in, the block is plain and counted, so its message is rendered again after.
        if (fenceLanguage(lang) && !highlighterLoaded()) {
          plainCodeBlocks += 1;
          void loadHighlighter();
        }
        const name = knownLanguage(lang);
        const label = (lang ?? '').trim().split(/\s+/)[0] ?? '';
        const cls = name ? ` class="hljs language-${escapeHtml(name)}"` : '';
        return (
          `<div class="code-block"><div class="code-head"><span class="code-lang">${escapeHtml(label || 'text')}</span></div>` +
          `<pre><code${cls}>${highlightCode(text.replace(/\n$/, ''), lang)}\n</code></pre></div>\n`
        );
      },
      html({ text, block }) {
        // Shown as written; marked's text renderer escapes without double-encoding entities.
        const asText = (raw: string) => this.text({ type: 'text', raw, text: raw });
        const one = (raw: string) => (allowedTag(raw) ? raw : asText(raw));
        if (!block) return one(text);
        return Lexer.lexInline(text, this.options)
          .map((t) => (t.type === 'html' ? one(t.raw) : asText(t.raw)))
          .join('');
      },
      text(token) {
        // `false` falls back to marked's renderer; text from a raw block goes there as ordinary
        // text, so it is escaped like any other.
        return token.type === 'text' && token.escaped
          ? this.text({ ...token, escaped: false })
          : false;
      },
    },
  });
const marked = makeMarked(false);
const markedLines = makeMarked(true);

export const ALLOWED_TAGS = [
  'p',
  'br',
  'hr',
  'strong',
  'em',
  'del',
  's',
  'code',
  'pre',
  'blockquote',
  'ul',
  'ol',
  'li',
  'a',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'input',
  'span',
  'div',
  'img',
];
// `input` only for GFM task lists: forced to a disabled checkbox below. `img` only with an
// inline raster `data:` source (below); `src` on anything else is removed.
export const ALLOWED_ATTR = [
  'href',
  'title',
  'align',
  'type',
  'checked',
  'disabled',
  'class',
  'start',
  'src',
  'alt',
];
const ALLOWED = new Set(ALLOWED_TAGS);
/** The tag name of one raw tag as marked's lexer cut it out (`<name ...>`, `</name>`). */
const TAG_NAME = /^<\/?([a-z][a-z0-9-]*)(?=[\s/>])/i;

/** Whether one raw tag from marked's lexer (or a comment, `<!...>`, `<?...?>`) may reach the
 * HTML parser as markup: only if the allow-list names it (DOMPurify then filters it). */
function allowedTag(raw: string): boolean {
  const name = TAG_NAME.exec(raw)?.[1]?.toLowerCase();
  return name !== undefined && ALLOWED.has(name);
}
/** Links that may be opened (in the system browser, on a click); anything else is dropped. */
export const SAFE_URL = /^(?:https?:|mailto:)/i;
/** The only images agent Markdown may show: inline PNG/JPEG/GIF/WebP (never SVG, never remote
 * or `file:`, which would load something or leak that the message was read). */
export const SAFE_IMAGE = /^data:image\/(?:png|jpeg|gif|webp);base64,[a-z0-9+/=\s]+$/i;
/** Classes that survive: code languages, highlight.js tokens, our code-block frame. */
const SAFE_CLASS = /^(?:language-[\w+-]+|hljs(?:-[\w-]+)?|code-block|code-head|code-lang|[\w]+_)$/;

let hooked = false;
function hook(): void {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    // Titles become our tooltip (lib/tooltip.ts: a native one outlives its element), shown by
    // Markdown.svelte for any `data-tip` inside it; a link's is its address.
    const title = node.getAttribute('title');
    node.removeAttribute('title');
    if (title) node.setAttribute('data-tip', title);
    if (node.tagName === 'A') {
      const href = node.getAttribute('href') ?? '';
      if (SAFE_URL.test(href)) node.setAttribute('data-tip', href);
      else node.removeAttribute('href');
      node.setAttribute('rel', 'noopener noreferrer');
    }
    if (node.tagName === 'IMG') {
      if (!SAFE_IMAGE.test(node.getAttribute('src') ?? '')) {
        node.remove();
        return;
      }
    } else if (node.hasAttribute('src')) node.removeAttribute('src');
    if (node.tagName === 'INPUT') {
      if (node.getAttribute('type') !== 'checkbox') {
        node.remove();
        return;
      }
      node.setAttribute('disabled', '');
    }
    if (node.hasAttribute('class')) {
      const kept = (node.getAttribute('class') ?? '')
        .split(/\s+/)
        .filter((c) => SAFE_CLASS.test(c));
      if (kept.length > 0) node.setAttribute('class', kept.join(' '));
      else node.removeAttribute('class');
    }
  });
}

function sanitize(html: string): string {
  hook();
  return DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    FORBID_TAGS: ['style'],
    FORBID_ATTR: ['style'],
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
  });
}

/** Work done by the lexer, for tests and the bench (characters handed to it, calls). */
export const lexStats = { chars: 0, calls: 0 };

function lex(src: string, m: Marked = marked): Token[] {
  lexStats.chars += src.length;
  lexStats.calls += 1;
  return m.lexer(src);
}

function parse(tokens: Token[], m: Marked = marked): string {
  return sanitize(m.parser(tokens) as string);
}

/** A link definition (`[label]: destination`) may be in the new text: anywhere, not only at a
 * line's start, as marked also takes definitions inside quotes and list items, and one changes
 * links in blocks already frozen. */
const LINK_DEF = /\]:/;

/** Splits lexed `src` at its boundaries (see the top of the file). `segments` are the frozen
 * ones with their source length; `rest` is everything after the last boundary. */
function split(tokens: Token[]): {
  segments: { tokens: Token[]; length: number }[];
  rest: Token[];
} {
  const segments: { tokens: Token[]; length: number }[] = [];
  // The last index holding a non-space token: a boundary needs two after it.
  let lastContent = -1;
  for (let i = tokens.length - 1; i >= 0; i--) {
    if ((tokens[i] as Token).type !== 'space') {
      lastContent = i;
      break;
    }
  }
  let start = 0;
  let length = 0;
  let recent = '';
  for (let i = 0; i < lastContent; i++) {
    const raw = (tokens[i] as Token).raw;
    length += raw.length;
    recent = (recent + raw).slice(-64);
    const next = tokens[i + 1] as Token;
    if (i + 1 < lastContent && next.type !== 'space' && /\n[ \t]*\n[ \t\n]*$/.test(recent)) {
      segments.push({ tokens: tokens.slice(start, i + 1), length });
      start = i + 1;
      length = 0;
    }
  }
  return { segments, rest: tokens.slice(start) };
}

function wholeText(text: string, m: Marked = marked): string {
  const tokens = lex(text, m);
  const { segments, rest } = split(tokens);
  return segments.map((s) => parse(s.tokens, m)).join('') + parse(rest, m);
}

/** What a message renders to: frozen segments (never change once there) and the live tail. */
export interface RenderedMarkdown {
  blocks: readonly string[];
  tail: string;
}

/** One growing message's rendering state. `update(text)` with the same text is free; with the
 * text extended it re-lexes only the unfrozen tail; with other text it starts over. */
export class MarkdownStream {
  private text = '';
  /** Characters of `text` whose blocks are frozen in `blocks`. */
  private frozen = 0;
  private blocks: string[] = [];
  private tail = '';
  /** Link definitions or carriage returns seen: render whole (see the top of the file). */
  private whole = false;
  private result: RenderedMarkdown = { blocks: [], tail: '' };
  /** Some code block was rendered plain while highlight.js was loading. */
  private plainCode = false;
  private readonly m: Marked;

  constructor(readonly breaks = false) {
    this.m = breaks ? markedLines : marked;
  }

  update(text: string): RenderedMarkdown {
    const stale = this.plainCode && highlighterLoaded();
    if (text === this.text && !stale) return this.result;
    const appended = text.startsWith(this.text) && !stale;
    if (stale) this.plainCode = false;
    const plainBefore = plainCodeBlocks;
    if (!appended) {
      this.frozen = 0;
      this.blocks = [];
      this.whole = false;
    }
    // Look for a definition or a CR only where new text could have made one.
    const from = appended ? Math.max(0, this.text.lastIndexOf('\n', this.text.length - 1)) : 0;
    const fresh = text.slice(from);
    if (!this.whole && (LINK_DEF.test(fresh) || fresh.includes('\r'))) this.whole = true;
    this.text = text;
    if (this.whole) {
      this.frozen = 0;
      this.blocks = [];
      this.tail = wholeText(text, this.m);
    } else {
      const tokens = lex(text.slice(this.frozen), this.m);
      const { segments, rest } = split(tokens);
      if (segments.length > 0) {
        this.blocks = [...this.blocks];
        for (const s of segments) {
          this.blocks.push(parse(s.tokens, this.m));
          this.frozen += s.length;
        }
      }
      this.tail = parse(rest, this.m);
    }
    if (plainCodeBlocks !== plainBefore) this.plainCode = true;
    this.result = { blocks: this.blocks, tail: this.tail };
    return this.result;
  }
}

/** Streams by message (entry key), least recently used dropped first. A key reused for other
 * text simply starts over, so sharing keys across sessions costs speed, never correctness. */
const streams = new Map<string | number, MarkdownStream>();
const MAX_STREAMS = 400;

export function renderStreaming(
  key: string | number,
  text: string,
  breaks = false,
): RenderedMarkdown {
  let s = streams.get(key);
  if (s) streams.delete(key);
  if (!s || s.breaks !== breaks) {
    s = new MarkdownStream(breaks);
    if (streams.size >= MAX_STREAMS) streams.delete(streams.keys().next().value as string | number);
  }
  streams.set(key, s);
  return s.update(text);
}

/** Agent Markdown to safe HTML, in one go (the same HTML the streaming path ends with). */
export function renderMarkdown(text: string, breaks = false): string {
  return wholeText(text, breaks ? markedLines : marked);
}

/**
 * A one-line title from an agent (a tool call's, a permission request's) as safe HTML: only
 * inline code and emphasis survive. Agents write titles such as "Run `cargo test`"; showing
 * the backticks raw reads worse than the panels people compare us with.
 */
export function renderTitle(text: string): string {
  const html = marked.parseInline(text, { async: false }) as string;
  return DOMPurify.sanitize(html, { ALLOWED_TAGS: ['code', 'em', 'strong'], ALLOWED_ATTR: [] });
}
