// Browser test of what the page says sessions cost (issue 29): the open seat's total in its
// header, each group's in the seat list, and the last 30 days on the home view — against the real
// hub, with Claude Code sessions written today (`--claude-projects`) and a hosted scripted seat,
// priced by a `--prices` file of the test's own.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ARTIFACTS, Hub, tempDir, until, startBrowser, finish } from './harness.mjs';

let context, page, errors;
before(async () => { ({ context, page, errors } = await startBrowser()); });
after(async () => { await finish('web-usage', context, page); });

/** A Claude Code session file of one turn whose assistant message used `usage` of `model`, today. */
function session(projects, folder, sid, cwd, model, usage) {
  const dir = path.join(projects, folder);
  fs.mkdirSync(dir, { recursive: true });
  const now = Date.now();
  const base = { sessionId: sid, cwd, version: '2.1.0', userType: 'external', isSidechain: false };
  const rows = [
    { ...base, type: 'user', uuid: `${sid}-u1`, parentUuid: null, timestamp: new Date(now - 5000).toISOString(), message: { role: 'user', content: 'count it' } },
    { ...base, type: 'assistant', uuid: `${sid}-a1`, parentUuid: `${sid}-u1`, requestId: `req_${sid}`, timestamp: new Date(now).toISOString(),
      message: { id: `msg_${sid}`, type: 'message', role: 'assistant', model, content: [{ type: 'text', text: 'Counted.' }], stop_reason: 'end_turn', usage } },
  ];
  fs.writeFileSync(path.join(dir, `${sid}.jsonl`), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
}

const text = async (sel) => ((await page.locator(sel).textContent()) || '').trim();
const groupCost = (name) => page.locator('#seat-list li.group', { has: page.locator('.group-name', { hasText: name }) }).locator('.group-cost');

test('the seat header, the list\'s groups and the last 30 days say what sessions cost', { timeout: 90_000 }, async () => {
  const dir = tempDir('usage');
  const projects = path.join(dir, 'projects');
  // $0.001 and $0.01 a token: the scripted seat's turn (330 in, 112 out) costs $1.45.
  const prices = path.join(dir, 'prices.json');
  fs.writeFileSync(prices, JSON.stringify({ date: '2026-12-05', source: 'a test', models: {
    'scripted-demo': { input_cost_per_token: 0.001, output_cost_per_token: 0.01 },
    'claude-priced': { input_cost_per_token: 0.00001, output_cost_per_token: 0.0001 } } }));
  // alpha: 1000 in + 200 out at the priced model: $0.03. beta: a model with no known price.
  session(projects, '-home-me-alpha', '11111111-1111-4111-8111-111111111111', '/home/me/alpha', 'claude-priced',
    { input_tokens: 1000, output_tokens: 200, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
  session(projects, '-home-me-beta', '22222222-2222-4222-8222-222222222222', '/home/me/beta', 'claude-unpriced',
    { input_tokens: 3000, output_tokens: 500, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
  const h = new Hub(path.join(dir, 'data'), ['--claude-projects', projects, '--prices', prices, '--pace', '0']);
  await h.start();
  try {
    const seat = (await h.api('POST', '/v1/seats', { name: 'priced work' })).body.seat;
    assert.equal((await h.api('POST', `/v1/seats/${seat}/messages`, { text: 'hello' })).status, 202);
    await until('the hub to count the turn and both sessions', async () =>
      ((await h.api('GET', '/v1/usage?group=seat')).body.rows || []).length === 3);

    // Home: the last 30 days, today's bar holding all three.
    await page.goto(`${h.base}/`);
    await until('the chart', async () => await page.locator('#usage-days-chart rect').count() === 30);
    const today = new Date().toISOString().slice(0, 10);
    const bar = page.locator(`#usage-days-chart rect[data-day="${today}"]`);
    assert.equal(await bar.getAttribute('class'), 'day-bar', 'today is not empty');
    assert.equal(await page.locator('#usage-days-chart rect.day-bar:not(.empty)').count(), 1, 'only today used anything');
    // Some tokens have no price: the chart counts tokens, and no partial figure is shown as a cost.
    assert.equal(await text('#usage-days-total'), '5.1k tokens · cost unknown');
    assert.match(await page.locator('#usage-days-total').getAttribute('title'), /no price known for claude-unpriced/);
    assert.equal(await bar.locator('title').textContent(), `${today}: 5.1k tokens · cost unknown`);
    assert.match(await page.locator('#usage-days-chart svg').getAttribute('aria-label'), /^Tokens per day/);

    // The list: a total per group, cost where every seat has a price, else tokens.
    await until('the groups\' totals', async () => (await groupCost('alpha').textContent()) === '$0.03');
    assert.equal(await groupCost('This hub').textContent(), '$1.45');
    assert.equal(await groupCost('beta').textContent(), '3.5k tok');
    assert.match(await groupCost('beta').getAttribute('title'), /no price known for claude-unpriced/);

    // The open seat: its total in the header, followed when a turn ends.
    await page.goto(`${h.base}/#/seat/${encodeURIComponent(seat)}`);
    await until('the seat\'s total', async () => (await text('#seat-usage')) === '$1.45 · 442 tokens');
    assert.match(await page.locator('#seat-usage').getAttribute('title'), /330 input, 112 output/);
    assert.equal((await h.api('POST', `/v1/seats/${seat}/messages`, { text: 'again' })).status, 202);
    await until('the header to follow the second turn', async () => (await text('#seat-usage')) === '$2.90 · 884 tokens');
    await page.screenshot({ path: path.join(ARTIFACTS, 'web-usage-seat.png') });

    // Its budget: what it spent of it, marked once spent.
    assert.equal((await h.api('PATCH', `/v1/seats/${seat}`, { budget_usd: 2.5 })).status, 200);
    await page.goto(`${h.base}/`);
    await page.goto(`${h.base}/#/seat/${encodeURIComponent(seat)}`);
    await until('the budget', async () => (await text('#seat-usage')) === '$2.90 · 884 tokens · $2.90 of its $2.50 budget');
    assert.match(await page.locator('#seat-usage').getAttribute('class'), /\bspent\b/);

    // A session with no known price says so rather than guessing.
    await page.goto(`${h.base}/#/seat/${encodeURIComponent('c-22222222-2222-4222-8222-222222222222')}`);
    await until('the unpriced total', async () => (await text('#seat-usage')) === '3.5k tokens · cost unknown');
    await page.goto(`${h.base}/`);
    await until('the chart again', async () => await page.locator('#usage-days-chart rect').count() === 30);
    await page.locator('#welcome').screenshot({ path: path.join(ARTIFACTS, 'web-usage-days.png') });
    assert.deepEqual(errors, []);
  } finally {
    await h.stop();
  }
});
