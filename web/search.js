// sluice's page: search every session (GET /v1/search). `/` or Ctrl-K (⌘K) opens the box; a hit
// opens its seat and shows the history page that holds it (one request, whatever the distance
// from the newest turn), the match highlighted, until the reader goes back to the conversation.
'use strict';
window.sluiceSearch = (() => {
  const $ = (id) => document.getElementById(id);
  const { api } = window.sluiceApi;
  const { el, buildTurns } = window.sluiceRender;
  const enc = encodeURIComponent;
  const LIMIT = 20;
  const PAGE_TURNS = 3; // the page shown around a hit: its turn and the two before
  const WAIT_MS = 200;  // typing: ask once it pauses

  let asked = 0;       // the answer of an older ask is dropped
  let timer = null;
  let cursor = null;   // the next page of hits
  let lastQuery = '';

  function open() {
    const d = $('search-dialog');
    if (!d.open) d.showModal();
    $('search-input').select();
  }

  const typing = (t) => t && (t.isContentEditable || /^(input|textarea|select)$/i.test(t.tagName));
  document.addEventListener('keydown', (e) => {
    const k = e.key.toLowerCase();
    if ((k === 'k' && (e.ctrlKey || e.metaKey)) || (e.key === '/' && !typing(e.target) && !e.ctrlKey && !e.metaKey && !e.altKey)) {
      e.preventDefault();
      open();
    }
  });
  $('search-open').addEventListener('click', open);
  $('search-input').addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => run(false), WAIT_MS);
  });
  $('search-form').addEventListener('submit', (e) => { e.preventDefault(); clearTimeout(timer); run(false); });
  $('search-more').addEventListener('click', () => run(true));

  /** The snippet's pieces as text, the matches marked (never HTML from the hub). */
  function snippet(pieces) {
    const p = el('p', 'hit-snippet');
    for (const piece of pieces || []) {
      if (typeof piece.match === 'string') p.append(el('mark', '', piece.match));
      else if (typeof piece.text === 'string') p.append(document.createTextNode(piece.text));
    }
    return p;
  }

  function status(text) { $('search-status').textContent = text; }

  async function run(more) {
    const q = $('search-input').value.trim();
    const list = $('search-results');
    if (!more) { list.replaceChildren(); cursor = null; }
    $('search-more').hidden = true;
    if (!q) { status(''); return; }
    const ask = ++asked;
    lastQuery = q;
    status('Searching…');
    let d;
    try {
      d = await api('GET', `/v1/search?q=${enc(q)}&limit=${LIMIT}${more && cursor ? `&cursor=${enc(cursor)}` : ''}`);
    } catch (e) {
      if (ask === asked) status(`Search failed: ${e.message}`);
      return;
    }
    if (ask !== asked) return;
    for (const h of d.hits || []) list.append(hitItem(h, q));
    cursor = d.next_cursor || null;
    $('search-more').hidden = !cursor;
    const n = list.children.length;
    const parts = [n ? `${n}${cursor ? '+' : ''} match${n === 1 ? '' : 'es'}` : 'No match'];
    const ix = d.indexing;
    if (ix && !ix.complete) parts.push(`still indexing: ${ix.done} of ${ix.total} sessions read, the rest may hold more`);
    status(parts.join(' · '));
  }

  function hitItem(h, q) {
    const li = el('li', 'hit');
    const b = el('button', 'hit-open');
    b.type = 'button';
    const head = el('span', 'hit-head');
    head.append(el('span', 'hit-seat', h.name || h.seat));
    const where = [`turn ${h.turn}`];
    if (h.time) where.push(new Date(h.time).toLocaleString());
    head.append(el('span', 'hit-where quiet', where.join(' · ')));
    if (h.archived) {
      const a = el('span', 'hit-archived', 'archived');
      a.title = 'from a conversation this seat reset (kept in its archive)';
      head.append(a);
    }
    b.append(head, snippet(h.snippet));
    b.addEventListener('click', () => show(h, q));
    li.append(b);
    return li;
  }

  // ---------------------------------------------------------------- a hit's page

  /** Opens the hit's seat and shows the history page holding its frame, the match marked. */
  let foundSeat = null; // the seat whose page is shown: another route closes it
  async function show(h, q) {
    $('search-dialog').close();
    foundSeat = h.seat;
    if (location.hash !== `#/seat/${enc(h.seat)}`) location.hash = `#/seat/${enc(h.seat)}`;
    const panel = $('found');
    const body = $('found-turns');
    body.replaceChildren();
    $('found-title').textContent = `Turn ${h.turn}${h.archived ? ' (archived conversation)' : ''}: “${q}”`;
    panel.hidden = false;
    document.body.classList.add('found-open');
    if (h.archived) {
      body.append(el('p', 'quiet', 'This match is in a conversation the seat reset; it is kept in the seat\'s archive, not in its history.'));
      body.append(snippet(h.snippet));
      return;
    }
    if (h.seq == null) {
      // A long session file not yet counted: its seat (opened by the view just shown) numbers
      // its frames from its end until then. Ask again until the hit names its seq.
      const note = el('p', 'quiet', 'Finding this match: the session is long and is being counted…');
      body.append(note);
      const seq = await locate(h, q);
      note.remove();
      if (foundSeat !== h.seat) return; // the reader went elsewhere meanwhile
      if (seq == null) {
        body.append(el('p', 'seat-note', 'could not find that turn yet: the session is still being counted; try again in a moment'));
        body.append(snippet(h.snippet));
        return;
      }
      h = { ...h, seq };
    }
    let d;
    try {
      d = await api('GET', `/v1/seats/${enc(h.seat)}/history?before=${h.seq + 1}&turns=${PAGE_TURNS}`);
    } catch (e) {
      body.append(el('p', 'seat-note', `could not load that turn: ${e.message}`));
      return;
    }
    const frames = [];
    for (const t of d.turns || []) (t.frames || []).forEach((row, i) => frames.push({ seq: t.first + i, row }));
    const v = { id: h.seat, toolNames: new Map(), toolBoxes: new Map(), permissionCards: new Map() };
    body.append(...buildTurns(v, frames, null));
    const hit = body.querySelector(`.frame[data-seq="${h.seq}"]`);
    if (hit) {
      hit.classList.add('found-frame');
      hit.querySelectorAll('details').forEach((x) => { x.open = true; });
      mark(hit, q);
      hit.scrollIntoView({ block: 'center' });
    }
  }

  /** The seq of hit `h` once its seat knows it (asked each second, up to a minute), or null. */
  async function locate(h, q) {
    for (let i = 0; i < 60 && foundSeat === h.seat; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      try {
        const d = await api('GET', `/v1/search?q=${enc(q)}&limit=200&seat=${enc(h.seat)}`);
        const x = (d.hits || []).find((y) => y.index === h.index && !y.archived);
        if (x && x.seq != null) return x.seq;
      } catch (e) { /* asked again */ }
    }
    return null;
  }

  /** Wraps each occurrence of `q` (case ignored) in the text under `root` in <mark>. */
  function mark(root, q) {
    const needle = q.toLowerCase();
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    for (const node of nodes) {
      const text = node.nodeValue;
      const lower = text.toLowerCase();
      let at = lower.indexOf(needle);
      if (at < 0) continue;
      const out = document.createDocumentFragment();
      let from = 0;
      while (at >= 0) {
        out.append(text.slice(from, at), el('mark', 'found-match', text.slice(at, at + q.length)));
        from = at + q.length;
        at = lower.indexOf(needle, from);
      }
      out.append(text.slice(from));
      node.replaceWith(out);
    }
  }

  function closeFound() {
    foundSeat = null;
    $('found').hidden = true;
    $('found-turns').replaceChildren();
    document.body.classList.remove('found-open');
  }
  $('found-close').addEventListener('click', closeFound);
  window.addEventListener('hashchange', () => {
    if (foundSeat !== null && location.hash !== `#/seat/${enc(foundSeat)}`) closeFound();
  });

  return { open, lastQuery: () => lastQuery };
})();
