// sluice's page rendering: one conversation row (stream-json) as DOM, and rows grouped into turns.
// Claude Code's bookkeeping rows are folded: init is one quiet line, status/thinking_tokens update one
// activity line per turn, api_retry one live retry line; slash-command envelopes become chips.
'use strict';
// `v` below is the open seat's state: `toolNames` and `toolBoxes` are read and written (tools.js).
window.sluiceRender = (() => {
  const { el, fmtBytes, fmtAgo, utf8Len, collapsible } = window.sluiceUtil;
  const { markdownBlock } = window.sluiceMarkdown;
  const { renderToolUse, renderToolResult } = window.sluiceTools;
  const { ansiPre } = window.sluiceAnsi;
  const LAZY_BATCH = 40; // a batch of more frames than this renders its Markdown near the viewport only

  // ---------------------------------------------------------------- what opens a turn

  /** What a person typed, if `row` is a typed prompt (it opens a turn); null for tool results,
   *  meta rows, envelopes (`<…>`), interrupt markers and subagent rows. */
  function promptText(row) {
    if (!row || row.type !== 'user' || row.isMeta || row.isSidechain || !row.message) return null;
    const typed = (t) => {
      const s = String(t ?? '').trimStart();
      return s && s[0] !== '<' && !s.startsWith('[Request interrupted') && !s.startsWith('Caveat: ') ? String(t) : null;
    };
    const c = row.message.content;
    if (typeof c === 'string') return typed(c);
    if (!Array.isArray(c) || c.some((b) => b && b.type === 'tool_result')) return null;
    const texts = c.filter((b) => b && b.type === 'text').map((b) => typed(b.text)).filter((t) => t != null);
    return texts.length ? texts.join('\n') : null;
  }
  const isPrompt = (row) => promptText(row) != null;

  /** Claude Code's "[Request interrupted by user…]" row after a Stop (a string or one text block). */
  function interruptMarker(row) {
    if (!row || row.type !== 'user' || !row.message) return false;
    const c = row.message.content;
    const text = typeof c === 'string' ? c
      : Array.isArray(c) && c.length === 1 && c[0] && c[0].type === 'text' ? c[0].text : null;
    return typeof text === 'string' && /^\[Request interrupted by user/.test(text.trim());
  }

  // ---------------------------------------------------------------- envelopes and notes

  const tag = (s, name) => {
    const m = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(s);
    return m ? m[1].trim() : null;
  };

  /** Bookkeeping a person does not read: hidden; its frame folds when nothing else shows. */
  const noise = () => { const n = el('div', 'noise'); n.hidden = true; return n; };
  // Envelopes Claude Code adds for the model, not for the person.
  const MODEL_ONLY = /<(system-reminder|local-command-caveat)>[\s\S]*?<\/\1>/g;

  /** A user row's non-prompt text: a slash command as a chip, command output, or a quiet note. */
  function renderNote(text) {
    const s = String(text ?? '').replace(MODEL_ONLY, '').trim();
    if (!s) return noise();
    const name = tag(s, 'command-name');
    if (name != null) {
      const chip = el('div', 'command-chip');
      chip.append(el('span', 'command-name', name.startsWith('/') ? name : `/${name}`));
      const args = tag(s, 'command-args');
      if (args) chip.append(el('span', 'command-args', args));
      const msg = tag(s, 'command-message');
      if (msg && msg !== name.replace(/^\//, '')) chip.title = msg;
      return chip;
    }
    const bash = tag(s, 'bash-input');
    if (bash != null) {
      const chip = el('div', 'command-chip');
      chip.append(el('span', 'command-name', '!'), el('span', 'command-args', bash));
      return chip;
    }
    for (const t of ['local-command-stdout', 'local-command-stderr', 'bash-stdout', 'bash-stderr']) {
      const out = tag(s, t);
      if (out != null) {
        const box = el('div', `command-output${t.endsWith('stderr') ? ' stderr' : ''}`);
        if (out) box.append(collapsible('', ansiPre(out), out)); else box.classList.add('empty');
        return box;
      }
    }
    const note = el('div', 'system note');
    if (s.length > 400 || s.split('\n').length > 6) {
      const d = el('details');
      d.append(el('summary', null, `${s.trim().split('\n')[0].slice(0, 80)}… · ${fmtBytes(utf8Len(s))}`), el('pre', null, s));
      note.append(d);
    } else {
      note.textContent = s;
    }
    return note;
  }

  // ---------------------------------------------------------------- blocks

  function renderBlock(v, b, assistant, lazy) {
    switch (b && b.type) {
      case 'text': return assistant ? markdownBlock(b.text, lazy) : renderNote(b.text);
      case 'thinking': {
        const d = el('details', 'thinking');
        d.append(el('summary', null, `Thinking · ${fmtBytes(utf8Len(b.thinking || ''))}`), el('div', 'thinking-body', b.thinking));
        return d;
      }
      case 'redacted_thinking': return el('div', 'quiet', 'Thinking (redacted)');
      case 'tool_use': return renderToolUse(v, b);
      case 'tool_result': return renderToolResult(v, b);
      case 'image': return el('div', 'quiet', '[image]');
      default: return b && b.type ? el('div', 'quiet', `[${b.type}]`) : noise();
    }
  }

  /** How a turn that did not end well ended: 'stopped' (a person's Stop: sluice's own
   *  "cancelled" close, or Claude Code's `terminal_reason: aborted_*` after its interrupt),
   *  'interrupted' (the hub stopped or died), else 'failed'. */
  function endKind(row, msg) {
    if (row.outcome === 'cancelled' || /^cancel/i.test(msg) || /^aborted_/.test(String(row.terminal_reason || ''))) return 'stopped';
    if (row.outcome === 'interrupted' || /^interrupted/i.test(msg)) return 'interrupted';
    return 'failed';
  }

  function renderResult(row) {
    const bad = row.is_error || (row.subtype && row.subtype !== 'success');
    const parts = [];
    if (row.duration_ms != null) parts.push(`${(row.duration_ms / 1000).toFixed(1)} s`);
    if (row.num_turns) parts.push(`${row.num_turns} step${row.num_turns === 1 ? '' : 's'}`);
    if (row.total_cost_usd != null) parts.push(`$${Number(row.total_cost_usd).toFixed(4)}`);
    const tail = parts.length ? ` · ${parts.join(' · ')}` : '';
    if (!bad) return el('div', 'turn-end', `Turn ended${tail}`);
    const msg = (typeof row.result === 'string' && row.result) || (Array.isArray(row.errors) && row.errors.join('; ')) ||
      row.subtype || 'error';
    const kind = endKind(row, msg);
    if (kind === 'stopped') {
      const by = row.stopped_by || row.cancelled_by;
      const e = el('div', 'turn-end cancelled stopped', `Stopped by ${by || 'the person'}${tail}`);
      e.title = /^cancelled: /.test(msg) ? msg : 'the turn was stopped (Stop, or `sluice cancel`) before it ended';
      return e;
    }
    if (kind === 'interrupted') {
      // "interrupted by a hub restart" says why; a bare "interrupted" is a hub that died mid-turn.
      const why = /^interrupted\s+\S/i.test(msg) ? msg.replace(/^interrupted\s+/i, '') : 'the hub stopped before the turn ended';
      return el('div', 'turn-end cancelled interrupted', `Turn interrupted: ${why}${tail}`);
    }
    return el('div', 'turn-end error', `Turn failed (${row.subtype || 'error'}): ${msg}`);
  }

  /** A stopped or interrupted turn whose answer was kept as far as it streamed shows one marker:
   *  the result's words go on the kept answer's note, and the result row folds. */
  function mergeEndIntoNote(f, end, section) {
    if (!section || !end.classList.contains('cancelled')) return false;
    const notes = section.querySelectorAll('.interrupted-note:not(.turn-end)');
    const note = notes[notes.length - 1];
    if (!note) return false;
    note.className = `interrupted-note ${end.className}`;
    note.textContent = `${end.textContent} — the answer as far as it streamed`;
    if (end.title) note.title = end.title;
    f.classList.add('folded', 'joined');
    return true;
  }

  // ---------------------------------------------------------------- folded system rows

  /** The turn's one line for `kind` ('activity' | 'retry'), made where its first row is. */
  function turnLine(section, kind, f) {
    let line = section && section.querySelector(`:scope .turn-line-${kind}`);
    if (line) { f.classList.add('folded'); return line; }
    line = el('div', `system turn-line turn-line-${kind}`);
    f.append(line);
    return line;
  }

  function renderSystem(v, f, row, section) {
    const sub = row.subtype || '';
    if (sub === 'init') {
      const parts = [row.agent === 'codex' ? 'Codex session'
        : row.agent === 'acp' ? `${row.agent_name || 'ACP agent'}${row.agent_version ? ` ${row.agent_version}` : ''} session` : 'Session'];
      if (row.resumed) parts.push('resumed');
      if (row.not_resumed) parts.push(row.not_resumed);
      if (row.mode) parts.push(`mode ${row.mode}`);
      if (row.model) parts.push(row.model);
      if (row.cwd) parts.push(row.cwd);
      if (Array.isArray(row.tools)) parts.push(`${row.tools.length} tools`);
      f.append(el('div', 'system init', parts.join(' · ')));
      if (row.session_id) f.title = `session ${row.session_id}`;
      return;
    }
    if (sub === 'thinking_tokens' || sub === 'status') {
      const line = turnLine(section, 'activity', f);
      const st = line.sluice || (line.sluice = { tokens: 0, status: '' });
      if (sub === 'thinking_tokens') {
        if (row.parent_tool_use_id) { f.classList.add('folded'); return; } // a sub-agent's: not this turn's
        if (Number.isFinite(row.estimated_tokens_delta)) st.tokens += row.estimated_tokens_delta;
        else if (Number.isFinite(row.estimated_tokens)) st.tokens = row.estimated_tokens;
      } else {
        st.status = row.status == null ? '' : String(row.status);
      }
      line.textContent = [st.tokens ? `thinking · ~${st.tokens.toLocaleString('en')} tokens` : 'thinking', st.status !== 'thinking' && st.status].filter(Boolean).join(' · ');
      return;
    }
    if (sub === 'api_retry') {
      const line = turnLine(section, 'retry', f);
      const err = typeof row.error === 'string' ? row.error : row.error && (row.error.type || row.error.message);
      const what = [row.error_status ?? row.status, err].filter((x) => x != null && x !== '').join(' ');
      const max = row.max_retries ?? row.max_attempts;
      const delay = row.retry_delay_ms ?? row.retry_in_ms ?? row.delay_ms;
      const parts = [`retrying${what ? `: ${what}` : ''}`];
      if (row.attempt != null) parts.push(`attempt ${row.attempt}${max != null ? `/${max}` : ''}`);
      if (delay != null) parts.push(`next in ${Math.round(delay / 1000)} s`);
      line.textContent = parts.join(' · ');
      line.classList.add('retry');
      return;
    }
    if (sub === 'conversation_reset') {
      // The seat's conversation started over (the owner's reset, or claude's own /clear): what
      // came before is archived, not shown; one divider says so.
      const how = row.trigger === 'clear' ? '/clear' : 'reset by the owner';
      f.append(el('div', 'system reset', `Conversation reset (${how}) · a new conversation starts here`));
      if (row.archived) f.title = `earlier turns are kept in ${row.archived}`;
      return;
    }
    if (sub === 'stop_hook_summary' || sub === 'turn_duration' || sub === 'away_summary') {
      f.classList.add('folded'); // Claude Code's bookkeeping: the turn's end says what a person needs
      return;
    }
    if (sub === 'session_state_changed') {
      f.classList.add('folded'); // the header's state says it
      return;
    }
    if (sub === 'agent_row') {
      // A row type this hub does not know, kept whole: one quiet line, the row on hover.
      f.append(el('div', 'system', `${row.row_type || 'row'}`));
      try { f.title = JSON.stringify(row.row).slice(0, 2000); } catch { /* not serialisable */ }
      return;
    }
    if (sub === 'permission_request') {
      f.classList.remove('quiet');
      f.append(permissionCard(v, row));
      return;
    }
    if (sub === 'permission_resolved') {
      // The answer lands on its card; where the card is not shown (its request is older than the
      // window), one quiet line says it.
      if (!resolvePermission(v, row)) f.append(el('div', 'system', permissionOutcome(row)));
      else f.classList.add('folded');
      return;
    }
    f.append(el('div', 'system', `system · ${sub}${row.model ? ` · ${row.model}` : ''}`));
  }

  // ---------------------------------------------------------------- permission prompts

  /** Where an answer came from, as a person reads it ("by api" said nothing). */
  const answeredBy = (by) => ({ page: 'on the page', cli: 'from the CLI', api: 'through the API', sluice: 'by sluice', terminal: 'in the terminal' }[by] || `by ${by}`);
  const permissionOutcome = (row) => {
    if (row.behavior === 'withdrawn' && row.reason) return `Closed · ${row.reason}`; // a hooked prompt's end
    const what = { allow: 'Allowed', deny: 'Denied', withdrawn: 'Withdrawn: the turn ended' }[row.behavior] || 'Denied';
    return `${what}${row.by && row.behavior !== 'withdrawn' ? ` · ${answeredBy(row.by)}` : ''}`;
  };

  /** A pending permission prompt (a `permission_request` row, or one of `connected.permissions`):
   *  what the agent wants to run, and Allow/Deny for owners (a viewer sees the card only). The
   *  first answer from any screen wins; every card resolves when `permission_resolved` arrives. */
  function permissionCard(v, row) {
    const id = String(row.request_id || '');
    const card = el('div', 'permission-card');
    card.dataset.requestId = id;
    card.setAttribute('role', 'group');
    card.setAttribute('aria-label', 'Permission prompt');
    card.append(el('div', 'permission-title', row.title || `Allow ${row.tool_name || 'this tool'}?`));
    const input = row.input && typeof row.input === 'object' ? row.input : null;
    if (input && typeof input.command === 'string') {
      card.append(el('pre', 'permission-input', input.command));
    } else if (input) {
      card.append(el('pre', 'permission-input', JSON.stringify(input, null, 2)));
    }
    if (row.hooked) card.append(el('div', 'permission-reason quiet', `hooked · asked in a terminal${row.cwd ? ` in ${row.cwd}` : ''}`));
    const reason = typeof row.decision_reason === 'string' ? row.decision_reason : null;
    if (reason) card.append(el('div', 'permission-reason quiet', reason));
    const actions = el('div', 'permission-actions owner-only');
    const status = el('div', 'permission-status quiet');
    status.setAttribute('role', 'status');
    const answer = async (behavior) => {
      for (const b of actions.querySelectorAll('button')) b.disabled = true;
      status.textContent = 'Sending…';
      try {
        await window.sluiceApi.api('POST',
          `/v1/seats/${encodeURIComponent(v.id)}/permissions/${encodeURIComponent(id)}`, { behavior, by: 'page' });
        if (!card.classList.contains('resolved')) status.textContent = 'Answered; waiting for the agent…';
      } catch (e) {
        if (card.classList.contains('resolved')) return;
        // 409: someone answered first; their answer arrives as permission_resolved.
        status.textContent = e.status === 409 ? 'Already answered elsewhere' : `Could not answer: ${e.message}`;
        if (e.status !== 409) for (const b of actions.querySelectorAll('button')) b.disabled = false;
      }
    };
    for (const [label, behavior, cls] of [['Allow', 'allow', ''], ['Deny', 'deny', 'secondary']]) {
      const b = el('button', cls, label);
      b.type = 'button';
      b.addEventListener('click', () => answer(behavior));
      actions.append(b);
    }
    card.append(actions, status);
    if (v.permissionCards) v.permissionCards.set(id, card);
    return card;
  }

  /** Marks the card of `row.request_id` answered; false when no such card is shown. */
  function resolvePermission(v, row) {
    const card = v.permissionCards && v.permissionCards.get(String(row.request_id || ''));
    if (!card) return false;
    card.classList.add('resolved', row.behavior === 'allow' ? 'allowed' : 'denied');
    const actions = card.querySelector('.permission-actions');
    if (actions) actions.remove();
    card.querySelector('.permission-status').textContent = permissionOutcome(row);
    return true;
  }

  // ---------------------------------------------------------------- frames and turns

  /** One frame as one element carrying its seq; `section` is the turn it joins (for folding). */
  function renderFrame(v, seq, row, section, lazy = false) {
    const f = el('div', 'frame');
    f.dataset.seq = String(seq);
    const type = row && row.type;
    f.dataset.type = type || 'unknown';
    const typed = promptText(row);
    if (interruptMarker(row)) {
      f.classList.add('folded', 'joined'); // the turn's one "Stopped" marker says it
    } else if (typed != null) {
      f.classList.add('prompt');
      f.append(el('div', 'who', 'You'), el('div', 'text', typed));
    } else if (type === 'user' && typeof row.message?.content === 'string') {
      f.classList.add('quiet');
      const note = renderNote(row.message.content); // interrupt marker, envelope, meta
      f.append(note);
      if (note.hidden) f.classList.add('folded');
    } else if (type === 'user' || type === 'assistant') {
      const content = row.message && row.message.content;
      const blocks = Array.isArray(content) ? content : [{ type: 'text', text: String(content ?? '') }];
      for (const b of blocks) {
        const e = renderBlock(v, b, type === 'assistant', lazy);
        const call = b && b.type === 'tool_result' && v.toolBoxes && v.toolBoxes.get(b.tool_use_id);
        if (call && section && section.contains(call)) call.append(e); // the result joins its call
        else f.append(e);
      }
      if (!f.firstChild) f.classList.add('folded', 'joined');
      else if (![...f.children].some((c) => !c.hidden)) f.classList.add('folded');
      if (type === 'user' && f.querySelector(':scope > .text')) f.classList.add('user-text');
      if (row.interrupted === true || (type === 'assistant' && row.aborted === true)) {
        f.classList.add('interrupted');
        f.append(el('div', 'interrupted-note', 'Stopped — the answer as far as it streamed'));
      }
      if (row.error) f.append(el('div', 'error', `Error: ${typeof row.error === 'string' ? row.error : JSON.stringify(row.error)}`));
    } else if (type === 'result') {
      const end = renderResult(row);
      if (!mergeEndIntoNote(f, end, section)) f.append(end);
    } else if (type === 'system') {
      f.classList.add('quiet');
      renderSystem(v, f, row, section);
    } else if (type === 'error' || (row && row.error)) {
      f.append(el('div', 'error', `Error: ${typeof row.error === 'string' ? row.error : JSON.stringify(row.error ?? row)}`));
    } else {
      f.classList.add('quiet');
      f.append(el('div', 'system', `${type || 'row'}`));
    }
    if (row && row.sluice_ref) f.append(renderCutNote(v, seq, row, section));
    if (row && row.parent_tool_use_id && f.firstChild) nestInTask(v, f, row.parent_tool_use_id, section);
    return f;
  }

  /** An oversize frame is held cut (its large blocks' head and tail): say so, offer it whole. */
  function renderCutNote(v, seq, row, section) {
    const ref = row.sluice_ref;
    const note = el('div', 'cut-note', `Large frame (${fmtBytes(ref.bytes || 0)}), shown cut · `);
    const btn = el('button', 'show-all', 'show all');
    btn.type = 'button';
    btn.addEventListener('click', async () => {
      btn.disabled = true;
      try {
        // The epoch the seq belongs to: a seat whose conversation was replaced answers 409.
        const epoch = v.epoch != null ? `?epoch=${encodeURIComponent(v.epoch)}` : '';
        const whole = await window.sluiceApi.api('GET', `/v1/seats/${encodeURIComponent(v.id)}/frames/${seq}${epoch}`);
        const frame = note.closest('.frame');
        if (frame) frame.replaceWith(renderFrame(v, seq, whole, section));
      } catch (e) {
        btn.disabled = false;
        note.append(el('span', 'error', ` ${e.message}`));
      }
    });
    note.append(btn);
    return note;
  }

  /** A sub-agent's row goes inside its Task call, under "Sub-agent steps" (the frame stays, folded). */
  function nestInTask(v, f, parentId, section) {
    const box = v.toolBoxes && v.toolBoxes.get(parentId);
    if (!box || !section || !section.contains(box)) return;
    let d = box.querySelector(':scope > details.subagent');
    if (!d) {
      d = el('details', 'subagent');
      d.append(el('summary'));
      d.sluiceSteps = 0;
      const answer = box.querySelector(':scope > .tool-result');
      box.insertBefore(d, answer); // before the answer, if it is already there
    }
    const step = el('div', 'subagent-step');
    step.dataset.seq = f.dataset.seq;
    step.append(...f.childNodes);
    d.append(step);
    d.sluiceSteps++;
    d.firstChild.textContent = `Sub-agent steps · ${d.sluiceSteps}`;
    f.classList.add('folded', 'joined');
  }

  function newTurnSection(firstSeq) {
    const s = el('section', 'turn');
    s.dataset.first = String(firstSeq);
    return s;
  }

  /** Builds turn sections for consecutive frames [{seq,row}], continuing `last` if given. */
  function buildTurns(v, frames, last) {
    const out = [];
    const lazy = frames.length > LAZY_BATCH;
    let cur = last || null;
    for (const { seq, row } of frames) {
      if (!cur || isPrompt(row)) { cur = newTurnSection(seq); out.push(cur); }
      cur.append(renderFrame(v, seq, row, cur, lazy));
      if (row && (row.type === 'assistant' || row.type === 'result')) {
        const retry = cur.querySelector('.turn-line.retry'); // the retries are over: the line goes quiet
        if (retry) retry.classList.replace('retry', 'retried');
      }
    }
    return out;
  }

  return { el, fmtBytes, fmtAgo, utf8Len, promptText, isPrompt, renderFrame, buildTurns, permissionCard, resolvePermission };
})();
