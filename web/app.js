// sluice's page logic: the seat list, one seat's live conversation over EventSource, paging, prompt, token.
'use strict';
(() => {
  const POLL_MS = 2000;             // seat list and stats refresh while the tab is visible
  const PAGE_TURNS = 20;            // turns per "Load earlier turns" page (the window is 20 too)
  const PREVIEW_KEEP_CHARS = 65536; // a live preview keeps its tail only; the frame replaces it
  const RECONNECT_MS = 2000;        // our own retry when the browser gives an EventSource up
  const TOKEN_KEY = 'sluice.token';

  const $ = (id) => document.getElementById(id);
  const { el, fmtBytes, fmtAgo, isPrompt, buildTurns } = window.sluiceRender;
  const enc = encodeURIComponent;

  // ---------------------------------------------------------------- token and API

  let token = sessionStorage.getItem(TOKEN_KEY) || '';
  let tokenAsk = null;

  /** Asks for the bearer token once; concurrent callers share the one form. */
  function askToken() {
    if (tokenAsk) return tokenAsk;
    tokenAsk = new Promise((resolve) => {
      const dlg = $('token-dialog'), input = $('token-input');
      input.value = '';
      dlg.addEventListener('close', () => {
        const t = input.value.trim();
        if (t) { token = t; sessionStorage.setItem(TOKEN_KEY, t); }
        tokenAsk = null;
        resolve(t);
      }, { once: true });
      dlg.showModal();
      input.focus();
    });
    return tokenAsk;
  }

  class ApiError extends Error {
    constructor(status, code, message) { super(message); this.status = status; this.code = code; }
  }

  async function api(method, path, body) {
    for (;;) {
      const headers = {};
      if (token) headers.Authorization = `Bearer ${token}`;
      if (body !== undefined) headers['Content-Type'] = 'application/json';
      const res = await fetch(path, {
        method, headers, cache: 'no-store',
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (res.status === 401) {
        if (!(await askToken())) throw new ApiError(401, 'unauthorized', 'a token is required');
        continue;
      }
      const text = await res.text();
      let data = null;
      try { data = text ? JSON.parse(text) : null; } catch { data = null; }
      if (!res.ok) {
        const e = (data && data.error) || {};
        throw new ApiError(res.status, e.code || String(res.status), e.message || res.statusText);
      }
      return data;
    }
  }

  // ---------------------------------------------------------------- seat list

  const seatItems = new Map(); // id -> <li>
  let currentId = null;

  function setHubStatus(text) { $('hub-status').textContent = text; }

  function renderSeats(seats) {
    const list = $('seat-list');
    const seen = new Set();
    seats.forEach((s, i) => {
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
      if (list.children[i] !== li) list.insertBefore(li, list.children[i] || null);
      const a = li.firstChild;
      a.children[0].textContent = s.name || s.id;
      a.children[1].textContent = s.state;
      a.children[1].dataset.state = s.state;
      a.children[2].textContent = fmtAgo(s.last_activity);
      a.children[2].title = s.last_activity || '';
      if (s.id === currentId) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
      li.dataset.id = s.id;
    });
    for (const [id, li] of seatItems) if (!seen.has(id)) { li.remove(); seatItems.delete(id); }
    $('seat-list-empty').hidden = seats.length > 0;
  }

  async function refreshSeats() {
    try {
      const d = await api('GET', '/v1/seats');
      renderSeats(d.seats || []);
      setHubStatus('');
    } catch (e) {
      setHubStatus(e instanceof ApiError ? `hub: ${e.message}` : 'hub unreachable — retrying');
    }
  }

  $('new-seat').addEventListener('click', async () => {
    const b = $('new-seat');
    b.disabled = true;
    try {
      const d = await api('POST', '/v1/seats', {});
      await refreshSeats();
      location.hash = `#/seat/${enc(d.seat)}`;
    } catch (e) {
      setHubStatus(`could not create a seat: ${e.message}`);
    } finally {
      b.disabled = false;
    }
  });

  // ---------------------------------------------------------------- the seat view

  let view = null; // the open seat: {id, es, epoch, firstSeq, nextSeq, cursor, gen, toolNames, ...}

  function atBottom() {
    const c = $('conversation');
    return c.scrollHeight - c.scrollTop - c.clientHeight < 48;
  }
  function keepBottom(wasAtBottom) {
    if (wasAtBottom) { const c = $('conversation'); c.scrollTop = c.scrollHeight; }
  }

  function setConn(text) { $('conn-state').textContent = text; }

  function setSeatState(state) {
    const s = $('seat-state');
    s.textContent = state || '';
    s.dataset.state = state || '';
    $('stop').disabled = state === 'idle';
  }

  function updatePaging(v) {
    $('load-earlier').hidden = v.cursor == null;
    $('history-start').hidden = !(v.cursor == null && v.nextSeq != null);
  }

  function clearConversation(v) {
    $('turns').replaceChildren();
    $('live').replaceChildren();
    v.toolNames.clear();
    v.firstSeq = null; // the oldest seq shown
    v.nextSeq = null;  // the seq the next live frame must have; null until `connected`
    v.cursor = null;
    v.gen++;
  }

  function openSeat(id) {
    closeSeat();
    currentId = id;
    view = { id, es: null, epoch: null, firstSeq: null, nextSeq: null, cursor: null, gen: 0,
      toolNames: new Map(), resumeFrom: null, retry: null, loading: false };
    document.body.classList.add('seat-open');
    $('seat-view').hidden = false;
    $('welcome').hidden = true;
    $('seat-title').textContent = id;
    setSeatState('');
    setConn('connecting…');
    for (const k of ['stat-frames', 'stat-window', 'stat-dropped']) $(k).textContent = '–';
    $('prompt-note').textContent = '';
    clearConversation(view);
    updatePaging(view);
    connect(view);
    refreshStats();
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
    if (token) q.set('access_token', token);
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
    on('preview', onPreview);
    on('gap', onGap);
    on('turn', onTurn);
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
    $('turns').append(...buildTurns(v, frames, null));
    updatePaging(v);
    if (d.state) setSeatState(d.state);
    setConn('live');
    keepBottom(stick);
  }

  function onResumed(v, d) {
    if (String(d.epoch) !== v.epoch) { restartFresh(v, 'conversation replaced — reloading'); return; }
    $('live').replaceChildren(); // previews from before the drop are stale; the frames follow
    if (d.state) setSeatState(d.state);
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
    const sections = buildTurns(v, [{ seq, row: d.row }], isPrompt(d.row) ? null : turns.lastElementChild);
    turns.append(...sections);
    v.nextSeq = seq + 1;
    clearPreviewsFor(d.row);
    keepBottom(stick);
  }

  // ---------------------------------------------------------------- previews and gaps

  function clearPreviewsFor(row) {
    const live = $('live');
    if (!live.firstChild) return;
    const drop = (kind, id) => live.querySelectorAll(`.preview[data-kind="${kind}"]`).forEach((p) => {
      if (!id || !p.dataset.tool || p.dataset.tool === id) p.remove();
    });
    const content = row && row.message && row.message.content;
    if (row && row.type === 'assistant' && Array.isArray(content)) {
      for (const b of content) {
        if (b.type === 'text') drop('text');
        else if (b.type === 'thinking' || b.type === 'redacted_thinking') drop('thinking');
        else if (b.type === 'tool_use') drop('tool_use_delta', b.id);
      }
    } else if (row && row.type === 'user' && Array.isArray(content)) {
      for (const b of content) if (b.type === 'tool_result') drop('tool_result_delta', b.tool_use_id);
    } else if (row && row.type === 'result') {
      live.replaceChildren();
    }
    if (!live.querySelector('.preview')) live.replaceChildren(); // gap markers go with their previews
  }

  function onPreview(v, d) {
    const stick = atBottom();
    const live = $('live');
    const kind = String(d.kind || 'text');
    const tool = d.tool_id ? String(d.tool_id) : '';
    let p = live.lastElementChild;
    if (!p || !p.classList.contains('preview') || p.dataset.kind !== kind || (p.dataset.tool || '') !== tool) {
      p = el('div', `preview preview-${kind}`);
      p.dataset.kind = kind;
      if (tool) p.dataset.tool = tool;
      const label = { thinking: 'Thinking…', tool_use_delta: 'Tool call…', tool_result_delta: 'Tool output…' }[kind];
      if (label) p.append(el('div', 'label', label));
      p.append(el(kind === 'text' || kind === 'thinking' ? 'div' : 'pre', 'body'));
      live.append(p);
    }
    const body = p.lastElementChild;
    const t = body.textContent + (d.delta || '');
    body.textContent = t.length > PREVIEW_KEEP_CHARS ? `…${t.slice(-PREVIEW_KEEP_CHARS)}` : t;
    keepBottom(stick);
  }

  function onGap(v, d) {
    const stick = atBottom();
    const g = el('div', 'gap', `preview skipped ${fmtBytes(d.dropped_bytes)} — the final message follows`);
    g.setAttribute('role', 'note');
    $('live').append(g);
    keepBottom(stick);
  }

  function onTurn(v, d) {
    if (d.state === 'started') setSeatState('running');
    else {
      $('live').replaceChildren();
      if (d.state === 'cancelled' || d.state === 'failed') {
        const last = $('turns').lastElementChild;
        if (last && !last.querySelector(`.turn-note[data-turn="${d.turn}"]`)) {
          const n = el('div', `turn-note ${d.state}`, d.state === 'cancelled' ? 'Turn cancelled' : 'Turn failed');
          n.dataset.turn = String(d.turn);
          last.append(n);
        }
      }
    }
    refreshStats();
  }

  // ---------------------------------------------------------------- paging back

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
      const before = c.scrollHeight;
      const turns = $('turns');
      turns.prepend(...buildTurns(v, frames, null));
      if (frames.length) v.firstSeq = frames[0].seq;
      v.cursor = d.cursor ?? null;
      c.scrollTop += c.scrollHeight - before;
      updatePaging(v);
    } catch (e) {
      $('prompt-note').textContent = `could not load earlier turns: ${e.message}`;
    } finally {
      v.loading = false;
      b.disabled = false;
      b.textContent = 'Load earlier turns';
      if (!b.hidden) b.focus();
    }
  });

  // ---------------------------------------------------------------- stats, prompt, stop

  async function refreshStats() {
    const v = view;
    if (!v) return;
    try {
      const s = await api('GET', `/v1/seats/${enc(v.id)}`);
      if (view !== v) return;
      $('seat-title').textContent = s.name || s.id;
      setSeatState(s.state);
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
    const note = $('prompt-note');
    try {
      const r = await api('POST', `/v1/seats/${enc(v.id)}/messages`, { text });
      box.value = '';
      note.textContent = r && r.queued ? `Queued as turn ${r.turn}; it starts when this one ends.` : '';
      refreshStats();
    } catch (e) {
      note.textContent = `not sent: ${e.message}`;
    }
  }

  $('prompt-form').addEventListener('submit', (e) => { e.preventDefault(); send(); });
  $('prompt').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
  });
  $('stop').addEventListener('click', async () => {
    if (!view) return;
    try {
      await api('POST', `/v1/seats/${enc(view.id)}/cancel`);
      $('prompt-note').textContent = 'Stop requested.';
      refreshStats();
    } catch (e) {
      $('prompt-note').textContent = `could not stop: ${e.message}`;
    }
  });

  // ---------------------------------------------------------------- routing and polling

  function route() {
    const m = /^#\/seat\/(.+)$/.exec(location.hash);
    const id = m ? decodeURIComponent(m[1]) : null;
    if (id && id === currentId) return;
    if (id) { openSeat(id); return; }
    closeSeat();
    document.body.classList.remove('seat-open');
    $('seat-view').hidden = true;
    $('welcome').hidden = false;
    for (const li of seatItems.values()) li.firstChild.removeAttribute('aria-current');
  }

  let polling = false;
  async function poll() {
    if (polling || document.visibilityState !== 'visible') return;
    polling = true;
    try { await Promise.all([refreshSeats(), refreshStats()]); } finally { polling = false; }
  }

  window.addEventListener('hashchange', route);
  document.addEventListener('visibilitychange', poll);
  setInterval(poll, POLL_MS);
  route();
  poll();
})();
