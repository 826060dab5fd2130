/* ui-export.js: "Export JSON" of what is on screen, complete: every NVTX
 * row of the shown profiles in the area (else the window) and every point
 * of the pinned families' series there, streamed shard by shard through the
 * shared cache into Blob parts (never one big array of rows), with a
 * progress line and a size warning before large exports. */
'use strict';

const DSExport = (() => {
  const WARN_BYTES = 64 * 1048576;

  /* The shards an export reads, and their decoded size. */
  function plan(app) {
    const st = app.state, win = st.sel || [st.from, st.to];
    const profs = DSNsight.shown(app);
    const series = app.cat.metrics.filter((s) => st.pinnedMetrics.includes(s.name));
    let bytes = 0, shards = 0;
    for (const p of profs) for (const d of p.event_chunks || []) if (DSQuery.overlaps(d, win[0], win[1])) { bytes += d.decoded_bytes; shards++; }
    for (const s of series) for (const d of s.chunks || []) if (DSQuery.overlaps(d, win[0], win[1])) { bytes += d.decoded_bytes; shards++; }
    return { win, profs, series, bytes, shards };
  }

  /* Builds the export as Blob parts; onProgress(done, total) per shard. */
  async function build(app, onProgress, signal) {
    const pl = plan(app), [a, b] = pl.win, parts = [];
    const st = app.state, J = JSON.stringify;
    let done = 0, rows = 0, points = 0;
    const tick = () => { done++; if (onProgress) onProgress(done, pl.shards); };
    const head = { schema: app.cat.schema, job: app.cat.meta.job, origin_ns: app.cat.meta.origin_ns, view: app.getState(), window: [a, b],
      request: st.request !== null ? DSQuery.findRequest(app.cat, st.request) : null };
    parts.push(J(head).slice(0, -1), ',"nsys":{"attribution":', J(DSQuery.ATTR_NSYS), ',"profiles":[', pl.profs.map((p) => p.id).join(','), '],"rows":[');
    let first = true;
    for (const p of pl.profs) {
      for await (const chunk of DSQuery.stream(app.store, p.event_chunks, a, b, signal)) {
        let buf = '';
        for (const r of chunk) {
          if (!(r[0] <= b && r[1] >= a)) continue;
          buf += (first ? '' : ',') + J(DSQuery.nsysItem(p, r));
          first = false;
          rows++;
        }
        if (buf) parts.push(buf);
        tick();
      }
    }
    parts.push('],"total":', String(rows), '},"metrics":[');
    let fs = true;
    for (const s of pl.series) {
      const meta = {};
      for (const k of Object.keys(s)) if (k !== 'points' && k !== 'chunks') meta[k] = s[k];
      parts.push((fs ? '' : ',') + J(meta).slice(0, -1) + ',"points":[');
      fs = false;
      let fp = true, n = 0;
      for await (const chunk of DSQuery.stream(app.store, s.chunks, a, b, signal)) {
        let buf = '';
        for (const r of chunk) {
          if (!(r[0] >= a && r[0] <= b)) continue;
          buf += (fp ? '' : ',') + J(r);
          fp = false;
          n++;
        }
        if (buf) parts.push(buf);
        tick();
      }
      points += n;
      parts.push(`],"points_total":${n}}`);
    }
    parts.push('],"sources":', J(app.cat.sources), '}');
    return { blob: new Blob(parts, { type: 'application/json' }), rows, points };
  }

  /* The toolbar button: warn, build with progress, download. */
  async function run(app) {
    const btn = document.getElementById('btn-export');
    const pl = plan(app);
    if (pl.bytes > WARN_BYTES && !window.confirm(`This export reads ${pl.shards} shards (${DSUI.fmtNum(Math.round(pl.bytes / 1048576))} MiB of rows) ` +
      'and the file will be about as large. Continue? (Select a narrower area to export less.)')) return null;
    const label = btn.textContent;
    btn.disabled = true;
    try {
      const res = await build(app, (d, t) => { btn.textContent = `Exporting… ${t ? Math.round(100 * d / t) : 100}%`; });
      const a = DSUI.el('a', { href: URL.createObjectURL(res.blob), download: `${app.cat.meta.job || 'dsight'}-view.json` });
      document.body.append(a); a.click(); a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10000);
      DSUI.toast(`Exported ${DSUI.fmtNum(res.rows)} NVTX rows and ${DSUI.fmtNum(res.points)} metric points (${DSUI.fmtNum(Math.round(res.blob.size / 1024))} KiB)`);
      return res;
    } finally {
      btn.disabled = false;
      btn.textContent = label;
    }
  }

  return { build, run, plan, WARN_BYTES };
})();
