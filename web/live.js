// sluice's page: the live edge of the open turn: previews (text as Markdown, re-rendered at most a few
// times a second), loss markers, and the open turn's partial message carried by connected/resumed.
'use strict';
window.sluiceLive = (() => {
  const { el, fmtBytes } = window.sluiceUtil;
  const { fill } = window.sluiceMarkdown;
  const PREVIEW_KEEP_CHARS = 65536; // a live preview keeps its tail only; the frame replaces it
  const MD_EVERY_MS = 200;          // a streaming text preview is re-rendered as Markdown this often
  const $ = (id) => document.getElementById(id);

  function atBottom() {
    const c = $('conversation');
    return c.scrollHeight - c.scrollTop - c.clientHeight < 48;
  }
  function keepBottom(wasAtBottom) {
    if (wasAtBottom) { const c = $('conversation'); c.scrollTop = c.scrollHeight; }
  }

  const LABELS = { thinking: 'Thinking…', tool_use_delta: 'Tool call…', tool_result_delta: 'Tool output…' };

  function previewBox(kind, tool, name) {
    const p = el('div', `preview preview-${kind}`);
    p.dataset.kind = kind;
    if (tool) p.dataset.tool = tool;
    const label = kind === 'tool_use_delta' && name ? `Tool call: ${name}…` : LABELS[kind];
    if (label) p.append(el('div', 'label', label));
    p.append(el(kind === 'text' || kind === 'thinking' ? 'div' : 'pre', kind === 'text' ? 'body md' : 'body'));
    p.sluiceText = '';
    return p;
  }

  function renderText(p) {
    p.sluiceTimer = null;
    const body = p.lastElementChild;
    const stick = atBottom();
    if (p.dataset.kind === 'text') fill(body, p.sluiceText); else body.textContent = p.sluiceText;
    keepBottom(stick);
  }

  function appendText(p, delta, now) {
    const t = p.sluiceText + delta;
    p.sluiceText = t.length > PREVIEW_KEEP_CHARS ? `…${t.slice(-PREVIEW_KEEP_CHARS)}` : t;
    if (p.dataset.kind !== 'text' || now) { renderText(p); return; }
    if (!p.sluiceTimer) p.sluiceTimer = setTimeout(() => renderText(p), MD_EVERY_MS);
  }

  function onPreview(v, d) {
    const stick = atBottom();
    const live = $('live');
    const kind = String(d.kind || 'text');
    const tool = d.tool_id ? String(d.tool_id) : '';
    let p = live.lastElementChild;
    if (!p || !p.classList.contains('preview') || p.dataset.kind !== kind || (p.dataset.tool || '') !== tool) {
      p = previewBox(kind, tool, d.tool_name || d.name);
      live.append(p);
    }
    appendText(p, d.delta || '', false);
    keepBottom(stick);
  }

  function onGap(v, d) {
    const stick = atBottom();
    const g = el('div', 'gap', `preview skipped ${fmtBytes(d.dropped_bytes)} — the final message follows`);
    g.setAttribute('role', 'note');
    $('live').append(g);
    keepBottom(stick);
  }

  /** Drops the previews a frame replaces (its blocks); the gap markers go with the last of them. */
  function clearPreviewsFor(row) {
    const live = $('live');
    if (!live.firstChild) return;
    const drop = (kind, id) => live.querySelectorAll(`.preview[data-kind="${kind}"]`).forEach((p) => {
      if (!id || !p.dataset.tool || p.dataset.tool === id) { clearTimeout(p.sluiceTimer); p.remove(); }
    });
    const content = row && row.message && row.message.content;
    if (row && row.type === 'assistant' && Array.isArray(content)) {
      for (const b of content) {
        if (b.type === 'text') drop('text');
        else if (b.type === 'thinking' || b.type === 'redacted_thinking') drop('thinking');
        else if (b.type === 'tool_use') drop('tool_use_delta', b.id);
      }
    } else if (row && row.type === 'user' && Array.isArray(content)) {
      for (const b of content) if (b.type === 'tool_result') drop('tool_result_delta', b.tool_use_id);
    } else if (row && row.type === 'result') {
      clearLive();
    }
    if (!live.querySelector('.preview')) clearLive();
  }

  function clearLive() {
    const live = $('live');
    live.querySelectorAll('.preview').forEach((p) => clearTimeout(p.sluiceTimer));
    live.replaceChildren();
  }

  /** The open turn's partial message ({text, thinking, tools, missing_bytes}) as the live turn start. */
  function showPartial(v, partial) {
    clearLive();
    if (!partial || typeof partial !== 'object') return;
    const live = $('live');
    const stick = atBottom();
    const missing = Number(partial.missing_bytes) || 0;
    if (missing > 0) {
      const m = el('div', 'gap partial-missing', `… earlier part not kept (${fmtBytes(missing)})`);
      m.setAttribute('role', 'note');
      live.append(m);
    }
    const add = (kind, text, tool, name) => {
      if (text == null || text === '') return;
      const p = previewBox(kind, tool, name);
      p.classList.add('partial');
      live.append(p);
      appendText(p, String(text), true);
    };
    add('thinking', partial.thinking);
    add('text', partial.text);
    const tools = Array.isArray(partial.tools) ? partial.tools
      : partial.tools && typeof partial.tools === 'object'
        ? Object.entries(partial.tools).map(([id, t]) => ({ id, ...(typeof t === 'object' ? t : { input: t }) })) : [];
    for (const t of tools) {
      const input = typeof t.input === 'string' ? t.input : t.input == null ? t.input_json ?? '' : JSON.stringify(t.input);
      add('tool_use_delta', input || ' ', String(t.tool_id || t.id || ''), t.name || t.tool_name);
    }
    keepBottom(stick);
  }

  return { atBottom, keepBottom, onPreview, onGap, clearPreviewsFor, clearLive, showPartial };
})();
