// A session's background tasks in words (the header's chip and its list).
import type { BackgroundTaskInfo } from './generated/ipc';

/** Running (an agent that says nothing of its state means running). */
export function isRunning(t: BackgroundTaskInfo): boolean {
  return !t.status || t.status === 'running';
}

/** Not over yet: running or paused (what Stop is offered for). */
export function isActive(t: BackgroundTaskInfo): boolean {
  return isRunning(t) || t.status === 'paused';
}

/** The line that names it: its name, else what the agent says it does, else its kind or id. */
export function taskTitle(t: BackgroundTaskInfo): string {
  return t.name?.trim() || t.description?.trim() || t.taskKind?.trim() || t.taskId;
}

/** Its status in one word (an agent that says nothing means running). */
export function taskStatusWords(t: BackgroundTaskInfo): string {
  return t.settledBy === 'session-end' ? 'stopped' : (t.status ?? 'running');
}

/** Who ended it, when ACP Desk did: the session ended while it ran. */
export function taskSettledNote(t: BackgroundTaskInfo): string | null {
  return t.settledBy === 'session-end' ? 'ACP Desk stopped it: the session ended.' : null;
}

/** "2 running, 1 completed" (for the chip's tooltip). */
export function tasksSummary(tasks: readonly BackgroundTaskInfo[]): string {
  const counts = new Map<string, number>();
  for (const t of tasks) {
    const k = t.settledBy === 'session-end' ? 'stopped' : (t.status ?? 'running');
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${n} ${k}`).join(', ') || 'none';
}

/** The kind as the list tags it: claude-agent-acp reports the model's own cycles (after a task
 * ended) as tasks of kind `turn`; they are the agent working on its own, not a job it runs. */
export function taskKindWords(t: BackgroundTaskInfo): string | null {
  const kind = t.taskKind?.trim();
  if (!kind) return null;
  return kind === 'turn' ? 'working on its own' : kind;
}
