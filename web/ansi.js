// sluice's page: terminal output (SGR colour escapes) as DOM text spans; every other escape is dropped.
// Only text nodes and class names are made: the output is never parsed as HTML.
'use strict';
window.sluiceAnsi = (() => {
  const { el } = window.sluiceUtil;
  // CSI sequences (colours and anything else), OSC sequences, other lone escapes.
  const ESC_RE = /\x1b\[([0-9;?]*)([@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

  const hasAnsi = (text) => text.includes('\x1b');

  /** A <pre> of `text` with SGR colours, bold, dim, italic and underline as `ansi-*` classes. */
  function ansiPre(text, cls) {
    const pre = el('pre', cls);
    if (!hasAnsi(text)) { pre.textContent = text; return pre; }
    let st = { fg: null, bg: null, bold: false, dim: false, italic: false, under: false };
    let last = 0;
    const emit = (s) => {
      if (!s) return;
      const classes = [];
      if (st.fg) classes.push(`ansi-fg-${st.fg}`);
      if (st.bg) classes.push(`ansi-bg-${st.bg}`);
      if (st.bold) classes.push('ansi-bold');
      if (st.dim) classes.push('ansi-dim');
      if (st.italic) classes.push('ansi-italic');
      if (st.under) classes.push('ansi-under');
      if (classes.length) pre.append(el('span', classes.join(' '), s)); else pre.append(s);
    };
    const sgr = (params) => {
      const p = params === '' ? [0] : params.split(';').map((x) => Number(x) || 0);
      for (let i = 0; i < p.length; i++) {
        const n = p[i];
        if (n === 0) st = { fg: null, bg: null, bold: false, dim: false, italic: false, under: false };
        else if (n === 1) st.bold = true;
        else if (n === 2) st.dim = true;
        else if (n === 3) st.italic = true;
        else if (n === 4) st.under = true;
        else if (n === 22) { st.bold = false; st.dim = false; }
        else if (n === 23) st.italic = false;
        else if (n === 24) st.under = false;
        else if (n >= 30 && n <= 37) st.fg = String(n - 30);
        else if (n >= 90 && n <= 97) st.fg = String(n - 90 + 8);
        else if (n === 39) st.fg = null;
        else if (n >= 40 && n <= 47) st.bg = String(n - 40);
        else if (n >= 100 && n <= 107) st.bg = String(n - 100 + 8);
        else if (n === 49) st.bg = null;
        else if (n === 38 || n === 48) {
          // 256-colour (5;n) keeps the 16 base colours, maps the rest to none; truecolour (2;r;g;b) skipped.
          const key = n === 38 ? 'fg' : 'bg';
          if (p[i + 1] === 5) { st[key] = p[i + 2] < 16 ? String(p[i + 2]) : null; i += 2; }
          else if (p[i + 1] === 2) { st[key] = null; i += 4; }
        }
      }
    };
    ESC_RE.lastIndex = 0;
    for (let m; (m = ESC_RE.exec(text));) {
      emit(text.slice(last, m.index));
      last = ESC_RE.lastIndex;
      if (m[2] === 'm') sgr(m[1]);
    }
    emit(text.slice(last));
    return pre;
  }

  return { ansiPre, hasAnsi };
})();
