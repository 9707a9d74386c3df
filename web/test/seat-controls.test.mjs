// Browser tests of the page's seat controls against the real hub: New seat (agent kinds, folder,
// model, mode), rename, reset and delete from the header, a viewer offered none of them, and every
// refusal of the hub shown.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ARTIFACTS, Hub, tempDir, sleep, until, startBrowser, finish, scriptedHub, fakeClaude } from './harness.mjs';

let context, page, errors;
before(async () => { ({ context, page, errors } = await startBrowser()); });
after(async () => { await finish('web-controls', context, page); });

test('a seat is renamed from its header, and the list follows', { timeout: 45_000 }, async () => {
  const h = new Hub(tempDir('rename'));
  await h.start();
  try {
    const created = await h.api('POST', '/v1/seats', { name: 'old name' });
    assert.equal(created.status, 201);
    const id = created.body.seat;
    await page.goto(`${h.base}/#/seat/${encodeURIComponent(id)}`);
    await until('the title', async () => (await page.locator('#seat-title').textContent()) === 'old name');
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.locator('#rename-input').fill('release notes, week 49');
    await page.locator('#rename-input').press('Enter');
    await until('the new title', async () => (await page.locator('#seat-title').textContent()) === 'release notes, week 49');
    await until('the list to follow', async () =>
      (await page.locator(`#seat-list li[data-id="${id}"] .seat-name`).textContent()) === 'release notes, week 49');
    assert.equal((await h.api('GET', `/v1/seats/${id}`)).body.name, 'release notes, week 49');
    await page.screenshot({ path: path.join(ARTIFACTS, 'web-renamed.png') });
  } finally {
    await h.stop();
  }
});


const live = () => until('the stream to be live', async () => (await page.locator('#conn-state').textContent()) === 'live');
/** The seat's details have been read (the stats strip counts frames): its controls are shown. */
const detailed = () => until('the seat\'s details', async () => /^\d+$/.test(await page.locator('#stat-frames').textContent()));

test('New seat offers the agent kinds this hub runs, a folder under the workspace root, model and mode; a refusal stays in the dialog', { timeout: 60_000 }, async () => {
  const root = tempDir('workspace');
  fs.mkdirSync(path.join(root, 'proj'));
  // Any executable stands for codex here: only the dialog is tried.
  // And any executable for an ACP agent; a second line names one that is nowhere.
  const h = new Hub(tempDir('new-seat'), ['--claude-bin', fakeClaude(), '--codex-bin', '/bin/true', '--workspace-root', root,
    '--acp-agent', '/bin/true --acp', '--acp-agent', 'no-such-acp-agent --acp']);
  await h.start();
  try {
    await page.goto(`${h.base}/`);
    await page.getByRole('button', { name: 'New seat' }).click();
    const agent = page.getByLabel('Agent');
    await until('the agent kinds', async () => (await agent.locator('option').count()) === 5);
    const kinds = await agent.locator('option').evaluateAll((os) => os.map((o) => ({ value: o.value, disabled: o.disabled, text: o.textContent })));
    assert.deepEqual(kinds.map((k) => [k.value, k.disabled]), [['builtin', false], ['claude', false], ['codex', false], ['acp:/bin/true --acp', false], ['process', true]],
      `builtin, claude, codex and the one runnable ACP line run here; process needs --agent-cmd: ${JSON.stringify(kinds)}`);
    assert.equal(kinds[3].text, 'ACP agent: /bin/true --acp');
    assert.equal(await page.locator('#new-seat-claude').isVisible(), false, 'no folder or mode for a builtin seat');
    // An ACP agent: a folder, but no mode or model (its own configuration's).
    await agent.selectOption('acp:/bin/true --acp');
    assert.equal(await page.locator('#new-seat-claude').isVisible(), true);
    assert.equal(await page.locator('#new-seat-mode').isVisible(), false);
    assert.equal(await page.getByLabel('Model (optional)').isVisible(), false);
    assert.match(await page.locator('#new-seat-agent-detail').textContent(), /runs \/bin\/true --acp in the seat's folder/);
    // A codex seat's setting is Codex's approval policy, not a Claude Code mode.
    await agent.selectOption('codex');
    assert.equal(await page.locator('#new-seat-mode-label').textContent(), 'Approval policy');
    assert.deepEqual(await page.locator('#new-seat-mode option').evaluateAll((os) => os.map((o) => o.value)),
      ['default', 'untrusted', 'on-request', 'never']);
    await agent.selectOption('claude');
    assert.equal(await page.locator('#new-seat-mode-label').textContent(), 'Permission mode');
    assert.equal(await page.locator('#new-seat-root').textContent(), `${fs.realpathSync(root)}/`, 'the folder is chosen under the workspace root');
    // A refusal: a folder outside the root. The dialog stays open and says why.
    await page.getByLabel('Working folder').fill('../elsewhere');
    await page.getByRole('button', { name: 'Create' }).click();
    await until('the refusal in the dialog', async () => /must lie inside the workspace root/.test(await page.locator('#new-seat-note').textContent()));
    assert.ok(await page.locator('#new-seat-dialog').isVisible(), 'the dialog stays open');
    await page.screenshot({ path: path.join(ARTIFACTS, 'web-new-seat-refused.png') });
    await page.getByLabel('Name (optional)').fill('project work');
    await page.getByLabel('Working folder').fill('proj');
    await page.locator('#new-seat-mode').selectOption('plan');
    await page.getByLabel('Model (optional)').fill('fake-model-1');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForFunction(() => location.hash.startsWith('#/seat/'));
    const id = await page.evaluate(() => decodeURIComponent(location.hash.replace(/^#\/seat\//, '')));
    const s = (await h.api('GET', `/v1/seats/${id}`)).body;
    assert.deepEqual([s.name, s.agent, s.permission_mode, s.model], ['project work', 'claude', 'plan', 'fake-model-1'], JSON.stringify(s));
    await until('the header to show mode and model', async () => (await page.locator('#seat-settings-summary').textContent()) === 'plan · fake-model-1');
    // An ACP seat from the dialog: its command line is the seat's `cmd`, shown in the header.
    await page.getByRole('button', { name: 'New seat' }).click();
    await until('the agent kinds', async () => (await agent.locator('option').count()) === 5);
    await agent.selectOption('acp:/bin/true --acp');
    await page.getByLabel('Name (optional)').fill('acp work');
    await page.getByLabel('Working folder').fill('proj');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForFunction((prev) => location.hash.startsWith('#/seat/') && !location.hash.endsWith(prev), encodeURIComponent(id));
    const acpId = await page.evaluate(() => decodeURIComponent(location.hash.replace(/^#\/seat\//, '')));
    const a = (await h.api('GET', `/v1/seats/${acpId}`)).body;
    assert.deepEqual([a.name, a.agent, a.cmd, a.model, a.permission_mode], ['acp work', 'acp', '/bin/true --acp', undefined, undefined], JSON.stringify(a));
    await until('the header to name the agent', async () => (await page.locator('#seat-settings-summary').textContent()) === 'ACP · /bin/true --acp');
    assert.equal(await page.getByRole('button', { name: 'Settings' }).isVisible(), false, 'an ACP seat has no settings to change');
    // The list names each seat's agent: the ACP one by its program.
    await until('the list to name the agents', async () =>
      /^ACP: true · /.test(await page.locator(`#seat-list li[data-id="${acpId}"] .seat-when`).textContent())
      && /^Claude Code · /.test(await page.locator(`#seat-list li[data-id="${id}"] .seat-when`).textContent()));
  } finally {
    await h.stop();
  }
  // A hub whose claude executable is missing: the kind is listed, disabled, with the reason, and a
  // create naming it is refused at once (not at the first prompt).
  const bare = new Hub(tempDir('no-claude'), ['--claude-bin', '/nonexistent/claude', '--workspace-root', root]);
  await bare.start();
  try {
    const refused = await bare.api('POST', '/v1/seats', { agent: 'claude' });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.match(refused.body.error.message, /\/nonexistent\/claude is not an executable file/);
    await page.goto(`${bare.base}/`);
    await page.getByRole('button', { name: 'New seat' }).click();
    await until('the agent kinds', async () => (await page.getByLabel('Agent').locator('option').count()) === 5);
    assert.equal(await page.locator('#new-seat-agent option[value="claude"]').evaluate((o) => o.disabled), true);
    await page.getByRole('button', { name: 'Cancel' }).click();
  } finally {
    await bare.stop();
  }
});

test('the header drives a claude seat: permission mode and model, reset and delete confirmed, refusals shown', { timeout: 90_000 }, async () => {
  const h = new Hub(tempDir('controls'), ['--claude-bin', fakeClaude(), '--workspace-root', tempDir('ws')]);
  await h.start();
  try {
    const id = (await h.api('POST', '/v1/seats', { name: 'driven', agent: 'claude' })).body.seat;
    await page.goto(`${h.base}/#/seat/${encodeURIComponent(id)}`);
    await live();
    await detailed();
    // Settings: the running agent is asked; the PATCH's answer shows in the header.
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.locator('#settings-mode').selectOption('acceptEdits');
    await page.locator('#settings-model').fill('fake-2');
    await page.getByRole('button', { name: 'Save' }).click();
    await until('the header to show the new mode and model', async () =>
      (await page.locator('#seat-settings-summary').textContent()) === 'acceptEdits · fake-2');
    const s = (await h.api('GET', `/v1/seats/${id}`)).body;
    assert.deepEqual([s.permission_mode, s.model], ['acceptEdits', 'fake-2']);
    // A rename the hub refuses (over 200 bytes) is shown, not swallowed.
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.locator('#rename-input').fill('é'.repeat(150));
    await page.locator('#rename-input').press('Enter');
    await until('the refusal under the header', async () => /over 200 bytes/.test(await page.locator('#seat-note').textContent()));
    assert.ok(await page.locator('#seat-note').isVisible());
    await page.getByRole('button', { name: 'Cancel' }).click();
    // Reset while a turn runs: refused (409), said in the dialog, which stays open.
    assert.equal((await h.api('POST', `/v1/seats/${id}/messages`, { text: 'hang' })).status, 202);
    await until('the turn to run', async () => (await h.api('GET', `/v1/seats/${id}`)).body.state === 'running');
    await page.getByRole('button', { name: 'Reset' }).click();
    await page.locator('#confirm-ok').click();
    await until('the refusal in the dialog', async () => /^Refused: /.test(await page.locator('#confirm-note').textContent()));
    assert.ok(await page.locator('#confirm-dialog').isVisible());
    await page.locator('#confirm-cancel').click();
    await page.getByRole('button', { name: 'Stop' }).click();
    await until('the turn to end', async () => (await h.api('GET', `/v1/seats/${id}`)).body.state === 'idle');
    const epoch = (await h.api('GET', `/v1/seats/${id}`)).body.epoch;
    await page.getByRole('button', { name: 'Reset' }).click();
    await page.locator('#confirm-ok').click();
    await until('a new conversation', async () => (await h.api('GET', `/v1/seats/${id}`)).body.epoch !== epoch);
    await until('the reset divider', async () => (await page.locator('.system.reset').count()) === 1);
    // Delete: asked first; Cancel keeps the seat.
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.locator('#confirm-cancel').click();
    assert.equal((await h.api('GET', `/v1/seats/${id}`)).status, 200, 'Cancel deletes nothing');
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.screenshot({ path: path.join(ARTIFACTS, 'web-delete-confirm.png') });
    await page.locator('#confirm-ok').click();
    await until('the seat to be gone', async () => (await h.api('GET', `/v1/seats/${id}`)).status === 404);
    await until('the page to leave it', async () => !(await page.evaluate(() => location.hash)).startsWith('#/seat/'));
    await until('the list to drop it', async () => (await page.locator(`#seat-list li[data-id="${id}"]`).count()) === 0);
  } finally {
    await h.stop();
  }
});

test('the page raised no script error', () => {
  assert.deepEqual(errors, []);
});
