// An agent's question to the user (`elicitation`): what its form holds as typed, the answer it
// becomes, and the rules that answer must keep. Plain functions, so tests check them without a
// DOM.
//
// `validate` mirrors the engine's (`crates/acp-desk-core/src/elicitation.rs`: required fields,
// types, bounds, lengths, pattern, formats, options, item counts, in its words without the
// field's name, which the form shows beside each message). The engine has the last word: it
// refuses an accept with `invalid-answer`, whose message lists the problems. The window's copy
// is for live feedback. Values the user typed are never logged or put in the thread.
import { RE2JS } from 're2js';
import type { ElicitationEvent, ElicitationField, FieldError } from './generated/ipc';

/** What an answer's content holds per field. */
export type ElicitationAnswerValue = string | number | boolean | string[];

/** What one control holds: text as typed (numbers, dates too), a checkbox, chosen options. */
export type RawValue = string | boolean | string[];
export type FormValues = Record<string, RawValue>;
export type Content = Record<string, ElicitationAnswerValue>;

/** What a field is called on screen. */
export function fieldLabel(f: ElicitationField): string {
  const t = f.title?.trim();
  return t ? t : f.name;
}

/** The input a string field is typed in. */
export function inputType(f: ElicitationField): string {
  if (f.type === 'number' || f.type === 'integer') return 'number';
  switch (f.format) {
    case 'email':
      return 'email';
    case 'uri':
      return 'url';
    case 'date':
      return 'date';
    case 'date-time':
      return 'datetime-local';
    default:
      return 'text';
  }
}

/** What the form starts with: each field's default where it has a fitting one. */
export function initialValues(fields: readonly ElicitationField[]): FormValues {
  const out: FormValues = {};
  for (const f of fields) out[f.name] = initialValue(f);
  return out;
}

function initialValue(f: ElicitationField): RawValue {
  // (Generated as an object type: it is any JSON value.)
  const d: unknown = f.default;
  switch (f.type) {
    case 'boolean':
      return d === true;
    case 'multi-select': {
      const values = new Set((f.options ?? []).map((o) => o.value));
      return Array.isArray(d)
        ? d.filter((v): v is string => typeof v === 'string' && values.has(v))
        : [];
    }
    case 'select':
      return typeof d === 'string' && (f.options ?? []).some((o) => o.value === d) ? d : '';
    case 'number':
    case 'integer':
      return typeof d === 'number' && Number.isFinite(d) ? String(d) : '';
    case 'string':
      if (typeof d !== 'string') return '';
      return f.format === 'date-time' ? localDateTime(d) : d;
    case 'unsupported':
      return '';
  }
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** An RFC 3339 date-time as a `datetime-local` input shows it (the user's time zone); a value
 * that is not one stays as it is (and is then shown as invalid). */
export function localDateTime(s: string): string {
  if (!isDateTime(s)) return s;
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) return s;
  const secs = d.getSeconds() === 0 ? '' : `:${pad(d.getSeconds())}`;
  return (
    `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}` +
    `T${pad(d.getHours())}:${pad(d.getMinutes())}${secs}`
  );
}

/** A `datetime-local` value (no zone) as RFC 3339 with the user's offset; null when it is not
 * one. */
export function rfc3339(local: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/.exec(local);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map((x) => Number(x ?? 0)) as number[];
  if (
    !isDate(local.slice(0, 10)) ||
    (h as number) > 23 ||
    (mi as number) > 59 ||
    (s as number) > 59
  )
    return null;
  const at = new Date(y as number, (mo as number) - 1, d, h, mi, s);
  const off = -at.getTimezoneOffset();
  const sign = off < 0 ? '-' : '+';
  const abs = Math.abs(off);
  return `${local.slice(0, 16)}:${pad(s as number)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** Whether the control holds nothing: such an optional field is left out of the answer (a
 * required multi-select sends its empty list: the engine counts it as given, and its
 * `minItems` decides). */
function blank(f: ElicitationField, raw: RawValue | undefined): boolean {
  if (raw === undefined) return true;
  if (f.type === 'boolean') return false;
  if (Array.isArray(raw)) return raw.length === 0 && !f.required;
  return raw === '';
}

/**
 * The answer the form's values make, and what is wrong with it: what `validate` says, plus
 * what could not even be read (a number that is not one). An optional field left empty is not
 * sent; an empty required one is "required".
 */
export function collect(
  fields: readonly ElicitationField[],
  values: FormValues,
): { content: Content; errors: FieldError[] } {
  const content: Content = {};
  const unreadable: FieldError[] = [];
  for (const f of fields) {
    const raw = values[f.name];
    if (f.type === 'unsupported' || blank(f, raw)) continue;
    if (f.type === 'number' || f.type === 'integer') {
      const text = String(raw).trim();
      const n = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : NaN;
      if (!Number.isFinite(n)) {
        unreadable.push({ field: f.name, message: 'Must be a number.' });
        continue;
      }
      content[f.name] = n;
    } else if (f.type === 'string' && f.format === 'date-time' && typeof raw === 'string') {
      const at = rfc3339(raw);
      if (at === null) {
        unreadable.push({ field: f.name, message: 'Must be a date and time.' });
        continue;
      }
      content[f.name] = at;
    } else if (raw !== undefined) {
      content[f.name] = raw;
    }
  }
  const bad = new Set(unreadable.map((e) => e.field));
  const errors = [...unreadable, ...validate(fields, content).filter((e) => !bad.has(e.field))];
  // In the form's order.
  const order = new Map(fields.map((f, i) => [f.name, i]));
  errors.sort((a, b) => (order.get(a.field) ?? 1e9) - (order.get(b.field) ?? 1e9));
  return { content, errors };
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** The engine's rules over an answer's content: one error per field at most, in field order,
 * then values no field asked for. */
export function validate(
  fields: readonly ElicitationField[],
  content: Readonly<Record<string, unknown>>,
): FieldError[] {
  const errors: FieldError[] = [];
  for (const f of fields) {
    const has = Object.hasOwn(content, f.name);
    const message = has ? checkValue(f, content[f.name]) : missing(f);
    if (message) errors.push({ field: f.name, message });
  }
  const known = new Set(fields.map((f) => f.name));
  for (const name of Object.keys(content)) {
    if (!known.has(name))
      errors.push({ field: name, message: `The agent did not ask for \`${name}\`.` });
  }
  return errors;
}

function missing(f: ElicitationField): string | null {
  if (!f.required) return null;
  if (f.type === 'unsupported')
    return 'Required, but ACP Desk cannot send a value for it: decline or cancel instead.';
  if (f.type === 'select') return 'Required: choose one.';
  return 'Required.';
}

function checkValue(f: ElicitationField, v: unknown): string | null {
  // An empty text is no answer (the engine's rule), whatever the field's type.
  if (v === null || v === '') return missing(f);
  switch (f.type) {
    case 'unsupported':
      return 'ACP Desk cannot send a value for this field.';
    case 'boolean':
      return typeof v === 'boolean' ? null : 'Must be yes or no.';
    case 'number':
    case 'integer': {
      if (typeof v !== 'number' || !Number.isFinite(v)) return 'Must be a number.';
      if (f.type === 'integer' && !Number.isInteger(v)) return 'Must be a whole number.';
      if (typeof f.minimum === 'number' && v < f.minimum) return `Must be at least ${f.minimum}.`;
      if (typeof f.maximum === 'number' && v > f.maximum) return `Must be at most ${f.maximum}.`;
      return null;
    }
    case 'select':
      return typeof v === 'string' && (f.options ?? []).some((o) => o.value === v)
        ? null
        : 'Must be one of the choices offered.';
    case 'multi-select': {
      if (!Array.isArray(v)) return 'Must be a list of choices.';
      const values = new Set((f.options ?? []).map((o) => o.value));
      const seen = new Set<string>();
      for (const x of v) {
        if (typeof x !== 'string' || !values.has(x)) return 'May hold only the choices offered.';
        if (seen.has(x)) return `Lists ${titleOf(f, x)} twice.`;
        seen.add(x);
      }
      if (typeof f.minItems === 'number' && v.length < f.minItems)
        return `Needs at least ${plural(f.minItems, 'choice')}.`;
      if (typeof f.maxItems === 'number' && v.length > f.maxItems)
        return `Allows at most ${plural(f.maxItems, 'choice')}.`;
      return null;
    }
    case 'string': {
      if (typeof v !== 'string') return 'Must be text.';
      const length = [...v].length;
      if (typeof f.minLength === 'number' && length < f.minLength)
        return `Must be at least ${f.minLength} characters long.`;
      if (typeof f.maxLength === 'number' && length > f.maxLength)
        return `Must be at most ${f.maxLength} characters long.`;
      const format = formatError(f.format, v);
      if (format) return format;
      if (f.pattern) {
        const re = compile(f.pattern);
        if (re && !re.matcher(v).find()) return `Must match the pattern ${f.pattern}.`;
      }
      return null;
    }
  }
}

function titleOf(f: ElicitationField, value: string): string {
  return `“${(f.options ?? []).find((o) => o.value === value)?.title ?? value}”`;
}

function formatError(format: ElicitationField['format'], v: string): string | null {
  switch (format) {
    case 'email':
      return isEmail(v) ? null : 'Must be an email address.';
    case 'uri':
      return isUri(v) ? null : 'Must be an absolute address, such as https://example.com.';
    case 'date':
      return isDate(v) ? null : 'Must be a date, YYYY-MM-DD.';
    case 'date-time':
      return isDateTime(v) ? null : 'Must be a date and time, such as 2026-12-01T09:30:00Z.';
    default:
      return null;
  }
}

/** WHATWG's rule for `<input type=email>`, as the engine checks it. */
const EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

export function isEmail(v: string): boolean {
  return EMAIL.test(v);
}

/** An absolute URL by the WHATWG parser (the engine's `url` crate follows the same standard). */
export function isUri(v: string): boolean {
  try {
    new URL(v);
    return true;
  } catch {
    return false;
  }
}

export function isDate(v: string): boolean {
  // As the engine's chrono reads `%Y-%m-%d`: a sign may lead, month and day may be one digit.
  const m = /^\+?(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(v);
  if (!m) return false;
  const [y, mo, d] = m.slice(1).map(Number) as [number, number, number];
  if (mo < 1 || mo > 12 || d < 1) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1] as number;
  return d <= days;
}

/** RFC 3339: a date, `T` (or a space, as the engine's chrono allows), hours:minutes:seconds
 * (a fraction), and `Z` or an offset. */
export function isDateTime(v: string): boolean {
  const m =
    /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/.exec(v);
  if (!m || !isDate(m[1] as string)) return false;
  const [h, mi, s] = [m[2], m[3], m[4]].map(Number) as [number, number, number];
  const oh = m[7] === undefined ? 0 : Number(m[7]);
  const om = m[8] === undefined ? 0 : Number(m[8]);
  return h <= 23 && mi <= 59 && s <= 60 && oh <= 23 && om <= 59;
}

// The agent's pattern runs on every keystroke: with RE2's linear-time matching (re2js), as the
// engine's Rust `regex` does, never JavaScript's backtracking RegExp, which a pattern such as
// `^(a+)+$` can keep busy for minutes. RE2 refuses look-around and back references, as the
// engine does (its note then says the pattern cannot be checked here).
const compiled = new Map<string, RE2JS | null>();
const MAX_COMPILED = 64;
function compile(pattern: string): RE2JS | null {
  if (!compiled.has(pattern)) {
    let re: RE2JS | null;
    try {
      re = RE2JS.compile(pattern);
    } catch {
      re = null;
    }
    // The patterns of the questions on screen; an agent sending endless new ones must not grow
    // this.
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    compiled.set(pattern, re);
  }
  return compiled.get(pattern) ?? null;
}

/** What bounds a field has, in words, under its control ("3 to 40 characters"). */
export function hintOf(f: ElicitationField): string | null {
  const range = (lo: number | null | undefined, hi: number | null | undefined, unit: string) => {
    const l = typeof lo === 'number' ? lo : null;
    const h = typeof hi === 'number' ? hi : null;
    if (l !== null && h !== null)
      return l === h ? `${plural(l, unit)}` : `${l} to ${plural(h, unit)}`;
    if (l !== null) return `at least ${plural(l, unit)}`;
    if (h !== null) return `at most ${plural(h, unit)}`;
    return null;
  };
  switch (f.type) {
    case 'string': {
      const r = range(f.minLength, f.maxLength, 'character');
      const p = f.pattern ? `matching ${f.pattern}` : null;
      const both = [r, p].filter(Boolean).join(', ');
      return both ? both.charAt(0).toUpperCase() + both.slice(1) : null;
    }
    case 'number':
    case 'integer': {
      const what = f.type === 'integer' ? 'A whole number' : 'A number';
      const lo = typeof f.minimum === 'number' ? f.minimum : null;
      const hi = typeof f.maximum === 'number' ? f.maximum : null;
      if (lo !== null && hi !== null) return `${what} from ${lo} to ${hi}`;
      if (lo !== null) return `${what}, at least ${lo}`;
      if (hi !== null) return `${what}, at most ${hi}`;
      return f.type === 'integer' ? what : null;
    }
    case 'multi-select': {
      const r = range(f.minItems, f.maxItems, 'choice');
      return r ? r.charAt(0).toUpperCase() + r.slice(1) : null;
    }
    default:
      return null;
  }
}

/** A short name for the question in the thread: its title, else its message's first line. */
export function questionName(
  e: Pick<ElicitationEvent, 'title' | 'message' | 'mode' | 'host'>,
): string {
  const t = e.title?.trim();
  if (t) return t;
  if (e.mode === 'url' && e.host) return `open ${e.host}`;
  const line = (e.message ?? '').trim().split('\n', 1)[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}…` : line || 'a question';
}
