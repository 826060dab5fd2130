/* ui-reqtable.js: the sortable requests table (sidebar: top-N of the
 * window by TTFT, duration, tokens, status or start, through the same
 * queryRequests semantics as the API) and the selected request's focus
 * track on the shared time axis: its prefill/decode, lifecycle stages and
 * server spans, each clickable to select its window and show the Nsight
 * profiles of its workers. */
'use strict';

const DSReqTable = (() => {
  const COLS = [
    ['id', 'request', 'id'], ['ttft_ms', 'TTFT', 'num'], ['duration', 'dur', 'num'], ['output_tokens', 'out tok', 'num'],
    ['status', 'st', 'str'], ['start', 'start s', 'num'],
  ];
  /* every sort a click on a column gives */
  const SORTS = COLS.flatMap(([k]) => [k, '-' + k]);
  const STEP = 50;
  let topN = STEP, focusHits = [], focusScale = null;

  function sortOf(app) {
    const s = app.state.reqSort;
    return { key: s.replace(/^-/, ''), desc: s[0] === '-' };
  }

  function cell(r, key) {
    switch (key) {
      case 'ttft_ms': return r.ttft_ms === null || r.ttft_ms === undefined ? '—' : DSUI.fmtNum(r.ttft_ms, 0);
      case 'duration': return DSUI.fmtDur(r.end - r.start);
      case 'output_tokens': return r.output_tokens === null || r.output_tokens === undefined ? '—' : DSUI.fmtNum(r.output_tokens);
      case 'status': return r.status === 'completed' ? '✓' : r.status || '—';
      case 'start': return r.start.toFixed(1);
      default: return r.id;
    }
  }

  /* Renders the table into box for the window and search text. */
  function render(app, box, search) {
    const { el } = DSUI;
    const { key, desc } = sortOf(app);
    const params = { from: app.state.from, to: app.state.to, sort: app.state.reqSort, limit: Math.min(1000, topN) };
    if (search) params.search = search;
    let page;
    if (app.catalog.sharded) {
      /* the index's top list at once, else a query over the shards */
      page = DSSessions.tablePage(app, params, () => render(app, box, search), box);
      if (!page) return;
    } else {
      try { page = DSQuery.queryRequests(app.cat, params); } catch (e) { box.replaceChildren(el('p', { class: 'muted', text: e.message })); return; }
    }
    const pick = (id) => (app.catalog.sharded ? DSSessions.select(app, id) : app.update({ request: id }));
    const head = el('tr', {}, COLS.map(([k, label, kind]) => el('th', {
      class: 'sortable' + (kind === 'num' ? ' num' : '') + (k === key ? ' sorted' : ''), tabindex: 0, 'data-key': k,
      'aria-sort': k === key ? (desc ? 'descending' : 'ascending') : 'none', title: `Sort by ${label}`,
      onclick: () => {
        const next = k === key ? (desc ? k : '-' + k) : (kind === 'num' && k !== 'start' ? '-' + k : k);
        topN = STEP;
        app.update({ reqSort: next });
      },
      onkeydown: (ev) => { if (ev.key === 'Enter') ev.currentTarget.click(); },
    }, label, k === key ? (desc ? ' ▼' : ' ▲') : '')));
    const rows = page.items.map((r) => el('tr', {
      class: 'req-row' + (r.id === app.state.request ? ' sel' : '') + (r.status === 'error' ? ' err' : ''), tabindex: 0, 'data-id': r.id,
      title: `${r.id} · session ${r.session} · agent ${r.agent}\nclick: select · double-click: zoom to request`,
      onclick: () => pick(r.id),
      ondblclick: () => (app.catalog.ids.has(r.id) ? zoomTo(app, r, 'whole') : pick(r.id)),
      onkeydown: (ev) => {
        if (ev.key === 'Enter') pick(r.id);
        else if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
          /* the next / previous row takes the focus and the selection */
          ev.preventDefault();
          const to = ev.key === 'ArrowDown' ? ev.currentTarget.nextElementSibling : ev.currentTarget.previousElementSibling;
          if (to && to.classList.contains('req-row')) { to.focus(); pick(to.dataset.id); }
        }
      },
    }, COLS.map(([k, , kind]) => el('td', { class: kind === 'num' ? 'num' : kind === 'id' ? 'rid' : '', text: cell(r, k) }))));
    /* the row that had the keyboard keeps it through the redraw */
    const act = document.activeElement, had = act && box.contains(act) && act.classList.contains('req-row') ? act.dataset.id : null;
    const more = page.total > page.items.length && topN < 1000
      ? el('button', { class: 'more', onclick: () => { topN += STEP; app.render(); } }, `show ${Math.min(STEP, page.total - page.items.length)} more`) : '';
    /* a pointer on the column heads loads the request summaries that
     * the other sorts and windows are answered from (sharded catalogs) */
    if (app.catalog.sharded) head.addEventListener('pointerenter', () => app.catalog.warmTable(SORTS), { once: true });
    box.replaceChildren(el('div', { class: 'hint', text: `top ${page.items.length} of ${page.total} requests in the window${search ? ' matching the search' : ''}` +
      (page.fromIndex ? ' (from the report index, no download)' : '') }),
      el('table', { class: 'grid reqtable' }, head, rows), more);
    const sel = box.querySelector('tr.sel');
    if (sel && app.scrollSel) { sel.scrollIntoView({ block: 'nearest' }); app.scrollSel = false; }
    if (had !== null) {
      const row = rows.find((tr) => tr.dataset.id === had);
      if (row) { row.focus({ preventScroll: true }); row.scrollIntoView({ block: 'nearest' }); }
    }
  }

  /* Shows a request (phase 'whole') or its prefill, with its workers' profiles. */
  function zoomTo(app, r, phase) {
    const a = r.start, b = phase === 'prefill' && typeof r.first === 'number' ? r.first : r.end;
    app.update({ request: r.id, workers: (r.workers || []).slice(), sel: b > a ? [a, b] : null });
    return app.focus(a, b);
  }

  /* The items of the focus track: the request, its phases, stages, spans. */
  function focusItems(r) {
    const items = [{ label: 'client request', start: r.start, end: r.end, kind: 'request', workers: r.workers || [] }];
    if (typeof r.first === 'number') {
      items.push({ label: 'prefill (start → first token)', start: r.start, end: r.first, kind: 'prefill', workers: r.workers || [] });
      items.push({ label: 'decode (first token → end)', start: r.first, end: r.end, kind: 'decode', workers: r.workers || [] });
    }
    const lc = r.lifecycle || {};
    for (const s of lc.stages || []) {
      if (typeof s.start === 'number' && typeof s.end === 'number')
        items.push({ label: `◆ ${s.label || s.name}`, start: s.start, end: s.end, kind: 'stage', workers: s.worker ? [s.worker] : r.workers || [] });
    }
    for (const s of lc.activities || []) {
      if (typeof s.start === 'number' && typeof s.end === 'number')
        items.push({ label: `▪ ${s.label || s.name}`, start: s.start, end: s.end, kind: 'stage', workers: s.worker ? [s.worker] : r.workers || [] });
    }
    for (const sp of (r.spans || []).slice(0, 40)) {
      if (typeof sp.start === 'number' && typeof sp.end === 'number')
        items.push({ label: `span ${sp.name || ''}${sp.worker ? ' @' + sp.worker : ''}`, start: sp.start, end: sp.end, kind: 'span',
          workers: sp.worker ? [sp.worker] : r.workers || [] });
    }
    return items;
  }

  const ROW = 15;
  const COLOR = { request: 'rgba(47,111,222,0.35)', prefill: 'rgba(47,111,222,0.9)', decode: 'rgba(47,111,222,0.55)',
    stage: 'rgba(18,184,134,0.7)', span: 'rgba(232,89,12,0.6)' };

  /* Draws the selected request's track into canvas (shared axis). */
  function drawFocus(app, canvas, r) {
    const items = focusItems(r);
    const { ctx, w } = DSUI.setupCanvas(canvas, items.length * ROW + 4);
    const s = DSUI.scale(app.state.from, app.state.to, w);
    focusScale = s;
    focusHits = [];
    items.forEach((it, i) => {
      const y = 2 + i * ROW;
      ctx.fillStyle = '#344054';
      ctx.fillText(DSUI.clipText(ctx, it.label, DSUI.GUTTER - 12), 6, y + ROW / 2);
      const a = Math.max(s.x0, s.x(it.start)), b = Math.min(s.x1, Math.max(s.x(it.end), s.x(it.start) + 2));
      if (b < s.x0 || a > s.x1) return;
      ctx.fillStyle = COLOR[it.kind];
      ctx.fillRect(a, y + 1, Math.max(2, b - a), ROW - 3);
      if (b - a > 50) {
        ctx.fillStyle = '#101828';
        ctx.fillText(DSUI.clipText(ctx, DSUI.fmtDur(it.end - it.start), b - a - 6), a + 3, y + ROW / 2);
      }
      focusHits.push({ it, y, a, b });
    });
    canvas.dataset.items = String(items.length);
  }

  function hit(x, y) {
    return focusHits.find((h) => y >= h.y && y < h.y + ROW && x >= h.a - 2 && x <= h.b + 2) || null;
  }

  /* The focus section above the request lanes (or nothing). */
  function renderFocus(app, holder) {
    const { el } = DSUI;
    const r = app.state.request !== null ? DSQuery.findRequest(app.cat, app.state.request) : null;
    if (!r) { holder.replaceChildren(); holder.hidden = true; return; }
    holder.hidden = false;
    let canvas = holder.querySelector('canvas');
    if (!canvas) {
      canvas = el('canvas', { id: 'req-focus', 'aria-label': 'The selected request, its phases, stages and spans on the time axis' });
      DSUI.attachDrag(canvas, () => focusScale, (a, b) => app.selectArea(a, b), (ev, x, y) => {
        const h = hit(x, y);
        if (!h) return;
        app.update({ workers: h.it.workers.slice(), sel: h.it.end > h.it.start ? [h.it.start, h.it.end] : null });
        app.focus(h.it.start, h.it.end);
      });
      canvas.addEventListener('mousemove', (ev) => {
        const rc = canvas.getBoundingClientRect(), h = hit(ev.clientX - rc.left, ev.clientY - rc.top);
        if (!h) return DSUI.hideTip();
        DSUI.showTip(ev, [el('b', { text: h.it.label }), el('div', { class: 'mono', text: `${DSUI.fmtTime(h.it.start, 10)} → ${DSUI.fmtTime(h.it.end, 10)} (${DSUI.fmtDur(h.it.end - h.it.start)})` }),
          el('div', { class: 'muted', text: `click: select this window and show the profiles of ${h.it.workers.join(', ') || 'no worker'}` })]);
      });
      canvas.addEventListener('mouseleave', DSUI.hideTip);
      holder.replaceChildren(el('div', { class: 'focus-head' }, el('b', { text: `Request ${r.id}` }),
        el('span', { class: 'muted', id: 'focus-meta' }),
        el('button', { id: 'btn-zoom-request', onclick: () => zoomTo(app, DSQuery.findRequest(app.cat, app.state.request), 'whole') }, 'Zoom to request'),
        el('button', { id: 'btn-zoom-prefill', onclick: () => zoomTo(app, DSQuery.findRequest(app.cat, app.state.request), 'prefill') }, 'Zoom to prefill'),
        el('button', { onclick: () => app.update({ request: null }) }, '✕')), canvas);
    }
    holder.querySelector('.focus-head b').textContent = `Request ${r.id}`;
    holder.querySelector('#btn-zoom-prefill').disabled = typeof r.first !== 'number';
    holder.querySelector('#focus-meta').textContent = `TTFT ${r.ttft_ms === null || r.ttft_ms === undefined ? '—' : DSUI.fmtNum(r.ttft_ms, 1) + ' ms'} · ` +
      `${DSUI.fmtDur(r.end - r.start)} · workers ${(r.workers || []).join(', ') || '—'} · click a stage to select it and show its workers' profiles`;
    drawFocus(app, canvas, r);
  }

  return { render, renderFocus, zoomTo, SORTS };
})();
