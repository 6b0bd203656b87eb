// End to end: the real app (target/debug/acp-desk) driven through tauri-driver and
// WebKitWebDriver under Xvfb (run.sh sets that up), with the real demo agent.
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { app, lastEntry as lastEntryIn, launchApp, processesIn } from './lib.mjs';

const shots = process.env.E2E_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'acp-desk-shots-'));
const project = realpathSync(mkdtempSync(join(tmpdir(), 'acp-desk-e2e-')));
writeFileSync(join(project, 'README.md'), '# A project for the end-to-end test\n');
mkdirSync(join(project, 'src'));
writeFileSync(join(project, 'src', 'main.rs'), 'fn main() {}\n');
mkdirSync(shots, { recursive: true });

let browser;

/** Starts the app with these arguments in a new WebDriver session. Each starts with no sidebar
 * to restore (restart.test.mjs tests that): these tests each expect only what they open. */
function launch(args) {
  rmSync(join(process.env.ACP_DESK_DATA_DIR ?? '', 'state.json'), { force: true });
  return launchApp(args);
}

// textContent, not WebDriver's getText: WebKitWebDriver answers '' for some visible elements
// (text in flex rows with ellipsis), which would make checks flaky rather than stricter.
async function text(selector) {
  return (await browser.$(selector)).getProperty('textContent');
}

async function prompt(words) {
  const box = await browser.$('#composer');
  await box.waitForEnabled({ timeout: 20000 });
  await box.setValue(words);
  await (await browser.$('#send')).click();
}

const lastEntry = () => lastEntryIn(browser);

/** Sends a prompt and waits for its turn to end; resolves with the turn-end entry. */
async function turn(words) {
  const before = (await lastEntry()).count;
  await prompt(words);
  let end;
  await browser.waitUntil(
    async () => {
      end = await lastEntry();
      return end.count > before + 1 && end.type === 'turn-end';
    },
    { timeout: 30000, timeoutMsg: `the turn for “${words}” did not end` },
  );
  return end;
}

/** Every entry of the thread, scrolling it from top to bottom (only some are in the page). */
async function allEntries() {
  return browser.execute(async () => {
    const scroller = document.querySelector('.thread-view .scroller');
    const seen = new Map();
    const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    scroller.scrollTop = 0;
    await frame();
    for (;;) {
      for (const item of scroller.querySelectorAll('.item')) {
        const e = item.querySelector('[data-entry]');
        if (!e) continue;
        seen.set(Number(item.getAttribute('data-index')), {
          type: e.getAttribute('data-entry'),
          kind: e.getAttribute('data-kind'),
          status: e.getAttribute('data-status'),
          text: e.textContent,
          diffs: e.querySelectorAll('.diff-view').length,
          terminals: e.querySelectorAll('[data-terminal-id]').length,
        });
      }
      if (scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 2) break;
      scroller.scrollTop += scroller.clientHeight * 0.8;
      await frame();
    }
    return [...seen.entries()].sort((a, b) => a[0] - b[0]).map(([, v]) => v);
  });
}

/** Scrolls the thread so the entry matching `selector` is in view, then screenshots the window. */
async function shootEntry(selector, file) {
  const found = await browser.execute(async (sel) => {
    const scroller = document.querySelector('.thread-view .scroller');
    const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    scroller.scrollTop = 0;
    await frame();
    for (;;) {
      const el = scroller.querySelector(sel);
      if (el) {
        el.scrollIntoView({ block: 'center' });
        await frame();
        return true;
      }
      if (scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 2) return false;
      scroller.scrollTop += scroller.clientHeight * 0.8;
      await frame();
    }
  }, selector);
  assert.ok(found, `${selector} is somewhere in the thread`);
  await browser.saveScreenshot(join(shots, file));
}

async function statusIs(want, timeout = 20000) {
  const status = await browser.$('.session-header .status');
  await status.waitForExist({ timeout });
  await browser.waitUntil(async () => (await status.getAttribute('data-status')) === want, {
    timeout,
    timeoutMsg: `the session never became ${want}`,
  });
}

describe('ACP Desk, end to end', () => {
  before(async () => {
    browser = await launch(['--agent', 'demo', project]);
  });

  after(async () => {
    await browser?.deleteSession().catch(() => undefined);
  });

  it('opens the folder given on the command line with the demo agent', async () => {
    await statusIs('ready');
    assert.equal(
      await (await browser.$('.session-header .folder')).getAttribute('data-tip'),
      project,
    );
    assert.match(
      await (await browser.$('.session-header .agent')).getProperty('textContent'),
      /demo agent/i,
    );
    assert.match(await text('[data-session-list]'), new RegExp(basename(project)));
  });

  it('switches the agent mode and a config option through the agent', async () => {
    const mode = await browser.$('select[aria-label="Mode"]');
    await mode.waitForExist({ timeout: 10000 });
    await mode.selectByAttribute('value', 'code');
    await browser.waitUntil(async () => (await mode.getValue()) === 'code', {
      timeout: 10000,
      timeoutMsg: 'the mode did not change',
    });
    const model = await browser.$('select[aria-label="Model"]');
    const options = await model.$$('option');
    const last = await options[options.length - 1].getAttribute('value');
    await model.selectByAttribute('value', last);
    await browser.waitUntil(async () => (await model.getValue()) === last, {
      timeout: 10000,
      timeoutMsg: 'the model did not change',
    });
  });

  it('streams an answer, with its thought, and ends the turn', async () => {
    const end = await turn('stream');
    assert.match(end.text, /Turn ended/);
    const entries = await allEntries();
    const answer = entries
      .filter((e) => e.type === 'agent')
      .map((e) => e.text)
      .join('');
    assert.match(answer, /ledgerline/, 'the streamed answer is shown');
    assert.ok(answer.length > 200, `the whole answer arrived (${answer.length} chars)`);
    assert.equal(
      entries.filter((e) => e.type === 'thought').length,
      1,
      'the thought is shown once',
    );
    assert.equal(entries.find((e) => e.type === 'user')?.text.trim(), 'stream');
    await browser.saveScreenshot(join(shots, 'streamed-answer.png'));
  });

  it('shows every kind of card: plan, tools of each kind, diffs, a live terminal, usage', async () => {
    await prompt('showcase');
    // The showcase asks once before its last edit, with the diff in the dialog.
    const dialog = await browser.$('[data-permission]');
    await dialog.waitForDisplayed({ timeout: 30000 });
    assert.ok(await dialog.$('.diff-view').isExisting(), 'the dialog shows the diff');
    await (await browser.$('[data-plan]')).waitForDisplayed({ timeout: 5000 });
    await browser.saveScreenshot(join(shots, 'permission-diff.png'));
    // A click answers at once: only the dialog's keys wait 400 ms (ARCHITECTURE.md, 20).
    await (await browser.$('[data-permission] [data-option-kind="allow_once"]')).click();
    await dialog.waitForDisplayed({ reverse: true, timeout: 10000 });
    await browser.waitUntil(async () => (await lastEntry()).type === 'turn-end', {
      timeout: 30000,
      timeoutMsg: 'the showcase did not end',
    });
    await browser.saveScreenshot(join(shots, 'showcase-end.png'));
    const entries = await allEntries();
    const tools = entries.filter((e) => e.type === 'tool');
    const kinds = new Set(tools.map((t) => t.kind));
    for (const k of [
      'search',
      'read',
      'fetch',
      'think',
      'edit',
      'move',
      'delete',
      'execute',
      'other',
    ]) {
      assert.ok(kinds.has(k), `a ${k} card is shown (kinds: ${[...kinds].join(', ')})`);
    }
    assert.ok(
      tools.some((t) => t.status === 'failed'),
      'a failed call is shown as failed',
    );
    assert.ok(tools.filter((t) => t.diffs > 0).length >= 3, 'diffs render as diff views');
    assert.ok(
      tools.some((t) => t.terminals > 0),
      'the terminal renders live',
    );
    assert.match(await text('[data-plan]'), /Plan/);
    assert.match(await text('.session-header'), /\$0\.0\d/, 'the usage meter shows the cost');
    await shootEntry('[data-entry="tool"][data-kind="search"]', 'card-search-read.png');
    await shootEntry('[data-entry="tool"] .diff-view', 'card-diff.png');
    await shootEntry('[data-terminal-id]', 'card-terminal.png');
    await shootEntry('[data-entry="tool"][data-status="failed"]', 'card-failed.png');
    await shootEntry('[data-entry="thought"]', 'thought.png');
  });

  it('asks permission for a command, showing what would run', async () => {
    await prompt('permission');
    const dialog = await browser.$('[data-permission]');
    await dialog.waitForDisplayed({ timeout: 20000 });
    assert.match(await dialog.getText(), /cargo test/, 'the dialog shows what would run');
    await browser.saveScreenshot(join(shots, 'permission-dialog.png'));
    await (await browser.$('[data-permission] [data-option-kind="allow_once"]')).click();
    await dialog.waitForDisplayed({ reverse: true, timeout: 10000 });
    await browser.waitUntil(async () => (await lastEntry()).type === 'turn-end', {
      timeout: 30000,
      timeoutMsg: 'the turn did not end after the answer',
    });
    const entries = await allEntries();
    const settled = entries.filter((e) => e.type === 'settled').at(-1);
    assert.match(settled?.text ?? '', /you chose “Allow once”/);
    const tool = entries.filter((e) => e.type === 'tool' && /cargo test/.test(e.text)).at(-1);
    assert.equal(tool?.status, 'completed');
  });

  it('offers the agent’s commands after / and the project’s files after @', async () => {
    const box = await browser.$('#composer');
    await box.setValue('/');
    const menu = await browser.$('[role="listbox"]');
    await menu.waitForDisplayed({ timeout: 5000 });
    assert.match(await menu.getText(), /scenarios/);
    await browser.saveScreenshot(join(shots, 'composer-commands.png'));
    await box.setValue('what does @READ');
    await browser.waitUntil(async () => /README\.md/.test(await text('[role="listbox"]')), {
      timeout: 10000,
      timeoutMsg: 'the @ picker did not list README.md',
    });
    await browser.saveScreenshot(join(shots, 'composer-files.png'));
    await (await browser.$('[role="listbox"] [role="option"]')).click();
    await browser.saveScreenshot(join(shots, 'composer-chip.png'));
    await browser.waitUntil(async () => /README\.md/.test(await text('.composer')), {
      timeout: 5000,
      timeoutMsg: 'no chip for README.md',
    });
    await box.addValue(' say?');
    await (await browser.$('#send')).click();
    await browser.waitUntil(async () => (await lastEntry()).type === 'turn-end', {
      timeout: 30000,
      timeoutMsg: 'the turn with an attachment did not end',
    });
    const user = (await allEntries()).filter((e) => e.type === 'user').at(-1);
    assert.match(user?.text ?? '', /README\.md/, 'the message shows its attachment');
  });

  it('stops a running turn', async () => {
    await prompt('slow');
    const stop = await browser.$('#stop');
    await stop.waitForDisplayed({ timeout: 10000 });
    await browser.waitUntil(async () => ['agent', 'thought'].includes((await lastEntry()).type), {
      timeout: 15000,
      timeoutMsg: 'the slow answer never started',
    });
    await stop.click();
    await browser.waitUntil(async () => (await lastEntry()).type === 'turn-end', {
      timeout: 15000,
      timeoutMsg: 'the stopped turn did not end',
    });
    const end = await lastEntry();
    assert.equal(end.reason, 'cancelled');
    assert.equal(end.text.trim(), 'Stopped.');
    assert.ok(await (await browser.$('#composer')).isEnabled(), 'the window stays usable');
  });

  it('menu shortcuts reach the window: sidebar, undo and redo, zoom; the log file is written', async () => {
    // Keys typed into the window with xdotool go through GTK's menu accelerators, then the
    // menu's event, as a user's do (WebDriver's own keys go to the page and skip the menu).
    const win = execFileSync('xdotool', ['search', '--name', 'ACP Desk$'], { encoding: 'utf8' })
      .trim()
      .split('\n')[0];
    const keys = (...args) => {
      execFileSync('xdotool', ['windowfocus', '--sync', win]);
      execFileSync('xdotool', args);
    };
    const box = await browser.$('#composer');
    await box.waitForEnabled({ timeout: 20000 });
    await box.click();
    keys('type', '--delay', '20', 'menu words');
    await browser.waitUntil(async () => (await box.getValue()) === 'menu words', {
      timeout: 10000,
      timeoutMsg: 'the typed words did not arrive',
    });
    keys('key', 'ctrl+z');
    await browser.waitUntil(async () => (await box.getValue()) === '', {
      timeout: 10000,
      timeoutMsg: 'Edit → Undo (Ctrl+Z) did not undo the typing',
    });
    keys('key', 'ctrl+shift+z');
    await browser.waitUntil(async () => (await box.getValue()) === 'menu words', {
      timeout: 10000,
      timeoutMsg: 'Edit → Redo (Ctrl+Shift+Z) did not redo it',
    });
    await box.clearValue();

    keys('key', 'ctrl+b');
    await browser.waitUntil(
      async () => !(await (await browser.$('[data-session-list]')).isExisting()),
      {
        timeout: 10000,
        timeoutMsg: 'View → Toggle Sidebar (Ctrl+B) did not hide the sidebar',
      },
    );
    keys('key', 'ctrl+b');
    await (await browser.$('[data-session-list]')).waitForExist({ timeout: 10000 });

    // Zoom is done in Rust and saved in the app's state file.
    const stateFile = join(process.env.ACP_DESK_DATA_DIR ?? '', 'state.json');
    const zoom = () => {
      try {
        return JSON.parse(readFileSync(stateFile, 'utf8')).zoom;
      } catch {
        return undefined;
      }
    };
    keys('key', 'ctrl+equal');
    await browser.waitUntil(async () => zoom() === 1.1, {
      timeout: 10000,
      timeoutMsg: 'View → Zoom In (Ctrl+=) was not saved',
    });
    await browser.saveScreenshot(join(shots, 'zoomed-110.png'));
    keys('key', 'ctrl+0');
    await browser.waitUntil(async () => zoom() === 1, {
      timeout: 10000,
      timeoutMsg: 'View → Actual Size (Ctrl+0) was not saved',
    });

    // The log file, in the data folder's logs/ (run.sh moves the data folder), says what the
    // sessions did.
    const logs = join(process.env.ACP_DESK_DATA_DIR ?? '', 'logs');
    const files = readdirSync(logs).filter((f) => /^acp-desk\.\d{4}-\d{2}-\d{2}\.log$/.test(f));
    assert.equal(files.length, 1, `one log file: ${files}`);
    assert.match(readFileSync(join(logs, files[0]), 'utf8'), /session opened/);
  });

  it('ends the agent when the app quits (Ctrl+Q), through the orderly close', async () => {
    assert.ok(processesIn(project).length > 0, 'the agent runs in the project folder');
    // A user's Ctrl+Q (File → Quit), typed into the window with xdotool: WebDriver's own
    // Close Window ends the process instead, which only the supervisor's lifeline would cover.
    const win = execFileSync('xdotool', ['search', '--name', 'ACP Desk$'], { encoding: 'utf8' })
      .trim()
      .split('\n')[0];
    execFileSync('xdotool', ['windowfocus', '--sync', win]);
    execFileSync('xdotool', ['key', 'ctrl+q']);
    const deadline = Date.now() + 10000;
    while (processesIn(project).length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(processesIn(project), [], 'nothing is left running in the project folder');
    // The close ran (not only the lifeline): the session's audit log ends with `session-ended`,
    // which only a close writes.
    const audit = join(process.env.ACP_DESK_DATA_DIR ?? '', 'audit');
    const logs = readdirSync(audit, { recursive: true })
      .filter((f) => String(f).endsWith('.jsonl'))
      .map((f) => readFileSync(join(audit, String(f)), 'utf8'));
    assert.equal(logs.length, 1, 'one session, one audit log');
    assert.match(logs[0].trim().split('\n').at(-1), /"event":"session-ended"/);
    // The app's own state file (never the user's settings file) remembers the folder.
    const state = JSON.parse(
      readFileSync(join(process.env.ACP_DESK_DATA_DIR ?? '', 'state.json'), 'utf8'),
    );
    assert.equal(state.version, 1);
    assert.deepEqual(state.recentFolders, [project]);
    assert.ok(
      !existsSync(join(process.env.ACP_DESK_CONFIG_DIR ?? '', 'settings.json')),
      'the app never writes the settings file',
    );
    await browser.deleteSession().catch(() => undefined);
    browser = undefined;
  });
});

/** The real window's title, as the window manager sees it (not the page's `document.title`). */
function windowName() {
  try {
    const win = execFileSync('xdotool', ['search', '--name', 'ACP Desk$'], { encoding: 'utf8' })
      .trim()
      .split('\n')[0];
    return execFileSync('xdotool', ['getwindowname', win], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

async function windowNameIs(want) {
  await browser.waitUntil(async () => windowName() === want, {
    timeout: 10000,
    timeoutMsg: `the window's title never became “${want}” (it is “${windowName()}”)`,
  });
}

/** What is wider inside than its box in the header, the sidebar and the composer (as in
 * ui/playwright/layout.spec.ts: text cut on purpose ends in an ellipsis and is whole in a
 * tooltip). Read after two frames, once the layout has settled. */
async function overflowing() {
  return browser.execute(async () => {
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const out = [];
    for (const root of document.querySelectorAll('.session-header, nav.sidebar, .composer-wrap')) {
      for (const el of [root, ...root.querySelectorAll('*')]) {
        if (!(el instanceof HTMLElement) || el.offsetParent === null) continue;
        if (el.scrollWidth <= el.clientWidth) continue;
        const text = (el.textContent ?? '').replace(/\s+/g, ' ').trim();
        const tip = el.closest('[data-tip]')?.getAttribute('data-tip')?.replace(/\s+/g, ' ') ?? '';
        if (getComputedStyle(el).textOverflow === 'ellipsis' && text && tip.includes(text))
          continue;
        out.push(
          `${el.tagName}.${[...el.classList].join('.')}: ${el.scrollWidth} > ${el.clientWidth}`,
        );
      }
    }
    return out;
  });
}

describe('typing at once, and the window title', () => {
  const gate = join(tmpdir(), `acp-desk-e2e-gate-${process.pid}`);
  after(async () => {
    rmSync(gate, { force: true });
    rmSync(join(process.env.ACP_DESK_CONFIG_DIR ?? '', 'settings.json'), { force: true });
    await browser?.deleteSession().catch(() => undefined);
    browser = undefined;
  });

  it('takes a prompt typed while the agent starts, sends it once it is ready, and titles the window', async () => {
    // The demo agent behind a gate: it starts only once the test creates the file (or after
    // 30 s), so the prompt is surely typed and sent while the agent is still starting.
    const config = process.env.ACP_DESK_CONFIG_DIR;
    assert.ok(config, 'run.sh gives this run its own config folder');
    mkdirSync(config, { recursive: true });
    const demo = join(app, '..', 'acp-desk-demo-agent');
    const wait = 'i=0; while [ ! -e "$0" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done';
    writeFileSync(
      join(config, 'settings.json'),
      JSON.stringify({
        agent_servers: {
          gated: { command: '/bin/sh', args: ['-c', `${wait}; exec "$1"`, gate, demo] },
        },
      }),
    );
    browser = await launch(['--agent', 'gated', project]);
    const box = await browser.$('#composer');
    await box.waitForExist({ timeout: 20000 });
    await statusIs('starting');
    await windowNameIs(`${basename(project)} — ACP Desk`);
    assert.ok(await box.isEnabled(), 'the box takes keys while the agent starts');
    await box.setValue('stream');
    await browser.keys('Enter');
    const held = await browser.$('[data-held]');
    await held.waitForDisplayed({ timeout: 5000 });
    assert.match(await held.getProperty('textContent'), /waits for the agent to start/);
    assert.equal(
      await (await browser.$('.session-header .status')).getAttribute('data-status'),
      'starting',
      'it was sent before the agent was ready',
    );
    await browser.saveScreenshot(join(shots, 'typed-before-ready.png'));
    writeFileSync(gate, '');
    await browser.waitUntil(async () => (await lastEntry()).type === 'turn-end', {
      timeout: 30000,
      timeoutMsg: 'the waiting prompt never went out',
    });
    assert.ok(!(await held.isExisting()), 'the waiting line is gone');
    const user = (await allEntries()).filter((e) => e.type === 'user');
    assert.deepEqual(
      user.map((e) => e.text.trim()),
      ['stream'],
      'the prompt typed before ready went out once',
    );
    // A permission request waiting: counted in the title until it is answered.
    await prompt('permission');
    const dialog = await browser.$('[data-permission]');
    await dialog.waitForDisplayed({ timeout: 20000 });
    await windowNameIs(`(1) ${basename(project)} — ACP Desk`);
    await (await browser.$('[data-permission] [data-option-kind="allow_once"]')).click();
    await windowNameIs(`${basename(project)} — ACP Desk`);
    await browser.waitUntil(async () => (await lastEntry()).type === 'turn-end', {
      timeout: 30000,
      timeoutMsg: 'the permission turn did not end',
    });
  });

  it('lays the window out at 800x600 in WebKitGTK, with the sidebar shown too', async () => {
    const win = execFileSync('xdotool', ['search', '--name', 'ACP Desk$'], { encoding: 'utf8' })
      .trim()
      .split('\n')[0];
    execFileSync('xdotool', ['windowsize', win, '800', '600']);
    // Narrower than 900px: the session list folds by itself; shown again, the rest must fit.
    await (await browser.$('nav.sidebar')).waitForExist({ reverse: true, timeout: 10000 });
    assert.deepEqual(await overflowing(), [], 'nothing overflows with the sidebar folded');
    await browser.saveScreenshot(join(shots, 'layout-800x600-real.png'));
    await (await browser.$('.sidebar-toggle')).click();
    await (await browser.$('nav.sidebar')).waitForExist({ timeout: 5000 });
    assert.deepEqual(await overflowing(), [], 'nothing overflows with the sidebar shown');
  });
});

describe('bad input gets a clear message, and the window stays usable', () => {
  after(async () => {
    await browser?.deleteSession().catch(() => undefined);
    browser = undefined;
    rmSync(project, { recursive: true, force: true });
  });

  it('a folder that does not exist', async () => {
    browser = await launch(['--agent', 'demo', join(project, 'vanished')]);
    // The error's banner: without a session bus (run.sh) the desktop notice about the missing
    // notification service may be shown first.
    const banner = await browser.$('.banner[data-code]');
    await banner.waitForDisplayed({ timeout: 20000 });
    assert.equal(await banner.getAttribute('data-code'), 'folder-missing');
    assert.match(await banner.getText(), /does not exist .*Open another folder/);
    assert.match(await text('.drop-target h1'), /Drop a folder here/);
    assert.ok(await (await browser.$('.drop-target button')).isEnabled());
    await browser.saveScreenshot(join(shots, 'folder-missing.png'));
    await browser.deleteSession();
    browser = undefined;
  });

  it('an agent that cannot start', async () => {
    const config = process.env.ACP_DESK_CONFIG_DIR;
    assert.ok(config, 'run.sh gives this run its own config folder');
    mkdirSync(config, { recursive: true });
    writeFileSync(
      join(config, 'settings.json'),
      JSON.stringify({ agent_servers: { broken: { command: '/nonexistent/acp-agent' } } }),
    );
    try {
      browser = await launch(['--agent', 'broken', project]);
      await statusIs('dead');
      // Said once, on the start-failure card (not also in the thread), with what to do.
      const card = await text('[data-start-failed]');
      assert.match(card, /\/nonexistent\/acp-agent/);
      assert.match(card, /could not start/);
      assert.match(card, /Try again/);
      assert.equal(await (await browser.$$('[data-entry="error"]')).length, 0);
    } finally {
      rmSync(join(config, 'settings.json'), { force: true });
      await browser?.deleteSession().catch(() => undefined);
      browser = undefined;
    }
  });

  it('an agent that dies in the middle of a turn', async () => {
    browser = await launch(['--agent', 'demo', project]);
    await statusIs('ready');
    await prompt('crash');
    const ended = await browser.$('.ended');
    await ended.waitForDisplayed({ timeout: 20000 });
    assert.match(await ended.getText(), /exited with code 3/);
    const entries = await allEntries();
    assert.match(entries.find((e) => e.type === 'error')?.text ?? '', /exited with code 3/);
    const end = entries.filter((e) => e.type === 'turn-end');
    assert.equal(end.length, 1, 'the turn ended');
    assert.equal(
      await (await browser.$('[data-entry="turn-end"]')).getAttribute('data-reason'),
      'error',
    );
    assert.equal(
      await (await browser.$('.session-header .status')).getAttribute('data-status'),
      'dead',
    );
    await browser.saveScreenshot(join(shots, 'agent-crashed.png'));
    // Reconnect: a new agent process for the same session, its thread kept (the built-in demo
    // offers neither resume nor load: it goes on as a new agent session, saying so).
    const before = (await allEntries()).length;
    await (await browser.$('.ended [data-reconnect]')).click();
    await statusIs('ready');
    const kept = await allEntries();
    assert.ok(kept.length >= before, `the thread is kept (${kept.length} < ${before})`);
    assert.ok(
      kept.some((e) => e.type === 'user' && /crash/.test(e.text)),
      'the crashed turn is still shown',
    );
    assert.equal((await browser.$$('[data-session-list] li')).length, 1, 'in its place');
    // It dies again; the window stays usable: a new session in the same folder, in the ended
    // one's place.
    await prompt('crash');
    await statusIs('dead');
    await (await browser.$('.ended button.secondary')).click();
    await statusIs('ready');
    assert.equal((await lastEntry()).count, 0, 'the new session starts clean');
    assert.equal(
      (await browser.$$('[data-session-list] li')).length,
      1,
      'it replaced the ended one',
    );
  });
});
