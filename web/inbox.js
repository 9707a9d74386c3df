// sluice's page: the inbox, the home view's list of every seat and session grouped "Needs you"
// (a prompt waits), "Running" and "Recent", with the count of those needing you in the document's
// title and on the app badge. It draws the seat list's data (app.js polls GET /v1/seats once for
// both); a waiting seat's tool is read once per new prompt from GET /v1/seats/{id}/permissions.
'use strict';
window.sluiceInbox = (() => {
  const $ = (id) => document.getElementById(id);
  const { el, fmtAgo } = window.sluiceRender;
  const { api } = window.sluiceApi;
  const enc = encodeURIComponent;
  const RECENT_MAX = 20; // "Recent" entries shown: a glance, not the whole history (the list has every seat)
  const TITLE = 'sluice';

  const needsYou = (s) => (s.pending_permissions || 0) > 0 || s.state === 'waiting';
  const running = (s) => s.state === 'running' || s.state === 'queued';
  const label = (s) => s.name || s.title || s.id;
  const projectName = (p) => (typeof p === 'string' && p ? p.split('/').filter(Boolean).pop() || p : '');

  // What waits on a seat: id -> {pending, text}; read again only when its pending count changes.
  const asks = new Map();

  async function readAsk(id, pending) {
    const a = { pending, text: '' };
    asks.set(id, a);
    try {
      const d = await api('GET', `/v1/seats/${enc(id)}/permissions`);
      const rows = Array.isArray(d.permissions) ? d.permissions : [];
      a.text = rows.map((r) => r.title || (r.tool_name ? `Allow ${r.tool_name}?` : '')).filter(Boolean).join(' · ');
    } catch { /* the line says "a permission prompt" */ }
    if (asks.get(id) === a && last) draw(last);
  }

  function waits(s) {
    const pending = s.pending_permissions || 0;
    if (!pending) return 'waiting for you';
    const a = asks.get(s.id);
    if (!a || a.pending !== pending) { readAsk(s.id, pending); return 'a permission prompt'; }
    return a.text || (pending > 1 ? `${pending} permission prompts` : 'a permission prompt');
  }

  function entry(s, what) {
    const a = el('a');
    a.href = `#/seat/${enc(s.id)}`;
    a.append(el('span', 'inbox-name', label(s)));
    const project = projectName(s.project);
    if (project) {
      const p = el('span', 'inbox-project quiet', project);
      p.title = s.project;
      a.append(p);
    }
    const w = el('span', 'inbox-what', what);
    a.append(w);
    const li = el('li', 'inbox-entry');
    li.dataset.id = s.id;
    li.append(a);
    return li;
  }

  function fill(group, items) {
    const section = document.querySelector(`#inbox .inbox-group[data-group="${group}"]`);
    if (!section) return; // the home view replaced (a test's fixture): the title still counts
    section.hidden = items.length === 0;
    section.querySelector('.inbox-count').textContent = String(items.length);
    section.querySelector('ul').replaceChildren(...items);
  }

  /** The count on the title and the app's badge (installed page) where the browser has one. */
  let badged = null; // the count last set: the badge is set when it changes, not at every refresh
  function badge(n) {
    document.title = n ? `(${n}) ${TITLE}` : TITLE;
    if (n === badged) return;
    badged = n;
    try {
      if (n && navigator.setAppBadge) navigator.setAppBadge(n).catch(() => {});
      else if (!n && navigator.clearAppBadge) navigator.clearAppBadge().catch(() => {});
    } catch { /* no badge here */ }
  }

  let last = null;
  function draw(seats) {
    const needs = seats.filter(needsYou);
    const runs = seats.filter((s) => !needsYou(s) && running(s));
    const rest = seats.filter((s) => !needsYou(s) && !running(s))
      .sort((a, b) => (b.last_activity || '').localeCompare(a.last_activity || ''))
      .slice(0, RECENT_MAX);
    fill('needs', needs.map((s) => entry(s, waits(s))));
    fill('running', runs.map((s) => entry(s, s.state === 'queued' ? 'queued' : 'running')));
    fill('recent', rest.map((s) => entry(s, [s.state !== 'idle' ? s.state : '', fmtAgo(s.last_activity)].filter(Boolean).join(' · '))));
    const empty = $('inbox-empty');
    if (empty) empty.hidden = seats.length > 0;
    badge(needs.length);
  }

  /** Draws `seats` (GET /v1/seats's list, as app.js last read it). */
  function render(seats) {
    last = seats;
    const ids = new Set(seats.map((s) => s.id));
    for (const id of asks.keys()) if (!ids.has(id)) asks.delete(id);
    for (const s of seats) if (!s.pending_permissions) asks.delete(s.id); // a later prompt is read anew
    draw(seats);
  }

  return { render };
})();
