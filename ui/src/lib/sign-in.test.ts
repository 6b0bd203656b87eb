// The sign-in actions' words and the one sign-in flow of the window, against the fake shell.
import { describe, expect, it } from 'vitest';
import {
  CONTINUE_WORDS,
  SignInController,
  actionDetail,
  actionLabel,
  checkedAction,
  commandLine,
  consentCommand,
  exitWords,
  needsConsent,
  providerName,
} from './sign-in';
import { SessionStore } from './session-store';
import {
  FakeBackend,
  FakeSignIn,
  authRequiredStart,
  authRequiredTurn,
  demoAuthMethods,
} from '../test/fake-backend';
import type { AuthAction, StreamEvent } from './generated/ipc';
import { AppController } from './app-controller';

const [terminal, meta, apiKey, agent] = demoAuthMethods() as [
  AuthAction,
  AuthAction,
  AuthAction,
  AuthAction,
];
const flush = () => new Promise<void>((r) => setTimeout(r, 0));
const session = { sessionId: 's1' };

describe('the words', () => {
  it('words each kind of method as the button says it', () => {
    expect(actionLabel(terminal)).toBe('Sign in in a terminal');
    expect(actionLabel(meta)).toBe('Log in with the demo program');
    expect(actionLabel({ ...meta, how: { via: 'terminal-command', command: 'x' } })).toBe(
      'Demo login (its own program)',
    );
    expect(actionLabel(apiKey)).toBe('Enter a Google API key');
    expect(actionLabel({ ...apiKey, how: { via: 'api-key' } })).toBe('Enter an API key');
    expect(actionLabel(agent)).toBe('Sign in with Demo account');
    expect(actionLabel({ ...agent, name: 'Log in with Google' })).toBe('Log in with Google');
  });

  it('says what a terminal method runs', () => {
    expect(actionDetail(terminal, '/x/acp-desk-demo-agent')).toBe(
      'Runs `/x/acp-desk-demo-agent login` in a terminal here. Reads a code from its terminal.',
    );
    expect(actionDetail(terminal, null)).toContain("the agent's own command with `login`");
    expect(actionDetail(meta, null)).toBe('Runs `/opt/demo/demo-login --code` in a terminal here.');
    expect(actionDetail(apiKey, null)).toContain('kept in your keychain');
    expect(actionDetail(agent, null)).toContain('may open your browser');
  });

  it('quotes what a shell would need quoted, for the eye', () => {
    expect(commandLine('claude', ['/login'])).toBe('claude /login');
    expect(commandLine('my tool', ["it's", ''])).toBe(`'my tool' 'it'\\''s' ''`);
  });

  it('names providers', () => {
    expect(providerName('google')).toBe('Google');
    expect(providerName('acme')).toBe('acme');
    expect(providerName('  ')).toBeNull();
    expect(providerName(null)).toBeNull();
  });

  it('asks consent for a program other than the launch, only', () => {
    expect(needsConsent(meta, '/x/acp-desk-demo-agent --acp')).toBe(true);
    expect(needsConsent(meta, null)).toBe(true);
    expect(needsConsent(meta, '/opt/demo/demo-login')).toBe(false);
    // A bare name next to a path may be another program on PATH: asked.
    expect(
      needsConsent(
        { ...meta, how: { via: 'terminal-command', command: 'demo-login' } },
        '/opt/demo/demo-login',
      ),
    ).toBe(true);
    expect(needsConsent(terminal, null)).toBe(false);
    expect(needsConsent(agent, null)).toBe(false);
    expect(consentCommand(meta)).toBe('/opt/demo/demo-login --code');
    expect(consentCommand(terminal)).toBeNull();
  });

  it('a Check without the classification is the agent’s own method', () => {
    expect(checkedAction({ id: 'oauth', name: 'Google' })).toEqual({
      methodId: 'oauth',
      name: 'Google',
      description: null,
      how: { via: 'agent' },
    });
    expect(checkedAction({ id: 'k', name: 'Key', how: { via: 'api-key' } }).how.via).toBe(
      'api-key',
    );
  });

  it('says what a login’s exit means', () => {
    expect(exitWords(0, true).ok).toBe(true);
    expect(exitWords(0, true).text).toContain('reconnecting');
    expect(exitWords(0, false).text).toBe('Signed in. New sessions of this agent use it.');
    expect(exitWords(1, true)).toEqual({
      ok: false,
      text: 'The login exited with code 1: not signed in. Read its output above, then try again.',
    });
    expect(exitWords(null, true).text).toContain('stopped before it finished');
    const failed = exitWords(0, true, 'the agent exited with code 2.');
    expect(failed.ok).toBe(false);
    expect(failed.text).toContain('could not reconnect: the agent exited with code 2.');
  });
});

/** A session attached to the fake shell, its view kept by a SessionStore as the window's. */
async function attached(): Promise<{
  fake: FakeSignIn;
  store: SessionStore;
  c: SignInController;
}> {
  const backend = new FakeBackend();
  const store = new SessionStore();
  const fake = new FakeSignIn(backend);
  const c = new SignInController(fake, () => ({
    starts: store.state.starts,
    status: store.state.status,
    statusDetail: store.state.statusDetail,
  }));
  await backend.attach('s1', (f) => {
    store.applyAll([f]);
    c.observe();
  });
  store.applyAll([{ snapshot: false, events: authRequiredStart('s1') }]);
  return { fake, store, c };
}

describe('the flow', () => {
  it('an API key goes to the keychain only; done once the restarted session is ready', async () => {
    const { fake, c, store } = await attached();
    c.begin(session, apiKey, null);
    expect(c.state.step).toBe('api-key');
    expect(c.busy).toBe(true);
    const seen: string[] = [];
    c.subscribe((x) => x.state.step === 'waiting' && seen.push(x.state.text));
    expect(await c.submitKey('sk-secret-123')).toBe(true);
    await flush();
    expect(seen[0]).toBe('API key stored in your keychain. Starting the agent with it…');
    expect(store.state.status).toBe('ready');
    expect(c.state).toMatchObject({
      step: 'done',
      ok: true,
      text: 'Signed in. The session is ready.',
    });
    expect(fake.keychain.get('agent-auth/demo/demo-api-key')).toBe('sk-secret-123');
    expect(JSON.stringify(fake.calls)).not.toContain('sk-secret-123');
    expect(JSON.stringify(c.state)).not.toContain('sk-secret-123');
  });

  it('an empty key is refused before the shell is asked; a refused key keeps the dialog', async () => {
    const { fake, c } = await attached();
    c.begin(session, apiKey, null);
    expect(await c.submitKey('   ')).toBe(false);
    expect(fake.calls).toHaveLength(0);
    expect(c.state.step === 'api-key' && c.state.error?.message).toBe(
      'Type or paste the API key first.',
    );
    fake.error = { code: 'keychain-unavailable', message: 'The keychain is locked: unlock it.' };
    expect(await c.submitKey('sk-secret-123')).toBe(false);
    expect(c.state.step).toBe('api-key');
    expect(JSON.stringify(c.state)).not.toContain('sk-secret-123');
    expect(c.state.step === 'api-key' && c.state.error?.code).toBe('keychain-unavailable');
    c.cancel();
    expect(c.state.step).toBe('idle');
  });

  it('the Agents view stores a key for the agent and says what the shell said', async () => {
    const { fake, c } = await attached();
    c.begin({ agent: 'gemini' }, apiKey, null);
    await c.submitKey('k');
    expect(fake.keychain.get('agent-auth/gemini/demo-api-key')).toBe('k');
    expect(c.state).toMatchObject({ step: 'done', ok: true, text: 'Signed in to gemini.' });
  });

  it('a refused new start is not signed in, in the start’s words', async () => {
    const { fake, c } = await attached();
    fake.refuseStart = 'the agent refused demo-agent: the code expired';
    c.begin(session, agent, null);
    await flush();
    await flush();
    expect(c.state).toMatchObject({
      step: 'done',
      ok: false,
      text: "Not signed in: the agent's new start failed (the agent refused demo-agent: the code expired).",
    });
  });

  it('the prompt kept for after the sign-in is said sent once ready', async () => {
    const { fake, c, store } = await attached();
    await fake.signInKeepPrompt('s1', [{ type: 'text', text: 'fix the bug' }]);
    c.begin(session, agent, null);
    await flush();
    await flush();
    expect(c.state).toMatchObject({
      step: 'done',
      ok: true,
      text: 'Signed in. The session is ready, and your prompt was sent again.',
    });
    expect(store.state.entries.some((e) => e.type === 'user' && e.text === 'fix the bug')).toBe(
      true,
    );
  });

  it('the Agents view’s agent method waits, and Cancel drops its late answer', async () => {
    const { fake, c } = await attached();
    let open: () => void = () => undefined;
    fake.gate = new Promise((r) => (open = r));
    c.begin({ agent: 'demo' }, agent, null);
    expect(c.for({ agent: 'demo' }).step).toBe('waiting');
    expect(c.for(session).step).toBe('idle');
    c.cancel();
    expect(c.state.step === 'done' && c.state.ok).toBe(false);
    open();
    await flush();
    expect(c.state.step === 'done' && c.state.text).toContain('Stopped waiting');
    expect(fake.called('agentSignIn')).toEqual([['demo', 'demo-agent']]);
  });

  it('the agent method’s refusal is said in the shell’s words', async () => {
    const { fake, c } = await attached();
    fake.error = { code: 'agent-refused', message: 'the agent refused demo-agent: bad token' };
    c.begin({ agent: 'demo' }, agent, null);
    await flush();
    expect(c.state.step === 'done' && c.state.text).toBe(
      'Not signed in: the agent refused demo-agent: bad token.',
    );
  });

  it('a login command asks consent first, then runs; a failed login can run again', async () => {
    const { c, store } = await attached();
    c.begin(session, meta, '/x/acp-desk-demo-agent');
    expect(c.state).toMatchObject({
      step: 'consent',
      command: '/opt/demo/demo-login --code',
      env: ['DEMO_LOGIN_MODE'],
    });
    c.agree();
    expect(c.state).toMatchObject({ step: 'terminal', consent: true, run: 1 });
    c.loginExited(1);
    expect(c.state).toMatchObject({ step: 'done', ok: false, terminal: { consent: true, run: 1 } });
    c.retryLogin();
    expect(c.state).toMatchObject({ step: 'terminal', consent: true, run: 2 });
    c.loginExited(0);
    // The shell restarts the session after a login that worked: until then, reconnecting.
    expect(c.state).toMatchObject({ step: 'waiting', restarting: true, terminal: { run: 2 } });
    store.applyAll([
      {
        snapshot: false,
        events: [
          { kind: 'session-status', sessionId: 's1', status: 'starting' },
          { kind: 'session-status', sessionId: 's1', status: 'ready' },
        ],
      },
    ]);
    c.observe();
    expect(c.state).toMatchObject({ step: 'done', ok: true, terminal: { run: 2 } });
    c.dismiss();
    expect(c.state.step).toBe('idle');
  });

  it('the terminal method runs without a question; consent the shell asks for is asked', async () => {
    const { c } = await attached();
    c.begin(session, terminal, '/x/acp-desk-demo-agent');
    expect(c.state).toMatchObject({ step: 'terminal', consent: false });
    // Other buttons wait while it runs.
    c.begin(session, agent, null);
    expect(c.state.step).toBe('terminal');
    c.askConsent('/x/acp-desk-demo-agent login');
    expect(c.state).toMatchObject({ step: 'consent', command: '/x/acp-desk-demo-agent login' });
    c.cancel();
    expect(c.state.step).toBe('idle');
  });

  it('a good login whose reconnect failed says so', async () => {
    const { c } = await attached();
    c.begin(session, terminal, null);
    c.loginExited(0, 'the agent exited with code 2.');
    expect(c.state).toMatchObject({ step: 'done', ok: false });
    expect(c.state.step === 'done' && c.state.text).toContain('could not reconnect');
  });
});

describe('the session view', () => {
  it('a start refused for want of a sign-in is a sign-in, not a broken command', () => {
    const store = new SessionStore();
    store.applyAll([{ snapshot: false, events: authRequiredStart('s1') }]);
    const v = store.state;
    expect(v.status).toBe('dead');
    expect(v.startFailed).toBe(true);
    expect(v.authRequired).toBe(true);
    expect(v.agent?.authMethods).toHaveLength(4);
  });

  it('a refused turn offers the sign-in after its error, until a new start', () => {
    const store = new SessionStore();
    store.applyAll([
      {
        snapshot: false,
        events: [
          { kind: 'session-status', sessionId: 's1', status: 'ready' },
          ...authRequiredTurn('s1', 'fix the bug'),
        ],
      },
    ]);
    const end = store.state.entries.find((e) => e.type === 'turn-end');
    expect(end && store.state.signInEntry).toBe(end?.key);
    expect(CONTINUE_WORDS).toBe(
      'Sign in to continue. Your prompt will be sent again once you are signed in.',
    );
    store.applyAll([
      {
        snapshot: false,
        events: [{ kind: 'session-status', sessionId: 's1', status: 'starting' }],
      },
    ]);
    expect(store.state.signInEntry).toBeNull();
    expect(store.state.authRequired).toBe(false);
  });
});

describe('a prompt held while the start needs a sign-in', () => {
  const now = (fn: () => void) => fn();
  const startFrame = (events: StreamEvent[]) => ({ snapshot: false, events });

  it('is kept by the shell for after the sign-in, not given back', async () => {
    const backend = new FakeBackend();
    const fake = new FakeSignIn(backend);
    const app = new AppController(backend, now);
    app.keepForSignIn = (id, parts) => fake.signInKeepPrompt(id, parts);
    await app.start();
    await app.openFolder('/p/a');
    backend.frame(
      's1',
      startFrame([{ kind: 'session-status', sessionId: 's1', status: 'starting' }]),
    );
    const sent = app.send([{ type: 'text', text: 'fix the bug' }]);
    await flush();
    expect(app.isHeld('s1')).toBe(true);
    backend.frame('s1', startFrame(authRequiredStart('s1').slice(1)));
    expect(await sent).toBe(false);
    expect(fake.called('signInKeepPrompt')).toEqual([
      ['s1', [{ type: 'text', text: 'fix the bug' }]],
    ]);
    expect(backend.called('prompt')).toEqual([]);
    expect(app.draft('s1').text).toBe('');
    expect(app.note('s1')).toBe('Kept: your message is sent once you are signed in (see above).');
  });

  it('goes back to the draft, saying why, when the shell cannot keep it', async () => {
    const backend = new FakeBackend();
    const fake = new FakeSignIn(backend);
    fake.error = { code: 'session-unknown', message: 'no session s1' };
    const app = new AppController(backend, now);
    app.keepForSignIn = (id, parts) => fake.signInKeepPrompt(id, parts);
    await app.start();
    await app.openFolder('/p/a');
    backend.frame(
      's1',
      startFrame([{ kind: 'session-status', sessionId: 's1', status: 'starting' }]),
    );
    const sent = app.send([{ type: 'text', text: 'fix the bug' }]);
    await flush();
    backend.frame('s1', startFrame(authRequiredStart('s1').slice(1)));
    expect(await sent).toBe(false);
    expect(app.draft('s1').text).toBe('fix the bug');
    expect(app.note('s1')).toContain('could not be kept for after it (no session s1)');
  });
});
