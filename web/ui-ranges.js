/* ui-ranges.js: NVTX ranges by name: the name filter (dims the other
 * ranges, next/previous match through queryNsys) and, for the selected
 * area (else the window), the table by name of the shown profiles with the
 * `nsys --group-by name` arithmetic (count, total, mean, max, time inside). */
'use strict';

const DSRanges = (() => {
  let bar = null, seq = 0, forced = '';
  /* Above this many candidate rows the table waits for a click (it streams
   * every overlapping shard; the tracks must not wait for it). */
  const AUTO_ROWS = 60000;

  /* The filter bar of the Nsight side panel (built once, kept focused). */
  function filterBar(app) {
    if (bar) {
      const inp = bar.querySelector('input');
      if (document.activeElement !== inp) inp.value = app.state.filter;
      return bar;
    }
    const { el } = DSUI;
    let t = null;
    const inp = el('input', { type: 'search', id: 'nvtx-filter', placeholder: 'Filter NVTX names…', 'aria-label': 'Filter NVTX range names' });
    inp.value = app.state.filter;
    inp.addEventListener('input', () => { clearTimeout(t); t = setTimeout(() => app.update({ filter: inp.value }), 150); });
    inp.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') { ev.preventDefault(); clearTimeout(t); app.update({ filter: inp.value }); step(app, ev.shiftKey ? -1 : 1); }
    });
    const status = el('span', { id: 'nvtx-match', class: 'muted' });
    bar = el('div', { class: 'nvtx-filter' }, inp,
      el('button', { id: 'btn-prev-match', title: 'Previous match (Shift+Enter)', onclick: () => step(app, -1) }, '◀'),
      el('button', { id: 'btn-next-match', title: 'Next match (Enter)', onclick: () => step(app, 1) }, '▶'), status);
    return bar;
  }

  function params(app) {
    const p = {};
    if (app.state.profile !== null) p.profile = app.state.profile;
    else if (app.state.workers.length) p.worker = app.state.workers.slice();
    if (app.state.filter) p.name = app.state.filter;
    return p;
  }

  /* Selects the next (dir 1) or previous (-1) range whose name matches,
   * from the selected range, else from the window's centre; keeps the zoom. */
  async function step(app, dir) {
    const st = app.state, f = st.filter;
    const status = document.getElementById('nvtx-match');
    if (!f) { if (status) status.textContent = 'type a name first'; return; }
    const cur = st.nsysEvent;
    const t = cur ? cur.start : (st.from + st.to) / 2;
    const base = params(app);
    let hit = null;
    const after = (it) => !cur || it.start > cur.start || (it.start === cur.start && (it.profile > cur.profile || (it.profile === cur.profile && it.rowid > cur.rowid)));
    const before = (it) => !cur || it.start < cur.start || (it.start === cur.start && (it.profile < cur.profile || (it.profile === cur.profile && it.rowid < cur.rowid)));
    try {
      if (dir > 0) {
        for (let off = 0; !hit && off < 20000; off += 1000) {
          const pg = await DSQuery.queryNsys(app.cat, app.store, Object.assign({ from: t, to: app.dur, sort: 'start', offset: off, limit: 1000 }, base));
          hit = pg.items.find((it) => it.start >= t && after(it)) || null;
          if (pg.items.length < 1000) break;
        }
      } else if (t > 0) {
        const pg = await DSQuery.queryNsys(app.cat, app.store, Object.assign({ from: 0, to: t, sort: ['-start', '-profile'], limit: 1000 }, base));
        hit = pg.items.find((it) => before(it)) || null;
      }
    } catch (e) {
      if (status) status.textContent = e.message;
      return;
    }
    if (!hit) { if (status) status.textContent = dir > 0 ? 'no later match' : 'no earlier match'; return; }
    const w = Math.max(st.to - st.from, (hit.end - hit.start) * 1.2);
    let a = (hit.start + hit.end) / 2 - w / 2;
    a = Math.min(Math.max(0, a), app.dur - Math.min(w, app.dur));
    app.update({ nsysEvent: hit, from: a, to: Math.min(app.dur, a + w) });
    const s2 = document.getElementById('nvtx-match');
    if (s2) s2.title = `${hit.name} at ${DSUI.fmtTime(hit.start, 10)}`;
  }

  /* Fills #byname-box with the by-name table of the selection or window. */
  async function loadByName(app, signal) {
    const box = document.getElementById('byname-box');
    if (!box) return;
    const my = ++seq;
    const win = app.state.sel || [app.state.from, app.state.to];
    const p = Object.assign({ from: win[0], to: win[1], groupBy: 'name', limit: 200 }, params(app));
    const { el } = DSUI;
    const key = JSON.stringify(p);
    let rows = 0, shards = 0;
    for (const pr of DSNsight.shown(app)) {
      if (DSQuery.nameSums(app.cat, pr, win[0], win[1])) continue; /* build-time sums, no scan */
      for (const d of pr.event_chunks || []) if (DSQuery.overlaps(d, win[0], win[1])) { rows += d.count; shards++; }
    }
    if (rows > AUTO_ROWS && forced !== key) {
      /* a wide window: the whole run (its table from the build's name
       * sums, a few small shards per profile) is likely next */
      for (const pr of DSNsight.shown(app)) if (pr.nvtx_summary && pr.nvtx_summary.names) app.store.prefetch(pr.nvtx_summary.names);
      box.replaceChildren(el('h3', { text: `Ranges by name in the ${app.state.sel ? 'selection' : 'window'}` }),
        el('button', { id: 'btn-by-name', onclick: () => { forced = key; app.render(); } },
          `Summarise ${DSUI.fmtNum(rows)} candidate ranges (streams ${shards} shards)`),
        el('p', { class: 'muted', text: 'Select a narrower area (drag on a track) for an immediate table.' }));
      return;
    }
    const t0 = performance.now();
    const res = await DSQuery.queryNsys(app.cat, app.store, p, signal);
    if (signal.aborted || my !== seq) return;
    const maxClip = res.items.length ? Math.max(...res.items.map((g) => g.clipped_total)) : 1;
    box.replaceChildren(el('h3', { text: `Ranges by name in the ${app.state.sel ? 'selection' : 'window'} (${DSUI.fmtDur(win[1] - win[0])}) · ` +
      `${DSUI.fmtNum(res.total)} ranges · ${DSUI.fmtNum(res.groups)} names` }),
    res.items.length ? el('table', { class: 'grid byname' }, el('tr', {}, ['name', 'count', 'total', 'mean', 'max', 'inside window'].map((h) => el('th', { text: h }))),
      res.items.map((g) => el('tr', { class: 'byname-row', 'data-name': g.key === null ? '' : g.key, title: 'click: filter by this name',
        onclick: () => app.update({ filter: g.key || '' }) },
      el('td', { text: g.key === null ? '(no name)' : g.key }), el('td', { class: 'num', text: DSUI.fmtNum(g.count) }),
      el('td', { class: 'num', text: DSUI.fmtDur(g.duration_total) }), el('td', { class: 'num', text: DSUI.fmtDur(g.duration_mean) }),
      el('td', { class: 'num', text: DSUI.fmtDur(g.duration_max) }),
      el('td', { class: 'num' }, el('span', { class: 'bar', style: `width:${Math.max(1, 60 * g.clipped_total / maxClip)}px` }), ' ', DSUI.fmtDur(g.clipped_total)))))
      : el('p', { class: 'muted', text: 'No NVTX range in this window.' }),
    res.groups > res.items.length ? el('p', { class: 'muted', text: `${res.groups - res.items.length} more names (queryNsys({groupBy: 'name', offset: 200}))` }) : '',
    el('p', { class: 'muted', text: `${res.attribution} Computed in ${(performance.now() - t0).toFixed(0)} ms.` }));
    box.dataset.total = String(res.total);
  }

  /* The filter's place in the window, as Perfetto's omnibox: "n of N
   * matches in the window" (N: the shown profiles' matching ranges
   * overlapping the window; n: those starting no later than the selected
   * match), in #nvtx-match. */
  let countSeq = 0;
  async function countMatches(app, signal) {
    const status = document.getElementById('nvtx-match'), st = app.state, my = ++countSeq;
    if (!status || !st.filter) return;
    const p = Object.assign({ from: st.from, to: st.to, groupBy: 'name', limit: 1 }, params(app));
    const res = await DSQuery.queryNsys(app.cat, app.store, p, signal);
    if (signal.aborted || my !== countSeq) return;
    const cur = st.nsysEvent, N = res.total;
    let n = null;
    if (cur && typeof cur.name === 'string' && cur.name.toLowerCase().includes(st.filter.toLowerCase()) && cur.start <= st.to && cur.end >= st.from) {
      const upTo = Math.max(st.from, Math.min(cur.start, st.to));
      n = upTo <= st.from ? 1 : (await DSQuery.queryNsys(app.cat, app.store, Object.assign({}, p, { to: upTo }), signal)).total;
      if (signal.aborted || my !== countSeq) return;
    }
    status.textContent = n !== null ? `${DSUI.fmtNum(n)} of ${DSUI.fmtNum(N)} matches in the window` : `${DSUI.fmtNum(N)} match${N === 1 ? '' : 'es'} in the window`;
    status.dataset.total = String(N);
    status.dataset.n = n === null ? '' : String(n);
  }

  return { filterBar, loadByName, step, countMatches };
})();
