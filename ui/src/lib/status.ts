// What a session is doing, in the words the header and the sidebar use.
import type { SessionView } from './session-store';

export type StatusKey = 'opening' | 'starting' | 'ready' | 'working' | 'waiting' | 'dead';

export interface SessionStatus {
  /** `data-status`: the engine's state, except `working` (a turn) and `waiting` (a permission). */
  key: StatusKey;
  label: string;
  /** Why it ended, or what it waits for; for tooltips. */
  detail: string | null;
}

export function sessionStatus(v: SessionView): SessionStatus {
  if (v.status === 'dead') {
    const reason = (v.statusDetail ?? '').split('\n')[0] || null;
    return { key: 'dead', label: 'Ended', detail: reason };
  }
  if (v.pending.length > 0) {
    const n = v.pending.length;
    return {
      key: 'waiting',
      label: 'Waiting for you',
      detail: `${n} permission request${n === 1 ? '' : 's'} waiting for your answer`,
    };
  }
  if (v.status === 'opening') return { key: 'opening', label: 'Opening…', detail: null };
  if (v.status === 'starting') return { key: 'starting', label: 'Starting…', detail: null };
  if (v.turnRunning || v.status === 'prompting')
    return { key: 'working', label: 'Working…', detail: null };
  return { key: 'ready', label: 'Ready', detail: null };
}

/** Closing would stop something under way (a turn, the agent's start, a question to the user):
 * ask first. */
export function closeNeedsConfirm(v: SessionView): boolean {
  return v.turnRunning || v.status === 'starting' || v.pending.length > 0;
}
