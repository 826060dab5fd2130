/* query-gpu.js: the `gpu` kind and the timeline's `gpu` source in the
 * browser (doc/query-semantics.md "gpu"), over a profile's GPU shards
 * (doc/report-files.md "GPU shards"): rows overlapping the window with the
 * CLI's filters, sort, grouping, fields and join, and per bucket and device
 * the kernels overlapping it and the exact length of their union inside
 * it.  Rows stream shard by shard through the shared cache; whole-run
 * answers by name and at 1-s buckets read the build's GPU summaries
 * (gpu_summary.names, .bins) as the CLI reads the cache's. */
'use strict';

const DSGpuQuery = (() => {
  const KINDS = ['kernel', 'memcpy', 'memset'];
  const ATTR = 'GPU activity of the whole process; overlap does not establish request ownership.';
  const GROUPS = ['name', 'device', 'stream', 'gpu_kind', 'nvtx'];
  const SORTS = ['start', 'duration', 'name', 'queue_delay'];

  function hasRows(p) { return Array.isArray(p.gpu_chunks) && p.gpu_chunks.length > 0; }

  /* onRow(r, ordinal) for every GPU row of p overlapping [from, to], in
   * ordinal (start) order; ordinal: the row's position in the profile. */
  async function scan(store, p, from, to, signal, onRow) {
    const descs = [], bases = [];
    let base = 0;
    for (const d of p.gpu_chunks || []) {
      if (DSQuery.overlaps(d, from, to)) { descs.push(d); bases.push(base); }
      base += d.count;
    }
    let k = 0;
    for await (const rows of DSQuery.stream(store, descs, from, to, signal)) {
      const b = bases[k++];
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i];
        if (r[0] <= to && r[1] >= from) onRow(r, b + i);
      }
    }
  }

  /* The NVTX name index of GPU row r's projected range (r[10], an ordinal
   * of p: its events shard), or -1.  A part of a split single-file report
   * holds only its slice's ranges: its GPU rows carry the name index
   * (r[24]). */
  async function nvtxNameIndex(store, p, r, signal, cache) {
    if (r.length > 24) return r[24] === null ? -1 : r[24];
    const ordinal = r[10];
    if (ordinal === null || ordinal === undefined) return -1;
    if (cache && cache.has(ordinal)) return cache.get(ordinal);
    let base = 0, out = -1;
    for (const d of p.event_chunks || []) {
      if (ordinal < base + d.count) {
        const rows = await store.get(d, signal);
        out = rows[ordinal - base] ? rows[ordinal - base][2] : -1;
        break;
      }
      base += d.count;
    }
    if (cache) cache.set(ordinal, out);
    return out;
  }

  const nameAt = (list, i) => (i === null || i === undefined || i < 0 || list[i] === undefined ? null : list[i]);

  /* The CLI's item of row r (ordinal k) of p; nvtxName: the range's name. */
  function item(p, r, nvtxName) {
    const names = p.gpu_names || [];
    return {
      profile: p.id, worker: p.worker === undefined ? null : p.worker, gpu_kind: KINDS[r[2]], start: r[0], end: r[1], duration: r[1] - r[0],
      device: r[3], stream: r[4], name: nameAt(names, r[5]), short_name: nameAt(names, r[12]), correlation: r[6], bytes: r[13],
      grid: [r[14], r[15], r[16]], block: [r[17], r[18], r[19]], registers: r[20], static_smem: r[21], dynamic_smem: r[22],
      graph_node: r[23], launch_tid: r[7], launch_start: r[8], launch_name: nameAt(names, r[9]),
      queue_delay: r[7] === null ? null : r[0] - r[8], nvtx_ordinal: r[10], nvtx_name: nvtxName, rowid: r[11],
    };
  }

  /* Validates a gpu query as the engine does; returns {v, keys, groupBy, fields, join, kind, needles}. */
  function plan(cat, params0) {
    const Q = DSQuery, A = DSAnalysis, P = params0 || {};
    const [ls, params] = Q.lists(params0, ['worker', 'name']);
    const v = Q.validate(cat, params, { profile: 'integer', worker: 'string', device: 'integer', stream: 'integer',
      name: 'string', gpu_kind: 'string', gpuKind: 'string' });
    if (ls.worker) v.workers = ls.worker;
    const kind = v.gpuKind !== null ? v.gpuKind : v.gpu_kind;
    if (kind !== null && !KINDS.includes(kind)) throw new Q.UsageError(`Unknown gpu_kind '${kind}'; choose from ${KINDS.join(', ')}`);
    const join = Q.joinOf(cat, P, v);
    const grouped = Q.given(P.groupBy);
    const keys = A.listParam(P.sort, 'sort').map((s) => {
      const desc = s[0] === '-', name = desc ? s.slice(1) : s;
      const allowed = grouped ? ['count', 'clipped_total', 'duration_total', 'duration_max', 'duration_mean', 'key'] : SORTS;
      if (!allowed.includes(name)) throw new Q.UsageError(`Unknown sort key '${name}' for gpu; choose from ${allowed.join(', ')}`);
      return { name, desc };
    });
    let groupBy = null;
    if (grouped) {
      if (typeof P.groupBy !== 'string') throw new Q.UsageError('group_by must be a string or null');
      if (!GROUPS.includes(P.groupBy)) throw new Q.UsageError(`Unknown group-by field '${P.groupBy}' for gpu; choose from ${GROUPS.join(', ')}`);
      groupBy = P.groupBy;
    }
    const fields = P.fields === undefined || P.fields === null ? null : A.listParam(P.fields, 'fields');
    const names = ls.name || (Q.given(v.name) && v.name !== '' ? [v.name] : null);
    return { v, keys, groupBy, fields, join, kind: kind === null ? -1 : KINDS.indexOf(kind), needles: names ? names.map(Q.lower) : null };
  }

  /* Per profile: which gpu_names pass the name filter (null: all). */
  function nameMask(p, needles) {
    if (!needles) return null;
    return (p.gpu_names || []).map((n) => typeof n === 'string' && needles.some((x) => DSQuery.lower(n).includes(x)));
  }

  function rowOk(pl, mask, r) {
    const v = pl.v;
    if (pl.kind >= 0 && r[2] !== pl.kind) return false;
    if (v.device !== null && r[3] !== v.device) return false;
    if (v.stream !== null && r[4] !== v.stream) return false;
    if (mask && !(r[5] !== null && mask[r[5]])) return false;
    return true;
  }

  function sortVal(key, x) {
    const r = x.r;
    if (key === 'start') return r[0];
    if (key === 'duration') return r[1] - r[0];
    if (key === 'queue_delay') return r[7] === null ? null : r[0] - r[8];
    const n = nameAt(x.p.gpu_names || [], r[5]);
    return typeof n === 'string' ? n : null;
  }

  async function queryGpu(cat, store, params0, signal) {
    const Q = DSQuery, A = DSAnalysis;
    const pl = plan(cat, params0), v = pl.v;
    const profs = Q.selectJoined(cat, v).filter((p) => p.gpu && typeof p.gpu === 'object');
    const partial = profs.some((p) => p.gpu.truncated === true);
    const order = new Map(cat.profiles.map((p, i) => [p, i]));
    let total = 0;
    const head = {};
    if (pl.groupBy !== null) {
      const groups = new Map();
      const group = (key) => {
        if (typeof key !== 'string' && typeof key !== 'number') key = null;
        const k = key === null ? 'n' : (typeof key === 'number' ? 'i' : 's') + key;
        let g = groups.get(k);
        if (!g) groups.set(k, g = A.nvtxGroup(key));
        return g;
      };
      /* whole run by name, no row filter: the build's exact per-name sums
       * of the rows inside the run, plus the rows across its bounds */
      const D = cat.meta.duration, sums = pl.groupBy === 'name' && v.from === 0 && v.to === D && v.device === null &&
        v.stream === null && pl.kind < 0 && !pl.needles;
      for (const p of profs) {
        const ns = p.gpu_summary;
        if (sums && ns && ns.names) {
          for await (const rows of Q.stream(store, ns.names, 0, D, signal)) {
            for (const [n, count, max, parts] of rows) {
              A.nvtxAddSums(group(nameAt(p.gpu_names || [], n)), count, max, parts, parts);
              total += count;
            }
          }
          const edge = (r) => { total++; A.nvtxAdd(group(nameAt(p.gpu_names || [], r[5])), r[0], r[1], 0, D); };
          await scan(store, p, 0, 0, signal, (r) => { if (r[0] < 0) edge(r); });
          await scan(store, p, D, D, signal, (r) => { if (r[0] >= 0 && r[1] > D) edge(r); });
          continue;
        }
        const mask = nameMask(p, pl.needles), cache = new Map(), pending = [];
        await scan(store, p, v.from, v.to, signal, (r) => {
          if (!rowOk(pl, mask, r)) return;
          total++;
          pending.push(r);
        });
        for (const r of pending) {
          let key;
          if (pl.groupBy === 'name') key = nameAt(p.gpu_names || [], r[5]);
          else if (pl.groupBy === 'device') key = r[3];
          else if (pl.groupBy === 'stream') key = r[4];
          else if (pl.groupBy === 'gpu_kind') key = KINDS[r[2]];
          else key = nameAt(p.names || [], await nvtxNameIndex(store, p, r, signal, cache));
          A.nvtxAdd(group(key), r[0], r[1], v.from, v.to);
        }
      }
      const items = A.orderNvtx([...groups.values()].map(A.nvtxItem), pl.keys);
      Object.assign(head, { total, groups: items.length, items: Q.slicePage(items, v) });
    } else {
      const cmp = (a, b) => {
        for (const k of pl.keys) {
          const c = A.cmpVal(sortVal(k.name, a), sortVal(k.name, b), k.desc);
          if (c) return c;
        }
        return (a.r[0] - b.r[0]) || (a.p.id - b.p.id) || (order.get(a.p) - order.get(b.p)) || (a.k - b.k);
      };
      const top = new Q.TopK(v.offset + v.limit, cmp);
      for (const p of profs) {
        const mask = nameMask(p, pl.needles);
        await scan(store, p, v.from, v.to, signal, (r, k) => {
          if (!rowOk(pl, mask, r)) return;
          total++;
          top.push({ p, r, k });
        });
      }
      const items = [];
      for (const x of top.sorted().slice(v.offset)) {
        const it = item(x.p, x.r, nameAt(x.p.names || [], await nvtxNameIndex(store, x.p, x.r, signal, null)));
        items.push(pl.fields ? A.pick(it, pl.fields) : it);
      }
      Object.assign(head, { total, items });
    }
    const out = Object.assign(head, { offset: v.offset, limit: v.limit, range: [v.from, v.to] });
    if (pl.join) out.request = pl.join;
    if (pl.groupBy !== null) out.group_by = pl.groupBy;
    Object.assign(out, { attribution: ATTR, partial });
    if (!total) {
      const notes = A.notesFor(cat, 'nsys', v, pl.join, Q.selectJoined(cat, v));
      if (notes.length) out.notes = notes;
    }
    return out;
  }

  /* The timeline's gpu series of the selected profiles (v validated, bk
   * its buckets): per profile and device of its gpu.devices (device
   * filter), kernels overlapping each bucket and their union's length in
   * it; returns {total, series} paged by v. */
  async function timelineSeries(cat, store, v, bk, signal) {
    const Q = DSQuery, A = DSAnalysis;
    const needles = Q.given(v.name) && v.name !== '' ? [Q.lower(v.name)] : null;
    const lanesOf = (p) => ((p.gpu && p.gpu.devices) || []).map((d) => d.id)
      .filter((id) => Number.isInteger(id) && (v.device === null || v.device === undefined || id === v.device));
    const profs = Q.selectJoined(cat, v);
    let total = 0;
    for (const p of profs) total += lanesOf(p).length;
    const series = [];
    let pos = 0;
    const end = v.offset + v.limit;
    for (const p of profs) {
      const ids = lanesOf(p);
      if (pos + ids.length <= v.offset || pos >= end) { pos += ids.length; continue; }
      const lanes = new Map(ids.map((id) => [id, { kernels: new Array(bk.n).fill(0), busy: Array.from({ length: bk.n }, () => new A.FSum()), open: false, cs: 0, ce: 0 }]));
      /* whole run at 1-s buckets without a stream or name filter: every
       * bucket but the last from the build's per-second bins */
      let from = 0;
      const bins = p.gpu_summary && p.gpu_summary.bins;
      if (bins && ids.length && v.from === 0 && v.to === cat.meta.duration && v.bucket === 1 && !Q.given(v.stream) && !needles && bk.n >= 2) {
        from = bk.n - 1;
        for await (const rows of Q.stream(store, bins, v.from, v.to, signal)) {
          for (const [dev, bin, k, parts] of rows) {
            const l = lanes.get(dev);
            if (!l || bin < 0 || bin >= from) continue;
            l.kernels[bin] = k;
            for (const x of parts) l.busy[bin].add(x);
          }
        }
      }
      const flush = (l) => {
        if (!l.open) return;
        for (let j = A.firstOverlap(bk, l.cs, l.ce); j < bk.n && bk.b[j] <= l.ce; j++) {
          if (j < from) continue;
          const lo = l.cs > bk.b[j] ? l.cs : bk.b[j], hi = l.ce < bk.b[j + 1] ? l.ce : bk.b[j + 1];
          l.busy[j].add(hi - lo);
        }
        l.open = false;
      };
      const mask = nameMask(p, needles);
      if (ids.length) {
        await scan(store, p, from ? bk.b[from] : v.from, v.to, signal, (r) => {
          if (r[2] !== 0 || r[3] === null) return;
          if (v.stream !== null && v.stream !== undefined && r[4] !== v.stream) return;
          if (mask && !(r[5] !== null && mask[r[5]])) return;
          const l = lanes.get(r[3]);
          if (!l) return;
          for (let j = A.firstOverlap(bk, r[0], r[1]); j < bk.n && bk.b[j] <= r[1]; j++) if (j >= from) l.kernels[j]++;
          if (l.open && r[0] <= l.ce) { if (r[1] > l.ce) l.ce = r[1]; return; }
          flush(l);
          l.open = true; l.cs = r[0]; l.ce = r[1];
        });
      }
      for (const id of ids) {
        const l = lanes.get(id);
        flush(l);
        if (pos >= v.offset && pos < end) series.push({ key: { profile: p.id, device: id }, values: { kernels: l.kernels, busy: l.busy.map((s) => s.value()) } });
        pos++;
      }
    }
    return { total, series };
  }

  /* The span of kernels [[start, end], ...] sorted by start: count,
   * earliest start, latest end, and the union's length with its pieces
   * added in turn (as the cache adds them); nulls and 0 when none. */
  function span(hits) {
    let busy = 0, cs = null, ce = null, gs = null, ge = null;
    for (const [a, b] of hits) {
      if (gs === null) gs = a;
      if (ge === null || b > ge) ge = b;
      if (cs !== null && a <= ce) { if (b > ce) ce = b; continue; }
      if (cs !== null) busy += ce - cs;
      cs = a; ce = b;
    }
    if (cs !== null) busy += ce - cs;
    return { gpu_start: gs, gpu_end: ge, gpu_busy: hits.length ? busy : null, kernels: hits.length };
  }

  /* The kernels of p launched on thread tid while [start, end] was open
   * (launch_start inside it), as the nsys rows' gpu_* columns count them:
   * {kernels, gpu_start, gpu_end, gpu_busy, rows: [ordinals]}.  Reads the
   * shards a launch in [start, end] can reach (gpu_summary.queue_delay
   * bounds a kernel's start from its launch; none without it: no kernel
   * has a launch). */
  async function projected(store, p, tid, start, end, signal) {
    const q = p.gpu_summary && p.gpu_summary.queue_delay, hits = [];
    if (q) {
      await scan(store, p, start + q[0], end + q[1], signal, (r, k) => {
        if (r[2] === 0 && r[7] === tid && r[8] >= start && r[8] <= end) hits.push([r[0], r[1], k]);
      });
    }
    hits.sort((a, b) => a[0] - b[0] || a[2] - b[2]);
    return Object.assign(span(hits), { rows: hits.map((h) => h[2]) });
  }

  /* The `nsys` answer ans with each item of a profile with GPU rows given
   * the CLI's gpu_start, gpu_end, gpu_busy and kernels (its projected
   * kernels): one pass per profile over the GPU shards the page's
   * ranges' launches can reach.  Returns ans. */
  async function withProjections(cat, store, ans, signal) {
    const byProf = new Map();
    for (const it of (ans && ans.items) || []) {
      const p = cat.profiles.find((x) => x.id === it.profile);
      if (!p || !hasRows(p) || !('evidence_source' in it)) continue;
      if (!byProf.has(p)) byProf.set(p, []);
      byProf.get(p).push(it);
    }
    for (const [p, items] of byProf) {
      const q = p.gpu_summary && p.gpu_summary.queue_delay, hits = items.map(() => []), byTid = new Map();
      items.forEach((it, i) => { if (!byTid.has(it.global_tid)) byTid.set(it.global_tid, []); byTid.get(it.global_tid).push(i); });
      if (q) {
        const lo = Math.min(...items.map((it) => it.start)) + q[0], hi = Math.max(...items.map((it) => it.end)) + q[1];
        await scan(store, p, lo, hi, signal, (r) => {
          if (r[2] !== 0 || r[7] === null) return;
          for (const i of byTid.get(r[7]) || []) if (r[8] >= items[i].start && r[8] <= items[i].end) hits[i].push([r[0], r[1]]);
        });
      }
      items.forEach((it, i) => Object.assign(it, span(hits[i].sort((a, b) => a[0] - b[0]))));
    }
    return ans;
  }

  return { hasRows, scan, queryGpu, timelineSeries, projected, withProjections, item, KINDS };
})();
