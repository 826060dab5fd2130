/* ui-export.js: "Export JSON" of what is on screen, complete: every NVTX
 * row of the shown profiles in the area (else the window) and every point
 * of the pinned families' series there, streamed shard by shard through the
 * shared cache into Blob parts (never one big array of rows), with a
 * progress line and a size warning before large exports; and "Chrome
 * trace": the same selection as Trace Event Format JSON for Perfetto UI and
 * chrome://tracing (NVTX ranges as complete events per profile and thread,
 * CPU samples as instant events on their threads, the pinned families'
 * series as counters, requests as async slices). */
'use strict';

const DSExport = (() => {
  const WARN_BYTES = 64 * 1048576;

  /* The shards an export reads, and their decoded size: the shown
   * profiles and pinned families in the area (else the window); opts
   * {from, to, profile, worker} narrows them (the API's call). */
  function plan(app, opts) {
    const st = app.state, o = opts || {}, given = (x) => x !== undefined && x !== null;
    let win = st.sel || [st.from, st.to];
    if (given(o.from) || given(o.to)) {
      win = [given(o.from) ? o.from : 0, given(o.to) ? o.to : app.dur];
      DSQuery.validate(app.cat, { from: win[0], to: win[1] });
    }
    let profs = given(o.profile) || given(o.worker) ? app.cat.profiles : DSNsight.shown(app);
    if (given(o.profile)) profs = profs.filter((p) => p.id === o.profile);
    if (given(o.worker)) profs = profs.filter((p) => p.worker === o.worker);
    const series = app.cat.metrics.filter((s) => st.pinnedMetrics.includes(s.name) && (!given(o.worker) || s.worker === o.worker));
    let bytes = 0, shards = 0;
    for (const p of profs) for (const d of p.event_chunks || []) if (DSQuery.overlaps(d, win[0], win[1])) { bytes += d.decoded_bytes; shards++; }
    for (const s of series) for (const d of s.chunks || []) if (DSQuery.overlaps(d, win[0], win[1])) { bytes += d.decoded_bytes; shards++; }
    /* the Chrome trace also reads the profiles' CPU samples */
    let cpuBytes = 0, cpuShards = 0;
    for (const p of profs) for (const d of (p.cpu && p.cpu.chunks) || []) if (DSQuery.overlaps(d, win[0], win[1])) { cpuBytes += d.decoded_bytes; cpuShards++; }
    return { win, profs, series, bytes, shards, cpuBytes, cpuShards };
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

  /* Trace Event Format: ts/dur in microseconds from meta.origin_ns (the
   * report's own times), whole events (not clipped to the window). */
  const US = 1e6, REQ_PID = 1000000, METRIC_PID = 1000001;

  /* nvtx.depth of each row of list (rows of one profile overlapping the
   * window, in stored order): the rows of the same thread containing it,
   * of two identical rows the earlier containing the later.  A container
   * overlaps what it contains, so the window's rows are enough. */
  function depths(list) {
    const ord = list.map((_, i) => i).sort((i, j) => (list[i][0] - list[j][0]) || (list[j][1] - list[i][1]) || (i - j));
    const out = new Int32Array(list.length), open = new Map();
    for (const i of ord) {
      const r = list[i];
      let act = open.get(r[3]);
      if (!act) open.set(r[3], act = []);
      let w = 0, d = 0;
      for (const k of act) if (list[k][1] >= r[0]) { act[w++] = k; if (list[k][1] >= r[1]) d++; }
      act.length = w;
      out[i] = d;
      act.push(i);
    }
    return out;
  }

  /* The thread id of global tid g on its profile's track ([pid, tid]
   * parts of the global id; an unknown thread is tid 0). */
  function traceTid(g) {
    const [, tid] = DSQuery.tidParts(g);
    return tid === null ? 0 : tid;
  }

  /* The thread names of profile p by global tid: its threads list, else
   * its NVTX summary's names. */
  function threadNames(p) {
    const m = new Map(), ns = p.nvtx_summary;
    if (ns && ns.threads) ns.threads.forEach((g, i) => { if ((ns.thread_names || [])[i]) m.set(g, ns.thread_names[i]); });
    for (const t of p.threads || []) if (t.name) m.set(t.global_tid, t.name);
    return m;
  }

  /* Builds the Chrome trace as Blob parts; onProgress(done, total) per
   * shard.  The requests of the window are async slices (with their
   * prefill and decode when the first token is known) on a process of
   * their own. */
  async function buildTrace(app, onProgress, signal, opts) {
    const pl = plan(app, opts), [a, b] = pl.win, parts = [], J = JSON.stringify;
    let done = 0, rows = 0, points = 0, samples = 0, first = true;
    const tick = () => { done++; if (onProgress) onProgress(done, pl.shards + pl.cpuShards); };
    const emit = (ev) => { parts.push((first ? '' : ',\n') + J(ev)); first = false; };
    parts.push('{"displayTimeUnit":"ms","otherData":', J({ generator: 'dsight viewer', job: app.cat.meta.job, origin_ns: app.cat.meta.origin_ns, window: [a, b] }),
      ',"traceEvents":[\n');
    for (const p of pl.profs) {
      emit({ ph: 'M', name: 'process_name', pid: p.id, tid: 0, args: { name: `profile ${p.id} · ${p.worker || '?'}${p.rank !== null && p.rank !== undefined ? ' rank ' + p.rank : ''}` } });
      emit({ ph: 'M', name: 'process_sort_index', pid: p.id, tid: 0, args: { sort_index: p.id } });
      const list = [];
      for await (const chunk of DSQuery.stream(app.store, p.event_chunks, a, b, signal)) {
        for (const r of chunk) if (typeof r[0] === 'number' && typeof r[1] === 'number' && r[0] <= b && r[1] >= a) list.push(r);
        tick();
      }
      /* one track per global tid: a tid another thread of the profile
       * already holds (threads of two processes) takes a free number */
      const dep = depths(list), tids = new Map(), taken = new Set(), names = threadNames(p);
      let buf = '', spare = 0x40000000;
      const trackOf = (g) => {
        let tid = tids.get(g);
        if (tid === undefined) {
          tid = traceTid(g);
          while (taken.has(tid)) tid = spare++;
          taken.add(tid);
          tids.set(g, tid);
          emit({ ph: 'M', name: 'thread_name', pid: p.id, tid, args: { name: DSSummary.threadLabel(p, g, names.get(g)) } });
        }
        return tid;
      };
      for (let i = 0; i < list.length; i++) {
        const r = list[i], tid = trackOf(r[3]);
        const nm = p.names[r[2]];
        buf += ',\n' + J({ name: typeof nm === 'string' ? nm : '(no name)', cat: 'nvtx', ph: 'X', ts: r[0] * US, dur: (r[1] - r[0]) * US, pid: p.id, tid,
          args: { source_row: r[4], depth: dep[i], global_tid: r[3] } });
        rows++;
        if (buf.length > 1 << 20) { parts.push(first ? buf.slice(2) : buf); first = false; buf = ''; }
      }
      if (buf) { parts.push(first ? buf.slice(2) : buf); first = false; buf = ''; }
      /* CPU samples: instant events on their thread's track, named by the
       * leaf frame (element 0 of the stack), the frames in args */
      const cpu = p.cpu;
      if (!cpu) continue;
      for await (const chunk of DSQuery.stream(app.store, cpu.chunks, a, b, signal)) {
        for (const r of chunk) {
          if (!(r[0] >= a && r[0] <= b)) continue;
          const st = cpu.stacks[r[2]], tid = trackOf(r[1]);
          const frames = Array.isArray(st) ? st.map((k) => (typeof cpu.names[k] === 'string' ? cpu.names[k] : null)) : [];
          const leaf = frames.length && typeof frames[0] === 'string' ? frames[0] : '(unknown stack)';
          buf += ',\n' + J({ name: leaf, cat: 'cpu', ph: 'i', s: 't', ts: r[0] * US, pid: p.id, tid, args: { source_row: r[3], stack: frames, global_tid: r[1] } });
          samples++;
        }
        if (buf) { parts.push(first ? buf.slice(2) : buf); first = false; buf = ''; }
        tick();
      }
    }
    if (pl.series.length) emit({ ph: 'M', name: 'process_name', pid: METRIC_PID, tid: 0, args: { name: 'metrics' } });
    for (const s of pl.series) {
      const label = `${s.name} · ${DSMetrics.seriesLabel(s)}`;
      let buf = '';
      for await (const chunk of DSQuery.stream(app.store, s.chunks, a, b, signal)) {
        for (const r of chunk) {
          if (!(r[0] >= a && r[0] <= b) || typeof r[1] !== 'number') continue;
          buf += ',\n' + J({ name: label, cat: 'metric', ph: 'C', ts: r[0] * US, pid: METRIC_PID, tid: 0, args: { value: r[1] } });
          points++;
        }
        if (buf) { parts.push(first ? buf.slice(2) : buf); first = false; buf = ''; }
        tick();
      }
    }
    let requests = 0;
    if (!opts || opts.requests !== false) {
      /* sharded: the request summaries (they hold every field used here),
       * else the elements */
      const C = app.catalog, q = async (o) => (C.sharded ? (await C.tableRequests(o, signal)) || C.queryRequests(o, { signal }) : DSQuery.queryRequests(app.cat, o));
      for (let off = 0; off < MAX_TRACE_REQUESTS; off += 1000) {
        const pg = await q({ from: a, to: b, sort: 'start', offset: off, limit: 1000 });
        if (!requests && pg.items.length) emit({ ph: 'M', name: 'process_name', pid: REQ_PID, tid: 0, args: { name: 'requests' } });
        for (const r of pg.items) {
          if (typeof r.start !== 'number' || typeof r.end !== 'number') continue;
          const id = `req:${r.id}`, args = { id: r.id, session: r.session, status: r.status, ttft_ms: r.ttft_ms, workers: r.workers };
          emit({ name: r.id, cat: 'request', ph: 'b', id, ts: r.start * US, pid: REQ_PID, tid: 0, args });
          if (typeof r.first === 'number' && r.first >= r.start && r.first <= r.end) {
            emit({ name: 'prefill', cat: 'request', ph: 'b', id, ts: r.start * US, pid: REQ_PID, tid: 0 });
            emit({ name: 'prefill', cat: 'request', ph: 'e', id, ts: r.first * US, pid: REQ_PID, tid: 0 });
            emit({ name: 'decode', cat: 'request', ph: 'b', id, ts: r.first * US, pid: REQ_PID, tid: 0 });
            emit({ name: 'decode', cat: 'request', ph: 'e', id, ts: r.end * US, pid: REQ_PID, tid: 0 });
          }
          emit({ name: r.id, cat: 'request', ph: 'e', id, ts: r.end * US, pid: REQ_PID, tid: 0 });
          requests++;
        }
        if (off + 1000 >= pg.total) break;
      }
    }
    parts.push('\n]}');
    return { blob: new Blob(parts, { type: 'application/json' }), rows, points, requests, samples };
  }
  const MAX_TRACE_REQUESTS = 100000;

  /* The toolbar button: warn, build with progress, download. */
  async function run(app, chrome) {
    const btn = document.getElementById(chrome ? 'btn-export-trace' : 'btn-export');
    const pl = plan(app), bytes = pl.bytes + (chrome ? pl.cpuBytes : 0), shards = pl.shards + (chrome ? pl.cpuShards : 0);
    if (bytes > WARN_BYTES && !window.confirm(`This export reads ${shards} shards (${DSUI.fmtNum(Math.round(bytes / 1048576))} MiB of rows) ` +
      'and the file will be about as large. Continue? (Select a narrower area to export less.)')) return null;
    const label = btn.textContent;
    btn.disabled = true;
    try {
      const res = await (chrome ? buildTrace : build)(app, (d, t) => { btn.textContent = `Exporting… ${t ? Math.round(100 * d / t) : 100}%`; });
      const a = DSUI.el('a', { href: URL.createObjectURL(res.blob), download: `${app.cat.meta.job || 'dsight'}-${chrome ? 'trace' : 'view'}.json` });
      document.body.append(a); a.click(); a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10000);
      DSUI.toast(`Exported ${DSUI.fmtNum(res.rows)} NVTX rows, ${DSUI.fmtNum(res.points)} metric points` +
        `${chrome ? `, ${DSUI.fmtNum(res.samples)} CPU samples and ${DSUI.fmtNum(res.requests)} requests as a Chrome trace (open it in ui.perfetto.dev)` : ''} (${DSUI.fmtNum(Math.round(res.blob.size / 1024))} KiB)`);
      return res;
    } finally {
      btn.disabled = false;
      btn.textContent = label;
    }
  }

  return { build, buildTrace, run, plan, WARN_BYTES };
})();
