// The Agents view through the App: reached from the empty window and the sidebar, the list,
// the filter, Check, Install, "Use for new sessions" (the pickers follow it), and the problems
// of the settings file (in the view, and as a notice in the main window).
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import App from '../../App.svelte';
import { FakeBackend, agentListing, appInfo } from '../../test/fake-backend';

const now = (fn: () => void) => fn();
afterEach(() => cleanup());

const card = (id: string) => document.querySelector(`[data-agent="${id}"]`) as HTMLElement;

async function openView(backend = new FakeBackend()): Promise<FakeBackend> {
  render(App, { backend, schedule: now });
  await fireEvent.click(await screen.findByText('See every agent'));
  await waitFor(() => expect(card('demo')).toBeTruthy());
  return backend;
}

describe('the Agents view', () => {
  it('lists every agent with where it comes from and whether it is found', async () => {
    await openView();
    const demo = card('demo');
    expect(demo.dataset.status).toBe('found');
    expect(within(demo).getByText('Built in')).toBeTruthy();
    expect(within(demo).getByText('Installed')).toBeTruthy();
    expect(within(demo).getByText('Used for new sessions')).toBeTruthy();
    const gemini = card('gemini');
    expect(within(gemini).getByText('Not installed')).toBeTruthy();
    expect(gemini.querySelector('.agent-install-cmd code')?.textContent).toBe(
      'npm install -g @google/gemini-cli',
    );
    // Registry agents not installed are folded below yours.
    const more = document.querySelector('details.more') as HTMLDetailsElement;
    expect(more.open).toBe(false);
    expect(within(more).getByText('2 registry agents, not installed here yet')).toBeTruthy();
    expect(within(card('kimi')).getByText('snapshot 2026-11-20 (abc1234)')).toBeTruthy();
    expect(document.querySelector('[data-new-session-agent]')?.textContent).toContain(
      'the demo agent: nothing else is installed',
    );
  });

  it('filters by name, id or description, and says when nothing matches', async () => {
    await openView();
    const filter = screen.getByLabelText('Filter agents');
    await fireEvent.input(filter, { target: { value: 'mcp' } });
    expect(document.querySelectorAll('[data-agent]')).toHaveLength(1);
    expect(card('fast-agent')).toBeTruthy();
    // A filter opens the folded registry agents.
    expect((document.querySelector('details.more') as HTMLDetailsElement).open).toBe(true);
    await fireEvent.input(filter, { target: { value: 'nothing-like-it' } });
    expect(document.querySelector('[data-agents-none]')?.textContent).toContain('nothing-like-it');
    await fireEvent.keyDown(window, { key: 'Escape' });
    expect((filter as HTMLInputElement).value).toBe('');
    expect(document.querySelectorAll('[data-agent]')).toHaveLength(4);
  });

  it('checks an agent and shows what it said; a failed check says why and what to do', async () => {
    const backend = new FakeBackend();
    backend.checks.set('gemini', {
      agent: 'gemini',
      ok: false,
      steps: [{ name: 'start', millis: 2, ok: false }],
      authMethods: [],
      differences: [],
      warnings: [],
      failure: {
        kind: 'not-installed',
        message: 'the agent command `gemini` was not found on PATH',
        fix: 'install it with `npm install -g @google/gemini-cli`',
      },
    });
    await openView(backend);
    await fireEvent.click(within(card('demo')).getByText('Check'));
    const ok = await waitFor(() => {
      const r = card('demo').querySelector('[data-check-result="ok"]');
      if (!r) throw new Error('no result yet');
      return r as HTMLElement;
    });
    expect(ok.textContent).toContain('ACP Desk Demo 0.1.0 (acp-desk-demo), protocol 1');
    expect(ok.textContent).toContain('start 4 ms · initialize 31 ms');
    expect(ok.textContent).toContain('promptCapabilities.image');
    expect(ok.textContent).toContain('it asks for none');
    await fireEvent.click(within(card('gemini')).getByText('Check'));
    const failed = await waitFor(() => {
      const r = card('gemini').querySelector('[data-check-result="failed"]');
      if (!r) throw new Error('no result yet');
      return r as HTMLElement;
    });
    expect(failed.textContent).toContain('The agent command gemini was not found on PATH');
    expect(failed.textContent).toContain('Install it with npm install -g @google/gemini-cli');
  });

  it('installs a registry agent with its progress; a failed install says why', async () => {
    const backend = new FakeBackend();
    backend.installError = {
      code: 'invalid-input',
      message:
        'the download of kimi has sha256 abc, not def as the registry says; nothing was installed',
    };
    await openView(backend);
    await fireEvent.click(within(card('kimi')).getByText('Install'));
    const failed = await waitFor(() => {
      const r = card('kimi').querySelector('[data-install-failed]');
      if (!r) throw new Error('no failure yet');
      return r as HTMLElement;
    });
    expect(failed.textContent).toContain('Not installed:');
    expect(failed.textContent).toContain('has sha256 abc, not def');
    backend.installError = null;
    await fireEvent.click(within(card('kimi')).getByText('Install'));
    await waitFor(() => expect(card('kimi').dataset.status).toBe('found'));
    expect(card('kimi').querySelector('[data-install-done]')).toBeTruthy();
    expect(backend.called('agentInstall')).toEqual([['kimi'], ['kimi']]);
  });

  it('uses an agent for new sessions: remembered by the shell, and the picker follows', async () => {
    const backend = new FakeBackend();
    backend.info = appInfo();
    await openView(backend);
    await fireEvent.click(within(card('fast-agent')).getByText('Use for new sessions'));
    await waitFor(() =>
      expect(within(card('fast-agent')).getByText('Used for new sessions')).toBeTruthy(),
    );
    expect(backend.called('agentsUseForNewSessions')).toEqual([['fast-agent']]);
    // Not usable before it is installed.
    expect(
      (within(card('kimi')).getByText('Use for new sessions') as HTMLButtonElement).disabled,
    ).toBe(true);
    await fireEvent.click(screen.getByText('Close Agents'));
    const select = (await screen.findByLabelText('Agent')) as HTMLSelectElement;
    expect(select.value).toBe('fast-agent');
    await fireEvent.click(screen.getAllByText('Open Folder…')[1] as HTMLElement);
    backend.chooseFolder('/proj');
    await waitFor(() => expect(backend.called('openSession')).toEqual([['/proj', 'fast-agent']]));
  });

  it('shows the problems of the settings file at the top, and a notice in the main window', async () => {
    const backend = new FakeBackend();
    backend.listing = agentListing({
      problems: [
        {
          file: '/cfg/settings.json',
          line: 3,
          column: 15,
          field: 'agent_servers.mine.args',
          message: 'expected a list of strings, found a string',
          severity: 'error',
        },
        {
          file: '/cfg/agents/x/ACP.md',
          line: 2,
          field: 'version',
          message: '“one” is not a semver version',
          severity: 'warning',
        },
      ],
    });
    render(App, { backend, schedule: now });
    const notice = await waitFor(() => {
      const n = document.querySelector('[data-settings-notice]');
      if (!n) throw new Error('no notice yet');
      return n as HTMLElement;
    });
    expect(notice.textContent).toContain('Your settings file has an error');
    expect(notice.textContent).toContain(
      '/cfg/settings.json:3:15: agent_servers.mine.args: expected a list of strings, found a string',
    );
    await fireEvent.click(within(notice).getByText('Open settings file'));
    expect(backend.called('agentsOpenSettings')).toEqual([[]]);
    await fireEvent.click(within(notice).getByText('Show in Agents'));
    const problems = await waitFor(() => {
      const p = document.querySelector('[data-agent-problems]');
      if (!p) throw new Error('no problems yet');
      return p as HTMLElement;
    });
    expect(problems.textContent?.replace(/\s+/g, ' ')).toContain(
      '1 error and 1 warning in the files agents come from',
    );
    expect(problems.textContent).toContain(
      '/cfg/agents/x/ACP.md:2: version: “one” is not a semver version',
    );
  });

  it('shows the window before the agents are listed; a folder opened meanwhile waits for the default', async () => {
    const backend = new FakeBackend();
    let detected: () => void = () => undefined;
    backend.listGate = new Promise<void>((r) => (detected = r));
    backend.listing = agentListing({
      defaultAgent: 'fast-agent',
      defaultReason: 'default_agent in settings',
    });
    render(App, { backend, schedule: now });
    expect(await screen.findByText('Looking for agents on this computer…')).toBeTruthy();
    const open = screen.getAllByText('Open Folder…')[1] as HTMLButtonElement;
    await waitFor(() => expect(open.disabled).toBe(false));
    backend.chooseFolder('/proj');
    await Promise.resolve();
    expect(backend.called('openSession')).toEqual([]);
    detected();
    await waitFor(() => expect(backend.called('openSession')).toEqual([['/proj', 'fast-agent']]));
  });

  it('is reached from the sidebar too, and Esc goes back to the session', async () => {
    const backend = new FakeBackend();
    backend.info = appInfo({ initialFolder: '/proj' });
    render(App, { backend, schedule: now });
    await waitFor(() => expect(backend.called('attach')).toEqual([['s1']]));
    const toggle = document.querySelector('[data-agents-toggle]') as HTMLElement;
    await fireEvent.click(toggle);
    await waitFor(() => expect(card('demo')).toBeTruthy());
    expect(toggle.getAttribute('aria-pressed')).toBe('true');
    await fireEvent.keyDown(window, { key: 'Escape' });
    await waitFor(() => expect(card('demo')).toBeNull());
    // The picker's last entry opens the view.
    const select = screen.getByLabelText('Agent for new sessions') as HTMLSelectElement;
    await fireEvent.change(select, { target: { value: '\u0000more' } });
    await waitFor(() => expect(card('demo')).toBeTruthy());
    expect(select.value).toBe('demo');
  });
});
