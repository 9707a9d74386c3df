// sluice's page: small shared helpers (DOM, formatting), no state.
'use strict';
window.sluiceUtil = (() => {
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }

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

  const encoder = new TextEncoder();
  function utf8Len(s) { return encoder.encode(s).length; }

  /** A long text as <details> (summary `label · size, lines`) or a short one as label + body. */
  function collapsible(label, body, text, { open = false, longChars = 800, longLines = 12 } = {}) {
    const lines = text.split('\n').length;
    if (text.length > longChars || lines > longLines) {
      const d = el('details', 'collapsible');
      d.open = open;
      d.append(el('summary', null, `${label} · ${fmtBytes(utf8Len(text))}, ${lines} lines`), body);
      return d;
    }
    const f = document.createDocumentFragment();
    if (label) f.append(el('div', 'label', label));
    f.append(body);
    return f;
  }

  return { el, fmtBytes, fmtAgo, utf8Len, collapsible };
})();
