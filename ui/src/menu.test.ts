// The menu items the window acts on (`menu-action` events from the Rust menu): the sidebar,
// the theme, undo/redo in the focused field, closing the shown session.
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import App from './App.svelte';
import type { StreamEvent } from './lib/generated/ipc';
import { resetThemeForTests } from './lib/theme';
import { FakeBackend, appInfo } from './test/fake-backend';

const now = (fn: () => void) => fn();
const live = (...events: StreamEvent[]) => ({ snapshot: false, events });
const ready: StreamEvent = { kind: 'session-status', sessionId: 'e1', status: 'ready' };
const root = document.documentElement;

/** A stand-in for the OS's colour preference. */
function osPrefers(dark: boolean) {
  const listeners = new Set<() => void>();
  const query = {
    matches: dark,
    addEventListener: (_: string, fn: () => void) => listeners.add(fn),
    removeEventListener: (_: string, fn: () => void) => listeners.delete(fn),
  };
  const other = { matches: false, addEventListener: () => {}, removeEventListener: () => {} };
  window.matchMedia = vi.fn(
    (q: string) =>
      (q.includes('prefers-color-scheme') ? query : other) as unknown as MediaQueryList,
  );
  return (next: boolean) => {
    query.matches = next;
    for (const fn of listeners) fn();
  };
}

async function openProject(backend: FakeBackend, over: Parameters<typeof appInfo>[0] = {}) {
  backend.info = appInfo({ initialFolder: '/proj', ...over });
  render(App, { backend, schedule: now });
  await waitFor(() => expect(backend.called('attach')).toEqual([['s1']]));
  backend.frame('s1', live(ready));
  await waitFor(() => expect(document.querySelector('.session-header')).toBeTruthy());
}

beforeEach(() => {
  resetThemeForTests();
  delete root.dataset.theme;
});
afterEach(() => cleanup());

describe('menu actions', () => {
  it('View → Toggle Sidebar hides the session list and brings it back', async () => {
    const backend = new FakeBackend();
    await openProject(backend);
    expect(document.querySelector('[data-session-list]')).toBeTruthy();
    backend.menu({ action: 'toggle-sidebar' });
    await waitFor(() => expect(document.querySelector('[data-session-list]')).toBeNull());
    backend.menu({ action: 'toggle-sidebar' });
    await waitFor(() => expect(document.querySelector('[data-session-list]')).toBeTruthy());
  });

  it('applies the saved theme at start, then the one chosen in View → Theme', async () => {
    const osChanges = osPrefers(false);
    const backend = new FakeBackend();
    await openProject(backend, { theme: 'dark' });
    await waitFor(() => expect(root.dataset.theme).toBe('dark'));
    expect(root.style.colorScheme).toBe('dark');
    backend.menu({ action: 'theme', theme: 'light' });
    await waitFor(() => expect(root.dataset.theme).toBe('light'));
    // A chosen theme stays whatever the OS does.
    osChanges(true);
    expect(root.dataset.theme).toBe('light');
    // System follows the OS, now and when it changes.
    backend.menu({ action: 'theme', theme: 'system' });
    await waitFor(() => expect(root.dataset.theme).toBe('dark'));
    osChanges(false);
    expect(root.dataset.theme).toBe('light');
  });

  it('Edit → Undo and Redo run the webview’s editing commands on the focused field', async () => {
    const exec = vi.fn(() => true);
    document.execCommand = exec;
    const backend = new FakeBackend();
    await openProject(backend);
    backend.menu({ action: 'undo' });
    backend.menu({ action: 'redo' });
    expect(exec.mock.calls).toEqual([['undo'], ['redo']]);
  });

  it('File → Close Session closes an idle session at once', async () => {
    const backend = new FakeBackend();
    await openProject(backend);
    backend.menu({ action: 'close-session' });
    await waitFor(() => expect(backend.called('closeSession')).toEqual([['s1']]));
    await waitFor(() => expect(document.querySelector('.session-header')).toBeNull());
  });

  it('File → Close Session asks first while a turn runs: Keep keeps it, Close closes it', async () => {
    const backend = new FakeBackend();
    await openProject(backend);
    backend.frame(
      's1',
      live({ kind: 'turn-start', sessionId: 'e1', prompt: [{ type: 'text', text: 'go' }] }),
    );
    backend.menu({ action: 'close-session' });
    const question = await screen.findByRole('alertdialog');
    expect(question.textContent).toContain('proj is busy. Stop the agent and close?');
    expect(backend.called('closeSession')).toEqual([]);
    await fireEvent.click(within(question).getByText('Keep'));
    await waitFor(() => expect(screen.queryByRole('alertdialog')).toBeNull());
    expect(backend.called('closeSession')).toEqual([]);

    backend.menu({ action: 'close-session' });
    await fireEvent.click(within(await screen.findByRole('alertdialog')).getByText('Close'));
    await waitFor(() => expect(backend.called('closeSession')).toEqual([['s1']]));
    expect(screen.queryByRole('alertdialog')).toBeNull();
  });

  it('File → Close Session with nothing open does nothing', async () => {
    const backend = new FakeBackend();
    render(App, { backend, schedule: now });
    await screen.findByText('Drop a folder here, or File → Open Folder');
    backend.menu({ action: 'close-session' });
    expect(backend.called('closeSession')).toEqual([]);
  });
});

describe('the theme', () => {
  // Styles select on `data-theme`, so a theme chosen in the menu wins over the OS; a
  // `prefers-color-scheme` query anywhere else would ignore the choice.
  it('is read from the OS in lib/theme.ts only', () => {
    const sources = import.meta.glob('./**/*.{svelte,ts,css}', {
      query: '?raw',
      import: 'default',
      eager: true,
    }) as Record<string, string>;
    expect(Object.keys(sources).length).toBeGreaterThan(20);
    // Stylesheets are read as they are (vite.config.ts), not as vitest's empty stand-ins.
    expect(sources['./app.css']).toContain(':root');
    const readers = Object.entries(sources)
      .filter(([path, text]) => !path.endsWith('.test.ts') && /prefers-color-scheme\s*:/.test(text))
      .map(([path]) => path);
    expect(readers).toEqual(['./lib/theme.ts']);
  });
});
