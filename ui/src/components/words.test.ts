// Issue 13, "Words that match what happened": what the thread and the permission dialog say
// after real recordings (claude-code-acp through the CLI, the demo agent's scenarios).
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentPromptEvent, StreamEvent } from '../lib/generated/ipc';
import { codeSpans } from '../lib/inline-code';
import { SessionStore, type Entry, type ToolEntry } from '../lib/session-store';
import App from '../App.svelte';
import { FakeBackend, agentEntry, appInfo } from '../test/fake-backend';
import PermissionDialog from './PermissionDialog.svelte';
import ThreadEntry from './thread/ThreadEntry.svelte';
import { transcript } from '../test/transcripts';

afterEach(() => cleanup());

function entries(events: StreamEvent[]): Entry[] {
  const store = new SessionStore();
  store.applyAll([{ snapshot: false, events }]);
  return store.state.entries;
}

const props = {
  folder: '/tmp/acp-desk-transcripts/project',
  onopenpath: () => undefined,
  onrevealpath: () => undefined,
  onopenurl: () => undefined,
};

function shown(entry: Entry): HTMLElement {
  return render(ThreadEntry, { entry, ...props }).container;
}

describe('a rejected call', () => {
  it.each([
    ['real-agents/transcripts/claude-code-acp-reject-run.jsonl', 'toolu_fake000035'],
    ['transcripts/demo/permission-reject.jsonl', 'demo-exec-1'],
  ])('%s: says Rejected, not Failed', (path, id) => {
    const card = entries(transcript(path)).find(
      (e): e is ToolEntry => e.type === 'tool' && e.toolCallId === id,
    );
    if (!card) throw new Error(`no card ${id}`);
    const badge = shown(card).querySelector('.badge');
    expect(badge?.textContent?.trim()).toBe('Rejected');
  });

  it('an allowed call that failed still says Failed', () => {
    const events = transcript('transcripts/demo/permission.jsonl').map((e) =>
      e.kind === 'tool-call' && e.status === 'completed' ? { ...e, status: 'failed' as const } : e,
    );
    const card = entries(events).find((e): e is ToolEntry => e.type === 'tool');
    expect(card?.rejected).toBe(false);
    expect(
      shown(card as ToolEntry)
        .querySelector('.badge')
        ?.textContent?.trim(),
    ).toBe('Failed');
  });
});

describe('backticks', () => {
  it('become code spans, by CommonMark’s rule, and nothing else does', () => {
    expect(codeSpans('Run `cargo test` now')).toEqual([
      { code: false, text: 'Run ' },
      { code: true, text: 'cargo test' },
      { code: false, text: ' now' },
    ]);
    expect(codeSpans('`` a`b `` and `open')).toEqual([
      { code: true, text: 'a`b' },
      { code: false, text: ' and `open' },
    ]);
    expect(codeSpans('*not emphasis* <b>not bold</b>')).toEqual([
      { code: false, text: '*not emphasis* <b>not bold</b>' },
    ]);
  });

  it('show as code in a “Permission for …” line, and HTML in it stays text', () => {
    const settled = entries(
      transcript('real-agents/transcripts/claude-code-acp-allow-run.jsonl'),
    ).find((e) => e.type === 'settled');
    const line = shown(settled as Entry);
    expect(line.querySelector('code')?.textContent).toBe(
      'echo hi-from-bash > out.txt && cat out.txt',
    );
    expect(line.textContent).not.toContain('`');
    const hostile = shown({ type: 'error', key: 1, message: 'bad `<img src=x onerror=alert(1)>`' });
    expect(hostile.querySelector('img')).toBeNull();
    expect(hostile.querySelector('code')?.textContent).toBe('<img src=x onerror=alert(1)>');
  });

  it('show as code in option labels, each said once', () => {
    const req = transcript('transcripts/demo/permission.jsonl').find(
      (e): e is Extract<StreamEvent, { kind: 'agent-prompt' }> => e.kind === 'agent-prompt',
    ) as AgentPromptEvent;
    const { container } = render(PermissionDialog, {
      queue: [req],
      folder: props.folder,
      onanswer: () => Promise.resolve(true),
    });
    const always = container.querySelector('[data-option-kind="allow_always"]');
    // "Always allow `cargo test`" on a button that said "Always allow · Always allow `cargo test`".
    expect(always?.textContent?.replace(/\s+/g, ' ').trim()).toBe(
      'Always allow cargo test Shift+A',
    );
    expect(always?.querySelector('code')?.textContent).toBe('cargo test');
  });
});

function ask(path: string): AgentPromptEvent {
  const req = transcript(path).find(
    (e): e is Extract<StreamEvent, { kind: 'agent-prompt' }> => e.kind === 'agent-prompt',
  );
  if (!req) throw new Error(`no request in ${path}`);
  return req;
}

const count = (text: string, part: string) => text.split(part).length - 1;

/** Text on screen: a closed <details> shows only its summary. */
function visibleText(root: HTMLElement): string {
  const copy = root.cloneNode(true) as HTMLElement;
  for (const d of copy.querySelectorAll('details:not([open])'))
    for (const c of [...d.children]) if (c.tagName !== 'SUMMARY') c.remove();
  return copy.textContent ?? '';
}

describe('an execute request and card', () => {
  it('say the command once, and a timeout in seconds', () => {
    const req = ask('real-agents/transcripts/claude-code-acp-reject-run.jsonl');
    const { container } = render(PermissionDialog, {
      queue: [req],
      folder: props.folder,
      onanswer: () => Promise.resolve(true),
    });
    const text = container.textContent ?? '';
    expect(count(text, 'echo hi-from-bash > out.txt && cat out.txt')).toBe(1);
    const row = [...container.querySelectorAll('[data-args] tr')].find(
      (tr) => tr.querySelector('th')?.textContent === 'timeout',
    );
    expect(row?.querySelector('td')?.textContent).toBe('60 s');
  });

  it.each([
    ['transcripts/demo/showcase.jsonl', 'cargo fmt --check'],
    ['real-agents/transcripts/claude-code-acp-allow-run.jsonl', 'echo hi-from-bash > out.txt'],
  ])('%s: the card shows %s once', (path, command) => {
    const card = entries(transcript(path)).find(
      (e): e is ToolEntry => e.type === 'tool' && e.title.includes(command),
    );
    if (!card) throw new Error(`no card for ${command}`);
    expect(count(visibleText(shown(card)), command)).toBe(1);
  });
});

describe('an agent that cannot start', () => {
  // What the app layer's pump sends when the agent's program is missing (process.rs's words).
  const missing =
    'the agent command `gemini` was not found on PATH. Install the agent, or give its full path.';

  async function failed(agent: string, info = appInfo()): Promise<FakeBackend> {
    const backend = new FakeBackend();
    backend.info = { ...info, initialFolder: '/proj', initialAgent: agent };
    render(App, { backend, schedule: (fn: () => void) => fn() });
    await waitFor(() => expect(backend.called('attach')).toEqual([['s1']]));
    backend.frame('s1', {
      snapshot: false,
      events: [
        {
          kind: 'session-status',
          sessionId: 's1',
          status: 'starting',
          agent: { launchName: agent },
        },
        { kind: 'error', error: { message: missing } },
        { kind: 'session-status', sessionId: 's1', status: 'dead', detail: missing },
      ],
    });
    await waitFor(() => expect(document.querySelector('[data-start-failed]')).toBeTruthy());
    return backend;
  }

  it('says so once, in sentences, with the install hint and the settings file', async () => {
    const backend = await failed('gemini');
    const text = document.body.textContent ?? '';
    expect(text.split('was not found on PATH').length - 1).toBe(1);
    const card = document.querySelector('[data-start-failed]') as HTMLElement;
    expect(card.querySelector('strong')?.textContent).toBe('Gemini could not start.');
    expect(card.textContent).toContain('The agent command gemini was not found on PATH.');
    expect(card.textContent).toContain(
      'Install Gemini CLI with npm install -g @google/gemini-cli.',
    );
    expect(screen.queryByText('Start a new session')).toBeNull();
    await fireEvent.click(screen.getByText('Open settings file'));
    expect(backend.called('openSettingsFile')).toEqual([[]]);
  });

  it('of the settings file says to fix its entry there', async () => {
    const info = appInfo();
    info.agents.agents.push(
      agentEntry({ id: 'mine', command: '/opt/mine', source: 'settings', status: 'missing' }),
    );
    await failed('mine', info);
    const card = document.querySelector('[data-start-failed]') as HTMLElement;
    expect(card.textContent).toContain(
      'Fix its entry (mine under agent_servers) in the settings file',
    );
  });
});
