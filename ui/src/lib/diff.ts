// Tool-call diffs as rows to show. The diff itself is jsdiff's (`diffLines`); this module only
// lays its result out (line numbers, unchanged regions folded, side-by-side pairs) and decides
// where to compute it: large inputs go to a Web Worker (diff.worker.ts) so the thread never
// stalls; small ones (and environments without Worker, like jsdom) are computed inline.
import { diffLines } from 'diff';

export type LineKind = 'ctx' | 'add' | 'del';

export interface DiffLine {
  kind: LineKind;
  /** 1-based line numbers (from `firstLine`); null on the side the line is not on. */
  oldNo: number | null;
  newNo: number | null;
  text: string;
}

export interface DiffModel {
  lines: DiffLine[];
  added: number;
  removed: number;
  /** No old text: a new file (every line added). */
  created: boolean;
  /** Empty new text over old text: the file's contents were deleted. */
  deleted: boolean;
}

/** Above either limit the diff is computed off the main thread. */
export const WORKER_MIN_LINES = 2000;
export const WORKER_MIN_BYTES = 200 * 1024;

export function countLines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', i + 1)) n++;
  return n + (s.length > 0 && !s.endsWith('\n') ? 1 : 0);
}

/** Whether a diff of these texts is large enough to go to the worker. */
export function shouldUseWorker(oldText: string | null | undefined, newText: string): boolean {
  const old = oldText ?? '';
  if (old.length + newText.length > WORKER_MIN_BYTES) return true;
  return countLines(old) + countLines(newText) > WORKER_MIN_LINES;
}

function splitLines(value: string): string[] {
  const parts = value.split('\n');
  if (parts.length > 1 && parts.at(-1) === '') parts.pop();
  return parts;
}

/**
 * How many lines the two texts share before they differ: where jsdiff's first change is, since
 * it takes the common prefix of its line tokens first. Its tokens are lines with their line
 * break, so are these; diff.test.ts checks the two agree.
 */
export function sameLeadingLines(a: string, b: string): number {
  const la = a.split(/(?<=\n)/);
  const lb = b.split(/(?<=\n)/);
  let n = 0;
  while (n < la.length && n < lb.length && la[n] !== '' && la[n] === lb[n]) n++;
  return n;
}

/**
 * The diff of two texts, line by line (synchronous: small inputs, or inside the worker).
 * `firstLine` is the file line both texts start at: 1 for whole files; a fragment's place in
 * the file otherwise (the lines above a fragment are the same before and after, so both sides
 * start there).
 */
export function computeDiff(
  oldText: string | null | undefined,
  newText: string,
  firstLine = 1,
): DiffModel {
  const created = oldText === null || oldText === undefined;
  const old = oldText ?? '';
  const lines: DiffLine[] = [];
  let oldNo = firstLine;
  let newNo = firstLine;
  let added = 0;
  let removed = 0;
  const changes =
    old === newText ? [{ value: old, added: false, removed: false }] : diffLines(old, newText);
  for (const c of changes) {
    if (c.value === '') continue;
    for (const text of splitLines(c.value)) {
      if (c.added) {
        lines.push({ kind: 'add', oldNo: null, newNo: newNo++, text });
        added++;
      } else if (c.removed) {
        lines.push({ kind: 'del', oldNo: oldNo++, newNo: null, text });
        removed++;
      } else lines.push({ kind: 'ctx', oldNo: oldNo++, newNo: newNo++, text });
    }
  }
  return { lines, added, removed, created, deleted: !created && old !== '' && newText === '' };
}

/** What the unified view shows: runs of lines, and folded unchanged regions between them. */
export type Section =
  { type: 'lines'; from: number; to: number } | { type: 'gap'; from: number; to: number };

/**
 * Folds unchanged runs longer than `2 × context + minGap` lines, keeping `context` lines next
 * to each change. `expanded` holds the `from` index of gaps the user opened.
 */
export function sections(
  lines: readonly DiffLine[],
  context = 3,
  expanded: ReadonlySet<number> = new Set(),
  minGap = 4,
): Section[] {
  const out: Section[] = [];
  const push = (s: Section) => {
    const last = out.at(-1);
    if (s.type === 'lines' && last?.type === 'lines' && last.to === s.from) last.to = s.to;
    else if (s.to > s.from) out.push(s);
  };
  let i = 0;
  while (i < lines.length) {
    if ((lines[i] as DiffLine).kind !== 'ctx') {
      let j = i;
      while (j < lines.length && (lines[j] as DiffLine).kind !== 'ctx') j++;
      push({ type: 'lines', from: i, to: j });
      i = j;
      continue;
    }
    let j = i;
    while (j < lines.length && (lines[j] as DiffLine).kind === 'ctx') j++;
    const keepBefore = i === 0 ? 0 : context;
    const keepAfter = j === lines.length ? 0 : context;
    const gapFrom = i + keepBefore;
    const gapTo = j - keepAfter;
    if (gapTo - gapFrom >= minGap && !expanded.has(gapFrom)) {
      push({ type: 'lines', from: i, to: gapFrom });
      push({ type: 'gap', from: gapFrom, to: gapTo });
      push({ type: 'lines', from: gapTo, to: j });
    } else push({ type: 'lines', from: i, to: j });
    i = j;
  }
  return out;
}

export interface SplitRow {
  left: DiffLine | null;
  right: DiffLine | null;
}

/** Side-by-side rows for `lines[from, to)`: a change's removed lines face its added lines. */
export function splitRows(lines: readonly DiffLine[], from: number, to: number): SplitRow[] {
  const rows: SplitRow[] = [];
  let i = from;
  while (i < to) {
    const l = lines[i] as DiffLine;
    if (l.kind === 'ctx') {
      rows.push({ left: l, right: l });
      i++;
      continue;
    }
    const dels: DiffLine[] = [];
    const adds: DiffLine[] = [];
    while (i < to && (lines[i] as DiffLine).kind !== 'ctx') {
      const c = lines[i] as DiffLine;
      (c.kind === 'del' ? dels : adds).push(c);
      i++;
    }
    for (let k = 0; k < Math.max(dels.length, adds.length); k++)
      rows.push({ left: dels[k] ?? null, right: adds[k] ?? null });
  }
  return rows;
}

/** Makes the diff worker; tests pass their own (or none). */
export type WorkerFactory = () => Worker;

export const defaultWorkerFactory: WorkerFactory | null =
  typeof Worker === 'undefined'
    ? null
    : () => new Worker(new URL('./diff.worker.ts', import.meta.url), { type: 'module' });

/** Where a diff is computed: the decision, separate so tests can check it. */
export function diffStrategy(
  oldText: string | null | undefined,
  newText: string,
  factory: WorkerFactory | null,
): 'worker' | 'inline' {
  return factory && shouldUseWorker(oldText, newText) ? 'worker' : 'inline';
}

/** The diff, from the worker when large (one worker per diff, ended when done). */
export function diffAsync(
  oldText: string | null | undefined,
  newText: string,
  factory: WorkerFactory | null = defaultWorkerFactory,
  /** Aborted (the view went away): the worker ends and the promise never settles. */
  signal?: AbortSignal,
  firstLine = 1,
): Promise<DiffModel> {
  if (!factory || diffStrategy(oldText, newText, factory) === 'inline')
    return Promise.resolve(computeDiff(oldText, newText, firstLine));
  return new Promise((resolve) => {
    const w = factory();
    signal?.addEventListener('abort', () => w.terminate(), { once: true });
    const done = (m: DiffModel) => {
      w.terminate();
      if (!signal?.aborted) resolve(m);
    };
    w.onmessage = (e: MessageEvent<DiffModel>) => done(e.data);
    // A worker that cannot run (blocked, crashed) must not lose the diff.
    w.onerror = () => done(computeDiff(oldText, newText, firstLine));
    w.postMessage({ oldText: oldText ?? null, newText, firstLine });
  });
}
