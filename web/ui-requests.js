/* ui-requests.js: client requests: the sessions -> agents -> requests tree
 * with search (sidebar), the request lanes on the shared time axis with
 * TTFT marked, and the request inspector with its lifecycle (details). */
'use strict';

const DSRequests = (() => {
  const ROW = 16, HEAD = 16, VIEW = 230, COUNT_H = 56, COL = 3;
  let offset = 0, scrollPos = 0; /* scrollTop of the lanes: only the visible slice is drawn */
  let search = '', layout = null, sc = null, built = false, appRef = null, mode = 'table';
  const openSess = new Set(); /* sessions the user opened stay open across renders */
  let scrollTo = null;        /* a session whose lane the next drawing scrolls to */
  let counting = false, table = null, tableAsked = false; /* the request-count track and its data */

  function matches(r, needle) {
    if (!needle) return true;
    const hay = [r.id, r.session, r.agent, r.conversation, ...(r.server_ids || []), ...(r.workers || [])];
    return hay.some((h) => typeof h === 'string' && h.toLowerCase().includes(needle));
  }

  function visible(app) {
    const { from, to } = app.state, needle = search.toLowerCase();
    return app.cat.requests.filter((r) => r.start <= to && r.end >= from && matches(r, needle));
  }

  function color(r) {
    return r.status === 'error' ? '#d92d20' : r.status === 'cancelled' ? '#98a2b3' : '#2f6fde';
  }

  function buildSide(app) {
    const { el } = DSUI;
    const side = document.getElementById('side-requests');
    const input = el('input', { type: 'search', placeholder: 'Search id, session, agent, worker…', 'aria-label': 'Search requests' });
    input.addEventListener('input', () => { search = input.value; app.render(); });
    const seg = el('div', { class: 'seg', role: 'group', 'aria-label': 'Requests as' },
      ['table', 'tree'].map((m) => el('button', { 'data-mode': m, 'aria-pressed': String(m === mode),
        onclick: () => { mode = m; for (const b of seg.children) b.setAttribute('aria-pressed', String(b.dataset.mode === mode)); app.render(); } },
      m === 'table' ? 'Table (sortable)' : 'Sessions tree')));
    side.append(input, seg, el('div', { id: 'req-table' }), el('div', { id: 'req-tree', class: 'tree' }));
    built = true;
  }

  function renderTree(app, reqs) {
    const { el } = DSUI;
    const tree = document.getElementById('req-tree');
    const bySess = new Map();
    for (const r of reqs) {
      if (!bySess.has(r.session)) bySess.set(r.session, new Map());
      const a = bySess.get(r.session);
      if (!a.has(r.agent)) a.set(r.agent, []);
      a.get(r.agent).push(r);
    }
    const kids = [el('div', { class: 'hint', text: `${reqs.length} of ${app.cat.requests.length} requests in the window${search ? ' matching the search' : ''}` })];
    const openAll = bySess.size <= 6 || !!search;
    for (const [sess, agents] of bySess) {
      const n = [...agents.values()].reduce((a, l) => a + l.length, 0);
      const hasSel = [...agents.values()].some((l) => l.some((r) => r.id === app.state.request));
      const sd = el('details', { open: openAll || hasSel || openSess.has(sess) }, el('summary', { title: sess }, `${sess} `, el('span', { class: 'muted', text: `(${n})` })));
      /* a closed session builds its rows when first opened */
      const fill = () => {
        if (sd.dataset.filled) return;
        sd.dataset.filled = '1';
        fillSession(app, sd, agents);
      };
      if (sd.open) fill();
      sd.addEventListener('toggle', () => {
        if (sd.open && !openAll && !openSess.has(sess)) scrollToSession(app, sess);
        if (sd.open) { openSess.add(sess); fill(); } else openSess.delete(sess);
      });
      kids.push(sd);
    }
    tree.replaceChildren(...kids);
    const sel = tree.querySelector('.req.sel');
    if (sel && appRef && appRef.scrollSel) { sel.scrollIntoView({ block: 'nearest' }); appRef.scrollSel = false; }
  }

  function fillSession(app, sd, agents) {
    const { el } = DSUI;
    {
      for (const [agent, list] of agents) {
        const ad = el('details', { class: 'agent', open: true }, el('summary', { title: agent }, agent, ' ', el('span', { class: 'muted', text: `(${list.length})` })));
        for (const r of list) {
          const row = el('div', {
            class: 'req' + (r.id === app.state.request ? ' sel' : '') + (r.status === 'error' ? ' err' : ''),
            tabindex: 0, role: 'button', title: r.id,
            onclick: () => app.update({ request: r.id }),
            onkeydown: (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); app.update({ request: r.id }); } },
          }, el('span', { class: 'rid', text: r.id.length > 22 ? r.id.slice(0, 21) + '…' : r.id }),
          el('span', { class: 'ttft', text: r.ttft_ms === null || r.ttft_ms === undefined ? 'TTFT —' : `TTFT ${DSUI.fmtNum(r.ttft_ms, 1)} ms` }));
          ad.append(row);
        }
        sd.append(ad);
      }
    }
  }

  /* Packs the requests of each session into lanes. */
  function pack(reqs, top) {
    const groups = new Map();
    for (const r of reqs) {
      if (!groups.has(r.session)) groups.set(r.session, []);
      groups.get(r.session).push(r);
    }
    const rows = [];
    let y = top;
    for (const [sess, list] of groups) {
      const lanes = [];
      const placed = [];
      for (const r of list.slice().sort((a, b) => a.start - b.start)) {
        let i = lanes.findIndex((end) => end < r.start);
        if (i < 0) { i = lanes.length; lanes.push(0); }
        lanes[i] = r.end;
        placed.push([r, i]);
      }
      rows.push({ sess, y, lanes: lanes.length, placed });
      y += HEAD + lanes.length * ROW + 4;
    }
    return { rows, height: Math.max(y, 30) };
  }

  function hit(x, y0) {
    if (!layout || !sc) return null;
    const y = y0 + offset;
    for (const g of layout.rows) {
      for (const [r, lane] of g.placed) {
        const ry = g.y + HEAD + lane * ROW;
        const a = sc.x(r.start), b = Math.max(sc.x(r.end), a + 2);
        if (y >= ry && y < ry + ROW - 2 && x >= a - 2 && x <= b + 2) return r;
      }
    }
    return null;
  }

  /* Requests in flight per COL-pixel column of the window: exact from the
   * request summaries in memory, else each session shard's requests spread
   * over its bounds (approx). */
  function countColumns(app, ncol) {
    const { from, to } = app.state, C = app.catalog, w = (to - from) / ncol;
    const diff = new Float64Array(ncol + 1);
    const add = (a, b, n) => {
      if (!(b >= from && a <= to)) return;
      const c0 = Math.max(0, Math.floor((a - from) / w)), c1 = Math.min(ncol - 1, Math.floor((b - from) / w));
      diff[c0] += n; diff[c1 + 1] -= n;
    };
    if (table) {
      for (let i = 0; i < table.start.length; i++) add(table.start[i], table.end[i], 1);
    } else {
      for (const i of C.shardsOf('sessions', from, to)) {
        const d = C.ix.shards[i], b = d.bounds;
        if (!b || !d.requests) continue;
        const a = b[0], z = Math.max(b[3], a), cols = Math.max(1, Math.min(ncol - 1, Math.floor((z - from) / w)) - Math.max(0, Math.floor((a - from) / w)) + 1);
        add(a, z, d.requests / cols);
      }
    }
    const out = new Float64Array(ncol);
    let run = 0;
    for (let c = 0; c < ncol; c++) { run += diff[c]; out[c] = run; }
    return { counts: out, exact: !!table };
  }

  function drawCounts(app, ctx, w) {
    const ncol = Math.max(1, Math.floor((sc.x1 - sc.x0) / COL)), { counts, exact } = countColumns(app, ncol);
    let max = 0;
    for (const n of counts) if (n > max) max = n;
    ctx.fillStyle = '#f2f4f7';
    ctx.fillRect(0, 0, w, COUNT_H - 4);
    ctx.fillStyle = '#344054';
    ctx.font = '600 11px system-ui, "DejaVu Sans", sans-serif';
    ctx.fillText('requests in flight', 8, 12);
    ctx.font = '11px system-ui, "DejaVu Sans", sans-serif';
    ctx.fillStyle = '#667085';
    ctx.fillText(`${exact ? 'max' : '≈ max'} ${DSUI.fmtNum(Math.round(max))}`, 8, 28);
    ctx.fillText('zoom in or open a session for lanes', 8, 42);
    ctx.fillStyle = '#2f6fde';
    const top = 4, h = COUNT_H - 12;
    for (let c = 0; c < ncol; c++) {
      if (!(counts[c] > 0)) continue;
      const bh = Math.max(1, h * counts[c] / max);
      ctx.fillRect(sc.x0 + c * COL, top + h - bh, COL - 0.5, bh);
    }
    return { counts, ncol, exact };
  }

  function drawLanes(app, canvas) {
    const viewH = Math.min(layout.height, VIEW);
    offset = Math.min(scrollPos, Math.max(0, layout.height - viewH));
    canvas.style.top = offset + 'px';
    const { ctx, w } = DSUI.setupCanvas(canvas, viewH);
    sc = DSUI.scale(app.state.from, app.state.to, w);
    ctx.save();
    ctx.translate(0, -offset);
    canvas.dataset.counts = '';
    canvas.dsLayout = layout; /* (what the lanes hold: tests read it) */
    if (counting) {
      const cnt = drawCounts(app, ctx, w);
      canvas.dataset.counts = cnt.exact ? 'exact' : 'approx';
      canvas.dsCounts = cnt;
    }
    for (const g of layout.rows) {
      if (g.y > offset + viewH || g.y + HEAD + g.lanes * ROW < offset) continue;
      ctx.fillStyle = '#f2f4f7';
      ctx.fillRect(0, g.y, w, HEAD);
      ctx.fillStyle = '#344054';
      ctx.font = '600 11px system-ui, "DejaVu Sans", sans-serif';
      ctx.fillText(DSUI.clipText(ctx, `session ${g.sess}`, DSUI.GUTTER - 12), 8, g.y + HEAD / 2);
      ctx.font = '11px system-ui, "DejaVu Sans", sans-serif';
      ctx.beginPath();
      ctx.rect(sc.x0, g.y, sc.x1 - sc.x0, HEAD + g.lanes * ROW);
      ctx.save();
      ctx.clip();
      for (const [r, lane] of g.placed) {
        const y = g.y + HEAD + lane * ROW + 1;
        const a = sc.x(r.start), b = Math.max(sc.x(r.end), a + 2);
        ctx.fillStyle = color(r);
        ctx.globalAlpha = 0.35;
        ctx.fillRect(a, y, b - a, ROW - 4);
        ctx.globalAlpha = 1;
        if (r.first !== null && r.first !== undefined) {
          const f = sc.x(r.first);
          ctx.fillRect(a, y, Math.max(1, f - a), ROW - 4);
          ctx.fillStyle = '#101828';
          ctx.fillRect(f - 1, y - 1, 2, ROW - 2);
        }
        if (r.id === app.state.request) {
          ctx.strokeStyle = '#f79009';
          ctx.lineWidth = 2;
          ctx.strokeRect(a - 1, y - 1, b - a + 2, ROW - 2);
        }
        if (b - a > 60) {
          ctx.fillStyle = '#101828';
          ctx.fillText(DSUI.clipText(ctx, `${r.id}${r.ttft_ms !== null && r.ttft_ms !== undefined ? ` · TTFT ${DSUI.fmtNum(r.ttft_ms, 1)} ms` : ''}`,
            b - a - 8), Math.max(a, sc.x0) + 4, y + (ROW - 4) / 2);
        }
      }
      ctx.restore();
    }
    ctx.restore();
  }

  function renderSection(app, reqs) {
    const { el } = DSUI;
    const sec = document.getElementById('sec-requests');
    if (!sec.firstChild) {
      const canvas = el('canvas', { id: 'req-canvas', 'aria-label': 'Client requests on the time axis' });
      sec.append(el('div', { class: 'sec-head' }, 'Client requests', el('span', { class: 'muted', id: 'req-count' }),
        el('span', { class: 'muted', text: 'bar = request · dark part = time to first token · ▮ = first token' })),
      el('div', { id: 'req-focus-box', class: 'req-focus', hidden: true }),
      el('div', { class: 'sec-body', style: `max-height: ${VIEW}px; overflow-y: auto` },
        el('div', { id: 'req-spacer', style: 'position: relative' }, canvas)));
      canvas.style.position = 'absolute';
      canvas.style.left = '0';
      let raf = 0;
      const body = sec.querySelector('.sec-body');
      body.addEventListener('scroll', () => {
        scrollPos = body.scrollTop;
        if (raf) return;
        raf = requestAnimationFrame(() => { raf = 0; if (layout) drawLanes(app, canvas); });
      });
      DSUI.attachDrag(canvas, () => sc, (a, b) => app.selectArea(a, b), (ev, x, y) => {
        const r = hit(x, y);
        if (r) { app.scrollSel = true; app.update({ request: r.id, tab: 'requests' }); }
      });
      canvas.addEventListener('mousemove', (ev) => {
        const rc = canvas.getBoundingClientRect();
        const r = hit(ev.clientX - rc.left, ev.clientY - rc.top);
        if (!r) return DSUI.hideTip();
        DSUI.showTip(ev, [el('b', { text: r.id }), el('div', { class: 'mono', text:
          `${r.status} · ${DSUI.fmtTime(r.start, 10)} → ${DSUI.fmtTime(r.end, 10)} (${DSUI.fmtDur(r.end - r.start)})` }),
        el('div', { class: 'mono', text: `TTFT ${r.ttft_ms === null || r.ttft_ms === undefined ? '—' : DSUI.fmtNum(r.ttft_ms, 2) + ' ms'} · in ${DSUI.fmtNum(r.input_tokens)} / out ${DSUI.fmtNum(r.output_tokens)} tokens` }),
        el('div', { class: 'mono', text: `agent ${r.agent}` })]);
      });
      canvas.addEventListener('mouseleave', DSUI.hideTip);
    }
    const C = app.catalog, win = C.sharded ? DSSessions.inWindow(app) : 0;
    document.getElementById('req-count').textContent = C.sharded
      ? `${reqs.length} drawn (the loaded sessions)${win > reqs.length ? ': zoom in or open a session to draw more' : ''}`
      : app.cat.requests.length ? `${reqs.length} in window${search ? ' (search)' : ''}` : 'no client requests in the evidence';
    DSReqTable.renderFocus(app, document.getElementById('req-focus-box'));
    /* the window holds requests the lanes do not draw: a count track stands in */
    counting = !!(C.sharded && win && win > reqs.length);
    /* exact once the requests table's summaries are in memory (loaded for
     * the table: its pointer, or at once from WARM_AT requests); until then
     * from the session shards' counts */
    if (counting && !table && !tableAsked && C.table) {
      tableAsked = true;
      C.table.then((t) => { table = t; if (t && counting) drawLanes(app, document.getElementById('req-canvas')); }, () => { tableAsked = false; });
    }
    layout = pack(reqs, counting ? COUNT_H : 0);
    document.getElementById('req-spacer').style.height = layout.height + 'px';
    const body = sec.querySelector('.sec-body'), g = scrollTo !== null && layout.rows.find((x) => x.sess === scrollTo);
    if (g) {
      scrollTo = null;
      body.scrollTop = scrollPos = g.y;
      sec.scrollIntoView({ block: 'nearest' });
    }
    drawLanes(app, document.getElementById('req-canvas'));
  }

  /* The next drawing scrolls the lanes to session id (when drawn). */
  function scrollToSession(app, id) {
    scrollTo = id;
    if (layout && document.getElementById('sec-requests').firstChild) renderSection(app, visible(app));
  }

  function lifecycle(app, r) {
    const { el } = DSUI;
    const lc = r.lifecycle || {};
    const wrap = el('div');
    if (!lc.available) {
      wrap.append(el('p', { class: 'muted', text: 'No server activity was recorded for this request (lifecycle unavailable).' }));
      return wrap;
    }
    const items = [];
    for (const s of lc.stages || []) items.push({ kind: 'stage', label: s.label || s.name, start: s.start, end: s.end, who: s.role });
    for (const a of lc.activities || []) items.push({ kind: 'activity', label: a.label || a.name, start: a.start, end: a.end, who: a.worker || a.role, depth: a.depth || 0 });
    const t0 = Math.min(r.start, ...items.map((i) => i.start)), t1 = Math.max(r.end, ...items.map((i) => i.end));
    const c = el('canvas');
    wrap.append(c);
    requestAnimationFrame(() => {
      const H = 20 + (items.length + 1) * 18;
      const { ctx, w } = DSUI.setupCanvas(c, H, true);
      const s = DSUI.scale(t0, t1 > t0 ? t1 : t0 + 1e-6, w);
      const draw = (label, a, b, y, col) => {
        ctx.fillStyle = '#344054';
        ctx.fillText(DSUI.clipText(ctx, label, DSUI.GUTTER - 12), 6, y + 7);
        ctx.fillStyle = col;
        const x = s.x(a);
        ctx.fillRect(x, y, Math.max(2, s.x(b) - x), 14);
        ctx.fillStyle = '#101828';
        ctx.fillText(DSUI.fmtDur(b - a), Math.min(s.x(b) + 4, w - 60), y + 7);
      };
      draw('client request', r.start, r.end, 4, 'rgba(47,111,222,0.35)');
      items.forEach((it, i) => draw(`${it.kind === 'stage' ? '◆' : '▪'} ${it.label}`, it.start, it.end, 22 + i * 18,
        it.kind === 'stage' ? 'rgba(18,184,134,0.6)' : 'rgba(232,89,12,0.55)'));
      ctx.fillStyle = '#d92d20';
      for (const m of lc.milestones || []) {
        const x = s.x(m.time);
        ctx.fillRect(x - 1, 0, 2, H);
      }
    });
    if ((lc.milestones || []).length) {
      wrap.append(el('h3', { text: 'Milestones' }), el('table', { class: 'grid' }, el('tr', {}, el('th', { text: 'time' }), el('th', { text: 'label' }), el('th', { text: 'role' }), el('th', { text: 'boundary' })),
        lc.milestones.map((m) => el('tr', {}, el('td', { text: DSUI.fmtTime(m.time, 10) }), el('td', { text: m.label }), el('td', { text: m.role || '' }), el('td', { text: m.boundary || '' })))));
    }
    if (lc.timing) wrap.append(el('p', { class: 'muted', text: lc.timing }));
    return wrap;
  }

  function renderDetails(app) {
    const { el } = DSUI;
    const box = document.getElementById('details');
    const id = app.state.request;
    if (id === null) {
      box.replaceChildren(el('h2', { text: 'Request inspector' }),
        el('p', { class: 'muted', text: 'Select a request in the tree or on the time axis to see its timing, tokens, workers and lifecycle.' }));
      return;
    }
    const r = DSQuery.findRequest(app.cat, id);
    const fields = ['id', 'session', 'agent', 'conversation', 'status', 'start', 'first', 'end', 'ttft_ms', 'input_tokens',
      'output_tokens', 'cached_tokens', 'workers', 'server_ids', 'issues', 'evidence'];
    const spans = (r.spans || []).slice(0, 200);
    const spanTable = spans.length ? [el('h3', { text: `Server spans (${(r.spans || []).length})` }),
      el('table', { class: 'grid' }, el('tr', {}, ['name', 'role', 'worker', 'start', 'duration'].map((h) => el('th', { text: h }))),
        spans.map((sp) => el('tr', {}, el('td', { text: sp.name || '' }), el('td', { text: sp.role || '' }), el('td', { text: sp.worker || sp.host || '' }),
          el('td', { class: 'num', text: typeof sp.start === 'number' ? DSUI.fmtTime(sp.start, 10) : '—' }),
          el('td', { class: 'num', text: typeof sp.start === 'number' && typeof sp.end === 'number' ? DSUI.fmtDur(sp.end - sp.start) : '—' }))))] : [];
    box.replaceChildren(el('h2', {}, `Request ${r.id} `, el('span', { class: 'muted', text: `${DSUI.fmtDur(r.end - r.start)} · ${(r.spans || []).length} span${(r.spans || []).length === 1 ? "" : "s"}` }),
      ' ', el('button', { onclick: () => DSReqTable.zoomTo(app, r, 'whole') }, 'Zoom to request'),
      ' ', el('button', { disabled: typeof r.first !== 'number', onclick: () => DSReqTable.zoomTo(app, r, 'prefill') }, 'Zoom to prefill')),
      el('div', { class: 'cols' }, el('div', {}, DSUI.kv(r, fields.filter((f) => f in r)), spanTable),
        el('div', {}, el('h3', { text: 'Lifecycle' }), lifecycle(app, r))));
  }

  function render(app) {
    appRef = app;
    if (!built) buildSide(app);
    const reqs = visible(app);
    if (app.state.tab === 'requests') {
      document.getElementById('req-table').hidden = mode !== 'table';
      document.getElementById('req-tree').hidden = mode !== 'tree';
      if (mode === 'table') DSReqTable.render(app, document.getElementById('req-table'), search);
      else if (app.catalog.sharded) DSSessions.renderTree(app, document.getElementById('req-tree'));
      else renderTree(app, reqs);
    }
    renderSection(app, reqs);
    if (app.state.tab === 'requests') renderDetails(app);
  }

  /* Sharded catalog: loads the window's session shards into the lanes
   * when they hold at most LANE_BUDGET requests. */
  const LANE_BUDGET = 3000;
  async function load(app, signal) {
    if (!app.catalog.sharded) return;
    const counted = app.catalog.indexReady; /* else the count line waits for the index */
    const more = await DSSessions.loadWindow(app, signal, LANE_BUDGET);
    if ((more || !counted) && !signal.aborted) renderSection(app, visible(app));
  }

  return { render, load, scrollToSession };
})();
