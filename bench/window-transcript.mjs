// The 3.3 MB transcript (bench/history's `transcript-bench make`: 100 turns, 1,602 rows, 1,099
// thread entries) opened from the History view of the REAL app: WebKitGTK, Tauri's IPC, the
// shell's `history_events`. Per round, a fresh app: the History list shown and settled, then,
// timed in the page, a click on the session until the frame showing its thread is painted;
// memory as the PSS of the app's whole process tree (the app, WebKit's web and network
// processes) before the click and after the thread settled.
//
//   cargo build --release -p acp-desk-bench-history --bin transcript-bench
//   cargo build -p acp-desk --bins     (or the release app, via ACP_DESK_APP)
//   E2E_TESTS=bench/window-transcript.mjs TRANSCRIPT_BENCH=target/release/transcript-bench \
//     ROUNDS=3 tests/e2e/run.sh
//
// Not a test (run.sh's default list leaves it out): it prints figures, one JSON line a round.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { app, launchApp } from '../tests/e2e/lib.mjs';

const repo = resolve(import.meta.dirname, '..');
const bench = process.env.TRANSCRIPT_BENCH ?? join(repo, 'target', 'release', 'transcript-bench');
const data = process.env.ACP_DESK_DATA_DIR ?? '';
const rounds = Number(process.env.ROUNDS ?? 3);
// SETTLE_MS: how long after the paint the memory is read (default 3000).
if (!data) throw new Error('run it through tests/e2e/run.sh (it sets ACP_DESK_DATA_DIR)');

execFileSync(bench, ['make', '--dir', data, '--turns', String(process.env.TURNS ?? 100)], {
  stdio: ['ignore', 'ignore', 'inherit'],
});

/** @param {string} pid */
function parentOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? null;
  } catch {
    return null;
  }
}

/** The PSS (KiB) of the app's processes and all their descendants. */
function treePss() {
  const pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  const roots = pids.filter((p) => {
    try {
      return readlinkSync(`/proc/${p}/exe`) === app;
    } catch {
      return false;
    }
  });
  const inTree = (/** @type {string} */ p) => {
    for (let q = p; q && q !== '0' && q !== '1'; q = parentOf(q) ?? '') {
      if (roots.includes(q)) return true;
    }
    return false;
  };
  let kib = 0;
  let n = 0;
  /** @type {Record<string, number>} */
  const byName = {};
  for (const p of pids.filter(inTree)) {
    try {
      const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${p}/smaps_rollup`, 'utf8'));
      if (m) {
        const name = readFileSync(`/proc/${p}/comm`, 'utf8').trim();
        byName[name] = (byName[name] ?? 0) + Number(m[1]);
        kib += Number(m[1]);
        n += 1;
      }
    } catch {
      // gone
    }
  }
  return { kib, processes: n, byName };
}

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

for (let round = 1; round <= rounds; round++) {
  const browser = await launchApp([]);
  try {
    const history = await browser.$('button=History');
    await history.waitForClickable({ timeout: 20000 });
    await history.click();
    const row = await browser.$('[data-history-session]');
    await row.waitForExist({ timeout: 20000 });
    const id = await row.getAttribute('data-history-session');
    await sleep(2000);
    const before = treePss();
    const ms = await browser.executeAsync((sid, done) => {
      const t0 = performance.now();
      /** @type {HTMLElement | null} */ (
        document.querySelector(`[data-history-session="${sid}"]`)
      )?.click();
      const check = () => {
        if (document.querySelector('[data-past-session] .thread-view [data-entry]'))
          requestAnimationFrame(() => done(performance.now() - t0));
        else requestAnimationFrame(check);
      };
      check();
    }, id);
    // JavaScriptCore collects on its own timers: the cost that stays is read after a pause.
    await sleep(Number(process.env.SETTLE_MS ?? 3000));
    const after = treePss();
    const entries = await browser.execute(
      () => document.querySelectorAll('.thread-view [data-entry]').length,
    );
    console.log(
      JSON.stringify({
        round,
        clickToPaintedMs: Math.round(ms),
        pssBeforeMiB: +(before.kib / 1024).toFixed(1),
        pssAfterMiB: +(after.kib / 1024).toFixed(1),
        pssExtraMiB: +((after.kib - before.kib) / 1024).toFixed(1),
        processes: after.processes,
        extraMiBByProcess: Object.fromEntries(
          Object.entries(after.byName).map(([k, v]) => [
            k,
            +((v - (before.byName[k] ?? 0)) / 1024).toFixed(1),
          ]),
        ),
        entriesInDom: entries,
        load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
      }),
    );
  } finally {
    await browser.deleteSession().catch(() => undefined);
    await sleep(1000);
  }
}
