/* query.js: the local query semantics (doc/query-semantics.md) re-implemented over the
 * core catalog and detail shards.  Owns parameter validation (same messages
 * as the CLI), the catalog list kinds, and the streaming nsys / cpu /
 * metrics kinds (same shapes, defaults, row order as the SQLite cache).
 * Shards stream one at a time through the shared ShardStore. */
'use strict';

const DSQuery = (() => {
  /* A real as dsight prints it (Python repr: 900.0, 0.1, 1e-09). */
  function realText(d) {
    if (Number.isInteger(d) && Math.abs(d) < 1e16) return d.toFixed(1);
    const [mant, ex] = d.toExponential().split('e');
    const e = Number(ex);
    if (e < -4 || e >= 16) return `${mant}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
    return String(d);
  }
  const MSG_RANGE = (dur) => `Require 0 <= start < end <= ${realText(dur)} (run duration in seconds from origin_ns)`;
  const MSG_PAGE = 'Require integer offset >= 0 and 0 <= limit <= 1000';
  const MSG_TTFT = 'min_ttft_ms must be finite and nonnegative';
  const ATTR_NSYS = 'Shared worker/rank activity; overlap does not establish request ownership.';
  const ATTR_CPU = 'Inclusive process samples; not per-request CPU time.';
  const ATTR_ITER = 'Shared batch observations with recorded timestamp precision and rank scope; not per-request execution time.';
  const MAX_POINTS = 1000;

  class UsageError extends Error {
    constructor(msg) { super(msg); this.name = 'UsageError'; }
  }

  function given(v) { return v !== undefined && v !== null; }

  function typed(p, key, kind) {
    const v = p[key];
    if (!given(v)) return null;
    const ok = kind === 'integer' ? Number.isInteger(v)
      : kind === 'number' ? typeof v === 'number'
        : kind === 'string' ? typeof v === 'string'
          : typeof v === 'boolean';
    if (!ok) throw new UsageError(`${key} must be ${kind === 'integer' ? 'an' : 'a'} ${kind} or null`);
    return v;
  }

  /* Validates in doc/query-semantics.md order; returns normalized parameters. */
  function validate(cat, params, keys) {
    const p = params || {};
    if (typeof p !== 'object') throw new UsageError('parameters must be an object');
    const out = {};
    const from = typed(p, 'from', 'number');
    const to = typed(p, 'to', 'number');
    const offset = typed(p, 'offset', 'integer');
    const limit = typed(p, 'limit', 'integer');
    for (const [k, kind] of Object.entries(keys || {})) out[k] = typed(p, k, kind);
    const dur = cat.meta.duration;
    out.from = from === null ? 0 : from;
    out.to = to === null ? dur : to;
    if (!(Number.isFinite(out.from) && Number.isFinite(out.to) && out.from >= 0 && out.from < out.to && out.to <= dur))
      throw new UsageError(MSG_RANGE(dur));
    out.offset = offset === null ? 0 : offset;
    out.limit = limit === null ? 100 : limit;
    if (!(out.offset >= 0 && out.limit >= 0 && out.limit <= 1000)) throw new UsageError(MSG_PAGE);
    if ('minTTFT' in out) {
      if (out.minTTFT === null) out.minTTFT = 0;
      if (!(Number.isFinite(out.minTTFT) && out.minTTFT >= 0)) throw new UsageError(MSG_TTFT);
    }
    if (out.worker === '') out.worker = null;
    return out;
  }

  function page(total, items, v, extras) {
    return Object.assign({ total, items, offset: v.offset, limit: v.limit, range: [v.from, v.to] }, extras || {});
  }

  function slicePage(all, v) { return all.slice(v.offset, v.offset + v.limit); }

  const lower = (s) => String(s).toLowerCase();

  /* Code-point order (JS < compares UTF-16 code units). */
  function cmpCodePoint(a, b) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      const x = a.charCodeAt(i), y = b.charCodeAt(i);
      if (x === y) continue;
      const xs = x >= 0xd800 && x <= 0xdfff, ys = y >= 0xd800 && y <= 0xdfff;
      if (xs === ys) return x - y;
      return xs ? 1 : -1;
    }
    return a.length - b.length;
  }

  function overlaps(desc, from, to) { return desc.bounds[0] <= to && desc.bounds[3] >= from; }

  function without(obj, keys) {
    const o = {};
    for (const k of Object.keys(obj)) if (!keys.includes(k)) o[k] = obj[k];
    return o;
  }

  /* ---- catalog kinds ---- */

  function selectProfiles(cat, v) {
    return cat.profiles.filter((p) => (!given(v.worker) || p.worker === v.worker) &&
      (!given(v.rank) || p.rank === v.rank) && (!given(v.profile) || p.id === v.profile));
  }

  function profileItem(p) {
    const o = without(p, ['events', 'names', 'cpu', 'event_chunks', 'event_density', 'event_count', 'nvtx_summary',
      'gpu_names', 'gpu_chunks', 'gpu_summary']);
    o.event_count = p.event_count !== undefined ? p.event_count : (p.events || []).length;
    o.cpu_samples = p.cpu ? (p.cpu.sample_count !== undefined ? p.cpu.sample_count : (p.cpu.samples || []).length) : 0;
    return o;
  }

  function listProfiles(cat) { return cat.profiles.map(profileItem); }

  function queryProfiles(cat, params) {
    const v = validate(cat, params, { worker: 'string', rank: 'integer', profile: 'integer' });
    const all = selectProfiles(cat, v);
    return page(all.length, slicePage(all, v).map(profileItem), v);
  }

  /* Filters given as lists (any of them match): {key: list}, and the
   * parameters with each list replaced by its only value or removed. */
  function lists(params, keys) {
    const P = params || {}, out = {};
    let rest = P;
    for (const k of keys) {
      if (!Array.isArray(P[k])) continue;
      if (!P[k].length) throw new UsageError(`${k} must not be an empty list`);
      if (P[k].some((w) => typeof w !== 'string' || w === '')) throw new UsageError(`${k} values must not be empty`);
      out[k] = P[k].slice();
      rest = Object.assign({}, rest, { [k]: P[k].length === 1 ? P[k][0] : undefined });
    }
    return [out, rest];
  }

  function requestMatches(r, v, needle) {
    if (!(r.start <= v.to && r.end >= v.from)) return false;
    if (given(v.session) && r.session !== v.session) return false;
    if (given(v.agent) && r.agent !== v.agent) return false;
    if (v.sessions && !v.sessions.includes(r.session)) return false;
    if (v.agents && !v.agents.includes(r.agent)) return false;
    if (v.workers && !(r.workers || []).some((w) => v.workers.includes(w))) return false;
    if (given(v.worker) && !(r.workers || []).includes(v.worker)) return false;
    if ((r.ttft_ms || 0) < v.minTTFT) return false;
    if (needle !== null) {
      const hay = [r.id, r.session, r.agent, r.conversation, ...(r.server_ids || []), ...(r.workers || [])];
      if (!hay.some((h) => typeof h === 'string' && lower(h).includes(needle))) return false;
    }
    return true;
  }

  function requestItem(r) {
    const o = without(r, ['spans', 'lifecycle']);
    o.span_count = (r.spans || []).length;
    return o;
  }

  /* The client requests (the one accessor: catalog shards may make this
   * asynchronous later). */
  function requestsOf(cat) { return cat.requests; }
  function findRequest(cat, id) { return requestsOf(cat).find((x) => x.id === id) || null; }

  /* A parsed, validated request query: {v, keys, groupBy, match(r)}. */
  function requestPlan(cat, params0) {
    const A = DSAnalysis;
    const [ls, params] = lists(params0, ['session', 'agent', 'worker']);
    const v = validate(cat, params, { session: 'string', agent: 'string', worker: 'string', minTTFT: 'number', search: 'string' });
    if (ls.session) v.sessions = ls.session;
    if (ls.agent) v.agents = ls.agent;
    if (ls.worker) v.workers = ls.worker;
    const keys = A.parseSort('requests', (params || {}).sort, given((params || {}).groupBy));
    const groupBy = A.checkGroup('requests', (params || {}).groupBy);
    const needle = given(v.search) ? lower(v.search) : null;
    return { v, keys, groupBy, match: (r) => requestMatches(r, v, needle) };
  }

  /* The answer of a plan from the matching requests in catalog order
   * (ungrouped: or the first offset+limit of them in sort order with
   * sorted = true and the number of matches in total). */
  function requestAnswer(plan, all, total, sorted) {
    const { v, keys, groupBy } = plan;
    if (groupBy !== null) {
      const groups = DSAnalysis.requestGroups(all, groupBy, keys);
      return Object.assign({ total: all.length, groups: groups.length, items: slicePage(groups, v), offset: v.offset, limit: v.limit,
        range: [v.from, v.to], group_by: groupBy });
    }
    const list = sorted ? all : DSAnalysis.sortObjects('requests', keys, all);
    return page(total === undefined ? all.length : total, slicePage(list, v).map(requestItem), v);
  }

  function queryRequests(cat, params0) {
    const plan = requestPlan(cat, params0);
    return requestAnswer(plan, requestsOf(cat).filter(plan.match));
  }

  function listSessions(cat, params) {
    const v = validate(cat, params, { session: 'string', agent: 'string' });
    const all = cat.sessions.filter((s) => s.start <= v.to && s.end >= v.from &&
      (!given(v.agent) || (s.agents || []).includes(v.agent)) && (!given(v.session) || s.id === v.session));
    return page(all.length, slicePage(sorted('sessions', params, all), v), v);
  }

  /* The rows in the order of params.sort (ties keep the default order). */
  function sorted(kind, params, all) {
    return DSAnalysis.sortObjects(kind, DSAnalysis.parseSort(kind, (params || {}).sort, false), all);
  }

  function queryIterations(cat, params) {
    const v = validate(cat, params, { worker: 'string', rank: 'integer' });
    const rows = (cat.iterations || []).filter((r) => (!given(v.worker) || r.worker === v.worker) &&
      (!given(v.rank) || ('rank_kind' in r ? r.rank : r.global_rank) === v.rank));
    const unaligned = rows.filter((r) => r.start === null).length;
    const all = rows.filter((r) => r.start !== null && r.start <= v.to && (r.end === null ? r.start : r.end) >= v.from);
    return page(all.length, slicePage(sorted('iterations', params, all), v), v, { unaligned_rows: unaligned, attribution: ATTR_ITER });
  }

  function queryServerSpans(cat, params) {
    const v = validate(cat, params, {});
    const all = (cat.server_spans || []).filter((s) => s.start <= v.to && s.end >= v.from);
    return page(all.length, slicePage(sorted('server_spans', params, all), v), v);
  }

  function getRequest(cat, id) {
    const r = cat.requests.find((x) => x.id === id);
    if (!r) throw new UsageError(`Unknown client request: ${id}`);
    return r;
  }

  function listMetricFamilies(cat) {
    if (cat.metric_catalog && cat.metric_catalog.length) return cat.metric_catalog;
    const counts = new Map();
    for (const s of cat.metrics) counts.set(s.name, (counts.get(s.name) || 0) + 1);
    return [...counts.keys()].sort(cmpCodePoint).map((name) => ({ name, series_count: counts.get(name) }));
  }

  function rankText(r) { return r === null || r === undefined ? 'None' : String(r); }

  function selectSeries(cat, v) {
    return cat.metrics.filter((s) => (!given(v.worker) || s.worker === v.worker) &&
      (!given(v.name) || s.name === v.name) && (!given(v.rank) || rankText(s.rank) === rankText(v.rank)));
  }

  function listMetricSeries(cat, params) {
    const p = params || {};
    const v = { worker: typed(p, 'worker', 'string'), name: typed(p, 'name', 'string'), rank: typed(p, 'rank', 'integer') };
    if (v.worker === '') v.worker = null;
    return selectSeries(cat, v).map((s) => without(s, ['points', 'chunks', 'summary_chunks', 'fine_group']));
  }

  /* ---- shard-backed kinds ---- */

  /* The rows of every descriptor overlapping [from, to], shard by shard in
   * order, with up to three fetches ahead so decoding overlaps transfer.
   * The shared cache stays within its budget; nothing else is retained. */
  async function* stream(store, descs, from, to, signal) {
    const todo = (descs || []).filter((d) => overlaps(d, from, to));
    const ahead = [];
    let next = 0;
    const fill = () => {
      while (ahead.length < 3 && next < todo.length) {
        const p = store.get(todo[next++], signal);
        p.catch(() => {});
        ahead.push(p);
      }
    };
    fill();
    while (ahead.length) {
      const rows = await ahead.shift();
      fill();
      yield rows;
    }
  }

  /* Bounded max-heap keeping the K smallest rows by cmp. */
  class TopK {
    constructor(k, cmp) { this.k = k; this.cmp = cmp; this.h = []; }
    push(x) {
      const h = this.h, cmp = this.cmp;
      if (this.k <= 0) return;
      if (h.length < this.k) {
        h.push(x);
        let i = h.length - 1;
        while (i > 0) {
          const p = (i - 1) >> 1;
          if (cmp(h[i], h[p]) <= 0) break;
          [h[i], h[p]] = [h[p], h[i]]; i = p;
        }
      } else if (cmp(x, h[0]) < 0) {
        h[0] = x;
        let i = 0;
        for (;;) {
          const l = 2 * i + 1, r = l + 1;
          let m = i;
          if (l < h.length && cmp(h[l], h[m]) > 0) m = l;
          if (r < h.length && cmp(h[r], h[m]) > 0) m = r;
          if (m === i) break;
          [h[i], h[m]] = [h[m], h[i]]; i = m;
        }
      }
    }
    sorted() { return this.h.slice().sort(this.cmp); }
  }

  function tidParts(g) {
    if (typeof g !== 'string' || !/^-?[0-9]+$/.test(g)) return [null, null];
    const n = BigInt(g);
    return [Number((n >> 24n) & 0xffffffn), Number(n & 0xffffffn)];
  }

  /* The item of row r of profile p; with depth (nvtx.depth) as the CLI
   * gives it when depth is a number. */
  function nsysItem(p, r, depth) {
    const [pid, tid] = tidParts(r[3]);
    const defs = p.name_definitions || [];
    const o = { profile: p.id, worker: p.worker, rank: p.rank, start: r[0], end: r[1], name: p.names[r[2]], global_tid: r[3], pid, tid };
    if (typeof depth === 'number') o.depth = depth;
    o.definition = defs.length ? (defs[r[2]] === undefined ? null : defs[r[2]]) : null;
    o.rowid = r[4];
    o.evidence_source = p.evidence_source;
    return o;
  }

  /* nvtx.depth of the page's rows ([p, r] pairs): the ranges of the same
   * profile and thread containing each (a.start <= r.start, a.end >=
   * r.end; of two identical ranges the earlier in stored order contains
   * the later).  A container overlaps the range it contains, so only the
   * shards overlapping the page's own ranges are read (through the shared
   * cache), in stored order.  Returns the depths in page order. */
  async function nsysDepths(store, page, signal) {
    const depth = page.map(() => 0), byProf = new Map();
    page.forEach(([p, r], k) => {
      if (typeof r[0] !== 'number' || typeof r[1] !== 'number') return;
      if (!byProf.has(p)) byProf.set(p, []);
      byProf.get(p).push(k);
    });
    for (const [p, ks] of byProf) {
      ks.sort((a, b) => page[a][1][0] - page[b][1][0]);
      const starts = ks.map((k) => page[k][1][0]), seen = new Uint8Array(ks.length);
      let lo = Infinity, hi = -Infinity;
      for (const k of ks) { lo = Math.min(lo, page[k][1][0]); hi = Math.max(hi, page[k][1][1]); }
      for await (const rows of stream(store, p.event_chunks, lo, hi, signal)) {
        for (const a of rows) {
          const as = a[0], ae = a[1];
          if (typeof as !== 'number' || typeof ae !== 'number' || as > hi || ae < lo) continue;
          let i = 0, j = starts.length;
          while (i < j) { const m = (i + j) >> 1; if (starts[m] < as) i = m + 1; else j = m; }
          for (; i < starts.length && starts[i] <= ae; i++) {
            const x = page[ks[i]][1];
            if (x[1] > ae || x[3] !== a[3]) continue;
            if (x[0] === as && x[1] === ae) {
              /* identical: the row itself, or an earlier one contains it */
              if (x[4] === a[4] && x[2] === a[2]) { seen[i] = 1; continue; }
              if (seen[i]) continue;
            }
            depth[ks[i]]++;
          }
        }
      }
    }
    return depth;
  }

  const nsysCmp = (a, b) => (a[1][0] - b[1][0]) || (a[0].id - b[0].id) || (a[1][4] - b[1][4]);

  function nsysKey(key, p, r) {
    switch (key) {
      case 'start': return r[0];
      case 'end': return r[1];
      case 'duration': return r[1] - r[0];
      case 'profile': return p.id;
      default: { const n = p.names[r[2]]; return typeof n === 'string' ? n : null; }
    }
  }

  /* The join and the window of an nsys-like query (validated in the
   * engine's order); v gains from/to/workers when joined. */
  function joinOf(cat, params, v) {
    const j = DSAnalysis.checkJoin(params || {});
    return j ? DSAnalysis.resolveJoin(cat, j, v, (id) => findRequest(cat, id)) : null;
  }

  function selectJoined(cat, v) {
    const profs = selectProfiles(cat, v);
    return v.workers ? profs.filter((p) => v.workers.includes(p.worker)) : profs;
  }

  /* Streams the matching rows of the selected profiles: onRow(p, r). */
  /* The build's per-name sums of profile p (exact partials) answer a
   * `groupBy: name` over the whole run (doc/report-files.md "NVTX summary
   * shards"): its descriptors, else null. */
  function nameSums(cat, p, from, to) {
    const ns = p.nvtx_summary;
    return ns && ns.names && from === 0 && to === cat.meta.duration ? ns.names : null;
  }

  /* onName(p, [name, count, max, parts, clippedParts]) takes the summary
   * rows of the profiles nameSums covers (when given and there is no
   * request join); onRow(p, row) the scanned ranges of the others. */
  async function scanNsys(cat, store, v, signal, onRow, onName) {
    const profs = selectJoined(cat, v);
    const needle = given(v.name) ? lower(v.name) : null;
    if (onName && needle === null) {
      /* the build's name sums are a few small shards per profile: fetch
       * them all at once instead of one profile after the other */
      for (const p of profs) {
        const sums = nameSums(cat, p, v.from, v.to);
        if (sums) for (const d of sums) if (overlaps(d, v.from, v.to)) store.get(d, signal).catch(() => {});
      }
    }
    for (const p of profs) {
      const mask = p.names.map((n) => needle === null || (typeof n === 'string' && lower(n).includes(needle)));
      if (!mask.some(Boolean)) continue;
      const sums = onName ? nameSums(cat, p, v.from, v.to) : null;
      if (sums) {
        for await (const rows of stream(store, sums, v.from, v.to, signal))
          for (const r of rows) if (mask[r[0]]) onName(p, r);
        continue;
      }
      for await (const rows of stream(store, p.event_chunks, v.from, v.to, signal)) {
        for (let i = 0; i < rows.length; i++) {
          const r = rows[i];
          if (r[0] <= v.to && r[1] >= v.from && mask[r[2]]) onRow(p, r);
        }
      }
    }
    return profs;
  }

  function nsysTail(cat, v, join, total, extras) {
    const o = {};
    if (join) o.request = join;
    Object.assign(o, extras);
    if (!total) {
      const notes = DSAnalysis.notesFor(cat, 'nsys', v, join, selectJoined(cat, v));
      if (notes.length) o.notes = notes;
    }
    return o;
  }

  async function queryNsys(cat, store, params0, signal) {
    const A = DSAnalysis, P = params0 || {};
    const [ls, params] = lists(params0, ['worker']);
    const v = validate(cat, params, { profile: 'integer', worker: 'string', rank: 'integer', name: 'string' });
    if (ls.worker) v.workers = ls.worker;
    const join = joinOf(cat, P, v);
    const keys = A.parseSort('nsys', P.sort, given(P.groupBy));
    const groupBy = A.checkGroup('nsys', P.groupBy);
    const partialOf = (profs) => profs.some((p) => p.truncated === true);
    if (groupBy !== null) {
      const groups = new Map();
      let total = 0;
      const keyOf = groupBy === 'name' ? (p, r) => { const n = p.names[r[2]]; return typeof n === 'string' ? 's' + n : 'n'; }
        : groupBy === 'tid' ? (p, r) => 's' + r[3] : groupBy === 'profile' ? (p) => 'i' + p.id
          : (p) => (typeof p.worker === 'string' ? 's' + p.worker : 'n');
      const group = (p, k) => {
        let g = groups.get(k);
        if (!g) { g = A.nvtxGroup(k === 'n' ? null : k[0] === 'i' ? p.id : k.slice(1)); groups.set(k, g); }
        return g;
      };
      const profs = await scanNsys(cat, store, v, signal, (p, r) => {
        A.nvtxAdd(group(p, keyOf(p, r)), r[0], r[1], v.from, v.to);
        total++;
      }, groupBy === 'name' && !join ? (p, r) => {
        A.nvtxAddSums(group(p, keyOf(p, [0, 0, r[0]])), r[1], r[2], r[3], r[4]);
        total += r[1];
      } : null);
      const items = A.orderNvtx([...groups.values()].map(A.nvtxItem), keys);
      return Object.assign({ total, groups: items.length, items: slicePage(items, v), offset: v.offset, limit: v.limit, range: [v.from, v.to] },
        nsysTail(cat, v, join, total, { group_by: groupBy, attribution: ATTR_NSYS, partial: partialOf(profs) }));
    }
    const cmp = keys.length ? (a, b) => {
      for (const k of keys) {
        const c = A.cmpVal(nsysKey(k.name, a[0], a[1]), nsysKey(k.name, b[0], b[1]), k.desc);
        if (c) return c;
      }
      return nsysCmp(a, b);
    } : nsysCmp;
    const top = new TopK(v.offset + v.limit, cmp);
    let total = 0;
    const profs = await scanNsys(cat, store, v, signal, (p, r) => { total++; top.push([p, r]); });
    const pageRows = top.sorted().slice(v.offset), depths = await nsysDepths(store, pageRows, signal);
    const items = pageRows.map(([p, r], k) => nsysItem(p, r, depths[k]));
    return Object.assign(page(total, items, v), nsysTail(cat, v, join, total, { attribution: ATTR_NSYS, partial: partialOf(profs) }));
  }

  async function queryCpu(cat, store, params, signal) {
    const v = validate(cat, params, { profile: 'integer', worker: 'string', rank: 'integer' });
    const profs = selectProfiles(cat, v).filter((p) => p.cpu);
    const counts = new Map();
    let totalSamples = 0;
    if (v.from === 0 && v.to === cat.meta.duration) /* every profile's stack counts at once */
      for (const p of profs) for (const d of p.cpu.stack_sums || []) store.get(d, signal).catch(() => {});
    for (const p of profs) {
      const names = p.cpu.names || [], stacks = p.cpu.stacks || [];
      const stackSyms = stacks.map((st) => [...new Set(st.map((i) => names[i]))]);
      if (p.cpu.stack_sums && v.from === 0 && v.to === cat.meta.duration) {
        /* whole run: the build's samples per stack (doc/report-files.md) */
        for await (const rows of stream(store, p.cpu.stack_sums, v.from, v.to, signal)) {
          for (const [st, n] of rows) {
            totalSamples += n;
            for (const s of stackSyms[st] || []) counts.set(s, (counts.get(s) || 0) + n);
          }
        }
        continue;
      }
      for await (const rows of stream(store, p.cpu.chunks, v.from, v.to, signal)) {
        for (let i = 0; i < rows.length; i++) {
          const t = rows[i][0];
          if (!(v.from <= t && t <= v.to)) continue;
          totalSamples++;
          for (const s of stackSyms[rows[i][2]] || []) counts.set(s, (counts.get(s) || 0) + 1);
        }
      }
    }
    const all = [...counts.entries()].sort((a, b) => (b[1] - a[1]) || cmpCodePoint(a[0], b[0]));
    const items = slicePage(all, v).map(([symbol, samples]) => ({ symbol, samples, fraction: samples / totalSamples }));
    return page(all.length, items, v, { total_samples: totalSamples, attribution: ATTR_CPU });
  }

  /* All points of the series at the latest timestamp strictly before t. */
  async function carried(s, store, t, signal) {
    const cands = (s.chunks || []).filter((d) => d.bounds[0] < t);
    if (!cands.length) return [];
    let best = -Infinity;
    const order = cands.slice().sort((a, b) => Math.min(b.bounds[3], t) - Math.min(a.bounds[3], t));
    for (const d of order) {
      if (d.bounds[3] < best) break;
      const rows = await store.get(d, signal);
      for (const r of rows) if (r[0] < t && r[0] > best) best = r[0];
    }
    if (best === -Infinity) return [];
    const out = [];
    for (const d of s.chunks) {
      if (!(d.bounds[0] <= best && d.bounds[3] >= best)) continue;
      const rows = await store.get(d, signal);
      for (const r of rows) if (r[0] === best) out.push(r);
    }
    return out;
  }

  async function seriesItem(s, store, v, withPoints, signal) {
    const item = without(s, ['points', 'chunks', 'summary_chunks', 'fine_group']);
    let n = 0, samples = 0, sum = 0, min = null, max = null, last = null;
    const pts = [];
    for await (const rows of stream(store, s.chunks, v.from, v.to, signal)) {
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i], t = r[0];
        if (!(v.from <= t && t <= v.to)) continue;
        n++;
        if (withPoints && pts.length < MAX_POINTS) pts.push(r);
        const x = r[1];
        if (x === null) continue;
        samples++;
        sum += x;
        if (min === null || x < min) min = x;
        if (max === null || x > max) max = x;
        last = x;
      }
    }
    item.samples = samples;
    item.min = min;
    item.max = max;
    item.mean = samples ? sum / samples : null;
    item.last = last;
    if (s.temporal === 'setting') item.carried_setting = await carried(s, store, v.from, signal);
    if (withPoints) {
      item.points = pts;
      item.points_total = n;
      item.points_truncated = n > pts.length;
    }
    return item;
  }

  async function queryMetrics(cat, store, params, signal) {
    const v = validate(cat, params, { worker: 'string', rank: 'integer', name: 'string', points: 'boolean' });
    const all = selectSeries(cat, v);
    const items = [];
    for (const s of slicePage(all, v)) items.push(await seriesItem(s, store, v, v.points === true, signal));
    return page(all.length, items, v);
  }

  return {
    UsageError, validate, cmpCodePoint, overlaps, nameSums, listProfiles, queryProfiles, queryRequests, listSessions,
    queryIterations, queryServerSpans, getRequest, listMetricFamilies, listMetricSeries, queryNsys, queryCpu,
    queryMetrics, rankText, nsysItem, carried, stream, MSG_RANGE, requestsOf, findRequest, joinOf, selectJoined, scanNsys,
    selectProfiles, selectSeries, given, slicePage, lower, lists, requestMatches, ATTR_NSYS, requestPlan, requestAnswer, TopK, tidParts,
  };
})();
