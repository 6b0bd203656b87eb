// What a terminal view writes when the store's terminal state changes (see TerminalState).
import type { TerminalState } from '../../lib/session-store';

export interface TerminalWrite {
  /** Start over (clear the terminal) before writing: the view fell behind the kept window. */
  reset: boolean;
  data: string;
  /** Characters written once this is done, counted from the terminal's very first one. */
  written: number;
}

/** The next write for a view that has written `written` characters so far. */
export function nextWrite(written: number, state: TerminalState): TerminalWrite {
  const end = state.dropped + state.text.length;
  const start = written - state.dropped;
  if (start < 0) return { reset: true, data: state.text, written: end };
  return { reset: false, data: state.text.slice(start), written: Math.max(end, written) };
}
