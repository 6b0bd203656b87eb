// Icons of the thread: 16×16 stroked outlines (one family, drawn with currentColor), as SVG
// path data rendered by Icon.svelte. Ours, not the agent's: no untrusted markup.
import type { ToolKind } from '../../lib/generated/ipc';

export const icons = {
  read: 'M2.5 3.5h4a1.5 1.5 0 0 1 1.5 1.5v8a1.2 1.2 0 0 0-1.2-1.2H2.5zM13.5 3.5h-4A1.5 1.5 0 0 0 8 5v8a1.2 1.2 0 0 1 1.2-1.2h4.3z',
  edit: 'M10.5 2.5l3 3-7.5 7.5H3v-3zM9 4l3 3',
  delete: 'M3 4.5h10M6.5 4.5V3h3v1.5M4.5 4.5l.7 9h5.6l.7-9M6.8 7v4.5M9.2 7v4.5',
  move: 'M2.5 8h10M10 5l3 3-3 3M2.5 4v8',
  search: 'M7 2.8a4.2 4.2 0 1 1 0 8.4 4.2 4.2 0 0 1 0-8.4zM10.1 10.1l3.4 3.4',
  execute: 'M2.5 3.5h11v9h-11zM4.8 6.3l2 1.7-2 1.7M8.5 10h3',
  think: 'M8 2.5a4 4 0 0 0-2.4 7.2V11h4.8V9.7A4 4 0 0 0 8 2.5zM6.3 13.3h3.4',
  fetch:
    'M8 2.5a5.5 5.5 0 1 1 0 11 5.5 5.5 0 0 1 0-11zM2.5 8h11M8 2.5c-2.4 2.8-2.4 8.2 0 11M8 2.5c2.4 2.8 2.4 8.2 0 11',
  switch_mode: 'M3 5.5h9.5M10 3l2.5 2.5L10 8M13 10.5H3.5M6 8l-2.5 2.5L6 13',
  other:
    'M6.3 3.2l-3 3a2.2 2.2 0 0 0 0 3.1l.4.4M9.7 12.8l3-3a2.2 2.2 0 0 0 0-3.1l-.4-.4M5.5 10.5l5-5',
  file: 'M4 2.5h5l3 3v8H4zM9 2.5v3h3',
  image: 'M2.5 3.5h11v9h-11zM2.5 10.5l3-3 3 3 2-2 3 3M10.5 5.8a.7.7 0 1 1 0 1.4.7.7 0 0 1 0-1.4z',
  audio: 'M3 6.5h2.5L9 3.5v9l-3.5-3H3zM11.2 6a3 3 0 0 1 0 4',
  resource: 'M3 3.5h10v9H3zM3 6.5h10M6 9h4',
  reveal: 'M2.5 4.5h4l1.5 1.5h5.5v6.5h-11zM8 8v3M6.8 9.8L8 11l1.2-1.2',
  chevron: 'M6 4l4 4-4 4',
  check: 'M3.5 8.5l3 3 6-7',
  cross: 'M4.5 4.5l7 7M11.5 4.5l-7 7',
  clock: 'M8 2.8a5.2 5.2 0 1 1 0 10.4 5.2 5.2 0 0 1 0-10.4zM8 5v3.2l2 1.3',
  alert: 'M8 2.5l6 10.5H2zM8 6.5v3M8 11.2v.3',
  info: 'M8 2.5a5.5 5.5 0 1 1 0 11 5.5 5.5 0 0 1 0-11zM8 7.3v3.7M8 5.2v.3',
  shield: 'M8 2.2l5 1.8v3.6c0 3-2.2 5.2-5 6.2-2.8-1-5-3.2-5-6.2V4z',
  stop: 'M4.5 4.5h7v7h-7z',
  arrowDown: 'M8 3v10M4 9l4 4 4-4',
  question:
    'M8 2.5a5.5 5.5 0 1 1 0 11 5.5 5.5 0 0 1 0-11zM6.3 6.4a1.8 1.8 0 1 1 2.5 1.6c-.5.2-.8.6-.8 1.1v.3M8 11.1v.3',
  wake: 'M12.8 8a4.8 4.8 0 1 1-1.4-3.4M12 2.6v2.6H9.4M8 5.5V8l1.6 1',
} as const;

export type IconName = keyof typeof icons;

export function kindIcon(kind: ToolKind | null): IconName {
  return kind && kind in icons ? (kind as IconName) : 'other';
}

export const kindLabel: Record<ToolKind, string> = {
  read: 'Read',
  edit: 'Edit',
  delete: 'Delete',
  move: 'Move',
  search: 'Search',
  execute: 'Run',
  think: 'Think',
  fetch: 'Fetch',
  switch_mode: 'Mode',
  other: 'Tool',
};
