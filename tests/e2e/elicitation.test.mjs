// End to end: the agent's questions (elicitation) and background tasks (issue 19) in the real
// app (run.sh: Xvfb, tauri-driver), against the demo agent's scenarios
// (crates/acp-desk-demo-agent/scenarios/elicit-*.json, background*.json).
//
// - "elicit form": the dialog shows the 13 fields in the schema's order; invalid values are said
//   on their fields and keep Submit off (Enter sends nothing); fixed, the answer reaches the agent,
//   which quotes it; the thread's line says the user answered, never what.
// - Decline and Cancel (Esc) each settle the question; Stop while it is open takes the dialog
//   away and ends the turn stopped.
// - "elicit url": the host is shown; Agree calls open_url and the dialog waits until the agent's
//   elicitation/complete arrives.
// - "background task to stop": the header's chip counts 2 running; Stop in the list stops the
//   stoppable one, the monitor has no Stop. "background task": the task completes after the turn
//   and the agent's own cycle is marked in the thread.
// Screenshots of the dialog and the task list at 1280x800 and 800x600 (E2E_SCREENSHOTS).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { lastEntry as lastEntryIn, launchApp, resizeWindow, saveShot } from './lib.mjs';

const shots = process.env.E2E_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'acp-desk-shots-'));
mkdirSync(shots, { recursive: true });
const project = realpathSync(mkdtempSync(join(tmpdir(), 'acp-desk-e2e-elicit-')));
writeFileSync(join(project, 'README.md'), '# A project for the questions test\n');

const DIALOG = '[role="dialog"][data-elicitation]';
const FIELDS = [
  'name',
  'language',
  'workers',
  'coverage',
  'ci',
  'license',
  'targets',
  'features',
  'email',
  'homepage',
  'start',
  'review',
  'prefix',
];

let browser;
let size;

const $ = (selector) => browser.$(selector);
const input = (name) => $(`${DIALOG} [data-field="${name}"] input`);
const errorOf = (name) => $(`${DIALOG} [data-field="${name}"] [data-error]`);

// textContent, not WebDriver's getText: WebKitWebDriver answers '' for some visible elements.
async function text(selector) {
  return (await $(selector)).getProperty('textContent');
}

const lastEntry = () => lastEntryIn(browser);

/** Every entry of the thread from index `from` on, scrolling it (only some are in the page). */
function entriesFrom(from = 0) {
  return browser.execute(async (start) => {
    const scroller = document.querySelector('.thread-view .scroller');
    const seen = new Map();
    const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    scroller.scrollTop = 0;
    await frame();
    for (;;) {
      for (const item of scroller.querySelectorAll('.item')) {
        const e = item.querySelector('[data-entry]');
        const index = Number(item.getAttribute('data-index'));
        if (!e || index < start) continue;
        seen.set(index, {
          type: e.getAttribute('data-entry'),
          reason: e.getAttribute('data-reason'),
          text: (e.textContent ?? '').replace(/\s+/g, ' ').trim(),
        });
      }
      if (scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 2) break;
      scroller.scrollTop += scroller.clientHeight * 0.8;
      await frame();
    }
    scroller.scrollTop = scroller.scrollHeight;
    await frame();
    return [...seen.entries()].sort((a, b) => a[0] - b[0]).map(([, v]) => v);
  }, from);
}

async function prompt(words) {
  const box = await $('#composer');
  await box.waitForEnabled({ timeout: 20000 });
  await box.setValue(words);
  await (await $('#send')).click();
}

/** Sends `words` and waits for the agent's question; resolves with the thread's count before. */
async function ask(words) {
  const before = (await lastEntry()).count;
  await prompt(words);
  await (
    await $(DIALOG)
  ).waitForDisplayed({ timeout: 20000, timeoutMsg: `no question for “${words}”` });
  return before;
}

/** Waits for the turn begun after `before` entries to end; resolves with its entries. */
async function turnEnded(before, what) {
  await browser.waitUntil(
    async () => {
      const last = await lastEntry();
      return last.count > before + 1 && last.type === 'turn-end';
    },
    { timeout: 20000, timeoutMsg: `the turn for ${what} did not end` },
  );
  return entriesFrom(before);
}

/** The app's error banner, if it shows one (`data-code`: an IpcError's). */
function errorBanner() {
  return browser.execute(() =>
    [...document.querySelectorAll('.banner[role="alert"][data-code]')]
      .map((b) => `${b.getAttribute('data-code')}: ${b.textContent.trim()}`)
      .join(' | '),
  );
}

/** Waits for `cond`; on a timeout fails saying `what` and the window's error banner. */
async function until(cond, what, timeout = 10000) {
  try {
    await browser.waitUntil(cond, { timeout });
  } catch {
    assert.fail(`${what}; the window says: ${(await errorBanner()) || '(nothing)'}`);
  }
}

/** Waits for the question's dialog to go (an answer the app could not send leaves it, with an
 * error banner: said in the failure). */
async function dialogGone(what) {
  try {
    await (await $(DIALOG)).waitForExist({ reverse: true, timeout: 10000 });
  } catch {
    assert.fail(
      `the dialog stayed after ${what}; the window says: ${(await errorBanner()) || '(nothing)'}`,
    );
  }
}

/** The shown session's id (its sidebar item's). */
async function sessionId() {
  const id = await (
    await $('[data-session-list] .session-item.active')
  ).getAttribute('data-session');
  assert.ok(id, 'the active session has an id');
  return id;
}

/** Stops the turn as the window's Stop button does: the `cancel` command for the session (the
 * button itself is under a question's backdrop while one is open). */
async function stopTurn() {
  const id = await sessionId();
  await browser.execute((s) => window.__TAURI_INTERNALS__.invoke('cancel', { session: s }), id);
}

/** The window at `w`x`h` (the page's viewport follows). */
const resize = (w, h) => resizeWindow(browser, w, h);

/** A screenshot once the compositor caught up (lib.mjs). */
const shot = (file) => saveShot(browser, join(shots, file));

/** Screenshots the window at its default size and at 800x600, then back to the default. */
async function shotsOf(name, check = async () => {}) {
  await shot(`${name}-${size.width}x${size.height}.png`);
  await check();
  await resize(800, 600);
  await check();
  await shot(`${name}-800x600.png`);
  await resize(size.width, size.height);
}

/** The element `selector` is wholly inside the window. */
async function inWindow(selector) {
  const r = await browser.execute((s) => {
    const b = document.querySelector(s)?.getBoundingClientRect();
    return b && { ...b.toJSON(), w: window.innerWidth, h: window.innerHeight };
  }, selector);
  assert.ok(r, `${selector} is in the page`);
  assert.ok(
    r.left >= 0 && r.top >= 0 && r.right <= r.w + 0.5 && r.bottom <= r.h + 0.5,
    `${selector} fits in the ${r.w}x${r.h} window: ${JSON.stringify(r)}`,
  );
}

describe('ACP Desk, the agent’s questions and background tasks, end to end', () => {
  before(async () => {
    rmSync(join(process.env.ACP_DESK_DATA_DIR ?? '', 'state.json'), { force: true });
    browser = await launchApp(['--agent', 'demo', project]);
    const status = await $('.session-header .status');
    await status.waitForExist({ timeout: 20000 });
    await browser.waitUntil(async () => (await status.getAttribute('data-status')) === 'ready', {
      timeout: 20000,
      timeoutMsg: 'the session never became ready',
    });
    size = await browser.getWindowSize();
    // The desktop notice (no notification service under Xvfb) would cover what is shot.
    const notice = await $('[data-desktop-notice] button');
    if (await notice.isExisting()) await notice.click();
  });

  // What a failed test left (a question open, a turn running) does not fail the next ones.
  beforeEach(async () => {
    if (!browser) return;
    const left = await browser.execute(
      (d) => !!document.querySelector(d) || !!document.querySelector('#stop'),
      DIALOG,
    );
    if (!left) return;
    await stopTurn();
    await (await $('#send')).waitForExist({ timeout: 15000 });
    await (await $(DIALOG)).waitForExist({ reverse: true, timeout: 5000 });
    const dismiss = await $('.banner[data-code] button');
    if (await dismiss.isExisting()) await dismiss.click();
  });

  after(async () => {
    await browser?.deleteSession().catch(() => undefined);
    rmSync(project, { recursive: true, force: true });
  });

  it('a form: every field in order; invalid values refused; the answer reaches the agent', async () => {
    const before = await ask('elicit form');
    const dialog = await $(DIALOG);
    assert.equal(await dialog.getAttribute('data-mode'), 'form');
    assert.match(await text(`${DIALOG} h2`), /^ACP Desk demo agent asks you$/);
    assert.match(await text(`${DIALOG} .elicit-message`), /A few details for the new project\./);
    const order = await browser.execute(
      (d) => [...document.querySelectorAll(`${d} [data-field]`)].map((e) => e.dataset.field),
      DIALOG,
    );
    assert.deepEqual(order, FIELDS, 'the fields keep the schema’s order');
    // Defaults filled in; the required language without one keeps Submit off, and says so.
    assert.equal(await (await input('name')).getValue(), 'demo');
    assert.equal(await (await input('workers')).getValue(), '4');
    const submit = await $(`${DIALOG} [data-action="accept"]`);
    assert.equal(await submit.isEnabled(), false, 'Submit is off while Language is empty');
    assert.equal(
      (await text(`${DIALOG} [data-blocked]`)).trim(),
      'To submit, first fill in or fix: Language.',
    );
    await shotsOf('e2e-elicitation-form', () => inWindow(`${DIALOG} [data-action="cancel"]`));

    // Invalid values: said on their fields; Submit stays off and Enter sends nothing.
    await (await input('name')).setValue('x');
    await (await input('prefix')).setValue('ab');
    await (await input('workers')).setValue('40');
    await (await $(`${DIALOG} [data-field="language"] input[value="ts"]`)).click();
    await (await errorOf('prefix')).waitForExist({ timeout: 5000 });
    assert.equal(
      (await (await errorOf('name')).getProperty('textContent')).trim(),
      'Must be at least 2 characters long.',
    );
    assert.equal(
      (await (await errorOf('prefix')).getProperty('textContent')).trim(),
      'Must match the pattern ^[A-Z]{3}$.',
    );
    assert.equal(
      (await (await errorOf('workers')).getProperty('textContent')).trim(),
      'Must be at most 16.',
    );
    assert.equal(await submit.isEnabled(), false, 'Submit is off while a field is invalid');
    assert.equal(
      (await text(`${DIALOG} [data-blocked]`)).trim(),
      'To submit, first fill in or fix: Project name, Parallel jobs, Ticket prefix.',
    );
    await (await input('prefix')).click();
    await browser.keys('Enter');
    assert.ok(await dialog.isDisplayed(), 'Enter on an invalid form sends nothing');
    assert.ok(
      await (await $(`${DIALOG} [data-action="decline"]`)).isEnabled(),
      'nothing is being sent',
    );
    // The first errors in view (the dialog's body scrolls).
    await browser.execute((d) => {
      document.querySelector(`${d} .elicit-body`).scrollTop = 0;
    }, DIALOG);
    await shotsOf('e2e-elicitation-invalid');

    // Fixed (and an email, the kind of value a thread line must not repeat): sent.
    await (await input('name')).setValue('lighthouse');
    await (await input('prefix')).setValue('LHT');
    await (await input('workers')).setValue('8');
    await (await input('email')).setValue('ann@example.com');
    await browser.waitUntil(async () => submit.isEnabled(), {
      timeout: 5000,
      timeoutMsg: 'Submit stayed off with every field valid',
    });
    assert.equal(await $$count(`${DIALOG} [data-error]`), 0, 'no error is left');
    await submit.click();
    await dialogGone('Submit');
    const seen = await turnEnded(before, '“elicit form”');
    const agent = seen
      .filter((e) => e.type === 'agent')
      .map((e) => e.text)
      .join(' ');
    const reply = agent.match(/Your answer reached me: (\{.*?\})/)?.[1];
    assert.ok(reply, `the agent quotes the answer: ${agent}`);
    assert.deepEqual(JSON.parse(reply), {
      ci: true,
      coverage: 0.8,
      email: 'ann@example.com',
      language: 'ts',
      name: 'lighthouse',
      prefix: 'LHT',
      targets: ['linux'],
      workers: 8,
    });
    assert.match(agent, /Thanks: that is all I need to scaffold it\./);
    const line = seen.filter((e) => e.type === 'settled');
    assert.deepEqual(
      line.map((e) => e.text),
      ['You answered the agent’s question “New project”.'],
      'the thread says who answered',
    );
    for (const typed of ['lighthouse', 'ann@example.com', 'LHT'])
      assert.ok(!line[0].text.includes(typed), `the thread’s line does not repeat “${typed}”`);
    assert.equal(seen.at(-1).reason, 'completed');
  });

  it('Decline and Cancel (Esc) each settle the question', async () => {
    let before = await ask('elicit form');
    await (await input('name')).setValue('secret-project');
    await (await $(`${DIALOG} [data-action="decline"]`)).click();
    await dialogGone('Decline');
    let seen = await turnEnded(before, 'the declined question');
    assert.match(seen.map((e) => e.text).join(' '), /You declined to answer\./);
    assert.deepEqual(
      seen.filter((e) => e.type === 'settled').map((e) => e.text),
      ['You declined the agent’s question “New project”.'],
    );
    assert.ok(
      !seen.some((e) => e.text.includes('secret-project')),
      'what was typed is nowhere in the thread',
    );

    before = await ask('elicit form');
    // The focus is in the dialog (its first field): Esc is the dialog's, not the turn's.
    await browser.keys('Escape');
    await dialogGone('Esc');
    seen = await turnEnded(before, 'the cancelled question');
    assert.match(seen.map((e) => e.text).join(' '), /The question was cancelled\./);
    assert.deepEqual(
      seen.filter((e) => e.type === 'settled').map((e) => e.text),
      ['You cancelled the agent’s question “New project”.'],
    );
  });

  it('Stop while the question is open takes it away and ends the turn stopped', async () => {
    const before = await ask('elicit form');
    // The dialog covers the window (its backdrop takes the clicks): Stop as the button asks it.
    await stopTurn();
    await dialogGone('Stop');
    const seen = await turnEnded(before, 'the stopped question');
    assert.equal(seen.at(-1).reason, 'cancelled');
    assert.deepEqual(
      seen.filter((e) => e.type === 'settled').map((e) => e.text),
      ['The agent’s question “New project” was cancelled: the turn was stopped.'],
    );
    assert.ok(await (await $('#composer')).isEnabled(), 'the window stays usable');
  });

  it('a URL question: the host shown; Agree opens it and waits for the agent to say done', async () => {
    const before = await ask('elicit url');
    const dialog = await $(DIALOG);
    assert.equal(await dialog.getAttribute('data-mode'), 'url');
    assert.equal((await text(`${DIALOG} [data-host]`)).trim(), 'example.com');
    assert.equal(
      (await text(`${DIALOG} [data-url]`)).trim(),
      'https://example.com/demo-agent/authorize?state=demo-sign-in-1',
    );
    await shotsOf('e2e-elicitation-url', () => inWindow(DIALOG));
    await (await $(`${DIALOG} [data-action="accept"]`)).click();
    // Waiting for the agent's elicitation/complete (1.5 s after the answer).
    await until(
      async () => (await dialog.getAttribute('data-waiting')) === 'true',
      'the dialog did not wait for the agent',
    );
    assert.equal((await text(`${DIALOG} h2`)).trim(), 'Waiting for ACP Desk demo agent');
    assert.match(
      await text(`${DIALOG} [role="status"]`),
      /You agreed to open it in your browser\. ACP Desk demo agent will say when you are done there\./,
    );
    // (The agent says it is done 1.5 s after the answer: the picture may miss the wait.)
    await shot(`e2e-elicitation-url-waiting-${size.width}x${size.height}.png`);
    // The agent's elicitation/complete (1.5 s after the answer) ends the wait.
    await dialogGone('elicitation/complete');
    const seen = await turnEnded(before, '“elicit url”');
    // open_url went through (a browser that could not be started would be said in a banner).
    assert.equal(await errorBanner(), '', 'the window reports no error');
    assert.deepEqual(
      seen.filter((e) => e.type === 'settled').map((e) => e.text),
      [
        'You agreed to open example.com for the agent.',
        'The agent says the step at example.com is done.',
      ],
    );
    assert.match(seen.map((e) => e.text).join(' '), /Signed in: I can read the issues now\./);
  });

  it('background tasks: the chip counts them; Stop stops the one the agent allows', async () => {
    const before = (await lastEntry()).count;
    await prompt('background task to stop');
    await turnEnded(before, '“background task to stop”');
    const chip = await $('.session-header .tasks .chip-button');
    await browser.waitUntil(
      async () => (await chip.getProperty('textContent')).trim() === '2 running',
      {
        timeout: 10000,
        timeoutMsg: 'the chip does not say 2 running',
      },
    );
    await chip.click();
    const server = '#tasks-popover [data-task="demo-dev-server"]';
    const monitor = '#tasks-popover [data-task="demo-log-watch"]';
    await (await $(server)).waitForDisplayed({ timeout: 5000 });
    assert.match(await text(server), /npm run dev/);
    assert.match(await text(server), /Dev server on port 5173 \(simulated\)/);
    assert.equal((await text(`${server} .task-status`)).trim(), 'running');
    assert.match(await text(monitor), /Watch the server log/);
    assert.equal(await $$count(`${monitor} button`), 0, 'the monitor has no Stop');
    await shotsOf('e2e-background-tasks-list', () => inWindow('#tasks-popover'));
    await (await $(`${server} [data-stop-task]`)).click();
    try {
      await browser.waitUntil(
        async () => (await (await $(server)).getAttribute('data-task-status')) === 'stopped',
        { timeout: 10000 },
      );
    } catch {
      const said = await browser.execute(
        (sel) => document.querySelector(`${sel} [data-stop-error]`)?.textContent ?? '(nothing)',
        server,
      );
      assert.fail(`the dev server did not settle as stopped; beside it: ${said}`);
    }
    assert.equal((await text(`${server} .task-status`)).trim(), 'stopped');
    assert.equal(await $$count(`${server} button`), 0, 'a stopped task has no Stop');
    assert.equal((await chip.getProperty('textContent')).trim(), '1 running');
    await shot(`e2e-background-tasks-stopped-${size.width}x${size.height}.png`);
    // (Esc would not close it: the focus left with the Stop button, which went.)
    await chip.click();
    await (await $('#tasks-popover')).waitForExist({ reverse: true, timeout: 5000 });
  });

  it('a background task completes after the turn, and the agent’s own cycle is marked', async () => {
    const before = (await lastEntry()).count;
    await prompt('background task');
    await turnEnded(before, '“background task”');
    await browser.waitUntil(
      async () => (await entriesFrom(before)).some((e) => e.type === 'autonomous'),
      { timeout: 10000, timeoutMsg: 'the autonomous cycle was not marked' },
    );
    const seen = await entriesFrom(before);
    const mark = seen.findIndex((e) => e.type === 'autonomous');
    assert.equal(seen[mark - 1]?.type, 'turn-end');
    assert.equal(
      seen[mark].text,
      'The agent went on by itself after a background task ended: what follows is not a reply to you.',
    );
    assert.match(seen[mark + 1]?.text ?? '', /The background build finished \(simulated\)/);
    const chip = await $('.session-header .tasks .chip-button');
    if ((await chip.getAttribute('aria-expanded')) !== 'true') await chip.click();
    const build = '#tasks-popover [data-task="demo-build"]';
    await (await $(build)).waitForDisplayed({ timeout: 5000 });
    await browser.waitUntil(
      async () => (await (await $(build)).getAttribute('data-task-status')) === 'completed',
      {
        timeout: 10000,
        timeoutMsg: 'the build did not settle as completed',
      },
    );
    assert.match(await text(build), /Finished the release build \(simulated\)/);
    await shotsOf('e2e-background-tasks-completed');
  });
});

async function $$count(selector) {
  return browser.execute((s) => document.querySelectorAll(s).length, selector);
}
