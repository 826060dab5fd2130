/* ui-nsight.js: Nsight profiles: the profile list (sidebar), per-profile
 * thread tracks on the shared time axis with exact NVTX ranges when the
 * window's candidate rows fit the 20,000-row display budget, the labelled
 * 512-bin density overview beyond it, and CPU hotspots plus the selected
 * range for the window (details); each profile's GPU tracks (ui-gpu.js)
 * follow its threads. */
'use strict';

const DSNsight = (() => {
  const BUDGET = 20000, LANE = 14, MAXDEPTH = 10, THEAD = 14;
  const tracks = new Map(); /* profile id -> {canvas, scale, hits, mode}: the shown tracks */
  const kept = new Map(); /* profile id -> its track, shown or not */
  let cpuSeq = 0, cpuForced = '';
  const CPU_AUTO = 60000; /* samples the hotspots scan without asking */

  /* The profile picked, else those of the workers shown (a request's), else all. */
  function shown(app) {
    if (app.state.profile !== null) return app.cat.profiles.filter((p) => p.id === app.state.profile);
    const ws = app.state.workers;
    return ws.length ? app.cat.profiles.filter((p) => ws.includes(p.worker)) : app.cat.profiles;
  }

  function candidates(p, from, to) {
    let n = 0;
    for (const d of p.event_chunks || []) if (DSQuery.overlaps(d, from, to)) n += d.count;
    return n;
  }

  function renderSide(app) {
    const { el } = DSUI;
    const side = document.getElementById('side-nsight');
    const card = (p) => el('div', {
      class: 'prof' + (app.state.profile === (p ? p.id : null) ? ' sel' : ''), tabindex: 0, role: 'button',
      onclick: () => app.update({ profile: p ? p.id : null }),
      onkeydown: (ev) => { if (ev.key === 'Enter') app.update({ profile: p ? p.id : null }); },
    }, p ? [el('div', {}, el('b', { text: `${p.worker}${p.rank !== null && p.rank !== undefined ? ' · rank ' + p.rank : ''}` }),
      p.truncated ? el('span', { class: 'badge', text: 'partial', title: 'More events existed than were imported' }) : ''),
    el('div', { class: 'pmeta', text: `#${p.id} · ${p.host || 'host ?'} · ${p.file || ''}` }),
    el('div', { class: 'pmeta', text: `${DSUI.fmtNum(p.event_count || 0)} ranges · ${(p.threads || []).length} threads` +
      (p.cpu ? ` · ${DSUI.fmtNum(p.cpu.sample_count || 0)} CPU samples` : '') })]
      : [el('b', { text: 'All profiles' }), el('div', { class: 'pmeta', text: `${app.cat.profiles.length} profiles` })]);
    if (!side.querySelector('.nvtx-filter')) side.replaceChildren(el('h3', { text: 'NVTX names' }), DSRanges.filterBar(app), el('div', { id: 'nsight-profiles' }));
    DSRanges.filterBar(app);
    document.getElementById('nsight-profiles').replaceChildren(el('h3', { text: 'Profiles' }), card(null), ...app.cat.profiles.map(card),
      el('p', { class: 'muted', text: `Exact ranges are drawn when a profile's candidate rows in the window fit the ${DSUI.fmtNum(BUDGET)}-row display budget; wider windows show the density overview.` }));
  }

  /* The colour of name index i: hue (i * 47) mod 360 at 62% saturation
   * and lightness, as #rrggbb (a canvas parses hex faster than hsl()). */
  const hex = new Map();
  function colorFor(i) {
    let c = hex.get(i);
    if (c) return c;
    const h = (((i * 47) % 360) + 360) % 360, sat = 0.62, l = 0.62, a = sat * Math.min(l, 1 - l);
    const f = (n) => { const k = (n + h / 30) % 12; return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1)))); };
    c = '#' + [f(0), f(8), f(4)].map((v) => v.toString(16).padStart(2, '0')).join('');
    hex.set(i, c);
    return c;
  }

  /* The track of profile p, built once and kept across renders: a window
   * change keeps the canvas (and its last drawing, hover and hits) until
   * the new rows are drawn, so nothing is re-laid out or re-allocated. */
  function trackOf(app, p) {
    const { el } = DSUI;
    let tr = kept.get(p.id);
    if (tr) return tr;
    const canvas = el('canvas', { 'aria-label': `NVTX ranges of profile ${p.id}` });
    tr = { p, canvas, mode: null, n: 0, scale: null, hits: [], label: el('div'), note: el('div', { class: 'muted track-note' }) };
    tr.label.hidden = true;
    tr.note.hidden = true;
    tr.root = [el('div', { class: 'prof-head' }, el('b', { text: `${p.worker}${p.rank !== null && p.rank !== undefined ? ' · rank ' + p.rank : ''}` }),
      el('span', { class: 'muted', text: `#${p.id} · ${p.host || ''} · ${DSUI.fmtNum(p.event_count || 0)} ranges` }),
      p.truncated ? el('span', { class: 'badge', text: 'partial import' }) : ''), tr.label, tr.note, el('div', { class: 'sec-body' }, canvas)];
    DSUI.attachDrag(canvas, () => tr.scale, (a, b) => app.selectArea(a, b), (ev, x, y) => {
      const h = hitTest(tr, x, y);
      if (h) app.update({ nsysEvent: DSQuery.nsysItem(p, h), profile: app.state.profile, tab: 'nsight' });
    });
    canvas.addEventListener('mousemove', (ev) => hover(app, tr, ev));
    canvas.addEventListener('mouseleave', DSUI.hideTip);
    kept.set(p.id, tr);
    return tr;
  }

  function renderSection(app) {
    const { el } = DSUI;
    const sec = document.getElementById('sec-nsight');
    const profs = shown(app);
    const ws = app.state.profile === null ? app.state.workers : [];
    const headText = app.cat.profiles.length
      ? `${profs.length} of ${app.cat.profiles.length} profiles${ws.length ? ` · workers ${ws.join(', ')}` : ''}` : 'no Nsight profile in the evidence';
    const layout = `${headText}|${profs.map((p) => p.id).join(',')}`;
    tracks.clear();
    const kids = [];
    const view = `${app.state.from},${app.state.to}`;
    for (const p of profs) {
      const n = candidates(p, app.state.from, app.state.to);
      const mode = n <= BUDGET ? 'exact' : DSSummary.has(p) ? 'summary' : 'density';
      const tr = trackOf(app, p);
      const canvas = tr.canvas;
      const modeChanged = tr.mode !== mode;
      tr.mode = mode; tr.n = n;
      canvas.dataset.mode = mode;
      tracks.set(p.id, tr);
      kids.push(...tr.root, ...DSGpu.section(app, p)); /* its GPU tracks (ui-gpu.js) */
      const label = mode === 'summary' ? `Summary tracks: per thread and nesting depth, the NVTX name covering most of each bin at that depth (build-time summaries; hover for the top names). ${DSUI.fmtNum(n)} candidate rows exceed the ${DSUI.fmtNum(BUDGET)}-row display budget: zoom in for exact ranges.`
        : mode === 'density' ? `Density overview: overlapping interval counts per bin (512 bins over the run), not CPU utilization or per-request time. ${DSUI.fmtNum(n)} candidate rows exceed the ${DSUI.fmtNum(BUDGET)}-row display budget: zoom in for exact ranges.` : '';
      if (tr.label.textContent !== label) tr.label.textContent = label;
      tr.label.hidden = !label;
      const cls = mode === 'summary' ? 'density-label summary-label' : mode === 'density' ? 'density-label' : '';
      if (tr.label.className !== cls) tr.label.className = cls;
      if (canvas.dataset.drawn !== view) delete canvas.dataset.drawn;
      if (mode === 'density') drawDensity(app, tr);
      else if (mode === 'exact' && !n) drawExact(app, tr, []);
      else if (modeChanged || !canvas.dataset.labels) {
        /* nothing of this mode drawn yet: say what is coming in a line of
         * text (no canvas bitmap until there is something to draw; a kept
         * drawing of the same mode stays until the new one replaces it) */
        tr.scale = DSUI.scale(app.state.from, app.state.to, DSUI.trackWidth());
        tr.hits = [];
        tr.summary = null;
        delete canvas.dataset.labels;
        tr.drawnKey = null;
        if (canvas.style.height !== '0px') canvas.style.height = '0px';
        tr.note.textContent = mode === 'summary' ? 'loading the NVTX summary…' : `loading ${DSUI.fmtNum(n)} candidate rows…`;
        tr.note.hidden = false;
      }
    }
    if (sec.dataset.layout !== layout || sec.childNodes.length !== kids.length + 1 || kids.some((k, i) => sec.childNodes[i + 1] !== k)) {
      sec.replaceChildren(el('div', { class: 'sec-head' }, 'Nsight NVTX', el('span', { class: 'muted', text: headText }),
        ws.length ? el('button', { class: 'small', id: 'btn-all-profiles', onclick: () => app.update({ workers: [] }) }, 'show all profiles') : ''), ...kids);
      sec.dataset.layout = layout;
    }
  }

  function drawDensity(app, tr) {
    tr.note.hidden = true;
    const { ctx, w, h } = DSUI.setupCanvas(tr.canvas, 48);
    const s = DSUI.scale(app.state.from, app.state.to, w);
    tr.scale = s;
    const dens = tr.p.event_density || [];
    const dur = app.dur;
    const b0 = Math.max(0, Math.floor(app.state.from * 512 / dur)), b1 = Math.min(511, Math.floor(app.state.to * 512 / dur));
    let mx = 1;
    for (let i = b0; i <= b1; i++) mx = Math.max(mx, dens[i] || 0);
    ctx.fillStyle = 'rgba(174, 62, 201, 0.55)';
    for (let i = b0; i <= b1; i++) {
      const a = Math.max(s.x0, s.x(i * dur / 512)), b = Math.min(s.x1, s.x((i + 1) * dur / 512));
      const hh = ((dens[i] || 0) / mx) * (h - 8);
      ctx.fillRect(a, h - 2 - hh, Math.max(1, b - a - 0.5), hh);
    }
    ctx.fillStyle = '#667085';
    ctx.fillText('overlapping', 8, 14);
    ctx.fillText(`interval counts (max ${DSUI.fmtNum(mx)})`, 8, 28);
    tr.hits = [];
  }

  function layoutThreads(p, rows) {
    const byTid = new Map();
    for (const r of rows) {
      if (!byTid.has(r[3])) byTid.set(r[3], []);
      byTid.get(r[3]).push(r);
    }
    const tids = [...byTid.keys()].sort(DSSummary.threadCmp(p));
    return tids.map((tid) => {
      const evs = byTid.get(tid).sort((a, b) => a[0] - b[0] || b[1] - a[1]);
      const stack = [];
      let maxd = 0;
      const placed = evs.map((r) => {
        while (stack.length && stack[stack.length - 1] < r[0]) stack.pop();
        const d = Math.min(stack.length, MAXDEPTH - 1);
        stack.push(r[1]);
        maxd = Math.max(maxd, d);
        return [r, d];
      });
      const th = (p.threads || []).find((t) => t.global_tid === tid);
      return { tid, name: th && th.name, lanes: maxd + 1, placed };
    });
  }

  function drawExact(app, tr, rows) {
    const p = tr.p;
    const threads = layoutThreads(p, rows);
    tr.note.hidden = true;
    const height = DSUI.stickyHeight(tr, 'exact', Math.max(24, threads.reduce((a, t) => a + THEAD + t.lanes * LANE + 4, 0)), app.state);
    const { ctx, w } = DSUI.setupCanvas(tr.canvas, height);
    const s = DSUI.scale(app.state.from, app.state.to, w);
    tr.scale = s;
    tr.hits = [];
    tr.summary = null;
    if (!rows.length) {
      ctx.fillStyle = '#98a2b3';
      ctx.fillText('no NVTX range in this window', s.x0 + 8, 12);
      tr.canvas.dataset.labels = '0';
      tr.canvas.dataset.drawn = `${app.state.from},${app.state.to}`;
      return;
    }
    let y = 0, labelled = 0;
    tr.threadY = new Map(); /* where each thread's row is (the GPU flow arrows start there) */
    const sel = app.state.nsysEvent;
    const needle = app.state.filter ? app.state.filter.toLowerCase() : '';
    const hit = new Map();
    const matches = (i) => { let m = hit.get(i); if (m === undefined) hit.set(i, m = String(p.names[i]).toLowerCase().includes(needle)); return m; };
    for (const t of threads) {
      tr.threadY.set(t.tid, y + THEAD / 2);
      ctx.fillStyle = '#f9fafb';
      ctx.fillRect(0, y, w, THEAD + t.lanes * LANE);
      ctx.fillStyle = '#344054';
      ctx.fillText(DSUI.clipText(ctx, DSSummary.threadLabel(p, t.tid, t.name), DSUI.GUTTER - 12), 8, y + THEAD / 2 + 1);
      ctx.save();
      ctx.beginPath(); ctx.rect(s.x0, y, s.x1 - s.x0, THEAD + t.lanes * LANE); ctx.clip();
      let lastCol = -1, lastLane = -1, lastName = null, lastAlpha = 1;
      for (const [r, d] of t.placed) {
        const a = Math.max(s.x(r[0]), s.x0 - 2), b = Math.min(s.x(r[1]), s.x1 + 2);
        const yy = y + THEAD + d * LANE;
        const wpx = Math.max(1, b - a);
        if (wpx < 1.01 && Math.floor(a) === lastCol && d === lastLane) continue;
        lastCol = Math.floor(a); lastLane = d;
        /* a canvas parses every colour it is given: set it only when it changes */
        if (r[2] !== lastName) { ctx.fillStyle = colorFor(r[2]); lastName = r[2]; }
        const alpha = needle && !matches(r[2]) ? 0.15 : 1;
        if (alpha !== lastAlpha) { ctx.globalAlpha = alpha; lastAlpha = alpha; }
        ctx.fillRect(a, yy, wpx, LANE - 2);
        if (sel && sel.profile === p.id && sel.rowid === r[4]) {
          ctx.strokeStyle = '#f79009'; ctx.lineWidth = 2; ctx.strokeRect(a - 1, yy - 1, wpx + 2, LANE);
        }
        if (wpx > 40) {
          ctx.fillStyle = '#101828';
          lastName = null;
          if (lastAlpha !== 1) { ctx.globalAlpha = 1; lastAlpha = 1; }
          ctx.fillText(DSUI.clipText(ctx, p.names[r[2]], wpx - 6), Math.max(a, s.x0) + 3, yy + (LANE - 2) / 2);
          labelled++;
        }
        tr.hits.push([a, a + wpx, yy, yy + LANE - 2, r]);
      }
      ctx.restore();
      y += THEAD + t.lanes * LANE + 4;
    }
    tr.canvas.dataset.labels = String(labelled); /* names drawn (tests, bench) */
  }

  /* A track whose shards failed says so instead of drawing partial data. */
  function failed(tr, e) {
    tr.note.hidden = true;
    tr.drawnKey = null;
    const { ctx } = DSUI.setupCanvas(tr.canvas, 30);
    ctx.fillStyle = '#b42318';
    ctx.fillText(DSUI.clipText(ctx, `Ranges not shown: ${e && e.name === 'ShardError' ? 'a detail shard failed (see the error above)' : e.message}`,
      (tr.scale ? tr.scale.x1 - tr.scale.x0 : 600) - 16), (tr.scale ? tr.scale.x0 : DSUI.GUTTER) + 8, 15);
  }

  function hitTest(tr, x, y) {
    let best = null;
    for (const h of tr.hits) if (x >= h[0] - 1 && x <= h[1] + 1 && y >= h[2] && y <= h[3]) best = h[4];
    return best;
  }

  function hover(app, tr, ev) {
    const rc = tr.canvas.getBoundingClientRect();
    const x = ev.clientX - rc.left, y = ev.clientY - rc.top;
    const { el } = DSUI;
    if (tr.mode === 'density') {
      if (!tr.scale || x < tr.scale.x0) return DSUI.hideTip();
      const t = tr.scale.t(x), bin = Math.min(511, Math.max(0, Math.floor(t * 512 / app.dur)));
      return DSUI.showTip(ev, [el('b', { text: `bin ${bin}: ${DSUI.fmtNum((tr.p.event_density || [])[bin] || 0)} intervals touch it` }),
        el('div', { class: 'mono', text: `${DSUI.fmtTime(bin * app.dur / 512, app.dur)} → ${DSUI.fmtTime((bin + 1) * app.dur / 512, app.dur)}` }),
        el('div', { text: 'overlapping interval counts, not CPU utilization' })]);
    }
    if (tr.mode === 'summary') return DSSummary.hover(app, tr, ev, x, y);
    const r = hitTest(tr, x, y);
    if (!r) return DSUI.hideTip();
    DSUI.showTip(ev, [el('b', { text: tr.p.names[r[2]] }), el('div', { class: 'mono', text: `${DSUI.fmtDur(r[1] - r[0])} · ${r[0]} → ${r[1]}` }),
      el('div', { class: 'mono', text: `tid ${r[3]} · row ${r[4]}` })]);
  }

  /* What a track's drawing depends on: a track drawn for the same key is
   * not loaded or drawn again (pinning a metric, opening the by-name table). */
  function drawKey(app, tr) {
    const s = app.state, ev = s.nsysEvent;
    return `${tr.mode}|${s.from},${s.to}|${DSUI.trackWidth()}|${s.filter}|${ev && tr.mode === 'exact' ? ev.profile + ':' + ev.rowid : ''}`;
  }

  async function load(app, signal) {
    const jobs = [];
    for (const tr of tracks.values()) {
      if (tr.drawnKey === drawKey(app, tr)) continue;
      if (tr.mode === 'summary') jobs.push(loadSummary(app, tr, signal));
      if (tr.mode !== 'exact' || !tr.n) continue;
      jobs.push((async () => {
        const rows = [];
        const { from, to } = app.state;
        try {
          for await (const chunk of DSQuery.stream(app.store, tr.p.event_chunks, from, to, signal)) {
            for (const r of chunk) if (r[0] <= to && r[1] >= from) rows.push(r);
          }
        } catch (e) {
          if (!signal.aborted) failed(tr, e);
          throw e;
        }
        if (!signal.aborted) {
          drawExact(app, tr, rows);
          tr.canvas.dataset.drawn = `${from},${to}`;
          tr.drawnKey = drawKey(app, tr);
        }
      })());
    }
    const cpu = app.state.tab === 'nsight' ? loadCpu(app, signal) : null;
    if (app.state.tab === 'nsight' && app.state.filter) DSRanges.countMatches(app, signal).catch(() => {});
    const byName = app.state.tab === 'nsight' ? DSRanges.loadByName(app, signal) : null;
    const flame = app.state.tab === 'nsight' ? DSFlame.load(app, shown(app), signal) : null;
    if (flame) jobs.push(flame);
    jobs.push(DSGpu.load(app, signal, [...tracks.values()].map((t) => t.p)));
    /* the panels' failures are reported below or by the store: never an
     * unhandled rejection when a track fails first */
    for (const p of [cpu, byName]) if (p) p.catch(() => {});
    await Promise.all(jobs);
    if (cpu) await cpu;
    if (byName) await byName;
  }

  async function loadSummary(app, tr, signal) {
    const { from, to } = app.state;
    const l = DSSummary.levelFor(tr.p, from, to, tr.scale ? tr.scale.x1 - tr.scale.x0 : 1000);
    let rows;
    try {
      rows = await DSSummary.rowsOf(app.store, tr.p, l, from, to, signal);
    } catch (e) {
      if (!signal.aborted) failed(tr, e);
      throw e;
    }
    if (signal.aborted) return;
    tr.note.hidden = true;
    DSSummary.draw(app, tr, l, rows, colorFor);
    tr.canvas.dataset.drawn = `${from},${to}`;
    tr.drawnKey = drawKey(app, tr);
  }

  /* Candidate samples the hotspots of [from, to] would scan (profiles with
   * the build's whole-run stack counts scan none over the whole run). */
  function cpuCandidates(app, from, to) {
    let n = 0;
    for (const p of shown(app)) {
      if (!p.cpu || (p.cpu.stack_sums && from === 0 && to === app.dur)) continue;
      for (const d of p.cpu.chunks || []) if (DSQuery.overlaps(d, from, to)) n += d.count;
    }
    return n;
  }

  async function loadCpu(app, signal) {
    const seq = ++cpuSeq;
    const params = { from: app.state.from, to: app.state.to, limit: 40 };
    if (app.state.profile !== null) params.profile = app.state.profile;
    const key = JSON.stringify(params), n = cpuCandidates(app, params.from, params.to);
    if (n > CPU_AUTO && cpuForced !== key) {
      /* a wide window: the whole run's hotspots (the build's stack counts) are likely next */
      for (const p of shown(app)) if (p.cpu && p.cpu.stack_sums) app.store.prefetch(p.cpu.stack_sums);
      const box = document.getElementById('cpu-box');
      if (box) box.replaceChildren(DSUI.el('h3', { text: 'CPU hotspots' }), DSUI.el('button', { id: 'btn-cpu', class: 'small',
        onclick: () => { cpuForced = key; app.render(); } }, `Count ${DSUI.fmtNum(n)} candidate samples`),
      DSUI.el('p', { class: 'muted', text: 'The whole run (Whole run) reads the build\'s counts at once; a narrower area is immediate.' }));
      return;
    }
    const res = await DSQuery.queryCpu(app.cat, app.store, params, signal);
    if (signal.aborted || seq !== cpuSeq) return;
    const { el } = DSUI;
    const box = document.getElementById('cpu-box');
    if (!box) return;
    const max = res.items.length ? res.items[0].samples : 1;
    box.replaceChildren(el('h3', { text: `CPU hotspots · ${DSUI.fmtNum(res.total_samples)} samples in the window · ${DSUI.fmtNum(res.total)} symbols` }),
      res.items.length ? el('table', { class: 'grid' }, el('tr', {}, el('th', { text: 'symbol' }), el('th', { text: 'samples' }), el('th', { text: 'inclusive' })),
        res.items.map((it) => el('tr', {}, el('td', { text: it.symbol }), el('td', { class: 'num', text: DSUI.fmtNum(it.samples) }),
          el('td', {}, el('span', { class: 'bar', style: `width:${Math.max(2, 90 * it.samples / max)}px` }), ` ${(it.fraction * 100).toFixed(1)}%`))))
        : el('p', { class: 'muted', text: !(app.cat.capabilities && app.cat.capabilities.cpu_samples) ? 'No CPU samples in the evidence.'
          : shown(app).some((p) => p.cpu) ? 'No CPU sample in this window.' : 'The selected profile has no CPU samples; choose “All profiles” or a profile with CPU data.' }),
      el('p', { class: 'muted', text: res.attribution }));
  }

  function renderDetails(app) {
    const { el } = DSUI;
    const box = document.getElementById('details');
    const ev = app.state.nsysEvent;
    const left = ev ? [el('h2', {}, ev.name, ' ', el('span', { class: 'muted', text: DSUI.fmtDur(ev.end - ev.start) })), DSUI.kv(ev)]
      : [el('h2', { text: 'NVTX range' }), el('p', { class: 'muted', text: 'Click a range in a thread track to inspect it. Drag on any track to select a time window.' }),
        el('p', { class: 'muted', text: 'NVTX ranges are shared worker/rank activity; overlap does not establish request ownership.' })];
    box.replaceChildren(el('div', { class: 'cols' }, el('div', {}, left, el('div', { id: 'byname-box' }, el('p', { class: 'muted', text: 'ranges by name: loading…' }))), el('div', {}, el('div', { id: 'gpu-box' }), el('div', { id: 'flame-box' }), el('div', { id: 'cpu-box' }, el('h3', { text: 'CPU hotspots' }), el('p', { class: 'muted', text: 'loading…' })))));
  }

  function render(app) {
    if (app.state.tab === 'nsight') renderSide(app);
    renderSection(app);
    if (app.state.tab === 'nsight') renderDetails(app);
  }

  return { render, load, shown, ready: 'details', colorFor, trackFor: (id) => tracks.get(id) };
})();
