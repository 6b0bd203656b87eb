import { beforeAll, describe, expect, it } from 'vitest';
import { sentinelCases, sentinelChunkings } from '../../playwright/sentinel-corpus';
import { loadHighlighter } from './highlight';
import { MarkdownStream, lexStats, renderMarkdown, renderStreaming, renderTitle } from './markdown';

// highlight.js is loaded on first use (highlight.ts); these tests check the highlighted output,
// so load it first. markdown-lazy.test.ts checks what shows before and after it is in.
beforeAll(() => loadHighlighter());

// Agent output is untrusted: whatever it sends must render inert.
const hostile: [string, string][] = [
  ['script tag', '<script>alert(1)</script>'],
  ['onerror', '<img src=x onerror="alert(1)">'],
  ['event handler on an allowed tag', '<p onclick="alert(1)">hi</p>'],
  ['javascript: link', '[click](javascript:alert(1))'],
  ['javascript: link, HTML', '<a href="javascript:alert(1)">x</a>'],
  ['entity-encoded javascript:', '<a href="jav&#x09;ascript:alert(1)">x</a>'],
  ['data: link', '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)'],
  ['svg', '<svg><script>alert(1)</script><circle onload="alert(1)"/></svg>'],
  ['svg animate', '<svg><animate onbegin="alert(1)" attributeName="x"/></svg>'],
  ['iframe', '<iframe src="https://evil.example"></iframe>'],
  ['form', '<form action="https://evil.example"><input name="a"><button>go</button></form>'],
  ['style tag', '<style>body{background:url(https://evil.example/x)}</style>'],
  ['style attribute', '<p style="background:url(https://evil.example/x)">x</p>'],
  ['remote image', '![x](https://evil.example/track.png)'],
  ['object/embed', '<object data="x.swf"></object><embed src="x.swf">'],
  ['meta refresh', '<meta http-equiv="refresh" content="0;url=https://evil.example">'],
  ['base', '<base href="https://evil.example/">'],
  ['mutation XSS (noscript)', '<noscript><p title="</noscript><img src=x onerror=alert(1)>">'],
  ['mutation XSS (math)', '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>'],
  ['link tag', '<link rel="stylesheet" href="https://evil.example/x.css">'],
];

describe('renderMarkdown', () => {
  it('renders Markdown', () => {
    const html = renderMarkdown(
      '# Title\n\n**bold** `code`\n\n```rust\nfn x() {}\n```\n\n| a |\n|---|\n| 1 |',
    );
    expect(html).toContain('<strong>bold</strong>');
    expect(html).toContain('<code class="hljs language-rust">');
    expect(html).toContain('<table>');
  });

  it('highlights code blocks of known languages, as sanitized spans', () => {
    const html = renderMarkdown('```ts\nconst x: number = 1; // <b>\n```');
    expect(html).toContain('class="hljs language-ts"');
    expect(html).toMatch(/<span class="hljs-keyword">const<\/span>/);
    expect(html).toContain('&lt;b&gt;');
    expect(html).toContain('<span class="code-lang">ts</span>');
    // Unknown languages: plain escaped text, no guessing.
    const plain = renderMarkdown('```nosuchlang\nlet x = 1\n```');
    expect(plain).not.toContain('hljs');
    expect(plain).toContain('let x = 1');
  });

  it('keeps inline raster data: images only', () => {
    const png =
      'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    expect(renderMarkdown(`![dot](${png})`)).toContain(`src="${png}"`);
    for (const src of [
      'https://evil.example/x.png',
      'file:///etc/passwd',
      'data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=',
      '/local.png',
    ]) {
      const html = renderMarkdown(`![x](${src}) <img src="${src}">`);
      expect(html, src).not.toContain('<img');
    }
  });

  it('keeps web links, with their address shown', () => {
    const html = renderMarkdown('[docs](https://example.com/a)');
    expect(html).toContain('href="https://example.com/a"');
    expect(html).toContain('data-tip="https://example.com/a"');
    expect(html).not.toContain('title=');
  });

  it.each(hostile)('renders %s inert', (_name, input) => {
    const html = renderMarkdown(input);
    const doc = new DOMParser().parseFromString(`<div>${html}</div>`, 'text/html');
    const all = [...doc.body.querySelectorAll('*')];
    for (const el of all) {
      expect([
        'SCRIPT',
        'IFRAME',
        'FORM',
        'STYLE',
        'IMG',
        'SVG',
        'OBJECT',
        'EMBED',
        'META',
        'BASE',
        'LINK',
        'MATH',
        'BUTTON',
      ]).not.toContain(el.tagName.toUpperCase());
      for (const attr of el.getAttributeNames()) {
        expect(attr.startsWith('on'), `${el.tagName} has ${attr}`).toBe(false);
        expect(attr).not.toBe('style');
        expect(attr).not.toBe('src');
      }
      const href = el.getAttribute('href');
      if (href !== null) expect(href).toMatch(/^(https?:|mailto:)/);
    }
  });
});

// A corpus with the constructs whose boundaries matter: fences (closed, unclosed, with blank
// lines inside), lists (tight, loose, nested), tables, headings (ATX and setext), quotes,
// indented code, HTML blocks.
const corpus = [
  '# Plan\n\nFirst paragraph with **bold**, `code` and a [link](https://example.com).\nSecond line.\n\n',
  '- one\n- two\n  - nested\n\n- loose item\n\n  continued paragraph\n\nAfter the list.\n\n',
  '1. first\n2. second\n\n3. third\n\n',
  '```rust\nfn main() {\n\n    println!("hi");\n}\n```\n\n',
  '| a | b |\n|---|:-:|\n| 1 | 2 |\n| 3 | 4 |\n\n',
  'Setext heading\n---\n\n> quoted\n> more\n\n> another quote\n\n',
  '    indented code\n    more\n\nText\n\n<div>\nraw html\n</div>\n\n',
  '* [ ] task\n* [x] done\n\n~~~\nunclosed tilde fence\n\nstill code\n',
].join('');

function chunkings(text: string): string[][] {
  const out: string[][] = [];
  for (const size of [1, 2, 3, 5, 7, 13, 20, 64]) {
    const parts: string[] = [];
    for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size));
    out.push(parts);
  }
  // Pseudo-random sizes, fixed seed.
  let seed = 7;
  for (let n = 0; n < 6; n++) {
    const parts: string[] = [];
    for (let i = 0; i < text.length;) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      const size = 1 + (seed % 40);
      parts.push(text.slice(i, i + size));
      i += size;
    }
    out.push(parts);
  }
  return out;
}

describe('streaming Markdown', () => {
  it.each(chunkings(corpus).map((c, i) => [i, c] as const))(
    'ends with the same HTML as a full render, and every step matches too (chunking %i)',
    (_i, parts) => {
      const s = new MarkdownStream();
      let text = '';
      // Every step is compared (every third one for 1-character chunks, to stay quick).
      const every = parts.length > 800 ? 3 : 1;
      parts.forEach((p, n) => {
        text += p;
        const r = s.update(text);
        if (n % every === 0 || n === parts.length - 1)
          expect(r.blocks.join('') + r.tail).toBe(renderMarkdown(text));
      });
    },
    60_000,
  );

  it('handles reference-style links (rendered whole) and replaced text', () => {
    const s = new MarkdownStream();
    const text = 'See [the docs][d].\n\nMore text.\n\n[d]: https://example.com/docs\n';
    let acc = '';
    for (const ch of text) {
      acc += ch;
      const r = s.update(acc);
      expect(r.blocks.join('') + r.tail).toBe(renderMarkdown(acc));
    }
    expect(renderMarkdown(text)).toContain('href="https://example.com/docs"');
    const r = s.update('Something else entirely.');
    expect(r.blocks.join('') + r.tail).toBe(renderMarkdown('Something else entirely.'));
  });

  it('is free for unchanged text and keeps frozen blocks identical', () => {
    const a = renderStreaming('k1', 'para one\n\npara two\n\npara');
    const before = lexStats.chars;
    const b = renderStreaming('k1', 'para one\n\npara two\n\npara');
    expect(lexStats.chars).toBe(before);
    expect(b).toBe(a);
    const c = renderStreaming('k1', 'para one\n\npara two\n\npara three');
    expect(c.blocks[0]).toBe(a.blocks[0]);
  });

  it('lexes a long streamed message in linear work (counts, not time)', { timeout: 60_000 }, () => {
    const block = (i: number) =>
      i % 10 === 0
        ? '```ts\nconst x = ' + i + ';\n```\n\n'
        : i % 7 === 0
          ? '- item ' + i + '\n- item\n\n'
          : 'Paragraph ' + i + ' with some *words* that keep streaming in.\n\n';
    const textOf = (bytes: number) => {
      let t = '';
      for (let i = 0; t.length < bytes; i++) t += block(i);
      return t;
    };
    /** Characters lexed while streaming `text` in 20-character appends. */
    const lexedFor = (text: string) => {
      const s = new MarkdownStream();
      const start = lexStats.chars;
      for (let i = 20; i < text.length + 20; i += 20) s.update(text.slice(0, i));
      const r = s.update(text);
      expect(r.blocks.join('') + r.tail).toBe(renderMarkdown(text));
      return lexStats.chars - start;
    };
    const small = textOf(20_000);
    const large = textOf(40_000); // 2,000 appends
    const a = lexedFor(small);
    const b = lexedFor(large);
    // Re-lexing from the start would be appends/2 × length: 1,000 × 40 KB = 40 M characters,
    // and doubling the text would quadruple it. Here each append re-lexes one short tail.
    expect(b).toBeLessThan(large.length * 10);
    expect(b / a).toBeLessThan(2.5);
  });
});

describe('renderTitle', () => {
  it('shows inline code and emphasis, and nothing else', () => {
    expect(renderTitle('Run `cargo test`')).toBe('Run <code>cargo test</code>');
    expect(renderTitle('Edit **src/a.rs**')).toBe('Edit <strong>src/a.rs</strong>');
    const hostile = renderTitle('x <img src=x onerror=alert(1)> [a](javascript:alert(1)) <b>b</b>');
    expect(hostile).not.toMatch(/<img|onerror|<a|javascript:|<b>/);
    expect(renderTitle('a < b && c > d')).toBe('a &lt; b &amp;&amp; c &gt; d');
  });
});

describe('streaming with link definitions', () => {
  it('ends with the full render when a definition hides in a quote or a list item', () => {
    for (const doc of [
      'See [x] here.\n\nMore text.\n\nAnd more.\n\n> [x]: https://a.example\n',
      'See [y] here.\n\nMore.\n\nMore again.\n\n- [y]: https://b.example\n',
    ]) {
      const s = new MarkdownStream();
      let out = '';
      for (let i = 1; i <= doc.length; i++) {
        const r = s.update(doc.slice(0, i));
        out = r.blocks.join('') + r.tail;
      }
      expect(out).toBe(renderMarkdown(doc));
    }
  });
});

describe('tool output', () => {
  it('keeps its lines apart, streamed or whole; prose joins them as Markdown says', () => {
    const out = 'src/parser.rs:12: pub fn parse_amount\nsrc/main.rs:4: parse_amount(s)\n';
    expect(renderMarkdown(out)).not.toContain('<br');
    const whole = renderMarkdown(out, true);
    expect(whole).toContain('<br');
    const s = new MarkdownStream(true);
    for (let i = 1; i <= out.length; i += 7) s.update(out.slice(0, i));
    const r = s.update(out);
    expect(r.blocks.join('') + r.tail).toBe(whole);
  });
});

// Issue 12: the sanitizer must remove what is dangerous and keep everything else visible. An
// element the HTML parser reads as raw text to its end tag (`<style>`, `<script>`, `<textarea>`,
// ...) or one DOMPurify drops together with its content took the rest of the message with it.
describe('text after a hostile payload', () => {
  const ACTIVE = ['SCRIPT', 'STYLE', 'IFRAME', 'FRAME', 'OBJECT', 'EMBED', 'SVG', 'MATH', 'LINK'];

  /** The rendered HTML's text (whitespace collapsed) and what in it would not be inert. */
  function read(html: string): { text: string; bad: string[] } {
    const doc = new DOMParser().parseFromString(`<div>${html}</div>`, 'text/html');
    const bad: string[] = [];
    // Not querySelectorAll: jsdom's selector engine slows down with every document it has
    // queried, and these tests parse tens of thousands.
    for (const el of doc.body.getElementsByTagName('*')) {
      if (ACTIVE.includes(el.tagName.toUpperCase())) bad.push(`<${el.tagName}>`);
      if (el.namespaceURI !== 'http://www.w3.org/1999/xhtml') bad.push(`${el.tagName} (foreign)`);
      for (const attr of el.getAttributeNames()) {
        if (attr.toLowerCase().startsWith('on') || attr === 'style')
          bad.push(`${el.tagName} ${attr}`);
      }
      for (const attr of ['href', 'src']) {
        const v = el.getAttribute(attr);
        if (v !== null && !/^(https?:|mailto:|data:image\/)/i.test(v))
          bad.push(`${el.tagName} ${attr}=${v}`);
      }
    }
    return { text: (doc.body.textContent ?? '').replace(/\s+/g, ' '), bad };
  }

  const cases = sentinelCases();

  it.each(cases.map((c) => [c.name, c] as const))('%s: rendered whole', (_name, c) => {
    const { text, bad } = read(renderMarkdown(c.message));
    expect(bad).toEqual([]);
    for (const s of c.sentinels) expect(text).toContain(s);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s: streamed in every chunking', (_name, c) => {
    for (const [how, parts] of sentinelChunkings(c)) {
      const s = new MarkdownStream();
      let acc = '';
      for (const p of parts) {
        acc += p;
        const r = s.update(acc);
        const html = r.blocks.join('') + r.tail;
        // Inert at every step, and the same as a whole render of the text so far.
        expect(read(html).bad, `${how}, after ${JSON.stringify(acc)}`).toEqual([]);
        expect(html, how).toBe(renderMarkdown(acc));
      }
      const r = s.update(c.message);
      const all = read(r.blocks.join('') + r.tail).text;
      for (const sentence of c.sentinels) expect(all, how).toContain(sentence);
    }
  });

  it('keeps the allow-list for raw HTML that is on it', () => {
    const html = renderMarkdown('a<br>b <strong>c</strong> <span class="evil">d</span>');
    expect(html).toContain('a<br>b <strong>c</strong> <span>d</span>');
    expect(renderMarkdown('<div>\nraw html\n</div>')).toBe('<div>\nraw html\n</div>');
    // Entities in raw HTML still read as the character, inside a block and inline.
    expect(renderMarkdown('<div>\nTom &amp; Jerry &lt;3\n</div>')).toBe(
      '<div>\nTom &amp; Jerry &lt;3\n</div>',
    );
  });

  it('shows raw HTML that is not on the allow-list as text', () => {
    expect(renderMarkdown('use a <textarea> here')).toBe('<p>use a &lt;textarea&gt; here</p>\n');
    const html = renderMarkdown('<style>p{}</style>\n\nafter');
    expect(read(html).text).toContain('<style>p{}</style>');
    expect(read(html).text).toContain('after');
  });

  it('keeps a title readable after an unclosed raw-text tag', () => {
    const html = renderTitle('Run <style> `cargo test` now');
    expect(html).not.toMatch(/<style/i);
    expect(html).toContain('<code>cargo test</code>');
    expect(html).toContain('now');
  });
});
