// Signing in to an agent from the window (issue 18, ARCHITECTURE.md invariant 65): the agent's
// `authMethods`, classified by the engine (`AuthAction`, crates/acp-desk-core/src/auth.rs),
// become buttons; this module words them and runs one sign-in at a time:
//
// - `terminal` / `terminal-command`: a login program in an interactive terminal in the window
//   (LoginTerminal.svelte, pty's `login_*` commands). A command other than the agent's own
//   launch runs only after the user agreed to that exact command (the consent dialog).
// - `api-key`: a password field; the key goes to `sign_in_api_key` (the keychain) and is
//   dropped here at once: no state, error or message of this module ever holds it.
// - `agent`: `authenticate` (`sign_in_agent` / `agent_sign_in`), waiting while the agent does
//   it (it may have opened the browser), with Cancel.
//
// For a session, success reconnects it (the shell does: `Registry::restart_signed_in`) and the
// prompt that hit the sign-in is sent again once it is ready; the thread says so.
//
// Plain TS and a Svelte store, like project-mcp.ts: components render and call.
import { toUiError, type UiError, type Unsubscribe } from './backend-types';
import type { AuthAction, AuthHow, PromptPart, SignInAnswer } from './generated/ipc';

export type { AuthAction, AuthHow, SignInAnswer } from './generated/ipc';

/** Whose sign-in: an open session's agent (it reconnects afterwards) or an agent by its id
 * (the Agents view: nothing to reconnect). */
export type SignInTarget = { sessionId: string } | { agent: string };

/** The sign-in commands of the shell (src-tauri/src/sign_in.rs); tests fake them. The
 * terminal logins are LoginTerminal's own (`login_*`, src-tauri/src/login.rs). */
export interface SignInBackend {
  /** `authenticate {methodId}` for the session's agent: it restarts signed in (answered at
   * once; how the start went arrives as the session's events). */
  signInAgent(sessionId: string, methodId: string): Promise<SignInAnswer>;
  /** The key into the keychain (and nowhere else); a session target then restarts, an agent
   * target is checked with a start of its own (answered once it is). */
  signInApiKey(target: SignInTarget, methodId: string, key: string): Promise<SignInAnswer>;
  /** The Agents view: the agent started on its own, `authenticate {methodId}` sent; answered
   * once it is signed in, refused with the agent's reason. */
  agentSignIn(agent: string, methodId: string): Promise<SignInAnswer>;
  /** A prompt held while the session's start failed for want of a sign-in: the shell keeps
   * it and sends it once signed in (empty `parts` forget it). */
  signInKeepPrompt(sessionId: string, parts: PromptPart[]): Promise<void>;
}

/** A method the Agents view's Check reported: an `AuthAction` once the engine classifies it
 * there too (`how`); without it, the window treats it as the agent's own (`authenticate`). */
export interface CheckedMethod {
  id: string;
  name: string;
  description?: string | null;
  how?: AuthHow | null;
}

/** A Check's method as an action. */
export function checkedAction(m: CheckedMethod): AuthAction {
  return {
    methodId: m.id,
    name: m.name,
    description: m.description ?? null,
    how: m.how ?? { via: 'agent' },
  };
}

/** Names providers say their keys by ("google" → "Google"). */
const PROVIDERS: Record<string, string> = {
  google: 'Google',
  gemini: 'Gemini',
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  azure: 'Azure',
  vertex: 'Vertex AI',
  mistral: 'Mistral',
  groq: 'Groq',
  openrouter: 'OpenRouter',
  moonshot: 'Moonshot',
};

/** "Google" for `provider: "google"`; an unknown provider as the agent spelt it. */
export function providerName(provider: string | null | undefined): string | null {
  const p = (provider ?? '').trim();
  if (p === '') return null;
  return PROVIDERS[p.toLowerCase()] ?? p;
}

/** One word of a command line as a shell would need it (for showing only: nothing here runs
 * it). */
function quoteWord(w: string): string {
  if (w !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(w)) return w;
  return `'${w.replace(/'/g, `'\\''`)}'`;
}

/** A command line for the eye: `claude /login`, quoted where a shell would need it. */
export function commandLine(command: string, args: readonly string[] = []): string {
  return [command, ...args].map(quoteWord).join(' ');
}

/** What a sign-in method's button says. */
export function actionLabel(a: AuthAction): string {
  switch (a.how.via) {
    case 'terminal':
      return 'Sign in in a terminal';
    case 'terminal-command':
      return a.how.label?.trim() || a.name;
    case 'api-key': {
      const p = providerName(a.how.provider);
      return p ? `Enter a ${p} API key` : 'Enter an API key';
    }
    case 'agent':
      // Agents name methods "Log in with Google" as often as "Google".
      return /^(sign|log)\s*(in|on)\b/i.test(a.name.trim())
        ? a.name.trim()
        : `Sign in with ${a.name}`;
  }
}

/** The line under a button: what it runs or does. `launch` is the agent's own command as the
 * Agents view shows it (`AgentEntry.command`), when known. */
export function actionDetail(a: AuthAction, launch: string | null): string {
  const said = a.description?.trim() ? ` ${sentenceOf(a.description)}` : '';
  switch (a.how.via) {
    case 'terminal': {
      const args = (a.how.args ?? []).map(quoteWord).join(' ');
      if (launch)
        return `Runs \`${args ? `${launch} ${args}` : launch}\` in a terminal here.${said}`;
      return `Runs the agent's own command${args ? ` with \`${args}\`` : ''} in a terminal here.${said}`;
    }
    case 'terminal-command':
      return `Runs \`${commandLine(a.how.command, a.how.args ?? [])}\` in a terminal here.${said}`;
    case 'api-key':
      return `${a.name}: the key is kept in your keychain and sent to the agent each time it starts.${said}`;
    case 'agent':
      return `The agent signs you in itself; it may open your browser.${said}`;
  }
}

function sentenceOf(s: string): string {
  const t = s.trim();
  if (t === '') return t;
  const first = t[0]?.toUpperCase() ?? '';
  const body = first + t.slice(1);
  return /[.!?]$/.test(body) ? body : `${body}.`;
}

/** The program a launch line starts (its first word), for comparing with a login's command. */
export function launchProgram(launch: string | null | undefined): string | null {
  const first = (launch ?? '').trim().split(/\s+/)[0] ?? '';
  return first === '' ? null : first;
}

/** A `terminal-command` login runs a program the agent named, not the one the user configured:
 * the user agrees to that exact command first, unless it is the launch's own program (the
 * shell's `login_spec` decides the same as `differs_from_launch`, and refuses a login needing
 * consent without it). A `terminal` login is the launch itself (with the method's args). */
export function needsConsent(a: AuthAction, launch: string | null | undefined): boolean {
  if (a.how.via !== 'terminal-command') return false;
  const program = launchProgram(launch);
  if (!program) return true;
  // Only the very same word counts: `claude` next to `/usr/bin/claude` may be another program
  // (PATH decides), so the user is asked; the shell's own check is the last word.
  return a.how.command !== program;
}

/** The command the consent dialog names: exactly what will run (never env values: the agent
 * sends names only, and the shell adds the user's values at spawn time). */
export function consentCommand(a: AuthAction): string | null {
  if (a.how.via !== 'terminal-command') return null;
  return commandLine(a.how.command, a.how.args ?? []);
}

/** Environment variable names a terminal login sets (shown in the consent dialog; the agent's
 * values are its own, not secrets of the user's). */
export function consentEnv(a: AuthAction): string[] {
  if (a.how.via !== 'terminal-command' && a.how.via !== 'terminal') return [];
  return Object.keys(a.how.env ?? {}).sort();
}

/** The thread's card after a turn the agent refused for want of a sign-in. */
export const CONTINUE_WORDS =
  'Sign in to continue. Your prompt will be sent again once you are signed in.';

/** What a terminal login's exit means. `restarted`: the shell reconnected the session. */
export function exitWords(
  code: number | null,
  forSession: boolean,
  restartProblem: string | null = null,
): { ok: boolean; text: string } {
  if (code === 0) {
    if (!forSession) return { ok: true, text: 'Signed in. New sessions of this agent use it.' };
    if (restartProblem)
      return {
        ok: false,
        text: `Signed in, but the session could not reconnect: ${restartProblem} Use Reconnect to try again.`,
      };
    return {
      ok: true,
      text: 'Signed in. The session is reconnecting; a prompt that needed the sign-in is sent again once it is ready.',
    };
  }
  if (code === null)
    return { ok: false, text: 'The login was stopped before it finished: not signed in.' };
  return {
    ok: false,
    text: `The login exited with code ${code}: not signed in. Read its output above, then try again.`,
  };
}

/** What a terminal login ran as: its panel stays (the program's output readable) until closed. */
export interface TerminalRun {
  consent: boolean;
  run: number;
}

/** The sign-in running (at most one: its dialogs are modal). */
export type Flow =
  | { step: 'idle' }
  /** The API key dialog is open. */
  | {
      step: 'api-key';
      target: SignInTarget;
      action: AuthAction;
      busy: boolean;
      error: UiError | null;
    }
  /** The consent dialog names the command before a terminal login. */
  | { step: 'consent'; target: SignInTarget; action: AuthAction; command: string; env: string[] }
  /** The login terminal is shown, its program running. */
  | { step: 'terminal'; target: SignInTarget; action: AuthAction; consent: boolean; run: number }
  /** Asked: the agent is signing the user in (`authenticate`, it may have the browser open), or
   * a session's agent restarts signed in (`restarting`: until its start is ready or fails). */
  | {
      step: 'waiting';
      target: SignInTarget;
      action: AuthAction;
      text: string;
      restarting: boolean;
      terminal?: TerminalRun;
    }
  /** How it ended, until dismissed (a new sign-in replaces it). */
  | {
      step: 'done';
      target: SignInTarget;
      action: AuthAction;
      ok: boolean;
      text: string;
      terminal?: TerminalRun;
    };

const IDLE: Flow = { step: 'idle' };

export function sameTarget(a: SignInTarget, b: SignInTarget): boolean {
  if ('sessionId' in a) return 'sessionId' in b && a.sessionId === b.sessionId;
  return 'agent' in b && a.agent === b.agent;
}

function errorWords(e: UiError): string {
  const m = e.message.trim();
  return /[.!?]$/.test(m) ? m : `${m}.`;
}

/** What the window knows of a session, for following its restart. */
export interface SessionProgress {
  /** How many times its agent started (`SessionView.starts`). */
  starts: number;
  status: string;
  statusDetail: string | null;
}

/** While a session's agent restarts signed in, by kind. */
function restartingText(a: AuthAction, resends: boolean): string {
  const then = resends ? ' Your prompt is sent again once it is ready.' : '';
  switch (a.how.via) {
    case 'agent':
      return `Waiting for the agent to sign you in (${a.name}); it may have opened your browser.${then}`;
    case 'api-key':
      return `API key stored in your keychain. Starting the agent with it…${then}`;
    default:
      return `Signed in. Reconnecting the session…${then}`;
  }
}

export class SignInController {
  private flow: Flow = IDLE;
  private listeners = new Set<() => void>();
  /** Bumped by every new flow and Cancel: a late answer to an older one is dropped. */
  private generation = 0;
  private runs = 0;
  /** The session's start count when its restart was asked for: a later start is the one. */
  private baseline: number | null = null;
  private resends = false;

  /** `progress` tells how far a session is (App reads its store). */
  constructor(
    private backend: SignInBackend,
    private progress: (sessionId: string) => SessionProgress | null = () => null,
  ) {}

  subscribe(run: (c: SignInController) => void): Unsubscribe {
    const cb = () => run(this);
    this.listeners.add(cb);
    cb();
    return () => this.listeners.delete(cb);
  }

  private set(flow: Flow): void {
    this.flow = flow;
    for (const l of this.listeners) l();
  }

  get state(): Flow {
    return this.flow;
  }

  /** The flow when it is `target`'s (what a card shows next to its buttons), else idle. */
  for(target: SignInTarget): Flow {
    return this.flow.step !== 'idle' && sameTarget(this.flow.target, target) ? this.flow : IDLE;
  }

  /** A sign-in is under way (a dialog open, a login or the agent running): other buttons wait. */
  get busy(): boolean {
    const s = this.flow.step;
    return s === 'api-key' || s === 'consent' || s === 'terminal' || s === 'waiting';
  }

  /** A sign-in button was pressed. `launch`: the agent's own command, for the consent check. */
  begin(target: SignInTarget, action: AuthAction, launch: string | null): void {
    if (this.busy) return;
    this.generation += 1;
    switch (action.how.via) {
      case 'api-key':
        this.set({ step: 'api-key', target, action, busy: false, error: null });
        return;
      case 'terminal':
      case 'terminal-command':
        if (needsConsent(action, launch)) {
          this.set({
            step: 'consent',
            target,
            action,
            command: consentCommand(action) ?? action.name,
            env: consentEnv(action),
          });
        } else this.startTerminal(target, action, false);
        return;
      case 'agent':
        void this.authenticate(target, action);
        return;
    }
  }

  /** The login needs consent the window did not know of (the shell refused without it): the
   * dialog, naming the command (by default the one the agent's action names). */
  askConsent(command?: string): void {
    const f = this.flow;
    if (f.step !== 'terminal') return;
    this.set({
      step: 'consent',
      target: f.target,
      action: f.action,
      command: command ?? consentCommand(f.action) ?? f.action.name,
      env: consentEnv(f.action),
    });
  }

  /** The user agreed to run the named command. */
  agree(): void {
    const f = this.flow;
    if (f.step !== 'consent') return;
    this.startTerminal(f.target, f.action, true);
  }

  private startTerminal(target: SignInTarget, action: AuthAction, consent: boolean): void {
    this.runs += 1;
    // A session's agent restarts when the login succeeds: the starts from now on count.
    this.mark(target, false);
    this.set({ step: 'terminal', target, action, consent, run: this.runs });
  }

  private mark(target: SignInTarget, resends: boolean): void {
    this.baseline = 'sessionId' in target ? (this.progress(target.sessionId)?.starts ?? 0) : null;
    this.resends = resends;
  }

  /** The login program exited (`code` null: cancelled or killed). `restartProblem`: why the
   * session could not reconnect after a successful login, when it could not. */
  loginExited(code: number | null, restartProblem: string | null = null): void {
    const f = this.flow;
    if (f.step !== 'terminal') return;
    const terminal = { consent: f.consent, run: f.run };
    const session = 'sessionId' in f.target;
    if (code === 0 && session && !restartProblem) {
      this.set({
        step: 'waiting',
        target: f.target,
        action: f.action,
        text: restartingText(f.action, this.resends),
        restarting: true,
        terminal,
      });
      this.observe();
      return;
    }
    const words = exitWords(code, session, restartProblem);
    this.set({ step: 'done', target: f.target, action: f.action, ...words, terminal });
  }

  /** Try again after a terminal login that did not sign in: a new run of the same login (the
   * consent given stands: it names the same command). */
  retryLogin(): void {
    const f = this.flow;
    if (f.step !== 'done' || !f.terminal) return;
    this.generation += 1;
    this.startTerminal(f.target, f.action, f.terminal.consent);
  }

  /** The key's field changed: its error is old news. */
  clearKeyError(): void {
    const f = this.flow;
    if (f.step === 'api-key' && f.error) this.set({ ...f, error: null });
  }

  /** The key typed in the dialog: handed to the shell, never kept (the dialog clears its
   * field). Resolves true once stored (and, for a session, the restart asked for). */
  async submitKey(key: string): Promise<boolean> {
    const f = this.flow;
    if (f.step !== 'api-key' || f.busy) return false;
    if (key.trim() === '') {
      this.set({
        ...f,
        error: { code: 'invalid-input', message: 'Type or paste the API key first.' },
      });
      return false;
    }
    const gen = this.generation;
    this.mark(f.target, false);
    this.set({ ...f, busy: true, error: null });
    let answer: SignInAnswer;
    try {
      answer = await this.backend.signInApiKey(f.target, f.action.methodId, key);
    } catch (e) {
      if (gen !== this.generation) return false;
      // The shell's words never carry the key (sign_in.rs); the dialog stays open to retry.
      this.set({ ...f, busy: false, error: toUiError(e) });
      return false;
    }
    if (gen !== this.generation) return false;
    this.answered(f.target, f.action, answer);
    return true;
  }

  private async authenticate(target: SignInTarget, action: AuthAction): Promise<void> {
    const gen = this.generation;
    this.mark(target, false);
    this.set({
      step: 'waiting',
      target,
      action,
      text: restartingText(action, false),
      restarting: false,
    });
    let answer: SignInAnswer;
    try {
      answer =
        'sessionId' in target
          ? await this.backend.signInAgent(target.sessionId, action.methodId)
          : await this.backend.agentSignIn(target.agent, action.methodId);
    } catch (e) {
      if (gen !== this.generation) return;
      this.set({
        step: 'done',
        target,
        action,
        ok: false,
        text: `Not signed in: ${errorWords(toUiError(e))}`,
      });
      return;
    }
    if (gen !== this.generation) return;
    this.answered(target, action, answer);
  }

  /** The shell took the sign-in: for an agent, that is the end (its words); for a session, its
   * agent restarts and the outcome comes as the session's events (`observe`). */
  private answered(target: SignInTarget, action: AuthAction, answer: SignInAnswer): void {
    if ('agent' in target) {
      this.set({ step: 'done', target, action, ok: true, text: sentenceOf(answer.message) });
      return;
    }
    this.resends = answer.resendsPrompt;
    this.set({
      step: 'waiting',
      target,
      action,
      text: restartingText(action, answer.resendsPrompt),
      restarting: true,
    });
    this.observe();
  }

  /** The session's events moved on (App calls this on every change of a session's view):
   * a restart asked for by a sign-in ends signed in (ready) or not (dead, the card says why). */
  observe(): void {
    const f = this.flow;
    if (f.step !== 'waiting' || !('sessionId' in f.target) || this.baseline === null) return;
    const p = this.progress(f.target.sessionId);
    if (!p || p.starts <= this.baseline) return;
    const terminal = f.terminal ? { terminal: f.terminal } : {};
    if (p.status === 'ready' || p.status === 'prompting') {
      this.set({
        step: 'done',
        target: f.target,
        action: f.action,
        ok: true,
        text: this.resends
          ? 'Signed in. The session is ready, and your prompt was sent again.'
          : 'Signed in. The session is ready.',
        ...terminal,
      });
    } else if (p.status === 'dead') {
      const why = (p.statusDetail ?? '').split('\n')[0]?.trim();
      this.set({
        step: 'done',
        target: f.target,
        action: f.action,
        ok: false,
        text: why
          ? `Not signed in: the agent's new start failed (${why.replace(/[.!]$/, '')}).`
          : "Not signed in: the agent's new start failed.",
        ...terminal,
      });
    }
  }

  /** Cancel / Esc: closes a dialog; stops waiting for the agent (its answer, if it comes, is
   * dropped: the user signs in again when they want to). A terminal login is cancelled by the
   * terminal itself (it kills the program, then reports the exit). */
  cancel(): void {
    const f = this.flow;
    if (f.step === 'api-key' || f.step === 'consent') {
      this.generation += 1;
      this.set(IDLE);
    } else if (f.step === 'waiting') {
      this.generation += 1;
      this.baseline = null;
      this.set({
        step: 'done',
        target: f.target,
        action: f.action,
        ok: false,
        text: f.restarting
          ? 'Stopped waiting here. The agent may still finish signing in: the session shows how its start went.'
          : 'Stopped waiting for the agent: not signed in. If a browser page is still open, close it, then sign in again when you want to.',
        ...(f.terminal ? { terminal: f.terminal } : {}),
      });
    }
  }

  /** The login panel was closed: after its program ended, or when it could not start (its
   * terminal says why). While the session restarts, it stays followed above the thread. */
  closeLogin(): void {
    const f = this.flow;
    if (f.step === 'terminal' || f.step === 'done') this.set(IDLE);
    else if (f.step === 'waiting' && f.terminal) {
      const { terminal: _gone, ...rest } = f;
      void _gone;
      this.set(rest);
    }
  }

  /** The result line was dismissed, or the login panel closed. */
  dismiss(): void {
    if (this.flow.step === 'done') this.set(IDLE);
  }
}

/** The window's one controller, for SignInActions wherever it is shown (App sets it). */
export const SIGN_IN = Symbol('sign-in');
