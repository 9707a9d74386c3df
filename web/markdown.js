// sluice's page: assistant Markdown as sanitised DOM (marked + DOMPurify, from Debian, served under
// /vendor/), code blocks highlighted by highlight.js, loaded the first time a code block shows.
// Nothing is fetched from anywhere but this hub; images in answers are shown as links, not loaded.
'use strict';
window.sluiceMarkdown = (() => {
  const { el } = window.sluiceUtil;
  const HIGHLIGHT_URL = '/vendor/highlight.min.js';
  const HIGHLIGHT_MAX_CHARS = 100_000; // larger code blocks stay plain (highlighting is O(n) but not free)
  const LAZY_MARGIN = '1500px 0px';    // lazily rendered blocks render this close to the viewport

  const marked = window.marked;
  const purify = window.DOMPurify;
  const ready = !!(marked && marked.parse && purify && purify.sanitize);

  if (ready) {
    // Images would fetch from wherever the answer points: show them as links instead.
    const renderer = new marked.Renderer();
    renderer.image = (href, title, text) => {
      const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
      return `<a href="${esc(href)}">[image: ${esc(text || href)}]</a>`;
    };
    marked.setOptions({ gfm: true, breaks: true, headerIds: false, mangle: false, renderer });
    purify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName === 'A' && node.hasAttribute('href')) {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer nofollow');
      }
    });
  }
  const PURIFY = {
    RETURN_DOM_FRAGMENT: true,
    FORBID_TAGS: ['style', 'img', 'svg', 'math', 'video', 'audio', 'source', 'picture', 'form', 'input',
      'button', 'textarea', 'select', 'iframe', 'object', 'embed'],
    FORBID_ATTR: ['style'],
  };

  // ---------------------------------------------------------------- highlighting

  let hljsLoad = null;
  function loadHighlight() {
    if (window.hljs) return Promise.resolve(window.hljs);
    if (!hljsLoad) {
      hljsLoad = new Promise((resolve) => {
        const s = document.createElement('script');
        s.src = HIGHLIGHT_URL;
        s.onload = () => resolve(window.hljs || null);
        s.onerror = () => resolve(null);
        document.head.append(s);
      });
    }
    return hljsLoad;
  }

  function highlightCode(hljs, code) {
    const m = /(?:^|\s)language-([\w+#.-]+)/.exec(code.className);
    const lang = m && m[1].toLowerCase();
    const text = code.textContent;
    if (!lang || !hljs.getLanguage(lang) || text.length > HIGHLIGHT_MAX_CHARS) return;
    try {
      // highlight.js escapes the text; its output is spans with hljs-* classes only.
      // 11.x takes (text, {language}); Debian's 9.x (no highlightElement) takes (language, text, ignoreIllegals).
      const r = typeof hljs.highlightElement === 'function'
        ? hljs.highlight(text, { language: lang, ignoreIllegals: true }) : hljs.highlight(lang, text, true);
      code.innerHTML = r.value;
      code.classList.add('hljs');
    } catch { /* leave it plain */ }
  }

  function highlightIn(root) {
    const codes = root.querySelectorAll('pre > code[class*="language-"]');
    if (!codes.length) return;
    loadHighlight().then((hljs) => { if (hljs) codes.forEach((c) => highlightCode(hljs, c)); });
  }

  // ---------------------------------------------------------------- rendering

  /** Fills `box` with `text` as sanitised Markdown (plain text if the libraries are missing). */
  function fill(box, text) {
    if (!ready) { box.textContent = text; box.classList.add('plain'); return; }
    let frag;
    try { frag = purify.sanitize(marked.parse(String(text ?? '')), PURIFY); } catch { frag = null; }
    if (!frag) { box.textContent = text; box.classList.add('plain'); return; }
    box.replaceChildren(frag);
    box.classList.remove('plain');
    box.querySelectorAll('table').forEach((t) => { // wide tables scroll on their own
      const wrap = el('div', 'table-wrap');
      t.replaceWith(wrap);
      wrap.append(t);
    });
    highlightIn(box);
  }

  let observer = null;
  function lazyObserver() {
    if (!observer && 'IntersectionObserver' in window) {
      observer = new IntersectionObserver((entries) => {
        for (const e of entries) {
          if (!e.isIntersecting) continue;
          observer.unobserve(e.target);
          const t = e.target;
          if (t.sluiceMarkdown != null) { fill(t, t.sluiceMarkdown); t.sluiceMarkdown = null; }
        }
      }, { root: document.getElementById('conversation'), rootMargin: LAZY_MARGIN });
    }
    return observer;
  }

  /** A `.text.md` block of Markdown `text`; `lazy`: plain until it comes near the viewport. */
  function markdownBlock(text, lazy = false) {
    const box = el('div', 'text md');
    const o = lazy && ready ? lazyObserver() : null;
    if (o) {
      box.textContent = text;
      box.classList.add('plain');
      box.sluiceMarkdown = text;
      o.observe(box);
    } else {
      fill(box, text);
    }
    return box;
  }

  return { markdownBlock, fill, ready };
})();
