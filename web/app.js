// sluice's page logic: the seat list, one seat's live conversation over EventSource, paging, prompt,
// Stop and the phone drawer. Rendering is in render.js/tools.js, the live edge in live.js,
// notifications in notify.js, the home view's inbox in inbox.js.
'use strict';
(() => {
  const POLL_MS = 2000;             // seat list and stats refresh while the tab is visible
  const PAGE_TURNS = 20;            // turns per "Load earlier turns" page (the window is 20 too)
  const RECONNECT_MS = 2000;        // our own retry when the browser gives an EventSource up

  const $ = (id) => document.getElementById(id);
  const { el, fmtBytes, fmtAgo, isPrompt, buildTurns, permissionCard, resolvePermission } = window.sluiceRender;
  const { api, ApiError, token } = window.sluiceApi;
  const live = window.sluiceLive;
  const { atBottom, keepBottom } = live;
  const enc = encodeURIComponent;

  // ---------------------------------------------------------------- seat state, one source for list and header

  const seatItems = new Map(); // id -> <li>
  const seatPending = new Map(); // id -> pending permission prompts at the last list refresh
  const seatNames = new Map(); // id -> name
  let currentId = null;

  function setHubStatus(text) { $('hub-status').textContent = text; }

  /** Shows `state` for seat `id` everywhere it appears (the list and, if open, the header), with
   *  its `reason` (a degraded or unavailable seat says why) when the hub gives one. */
  function showState(id, state, reason) {
    if (!state) return;
    const why = reason === undefined ? undefined : (reason || '');
    const li = seatItems.get(id);
    if (li) {
      const s = li.querySelector('.state');
      s.textContent = state;
      s.dataset.state = state;
      if (why !== undefined) s.title = why;
    }
    if (id === currentId) {
      const s = $('seat-state');
      s.textContent = state;
      s.dataset.state = state;
      $('stop').disabled = state === 'idle' || state === 'unavailable';
      if (why !== undefined) {
        s.title = why;
        $('seat-reason').textContent = why;
        $('seat-reason').hidden = !why;
      }
    }
  }

  // ---------------------------------------------------------------- the seat list: grouped by project, searchable

  const groupItems = new Map(); // group key -> <li class="group">
  const HUB_GROUP = '';          // seats of this hub (no project) come first

  /** The list's group of a seat: its project (a Claude Code session's cwd), else this hub's. */
  const groupOf = (s) => (typeof s.project === 'string' ? s.project : HUB_GROUP);
  const seatLabel = (s) => s.name || s.title || s.id;

  function groupItem(key, count) {
    let g = groupItems.get(key);
    if (!g) {
      g = el('li', 'group');
      g.append(el('span', 'group-name'), el('span', 'group-count quiet'));
      g.dataset.group = key;
      groupItems.set(key, g);
    }
    g.firstChild.textContent = key === HUB_GROUP ? 'This hub' : key.split('/').filter(Boolean).pop() || key;
    g.firstChild.title = key;
    g.lastChild.textContent = String(count);
    return g;
  }

  /** Hides the seats (and emptied groups) that do not match the search box. */
  function applySearch() {
    const q = $('seat-search').value.trim().toLowerCase();
    const shown = new Map();
    for (const li of seatItems.values()) {
      const hit = !q || (li.dataset.search || '').includes(q);
      li.hidden = !hit;
      if (hit) shown.set(li.dataset.group, (shown.get(li.dataset.group) || 0) + 1);
    }
    for (const [key, g] of groupItems) g.hidden = !shown.get(key);
    $('seat-search-empty').hidden = !q || shown.size > 0;
  }
  $('seat-search').addEventListener('input', applySearch);

  /** The agent a seat runs, for the list ("" for the builtin one): an ACP seat by its program. */
  function agentLabel(s) {
    if (s.agent === 'acp') {
      const program = String(s.cmd || '').trim().split(/\s+/)[0] || '';
      return `ACP: ${program.split('/').pop()}`;
    }
    return { claude: 'Claude Code', codex: 'Codex', process: 'agent process' }[s.agent] || '';
  }

  function renderSeats(seats) {
    const list = $('seat-list');
    const seen = new Set();
    // Groups: this hub's seats first, then projects by their newest activity; seats keep the
    // hub's order (newest first) inside a group.
    const groups = new Map();
    for (const s of seats) {
      const k = groupOf(s);
      if (!groups.has(k)) groups.set(k, []);
      groups.get(k).push(s);
    }
    const newest = (ss) => ss.reduce((m, s) => (s.last_activity && s.last_activity > m ? s.last_activity : m), '');
    const keys = [...groups.keys()].sort((a, b) =>
      (a === HUB_GROUP ? -1 : b === HUB_GROUP ? 1 : newest(groups.get(b)).localeCompare(newest(groups.get(a)))));
    const grouped = keys.length > 1 || (keys.length === 1 && keys[0] !== HUB_GROUP);
    let i = 0;
    const place = (node) => {
      if (list.children[i] !== node) list.insertBefore(node, list.children[i] || null);
      i++;
    };
    for (const key of keys) {
      const members = groups.get(key);
      if (grouped) place(groupItem(key, members.length));
      for (const s of members) {
        seen.add(s.id);
        let li = seatItems.get(s.id);
        if (!li) {
          li = el('li', 'seat');
          const a = el('a');
          a.href = `#/seat/${enc(s.id)}`;
          a.append(el('span', 'seat-name'), el('span', 'state'), el('span', 'seat-when quiet'));
          li.append(a);
          seatItems.set(s.id, li);
        }
        place(li);
        const a = li.firstChild;
        a.children[0].textContent = seatLabel(s);
        const when = [fmtAgo(s.last_activity)];
        const kind = agentLabel(s);
        if (kind) when.unshift(kind);
        if (s.pending_permissions) when.push(`${s.pending_permissions} waiting for an answer`);
        a.children[2].textContent = when.join(' · ');
        a.children[2].title = s.last_activity || '';
        let badge = a.querySelector('.live-badge');
        if (s.live && !badge) {
          // "active", not "live": the header's "live" says the page is connected.
          badge = el('span', 'live-badge', 'active');
          badge.title = 'the session file grew in the last minute';
          a.children[0].after(badge);
        } else if (!s.live && badge) badge.remove();
        if (s.id === currentId) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
        li.dataset.id = s.id;
        li.dataset.group = key;
        li.dataset.search = [seatLabel(s), s.id, s.project || '', s.title || ''].join('\n').toLowerCase();
        seatNames.set(s.id, seatLabel(s));
        // Another seat started waiting for an answer (the open one notifies from its stream).
        const pending = s.pending_permissions || 0;
        if (seatPending.has(s.id) && pending > seatPending.get(s.id) && s.id !== currentId) {
          notify({ id: s.id }, 'needs an answer: a permission prompt');
        }
        seatPending.set(s.id, pending);
        showState(s.id, s.state, s.reason);
        if (s.id === currentId) $('seat-title').textContent = seatLabel(s);
      }
    }
    for (const [id, li] of seatItems) if (!seen.has(id)) { li.remove(); seatItems.delete(id); seatPending.delete(id); }
    for (const [key, g] of groupItems) if (!grouped || !groups.has(key)) { g.remove(); groupItems.delete(key); }
    $('seat-list-empty').hidden = seats.length > 0;
    $('seat-search').hidden = seats.length < 2;
    if ($('seat-search').hidden) $('seat-search').value = ''; // no filter left behind, unseen
    applySearch();
    if (grouped) usage.list(new Map([...groups].map(([k, ss]) => [k, ss.map((x) => x.id)])));
    inbox.render(seats);
  }

  // Who this tab is: a viewer token gets a read-only page (no new seat, no prompt, no stop).
  let role = { role: 'owner' };
  async function whoami() {
    try {
      role = await api('GET', '/v1/whoami');
    } catch { role = { role: 'owner' }; }
    const viewer = role.role === 'viewer';
    document.body.classList.toggle('read-only', viewer);
    $('read-only-note').hidden = !viewer;
    if (viewer && role.seat && !location.hash.startsWith('#/seat/')) location.hash = `#/seat/${enc(role.seat)}`;
  }

  async function refreshSeats() {
    if (role.seat) return; // a viewer of one seat may not list the others
    try {
      const d = await api('GET', '/v1/seats');
      renderSeats(d.seats || []);
      setHubStatus('');
    } catch (e) {
      setHubStatus(e instanceof ApiError ? `hub: ${e.message}` : 'hub unreachable — retrying');
    }
  }

  // ---------------------------------------------------------------- the header's controls and New seat (their own modules)

  const usage = window.sluiceUsage;
  const controls = window.sluiceSeatControls;
  controls.init({
    refresh: async () => { await refreshSeats(); await refreshStats(); },
    go: (hash) => { location.hash = hash; },
    title: (text) => { $('seat-title').textContent = text; },
  });
  window.sluiceNewSeat.init({
    created: async (id) => { await refreshSeats(); location.hash = `#/seat/${enc(id)}`; },
  });

  // ---------------------------------------------------------------- the seat view

  let view = null; // the open seat: {id, es, epoch, firstSeq, nextSeq, cursor, gen, toolNames, ...}

  function setConn(text) { $('conn-state').textContent = text; }

  function setNote(text, kind = '') {
    const n = $('prompt-note');
    n.textContent = text;
    n.dataset.kind = kind;
  }

  function updatePaging(v) {
    $('load-earlier').hidden = v.cursor == null;
    $('history-start').hidden = !(v.cursor == null && v.nextSeq != null);
  }

  function clearConversation(v) {
    $('turns').replaceChildren();
    live.clearLive();
    v.toolNames.clear();
    v.toolBoxes.clear();
    v.permissionCards.clear();
    v.firstSeq = null; // the oldest seq shown
    v.nextSeq = null;  // the seq the next live frame must have; null until `connected`
    v.cursor = null;
    v.gen++;
  }

  function openSeat(id) {
    closeSeat();
    currentId = id;
    view = { id, es: null, epoch: null, firstSeq: null, nextSeq: null, cursor: null, gen: 0,
      toolNames: new Map(), toolBoxes: new Map(), permissionCards: new Map(), resumeFrom: null, retry: null, loading: false, queuedTurn: null, turnEnds: 0 };
    document.body.classList.add('seat-open');
    $('seat-view').hidden = false;
    $('welcome').hidden = true;
    $('seat-title').textContent = seatNames.get(id) || id;
    const s = $('seat-state');
    s.textContent = '';
    s.dataset.state = '';
    s.title = '';
    $('seat-reason').hidden = true;
    controls.reset();
    setConn('connecting…');
    for (const k of ['stat-frames', 'stat-window', 'stat-dropped']) $(k).textContent = '–';
    setNote('');
    clearConversation(view);
    updatePaging(view);
    connect(view);
    refreshStats();
    usage.seat(id);
    for (const [sid, li] of seatItems) {
      const a = li.firstChild;
      if (sid === id) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    }
  }

  function closeSeat() {
    if (!view) return;
    if (view.es) view.es.close();
    clearTimeout(view.retry);
    view = null;
    currentId = null;
  }

  function connect(v) {
    const q = new URLSearchParams();
    if (token()) q.set('access_token', token());
    if (v.resumeFrom) q.set('last_event_id', v.resumeFrom);
    const qs = q.toString();
    const es = new EventSource(`/v1/seats/${enc(v.id)}/events${qs ? `?${qs}` : ''}`);
    v.es = es;
    const on = (name, fn) => es.addEventListener(name, (e) => {
      if (view !== v || v.es !== es) return;
      let d;
      try { d = JSON.parse(e.data); } catch { return; }
      fn(v, d, e);
    });
    on('connected', onConnected);
    on('resumed', onResumed);
    on('frame', onFrame);
    on('preview', live.onPreview);
    on('gap', live.onGap);
    on('turn', onTurn);
    on('permission', onPermission);
    es.onopen = () => { if (view === v && v.es === es) setConn('live'); };
    es.onerror = () => {
      if (view !== v || v.es !== es) return;
      if (es.readyState === EventSource.CLOSED) {
        // The browser gave up (an HTTP error): check why, then reconnect ourselves, resuming.
        setConn('disconnected — retrying');
        es.close();
        clearTimeout(v.retry);
        v.retry = setTimeout(async () => {
          try { await api('GET', `/v1/seats/${enc(v.id)}`); } catch (err) {
            if (err instanceof ApiError && err.status === 404) { setConn('this seat does not exist'); return; }
          }
          if (view !== v) return;
          v.resumeFrom = v.epoch != null && v.nextSeq > 0 ? `${v.epoch}:${v.nextSeq - 1}` : null;
          connect(v);
        }, RECONNECT_MS);
      } else {
        setConn('reconnecting…'); // the browser retries by itself, sending Last-Event-ID
      }
    };
  }

  /** Drops everything and starts over with a fresh subscription (no Last-Event-ID). */
  function restartFresh(v, why) {
    if (v.es) v.es.close();
    v.resumeFrom = null;
    setConn(why);
    connect(v);
  }

  function onConnected(v, d) {
    const stick = atBottom() || v.nextSeq == null;
    clearConversation(v);
    v.epoch = String(d.epoch);
    const w = d.window || {};
    const first = Number(w.first) || 0;
    const frames = (w.frames || []).map((row, i) => ({ seq: first + i, row }));
    v.firstSeq = first;
    v.nextSeq = first + frames.length;
    v.cursor = d.cursor ?? null;
    const t0 = performance.now();
    $('turns').append(...buildTurns(v, frames, null));
    // A prompt still pending whose request row is older than the window: its card goes last.
    for (const p of Array.isArray(d.permissions) ? d.permissions : []) {
      if (p && !v.permissionCards.has(String(p.request_id || ''))) appendCard(v, p);
    }
    live.showPartial(v, d.partial);
    updatePaging(v);
    if (d.state) showState(v.id, d.state);
    setConn('live');
    keepBottom(stick);
    // How long this window took: DOM built, then laid out (scrollHeight forces it). bench-window.mjs reads it.
    const t1 = performance.now();
    void $('conversation').scrollHeight;
    window.sluiceTimings = { frames: frames.length, build_ms: Math.round(t1 - t0), layout_ms: Math.round(performance.now() - t1) };
  }

  function onResumed(v, d) {
    if (String(d.epoch) !== v.epoch) { restartFresh(v, 'conversation replaced — reloading'); return; }
    live.showPartial(v, d.partial); // previews from before the drop are stale; the frames follow
    if (d.state) showState(v.id, d.state);
    setConn('live');
  }

  function onFrame(v, d, e) {
    const epoch = (e.lastEventId || '').split(':')[0];
    if (v.epoch == null || (epoch && epoch !== v.epoch)) { restartFresh(v, 'conversation replaced — reloading'); return; }
    const seq = Number(d.seq);
    if (seq < v.nextSeq) return; // a replayed frame we already show
    if (seq > v.nextSeq) { restartFresh(v, 'missed frames — reloading'); return; } // never show a hole
    const stick = atBottom();
    const turns = $('turns');
    const last = turns.lastElementChild; // a turn, or a card shown outside one
    const sections = buildTurns(v, [{ seq, row: d.row }], isPrompt(d.row) || !last?.classList.contains('turn') ? null : last);
    turns.append(...sections);
    v.nextSeq = seq + 1;
    if (d.row && d.row.type === 'result') {
      // The result row says how the turn ended: a note from the `turn` event is not needed beside it.
      const last = turns.lastElementChild;
      if (last) last.querySelectorAll('.turn-note').forEach((n) => n.remove());
      usage.turnEnded(v.id);
    }
    live.clearPreviewsFor(d.row);
    keepBottom(stick);
    if (d.row && d.row.type === 'system' && d.row.subtype === 'session_state_changed') {
      if (d.row.state === 'requires_action') {
        showState(v.id, 'waiting');
        notify(v, 'needs an answer');
      } else if (d.row.state === 'running' && $('seat-state').dataset.state === 'waiting') {
        showState(v.id, 'running');
      }
    } else if (d.row && d.row.type === 'system' && d.row.subtype === 'permission_request') {
      showState(v.id, 'waiting');
      notify(v, `needs an answer: ${d.row.title || d.row.tool_name || 'a permission prompt'}`);
    } else if (d.row && d.row.type === 'system' && d.row.subtype === 'permission_resolved') {
      const open = [...v.permissionCards.values()].some((c) => !c.classList.contains('resolved'));
      if (!open && $('seat-state').dataset.state === 'waiting') showState(v.id, 'running');
      refreshStats(); // the hub's word on the state (another prompt may still wait)
    }
  }

  /** The card of a prompt that is no frame here (a hooked prompt, or one older than the window):
   *  at the end of the newest turn, so that the frames coming after it follow it, not go into it. */
  function appendCard(v, row) {
    const last = $('turns').lastElementChild;
    (last && last.classList.contains('turn') ? last : $('turns')).append(permissionCard(v, row));
  }

  /** A terminal session's hooked prompt asked or ended (a `permission` event: a row, no frame). */
  function onPermission(v, d) {
    const row = (d && d.row) || {};
    if (row.subtype === 'permission_request') {
      if (!v.permissionCards.has(String(row.request_id || ''))) appendCard(v, row);
      showState(v.id, 'waiting');
      notify(v, `needs an answer: ${row.title || row.tool_name || 'a permission prompt'}`);
    } else if (row.subtype === 'permission_resolved') {
      resolvePermission(v, row);
      refreshStats();
    }
  }

  function onTurn(v, d) {
    if (d.state === 'started') {
      showState(v.id, 'running');
      if (v.queuedTurn != null && Number(d.turn) >= v.queuedTurn) { v.queuedTurn = null; if ($('prompt-note').dataset.kind === 'queued') setNote(''); }
    } else {
      v.turnEnds++;
      live.clearLive();
      showState(v.id, 'idle');
      if ($('prompt-note').dataset.kind === 'stop') setNote('');
      if (d.state === 'cancelled' || d.state === 'failed') {
        const last = $('turns').lastElementChild;
        // Once per turn, and only where no result row already says it.
        if (last && !last.querySelector('.turn-end') && !last.querySelector(`.turn-note[data-turn="${d.turn}"]`)) {
          const n = el('div', `turn-note ${d.state}`, d.state === 'cancelled' ? 'Stopped' : 'Turn failed');
          n.dataset.turn = String(d.turn);
          last.append(n);
        }
      }
      notifyTurnEnd(v, d);
    }
    refreshStats();
  }

  // ---------------------------------------------------------------- paging back, keeping the reader's place

  $('load-earlier').addEventListener('click', async () => {
    const v = view;
    if (!v || v.cursor == null || v.loading) return;
    const gen = v.gen;
    const b = $('load-earlier');
    v.loading = true;
    b.disabled = true;
    b.textContent = 'Loading…';
    try {
      const d = await api('GET', `/v1/seats/${enc(v.id)}/history?before=${enc(v.cursor)}&turns=${PAGE_TURNS}`);
      if (view !== v || v.gen !== gen) return; // re-rendered meanwhile: this page is stale
      const frames = [];
      for (const t of d.turns || []) {
        (t.frames || []).forEach((row, i) => {
          const seq = t.first + i;
          if (v.firstSeq == null || seq < v.firstSeq) frames.push({ seq, row });
        });
      }
      const c = $('conversation');
      const top = () => c.getBoundingClientRect().top;
      // The reader's anchor: the first frame still visible; it stays where it is on screen.
      const anchor = [...$('turns').querySelectorAll('.frame:not(.folded)')].find((f) => f.getBoundingClientRect().bottom > top());
      const offset = anchor ? anchor.getBoundingClientRect().top - top() : 0;
      $('turns').prepend(...buildTurns(v, frames, null));
      if (frames.length) v.firstSeq = frames[0].seq;
      v.cursor = d.cursor ?? null;
      updatePaging(v);
      if (anchor) c.scrollTop += anchor.getBoundingClientRect().top - top() - offset;
    } catch (e) {
      setNote(`could not load earlier turns: ${e.message}`);
    } finally {
      v.loading = false;
      b.disabled = false;
      b.textContent = 'Load earlier turns';
      if (!b.hidden && document.activeElement === document.body) b.focus({ preventScroll: true });
    }
  });

  // ---------------------------------------------------------------- stats, prompt, stop

  // The figures are telemetry: behind a toggle, remembered for the browser.
  const STATS_KEY = 'sluice.stats';
  function showStats(on) {
    $('stats').hidden = !on;
    $('stats-toggle').setAttribute('aria-expanded', String(on));
  }
  $('stats-toggle').addEventListener('click', () => {
    const on = $('stats').hidden;
    if (on) localStorage.setItem(STATS_KEY, '1'); else localStorage.removeItem(STATS_KEY);
    showStats(on);
  });
  showStats(localStorage.getItem(STATS_KEY) === '1');

  async function refreshStats() {
    const v = view;
    if (!v) return;
    try {
      const s = await api('GET', `/v1/seats/${enc(v.id)}`);
      if (view !== v) return;
      $('seat-title').textContent = s.name || s.id;
      seatNames.set(s.id, s.name || s.id);
      showState(v.id, s.state, s.reason);
      controls.update(s);
      $('stat-frames').textContent = String(s.frames ?? '–');
      $('stat-window').textContent = s.window ? `${fmtBytes(s.window.bytes)} · ${s.window.frames} frames` : '–';
      $('stat-dropped').textContent = fmtBytes(s.preview_dropped_bytes);
    } catch (e) {
      if (view === v && e instanceof ApiError && e.status === 404) setConn('this seat does not exist');
    }
  }

  async function send() {
    const v = view;
    const box = $('prompt');
    const text = box.value;
    if (!v || !text.trim()) return;
    // Cleared at once: the prompt's own frame can arrive over the stream before the POST answers,
    // and a second Enter must not send it twice. A refusal puts the text back if nothing was typed since.
    box.value = '';
    try {
      const r = await api('POST', `/v1/seats/${enc(v.id)}/messages`, { text });
      if (r && r.queued) { v.queuedTurn = Number(r.turn); setNote(`Queued as turn ${r.turn}; it starts when this one ends.`, 'queued'); }
      else setNote('');
      refreshStats();
    } catch (e) {
      if (view === v && box.value === '') box.value = text;
      setNote(`not sent: ${e.message}`);
    }
  }

  $('prompt-form').addEventListener('submit', (e) => { e.preventDefault(); send(); });
  $('prompt').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
  });
  $('stop').addEventListener('click', async () => {
    const v = view;
    if (!v) return;
    const ends = v.turnEnds;
    try {
      const r = await api('POST', `/v1/seats/${enc(v.id)}/cancel`);
      // The turn may have ended before the answer came back: then there is nothing to wait for.
      if (view === v && v.turnEnds === ends) setNote(r && r.cancelled === false ? 'Nothing to stop.' : 'Stop requested.', 'stop');
      refreshStats();
    } catch (e) {
      setNote(`could not stop: ${e.message}`);
    }
  });

  // ---------------------------------------------------------------- notifications (notify.js), the inbox (inbox.js)

  const { notify, notifyTurnEnd, on: notifyOn } = window.sluiceNotify;
  window.sluiceNotify.init({ status: setHubStatus, role: () => role, name: (id) => seatNames.get(id) });
  const inbox = window.sluiceInbox;

  // ---------------------------------------------------------------- the phone drawer

  const setDrawer = (open) => {
    const was = document.body.classList.contains('drawer-open');
    document.body.classList.toggle('drawer-open', open);
    $('drawer-toggle').setAttribute('aria-expanded', String(open));
    if (open && !was) ($('seat-list').querySelector('a[aria-current]') || $('new-seat')).focus({ preventScroll: true });
    else if (!open && was && $('seats').contains(document.activeElement)) $('drawer-toggle').focus({ preventScroll: true });
  };
  $('drawer-toggle').addEventListener('click', () => setDrawer(!document.body.classList.contains('drawer-open')));
  $('drawer-backdrop').addEventListener('click', () => setDrawer(false));
  $('seat-list').addEventListener('click', (e) => { if (e.target.closest('a')) setDrawer(false); });
  document.addEventListener('keydown', (e) => { if (e.key === 'Escape') setDrawer(false); });

  // ---------------------------------------------------------------- routing and polling

  function route() {
    setDrawer(false);
    const m = /^#\/seat\/(.+)$/.exec(location.hash);
    const id = m ? decodeURIComponent(m[1]) : null;
    if (id && id === currentId) return;
    if (id) { openSeat(id); return; }
    closeSeat();
    document.body.classList.remove('seat-open');
    $('seat-view').hidden = true;
    $('welcome').hidden = false;
    usage.chart();
    for (const li of seatItems.values()) li.firstChild.removeAttribute('aria-current');
  }

  // A hidden tab polls nothing, unless notifications are on: then the seat list, now and then,
  // so a prompt waiting on another seat can be told.
  const HIDDEN_POLL_MS = 10_000;
  let polling = false;
  let lastHiddenPoll = 0;
  async function poll() {
    if (polling) return;
    const hidden = document.visibilityState !== 'visible';
    if (hidden && (!notifyOn() || Date.now() - lastHiddenPoll < HIDDEN_POLL_MS)) return;
    polling = true;
    try {
      if (hidden) { lastHiddenPoll = Date.now(); await refreshSeats(); }
      else await Promise.all([refreshSeats(), refreshStats()]);
    } finally { polling = false; }
  }

  window.addEventListener('hashchange', route);
  document.addEventListener('visibilitychange', poll);
  setInterval(poll, POLL_MS);
  whoami().finally(() => { route(); poll(); });
})();
