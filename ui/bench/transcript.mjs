// The webview side of opening a long stored session (issue 14: "a 3.3 MB transcript, about
// 1,100 entries, long tool outputs, opened from history: time until it is shown and the extra
// memory it costs"). The BUILT UI (ui/dist) in Debian's Chromium, Tauri's IPC mocked
// (ui/playwright/mock-ipc.js). Not part of the tests; figures: docs/PERFORMANCE.md.
//
// Input: what the shell's `history_events` answers for the session, as JSON, made by
// `transcript-bench make` (bench/transcript.sh runs both). Each run, in a fresh browser:
//   1. the app opens a session whose thread is empty (two status events), and settles;
//   2. after two forced GCs: the JS heap (CDP Performance.getMetrics JSHeapUsedSize), the DOM
//      size and the renderer processes' RSS: the baseline;
//   3. in the page, timed from before the answer's JSON.parse (the IPC payload arrives as a
//      string) until the frame that shows the last entry is painted: the events handed to the
//      session store as one snapshot frame (`snapshot: true`, which is how a thread is replaced
//      whole), the thread rendering it;
//   4. the heap right away (no GC: near the peak), then after two GCs, the DOM and RSS again.
// What it covers: the session store and the thread, the path any view that shows stored events
// takes; with --via history, the History view's click-to-thread as well. Not Tauri's IPC
// transfer.
//
//   npm run build:ui && node ui/bench/transcript.mjs --answer DIR/transcript.json [--runs 5]
//     [--via store|history]   (history: through the History view's list and its past session)
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { preview } from 'vite';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../playwright/browser.js';
import { installMockIpc } from '../playwright/mock-ipc.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const MARKER = 'END-OF-TRANSCRIPT-MARKER';

/** @param {string} name */
function value(name) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}
const answerPath = value('answer');
if (!answerPath) {
  process.stderr.write('usage: node ui/bench/transcript.mjs --answer FILE [--runs N] [--out F]\n');
  process.exit(2);
}
const runsWanted = Number(value('runs') ?? 5);
const out = value('out');
// 'store' (default): the events handed to the session store as one snapshot frame. 'history':
// through the History view (merged from store-ui): its list, a click on the session, the view's
// `history_events` call (answered with a fresh JSON.parse of the answer, as IPC would) and
// its thread.
const via = value('via') ?? 'store';
if (via !== 'store' && via !== 'history') {
  process.stderr.write(`--via takes store or history, not ${via}\n`);
  process.exit(2);
}

const round = (/** @type {number} */ x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
/** @param {number[]} xs */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0
    ? NaN
    : ((s[Math.floor((s.length - 1) / 2)] ?? NaN) + (s[Math.ceil((s.length - 1) / 2)] ?? NaN)) / 2;
}

/** @param {string} pid @returns {string | null} its parent's pid */
function parentOf(pid) {
  try {
    return /PPid:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? null;
  } catch {
    return null;
  }
}

/**
 * RSS of the renderer processes of the browsers this bench started (their ancestor is this
 * node process: other people's browsers on the machine are not counted), in KiB, from /proc.
 */
function rendererRssKib() {
  const me = String(process.pid);
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('--type=renderer')) continue;
      let up = parentOf(pid);
      for (let depth = 0; up && up !== me && up !== '1' && depth < 8; depth++) up = parentOf(up);
      if (up !== me) continue;
      const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) total += Number(m[1]);
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** @param {import('playwright-core').Page} page @param {boolean} gc */
async function memory(page, gc) {
  const cdp = await page.context().newCDPSession(page);
  if (gc) {
    await cdp.send('HeapProfiler.enable');
    await cdp.send('HeapProfiler.collectGarbage');
    await cdp.send('HeapProfiler.collectGarbage');
  }
  await cdp.send('Performance.enable');
  const { metrics } = await cdp.send('Performance.getMetrics');
  const m = Object.fromEntries(metrics.map((x) => [x.name, x.value]));
  await cdp.detach();
  return {
    jsHeapUsedMiB: (m.JSHeapUsedSize ?? NaN) / 2 ** 20,
    domNodes: m.Nodes ?? NaN,
    rendererRssMiB: rendererRssKib() / 1024,
  };
}

/**
 * In the page: parse the answer, hand its events to the session store as one snapshot frame,
 * resolve when the frame showing the marker's row has been painted.
 * @param {{ json: string, marker: string }} p
 */
function openAndWait(p) {
  const w = /** @type {any} */ (window);
  /** The index of the visible thread row that contains `text`, or null. */
  const shown = (/** @type {string} */ text) => {
    const scroller = document.querySelector('.thread-view > .scroller');
    if (!scroller) return null;
    const box = scroller.getBoundingClientRect();
    for (const item of scroller.querySelectorAll('.item[data-index]')) {
      if (!item.textContent?.includes(text)) continue;
      const r = item.getBoundingClientRect();
      if (r.bottom > box.top && r.top < box.bottom) {
        return Number(/** @type {HTMLElement} */ (item).dataset.index);
      }
    }
    return null;
  };
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const answer = JSON.parse(p.json);
    const parsedAt = performance.now();
    const sessionId = w.__benchSessionId;
    const events = answer.events.map((/** @type {any} */ e) => ({ ...e, sessionId }));
    w.__acpMock.frame(events, true);
    const handedAt = performance.now();
    let done = false;
    const check = () => {
      if (done) return;
      const index = shown(p.marker);
      if (index === null) return;
      done = true;
      const domAt = performance.now();
      observer.disconnect();
      document.removeEventListener('scroll', check, { capture: true });
      requestAnimationFrame(() =>
        setTimeout(() => {
          resolve({
            parseMs: parsedAt - t0,
            handOverMs: handedAt - parsedAt,
            domMs: domAt - t0,
            paintMs: performance.now() - t0,
            index,
            events: events.length,
          });
        }, 0),
      );
    };
    const observer = new MutationObserver(check);
    observer.observe(document.body, {
      childList: true,
      subtree: true,
      characterData: true,
      attributes: true,
      attributeFilter: ['style', 'data-index'],
    });
    document.addEventListener('scroll', check, { capture: true, passive: true });
    setTimeout(() => {
      if (!done) reject(new Error('the last entry did not show within 60 s'));
    }, 60_000);
    check();
  });
}

/**
 * In the page: click the stored session in the History view, resolve when the first frame
 * showing its thread (a visible row of the past session's thread) has been painted.
 * @param {{ id: string, marker: string }} p
 */
function openFromHistory(p) {
  return new Promise((resolve, reject) => {
    const item = document.querySelector(`[data-history-session="${p.id}"]`);
    if (!(item instanceof HTMLElement)) {
      reject(new Error('the session is not in the History list'));
      return;
    }
    let done = false;
    const check = () => {
      if (done) return;
      const scroller = document.querySelector(
        `[data-past-session="${p.id}"] .thread-view > .scroller`,
      );
      if (!scroller) return;
      const box = scroller.getBoundingClientRect();
      let index = null;
      let last = false;
      for (const row of scroller.querySelectorAll('.item[data-index]')) {
        const r = row.getBoundingClientRect();
        if (r.bottom > box.top && r.top < box.bottom && (row.textContent ?? '').trim() !== '') {
          index = Number(/** @type {HTMLElement} */ (row).dataset.index);
          last = last || (row.textContent ?? '').includes(p.marker);
        }
      }
      if (index === null) return;
      done = true;
      const domAt = performance.now();
      observer.disconnect();
      requestAnimationFrame(() =>
        setTimeout(() => {
          resolve({
            domMs: domAt - t0,
            paintMs: performance.now() - t0,
            index,
            lastEntryShown: last,
          });
        }, 0),
      );
    };
    const observer = new MutationObserver(check);
    observer.observe(document.body, {
      childList: true,
      subtree: true,
      characterData: true,
      attributes: true,
      attributeFilter: ['style', 'data-index'],
    });
    setTimeout(() => {
      if (!done) reject(new Error('the past session did not show within 60 s'));
    }, 60_000);
    const t0 = performance.now();
    item.click();
  });
}

async function main() {
  const json = readFileSync(/** @type {string} */ (answerPath), 'utf8');
  const answer = JSON.parse(json);
  const sessionId = String(answer.session?.id ?? answer.events[0]?.sessionId);
  // The session as the app opens it before its stored thread arrives: its first events.
  const start = answer.events
    .filter((/** @type {any} */ e) => e.kind === 'session-status')
    .slice(0, 1);
  const loadBefore = loadavg().map((x) => round(x, 2));
  const server = await preview({
    configFile: `${repo}/ui/vite.config.ts`,
    logLevel: 'error',
    preview: { host: '127.0.0.1', port: 4319, strictPort: false },
  });
  const url = server.resolvedUrls?.local[0] ?? 'http://127.0.0.1:4319/';
  /** @type {Record<string, unknown>[]} */
  const runs = [];
  let version = '';
  try {
    for (let run = 0; run < runsWanted; run++) {
      const browser = await chromium.launch({
        executablePath: CHROMIUM_PATH,
        args: [...CHROMIUM_ARGS, '--enable-precise-memory-info'],
      });
      version = browser.version();
      try {
        const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
        const page = await context.newPage();
        const errors = /** @type {string[]} */ ([]);
        page.on('pageerror', (e) => errors.push(e.message));
        if (via === 'history') {
          const s = answer.session ?? {};
          const listed = {
            id: sessionId,
            agent: s.agent ?? 'claude',
            folder: s.folder ?? '/home/u/ledger',
            title: s.title ?? s.promptTitle ?? null,
            createdMs: s.createdMs ?? Date.now(),
            updatedMs: s.updatedMs ?? Date.now(),
            status: s.status ?? 'dead',
            statusDetail: s.statusDetail ?? null,
            agentIdentity: {
              launchName: 'claude',
              title: 'Claude Agent',
              sessionMethods: { load: true, resume: true, list: true, close: false, delete: false },
            },
            rows: answer.events.length,
            open: false,
          };
          await page.addInitScript(installMockIpc, {
            events: [],
            options: { folder: null, history: { sessions: [listed], transcripts: {} } },
          });
          // history_events answers a fresh parse of the answer each time, as IPC would.
          await page.addInitScript((text) => {
            const t = /** @type {any} */ (window).__TAURI_INTERNALS__;
            const inner = t.invoke;
            t.invoke = (
              /** @type {string} */ cmd,
              /** @type {any} */ args,
              /** @type {any} */ o,
            ) =>
              cmd === 'history_events' ? Promise.resolve(JSON.parse(text)) : inner(cmd, args, o);
          }, json);
          await page.goto(url);
          await page.getByRole('button', { name: 'History', exact: true }).click();
          await page.waitForSelector(`[data-history-session="${sessionId}"]`, { timeout: 60_000 });
        } else {
          await page.addInitScript(installMockIpc, {
            events: start,
            options: { snapshot: true, sessionId },
          });
          await page.addInitScript((id) => {
            /** @type {any} */ (window).__benchSessionId = id;
          }, sessionId);
          await page.goto(url);
          await page.waitForSelector('.thread-view > .scroller', { timeout: 60_000 });
        }
        await page.waitForTimeout(500);
        const before = await memory(page, true);
        const opened =
          via === 'history'
            ? await page.evaluate(openFromHistory, { id: sessionId, marker: MARKER })
            : await page.evaluate(openAndWait, { json, marker: MARKER });
        const atPaint = await memory(page, false);
        const after = await memory(page, true);
        if (errors.length > 0) throw new Error(`page errors: ${errors.join('; ')}`);
        const r = {
          ...opened,
          heapBeforeMiB: round(before.jsHeapUsedMiB),
          heapAtPaintMiB: round(atPaint.jsHeapUsedMiB),
          heapAfterGcMiB: round(after.jsHeapUsedMiB),
          heapDeltaMiB: round(after.jsHeapUsedMiB - before.jsHeapUsedMiB),
          heapDeltaAtPaintMiB: round(atPaint.jsHeapUsedMiB - before.jsHeapUsedMiB),
          domNodesBefore: before.domNodes,
          domNodesAfter: after.domNodes,
          rendererRssDeltaMiB: round(after.rendererRssMiB - before.rendererRssMiB),
          rendererRssAtPaintDeltaMiB: round(atPaint.rendererRssMiB - before.rendererRssMiB),
        };
        for (const k of ['parseMs', 'handOverMs', 'domMs', 'paintMs']) {
          if (k in r) /** @type {any} */ (r)[k] = round(/** @type {any} */ (r)[k]);
        }
        runs.push(r);
        process.stderr.write(`run ${run + 1}/${runsWanted}: ${JSON.stringify(r)}\n`);
        await context.close();
      } finally {
        await browser.close();
      }
    }
  } finally {
    await new Promise((r) => server.httpServer.close(r));
  }
  const pick = (/** @type {string} */ k) => {
    const xs = runs.map((r) => /** @type {any} */ (r)[k]);
    return { median: round(median(xs)), min: round(Math.min(...xs)), max: round(Math.max(...xs)) };
  };
  const summary = {
    what: 'ACP Desk: a stored session opened in the UI (ui/bench/transcript.mjs)',
    chromium: version,
    machine: { cpus: cpus().length, loadAverageBefore: loadBefore, loadAverageAfter: loadavg() },
    answer: { file: answerPath, bytes: json.length, events: answer.events.length },
    via,
    rowShown: runs[0]?.index ?? null,
    paintMs: pick('paintMs'),
    ...(via === 'store' ? { parseMs: pick('parseMs') } : {}),
    domMs: pick('domMs'),
    heapDeltaMiB: pick('heapDeltaMiB'),
    heapDeltaAtPaintMiB: pick('heapDeltaAtPaintMiB'),
    rendererRssDeltaMiB: pick('rendererRssDeltaMiB'),
    rendererRssAtPaintDeltaMiB: pick('rendererRssAtPaintDeltaMiB'),
    runs,
  };
  const text = JSON.stringify(summary, null, 2);
  if (out) writeFileSync(out, `${text}\n`);
  process.stdout.write(`${text}\n`);
}

await main();
