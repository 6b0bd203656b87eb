// Issue 19 in the store and the controller: the agent's questions parked and settled, background
// tasks replaced whole, autonomous cycles marked; answering a question and stopping a task.
import { describe, expect, it } from 'vitest';
import type {
  BackgroundTaskInfo,
  ElicitationEvent,
  StreamEvent,
  StreamFrame,
} from './generated/ipc';
import { SessionStore, type Entry } from './session-store';
import { sessionStatus, closeNeedsConfirm } from './status';
import { AppController } from './app-controller';
import { FakeBackend, appInfo } from '../test/fake-backend';

const sid = 's';
const live = (...events: StreamEvent[]): StreamFrame => ({ snapshot: false, events });
const ask = (
  requestId: string,
  over: Partial<ElicitationEvent> = {},
): Extract<StreamEvent, { kind: 'elicitation' }> => ({
  kind: 'elicitation',
  sessionId: sid,
  requestId,
  mode: 'form',
  message: 'Which license?',
  title: 'License',
  fields: [{ name: 'license', required: true, type: 'string' }],
  ...over,
});
const settled = (
  requestId: string,
  action: 'accept' | 'decline' | 'cancel',
  by: 'user' | 'stop' | 'agent' | 'rule' | 'watchdog',
  awaitingCompletion?: boolean,
): StreamEvent => ({
  kind: 'elicitation-settled',
  sessionId: sid,
  requestId,
  action,
  by,
  ...(awaitingCompletion ? { awaitingCompletion } : {}),
});
const lines = (entries: Entry[]) =>
  entries.flatMap((e) => (e.type === 'settled' ? [[e.what, e.text]] : []));
const turn = (text: string): StreamEvent[] => [
  { kind: 'turn-start', sessionId: sid, prompt: [{ type: 'text', text }] },
  { kind: 'text-delta', sessionId: sid, text: `reply to ${text}`, messageId: text },
  { kind: 'turn-end', sessionId: sid, reason: 'completed', stopReason: 'end_turn' },
];

describe('questions (elicitation)', () => {
  it('wait oldest first, once each, and make the session wait for the user', () => {
    const store = new SessionStore();
    store.applyAll([live(ask('e1'), ask('e2', { title: 'Name' }), ask('e1'))]);
    const v = store.state;
    expect(v.elicitations.map((q) => q.requestId)).toEqual(['e1', 'e2']);
    expect(v.elicitations[0]).not.toHaveProperty('kind');
    expect(sessionStatus(v)).toMatchObject({
      key: 'waiting',
      detail: '2 questions waiting for your answer',
    });
    expect(closeNeedsConfirm(v)).toBe(true);
  });

  it('leave the queue when settled, with a line that says who and how, never the answer', () => {
    const store = new SessionStore();
    store.applyAll([
      live(
        ask('e1'),
        ask('e2', { title: null, message: 'Pick a name\nfor the package' }),
        ask('e3'),
        ask('e4'),
        ask('e5'),
      ),
      live(
        settled('e1', 'accept', 'user'),
        settled('e2', 'decline', 'user'),
        settled('e3', 'cancel', 'stop'),
        settled('e4', 'cancel', 'agent'),
        settled('e5', 'decline', 'rule'),
        settled('e9', 'cancel', 'watchdog'),
      ),
    ]);
    const v = store.state;
    expect(v.elicitations).toEqual([]);
    expect(sessionStatus(v).key).not.toBe('waiting');
    expect(lines(v.entries)).toEqual([
      ['question', 'You answered the agent’s question “License”.'],
      ['question', 'You declined the agent’s question “Pick a name”.'],
      ['question', 'The agent’s question “License” was cancelled: the turn was stopped.'],
      ['question', 'The agent withdrew its question “License”.'],
      ['question', 'A rule declined the agent’s question “License”.'],
      ['question', 'The agent’s question was cancelled: the turn timed out.'],
    ]);
  });

  it('agreed to in URL mode wait for the agent’s word that the page is done', () => {
    const store = new SessionStore();
    const url = ask('e1', {
      mode: 'url',
      title: null,
      fields: null,
      message: 'Sign in',
      url: 'https://example.com/a',
      host: 'example.com',
    });
    store.applyAll([live(url, settled('e1', 'accept', 'user', true))]);
    expect(store.state.elicitations).toEqual([]);
    expect(store.state.awaiting.map((q) => q.requestId)).toEqual(['e1']);
    // Waiting on the agent is not waiting on the user.
    expect(sessionStatus(store.state).key).not.toBe('waiting');
    store.applyAll([live({ kind: 'elicitation-complete', sessionId: sid, requestId: 'e1' })]);
    expect(store.state.awaiting).toEqual([]);
    expect(lines(store.state.entries)).toEqual([
      ['question', 'You agreed to open example.com for the agent.'],
      ['question', 'The agent says the step at example.com is done.'],
    ]);
    // Declined or stopped, it is named by its host.
    store.applyAll([
      live({ ...url, requestId: 'e2' }, settled('e2', 'decline', 'user')),
      live({ ...url, requestId: 'e3' }, settled('e3', 'cancel', 'stop')),
    ]);
    expect(lines(store.state.entries).slice(2)).toEqual([
      ['question', 'You declined the agent’s request to open example.com.'],
      ['question', 'The agent’s request to open example.com was cancelled: the turn was stopped.'],
    ]);
  });

  it('are dropped when the session dies or a snapshot replaces the view', () => {
    const store = new SessionStore();
    store.applyAll([
      live(ask('e1'), ask('e2', { mode: 'url' }), settled('e2', 'accept', 'user', true)),
    ]);
    store.applyAll([live({ kind: 'session-status', sessionId: sid, status: 'dead' })]);
    expect(store.state.elicitations).toEqual([]);
    expect(store.state.awaiting).toEqual([]);
    store.applyAll([live(ask('e3'))]);
    store.applyAll([{ snapshot: true, events: [] }]);
    expect(store.state.elicitations).toEqual([]);
  });
});

describe('background tasks', () => {
  it('are replaced whole by each event (it carries the task merged so far), in start order', () => {
    const store = new SessionStore();
    const task = (t: BackgroundTaskInfo): StreamEvent => ({
      kind: 'background-task',
      sessionId: sid,
      phase: 'updated',
      task: t,
    });
    store.applyAll([
      live(
        task({ taskId: 'a', name: 'build', status: 'running', canStop: true }),
        task({ taskId: 'b', status: 'running' }),
        task({ taskId: 'a', name: 'build', status: 'stopped', settledBy: 'session-end' }),
      ),
    ]);
    expect(store.state.tasks).toEqual([
      { taskId: 'a', name: 'build', status: 'stopped', settledBy: 'session-end' },
      { taskId: 'b', status: 'running' },
    ]);
  });
});

describe('autonomous cycles', () => {
  const usage = (origin?: string): StreamEvent => ({
    kind: 'usage_update',
    sessionId: sid,
    used: 10,
    size: 100,
    ...(origin ? { origin } : {}),
  });

  it('get a marker above what the agent did by itself since the last turn', () => {
    const store = new SessionStore();
    store.applyAll([
      live(
        ...turn('one'),
        { kind: 'notice', sessionId: sid, severity: 'info', source: 'client', title: 'n' },
        {
          kind: 'tool-call',
          sessionId: sid,
          toolCallId: 't1',
          toolName: 'Read',
          arguments: null,
          isUpdate: false,
          status: 'pending',
        },
        { kind: 'text-delta', sessionId: sid, text: 'Done by myself', messageId: 'm2' },
        usage('task-notification'),
      ),
    ]);
    const types = store.state.entries.map((e) => e.type);
    expect(types).toEqual(['user', 'agent', 'turn-end', 'notice', 'autonomous', 'tool', 'agent']);
    // The card after the marker still takes its updates.
    store.applyAll([
      live({
        kind: 'tool-call',
        sessionId: sid,
        toolCallId: 't1',
        toolName: '',
        arguments: null,
        isUpdate: true,
        status: 'completed',
      }),
    ]);
    const card = store.state.entries.find((e) => e.type === 'tool');
    expect(card).toMatchObject({ toolCallId: 't1', status: 'completed', title: 'Read' });
    expect(store.state.entries.filter((e) => e.type === 'tool')).toHaveLength(1);
  });

  it('that showed nothing get a marker of their own; a turn’s usage gets none', () => {
    const store = new SessionStore();
    store.applyAll([live(...turn('one'), usage(), usage('task-notification'))]);
    const last = store.state.entries.at(-1);
    expect(last).toMatchObject({ type: 'autonomous', quiet: true });
    expect(store.state.entries.filter((e) => e.type === 'autonomous')).toHaveLength(1);
    // Two cycles in a row: one marker each.
    store.applyAll([
      live(
        { kind: 'text-delta', sessionId: sid, text: 'again', messageId: 'm3' },
        usage('task-notification'),
      ),
    ]);
    expect(store.state.entries.map((e) => e.type).slice(-3)).toEqual([
      'autonomous',
      'autonomous',
      'agent',
    ]);
  });
});

describe('the controller', () => {
  async function opened() {
    const backend = new FakeBackend();
    backend.info = appInfo({ initialFolder: '/proj' });
    const app = new AppController(backend, (fn) => fn());
    await app.start();
    backend.frame('s1', live(ask('e1')));
    const req = app.store('s1').state.elicitations[0] as ElicitationEvent;
    return { backend, app, req };
  }

  it('sends an answer to the session that asked', async () => {
    const { backend, app, req } = await opened();
    const answer = { action: 'accept' as const, content: { license: 'MIT' } };
    expect(await app.answerQuestion(req, answer)).toEqual({ ok: true });
    expect(backend.called('elicitationAnswer')).toEqual([['s1', 'e1', answer]]);
  });

  it('answers the question asked, when two sessions each have an e1 open', async () => {
    const { backend, app } = await opened();
    await app.openFolder('/other');
    backend.frame('s2', live(ask('e1')));
    // The second session's question, answered while it is the one shown or not.
    const theirs = app.store('s2').state.elicitations[0] as ElicitationEvent;
    await app.answerQuestion(theirs, { action: 'decline' });
    expect(backend.called('elicitationAnswer')).toEqual([['s2', 'e1', { action: 'decline' }]]);
  });

  it('hands the engine’s refusal back to the dialog, without a banner', async () => {
    const { backend, app, req } = await opened();
    const message = 'the answer was not sent: License is required';
    backend.elicitationError = { code: 'invalid-answer', message };
    expect(await app.answerQuestion(req, { action: 'accept', content: {} })).toEqual({
      ok: false,
      refused: message,
    });
    expect(app.state.error).toBeNull();
  });

  it('says nothing of a question settled meanwhile', async () => {
    const { backend, app, req } = await opened();
    backend.elicitationError = { code: 'elicitation-unknown', message: 'no open question e1' };
    expect(await app.answerQuestion(req, { action: 'cancel' })).toEqual({ ok: true });
    expect(app.state.error).toBeNull();
  });

  it('says other failures in the banner, and the dialog may answer again', async () => {
    const { backend, app, req } = await opened();
    backend.elicitationError = { code: 'session-ended', message: 'the session has ended' };
    expect(await app.answerQuestion(req, { action: 'decline' })).toEqual({
      ok: false,
      refused: null,
    });
    expect(app.state.error).toEqual({ code: 'session-ended', message: 'the session has ended' });
  });

  it('stops a task of the shown session, and gives back why not', async () => {
    const { backend, app } = await opened();
    expect(await app.stopTask('t1')).toBeNull();
    expect(backend.called('backgroundTaskStop')).toEqual([['s1', 't1']]);
    backend.stopError = { code: 'task-not-stoppable', message: 'not now' };
    expect(await app.stopTask('t1')).toEqual({ code: 'task-not-stoppable', message: 'not now' });
    // Said beside the task, not in the banner.
    expect(app.state.error).toBeNull();
  });

  it('counts questions in the window’s title', async () => {
    const { backend } = await opened();
    expect(backend.called('setTitle').at(-1)).toEqual(['(1) proj — ACP Desk']);
  });
});
