// The UI bench: the BUILT UI (ui/dist) in Debian's Chromium with Tauri's IPC mocked
// (ui/playwright/mock-ipc.js), measuring
//   (a) time to first render of a synthetic 5,000-entry transcript (500 tool calls),
//   (b) frame times while 1,000 text chunks per second stream into its last agent message,
//   (c) the JS heap (after a forced GC) and the DOM size after loading it.
// Prints one JSON summary. Not part of the tests (scripts/test); figures: docs/PERFORMANCE.md.
//
//   npm run build:ui && npm run bench:ui
//   npm run bench:ui -- --runs 5 --entries 5000 --tools 500 --rate 1000 --seconds 5 --out f.json
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { preview } from 'vite';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../playwright/browser.js';
import { installMockIpc } from '../playwright/mock-ipc.js';
import { LAST_MARKER, STREAM_MARKER, synthesize } from './synthetic.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));

/** @param {string} name @param {number} fallback */
function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}
const outIndex = process.argv.indexOf('--out');
const out = outIndex > 0 ? process.argv[outIndex + 1] : undefined;
const opts = {
  runs: arg('runs', 3),
  entries: arg('entries', 5000),
  tools: arg('tools', 500),
  rate: arg('rate', 1000),
  seconds: arg('seconds', 5),
};

/** @param {number[]} xs @param {number} q */
function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
}
const median = (/** @type {number[]} */ xs) => quantile(xs, 0.5);
const round = (/** @type {number} */ x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

// In the page, before the app: note when the marker first shows on screen (the virtualized
// thread, ui/src/components/Thread.svelte, renders only the rows in or near its viewport, each
// a `.item[data-index]` in the scroller: the marker's row must be rendered AND inside the
// scroller's visible box), then when the frame that shows it has been painted (the next
// animation frame, then a task after it).
/** @param {string} marker */
function watchForMarker(marker) {
  const w = /** @type {any} */ (window);
  w.__bench = { domAt: null, paintAt: null, index: null };
  /** The index of the visible thread row that contains `text`, or null. */
  w.__benchShown = (/** @type {string} */ text) => {
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
  const check = () => {
    if (w.__bench.domAt !== null) return;
    const index = w.__benchShown(marker);
    if (index === null) return;
    w.__bench.index = index;
    w.__bench.domAt = performance.now();
    observer.disconnect();
    document.removeEventListener('scroll', check, { capture: true });
    requestAnimationFrame(() => {
      setTimeout(() => {
        w.__bench.paintAt = performance.now();
      }, 0);
    });
  };
  const observer = new MutationObserver(check);
  document.addEventListener('DOMContentLoaded', () => {
    observer.observe(document.body, {
      childList: true,
      subtree: true,
      characterData: true,
      attributes: true,
      attributeFilter: ['style', 'data-index'],
    });
    // The thread scrolling to its end moves rows without adding any.
    document.addEventListener('scroll', check, { capture: true, passive: true });
    check();
  });
}

/**
 * In the page: streams `rate` text chunks per second for `seconds` into the last agent message,
 * in frames every 16 ms (the shell's hub sends at most one frame per 16 ms), and records the
 * time between animation frames meanwhile.
 * @param {{ rate: number, seconds: number, sessionId: string, messageId: string, marker: string }} p
 */
function streamAndMeasure(p) {
  const w = /** @type {any} */ (window);
  return new Promise((resolve) => {
    const deltas = /** @type {number[]} */ ([]);
    let last = performance.now();
    let running = true;
    const onFrame = (/** @type {number} */ t) => {
      deltas.push(t - last);
      last = t;
      if (running) requestAnimationFrame(onFrame);
    };
    requestAnimationFrame((t) => {
      last = t;
      requestAnimationFrame(onFrame);
    });
    const total = p.rate * p.seconds;
    const start = performance.now();
    let sent = 0;
    let frames = 0;
    const words = ['stream', 'chunk', '`code`', '**bold**', 'text', 'frame', 'render', 'entry'];
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * p.rate));
      const events = [];
      for (; sent < due; sent++) {
        let text = `${words[sent % words.length]} ${sent} `;
        if (sent % 40 === 39) text += '\n\n';
        if (sent === total - 1) text += ` ${p.marker}`;
        events.push({ kind: 'text-delta', sessionId: p.sessionId, text, messageId: p.messageId });
      }
      if (events.length > 0) {
        w.__acpMock.frame(events);
        frames++;
      }
      if (sent < total) {
        setTimeout(tick, 16);
        return;
      }
      const sentAt = performance.now();
      // Wait until the last chunk shows, then a little longer for the frame times.
      const waitShown = () => {
        if (w.__benchShown(p.marker) === null) {
          requestAnimationFrame(waitShown);
          return;
        }
        const shownAt = performance.now();
        running = false;
        resolve({
          deltas,
          chunks: sent,
          frames,
          streamMs: sentAt - start,
          lastChunkToDomMs: shownAt - sentAt,
        });
      };
      requestAnimationFrame(waitShown);
    };
    setTimeout(tick, 16);
  });
}

/** @param {import('playwright-core').Page} page */
async function memory(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('HeapProfiler.enable');
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('Performance.enable');
  const { metrics } = await cdp.send('Performance.getMetrics');
  const m = Object.fromEntries(metrics.map((x) => [x.name, x.value]));
  const elements = await page.evaluate(() => document.getElementsByTagName('*').length);
  await cdp.detach();
  return {
    jsHeapUsedMiB: round((m.JSHeapUsedSize ?? NaN) / 2 ** 20),
    jsHeapTotalMiB: round((m.JSHeapTotalSize ?? NaN) / 2 ** 20),
    domNodes: m.Nodes ?? NaN,
    domElements: elements,
  };
}

async function main() {
  const loadBefore = loadavg().map((x) => round(x, 2));
  const transcript = synthesize({ entries: opts.entries, tools: opts.tools });
  const server = await preview({
    configFile: `${repo}/ui/vite.config.ts`,
    logLevel: 'error',
    preview: { host: '127.0.0.1', port: 4318, strictPort: false },
  });
  const url = server.resolvedUrls?.local[0] ?? 'http://127.0.0.1:4318/';
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  const runs = /** @type {any[]} */ ([]);
  try {
    for (let run = 0; run < opts.runs; run++) {
      const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
      const page = await context.newPage();
      const errors = /** @type {string[]} */ ([]);
      page.on('pageerror', (e) => errors.push(e.message));
      await page.addInitScript(installMockIpc, {
        events: transcript.events,
        options: { snapshot: true, sessionId: transcript.sessionId },
      });
      await page.addInitScript(watchForMarker, LAST_MARKER);
      await page.goto(url);
      await page.waitForFunction(
        () => /** @type {any} */ (window).__bench?.paintAt !== null,
        null,
        {
          timeout: 600_000,
          polling: 50,
        },
      );
      const load = await page.evaluate(() => {
        const w = /** @type {any} */ (window);
        const attach = w.__acpMock.calls.find((/** @type {any} */ c) => c.cmd === 'attach');
        return {
          attachAt: attach?.at ?? NaN,
          domAt: w.__bench.domAt,
          paintAt: w.__bench.paintAt,
          index: w.__bench.index,
        };
      });
      // The marker is in the last agent message, the thread's last entry.
      if (load.index !== transcript.counts.entries - 1) {
        throw new Error(
          `the marker showed in row ${load.index}, not ${transcript.counts.entries - 1}`,
        );
      }
      const mem = await memory(page);
      const stream = await page.evaluate(streamAndMeasure, {
        rate: opts.rate,
        seconds: opts.seconds,
        sessionId: transcript.sessionId,
        messageId: transcript.lastMessageId,
        marker: STREAM_MARKER,
      });
      const memAfter = await memory(page);
      const deltas = /** @type {number[]} */ (stream.deltas);
      runs.push({
        firstRender: {
          fromNavigationMs: round(load.paintAt),
          fromAttachMs: round(load.paintAt - load.attachAt),
          domFromAttachMs: round(load.domAt - load.attachAt),
        },
        stream: {
          chunks: stream.chunks,
          chunksPerSecond: round(stream.chunks / (stream.streamMs / 1000), 0),
          ipcFrames: stream.frames,
          animationFrames: deltas.length,
          frameMsP50: round(quantile(deltas, 0.5)),
          frameMsP95: round(quantile(deltas, 0.95)),
          frameMsMax: round(Math.max(...deltas)),
          framesOver50ms: deltas.filter((d) => d > 50).length,
          lastChunkToDomMs: round(stream.lastChunkToDomMs),
        },
        memoryAfterLoad: mem,
        memoryAfterStream: memAfter,
        pageErrors: errors,
      });
      process.stderr.write(`run ${run + 1}/${opts.runs}: ${JSON.stringify(runs.at(-1))}\n`);
      await context.close();
    }
  } finally {
    await browser.close();
    await new Promise((r) => server.httpServer.close(r));
  }
  const pick = (/** @type {(r: any) => number} */ f) => median(runs.map(f));
  const summary = {
    what: 'ACP Desk UI bench (ui/bench/bench.mjs): built UI, mocked IPC, Debian Chromium',
    chromium: browser.version(),
    options: opts,
    // The bench shares the machine: a high load average means noisy figures.
    machine: { cpus: cpus().length, loadAverageBefore: loadBefore, loadAverageAfter: loadavg() },
    transcript: { events: transcript.events.length, ...transcript.counts },
    median: {
      firstRenderFromNavigationMs: pick((r) => r.firstRender.fromNavigationMs),
      firstRenderFromAttachMs: pick((r) => r.firstRender.fromAttachMs),
      frameMsP50: pick((r) => r.stream.frameMsP50),
      frameMsP95: pick((r) => r.stream.frameMsP95),
      frameMsMax: pick((r) => r.stream.frameMsMax),
      chunksPerSecond: pick((r) => r.stream.chunksPerSecond),
      lastChunkToDomMs: pick((r) => r.stream.lastChunkToDomMs),
      jsHeapUsedMiBAfterLoad: pick((r) => r.memoryAfterLoad.jsHeapUsedMiB),
      domNodesAfterLoad: pick((r) => r.memoryAfterLoad.domNodes),
      domElementsAfterLoad: pick((r) => r.memoryAfterLoad.domElements),
      jsHeapUsedMiBAfterStream: pick((r) => r.memoryAfterStream.jsHeapUsedMiB),
    },
    runs,
  };
  const json = JSON.stringify(summary, null, 2);
  if (out) writeFileSync(out, `${json}\n`);
  process.stdout.write(`${json}\n`);
}

await main();
