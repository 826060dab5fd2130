/* query-analysis.js: the analysis semantics of doc/query-semantics.md in the
 * browser (API 3.2): correctly rounded sums (Shewchuk / Python fsum),
 * nearest-rank percentiles, sort keys, grouping of nsys ranges and client
 * requests, the request join (request + phase) and the timeline kind.
 * query.js calls in here; everything streams shards through the shared
 * ShardStore (nothing holds a whole profile or series). */
'use strict';

const DSAnalysis = (() => {
  /* ---- arithmetic ---- */

  /* Python's msum: non-overlapping partials, then a correctly rounded
   * value (half-even across partials), like common/query/qstat.c. */
  class FSum {
    constructor() { this.p = []; this.special = 0; }
    add(x) {
      if (!Number.isFinite(x)) { this.special += Number.isNaN(x) ? 4 : x > 0 ? 1 : 2; return; }
      const p = this.p;
      let i = 0;
      for (let j = 0; j < p.length; j++) {
        let y = p[j];
        if (Math.abs(x) < Math.abs(y)) { const t = x; x = y; y = t; }
        const hi = x + y, lo = y - (hi - x);
        if (lo !== 0) p[i++] = lo;
        x = hi;
      }
      p.length = i;
      if (x !== 0) p.push(x);
    }
    value() {
      if (this.special) return this.special === 1 ? Infinity : this.special === 2 ? -Infinity : NaN;
      const p = this.p;
      let n = p.length;
      if (!n) return 0;
      let hi = p[--n], lo = 0;
      while (n > 0) {
        const x = hi, y = p[--n];
        hi = x + y;
        lo = y - (hi - x);
        if (lo !== 0) break;
      }
      if (n > 0 && ((lo < 0 && p[n - 1] < 0) || (lo > 0 && p[n - 1] > 0))) {
        const y = lo * 2, x = hi + y;
        if (y === x - hi) hi = x;
      }
      return hi;
    }
  }

  function fsum(values) {
    const s = new FSum();
    for (const v of values) s.add(v);
    return s.value();
  }

  const STATS = ['min', 'p50', 'p90', 'p99', 'max', 'mean'];

  /* {min, p50, p90, p99, max, mean} over numbers (nearest rank; all null
   * when there are none). */
  function stats(values) {
    const out = {};
    const n = values.length;
    if (!n) { for (const k of STATS) out[k] = null; return out; }
    const v = values.slice().sort((a, b) => a - b);
    const at = (p) => v[Math.min(n, Math.max(1, Math.floor((p * n + 99) / 100))) - 1];
    out.min = v[0]; out.p50 = at(50); out.p90 = at(90); out.p99 = at(99); out.max = v[n - 1];
    out.mean = fsum(v) / n;
    return out;
  }

  /* ---- ordering ---- */

  /* One key: numbers numerically, strings by code point, null last in
   * both directions. */
  function cmpVal(a, b, desc) {
    const na = a === null || a === undefined, nb = b === null || b === undefined;
    if (na || nb) return na === nb ? 0 : na ? 1 : -1;
    const sa = typeof a === 'string', sb = typeof b === 'string';
    if (sa !== sb) return sa ? 1 : -1;
    const c = sa ? DSQuery.cmpCodePoint(a, b) : a < b ? -1 : a > b ? 1 : 0;
    const s = c < 0 ? -1 : c > 0 ? 1 : 0;
    return desc ? -s : s;
  }

  const SORT_KEYS = {
    requests: ['start', 'end', 'first', 'ttft_ms', 'duration', 'input_tokens', 'output_tokens', 'cached_tokens', 'id',
      'session', 'agent', 'status', 'span_count'],
    nsys: ['start', 'end', 'duration', 'name', 'profile'],
    server_spans: ['start', 'end', 'duration', 'name'],
    iterations: ['start', 'end', 'duration', 'worker'],
    sessions: ['start', 'end', 'duration', 'id', 'requests'],
  };
  const GROUP_FIELDS = { nsys: ['name', 'worker', 'profile', 'tid'], requests: ['session', 'agent', 'worker', 'status', 'client_kind'] };
  const GROUP_KEYS = {
    nsys: ['count', 'clipped_total', 'duration_total', 'duration_max', 'duration_mean', 'key'],
    requests: ['count', 'key', 'input_tokens', 'output_tokens', ...STATS.map((s) => 'ttft_ms.' + s), ...STATS.map((s) => 'duration.' + s)],
  };

  function listParam(v, name) {
    if (v === undefined || v === null) return [];
    let a;
    if (typeof v === 'string') a = v.split(',');
    else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) a = v;
    else throw new DSQuery.UsageError(`${name} must be a string or an array of strings`);
    return a.filter((x) => x !== '');
  }

  /* Parses sort for kind (group keys when grouped): [{name, desc}]. */
  function parseSort(kind, sort, grouped) {
    const keys = grouped ? GROUP_KEYS[kind] : SORT_KEYS[kind];
    return listParam(sort, 'sort').map((s) => {
      const desc = s[0] === '-', name = desc ? s.slice(1) : s;
      if (!keys.includes(name)) throw new DSQuery.UsageError(`Unknown sort key '${name}' for ${kind}; choose from ${keys.join(', ')}`);
      return { name, desc };
    });
  }

  function checkGroup(kind, groupBy) {
    if (groupBy === undefined || groupBy === null) return null;
    if (typeof groupBy !== 'string') throw new DSQuery.UsageError('group_by must be a string or null');
    const f = GROUP_FIELDS[kind];
    if (!f.includes(groupBy)) throw new DSQuery.UsageError(`Unknown group-by field '${groupBy}' for ${kind}; choose from ${f.join(', ')}`);
    return groupBy;
  }

  function sortValue(kind, key, o) {
    if (key === 'duration') return typeof o.start === 'number' && typeof o.end === 'number' ? o.end - o.start : null;
    if (kind === 'requests' && key === 'span_count') return (o.spans || []).length;
    if (kind === 'sessions' && key === 'requests') return Array.isArray(o.requests) ? o.requests.length : null;
    const v = o[key];
    return typeof v === 'number' || typeof v === 'string' ? v : null;
  }

  /* A stable sort of catalog objects by the keys (ties: given order). */
  function sortObjects(kind, keys, list) {
    if (!keys.length || list.length < 2) return list;
    const rows = list.map((o, i) => ({ o, i, v: keys.map((k) => sortValue(kind, k.name, o)) }));
    rows.sort((a, b) => {
      for (let k = 0; k < keys.length; k++) {
        const c = cmpVal(a.v[k], b.v[k], keys[k].desc);
        if (c) return c;
      }
      return a.i - b.i;
    });
    return rows.map((r) => r.o);
  }

  /* Orders groups: the sort's keys, then the default keys, then first seen. */
  function orderGroups(groups, sortKeys, defaults, valueOf) {
    const all = sortKeys.concat(defaults);
    return groups.map((g, i) => [g, i]).sort((x, y) => {
      for (const k of all) {
        const c = cmpVal(valueOf(x[0], k.name), valueOf(y[0], k.name), k.desc);
        if (c) return c;
      }
      return x[1] - y[1];
    }).map((e) => e[0]);
  }

  /* ---- the request join ---- */

  const PHASES = ['prefill', 'decode', 'whole'];

  /* Checks phase/request as the engine does (after the window and page
   * checks, before sort and group); returns the join or null. */
  function checkJoin(p) {
    const phase = p.phase === undefined ? null : p.phase;
    const req = p.request === undefined ? null : p.request;
    if (phase !== null && typeof phase !== 'string') throw new DSQuery.UsageError('phase must be a string or null');
    if (req !== null && typeof req !== 'string') throw new DSQuery.UsageError('request must be a string or null');
    if (phase !== null) {
      if (req === null) throw new DSQuery.UsageError('--phase needs --request');
      if (!PHASES.includes(phase)) throw new DSQuery.UsageError(`Unknown phase '${phase}'; choose from prefill, decode, whole`);
    }
    if (req === null) return null;
    const has = (k) => p[k] !== undefined && p[k] !== null;
    if (has('from') || has('to') || (has('worker') && p.worker !== ''))
      throw new DSQuery.UsageError('--request sets the window and the workers; drop --from/--to/--worker');
    return { id: req, phase: phase || 'whole' };
  }

  /* A worker's role as the engine reads it (qjoin.c role_of): the
   * catalog's workers[].role, else a lifecycle stage or activity naming
   * the worker with role prefill or decode; null when unknown. */
  function roleOf(cat, r, w) {
    for (const x of cat.workers || []) {
      if (x && x.id === w && typeof x.role === 'string' && x.role.length) return x.role;
    }
    const lc = r.lifecycle || {};
    for (const list of [lc.stages, lc.activities]) {
      for (const x of Array.isArray(list) ? list : []) {
        if (!x || x.worker !== w) continue;
        if (x.role === 'prefill') return 'prefill';
        if (x.role === 'decode') return 'decode';
      }
    }
    return null;
  }

  /* --phase prefill|decode keeps the workers of that role (agg serves
   * both) when some role is known, as the engine does. */
  function phaseWorkers(cat, r, workers, phase) {
    const roles = workers.map((w) => roleOf(cat, r, w));
    if (!roles.some((x) => x !== null)) return workers;
    return workers.filter((w, k) => roles[k] === phase || roles[k] === 'agg');
  }

  /* Resolves a checked join against the requests: sets v.from/v.to and
   * v.workers; returns the response's `request` object. */
  function resolveJoin(cat, j, v, findRequest) {
    const r = findRequest(j.id);
    if (!r) throw new DSQuery.UsageError(`Unknown client request: ${j.id}`);
    if (typeof r.start !== 'number' || typeof r.end !== 'number') throw new Error(`Request ${j.id} has no start or end`);
    const hasFirst = typeof r.first === 'number';
    let a, b;
    if (j.phase === 'whole') { a = r.start; b = r.end; } else if (!hasFirst) {
      throw new DSQuery.UsageError(`Request ${j.id} has no first token; use --phase whole`);
    } else if (j.phase === 'prefill') {
      if (r.first < r.start) throw new DSQuery.UsageError(`Request ${j.id} has its first token before its start; no prefill phase`);
      a = r.start; b = r.first;
    } else {
      if (r.end < r.first) throw new DSQuery.UsageError(`Request ${j.id} has its first token after its end; no decode phase`);
      a = r.first; b = r.end;
    }
    const D = cat.meta.duration, clamp = (t) => (t < 0 ? 0 : t > D ? D : t);
    v.from = clamp(a); v.to = clamp(b);
    v.workers = (r.workers || []).filter((w) => typeof w === 'string');
    if (j.phase !== 'whole') v.workers = phaseWorkers(cat, r, v.workers, j.phase);
    return { id: j.id, phase: j.phase, window: [v.from, v.to], workers: v.workers.slice() };
  }

  function cpuCount(p) {
    if (!p.cpu) return 0;
    return typeof p.cpu.sample_count === 'number' ? p.cpu.sample_count : (p.cpu.samples || []).length;
  }

  /* The notes of an empty answer the browser can tell (the profile, CPU and
   * join causes of doc/query-semantics.md "Notes on empty results", in that order); kind is
   * the source kind, profs the selected profiles. */
  function notesFor(cat, kind, v, join, profs) {
    const out = [];
    if ((kind === 'nsys' || kind === 'cpu') && v.profile !== null && v.profile !== undefined &&
        !cat.profiles.some((p) => p.id === v.profile))
      out.push(cat.profiles.length ? `No profile ${v.profile}; profiles are 0-${cat.profiles.length - 1}.`
        : `No profile ${v.profile}; the dataset has no profiles.`);
    if (kind === 'cpu' && profs && profs.length && !profs.some((p) => cpuCount(p) > 0)) {
      const ids = cat.profiles.filter((p) => cpuCount(p) > 0).map((p) => p.id);
      out.push(`The selected profiles have no CPU samples. Profiles with CPU samples: ${ids.length ? ids.join(', ') + '.' : 'none.'}`);
    }
    if (join) {
      if (!join.workers.length) out.push(`Request ${join.id} has no workers.`);
      else if ((kind === 'nsys' || kind === 'cpu') && !cat.profiles.some((p) => join.workers.includes(p.worker)))
        out.push(`No profile belongs to the workers of request ${join.id}: ${join.workers.slice(0, 20).join(', ')}.`);
    }
    return out;
  }

  /* ---- grouping ---- */

  /* Accumulates an NVTX group: count, total, max, time inside the window. */
  function nvtxGroup(key) { return { key, count: 0, dur: new FSum(), clip: new FSum(), max: 0 }; }
  function nvtxAdd(g, s, e, wa, wb) {
    const d = e - s;
    if (!g.count || d > g.max) g.max = d;
    g.count++;
    g.dur.add(d);
    g.clip.add(Math.min(e, wb) - Math.max(s, wa));
  }
  /* Adds the build's exact sums of `count` ranges (largest duration max,
   * Shewchuk partials of the durations and of the clipped times). */
  function nvtxAddSums(g, count, max, parts, clipped) {
    if (!g.count || max > g.max) g.max = max;
    g.count += count;
    for (const x of parts) g.dur.add(x);
    for (const x of clipped) g.clip.add(x);
  }
  function nvtxItem(g) {
    const total = g.dur.value();
    return { key: g.key, count: g.count, duration_total: total, duration_max: g.max, duration_mean: total / g.count,
      clipped_total: g.clip.value() };
  }
  const NSYS_DEFAULT = [{ name: 'clipped_total', desc: true }, { name: 'count', desc: true }, { name: 'key', desc: false }];

  function orderNvtx(items, sortKeys) {
    return orderGroups(items, sortKeys, NSYS_DEFAULT, (g, k) => g[k]);
  }

  function requestGroups(list, field, sortKeys) {
    const groups = new Map(); /* key (null allowed) -> acc; Map keeps first-seen order */
    const acc = (key) => {
      let g = groups.get(key);
      if (!g) { g = { key, count: 0, ttft: [], dur: [], inp: new FSum(), out: new FSum() }; groups.set(key, g); }
      return g;
    };
    const add = (g, r) => {
      g.count++;
      if (typeof r.ttft_ms === 'number') g.ttft.push(r.ttft_ms);
      if (typeof r.start === 'number' && typeof r.end === 'number') g.dur.push(r.end - r.start);
      if (typeof r.input_tokens === 'number') g.inp.add(r.input_tokens);
      if (typeof r.output_tokens === 'number') g.out.add(r.output_tokens);
    };
    for (const r of list) {
      if (field !== 'worker') {
        const v = r[field];
        add(acc(typeof v === 'string' ? v : null), r);
        continue;
      }
      const ws = [...new Set((r.workers || []).filter((w) => typeof w === 'string'))];
      if (!ws.length) add(acc(null), r);
      for (const w of ws) add(acc(w), r);
    }
    const items = [...groups.values()].map((g) => ({ key: g.key, count: g.count, ttft_ms: stats(g.ttft), duration: stats(g.dur),
      input_tokens: g.inp.value(), output_tokens: g.out.value() }));
    const valueOf = (g, k) => {
      const dot = k.indexOf('.');
      return dot < 0 ? g[k] : g[k.slice(0, dot)][k.slice(dot + 1)];
    };
    return orderGroups(items, sortKeys, [{ name: 'count', desc: true }, { name: 'key', desc: false }], valueOf);
  }

  /* ---- timeline ---- */

  const BUCKET_MAX = 10000;
  const SOURCES = ['requests', 'nsys', 'cpu', 'metrics', 'gpu'];

  /* Bucket starts over [start, end]: b[0..n-1] plus b[n] = end. */
  function buckets(start, end, width) {
    const edge = (i) => start + i * width;
    if (!(edge(BUCKET_MAX) >= end)) throw new DSQuery.UsageError(`Too many buckets; the most is ${BUCKET_MAX}`);
    let lo = 1, hi = BUCKET_MAX;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (edge(mid) >= end) hi = mid; else lo = mid + 1;
    }
    const b = new Float64Array(lo + 1);
    for (let i = 0; i < lo; i++) b[i] = edge(i);
    b[lo] = end;
    return { n: lo, b, start, end };
  }

  /* The bucket holding t (the largest i < n with b[i] <= t), or -1. */
  function findBucket(bk, t) {
    if (!(t >= bk.start && t <= bk.end)) return -1;
    let lo = 0, hi = bk.n - 1;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo + 1) / 2);
      if (bk.b[mid] <= t) lo = mid; else hi = mid - 1;
    }
    return lo;
  }

  /* The first bucket whose next edge is >= a, when it starts <= z; else n. */
  function firstOverlap(bk, a, z) {
    let lo = 0, hi = bk.n;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (bk.b[mid + 1] >= a) hi = mid; else lo = mid + 1;
    }
    return lo < bk.n && z >= bk.b[lo] ? lo : bk.n;
  }

  function sumsValues(sums) { return sums.map((s) => s.value()); }
  function quotients(sums, div) {
    return sums.map((s, i) => {
      const q = div[i] > 0 ? s.value() / div[i] : NaN;
      return Number.isFinite(q) ? q : null;
    });
  }

  /* The requests series of a timeline, fed one request at a time (any
   * order: the sums are correctly rounded): {add(r), series()}. */
  function requestsSeries(bk) {
    const n = bk.n, arr = new Array(n).fill(0), done = new Array(n).fill(0), first = new Array(n).fill(0);
    const flight = Array.from({ length: n }, () => new FSum()), ttft = Array.from({ length: n }, () => new FSum());
    const nttft = new Array(n).fill(0);
    const add = (r) => {
      const a = r.start, z = r.end;
      if (typeof a !== 'number' || typeof z !== 'number') return;
      let i = findBucket(bk, a);
      if (i >= 0) {
        arr[i]++;
        if (typeof r.ttft_ms === 'number') { nttft[i]++; ttft[i].add(r.ttft_ms); }
      }
      if ((i = findBucket(bk, z)) >= 0) done[i]++;
      if (typeof r.first === 'number' && (i = findBucket(bk, r.first)) >= 0) first[i]++;
      for (let j = firstOverlap(bk, a, z); j < n && bk.b[j] <= z; j++) {
        const lo = a > bk.b[j] ? a : bk.b[j], hi = z < bk.b[j + 1] ? z : bk.b[j + 1];
        if (hi > lo) flight[j].add(hi - lo);
      }
    };
    const series = () => {
      const len = [];
      for (let i = 0; i < n; i++) len.push(bk.b[i + 1] - bk.b[i]);
      return { key: null, values: { arrivals: arr, completions: done, first_tokens: first, in_flight: quotients(flight, len),
        ttft_ms_mean: quotients(ttft, nttft) } };
    };
    return { add, series };
  }

  function nsysCells(n) { return { count: new Array(n).fill(0), active: Array.from({ length: n }, () => new FSum()) }; }
  function addRange(bk, c, s, e) {
    for (let j = firstOverlap(bk, s, e); j < bk.n && bk.b[j] <= e; j++) {
      const lo = s > bk.b[j] ? s : bk.b[j], hi = e < bk.b[j + 1] ? e : bk.b[j + 1];
      c.count[j]++;
      c.active[j].add(hi - lo);
    }
  }
  function cellsValues(c) { return { overlapping: c.count, active: sumsValues(c.active) }; }

  /* Keeps only the named keys of an item (fields), in the item's order. */
  function pick(item, fields) {
    if (!fields) return item;
    const o = {};
    for (const k of Object.keys(item)) if (fields.includes(k)) o[k] = item[k];
    return o;
  }

  return {
    FSum, fsum, stats, cmpVal, parseSort, checkGroup, sortObjects, orderNvtx, requestGroups, nvtxGroup, nvtxAdd, nvtxAddSums, nvtxItem,
    checkJoin, resolveJoin, notesFor, buckets, findBucket, firstOverlap, requestsSeries, nsysCells, addRange, cellsValues,
    SOURCES, listParam, pick, sortValue,
  };
})();
