// Browser tests of the installable page and Web Push: the manifest and service worker register,
// Chromium reports no installability errors and the cache holds every file index.html references
// and no API answer; a push delivered to the service worker (CDP ServiceWorker.deliverPushMessage)
// shows one notification per seat, replaced rather than stacked, with Allow and Deny on a prompt;
// "Notify me" subscribes and the hub's test push reaches the subscription; the worker's Allow
// answers a real prompt on the hub; the home view's inbox groups the seats and counts those
// needing you in the title and the app badge.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { Hub, tempDir, until, startBrowser, finish, fakeClaude, ARTIFACTS } from './harness.mjs';

let context, page, errors;

// Headless Chromium reaches no push service (pushManager.subscribe never settles), so the page's
// subscription is this test's: a loopback push service here, the browser's keys made here (the
// hub encrypts to them, RFC 8291) — what a push service would hand the browser. Its pushes reach
// the service worker through CDP, as a push service's would.
const ua = crypto.createECDH('prime256v1');
ua.generateKeys();
const uaAuth = crypto.randomBytes(16);
const received = []; // {url, headers, body}
const pushService = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    received.push({ url: req.url, headers: req.headers, body: Buffer.concat(chunks) });
    res.writeHead(201).end();
  });
});

/** RFC 8291 aes128gcm: the plaintext of a push encrypted to `ua` and `uaAuth`. */
function decryptPush(body) {
  const salt = body.subarray(0, 16);
  const idlen = body[20];
  const asPublic = body.subarray(21, 21 + idlen);
  const sealed = body.subarray(21 + idlen);
  const secret = ua.computeSecret(asPublic);
  const info = Buffer.concat([Buffer.from('WebPush: info\0'), ua.getPublicKey(), asPublic]);
  const ikm = Buffer.from(crypto.hkdfSync('sha256', secret, uaAuth, info, 32));
  const cek = Buffer.from(crypto.hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(crypto.hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const d = crypto.createDecipheriv('aes-128-gcm', cek, nonce);
  d.setAuthTag(sealed.subarray(sealed.length - 16));
  const padded = Buffer.concat([d.update(sealed.subarray(0, sealed.length - 16)), d.final()]);
  let end = padded.length - 1;
  while (end > 0 && padded[end] === 0) end--;
  assert.equal(padded[end], 2, 'the last record ends with the delimiter 0x02');
  return JSON.parse(padded.subarray(0, end).toString('utf8'));
}

before(async () => {
  ({ context, page, errors } = await startBrowser());
  await new Promise((r) => pushService.listen(0, '127.0.0.1', r));
  const endpoint = `http://127.0.0.1:${pushService.address().port}/push/browser-1`;
  const keys = { p256dh: ua.getPublicKey().toString('base64url'), auth: uaAuth.toString('base64url') };
  await context.addInitScript(({ endpoint, keys }) => {
    if (!('PushManager' in window)) return;
    let sub = null;
    PushManager.prototype.getSubscription = async () => sub;
    PushManager.prototype.subscribe = async () => {
      sub = { endpoint, toJSON: () => ({ endpoint, expirationTime: null, keys }) };
      return sub;
    };
    // The app badge's calls, recorded (an installed page shows them on its icon).
    window.__badges = [];
    navigator.setAppBadge = async (n) => { window.__badges.push(n); };
    navigator.clearAppBadge = async () => { window.__badges.push(0); };
  }, { endpoint, keys });
});
after(async () => {
  pushService.close();
  assert.deepEqual(errors, [], 'no script error on the page');
  await finish('web-push', context, page);
});

/** The paths the page's caches hold. */
const cachedPaths = () => page.evaluate(async () => {
  const paths = [];
  for (const name of await caches.keys()) {
    for (const r of await (await caches.open(name)).keys()) paths.push(new URL(r.url).pathname);
  }
  return paths;
});

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
    await until('the page files cached', async () => (await cachedPaths()).includes('/app.js'));
    const cached = await cachedPaths();
    assert.ok(!cached.some((p) => p.startsWith('/v1/') || p === '/metrics'), `no API answer cached: ${cached}`);
    // Every file index.html references (scripts, stylesheets, icons, the manifest and its icons)
    // is in the worker's cache: the page opens offline whole, and PAGE cannot go stale unseen.
    const referenced = await page.evaluate(async () => {
      const doc = new DOMParser().parseFromString(await (await fetch('/index.html')).text(), 'text/html');
      const urls = [...doc.querySelectorAll('script[src]')].map((e) => e.getAttribute('src'));
      for (const l of doc.querySelectorAll('link[href]')) {
        if (/\b(stylesheet|icon|manifest|apple-touch-icon)\b/.test(l.rel)) urls.push(l.getAttribute('href'));
      }
      const manifest = doc.querySelector('link[rel="manifest"]');
      if (manifest) {
        const m = await (await fetch(manifest.getAttribute('href'))).json();
        for (const icon of m.icons || []) urls.push(icon.src);
      }
      return urls.map((u) => new URL(u, location.href).pathname);
    });
    assert.ok(referenced.includes('/app.js') && referenced.includes('/style.css') && referenced.includes('/manifest.webmanifest'),
      `index.html's references read: ${referenced}`);
    const missing = referenced.filter((p) => !cached.includes(p));
    assert.deepEqual(missing, [], `referenced by index.html but not in the service worker's cache (web/sw.js PAGE)`);
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

/** A hub whose claude seats are the stand-in CLI (tests/support/fake_agent.py). */
async function claudeHub(tag) {
  const h = new Hub(tempDir(tag), ['--claude-bin', fakeClaude()]);
  await h.start();
  return h;
}

async function claudeSeat(h, name) {
  const r = await h.api('POST', '/v1/seats', { name, agent: 'claude' });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.seat;
}

/** Seat `id` asks a permission (the stand-in's Bash `ls`); the prompt's row, once the hub has it. */
async function ask(h, id) {
  assert.equal((await h.api('POST', `/v1/seats/${id}/messages`, { text: 'permission' })).status, 202);
  return until('the prompt on the hub', async () => (await h.api('GET', `/v1/seats/${id}/permissions`)).body.permissions[0]);
}

test('"Notify me" subscribes and the hub sends a test push; a prompt\'s notification Allow answers it on the hub', { timeout: 90_000 }, async () => {
  const h = await claudeHub('answer');
  try {
    await context.grantPermissions(['notifications'], { origin: h.base });
    const cdp = await context.newCDPSession(page);
    const registrations = [];
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => registrations.push(...e.registrations));
    await cdp.send('ServiceWorker.enable');
    await page.goto(`${h.base}/`);
    await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
    const reg = await until('the registration', async () =>
      registrations.find((r) => !r.isDeleted && r.scopeURL === `${h.base}/`));

    // Enabling: the browser's permission (granted), the subscription stored, then the test push.
    const before = received.length;
    await page.locator('#notify').click();
    await until('the button to say on', async () => (await page.locator('#notify').textContent()) === 'Notifications on');
    const subs = await until('the subscription on the hub', async () => (await h.api('GET', '/v1/push/subscriptions')).body.subscriptions[0]);
    assert.equal(subs.endpoint, `http://127.0.0.1:${pushService.address().port}/push/browser-1`);
    await until('the test push at the push service', async () => received.length > before);
    const testPush = received[received.length - 1];
    assert.equal(testPush.url, '/push/browser-1');
    assert.equal(testPush.headers['content-encoding'], 'aes128gcm');
    const payload = decryptPush(testPush.body);
    assert.equal(payload.kind, 'test');
    assert.equal(payload.headline, 'sluice: notifications work');

    // A real prompt waiting on a claude seat; its push reaches the worker, which shows it.
    const id = await claudeSeat(h, 'approvals');
    const row = await ask(h, id);
    const requestId = String(row.request_id);
    const prompt = { kind: 'permission', seat: id, headline: 'approvals: allow Bash?', body: 'ls', tag: id,
      tool: 'Bash', request_id: requestId, url: `/#/seat/${id}` };
    const shown = () => page.evaluate(async (tag) =>
      (await (await navigator.serviceWorker.ready).getNotifications({ tag })).map((n) => n.actions.map((a) => a.action)), id);
    await until('the prompt\'s notification', async () => {
      if ((await shown()).length === 1) return true;
      await cdp.send('ServiceWorker.deliverPushMessage', { origin: h.base, registrationId: reg.registrationId, data: JSON.stringify(prompt) });
      return false;
    });
    assert.deepEqual(await shown(), [['allow', 'deny']]);

    // Its Allow, clicked: CDP cannot press a notification's action, so the worker's own
    // `notificationclick` listeners get the event a click makes (the notification it showed,
    // action "allow"). A script-made event cannot extend the worker's life: its waitUntil hands
    // the handler's promise back here instead.
    const worker = await until('the service worker', async () => context.serviceWorkers().find((w) => w.url().startsWith(h.base)));
    const handled = await worker.evaluate(async (tag) => {
      const [n] = await self.registration.getNotifications({ tag });
      const e = new NotificationEvent('notificationclick', { notification: n, action: 'allow' });
      const waits = [];
      Object.defineProperty(e, 'waitUntil', { value: (p) => { waits.push(p); } });
      self.dispatchEvent(e);
      await Promise.all(waits);
      return { waits: waits.length, left: (await self.registration.getNotifications({ tag })).length };
    }, id);
    assert.deepEqual(handled, { waits: 1, left: 0 }, 'the handler answered and closed the notification');
    await until('no prompt pending on the hub', async () => {
      const s = (await h.api('GET', `/v1/seats/${id}`)).body;
      return !s.pending_permissions && (await h.api('GET', `/v1/seats/${id}/permissions`)).body.permissions.length === 0;
    });
    const resolved = (await h.api('GET', `/v1/seats/${id}/history`)).body.turns.flatMap((t) => t.frames)
      .filter((r) => r.type === 'system' && r.subtype === 'permission_resolved');
    assert.deepEqual(resolved.map((r) => [r.behavior, r.by]), [['allow', 'notification']]);
  } finally {
    await page.goto('about:blank');
    await h.stop();
  }
});

test('the inbox groups seats needing you, running and recent, counts them in the title and badge, and follows an answer', { timeout: 90_000 }, async () => {
  const h = await claudeHub('inbox');
  try {
    const done = await claudeSeat(h, 'finished');
    assert.equal((await h.api('POST', `/v1/seats/${done}/messages`, { text: 'hello' })).status, 202);
    await until('its turn to end', async () => (await h.api('GET', `/v1/seats/${done}`)).body.state === 'idle'
      && (await h.api('GET', `/v1/seats/${done}/history`)).body.turns.flatMap((t) => t.frames).some((r) => r.type === 'result'));
    const busy = await claudeSeat(h, 'busy');
    assert.equal((await h.api('POST', `/v1/seats/${busy}/messages`, { text: 'hang' })).status, 202);
    const asking = await claudeSeat(h, 'approvals');
    await ask(h, asking);

    await page.goto(`${h.base}/`);
    const group = (g) => page.evaluate((g) => [...document.querySelectorAll(`#inbox .inbox-group[data-group="${g}"] li`)]
      .map((li) => ({ id: li.dataset.id, name: li.querySelector('.inbox-name').textContent, what: li.querySelector('.inbox-what').textContent,
        href: li.querySelector('a').getAttribute('href') })), g);
    await until('the prompt\'s tool in "Needs you"', async () => (await group('needs')).some((e) => /Bash/.test(e.what)));
    assert.deepEqual(await group('needs'), [{ id: asking, name: 'approvals', what: 'Allow Bash?', href: `#/seat/${asking}` }]);
    await until('the running seat', async () => (await group('running')).length === 1);
    assert.deepEqual((await group('running')).map((e) => [e.id, e.what]), [[busy, 'running']]);
    assert.deepEqual((await group('recent')).map((e) => e.id), [done]);
    assert.equal(await page.title(), '(1) sluice');
    assert.equal(await page.evaluate(() => window.__badges.at(-1)), 1);
    assert.ok(await page.locator('#inbox .inbox-group[data-group="needs"]').isVisible());
    await page.locator('#welcome').screenshot({ path: path.join(ARTIFACTS, 'web-inbox.png') });

    // Answered (elsewhere): the seat leaves "Needs you" for "Recent" once its turn ends; no count.
    const row = (await h.api('GET', `/v1/seats/${asking}/permissions`)).body.permissions[0];
    assert.equal((await h.api('POST', `/v1/seats/${asking}/permissions/${row.request_id}`, { behavior: 'allow' })).status, 200);
    await until('"Needs you" to empty', async () => (await group('needs')).length === 0);
    await until('the answered seat in "Recent"', async () => (await group('recent')).some((e) => e.id === asking));
    assert.equal(await page.title(), 'sluice');
    assert.equal(await page.evaluate(() => window.__badges.at(-1)), 0);
    assert.ok(await page.locator('#inbox .inbox-group[data-group="needs"]').isHidden());
    // An entry opens its seat.
    await page.locator(`#inbox li[data-id="${busy}"] a`).click();
    await until('the seat view', async () => (await page.locator('#seat-title').textContent()) === 'busy');
    assert.ok(await page.locator('#welcome').isHidden());
    assert.equal(await page.title(), 'sluice');
  } finally {
    await h.api('POST', `/v1/seats/${(await h.api('GET', '/v1/seats')).body.seats.find((s) => s.name === 'busy')?.id}/cancel`).catch(() => {});
    await page.goto('about:blank');
    await h.stop();
  }
});
