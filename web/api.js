// sluice's page: the hub's JSON API with the bearer token (asked for once, kept for the tab).
'use strict';
window.sluiceApi = (() => {
  const TOKEN_KEY = 'sluice.token';
  const $ = (id) => document.getElementById(id);

  let token = sessionStorage.getItem(TOKEN_KEY) || '';
  let tokenAsk = null;

  // The hub prints its page link as `/#token=…` (a fragment never reaches a server or a log):
  // keep the token for this tab, then clean the address bar so it is not shared by accident.
  const fromLink = /^#token=([^&]+)/.exec(location.hash);
  if (fromLink) {
    token = decodeURIComponent(fromLink[1]);
    sessionStorage.setItem(TOKEN_KEY, token);
    history.replaceState(null, '', location.pathname + location.search);
  }

  /** Asks for the bearer token once; concurrent callers share the one form. */
  function askToken() {
    if (tokenAsk) return tokenAsk;
    tokenAsk = new Promise((resolve) => {
      const dlg = $('token-dialog'), input = $('token-input');
      input.value = '';
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
      if (res.status === 401) {
        if (!(await askToken())) throw new ApiError(401, 'unauthorized', 'a token is required');
        continue;
      }
      const text = await res.text();
      let data = null;
      try { data = text ? JSON.parse(text) : null; } catch { data = null; }
      if (!res.ok) {
        const e = (data && data.error) || {};
        throw new ApiError(res.status, e.code || String(res.status), e.message || res.statusText);
      }
      return data;
    }
  }

  return { api, ApiError, token: () => token };
})();
