import { describe, expect, it } from 'vitest';
import { agentListing, FakeBackend } from '../test/fake-backend';
import {
  AgentsController,
  capabilityList,
  differenceText,
  filterAgents,
  groupAgents,
  identityText,
  originText,
  pickerAgents,
  pickerLabel,
  problemText,
  progressText,
  statusWords,
  stepsText,
  type AgentEntry,
  type AgentListing,
  type AgentStatus,
  type CheckReport,
  type InstallProgress,
} from './agents';

const agent = (over: Partial<AgentEntry>): AgentEntry => ({
  id: 'x',
  name: 'X',
  source: 'registry',
  alsoDefinedIn: [],
  command: 'x',
  envNames: [],
  status: 'found',
  installable: false,
  problems: [],
  ...over,
});

describe('the words', () => {
  it('says every status in plain words, and what each means', () => {
    const all: AgentStatus[] = [
      'found',
      'downloads',
      'missing',
      'not-installed',
      'unavailable',
      'unsupported',
      'invalid',
    ];
    const labels = all.map((s) => statusWords(s).label);
    expect(labels).toEqual([
      'Installed',
      'Downloads on first use',
      'Not installed',
      'Not installed',
      'Not for this computer',
      'Cannot be used',
      'Has errors',
    ]);
    // The two "Not installed" differ in what to do.
    expect(statusWords('missing').meaning).toContain('install it');
    expect(statusWords('not-installed').meaning).toContain('Install fetches');
  });

  it('writes a problem as FILE:LINE:COL: FIELD: MESSAGE, leaving out what is not known', () => {
    expect(
      problemText({
        file: '/c/settings.json',
        line: 4,
        column: 17,
        field: 'agent_servers.x.args',
        message: 'expected a list of strings, found a string',
        severity: 'error',
      }),
    ).toBe(
      '/c/settings.json:4:17: agent_servers.x.args: expected a list of strings, found a string',
    );
    expect(problemText({ file: '/r.json', message: 'not JSON', severity: 'error' })).toBe(
      '/r.json: not JSON',
    );
    expect(
      problemText({ file: '/a/ACP.md', line: 2, field: 'name', message: 'm', severity: 'warning' }),
    ).toBe('/a/ACP.md:2: name: m');
  });

  it('says a check: steps with their times, who the agent says it is, its capabilities', () => {
    const r: CheckReport = {
      agent: 'demo',
      ok: true,
      steps: [
        { name: 'start', millis: 12, ok: true },
        { name: 'initialize', millis: 1520, ok: true },
      ],
      agentName: 'acp-desk-demo',
      agentTitle: 'ACP Desk Demo',
      agentVersion: '0.1.0',
      protocolVersion: 1,
      capabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
        mcpCapabilities: {},
        _meta: { secret: true },
      },
      authMethods: [],
      differences: [],
      warnings: [],
    };
    expect(stepsText(r)).toBe('start 12 ms · initialize 1.5 s');
    expect(identityText(r)).toBe('ACP Desk Demo 0.1.0 (acp-desk-demo), protocol 1');
    expect(capabilityList(r.capabilities)).toEqual([
      'loadSession',
      'promptCapabilities.image',
      'promptCapabilities.embeddedContext',
    ]);
    expect(stepsText({ ...r, steps: [{ name: 'start', millis: 3, ok: false }] })).toBe(
      'start 3 ms (failed)',
    );
    expect(
      identityText({
        ...r,
        agentName: null,
        agentTitle: null,
        agentVersion: null,
        protocolVersion: null,
      }),
    ).toBeNull();
    expect(
      differenceText({ path: 'promptCapabilities.image', declared: true, reported: false }),
    ).toBe('promptCapabilities.image: the manifest declares true, the agent reports false');
    expect(differenceText({ path: 'loadSession', declared: true })).toBe(
      'loadSession: the manifest declares true, the agent reports nothing',
    );
  });

  it('names where an entry comes from without repeating its source', () => {
    expect(originText(agent({ source: 'builtin', origin: 'built in' }))).toBeNull();
    expect(
      originText(
        agent({ source: 'registry', origin: 'ACP registry snapshot 2026-02-07 (3de1678)' }),
      ),
    ).toBe('snapshot 2026-02-07 (3de1678)');
    expect(originText(agent({ source: 'settings', origin: '/c/settings.json' }))).toBe(
      '/c/settings.json',
    );
    expect(originText(agent({ source: 'registry' }))).toBeNull();
  });

  it('says how far an install is', () => {
    const p = (phase: InstallProgress['phase'], downloaded: number, total?: number) =>
      progressText({ agent: 'k', phase, downloaded, total: total ?? null });
    expect(p('downloading', 1_200_000, 3_400_000)).toBe('Downloading: 1.2 of 3.4 MB');
    expect(p('downloading', 500_000)).toBe('Downloading: 0.5 MB');
    expect(p('verifying', 0)).toBe('Checking its sha256…');
    expect(p('extracting', 0)).toBe('Unpacking…');
  });
});

describe('filtering and grouping', () => {
  const agents = [
    agent({ id: 'demo', name: 'Demo', source: 'builtin' }),
    agent({ id: 'mine', name: 'Mine', source: 'settings', status: 'missing' }),
    agent({ id: 'zed', name: 'Zeta', description: 'Writes Rust', status: 'downloads' }),
    agent({ id: 'alpha', name: 'Alpha', status: 'unavailable' }),
    agent({ id: 'kimi', name: 'Kimi CLI', status: 'not-installed', installable: true }),
    agent({ id: 'bee', name: 'Bee', status: 'found' }),
  ];

  it('finds agents by id, name or description, every word, any case', () => {
    expect(filterAgents(agents, 'rust').map((a) => a.id)).toEqual(['zed']);
    expect(filterAgents(agents, 'KIMI cli').map((a) => a.id)).toEqual(['kimi']);
    expect(filterAgents(agents, 'kimi rust')).toEqual([]);
    expect(filterAgents(agents, '  ').length).toBe(agents.length);
    expect(filterAgents(agents, 'mine').map((a) => a.id)).toEqual(['mine']);
  });

  it('puts yours first in the listing order, then installed registry agents, the rest folded by status', () => {
    const g = groupAgents(agents);
    expect(g.yours.map((a) => a.id)).toEqual(['demo', 'mine']);
    expect(g.registryReady.map((a) => a.id)).toEqual(['bee']);
    // Downloads on first use, then to install, then not for this computer.
    expect(g.registryMore.map((a) => a.id)).toEqual(['zed', 'kimi', 'alpha']);
  });

  it('offers in the pickers your agents, installed registry ones and the current one', () => {
    const listing: AgentListing = { ...agentListing(), agents };
    expect(pickerAgents(listing, 'demo').map((a) => a.id)).toEqual(['demo', 'mine', 'bee']);
    expect(pickerAgents(listing, 'zed').map((a) => a.id)).toEqual(['demo', 'mine', 'zed', 'bee']);
    expect(pickerLabel(agents[1] as AgentEntry)).toBe('Mine (not installed)');
    expect(pickerLabel(agents[2] as AgentEntry)).toBe('Zeta');
  });
});

describe('AgentsController', () => {
  it('hands every new listing on, and says when the first cannot be read', async () => {
    const b = new FakeBackend();
    const heard: (AgentListing | null)[] = [];
    const c = new AgentsController(b, (l) => heard.push(l));
    b.listError = { code: 'internal', message: 'boom' };
    await c.refresh();
    expect(heard).toEqual([null]);
    expect(c.state.listError?.message).toBe('boom');
    b.listError = null;
    await c.refresh();
    expect(heard.at(-1)?.agents[0]?.id).toBe('demo');
    expect(c.state.listError).toBeNull();
  });

  it('keeps each check apart: a passed one and a failed one with its reason', async () => {
    const b = new FakeBackend();
    const c = new AgentsController(b);
    b.checks.set('gemini', {
      agent: 'gemini',
      ok: false,
      steps: [{ name: 'start', millis: 1, ok: false }],
      authMethods: [],
      differences: [],
      warnings: [],
      failure: {
        kind: 'not-installed',
        message: 'gemini was not found on PATH',
        fix: 'npm i -g …',
      },
    });
    const both = Promise.all([c.check('demo'), c.check('gemini')]);
    expect(c.state.checks.demo?.running).toBe(true);
    await both;
    expect(c.state.checks.demo?.report?.ok).toBe(true);
    expect(c.state.checks.gemini?.report?.failure?.kind).toBe('not-installed');
    b.checks.set('gone', { code: 'agent-unknown', message: 'there is no agent `gone`' });
    await c.check('gone');
    expect(c.state.checks.gone?.error?.code).toBe('agent-unknown');
  });

  it('shows an install as it goes, then the new listing; a failed one says why', async () => {
    const b = new FakeBackend();
    const seen: string[] = [];
    const c = new AgentsController(b);
    c.subscribe((v) => {
      const p = v.installs.kimi?.progress;
      // Each change once (other changes of the view repeat the same progress).
      if (p && seen.at(-1) !== progressText(p)) seen.push(progressText(p));
    });
    await c.install('kimi');
    expect(seen).toEqual(['Downloading: 0.5 of 1.0 MB', 'Checking its sha256…', 'Installed.']);
    expect(c.state.listing?.agents.find((a) => a.id === 'kimi')?.status).toBe('found');
    b.installError = { code: 'invalid-input', message: 'the download’s sha256 is abc, not def' };
    await c.install('kimi');
    expect(c.state.installs.kimi).toEqual({
      running: false,
      progress: null,
      error: { code: 'invalid-input', message: 'the download’s sha256 is abc, not def' },
    });
  });

  it('imports a registry file (or nothing when the dialog is cancelled)', async () => {
    const b = new FakeBackend();
    const c = new AgentsController(b);
    await c.importRegistry();
    expect(c.state.said).toBeNull();
    b.imported = {
      registry: {
        kind: 'imported',
        label: 'ACP registry imported from /home/me/registry.json on 2026-12-01',
        file: '/home/me/registry.json',
        agents: 31,
      },
      problems: [{ file: '/home/me/registry.json', message: 'x', severity: 'warning' }],
      listing: agentListing(),
    };
    await c.importRegistry();
    expect(c.state.said).toBe(
      'ACP registry imported from /home/me/registry.json on 2026-12-01: 31 agents from it are listed (1 of its entries cannot be used).',
    );
  });
});
