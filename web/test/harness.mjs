// The browser tests' shared harness: the real `sluice serve` as a child process (Hub), temp dirs,
// polling, and one headless Chromium per test file (every process it started is killed at exit).
// Env: SLUICE_BINARY (the sluice executable, required), SLUICE_ARTIFACTS_DIR (screenshots; default
// ./build/artifacts), SLUICE_CHROMIUM (default /usr/bin/chromium).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const BINARY = process.env.SLUICE_BINARY;
export const ARTIFACTS = path.resolve(process.env.SLUICE_ARTIFACTS_DIR || 'build/artifacts');
export const CHROMIUM = process.env.SLUICE_CHROMIUM || '/usr/bin/chromium';
export const STEP_MS = 30_000; // the longest any single wait may take
// The stand-in agent CLI speaking Claude Code's stream-json (its "permission" prompt asks can_use_tool).
export const FAKE_AGENT = path.resolve(HERE, '../../tests/support/fake_agent.py');

const children = new Set(); // every process we started, killed at the end whatever happens
const tempDirs = [];
const hubs = []; // every hub started, for their logs
process.on('exit', () => { for (const c of children) { try { c.kill('SIGKILL'); } catch { /* gone */ } } });
// The whole file is bounded: past this, every process is killed and the run fails.
const WATCHDOG_MS = 280_000;
setTimeout(() => {
  console.error(`browser.test: still running after ${WATCHDOG_MS / 1000} s: giving up`);
  process.exit(1); // the 'exit' handler kills the hubs; playwright kills its browser on exit
}, WATCHDOG_MS).unref();

export function tempDir(tag) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `sluice-web-${tag}-`));
  tempDirs.push(d);
  return d;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value; fails with `what` after `ms`. */
export async function until(what, fn, ms = STEP_MS) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try { last = await fn(); if (last) return last; } catch (e) { last = e; }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await sleep(100);
  }
}

/** Scripted-provider pacing flags, if this sluice has them (`--pace-ms`): fast for bulk turns. */
export function paceFlag() {
  const help = spawnSync(BINARY, ['serve', '--help'], { encoding: 'utf8', timeout: 10_000 });
  const m = /(--[a-z-]*pace[a-z-]*)/.exec(`${help.stdout}\n${help.stderr}`);
  return m ? m[1] : null;
}

/** One `sluice serve` process on a data dir; restartable on the same port. */
export class Hub {
  constructor(dataDir, extra = []) {
    this.dataDir = dataDir; this.extra = extra; this.proc = null; this.base = null; this.log = '';
    hubs.push(this);
  }

  async start(listen = '127.0.0.1:0') {
    for (let attempt = 0; ; attempt++) {
      try { return await this.startOnce(listen); } catch (e) {
        if (listen.endsWith(':0') || attempt >= 20) throw e;
        await sleep(250); // the old socket may linger a moment after a restart
      }
    }
  }

  startOnce(listen) {
    // A hub wants a token by default; tests that are not about it run with --no-token.
    const auth = this.extra.includes('--token') || this.extra.includes('--default-token') ? [] : ['--no-token'];
    const extra = this.extra.filter((a) => a !== '--default-token');
    const args = ['serve', '--listen', listen, '--data', this.dataDir, '--provider', 'scripted', ...auth, ...extra];
    const proc = spawn(BINARY, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(proc);
    this.proc = proc;
    proc.on('exit', () => children.delete(proc));
    return new Promise((resolve, reject) => {
      let out = '';
      let settled = false;
      const fail = (e) => { if (settled) return; settled = true; clearTimeout(timer); proc.kill('SIGKILL'); reject(e); };
      const timer = setTimeout(() => fail(new Error(`sluice serve printed no "listening on" line in 15 s: ${this.log.slice(-2000)}`)), 15_000);
      proc.stderr.on('data', (b) => { this.log += b; });
      proc.stdout.on('data', (b) => {
        out += b;
        this.log += b;
        const m = /listening on (http:\/\/[^\s/]+)/.exec(out);
        if (m && !settled) { settled = true; clearTimeout(timer); this.base = m[1]; resolve(m[1]); }
      });
      proc.on('exit', (code, sig) => fail(new Error(`sluice serve exited (${code ?? sig}) before listening: ${this.log.slice(-2000)}`)));
    });
  }

  get port() { return new URL(this.base).port; }

  async stop() {
    const p = this.proc;
    if (!p || p.exitCode != null || p.signalCode != null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    const t = setTimeout(() => p.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(t);
  }

  async api(method, p, body) {
    const res = await fetch(this.base + p, {
      method, headers: { ...(method !== 'GET' ? { 'Content-Type': 'application/json' } : {}), ...(this.token ? { Authorization: `Bearer ${this.token}` } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }
}


/** One persistent headless Chromium context (its first page), page errors collected. */
export async function startBrowser() {
  assert.ok(BINARY, 'SLUICE_BINARY must name the sluice executable');
  assert.ok(fs.existsSync(BINARY), `SLUICE_BINARY ${BINARY} does not exist`);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const context = await chromium.launchPersistentContext(tempDir('profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-quic'],
    viewport: { width: 1100, height: 800 },
    timeout: STEP_MS,
  });
  context.setDefaultTimeout(STEP_MS);
  const page = context.pages()[0] || await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => { errors.push(e.stack || String(e)); });
  return { context, page, errors };
}

/** The end of a test file: a last screenshot, every hub's log (`tag` names them), every process
 *  killed, every temp dir removed. */
export async function finish(tag, context, page) {
  try { if (page) await page.screenshot({ path: path.join(ARTIFACTS, `${tag}-last.png`) }); } catch { /* no page */ }
  hubs.forEach((h, i) => { try { fs.writeFileSync(path.join(ARTIFACTS, `${tag}-hub-${i}.log`), h.log); } catch { /* ignore */ } });
  try { if (context) await context.close(); } catch { /* already gone */ }
  for (const c of [...children]) { try { c.kill('SIGKILL'); } catch { /* gone */ } }
  for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
}

/** A `sluice serve --script FILE` hub; the script is written to a temp file. */
export async function scriptedHub(tag, script, extra = []) {
  const dir = tempDir(tag);
  const file = path.join(dir, 'script.json');
  fs.writeFileSync(file, JSON.stringify(script));
  const h = new Hub(path.join(dir, 'data'), ['--script', file, ...extra]);
  await h.start();
  return h;
}

// ---------------------------------------------------------------- the real Claude Code on a fake API

/** The pinned Claude Code (scripts/install-deps), or null when it is not installed. */
export const CLAUDE = (() => {
  const p = path.resolve(HERE, '../../tools/claude-code/node_modules/.bin/claude');
  return fs.existsSync(p) ? p : null;
})();

/** tests/support/fake_anthropic.py on loopback, answering by `script` (its rules); stopped at exit. */
export async function fakeAnthropic(script) {
  const dir = tempDir('fake-api');
  const file = path.join(dir, 'script.json');
  const portFile = path.join(dir, 'port');
  fs.writeFileSync(file, JSON.stringify(script));
  const proc = spawn('python3', [path.resolve(HERE, '../../tests/support/fake_anthropic.py'), '--script', file,
    '--record', path.join(dir, 'requests.jsonl'), '--port-file', portFile], { stdio: 'ignore' });
  children.add(proc);
  proc.on('exit', () => children.delete(proc));
  const port = await until('the fake API to listen', async () => fs.existsSync(portFile) && fs.readFileSync(portFile, 'utf8').trim());
  return { url: `http://127.0.0.1:${port}`, stop: () => proc.kill('SIGTERM') };
}

/** A wrapper running the pinned claude against `fake` with a throw-away HOME (as
 *  tests/e2e/claude_world.hpp does); its path, for `--claude-bin`. */
export function claudeWrapper(fake) {
  const dir = tempDir('claude-home');
  const home = path.join(dir, 'home');
  fs.mkdirSync(home);
  const file = path.join(dir, 'claude.sh');
  fs.writeFileSync(file, `#!/bin/sh\nexport HOME='${home}' ANTHROPIC_BASE_URL='${fake.url}' ANTHROPIC_API_KEY=sk-ant-test-dummy` +
    ' CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1\n' +
    'unset ANTHROPIC_AUTH_TOKEN CLAUDECODE CLAUDE_CODE_ENTRYPOINT\n' +
    `exec '${CLAUDE}' "$@"\n`, { mode: 0o755 });
  return file;
}

/** A stand-in claude (tests/support/fake_agent.py): fast, answers settings changes; its path. */
export function fakeClaude() {
  const file = path.join(tempDir('fake-claude'), 'claude');
  fs.writeFileSync(file, `#!/bin/sh\nexec python3 '${FAKE_AGENT}' "$@"\n`, { mode: 0o755 });
  return file;
}
