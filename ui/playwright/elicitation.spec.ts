// The agent's questions (`elicitation`, issue 19), through the mock: a form with every field
// type (defaults, required fields, live checks that keep Submit off, the engine's refusal shown
// on its field), decline, cancel (Esc), a URL question (nothing opens before the user agrees,
// then the waiting state until `elicitation-complete`), and a question settled by Stop. The
// thread's line says who settled it and how, never what was typed. Screenshots at 800x600 and
// 1280x800.
import { expect, test, type Page } from '@playwright/test';
import { fileURLToPath } from 'node:url';
import { collectEntries, demoStart, failOnPageErrors, frame, sel, shot } from './hooks';
import { calls, readTranscript, replay, type StreamEvent } from './mock-ipc.js';

const SID = 's-elicit';
const DIALOG = '[role="dialog"][data-elicitation]';

const start = demoStart(SID);
const turn = (text: string): StreamEvent[] => [
  { kind: 'turn-start', sessionId: SID, prompt: [{ type: 'text', text }] },
  { kind: 'text-delta', sessionId: SID, text: 'I need a few details first.', messageId: 'm1' },
];

/** A form with one field of every type the schema crate defines, in the agent's key order. */
const FIELDS = [
  {
    name: 'name',
    title: 'Project name',
    description: 'Used for the folder and the package.',
    required: true,
    type: 'string',
    minLength: 2,
    maxLength: 20,
  },
  { name: 'email', title: 'Contact email', required: false, type: 'string', format: 'email' },
  { name: 'homepage', title: 'Homepage', required: false, type: 'string', format: 'uri' },
  { name: 'release', title: 'Release date', required: false, type: 'string', format: 'date' },
  {
    name: 'meeting',
    title: 'Kick-off meeting',
    required: false,
    type: 'string',
    format: 'date-time',
  },
  {
    name: 'code',
    title: 'Team code',
    required: false,
    type: 'string',
    pattern: '^[A-Z]{3}$',
  },
  {
    name: 'coverage',
    title: 'Coverage target',
    required: false,
    type: 'number',
    minimum: 0,
    maximum: 1,
    default: 0.8,
  },
  {
    name: 'workers',
    title: 'Workers',
    required: true,
    type: 'integer',
    minimum: 1,
    maximum: 16,
    default: 4,
  },
  { name: 'tests', title: 'Write tests', required: false, type: 'boolean', default: true },
  {
    name: 'license',
    title: 'License',
    required: true,
    type: 'select',
    default: 'mit',
    options: [
      { value: 'mit', title: 'MIT', description: 'Short and permissive.' },
      { value: 'apache', title: 'Apache 2.0', description: 'Permissive, with a patent grant.' },
      { value: 'gpl', title: 'GPL 3.0', description: 'Copyleft.' },
    ],
  },
  {
    name: 'targets',
    title: 'Targets',
    required: false,
    type: 'multi-select',
    minItems: 1,
    maxItems: 2,
    default: ['linux'],
    options: [
      { value: 'linux', title: 'Linux' },
      { value: 'macos', title: 'macOS' },
      { value: 'windows', title: 'Windows' },
    ],
  },
  {
    name: 'extra',
    title: 'Extra settings',
    required: false,
    type: 'unsupported',
    note: 'An object with its own fields: this window cannot ask for it, so it is not sent.',
  },
];

const form = (requestId = 'e1'): StreamEvent => ({
  kind: 'elicitation',
  sessionId: SID,
  requestId,
  mode: 'form',
  message: 'Before I create the project, tell me how to set it up.',
  title: 'New project',
  description: 'Everything but the name has a default.',
  fields: FIELDS,
});

const urlQuestion: StreamEvent = {
  kind: 'elicitation',
  sessionId: SID,
  requestId: 'e2',
  mode: 'url',
  message: 'Sign in to the example service so that I can read your repositories.',
  url: 'https://example.com/auth?client=acp-desk&state=8f2c1d',
  host: 'example.com',
};

async function open(page: Page, events: StreamEvent[], size = { width: 1280, height: 800 }) {
  await page.setViewportSize(size);
  await replay(page, [...start, ...turn('elicit form'), ...events]);
  await page.goto('/');
  const dialog = page.locator(DIALOG);
  await expect(dialog).toBeVisible();
  return dialog;
}

const field = (page: Page, name: string) => page.locator(`${DIALOG} [data-field="${name}"]`);
const answers = async (page: Page) =>
  (await calls(page)).filter((c) => c.cmd === 'elicitation_answer').map((c) => c.args);

// Nothing the page runs may throw (a dialog going away while its queue empties, say).
failOnPageErrors(test);

test('form: a control per field, in order, with defaults, required marked and the first focused', async ({
  page,
}) => {
  const dialog = await open(page, [form()]);
  await expect(dialog.getByRole('heading', { name: 'ACP Desk demo agent asks you' })).toBeVisible();
  await expect(dialog).toContainText('Before I create the project, tell me how to set it up.');
  await expect(dialog).toContainText('New project');
  await expect(dialog.locator('[data-field]')).toHaveCount(FIELDS.length);
  const order = await dialog
    .locator('[data-field]')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-field')));
  expect(order).toEqual(FIELDS.map((f) => f.name));
  // The first field has the focus.
  await expect(field(page, 'name').locator('input')).toBeFocused();
  // Each type in its own control.
  await expect(field(page, 'email').locator('input')).toHaveAttribute('type', 'email');
  await expect(field(page, 'homepage').locator('input')).toHaveAttribute('type', 'url');
  await expect(field(page, 'release').locator('input')).toHaveAttribute('type', 'date');
  await expect(field(page, 'meeting').locator('input')).toHaveAttribute('type', 'datetime-local');
  await expect(field(page, 'coverage').locator('input')).toHaveAttribute('type', 'number');
  await expect(field(page, 'workers').locator('input')).toHaveAttribute('max', '16');
  await expect(field(page, 'tests').locator('input[type="checkbox"]')).toBeChecked();
  await expect(field(page, 'license').getByRole('radio', { name: 'MIT' })).toBeChecked();
  await expect(field(page, 'license')).toContainText('Permissive, with a patent grant.');
  await expect(field(page, 'targets').getByRole('checkbox', { name: 'Linux' })).toBeChecked();
  await expect(field(page, 'targets').getByRole('checkbox', { name: 'macOS' })).not.toBeChecked();
  await expect(field(page, 'targets')).toContainText('1 to 2 choices');
  // Defaults prefilled; bounds in words; required marked; the note of what cannot be asked.
  await expect(field(page, 'coverage').locator('input')).toHaveValue('0.8');
  await expect(field(page, 'workers')).toContainText('A whole number from 1 to 16');
  await expect(field(page, 'name')).toContainText('required');
  await expect(field(page, 'email')).not.toContainText('required');
  await expect(field(page, 'extra').locator('[data-note]')).toContainText(
    'this window cannot ask for it',
  );
  // The one empty required field keeps Submit off, and says so.
  await expect(dialog.locator('[data-action="accept"]')).toBeDisabled();
  await expect(dialog.locator('[data-blocked]')).toHaveText(
    'To submit, first fill in or fix: Project name.',
  );
  await shot(dialog, 'elicitation-form-1280x800');
  await shot(page, 'elicitation-window-1280x800');
});

test('form: invalid input is shown on its field and refused; fixed, Enter sends the answer', async ({
  page,
}) => {
  const dialog = await open(page, [form()]);
  await field(page, 'name').locator('input').fill('x');
  await field(page, 'email').locator('input').fill('ann@');
  await field(page, 'homepage').locator('input').fill('example.com');
  await field(page, 'code').locator('input').fill('abc');
  await field(page, 'coverage').locator('input').fill('1.5');
  await field(page, 'workers').locator('input').fill('2.5');
  await field(page, 'targets').getByRole('checkbox', { name: 'macOS' }).check();
  await field(page, 'targets').getByRole('checkbox', { name: 'Windows' }).check();
  // Enter while invalid sends nothing and shows every error.
  await field(page, 'workers').locator('input').press('Enter');
  const errorOf = (name: string) => field(page, name).locator('[data-error]');
  await expect(errorOf('name')).toHaveText('Must be at least 2 characters long.');
  await expect(errorOf('email')).toHaveText('Must be an email address.');
  await expect(errorOf('homepage')).toHaveText(
    'Must be an absolute address, such as https://example.com.',
  );
  await expect(errorOf('code')).toHaveText('Must match the pattern ^[A-Z]{3}$.');
  await expect(errorOf('coverage')).toHaveText('Must be at most 1.');
  await expect(errorOf('workers')).toHaveText('Must be a whole number.');
  await expect(errorOf('targets')).toHaveText('Allows at most 2 choices.');
  await expect(dialog.locator('[data-action="accept"]')).toBeDisabled();
  await expect(dialog.locator('[data-blocked]')).toContainText('Project name, Contact email');
  await shot(dialog, 'elicitation-invalid-1280x800');
  expect(await answers(page)).toEqual([]);

  await field(page, 'name').locator('input').fill('Orbit');
  await field(page, 'email').locator('input').fill('ann@example.com');
  await field(page, 'homepage').locator('input').fill('https://orbit.example.org');
  await field(page, 'code').locator('input').fill('ORB');
  await field(page, 'coverage').locator('input').fill('0.9');
  await field(page, 'workers').locator('input').fill('8');
  await field(page, 'release').locator('input').fill('2027-03-01');
  await field(page, 'meeting').locator('input').fill('2027-01-15T09:30');
  await field(page, 'tests').locator('input').uncheck();
  await field(page, 'license').getByRole('radio', { name: 'Apache 2.0' }).check();
  await field(page, 'targets').getByRole('checkbox', { name: 'Linux' }).uncheck();
  await expect(dialog.locator('[data-error]')).toHaveCount(0);
  await expect(dialog.locator('[data-blocked]')).toHaveCount(0);
  await field(page, 'code').locator('input').press('Enter');
  await expect(dialog).toHaveCount(0);
  const [sent] = await answers(page);
  const content = (sent as { answer: { content: Record<string, unknown> } }).answer.content;
  expect(sent).toMatchObject({ session: SID, requestId: 'e1', answer: { action: 'accept' } });
  expect({ ...content, meeting: undefined }).toEqual({
    name: 'Orbit',
    email: 'ann@example.com',
    homepage: 'https://orbit.example.org',
    release: '2027-03-01',
    meeting: undefined,
    code: 'ORB',
    coverage: 0.9,
    workers: 8,
    tests: false,
    license: 'apache',
    targets: ['macos', 'windows'],
  });
  // The browser's time zone: RFC 3339 with its offset.
  expect(String(content['meeting'])).toMatch(/^2027-01-15T09:30:00[+-]\d\d:\d\d$/);
  // The thread says who answered, never what.
  const line = (await collectEntries(page)).find((e) => e.entry === 'settled');
  expect(line?.text).toBe('You answered the agent’s question “New project”.');
  const thread = await page.locator(sel.thread).innerText();
  for (const typed of ['Orbit', 'ann@example.com', 'ORB', 'orbit.example.org'])
    expect(thread).not.toContain(typed);
  await expect(page.locator(sel.composer)).toBeFocused();
});

test('form: the engine’s refusal is shown in the dialog, which stays', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await replay(page, [...start, ...turn('elicit form'), form()], {
    questions: {
      refuseOnce: 'the answer was not sent: Team code must match the pattern ^[A-Z]{3}$',
    },
  });
  await page.goto('/');
  const dialog = page.locator(DIALOG);
  await field(page, 'name').locator('input').fill('Orbit');
  await dialog.locator('[data-action="accept"]').click();
  await expect(dialog.locator('[data-refused]')).toHaveText(
    'The answer was not sent: Team code must match the pattern ^[A-Z]{3}$.',
  );
  await expect(dialog).toBeVisible();
  // No banner: the dialog says it.
  await expect(page.locator('.banner[role="alert"]')).toHaveCount(0);
  await shot(dialog, 'elicitation-refused-1280x800');
  // Changing the form clears the engine's word; the next Submit goes out.
  await field(page, 'email').locator('input').fill('ann@example.com');
  await expect(dialog.locator('[data-refused]')).toHaveCount(0);
  await dialog.locator('[data-action="accept"]').click();
  await expect(dialog).toHaveCount(0);
  expect((await answers(page)).length).toBe(2);
});

test('form: Decline sends a decline, and the thread says so', async ({ page }) => {
  const dialog = await open(page, [form()]);
  await field(page, 'name').locator('input').fill('Secret Name');
  await dialog.locator('[data-action="decline"]').click();
  await expect(dialog).toHaveCount(0);
  expect(await answers(page)).toEqual([
    { session: SID, requestId: 'e1', answer: { action: 'decline' } },
  ]);
  const line = (await collectEntries(page)).find((e) => e.entry === 'settled');
  expect(line?.text).toBe('You declined the agent’s question “New project”.');
  expect(await page.locator(sel.thread).innerText()).not.toContain('Secret Name');
});

test('form: Esc cancels', async ({ page }) => {
  const dialog = await open(page, [form()]);
  await page.keyboard.press('Escape');
  await expect(dialog).toHaveCount(0);
  expect(await answers(page)).toEqual([
    { session: SID, requestId: 'e1', answer: { action: 'cancel' } },
  ]);
  const line = (await collectEntries(page)).find((e) => e.entry === 'settled');
  expect(line?.text).toBe('You cancelled the agent’s question “New project”.');
  // Esc went to the question, not to the turn.
  expect((await calls(page)).some((c) => c.cmd === 'cancel')).toBe(false);
});

test('form at 800x600: the dialog fits, its fields scroll, its buttons stay in view', async ({
  page,
}) => {
  const dialog = await open(page, [form()], { width: 800, height: 600 });
  const box = await dialog.boundingBox();
  expect(box && box.y >= 0 && box.y + box.height <= 600 && box.x + box.width <= 800).toBe(true);
  await expect(dialog.locator('[data-action="cancel"]')).toBeInViewport();
  await shot(dialog, 'elicitation-form-800x600');
  await shot(page, 'elicitation-window-800x600');
  await field(page, 'targets').scrollIntoViewIfNeeded();
  await shot(dialog, 'elicitation-form-800x600-scrolled');
});

test('url: the host and the address shown; nothing opens until the user agrees; then it waits for the agent', async ({
  page,
}) => {
  const dialog = await open(page, [urlQuestion]);
  await expect(dialog).toHaveAttribute('data-mode', 'url');
  await expect(dialog.locator('[data-host]')).toHaveText('example.com');
  await expect(dialog.locator('[data-url]')).toHaveText(
    'https://example.com/auth?client=acp-desk&state=8f2c1d',
  );
  // The focus is on the dialog, not on Agree: Enter opens nothing.
  await expect(dialog).toBeFocused();
  await page.keyboard.press('Enter');
  expect((await calls(page)).some((c) => c.cmd === 'open_url')).toBe(false);
  expect(await answers(page)).toEqual([]);
  await shot(dialog, 'elicitation-url-1280x800');

  await dialog.getByRole('button', { name: 'Agree and open in browser' }).click();
  await expect(dialog).toHaveAttribute('data-waiting', 'true');
  expect(await answers(page)).toEqual([
    { session: SID, requestId: 'e2', answer: { action: 'accept' } },
  ]);
  await expect
    .poll(async () => (await calls(page)).filter((c) => c.cmd === 'open_url').map((c) => c.args))
    .toEqual([{ url: 'https://example.com/auth?client=acp-desk&state=8f2c1d' }]);
  await expect(dialog.getByRole('heading')).toHaveText('Waiting for ACP Desk demo agent');
  await expect(dialog.getByRole('status')).toContainText(
    'ACP Desk demo agent will say when you are done there.',
  );
  await shot(dialog, 'elicitation-url-waiting-1280x800');
  await frame(page, [{ kind: 'elicitation-complete', sessionId: SID, requestId: 'e2' }]);
  await expect(dialog).toHaveCount(0);
  const lines = (await collectEntries(page)).filter((e) => e.entry === 'settled');
  expect(lines.map((l) => l.text)).toEqual([
    'You agreed to open example.com for the agent.',
    'The agent says the step at example.com is done.',
  ]);
});

test('url at 800x600: a long address wraps inside the dialog', async ({ page }) => {
  const long = {
    ...urlQuestion,
    url: `https://login.example.com/oauth2/authorize?response_type=code&client_id=acp-desk-${'x'.repeat(90)}&redirect_uri=http%3A%2F%2F127.0.0.1%3A7777%2Fcallback`,
    host: 'login.example.com',
  };
  const dialog = await open(page, [long], { width: 800, height: 600 });
  const fits = await dialog
    .locator('[data-url]')
    .evaluate((el) => el.scrollWidth <= el.clientWidth);
  expect(fits).toBe(true);
  await shot(page, 'elicitation-url-800x600');
});

test('a question settled by Stop leaves the dialog and says why in the thread', async ({
  page,
}) => {
  const dialog = await open(page, [form('e3')]);
  await frame(page, [
    { kind: 'elicitation-settled', sessionId: SID, requestId: 'e3', action: 'cancel', by: 'stop' },
    { kind: 'turn-end', sessionId: SID, reason: 'cancelled', stopReason: 'cancelled' },
  ]);
  await expect(dialog).toHaveCount(0);
  const line = (await collectEntries(page)).find((e) => e.entry === 'settled');
  expect(line?.text).toBe(
    'The agent’s question “New project” was cancelled: the turn was stopped.',
  );
  expect(await answers(page)).toEqual([]);
});

test('two questions: one at a time, the header waits for you', async ({ page }) => {
  const dialog = await open(page, [form('e1'), { ...urlQuestion, requestId: 'e4' }]);
  await expect(dialog.locator('[data-queue-position]')).toHaveText('1 of 2');
  await expect(page.locator(sel.status)).toHaveAttribute('data-status', 'waiting');
  await dialog.locator('[data-action="decline"]').click();
  await expect(dialog).toHaveAttribute('data-mode', 'url');
  await dialog.locator('[data-action="cancel"]').click();
  await expect(dialog).toHaveCount(0);
  await expect(page.locator(sel.status)).not.toHaveAttribute('data-status', 'waiting');
});

// What the engine itself sent for the demo agent's questions (recorded/README.md).
const recorded = (name: string) =>
  readTranscript(fileURLToPath(new URL(`./recorded/${name}.jsonl`, import.meta.url)));

test('the demo agent’s recorded form (the engine’s event) is drawn in its order and answered', async ({
  page,
}) => {
  const events = recorded('demo-elicit-form');
  const ask = events.find((e) => e.kind === 'elicitation') as StreamEvent & {
    fields: { name: string }[];
  };
  await page.setViewportSize({ width: 1280, height: 800 });
  await replay(page, events);
  await page.goto('/');
  const dialog = page.locator(DIALOG);
  await expect(dialog).toBeVisible();
  const order = await dialog
    .locator('[data-field]')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-field')));
  expect(order).toEqual(ask.fields.map((f) => f.name));
  await expect(field(page, 'name').locator('input')).toHaveValue('demo');
  await expect(field(page, 'name').locator('input')).toBeFocused();
  // The required select without a default keeps Submit off until a language is chosen.
  await expect(dialog.locator('[data-blocked]')).toHaveText(
    'To submit, first fill in or fix: Language.',
  );
  await field(page, 'language')
    .getByRole('radio', { name: /TypeScript/ })
    .check();
  await field(page, 'prefix').locator('input').fill('ABC');
  await field(page, 'prefix').locator('input').press('Enter');
  await expect(dialog).toHaveCount(0);
  const [sent] = await answers(page);
  expect(sent).toMatchObject({
    requestId: 'e1',
    answer: {
      action: 'accept',
      content: {
        name: 'demo',
        language: 'ts',
        workers: 4,
        coverage: 0.8,
        ci: true,
        targets: ['linux'],
        prefix: 'ABC',
      },
    },
  });
  const content = (sent as { answer: { content: Record<string, unknown> } }).answer.content;
  expect(Object.keys(content).sort()).toEqual(
    ['ci', 'coverage', 'language', 'name', 'prefix', 'targets', 'workers'].sort(),
  );
});

test('the demo agent’s recorded URL question shows its host', async ({ page }) => {
  await page.setViewportSize({ width: 800, height: 600 });
  await replay(page, recorded('demo-elicit-url'));
  await page.goto('/');
  const dialog = page.locator(DIALOG);
  await expect(dialog.locator('[data-host]')).toHaveText('example.com');
  await expect(dialog.locator('[data-url]')).toHaveText(
    'https://example.com/demo-agent/authorize?state=demo-sign-in-1',
  );
  expect((await calls(page)).some((c) => c.cmd === 'open_url')).toBe(false);
});

test('the real adapter’s AskUserQuestion (claude-agent-acp 0.101.0) is drawn and answered', async ({
  page,
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await replay(page, recorded('claude-agent-acp-ask-user-question'));
  await page.goto('/');
  const dialog = page.locator(DIALOG);
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText('Please answer the following questions.');
  const order = await dialog
    .locator('[data-field]')
    .evaluateAll((els) =>
      els.map((e) => [e.getAttribute('data-field'), e.getAttribute('data-type')]),
    );
  expect(order).toEqual([
    ['question_0', 'select'],
    ['question_0_custom', 'string'],
    ['question_1', 'multi-select'],
    ['question_1_custom', 'string'],
  ]);
  // Each question is its field's description; the options carry the adapter's descriptions.
  await expect(field(page, 'question_0')).toContainText('Which colour should the header be?');
  await expect(field(page, 'question_0')).toContainText('Calm and readable');
  await field(page, 'question_0').getByRole('radio', { name: /Green/ }).check();
  await field(page, 'question_1')
    .getByRole('checkbox', { name: /Unit tests/ })
    .check();
  await field(page, 'question_1')
    .getByRole('checkbox', { name: /End to end/ })
    .check();
  await field(page, 'question_1_custom').locator('input, textarea').first().fill('Benchmarks');
  await shot(dialog, 'elicitation-claude-agent-acp-ask-user-question');
  await dialog.locator('[data-action="accept"]').click();
  await expect(dialog).toHaveCount(0);
  const [sent] = await answers(page);
  // Nothing is required: the fields left empty are not sent (an empty box is no answer).
  expect(sent).toMatchObject({
    answer: {
      action: 'accept',
      content: {
        question_0: 'Green',
        question_1: ['Unit tests', 'End to end'],
        question_1_custom: 'Benchmarks',
      },
    },
  });
  const content = (sent as { answer: { content: Record<string, unknown> } }).answer.content;
  expect(Object.keys(content).sort()).toEqual(['question_0', 'question_1', 'question_1_custom']);
});
