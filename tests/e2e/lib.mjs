// What the end-to-end tests share: the app under test, starting it in a WebDriver session,
// the processes it left, and a turn in the shown session as a user types it.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { remote } from 'webdriverio';

const repo = resolve(import.meta.dirname, '..', '..');
export const app = process.env.ACP_DESK_APP ?? join(repo, 'target', 'debug', 'acp-desk');

/** Starts the app with these arguments in a new WebDriver session (run.sh's tauri-driver). */
export function launchApp(args) {
  return remote({
    hostname: '127.0.0.1',
    port: Number(process.env.TAURI_DRIVER_PORT ?? 4444),
    logLevel: 'warn',
    capabilities: {
      browserName: 'wry',
      'wdio:enforceWebDriverClassic': true,
      'tauri:options': { application: app, args },
    },
  });
}

/** Live processes (not zombies) whose working folder is `dir`. */
export function processesIn(dir) {
  const found = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readlinkSync(`/proc/${pid}/cwd`) !== dir) continue;
      // PID 1 here does not reap orphans: a zombie is not a live process.
      if (!/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) found.push(pid);
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** The thread's entries in the page, as shown (short threads are all in the page). */
export function entries(browser) {
  return browser.execute(() =>
    [...document.querySelectorAll('.thread-view [data-entry]')].map((e) => ({
      type: e.getAttribute('data-entry'),
      text: e.textContent ?? '',
    })),
  );
}

/** The thread's entry count and its last entry as shown. The list is virtualized: a thread
 * scrolled up earlier (a screenshot of a card) is taken back to the latest, as a reader would. */
export function lastEntry(browser) {
  return browser.execute(async () => {
    const scroller = document.querySelector('.thread-view .scroller');
    const items = scroller?.querySelector('.items');
    const count = Number(items?.getAttribute('data-count') ?? 0);
    const find = () => items?.querySelector(`.item[data-index="${count - 1}"] [data-entry]`);
    if (scroller && count > 0 && !find()) {
      scroller.scrollTop = scroller.scrollHeight;
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    }
    const last = find();
    return {
      count,
      type: last?.getAttribute('data-entry') ?? null,
      reason: last?.getAttribute('data-reason') ?? null,
      text: last?.textContent ?? '',
    };
  });
}

/** Sends `words` from the composer and waits for that turn to end. */
export async function turn(browser, words) {
  await (await browser.$('#composer')).waitForEnabled({ timeout: 20000 });
  const before = (await entries(browser)).filter((e) => e.type === 'turn-end').length;
  await (await browser.$('#composer')).setValue(words);
  await (await browser.$('#send')).click();
  await browser.waitUntil(
    async () => (await entries(browser)).filter((e) => e.type === 'turn-end').length > before,
    { timeout: 30000, timeoutMsg: `the turn for “${words}” did not end` },
  );
}

/** The window at `w`x`h`, once the page's viewport followed. */
export async function resizeWindow(browser, w, h) {
  await browser.setWindowSize(w, h);
  await browser.waitUntil(
    async () => {
      const [iw, ih] = await browser.execute(() => [window.innerWidth, window.innerHeight]);
      return iw <= w && ih <= h && iw > w - 40 && ih > h - 120;
    },
    { timeout: 5000, timeoutMsg: `the window did not become ${w}x${h}` },
  );
}

/** Saves a screenshot of the window as it is now. WebKitWebDriver's screenshot is the last
 * frame the compositor finished, which lags the DOM (a scroll, a resize: a stale or half-black
 * picture), and no page event says a frame reached the screen: two animation frames, then a
 * short settle. */
export async function saveShot(browser, path) {
  await browser.execute(
    () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))),
  );
  await browser.pause(300);
  await browser.saveScreenshot(path);
}
