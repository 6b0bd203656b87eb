// Streaming Markdown: old (re-render the whole message on every chunk) vs new (MarkdownStream:
// frozen blocks, only the tail re-lexed). 100 KB of agent-like Markdown streamed in 20-char
// chunks. Run from the repository root:  node ui/bench/markdown/bench.mjs
// Figures: characters handed to marked's lexer, and wall time of the whole pipeline (lex +
// render + DOMPurify on jsdom, which is slower than a browser's DOM). "old" is the code before
// streaming (marked.parse of the whole message + one DOMPurify pass, as in the main branch),
// slow enough that it is timed on every OLD_STRIDE-th chunk and scaled up.
import { JSDOM } from 'jsdom';
import { Marked } from 'marked';
import { createServer } from 'vite';
import { fileURLToPath } from 'node:url';

const TOTAL = Number(process.env.BYTES ?? 100_000);
const CHUNK = Number(process.env.CHUNK ?? 20);
const OLD_STRIDE = Number(process.env.OLD_STRIDE ?? 50);

const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;

const root = fileURLToPath(new URL('../..', import.meta.url));
const server = await createServer({
  root,
  configFile: false,
  logLevel: 'error',
  server: { middlewareMode: true, hmr: false },
  appType: 'custom',
});
const md = await server.ssrLoadModule('/src/lib/markdown.ts');
const { corpus } = await server.ssrLoadModule('/bench/markdown/corpus.ts');

// The pre-streaming renderMarkdown (main branch), its allow-list abridged to what matters here.
const oldMarked = new Marked({ gfm: true, breaks: false, async: false });
// Imported after `window` exists: DOMPurify binds to the window it finds when loaded.
const { default: DOMPurify } = await import('dompurify');
const purify = DOMPurify(dom.window);
function oldRender(text) {
  md.lexStats.chars += text.length;
  md.lexStats.calls += 1;
  return purify.sanitize(oldMarked.parse(text), {
    ALLOWED_TAGS: md.ALLOWED_TAGS,
    ALLOWED_ATTR: md.ALLOWED_ATTR,
  });
}

const text = corpus(TOTAL);
const count = Math.ceil(text.length / CHUNK);
const step = (i) => text.slice(0, (i + 1) * CHUNK);

function run(name, fn, stride) {
  md.lexStats.chars = 0;
  md.lexStats.calls = 0;
  let worst = 0;
  const t0 = performance.now();
  for (let i = 0; i < count; i += stride) {
    const s = performance.now();
    fn(step(i));
    worst = Math.max(worst, performance.now() - s);
  }
  const ms = (performance.now() - t0) * stride;
  const lexed = md.lexStats.chars * stride;
  console.log(
    `${name.padEnd(34)} chunks ${String(count).padStart(5)}  lexed ${(lexed / 1e6).toFixed(1).padStart(7)} MB` +
      `  (${(lexed / text.length).toFixed(1).padStart(6)}× the text)  total ${(ms / 1000).toFixed(2).padStart(7)} s` +
      `  per chunk avg ${(ms / count).toFixed(2)} ms, worst ${worst.toFixed(1)} ms` +
      (stride > 1 ? `  [timed on every ${stride}th chunk, scaled]` : ''),
  );
}

console.log(
  `${(text.length / 1000).toFixed(0)} KB streamed in ${CHUNK}-char chunks (node ${process.version})`,
);
run('old: parse+sanitize whole / chunk', oldRender, OLD_STRIDE);
const stream = new md.MarkdownStream();
run('new: MarkdownStream.update / chunk', (t) => stream.update(t), 1);
const a = stream.update(text);
console.log('same final HTML:', a.blocks.join('') + a.tail === md.renderMarkdown(text));
await server.close();
