// Agent output is untrusted. A transcript whose agent text (and tool titles, notices, errors,
// permission requests, file names) is hostile Markdown/HTML must render inert: no script runs, no
// request leaves for another host, no `on*` attribute or `javascript:` address reaches the DOM,
// and a link never navigates the window. The corpus starts from ui/src/lib/markdown.test.ts.
//
// The page is served without the app's CSP (tauri.conf.json applies it only inside the app), so
// this checks the sanitizer and the components on their own, without that second wall.
import { expect, test, type Page } from '@playwright/test';
import { sel, shot } from './hooks';
import { calls, replay, replayed, type StreamEvent } from './mock-ipc.js';

// Every payload that could run sets window.__pwned (and most also call alert()).
const PWN = 'window.__pwned=(window.__pwned||0)+1;alert(1)';
const REMOTE = 'https://evil.example';

export const corpus: string[] = [
  // From markdown.test.ts.
  '<script>alert(1)</script>',
  `<script>${PWN}</script>`,
  `<img src=x onerror="${PWN}">`,
  `<p onclick="${PWN}">hi</p>`,
  `[click](javascript:${PWN})`,
  `<a href="javascript:${PWN}">x</a>`,
  '<a href="jav&#x09;ascript:alert(1)">x</a>',
  '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
  `<svg><script>${PWN}</script><circle onload="${PWN}"/></svg>`,
  `<svg><animate onbegin="${PWN}" attributeName="x" dur="1s"/></svg>`,
  `<iframe src="${REMOTE}/frame"></iframe>`,
  `<form action="${REMOTE}/form"><input name="a"><button>go</button></form>`,
  `<style>body{background:url(${REMOTE}/style-tag.png)}</style>`,
  `<p style="background:url(${REMOTE}/style-attr.png)">x</p>`,
  `![x](${REMOTE}/track.png)`,
  '<object data="x.swf"></object><embed src="x.swf">',
  `<meta http-equiv="refresh" content="0;url=${REMOTE}/refresh">`,
  `<base href="${REMOTE}/">`,
  `<noscript><p title="</noscript><img src=x onerror=${PWN}>">`,
  `<math><mtext><table><mglyph><style><img src=x onerror=${PWN}>`,
  `<link rel="stylesheet" href="${REMOTE}/x.css">`,
  // More.
  `<img src="${REMOTE}/remote-img.png">`,
  `<img srcset="${REMOTE}/srcset.png 2x">`,
  `<svg onload="${PWN}"><rect width="10" height="10"/></svg>`,
  `<svg><a xlink:href="javascript:${PWN}"><text y="20">svg link</text></a></svg>`,
  `<iframe srcdoc="<script>parent.${PWN}</script>"></iframe>`,
  `<iframe src="javascript:${PWN}"></iframe>`,
  `<form><button formaction="javascript:${PWN}">submit</button></form>`,
  `<input type="image" src="${REMOTE}/input.png">`,
  `<video poster="${REMOTE}/poster.png"><source src="${REMOTE}/v.mp4"></video>`,
  `<audio src="${REMOTE}/a.mp3" autoplay></audio>`,
  `<details open ontoggle="${PWN}"><summary>s</summary></details>`,
  `<body onload="${PWN}">`,
  `<div style="width:expression(${PWN})">ie</div>`,
  `<a href="data:text/html,<script>${PWN}</script>">data link</a>`,
  `<a href="vbscript:msgbox(1)">vb</a>`,
  `[ref link][r]\n\n[r]: javascript:${PWN}`,
  `<a href="${REMOTE}/ok" target="_top" ping="${REMOTE}/ping">ping link</a>`,
  `<img src=x onerror=${PWN}//`,
  `<template><img src=x onerror="${PWN}"></template>`,
  `<select><template><style></style><img src=x onerror="${PWN}"></template></select>`,
  `<object data="javascript:${PWN}"></object>`,
  `\`<img src=x onerror="${PWN}">\` in code, and in a block:\n\n\`\`\`html\n<script>${PWN}</script>\n\`\`\``,
  `<xmp><img src=x onerror="${PWN}"></xmp>`,
  `<a id="composer" name="__acpMock">clobber</a><form name="getElementById"></form>`,
];

const sid = 'hostile-session';

/** One agent message per payload (separate Markdown renders), plus hostile text everywhere. */
function transcript(pending: boolean): StreamEvent[] {
  const ev = (e: Record<string, unknown> & { kind: string }): StreamEvent => ({
    sessionId: sid,
    ...e,
  });
  const events: StreamEvent[] = [
    ev({
      kind: 'session-status',
      status: 'ready',
      agent: { launchName: 'demo', name: `<img src=x onerror="${PWN}">` },
    }),
    ev({ kind: 'turn-start', prompt: [{ type: 'text', text: `<script>${PWN}</script> hostile` }] }),
  ];
  corpus.forEach((text, i) => {
    events.push(ev({ kind: 'text-delta', text, messageId: `m${i}` }));
    events.push(ev({ kind: 'thought', text, messageId: `t${i}` }));
  });
  events.push(
    ev({
      kind: 'tool-call',
      toolCallId: 'tc-1',
      toolName: `<img src=x onerror="${PWN}">`,
      arguments: {},
      isUpdate: false,
      toolKind: 'edit',
      status: 'completed',
      content: [
        {
          type: 'diff',
          path: `<svg onload="${PWN}">.rs`,
          oldText: `<script>${PWN}</script>`,
          newText: `<img src=x onerror="${PWN}">`,
        },
        { type: 'content', content: { type: 'text', text: corpus.join('\n\n') } },
      ],
      locations: [{ path: `javascript:${PWN}` }],
    }),
    ev({
      kind: 'terminal-output',
      terminalId: 'term-1',
      data: `\u001b]8;;javascript:${PWN}\u0007link\u001b]8;;\u0007 <img src=x onerror="${PWN}">\r\n`,
    }),
    ev({
      kind: 'notice',
      severity: 'warning',
      source: 'agent',
      title: `<img src=x onerror="${PWN}">`,
      description: `[x](javascript:${PWN})`,
    }),
    ev({ kind: 'error', error: { message: `<script>${PWN}</script>` } }),
    ev({ kind: 'file-changed', path: `<img src=x onerror="${PWN}">`, created: true }),
    ev({
      kind: 'plan',
      entries: [{ content: `<img src=x onerror="${PWN}">`, priority: 'high', status: 'pending' }],
    }),
    ev({ kind: 'session-info', title: `<script>${PWN}</script>` }),
  );
  if (pending) {
    events.push(
      ev({
        kind: 'agent-prompt',
        toolCallId: 'perm-1',
        targetToolCallId: 'tc-2',
        toolName: `<img src=x onerror="${PWN}">`,
        toolKind: 'execute',
        text: `<script>${PWN}</script>`,
        rawInput: { command: `<img src=x onerror="${PWN}">` },
        locations: [{ path: `<svg onload="${PWN}">` }],
        options: [
          { optionId: 'a', name: `<img src=x onerror="${PWN}">`, kind: 'allow_once' },
          { optionId: 'r', name: 'Reject', kind: 'reject_once' },
        ],
      }),
    );
  } else {
    events.push(ev({ kind: 'turn-end', reason: 'completed', stopReason: 'end_turn' }));
  }
  return events;
}

async function watch(
  page: Page,
): Promise<{ dialogs: string[]; remote: string[]; errors: string[] }> {
  const seen = { dialogs: [] as string[], remote: [] as string[], errors: [] as string[] };
  page.on('dialog', (d) => {
    seen.dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('pageerror', (e) => seen.errors.push(e.message));
  const origin = new URL(test.info().project.use.baseURL ?? 'http://127.0.0.1').origin;
  page.on('request', (r) => {
    const url = r.url();
    if (!url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:')) {
      seen.remote.push(url);
    }
  });
  // Nothing leaves the machine even if a request slipped through (it is still counted above).
  await page.route(
    (url) => url.origin !== origin && url.protocol.startsWith('http'),
    (r) => r.abort(),
  );
  return seen;
}

/** What would not be inert: `on*` attributes, script addresses, active elements. */
function findBad(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const bad: string[] = [];
    for (const el of document.querySelectorAll('body *')) {
      for (const attr of el.getAttributeNames()) {
        const value = el.getAttribute(attr) ?? '';
        if (attr.toLowerCase().startsWith('on')) bad.push(`${el.tagName} ${attr}`);
        if (
          /^\s*(javascript|vbscript|data):/i.test(
            [...value].filter((c) => c.charCodeAt(0) > 32).join(''),
          ) &&
          [
            'href',
            'src',
            'xlink:href',
            'action',
            'formaction',
            'data',
            'srcdoc',
            'poster',
          ].includes(attr.toLowerCase())
        ) {
          bad.push(`${el.tagName} ${attr}=${value.slice(0, 40)}`);
        }
      }
      if (
        ['SCRIPT', 'IFRAME', 'OBJECT', 'EMBED', 'META', 'BASE', 'LINK', 'STYLE', 'FRAME'].includes(
          el.tagName,
        )
      ) {
        bad.push(`<${el.tagName.toLowerCase()}> in body`);
      }
    }
    // The composer is the only form in the window.
    for (const f of document.querySelectorAll('form'))
      if (!f.querySelector('#composer')) bad.push('a <form>');
    return bad;
  });
}

async function assertInert(page: Page): Promise<void> {
  expect(await findBad(page)).toEqual([]);
  const head = await page.evaluate(() =>
    [...document.head.children].map((c) => c.outerHTML.slice(0, 80)),
  );
  expect(head.filter((h) => /evil|refresh|<base/i.test(h))).toEqual([]);
}

for (const pending of [false, true]) {
  test(`hostile corpus renders inert${pending ? ' (with a permission dialog open)' : ''}`, async ({
    page,
  }) => {
    const seen = await watch(page);
    await replay(page, transcript(pending));
    await page.goto('/');
    const start = page.url();
    await expect.poll(() => replayed(page)).toBe(true);
    if (pending) await expect(page.locator(sel.dialog)).toBeVisible();
    else await expect(page.locator(sel.entry('turn-end'))).toHaveCount(1);
    // Give timers, refreshes, image loads and animations a moment to fire.
    await page.waitForTimeout(1500);
    await shot(page, `hostile${pending ? '-dialog' : ''}--window`);

    await assertInert(page);
    expect(
      await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned),
    ).toBeUndefined();
    expect(seen.dialogs).toEqual([]);
    expect(seen.remote).toEqual([]);
    expect(page.url()).toBe(start);
    expect(seen.errors).toEqual([]);

    if (!pending) {
      // Clicking every link in the thread neither navigates nor runs anything.
      const links = page.locator(`${sel.thread} a`);
      const n = await links.count();
      for (let i = 0; i < n; i++) await links.nth(i).click({ force: true, noWaitAfter: true });
      await page.waitForTimeout(300);
      expect(page.url()).toBe(start);
      expect(
        await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned),
      ).toBeUndefined();
      expect(seen.dialogs).toEqual([]);
      expect(seen.remote).toEqual([]);
      // Only web links may be handed to the system browser.
      for (const c of (await calls(page)).filter((c) => c.cmd === 'open_url')) {
        expect(String(c.args.url)).toMatch(/^(https?:|mailto:)/);
      }
    }
  });
}

test('the detectors catch a payload that bypasses the sanitizer', async ({ page }) => {
  const seen = await watch(page);
  await replay(page, transcript(false));
  await page.goto('/');
  await expect(page.locator(sel.entry('turn-end'))).toHaveCount(1);
  // Straight into the DOM, as an unsanitized {@html} would put it.
  await page.evaluate(
    ([pwn, remote]) => {
      document
        .querySelector('.thread, [data-thread]')
        ?.insertAdjacentHTML(
          'beforeend',
          `<img src=x onerror="${pwn}"><img src="${remote}/bypass.png"><a href="javascript:${pwn}">x</a>`,
        );
    },
    [PWN, REMOTE],
  );
  await expect
    .poll(() => page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned))
    .toBe(1);
  await expect.poll(() => seen.dialogs.length).toBe(1);
  await expect.poll(() => seen.remote).toEqual([`${REMOTE}/bypass.png`]);
  const bad = await findBad(page);
  expect(bad).toContain('IMG onerror');
  expect(bad.some((b) => b.startsWith('A href=javascript:'))).toBe(true);
});
