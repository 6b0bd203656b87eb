import { svelte } from '@sveltejs/vite-plugin-svelte';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  plugins: [svelte()],
  // Svelte's browser build in tests (jsdom), not its server build.
  resolve: process.env.VITEST ? { conditions: ['browser'] } : undefined,
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
  test: {
    root,
    environment: 'jsdom',
    include: ['src/**/*.test.ts'],
    // Our own stylesheets as they are, for the test that reads them (menu.test.ts); vitest
    // otherwise hands tests an empty string for every CSS file.
    css: { include: [/\/ui\/src\/[^/]+\.css/] },
  },
});
