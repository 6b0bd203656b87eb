// What a session is doing, in the words the header and the sidebar use.
import type { AgentListing } from './generated/ipc';
import type { SessionView } from './session-store';

export type StatusKey =
  'opening' | 'starting' | 'ready' | 'working' | 'waiting' | 'dead' | 'stored';

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
  if (waitingCount(v) > 0) {
    return {
      key: 'waiting',
      label: 'Waiting for you',
      detail: `${waitingWords(v)} waiting for your answer`,
    };
  }
  if (v.status === 'stored')
    return {
      key: 'stored',
      label: 'Not started',
      detail: 'Restored from the last run: its agent starts when you return to it',
    };
  if (v.status === 'opening') return { key: 'opening', label: 'Opening…', detail: null };
  if (v.status === 'starting') return { key: 'starting', label: 'Starting…', detail: null };
  if (v.turnRunning || v.status === 'prompting')
    return { key: 'working', label: 'Working…', detail: null };
  return { key: 'ready', label: 'Ready', detail: null };
}

/** Closing would stop something under way (a turn, the agent's start, a question to the user):
 * ask first. */
export function closeNeedsConfirm(v: SessionView): boolean {
  return v.turnRunning || v.status === 'starting' || waitingCount(v) > 0;
}

/** What waits for the user's answer: permission requests and the agent's questions. */
export function waitingCount(v: Pick<SessionView, 'pending' | 'elicitations'>): number {
  return v.pending.length + v.elicitations.length;
}

/** "2 permission requests", "1 question", "1 permission request and 1 question". */
export function waitingWords(v: Pick<SessionView, 'pending' | 'elicitations'>): string {
  const n = (k: number, one: string) => `${k} ${one}${k === 1 ? '' : 's'}`;
  const parts: string[] = [];
  if (v.pending.length > 0) parts.push(n(v.pending.length, 'permission request'));
  if (v.elicitations.length > 0) parts.push(n(v.elicitations.length, 'question'));
  return parts.join(' and ');
}

/** A sentence as we show it: a capital first, a full stop last (engine errors are lower case,
 * as Rust errors are, to be composed into longer messages). */
export function sentence(text: string): string {
  const t = text.trim();
  if (t === '') return t;
  const s = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?)`]$/.test(s) ? s : `${s}.`;
}

export interface StartFailure {
  /** "Gemini could not start." */
  headline: string;
  /** Why, from the engine (its first line), as a sentence. */
  why: string | null;
  /** What to do: the agent's install hint, then the settings file. */
  remedy: string[];
}

/** What the window says once when a session's agent could not start. */
export function startFailure(
  v: SessionView,
  agentId: string,
  agents: AgentListing | null,
): StartFailure {
  const entry = agents?.agents.find((a) => a.id === agentId);
  const name = v.agent?.title || v.agent?.name || agentId;
  const first = (v.statusDetail ?? '').split('\n')[0] ?? '';
  const remedy: string[] = [];
  if (entry?.source === 'settings') {
    remedy.push(
      `Fix its entry (\`${agentId}\` under \`agent_servers\`) in the settings file, then try again.`,
    );
  } else {
    if (entry?.hint) remedy.push(sentence(entry.hint));
    remedy.push(
      `Or set its full command under \`agent_servers\` in the settings file, then try again.`,
    );
  }
  return {
    headline: sentence(`${name} could not start`),
    why: first ? sentence(first) : null,
    remedy,
  };
}
