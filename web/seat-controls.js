// sluice's page: the open seat's controls in its header — rename, settings (a claude seat's
// permission mode and model), reset and delete (each confirmed), and Continue for a read-only
// Claude Code session. Owners only (a viewer's page hides them); every refusal of the hub is shown.
'use strict';
window.sluiceSeatControls = (() => {
  const $ = (id) => document.getElementById(id);
  const { api } = window.sluiceApi;
  const enc = encodeURIComponent;
  // Claude Code's modes, when the hub does not list them (GET /v1/agents).
  const MODES = ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk', 'auto'];

  let app = null;  // {refresh(): Promise, go(hash), title(text)}: what app.js lends
  let seat = null; // the open seat as GET /v1/seats/{id} last answered
  let renaming = false;

  /** A refusal (or a note) under the header; '' hides it. */
  function note(text) {
    $('seat-note').textContent = text;
    $('seat-note').hidden = !text;
  }

  const foreign = (s) => !!(s && s.source);
  /** Agents the hub hosts as CLIs with a permission setting and a model a person may change. */
  const hostsCli = (agent) => agent === 'claude' || agent === 'codex';

  /** Shows the controls that fit seat `s` (a hosted seat, a claude one, a read-only session). */
  function update(s) {
    seat = s;
    const local = foreign(s);
    $('rename-seat').hidden = local || renaming;
    $('settings-seat').hidden = local || !hostsCli(s.agent);
    $('reset-seat').hidden = local;
    $('delete-seat').hidden = local;
    // A Claude Code session continues as a claude seat, a Codex one as a codex seat.
    $('continue-offer').hidden = !local || !hostsCli(s.source);
    document.body.classList.toggle('seat-foreign', local);
    // A hosted CLI's settings; a codex seat also names its agent (a claude seat's is the default).
    const settings = hostsCli(s.agent) && !local
      ? [s.agent === 'codex' ? 'Codex' : '', s.permission_mode || (s.agent === 'codex' ? 'default policy' : 'default mode'), s.model]
      : s.agent === 'acp' ? ['ACP', s.cmd] : [s.model];
    $('seat-settings-summary').textContent = settings.filter(Boolean).join(' · ');
  }

  /** A seat was opened: nothing of the previous one stays. */
  function reset() {
    seat = null;
    endRename();
    note('');
    $('continue-note').textContent = '';
    for (const id of ['rename-seat', 'settings-seat', 'reset-seat', 'delete-seat']) $(id).hidden = true;
    $('continue-offer').hidden = true;
    $('seat-settings-summary').textContent = '';
    document.body.classList.remove('seat-foreign');
  }

  // ---------------------------------------------------------------- rename

  function endRename() {
    renaming = false;
    $('rename-form').hidden = true;
    $('seat-title').hidden = false;
    $('rename-seat').hidden = !seat || foreign(seat);
  }
  $('rename-seat').addEventListener('click', () => {
    if (!seat) return;
    renaming = true;
    note('');
    $('rename-input').value = seat.name || seat.id;
    $('seat-title').hidden = true;
    $('rename-seat').hidden = true;
    $('rename-form').hidden = false;
    $('rename-input').select();
    $('rename-input').focus();
  });
  $('rename-cancel').addEventListener('click', endRename);
  $('rename-input').addEventListener('keydown', (e) => { if (e.key === 'Escape') endRename(); });
  $('rename-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const name = $('rename-input').value.trim();
    const s = seat;
    if (!name || !s) { endRename(); return; }
    try {
      const d = await api('PATCH', `/v1/seats/${enc(s.id)}`, { name });
      if (seat !== s) return;
      app.title(d.name || s.id);
      endRename();
      await app.refresh();
    } catch (err) {
      note(`Could not rename the seat: ${err.message}`); // the form stays, with what was typed
    }
  });

  // ---------------------------------------------------------------- settings: permission mode and model

  let modes = MODES;
  let policies = ['default', 'untrusted', 'on-request', 'never'];
  /** The permission modes (Claude Code) and approval policies (Codex) this hub names (GET /v1/agents). */
  async function knownModes() {
    try {
      const d = await api('GET', '/v1/agents');
      if (Array.isArray(d.permission_modes) && d.permission_modes.length) modes = d.permission_modes;
      if (Array.isArray(d.approval_policies) && d.approval_policies.length) policies = ['default', ...d.approval_policies];
    } catch { /* an older hub: Claude Code's own list */ }
    return modes;
  }

  /** Fills `select` with agent `agent`'s choices: Codex's approval policies, else Claude Code's modes. */
  function fillModes(select, current, agent) {
    select.replaceChildren();
    const list = agent === 'codex' ? policies : modes;
    for (const m of list) {
      const o = document.createElement('option');
      o.value = m;
      o.textContent = m;
      select.append(o);
    }
    select.value = list.includes(current) ? current : 'default';
  }

  $('settings-seat').addEventListener('click', async () => {
    if (!seat) return;
    await knownModes();
    fillModes($('settings-mode'), seat.permission_mode || 'default', seat.agent);
    $('settings-model').value = seat.model || '';
    $('settings-note').textContent = '';
    $('settings-dialog').showModal();
    $('settings-mode').focus();
  });
  $('settings-cancel').addEventListener('click', () => $('settings-dialog').close());
  $('settings-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const s = seat;
    if (!s) return;
    const body = {};
    const mode = $('settings-mode').value;
    const model = $('settings-model').value.trim();
    if (mode !== (s.permission_mode || 'default')) body.permission_mode = mode;
    if (model !== (s.model || '')) body.model = model || 'default';
    if (!Object.keys(body).length) { $('settings-dialog').close(); return; }
    const b = $('settings-save');
    b.disabled = true;
    $('settings-note').textContent = 'Asking the agent…';
    try {
      const d = await api('PATCH', `/v1/seats/${enc(s.id)}`, body);
      $('settings-dialog').close();
      if (seat && seat.id === d.id) update(d);
      await app.refresh();
    } catch (err) {
      // claude's own words (409), or the hub's (400): the dialog stays open with them.
      $('settings-note').textContent = `Not changed: ${err.message}`;
    } finally {
      b.disabled = false;
    }
  });

  // ---------------------------------------------------------------- reset and delete, confirmed

  let confirmAction = null;
  /** Asks before `action` (async; its refusal is shown in the dialog, which stays open). */
  function confirm(title, text, ok, action) {
    $('confirm-title').textContent = title;
    $('confirm-text').textContent = text;
    $('confirm-ok').textContent = ok;
    $('confirm-note').textContent = '';
    confirmAction = action;
    $('confirm-dialog').showModal();
    $('confirm-cancel').focus();
  }
  $('confirm-cancel').addEventListener('click', () => $('confirm-dialog').close());
  $('confirm-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!confirmAction) return;
    const b = $('confirm-ok');
    b.disabled = true;
    try {
      await confirmAction();
      $('confirm-dialog').close();
    } catch (err) {
      $('confirm-note').textContent = `Refused: ${err.message}`;
    } finally {
      b.disabled = false;
    }
  });

  $('reset-seat').addEventListener('click', () => {
    const s = seat;
    if (!s) return;
    confirm('Start over?', `The conversation of "${s.name || s.id}" is archived and a new, empty one starts (a claude seat forgets its session). Stop a running turn first.`,
      'Reset', async () => {
        await api('POST', `/v1/seats/${enc(s.id)}/reset`, {});
        await app.refresh();
      });
  });

  $('delete-seat').addEventListener('click', () => {
    const s = seat;
    if (!s) return;
    confirm('Delete this seat?', `"${s.name || s.id}" is stopped and removed from the list; its folder is moved to the data dir's archive/.`,
      'Delete', async () => {
        await api('DELETE', `/v1/seats/${enc(s.id)}`);
        app.go('#/');
        await app.refresh();
      });
  });

  // ---------------------------------------------------------------- continue a read-only session

  $('continue-seat').addEventListener('click', async () => {
    const s = seat;
    if (!s) return;
    const b = $('continue-seat');
    b.disabled = true;
    $('continue-note').textContent = '';
    try {
      const d = await api('POST', `/v1/seats/${enc(s.id)}/continue`, {});
      await app.refresh();
      app.go(`#/seat/${enc(d.seat)}`); // the same view, now the hosted seat
    } catch (err) {
      $('continue-note').textContent = `Could not continue it: ${err.message}`;
    } finally {
      b.disabled = false;
    }
  });

  /** Wires the module to the page: `hooks` = {refresh, go, title}. */
  function init(hooks) { app = hooks; }

  return { init, update, reset, note, knownModes, fillModes };
})();
