/* ui-summary.js: NVTX summary tracks, drawn when a window's candidate rows
 * exceed the exact display budget.  A lane summary (doc/report-files.md
 * "NVTX summary shards", lane summaries; NVTX: the profile's `nvtx_summary`, lanes = threads)
 * is drawn as one block per lane with one row per nesting depth (depth 8
 * holds every deeper range), as Perfetto's slice tracks: each bin of the
 * build-time level that fits the zoom coloured by the name covering most
 * of it at that depth, every 120 pixels a label naming what dominates the
 * cell at that depth, hover showing the bin's top names with ranges and
 * time.  Threads come in the same order as in the exact tracks. */
'use strict';

const DSSummary = (() => {
  const ROW = 16, THEAD = 14, PX_PER_BIN = 6, CELL = 120;

  function has(p) {
    const ns = p.nvtx_summary;
    return !!(ns && ns.version === 2 && ns.levels && ns.levels.length);
  }

  /* The coarsest level whose bins are at most PX_PER_BIN pixels wide (else
   * the finest). */
  function levelFor(p, from, to, px) {
    const lv = p.nvtx_summary.levels, per = (to - from) / Math.max(1, px);
    for (let i = 0; i < lv.length; i++) if (lv[i].width <= per * PX_PER_BIN) return i;
    return lv.length - 1;
  }

  /* Rows of level l overlapping [from, to]: [bin, lane, depth, names,
   * (name, inner, total, count)...], streamed through the shared cache. */
  async function rowsOf(store, p, l, from, to, signal) {
    const lv = p.nvtx_summary.levels[l], out = [];
    const b0 = Math.floor(from / lv.width), b1 = Math.floor(to / lv.width);
    for await (const chunk of DSQuery.stream(store, lv.chunks, from, to, signal))
      for (const r of chunk) if (r[0] >= b0 && r[0] <= b1) out.push(r);
    return out;
  }

  function tops(r) {
    const out = [];
    for (let i = 4; i + 3 < r.length; i += 4) out.push({ name: r[i], inner: r[i + 1], total: r[i + 2], count: r[i + 3] });
    return out;
  }

  /* A global tid (Nsight: pid << 24 | tid in its low 48 bits) as pid:tid;
   * another text as itself; none: "unknown thread". */
  function pidTid(tid) {
    if (tid === null || tid === undefined || tid === '') return 'unknown thread';
    if (!/^[0-9]{1,20}$/.test(String(tid))) return String(tid);
    const g = BigInt(tid), pid = (g >> 24n) & 0xffffffn, t = g & 0xffffffn;
    return pid ? `${pid}:${t}` : String(t);
  }

  /* The label of thread tid of profile p: pid:tid and its name (from the
   * summary's thread_names or the profile's threads). */
  function threadLabel(p, tid, name) {
    let nm = name;
    if (!nm) { const th = (p.threads || []).find((t) => t.global_tid === tid); nm = th && th.name; }
    return `${pidTid(tid)}${nm ? ' · ' + nm : ''}`;
  }

  /* Thread order shared by the exact and summary tracks: the profile's
   * threads list, then the others by tid text. */
  function threadCmp(p) {
    const order = new Map((p.threads || []).map((t, i) => [t.global_tid, i]));
    const at = (t) => (order.has(t) ? order.get(t) : 1e9);
    return (a, b) => at(a) - at(b) || (a < b ? -1 : a > b ? 1 : 0);
  }

  function nameOfFn(p) {
    return (i) => (typeof p.names[i] === 'string' ? p.names[i] : i < 0 ? '(no name)' : `#${i}`);
  }

  /* The lanes of rows: [{th, tid, name, depths: [rows of depth d sorted by
   * bin]}] in threadCmp order. */
  function lanesOf(p, rows) {
    const ns = p.nvtx_summary, by = new Map();
    for (const r of rows) {
      let ln = by.get(r[1]);
      if (!ln) by.set(r[1], ln = { th: r[1], tid: ns.threads[r[1]], name: (ns.thread_names || [])[r[1]] || null, depths: [] });
      const d = Math.min(r[2], ns.deeper === undefined ? 8 : ns.deeper);
      while (ln.depths.length <= d) ln.depths.push([]);
      ln.depths[d].push(r);
    }
    const cmp = threadCmp(p), lanes = [...by.values()].sort((a, b) => cmp(a.tid, b.tid));
    for (const ln of lanes) for (const list of ln.depths) list.sort((a, b) => a[0] - b[0]);
    return lanes;
  }

  /* Per-name sums of one cell: an array indexed by name index (the names
   * of a profile; a Map for any other), in the order names were first
   * added.  A Map of every name cost a fifth of a whole-run draw. */
  function cellSums(nnames) {
    const sum = new Float64Array(nnames), seen = new Uint8Array(nnames), order = [], other = new Map();
    return {
      add(n, x) {
        if (Number.isInteger(n) && n >= 0 && n < nnames) {
          if (!seen[n]) { seen[n] = 1; order.push(n); }
          sum[n] += x;
        } else other.set(n, (other.get(n) || 0) + x);
      },
      each(fn) {
        for (const n of order) fn(n, sum[n]);
        for (const [n, x] of other) fn(n, x);
      },
      clear() {
        for (const n of order) { sum[n] = 0; seen[n] = 0; }
        order.length = 0;
        other.clear();
      },
    };
  }

  /* Draws tr (a DSNsight track) from rows of level l: per thread, one row
   * per depth; bins coloured by the name covering most of them at that
   * depth (opacity: the share of the bin it fills), and every CELL pixels
   * the name with most time in the cell's bins as a label.  A name filter
   * keeps its matches bright and dims the rest. */
  function draw(app, tr, l, rows, colorFor) {
    const p = tr.p, ns = p.nvtx_summary, lv = ns.levels[l];
    const lanes = lanesOf(p, rows);
    const hgt = lanes.reduce((a, ln) => a + THEAD + ln.depths.length * ROW + 2, 0);
    const height = DSUI.stickyHeight(tr, 'summary', Math.max(24, hgt), app.state);
    const { ctx, w } = DSUI.setupCanvas(tr.canvas, height);
    const s = DSUI.scale(app.state.from, app.state.to, w);
    tr.scale = s;
    tr.hits = [];
    tr.summary = { level: l, width: lv.width, rows: [] };
    if (!rows.length) {
      ctx.fillStyle = '#98a2b3';
      ctx.fillText('no NVTX range in this window', s.x0 + 8, 12);
      tr.canvas.dataset.labels = '0';
      return;
    }
    const needle = app.state.filter ? app.state.filter.toLowerCase() : '';
    const nameOf = nameOfFn(p), hit = new Map();
    const matches = (i) => { let m = hit.get(i); if (m === undefined) hit.set(i, m = nameOf(i).toLowerCase().includes(needle)); return m; };
    const runs = []; /* labelled cells: [name index, first bin, last bin, tid, y, depth] */
    const colors = new Map(), cellSum = cellSums((p.names || []).length);
    let y = 0, labelled = 0;
    tr.threadY = new Map(); /* where each thread's block is (GPU flow arrows) */
    for (const ln of lanes) {
      tr.threadY.set(ln.tid, y + THEAD / 2);
      ctx.fillStyle = '#f9fafb';
      ctx.fillRect(0, y, w, THEAD + ln.depths.length * ROW);
      ctx.fillStyle = '#344054';
      ctx.fillText(DSUI.clipText(ctx, threadLabel(p, ln.tid, ln.name), DSUI.GUTTER - 12), 8, y + THEAD / 2 + 1);
      for (let d = 0; d < ln.depths.length; d++) {
        const list = ln.depths[d], yb = y + THEAD + d * ROW;
        tr.summary.rows.push({ th: ln.th, tid: ln.tid, depth: d, y0: yb, y1: yb + ROW, list });
        if (d === ns.deeper) {
          ctx.fillStyle = '#98a2b3';
          ctx.fillText(`depth ${d}+`, DSUI.GUTTER - 52, yb + ROW / 2);
        }
        ctx.save();
        ctx.beginPath(); ctx.rect(s.x0, yb, s.x1 - s.x0, ROW); ctx.clip();
        const cells = []; /* [cell, best name, first bin, last bin] */
        let cell = -1, cb0 = 0, cb1 = 0;
        const flush = () => {
          if (cell < 0) return;
          let best = null, bw = -1;
          cellSum.each((n, x) => { if (x > bw || (x === bw && n < best)) { best = n; bw = x; } });
          cellSum.clear();
          cells.push([cell, best, cb0, cb1]);
        };
        let lastCol = null, lastAlpha = -1;
        for (const r of list) {
          const a = Math.max(s.x(r[0] * lv.width), s.x0 - 2), b = Math.min(s.x((r[0] + 1) * lv.width), s.x1 + 2);
          let match = !needle;
          for (let i = 4; !match && i + 3 < r.length; i += 4) if (matches(r[i])) match = true;
          const alpha = match ? 0.35 + 0.65 * Math.min(1, r[6] / lv.width) : 0.1;
          let col = colors.get(r[4]);
          if (!col) colors.set(r[4], col = colorFor(r[4]));
          /* a canvas parses every colour it is given: set it only when it changes */
          if (col !== lastCol) { ctx.fillStyle = col; lastCol = col; }
          if (alpha !== lastAlpha) { ctx.globalAlpha = alpha; lastAlpha = alpha; }
          ctx.fillRect(a, yb, Math.max(1, b - a), ROW - 2);
          if (needle && match) {
            ctx.globalAlpha = 1; lastAlpha = 1;
            ctx.fillStyle = '#f79009'; lastCol = null;
            ctx.fillRect(a, yb + ROW - 4, Math.max(1, b - a), 2);
          }
          const c = Math.floor((Math.max(a, s.x0) - s.x0) / CELL);
          if (c !== cell) { flush(); cell = c; cb0 = r[0]; }
          cb1 = r[0];
          for (let i = 4; i + 3 < r.length; i += 4) cellSum.add(r[i], r[i + 2]);
        }
        flush();
        ctx.globalAlpha = 1;
        for (const [c, best, b0, b1] of cells) {
          const x0 = s.x0 + c * CELL + 2, lab = label(ctx, nameOf(best)), text = lab[0], tw = lab[1];
          if (!text || (needle && !matches(best))) continue;
          ctx.fillStyle = 'rgba(255,255,255,0.86)';
          ctx.fillRect(x0, yb + 2, tw + 6, ROW - 6);
          ctx.fillStyle = '#101828';
          ctx.fillText(text, x0 + 3, yb + (ROW - 2) / 2);
          labelled++;
          if (runs.length < 40) runs.push([best, b0, b1, ln.tid, yb, d]);
        }
        ctx.restore();
      }
      y += THEAD + ln.depths.length * ROW + 2;
    }
    tr.canvas.dataset.level = String(l);
    tr.canvas.dataset.labels = String(labelled); /* names drawn (tests, bench) */
    tr.canvas.dataset.runs = JSON.stringify(runs);
    tr.canvas.dsSummary = tr.summary; /* for tests: dominant() of the canvas */
  }

  /* The drawn rows of a summary track (its tr.summary), for tests: [{tid, depth, bins:
   * [[bin, dominant name index], ...]}] in drawing order. */
  function dominant(sm) {
    if (!sm) return null;
    return sm.rows.map((r) => ({ tid: r.tid, depth: r.depth, bins: r.list.map((x) => [x[0], x[4]]) }));
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

  /* The bin under (x, y) of a summary track: {thread, tid, depth, bin,
   * from, to, names, top: [{name, inner, total, count, label}]} or null. */
  function binAt(tr, x, y) {
    const sm = tr.summary;
    if (!sm || !tr.scale || x < tr.scale.x0) return null;
    const nameOf = nameOfFn(tr.p);
    for (const row of sm.rows) {
      if (y < row.y0 || y >= row.y1) continue;
      const bin = Math.floor(tr.scale.t(x) / sm.width);
      const r = binOf(row.list, bin);
      if (!r) return null;
      return { thread: row.th, tid: row.tid, depth: row.depth, bin, from: bin * sm.width, to: (bin + 1) * sm.width, names: r[3],
        top: tops(r).map((t) => Object.assign(t, { label: nameOf(t.name) })) };
    }
    return null;
  }

  function hover(app, tr, ev, x, y) {
    const b = binAt(tr, x, y);
    if (!b) return DSUI.hideTip();
    const { el } = DSUI;
    const deeper = b.depth === tr.p.nvtx_summary.deeper;
    DSUI.showTip(ev, [el('b', { text: `${threadLabel(tr.p, b.tid)}, depth ${b.depth}${deeper ? ' and deeper' : ''}: ${b.names} name${b.names === 1 ? '' : 's'} in this bin` }),
      el('div', { class: 'mono', text: `${DSUI.fmtTime(b.from, app.dur)} → ${DSUI.fmtTime(b.to, app.dur)} (${DSUI.fmtDur(b.to - b.from)} bin)` }),
      el('table', { class: 'grid tip-names' }, el('tr', {}, el('th', { text: 'name' }), el('th', { text: 'ranges' }), el('th', { text: 'time in bin' })),
        b.top.map((t) => el('tr', {}, el('td', { text: t.label }), el('td', { class: 'num', text: DSUI.fmtNum(t.count) }),
          el('td', { class: 'num', text: DSUI.fmtDur(t.inner) + (t.total > t.inner ? ` + ${DSUI.fmtDur(t.total - t.inner)} enclosing` : '') })))),
      b.names > b.top.length ? el('div', { class: 'muted', text: `+${b.names - b.top.length} more names (zoom in for every range)` }) : '',
      el('div', { class: 'muted', text: 'ranked by time inside the bin at this depth; enclosing: ranges covering the whole bin' })]);
  }

  return { has, levelFor, rowsOf, draw, binAt, hover, dominant, threadCmp, threadLabel, pidTid };
})();
