// What the window says and offers when a session's agent died or a prompt failed, by the
// error's kind (the engine's one classification, crates/acp-desk-core/src/error_kind.rs):
// matched on the kind, never on the message.
import type { AgentExit, ErrorKind } from './generated/ipc';
import type { SessionView } from './session-store';

/** Sending the same prompt again may work: the window offers Retry (as
 * `ErrorKind::retryable` says in error_kind.rs). */
export function retryable(kind: ErrorKind | null | undefined): boolean {
  return kind === 'rate-limit' || kind === 'usage-limit' || kind === 'unavailable';
}

/** What Retry's button says, by kind. */
export function retryLabel(kind: ErrorKind | null | undefined): string {
  return kind === 'usage-limit' ? 'Retry (after the limit resets)' : 'Retry';
}

const SIGNALS: Record<number, string> = {
  1: 'SIGHUP',
  2: 'SIGINT',
  3: 'SIGQUIT',
  4: 'SIGILL',
  6: 'SIGABRT',
  8: 'SIGFPE',
  9: 'SIGKILL',
  11: 'SIGSEGV',
  13: 'SIGPIPE',
  15: 'SIGTERM',
};

/** "exit code 3", "signal 9 (SIGKILL)", or null when it had not exited. */
export function exitText(exit: AgentExit | null | undefined): string | null {
  if (!exit) return null;
  if (exit.signal != null) {
    const name = SIGNALS[exit.signal];
    return name ? `signal ${exit.signal} (${name})` : `signal ${exit.signal}`;
  }
  if (exit.code != null) return `exit code ${exit.code}`;
  return null;
}

export interface DeadCard {
  /** "The agent exited." */
  headline: string;
  /** The engine's words (the status detail's first line). */
  why: string | null;
  /** "exit code 3" / "signal 9 (SIGKILL)". */
  exit: string | null;
  /** The agent's last stderr lines, oldest first. */
  stderr: string[];
  /** A new agent process may continue it. */
  reconnect: boolean;
  /** The agent asked for a sign-in: the card shows the agent's ways to sign in. */
  signIn: boolean;
}

/** The dead session's card: why it ended and what the window offers. */
export function deadCard(v: SessionView): DeadCard {
  const kind = v.ended?.kind ?? null;
  const exit = v.ended?.exit ?? null;
  let headline = 'The session has ended.';
  if (kind === 'agent-exited')
    headline = exit?.signal != null ? 'The agent was killed.' : 'The agent exited.';
  else if (kind === 'agent-unresponsive') headline = 'The agent stopped responding.';
  else if (kind === 'auth-required' || v.authRequired)
    headline = v.startFailed
      ? 'The agent could not start a session: it needs you to sign in.'
      : 'The agent needs you to sign in.';
  const why = (v.statusDetail ?? '').split('\n')[0]?.trim() || null;
  return {
    headline,
    why,
    exit: exitText(exit),
    stderr: exit?.stderrTail ?? [],
    // Every session whose agent ended can get a new one; the kinds say it is worth a try.
    reconnect: true,
    signIn: kind === 'auth-required' || v.authRequired,
  };
}
