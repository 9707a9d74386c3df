// A throwaway stand-in for `sluice serve` (same HTTP/SSE contract) for developing the page; never used by CTest.
// Usage: node mock-hub.mjs serve --listen 127.0.0.1:0 --data DIR --provider scripted [--pace-ms N] [--token T]
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2).filter((a) => a !== 'serve');
if (args.includes('--help')) {
  console.log('mock sluice serve: --listen ADDR:PORT --data DIR --provider scripted --pace-ms N --token T');
  process.exit(0);
}
const opt = (name, def) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : def; };
const [host, port] = opt('--listen', '127.0.0.1:8420').split(':');
const dataDir = opt('--data', './sluice-data');
const paceMs = Number(opt('--pace-ms', '150'));
const token = opt('--token', process.env.SLUICE_TOKEN || '');
const gapBytes = Number(process.env.MOCK_GAP_BYTES || 0); // dev aid: a `gap` inside every text preview
const webDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WINDOW_TURNS = 20;

fs.mkdirSync(dataDir, { recursive: true });
const indexFile = path.join(dataDir, 'mock-seats.json');
const seats = new Map();

function loadSeats() {
  if (!fs.existsSync(indexFile)) return;
  for (const s of JSON.parse(fs.readFileSync(indexFile, 'utf8'))) {
    const file = path.join(dataDir, `${s.id}.jsonl`);
    const rows = fs.existsSync(file)
      ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
    seats.set(s.id, newSeat(s.id, s.name, s.epoch, rows));
  }
}
function saveIndex() {
  fs.writeFileSync(indexFile, JSON.stringify([...seats.values()].map((s) => ({ id: s.id, name: s.name, epoch: s.epoch }))));
}
function newSeat(id, name, epoch, rows) {
  const s = { id, name, epoch, rows: [], turnStarts: [], state: 'idle', queue: [], subs: new Set(), partial: null,
    dropped: 0, lastActivity: null, cancel: false, turns: 0 };
  for (const r of rows) addRow(s, r, false);
  return s;
}
const isPrompt = (r) => r.type === 'user' && typeof r.message?.content === 'string';
function addRow(s, row, persist = true) {
  if (isPrompt(row)) { s.turnStarts.push(s.rows.length); s.turns++; }
  s.rows.push(row);
  s.lastActivity = new Date().toISOString();
  if (persist) fs.appendFileSync(path.join(dataDir, `${s.id}.jsonl`), `${JSON.stringify(row)}\n`);
}
function windowFirst(s) {
  const n = s.turnStarts.length;
  return n > WINDOW_TURNS ? s.turnStarts[n - WINDOW_TURNS] : 0;
}
const sse = (res, event, data, id) =>
  res.write(`event: ${event}\n${id != null ? `id: ${id}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
const frameId = (s, seq) => `${s.epoch}:${seq}`;

function publishFrame(s, row) {
  addRow(s, row);
  s.partial = { text: '', thinking: '', tools: [], missing_bytes: 0 }; // what the open turn streamed since its last frame
  const seq = s.rows.length - 1;
  for (const res of s.subs) sse(res, 'frame', { seq, row }, frameId(s, seq));
}
const broadcast = (s, event, data) => { for (const res of s.subs) sse(res, event, data); };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function runTurn(s, text, turn) {
  s.state = 'running';
  s.cancel = false;
  publishFrame(s, { type: 'user', message: { role: 'user', content: text } });
  broadcast(s, 'turn', { turn, state: 'started' });
  const t0 = Date.now();
  const stream = async (kind, whole, extra = {}) => {
    for (let i = 0; i < whole.length; i += 12) {
      if (s.cancel) return false;
      if (gapBytes && kind === 'text' && i === 24) { broadcast(s, 'gap', { dropped_bytes: gapBytes }); s.dropped += gapBytes; }
      const delta = whole.slice(i, i + 12);
      broadcast(s, 'preview', { kind, delta, ...extra });
      if (kind === 'text') s.partial.text += delta;
      else if (kind === 'thinking') s.partial.thinking += delta;
      await sleep(paceMs / 4);
    }
    return !s.cancel;
  };
  const tid = `toolu_${turn}`;
  const thinking = `The person asked: "${text}". I should read the file before answering.`;
  const input = { path: 'README.md' };
  const output = Array.from({ length: 40 }, (_, i) => `line ${i + 1} of README.md: sluice streams agent sessions`).join('\n');
  const answer = `Here is the answer to "${text}": the file has 40 lines.`;
  const steps = [
    async () => await stream('thinking', thinking) &&
      publishFrame(s, { type: 'assistant', message: { role: 'assistant', content: [{ type: 'thinking', thinking }] } }),
    async () => await stream('tool_use_delta', JSON.stringify(input), { tool_id: tid }) &&
      publishFrame(s, { type: 'assistant', message: { role: 'assistant', content: [{ type: 'tool_use', id: tid, name: 'read_file', input }] } }),
    async () => await stream('tool_result_delta', output.slice(0, 200), { tool_id: tid }) &&
      publishFrame(s, { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: tid, content: output, is_error: false }] } }),
    async () => await stream('text', answer) &&
      publishFrame(s, { type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: answer }] } }),
  ];
  let ok = true;
  for (const step of steps) { if ((await step()) === false || s.cancel) { ok = false; break; } await sleep(paceMs); }
  if (!ok && s.partial.text) {
    publishFrame(s, { type: 'assistant', interrupted: true, message: { role: 'assistant', content: [{ type: 'text', text: s.partial.text }] } });
  }
  publishFrame(s, ok
    ? { type: 'result', subtype: 'success', is_error: false, duration_ms: Date.now() - t0, num_turns: 2, result: answer }
    : { type: 'result', subtype: 'error_during_execution', is_error: true, duration_ms: Date.now() - t0, result: 'cancelled' });
  broadcast(s, 'turn', { turn, state: ok ? 'ended' : 'cancelled' });
  s.state = 'idle';
  const next = s.queue.shift();
  if (next) runTurn(s, next.text, next.turn);
}

function send(res, status, body) {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(body));
}
const err = (res, status, code, message) => send(res, status, { error: { code, message } });
async function readJson(req) {
  let b = '';
  for await (const c of req) b += c;
  return b ? JSON.parse(b) : {};
}
const seatJson = (s) => ({ id: s.id, name: s.name, agent: 'builtin', state: s.state, turns: s.turns,
  frames: s.rows.length, last_activity: s.lastActivity });

/** `{partial}` while a turn is open and has streamed something since its last frame. */
function openPartial(s) {
  const p = s.partial;
  return s.state === 'running' && p && (p.text || p.thinking) ? { partial: p } : {};
}

function serveEvents(req, res, s, url) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
  const last = req.headers['last-event-id'] || url.searchParams.get('last_event_id');
  const first = windowFirst(s);
  const m = /^(\d+):(-?\d+)$/.exec(last || '');
  if (m && m[1] === String(s.epoch) && Number(m[2]) >= first - 1 && Number(m[2]) < s.rows.length) {
    sse(res, 'resumed', { seat: s.id, epoch: s.epoch, seq: s.rows.length - 1, recovered: true, ...openPartial(s) });
    for (let q = Number(m[2]) + 1; q < s.rows.length; q++) sse(res, 'frame', { seq: q, row: s.rows[q] }, frameId(s, q));
  } else {
    const cursor = first > 0 ? first : null;
    sse(res, 'connected', { seat: s.id, epoch: s.epoch, seq: s.rows.length - 1, recovered: false,
      window: { first, frames: s.rows.slice(first) }, cursor, ...openPartial(s) }, frameId(s, s.rows.length - 1));
  }
  s.subs.add(res);
  const hb = setInterval(() => res.write(': heartbeat\n\n'), 15000);
  req.on('close', () => { clearInterval(hb); s.subs.delete(res); });
}

function history(res, s, url) {
  const before = Number(url.searchParams.get('before'));
  const n = Math.max(1, Math.min(100, Number(url.searchParams.get('turns')) || 20));
  const starts = s.turnStarts.filter((p) => p < before);
  const take = starts.slice(-n);
  const turns = take.map((p, i) => {
    const end = i + 1 < take.length ? take[i + 1] : before;
    return { first: p, frames: s.rows.slice(p, end) };
  });
  if (take.length && take[0] > 0 && starts.length === take.length) turns.unshift({ first: 0, frames: s.rows.slice(0, take[0]) });
  send(res, 200, { turns, cursor: starts.length > take.length ? take[0] : null });
}

// The page's vendored libraries, from their Debian paths (as web/CMakeLists.txt embeds them).
const VENDOR = {
  'marked.min.js': '/usr/share/javascript/marked/marked.min.js',
  'purify.min.js': '/usr/share/nodejs/dompurify/dist/purify.min.js',
  'highlight.min.js': '/usr/share/javascript/highlight.js/highlight.min.js',
};
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  const p = url.pathname;
  try {
    if (p.startsWith('/vendor/') && VENDOR[p.slice(8)]) {
      res.writeHead(200, { 'Content-Type': TYPES['.js'] });
      return res.end(fs.readFileSync(VENDOR[p.slice(8)]));
    }
    if (!p.startsWith('/v1/')) {
      const f = p === '/' ? 'index.html' : p.slice(1);
      if (!TYPES[path.extname(f)] || f.includes('..') || !fs.existsSync(path.join(webDir, f))) return err(res, 404, 'not_found', 'no such page');
      res.writeHead(200, { 'Content-Type': TYPES[path.extname(f)] });
      return res.end(fs.readFileSync(path.join(webDir, f)));
    }
    const auth = req.headers.authorization === `Bearer ${token}` || url.searchParams.get('access_token') === token;
    if (token && !auth) return err(res, 401, 'unauthorized', 'a bearer token is required');
    const parts = p.split('/').slice(2); // seats, id, sub
    if (parts[0] !== 'seats') return err(res, 404, 'not_found', 'no such route');
    if (parts.length === 1) {
      if (req.method === 'GET') return send(res, 200, { seats: [...seats.values()].map(seatJson) });
      const body = await readJson(req);
      const id = `s${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;
      seats.set(id, newSeat(id, body.name || `seat ${seats.size + 1}`, Date.now() % 1e9, []));
      saveIndex();
      return send(res, 201, { seat: id });
    }
    const s = seats.get(decodeURIComponent(parts[1]));
    if (!s) return err(res, 404, 'not_found', 'no such seat');
    const sub = parts[2] || '';
    if (sub === '' && req.method === 'GET') {
      const first = windowFirst(s);
      const bytes = s.rows.slice(first).reduce((a, r) => a + JSON.stringify(r).length, 0);
      return send(res, 200, { ...seatJson(s), window: { first, frames: s.rows.length - first, bytes },
        preview_dropped_bytes: s.dropped, subscribers: s.subs.size });
    }
    if (sub === 'events') return serveEvents(req, res, s, url);
    if (sub === 'history') return history(res, s, url);
    if (sub === 'messages' && req.method === 'POST') {
      const body = await readJson(req);
      if (typeof body.text !== 'string') return err(res, 400, 'bad_request', 'text is required');
      const turn = s.turns + s.queue.length + (s.state === 'running' ? 0 : 0);
      const queued = s.state === 'running' || s.queue.length > 0;
      if (queued) s.queue.push({ text: body.text, turn }); else runTurn(s, body.text, turn);
      return send(res, 202, { turn, queued });
    }
    if (sub === 'cancel' && req.method === 'POST') { s.cancel = true; return send(res, 200, {}); }
    return err(res, 404, 'not_found', 'no such route');
  } catch (e) {
    return err(res, 400, 'bad_request', String(e.message || e));
  }
});

/** Dev aid (MOCK_BIG_FRAMES=N): a seat "big" whose window holds N frames in 20 turns of mixed rows. */
function makeBigSeat(n) {
  const s = newSeat('big', `big (${n} frames)`, 1, []);
  const perTurn = Math.max(4, Math.floor(n / WINDOW_TURNS));
  for (let i = 0; s.rows.length < n; i++) {
    const k = s.rows.length % perTurn;
    const t = Math.floor(s.rows.length / perTurn);
    if (k === 0) addRow(s, { type: 'user', message: { role: 'user', content: `turn ${t}: go on` } }, false);
    else if (k % 3 === 1) {
      addRow(s, { type: 'assistant', message: { role: 'assistant', content: [
        { type: 'text', text: `Step ${i}: **checking** the \`build\` again.\n\n- one\n- two\n\n\`\`\`sh\nmake -j2 test\n\`\`\`` },
        { type: 'tool_use', id: `t${i}`, name: 'Bash', input: { command: `ls -la src/${i}`, description: 'List files' } }] } }, false);
    } else if (k % 3 === 2) {
      addRow(s, { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i - 1}`,
        content: `total ${i}\n\x1b[34mdrwxr-xr-x\x1b[0m src\n-rw-r--r-- README.md`, is_error: false }] } }, false);
    } else {
      addRow(s, { type: 'system', subtype: 'thinking_tokens', estimated_tokens_delta: 12 }, false);
    }
  }
  seats.set(s.id, s);
}

loadSeats();
if (Number(process.env.MOCK_BIG_FRAMES) > 0) makeBigSeat(Number(process.env.MOCK_BIG_FRAMES));
server.listen(Number(port), host, () => {
  console.log(`listening on http://${host}:${server.address().port}`);
});
process.on('SIGTERM', () => { for (const s of seats.values()) for (const r of s.subs) r.destroy(); server.close(); process.exit(0); });
