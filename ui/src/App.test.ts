import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import App from './App.svelte';
import type { StreamEvent } from './lib/generated/ipc';
import { FakeBackend, appInfo } from './test/fake-backend';

const now = (fn: () => void) => fn();
const live = (...events: StreamEvent[]) => ({ snapshot: false, events });
const ready: StreamEvent = {
  kind: 'session-status',
  sessionId: 'e1',
  status: 'ready',
  agent: { launchName: 'demo', title: 'ACP Desk demo agent' },
};

afterEach(() => cleanup());

/** The shown session's header (the sidebar repeats some of what it says). */
const header = () => document.querySelector('.session-header') as HTMLElement;

async function openWithFolder(backend: FakeBackend) {
  backend.info = appInfo({ initialFolder: '/proj' });
  render(App, { backend, schedule: now });
  await waitFor(() => expect(backend.called('attach')).toEqual([['s1']]));
  backend.frame('s1', live(ready));
  await waitFor(() => expect(within(header()).getByText('Ready')).toBeTruthy());
}

describe('App', () => {
  it('says what to do when no folder is open, and offers the agents', async () => {
    const backend = new FakeBackend();
    render(App, { backend, schedule: now });
    expect(await screen.findByText('Drop a folder here, or File → Open Folder')).toBeTruthy();
    const select = (await screen.findByLabelText('Agent')) as HTMLSelectElement;
    expect(select.value).toBe('demo');
    expect(screen.getByText(/Gemini CLI \(not installed\)/)).toBeTruthy();
    await fireEvent.click(screen.getAllByText('Open Folder…')[1] as HTMLElement);
    expect(backend.called('pickFolder')).toHaveLength(1);
  });

  it('opens the folder from the command line, streams the answer, and sends prompts', async () => {
    const backend = new FakeBackend();
    await openWithFolder(backend);
    expect(backend.called('openSession')).toEqual([['/proj', 'demo']]);
    expect(within(header()).getByText('/proj')).toBeTruthy();
    expect(within(header()).getByText('ACP Desk demo agent')).toBeTruthy();

    const box = screen.getByLabelText('Prompt') as HTMLTextAreaElement;
    await fireEvent.input(box, { target: { value: 'line one' } });
    await fireEvent.keyDown(box, { key: 'Enter', shiftKey: true });
    expect(backend.called('prompt')).toEqual([]);
    await fireEvent.keyDown(box, { key: 'Enter' });
    expect(backend.called('prompt')).toEqual([['s1', [{ type: 'text', text: 'line one' }]]]);
    expect(box.value).toBe('');

    backend.frame(
      's1',
      live(
        { kind: 'turn-start', sessionId: 'e1', prompt: [{ type: 'text', text: 'line one' }] },
        { kind: 'text-delta', sessionId: 'e1', text: 'Hello' },
      ),
    );
    backend.frame('s1', live({ kind: 'text-delta', sessionId: 'e1', text: ', world' }));
    expect(await screen.findByText('Hello, world')).toBeTruthy();
    // Esc stops a running turn.
    await fireEvent.keyDown(box, { key: 'Escape' });
    expect(backend.called('cancel')).toEqual([['s1']]);
    backend.frame(
      's1',
      live({ kind: 'turn-end', sessionId: 'e1', reason: 'cancelled', stopReason: 'cancelled' }),
    );
    expect(await screen.findByText('Stopped.')).toBeTruthy();
  });

  it('answers permission requests from the dialog, with feedback on rejection', async () => {
    const backend = new FakeBackend();
    await openWithFolder(backend);
    backend.frame(
      's1',
      live({
        kind: 'agent-prompt',
        sessionId: 'e1',
        toolCallId: 'call-1#1',
        targetToolCallId: 'call-1',
        toolName: 'Run `rm -rf build`',
        toolKind: 'execute',
        rawInput: { command: 'rm -rf build', cwd: '/proj' },
        options: [
          { optionId: 'no', name: 'Reject', kind: 'reject_once' },
          { optionId: 'yes', name: 'Allow once', kind: 'allow_once' },
        ],
      }),
    );
    const dialog = await screen.findByRole('dialog');
    expect(dialog.textContent).toContain('rm -rf build');
    // Allow comes first whatever order the agent sent.
    const buttons = [...dialog.querySelectorAll('.choices button')];
    expect(buttons.map((b) => b.getAttribute('data-kind'))).toEqual([
      'allow_once',
      'reject_once',
      'cancelled',
    ]);
    expect(buttons.map((b) => b.querySelector('.choice-label')?.textContent ?? 'Dismiss')).toEqual([
      'Allow once',
      'Reject',
      'Dismiss',
    ]);
    await fireEvent.input(dialog.querySelector('textarea') as HTMLTextAreaElement, {
      target: { value: 'use make clean' },
    });
    await fireEvent.click(screen.getByText('Reject'));
    expect(backend.called('respondPermission')).toEqual([
      ['s1', 'call-1#1', { optionId: 'no', feedback: 'use make clean' }],
    ]);
    backend.frame(
      's1',
      live({
        kind: 'agent-prompt-settled',
        sessionId: 'e1',
        toolCallId: 'call-1#1',
        outcome: { optionId: 'no' },
        by: 'user',
        feedback: 'use make clean',
      }),
    );
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(screen.getByText(/you chose “Reject”. Feedback: “use make clean”/)).toBeTruthy();
  });

  it('never focuses an option, sends one answer per request, and keeps quiet when it was settled elsewhere', async () => {
    const backend = new FakeBackend();
    await openWithFolder(backend);
    backend.respondError = { code: 'permission-unknown', message: 'no pending permission request' };
    backend.frame(
      's1',
      live({
        kind: 'agent-prompt',
        sessionId: 'e1',
        toolCallId: 'c#1',
        targetToolCallId: 'c',
        toolName: 'Edit main.rs',
        options: [{ optionId: 'ok', name: 'Allow once', kind: 'allow_once' }],
      }),
    );
    const dialog = await screen.findByRole('dialog');
    await waitFor(() => expect(document.activeElement).toBe(dialog));
    const allow = screen.getByText('Allow once').closest('button') as HTMLButtonElement;
    await fireEvent.click(allow);
    await fireEvent.click(allow);
    expect(backend.called('respondPermission')).toHaveLength(1);
    await waitFor(() => expect(allow.disabled).toBe(true));
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('gives the draft back when the prompt is refused, and Esc stops from anywhere', async () => {
    const backend = new FakeBackend();
    await openWithFolder(backend);
    backend.promptResult = Promise.reject({
      code: 'session-ended',
      message: 'the session has ended: the agent exited',
    });
    const box = screen.getByLabelText('Prompt') as HTMLTextAreaElement;
    await fireEvent.input(box, { target: { value: 'keep me' } });
    await fireEvent.keyDown(box, { key: 'Enter' });
    await waitFor(() => expect(box.value).toBe('keep me'));
    expect((await screen.findByRole('alert')).getAttribute('data-code')).toBe('session-ended');

    backend.frame(
      's1',
      live({ kind: 'turn-start', sessionId: 'e1', prompt: [{ type: 'text', text: 'x' }] }),
    );
    await screen.findByText('Stop');
    await fireEvent.keyDown(window, { key: 'Escape' });
    expect(backend.called('cancel')).toEqual([['s1']]);
  });

  it('says what went wrong when a dropped item is not a folder, and stays usable', async () => {
    const backend = new FakeBackend();
    backend.refuse.set('/notes.txt', {
      code: 'not-a-folder',
      message: '/notes.txt is a file, not a folder. Drop or open the project’s folder instead.',
    });
    render(App, { backend, schedule: now });
    await screen.findByText('Drop a folder here, or File → Open Folder');
    backend.drop(['/notes.txt']);
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('is a file, not a folder');
    expect(alert.getAttribute('data-code')).toBe('not-a-folder');
    // The menu's choice goes the same way and works.
    backend.chooseFolder('/proj');
    await waitFor(() => expect(backend.called('attach')).toEqual([['s1']]));
    expect(backend.called('openSession')).toEqual([
      ['/notes.txt', 'demo'],
      ['/proj', 'demo'],
    ]);
  });

  it('shows a failure of ACP Desk itself as ours, not the user’s, and asks for a report', async () => {
    const backend = new FakeBackend();
    backend.refuse.set('/proj', {
      code: 'internal',
      message: 'could not check the folder: the task stopped before it finished (panicked)',
    });
    render(App, { backend, schedule: now });
    await screen.findByText('Drop a folder here, or File → Open Folder');
    backend.drop(['/proj']);
    const alert = await screen.findByRole('alert');
    expect(alert.getAttribute('data-code')).toBe('internal');
    expect(alert.textContent).toContain(
      'ACP Desk failed: could not check the folder: the task stopped before it finished (panicked) — please report it.',
    );
  });

  it('shows why the agent ended', async () => {
    const backend = new FakeBackend();
    await openWithFolder(backend);
    backend.frame(
      's1',
      live(
        { kind: 'error', sessionId: 'e1', error: { message: 'the agent exited with code 3' } },
        {
          kind: 'session-status',
          sessionId: 'e1',
          status: 'dead',
          detail: 'the agent exited with code 3',
        },
      ),
    );
    const ended = await screen.findByRole('status');
    expect(ended.textContent).toContain('The session has ended.');
    expect(ended.textContent).toContain('the agent exited with code 3');
    const box = screen.getByLabelText('Prompt') as HTMLTextAreaElement;
    expect(box.disabled).toBe(true);
    expect(box.placeholder).toContain('start a new one');
    // Starting over opens the same folder again.
    await fireEvent.click(screen.getByText('Start a new session'));
    await waitFor(() => expect(backend.called('openSession')).toHaveLength(2));
    expect(backend.called('openSession')[1]).toEqual(['/proj', 'demo']);
    await waitFor(() => expect(backend.called('closeSession')).toEqual([['s1']]));
  });
});
