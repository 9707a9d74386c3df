// sluice's page: what the sessions cost (GET /v1/usage) — the open seat's total in its header,
// each group's total in the seat list, and the last 30 days, a bar a day, on the home view.
// Cost is the hub's figure: where it knows no price for a model it says so, never guesses.
'use strict';
window.sluiceUsage = (() => {
  const $ = (id) => document.getElementById(id);
  const { api } = window.sluiceApi;
  const enc = encodeURIComponent;
  const SVG = 'http://www.w3.org/2000/svg';
  const LIST_EVERY_MS = 15_000; // the list's totals: at most this often, or when a turn ended
  const DAYS = 30;

  const fmtCost = (c) => (c > 0 && c < 0.01 ? '<$0.01' : `$${c.toFixed(2)}`);
  function fmtTokens(n) {
    if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
    if (n >= 1e3) return `${(n / 1e3).toFixed(n >= 1e4 ? 0 : 1)}k`;
    return String(n);
  }

  /** Sums as one short line: "$1.45 · 442 tokens", or tokens saying the cost is unknown (the hub
   *  gives no cost where any of the tokens has no known price: never a partial figure). */
  function line(sums) {
    if (!sums || !sums.total_tokens) return '';
    const tokens = `${fmtTokens(sums.total_tokens)} tokens`;
    return sums.cost_usd == null ? `${tokens} · cost unknown` : `${fmtCost(sums.cost_usd)} · ${tokens}`;
  }

  /** The detail behind a line, for its tooltip. */
  function detail(sums) {
    if (!sums || !sums.total_tokens) return '';
    const parts = [`${sums.input_tokens} input`, `${sums.output_tokens} output`,
      `${sums.cache_read_tokens} cache read`, `${sums.cache_write_tokens} cache write tokens`];
    let text = parts.join(', ');
    if (sums.unpriced_tokens) {
      text += `; no price known for ${(sums.unpriced_models || []).join(', ')} ` +
        `(${sums.unpriced_tokens} tokens not in the cost)`;
    }
    return text;
  }

  // ---------------------------------------------------------------- the open seat's header

  let seatId = null;
  let seatAsked = 0; // the answer of an older ask is dropped

  /** Shows seat `id`'s total in its header (null: no seat open). */
  async function seat(id) {
    seatId = id;
    const out = $('seat-usage');
    const ask = ++seatAsked;
    if (id !== null && out.dataset.seat !== id) {
      out.textContent = '';
      out.title = '';
    }
    out.dataset.seat = id || '';
    if (id === null) return;
    let d;
    let s;
    try {
      [d, s] = await Promise.all([api('GET', `/v1/usage?group=seat&seat=${enc(id)}`),
        api('GET', `/v1/seats/${enc(id)}`)]);
    } catch { return; } // the seat list says when the hub is unreachable
    if (ask !== seatAsked) return;
    // A hosted seat's budget: what it spent of it (its turns as the hub counted them).
    const budget = s && typeof s.budget_usd === 'number' ? s.budget_usd : null;
    const parts = [line(d.total)].filter(Boolean);
    if (budget != null) parts.push(`${fmtCost(s.spent_usd || 0)} of its ${fmtCost(budget)} budget`);
    out.textContent = parts.join(' · ');
    out.title = detail(d.total);
    out.classList.toggle('spent', budget != null && (s.spent_usd || 0) >= budget);
  }

  // ---------------------------------------------------------------- the seat list's groups

  let listAt = 0;
  let listBusy = false;
  let members = new Map(); // group key -> seat ids, as the list shows them

  /** The list changed (`groups`: group key -> seat ids): totals are read again now and then. */
  async function list(groups, now = false) {
    members = groups;
    if (listBusy || (!now && Date.now() - listAt < LIST_EVERY_MS)) {
      paintGroups(null);
      return;
    }
    listBusy = true;
    listAt = Date.now();
    try {
      const d = await api('GET', '/v1/usage?group=seat');
      paintGroups(new Map((d.rows || []).map((r) => [r.key, r])));
    } catch { /* kept as they were */ } finally { listBusy = false; }
  }

  let bySeat = new Map();
  function paintGroups(rows) {
    if (rows) bySeat = rows;
    for (const g of document.querySelectorAll('#seat-list li.group')) {
      const ids = members.get(g.dataset.group) || [];
      const sum = { total_tokens: 0, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0,
        cache_write_tokens: 0, cost_usd: 0, unpriced_tokens: 0, unpriced_models: [] };
      for (const id of ids) {
        const r = bySeat.get(id);
        if (!r) continue;
        for (const k of ['total_tokens', 'input_tokens', 'output_tokens', 'cache_read_tokens',
          'cache_write_tokens', 'unpriced_tokens']) sum[k] += r[k] || 0;
        if (r.cost_usd == null) sum.cost_usd = null;
        else if (sum.cost_usd != null) sum.cost_usd += r.cost_usd;
        for (const m of r.unpriced_models || []) if (!sum.unpriced_models.includes(m)) sum.unpriced_models.push(m);
      }
      let span = g.querySelector('.group-cost');
      if (!span) {
        span = document.createElement('span');
        span.className = 'group-cost quiet';
        g.lastChild.before(span);
      }
      // The list is narrow: the cost where there is one, else the tokens.
      span.textContent = !sum.total_tokens ? '' : sum.cost_usd == null
        ? `${fmtTokens(sum.total_tokens)} tok` : fmtCost(sum.cost_usd);
      span.title = detail(sum);
    }
  }

  // ---------------------------------------------------------------- the last 30 days

  const dayOf = (t) => new Date(t).toISOString().slice(0, 10);

  /** Draws the home view's chart: one bar a day (UTC) for the last 30 days, cost where every
   *  model of the period has a price, else tokens. */
  async function chart() {
    const box = $('usage-days');
    if (!box) return; // the home view is not on the page (replaced before this ran)
    const today = Date.now();
    const since = dayOf(today - (DAYS - 1) * 86_400_000);
    let d;
    try {
      d = await api('GET', `/v1/usage?group=day&since=${since}`);
    } catch { box.hidden = true; return; }
    // The answer may come after the page began to go away (a navigation): nothing to draw into.
    const total = $('usage-days-total');
    const chartBox = $('usage-days-chart');
    if (!box.isConnected || !total || !chartBox) return;
    const rows = new Map((d.rows || []).map((r) => [r.key, r]));
    const days = [];
    for (let i = DAYS - 1; i >= 0; i--) days.push(dayOf(today - i * 86_400_000));
    const byCost = d.total && d.total.cost_usd != null;
    const value = (r) => (!r ? 0 : byCost ? r.cost_usd || 0 : r.total_tokens || 0);
    const top = Math.max(0, ...days.map((k) => value(rows.get(k))));
    box.hidden = false;
    total.textContent = line(d.total) || 'Nothing used in these days.';
    total.title = detail(d.total);
    const W = 300;
    const H = 80;
    const step = W / DAYS;
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', `${byCost ? 'Cost' : 'Tokens'} per day, the last ${DAYS} days`);
    days.forEach((k, i) => {
      const r = rows.get(k);
      const v = value(r);
      const h = v > 0 && top > 0 ? Math.max(2, (v / top) * (H - 2)) : 1; // an empty day: a baseline
      const bar = document.createElementNS(SVG, 'rect');
      bar.setAttribute('x', (i * step + 0.5).toFixed(2));
      bar.setAttribute('y', (H - h).toFixed(2));
      bar.setAttribute('width', (step - 1).toFixed(2));
      bar.setAttribute('height', h.toFixed(2));
      bar.setAttribute('class', v > 0 ? 'day-bar' : 'day-bar empty');
      bar.dataset.day = k;
      const title = document.createElementNS(SVG, 'title');
      title.textContent = `${k}: ${r ? line(r) : 'nothing'}`;
      bar.append(title);
      svg.append(bar);
    });
    chartBox.replaceChildren(svg);
  }

  /** A turn of seat `id` ended: its figures moved. */
  function turnEnded(id) {
    if (id === seatId) seat(id);
    list(members, true);
  }

  return { seat, list, chart, turnEnded, line };
})();
