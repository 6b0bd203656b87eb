// highlight.js arrives after the first code block (highlight.ts loads it with import()): until
// then code is plain escaped text in the same frame, and a message rendered plain is rendered
// again, highlighted, once it is in. Its own file: vitest gives each file fresh modules, so
// highlight.js is not loaded yet when it starts.
import { get } from 'svelte/store';
import { describe, expect, it } from 'vitest';
import { highlighterLoaded, highlighterReady, loadHighlighter } from './highlight';
import { MarkdownStream, renderMarkdown } from './markdown';

const SOURCE = 'Look:\n\n```rust\nfn main() {}\n```\n\nDone.';

describe('highlight.js loaded on first use', () => {
  it('renders code plain first, in the same frame, then highlighted once loaded', async () => {
    expect(highlighterLoaded()).toBe(false);
    const stream = new MarkdownStream();
    const before = stream.update(SOURCE);
    const plainHtml = before.blocks.join('') + before.tail;
    expect(plainHtml).toContain('<div class="code-block">');
    expect(plainHtml).toContain('<span class="code-lang">rust</span>');
    expect(plainHtml).toContain('<pre><code>fn main() {}\n</code></pre>');
    expect(plainHtml).not.toContain('hljs');

    // The code block asked for highlight.js; wait for it (the same promise).
    await loadHighlighter();
    expect(get(highlighterReady)).toBe(true);
    const after = stream.update(SOURCE);
    const html = after.blocks.join('') + after.tail;
    expect(html).toContain('<code class="hljs language-rust">');
    expect(html).toMatch(/<span class="hljs-keyword">fn<\/span>/);
    // The same text: only spans were added around it.
    const text = (h: string) => h.replace(/<[^>]*>/g, '');
    expect(text(html)).toBe(text(plainHtml));
    expect(html).toBe(renderMarkdown(SOURCE));
    // Rendered again only once: the next update with the same text is the cached result.
    expect(stream.update(SOURCE)).toBe(after);
  });

  it('leaves a message without code alone when highlight.js arrives', async () => {
    const stream = new MarkdownStream();
    const first = stream.update('Just *words*.');
    await loadHighlighter();
    expect(stream.update('Just *words*.')).toBe(first);
  });
});
