// The streaming bench in a real browser (the harness page, ?scene=bench): 100 KB streamed in
// 20-char chunks, old (parse + sanitize the whole message per chunk) vs new (MarkdownStream).
import DOMPurify from 'dompurify';
import { Marked } from 'marked';
import { ALLOWED_ATTR, ALLOWED_TAGS, MarkdownStream, lexStats } from '../../src/lib/markdown';
import { corpus } from './corpus';

const oldMarked = new Marked({ gfm: true, breaks: false, async: false });
// The old path, with today's allow-list (the hooks aside): what a naive renderer would cost.
const config = { ALLOWED_TAGS, ALLOWED_ATTR };

export function runBench(bytes = 100_000, chunk = 20, oldStride = 10): string {
  const text = corpus(bytes);
  const count = Math.ceil(text.length / chunk);
  const lines: string[] = [
    `${text.length / 1000} KB in ${chunk}-char chunks, ${navigator.userAgent.match(/Chrom\S+/)?.[0] ?? ''}`,
  ];
  const run = (name: string, fn: (t: string) => void, stride: number) => {
    lexStats.chars = 0;
    let worst = 0;
    const t0 = performance.now();
    for (let i = 0; i < count; i += stride) {
      const s = performance.now();
      fn(text.slice(0, (i + 1) * chunk));
      worst = Math.max(worst, performance.now() - s);
    }
    const ms = (performance.now() - t0) * stride;
    const lexed = lexStats.chars * stride;
    lines.push(
      `${name}: lexed ${(lexed / 1e6).toFixed(1)} MB (${(lexed / text.length).toFixed(1)}x the text), total ${(ms / 1000).toFixed(2)} s, per chunk avg ${(ms / count).toFixed(2)} ms, worst ${worst.toFixed(1)} ms${stride > 1 ? ` [every ${stride}th chunk timed, scaled]` : ''}`,
    );
  };
  run(
    'old',
    (t) => {
      lexStats.chars += t.length;
      DOMPurify.sanitize(oldMarked.parse(t) as string, config);
    },
    oldStride,
  );
  const s = new MarkdownStream();
  run('new', (t) => s.update(t), 1);
  return lines.join('\n');
}
