// End to end: the Agents view of the real app (run.sh: Xvfb, tauri-driver), with the real demo
// agent. A settings file broken on purpose (in run.sh's ACP_DESK_CONFIG_DIR, this test's only)
// is named with its line and field, in the view and in the main window, while `--agent demo`
// opens and answers; Check starts the demo agent for real and shows its name and version.
import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { app, launchApp, turn } from './lib.mjs';

const shots = process.env.E2E_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'acp-desk-shots-'));
mkdirSync(shots, { recursive: true });
const project = realpathSync(mkdtempSync(join(tmpdir(), 'acp-desk-e2e-agents-')));
writeFileSync(join(project, 'README.md'), '# A project for the Agents view\n');

const config = process.env.ACP_DESK_CONFIG_DIR;
const data = process.env.ACP_DESK_DATA_DIR ?? '';
/** What the data folder held before: the other files' tests count audit logs and sessions in
 * it, so whatever this one adds (its session's audit log, history, state) goes afterwards. */
let dataBefore = [];
const settings = config ? join(config, 'settings.json') : null;
// Line 4: `args` is a string, not a list; the entry before it is fine and stays usable.
const broken = `{
  "agent_servers": {
    "fine": { "command": "/bin/true" },
    "wrong": { "command": "wrong-agent", "args": "--acp" },
  },
}
`;

let browser;

/** Live demo agents started by this run's app (its descendants): other runs on the machine
 * have their own. */
function demoAgents() {
  const exe = realpathSync(app);
  const procs = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [, comm, state, ppid] = /^\d+ \((.*)\) (\S) (\d+)/.exec(stat) ?? [];
      let self = '';
      try {
        self = readlinkSync(`/proc/${pid}/exe`);
      } catch {
        // not ours to read
      }
      procs.push({ pid, comm, state, ppid, self });
    } catch {
      // gone
    }
  }
  const ours = new Set(procs.filter((p) => p.self === exe).map((p) => p.pid));
  for (let grew = true; grew;) {
    grew = false;
    for (const p of procs) {
      if (!ours.has(p.pid) && ours.has(p.ppid)) {
        ours.add(p.pid);
        grew = true;
      }
    }
  }
  // PID 1 here does not reap orphans: a zombie is not a live process.
  return procs.filter(
    (p) => ours.has(p.pid) && p.state !== 'Z' && p.comm.startsWith('acp-desk-demo'),
  ).length;
}

async function text(selector) {
  return (await browser.$(selector)).getProperty('textContent');
}

describe('the Agents view, end to end', () => {
  before(async () => {
    assert.ok(settings, 'run.sh sets ACP_DESK_CONFIG_DIR (never the user’s own settings)');
    mkdirSync(config, { recursive: true });
    writeFileSync(settings, broken);
    mkdirSync(data, { recursive: true });
    dataBefore = readdirSync(data);
    rmSync(join(data, 'state.json'), { force: true });
    browser = await launchApp(['--agent', 'demo', project]);
  });

  after(async () => {
    await browser?.deleteSession().catch(() => undefined);
    if (settings) rmSync(settings, { force: true });
    for (const added of readdirSync(data).filter((f) => !dataBefore.includes(f))) {
      rmSync(join(data, added), { recursive: true, force: true });
    }
  });

  it('still opens --agent demo with the settings file broken, and says what is wrong in it', async () => {
    const status = await browser.$('.session-header .status');
    await status.waitForExist({ timeout: 20000 });
    await browser.waitUntil(async () => (await status.getAttribute('data-status')) === 'ready', {
      timeout: 20000,
      timeoutMsg: 'the demo agent never became ready',
    });
    const notice = await browser.$('[data-settings-notice]');
    await notice.waitForExist({ timeout: 20000 });
    const said = await notice.getProperty('textContent');
    assert.match(said, /Your settings file has an error/);
    assert.ok(said.includes(`${settings}:4:`), said);
    assert.match(said, /agent_servers\.wrong\.args/);
    await turn(browser, 'hello');
    await browser.saveScreenshot(join(shots, 'agents-settings-notice.png'));
  });

  it('lists the agents with the problem at the top, the valid entry and the one with the error', async () => {
    await (await browser.$('[data-agents-toggle]')).click();
    const demo = await browser.$('[data-agent="demo"]');
    await demo.waitForExist({ timeout: 20000 });
    const problems = await text('[data-agent-problems]');
    assert.ok(problems.includes(`${settings}:4:`), problems);
    assert.match(problems, /agent_servers\.wrong\.args/);
    const fine = await browser.$('[data-agent="fine"]');
    assert.ok(await fine.isExisting(), 'the valid entry is listed');
    assert.equal(await fine.getAttribute('data-source'), 'settings');
    // The entry with the error is listed as such, not started.
    const wrong = await browser.$('[data-agent="wrong"]');
    assert.equal(await wrong.getAttribute('data-status'), 'invalid');
    assert.match(await wrong.getProperty('textContent'), /Has errors/);
    await browser.saveScreenshot(join(shots, 'agents-view.png'));
  });

  it('checks the demo agent for real: its name and version, each step timed, nothing left running', async () => {
    const demo = await browser.$('[data-agent="demo"]');
    const before = demoAgents();
    assert.equal(before, 1, 'the session’s own demo agent runs');
    await (await demo.$('button=Check')).click();
    const result = await demo.$('[data-check-result]');
    await result.waitForExist({ timeout: 30000 });
    assert.equal(await result.getAttribute('data-check-result'), 'ok');
    const identity = await (await demo.$('[data-check-identity]')).getProperty('textContent');
    assert.match(identity, /demo/i);
    assert.match(identity, /\d+\.\d+\.\d+/, `a version: ${identity}`);
    const steps = await (await demo.$('[data-check-steps]')).getProperty('textContent');
    assert.match(steps, /^start \d+(\.\d)? m?s · initialize \d+(\.\d)? m?s$/, steps);
    await browser.saveScreenshot(join(shots, 'agents-check.png'));
    // Check's agent is ended before the report: only the session's own agent runs.
    assert.equal(demoAgents(), before, 'Check left no agent running');
  });
});
