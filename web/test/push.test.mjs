// Browser tests of the installable page and Web Push: the manifest and service worker register,
// Chromium reports no installability errors and the cache holds the page's files only; a push
// delivered to the service worker (CDP ServiceWorker.deliverPushMessage) shows one notification per
// seat, replaced rather than stacked, with Allow and Deny on a prompt.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Hub, tempDir, until, startBrowser, finish } from './harness.mjs';

let context, page;
before(async () => { ({ context, page } = await startBrowser()); });
after(async () => { await finish('web-push', context, page); });

test('the page is installable: manifest, icons and a service worker that caches no API answer', { timeout: 60_000 }, async () => {
  const h = new Hub(tempDir('install'));
  await h.start();
  try {
    await page.goto(`${h.base}/`);
    await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
    const manifest = await (await fetch(`${h.base}/manifest.webmanifest`)).json();
    assert.equal(manifest.display, 'standalone');
    for (const icon of manifest.icons) assert.equal((await fetch(h.base + icon.src)).status, 200, icon.src);
    const cdp = await context.newCDPSession(page);
    let errors = null;
    await until('no installability errors', async () => {
      ({ installabilityErrors: errors } = await cdp.send('Page.getInstallabilityErrors'));
      return errors.length === 0;
    }, 20_000).catch(() => {});
    assert.deepEqual(errors, []);
    await page.reload();
    await until('the page files cached', async () => (await page.evaluate(async () => {
      const paths = [];
      for (const name of await caches.keys()) {
        for (const r of await (await caches.open(name)).keys()) paths.push(new URL(r.url).pathname);
      }
      return paths;
    })).includes('/app.js'));
    const cached = await page.evaluate(async () => {
      const paths = [];
      for (const name of await caches.keys()) {
        for (const r of await (await caches.open(name)).keys()) paths.push(new URL(r.url).pathname);
      }
      return paths;
    });
    assert.ok(!cached.some((p) => p.startsWith('/v1/') || p === '/metrics'), `no API answer cached: ${cached}`);
  } finally {
    await h.stop();
  }
});

test('a push shows one notification per seat, replaced not stacked, with Allow and Deny on a prompt', { timeout: 60_000 }, async () => {
  const h = new Hub(tempDir('push'));
  await h.start();
  try {
    await context.grantPermissions(['notifications'], { origin: h.base });
    const cdp = await context.newCDPSession(page);
    const registrations = [];
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => registrations.push(...e.registrations));
    await cdp.send('ServiceWorker.enable');
    await page.goto(`${h.base}/`);
    await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
    let reg = null;
    await until('the registration', async () => {
      reg = registrations.find((r) => !r.isDeleted && r.scopeURL === `${h.base}/`);
      return !!reg;
    });
    const notifications = () => page.evaluate(async () =>
      (await (await navigator.serviceWorker.ready).getNotifications())
        .map((n) => ({ title: n.title, body: n.body, tag: n.tag, actions: n.actions.map((a) => a.action) })));
    const push = (data) => cdp.send('ServiceWorker.deliverPushMessage', {
      origin: h.base, registrationId: reg.registrationId, data: JSON.stringify(data),
    });
    const prompt = { kind: 'permission', seat: 's-1', headline: 'build: allow Bash?', body: 'rm -rf build', tag: 's-1', request_id: 'h-1', url: '/#/seat/s-1' };
    // Delivered again until shown: a push that reaches a worker still activating may be lost (a
    // second one replaces the first: the same tag).
    await until('the notification', async () => {
      if ((await notifications()).length === 1) return true;
      await push(prompt);
      return false;
    });
    let shown = await notifications();
    assert.deepEqual(shown[0], { title: 'build: allow Bash?', body: 'rm -rf build', tag: 's-1', actions: ['allow', 'deny'] });
    await push({ kind: 'turn_ended', seat: 's-1', headline: 'build: turn ended', body: 'The turn ended after 42 s.', tag: 's-1', url: '/#/seat/s-1' });
    await until('the replacement', async () => (await notifications()).some((n) => n.title === 'build: turn ended'));
    shown = await notifications();
    assert.equal(shown.length, 1, JSON.stringify(shown));
    assert.deepEqual(shown[0].actions, []);
  } finally {
    await h.stop();
  }
});
