import { describe, expect, it } from 'vitest';
import { taskKindWords, taskStatusWords, taskTitle } from './tasks';

describe('a background task in words', () => {
  it('tags the agent’s own cycle as such, other kinds as the agent names them', () => {
    expect(taskKindWords({ taskId: 'a', taskKind: 'turn' })).toBe('working on its own');
    expect(taskKindWords({ taskId: 'b', taskKind: 'shell' })).toBe('shell');
    expect(taskKindWords({ taskId: 'c' })).toBeNull();
  });

  it('is named by its name, then its description, then its id; stopped by the session’s end', () => {
    expect(taskTitle({ taskId: 't', name: ' build ', description: 'd' })).toBe('build');
    expect(taskTitle({ taskId: 't', description: 'Build it' })).toBe('Build it');
    expect(taskTitle({ taskId: 't' })).toBe('t');
    expect(taskStatusWords({ taskId: 't', status: 'running', settledBy: 'session-end' })).toBe(
      'stopped',
    );
  });
});
