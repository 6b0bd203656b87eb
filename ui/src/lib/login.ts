// A terminal login (issue 18): the agent's sign-in program on a pty in the shell
// (src-tauri/src/login.rs), shown and typed into through xterm.js (LoginTerminal.svelte). This
// module is the logic without the DOM: start, the keys, the size, Cancel, and the state line.
import type { UiError } from './backend-types';
import { errorText, toUiError } from './backend-types';
import type { LoginFrame, LoginStarted, LoginTarget } from './generated/ipc';

export type { LoginFrame, LoginStarted, LoginTarget };

/** The shell's login commands (backend.ts: `tauriLoginBackend`). */
export interface LoginBackend {
  loginStart(
    target: LoginTarget,
    methodId: string,
    cols: number,
    rows: number,
    consent: boolean,
    onFrame: (frame: LoginFrame) => void,
  ): Promise<LoginStarted>;
  loginInput(loginId: string, data: string): Promise<void>;
  loginResize(loginId: string, cols: number, rows: number): Promise<void>;
  loginCancel(loginId: string): Promise<void>;
}

let shellBackend: LoginBackend | null = null;

/** The backend LoginTerminal uses when it is given none (main.ts sets the shell's). */
export function setLoginBackend(backend: LoginBackend | null): void {
  shellBackend = backend;
}

export function loginBackend(): LoginBackend | null {
  return shellBackend;
}

export type LoginPhase =
  /** login_start is under way. */
  | 'starting'
  | 'running'
  /** Cancel was pressed; the program is being ended. */
  | 'cancelling'
  /** The program ended by itself (any code, or a signal nobody here sent). */
  | 'exited'
  | 'cancelled'
  /** It never ran: login_start refused (the error says why). */
  | 'failed';

export interface LoginView {
  phase: LoginPhase;
  /** The agent's label for the login, once started. */
  label: string | null;
  /** What runs (program and args, secrets redacted), once started. */
  commandShown: string | null;
  exitCode: number | null;
  signal: string | null;
  /** A session target signed in: its agent was restarted. */
  restarted: boolean;
  /** The login worked but restarting the session did not. */
  restartError: UiError | null;
  /** Why it could not start (`failed`), or the last failed key/resize/cancel. */
  error: UiError | null;
}

/** Signed in: only exit status 0 is (a signal or a cancel never is). */
export function succeeded(v: LoginView): boolean {
  return v.phase === 'exited' && v.exitCode === 0 && v.signal === null;
}

/** The state line under the terminal: what is going on, in the words the user needs. */
export function stateLine(v: LoginView): string {
  switch (v.phase) {
    case 'starting':
      return 'starting…';
    case 'running':
      return v.error ? `running — ${errorText(v.error)}` : 'running';
    case 'cancelling':
      return 'cancelling…';
    case 'cancelled':
      return 'cancelled';
    case 'failed':
      return v.error ? `could not start: ${errorText(v.error)}` : 'could not start';
    case 'exited': {
      const how =
        v.signal !== null
          ? `ended by ${v.signal}`
          : v.exitCode === null
            ? 'exited'
            : `exited with code ${v.exitCode}`;
      if (succeeded(v)) {
        if (v.restartError) {
          return `${how}: signed in, but the session could not restart: ${errorText(v.restartError)}`;
        }
        return v.restarted ? `${how}: signed in, the session restarts` : `${how}: signed in`;
      }
      return `${how}: not signed in (only exit code 0 signs in)`;
    }
  }
}

export interface LoginOptions {
  target: LoginTarget;
  methodId: string;
  consent: boolean;
  /** Text for the terminal, in order (output that arrives before it is ready is the
   * component's to keep). */
  onOutput: (data: string) => void;
  /** The state changed. */
  onChange: (view: LoginView) => void;
  /** Once, when the program has ended: its code (`null` after a signal or a cancel), whether
   * the session was restarted, and why that restart failed when the login worked but it did. */
  onExit: (code: number | null, restarted: boolean, restartProblem: string | null) => void;
  /** The shell refused to start without the user's consent (`consent-needed`: the agent names
   * a program that is not its launch, which the window's own guess did not see). The flow asks
   * and starts a new login with consent; without this, the refusal is shown as a failure. */
  onConsentNeeded?: (message: string) => void;
}

/** One login, from start to its end. Keys typed and sizes given before the shell has answered
 * login_start are sent once it has, in order. */
export class Login {
  private view: LoginView = {
    phase: 'starting',
    label: null,
    commandShown: null,
    exitCode: null,
    signal: null,
    restarted: false,
    restartError: null,
    error: null,
  };
  private id: string | null = null;
  /** Keys typed before the id is known. */
  private typed: string[] = [];
  private size: { cols: number; rows: number } | null = null;
  private sentSize: { cols: number; rows: number } | null = null;
  private cancelAsked = false;
  private ended = false;
  /** Sends one after another: keys must reach the program in the order typed. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private backend: LoginBackend,
    private opts: LoginOptions,
  ) {}

  get state(): LoginView {
    return this.view;
  }

  get loginId(): string | null {
    return this.id;
  }

  private set(patch: Partial<LoginView>): void {
    this.view = { ...this.view, ...patch };
    this.opts.onChange(this.view);
  }

  /** Starts the program at the terminal's size. */
  async start(cols: number, rows: number): Promise<void> {
    this.size = { cols, rows };
    this.sentSize = { cols, rows };
    let started: LoginStarted;
    try {
      started = await this.backend.loginStart(
        this.opts.target,
        this.opts.methodId,
        cols,
        rows,
        this.opts.consent,
        (f) => this.frame(f),
      );
    } catch (e) {
      this.ended = true;
      const error = toUiError(e);
      this.set({ phase: 'failed', error });
      if (error.code === 'consent-needed' && this.opts.consent === false) {
        this.opts.onConsentNeeded?.(error.message);
      }
      return;
    }
    this.id = started.loginId;
    if (!this.ended) {
      this.set({
        phase: this.cancelAsked ? 'cancelling' : 'running',
        label: started.label,
        commandShown: started.commandShown,
      });
    } else {
      this.set({ label: started.label, commandShown: started.commandShown });
    }
    if (this.cancelAsked) {
      this.send(() => this.backend.loginCancel(started.loginId));
      return;
    }
    const typed = this.typed.splice(0);
    if (typed.length > 0) this.input(typed.join(''));
    const s = this.size;
    if (s && (s.cols !== cols || s.rows !== rows)) this.resize(s.cols, s.rows);
  }

  private frame(f: LoginFrame): void {
    if (this.ended) return;
    if (f.kind === 'output') {
      this.opts.onOutput(f.data);
      return;
    }
    this.ended = true;
    const cancelled = f.cancelled || this.cancelAsked;
    this.set({
      phase: cancelled ? 'cancelled' : 'exited',
      exitCode: f.exitCode ?? null,
      signal: f.signal ?? null,
      restarted: f.restarted,
      restartError: f.restartError ?? null,
    });
    this.opts.onExit(
      cancelled ? null : (f.exitCode ?? null),
      f.restarted,
      f.restartError ? errorText(f.restartError) : null,
    );
  }

  private send(call: () => Promise<void>): void {
    this.queue = this.queue.then(call).catch((e: unknown) => {
      if (!this.ended) this.set({ error: toUiError(e) });
    });
  }

  /** Keys from the terminal (xterm's onData), as it encodes them. */
  input(data: string): void {
    if (this.ended || this.cancelAsked || data === '') return;
    const id = this.id;
    if (id === null) {
      this.typed.push(data);
      return;
    }
    if (this.view.error) this.set({ error: null });
    this.send(() => this.backend.loginInput(id, data));
  }

  /** The terminal's new size in cells; sent when it differs from the last one sent. */
  resize(cols: number, rows: number): void {
    if (!Number.isFinite(cols) || !Number.isFinite(rows) || cols < 2 || rows < 1) return;
    this.size = { cols, rows };
    const id = this.id;
    if (this.ended || id === null) return;
    const last = this.sentSize;
    if (last && last.cols === cols && last.rows === rows) return;
    this.sentSize = { cols, rows };
    this.send(() => this.backend.loginResize(id, cols, rows));
  }

  /** Ends the program (and all it started); the end arrives as `cancelled`. */
  cancel(): void {
    if (this.ended || this.cancelAsked) return;
    this.cancelAsked = true;
    this.typed = [];
    this.set({ phase: 'cancelling' });
    const id = this.id;
    if (id === null) return; // sent once login_start has answered
    this.send(() => this.backend.loginCancel(id));
  }

  /** The component went away: a login nobody sees must not run on. */
  dispose(): void {
    if (!this.ended) this.cancel();
  }
}
