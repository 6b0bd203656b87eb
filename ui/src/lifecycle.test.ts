// What the lifecycle (src-tauri/src/lifecycle) hands the window: a folder from File → Open
// Recent or from a second launch arrives as `folder-chosen`, with the agent to open it with;
// without one, the window's agent for new sessions is used.
import { cleanup, render, waitFor } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import App from './App.svelte';
import { FakeBackend } from './test/fake-backend';

const now = (fn: () => void) => fn();

afterEach(() => cleanup());

async function handOver(agent?: string): Promise<FakeBackend> {
  const backend = new FakeBackend();
  render(App, { backend, schedule: now });
  await waitFor(() => expect(backend.called('agentsList').length).toBeGreaterThan(0));
  backend.chooseFolder('/recent/proj', agent);
  return backend;
}

describe('a folder handed to the window', () => {
  it('opens with the agent it names (Open Recent, a second launch with --agent)', async () => {
    const backend = await handOver('claude');
    await waitFor(() =>
      expect(backend.called('openSession')).toEqual([['/recent/proj', 'claude']]),
    );
  });

  it('opens with the agent for new sessions when it names none', async () => {
    const backend = await handOver();
    await waitFor(() => expect(backend.called('openSession')).toEqual([['/recent/proj', 'demo']]));
  });
});
