// The window's chrome through the App: sidebar, header pickers, usage, plan, composer menus and
// attachments, and the permission dialog's details, queue and keys.
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { tick } from 'svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import App from './App.svelte';
import type { AgentPromptEvent, StreamEvent } from './lib/generated/ipc';
import { FakeBackend, appInfo } from './test/fake-backend';

const now = (fn: () => void) => fn();
const live = (...events: StreamEvent[]) => ({ snapshot: false, events });
const ready = (agent: Record<string, unknown> = {}): StreamEvent => ({
  kind: 'session-status',
  sessionId: 'e1',
  status: 'ready',
  agent: { launchName: 'demo', title: 'ACP Desk demo agent', ...agent },
});

afterEach(() => {
  vi.useRealTimers();
  cleanup();
});

const header = () => document.querySelector('.session-header') as HTMLElement;
const box = () => screen.getByLabelText('Prompt') as HTMLTextAreaElement;
/** The element once it is there. */
const found = (selector: string) =>
  waitFor(() => {
    const el = document.querySelector(selector);
    if (!el) throw new Error(`no ${selector} yet`);
    return el as HTMLElement;
  });
const item = (id: string) => document.querySelector(`[data-session="${id}"]`) as HTMLElement;

async function open(backend: FakeBackend, agent: Record<string, unknown> = {}) {
  backend.info = appInfo({ initialFolder: '/proj' });
  render(App, { backend, schedule: now });
  await waitFor(() => expect(backend.called('attach')).toEqual([['s1']]));
  backend.frame('s1', live(ready(agent)));
  await waitFor(() => expect(within(header()).getByText('Ready')).toBeTruthy());
}

/** Types into the composer as a user would: the value, the caret at its end, an input event. */
async function type(text: string) {
  const b = box();
  b.focus();
  await fireEvent.input(b, { target: { value: text, selectionStart: text.length } });
}

function request(id: string, over: Partial<AgentPromptEvent> = {}): StreamEvent {
  return {
    kind: 'agent-prompt',
    sessionId: 'e1',
    toolCallId: id,
    targetToolCallId: id.split('#')[0] as string,
    toolName: `Tool ${id}`,
    options: [
      { optionId: 'no', name: 'Reject', kind: 'reject_once' },
      { optionId: 'yes', name: 'Allow once', kind: 'allow_once' },
      { optionId: 'always', name: 'Always', kind: 'allow_always' },
      { optionId: 'never', name: 'Never', kind: 'reject_always' },
    ],
    ...over,
  } as StreamEvent;
}

describe('sidebar', () => {
  it('lists sessions with their status and pending count, and keeps each one’s draft', async () => {
    const backend = new FakeBackend();
    await open(backend);
    backend.chooseFolder('/home/me/web');
    await waitFor(() => expect(backend.called('attach')).toEqual([['s1'], ['s2']]));
    const list = document.querySelector('[data-session-list]') as HTMLElement;
    expect(list.querySelectorAll('.session-item')).toHaveLength(2);
    expect(within(item('s2')).getByText('web')).toBeTruthy();
    // Its tooltip says all that the item may cut on a narrow sidebar.
    expect(item('s2').querySelector('.session-select')?.getAttribute('data-tip')).toBe(
      '/home/me/web\ndemo · Opening…',
    );
    expect(item('s2').querySelector('.session-select')?.getAttribute('aria-current')).toBe('true');
    expect(item('s1').querySelector('.status')?.getAttribute('data-status')).toBe('ready');
    expect(item('s2').querySelector('.status')?.getAttribute('data-status')).toBe('opening');

    await type('draft for web');
    await fireEvent.click(item('s1').querySelector('.session-select') as HTMLElement);
    await waitFor(() => expect(within(header()).getByText('/proj')).toBeTruthy());
    expect(box().value).toBe('');
    await type('draft for proj');

    // A request in the session not shown: its badge counts it, its status says so.
    backend.frame('s2', live(request('r1#1'), request('r2#1')));
    await waitFor(() =>
      expect(item('s2').querySelector('.pending-badge')?.textContent?.trim()).toBe('2'),
    );
    expect(item('s2').querySelector('.status')?.getAttribute('data-status')).toBe('waiting');
    expect(item('s2').querySelector('.status')?.textContent).toContain('Waiting for you');
    expect(screen.queryByRole('dialog')).toBeNull();

    await fireEvent.click(item('s2').querySelector('.session-select') as HTMLElement);
    await waitFor(() => expect(box().value).toBe('draft for web'));
    // Its requests show now, and the header says it waits.
    await screen.findByRole('dialog');
    expect(header().querySelector('.status')?.getAttribute('data-status')).toBe('waiting');
    await fireEvent.keyDown(screen.getByRole('dialog'), { key: 'Escape' });
    backend.frame(
      's2',
      live(
        {
          kind: 'agent-prompt-settled',
          sessionId: 'e1',
          toolCallId: 'r1#1',
          outcome: { cancelled: true },
          by: 'user',
        },
        {
          kind: 'agent-prompt-settled',
          sessionId: 'e1',
          toolCallId: 'r2#1',
          outcome: { cancelled: true },
          by: 'stop',
        },
      ),
    );
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    await fireEvent.click(item('s1').querySelector('.session-select') as HTMLElement);
    await waitFor(() => expect(box().value).toBe('draft for proj'));
  });

  it('gives a refused prompt back to its own session’s draft, even after switching', async () => {
    const backend = new FakeBackend();
    await open(backend);
    let refuse: (e: unknown) => void = () => undefined;
    backend.promptResult = new Promise((_, reject) => (refuse = reject));
    await type('keep me');
    await fireEvent.keyDown(box(), { key: 'Enter' });
    expect(box().value).toBe('');
    backend.chooseFolder('/other');
    await waitFor(() => expect(backend.called('attach')).toHaveLength(2));
    refuse({ code: 'session-ended', message: 'the session has ended' });
    await screen.findByRole('alert');
    expect(box().value).toBe('');
    await fireEvent.click(item('s1').querySelector('.session-select') as HTMLElement);
    await waitFor(() => expect(box().value).toBe('keep me'));
  });

  it('folds away, and its ☰ then counts requests waiting in other sessions', async () => {
    const backend = new FakeBackend();
    await open(backend);
    backend.chooseFolder('/other');
    await waitFor(() => expect(backend.called('attach')).toHaveLength(2));
    await fireEvent.click(screen.getByLabelText('Hide the session list'));
    expect(document.querySelector('[data-session-list]')).toBeNull();
    backend.frame('s1', live(request('a#1'), request('b#1')));
    const badge = await found('[data-pending-elsewhere]');
    expect(badge.textContent).toBe('2');
    await fireEvent.click(screen.getByLabelText('Show the session list'));
    expect(document.querySelector('[data-session-list]')).not.toBeNull();
    expect(document.querySelector('[data-pending-elsewhere]')).toBeNull();
  });

  it('asks before closing a session that is working, and closes an idle one at once', async () => {
    const backend = new FakeBackend();
    await open(backend);
    backend.frame(
      's1',
      live({ kind: 'turn-start', sessionId: 'e1', prompt: [{ type: 'text', text: 'go' }] }),
    );
    await waitFor(() =>
      expect(item('s1').querySelector('.status')?.getAttribute('data-status')).toBe('working'),
    );
    await fireEvent.click(screen.getByLabelText('Close proj'));
    expect(backend.called('closeSession')).toEqual([]);
    await fireEvent.click(within(item('s1')).getByText('Keep'));
    expect(backend.called('closeSession')).toEqual([]);
    await fireEvent.click(screen.getByLabelText('Close proj'));
    await fireEvent.click(within(item('s1')).getByText('Close'));
    await waitFor(() => expect(backend.called('closeSession')).toEqual([['s1']]));
    expect(await screen.findByText('Drop a folder here, or File → Open Folder')).toBeTruthy();
  });
});

describe('drops', () => {
  it('shows files dropped over the composer as chips, and says which were outside', async () => {
    const backend = new FakeBackend();
    await open(backend);
    // jsdom lays nothing out: the composer's box is the point (0, 0).
    backend.drop(['/proj/src/a.rs', '/elsewhere/b.txt'], 0, 0);
    const chip = await found('[data-chip="file"]');
    expect(chip.textContent).toContain('src/a.rs');
    expect((await screen.findByRole('alert')).textContent).toContain('outside /proj');
    await type('look');
    await fireEvent.keyDown(box(), { key: 'Enter' });
    expect(backend.called('prompt')).toEqual([
      [
        's1',
        [
          { type: 'text', text: 'look' },
          { type: 'file', path: 'src/a.rs' },
        ],
      ],
    ]);
  });

  it('opens the next folder with the agent chosen in the sidebar', async () => {
    const backend = new FakeBackend();
    await open(backend);
    const select = screen.getByLabelText('Agent for new sessions') as HTMLSelectElement;
    expect(select.value).toBe('demo');
    expect((select.querySelector('option[value="gemini"]') as HTMLOptionElement).disabled).toBe(
      true,
    );
  });

  it('starts the ended session again with its own agent, in its place', async () => {
    const backend = new FakeBackend();
    backend.info = appInfo({
      initialFolder: '/proj',
      agents: {
        ...appInfo().agents,
        agents: appInfo().agents.agents.map((a) => ({ ...a, status: 'found' as const })),
      },
    });
    render(App, { backend, schedule: now });
    await waitFor(() => expect(backend.called('attach')).toEqual([['s1']]));
    backend.frame('s1', live(ready({})));
    const select = (await screen.findByLabelText('Agent for new sessions')) as HTMLSelectElement;
    await fireEvent.change(select, { target: { value: 'gemini' } });
    backend.frame(
      's1',
      live({ kind: 'session-status', sessionId: 'e1', status: 'dead', detail: 'gone' }),
    );
    await fireEvent.click(await screen.findByRole('button', { name: 'Start a new session' }));
    await waitFor(() => expect(backend.called('attach')).toHaveLength(2));
    expect(backend.called('openSession')).toEqual([
      ['/proj', 'demo'],
      ['/proj', 'demo'],
    ]);
    expect(document.querySelectorAll('[data-session-list] [data-session]')).toHaveLength(1);
  });
});

describe('composer focus', () => {
  it('takes the focus when the session is shown, so the user can type at once', async () => {
    const backend = new FakeBackend();
    (document.activeElement as HTMLElement | null)?.blur();
    await openStarting(backend);
    await waitFor(() => expect(document.activeElement).toBe(box()));
  });
});

/** The window with the folder open and its agent still starting (no `ready` yet). */
async function openStarting(backend: FakeBackend) {
  backend.info = appInfo({ initialFolder: '/proj' });
  render(App, { backend, schedule: now });
  await waitFor(() => expect(backend.called('attach')).toEqual([['s1']]));
  backend.frame('s1', live({ kind: 'session-status', sessionId: 'e1', status: 'starting' }));
  await waitFor(() => expect(within(header()).getByText('Starting…')).toBeTruthy());
}

/** A request settled by Stop. */
const stopped = (id: string): StreamEvent => ({
  kind: 'agent-prompt-settled',
  sessionId: 'e1',
  toolCallId: id,
  outcome: { cancelled: true },
  by: 'stop',
});
const held = () => document.querySelector('[data-held]');
const dead = (detail: string): StreamEvent => ({
  kind: 'session-status',
  sessionId: 'e1',
  status: 'dead',
  detail,
});

describe('typing before the agent is ready', () => {
  it('takes keys at once; a prompt sent then waits, says so, and goes out when it is ready', async () => {
    const backend = new FakeBackend();
    await openStarting(backend);
    expect(box().disabled).toBe(false);
    await type('hello');
    await fireEvent.keyDown(box(), { key: 'Enter' });
    expect(box().value).toBe('');
    await waitFor(() => expect(held()?.textContent).toContain('waits for the agent to start'));
    expect(backend.called('prompt')).toEqual([]);
    // What is typed meanwhile stays in the box; Enter does not send it while one waits.
    await type('next');
    await fireEvent.keyDown(box(), { key: 'Enter' });
    expect(backend.called('prompt')).toEqual([]);
    backend.frame('s1', live(ready()));
    await waitFor(() =>
      expect(backend.called('prompt')).toEqual([['s1', [{ type: 'text', text: 'hello' }]]]),
    );
    await waitFor(() => expect(held()).toBeNull());
    expect(box().value).toBe('next');
  });

  it('gives a waiting prompt back, with the reason, when the agent does not start', async () => {
    const backend = new FakeBackend();
    await openStarting(backend);
    await type('hello');
    await fireEvent.keyDown(box(), { key: 'Enter' });
    await type('and more');
    backend.frame('s1', live(dead('failed to start `/x/agent`: No such file or directory')));
    await waitFor(() => expect(box().value).toBe('hello\n\nand more'));
    expect(held()).toBeNull();
    expect(document.querySelector('[data-notice]')?.textContent).toContain(
      'Not sent: the agent did not start (failed to start `/x/agent`: No such file or directory)',
    );
    expect(backend.called('prompt')).toEqual([]);
    // Starting over keeps it for the new session.
    await fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    await waitFor(() => expect(backend.called('attach')).toHaveLength(2));
    await waitFor(() => expect(box().value).toBe('hello\n\nand more'));
  });

  it('gives a waiting prompt back when the user cancels it (or presses Esc), and never sends it', async () => {
    const backend = new FakeBackend();
    await openStarting(backend);
    await type('hello');
    await fireEvent.keyDown(box(), { key: 'Enter' });
    await fireEvent.click(await screen.findByText('Cancel'));
    await waitFor(() => expect(box().value).toBe('hello'));
    expect(held()).toBeNull();
    await fireEvent.keyDown(box(), { key: 'Enter' });
    await waitFor(() => expect(held()).not.toBeNull());
    await fireEvent.keyDown(box(), { key: 'Escape' });
    await waitFor(() => expect(box().value).toBe('hello'));
    expect(held()).toBeNull();
    backend.frame('s1', live(ready()));
    await waitFor(() => expect(within(header()).getByText('Ready')).toBeTruthy());
    expect(backend.called('prompt')).toEqual([]);
  });
});

describe('window title', () => {
  it('names the shown session’s folder and counts the requests waiting in every session', async () => {
    const backend = new FakeBackend();
    render(App, { backend, schedule: now });
    await waitFor(() => expect(backend.title).toBe('ACP Desk'));
    backend.chooseFolder('/home/me/proj');
    await waitFor(() => expect(backend.title).toBe('proj — ACP Desk'));
    backend.chooseFolder('/home/me/web');
    await waitFor(() => expect(backend.title).toBe('web — ACP Desk'));
    backend.frame('s1', live(request('a#1'), request('b#1')));
    await waitFor(() => expect(backend.title).toBe('(2) web — ACP Desk'));
    backend.frame('s2', live(request('c#1')));
    await waitFor(() => expect(backend.title).toBe('(3) web — ACP Desk'));
    // Settled by Stop in the session not shown: one fewer.
    backend.frame('s1', live(stopped('a#1')));
    await waitFor(() => expect(backend.title).toBe('(2) web — ACP Desk'));
    await fireEvent.click(screen.getByLabelText('Close web'));
    await fireEvent.click(within(item('s2')).getByText('Close'));
    await waitFor(() => expect(backend.title).toBe('(1) proj — ACP Desk'));
    // Set only when it changes.
    const titles = backend.called('setTitle').map(([t]) => t);
    expect(titles.filter((t, i) => t === titles[i - 1])).toEqual([]);
  });
});

describe('session header', () => {
  it('shows the mode and config pickers, model first, and they call the backend', async () => {
    const backend = new FakeBackend();
    await open(backend);
    backend.frame(
      's1',
      live(
        {
          kind: 'modes',
          sessionId: 'e1',
          currentModeId: 'ask',
          availableModes: [
            { id: 'ask', name: 'Ask' },
            { id: 'plan', name: 'Plan' },
          ],
        },
        {
          kind: 'config-options',
          sessionId: 'e1',
          configOptions: [
            {
              id: 'effort',
              name: 'Effort',
              category: 'thought_level',
              type: 'boolean',
              currentValue: true,
            },
            {
              id: 'model',
              name: 'Model',
              category: 'model',
              type: 'select',
              currentValue: 'sonnet',
              options: [
                {
                  group: 'a',
                  name: 'Anthropic',
                  options: [
                    { value: 'sonnet', name: 'Sonnet' },
                    { value: 'opus', name: 'Opus' },
                  ],
                },
                { group: 'b', name: 'Other', options: [{ value: 'haiku', name: 'Haiku' }] },
              ],
            },
          ],
        },
      ),
    );
    const mode = (await screen.findByLabelText('Mode')) as HTMLSelectElement;
    expect(mode.value).toBe('ask');
    await fireEvent.change(mode, { target: { value: 'plan' } });
    expect(backend.called('setMode')).toEqual([['s1', 'plan']]);

    const pickers = [...header().querySelectorAll('[data-config-option]')].map((e) =>
      e.getAttribute('data-config-option'),
    );
    expect(pickers).toEqual(['model', 'effort']);
    const model = screen.getByLabelText('Model') as HTMLSelectElement;
    expect([...model.querySelectorAll('optgroup')].map((g) => g.label)).toEqual([
      'Anthropic',
      'Other',
    ]);
    await fireEvent.change(model, { target: { value: 'opus' } });
    const effort = header().querySelector('[data-config-option="effort"]') as HTMLInputElement;
    expect(effort.checked).toBe(true);
    await fireEvent.click(effort);
    expect(backend.called('setConfigOption')).toEqual([
      ['s1', 'model', 'opus'],
      ['s1', 'effort', false],
    ]);
  });

  it('meters the context, the cost and the tokens, and lists background tasks', async () => {
    const backend = new FakeBackend();
    await open(backend);
    backend.frame(
      's1',
      live(
        {
          kind: 'usage_update',
          sessionId: 'e1',
          used: 50_000,
          size: 200_000,
          cost: { amount: 0.42, currency: 'USD' },
          tokensIn: 41_200,
          tokensOut: 7_010,
        },
        {
          kind: 'background-task',
          sessionId: 'e1',
          phase: 'started',
          task: { taskId: 't1', description: 'cargo test', status: 'running' },
        },
        {
          kind: 'background-task',
          sessionId: 'e1',
          phase: 'settled',
          task: { taskId: 't2', description: 'npm run build', status: 'completed', summary: 'ok' },
        },
      ),
    );
    const usage = await found('.session-header [data-usage]');
    expect(usage.textContent).toContain('25%');
    expect(usage.textContent).toContain('$0.42');
    expect(usage.textContent).toContain('41.2k in · 7k out');
    expect(usage.getAttribute('data-tip')).toContain(
      'Context used: 50,000 of 200,000 tokens (25%)',
    );
    expect((usage.querySelector('.usage-fill') as HTMLElement).style.width).toBe('25%');

    const tasks = header().querySelector('[data-tasks]') as HTMLElement;
    expect(tasks.textContent).toContain('1 running');
    await fireEvent.click(tasks);
    const pop = screen.getByRole('region', { name: 'Background tasks' });
    expect(pop.textContent).toContain('cargo test');
    expect(pop.textContent).toContain('npm run build');
    expect(pop.textContent).toContain('ok');
  });
});

describe('plan panel', () => {
  it('shows the plan while the turn runs, replaces it whole, and folds to a summary after', async () => {
    const backend = new FakeBackend();
    await open(backend);
    backend.frame(
      's1',
      live(
        { kind: 'turn-start', sessionId: 'e1', prompt: [{ type: 'text', text: 'go' }] },
        {
          kind: 'plan',
          sessionId: 'e1',
          entries: [
            { content: 'Read', priority: 'high', status: 'completed' },
            { content: 'Edit', priority: 'medium', status: 'in_progress' },
            { content: 'Test', priority: 'low', status: 'pending' },
          ],
        },
      ),
    );
    const plan = await found('[data-plan]');
    const entries = () =>
      [...plan.querySelectorAll('[data-plan-entry]')].map((e) => [
        e.textContent?.replace(/\s+/g, ' ').trim(),
        e.getAttribute('data-status'),
        e.getAttribute('data-priority'),
      ]);
    expect(entries()).toEqual([
      ['✓ Read high', 'completed', 'high'],
      ['◐ Edit', 'in_progress', 'medium'],
      ['○ Test low', 'pending', 'low'],
    ]);
    expect(plan.textContent).toContain('Plan 1/3');
    backend.frame(
      's1',
      live({
        kind: 'plan',
        sessionId: 'e1',
        entries: [
          { content: 'Edit', priority: 'medium', status: 'completed' },
          { content: 'Test', priority: 'medium', status: 'in_progress' },
        ],
      }),
    );
    await waitFor(() => expect(entries().map((e) => e[0])).toEqual(['✓ Edit', '◐ Test']));
    backend.frame(
      's1',
      live({ kind: 'turn-end', sessionId: 'e1', reason: 'completed', stopReason: 'end_turn' }),
    );
    await waitFor(() => expect(plan.querySelectorAll('[data-plan-entry]')).toHaveLength(0));
    const summary = plan.querySelector('.plan-summary') as HTMLElement;
    expect(summary.textContent).toContain('Plan 1/2');
    expect(summary.getAttribute('aria-expanded')).toBe('false');
    await fireEvent.click(summary);
    expect(plan.querySelectorAll('[data-plan-entry]')).toHaveLength(2);
    await fireEvent.click(summary);
    // The next turn does not show the old plan at all (issue 13: it stayed pinned over an
    // unrelated turn); a new plan update does.
    backend.frame(
      's1',
      live({ kind: 'turn-start', sessionId: 'e1', prompt: [{ type: 'text', text: 'again' }] }),
    );
    await waitFor(() => expect(document.body.textContent).toContain('again'));
    expect(document.querySelector('[data-plan]')).toBeNull();
    backend.frame(
      's1',
      live({
        kind: 'plan',
        sessionId: 'e1',
        entries: [{ content: 'Ship', priority: 'high', status: 'in_progress' }],
      }),
    );
    await waitFor(() =>
      expect(document.querySelectorAll('[data-plan] [data-plan-entry]')).toHaveLength(1),
    );
  });
});

describe('composer', () => {
  it('sends on Enter, adds a line on Shift+Enter, and Esc closes a menu before it stops', async () => {
    const backend = new FakeBackend();
    await open(backend);
    expect(box().placeholder).toBe(
      'Message the agent — Enter to send, Shift+Enter for a new line, / for commands, @ to mention a file',
    );
    await type('one');
    await fireEvent.keyDown(box(), { key: 'Enter', shiftKey: true });
    expect(backend.called('prompt')).toEqual([]);
    await fireEvent.keyDown(box(), { key: 'Enter' });
    expect(backend.called('prompt')).toEqual([['s1', [{ type: 'text', text: 'one' }]]]);
    backend.frame(
      's1',
      live({ kind: 'turn-start', sessionId: 'e1', prompt: [{ type: 'text', text: 'one' }] }),
    );
    await screen.findByText('Stop');
    await type('@');
    await waitFor(() => expect(document.querySelector('[data-file-picker]')).not.toBeNull());
    await fireEvent.keyDown(box(), { key: 'Escape' });
    expect(document.querySelector('[data-file-picker]')).toBeNull();
    expect(backend.called('cancel')).toEqual([]);
    await fireEvent.keyDown(box(), { key: 'Escape' });
    expect(backend.called('cancel')).toEqual([['s1']]);
  });

  it('completes the agent’s commands after `/`', async () => {
    const backend = new FakeBackend();
    await open(backend);
    backend.frame(
      's1',
      live({
        kind: 'available-commands',
        sessionId: 'e1',
        commands: [
          { name: 'init', description: 'Write AGENTS.md' },
          { name: 'review', description: 'Review changes', input: { hint: 'what to look at' } },
          { name: 'pr-review', description: 'Review a pull request' },
        ],
      }),
    );
    await type('/');
    const menu = await found('[data-command-menu]');
    expect(menu.querySelectorAll('[role="option"]')).toHaveLength(3);
    await type('/rev');
    const names = () =>
      [...document.querySelectorAll('[data-command-menu] [role="option"]')].map((o) =>
        o.getAttribute('data-command'),
      );
    expect(names()).toEqual(['review', 'pr-review']);
    expect(document.querySelector('[data-command-menu]')?.textContent).toContain('what to look at');
    await fireEvent.keyDown(box(), { key: 'ArrowDown' });
    await fireEvent.keyDown(box(), { key: 'ArrowUp' });
    await fireEvent.keyDown(box(), { key: 'Enter' });
    expect(box().value).toBe('/review ');
    expect(backend.called('prompt')).toEqual([]);
    expect(document.querySelector('[data-command-menu]')).toBeNull();
    expect(document.querySelector('.command-hint')?.textContent).toContain('what to look at');
    await type('/pr');
    await fireEvent.keyDown(box(), { key: 'Tab' });
    expect(box().value).toBe('/pr-review ');
  });

  it('mentions a project file with `@`: fuzzy matches, a chip, sent as a file part', async () => {
    const backend = new FakeBackend();
    backend.projectFiles = {
      files: ['README.md', 'src/main.rs', 'src/lib.rs', 'docs/main-menu.md', 'ui/src/App.svelte'],
      truncated: false,
    };
    await open(backend);
    await type('explain @mainrs');
    const picker = await found('[data-file-picker] [role="listbox"]');
    expect(backend.called('listFiles')).toEqual([['s1']]);
    const files = [...picker.querySelectorAll('[role="option"]')].map((o) =>
      o.getAttribute('data-file'),
    );
    expect(files[0]).toBe('src/main.rs');
    expect(files).not.toContain('README.md');
    // The matched characters are marked.
    expect(
      [...(picker.querySelector('[role="option"]') as HTMLElement).querySelectorAll('mark')]
        .map((m) => m.textContent)
        .join(''),
    ).toBe('mainrs');
    await fireEvent.keyDown(box(), { key: 'Enter' });
    const chip = await found('[data-chip="file"]');
    expect(box().value).toBe('explain ');
    expect(chip.textContent).toContain('src/main.rs');

    // A second one by mouse, then removed again.
    await type('explain @app');
    await waitFor(() =>
      expect(document.querySelector('[data-file="ui/src/App.svelte"]')).toBeTruthy(),
    );
    await fireEvent.click(document.querySelector('[data-file="ui/src/App.svelte"]') as HTMLElement);
    await waitFor(() => expect(document.querySelectorAll('[data-chip="file"]')).toHaveLength(2));
    await fireEvent.click(screen.getByLabelText('Remove ui/src/App.svelte'));
    await waitFor(() => expect(document.querySelectorAll('[data-chip="file"]')).toHaveLength(1));

    await fireEvent.keyDown(box(), { key: 'Enter' });
    expect(backend.called('prompt')).toEqual([
      [
        's1',
        [
          { type: 'text', text: 'explain ' },
          { type: 'file', path: 'src/main.rs' },
        ],
      ],
    ]);
    await waitFor(() => expect(document.querySelector('[data-chip]')).toBeNull());
  });

  it('keeps chips in the draft across sessions', async () => {
    const backend = new FakeBackend();
    await open(backend);
    await type('@lib');
    await waitFor(() => expect(document.querySelector('[data-file="src/lib.rs"]')).toBeTruthy());
    await fireEvent.keyDown(box(), { key: 'Tab' });
    await found('[data-chip="file"]');
    backend.chooseFolder('/other');
    await waitFor(() => expect(backend.called('attach')).toHaveLength(2));
    await waitFor(() => expect(document.querySelector('[data-chip]')).toBeNull());
    await fireEvent.click(item('s1').querySelector('.session-select') as HTMLElement);
    await waitFor(() =>
      expect(document.querySelector('[data-chip="file"]')?.textContent).toContain('src/lib.rs'),
    );
  });

  it('refuses a pasted image when the agent does not take images, and says why', async () => {
    const backend = new FakeBackend();
    await open(backend);
    const png = new File([new Uint8Array([137, 80, 78, 71])], 'shot.png', { type: 'image/png' });
    await fireEvent.paste(box(), { clipboardData: { files: [png], getData: () => '' } });
    expect(await screen.findByText('This agent does not accept images.')).toBeTruthy();
    expect(document.querySelector('[data-chip]')).toBeNull();
  });

  it('attaches pasted images the agent takes, and refuses big or odd ones', async () => {
    const backend = new FakeBackend();
    await open(backend, { promptCapabilities: { image: true } });
    const bmp = new File([new Uint8Array(4)], 'x.bmp', { type: 'image/bmp' });
    await fireEvent.paste(box(), { clipboardData: { files: [bmp], getData: () => '' } });
    expect(await screen.findByText(/x\.bmp is not a PNG, JPEG, GIF or WebP image/)).toBeTruthy();
    const big = new File([new Uint8Array(11 * 1024 * 1024)], 'big.png', { type: 'image/png' });
    await fireEvent.paste(box(), { clipboardData: { files: [big], getData: () => '' } });
    expect(
      await screen.findByText(/big\.png is 11\.0 MB; images can be at most 10 MB/),
    ).toBeTruthy();

    const png = new File([new Uint8Array([1, 2, 3])], 'shot.png', { type: 'image/png' });
    await fireEvent.paste(box(), { clipboardData: { files: [png], getData: () => '' } });
    const chip = await found('[data-chip="image"]');
    // Dropped from another page onto the composer: the same way in.
    const gif = new File([new Uint8Array([4])], 'a.gif', { type: 'image/gif' });
    const form = document.querySelector('form.composer') as HTMLElement;
    await fireEvent.drop(form, { dataTransfer: { files: [gif], types: ['Files'] } });
    await waitFor(() => expect(document.querySelectorAll('[data-chip="image"]')).toHaveLength(2));
    await fireEvent.click(screen.getByLabelText('Remove a.gif'));
    await waitFor(() => expect(document.querySelectorAll('[data-chip="image"]')).toHaveLength(1));
    expect(chip.querySelector('img')?.getAttribute('src')).toBe('data:image/png;base64,AQID');
    await type('what is this?');
    await fireEvent.keyDown(box(), { key: 'Enter' });
    expect(backend.called('prompt')).toEqual([
      [
        's1',
        [
          { type: 'text', text: 'what is this?' },
          { type: 'image', mimeType: 'image/png', data: 'AQID', name: 'shot.png' },
        ],
      ],
    ]);
  });
});

/** How long a request must be on screen, with no key pressed, before a key may answer it
 * (ARCHITECTURE.md, invariant 20): the rule, written here again so a change to the
 * component's constant shows up as a failing test. */
const ARM_MS = 400;

/** A key for each option: each one answers an armed dialog. */
const ANSWER_KEYS = [
  { key: 'y' },
  { key: 'n' },
  { key: 'A', shiftKey: true },
  { key: 'N', shiftKey: true },
];

/** Shows the requests with the clock stopped, so that from here on the test says how long the
 * dialog has been on screen and nothing races the guard. */
async function showOnStoppedClock(backend: FakeBackend, session: string, ...events: StreamEvent[]) {
  vi.useFakeTimers();
  backend.frame(session, live(...events));
  const dialog = await screen.findByRole('dialog');
  await tick();
  return dialog;
}

/** Moves the stopped clock on, running the timers that fall due, then lets Svelte render. */
async function passes(ms: number) {
  await vi.advanceTimersByTimeAsync(ms);
  await tick();
}

/** The dialog shows its keys as live (the `armed` class) exactly when they answer. */
const isArmed = (dialog: HTMLElement) =>
  dialog.querySelector('.choices')?.classList.contains('armed') ?? false;

describe('permission dialog', () => {
  it('shows the full command and its folder (Codex argv and workdir)', async () => {
    const backend = new FakeBackend();
    await open(backend);
    backend.frame(
      's1',
      live(
        request('c#1', {
          toolName: 'Run tests',
          toolKind: 'execute',
          rawInput: {
            command: ['bash', '-lc', 'cargo test && git status --short'],
            workdir: '/proj/sub',
            timeout_ms: 1000,
          },
        }),
      ),
    );
    const dialog = await screen.findByRole('dialog');
    expect(dialog.hasAttribute('data-permission')).toBe(true);
    expect(dialog.getAttribute('aria-modal')).toBe('true');
    expect(dialog.querySelector('.perm-cmd')?.textContent).toBe('cargo test && git status --short');
    expect(dialog.querySelector('[data-command]')?.textContent).toContain('bash -lc');
    expect(dialog.querySelector('[data-cwd]')?.textContent).toContain('/proj/sub');
    // What else it passes is there too.
    expect(dialog.querySelector('[data-args]')?.textContent).toContain('timeout_ms');
    // Options in the fixed order, with their keys.
    expect(
      [...dialog.querySelectorAll('[data-option-kind]')].map((b) => [
        b.getAttribute('data-option-kind'),
        b.querySelector('kbd')?.textContent,
      ]),
    ).toEqual([
      ['allow_once', 'Y'],
      ['allow_always', 'Shift+A'],
      ['reject_once', 'N'],
      ['reject_always', 'Shift+N'],
    ]);
    // The agent's own names are shown beside ours.
    expect(dialog.querySelector('[data-option-kind="reject_always"]')?.textContent).toContain(
      'Never',
    );
  });

  it('shows a Claude command string, a diff for edits, and MCP arguments as a table', async () => {
    const backend = new FakeBackend();
    await open(backend);
    backend.frame(
      's1',
      live(
        request('e#1', {
          toolName: 'Edit a.rs',
          toolKind: 'edit',
          rawInput: { file_path: '/proj/a.rs' },
          content: [
            { type: 'diff', path: '/proj/a.rs', oldText: 'old line\n', newText: 'new line\n' },
          ],
          locations: [{ path: '/proj/a.rs', line: 3 }],
        }),
      ),
    );
    const dialog = await screen.findByRole('dialog');
    const diff = dialog.querySelector('.diff-view') as HTMLElement;
    expect(diff.textContent).toContain('-old line');
    expect(diff.textContent).toContain('+new line');
    // Relative to the folder, like the diff header and the cards; the full path on hover.
    expect(dialog.textContent).toContain('Files a.rs:3');
    expect(dialog.querySelector('.perm-locations code')?.getAttribute('data-tip')).toBe(
      '/proj/a.rs',
    );
    await fireEvent.click(dialog.querySelector('[data-option-kind="allow_once"]') as HTMLElement);
    backend.frame(
      's1',
      live(
        {
          kind: 'agent-prompt-settled',
          sessionId: 'e1',
          toolCallId: 'e#1',
          outcome: { optionId: 'yes' },
          by: 'user',
        },
        request('m#1', {
          toolName: 'mcp__github__create_issue',
          toolKind: 'other',
          rawInput: { repo: 'desk', title: 'Bug', labels: ['ui', 'p1'] },
        }),
      ),
    );
    await waitFor(() => expect(dialog.textContent).toContain('mcp__github__create_issue'));
    const rows = [...dialog.querySelectorAll('[data-args] tr')].map((r) => [
      r.querySelector('th')?.textContent,
      r.querySelector('td')?.textContent?.replace(/\s+/g, ' ').trim(),
    ]);
    expect(rows).toEqual([
      ['repo', 'desk'],
      ['title', 'Bug'],
      ['labels', '[ "ui", "p1" ]'],
    ]);
    expect(dialog.querySelector('.perm-input')).toBeNull();
    await fireEvent.click(within(dialog).getByText('Show raw input (JSON)'));
    expect(JSON.parse(dialog.querySelector('.perm-input')?.textContent ?? '')).toEqual({
      repo: 'desk',
      title: 'Bug',
      labels: ['ui', 'p1'],
    });
    backend.frame(
      's1',
      live(
        {
          kind: 'agent-prompt-settled',
          sessionId: 'e1',
          toolCallId: 'm#1',
          outcome: { cancelled: true },
          by: 'agent',
        },
        request('k#1', {
          toolName: 'Bash',
          toolKind: 'execute',
          rawInput: { command: 'ls -la', description: 'List files' },
        }),
      ),
    );
    await waitFor(() => expect(dialog.querySelector('.perm-cmd')?.textContent).toBe('ls -la'));
    // No cwd given: the project folder, said so.
    expect(dialog.querySelector('[data-cwd]')?.textContent).toContain('/proj (the project folder)');
    expect(dialog.querySelector('[data-args]')?.textContent).toContain('List files');
  });

  it('queues requests visibly, and one settled elsewhere leaves at once', async () => {
    const backend = new FakeBackend();
    await open(backend);
    backend.frame('s1', live(request('a#1'), request('b#1')));
    const dialog = await screen.findByRole('dialog');
    expect(dialog.querySelector('[data-queue-position]')?.textContent).toBe('1 of 2');
    expect(
      [...dialog.querySelectorAll('.perm-queue-item')].map((b) =>
        // The number, then the title.
        b.textContent?.replace(/^\d+\s*/, ''),
      ),
    ).toEqual(['Tool a#1', 'Tool b#1']);
    expect(dialog.querySelector('.perm-tool')?.textContent).toContain('Tool a#1');
    // Settled by a rule: the next one shows, the focus stays on the dialog.
    backend.frame(
      's1',
      live({
        kind: 'agent-prompt-settled',
        sessionId: 'e1',
        toolCallId: 'a#1',
        outcome: { optionId: 'yes' },
        by: 'rule',
      }),
    );
    await waitFor(() =>
      expect(dialog.querySelector('.perm-tool')?.textContent).toContain('Tool b#1'),
    );
    expect(dialog.querySelector('[data-queue-position]')).toBeNull();
    expect(document.activeElement).toBe(screen.getByRole('dialog'));
    // Stop settles the last one: the dialog closes and the composer gets the focus back.
    backend.frame(
      's1',
      live({
        kind: 'agent-prompt-settled',
        sessionId: 'e1',
        toolCallId: 'b#1',
        outcome: { cancelled: true },
        by: 'stop',
      }),
    );
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    await waitFor(() => expect(document.activeElement).toBe(box()));
    expect(backend.called('respondPermission')).toEqual([]);
  });

  it('ignores its keys for the first 400 ms and while feedback is typed; N rejects with it', async () => {
    const backend = new FakeBackend();
    await open(backend);
    const dialog = await showOnStoppedClock(backend, 's1', request('a#1'));
    expect(document.activeElement).toBe(dialog);
    // One millisecond short of the guard, a key meant for the composer chooses nothing.
    await passes(ARM_MS - 1);
    expect(isArmed(dialog)).toBe(false);
    await fireEvent.keyDown(dialog, { key: 'y' });
    expect(backend.called('respondPermission')).toEqual([]);
    await passes(ARM_MS);
    expect(isArmed(dialog)).toBe(true);
    // Armed, and still every key typed into the feedback is text, not an answer.
    const feedback = within(dialog).getByPlaceholderText('Tell the agent why (optional)');
    feedback.focus();
    await fireEvent.input(feedback, { target: { value: 'not now' } });
    for (const key of ANSWER_KEYS) await fireEvent.keyDown(feedback, key);
    expect(backend.called('respondPermission')).toEqual([]);
    dialog.focus();
    await fireEvent.keyDown(dialog, { key: 'n', ctrlKey: true });
    expect(backend.called('respondPermission')).toEqual([]);
    await fireEvent.keyDown(dialog, { key: 'n' });
    expect(backend.called('respondPermission')).toEqual([
      ['s1', 'a#1', { optionId: 'no', feedback: 'not now' }],
    ]);
  });

  it('answers allow once with Y, always reject with Shift+N, and Esc dismisses', async () => {
    const backend = new FakeBackend();
    await open(backend);
    const dialog = await showOnStoppedClock(
      backend,
      's1',
      request('a#1'),
      request('b#1'),
      request('c#1'),
    );
    await passes(ARM_MS);
    await fireEvent.keyDown(dialog, { key: 'y' });
    await fireEvent.keyDown(dialog, { key: 'y' });
    expect(backend.called('respondPermission')).toEqual([['s1', 'a#1', { optionId: 'yes' }]]);
    const settle = (id: string) =>
      backend.frame(
        's1',
        live({
          kind: 'agent-prompt-settled',
          sessionId: 'e1',
          toolCallId: id,
          outcome: { optionId: 'x' },
          by: 'user',
        }),
      );
    settle('a#1');
    await waitFor(() => expect(dialog.querySelector('.perm-tool')?.textContent).toContain('b#1'));
    // The next request disarms the keys again, though the dialog stayed on screen.
    expect(isArmed(dialog)).toBe(false);
    await fireEvent.keyDown(dialog, { key: 'N', shiftKey: true });
    expect(backend.called('respondPermission')).toHaveLength(1);
    await passes(ARM_MS);
    await fireEvent.keyDown(dialog, { key: 'N', shiftKey: true });
    expect(backend.called('respondPermission')[1]).toEqual(['s1', 'b#1', { optionId: 'never' }]);
    settle('b#1');
    await waitFor(() => expect(dialog.querySelector('.perm-tool')?.textContent).toContain('c#1'));
    // Esc approves nothing, so it is not guarded: it dismisses at once.
    await fireEvent.keyDown(dialog, { key: 'Escape' });
    expect(backend.called('respondPermission')[2]).toEqual(['s1', 'c#1', { cancelled: true }]);
  });

  it('stays disarmed while keys keep coming, and never takes a plain A as Always allow', async () => {
    const backend = new FakeBackend();
    await open(backend);
    const dialog = await showOnStoppedClock(backend, 's1', request('a#1'));
    // Someone still typing in the composer as the dialog appears, a key every 300 ms: long past
    // 400 ms since it appeared, but never 400 ms without a key. Each of these keys would
    // answer an armed dialog.
    for (const key of ANSWER_KEYS) {
      await passes(300);
      await fireEvent.keyDown(dialog, key);
      expect(isArmed(dialog)).toBe(false);
    }
    expect(backend.called('respondPermission')).toEqual([]);
    // 400 ms after the last key, not one less.
    await passes(ARM_MS - 1);
    expect(isArmed(dialog)).toBe(false);
    await passes(1);
    expect(isArmed(dialog)).toBe(true);
    await fireEvent.keyDown(dialog, { key: 'a' });
    expect(backend.called('respondPermission')).toEqual([]);
    await fireEvent.keyDown(dialog, { key: 'A', shiftKey: true });
    expect(backend.called('respondPermission')).toEqual([['s1', 'a#1', { optionId: 'always' }]]);
  });

  it('answers a request whose id another session used before, and takes answers again after a failure', async () => {
    const backend = new FakeBackend();
    await open(backend);
    let dialog = await showOnStoppedClock(backend, 's1', request('same#1'));
    await passes(ARM_MS);
    await fireEvent.keyDown(dialog, { key: 'y' });
    backend.frame(
      's1',
      live({
        kind: 'agent-prompt-settled',
        sessionId: 'e1',
        toolCallId: 'same#1',
        outcome: { optionId: 'yes' },
        by: 'user',
      }),
    );
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    // waitFor polls on timers, which a stopped clock never runs: real time until the next
    // request is on screen.
    vi.useRealTimers();
    backend.chooseFolder('/other');
    await waitFor(() => expect(backend.called('attach')).toHaveLength(2));
    backend.respondError = { code: 'session-ended', message: 'the agent is gone' };
    dialog = await showOnStoppedClock(backend, 's2', request('same#1'));
    await passes(ARM_MS);
    await fireEvent.keyDown(dialog, { key: 'y' });
    expect(backend.called('respondPermission')).toHaveLength(2);
    expect(backend.called('respondPermission')[1]).toEqual(['s2', 'same#1', { optionId: 'yes' }]);
    // The failure is shown and the buttons come back: the user can answer again.
    await screen.findByText('the agent is gone');
    backend.respondError = null;
    await waitFor(() =>
      expect(
        (within(dialog).getByRole('button', { name: /Allow once/ }) as HTMLButtonElement).disabled,
      ).toBe(false),
    );
    await fireEvent.keyDown(dialog, { key: 'y' });
    expect(backend.called('respondPermission')).toHaveLength(3);
  });

  it('keeps Tab inside the dialog', async () => {
    const backend = new FakeBackend();
    await open(backend);
    backend.frame('s1', live(request('a#1')));
    const dialog = await screen.findByRole('dialog');
    const focusable = [...dialog.querySelectorAll<HTMLElement>('button:not([disabled]), textarea')];
    const last = focusable.at(-1) as HTMLElement;
    last.focus();
    await fireEvent.keyDown(last, { key: 'Tab' });
    expect(document.activeElement).toBe(focusable[0]);
    await fireEvent.keyDown(focusable[0] as HTMLElement, { key: 'Tab', shiftKey: true });
    expect(document.activeElement).toBe(last);
  });
});
