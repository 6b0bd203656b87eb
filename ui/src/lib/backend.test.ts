import { describe, expect, it, vi } from 'vitest';
import { COMMAND_NAMES } from './generated/ipc';

// Tauri itself is not here: record what the backend asks of it.
const invoke = vi.hoisted(() =>
  vi.fn<(cmd: string, args?: Record<string, unknown>) => Promise<unknown>>(async () => undefined),
);
vi.mock('@tauri-apps/api/core', () => ({
  invoke,
  Channel: class {
    onmessage: unknown = null;
  },
}));
vi.mock('@tauri-apps/api/event', () => ({ listen: vi.fn(async () => () => undefined) }));
vi.mock('@tauri-apps/api/window', () => ({
  getCurrentWindow: () => ({ setTitle: vi.fn(async () => undefined) }),
}));

const {
  tauriBackend,
  tauriCheckpointsBackend,
  tauriHistoryBackend,
  tauriLoginBackend,
  tauriProjectMcpBackend,
  tauriSecretsBackend,
  tauriSignInBackend,
} = await import('./backend');

describe('tauriBackend', () => {
  it('calls every command of the Rust list, and only those', async () => {
    // The History view's, the MCP servers & secrets view's and the project MCP offer's
    // commands are backends of their own (lib/history.ts, lib/secrets.ts, lib/project-mcp.ts),
    // and so are the sign-in's (lib/sign-in.ts) and the review panel's (lib/checkpoints.ts).
    const backend = {
      ...tauriBackend(),
      ...tauriHistoryBackend(),
      ...tauriSecretsBackend(),
      ...tauriProjectMcpBackend(),
      ...tauriSignInBackend(),
      ...tauriLoginBackend(),
      ...tauriCheckpointsBackend(),
    };
    for (const [name, method] of Object.entries(backend)) {
      // The `on…` subscriptions are events, and the title is the window's: not commands.
      if (name.startsWith('on') || name === 'setTitle') continue;
      await (method as (...args: unknown[]) => Promise<unknown>)('s1', 'x', 'y');
    }
    const called = invoke.mock.calls.map((c) => c[0]);
    // (The secrets view opens the settings file with the Agents view's command.)
    expect([...new Set(called)].sort()).toEqual([...COMMAND_NAMES].sort());
  });

  it('hands the API key to sign_in_api_key as typed, with its target', async () => {
    invoke.mockClear();
    await tauriSignInBackend().signInApiKey({ agent: 'gemini' }, 'gemini-api-key', 'k-1');
    expect(invoke.mock.calls).toEqual([
      ['sign_in_api_key', { target: { agent: 'gemini' }, methodId: 'gemini-api-key', key: 'k-1' }],
    ]);
  });

  it('names a permission answer’s id requestId, as the command takes it', async () => {
    invoke.mockClear();
    await tauriBackend().respondPermission('s1', 't1#1', { cancelled: true });
    expect(invoke.mock.calls).toEqual([
      ['respond_permission', { session: 's1', requestId: 't1#1', resolution: { cancelled: true } }],
    ]);
  });

  // The shell's commands take `session` (src-tauri/src/commands.rs); a misnamed argument fails
  // only in the real app (the e2e test found one).
  it('names the session `session` for a question’s answer and a task’s stop', async () => {
    invoke.mockClear();
    await tauriBackend().elicitationAnswer('s1', 'e1', { action: 'decline' });
    await tauriBackend().backgroundTaskStop('s1', 'task-1');
    expect(invoke.mock.calls).toEqual([
      ['elicitation_answer', { session: 's1', requestId: 'e1', answer: { action: 'decline' } }],
      ['background_task_stop', { session: 's1', taskId: 'task-1' }],
    ]);
  });

  // Tauri maps camelCase arguments to the commands' snake_case ones (`old_path`).
  it('passes a checkpoint file’s old path as oldPath, and force as a boolean', async () => {
    invoke.mockClear();
    await tauriCheckpointsBackend().checkpointFile('s1', 2, 'b.txt', 'a.txt');
    await tauriCheckpointsBackend().checkpointRevert('s1', 2, null, true);
    expect(invoke.mock.calls).toEqual([
      ['checkpoint_file', { session: 's1', turn: 2, path: 'b.txt', oldPath: 'a.txt' }],
      ['checkpoint_revert', { session: 's1', turn: 2, file: null, force: true }],
    ]);
  });
});
