// Writes ui/src/lib/fixtures/elicitation-verdicts.json: answers of every field type (from the
// demo agent's recorded form, plus unsupported and bounded fields), each with the fields the
// ENGINE's `elicitation::validate` refuses. `elicitation.engine.test.ts` holds the window's
// `validate` to them. Run: `node ui/scripts/elicitation-verdicts/cases.mjs` (builds the small
// Rust program beside it against crates/acp-desk-core).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readFileSync, writeFileSync } from 'node:fs';
const here = (p) => new URL(p, import.meta.url);
const rec = readFileSync(here('../../playwright/recorded/demo-elicit-form.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l))
  .find((e) => e.kind === 'elicitation');
const fields = [
  ...rec.fields,
  { name: 'blob', type: 'unsupported', required: false, note: 'x' },
  { name: 'must', type: 'unsupported', required: true, note: 'x' },
  { name: 'exact', type: 'integer', required: false, minimum: -2, maximum: 2 },
];
const values = {
  string: ['', 'a', 'ab', 'x'.repeat(41), 'Zoë', 3, true, null, ['a']],
  email: [
    'a@b.co',
    'a@b',
    'a@',
    '@b',
    'a b@c.d',
    'a@-b.co',
    'a@b..co',
    'first.last+x@sub.example.org',
    'ä@b.co',
  ],
  uri: [
    'https://x.org',
    'x.org',
    'mailto:a@b.co',
    'urn:isbn:1',
    '://x',
    'https://ex ample.com',
    '/rel',
    'http://[::1]/',
  ],
  date: [
    '2024-02-29',
    '2023-02-29',
    '2026-13-01',
    '2026-1-1',
    '2026-04-31',
    '20260101',
    '+2026-01-01',
  ],
  'date-time': [
    '2026-12-02T10:00:00Z',
    '2026-12-02T10:00:00+01:00',
    '2026-12-02T10:00:00.123-05:30',
    '2026-12-02 10:00:00Z',
    '2026-12-02t10:00:00z',
    '2026-12-02T10:00Z',
    '2026-12-02T24:00:00Z',
    '2026-12-02T10:00:60Z',
  ],
  pattern: ['ABC', 'abc', 'ABCD', 'xABC'],
  number: [0, 1, 0.5, 1.5, -0.1, '0.5', true, null, ''],
  integer: [1, 16, 17, 0, 2.5, 4, '4', -2, 3, -3],
  boolean: [true, false, 'true', 1, null],
  select: ['rust', 'ts', 'go', 1, '', null, 'MIT'],
  'multi-select': [
    [],
    ['linux'],
    ['linux', 'linux'],
    ['linux', 'macos', 'windows'],
    ['bsd'],
    'linux',
    [1],
    ['cli', 'gui'],
    null,
  ],
  unsupported: [{}, 'x', 1, null],
};
const cases = [];
for (const f of fields) {
  const key = f.type === 'string' ? (f.format ?? (f.pattern ? 'pattern' : 'string')) : f.type;
  for (const v of values[key] ?? []) cases.push([[f], { [f.name]: v }]);
  cases.push([[f], {}]);
}
cases.push([fields, {}]);
cases.push([fields.filter((f) => !f.required), { nope: 1 }]);
// The engine's verdict on each (the program beside this script), as the fixture the vitest
// reads.
const out = execFileSync(
  'cargo',
  ['run', '-q', '--release', '--manifest-path', fileURLToPath(here('Cargo.toml'))],
  {
    input: JSON.stringify(cases),
  },
);
const refused = JSON.parse(String(out));
writeFileSync(
  here('../../src/lib/fixtures/elicitation-verdicts.json'),
  JSON.stringify(cases.map(([fields, content], i) => ({ fields, content, refused: refused[i] }))) +
    '\n',
);
console.log(cases.length, 'cases');
