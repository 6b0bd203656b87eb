// Playwright against the BUILT UI (ui/dist, `npm run build:ui`) served by `vite preview`, in
// Debian's Chromium, with Tauri's IPC mocked by mock-ipc.js. Run: `npm run test:pw`.
// Screenshots go to $PW_SCREENSHOTS (default test-results/screenshots, at the repository root).
import { defineConfig } from '@playwright/test';
import { fileURLToPath } from 'node:url';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './browser.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const port = Number(process.env.PW_PORT ?? 4317);

export default defineConfig({
  testDir: '.',
  testMatch: '*.spec.ts',
  outputDir: `${repo}/test-results/playwright`,
  fullyParallel: false,
  workers: 2,
  retries: 0,
  timeout: 30_000,
  expect: { timeout: 5_000 },
  reporter: 'list',
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    browserName: 'chromium',
    viewport: { width: 1100, height: 760 },
    trace: 'off',
    screenshot: 'off',
    video: 'off',
    launchOptions: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS },
  },
  webServer: {
    command: `npx vite preview --config ui/vite.config.ts --host 127.0.0.1 --port ${port} --strictPort`,
    cwd: repo,
    url: `http://127.0.0.1:${port}/`,
    reuseExistingServer: false,
    timeout: 30_000,
  },
});
