/* live.js: a viewer served by a live session (dsightd --http).  Owns the
 * session link: whether one backs the page (the dsight-live marker the
 * session puts in <head>, with the generation it served), POST /rpc
 * (JSON-RPC, the session's cookie), traceExplorer.query(kind, params)
 * (any query kind answered by the session: what `dsight query --remote`
 * prints, parsed), the "report was rebuilt" banner (the session answers
 * from a newer generation than the page) and the "session has gone"
 * message (the static parts keep working).  A page opened from a file or
 * a static host has no marker: everything here stays inert. */
'use strict';

const DSLive = (() => {
  const POLL_MS = 5000;
  /* browser API names -> the RPC names of the query parameters */
  const RPC_NAMES = { from: 'start', to: 'end', request: 'request_id', minTTFT: 'min_ttft_ms', groupBy: 'group_by',
    minDuration: 'min_duration', maxDuration: 'max_duration', maxDepth: 'max_depth', self: 'self_time', maxRows: 'max_rows' };

  function markerGeneration() {
    const m = document.querySelector('meta[name="dsight-live"]');
    return m ? m.getAttribute('content') || '' : null;
  }
  const pageGen = markerGeneration();
  let nextId = 1, gone = false, rebuilt = null, timer = null;

  function active() { return pageGen !== null && pageGen !== ''; }

  function bar() {
    let b = document.getElementById('live-bar');
    if (!b) {
      b = DSUI.el('div', { id: 'live-bar', role: 'status', 'aria-live': 'polite', hidden: true });
      document.body.prepend(b);
    }
    return b;
  }

  function showRebuilt(gen) {
    if (rebuilt === gen || gone) return;
    rebuilt = gen;
    const b = bar();
    b.className = 'live-rebuilt';
    b.replaceChildren(DSUI.el('span', { text: 'The report was rebuilt; reload to see the new generation' }),
      DSUI.el('button', { id: 'live-reload', text: 'Reload', onclick: () => location.reload() }));
    b.hidden = false;
  }

  function showGone(why) {
    if (gone) return;
    gone = true;
    if (timer) clearInterval(timer);
    const b = bar();
    b.className = 'live-gone';
    b.replaceChildren(DSUI.el('span', { text: 'The session has gone (' + why + '). This page keeps working from its own ' +
      'data; queries answered by a session need a new one: dsightd serve REPORT --http PORT, then open the URL ' +
      'that dsight ctl url NAME prints.' }));
    b.hidden = false;
  }

  /* One JSON-RPC call; resolves with its result, rejects with an Error
   * carrying the JSON-RPC code (or an HTTP status). */
  async function rpc(method, params) {
    if (!active()) throw new Error('No session backs this page: open it from a session (dsight ctl url NAME)');
    let r;
    try {
      r = await fetch('/rpc', { method: 'POST', credentials: 'same-origin', cache: 'no-store',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: params || {} }) });
    } catch (e) {
      showGone('it does not answer');
      throw new Error('The session has gone: it does not answer');
    }
    const text = await r.text();
    if (r.status === 401 || r.status === 403) {
      showGone('it refused this page: a new session has another token');
      throw Object.assign(new Error('The session refused the request (HTTP ' + r.status + ')'), { status: r.status });
    }
    let msg;
    try { msg = JSON.parse(text); } catch (e) { throw new Error('Malformed answer from the session (HTTP ' + r.status + ')'); }
    if (r.status !== 200) throw Object.assign(new Error(msg.error || 'HTTP ' + r.status), { status: r.status });
    if (msg.error) throw Object.assign(new Error(msg.error.message), { code: msg.error.code });
    const res = msg.result;
    if (res && typeof res.generation === 'string' && res.generation !== pageGen) showRebuilt(res.generation);
    return res;
  }

  function rpcParams(kind, params) {
    const out = { kind };
    for (const [k, v] of Object.entries(params || {})) {
      if (v === undefined) continue;
      out[RPC_NAMES[k] || k] = v;
    }
    return out;
  }

  /* traceExplorer.query(kind, params): the session's answer, parsed. */
  async function query(kind, params) {
    if (typeof kind !== 'string' || !kind) throw new Error('query(kind, params): kind must be a query kind such as "sql"');
    const res = await rpc('query', rpcParams(kind, params));
    return res.data;
  }

  function poll() {
    rpc('hello', { protocol: 1, client: 'dsight-viewer' }).catch(() => {});
  }

  function describe() {
    return { live: active(), generation: active() ? pageGen : null, rebuilt: rebuilt !== null, gone };
  }

  function start() {
    if (!active()) return;
    timer = setInterval(poll, POLL_MS);
    document.addEventListener('visibilitychange', () => { if (!document.hidden && !gone) poll(); });
    if (typeof DSSqlPage !== 'undefined') DSSqlPage.install({ query, active });
  }

  addEventListener('trace-explorer:ready', start, { once: true });

  return { active, describe, query, rpc, pageGeneration: () => pageGen, poll };
})();
