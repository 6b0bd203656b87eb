// Opens the built harness in Chromium with the app's CSP and saves screenshots; prints CSP
// violations and whether xterm rendered. Usage (from the repository root):
//   HARNESS_OUT=/tmp/thread-harness npx vite build --config ui/bench/markdown/vite.config.ts
//   node ui/bench/markdown/serve.mjs /tmp/thread-harness 4719 &
//   node ui/bench/markdown/shoot.mjs http://localhost:4719 /tmp/shots
import { chromium } from '@playwright/test';
import { mkdir } from 'node:fs/promises';

const base = process.argv[2] ?? 'http://localhost:4719';
const out = process.argv[3] ?? '/tmp/shots';
await mkdir(out, { recursive: true });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
});

async function shot(scene, scheme, name, fn, size = { width: 960, height: 1100 }) {
  const page = await browser.newPage({ viewport: size, colorScheme: scheme, deviceScaleFactor: 1 });
  const problems = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(`${base}/harness.html?scene=${scene}`);
  await page.waitForTimeout(700);
  const extra = fn ? await fn(page) : undefined;
  await page.screenshot({ path: `${out}/${name}.png` });
  const xterm = await page.evaluate(() => {
    const rows = document.querySelector('.xterm-rows');
    if (!rows) return null;
    const style = getComputedStyle(rows.querySelector('div') ?? rows);
    return {
      text: rows.textContent?.slice(0, 80),
      lineHeight: style.lineHeight,
      fontFamily: style.fontFamily,
    };
  });
  console.log(
    `${name}: ${problems.length} console problems`,
    xterm ? `xterm: ${JSON.stringify(xterm)}` : '',
    extra ?? '',
  );
  for (const p of [...new Set(problems)].slice(0, 6)) console.log('   ', p.slice(0, 300));
  await page.close();
}

const scenes = (process.env.SCENES ?? 'all,tools,diff,split,big,scrolled').split(',');
for (const scheme of ['light', 'dark']) {
  if (scenes.includes('all'))
    await shot('all', scheme, `thread-entries-${scheme}`, async (p) => {
      await p.evaluate(() => document.querySelector('.scroller')?.scrollTo(0, 0));
      await p.waitForTimeout(300);
    });
  if (scenes.includes('tools'))
    await shot(
      'tools',
      scheme,
      `thread-tools-${scheme}`,
      async (p) => {
        await p.evaluate(() => document.querySelector('.scroller')?.scrollTo(0, 0));
        await p.waitForTimeout(300);
      },
      { width: 960, height: 1500 },
    );
  if (scenes.includes('diff'))
    await shot('diff', scheme, `thread-diff-unified-${scheme}`, null, { width: 900, height: 760 });
  if (scenes.includes('split'))
    await shot(
      'diff',
      scheme,
      `thread-diff-split-${scheme}`,
      async (p) => {
        await p.getByRole('button', { name: 'Split' }).first().click();
        await p.waitForTimeout(200);
      },
      { width: 1100, height: 760 },
    );
  if (scenes.includes('big'))
    await shot(
      'big',
      scheme,
      `thread-big-${scheme}`,
      async (p) => {
        const n = await p.evaluate(() => document.querySelectorAll('[data-entry]').length);
        return `rendered entries: ${n} of 5000`;
      },
      { width: 960, height: 700 },
    );
  if (scenes.includes('terminal'))
    await shot(
      'all',
      scheme,
      `thread-terminal-${scheme}`,
      async (p) => {
        await p.evaluate(() =>
          document.querySelector('[data-terminal-id]')?.scrollIntoView({ block: 'center' }),
        );
        await p.waitForTimeout(400);
      },
      { width: 960, height: 700 },
    );
}
await browser.close();

// Following the stream: at the bottom it follows, scrolled up it stays put and offers a jump.
if (scenes.includes('follow')) {
  const browser2 = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  });
  const page = await browser2.newPage({ viewport: { width: 960, height: 700 } });
  await page.goto(`${base}/harness.html?scene=big`);
  await page.waitForTimeout(800);
  const state = () =>
    page.evaluate(() => {
      const s = document.querySelector('.scroller');
      return {
        top: Math.round(s.scrollTop),
        fromBottom: Math.round(s.scrollHeight - s.scrollTop - s.clientHeight),
        jump: !!document.querySelector('.jump'),
        mounted: document.querySelectorAll('[data-entry]').length,
      };
    });
  console.log('opened:', JSON.stringify(await state()));
  const grow = (n) =>
    page.evaluate((n) => {
      const v = window.currentView;
      const last = v.entries.at(-1);
      const entries = [...v.entries];
      if (last.type === 'agent')
        entries[entries.length - 1] = {
          ...last,
          text: last.text + '\n\nmore streamed text '.repeat(n),
        };
      window.setView({ ...v, entries });
    }, n);
  await grow(3);
  await page.waitForTimeout(300);
  console.log('after streaming at the bottom:', JSON.stringify(await state()));
  await page.mouse.move(400, 300);
  await page.mouse.wheel(0, -1500);
  await page.waitForTimeout(300);
  const before = await state();
  await grow(5);
  await page.waitForTimeout(300);
  console.log(
    'scrolled up:',
    JSON.stringify(before),
    '-> after more text:',
    JSON.stringify(await state()),
  );
  await page.screenshot({ path: `${out}/thread-jump.png` });
  await page.click('.jump');
  await page.waitForTimeout(500);
  console.log('after Jump to latest:', JSON.stringify(await state()));
  await browser2.close();
}

// The streaming bench in Chromium (prints the figures).
if (scenes.includes('bench')) {
  const browser3 = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  });
  const page = await browser3.newPage();
  await page.goto(`${base}/harness.html?scene=bench`);
  await page.waitForFunction(() => document.title === 'bench done', null, { timeout: 600_000 });
  console.log(await page.textContent('pre'));
  await browser3.close();
}

// A live terminal: output appended in the store shows up (only the new part is written), and a
// terminal scrolled out of the window is disposed and re-created from the kept text.
if (scenes.includes('termgrow')) {
  const browser4 = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  });
  const page = await browser4.newPage({ viewport: { width: 960, height: 900 } });
  await page.goto(`${base}/harness.html?scene=tools`);
  await page.waitForTimeout(600);
  const rows = () =>
    page.evaluate(() =>
      document.querySelector('[data-terminal-id="term-2"] .xterm-rows')?.textContent?.slice(-60),
    );
  console.log('before:', JSON.stringify(await rows()));
  for (let i = 0; i < 3; i++) {
    await page.evaluate((i) => {
      const v = window.currentView;
      const t = v.terminals['term-2'];
      const text = t.text + `appended ${i}\n`;
      window.setView({
        ...v,
        terminals: {
          ...v.terminals,
          'term-2': { ...t, text, exitStatus: i === 2 ? { exitCode: 0 } : null },
        },
      });
    }, i);
    await page.waitForTimeout(150);
  }
  console.log('after 3 appends:', JSON.stringify(await rows()));
  console.log('exit line:', await page.textContent('[data-terminal-id="term-2"] .exit'));
  await page.evaluate(() => document.querySelector('.scroller').scrollTo(0, 0));
  await page.waitForTimeout(300);
  console.log(
    'terminals mounted at the top:',
    await page.evaluate(() => document.querySelectorAll('.xterm').length),
  );
  await browser4.close();
}

// A large diff goes to the worker; it must load under the CSP and deliver.
if (scenes.includes('bigdiff')) {
  const browser5 = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  });
  const page = await browser5.newPage();
  const problems = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  const workers = [];
  page.on('worker', (w) => workers.push(w.url()));
  await page.goto(`${base}/harness.html?scene=bigdiff`);
  await page.waitForSelector('tr.add', { timeout: 10_000 });
  console.log(
    'big diff:',
    await page.textContent('.diff-view .stat'),
    'workers:',
    workers.map((u) => u.split('/').pop()),
    'errors:',
    problems.filter((p) => !p.includes('404')),
  );
  await browser5.close();
}
