// Builds the harness page (harness.html) the way the app is built, for a real browser:
//   npx vite build --config ui/bench/markdown/vite.config.ts   (output: ui/bench/markdown/dist)
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  plugins: [svelte()],
  clearScreen: false,
  build: {
    outDir: process.env.HARNESS_OUT ?? 'dist',
    emptyOutDir: true,
    target: 'es2022',
    rollupOptions: { input: fileURLToPath(new URL('harness.html', import.meta.url)) },
  },
});
