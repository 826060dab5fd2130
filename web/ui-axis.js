/* ui-axis.js: the shared time axis: a whole-run overview strip (request
 * activity and NVTX interval density, the window highlighted, drag to
 * select) and the tick axis of the visible window. */
'use strict';

const DSAxis = (() => {
  let bound = false, ovScale = null, axScale = null, app0 = null;

  function bind(app) {
    app0 = app;
    const ov = document.getElementById('overview');
    DSUI.attachDrag(ov, () => ovScale, (a, b) => app0.selectRange(Math.max(0, a), Math.min(app0.dur, b)), (ev, x) => {
      if (!ovScale || x < ovScale.x0) return;
      const c = ovScale.t(x), w = app0.state.to - app0.state.from;
      const a = Math.min(Math.max(0, c - w / 2), app0.dur - w);
      app0.update({ from: a, to: a + w });
    });
    const ax = document.getElementById('axis');
    DSUI.attachDrag(ax, () => axScale, (a, b) => app0.selectRange(a, b));
    bound = true;
  }

  function drawOverview(app) {
    const c = document.getElementById('overview');
    const { ctx, w, h } = DSUI.setupCanvas(c, 34);
    const s = DSUI.scale(0, app.dur, w);
    ovScale = s;
    const pw = Math.max(1, Math.floor(s.x1 - s.x0));
    /* request activity */
    const act = new Float64Array(pw);
    const ix = app.catalog.ix;
    if (ix) { /* sharded catalog: the index's 512-bin request density */
      for (let i = 0; i < pw; i++) act[i] = ix.density[Math.min(511, Math.floor(i * 512 / pw))];
    } else {
      for (const r of app.cat.requests) {
        const a = Math.max(0, Math.floor(s.x(Math.max(0, r.start)) - s.x0)), b = Math.min(pw - 1, Math.floor(s.x(Math.min(app.dur, r.end)) - s.x0));
        for (let i = a; i <= b; i++) act[i]++;
      }
    }
    /* NVTX density: sum of the per-profile 512-bin overlap counts */
    const dens = new Float64Array(512);
    for (const p of app.cat.profiles) (p.event_density || []).forEach((v, i) => { dens[i] += v; });
    const dmax = Math.max(1, ...dens), amax = Math.max(1, ...act);
    ctx.fillStyle = 'rgba(174, 62, 201, 0.25)';
    for (let i = 0; i < 512; i++) {
      const x = s.x0 + (i / 512) * (s.x1 - s.x0), bw = (s.x1 - s.x0) / 512;
      const hh = (dens[i] / dmax) * (h - 6);
      ctx.fillRect(x, h - 2 - hh, bw + 0.5, hh);
    }
    ctx.fillStyle = 'rgba(47, 111, 222, 0.55)';
    for (let i = 0; i < pw; i++) {
      const hh = (act[i] / amax) * (h - 6);
      if (hh > 0) ctx.fillRect(s.x0 + i, h - 2 - hh, 1, hh);
    }
    const a = s.x(app.state.from), b = s.x(app.state.to);
    ctx.fillStyle = 'rgba(247, 144, 9, 0.18)';
    ctx.fillRect(a, 0, Math.max(2, b - a), h);
    ctx.strokeStyle = '#f79009';
    ctx.lineWidth = 1.5;
    ctx.strokeRect(a, 1, Math.max(2, b - a), h - 2);
    ctx.fillStyle = '#667085';
    ctx.fillText('whole run', 10, 10);
    ctx.fillStyle = 'rgba(47,111,222,0.9)';
    ctx.fillText('■ requests', 10, 23);
    ctx.fillStyle = 'rgba(174,62,201,0.8)';
    ctx.fillText('■ NVTX', 80, 23);
  }

  function drawAxis(app) {
    const c = document.getElementById('axis');
    const { ctx, w, h } = DSUI.setupCanvas(c, 24);
    const s = DSUI.scale(app.state.from, app.state.to, w);
    axScale = s;
    /* the ruler is relative: ticks are offsets from the window start */
    const { ticks, step } = DSUI.niceTicks(0, s.to - s.from, Math.max(3, Math.floor((s.x1 - s.x0) / 85)));
    ctx.strokeStyle = '#c4cad4';
    ctx.fillStyle = '#344054';
    ctx.beginPath();
    ctx.moveTo(s.x0, h - 1); ctx.lineTo(s.x1, h - 1);
    for (const t of ticks) {
      const x = Math.round(s.x(s.from + t)) + 0.5;
      ctx.moveTo(x, h - 7); ctx.lineTo(x, h - 1);
    }
    ctx.stroke();
    ctx.textAlign = 'center';
    for (const t of ticks) if (t > 0) ctx.fillText(DSNav.tickLabel(t, step), s.x(s.from + t), 9);
    ctx.textAlign = 'left';
    ctx.fillStyle = '#667085';
    ctx.fillText(DSUI.clipText(ctx, `from ${DSUI.fmtTime(s.from, s.to - s.from)}`, s.x0 - 14), 10, 9);
    c.dataset.ruler = ticks.filter((t) => t > 0).map((t) => DSNav.tickLabel(t, step)).join('|');
  }

  function render(app) {
    if (!bound) bind(app);
    drawOverview(app);
    drawAxis(app);
  }

  return { render };
})();
