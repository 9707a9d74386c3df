// Browser end-to-end test of the page against the real `sluice serve` (scripted provider) in Debian's headless Chromium.
// Env: SLUICE_BINARY (the sluice executable, required), SLUICE_ARTIFACTS_DIR (screenshots; default ./build/artifacts).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const BINARY = process.env.SLUICE_BINARY;
const ARTIFACTS = path.resolve(process.env.SLUICE_ARTIFACTS_DIR || 'build/artifacts');
const CHROMIUM = process.env.SLUICE_CHROMIUM || '/usr/bin/chromium';
const STEP_MS = 30_000; // the longest any single wait may take

const children = new Set(); // every process we started, killed at the end whatever happens
const tempDirs = [];
const hubs = []; // every hub started, for their logs
process.on('exit', () => { for (const c of children) { try { c.kill('SIGKILL'); } catch { /* gone */ } } });
// The whole file is bounded: past this, every process is killed and the run fails.
const WATCHDOG_MS = 170_000;
setTimeout(() => {
  console.error(`browser.test: still running after ${WATCHDOG_MS / 1000} s: giving up`);
  process.exit(1); // the 'exit' handler kills the hubs; playwright kills its browser on exit
}, WATCHDOG_MS).unref();

function tempDir(tag) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `sluice-web-${tag}-`));
  tempDirs.push(d);
  return d;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value; fails with `what` after `ms`. */
async function until(what, fn, ms = STEP_MS) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try { last = await fn(); if (last) return last; } catch (e) { last = e; }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await sleep(100);
  }
}

/** Scripted-provider pacing flags, if this sluice has them (`--pace-ms`): fast for bulk turns. */
function paceFlag() {
  const help = spawnSync(BINARY, ['serve', '--help'], { encoding: 'utf8', timeout: 10_000 });
  const m = /(--[a-z-]*pace[a-z-]*)/.exec(`${help.stdout}\n${help.stderr}`);
  return m ? m[1] : null;
}

/** One `sluice serve` process on a data dir; restartable on the same port. */
class Hub {
  constructor(dataDir, extra = []) {
    this.dataDir = dataDir; this.extra = extra; this.proc = null; this.base = null; this.log = '';
    hubs.push(this);
  }

  async start(listen = '127.0.0.1:0') {
    for (let attempt = 0; ; attempt++) {
      try { return await this.startOnce(listen); } catch (e) {
        if (listen.endsWith(':0') || attempt >= 20) throw e;
        await sleep(250); // the old socket may linger a moment after a restart
      }
    }
  }

  startOnce(listen) {
    const args = ['serve', '--listen', listen, '--data', this.dataDir, '--provider', 'scripted', ...this.extra];
    const proc = spawn(BINARY, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(proc);
    this.proc = proc;
    proc.on('exit', () => children.delete(proc));
    return new Promise((resolve, reject) => {
      let out = '';
      let settled = false;
      const fail = (e) => { if (settled) return; settled = true; clearTimeout(timer); proc.kill('SIGKILL'); reject(e); };
      const timer = setTimeout(() => fail(new Error(`sluice serve printed no "listening on" line in 15 s: ${this.log.slice(-2000)}`)), 15_000);
      proc.stderr.on('data', (b) => { this.log += b; });
      proc.stdout.on('data', (b) => {
        out += b;
        this.log += b;
        const m = /listening on (http:\/\/[^\s/]+)/.exec(out);
        if (m && !settled) { settled = true; clearTimeout(timer); this.base = m[1]; resolve(m[1]); }
      });
      proc.on('exit', (code, sig) => fail(new Error(`sluice serve exited (${code ?? sig}) before listening: ${this.log.slice(-2000)}`)));
    });
  }

  get port() { return new URL(this.base).port; }

  async stop() {
    const p = this.proc;
    if (!p || p.exitCode != null || p.signalCode != null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    const t = setTimeout(() => p.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(t);
  }

  async api(method, p, body) {
    const res = await fetch(this.base + p, {
      method, headers: body ? { 'Content-Type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }
}

let context, page, hub;

before(async () => {
  assert.ok(BINARY, 'SLUICE_BINARY must name the sluice executable');
  assert.ok(fs.existsSync(BINARY), `SLUICE_BINARY ${BINARY} does not exist`);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  hub = new Hub(tempDir('data'));
  await hub.start();
  context = await chromium.launchPersistentContext(tempDir('profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-quic'],
    viewport: { width: 1100, height: 800 },
    timeout: STEP_MS,
  });
  context.setDefaultTimeout(STEP_MS);
  page = context.pages()[0] || await context.newPage();
  page.on('pageerror', (e) => { pageErrors.push(String(e)); });
});

const pageErrors = [];

after(async () => {
  // For diagnosis whatever happened: the page as last seen and what each hub printed.
  try { if (page) await page.screenshot({ path: path.join(ARTIFACTS, 'web-last.png') }); } catch { /* no page */ }
  hubs.forEach((h, i) => { try { fs.writeFileSync(path.join(ARTIFACTS, `web-hub-${i}.log`), h.log); } catch { /* ignore */ } });
  try { if (context) await context.close(); } catch { /* already gone */ }
  for (const c of [...children]) { try { c.kill('SIGKILL'); } catch { /* gone */ } }
  for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Every frame seq the page shows, in document order. */
const shownSeqs = () => page.$$eval('#turns .frame[data-seq]', (fs) => fs.map((f) => Number(f.dataset.seq)));

/** Asserts the page shows exactly frames 0..n-1 of the seat, once each, in order. */
async function assertWhole(h, seat) {
  const n = await until('the page to show every frame the hub holds', async () => {
    const s = (await h.api('GET', `/v1/seats/${seat}`)).body;
    const seqs = await shownSeqs();
    return s && s.state === 'idle' && seqs.length === s.frames ? s.frames : null;
  });
  const seqs = await shownSeqs();
  assert.deepEqual(seqs, Array.from({ length: n }, (_, i) => i), 'frames shown are 0..n-1, no duplicate, no hole');
}

const seatFromHash = () => page.evaluate(() => decodeURIComponent(location.hash.replace(/^#\/seat\//, '')));

let seat;

test('a prompt renders thinking, a tool call and the answer', { timeout: 45_000 }, async () => {
  await page.goto(hub.base + '/');
  await page.getByRole('button', { name: 'New seat' }).click();
  await page.waitForFunction(() => location.hash.startsWith('#/seat/'));
  seat = await seatFromHash();
  assert.ok(seat);
  await page.locator('#seat-list a[aria-current]').waitFor();

  const box = page.getByLabel('Message');
  await box.fill('first line');
  await box.press('Shift+Enter');
  await box.type('second line');
  assert.equal(await box.inputValue(), 'first line\nsecond line', 'Shift+Enter adds a line, does not send');
  await box.fill('What is in the README?');
  await box.press('Enter');

  await page.locator('.frame.prompt', { hasText: 'What is in the README?' }).waitFor();
  assert.equal(await box.inputValue(), '', 'the box is cleared once sent');
  await page.locator('.frame details.thinking').first().waitFor();
  await page.locator('.frame .tool-call').first().waitFor();
  await page.locator('.frame .tool-result').first().waitFor();
  await page.locator('.frame .turn-end').first().waitFor();
  const answer = await page.locator('.frame[data-type="assistant"] > .text').last().textContent();
  assert.ok(answer && answer.trim().length > 0, 'the answer text renders');
  assert.equal(await page.locator('details.thinking').first().getAttribute('open'), null, 'thinking is collapsed');
  assert.match(await page.locator('.tool-call .label').first().textContent(), /Tool call: \S+/);
  await until('the live previews to give way to frames', async () => (await page.locator('#live .preview').count()) === 0);
  await assertWhole(hub, seat);
  await until('the stats strip to count frames', async () => /^\d+$/.test(await page.locator('#stat-frames').textContent()));
  await until('the seat list to show the seat as idle', async () =>
    (await page.locator(`#seat-list li[data-id="${seat}"] .state`).textContent()) === 'idle');
});

test('the page reconnects across a hub restart mid-turn and the conversation is whole', { timeout: 60_000 }, async () => {
  assert.ok(seat, 'needs the seat of the first test');
  const box = page.getByLabel('Message');
  await box.fill('Tell me again, slowly.');
  await box.press('Enter');
  await page.locator('.frame.prompt', { hasText: 'Tell me again, slowly.' }).waitFor();
  await until('the turn to be running', async () => (await hub.api('GET', `/v1/seats/${seat}`)).body.state === 'running');

  const port = hub.port;
  await hub.stop(); // SIGTERM mid-turn
  await until('the page to notice the drop', async () => (await page.locator('#conn-state').textContent()) !== 'live');
  await hub.start(`127.0.0.1:${port}`);
  await until('the page to be live again', async () => (await page.locator('#conn-state').textContent()) === 'live', 45_000);
  await assertWhole(hub, seat);

  await box.fill('And after the restart?');
  await box.press('Enter');
  await page.locator('.frame.prompt', { hasText: 'And after the restart?' }).waitFor();
  await until('the new turn to end', async () => (await page.locator('.frame.prompt').count()) === 3 &&
    (await hub.api('GET', `/v1/seats/${seat}`)).body.state === 'idle');
  await assertWhole(hub, seat);
  for (const text of ['What is in the README?', 'Tell me again, slowly.', 'And after the restart?']) {
    assert.equal(await page.locator('.frame.prompt .text', { hasText: text }).count(), 1, `"${text}" shows once`);
  }

  await page.screenshot({ path: path.join(ARTIFACTS, 'web-seat-view.png') });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: path.join(ARTIFACTS, 'web-seat-view-phone.png') });
  await page.setViewportSize({ width: 1100, height: 800 });
  assert.ok(fs.statSync(path.join(ARTIFACTS, 'web-seat-view.png')).size > 1000, 'the screenshot is saved');
});

test('a seat with 100 turns pages back to turn 1', { timeout: 100_000 }, async () => {
  const flag = paceFlag();
  const bulk = new Hub(tempDir('bulk'), flag ? [flag, '0'] : []);
  await bulk.start();
  try {
    const created = await bulk.api('POST', '/v1/seats', { name: 'hundred' });
    assert.equal(created.status, 201);
    const id = created.body.seat;
    const label = (i) => `turn ${String(i).padStart(3, '0')}`;
    for (let i = 1; i <= 100; i++) {
      await until(`prompt ${i} to be accepted`, async () => {
        const r = await bulk.api('POST', `/v1/seats/${id}/messages`, { text: label(i) });
        if (r.status === 202) return true;
        if (r.status !== 503) throw new Error(`POST messages answered ${r.status}: ${JSON.stringify(r.body)}`);
        return false; // queue full: wait for a turn to finish
      }, 60_000);
    }
    await until('100 turns to finish', async () => {
      const s = (await bulk.api('GET', `/v1/seats/${id}`)).body;
      return s.turns === 100 && s.state === 'idle';
    }, 90_000);

    await page.goto(`${bulk.base}/#/seat/${encodeURIComponent(id)}`);
    const earlier = page.getByRole('button', { name: 'Load earlier turns' });
    await earlier.waitFor();
    const windowPrompts = await page.locator('.frame.prompt').count();
    assert.ok(windowPrompts >= 1 && windowPrompts <= 20, `the window shows at most 20 turns (shows ${windowPrompts})`);
    for (let clicks = 0; await earlier.isVisible(); clicks++) {
      assert.ok(clicks < 10, 'paging ends within 10 pages of 20');
      const before = await page.locator('.frame.prompt').count();
      await earlier.click();
      await until('a page of earlier turns', async () => (await page.locator('.frame.prompt').count()) > before ||
        !(await earlier.isVisible()));
      const now = await page.locator('.frame.prompt').count();
      assert.ok(now - before <= 20, `one page adds at most 20 turns (added ${now - before})`);
    }
    await page.locator('#history-start').waitFor();
    assert.equal(await page.locator('.frame.prompt .text').first().textContent(), label(1), 'turn 1 is at the top');
    assert.equal(await page.locator('.frame.prompt').count(), 100, 'every turn shows once');
    await assertWhole(bulk, id);
  } finally {
    await bulk.stop();
  }
});

test('a hub started with a token asks for it once and keeps it for the tab', { timeout: 45_000 }, async (t) => {
  const guarded = new Hub(tempDir('token'), ['--token', 'web-test-token']);
  await guarded.start();
  try {
    if ((await guarded.api('GET', '/v1/seats')).status !== 401) {
      t.skip('this hub does not require its token on loopback');
      return;
    }
    const tab = await context.newPage();
    try {
      await tab.goto(guarded.base + '/');
      const input = tab.getByRole('textbox', { name: 'Token' });
      await input.waitFor();
      await input.fill('web-test-token');
      await input.press('Enter');
      await tab.getByRole('button', { name: 'New seat' }).click();
      await tab.waitForFunction(() => location.hash.startsWith('#/seat/'));
      await until('the seat stream to be live with the token', async () =>
        (await tab.locator('#conn-state').textContent()) === 'live');
      assert.equal(await tab.evaluate(() => sessionStorage.getItem('sluice.token')), 'web-test-token');
      assert.equal(await tab.locator('#token-dialog[open]').count(), 0, 'asked once');
    } finally {
      await tab.close();
    }
  } finally {
    await guarded.stop();
  }
});

test('the page raised no script error', () => {
  assert.deepEqual(pageErrors, []);
});
