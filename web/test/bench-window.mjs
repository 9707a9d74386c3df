// Measures how long the page takes to render a big window (default 4,000 frames) in headless Chromium,
// and how smoothly it scrolls, against the mock hub's "big" seat. Dev aid, not part of CTest.
// Usage: node web/test/bench-window.mjs [frames]   (env SLUICE_CHROMIUM, default /usr/bin/chromium)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const FRAMES = Number(process.argv[2] || 4000);
const here = path.dirname(fileURLToPath(import.meta.url));
const data = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-window-'));
const hub = spawn(process.execPath, [path.join(here, 'mock-hub.mjs'), 'serve', '--listen', '127.0.0.1:0', '--data', data],
  { env: { ...process.env, MOCK_BIG_FRAMES: String(FRAMES) }, stdio: ['ignore', 'pipe', 'inherit'] });
const base = await new Promise((resolve, reject) => {
  let out = '';
  hub.stdout.on('data', (b) => { out += b; const m = /listening on (http:\/\/\S+)/.exec(out); if (m) resolve(m[1]); });
  hub.on('exit', (c) => reject(new Error(`mock hub exited ${c}`)));
});
const browser = await chromium.launch({ executablePath: process.env.SLUICE_CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-gpu'] });
try {
  const runs = [];
  let page;
  for (let run = 0; run < 4; run++) {
    if (page) await page.close();
    page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    const t0 = Date.now();
    await page.goto(`${base}/#/seat/big`);
    // Rendered = the window's frames are in the document and the browser has painted after that.
    await page.waitForFunction((n) => window.sluiceTimings && window.sluiceTimings.frames === n, FRAMES, { polling: 20, timeout: 60_000 });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
    runs.push({ wall_ms: Date.now() - t0, ...(await page.evaluate(() => window.sluiceTimings)) });
  }
  // Scrolling: 40 steps from the bottom to the top, the longest and median frame between steps.
  const scroll = await page.evaluate(async () => {
    const c = document.getElementById('conversation');
    const gaps = [];
    const step = c.scrollHeight / 40;
    for (let i = 0; i < 40; i++) {
      const t = performance.now();
      c.scrollTop = c.scrollHeight - (i + 1) * step;
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      gaps.push(performance.now() - t);
    }
    gaps.sort((a, b) => a - b);
    return { median_ms: Math.round(gaps[20]), max_ms: Math.round(gaps[39]) };
  });
  console.log(JSON.stringify({ frames: FRAMES, runs, scroll_two_frames: scroll }, null, 1));
} finally {
  await browser.close();
  hub.kill();
  fs.rmSync(data, { recursive: true, force: true });
}
