// A terminal login's logic (lib/login.ts) and its component (LoginTerminal.svelte) against the
// fake shell: the order of keys, sizes and Cancel around a slow start, the state line's words,
// and onexit once with the code.
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import LoginTerminal from '../components/signin/LoginTerminal.svelte';
import { FakeLoginBackend } from '../test/fake-backend';
import { Login, stateLine, succeeded, type LoginOptions, type LoginView } from './login';

afterEach(() => cleanup());

const target = { sessionId: 's1' };

function login(backend: FakeLoginBackend, over: Partial<LoginOptions> = {}) {
  const out: string[] = [];
  const views: LoginView[] = [];
  const exits: [number | null, boolean, string | null][] = [];
  const l = new Login(backend, {
    target,
    methodId: 'demo-login',
    consent: false,
    onOutput: (d) => out.push(d),
    onChange: (v) => views.push(v),
    onExit: (c, r, p) => exits.push([c, r, p]),
    ...over,
  });
  return { l, out, views, exits };
}

/** Lets queued promise callbacks run. */
const settle = () => new Promise((r) => setTimeout(r, 0));

describe('Login', () => {
  it('starts at the size given, sends the keys in order and ends once with the code', async () => {
    const b = new FakeLoginBackend();
    const { l, out, exits } = login(b);
    await l.start(100, 30);
    expect(b.calls[0]).toEqual(['loginStart', target, 'demo-login', 100, 30, false]);
    expect(l.state.phase).toBe('running');
    expect(stateLine(l.state)).toBe('running');
    b.output('login-1', 'Code: ');
    l.input('1');
    l.input('2');
    l.input('\r');
    await settle();
    expect(b.calls.slice(1)).toEqual([
      ['loginInput', 'login-1', '1'],
      ['loginInput', 'login-1', '2'],
      ['loginInput', 'login-1', '\r'],
    ]);
    expect(out).toEqual(['Code: ']);
    b.exit('login-1', { exitCode: 0, cancelled: false, restarted: true });
    expect(exits).toEqual([[0, true, null]]);
    expect(succeeded(l.state)).toBe(true);
    expect(stateLine(l.state)).toBe('exited with code 0: signed in, the session restarts');
    // Nothing is sent after the end.
    l.input('x');
    l.cancel();
    await settle();
    expect(b.calls).toHaveLength(4);
  });

  it('keeps keys and the size given while login_start is under way, then sends them', async () => {
    const b = new FakeLoginBackend();
    let open: () => void = () => undefined;
    b.gate = new Promise<void>((r) => (open = r));
    const { l } = login(b);
    const started = l.start(80, 24);
    l.input('ab');
    l.resize(90, 24);
    l.input('\r');
    expect(l.state.phase).toBe('starting');
    open();
    await started;
    await settle();
    expect(b.calls.slice(1)).toEqual([
      ['loginInput', 'login-1', 'ab\r'],
      ['loginResize', 'login-1', 90, 24],
    ]);
    // The same size again is not sent; a nonsense one never.
    l.resize(90, 24);
    l.resize(0, 0);
    await settle();
    expect(b.calls).toHaveLength(3);
  });

  it('says a failing code, a signal and a cancel in words, and only 0 succeeds', async () => {
    const b = new FakeLoginBackend();
    const one = login(b);
    await one.l.start(80, 24);
    b.exit('login-1', { exitCode: 1, cancelled: false, restarted: false });
    expect(one.exits).toEqual([[1, false, null]]);
    expect(succeeded(one.l.state)).toBe(false);
    expect(stateLine(one.l.state)).toBe(
      'exited with code 1: not signed in (only exit code 0 signs in)',
    );

    const two = login(b);
    await two.l.start(80, 24);
    two.l.cancel();
    expect(two.l.state.phase).toBe('cancelling');
    expect(stateLine(two.l.state)).toBe('cancelling…');
    await settle();
    expect(b.calls.at(-1)).toEqual(['loginCancel', 'login-2']);
    b.exit('login-2', { signal: 'SIGTERM', cancelled: true, restarted: false });
    expect(two.exits).toEqual([[null, false, null]]);
    expect(stateLine(two.l.state)).toBe('cancelled');

    const three = login(b);
    await three.l.start(80, 24);
    b.exit('login-3', { signal: 'SIGKILL', cancelled: false, restarted: false });
    expect(stateLine(three.l.state)).toMatch(/^ended by SIGKILL: not signed in/);
    expect(three.exits).toEqual([[null, false, null]]);
  });

  it('a cancel before login_start answers is sent once it has', async () => {
    const b = new FakeLoginBackend();
    let open: () => void = () => undefined;
    b.gate = new Promise<void>((r) => (open = r));
    const { l } = login(b);
    const started = l.start(80, 24);
    l.cancel();
    l.input('ignored');
    expect(l.state.phase).toBe('cancelling');
    open();
    await started;
    await settle();
    expect(b.calls.slice(1)).toEqual([['loginCancel', 'login-1']]);
  });

  it('a refused start says why, and a signed-in login whose restart failed says that', async () => {
    const b = new FakeLoginBackend();
    b.refuseStart = { code: 'consent-needed', message: 'signing in runs `node cli.js`: agree' };
    const { l, exits } = login(b);
    await l.start(80, 24);
    expect(l.state.phase).toBe('failed');
    expect(stateLine(l.state)).toBe('could not start: signing in runs `node cli.js`: agree');
    expect(exits).toEqual([]);

    // The flow hears of a refusal for want of consent (it asks, then starts again with it).
    const asked: string[] = [];
    const three = login(b, { onConsentNeeded: (m) => asked.push(m) });
    await three.l.start(80, 24);
    expect(asked).toEqual(['signing in runs `node cli.js`: agree']);
    const four = login(b, { consent: true, onConsentNeeded: (m) => asked.push(m) });
    await four.l.start(80, 24);
    expect(asked).toHaveLength(1);

    b.refuseStart = null;
    const two = login(b);
    await two.l.start(80, 24);
    b.exit('login-1', {
      exitCode: 0,
      cancelled: false,
      restarted: false,
      restartError: { code: 'session-unknown', message: 'no open session has the id `s1`' },
    });
    expect(stateLine(two.l.state)).toBe(
      'exited with code 0: signed in, but the session could not restart: no open session has the id `s1`',
    );
    expect(two.exits).toEqual([[0, false, 'no open session has the id `s1`']]);
  });

  it('a key the shell refuses shows on the line until the next key', async () => {
    const b = new FakeLoginBackend();
    b.loginInput = vi.fn(async () => {
      throw { code: 'invalid-input', message: 'the program is not reading what is typed' };
    });
    const { l } = login(b);
    await l.start(80, 24);
    l.input('x');
    await settle();
    expect(stateLine(l.state)).toBe('running — the program is not reading what is typed');
  });
});

describe('LoginTerminal', () => {
  // jsdom has no canvas: xterm cannot start, so the component shows the text and a line input
  // (the same fallback a window without WebGL/canvas gets).
  it('shows the output, types a line into the program, and Cancel ends it', async () => {
    const b = new FakeLoginBackend();
    const onexit = vi.fn();
    const onclose = vi.fn();
    // `target` is also a Svelte mount option: the props go under `props`.
    render(LoginTerminal, {
      props: {
        target: { agent: 'demo' },
        methodId: 'demo-login',
        consent: true,
        onexit,
        onclose,
        backend: b,
      },
    });
    await waitFor(() => expect(b.calls[0]?.[0]).toBe('loginStart'));
    expect(b.calls[0]).toEqual(['loginStart', { agent: 'demo' }, 'demo-login', 80, 24, true]);
    await waitFor(() => expect(screen.getByRole('status').textContent?.trim()).toBe('running'));
    expect(screen.getByText('acp-desk-demo-agent login')).toBeTruthy();
    b.output('login-1', '\x1b[1mEnter the code:\x1b[0m ');
    await waitFor(() => expect(screen.getByText(/Enter the code:/)).toBeTruthy());
    const input = screen.getByLabelText('Type into the sign-in program') as HTMLInputElement;
    await waitFor(() => expect(document.activeElement).toBe(input));
    await fireEvent.input(input, { target: { value: '4242' } });
    await fireEvent.submit(input.closest('form') as HTMLFormElement);
    await waitFor(() => expect(b.calls).toContainEqual(['loginInput', 'login-1', '4242\r']));
    await fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(b.calls).toContainEqual(['loginCancel', 'login-1']));
    b.exit('login-1', { signal: 'SIGTERM', cancelled: true, restarted: false });
    await waitFor(() => expect(screen.getByRole('status').textContent?.trim()).toBe('cancelled'));
    expect(onexit).toHaveBeenCalledExactlyOnceWith(null, false, null);
    await fireEvent.click(screen.getByRole('button', { name: 'Close' }));
    expect(onclose).toHaveBeenCalledOnce();
  });

  it('ends a running login when it goes away', async () => {
    const b = new FakeLoginBackend();
    const { unmount } = render(LoginTerminal, {
      props: {
        target,
        methodId: 'demo-login',
        consent: false,
        onexit: () => undefined,
        backend: b,
      },
    });
    await waitFor(() => expect(screen.getByRole('status').textContent?.trim()).toBe('running'));
    unmount();
    await waitFor(() => expect(b.calls).toContainEqual(['loginCancel', 'login-1']));
  });
});
