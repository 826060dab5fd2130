/* ui-gpu.js: GPU activity under a profile's threads.  Per profile with GPU
 * rows (doc/report-files.md "GPU shards") one canvas with one track per
 * device and stream: exact kernels, copies and memsets named as NVTX
 * ranges are when the window's candidate rows fit the display budget,
 * else the build's depth-free lane summary (gpu_summary) with the name
 * covering most of each bin.  The selected NVTX range's projected kernels
 * (launched on its thread while it was open) are outlined and the rest
 * dimmed, their span banded, and the detail pane shows their GPU busy
 * time; hovering a row draws a flow arrow from its launch on the CPU
 * thread's track to it. */
'use strict';

const DSGpu = (() => {
  const BUDGET = 20000, LANE = 16, HEAD = 4, CELL = 120, PX_PER_BIN = 6;
  const kept = new Map(); /* profile id -> track */
  let projSeq = 0;
  const projCache = new Map(); /* selection key -> projected kernels */

  const has = (p) => DSGpuQuery.hasRows(p);
  const hasSummary = (p) => !!(p.gpu_summary && p.gpu_summary.levels && p.gpu_summary.levels.length);

  function candidates(p, from, to) {
    let n = 0;
    for (const d of p.gpu_chunks || []) if (DSQuery.overlaps(d, from, to)) n += d.count;
    return n;
  }

  /* Track order: device, then stream (nulls last). */
  const num = (x) => (x === null || x === undefined ? Infinity : x);
  const laneCmp = (a, b) => num(a.device) - num(b.device) || num(a.stream) - num(b.stream);
  const laneLabel = (ln) => `GPU ${ln.device === null ? '?' : ln.device} · stream ${ln.stream === null ? '?' : ln.stream}`;
  function nameOf(p, i) {
    const n = (p.gpu_names || [])[i];
    return typeof n === 'string' ? n : i === null || i < 0 ? '(no name)' : `#${i}`;
  }
  /* A label for a demangled name: without its return type and parameters
   * ("void ns::k<T>(args)" -> "ns::k<T>"). */
  function labelOf(n) {
    const m = /^(?:void\s+)?([^(]+)\(/.exec(n);
    return m ? m[1] : n;
  }
  /* the short name labels a bar when the export has one */
  const shortOf = (p, r) => (r[12] !== null && typeof (p.gpu_names || [])[r[12]] === 'string' ? p.gpu_names[r[12]] : nameOf(p, r[5]));

  function trackOf(app, p) {
    let tr = kept.get(p.id);
    if (tr) return tr;
    const { el } = DSUI;
    const canvas = el('canvas', { 'aria-label': `GPU activity of profile ${p.id}`, 'data-gpu-profile': String(p.id) });
    tr = { p, canvas, mode: null, n: 0, scale: null, hits: [], lanes: [], label: el('div', { class: 'density-label summary-label' }),
      note: el('div', { class: 'muted track-note' }) };
    tr.note.hidden = true;
    const g = p.gpu || {};
    tr.root = [el('div', { class: 'prof-head gpu-head' }, el('b', { text: 'GPU' }), el('span', { class: 'muted',
      text: ` ${DSUI.fmtNum(g.kernels || 0)} kernels · ${DSUI.fmtNum((g.memcpys || 0) + (g.memsets || 0))} copies and memsets` +
        (g.truncated ? ' · partial import' : '') })), tr.label, tr.note, el('div', { class: 'sec-body' }, canvas)];
    DSUI.attachDrag(canvas, () => tr.scale, (a, b) => app.selectArea(a, b));
    canvas.addEventListener('mousemove', (ev) => hover(app, tr, ev));
    canvas.addEventListener('mouseleave', () => { DSUI.hideTip(); flow(null); });
    kept.set(p.id, tr);
    return tr;
  }

  /* The elements of profile p's GPU tracks (none without GPU rows), mode
   * chosen for the window; called by DSNsight while it lays out. */
  function section(app, p) {
    if (!has(p)) {
      /* a part of a split single-file report holds the GPU rows touching
       * its slice (gpu_chunks empty: none there) */
      if (!(p.gpu && p.gpu.rows > 0)) return [];
      const text = Array.isArray(p.gpu_chunks) ? `No GPU rows in this page's slice (${DSUI.fmtNum(p.gpu.rows)} in the whole run).`
        : `GPU activity (${DSUI.fmtNum(p.gpu.rows)} rows) is not in this page: dsight query REPORT gpu answers from the report.`;
      if (!kept.has(p.id)) kept.set(p.id, { root: [DSUI.el('div', { class: 'density-label', text })] });
      return kept.get(p.id).root;
    }
    const tr = trackOf(app, p), { from, to } = app.state;
    const n = candidates(p, from, to);
    const mode = n <= BUDGET ? 'exact' : hasSummary(p) ? 'summary' : 'none';
    if (tr.mode !== mode) { tr.drawnKey = null; tr.note.textContent = mode === 'none' ? '' : 'loading GPU rows…'; tr.note.hidden = mode === 'none'; }
    tr.mode = mode; tr.n = n;
    tr.canvas.dataset.mode = mode;
    const label = mode === 'summary' ? `GPU summary: per device and stream, the kernel covering most of each bin (build-time summaries; hover for the top names). ${DSUI.fmtNum(n)} candidate GPU rows exceed the ${DSUI.fmtNum(BUDGET)}-row display budget: zoom in for every kernel.`
      : mode === 'none' ? `${DSUI.fmtNum(n)} candidate GPU rows exceed the ${DSUI.fmtNum(BUDGET)}-row display budget and this report has no GPU summary: zoom in to see them.` : '';
    if (tr.label.textContent !== label) tr.label.textContent = label;
    tr.label.hidden = !label;
    if (mode === 'none') { tr.canvas.style.height = '0px'; tr.hits = []; }
    return tr.root;
  }

  /* The selected NVTX range of profile p, or null. */
  function selected(app, p) {
    const ev = app.state.nsysEvent;
    return ev && ev.profile === p.id && typeof ev.global_tid === 'string' ? ev : null;
  }
  const selKey = (ev) => (ev ? `${ev.profile}|${ev.global_tid}|${ev.start}|${ev.end}` : '');

  async function projection(app, p, signal) {
    const ev = selected(app, p);
    if (!ev) return null;
    const k = selKey(ev);
    if (!projCache.has(k)) {
      if (projCache.size > 16) projCache.clear();
      projCache.set(k, await DSGpuQuery.projected(app.store, p, ev.global_tid, ev.start, ev.end, signal));
    }
    return projCache.get(k);
  }

  function drawKey(app, tr) {
    const s = app.state;
    return `${tr.mode}|${s.from},${s.to}|${DSUI.trackWidth()}|${selKey(selected(app, tr.p))}`;
  }

  function setup(app, tr, nlanes) {
    const height = DSUI.stickyHeight(tr, tr.mode, Math.max(24, HEAD + nlanes * LANE + 4), app.state);
    const { ctx, w } = DSUI.setupCanvas(tr.canvas, height);
    tr.scale = DSUI.scale(app.state.from, app.state.to, w);
    tr.hits = [];
    tr.note.hidden = true;
    return { ctx, w };
  }

  function gutter(ctx, tr, lanes, w) {
    lanes.forEach((ln, i) => {
      const y = HEAD + i * LANE;
      ctx.fillStyle = i % 2 ? '#f9fafb' : '#f2f4f7';
      ctx.fillRect(0, y, w, LANE);
      ctx.fillStyle = '#344054';
      ctx.fillText(DSUI.clipText(ctx, laneLabel(ln), DSUI.GUTTER - 12), 8, y + LANE / 2);
      ln.y = y;
    });
  }

  /* The selection's span [gpu_start, gpu_end] as a band over the tracks. */
  function band(ctx, tr, proj, h) {
    if (!proj || !proj.kernels) return;
    const s = tr.scale, a = Math.max(s.x0, s.x(proj.gpu_start)), b = Math.min(s.x1, s.x(proj.gpu_end));
    if (b < s.x0 || a > s.x1) return;
    ctx.fillStyle = 'rgba(247, 144, 9, 0.12)';
    ctx.fillRect(a, 0, Math.max(1, b - a), h);
  }

  function drawExact(app, tr, rows, proj) {
    const p = tr.p, by = new Map(), devName = new Map(((p.gpu && p.gpu.devices) || []).map((d) => [d.id, d.name]));
    for (const x of rows) {
      const r = x[0], k = `${r[3]}|${r[4]}`;
      if (!by.has(k)) by.set(k, { device: r[3], stream: r[4], name: devName.get(r[3]) || null, rows: [] });
      by.get(k).rows.push(x);
    }
    const lanes = [...by.values()].sort(laneCmp);
    const { ctx, w } = setup(app, tr, lanes.length);
    const s = tr.scale, H = HEAD + lanes.length * LANE;
    if (!rows.length) {
      ctx.fillStyle = '#98a2b3';
      ctx.fillText('no GPU row in this window', s.x0 + 8, 12);
    }
    gutter(ctx, tr, lanes, w);
    band(ctx, tr, proj, H);
    const picked = proj ? new Set(proj.rows) : null;
    const colorFor = DSNsight.colorFor;
    let labelled = 0;
    ctx.save();
    ctx.beginPath(); ctx.rect(s.x0, 0, s.x1 - s.x0, H); ctx.clip();
    for (const ln of lanes) {
      const yy = ln.y + 1;
      let lastCol = -1;
      ln.drawn = [];
      for (const [r, k] of ln.rows) {
        const a = Math.max(s.x(r[0]), s.x0 - 2), b = Math.min(s.x(r[1]), s.x1 + 2), wpx = Math.max(1, b - a);
        const on = picked && picked.has(k);
        ln.drawn.push([r[0], r[1], r[5], k]);
        if (wpx < 1.01 && Math.floor(a) === lastCol && !on) continue;
        lastCol = Math.floor(a);
        ctx.globalAlpha = picked && !on ? 0.3 : 1;
        ctx.fillStyle = r[2] === 0 ? colorFor(1000 + r[5]) : r[2] === 1 ? '#98a2b3' : '#667085';
        ctx.fillRect(a, yy, wpx, LANE - 3);
        ctx.globalAlpha = 1;
        if (on) { ctx.strokeStyle = '#f79009'; ctx.lineWidth = 2; ctx.strokeRect(a - 1, yy - 1, wpx + 2, LANE - 1); }
        if (wpx > 40) {
          ctx.fillStyle = '#101828';
          ctx.fillText(DSUI.clipText(ctx, shortOf(p, r), wpx - 6), Math.max(a, s.x0) + 3, yy + (LANE - 3) / 2);
          labelled++;
        }
        tr.hits.push([a, a + wpx, yy, yy + LANE - 3, r, k]);
      }
    }
    ctx.restore();
    tr.lanes = lanes;
    tr.canvas.dataset.labels = String(labelled);
    /* for tests: what is drawn, per track ([start, end, name index, ordinal]) */
    tr.canvas.dsGpu = { mode: 'exact', lanes: lanes.map((ln) => ({ device: ln.device, stream: ln.stream, rows: ln.drawn })),
      selected: proj ? proj.rows.slice() : null };
  }

  function levelFor(ns, from, to, px) {
    const per = (to - from) / Math.max(1, px);
    for (let i = 0; i < ns.levels.length; i++) if (ns.levels[i].width <= per * PX_PER_BIN) return i;
    return ns.levels.length - 1;
  }

  function drawSummary(app, tr, l, rows, proj) {
    const p = tr.p, ns = p.gpu_summary, lv = ns.levels[l], by = new Map();
    for (const r of rows) {
      if (!by.has(r[1])) by.set(r[1], Object.assign({ lane: r[1], list: [] }, ns.tracks[r[1]] || { device: null, stream: null, name: null }));
      by.get(r[1]).list.push(r);
    }
    const lanes = [...by.values()].sort(laneCmp);
    const { ctx, w } = setup(app, tr, lanes.length);
    const s = tr.scale, H = HEAD + lanes.length * LANE;
    gutter(ctx, tr, lanes, w);
    band(ctx, tr, proj, H);
    const colorFor = DSNsight.colorFor;
    let labelled = 0;
    ctx.save();
    ctx.beginPath(); ctx.rect(s.x0, 0, s.x1 - s.x0, H); ctx.clip();
    for (const ln of lanes) {
      ln.list.sort((a, b) => a[0] - b[0]);
      const cells = new Map(); /* cell -> name -> time */
      for (const r of ln.list) {
        const a = Math.max(s.x(r[0] * lv.width), s.x0 - 2), b = Math.min(s.x((r[0] + 1) * lv.width), s.x1 + 2);
        ctx.globalAlpha = 0.35 + 0.65 * Math.min(1, r[6] / lv.width);
        ctx.fillStyle = colorFor(1000 + r[4]);
        ctx.fillRect(a, ln.y + 1, Math.max(1, b - a), LANE - 3);
        const c = Math.floor((Math.max(a, s.x0) - s.x0) / CELL);
        if (!cells.has(c)) cells.set(c, new Map());
        const m = cells.get(c);
        for (let i = 4; i + 3 < r.length; i += 4) m.set(r[i], (m.get(r[i]) || 0) + r[i + 2]);
      }
      ctx.globalAlpha = 1;
      for (const [c, m] of cells) {
        let best = null, bw = -1;
        for (const [n, x] of m) if (x > bw || (x === bw && n < best)) { best = n; bw = x; }
        const text = DSUI.clipText(ctx, labelOf(nameOf(p, best)), CELL - 10);
        if (!text) continue;
        const x0 = s.x0 + c * CELL + 2, tw = ctx.measureText(text).width;
        ctx.fillStyle = 'rgba(255,255,255,0.86)';
        ctx.fillRect(x0, ln.y + 2, tw + 6, LANE - 5);
        ctx.fillStyle = '#101828';
        ctx.fillText(text, x0 + 3, ln.y + (LANE - 1) / 2);
        labelled++;
      }
    }
    ctx.restore();
    tr.lanes = lanes;
    tr.summary = { width: lv.width, lanes };
    tr.canvas.dataset.level = String(l);
    tr.canvas.dataset.labels = String(labelled);
    tr.canvas.dsGpu = { mode: 'summary', level: l, width: lv.width,
      lanes: lanes.map((ln) => ({ device: ln.device, stream: ln.stream, bins: ln.list.map((r) => [r[0], r[4], r[6], r[7]]) })),
      selected: proj ? proj.rows.slice() : null };
  }

  function failed(tr, e) {
    tr.note.hidden = false;
    tr.drawnKey = null;
    tr.note.textContent = `GPU rows not shown: ${e && e.name === 'ShardError' ? 'a detail shard failed (see the error above)' : e.message}`;
  }

  async function loadOne(app, tr, signal) {
    const { from, to } = app.state, p = tr.p;
    try {
      const proj = await projection(app, p, signal);
      if (tr.mode === 'exact') {
        const rows = [];
        await DSGpuQuery.scan(app.store, p, from, to, signal, (r, k) => rows.push([r, k]));
        if (signal.aborted) return;
        drawExact(app, tr, rows, proj);
      } else {
        const ns = p.gpu_summary, l = levelFor(ns, from, to, tr.scale ? tr.scale.x1 - tr.scale.x0 : 1000), lv = ns.levels[l], out = [];
        const b0 = Math.floor(from / lv.width), b1 = Math.floor(to / lv.width);
        for await (const chunk of DSQuery.stream(app.store, lv.chunks, from, to, signal))
          for (const r of chunk) if (r[0] >= b0 && r[0] <= b1) out.push(r);
        if (signal.aborted) return;
        drawSummary(app, tr, l, out, proj);
      }
      tr.canvas.dataset.drawn = `${from},${to}`;
      tr.drawnKey = drawKey(app, tr);
    } catch (e) {
      if (!signal.aborted) failed(tr, e);
      throw e;
    }
  }

  /* Draws the shown profiles' GPU tracks (those DSNsight laid out) and
   * fills the detail pane's GPU box. */
  async function load(app, signal, profs) {
    const jobs = [];
    for (const p of profs) {
      const tr = kept.get(p.id);
      if (!tr || !has(p) || tr.mode === 'none' || tr.drawnKey === drawKey(app, tr)) continue;
      jobs.push(loadOne(app, tr, signal));
    }
    jobs.push(detail(app, signal));
    await Promise.all(jobs);
  }

  /* The detail pane's GPU box for the selected NVTX range. */
  async function detail(app, signal) {
    const box = document.getElementById('gpu-box'), ev = app.state.nsysEvent;
    if (!box) return;
    const p = ev ? app.cat.profiles.find((x) => x.id === ev.profile) : null;
    if (!p || !has(p) || !selected(app, p)) { box.replaceChildren(); return; }
    const seq = ++projSeq, { el } = DSUI;
    box.replaceChildren(el('p', { class: 'muted', text: 'GPU work of this range: loading…' }));
    const pr = await projection(app, p, signal);
    if (signal.aborted || seq !== projSeq || !pr) return;
    box.dataset.kernels = String(pr.kernels);
    box.dataset.busy = pr.gpu_busy === null ? '' : String(pr.gpu_busy);
    box.replaceChildren(el('h3', { text: 'GPU work launched in this range' }), pr.kernels
      ? el('table', { class: 'grid' },
        el('tr', {}, el('th', { text: 'kernels' }), el('td', { class: 'num', text: DSUI.fmtNum(pr.kernels) })),
        el('tr', {}, el('th', { text: 'GPU busy' }), el('td', { class: 'num gpu-busy', text: DSUI.fmtDur(pr.gpu_busy) })),
        el('tr', {}, el('th', { text: 'GPU span' }), el('td', { class: 'mono', text: `${pr.gpu_start} → ${pr.gpu_end} (${DSUI.fmtDur(pr.gpu_end - pr.gpu_start)})` })))
      : el('p', { class: 'muted', text: 'No kernel was launched on this thread while the range was open.' }),
    el('p', { class: 'muted', text: 'Kernels launched on the range\'s thread while it was open (nested ranges included); busy is the length of the union of their intervals. Copies and memsets are not counted.' }));
  }

  function hitAt(tr, x, y) {
    let best = null;
    for (const h of tr.hits) if (x >= h[0] - 1 && x <= h[1] + 1 && y >= h[2] && y <= h[3]) best = h;
    return best;
  }

  function hover(app, tr, ev) {
    const rc = tr.canvas.getBoundingClientRect(), x = ev.clientX - rc.left, y = ev.clientY - rc.top, { el } = DSUI, p = tr.p;
    if (tr.mode === 'summary') {
      flow(null);
      const sm = tr.summary, ln = sm && tr.scale && x >= tr.scale.x0 ? sm.lanes.find((l) => y >= l.y && y < l.y + LANE) : null;
      const bin = ln ? Math.floor(tr.scale.t(x) / sm.width) : -1, r = ln ? ln.list.find((q) => q[0] === bin) : null;
      if (!r) return DSUI.hideTip();
      const tops = [];
      for (let i = 4; i + 3 < r.length; i += 4) tops.push(r.slice(i, i + 4));
      return DSUI.showTip(ev, [el('b', { text: `${laneLabel(ln)}: ${r[3]} name${r[3] === 1 ? '' : 's'} in this bin` }),
        el('div', { class: 'mono', text: `${DSUI.fmtTime(bin * sm.width, app.dur)} → ${DSUI.fmtTime((bin + 1) * sm.width, app.dur)}` }),
        el('table', { class: 'grid tip-names' }, el('tr', {}, el('th', { text: 'name' }), el('th', { text: 'rows' }), el('th', { text: 'time in bin' })),
          tops.map((t) => el('tr', {}, el('td', { text: nameOf(p, t[0]) }), el('td', { class: 'num', text: DSUI.fmtNum(t[3]) }),
            el('td', { class: 'num', text: DSUI.fmtDur(t[2]) }))))]);
    }
    const h = hitAt(tr, x, y);
    if (!h) { flow(null); return DSUI.hideTip(); }
    const r = h[4];
    const dev = ((p.gpu && p.gpu.devices) || []).find((d) => d.id === r[3]);
    const rows = [el('b', { text: nameOf(p, r[5]) }),
      el('div', { class: 'mono', text: `${DSGpuQuery.KINDS[r[2]]} · ${DSUI.fmtDur(r[1] - r[0])} · ${r[0]} → ${r[1]}` }),
      el('div', { class: 'mono', text: `device ${r[3]}${dev && dev.name ? ' (' + dev.name + ')' : ''} · stream ${r[4]} · correlation ${r[6]}` })];
    if (r[7] !== null) rows.push(el('div', { class: 'mono', text: `launched by ${nameOf(p, r[9])} on ${DSSummary.pidTid(r[7])} at ${r[8]} (queued ${DSUI.fmtDur(r[0] - r[8])})` }));
    if (r[10] !== null) rows.push(el('div', { text: `NVTX range #${r[10]}` }));
    DSUI.showTip(ev, rows);
    flow(r[7] === null ? null : { app, tr, r, a: h[0], y: (h[2] + h[3]) / 2 });
  }

  /* The flow arrow from a launch on its thread (the profile's NVTX track)
   * to the hovered GPU row, drawn on a fixed overlay; null clears it. */
  function flow(f) {
    let c = document.getElementById('gpu-flow');
    if (!f) { if (c) { c.hidden = true; delete c.dataset.flow; } return; }
    if (!c) {
      c = DSUI.el('canvas', { id: 'gpu-flow' });
      Object.assign(c.style, { position: 'fixed', left: '0px', top: '0px', pointerEvents: 'none', zIndex: 30 });
      document.body.append(c);
    }
    const W = window.innerWidth, H = window.innerHeight, dpr = window.devicePixelRatio || 1;
    c.width = W * dpr; c.height = H * dpr; c.style.width = W + 'px'; c.style.height = H + 'px';
    c.hidden = false;
    const ctx = c.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    const gr = f.tr.canvas.getBoundingClientRect(), to = [gr.left + f.a, gr.top + f.y];
    const nv = DSNsight.trackFor(f.tr.p.id), s = f.tr.scale;
    let from = null;
    if (nv && nv.canvas && nv.scale) {
      const nr = nv.canvas.getBoundingClientRect(), ty = nv.threadY && nv.threadY.get(f.r[7]);
      const lx = Math.min(Math.max(nv.scale.x(f.r[8]), nv.scale.x0), nv.scale.x1);
      from = [nr.left + lx, nr.top + (ty === undefined ? nr.height : ty)];
    } else {
      from = [gr.left + Math.min(Math.max(s.x(f.r[8]), s.x0), s.x1), gr.top];
    }
    /* a launch scrolled out of the tracks' view starts at their edge, dashed */
    const vis = (document.getElementById('tracks') || document.body).getBoundingClientRect();
    const off = from[1] < vis.top || from[1] > vis.bottom;
    from[1] = Math.min(Math.max(from[1], vis.top), vis.bottom);
    ctx.strokeStyle = '#f79009'; ctx.fillStyle = '#f79009'; ctx.lineWidth = 2;
    ctx.setLineDash(off ? [5, 4] : []);
    if (!off) { ctx.beginPath(); ctx.arc(from[0], from[1], 3.5, 0, 2 * Math.PI); ctx.fill(); }
    ctx.beginPath(); ctx.moveTo(from[0], from[1]);
    const my = (from[1] + to[1]) / 2;
    ctx.bezierCurveTo(from[0], my, to[0], my, to[0], to[1]); ctx.stroke();
    ctx.setLineDash([]);
    const ang = Math.atan2(to[1] - my, 0.0001);
    ctx.beginPath(); ctx.moveTo(to[0], to[1]);
    ctx.lineTo(to[0] - 8 * Math.cos(ang - 0.4), to[1] - 8 * Math.sin(ang - 0.4));
    ctx.lineTo(to[0] - 8 * Math.cos(ang + 0.4), to[1] - 8 * Math.sin(ang + 0.4));
    ctx.closePath(); ctx.fill();
    c.dataset.flow = JSON.stringify({ from, to, visible: !off, launch_tid: f.r[7], launch_start: f.r[8], start: f.r[0] });
  }

  return { has, section, load, detail, flow };
})();
