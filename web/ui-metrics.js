/* ui-metrics.js: metric families: the searchable, pinnable family selector
 * (sidebar), one chart per pinned family with all its series on the shared
 * time axis (hover values; settings as steps with the carried value;
 * conflicting timestamps marked), and the window statistics (details).
 * A family of more than 6 series, or whose series differ in scale by more
 * than 100x, is drawn as counter tracks: one compact track per series with
 * its own y-range.  Y-ranges come from the shown series only, optionally
 * on a log scale, and values beyond the window's 0.1/99.9 percentiles are
 * clipped to the edge with a marker when they would flatten the rest.  The
 * hover readout lists the 12 series nearest the cursor; every value is
 * formatted with its unit by DSUI.fmtValue. */
'use strict';

const DSMetrics = (() => {
  const H = 150, CAP = 20000, TRACK_H = 30, MANY = 6, SCALES = 100, READOUT = 12;
  let filter = '', built = false;
  const charts = new Map(); /* family -> {canvas, status, data, scale} */

  function families(app) { return DSQuery.listMetricFamilies(app.cat); }

  function buildSide(app) {
    const { el } = DSUI;
    const side = document.getElementById('side-metrics');
    const input = el('input', { type: 'search', placeholder: 'Search metric families…', 'aria-label': 'Search metric families' });
    input.addEventListener('input', () => { filter = input.value.toLowerCase(); renderSide(app); });
    side.append(input, el('div', { id: 'fam-list' }));
    built = true;
  }

  function togglePin(app, name) {
    const pins = app.state.pinnedMetrics.slice();
    const i = pins.indexOf(name);
    if (i >= 0) pins.splice(i, 1); else pins.push(name);
    app.update({ pinnedMetrics: pins });
  }

  function renderSide(app) {
    const { el } = DSUI;
    const list = document.getElementById('fam-list');
    const fams = families(app).filter((f) => !filter || [f.name, f.title, f.group, f.component, f.description]
      .some((x) => typeof x === 'string' && x.toLowerCase().includes(filter)));
    const groups = new Map();
    for (const f of fams) {
      const g = [f.component, f.group].filter(Boolean).join(' · ') || 'Other';
      if (!groups.has(g)) groups.set(g, []);
      groups.get(g).push(f);
    }
    const kids = [el('div', { class: 'muted', text: `${fams.length} famil${fams.length === 1 ? 'y' : 'ies'} · ${app.state.pinnedMetrics.length} pinned` })];
    for (const [g, fs] of groups) {
      kids.push(el('h3', { text: g }));
      for (const f of fs) {
        const pinned = app.state.pinnedMetrics.includes(f.name);
        const cb = el('input', { type: 'checkbox', 'aria-label': `pin ${f.name}` });
        cb.checked = pinned;
        cb.addEventListener('change', () => togglePin(app, f.name));
        const meta = [f.title, f.unit, `${f.series_count ?? '?'} series`, f.samples !== undefined ? `${DSUI.fmtNum(f.samples)} samples` : null, f.temporal]
          .filter((x) => x !== null && x !== undefined && x !== '').join(' · ');
        kids.push(el('label', { class: 'fam' + ((f.series_count || 0) === 0 ? ' empty' : ''), title: f.description || '' }, cb,
          el('span', {}, el('div', { class: 'fname', text: f.name }), el('div', { class: 'fmeta', text: meta }))));
      }
    }
    list.replaceChildren(...kids);
  }

  function seriesLabel(s) {
    const parts = [s.worker, s.rank !== null && s.rank !== undefined ? `rank ${s.rank}` : null, s.gpu ? `gpu ${s.gpu}` : null, s.host];
    return parts.filter(Boolean).join(' · ') || `series ${s.id}`;
  }

  /* The indexes (ascending) of a chart's series the view hides. */
  function hiddenOf(app, series) {
    const ids = new Set(app.state.hiddenSeries);
    return new Set(series.map((s, i) => (ids.has(s.id) ? i : -1)).filter((i) => i >= 0));
  }

  /* The legend changed ch.hidden: the view (and its link) follows. */
  function keepHidden(app, ch) {
    const mine = new Set(ch.series.map((s) => s.id));
    const ids = app.state.hiddenSeries.filter((id) => !mine.has(id)).concat([...ch.hidden].map((i) => ch.series[i].id)).sort((a, b) => a - b);
    if (ids.join() === app.state.hiddenSeries.join()) return;
    app.state.hiddenSeries = ids;
    app.syncUrl();
  }

  function renderSection(app) {
    const { el } = DSUI;
    const sec = document.getElementById('sec-metrics');
    const pins = app.state.pinnedMetrics;
    const head = el('div', { class: 'sec-head' }, 'Metrics', el('span', { class: 'muted', text: pins.length
      ? `${pins.length} pinned famil${pins.length === 1 ? 'y' : 'ies'} · pin more in the Metrics tab`
      : app.cat.metrics.length ? 'no family pinned: pick families in the Metrics tab' : 'no metric series in the evidence' }));
    const kids = [head];
    const keep = new Set();
    for (const name of pins) {
      const fam = families(app).find((f) => f.name === name) || { name };
      const series = app.cat.metrics.filter((s) => s.name === name);
      let ch = charts.get(name);
      if (!ch) {
        const canvas = el('canvas', { 'aria-label': `chart of ${name}` });
        ch = { canvas, status: el('div', { class: 'chart-status' }), data: null, scale: null, series, fam };
        DSUI.attachDrag(canvas, () => ch.scale, (a, b) => app.selectArea(a, b), null);
        canvas.addEventListener('mousemove', (ev) => hover(app, ch, ev));
        canvas.addEventListener('mouseleave', () => { DSUI.hideTip(); if (ch.data) draw(app, ch); });
        ch.hidden = hiddenOf(app, series);
        ch.highlight = null;
        const legend = DSLegend.build(series, seriesLabel, ch, () => { keepHidden(app, ch); if (ch.data) draw(app, ch); });
        ch.root = el('div', { class: 'chart' }, el('div', { class: 'chart-head' },
          el('span', { class: 'title', text: fam.title || name }), el('span', { class: 'mono muted', text: name }),
          el('span', { class: 'muted', text: [fam.unit, fam.temporal].filter(Boolean).join(' · ') }),
          el('button', { class: 'small log-toggle', 'aria-pressed': 'false', title: 'log scale (positive values)', onclick: (ev) => {
            ch.log = !ch.log; ev.currentTarget.setAttribute('aria-pressed', String(ch.log)); if (ch.data) draw(app, ch);
          } }, 'log'),
          el('button', { class: 'unpin', title: 'Unpin', onclick: () => togglePin(app, name), text: '✕' })), legend, el('div', { class: 'sec-body' }, canvas), ch.status);
        charts.set(name, ch);
      }
      /* hidden series as the view says (a link, setState) */
      const hid = hiddenOf(app, ch.series);
      if ([...hid].join() !== [...ch.hidden].sort((a, b) => a - b).join()) {
        ch.hidden = hid;
        if (ch.syncLegend) ch.syncLegend();
        if (ch.data) draw(app, ch);
      }
      /* the points of the same window and width are kept (pinning another
       * family, a change of tab or selection) */
      if (ch.dataKey !== dataKey(app)) ch.data = null;
      keep.add(name);
      kids.push(ch.root);
    }
    for (const k of [...charts.keys()]) if (!keep.has(k)) charts.delete(k);
    /* the same pins keep their charts in place (no re-layout) */
    if (sec.childNodes.length !== kids.length || kids.some((k, i) => i && sec.childNodes[i] !== k)) sec.replaceChildren(...kids);
    else if (sec.firstChild.textContent !== head.textContent) sec.replaceChild(head, sec.firstChild);
    for (const name of pins) {
      const ch = charts.get(name);
      /* a drawn chart keeps its drawing until the window's points replace it */
      if (ch.drawn) continue;
      const { ctx, w } = DSUI.setupCanvas(ch.canvas, H);
      ch.scale = DSUI.scale(app.state.from, app.state.to, w);
      ctx.fillStyle = '#98a2b3';
      ctx.fillText('loading…', ch.scale.x0 + 8, H / 2);
      ch.status.textContent = ch.series.length ? 'loading points for the window…' : 'no series of this family in the evidence';
    }
  }

  /* The build's summary of a series (doc/report-files.md "Metric summary
   * shards") instead of its points: the 512-bin level when its bins are at
   * most 2 pixels wide (the whole run), else the 8192-bin level when the
   * window holds more points than 2-pixel columns and its bins are at most
   * 4 pixels wide (a minute of a long run): the chart then reads a few
   * small shards instead of every point shard the window touches.  Returns
   * { width, descs } or null (read the points). */
  function summaryLevel(app, s) {
    const ms = app.cat.metric_summary, { from, to } = app.state;
    if (!ms) return null;
    const sc = DSUI.scale(from, to, DSUI.trackWidth()), px = (to - from) / Math.max(1, sc.x1 - sc.x0);
    if (Array.isArray(s.summary_chunks) && ms.width <= 2 * px)
      return { width: ms.width, bins: ms.bins, descs: ms.chunks.slice(s.summary_chunks[0], s.summary_chunks[1] + 1) };
    const fine = ms.fine, D = app.cat.meta.duration;
    if (!fine || !Number.isInteger(s.fine_group) || !(fine.width <= 4 * px) || !(D > 0)) return null;
    const points = (s.chunks || []).reduce((a, c) => a + c.count, 0);
    if (points * (to - from) / D <= (sc.x1 - sc.x0) / 2) return null;
    const descs = (fine.groups[s.fine_group] || []).filter((c) => c.bounds[0] <= to && c.bounds[3] >= from);
    return { width: fine.width, bins: fine.bins, descs };
  }

  /* A summary shard's rows by series (computed once per decoded shard). */
  const seriesIndex = new WeakMap();
  function bySeries(rows) {
    let m = seriesIndex.get(rows);
    if (!m) {
      m = new Map();
      for (const r of rows) { let a = m.get(r[0]); if (!a) m.set(r[0], a = []); a.push(r); }
      seriesIndex.set(rows, m);
    }
    return m;
  }

  async function loadSummary(app, s, ms, signal) {
    const { from, to } = app.state;
    const out = { s, pts: [], n: 0, truncated: true, carried: [], conflicts: [], summary: new Map(), bins: new Map(), level: ms };
    const st = { samples: 0, sum: 0, min: null, max: null, last: null, approx: true };
    out.stats = st;
    const sc = DSUI.scale(from, to, DSUI.trackWidth());
    /* every shard at once (series share them: the store fetches each once) */
    const shards = await Promise.all(ms.descs.map((desc) => app.store.get(desc, signal)));
    for (const got of shards) {
      const rows = bySeries(got).get(s.id) || [];
      for (const r of rows) {
        const t0 = r[1] * ms.width, t1 = (r[1] + 1) * ms.width;
        if (t1 < from || t0 > to) continue;
        out.n += r[2];
        out.summary.set(r[1], r);
        if (!r[3]) continue;
        st.samples += r[3]; st.sum += r[6] * r[3]; st.last = r[7];
        if (st.min === null || r[4] < st.min) st.min = r[4];
        if (st.max === null || r[5] > st.max) st.max = r[5];
        const c = Math.floor((sc.x((t0 + t1) / 2) - sc.x0) / 2), m = out.bins.get(c);
        if (!m) out.bins.set(c, [r[4], r[5], r[6] * r[3], r[3]]);
        else { if (r[4] < m[0]) m[0] = r[4]; if (r[5] > m[1]) m[1] = r[5]; m[2] += r[6] * r[3]; m[3] += r[3]; }
      }
    }
    out.conflicts = (s.conflict_timestamps || []).filter((t) => t >= from && t <= to);
    return out;
  }

  /* Loads one series' window points (bounded) plus the carried setting. */
  async function loadSeries(app, s, signal) {
    const level = summaryLevel(app, s);
    if (level) return loadSummary(app, s, level, signal);
    const { from, to } = app.state;
    const out = { s, pts: [], n: 0, truncated: false, carried: [], conflicts: [] };
    /* every point lands in its 2-pixel column (min, max, sum, count), so
     * the drawing covers the whole window even beyond CAP kept points */
    const sc = DSUI.scale(from, to, DSUI.trackWidth());
    const bins = new Map();
    out.bins = bins;
    const st = { samples: 0, sum: 0, min: null, max: null, last: null };
    out.stats = st;
    for await (const rows of DSQuery.stream(app.store, s.chunks, from, to, signal)) {
      for (const r of rows) {
        if (r[0] < from || r[0] > to) continue;
        out.n++;
        if (out.pts.length < CAP) out.pts.push(r); else out.truncated = true;
        const v = r[1];
        if (typeof v !== 'number') continue;
        /* exact window statistics, as the metrics query computes them */
        st.samples++; st.sum += v; st.last = v;
        if (st.min === null || v < st.min) st.min = v;
        if (st.max === null || v > st.max) st.max = v;
        const c = Math.floor((sc.x(r[0]) - sc.x0) / 2);
        const m = bins.get(c);
        if (!m) bins.set(c, [v, v, v, 1]);
        else { if (v < m[0]) m[0] = v; if (v > m[1]) m[1] = v; m[2] += v; m[3]++; }
      }
    }
    if (s.temporal === 'setting') out.carried = await DSQuery.carried(s, app.store, from, signal);
    out.conflicts = (s.conflict_timestamps || []).filter((t) => t >= from && t <= to);
    return out;
  }

  function dataKey(app) { return `${app.state.from},${app.state.to}|${DSUI.trackWidth()}|${DSUI.GUTTER}`; }

  async function load(app, signal) {
    const jobs = [];
    const key = dataKey(app);
    for (const name of app.state.pinnedMetrics) {
      const ch = charts.get(name);
      if (!ch || (ch.data && ch.dataKey === key)) continue;
      jobs.push((async () => {
        /* six series at a time (a browser's connections per host): fetches overlap, memory stays bounded */
        const data = new Array(ch.series.length);
        let next = 0;
        const worker = async () => {
          while (next < ch.series.length && !signal.aborted) {
            const i = next++;
            data[i] = await loadSeries(app, ch.series[i], signal);
          }
        };
        try {
          await Promise.all([worker(), worker(), worker(), worker(), worker(), worker()]);
        } catch (e) {
          if (!signal.aborted) {
            const { ctx } = DSUI.setupCanvas(ch.canvas, H);
            ctx.fillStyle = '#b42318';
            ctx.fillText('Points not shown: a detail shard failed (see the error above).', (ch.scale ? ch.scale.x0 : DSUI.GUTTER) + 8, H / 2);
            ch.status.textContent = 'no partial data is drawn';
          }
          throw e;
        }
        if (signal.aborted) return;
        ch.data = data;
        ch.dataKey = key;
        draw(app, ch);
      })());
    }
    await Promise.all(jobs);
    if (!signal.aborted && app.state.tab === 'metrics') renderDetails(app);
  }

  /* The numeric values of d in the window: its points, or its 2-pixel
   * columns' minimum and maximum when it has more (or is summarised), and
   * its carried setting values. */
  function valuesOf(d) {
    const out = [];
    if (d.truncated || d.summary) for (const m of d.bins.values()) out.push(m[0], m[1]);
    else for (const r of d.pts) if (typeof r[1] === 'number') out.push(r[1]);
    for (const r of d.carried) if (typeof r[1] === 'number') out.push(r[1]);
    return out;
  }

  /* How many points valuesOf(d) stands for: each column's extremes stand
   * for all of its points, so the percentiles below count points, not the
   * few hundred columns of a summarised or long series. */
  function pointsOf(d) {
    let n = 0;
    if (d.truncated || d.summary) for (const m of d.bins.values()) n += m[3];
    else for (const r of d.pts) if (typeof r[1] === 'number') n++;
    for (const r of d.carried) if (typeof r[1] === 'number') n++;
    return n;
  }

  /* The y-range of vals (standing for points >= vals.length points:
   * pointsOf): {lo, hi, log, clipLo, clipHi} (lo, hi in log10 on a log
   * scale, which keeps the positive values), or null.  Values beyond the
   * 0.1/99.9 percentiles of the points are clipped when they lie more than
   * 20 times the percentiles' span away (they would flatten the rest).
   * The values are extremes first: of N points, the top (N-1) -
   * ceil((N-1) * 0.999) are beyond the 99.9th, so as many of the largest
   * values are left out, and the same at the bottom. */
  function rangeOf(vals, log, points) {
    const v = Float64Array.from(log ? vals.filter((x) => x > 0) : vals).sort();
    const n = v.length, N = Math.max(n, points || 0);
    if (!n) return null;
    const T = log ? Math.log10 : (x) => x;
    let lo = T(v[0]), hi = T(v[n - 1]), clipLo = false, clipHi = false;
    if (N >= 20) {
      const kLo = Math.floor((N - 1) * 0.001), kHi = (N - 1) - Math.ceil((N - 1) * 0.999);
      const plo = T(v[Math.min(kLo, n - 1)]), phi = T(v[Math.max(0, n - 1 - kHi)]);
      const base = Math.max(phi - plo, Math.abs(phi) * 1e-9, 1e-300);
      if (hi - phi > 20 * base) { hi = phi; clipHi = true; }
      if (plo - lo > 20 * base) { lo = plo; clipLo = true; }
    }
    if (lo === hi) { lo -= Math.abs(lo) * 0.1 || 1; hi += Math.abs(hi) * 0.1 || 1; }
    if (!log && !clipLo && lo > 0 && lo < hi * 0.5) lo = 0;
    const pad = (hi - lo) * 0.06;
    return { lo: lo - (lo === 0 && !log ? 0 : pad), hi: hi + pad, log, clipLo, clipHi };
  }

  /* The pixel of value x in range r between top and bot (clamped). */
  function yOf(r, top, bot) {
    return (x) => {
      const t = r.log ? (x > 0 ? Math.log10(x) : r.lo) : x;
      const yy = bot - ((t - r.lo) / (r.hi - r.lo)) * (bot - top);
      return yy < top ? top : yy > bot ? bot : yy;
    };
  }

  /* Whether x lies beyond range r (clipped): 1 above, -1 below, else 0. */
  function beyond(r, x) {
    const t = r.log ? (x > 0 ? Math.log10(x) : -Infinity) : x;
    return t > r.hi ? 1 : t < r.lo ? -1 : 0;
  }

  /* Counter tracks: more than MANY series shown, or shown series whose
   * scales (median magnitude in the window, which an outlier does not
   * move) differ by more than SCALES times. */
  function trackMode(ch) {
    const shown = ch.data.filter((_, i) => !ch.hidden.has(i));
    if (shown.length > MANY) return true;
    let lo = Infinity, hi = 0;
    for (const d of shown) {
      const a = Float64Array.from(valuesOf(d).filter(Number.isFinite), Math.abs).sort();
      const m = a.length ? a[a.length >> 1] : 0;
      if (m > 0) { lo = Math.min(lo, m); hi = Math.max(hi, m); }
    }
    return hi > 0 && hi / lo > SCALES;
  }

  /* Draws series d (index i) with the pixel mapping y between top and bot. */
  function drawOne(ctx, ch, d, i, s, y, top, bot, envelope) {
    const col = DSLegend.color(i);
    ctx.globalAlpha = ch.highlight === null || ch.highlight === i ? 1 : 0.12;
    ctx.strokeStyle = col; ctx.fillStyle = col; ctx.lineWidth = 1.5;
    if (d.s.temporal === 'setting') {
      /* steps: carried value from the window start, null ends a step */
      let cur = null, carriedConflict = false;
      const carriedVals = d.carried.map((r) => r[1]);
      if (carriedVals.length) cur = carriedVals[carriedVals.length - 1];
      let x = s.x0;
      if (carriedVals.length > 1 && new Set(carriedVals.map(String)).size > 1) carriedConflict = true;
      if (carriedVals.length > 1) {
        /* every carried value of a conflicting timestamp, dashed, until the first point */
        const endX = d.pts.length ? s.x(d.pts[0][0]) : s.x1;
        ctx.setLineDash([4, 3]);
        for (const v of carriedVals) {
          if (typeof v !== 'number') continue;
          ctx.beginPath(); ctx.moveTo(s.x0, y(v)); ctx.lineTo(endX, y(v)); ctx.stroke();
        }
        ctx.setLineDash([]);
        x = null;
      }
      for (const r of d.pts) {
        const nx = s.x(r[0]);
        if (typeof cur === 'number' && x !== null) {
          if (x === s.x0 && d.carried.length) ctx.setLineDash([4, 3]);
          ctx.beginPath(); ctx.moveTo(x, y(cur)); ctx.lineTo(nx, y(cur)); ctx.stroke();
          ctx.setLineDash([]);
        }
        cur = r[1]; x = nx;
        if (typeof cur === 'number') ctx.fillRect(nx - 2, y(cur) - 2, 4, 4);
        else ctx.fillText('∅', nx - 3, bot - 6); /* a null invalidates the setting: the step ends here */
      }
      if (typeof cur === 'number' && x !== null) {
        if (x === s.x0 && d.carried.length) ctx.setLineDash([4, 3]);
        ctx.beginPath(); ctx.moveTo(x, y(cur)); ctx.lineTo(s.x1, y(cur)); ctx.stroke();
        ctx.setLineDash([]);
      }
      return carriedConflict;
    }
    if (d.truncated || d.summary || d.pts.length > (s.x1 - s.x0) / 2) {
      /* dense: one line through the mean of each 2-pixel column, with the
       * min/max envelope when asked */
      const cols = d.bins, keys = [...cols.keys()].sort((a, b) => a - b);
      if (envelope) {
        ctx.globalAlpha = 0.18;
        for (const c of keys) { const m = cols.get(c); ctx.fillRect(s.x0 + c * 2, y(m[1]), 2, Math.max(1, y(m[0]) - y(m[1]))); }
      }
      ctx.globalAlpha = ch.highlight === null || ch.highlight === i ? (envelope ? 0.9 : 0.8) : 0.12;
      ctx.lineWidth = 1;
      ctx.beginPath();
      keys.forEach((c, k) => { const m = cols.get(c); const py = y(m[2] / m[3]); if (k) ctx.lineTo(s.x0 + c * 2 + 1, py); else ctx.moveTo(s.x0 + c * 2 + 1, py); });
      ctx.stroke();
      ctx.globalAlpha = 1;
      return false;
    }
    ctx.beginPath();
    let pen = false;
    for (const r of d.pts) {
      if (typeof r[1] !== 'number') { pen = false; continue; }
      const px = s.x(r[0]), py = y(r[1]);
      if (pen) ctx.lineTo(px, py); else ctx.moveTo(px, py);
      pen = true;
    }
    ctx.stroke();
    if (d.pts.length < 400) for (const r of d.pts) if (typeof r[1] === 'number') ctx.fillRect(s.x(r[0]) - 1.5, y(r[1]) - 1.5, 3, 3);
    return false;
  }

  /* Marks the values of d beyond range r (clipped) at the edge: a red
   * triangle pointing out; returns how many. */
  function markClipped(ctx, d, r, s, top, bot) {
    if (!r.clipLo && !r.clipHi) return 0;
    let n = 0;
    const mark = (t, x) => {
      const b = beyond(r, x);
      if (!b) return;
      n++;
      const xx = s.x(t), yy = b > 0 ? top : bot;
      ctx.beginPath(); ctx.moveTo(xx, yy - 4 * b); ctx.lineTo(xx - 4, yy + 3 * b); ctx.lineTo(xx + 4, yy + 3 * b); ctx.fill();
    };
    ctx.globalAlpha = 1;
    ctx.fillStyle = '#d92d20';
    if (d.truncated || d.summary) {
      const w = (s.to - s.from) / Math.max(1, s.x1 - s.x0);
      for (const [c, m] of d.bins) { mark(s.from + (c * 2 + 1) * w, m[0]); mark(s.from + (c * 2 + 1) * w, m[1]); }
    } else for (const p of d.pts) if (typeof p[1] === 'number') mark(p[0], p[1]);
    return n;
  }

  function axis(ctx, r, y, s, unit) {
    const yt = DSUI.niceTicks(r.lo, r.hi, 4).ticks;
    ctx.textAlign = 'right';
    for (const v of yt) {
      const yy = Math.round(y(r.log ? 10 ** v : v)) + 0.5;
      ctx.strokeStyle = '#f2f4f7';
      ctx.beginPath(); ctx.moveTo(s.x0, yy); ctx.lineTo(s.x1, yy); ctx.stroke();
      ctx.fillStyle = '#667085';
      ctx.fillText(DSUI.fmtValue(r.log ? 10 ** v : v, unit, 3), s.x0 - 6, yy);
    }
    ctx.textAlign = 'left';
  }

  function draw(app, ch, hoverX) {
    const fam = ch.fam, tracks = trackMode(ch);
    const shown = ch.data.map((_, i) => i).filter((i) => !ch.hidden.has(i));
    const height = tracks ? Math.max(60, shown.length * TRACK_H + 20) : H;
    const { ctx, w } = DSUI.setupCanvas(ch.canvas, height);
    ch.drawn = true;
    ch.tracks = tracks ? [] : null;
    ch.canvas.dataset.mode = tracks ? 'tracks' : 'lines';
    const s = DSUI.scale(app.state.from, app.state.to, w);
    ch.scale = s;
    const top = 8, bot = height - 16;
    ctx.strokeStyle = '#eaecf0';
    ctx.fillStyle = '#667085';
    const { ticks } = DSUI.niceTicks(s.from, s.to, Math.max(2, Math.floor((s.x1 - s.x0) / 110)));
    ctx.beginPath();
    for (const t of ticks) { const x = Math.round(s.x(t)) + 0.5; ctx.moveTo(x, top); ctx.lineTo(x, bot); }
    ctx.stroke();
    let total = 0, truncated = false, clipped = 0, carriedConflicts = 0, conflicts = 0;
    for (const d of ch.data) { total += d.n; truncated = truncated || d.truncated; }
    const r = tracks ? null : rangeOf(shown.flatMap((i) => valuesOf(ch.data[i])), !!ch.log,
      shown.reduce((a, i) => a + pointsOf(ch.data[i]), 0));
    ch.range = r;
    ch.canvas.dataset.yrange = r ? JSON.stringify([r.lo, r.hi]) : '';
    if (!tracks) ctx.fillText(DSUI.clipText(ctx, fam.title || fam.name, DSUI.GUTTER - 14), 8, 14);
    if (!tracks && !r) {
      ctx.fillStyle = '#98a2b3';
      ctx.fillText(ch.series.length ? (shown.length ? 'no samples in this window' : 'every series is hidden') : 'no series in the evidence', s.x0 + 8, H / 2);
      ch.status.textContent = `${ch.series.length} series · ${DSUI.fmtNum(total)} points in the window`;
      ch.canvas.dataset.clipped = '0';
      return;
    }
    if (!tracks) {
      const y = yOf(r, top, bot);
      ch.y = y;
      axis(ctx, r, y, s, fam.unit);
      ctx.fillText(fam.unit || '', 8, 30);
      ctx.save();
      ctx.beginPath(); ctx.rect(s.x0, 0, s.x1 - s.x0, height); ctx.clip();
      for (const i of shown) if (drawOne(ctx, ch, ch.data[i], i, s, y, top, bot, ch.data.length === 1)) carriedConflicts++;
      for (const i of shown) clipped += markClipped(ctx, ch.data[i], r, s, top, bot);
    } else {
      ctx.save();
      shown.forEach((i, k) => {
        const d = ch.data[i], y0 = 4 + k * TRACK_H, t0 = y0 + 3, b0 = y0 + TRACK_H - 5;
        const rr = rangeOf(valuesOf(d), !!ch.log, pointsOf(d));
        const y = rr ? yOf(rr, t0, b0) : null;
        ch.tracks.push({ i, y0, y1: y0 + TRACK_H, range: rr, y });
        ctx.fillStyle = k % 2 ? '#fcfcfd' : '#f9fafb';
        ctx.fillRect(s.x0, y0, s.x1 - s.x0, TRACK_H - 1);
        ctx.fillStyle = DSLegend.color(i);
        ctx.fillRect(8, y0 + 7, 8, 3);
        ctx.fillStyle = '#344054';
        ctx.fillText(DSUI.clipText(ctx, seriesLabel(d.s), DSUI.GUTTER - 30), 20, y0 + 9);
        ctx.fillStyle = '#98a2b3';
        if (rr) ctx.fillText(DSUI.clipText(ctx, `${DSUI.fmtValue(rr.log ? 10 ** rr.lo : rr.lo, fam.unit, 3)} – ${DSUI.fmtValue(rr.log ? 10 ** rr.hi : rr.hi, fam.unit, 3)}`, DSUI.GUTTER - 30), 20, y0 + 21);
        else ctx.fillText('no samples', 20, y0 + 21);
        if (!rr) return;
        ctx.save();
        ctx.beginPath(); ctx.rect(s.x0, y0, s.x1 - s.x0, TRACK_H); ctx.clip();
        if (drawOne(ctx, ch, d, i, s, y, t0, b0, true)) carriedConflicts++;
        clipped += markClipped(ctx, d, rr, s, t0, b0);
        ctx.restore();
      });
      ctx.beginPath(); ctx.rect(s.x0, 0, s.x1 - s.x0, height); ctx.clip();
    }
    ch.canvas.dataset.clipped = String(clipped);
    for (const d of ch.data) conflicts += d.conflicts.length;
    /* conflicting timestamps: a red tick under the axis; the values are boxed when few */
    ctx.fillStyle = '#d92d20';
    ctx.strokeStyle = '#d92d20';
    ctx.lineWidth = 1;
    for (const d of ch.data) {
      const at = new Set(d.conflicts);
      for (const t of d.conflicts) {
        const xx = s.x(t);
        ctx.beginPath(); ctx.moveTo(xx, bot + 2); ctx.lineTo(xx - 3.5, bot + 8); ctx.lineTo(xx + 3.5, bot + 8); ctx.fill();
      }
      if (!tracks && conflicts <= 60 && at.size) for (const p of d.pts) if (at.has(p[0]) && typeof p[1] === 'number') ctx.strokeRect(s.x(p[0]) - 3.5, ch.y(p[1]) - 3.5, 7, 7);
    }
    if (carriedConflicts) {
      ctx.fillStyle = '#d92d20';
      ctx.fillText(`carried conflict in ${carriedConflicts} series (dashed: every carried value)`, s.x0 + 4, top + 6);
    }
    if (hoverX !== undefined) {
      ctx.strokeStyle = 'rgba(16,24,40,0.45)'; ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(hoverX + 0.5, top); ctx.lineTo(hoverX + 0.5, bot); ctx.stroke();
    }
    ctx.restore();
    const summarised = [...new Set(ch.data.filter((d) => d.summary).map((d) => d.level.bins))].join(' and ');
    ch.status.replaceChildren(`${ch.series.length} series · ${DSUI.fmtNum(total)} points in the window`,
      tracks ? ` · counter tracks: one per shown series, each with its own y-range (${ch.series.length > MANY ? `more than ${MANY} series` : `scales over ${SCALES}× apart`})` : '',
      summarised ? ` · drawn from the build's ${summarised}-bin summaries (hover: bin mean, min, max; zoom in for every point)`
        : truncated ? ` · drawn as 2-pixel means (hover shows the first ${DSUI.fmtNum(CAP)} points per series)` : '',
      clipped ? DSUI.el('span', { class: 'conflict', text: ` · ▲ ${clipped} value${clipped > 1 ? 's' : ''} beyond the 0.1–99.9 percentiles clipped to the edge` }) : '',
      conflicts ? DSUI.el('span', { class: 'conflict', text: ` · ▲ ${conflicts} conflicting timestamp${conflicts > 1 ? 's' : ''} (all values kept)` }) : '');
  }

  function valueAt(d, t) {
    if (d.s.temporal === 'setting') {
      let vals = d.carried.map((r) => r[1]), at = d.carried.length ? d.carried[0][0] : null;
      for (const r of d.pts) {
        if (r[0] > t) break;
        if (r[0] !== at) { vals = []; at = r[0]; }
        vals.push(r[1]);
      }
      return { vals, at };
    }
    let best = null;
    for (const r of d.pts) if (best === null || Math.abs(r[0] - t) < Math.abs(best[0] - t)) best = r;
    if (!best) return { vals: [], at: null };
    return { vals: d.pts.filter((r) => r[0] === best[0]).map((r) => r[1]), at: best[0] };
  }

  /* The readout of series d at time t: [text, value for distance]. */
  function readout(app, d, t, unit) {
    if (d.summary) {
      const r = d.summary.get(Math.floor(t / d.level.width));
      return r && r[3] ? [`mean ${DSUI.fmtValue(r[6], unit)} (${DSUI.fmtValue(r[4], unit)} – ${DSUI.fmtValue(r[5], unit)}, ${DSUI.fmtNum(r[3])} points)`, r[6]] : ['—', null];
    }
    const { vals, at } = valueAt(d, t);
    const txt = vals.length ? vals.map((v) => (v === null ? 'null (invalidated)' : DSUI.fmtValue(v, unit))).join(' / ') : '—';
    return [txt + (at !== null ? ` @${at}` : '') + (vals.length > 1 ? ' conflict' : ''), vals.find((v) => typeof v === 'number')];
  }

  function hover(app, ch, ev) {
    if (!ch.data || !ch.scale) return;
    const rc = ch.canvas.getBoundingClientRect();
    const x = ev.clientX - rc.left, py = ev.clientY - rc.top;
    if (x < ch.scale.x0 || x > ch.scale.x1) { DSUI.hideTip(); return; }
    const t = ch.scale.t(x);
    draw(app, ch, x);
    const { el } = DSUI, unit = ch.fam.unit;
    /* every shown series with its distance to the cursor: in pixels from
     * its value (lines), in tracks from the hovered one (counter tracks) */
    const rows = [];
    if (ch.tracks) {
      const k0 = ch.tracks.findIndex((tr) => py >= tr.y0 && py < tr.y1);
      const at = k0 < 0 ? Math.max(0, Math.min(ch.tracks.length - 1, Math.floor((py - 4) / TRACK_H))) : k0;
      ch.tracks.forEach((tr, k) => { const [txt] = readout(app, ch.data[tr.i], t, unit); rows.push({ i: tr.i, txt, dist: Math.abs(k - at) + k * 1e-6 }); });
    } else {
      ch.data.forEach((d, i) => {
        if (ch.hidden.has(i)) return;
        const [txt, v] = readout(app, d, t, unit);
        rows.push({ i, txt, dist: typeof v === 'number' && ch.y ? Math.abs(ch.y(v) - py) : Infinity });
      });
    }
    const near = rows.slice().sort((a, b) => a.dist - b.dist || a.i - b.i).slice(0, READOUT).sort((a, b) => a.i - b.i);
    const lines = [el('b', { text: `${ch.fam.title || ch.fam.name} at ${DSUI.fmtTime(t, app.state.to - app.state.from)}` })];
    for (const r of near) lines.push(el('div', { class: 'mono' }, el('span', { style: `color:${DSLegend.color(r.i)}`, text: '● ' }), `${seriesLabel(ch.data[r.i].s)}: ${r.txt}`));
    if (rows.length > near.length) lines.push(el('div', { class: 'muted', text: `${rows.length - near.length} more series (nearest ${near.length} shown; the table lists every series)` }));
    DSUI.showTip(ev, lines);
  }

  function renderDetails(app) {
    const { el } = DSUI;
    const box = document.getElementById('details');
    const rows = [];
    for (const name of app.state.pinnedMetrics) {
      const ch = charts.get(name);
      if (!ch || !ch.data) continue;
      for (const d of ch.data) {
        const st = d.stats, u = ch.fam.unit, fv = (x) => DSUI.fmtValue(x, u);
        rows.push(el('tr', {}, el('td', { text: name }), el('td', { text: seriesLabel(d.s) }), el('td', { class: 'num', text: DSUI.fmtNum(d.n) }),
          el('td', { class: 'num', text: fv(st.min) }), el('td', { class: 'num', text: fv(st.max) }),
          el('td', { class: 'num', text: st.samples ? (st.approx ? '≈ ' : '') + fv(st.sum / st.samples) : '—' }),
          el('td', { class: 'num', text: (st.approx && st.last !== null ? '≈ ' : '') + fv(st.last) }),
          el('td', { text: d.s.temporal === 'setting' ? (d.carried.length ? d.carried.map((r) => r[1] === null ? 'null' : fv(r[1])).join(' / ') + ` @${d.carried[0][0]}` : 'none') : '' })));
      }
    }
    box.replaceChildren(el('h2', {}, 'Pinned series in the window ', el('span', { class: 'muted', text: `${DSUI.fmtTime(app.state.from, 10)} → ${DSUI.fmtTime(app.state.to, 10)}` })),
      rows.length ? el('table', { class: 'grid' }, el('tr', {}, ['family', 'series', 'points', 'min', 'max', 'mean', 'last', 'carried setting'].map((h) => el('th', { text: h }))), rows)
        : el('p', { class: 'muted', text: app.state.pinnedMetrics.length ? 'Loading…' : 'Pin metric families on the left to chart them and see their statistics for the window.' }),
      el('p', { class: 'muted', text: 'Exact statistics for any window: traceExplorer.queryMetrics({from, to, name}) or `dsight query REPORT metrics`. ' +
        '≈: from the build\'s 512- or 8192-bin summaries (wide windows; the mean of the bin means weighted by their points, the last value by time).' }));
  }

  function render(app) {
    if (!built) buildSide(app);
    /* hidden side panels are built when their tab is shown */
    if (app.state.tab === 'metrics') renderSide(app);
    renderSection(app);
    if (app.state.tab === 'metrics') renderDetails(app);
  }

  return { render, load, seriesLabel, ready: 'metrics' };
})();
