// sluice's page: the hub's JSON API with the bearer token (asked for once, kept for the tab).
'use strict';
window.sluiceApi = (() => {
  const TOKEN_KEY = 'sluice.token';
  const $ = (id) => document.getElementById(id);

  let token = sessionStorage.getItem(TOKEN_KEY) || '';
  let tokenAsk = null;

  // The hub prints its page link as `/#token=…` (a fragment never reaches a server or a log):
  // keep the token for this tab, then clean the address bar so it is not shared by accident.
  // A second link opened in a tab that is already open arrives as a hashchange: it is used (the
  // page starts over with it: a viewer's link shows a viewer's page) and cleaned the same way.
  function takeLink() {
    const fromLink = /^#token=([^&]+)/.exec(location.hash);
    if (!fromLink) return false;
    token = decodeURIComponent(fromLink[1]);
    sessionStorage.setItem(TOKEN_KEY, token);
    history.replaceState(null, '', location.pathname + location.search);
    return true;
  }
  takeLink();
  window.addEventListener('hashchange', (e) => {
    if (!takeLink()) return;
    e.stopImmediatePropagation(); // the router sees no #token= route
    location.reload();
  });

  /** Asks for the bearer token once; concurrent callers share the one form. `why`: the hub's
   *  refusal of the token tried last, shown in the form. */
  function askToken(why = '') {
    if (tokenAsk) return tokenAsk;
    tokenAsk = new Promise((resolve) => {
      const dlg = $('token-dialog'), input = $('token-input');
      input.value = '';
      $('token-note').textContent = why;
      dlg.addEventListener('close', () => {
        const t = input.value.trim();
        if (t) { token = t; sessionStorage.setItem(TOKEN_KEY, t); }
        tokenAsk = null;
        resolve(t);
      }, { once: true });
      dlg.showModal();
      input.focus();
    });
    return tokenAsk;
  }

  class ApiError extends Error {
    constructor(status, code, message) { super(message); this.status = status; this.code = code; }
  }

  async function api(method, path, body) {
    for (;;) {
      const headers = {};
      if (token) headers.Authorization = `Bearer ${token}`;
      // The hub takes state changes as JSON only (a cross-site form cannot send that).
      if (method !== 'GET') headers['Content-Type'] = 'application/json';
      const res = await fetch(path, {
        method, headers, cache: 'no-store',
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let data = null;
      try { data = text ? JSON.parse(text) : null; } catch { data = null; }
      if (res.status === 401) {
        const why = token ? `The hub refused that token: ${(data && data.error && data.error.message) || 'unauthorized'}` : '';
        if (!(await askToken(why))) throw new ApiError(401, 'unauthorized', 'a token is required');
        continue;
      }
      if (res.status === 429) {
        // Too many wrong tokens from here: the hub says so and for how long; nothing is asked
        // meanwhile (another try would only be refused).
        const e = (data && data.error) || {};
        const wait = res.headers.get('Retry-After');
        const msg = e.message || `too many wrong tokens; try again${wait ? ` in ${wait} s` : ' later'}`;
        if ($('token-dialog').open) $('token-note').textContent = msg;
        throw new ApiError(429, e.code || 'too_many_requests', msg);
      }
      if (!res.ok) {
        const e = (data && data.error) || {};
        throw new ApiError(res.status, e.code || String(res.status), e.message || res.statusText);
      }
      return data;
    }
  }

  return { api, ApiError, token: () => token };
})();
