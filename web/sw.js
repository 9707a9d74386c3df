// sluice's service worker: the page's own files cached so it opens offline (never an API answer,
// never a token), and Web Push: a notification per seat (tag = seat, replaced, not stacked) whose
// Allow and Deny actions answer a permission prompt; a click opens the page at the card.
'use strict';

const CACHE = 'sluice-page-v2';
// The page's own files: every file index.html references (WebPage.Push checks that each is
// cached). API answers (/v1/…, /metrics, /healthz) are never cached.
const PAGE = [
  '/', '/index.html', '/style.css', '/util.js', '/ansi.js', '/markdown.js', '/tools.js',
  '/render.js', '/api.js', '/live.js', '/seat-controls.js', '/new-seat.js', '/usage.js',
  '/search.js', '/notify.js', '/inbox.js', '/app.js',
  '/manifest.webmanifest', '/icon.svg', '/icon-192.png', '/icon-512.png',
  '/vendor/marked.min.js', '/vendor/purify.min.js',
];

self.addEventListener('install', (e) => {
  e.waitUntil(caches.open(CACHE).then((c) => c.addAll(PAGE)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (e) => {
  e.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

// The network first (a build's new files), the cache when offline; only the page's files.
self.addEventListener('fetch', (e) => {
  const url = new URL(e.request.url);
  if (e.request.method !== 'GET' || url.origin !== self.location.origin || !PAGE.includes(url.pathname)) return;
  e.respondWith(fetch(e.request).then((res) => {
    if (res.ok) {
      const copy = res.clone();
      caches.open(CACHE).then((c) => c.put(e.request, copy));
    }
    return res;
  }).catch(() => caches.match(e.request)));
});

// The owner's token for answering from a notification: kept in IndexedDB (never in the cache),
// given by the page when it enabled notifications with the owner's token.
function db() {
  return new Promise((resolve, reject) => {
    const r = indexedDB.open('sluice-sw', 1);
    r.onupgradeneeded = () => r.result.createObjectStore('kv');
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}
async function kv(key, value) {
  const d = await db();
  return new Promise((resolve, reject) => {
    const tx = d.transaction('kv', value === undefined ? 'readonly' : 'readwrite');
    const store = tx.objectStore('kv');
    const r = value === undefined ? store.get(key) : (value === null ? store.delete(key) : store.put(value, key));
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

self.addEventListener('message', (e) => {
  const m = e.data || {};
  if (m.type === 'sluice-token') e.waitUntil(kv('token', m.owner && m.token ? m.token : null));
});

self.addEventListener('push', (e) => {
  let p = {};
  try { p = e.data ? e.data.json() : {}; } catch { p = { headline: 'sluice', body: e.data ? e.data.text() : '' }; }
  const prompt = p.kind === 'permission' && p.request_id;
  const opts = {
    body: p.body || '',
    tag: p.tag || p.seat || 'sluice',
    renotify: true,
    requireInteraction: !!prompt,
    icon: '/icon-192.png',
    data: { url: p.url || '/', seat: p.seat, request_id: p.request_id || null },
  };
  if (prompt) opts.actions = [{ action: 'allow', title: 'Allow' }, { action: 'deny', title: 'Deny' }];
  e.waitUntil(self.registration.showNotification(p.headline || p.title || 'sluice', opts));
});

async function answer(data, behavior) {
  const token = await kv('token').catch(() => null);
  const headers = { 'Content-Type': 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(`/v1/seats/${encodeURIComponent(data.seat)}/permissions/${encodeURIComponent(data.request_id)}`, {
    method: 'POST', headers, body: JSON.stringify({ behavior, by: 'notification' }),
  });
  return res.ok;
}

async function open(url) {
  const all = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  for (const c of all) {
    if (new URL(c.url).origin === self.location.origin) {
      await c.focus();
      if ('navigate' in c) return c.navigate(url);
      return c;
    }
  }
  return self.clients.openWindow(url);
}

self.addEventListener('notificationclick', (e) => {
  const n = e.notification;
  const data = n.data || {};
  n.close();
  if ((e.action === 'allow' || e.action === 'deny') && data.request_id) {
    e.waitUntil(answer(data, e.action).then((ok) => (ok ? undefined : open(data.url))));
    return;
  }
  e.waitUntil(open(data.url || '/'));
});
