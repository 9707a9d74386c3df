// sluice's page: notifications, opt-in — the "Notify me" button, the in-tab Notification while the
// tab is hidden, and Web Push through the service worker (web/sw.js): subscribe, give the worker
// the owner's token (a prompt's Allow/Deny answer from the notification), and a test push.
'use strict';
window.sluiceNotify = (() => {
  const $ = (id) => document.getElementById(id);
  const { api, token } = window.sluiceApi;
  const enc = encodeURIComponent;
  const NOTIFY_KEY = 'sluice.notify';

  let hooks = { status: () => {}, role: () => ({ role: 'owner' }), name: (id) => id };

  const canNotify = 'Notification' in window;
  const on = () => canNotify && localStorage.getItem(NOTIFY_KEY) === '1' && Notification.permission === 'granted';

  function showButton() {
    const b = $('notify');
    b.hidden = !canNotify;
    b.setAttribute('aria-pressed', String(on()));
    b.textContent = on() ? 'Notifications on' : 'Notify me';
  }

  // The installable page's service worker (web/sw.js): offline page files, Web Push.
  const swReady = 'serviceWorker' in navigator
    ? navigator.serviceWorker.register('/sw.js').then(() => navigator.serviceWorker.ready).catch(() => null)
    : Promise.resolve(null);

  /** Subscribes this browser to the hub's Web Push (GET /v1/push/key, POST
   *  /v1/push/subscriptions), gives the service worker the owner's token so a prompt's
   *  Allow/Deny actions can answer (a viewer's notifications only open the page), then asks the
   *  hub for a test push to this subscription (POST /v1/push/subscriptions/{id}/test): the
   *  person sees at once that notifications reach this device. */
  async function enablePush() {
    const reg = await swReady;
    if (!reg || !('PushManager' in window)) return false;
    const { public_key: k } = await api('GET', '/v1/push/key');
    const b64 = k.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (k.length % 4)) % 4);
    const key = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const sub = (await reg.pushManager.getSubscription())
      || (await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }));
    const stored = await api('POST', '/v1/push/subscriptions', sub.toJSON());
    if (reg.active) reg.active.postMessage({ type: 'sluice-token', token: token(), owner: hooks.role().role === 'owner' });
    if (stored && stored.id) await api('POST', `/v1/push/subscriptions/${enc(stored.id)}/test`);
    return true;
  }

  $('notify').addEventListener('click', async () => {
    if (on()) localStorage.removeItem(NOTIFY_KEY);
    else if ((await Notification.requestPermission()) === 'granted') {
      localStorage.setItem(NOTIFY_KEY, '1');
      enablePush().catch((e) => hooks.status(`push notifications unavailable: ${e.message}`));
    } else hooks.status('notifications are blocked for this page in the browser');
    showButton();
  });

  /** A browser notification for seat `v` while this tab is hidden (when the person opted in). */
  function notify(v, what) {
    if (!on() || document.visibilityState === 'visible') return;
    const n = new Notification(`sluice · ${hooks.name(v.id) || v.id}`, { body: what, tag: `sluice-${v.id}` });
    n.onclick = () => { window.focus(); n.close(); };
  }

  function notifyTurnEnd(v, d) {
    notify(v, { ended: 'turn ended', cancelled: 'turn cancelled', failed: 'turn failed' }[d.state] || `turn ${d.state}`);
  }

  /** `h`: {status(text) for the header's hub status, role() this tab's /v1/whoami, name(id) a seat's label}. */
  function init(h) {
    hooks = { ...hooks, ...h };
    showButton();
  }

  return { init, on, notify, notifyTurnEnd, enablePush };
})();
