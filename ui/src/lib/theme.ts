// The window's colours: View → Theme chooses system, light or dark (saved by the Rust side);
// this module applies the choice. It is THE reader of `prefers-color-scheme`: styles select on
// `:root[data-theme='dark']` (never on the media query, which a chosen theme could not
// override), and scripts that need the colours (xterm.js) subscribe to `shownTheme`.
import { readable, type Readable } from 'svelte/store';
import type { Theme } from './generated/ipc';

export type Shown = 'light' | 'dark';

type Listener = (t: Shown) => void;

let choice: Theme = 'system';
let shown: Shown = 'light';
const listeners = new Set<Listener>();
let media: MediaQueryList | null = null;

function systemIsDark(): boolean {
  return media?.matches ?? false;
}

function show(): void {
  const next: Shown = choice === 'system' ? (systemIsDark() ? 'dark' : 'light') : choice;
  const root = document.documentElement;
  root.dataset.theme = next;
  // Native controls and scrollbars follow too.
  root.style.colorScheme = next;
  if (next === shown) return;
  shown = next;
  for (const fn of listeners) fn(next);
}

/** Applies `theme` to the document now, and keeps following the OS while it is `system`. */
export function applyTheme(theme: Theme): void {
  if (!media && typeof window.matchMedia === 'function') {
    media = window.matchMedia('(prefers-color-scheme: dark)');
    media.addEventListener?.('change', () => {
      if (choice === 'system') show();
    });
  }
  // Anything else (an older Rust side that sends none) is the OS's.
  choice = theme === 'light' || theme === 'dark' ? theme : 'system';
  show();
}

/** The colours shown: the chosen theme, or the OS's while the choice is `system`. */
export const shownTheme: Readable<Shown> = readable<Shown>(shown, (set) => {
  set(shown);
  listeners.add(set);
  return () => listeners.delete(set);
});

/** For tests: forget the OS query, so the next `applyTheme` reads `window.matchMedia` again. */
export function resetThemeForTests(): void {
  media = null;
  choice = 'system';
  shown = 'light';
  listeners.clear();
}
