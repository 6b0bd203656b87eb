import { describe, expect, it } from 'vitest';
import { renderMarkdown } from './markdown';

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
    expect(html).toContain('<code class="language-rust">');
    expect(html).toContain('<table>');
  });

  it('keeps web links, with their address shown', () => {
    const html = renderMarkdown('[docs](https://example.com/a)');
    expect(html).toContain('href="https://example.com/a"');
    expect(html).toContain('title="https://example.com/a"');
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
