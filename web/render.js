// sluice's page rendering: formatting helpers and one conversation row (stream-json) as DOM, no state.
'use strict';
// `v` below is the open seat's state: only its `toolNames` (tool id -> name) is read and written here.
window.sluiceRender = (() => {
  const LONG_CHARS = 800;           // a tool result longer than this (or LONG_LINES) is collapsed
  const LONG_LINES = 12;

  // ---------------------------------------------------------------- formatting

  function fmtBytes(n) {
    if (n == null || isNaN(n)) return '–';
    if (n < 1024) return `${n} B`;
    const units = ['KiB', 'MiB', 'GiB'];
    let v = n / 1024, u = 0;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    return `${v >= 10 || Number.isInteger(v) ? Math.round(v) : v.toFixed(1)} ${units[u]}`;
  }

  function fmtAgo(iso) {
    if (!iso) return 'no activity';
    const t = Date.parse(iso);
    if (isNaN(t)) return iso;
    const s = Math.max(0, Math.round((Date.now() - t) / 1000));
    if (s < 5) return 'just now';
    if (s < 60) return `${s} s ago`;
    if (s < 3600) return `${Math.floor(s / 60)} min ago`;
    if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
    return new Date(t).toLocaleString();
  }

  function utf8Len(s) { return new TextEncoder().encode(s).length; }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }


  // ---------------------------------------------------------------- rendering rows

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

  function resultText(content) {
    if (typeof content === 'string') return content;
    if (Array.isArray(content)) {
      return content.map((b) => (b && b.type === 'text' ? b.text : `[${(b && b.type) || 'block'}]`)).join('\n');
    }
    return content == null ? '' : JSON.stringify(content, null, 2);
  }

  function renderToolResult(v, b) {
    const text = resultText(b.content);
    const name = v.toolNames.get(b.tool_use_id);
    const box = el('div', b.is_error ? 'tool-result error' : 'tool-result');
    const label = `${b.is_error ? 'Tool error' : 'Result'}${name ? ` of ${name}` : ''}`;
    const lines = text.split('\n').length;
    if (text.length > LONG_CHARS || lines > LONG_LINES) {
      const d = el('details');
      d.append(el('summary', null, `${label} · ${fmtBytes(utf8Len(text))}, ${lines} lines`), el('pre', null, text));
      box.append(d);
    } else {
      box.append(el('div', 'label', label), el('pre', null, text || '(empty)'));
    }
    return box;
  }

  function renderBlock(v, b) {
    switch (b && b.type) {
      case 'text': return el('div', 'text', b.text);
      case 'thinking': {
        const d = el('details', 'thinking');
        d.append(el('summary', null, `Thinking · ${fmtBytes(utf8Len(b.thinking || ''))}`), el('div', 'thinking-body', b.thinking));
        return d;
      }
      case 'redacted_thinking': return el('div', 'quiet', 'Thinking (redacted)');
      case 'tool_use': {
        v.toolNames.set(b.id, b.name);
        const box = el('div', 'tool-call');
        box.append(el('div', 'label', `Tool call: ${b.name}`), el('pre', null, JSON.stringify(b.input, null, 2)));
        return box;
      }
      case 'tool_result': return renderToolResult(v, b);
      case 'image': return el('div', 'quiet', '[image]');
      default: return el('div', 'quiet', `[${(b && b.type) || 'unknown block'}]`);
    }
  }

  function renderResult(row) {
    const bad = row.is_error || (row.subtype && row.subtype !== 'success');
    const parts = [];
    if (row.duration_ms != null) parts.push(`${(row.duration_ms / 1000).toFixed(1)} s`);
    if (row.num_turns != null) parts.push(`${row.num_turns} step${row.num_turns === 1 ? '' : 's'}`);
    if (row.total_cost_usd != null) parts.push(`$${Number(row.total_cost_usd).toFixed(4)}`);
    if (!bad) return el('div', 'turn-end', `Turn ended${parts.length ? ` · ${parts.join(' · ')}` : ''}`);
    const msg = (Array.isArray(row.errors) && row.errors.join('; ')) ||
      (typeof row.result === 'string' && row.result) || row.subtype || 'error';
    if (/^cancel/i.test(msg)) return el('div', 'turn-end cancelled', `Turn cancelled${parts.length ? ` · ${parts.join(' · ')}` : ''}`);
    return el('div', 'turn-end error', `Turn failed (${row.subtype || 'error'}): ${msg}`);
  }

  /** One frame as one element carrying its seq. */
  function renderFrame(v, seq, row) {
    const f = el('div', 'frame');
    f.dataset.seq = String(seq);
    const type = row && row.type;
    f.dataset.type = type || 'unknown';
    const typed = promptText(row);
    if (typed != null) {
      f.classList.add('prompt');
      f.append(el('div', 'who', 'You'), el('div', 'text', typed));
    } else if (type === 'user' && typeof row.message?.content === 'string') {
      f.classList.add('quiet');
      f.append(el('div', 'system', row.message.content)); // a note: interrupt marker, envelope, meta
    } else if (type === 'user' || type === 'assistant') {
      const content = row.message && row.message.content;
      (Array.isArray(content) ? content : [{ type: 'text', text: String(content ?? '') }])
        .forEach((b) => f.append(renderBlock(v, b)));
      if (type === 'user' && f.querySelector(':scope > .text')) f.classList.add('user-text');
      if (row.error) f.append(el('div', 'error', `Error: ${row.error}`));
    } else if (type === 'result') {
      f.append(renderResult(row));
    } else if (type === 'system') {
      f.classList.add('quiet');
      f.append(el('div', 'system', `system · ${row.subtype || ''}${row.model ? ` · ${row.model}` : ''}`));
    } else if (type === 'error' || (row && row.error)) {
      f.append(el('div', 'error', `Error: ${typeof row.error === 'string' ? row.error : JSON.stringify(row.error ?? row)}`));
    } else {
      f.classList.add('quiet');
      f.append(el('div', 'system', `${type || 'row'}`));
    }
    return f;
  }

  function newTurnSection(firstSeq) {
    const s = el('section', 'turn');
    s.dataset.first = String(firstSeq);
    return s;
  }

  /** Builds turn sections for consecutive frames [{seq,row}], continuing `last` if given. */
  function buildTurns(v, frames, last) {
    const out = [];
    let cur = last || null;
    for (const { seq, row } of frames) {
      if (!cur || isPrompt(row)) { cur = newTurnSection(seq); out.push(cur); }
      cur.append(renderFrame(v, seq, row));
    }
    return out;
  }

  return { el, fmtBytes, fmtAgo, utf8Len, promptText, isPrompt, renderFrame, buildTurns };
})();
