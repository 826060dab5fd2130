/* ui-sessions.js: the Requests tab when the catalog is sharded
 * (web/catalog.js): the virtualized session list from the catalog index
 * (a session shard is fetched when its rows scroll into view; opening a
 * session loads its requests into the lanes and lists them), the index's
 * top lists shown at once, and queries or searches across every shard
 * with visible progress and a Cancel button. */
'use strict';

const DSSessions = (() => {
  const ROWH = 20, VIEWH = 320;
  /* from this many requests the table's summaries load without waiting for the pointer */
  const WARM_AT = 50000;
  let starts = null;          /* [[first session number, shard index]] */
  const sessOf = new Map();   /* shard index -> its sessions, in order */
  const pending = new Set();  /* shard indexes being fetched for the list */
  let openId = null, scrollTop = 0;
  let job = null;             /* the table's query: {key, ctrl, done, total, page, error} */

  function index(C) {
    if (starts) return starts;
    starts = [];
    let n = 0;
    C.ix.shards.forEach((d, i) => {
      if (d.kind === 'sessions' && d.sessions) { starts.push([n, i]); n += d.sessions; }
    });
    starts.total = n;
    return starts;
  }

  /* [shard index, position inside it] of session number k. */
  function locate(k) {
    let lo = 0, hi = starts.length - 1;
    while (lo < hi) {
      const m = (lo + hi + 1) >> 1;
      if (starts[m][0] <= k) lo = m; else hi = m - 1;
    }
    return [starts[lo][1], k - starts[lo][0]];
  }

  function fetchList(app, i, redraw) {
    if (sessOf.has(i) || pending.has(i)) return;
    pending.add(i);
    app.store.get(app.catalog.ix.shards[i]).then((rows) => {
      sessOf.set(i, rows.filter((r) => r[0] === 1).map((r) => r[2]));
      pending.delete(i);
      redraw();
    }, (e) => { pending.delete(i); if (e && e.name !== 'AbortError') app.showError(e.message, true); });
  }

  /* Opens a session: loads its shard into the working set, shows its
   * window and lists its requests. */
  async function open(app, s, i) {
    await app.catalog.load(i);
    openId = s.id;
    const part = { tab: 'requests' };
    if (typeof s.start === 'number' && typeof s.end === 'number' && s.end >= s.start) {
      const pad = Math.max((s.end - s.start) * 0.05, 1e-3);
      part.from = Math.max(0, s.start - pad); part.to = Math.min(app.dur, s.end + pad);
    }
    app.update(part);
    DSRequests.scrollToSession(app, s.id);
  }

  /* Selects a request, loading its session shard first when needed. */
  function select(app, id) {
    if (app.catalog.ids.has(id)) return app.update({ request: id });
    return app.catalog.loadRequest(id).then(() => { app.scrollSel = true; app.update({ request: id, tab: 'requests' }); },
      (e) => app.showError(e.message, true));
  }

  function renderTree(app, box) {
    const { el } = DSUI;
    const C = app.catalog;
    if (!C.indexReady) { /* the index's lists are still being decoded */
      if (!box.querySelector('.vlist-wait'))
        box.replaceChildren(el('div', { class: 'hint vlist-wait', text: 'Reading the session list…' }));
      C.indexed().then(() => { if (!box.hidden && box.querySelector('.vlist-wait')) renderTree(app, box); },
        () => box.replaceChildren(el('div', { class: 'hint', text: 'The session list cannot be read (see the error above).' })));
      return;
    }
    index(C);
    let list = box.querySelector('.vlist');
    if (!list) {
      list = el('div', { class: 'vlist', role: 'list', 'aria-label': 'Sessions', style: `height: ${VIEWH}px; overflow-y: auto; position: relative` },
        el('div', { class: 'vspace', style: 'position: relative' }));
      list.addEventListener('scroll', () => { scrollTop = list.scrollTop; draw(); });
      box.replaceChildren(el('div', { class: 'hint', text: `${DSUI.fmtNum(starts.total)} sessions in start order (loaded as they scroll into view)` }),
        list, el('div', { id: 'sess-open' }));
    }
    const space = list.firstChild;
    space.style.height = `${starts.total * ROWH}px`;
    function draw() {
      const first = Math.floor(list.scrollTop / ROWH), last = Math.min(starts.total - 1, first + Math.ceil(VIEWH / ROWH) + 1);
      const rows = [];
      for (let k = first; k <= last && starts.length; k++) {
        const [i, j] = locate(k);
        const ss = sessOf.get(i);
        const s = ss && ss[j];
        if (!ss) fetchList(app, i, draw);
        const label = s ? `${s.id} ` : '…';
        rows.push(el('div', {
          class: 'req sess' + (s && s.id === openId ? ' sel' : ''), role: 'listitem', tabindex: 0,
          style: `position: absolute; top: ${k * ROWH}px; left: 0; right: 0; height: ${ROWH - 2}px`,
          title: s ? `${s.id}: ${(s.requests || []).length} requests · click to open` : 'loading…',
          onclick: () => { if (s) open(app, s, i); },
          onkeydown: (ev) => { if (s && ev.key === 'Enter') open(app, s, i); },
        }, el('span', { class: 'rid', text: label }), s ? el('span', { class: 'muted', text: `(${(s.requests || []).length})` }) : ''));
      }
      space.replaceChildren(...rows);
    }
    list.scrollTop = scrollTop;
    draw();
    const holder = box.querySelector('#sess-open');
    if (openId === null) { holder.replaceChildren(); return; }
    const reqs = app.cat.requests.filter((r) => r.session === openId).sort((a, b) => a.start - b.start);
    holder.replaceChildren(el('div', { class: 'hint', text: `session ${openId}: ${reqs.length} requests` }), ...reqs.map((r) => el('div', {
      class: 'req' + (r.id === app.state.request ? ' sel' : '') + (r.status === 'error' ? ' err' : ''), tabindex: 0, role: 'button', title: r.id,
      onclick: () => app.update({ request: r.id }),
    }, el('span', { class: 'rid', text: r.id }),
    el('span', { class: 'ttft', text: r.ttft_ms === null || r.ttft_ms === undefined ? 'TTFT —' : `TTFT ${DSUI.fmtNum(r.ttft_ms, 1)} ms` }))));
  }

  /* The page for the table: the index's top list when it answers the
   * view (whole run, no search, sorted by -ttft_ms or -duration), else the
   * finished query, else null while a query runs (status shows progress). */
  function tablePage(app, params, rerender, status) {
    const C = app.catalog, { el } = DSUI;
    const whole = params.from === 0 && params.to === app.dur && !params.search;
    if (whole && (params.sort === '-ttft_ms' || params.sort === '-duration') && params.limit <= 1000) {
      /* many requests: their summaries load a moment after the page is
       * ready, so that the first click on another column finds them */
      if (!C.table && C.counts().requests >= WARM_AT) setTimeout(() => C.warmTable(DSReqTable.SORTS), 1500);
      const all = C.top(params.sort.slice(1));
      return { total: C.counts().requests, items: all.slice(0, params.limit), fromIndex: true };
    }
    const key = JSON.stringify(params);
    if (job && job.key === key) {
      if (job.page) return job.page;
      if (job.error) { status.replaceChildren(el('p', { class: 'muted', text: job.error })); return null; }
      showProgress(job);
      return null;
    }
    if (job && job.ctrl) job.ctrl.abort();
    const me = { key, ctrl: new AbortController(), done: 0, total: 0, page: null, error: null };
    job = me;
    /* the progress line is built once per box and updated in place */
    function showProgress(j) {
      if (job !== j || j.page || j.error) return;
      let line = status.querySelector('#req-search-progress');
      if (!line) {
        line = el('div', { class: 'hint', id: 'req-search-progress', role: 'status' });
        status.replaceChildren(line, el('progress', { max: '1', value: '0' }),
          el('button', { id: 'btn-search-cancel', onclick: () => { if (job) job.ctrl.abort(); } }, 'Cancel'));
      }
      line.textContent = `${params.search ? 'Searching' : 'Querying'} ${j.total ? `${j.done} of ${j.total} shards` : '…'}`;
      const bar = status.querySelector('progress');
      bar.max = j.total || 1;
      bar.value = j.done;
    }
    showProgress(me);
    C.warmTable(DSReqTable.SORTS);
    const opts = { signal: me.ctrl.signal, progress: (d, n) => { me.done = d; me.total = n; showProgress(me); } };
    /* without a search: from the summaries in memory when they fit */
    C.tableRequests(params, me.ctrl.signal).then((pg) => pg || C.queryRequests(params, opts)).then((page) => {
      if (job !== me) return;
      me.page = page;
      rerender();
    }, (e) => {
      if (job !== me) return;
      me.error = e && e.name === 'AbortError' ? 'Search cancelled.' : e.message;
      rerender();
    });
    return null;
  }

  /* Loads the session shards of the window into the lanes when they hold
   * few enough requests; true when something new was loaded. */
  async function loadWindow(app, signal, budget) {
    const C = app.catalog;
    await C.indexed();
    const idxs = C.shardsOf('sessions', app.state.from, app.state.to);
    const n = idxs.reduce((a, i) => a + (C.ix.shards[i].requests || 0), 0);
    if (n > budget) return false;
    const got = await Promise.all(idxs.map((i) => C.load(i, signal)));
    return got.some(Boolean);
  }

  /* Requests (estimated from the shards' counts) in the window; null
   * until the index's lists are decoded. */
  function inWindow(app) {
    const C = app.catalog;
    if (!C.indexReady) return null;
    return C.shardsOf('sessions', app.state.from, app.state.to).reduce((a, i) => a + (C.ix.shards[i].requests || 0), 0);
  }

  return { renderTree, tablePage, select, loadWindow, inWindow };
})();
