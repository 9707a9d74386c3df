// sluice's page: the New seat dialog — the agent kinds this hub can run (GET /v1/agents), a claude
// seat's working folder under the workspace root and its permission mode, the model; the hub's
// refusal stays in the dialog.
'use strict';
window.sluiceNewSeat = (() => {
  const $ = (id) => document.getElementById(id);
  const { api } = window.sluiceApi;
  const controls = window.sluiceSeatControls;

  let app = null;     // {created(id): Promise}: what app.js lends
  let agents = null;  // GET /v1/agents, once per dialog

  const option = (value, text, disabled = false) => {
    const o = document.createElement('option');
    o.value = value;
    o.textContent = text;
    o.disabled = disabled;
    return o;
  };

  // An ACP agent is chosen by its command line: the select's value is "acp:" and the line.
  const ACP = 'acp:';
  const kindOf = (value) => (value.startsWith(ACP) ? 'acp' : value);

  function showKind() {
    const value = $('new-seat-agent').value;
    const kind = kindOf(value);
    const k = (agents && agents.agents || []).find((a) => a.kind === kind);
    $('new-seat-claude').hidden = kind !== 'claude' && kind !== 'codex' && kind !== 'acp';
    // An ACP agent's model and modes are its own configuration's.
    $('new-seat-mode-row').hidden = kind === 'acp';
    $('new-seat-model-row').hidden = kind === 'acp';
    $('new-seat-mode-label').textContent = kind === 'codex' ? 'Approval policy' : 'Permission mode';
    controls.fillModes($('new-seat-mode'), 'default', kind);
    $('new-seat-agent-detail').textContent = !k ? ''
      : !k.available ? `not available here: ${k.reason || 'no reason given'}`
        : kind === 'acp' ? `runs ${value.slice(ACP.length)} in the seat's folder (Agent Client Protocol)` : k.detail || '';
  }

  async function load() {
    try {
      agents = await api('GET', '/v1/agents');
    } catch {
      agents = null; // an older hub: builtin only, as it always was
    }
    const select = $('new-seat-agent');
    select.replaceChildren();
    const kinds = agents && Array.isArray(agents.agents) ? agents.agents : [{ kind: 'builtin', available: true }];
    for (const k of kinds) {
      const label = { builtin: 'builtin', claude: 'Claude Code', codex: 'Codex', acp: 'ACP agent', process: 'agent process (--agent-cmd)' }[k.kind] || k.kind;
      if (k.kind === 'acp' && k.available && Array.isArray(k.commands)) {
        // One choice per command line the hub allows.
        for (const cmd of k.commands) select.append(option(ACP + cmd, `${label}: ${cmd}`));
        continue;
      }
      // An unavailable kind stays listed, disabled, so the person sees what the hub lacks.
      select.append(option(k.kind, k.available ? label : `${label} — not available`, !k.available));
    }
    const first = [...select.options].find((o) => !o.disabled);
    if (first) select.value = first.value;
    $('new-seat-root').textContent = agents && agents.workspace_root ? `${agents.workspace_root.replace(/\/$/, '')}/` : '';
    await controls.knownModes();
    showKind();
  }

  $('new-seat-agent').addEventListener('change', showKind);

  $('new-seat').addEventListener('click', async () => {
    for (const id of ['new-seat-name', 'new-seat-cwd', 'new-seat-model']) $(id).value = '';
    $('new-seat-note').textContent = '';
    await load();
    $('new-seat-dialog').showModal();
    $('new-seat-name').focus();
  });
  $('new-seat-cancel').addEventListener('click', () => $('new-seat-dialog').close());

  $('new-seat-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const b = $('new-seat-create');
    const body = {};
    const name = $('new-seat-name').value.trim();
    const model = $('new-seat-model').value.trim();
    const value = $('new-seat-agent').value;
    const agent = kindOf(value);
    if (name) body.name = name;
    if (model && agent !== 'acp') body.model = model;
    if (agent && agent !== 'builtin') body.agent = agent;
    if (agent === 'acp') body.cmd = value.slice(ACP.length);
    if (agent === 'claude' || agent === 'codex' || agent === 'acp') {
      const cwd = $('new-seat-cwd').value.trim();
      if (cwd) body.cwd = cwd; // relative: under the workspace root
      if (agent !== 'acp' && $('new-seat-mode').value !== 'default') body.permission_mode = $('new-seat-mode').value;
    }
    b.disabled = true;
    $('new-seat-note').textContent = '';
    try {
      const d = await api('POST', '/v1/seats', body);
      $('new-seat-dialog').close();
      await app.created(d.seat);
    } catch (err) {
      $('new-seat-note').textContent = `Could not create the seat: ${err.message}`;
    } finally {
      b.disabled = false;
    }
  });

  /** Wires the module to the page: `hooks` = {created(id)}. */
  function init(hooks) { app = hooks; }

  return { init };
})();
