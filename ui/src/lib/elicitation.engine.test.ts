// The window's `validate` against the ENGINE's verdicts (crates/acp-desk-core's
// `elicitation::validate`), recorded in fixtures/elicitation-verdicts.json by
// ui/scripts/elicitation-verdicts/cases.mjs: for every answer there, the same fields refused.
import { describe, expect, it } from 'vitest';
import type { ElicitationField } from './generated/ipc';
import { validate } from './elicitation';
import verdicts from './fixtures/elicitation-verdicts.json';

const cases = verdicts as unknown as {
  fields: ElicitationField[];
  content: Record<string, unknown>;
  refused: string[];
}[];

describe('validate agrees with the engine', () => {
  it('has the cases of every field type', () => {
    const types = new Set(cases.flatMap((c) => c.fields.map((f) => f.type)));
    expect([...types].sort()).toEqual(
      ['boolean', 'integer', 'multi-select', 'number', 'select', 'string', 'unsupported'].sort(),
    );
    expect(cases.length).toBeGreaterThan(100);
  });

  it('refuses exactly the fields the engine refuses', () => {
    const differ = cases
      .map((c) => ({ ...c, ours: validate(c.fields, c.content).map((e) => e.field) }))
      .filter((c) => JSON.stringify(c.ours) !== JSON.stringify(c.refused))
      .map((c) => ({ content: c.content, engine: c.refused, window: c.ours }));
    expect(differ).toEqual([]);
  });
});
