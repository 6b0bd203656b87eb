// The dead session's card (why, exit, stderr, Reconnect) and Retry after a rate or usage
// limit: the window matches the engine's error kind, never its text.
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import App from './App.svelte';
import { deadCard, exitText, retryable } from './lib/ended';
import type { ErrorKind, StreamEvent } from './lib/generated/ipc';
import { SessionStore } from './lib/session-store';
import { FakeBackend, appInfo } from './test/fake-backend';

const now = (fn: () => void) => fn();
const live = (...events: StreamEvent[]) => ({ snapshot: false, events });
const status = (s: 'starting' | 'ready' | 'dead', detail?: string): StreamEvent => ({
  kind: 'session-status',
  sessionId: 'e1',
  status: s,
  ...(detail ? { detail } : {}),
  agent: { launchName: 'demo', title: 'ACP Desk demo agent', acpSessionId: 'acp-1' },
});
const crash: StreamEvent[] = [
  { kind: 'turn-start', sessionId: 'e1', prompt: [{ type: 'text', text: 'crash' }] },
  { kind: 'text-delta', sessionId: 'e1', text: "I'm going to crash now" },
  {
    kind: 'error',
    sessionId: 'e1',
    error: {
      message: 'The agent exited with code 3 during the turn.',
      kind: 'agent-exited',
      exit: { code: 3, stderrTail: ['demo-agent: playing crash', 'demo-agent: exit 3'] },
    },
  },
  { kind: 'turn-end', sessionId: 'e1', reason: 'error' },
  status('dead', 'The agent exited with code 3 during the turn.\nLast lines of its error output:'),
];
const limited = (kind: ErrorKind, message: string): StreamEvent[] => [
  { kind: 'turn-start', sessionId: 'e1', prompt: [{ type: 'text', text: 'fix the bug' }] },
  { kind: 'error', sessionId: 'e1', error: { code: -32603, message, kind } },
  { kind: 'turn-end', sessionId: 'e1', reason: 'error' },
  status('ready'),
];

afterEach(() => cleanup());

const feed = (store: SessionStore, events: StreamEvent[]) => store.applyAll([live(...events)]);

async function open(backend: FakeBackend) {
  backend.info = appInfo({ initialFolder: '/proj' });
  render(App, { backend, schedule: now });
  await waitFor(() => expect(backend.called('attach')).toEqual([['s1']]));
  backend.frame('s1', live(status('ready')));
}

describe('ended.ts', () => {
  it('offers Retry for the limits and an unavailable service only', () => {
    const yes: ErrorKind[] = ['rate-limit', 'usage-limit', 'unavailable'];
    const no: ErrorKind[] = [
      'auth-required',
      'context-too-long',
      'agent-exited',
      'agent-unresponsive',
      'start-failed',
      'protocol',
      'other',
    ];
    for (const k of yes) expect(retryable(k), k).toBe(true);
    for (const k of no) expect(retryable(k), k).toBe(false);
    expect(retryable(null)).toBe(false);
  });

  it('says an exit as a code or a signal, named', () => {
    expect(exitText({ code: 3, stderrTail: [] })).toBe('exit code 3');
    expect(exitText({ signal: 9, stderrTail: [] })).toBe('signal 9 (SIGKILL)');
    expect(exitText({ signal: 64, stderrTail: [] })).toBe('signal 64');
    expect(exitText({ stderrTail: [] })).toBeNull();
    expect(exitText(null)).toBeNull();
  });

  it('builds the card from the death, and a reconnect clears it', () => {
    const store = new SessionStore();
    feed(store, [status('ready'), ...crash]);
    const card = deadCard(store.state);
    expect(card.headline).toBe('The agent exited.');
    expect(card.why).toBe('The agent exited with code 3 during the turn.');
    expect(card.exit).toBe('exit code 3');
    expect(card.stderr).toEqual(['demo-agent: playing crash', 'demo-agent: exit 3']);
    // The reconnect's first status: the session runs again; its thread stays.
    const entries = store.state.entries.length;
    feed(store, [status('starting')]);
    expect(store.state.ended).toBeNull();
    expect(store.state.entries).toHaveLength(entries);
  });

  it('marks the last retryable error, until the next turn', () => {
    const store = new SessionStore();
    feed(store, limited('rate-limit', 'Rate limit reached'));
    const err = store.state.entries.find((e) => e.type === 'error');
    expect(err?.key).toBe(store.state.retryEntry);
    feed(store, [{ kind: 'turn-start', sessionId: 'e1', prompt: [{ type: 'text', text: 'x' }] }]);
    expect(store.state.retryEntry).toBeNull();
    // Not for a kind that a second try does not help.
    const other = new SessionStore();
    feed(other, limited('context-too-long', 'Prompt is too long'));
    expect(other.state.retryEntry).toBeNull();
  });
});

describe('the window', () => {
  it('shows why the agent died, its stderr folded, and reconnects in place', async () => {
    const backend = new FakeBackend();
    await open(backend);
    backend.frame('s1', live(...crash));
    const card = (await waitFor(() => {
      const c = document.querySelector('[data-dead]');
      expect(c).toBeTruthy();
      return c;
    })) as HTMLElement;
    expect(card.dataset.kind).toBe('agent-exited');
    expect(card.textContent).toContain('The agent exited.');
    expect(card.textContent).toContain('The agent exited with code 3 during the turn.');
    expect(card.dataset.exitCode).toBe('3');
    // The engine's words say the code already: the fact is not repeated.
    expect(card.querySelector('[data-exit]')).toBeNull();
    const details = card.querySelector('details[data-stderr]') as HTMLDetailsElement;
    expect(details.open).toBe(false);
    expect(details.querySelector('summary')?.textContent).toBe('Its last 2 lines of error output');
    expect(details.querySelector('pre')?.textContent).toBe(
      'demo-agent: playing crash\ndemo-agent: exit 3',
    );
    const box = screen.getByLabelText('Prompt') as HTMLTextAreaElement;
    expect(box.placeholder).toContain('reconnect');

    await fireEvent.click(within(card).getByRole('button', { name: 'Reconnect' }));
    expect(backend.called('reconnectSession')).toEqual([['s1']]);
    // No new session: the same one continues; its new agent's events arrive on its channel.
    expect(backend.called('openSession')).toHaveLength(1);
    backend.frame(
      's1',
      live(
        status('starting'),
        {
          kind: 'session-continued',
          sessionId: 'e1',
          mode: 'continue',
          outcome: 'resumed',
          acpSessionId: 'acp-1',
        },
        status('ready'),
      ),
    );
    await waitFor(() => expect(document.querySelector('[data-dead]')).toBeNull());
    expect(box.disabled).toBe(false);
    // The thread is still there.
    expect(screen.getByText("I'm going to crash now")).toBeTruthy();
  });

  it('says so when the reconnect is refused, and the card stays', async () => {
    const backend = new FakeBackend();
    backend.reconnectError = { code: 'agent-unavailable', message: 'demo is not installed' };
    await open(backend);
    backend.frame('s1', live(...crash));
    const button = await screen.findByRole('button', { name: 'Reconnect' });
    await fireEvent.click(button);
    expect(await screen.findByText('demo is not installed')).toBeTruthy();
    await waitFor(() =>
      expect(
        (screen.getByRole('button', { name: 'Reconnect' }) as HTMLButtonElement).disabled,
      ).toBe(false),
    );
  });

  it('offers Retry after a rate limit, sending the same prompt again', async () => {
    const backend = new FakeBackend();
    await open(backend);
    const box = screen.getByLabelText('Prompt') as HTMLTextAreaElement;
    await fireEvent.input(box, { target: { value: 'fix the bug' } });
    await fireEvent.keyDown(box, { key: 'Enter' });
    expect(backend.called('prompt')).toHaveLength(1);
    backend.frame(
      's1',
      live(...limited('rate-limit', 'Internal error: API Error: Rate limit reached')),
    );
    const entry = (await waitFor(() => {
      const e = document.querySelector('[data-entry="error"]');
      expect(e).toBeTruthy();
      return e;
    })) as HTMLElement;
    expect(entry.dataset.kind).toBe('rate-limit');
    await fireEvent.click(within(entry).getByRole('button', { name: 'Retry' }));
    expect(backend.called('prompt')).toEqual([
      ['s1', [{ type: 'text', text: 'fix the bug' }]],
      ['s1', [{ type: 'text', text: 'fix the bug' }]],
    ]);
  });

  it('offers no Retry for an error a second try does not help', async () => {
    const backend = new FakeBackend();
    await open(backend);
    backend.frame('s1', live(...limited('context-too-long', 'Internal error: Prompt is too long')));
    await screen.findByText('Internal error: Prompt is too long');
    expect(screen.queryByRole('button', { name: /Retry/ })).toBeNull();
  });

  it('offers Retry for a usage limit without a prompt sent in this window (from the thread)', async () => {
    const backend = new FakeBackend();
    await open(backend);
    backend.frame('s1', live(...limited('usage-limit', "You've hit your session limit")));
    await fireEvent.click(
      await screen.findByRole('button', { name: 'Retry (after the limit resets)' }),
    );
    expect(backend.called('prompt')).toEqual([['s1', [{ type: 'text', text: 'fix the bug' }]]]);
  });
});

describe('the card without the engine’s words', () => {
  it('says the exit fact itself, a signal by name', async () => {
    const backend = new FakeBackend();
    await open(backend);
    backend.frame(
      's1',
      live(
        {
          kind: 'error',
          sessionId: 'e1',
          error: {
            message: 'killed',
            kind: 'agent-exited',
            exit: { signal: 9, stderrTail: [] },
          },
        },
        {
          kind: 'session-status',
          sessionId: 'e1',
          status: 'dead',
          agent: { launchName: 'demo', acpSessionId: 'acp-1' },
        },
      ),
    );
    const card = (await waitFor(() => {
      const c = document.querySelector('[data-dead]');
      expect(c).toBeTruthy();
      return c;
    })) as HTMLElement;
    expect(card.querySelector('strong')?.textContent).toBe('The agent was killed.');
    expect(card.querySelector('[data-exit]')?.textContent).toBe("The agent's signal 9 (SIGKILL).");
    expect(card.dataset.signal).toBe('9');
    expect(card.querySelector('details')).toBeNull();
  });
});
