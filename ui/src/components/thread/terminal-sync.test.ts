import { describe, expect, it } from 'vitest';
import type { TerminalState } from '../../lib/session-store';
import { nextWrite } from './terminal-sync';

const state = (text: string, dropped = 0): TerminalState => ({
  text,
  dropped,
  exitStatus: null,
  truncated: false,
  limit: 10,
});

describe('nextWrite', () => {
  it('writes everything kept on mount, then only what is new', () => {
    const a = nextWrite(0, state('hello'));
    expect(a).toEqual({ reset: false, data: 'hello', written: 5 });
    const b = nextWrite(a.written, state('hello world'));
    expect(b).toEqual({ reset: false, data: ' world', written: 11 });
    expect(nextWrite(b.written, state('hello world')).data).toBe('');
  });

  it('continues after the store dropped old output it had already written', () => {
    // Written 11; the store now keeps the last 8 of 14 characters (6 dropped).
    expect(nextWrite(11, state('o world!!!', 4))).toEqual({
      reset: false,
      data: '!!!',
      written: 14,
    });
  });

  it('starts over when the view fell behind the kept window', () => {
    // Written 3, but the store dropped 6: characters 3..5 are gone.
    expect(nextWrite(3, state('world!!', 6))).toEqual({
      reset: true,
      data: 'world!!',
      written: 13,
    });
  });

  it('re-creates a remounted terminal from the kept text', () => {
    expect(nextWrite(0, state('kept', 100))).toEqual({ reset: true, data: 'kept', written: 104 });
  });
});
