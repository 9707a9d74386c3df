// Browser test of the page's search (issue 29): `/` and Ctrl-K open the box, hits show their seat,
// turn and snippet with the match marked, and a hit opens its seat at the history page that holds
// it — one request, though the turn left the window long ago — the match highlighted, until the
// reader goes back to the conversation. Against the real hub and its SQLite index.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ARTIFACTS, Hub, tempDir, until, startBrowser, finish } from './harness.mjs';

let context, page, errors;
before(async () => { ({ context, page, errors } = await startBrowser()); });
after(async () => { await finish('web-search', context, page); });

test('a hit opens its seat at the page that holds it, far outside the window', { timeout: 120_000 }, async () => {
  // A window of 12 frames: the first turn's frames leave it after a few more turns.
  const h = new Hub(tempDir('search'), ['--pace', '0', '--window-cap', '12']);
  await h.start();
  try {
    const seat = (await h.api('POST', '/v1/seats', { name: 'migrations' })).body.seat;
    const other = (await h.api('POST', '/v1/seats', { name: 'elsewhere' })).body.seat;
    const sendAndWait = async (id, text) => {
      const before = (await h.api('GET', `/v1/seats/${id}`)).body.turns;
      assert.equal((await h.api('POST', `/v1/seats/${id}/messages`, { text })).status, 202);
      await until(`turn "${text}" to end`, async () => {
        const s = (await h.api('GET', `/v1/seats/${id}`)).body;
        return s.turns === before + 1 && s.state === 'idle';
      });
    };
    await sendAndWait(seat, 'Rename the column in the UsersMigration file, please');
    for (let i = 0; i < 6; i++) await sendAndWait(seat, `unrelated request number ${i}`);
    await sendAndWait(other, 'nothing to see here');
    await until('the index to hold the first prompt', async () =>
      ((await h.api('GET', '/v1/search?q=usersmigration')).body.hits || []).length === 1);
    const hit = (await h.api('GET', '/v1/search?q=usersmigration')).body.hits[0];
    const first = (await h.api('GET', `/v1/seats/${seat}`)).body.window.first;
    assert.ok(hit.seq < first, `the hit (seq ${hit.seq}) lies before the window (first ${first})`);

    await page.goto(`${h.base}/#/seat/${encodeURIComponent(other)}`);
    await until('the page', async () => (await page.locator('#conn-state').textContent()) === 'live');
    // `/` opens the box (not while typing in a field).
    await page.keyboard.press('/');
    await until('the search box', async () => await page.locator('#search-dialog').isVisible());
    await page.locator('#search-input').fill('usersMIGRATION');
    await until('one hit', async () => await page.locator('#search-results li').count() === 1);
    assert.match(await page.locator('#search-status').textContent(), /^1 match/);
    const item = page.locator('#search-results li').first();
    assert.equal(await item.locator('.hit-seat').textContent(), 'migrations');
    assert.match(await item.locator('.hit-where').textContent(), /^turn \d+ · /);
    assert.equal((await item.locator('mark').first().textContent()).toLowerCase(), 'usersmigration', 'the match is marked in the snippet');
    await page.locator('#search-dialog').screenshot({ path: path.join(ARTIFACTS, 'web-search-box.png') });

    // The history page that holds it, the match highlighted; the live conversation hidden meanwhile.
    const requests = [];
    page.on('request', (r) => { if (r.url().includes('/history')) requests.push(r.url()); });
    await item.locator('button').click();
    await until('the seat to open', async () => (await page.evaluate(() => location.hash)) === `#/seat/${encodeURIComponent(seat)}`);
    await until('the found page', async () => await page.locator('#found .found-frame').count() === 1);
    assert.equal(await page.locator('#conversation').isVisible(), false);
    assert.equal(await page.locator('#found .found-frame').getAttribute('data-seq'), String(hit.seq));
    assert.equal((await page.locator('#found .found-frame mark.found-match').first().textContent()), 'UsersMigration');
    assert.equal(requests.length, 1, `one history request, not a walk back: ${requests}`);
    assert.match(requests[0], new RegExp(`before=${hit.seq + 1}&`));
    assert.equal(await page.locator(`#turns .frame[data-seq="${hit.seq}"]`).count(), 0, 'the conversation did not page back to it');
    await page.screenshot({ path: path.join(ARTIFACTS, 'web-search-found.png') });
    await page.getByRole('button', { name: 'Back to the conversation' }).click();
    assert.equal(await page.locator('#found').isVisible(), false);
    assert.equal(await page.locator('#conversation').isVisible(), true);

    // Ctrl-K opens it too; a word in no session says so.
    await page.locator('#prompt').focus();
    await page.keyboard.press('Control+k');
    await until('the search box again', async () => await page.locator('#search-dialog').isVisible());
    await page.locator('#search-input').fill('zebrafish');
    await until('no match', async () => /^No match/.test(await page.locator('#search-status').textContent()));
    assert.equal(await page.locator('#search-results li').count(), 0);
    await page.keyboard.press('Escape');
    assert.deepEqual(errors, []);
  } finally {
    await h.stop();
  }
});

test('a hit in a long session never opened is found once the hub has counted it', { timeout: 120_000 }, async () => {
  // 20,000 rows: past a window, so its seat numbers frames from the file's end until counted.
  const root = tempDir('search-long');
  const session = '5f0c2a7e-1111-4222-8333-944455556666';
  const dir = path.join(root, 'projects', '-work-big');
  fs.mkdirSync(dir, { recursive: true });
  const rows = [];
  for (let i = 0; i < 20000; i++) {
    const text = `row ${i}${i === 30 ? ' EarlyNeedleQuartz' : ''}`;
    const user = i % 10 === 0;
    rows.push(JSON.stringify({
      type: user ? 'user' : 'assistant', sessionId: session, cwd: '/work/big', uuid: `u-${i}`,
      timestamp: '2026-11-01T10:00:00.000Z',
      message: user ? { role: 'user', content: text } : { role: 'assistant', content: [{ type: 'text', text }] },
    }));
  }
  fs.writeFileSync(path.join(dir, `${session}.jsonl`), `${rows.join('\n')}\n`);
  const h = new Hub(tempDir('search-long-data'), ['--claude-projects', path.join(root, 'projects')]);
  await h.start();
  try {
    await until('the index to hold it', async () =>
      ((await h.api('GET', '/v1/search?q=earlyneedlequartz')).body.hits || []).length === 1, 60_000);
    const hit = (await h.api('GET', '/v1/search?q=earlyneedlequartz')).body.hits[0];
    assert.equal(hit.seq, null, 'never opened: its seq is not known yet');
    assert.equal(hit.index, 30);
    await page.goto(`${h.base}/`);
    await until('the list', async () => (await page.locator('#seat-list li.seat').count()) === 1);
    await page.keyboard.press('/');
    await until('the search box', async () => await page.locator('#search-dialog').isVisible());
    await page.locator('#search-input').fill('EarlyNeedleQuartz');
    await until('one hit', async () => await page.locator('#search-results li').count() === 1);
    await page.locator('#search-results li button').first().click();
    await until('the found frame', async () => await page.locator('#found .found-frame').count() === 1, 60_000);
    assert.equal((await page.locator('#found .found-frame mark.found-match').first().textContent()), 'EarlyNeedleQuartz');
    const seq = Number(await page.locator('#found .found-frame').getAttribute('data-seq'));
    const now = (await h.api('GET', '/v1/search?q=earlyneedlequartz')).body.hits[0];
    assert.equal(now.seq, seq, 'the frame shown is the one the hub names now');
    assert.notEqual(seq, 30, 'numbered from the end: seq and index differ');
    assert.deepEqual(errors, []);
  } finally {
    await h.stop();
  }
});
