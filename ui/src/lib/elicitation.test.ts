import { describe, expect, it } from 'vitest';
import {
  collect,
  hintOf,
  initialValues,
  inputType,
  isDate,
  isDateTime,
  isEmail,
  isUri,
  localDateTime,
  questionName,
  rfc3339,
  validate,
} from './elicitation';
import type { ElicitationField } from './generated/ipc';

/** A field as the engine sends it (`default` is any JSON value; the generated type says an
 * object). */
const F = (f: Omit<ElicitationField, 'default'> & { default?: unknown }) => f as ElicitationField;

// One field of every type the schema crate defines, as the engine sends them.
const name = F({
  name: 'name',
  title: 'Your name',
  required: true,
  type: 'string',
  minLength: 2,
  maxLength: 5,
});
const email = F({ name: 'email', required: false, type: 'string', format: 'email' });
const site = F({ name: 'site', required: false, type: 'string', format: 'uri' });
const day = F({ name: 'day', required: false, type: 'string', format: 'date' });
const at = F({ name: 'at', required: false, type: 'string', format: 'date-time' });
const code = F({
  name: 'code',
  required: false,
  type: 'string',
  pattern: '^[A-Z]{3}$',
});
const ratio = F({
  name: 'ratio',
  required: false,
  type: 'number',
  minimum: 0,
  maximum: 1,
});
const count = F({
  name: 'count',
  required: true,
  type: 'integer',
  minimum: 1,
  maximum: 10,
  default: 3,
});
const agree = F({ name: 'agree', required: false, type: 'boolean', default: true });
const color = F({
  name: 'color',
  required: true,
  type: 'select',
  options: [
    { value: 'r', title: 'Red' },
    { value: 'g', title: 'Green' },
  ],
  default: 'g',
});
const tags = F({
  name: 'tags',
  required: false,
  type: 'multi-select',
  minItems: 1,
  maxItems: 2,
  options: [
    { value: 'a', title: 'Alpha' },
    { value: 'b', title: 'Beta' },
    { value: 'c', title: 'Gamma' },
  ],
  default: ['a', 'zzz'],
});
const blob = F({
  name: 'blob',
  required: false,
  type: 'unsupported',
  note: 'an object: this window cannot ask for it',
});
const ALL = [name, email, site, day, at, code, ratio, count, agree, color, tags, blob];

const fieldsOf = (errors: { field: string }[]) => errors.map((e) => e.field);

describe('the form', () => {
  it('starts from the defaults that fit their field', () => {
    expect(initialValues(ALL)).toEqual({
      name: '',
      email: '',
      site: '',
      day: '',
      at: '',
      code: '',
      ratio: '',
      count: '3',
      agree: true,
      color: 'g',
      // A default that is not one of the options is dropped.
      tags: ['a'],
      blob: '',
    });
    expect(initialValues([F({ ...color, default: 'blue' })])).toEqual({ color: '' });
    expect(initialValues([F({ ...agree, default: undefined })])).toEqual({ agree: false });
  });

  it('puts each string format in the input made for it', () => {
    expect([name, email, site, day, at, ratio, count].map(inputType)).toEqual([
      'text',
      'email',
      'url',
      'date',
      'datetime-local',
      'number',
      'number',
    ]);
  });

  it('sends what was filled in, typed, and leaves out empty optional fields', () => {
    const values = {
      ...initialValues(ALL),
      name: 'Ann',
      ratio: '0.5',
      tags: ['a', 'c'],
      day: '2026-02-28',
    };
    const { content, errors } = collect(ALL, values);
    expect(errors).toEqual([]);
    expect(content).toEqual({
      name: 'Ann',
      day: '2026-02-28',
      ratio: 0.5,
      count: 3,
      agree: true,
      color: 'g',
      tags: ['a', 'c'],
    });
  });

  it('refuses an empty required field, in the form’s order', () => {
    const { errors } = collect(ALL, { ...initialValues(ALL), count: '', color: '' });
    expect(errors).toEqual([
      { field: 'name', message: 'Required.' },
      { field: 'count', message: 'Required.' },
      { field: 'color', message: 'Required: choose one.' },
    ]);
  });

  it('sends a required multi-select’s empty list (its minItems decides), not an optional one’s', () => {
    const required = F({ ...tags, required: true, minItems: null, default: [] });
    expect(collect([required], { tags: [] })).toEqual({ content: { tags: [] }, errors: [] });
    expect(collect([{ ...required, minItems: 1 }], { tags: [] }).errors).toEqual([
      { field: 'tags', message: 'Needs at least 1 choice.' },
    ]);
    expect(collect([tags], { tags: [] })).toEqual({ content: {}, errors: [] });
  });

  it('refuses a number that is not one, once (not also as missing)', () => {
    expect(collect([count], { count: '4x' }).errors).toEqual([
      { field: 'count', message: 'Must be a number.' },
    ]);
    expect(collect([ratio], { ratio: '1e' }).errors).toEqual([
      { field: 'ratio', message: 'Must be a number.' },
    ]);
  });

  it('sends a date-time as RFC 3339 with the local offset', () => {
    const { content, errors } = collect([at], { at: '2026-12-02T14:30' });
    expect(errors).toEqual([]);
    const sent = content['at'] as string;
    expect(isDateTime(sent)).toBe(true);
    expect(sent.slice(0, 19)).toBe('2026-12-02T14:30:00');
    expect(new Date(sent).getTime()).toBe(new Date(2026, 11, 2, 14, 30, 0).getTime());
    expect(collect([at], { at: '2026-02-30T10:00' }).errors).toEqual([
      { field: 'at', message: 'Must be a date and time.' },
    ]);
    expect(rfc3339('yesterday')).toBeNull();
  });

  it('shows a date-time default in local time, and one that is not one as it is', () => {
    const shown = localDateTime('2026-12-02T14:30:00Z');
    expect(new Date(shown).getTime()).toBe(Date.UTC(2026, 11, 2, 14, 30));
    expect(localDateTime('soon')).toBe('soon');
  });

  it('never sends an unsupported field, and cannot be submitted when one is required', () => {
    expect(collect([blob], { blob: 'x' }).content).toEqual({});
    expect(collect([{ ...blob, required: true }], { blob: '' }).errors).toEqual([
      {
        field: 'blob',
        message: 'Required, but ACP Desk cannot send a value for it: decline or cancel instead.',
      },
    ]);
  });

  it('says each field’s bounds in words', () => {
    expect(hintOf(name)).toBe('2 to 5 characters');
    expect(hintOf({ ...code, maxLength: 3 })).toBe('At most 3 characters, matching ^[A-Z]{3}$');
    expect(hintOf(code)).toBe('Matching ^[A-Z]{3}$');
    expect(hintOf(ratio)).toBe('A number from 0 to 1');
    expect(hintOf({ ...count, maximum: null })).toBe('A whole number, at least 1');
    expect(hintOf(tags)).toBe('1 to 2 choices');
    expect(hintOf({ ...tags, minItems: 1, maxItems: 1 })).toBe('1 choice');
    expect(hintOf(agree)).toBeNull();
  });
});

describe('validate (the engine’s rules)', () => {
  it('accepts a valid answer of every type', () => {
    expect(
      validate(ALL, {
        name: 'Zoë',
        email: 'ann@example.com',
        site: 'https://example.com/x?y=1',
        day: '2024-02-29',
        at: '2026-12-02T14:30:00.5+01:00',
        code: 'ABC',
        ratio: 1,
        count: 10,
        agree: false,
        color: 'r',
        tags: ['b'],
      }),
    ).toEqual([]);
  });

  it('refuses strings by length (characters, not bytes), format and pattern', () => {
    expect(validate([name], { name: 'A' })).toEqual([
      { field: 'name', message: 'Must be at least 2 characters long.' },
    ]);
    expect(validate([name], { name: 'Zoë é' })).toEqual([]);
    expect(validate([name], { name: 'Annabel' })).toEqual([
      { field: 'name', message: 'Must be at most 5 characters long.' },
    ]);
    expect(validate([name], { name: 3 })).toEqual([{ field: 'name', message: 'Must be text.' }]);
    expect(validate([email], { email: 'ann@' })).toEqual([
      { field: 'email', message: 'Must be an email address.' },
    ]);
    expect(fieldsOf(validate([site], { site: 'example.com' }))).toEqual(['site']);
    expect(fieldsOf(validate([day], { day: '2023-02-29' }))).toEqual(['day']);
    expect(fieldsOf(validate([at], { at: '2026-12-02T14:30' }))).toEqual(['at']);
    expect(validate([code], { code: 'abc' })).toEqual([
      { field: 'code', message: 'Must match the pattern ^[A-Z]{3}$.' },
    ]);
    // Patterns are read as RE2 reads them, like the engine's Rust regex: a look-ahead neither
    // can read is not checked here (the engine's note says so); RE2's named groups are.
    expect(validate([{ ...code, pattern: '(?=z)z' }], { code: 'zzz' })).toEqual([]);
    expect(fieldsOf(validate([{ ...code, pattern: '(?P<x>a)' }], { code: 'zzz' }))).toEqual([
      'code',
    ]);
    // A pattern that would keep a backtracking RegExp busy for minutes is checked at once.
    const slow = { ...code, pattern: '^(a+)+$' };
    expect(fieldsOf(validate([slow], { code: `${'a'.repeat(5000)}b` }))).toEqual(['code']);
  });

  it('refuses numbers out of bounds, and a fraction for an integer', () => {
    expect(validate([ratio], { ratio: 1.5 })).toEqual([
      { field: 'ratio', message: 'Must be at most 1.' },
    ]);
    expect(validate([ratio], { ratio: -0.1 })).toEqual([
      { field: 'ratio', message: 'Must be at least 0.' },
    ]);
    expect(validate([count], { count: 2.5 })).toEqual([
      { field: 'count', message: 'Must be a whole number.' },
    ]);
    expect(validate([count], { count: '3' })).toEqual([
      { field: 'count', message: 'Must be a number.' },
    ]);
  });

  it('refuses a boolean that is not one', () => {
    expect(validate([agree], { agree: 'yes' })).toEqual([
      { field: 'agree', message: 'Must be yes or no.' },
    ]);
  });

  it('refuses choices that are not offered, and item counts out of bounds', () => {
    expect(validate([color], { color: 'Red' })).toEqual([
      { field: 'color', message: 'Must be one of the choices offered.' },
    ]);
    expect(validate([tags], { tags: [] })).toEqual([
      { field: 'tags', message: 'Needs at least 1 choice.' },
    ]);
    expect(validate([tags], { tags: ['a', 'b', 'c'] })).toEqual([
      { field: 'tags', message: 'Allows at most 2 choices.' },
    ]);
    expect(validate([tags], { tags: ['a', 'x'] })).toEqual([
      { field: 'tags', message: 'May hold only the choices offered.' },
    ]);
    expect(validate([tags], { tags: ['a', 'a'] })).toEqual([
      { field: 'tags', message: 'Lists “Alpha” twice.' },
    ]);
    expect(validate([tags], { tags: 'a' })).toEqual([
      { field: 'tags', message: 'Must be a list of choices.' },
    ]);
  });

  it('refuses values no field asked for, and missing required ones', () => {
    expect(validate([agree], { other: 1 })).toEqual([
      { field: 'other', message: 'The agent did not ask for `other`.' },
    ]);
    // An empty text is no answer, whatever the type; null neither.
    expect(validate([count], { count: '' })).toEqual([{ field: 'count', message: 'Required.' }]);
    expect(validate([count], { count: null })).toEqual([{ field: 'count', message: 'Required.' }]);
    expect(validate([blob], { blob: 1 })).toEqual([
      { field: 'blob', message: 'ACP Desk cannot send a value for this field.' },
    ]);
    expect(validate(ALL, {})).toEqual([
      { field: 'name', message: 'Required.' },
      { field: 'count', message: 'Required.' },
      { field: 'color', message: 'Required: choose one.' },
    ]);
  });
});

describe('formats', () => {
  it('knows an email address, an address with a scheme, a date and an RFC 3339 date-time', () => {
    // WHATWG's email rule: a dotless domain is one.
    expect(['a@b.co', 'first.last+tag@sub.example.org', 'a@b'].every(isEmail)).toBe(true);
    expect(['@b.co', 'a b@c.de', 'a@b.', 'a@-b.co', 'a@b..co'].some(isEmail)).toBe(false);
    expect(['https://x.org', 'mailto:a@b.co', 'urn:isbn:0451450523'].every(isUri)).toBe(true);
    expect(['x.org', '://x', 'https://ex ample.com', '/relative'].some(isUri)).toBe(false);
    // The engine's chrono: one-digit month and day, a leading +.
    expect(['2024-02-29', '2026-12-31', '2026-1-1', '+2026-01-01'].every(isDate)).toBe(true);
    expect(['2026-13-01', '2026-04-31', '1900-02-29'].some(isDate)).toBe(false);
    expect(
      ['2026-12-02T00:00:00Z', '2026-12-02t23:59:60-05:30', '2026-12-02 10:00:00Z'].every(
        isDateTime,
      ),
    ).toBe(true);
    expect(['2026-12-02T24:00:00Z', '2026-12-02T10:00:00'].some(isDateTime)).toBe(false);
  });
});

describe('questionName', () => {
  it('is the title, the host of a URL question, or the message’s first line', () => {
    expect(questionName({ mode: 'form', title: 'Deploy', message: 'm' })).toBe('Deploy');
    expect(questionName({ mode: 'url', message: 'Sign in', host: 'example.com' })).toBe(
      'open example.com',
    );
    expect(questionName({ mode: 'form', message: 'Which one?\nmore' })).toBe('Which one?');
  });
});
