import { describe, expect, it } from 'vitest';
import {
  WORKER_MIN_BYTES,
  WORKER_MIN_LINES,
  computeDiff,
  diffAsync,
  diffStrategy,
  sameLeadingLines,
  sections,
  shouldUseWorker,
  splitRows,
  type DiffModel,
  type WorkerFactory,
} from './diff';

const lines = (n: number, f = (i: number) => `line ${i}`) =>
  Array.from({ length: n }, (_, i) => f(i + 1)).join('\n') + '\n';

describe('computeDiff', () => {
  it('numbers both sides and counts changes', () => {
    const m = computeDiff('a\nb\nc\n', 'a\nB\nc\nd\n');
    expect(m.lines.map((l) => [l.kind, l.oldNo, l.newNo, l.text])).toEqual([
      ['ctx', 1, 1, 'a'],
      ['del', 2, null, 'b'],
      ['add', null, 2, 'B'],
      ['ctx', 3, 3, 'c'],
      ['add', null, 4, 'd'],
    ]);
    expect([m.added, m.removed, m.created, m.deleted]).toEqual([2, 1, false, false]);
  });

  it('shows a new file (no old text) as all added', () => {
    for (const old of [null, undefined]) {
      const m = computeDiff(old, 'x\ny\n');
      expect(m.created).toBe(true);
      expect(m.lines.every((l) => l.kind === 'add')).toBe(true);
      expect(m.added).toBe(2);
    }
  });

  it('shows emptied contents as a deletion', () => {
    const m = computeDiff('x\ny\n', '');
    expect(m.deleted).toBe(true);
    expect(m.lines.map((l) => l.kind)).toEqual(['del', 'del']);
  });
});

describe('a fragment placed in its file', () => {
  it('numbers both sides from the line the fragment starts at', () => {
    const m = computeDiff('b\nc\n', 'B\nc\n', 7);
    expect(m.lines.map((l) => [l.kind, l.oldNo, l.newNo])).toEqual([
      ['del', 7, null],
      ['add', null, 7],
      ['ctx', 8, 8],
    ]);
  });

  it('numbers in the worker from the same line', async () => {
    let posted: unknown = null;
    const factory: WorkerFactory = () => {
      const w = {
        onmessage: null as ((e: MessageEvent<DiffModel>) => void) | null,
        onerror: null,
        postMessage(msg: { oldText: string | null; newText: string; firstLine: number }) {
          posted = msg;
          queueMicrotask(() =>
            w.onmessage?.({
              data: computeDiff(msg.oldText, msg.newText, msg.firstLine),
            } as MessageEvent),
          );
        },
        terminate() {},
      };
      return w as unknown as Worker;
    };
    const big = lines(1500);
    const m = await diffAsync(big, big.replace('line 1\n', 'one\n'), factory, undefined, 40);
    expect(posted).toMatchObject({ firstLine: 40 });
    expect(m.lines[0]).toMatchObject({ kind: 'del', oldNo: 40 });
  });

  it("counts the unchanged lines before jsdiff's first change", () => {
    const cases: [string, string][] = [
      ['a\nb\nc\n', 'a\nB\nc\n'],
      ['a\nb\n', 'a\nb\nc\n'],
      ['colour = red', 'colour = blue'],
      ['a\nb', 'a\nb\n'],
      ['a\r\nb\r\n', 'a\r\nB\r\n'],
      ['', 'x\n'],
      ['x\ny\n', 'y\n'],
    ];
    for (const [a, b] of cases) {
      const first = computeDiff(a, b).lines.findIndex((l) => l.kind !== 'ctx');
      expect(sameLeadingLines(a, b), JSON.stringify([a, b])).toBe(first);
    }
  });
});

describe('sections', () => {
  const old = lines(40);
  const m = computeDiff(old, old.replace('line 20\n', 'line twenty\n'));

  it('folds long unchanged runs, keeping 3 lines of context', () => {
    const s = sections(m.lines);
    expect(s).toEqual([
      { type: 'gap', from: 0, to: 16 },
      { type: 'lines', from: 16, to: 24 },
      { type: 'gap', from: 24, to: 41 },
    ]);
  });

  it('opens a gap the user expanded', () => {
    const s = sections(m.lines, 3, new Set([0]));
    expect(s[0]).toEqual({ type: 'lines', from: 0, to: 24 });
    expect(s[1]?.type).toBe('gap');
  });

  it('pairs removed and added lines side by side', () => {
    const rows = splitRows(m.lines, 16, 24);
    const changed = rows.find((r) => r.left?.kind === 'del');
    expect(changed?.left?.text).toBe('line 20');
    expect(changed?.right?.text).toBe('line twenty');
    const extra = splitRows(computeDiff('a\n', 'b\nc\n').lines, 0, 3);
    expect(extra.map((r) => [r.left?.text ?? null, r.right?.text ?? null])).toEqual([
      ['a', 'b'],
      [null, 'c'],
    ]);
  });
});

describe('where a diff is computed', () => {
  it('sends large inputs to the worker', () => {
    expect(shouldUseWorker('a\n', 'b\n')).toBe(false);
    expect(shouldUseWorker(lines(WORKER_MIN_LINES / 2), lines(WORKER_MIN_LINES / 2 + 1))).toBe(
      true,
    );
    expect(shouldUseWorker(null, 'x'.repeat(WORKER_MIN_BYTES + 1))).toBe(true);
    const fake: WorkerFactory = () => ({}) as Worker;
    expect(diffStrategy('a', 'b', fake)).toBe('inline');
    expect(diffStrategy(null, lines(3000), fake)).toBe('worker');
    // No Worker (jsdom, or a blocked worker): always inline.
    expect(typeof Worker).toBe('undefined');
    expect(diffStrategy(null, lines(3000), null)).toBe('inline');
  });

  it('computes large diffs in the worker, small ones inline', async () => {
    const posted: unknown[] = [];
    const factory: WorkerFactory = () => {
      const w = {
        onmessage: null as ((e: MessageEvent<DiffModel>) => void) | null,
        onerror: null,
        terminated: false,
        postMessage(msg: { oldText: string | null; newText: string }) {
          posted.push(msg);
          // The worker runs the same function.
          queueMicrotask(() =>
            w.onmessage?.({ data: computeDiff(msg.oldText, msg.newText) } as MessageEvent),
          );
        },
        terminate() {
          w.terminated = true;
        },
      };
      return w as unknown as Worker;
    };
    const small = await diffAsync('a\n', 'b\n', factory);
    expect(posted).toHaveLength(0);
    expect(small.added).toBe(1);
    const big = await diffAsync(
      lines(1500),
      lines(1500, (i) => (i === 7 ? 'seven' : `line ${i}`)),
      factory,
    );
    expect(posted).toHaveLength(1);
    expect([big.added, big.removed]).toEqual([1, 1]);
    const inline = await diffAsync(null, lines(3000), null);
    expect(inline.added).toBe(3000);
  });
});
