import { describe, expect, it } from 'vitest';
import { errorText, toUiError } from './backend-types';

describe('toUiError', () => {
  it('keeps a command’s IpcError as it came', () => {
    const e = { code: 'not-a-folder', message: '/x is a file' };
    expect(toUiError(e)).toEqual(e);
    expect(errorText(toUiError(e))).toBe('/x is a file');
  });

  it('makes anything else, and an unknown code, ACP Desk’s own failure', () => {
    // What Tauri rejects with for a command it does not know: a bare string.
    expect(toUiError('command nope not found')).toEqual({
      code: 'internal',
      message: 'command nope not found',
    });
    expect(toUiError(new Error('boom'))).toEqual({ code: 'internal', message: 'boom' });
    expect(toUiError({ code: 'made-up', message: 'x' }).code).toBe('internal');
  });

  it('words ACP Desk’s own failures as ours and asks for a report', () => {
    expect(errorText({ code: 'internal', message: 'could not list the folder’s files' })).toBe(
      'ACP Desk failed: could not list the folder’s files — please report it.',
    );
  });
});
