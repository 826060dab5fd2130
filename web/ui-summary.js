/* ui-summary.js: NVTX summary tracks, drawn when a window's candidate rows
 * exceed the exact display budget: one row per thread, each bin of the
 * build-time summary level that fits the zoom coloured by its dominant name,
 * every 120 pixels a label naming what dominates there, hover showing the
 * bin's top names with ranges and time.  The data are the profile's
 * `nvtx_summary` shards (doc/report-files.md "NVTX summary shards"). */
'use strict';

const DSSummary = (() => {
  const ROW = 18, THEAD = 14, PX_PER_BIN = 6, CELL = 120;

  function has(p) { return !!(p.nvtx_summary && p.nvtx_summary.levels && p.nvtx_summary.levels.length); }

  /* The coarsest level whose bins are at most PX_PER_BIN pixels wide (else
   * the finest). */
  function levelFor(p, from, to, px) {
    const lv = p.nvtx_summary.levels, per = (to - from) / Math.max(1, px);
    for (let i = 0; i < lv.length; i++) if (lv[i].width <= per * PX_PER_BIN) return i;
    return lv.length - 1;
  }

  /* Rows of level l overlapping [from, to]: [bin, thread, names, (name,
   * inner, total, count)...], streamed through the shared cache. */
  async function rowsOf(store, p, l, from, to, signal) {
    const lv = p.nvtx_summary.levels[l], out = [];
    const b0 = Math.floor(from / lv.width), b1 = Math.floor(to / lv.width);
    for await (const chunk of DSQuery.stream(store, lv.chunks, from, to, signal))
      for (const r of chunk) if (r[0] >= b0 && r[0] <= b1) out.push(r);
    return out;
  }

  function tops(r) {
    const out = [];
    for (let i = 3; i + 3 < r.length; i += 4) out.push({ name: r[i], inner: r[i + 1], total: r[i + 2], count: r[i + 3] });
    return out;
  }

  function threadLabel(p, tid) {
    const th = (p.threads || []).find((t) => t.global_tid === tid);
    return `tid ${tid}${th && th.name ? ' · ' + th.name : ''}`;
  }

  /* Draws tr (a DSNsight track) from rows of level l: bins coloured by
   * their dominant name (opacity: the share of the bin it fills), and
   * every CELL pixels the name that dominates the cell's bins as a label. */
  function draw(app, tr, l, rows, colorFor) {
    const p = tr.p, ns = p.nvtx_summary, lv = ns.levels[l];
    const byThread = new Map();
    for (const r of rows) {
      if (!byThread.has(r[1])) byThread.set(r[1], []);
      byThread.get(r[1]).push(r);
    }
    const ths = [...byThread.keys()].sort((a, b) => a - b);
    const height = DSUI.stickyHeight(tr, 'summary', Math.max(24, ths.length * (THEAD + ROW + 2)));
    const { ctx, w } = DSUI.setupCanvas(tr.canvas, height);
    const s = DSUI.scale(app.state.from, app.state.to, w);
    tr.scale = s;
    tr.hits = [];
    tr.summary = { level: l, width: lv.width, rows: new Map() };
    if (!rows.length) {
      ctx.fillStyle = '#98a2b3';
      ctx.fillText('no NVTX range in this window', s.x0 + 8, 12);
      tr.canvas.dataset.labels = '0';
      return;
    }
    const needle = app.state.filter ? app.state.filter.toLowerCase() : '';
    const nameOf = (i) => (typeof p.names[i] === 'string' ? p.names[i] : i < 0 ? '(no name)' : `#${i}`);
    const hit = new Map();
    const matches = (i) => { let m = hit.get(i); if (m === undefined) hit.set(i, m = nameOf(i).toLowerCase().includes(needle)); return m; };
    const runs = []; /* labelled cells: [name index, first bin, last bin, tid, y] */
    const colors = new Map();
    /* a name's weight in a cell: the time of its ranges inside the bins, or,
     * in bins only enclosing ranges touch, their time */
    /* a cell's weight per name index + 1 (-1: no name), reset after each cell */
    let acc = new Float64Array(p.names.length + 2), seen = new Uint8Array(acc.length);
    const touched = [];
    const grow = (k) => {
      const a2 = new Float64Array(2 * k + 2), s2 = new Uint8Array(a2.length);
      a2.set(acc); s2.set(seen); acc = a2; seen = s2;
    };
    let y = 0, labelled = 0;
    for (const th of ths) {
      const list = byThread.get(th).sort((a, b) => a[0] - b[0]);
      const tid = ns.threads[th], yb = y + THEAD;
      tr.summary.rows.set(th, { y0: yb, y1: yb + ROW, list, tid });
      ctx.fillStyle = '#f9fafb';
      ctx.fillRect(0, y, w, THEAD + ROW);
      ctx.fillStyle = '#344054';
      ctx.fillText(DSUI.clipText(ctx, threadLabel(p, tid), DSUI.GUTTER - 12), 8, y + THEAD / 2 + 1);
      ctx.save();
      ctx.beginPath(); ctx.rect(s.x0, y, s.x1 - s.x0, THEAD + ROW); ctx.clip();
      /* cells in order (bins are sorted): [cell, dominant name, first bin, last bin] */
      const cells = [];
      let cell = -1, cb0 = 0, cb1 = 0;
      const flush = () => {
        if (cell < 0) return;
        let best = null, bw = -1;
        for (const k of touched) {
          const n = k - 1, x = acc[k];
          if (x > bw || (x === bw && n < best)) { best = n; bw = x; }
          acc[k] = 0; seen[k] = 0;
        }
        touched.length = 0;
        cells.push([cell, best, cb0, cb1]);
      };
      let lastCol = null, lastAlpha = -1;
      for (const r of list) {
        const a = Math.max(s.x(r[0] * lv.width), s.x0 - 2), b = Math.min(s.x((r[0] + 1) * lv.width), s.x1 + 2);
        let inner = 0, match = !needle;
        for (let i = 3; i + 3 < r.length; i += 4) {
          inner += r[i + 1];
          if (!match && matches(r[i])) match = true;
        }
        const enclosedOnly = inner === 0, alpha = match ? 0.35 + 0.65 * (enclosedOnly ? 1 : Math.min(1, inner / lv.width)) : 0.12;
        let col = colors.get(r[3]);
        if (!col) colors.set(r[3], col = colorFor(r[3]));
        /* a canvas parses every colour it is given: set it only when it changes */
        if (col !== lastCol) { ctx.fillStyle = col; lastCol = col; }
        if (alpha !== lastAlpha) { ctx.globalAlpha = alpha; lastAlpha = alpha; }
        ctx.fillRect(a, yb, Math.max(1, b - a), ROW - 2);
        const c = Math.floor((Math.max(a, s.x0) - s.x0) / CELL);
        if (c !== cell) { flush(); cell = c; cb0 = r[0]; }
        cb1 = r[0];
        for (let i = 3; i + 3 < r.length; i += 4) {
          const k = Math.max(0, r[i] + 1);
          if (k >= acc.length) grow(k);
          if (!seen[k]) { seen[k] = 1; touched.push(k); }
          acc[k] += enclosedOnly ? r[i + 2] : r[i + 1];
        }
      }
      flush();
      ctx.globalAlpha = 1;
      for (const [c, best, b0, b1] of cells) {
        const x0 = s.x0 + c * CELL + 2, lab = label(ctx, nameOf(best)), text = lab[0], tw = lab[1];
        if (!text) continue;
        ctx.fillStyle = 'rgba(255,255,255,0.86)';
        ctx.fillRect(x0, yb + 2, tw + 6, ROW - 6);
        ctx.fillStyle = '#101828';
        ctx.fillText(text, x0 + 3, yb + (ROW - 2) / 2);
        labelled++;
        if (runs.length < 40) runs.push([best, b0, b1, tid, yb]);
      }
      ctx.restore();
      y += THEAD + ROW + 2;
    }
    tr.canvas.dataset.level = String(l);
    tr.canvas.dataset.labels = String(labelled); /* names drawn (tests, bench) */
    tr.canvas.dataset.runs = JSON.stringify(runs);
  }

  /* The row of bin b in list (sorted by bin), or null. */
  function binOf(list, b) {
    let lo = 0, hi = list.length - 1;
    while (lo <= hi) {
      const m = (lo + hi) >> 1, v = list[m][0];
      if (v === b) return list[m];
      if (v < b) lo = m + 1; else hi = m - 1;
    }
    return null;
  }

  /* A cell label's text clipped to the cell and its width, measured once
   * per name (the font never changes). */
  const labels = new Map();
  function label(ctx, name) {
    let l = labels.get(name);
    if (!l) {
      if (labels.size > 20000) labels.clear();
      const text = DSUI.clipText(ctx, name, CELL - 10);
      l = [text, text ? ctx.measureText(text).width : 0];
      labels.set(name, l);
    }
    return l;
  }

  /* The bin under (x, y) of a summary track: {thread, tid, bin, from, to,
   * names, top: [{name, inner, total, count}]} or null. */
  function binAt(tr, x, y) {
    const sm = tr.summary;
    if (!sm || !tr.scale || x < tr.scale.x0) return null;
    for (const [th, row] of sm.rows) {
      if (y < row.y0 || y > row.y1) continue;
      const bin = Math.floor(tr.scale.t(x) / sm.width);
      const r = binOf(row.list, bin);
      if (!r) return null;
      return { thread: th, tid: row.tid, bin, from: bin * sm.width, to: (bin + 1) * sm.width, names: r[2],
        top: tops(r).map((t) => Object.assign(t, { label: typeof tr.p.names[t.name] === 'string' ? tr.p.names[t.name] : t.name < 0 ? '(no name)' : `#${t.name}` })) };
    }
    return null;
  }

  function hover(app, tr, ev, x, y) {
    const b = binAt(tr, x, y);
    if (!b) return DSUI.hideTip();
    const { el } = DSUI;
    DSUI.showTip(ev, [el('b', { text: `${threadLabel(tr.p, b.tid)}: ${b.names} name${b.names === 1 ? '' : 's'} in this bin` }),
      el('div', { class: 'mono', text: `${DSUI.fmtTime(b.from, app.dur)} → ${DSUI.fmtTime(b.to, app.dur)} (${DSUI.fmtDur(b.to - b.from)} bin)` }),
      el('table', { class: 'grid tip-names' }, el('tr', {}, el('th', { text: 'name' }), el('th', { text: 'ranges' }), el('th', { text: 'time in bin' })),
        b.top.map((t) => el('tr', {}, el('td', { text: t.label }), el('td', { class: 'num', text: DSUI.fmtNum(t.count) }),
          el('td', { class: 'num', text: DSUI.fmtDur(t.inner) + (t.total > t.inner ? ` + ${DSUI.fmtDur(t.total - t.inner)} enclosing` : '') })))),
      b.names > b.top.length ? el('div', { class: 'muted', text: `+${b.names - b.top.length} more names (zoom in for every range)` }) : '',
      el('div', { class: 'muted', text: 'ranked by time of the ranges inside the bin; enclosing: ranges covering the whole bin' })]);
  }

  return { has, levelFor, rowsOf, draw, binAt, hover };
})();
