// End to end: the app as a desktop citizen, on a private session bus (run.sh runs this file
// inside dbus-run-session) where tests/src/bin/fake-desktop.rs is the notification server
// (recording every Notify), the tray host (a StatusNotifierWatcher reading the tray item and its
// menu) and the launcher. Another X window (xmessage) takes the focus, as another application
// would. A permission request of the demo agent and the replayed shell request of claude-code-acp
// reach the desktop without their command; Reject from the notification answers; a second launch
// hands its folder over; quitting leaves no process behind.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { app, launchApp, processesIn } from './lib.mjs';

const repo = resolve(import.meta.dirname, '..', '..');
const fakeDesktop = process.env.FAKE_DESKTOP ?? join(dirname(app), 'fake-desktop');
const replayAgent = join(repo, 'tests', 'fake-agents', 'claude-code-acp-replay.mjs');
const demoAgent = join(dirname(app), 'acp-desk-demo-agent');
const config = process.env.ACP_DESK_CONFIG_DIR ?? '';
const data = process.env.ACP_DESK_DATA_DIR ?? '';
const folder = (name) => realpathSync(mkdtempSync(join(tmpdir(), `acp-desk-${name}-`)));
const first = folder('desk');
const second = folder('handed');
const shell = folder('shell');
const scenarios = folder('scenarios');
/** The command claude-code-acp's recorded shell call runs (its tool title is this, in backticks). */
const command = 'echo hi-from-bash > out.txt && cat out.txt';

/** How long a request waits before it notifies (attention::NOTIFY_DELAY), and some slack. */
const NOTIFY_DELAY_MS = 2000;

let browser;
let elsewhere;

/** `fake-desktop call ARGS`: what the fake desktop saw, as JSON. */
function desk(...args) {
  const out = execFileSync(fakeDesktop, ['call', ...args.map(String)], { encoding: 'utf8' });
  return out.trim() === '' ? null : JSON.parse(out);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it answers something truthy; fails saying `why` (a text, or a function
 * making one from what is there then). */
async function until(probe, why, timeout = 15000) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    last = await probe();
    if (last) return last;
    if (Date.now() > deadline) {
      assert.fail(`${typeof why === 'function' ? await why() : why} (after ${timeout} ms)`);
    }
    await sleep(100);
  }
}

/** Live processes running the app binary (not zombies). */
function appProcesses() {
  const want = realpathSync(app);
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((pid) => {
      try {
        return (
          readlinkSync(`/proc/${pid}/exe`) === want &&
          !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
        );
      } catch {
        return false;
      }
    });
}

/** A process's command line, as ps shows it. */
function cmdline(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/** Starts the app in a WebDriver session once no earlier one runs: it is single-instance here
 * (a D-Bus name), so a launch while the last one still exits would hand its folder to that. */
async function launch(args) {
  await until(() => appProcesses().length === 0, 'an earlier app is still running', 20000);
  await until(
    () =>
      !desk('names').some((n) => n.endsWith('.SingleInstance') || n.includes('.SingleInstance.')),
    () => `an earlier app still holds its single-instance name: ${desk('names')}`,
    20000,
  );
  // No sidebar to restore, and the default size: another file's 800x600 (window-state.json,
  // restored by the app) would fold the sidebar these tests read.
  rmSync(join(data, 'state.json'), { force: true });
  rmSync(join(data, 'window-state.json'), { force: true });
  return launchApp(args);
}

function windowId() {
  return execFileSync('xdotool', ['search', '--name', 'ACP Desk$'], { encoding: 'utf8' })
    .trim()
    .split('\n')[0];
}

/** Gives the focus to another X window, as a user switching to another application does, and
 * waits until the page knows it lost it. */
async function focusElsewhere() {
  if (!elsewhere) {
    elsewhere = spawn('xmessage', ['-geometry', '320x80+900+600', 'another application'], {
      stdio: 'ignore',
    });
  }
  const win = await until(() => {
    try {
      return execFileSync('xdotool', ['search', '--name', '^xmessage$'], { encoding: 'utf8' })
        .trim()
        .split('\n')[0];
    } catch {
      return '';
    }
  }, 'the xmessage window never appeared');
  execFileSync('xdotool', ['windowfocus', '--sync', win]);
  await until(
    async () => !(await browser.execute(() => document.hasFocus())),
    'the app did not see its window lose the focus (document.hasFocus() stays true)',
    5000,
  );
}

async function statusIs(want) {
  const status = await browser.$('.session-header .status');
  await status.waitForExist({ timeout: 20000 });
  await browser.waitUntil(async () => (await status.getAttribute('data-status')) === want, {
    timeout: 20000,
    timeoutMsg: `the session never became ${want}`,
  });
}

async function prompt(words) {
  const box = await browser.$('#composer');
  await box.waitForEnabled({ timeout: 20000 });
  await box.setValue(words);
  await (await browser.$('#send')).click();
}

/** The Notify calls of this test, once `count` arrived; then waits one more delay to be sure
 * no other one follows. */
async function notifications(count, why) {
  await until(() => desk('notifications').length >= count, why, NOTIFY_DELAY_MS + 8000);
  await sleep(NOTIFY_DELAY_MS + 500);
  return desk('notifications');
}

/** The app's tray item as the tray host reads it now. */
async function trayItem() {
  return until(() => {
    const items = desk('tray').items.filter((i) => i.alive && i.props);
    return items.length === 1 ? items[0] : null;
  }, 'the app registered no tray item with the StatusNotifierWatcher (or more than one)');
}

/** The shown texts of the tray menu's entries. */
async function trayEntries() {
  return ((await trayItem()).entries ?? []).map((e) => e.text);
}

/** The tray's title (XAyatanaLabel, where Tauri's set_title goes on Linux). */
async function trayTitle() {
  return (await trayItem()).props.XAyatanaLabel ?? '';
}

/** Every word of the command line longer than two characters: none may leave the window. */
const commandParts = [command, ...command.split(/\s+/).filter((w) => w.length > 2)];

function leaks(text) {
  return commandParts.filter((p) => text.includes(p));
}

before(() => {
  mkdirSync(config, { recursive: true });
  // A turn that leaves a terminal (sleep) running: ACP terminals live until released.
  writeFileSync(
    join(scenarios, 'hold.json'),
    JSON.stringify({
      name: 'hold',
      description: 'Leaves a terminal running a long sleep, never released.',
      keywords: ['hold'],
      steps: [
        { say: { text: 'Holding a terminal.\n' } },
        { terminal: { command: 'sleep', args: ['300'], tool_call_id: 'hold-1', then: [] } },
      ],
    }),
  );
  writeFileSync(
    join(config, 'settings.json'),
    JSON.stringify({
      agent_servers: {
        // With a grandchild of its own (sleep, in its own session): quitting must end it too.
        'demo-desk': {
          command: demoAgent,
          args: ['--scenario-dir', scenarios, '--spawn-orphan'],
        },
        'claude-replay': { command: process.execPath, args: [replayAgent] },
      },
    }),
  );
});

after(() => {
  elsewhere?.kill();
  for (const d of [first, second, shell, scenarios]) rmSync(d, { recursive: true, force: true });
  rmSync(join(config, 'settings.json'), { force: true });
});

describe('a waiting request reaches the desktop', () => {
  before(async () => {
    browser = await launch(['--agent', 'demo-desk', first]);
  });

  after(async () => {
    await browser?.deleteSession().catch(() => undefined);
    browser = undefined;
  });

  it('registers its tray item with the tray host, with Show/Hide and Quit in its menu', async () => {
    await statusIs('ready');
    const tray = desk('tray');
    assert.ok(tray.registered.length >= 1, 'RegisterStatusNotifierItem was called');
    const entries = await trayEntries();
    assert.ok(
      entries.some((e) => /^(Show|Hide)/.test(e)),
      `the menu has Show/Hide: ${entries}`,
    );
    assert.ok(entries.includes('Quit'), `the menu has Quit: ${entries}`);
  });

  it('notifies once, naming agent and folder, for a demo request waiting in the background', async () => {
    desk('reset');
    await focusElsewhere();
    await prompt('permission');
    const dialog = await browser.$('[data-permission]');
    await dialog.waitForDisplayed({ timeout: 20000 });
    if (await browser.execute(() => document.hasFocus())) await focusElsewhere();
    const calls = await notifications(1, 'no Notify reached the notification server');
    assert.equal(calls.length, 1, `exactly one notification: ${JSON.stringify(calls)}`);
    const [n] = calls;
    console.log(`# notified: ${n.summary} / ${n.body} / ${n.actions.map((a) => a.label)}`);
    const said = `${n.summary}\n${n.body}`;
    assert.match(said, /demo-desk/, `the agent is named: ${said}`);
    assert.match(said, new RegExp(basename(first)), `the folder is named: ${said}`);
    assert.doesNotMatch(said, /cargo test/, 'an execute call is shown by its kind only');
    assert.ok(
      !n.actions.some((a) => /allow/i.test(`${a.key} ${a.label}`)),
      `no Allow for a command: ${JSON.stringify(n.actions)}`,
    );
  });

  it('lists the waiting session in the tray menu, with the count in its title', async () => {
    const entries = await until(async () => {
      const e = await trayEntries();
      return e.some((t) => t.includes(basename(first))) ? e : null;
    }, 'the tray menu never listed the waiting session');
    assert.match(entries[0], /1 request/, `the first line counts: ${entries}`);
    const item = (await trayItem()).entries.find((e) => e.text.includes(basename(first)));
    assert.match(item.text, /demo-desk/, 'the entry names the agent');
    assert.doesNotMatch(item.text, /cargo test/, 'and not the command');
    assert.equal(await trayTitle(), '1', 'the tray title is the count');
    const counts = desk('launcher');
    assert.equal(counts.at(-1)?.props.count, 1, `the launcher count: ${JSON.stringify(counts)}`);
  });

  it('answers the request with Reject from the notification: the dialog closes, the count drops', async () => {
    const [n] = desk('notifications');
    const reject = n.actions.find((a) => /reject/i.test(a.label));
    assert.ok(reject, `the notification offers Reject: ${JSON.stringify(n.actions)}`);
    desk('invoke-action', n.id, reject.key);
    await (
      await browser.$('[data-permission]')
    ).waitForDisplayed({ reverse: true, timeout: 10000 });
    const settled = await browser.execute(
      () => [...document.querySelectorAll('[data-entry="settled"]')].at(-1)?.textContent ?? '',
    );
    assert.match(settled, /Reject/, `the thread says it was rejected: ${settled}`);
    await until(
      async () => !(await trayEntries()).some((t) => t.includes(basename(first))),
      'the tray menu still lists the answered request',
    );
    assert.notEqual(await trayTitle(), '1', 'the tray title no longer counts it');
    const last = desk('launcher').at(-1)?.props ?? {};
    assert.ok(last.count === 0 || last['count-visible'] === false, 'the launcher count is gone');
  });

  it('opens the folder of a second launch in the first instance, and the second exits', async () => {
    const before = appProcesses();
    const started = Date.now();
    const second_ = spawn(app, ['--agent', 'demo-desk', second], { stdio: 'ignore' });
    const code = await new Promise((r) => {
      const timer = setTimeout(() => {
        second_.kill('SIGKILL');
        r('still running after 20 s');
      }, 20000);
      second_.on('exit', (c) => {
        clearTimeout(timer);
        r(c);
      });
    });
    assert.equal(code, 0, 'the second launch exits once it handed its folder over');
    assert.deepEqual(appProcesses(), before, 'only the first instance runs');
    await until(
      async () =>
        (
          await browser.execute(() =>
            [...document.querySelectorAll('[data-session-list] li')].map(
              (li) => li.textContent ?? '',
            ),
          )
        ).some((t) => t.includes(basename(second))),
      async () =>
        `the first window has no session for the handed-over folder ${basename(second)}; ` +
        `the sidebar: ${await browser.execute(() => document.querySelector('[data-session-list]')?.textContent ?? '(none)')}; ` +
        `windows: ${execFileSync('xdotool', ['search', '--name', 'ACP Desk'], { encoding: 'utf8' }).trim().split('\n').length}`,
    );
    console.log(`# second launch to handed over: ${Date.now() - started} ms`);
  });

  it('quits from the tray and leaves no agent, terminal or grandchild behind', async () => {
    // Back to the first folder's session: a turn that leaves a terminal running (the agent
    // never releases it).
    await browser.execute((name) => {
      const items = [...document.querySelectorAll('[data-session-list] li')];
      const li = items.find((l) => l.querySelector('.session-name')?.textContent === name);
      li?.querySelector('.session-select')?.click();
    }, basename(first));
    await until(
      async () =>
        (await (await browser.$('.session-header .folder')).getAttribute('data-tip')) === first,
      'the first session could not be shown again',
    );
    await prompt('hold');
    const held = await until(
      () => {
        const live = processesIn(first).map((p) => cmdline(p));
        return live.some((c) => /(^|\/)sleep 300$/.test(c)) ? live : null;
      },
      async () => {
        const live = processesIn(first).map((p) => cmdline(p));
        const said = await browser.execute(() => document.querySelector('main')?.textContent ?? '');
        return `the terminal (sleep 300) never started; in ${first}: ${live}; the window: ${said.slice(-600)}`;
      },
    );
    assert.ok(
      held.some((c) => c.startsWith(demoAgent)),
      `the agent runs: ${held}`,
    );
    assert.ok(
      held.some((c) => /(^|\/)sleep 3600$/.test(c)),
      `the agent's grandchild runs: ${held}`,
    );

    // The turn has ended (the terminal was never released): Quit does not ask, it quits.
    await until(
      async () =>
        (await browser.execute(
          () =>
            document.querySelector('.session-header .status')?.getAttribute('data-status') ?? '',
        )) === 'ready',
      'the hold turn did not end',
    );
    desk('click-tray', 'Quit');
    await until(() => appProcesses().length === 0, 'the app did not exit after Quit', 15000);
    const left = [first, second].flatMap((d) => processesIn(d).map((p) => `${p}: ${cmdline(p)}`));
    assert.deepEqual(left, [], 'no agent, terminal or grandchild is left');
    await until(
      () => desk('tray').registered.length === 0,
      'the tray item stays registered after the app exited',
    );
    await browser.deleteSession().catch(() => undefined);
    browser = undefined;
  });
});

describe('a claude-code-acp shell request: its command never leaves the window', () => {
  before(async () => {
    browser = await launch(['--agent', 'claude-replay', shell]);
  });

  after(async () => {
    await browser?.deleteSession().catch(() => undefined);
    browser = undefined;
  });

  it('notifies without the command and without Allow; the tray entry has no command', async () => {
    await statusIs('ready');
    desk('reset');
    await focusElsewhere();
    await prompt('run a shell command');
    const dialog = await browser.$('[data-permission]');
    await dialog.waitForDisplayed({ timeout: 20000 });
    assert.match(await dialog.getText(), /hi-from-bash/, 'the window shows what would run');
    if (await browser.execute(() => document.hasFocus())) await focusElsewhere();
    const calls = await notifications(1, 'no Notify reached the notification server');
    assert.equal(calls.length, 1, `one notification: ${JSON.stringify(calls)}`);
    const [n] = calls;
    console.log(`# notified: ${n.summary} / ${n.body} / ${n.actions.map((a) => a.label)}`);
    assert.deepEqual(
      leaks(`${n.summary}\n${n.body}`),
      [],
      `no command text: ${n.summary} / ${n.body}`,
    );
    assert.deepEqual(leaks(JSON.stringify(n.actions)), [], 'none in the actions either');
    assert.ok(
      !n.actions.some((a) => /allow/i.test(`${a.key} ${a.label}`)),
      `no Allow action: ${JSON.stringify(n.actions)}`,
    );
    assert.ok(
      n.actions.some((a) => /reject/i.test(a.label)),
      'Reject is offered',
    );
    assert.match(`${n.summary} ${n.body}`, /claude-replay/, 'the agent is named');
    // What it says instead: the kind (so the engine kept the call's `execute` kind through the
    // adapter's updates) and the folder.
    assert.equal(
      n.body,
      `wants to run a command in ${basename(shell)}`,
      `the kind and the folder: ${n.body}`,
    );

    const entries = await until(async () => {
      const e = await trayEntries();
      return e.some((t) => t.includes(basename(shell))) ? e : null;
    }, 'the tray menu never listed the waiting session');
    assert.deepEqual(leaks(entries.join('\n')), [], `no command text in the tray: ${entries}`);
    assert.deepEqual(leaks(await trayTitle()), [], 'nor in its title');
  });

  it('quits with File → Quit once answered, leaving no agent behind', async () => {
    await (await browser.$('[data-permission] [data-option-kind="reject_once"]')).click();
    await (
      await browser.$('[data-permission]')
    ).waitForDisplayed({ reverse: true, timeout: 10000 });
    const agents = processesIn(shell).map(cmdline);
    assert.ok(
      agents.some((c) => c.includes(replayAgent)),
      `the replay agent runs: ${agents}`,
    );
    execFileSync('xdotool', ['windowfocus', '--sync', windowId()]);
    execFileSync('xdotool', ['key', 'ctrl+q']);
    await until(() => appProcesses().length === 0, 'the app did not exit after Ctrl+Q', 15000);
    assert.deepEqual(processesIn(shell).map(cmdline), [], 'no agent is left');
    await browser.deleteSession().catch(() => undefined);
    browser = undefined;
  });
});
