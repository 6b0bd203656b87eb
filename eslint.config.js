// One linter for the TypeScript and Svelte of ui/ and the end-to-end tests.
import js from '@eslint/js';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';
import ts from 'typescript-eslint';

export default ts.config(
  { ignores: ['ui/dist/', 'ui/src/lib/generated/', 'node_modules/', 'tests/e2e/.build/'] },
  js.configs.recommended,
  ...ts.configs.strict,
  ...svelte.configs['flat/recommended'],
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
  },
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: { parserOptions: { parser: ts.parser } },
  },
  {
    // Exactly one module of the UI talks to Tauri (ARCHITECTURE.md); the rest use Backend.
    files: ['ui/src/**/*.ts', 'ui/src/**/*.svelte'],
    ignores: ['ui/src/lib/backend.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@tauri-apps/*'],
              message:
                'Only ui/src/lib/backend.ts imports @tauri-apps/*; use the Backend interface.',
            },
          ],
        },
      ],
    },
  },
  {
    // Native tooltips outlive their elements in WebKitGTK: every tooltip is lib/tooltip.ts's
    // `use:tip` (an <option>'s title is its dropdown's own business).
    files: ['ui/src/**/*.svelte'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "SvelteElement[kind='html'][name.name!='option'] > SvelteStartTag > SvelteAttribute[key.name='title']",
          message:
            'Use the tooltip action (`use:tip`, ui/src/lib/tooltip.ts), not a title attribute.',
        },
      ],
    },
  },
);
