// sluice's page: tool calls drawn as tools (Bash, Edit/MultiEdit as a diff, Read/Write, TodoWrite,
// Task, Codex's apply_patch as its diffs), their results beside them; unknown tools as JSON. Tool
// output is always plain text.
'use strict';
// `v` is the open seat's state: `toolNames` (id -> name) and `toolBoxes` (id -> the call's box).
window.sluiceTools = (() => {
  const { el, collapsible } = window.sluiceUtil;
  const { ansiPre } = window.sluiceAnsi;
  const { markdownBlock } = window.sluiceMarkdown;
  const DIFF_MAX_CELLS = 400_000; // an LCS table larger than this: the diff shows all removed, then all added

  /** The renderer family of a tool name (Claude Code's names and the built-in agent's). */
  function kindOf(name) {
    const n = String(name || '');
    if (/^bash$/i.test(n)) return 'bash';
    if (n === 'Edit' || n === 'MultiEdit' || n === 'edit_file') return 'edit';
    if (n === 'Write' || n === 'write_file') return 'write';
    if (n === 'Read' || n === 'read_file') return 'read';
    if (n === 'TodoWrite') return 'todo';
    if (n === 'apply_patch') return 'patch';
    if (n === 'Task' || n === 'Agent') return 'task';
    return 'json';
  }

  const str = (x) => (typeof x === 'string' ? x : x == null ? '' : JSON.stringify(x, null, 2));

  // ---------------------------------------------------------------- diff

  /** Line diff of `a` -> `b` as [{op: ' '|'-'|'+', line}] (LCS; a plain replace when too large). */
  function lineDiff(a, b) {
    const x = a === '' ? [] : a.split('\n'), y = b === '' ? [] : b.split('\n');
    let lo = 0;
    while (lo < x.length && lo < y.length && x[lo] === y[lo]) lo++;
    let hx = x.length, hy = y.length;
    while (hx > lo && hy > lo && x[hx - 1] === y[hy - 1]) { hx--; hy--; }
    const out = x.slice(0, lo).map((line) => ({ op: ' ', line }));
    const xs = x.slice(lo, hx), ys = y.slice(lo, hy);
    const n = xs.length, m = ys.length;
    if (n * m > DIFF_MAX_CELLS) {
      xs.forEach((line) => out.push({ op: '-', line }));
      ys.forEach((line) => out.push({ op: '+', line }));
    } else {
      const t = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
      for (let i = n - 1; i >= 0; i--) {
        for (let j = m - 1; j >= 0; j--) t[i][j] = xs[i] === ys[j] ? t[i + 1][j + 1] + 1 : Math.max(t[i + 1][j], t[i][j + 1]);
      }
      let i = 0, j = 0;
      while (i < n || j < m) {
        if (i < n && j < m && xs[i] === ys[j]) { out.push({ op: ' ', line: xs[i] }); i++; j++; }
        else if (i < n && (j === m || t[i + 1][j] >= t[i][j + 1])) { out.push({ op: '-', line: xs[i] }); i++; } // removals first
        else { out.push({ op: '+', line: ys[j] }); j++; }
      }
    }
    x.slice(hx).forEach((line) => out.push({ op: ' ', line }));
    return out;
  }

  function diffView(oldText, newText) {
    const pre = el('pre', 'diff');
    const cls = { ' ': 'ctx', '-': 'del', '+': 'add' };
    for (const { op, line } of lineDiff(str(oldText), str(newText))) {
      pre.append(el('span', `diff-line ${cls[op]}`, `${op} ${line}`));
    }
    return pre;
  }

  // ---------------------------------------------------------------- calls

  function header(box, name, detail) {
    const h = el('div', 'label tool-head');
    h.append(el('span', 'tool-name', name));
    if (detail) h.append(el('span', 'tool-detail', detail));
    box.append(h);
  }

  function renderBash(box, input) {
    header(box, 'Bash', input.description || '');
    box.append(el('pre', 'cmd', str(input.command)));
  }

  function renderEdit(box, name, input) {
    header(box, name, input.file_path || input.path || '');
    const edits = Array.isArray(input.edits) ? input.edits : [input];
    edits.forEach((e, i) => {
      if (edits.length > 1) box.append(el('div', 'quiet edit-n', `edit ${i + 1} of ${edits.length}${e.replace_all ? ' · every occurrence' : ''}`));
      else if (e.replace_all) box.append(el('div', 'quiet edit-n', 'every occurrence'));
      box.append(diffView(e.old_string, e.new_string));
    });
  }

  function renderWrite(box, name, input) {
    header(box, name, input.file_path || input.path || '');
    const text = str(input.content);
    box.append(collapsible('content', el('pre', 'file-content', text), text));
  }

  function renderRead(box, name, input) {
    const range = [input.offset != null ? `from line ${input.offset}` : '', input.limit != null ? `${input.limit} lines` : '']
      .filter(Boolean).join(', ');
    header(box, name, `${input.file_path || input.path || ''}${range ? ` (${range})` : ''}`);
  }

  /** Codex's file change: each file's unified diff, lines coloured as they add or remove. */
  function renderPatch(box, name, input) {
    const changes = Array.isArray(input.changes) ? input.changes : [];
    header(box, 'Patch', changes.length === 1 ? str(changes[0].path) : `${changes.length} files`);
    for (const c of changes) {
      const kind = c.kind && c.kind.type ? c.kind.type : '';
      const moved = c.kind && c.kind.move_path ? ` → ${c.kind.move_path}` : '';
      box.append(el('div', 'quiet edit-n', `${kind ? `${kind} ` : ''}${str(c.path)}${moved}`));
      const pre = el('pre', 'diff');
      for (const line of str(c.diff).split('\n')) {
        if (line === '') continue;
        const cls = line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'ctx';
        pre.append(el('span', `diff-line ${cls}`, line));
      }
      box.append(pre);
    }
  }

  function renderTodo(box, name, input) {
    header(box, name === 'TodoWrite' ? 'Todo list' : name, '');
    const ul = el('ul', 'todos');
    for (const t of Array.isArray(input.todos) ? input.todos : []) {
      const status = String(t.status || 'pending');
      const li = el('li', `todo todo-${status}`);
      const mark = { completed: '☑', in_progress: '◐', pending: '☐' }[status] || '☐';
      li.append(el('span', 'todo-mark', mark), el('span', 'todo-text', status === 'in_progress' && t.activeForm ? t.activeForm : str(t.content)));
      li.setAttribute('aria-label', `${status.replace('_', ' ')}: ${str(t.content)}`);
      ul.append(li);
    }
    box.append(ul);
  }

  function renderTask(box, name, input, v, id) {
    header(box, input.subagent_type ? `${name} · ${input.subagent_type}` : name, input.description || '');
    const d = el('details', 'task-prompt');
    d.append(el('summary', null, 'Prompt for the sub-agent'), markdownBlock(str(input.prompt)));
    box.append(d);
    if (v && String(v.id || '').startsWith('c-') && id && window.sluiceApi) box.append(taskTranscript(v.id, id));
  }

  /** A Claude Code session's sub-agent transcript of one Task call, read when first opened. */
  function taskTranscript(seat, toolId) {
    const d = el('details', 'task-transcript');
    d.append(el('summary', null, 'Sub-agent transcript'));
    d.addEventListener('toggle', async () => {
      if (!d.open || d.dataset.loaded) return;
      d.dataset.loaded = '1';
      const { api } = window.sluiceApi;
      const out = el('pre', null, 'loading…');
      d.append(out);
      try {
        const s = await api('GET', `/v1/seats/${encodeURIComponent(seat)}/subagents`);
        const agent = s && s.by_tool_use && s.by_tool_use[toolId];
        if (!agent) { out.textContent = 'no transcript of this sub-agent here'; return; }
        const page = await api('GET', `/v1/seats/${encodeURIComponent(seat)}/subagents/${encodeURIComponent(agent)}/history`);
        // Drawn as a seat's conversation is (Markdown, tools, results joined to their calls),
        // with its own tool registry: the sub-agent's ids are not the seat's.
        const frames = [];
        for (const t of page.turns || []) (t.frames || []).forEach((row, i) => frames.push({ seq: (t.first || 0) + i, row }));
        const sub = { id: seat, toolNames: new Map(), toolBoxes: new Map(), permissionCards: new Map() };
        const body = el('div', 'subagent-transcript');
        // A sub-agent's rows open no turn of their own: one section holds them.
        body.append(...window.sluiceRender.buildTurns(sub, frames.map((f) => ({ ...f, row: { ...f.row, isSidechain: false, parent_tool_use_id: null } })), null));
        out.replaceWith(body);
        if (!frames.length) body.textContent = '(empty)';
      } catch (err) {
        out.textContent = `could not read the sub-agent: ${err.message}`;
      }
    });
    return d;
  }

  /** A tool_use block as a `.tool-call` box; remembers it so its result can join it. */
  function renderToolUse(v, b) {
    v.toolNames.set(b.id, b.name);
    const kind = kindOf(b.name);
    const box = el('div', `tool-call tool-${kind}`);
    box.dataset.tool = String(b.id || '');
    const input = b.input && typeof b.input === 'object' ? b.input : {};
    try {
      if (kind === 'bash') renderBash(box, input);
      else if (kind === 'edit') renderEdit(box, b.name, input);
      else if (kind === 'write') renderWrite(box, b.name, input);
      else if (kind === 'read') renderRead(box, b.name, input);
      else if (kind === 'todo') renderTodo(box, b.name, input);
      else if (kind === 'patch') renderPatch(box, b.name, input);
      else if (kind === 'task') renderTask(box, b.name, input, v, b.id);
      else throw new Error('json');
    } catch {
      box.replaceChildren();
      box.className = 'tool-call tool-json';
      header(box, String(b.name || 'tool'), '');
      box.append(el('pre', null, JSON.stringify(b.input, null, 2)));
    }
    if (v.toolBoxes) v.toolBoxes.set(b.id, box);
    return box;
  }

  // ---------------------------------------------------------------- results

  function resultText(content) {
    if (typeof content === 'string') return content;
    if (Array.isArray(content)) {
      return content.map((b) => (b && b.type === 'text' ? b.text : `[${(b && b.type) || 'block'}]`)).join('\n');
    }
    return content == null ? '' : JSON.stringify(content, null, 2);
  }

  /** A tool_result block as a `.tool-result` box, drawn for the tool that was called. */
  function renderToolResult(v, b) {
    const text = resultText(b.content);
    const name = v.toolNames.get(b.tool_use_id);
    const kind = b.is_error ? 'error' : kindOf(name);
    const box = el('div', b.is_error ? 'tool-result error' : `tool-result result-${kind}`);
    const label = b.is_error ? `Tool error${name ? ` of ${name}` : ''}` : name ? 'Output' : 'Result';
    if (kind === 'bash') {
      box.append(collapsible(label, ansiPre(text || '(no output)'), text));
    } else if (kind === 'task') {
      const d = el('details', 'collapsible');
      d.append(el('summary', null, 'Sub-agent answer'), markdownBlock(text));
      box.append(d);
    } else if ((kind === 'edit' || kind === 'write' || kind === 'todo' || kind === 'patch') && text.length < 400 && !text.includes('\n')) {
      box.classList.add('quiet-result');
      box.append(el('div', 'quiet', text || 'done'));
    } else {
      box.append(collapsible(label, el('pre', null, text || '(empty)'), text));
    }
    return box;
  }

  return { renderToolUse, renderToolResult, lineDiff, kindOf };
})();
