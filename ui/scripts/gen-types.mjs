// Generates ui/src/lib/generated/ipc.ts from ipc.schema.json (written by the Rust side:
// `cargo run -p acp-desk-shell --bin acp-desk-ipc-schema`). With --check, fails when the
// committed file differs from what the schema gives (CI runs that).
//
// The schema's `CommandName` (the names in src-tauri/src/command_names.rs, the list that also
// registers and grants the commands) becomes a union type, and also `COMMAND_NAMES`, the same
// names as a value, for tests that check the UI calls each one.
//
// schemars writes JSON Schema 2020-12, where `$ref` may stand beside other keywords;
// json-schema-to-typescript follows the older rule and drops the siblings (a ContentChunk lost
// its `content`). Rewriting such objects into `allOf: [{$ref}, {...rest}]` keeps every field.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile } from 'json-schema-to-typescript';

const here = dirname(fileURLToPath(import.meta.url));
const dir = join(here, '..', 'src', 'lib', 'generated');
const schemaPath = join(dir, 'ipc.schema.json');
const outPath = join(dir, 'ipc.ts');

function splitRefs(node) {
  if (Array.isArray(node)) return node.map(splitRefs);
  if (node === null || typeof node !== 'object') return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) out[k] = splitRefs(v);
  const { $ref, ...rest } = out;
  const meaningful = Object.keys(rest).filter(
    (k) => !['description', 'title', '$comment', 'default', 'examples'].includes(k),
  );
  if ($ref && meaningful.length > 0) {
    const { description, title, ...constraints } = rest;
    const doc = Object.fromEntries(
      Object.entries({ description, title }).filter(([, v]) => v !== undefined),
    );
    return { ...doc, allOf: [{ $ref }, constraints] };
  }
  return out;
}

const schema = splitRefs(JSON.parse(readFileSync(schemaPath, 'utf8')));
// json-schema-to-typescript resolves `#/definitions/...`; schemars 1 writes `#/$defs/...`.
const text = JSON.stringify(schema).replaceAll('"#/$defs/', '"#/definitions/');
const normalized = JSON.parse(text);
normalized.definitions = normalized.$defs;
delete normalized.$defs;

const commandNames = normalized.definitions?.CommandName?.enum;
// Rust identifiers, so each is safe to write between quotes.
if (
  !Array.isArray(commandNames) ||
  commandNames.length === 0 ||
  !commandNames.every((n) => /^[a-z_][a-z0-9_]*$/.test(n))
) {
  console.error(
    `${schemaPath} has no CommandName enum of command names: is it the Rust side's schema?`,
  );
  process.exit(1);
}

const types = await compile(normalized, 'IpcTypes', {
  bannerComment:
    '/* Generated from ipc.schema.json by ui/scripts/gen-types.mjs: do not edit.\n' +
    ' * The Rust types in src-tauri/src/ipc.rs and crates/acp-desk-core, and the command list in\n' +
    ' * src-tauri/src/command_names.rs, are the source. */',
  unreachableDefinitions: true,
  additionalProperties: false,
  strictIndexSignatures: false,
  format: true,
  style: { singleQuote: true, printWidth: 100 },
});
const ts =
  types +
  '/** Every command name (`CommandName`), in the order of the Rust list. */\n' +
  'export const COMMAND_NAMES = [\n' +
  commandNames.map((n) => `  '${n}',\n`).join('') +
  '] as const satisfies readonly CommandName[];\n';

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(outPath, 'utf8');
  } catch {
    // missing: stale
  }
  if (current !== ts) {
    console.error(
      `${outPath} is stale: run \`npm run gen:types\` (after \`cargo run -p acp-desk-shell --bin acp-desk-ipc-schema\`) and commit it`,
    );
    process.exit(1);
  }
  console.log('generated types are fresh');
} else {
  writeFileSync(outPath, ts);
  console.log(`wrote ${outPath}`);
}
