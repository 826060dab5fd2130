/* query-timeline.js: the `timeline` kind in the browser (API 3.2,
 * doc/query-semantics.md "timeline"): requests, nsys (per profile or by
 * name), cpu, metrics and gpu (query-gpu.js) over buckets of the window or of a joined request,
 * with the engine's bucket edges, membership and correctly rounded sums. */
'use strict';

const DSTimeline = (() => {
  /* C: the DSCatalog.Catalog of a sharded catalog (its requests are read
   * from the shards), else null. */
  async function queryTimeline(cat, store, params, signal, C) {
    const Q = DSQuery, A = DSAnalysis, P = params || {};
    /* --session, --agent and --worker repeat, as in requests */
    const [ls, one] = Q.lists(P, ['session', 'agent', 'worker']);
    const v = Q.validate(cat, one, { profile: 'integer', worker: 'string', rank: 'integer', name: 'string', bucket: 'number',
      of: 'string', groupBy: 'string', session: 'string', agent: 'string', search: 'string', minTTFT: 'number', device: 'integer',
      stream: 'integer' });
    if (ls.session) v.sessions = ls.session;
    if (ls.agent) v.agents = ls.agent;
    if (ls.worker) v.workers = ls.worker;
    if (!(typeof v.bucket === 'number' && v.bucket > 0 && Number.isFinite(v.bucket))) throw new Q.UsageError('timeline needs --bucket SECONDS > 0');
    const of = v.of === null ? 'requests' : v.of;
    if (!A.SOURCES.includes(of)) throw new Q.UsageError(`Unknown timeline source '${of}'; choose from requests, nsys, cpu, metrics, gpu`);
    /* a joined request of a sharded catalog joins once its shard is loaded */
    if (C && typeof P.request === 'string') await C.loadRequest(P.request, signal);
    const join = Q.joinOf(cat, P, v);
    const byName = of === 'nsys' && v.groupBy !== null;
    if (byName && v.groupBy !== 'name') throw new Q.UsageError(`Unknown group-by field '${v.groupBy}' for timeline; choose from name`);
    const bk = A.buckets(v.from, v.to, v.bucket);
    const head = { of, bucket: v.bucket, range: [v.from, v.to], buckets: Array.from(bk.b.subarray(0, bk.n)) };
    let total = 0, series = [];
    if (of === 'requests') {
      const vv = Object.assign({}, v, { worker: null, minTTFT: v.minTTFT === null ? 0 : v.minTTFT });
      const needle = Q.given(v.search) ? Q.lower(v.search) : null;
      const ws = v.workers || (Q.given(v.worker) ? [v.worker] : null);
      const acc = A.requestsSeries(bk);
      const inWorkers = (r) => !ws || (r.workers || []).some((w) => ws.includes(w));
      const plan = { v: vv, match: (r) => Q.requestMatches(r, vv, needle) };
      if (C) await C.eachMatch(plan, { signal }, (r) => { if (inWorkers(r)) acc.add(r); });
      else for (const r of Q.requestsOf(cat)) if (plan.match(r) && inWorkers(r)) acc.add(r);
      total = 1;
      series = [acc.series()].slice(v.offset, v.offset + v.limit);
    } else if (of === 'nsys' && !byName) {
      const profs = Q.selectJoined(cat, v);
      total = profs.length;
      for (const p of Q.slicePage(profs, v)) {
        const c = A.nsysCells(bk.n);
        const one = Object.assign({}, v, { profile: p.id, worker: null, rank: null, workers: null });
        await Q.scanNsys(cat, store, one, signal, (pp, r) => A.addRange(bk, c, r[0], r[1]));
        series.push({ key: p.id, values: A.cellsValues(c) });
      }
    } else if (of === 'nsys') {
      /* one pass: groups (for the rank) and their cells together */
      const groups = new Map();
      await Q.scanNsys(cat, store, v, signal, (p, r) => {
        const n = p.names[r[2]], k = typeof n === 'string' ? 's' + n : 'n';
        let g = groups.get(k);
        if (!g) { g = { acc: A.nvtxGroup(k === 'n' ? null : n), cells: A.nsysCells(bk.n) }; groups.set(k, g); }
        A.nvtxAdd(g.acc, r[0], r[1], v.from, v.to);
        A.addRange(bk, g.cells, r[0], r[1]);
      });
      const all = [...groups.values()];
      const byKey = new Map(all.map((g) => [g.acc.key, g]));
      const ranked = A.orderNvtx(all.map((g) => A.nvtxItem(g.acc)), []);
      total = ranked.length;
      series = Q.slicePage(ranked, v).map((it) => ({ key: it.key, values: A.cellsValues(byKey.get(it.key).cells) }));
    } else if (of === 'cpu') {
      const profs = Q.selectJoined(cat, v).filter((p) => p.cpu);
      total = profs.length;
      for (const p of Q.slicePage(profs, v)) {
        const samples = new Array(bk.n).fill(0);
        for await (const rows of Q.stream(store, p.cpu.chunks, v.from, v.to, signal)) {
          for (const r of rows) { const i = A.findBucket(bk, r[0]); if (i >= 0) samples[i]++; }
        }
        series.push({ key: p.id, values: { samples } });
      }
    } else if (of === 'gpu') {
      ({ total, series } = await DSGpuQuery.timelineSeries(cat, store, v, bk, signal)); /* query-gpu.js */
    } else {
      let ss = Q.selectSeries(cat, v);
      if (v.workers) ss = ss.filter((s) => v.workers.includes(s.worker));
      total = ss.length;
      for (const s of Q.slicePage(ss, v)) {
        const n = bk.n, cnt = new Array(n).fill(0), min = new Array(n).fill(null), max = new Array(n).fill(null);
        const sums = Array.from({ length: n }, () => new A.FSum());
        for await (const rows of Q.stream(store, s.chunks, v.from, v.to, signal)) {
          for (const r of rows) {
            const i = A.findBucket(bk, r[0]), x = r[1];
            if (i < 0 || typeof x !== 'number') continue;
            cnt[i]++;
            sums[i].add(x);
            if (min[i] === null || x < min[i]) min[i] = x;
            if (max[i] === null || x > max[i]) max[i] = x;
          }
        }
        const mean = sums.map((x, i) => (cnt[i] ? x.value() / cnt[i] : null));
        series.push({ key: s.id, values: { samples: cnt, min, max, mean } });
      }
    }
    const out = Object.assign(head, { total, offset: v.offset, limit: v.limit, series });
    if (join) out.request = join;
    if (byName) out.group_by = 'name';
    if (!total && of !== 'gpu') {
      const notes = A.notesFor(cat, of, v, join, of === 'nsys' || of === 'cpu' ? Q.selectJoined(cat, v) : null);
      if (notes.length) out.notes = notes;
    }
    return out;
  }

  return { queryTimeline };
})();
