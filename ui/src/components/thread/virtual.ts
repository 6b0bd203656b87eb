// The thread's virtualizer: @tanstack/virtual-core wired to a scrolling element, entries keyed
// by `entry.key`, measured as they render (heights vary and grow while streaming).
import {
  Virtualizer,
  elementScroll,
  measureElement,
  observeElementOffset,
  observeElementRect,
  type VirtualizerOptions,
} from '@tanstack/virtual-core';
import type { Entry } from '../../lib/session-store';

/** A first guess of an entry's height, before it is measured. */
export function estimateEntry(e: Entry | undefined): number {
  switch (e?.type) {
    case 'agent':
      return 40 + Math.min(600, Math.ceil(e.text.length / 90) * 21);
    case 'user':
      return 52;
    case 'tool':
      return e.content.some((c) => c.type === 'diff' || c.type === 'terminal') ? 260 : 64;
    case 'thought':
      return 30;
    default:
      return 30;
  }
}

export const GAP = 10;
export const OVERSCAN = 6;

function fallbackHeight(): number {
  return typeof window !== 'undefined' && window.innerHeight > 0 ? window.innerHeight : 800;
}

export type ThreadVirtualizer = Virtualizer<HTMLElement, HTMLElement>;

export function threadOptions(
  entries: () => readonly Entry[],
  scrollElement: () => HTMLElement | null,
  onChange: () => void,
): VirtualizerOptions<HTMLElement, HTMLElement> {
  return {
    count: entries().length,
    getScrollElement: scrollElement,
    estimateSize: (i) => estimateEntry(entries()[i]),
    getItemKey: (i) => entries()[i]?.key ?? i,
    // A scroller without layout (hidden, or a test's DOM) still shows a screenful of entries.
    observeElementRect: (instance, cb) =>
      observeElementRect(instance, (rect) =>
        cb(rect.height > 0 ? rect : { width: rect.width, height: fallbackHeight() }),
      ),
    observeElementOffset,
    scrollToFn: elementScroll,
    measureElement,
    overscan: OVERSCAN,
    gap: GAP,
    paddingStart: 16,
    paddingEnd: 8,
    onChange,
  };
}

export function createThreadVirtualizer(
  entries: () => readonly Entry[],
  scrollElement: () => HTMLElement | null,
  onChange: () => void,
): ThreadVirtualizer {
  return new Virtualizer(threadOptions(entries, scrollElement, onChange));
}

/** Distance (px) from the bottom that still counts as "at the bottom". */
export const BOTTOM_SLACK = 48;

export function atBottom(el: { scrollHeight: number; scrollTop: number; clientHeight: number }) {
  return el.scrollHeight - el.scrollTop - el.clientHeight <= BOTTOM_SLACK;
}

/**
 * The reader went up since `lastTop` (by any amount: an arrow key, Home, a scrollbar drag). A
 * clamp (the content shrank, the window grew) lowers scrollTop too, but to the very end: that is
 * no reader going up.
 */
export function wentUp(
  el: { scrollHeight: number; scrollTop: number; clientHeight: number },
  lastTop: number,
): boolean {
  const end = el.scrollHeight - el.clientHeight;
  return el.scrollTop < lastTop - 1 && el.scrollTop < end - 1;
}
