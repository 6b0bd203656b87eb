// What the desktop (src-tauri/src/desktop) asks of the window: `show-request` from a
// notification or a tray item shows that session on the dialog of the request it named, and
// `desktop-notice` (no notification service) is said once, in a banner.
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import App from './App.svelte';
import type { StreamEvent } from './lib/generated/ipc';
import { FakeBackend, appInfo } from './test/fake-backend';

const now = (fn: () => void) => fn();
const live = (...events: StreamEvent[]) => ({ snapshot: false, events });
const ready: StreamEvent = { kind: 'session-status', sessionId: 'e1', status: 'ready' };

afterEach(() => cleanup());

const header = () => document.querySelector('.session-header') as HTMLElement;

function request(id: string, title: string): StreamEvent {
  return {
    kind: 'agent-prompt',
    sessionId: 'e2',
    toolCallId: id,
    targetToolCallId: id.split('#')[0] as string,
    toolName: title,
    toolKind: 'read',
    options: [
      { optionId: 'no', name: 'Reject', kind: 'reject_once' },
      { optionId: 'yes', name: 'Allow once', kind: 'allow_once' },
    ],
  };
}

/** Two sessions, /proj (s1, shown) and /web (s2) with two requests waiting. */
async function twoSessions(backend: FakeBackend) {
  backend.info = appInfo({ initialFolder: '/proj' });
  render(App, { backend, schedule: now });
  await waitFor(() => expect(backend.called('attach')).toEqual([['s1']]));
  backend.frame('s1', live(ready));
  backend.chooseFolder('/web');
  await waitFor(() => expect(backend.called('attach')).toEqual([['s1'], ['s2']]));
  backend.frame('s2', live({ ...ready, sessionId: 'e2' }));
  await fireEvent.click(
    document.querySelector('[data-session="s1"] .session-select') as HTMLElement,
  );
  await waitFor(() => expect(within(header()).getByText('/proj')).toBeTruthy());
  backend.frame('s2', live(request('r1#1', 'Read a.txt'), request('r2#1', 'Read b.txt')));
  expect(screen.queryByRole('dialog')).toBeNull();
}

describe('the desktop asks the window', () => {
  it('to show a session on the dialog of the request a notification named', async () => {
    const backend = new FakeBackend();
    await twoSessions(backend);
    backend.showRequest({ session: 's2', requestId: 'r2#1' });
    const dialog = await screen.findByRole('dialog');
    expect(within(header()).getByText('/web')).toBeTruthy();
    // The newer of the two, not the oldest the dialog would start with.
    expect(dialog.querySelector('[data-queue-position]')?.textContent).toBe('2 of 2');
    expect(dialog.querySelector('[aria-current="step"]')?.textContent).toContain('Read b.txt');
  });

  it('to show a session without a request (a turn ended), and ignores a closed one', async () => {
    const backend = new FakeBackend();
    await twoSessions(backend);
    backend.showRequest({ session: 's9' });
    expect(within(header()).getByText('/proj')).toBeTruthy();
    backend.showRequest({ session: 's2' });
    const dialog = await screen.findByRole('dialog');
    expect(within(header()).getByText('/web')).toBeTruthy();
    expect(dialog.querySelector('[aria-current="step"]')?.textContent).toContain('Read a.txt');
  });

  it('to say once that there is no notification service, at start or later', async () => {
    const backend = new FakeBackend();
    const message = 'No notification service answers on this desktop, so ACP Desk cannot tell you';
    backend.info = appInfo({ desktopNotice: message });
    render(App, { backend, schedule: now });
    const banner = await waitFor(() => {
      const b = document.querySelector('[data-desktop-notice]');
      expect(b).toBeTruthy();
      return b as HTMLElement;
    });
    expect(banner.textContent).toContain(message);
    // The event for the same finding (it raced the window's start) shows no second banner.
    backend.desktopNotice({ message });
    await waitFor(() => expect(document.querySelectorAll('[data-desktop-notice]')).toHaveLength(1));
    await fireEvent.click(within(banner).getByLabelText('Dismiss'));
    await waitFor(() => expect(document.querySelector('[data-desktop-notice]')).toBeNull());
  });

  it('to say it when the finding comes after the window started', async () => {
    const backend = new FakeBackend();
    render(App, { backend, schedule: now });
    await waitFor(() => expect(backend.called('appInfo')).toHaveLength(1));
    expect(document.querySelector('[data-desktop-notice]')).toBeNull();
    backend.desktopNotice({ message: 'no notification service' });
    await waitFor(() =>
      expect(document.querySelector('[data-desktop-notice]')?.textContent ?? '').toContain(
        'no notification service',
      ),
    );
  });
});
