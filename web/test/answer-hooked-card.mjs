// Answers a hooked permission card from the page, in headless Chromium: the helper that
// tests/e2e/hooks_pty_test.py runs while a real Claude Code waits in a terminal (issue 26).
// Usage: node answer-hooked-card.mjs BASE TOKEN SEAT SCREENSHOT_DIR
// Opens the page with the owner's token, the seat, waits for its hooked card, checks what the card
// says, clicks Allow, and waits for the card to read "Allowed · on the page". Prints one JSON
// line ({title, input, note, status}) and exits 0, or prints why and exits 1. Bounded: 90 s.
import path from 'node:path';
import { finish, startBrowser, until } from './harness.mjs';

const [base, token, seat, shots] = process.argv.slice(2);
setTimeout(() => { console.error('answer-hooked-card: still running after 90 s'); process.exit(1); }, 90_000).unref();

let context;
let page;
let errors = [];
try {
  ({ context, page, errors } = await startBrowser());
  await page.goto(`${base}/#token=${encodeURIComponent(token)}`); // kept for the tab
  await page.goto(`${base}/#/seat/${encodeURIComponent(seat)}`);
  await until('the stream to be live', async () => (await page.locator('#conn-state').textContent()) === 'live');
  const card = page.locator('.permission-card');
  await until('the hooked card', async () => (await card.count()) === 1
    && (await card.getByRole('button', { name: 'Allow' }).count()) === 1);
  const seen = {
    title: (await card.locator('.permission-title').textContent()).trim(),
    input: (await card.locator('.permission-input').textContent()).trim(),
    note: (await card.locator('.permission-reason').allTextContents()).join(' ').trim(),
  };
  if (shots) await page.screenshot({ path: path.join(shots, 'web-hooked-card.png') });
  await card.getByRole('button', { name: 'Allow' }).click();
  await until('the card to read allowed on the page', async () =>
    /^Allowed · on the page$/.test((await card.locator('.permission-status').textContent()).trim()));
  seen.status = (await card.locator('.permission-status').textContent()).trim();
  // The frames that followed (the command's output, claude's reply) go after the card, not into it.
  await until('the reply after the card', async () => /The command finished/.test(await page.locator('#turns').textContent()));
  seen.frames_in_card = await card.locator('.frame').count();
  if (shots) await page.screenshot({ path: path.join(shots, 'web-hooked-card-allowed.png') });
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  console.log(JSON.stringify(seen));
  await finish('hooked-card', context, null);
  process.exit(0);
} catch (e) {
  let shown = '';
  try {
    shown = ` (the cards: ${JSON.stringify(await page.locator('.permission-card').allTextContents())})`;
    if (shots) await page.screenshot({ path: path.join(shots, 'web-hooked-card-failed.png') });
  } catch { /* no page */ }
  console.error(`answer-hooked-card: ${e.message}${shown}${errors.length ? ` (page errors: ${errors.join('; ')})` : ''}`);
  await finish('hooked-card', context, null);
  process.exit(1);
}
