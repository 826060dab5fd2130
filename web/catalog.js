/* catalog.js: the catalog collections of a report whose requests live in
 * catalog shards (doc/report-files.md "Catalog shards").  Owns the index
 * of the core catalog (`catalog_shards`), the id lookup (any request or
 * session in at most two fetches), loading session shards into the page's
 * working set (cat.requests / cat.sessions hold the loaded ones), and the
 * request calls of API 3.2 over the shards with exactly the local answers:
 * each call streams the candidate shards through the shared cache, keeps
 * only what its answer needs and ends in the same query.js code as an
 * embedded catalog.  The index's descriptor lists (shards, lookup,
 * summaries, time_summaries, search) are decoded after the page is ready, from their own
 * element: every call that reads them awaits indexed() first. */
'use strict';

const DSCatalog = (() => {
  const REQ = 0, SESS = 1, SPANS = 2, ITERS = 3;
  const COLLS = ['requests', 'sessions', 'server_spans', 'iterations'];
  const AHEAD = 3;
  /* the most requests whose summaries the requests table keeps in memory */
  const TABLE_MAX = 250000;
  const LISTS = ['shards', 'lookup', 'summaries', 'time_summaries', 'search'];

  /* The bounds that place collection c's elements of a shard in time: a
   * session shard's `session_bounds` for sessions (its requests run long
   * after the sessions start), else the shard's `bounds`. */
  function boundsOf(c) {
    return c === SESS ? (d) => ('session_bounds' in d ? d.session_bounds : d.bounds) : (d) => d.bounds;
  }

  /* Splits the shards (indexes into D) of collection name: [those to
   * read, the count of the elements counted apart in the others]; a shard
   * whose elements are all counted apart (`unaligned`: iterations without
   * start) is counted from its descriptor. */
  function skipUnaligned(D, idxs, name) {
    let apart = 0;
    const read = idxs.filter((i) => {
      const d = D[i];
      if (!(Number.isInteger(d.unaligned) && d.unaligned > 0 && d.unaligned === d[name])) return true;
      apart += d.unaligned;
      return false;
    });
    return [read, apart];
  }

  class Catalog {
    /* cat: the core catalog (its empty collections receive loaded shards);
     * store: the shared DSData.ShardStore. */
    constructor(cat, store) {
      this.cat = cat;
      this.store = store;
      this.ix = cat.catalog_shards || null;
      this.loaded = new Set();  /* shard indexes merged into cat */
      this.ids = new Set(cat.requests.map((r) => r.id)); /* request ids in cat.requests */
      this.pendingIx = null;
    }

    /* True when the index's descriptor lists are in this.ix (or there is
     * no index). */
    get indexReady() { return !this.ix || Array.isArray(this.ix.shards); }

    /* Resolves once the descriptor lists are in this.ix: decoded once,
     * from the page's #dsight-catalog-index element; rejects, every time,
     * with the reason when that element cannot be read. */
    indexed() {
      if (this.indexReady) return Promise.resolve();
      if (!this.pendingIx) {
        this.pendingIx = DSData.loadCatalogIndex(this.store.doc).then((l) => {
          for (const k of LISTS) if (k in l) this.ix[k] = l[k];
        });
      }
      return this.pendingIx;
    }

    /* Names the catalog shards in shard error messages (once indexed). */
    nameShards(owners) {
      if (!this.ix || !this.indexReady) return;
      this.ix.shards.forEach((d, i) => owners.set(d.sha256, `Catalog shard ${i} (${d.kind})`));
      this.ix.lookup.forEach((d, i) => owners.set(d.sha256, `Id lookup shard ${i}`));
      (this.ix.summaries || []).forEach((d, i) => owners.set(d.sha256, `Request summary shard ${i}`));
      (this.ix.time_summaries || []).forEach((d, i) => owners.set(d.sha256, `Request time summary shard ${i}`));
      (this.ix.search || []).forEach((d, i) => owners.set(d.sha256, `Search-text shard ${i}`));
    }

    get sharded() { return this.ix !== null; }

    counts() {
      const c = this.cat;
      if (this.ix) return this.ix.counts;
      return { requests: c.requests.length, sessions: c.sessions.length, server_spans: (c.server_spans || []).length,
        iterations: (c.iterations || []).length };
    }

    /* The top list (key 'ttft_ms' or 'duration') as objects. */
    top(key) {
      const f = this.ix.top_fields;
      return (key === 'duration' ? this.ix.top_duration : this.ix.top_ttft).map((row) => {
        const o = {};
        f.forEach((k, i) => { o[k] = row[i]; });
        return o;
      });
    }

    /* The indexes of the shards of kind overlapping [from, to] (all of
     * them without from) by bounds(d) (default: all their elements'
     * bounds); only once indexed. */
    shardsOf(kind, from, to, bounds) {
      const out = [], B = bounds || ((d) => d.bounds);
      this.ix.shards.forEach((d, i) => {
        const b = B(d);
        if (d.kind === kind && (from === undefined || !b || (b[0] <= to && b[3] >= from))) out.push(i);
      });
      return out;
    }

    /* [[id, kind, shard], ...] of the id (kind 0 request, 1 session). */
    async lookup(id, signal) {
      await this.indexed();
      const L = this.ix.lookup, cmp = DSQuery.cmpCodePoint;
      if (typeof id !== 'string') return [];
      let lo = 0, hi = L.length - 1, at = -1;
      while (lo <= hi) {
        const m = (lo + hi) >> 1;
        if (cmp(L[m].first, id) <= 0) { at = m; lo = m + 1; } else hi = m - 1;
      }
      if (at < 0) return [];
      const rows = await this.store.get(L[at], signal);
      lo = 0; hi = rows.length;
      while (lo < hi) {
        const m = (lo + hi) >> 1;
        if (cmp(rows[m][0], id) < 0) lo = m + 1; else hi = m;
      }
      const out = [];
      for (let i = lo; i < rows.length && rows[i][0] === id; i++) out.push(rows[i]);
      return out;
    }

    /* The element of collection c with this id (or null): two fetches. */
    async find(c, id, signal) {
      const hit = (await this.lookup(id, signal)).find((r) => r[1] === c);
      if (!hit) return null;
      const rows = await this.store.get(this.ix.shards[hit[2]], signal);
      const row = rows.find((r) => r[0] === c && r[2] && r[2].id === id);
      return row ? row[2] : null;
    }

    /* The shards holding these sessions' requests, or null when one of
     * them is not a session (its requests may be anywhere). */
    async sessionShards(ids, signal) {
      const out = new Set();
      for (const id of ids) {
        const hit = (await this.lookup(id, signal)).find((r) => r[1] === SESS);
        if (!hit) return null;
        out.add(hit[2]);
      }
      return out;
    }

    /* The session shards (indexes) that may hold requests matching v:
     * those overlapping [v.from, v.to], only the given sessions' when v
     * names sessions. */
    async requestShards(v, signal) {
      await this.indexed();
      const idxs = this.shardsOf('sessions', v.from, v.to);
      const sess = v.sessions || (DSQuery.given(v.session) ? [v.session] : null);
      const only = sess ? await this.sessionShards(sess, signal) : null;
      return only ? idxs.filter((i) => only.has(i)) : idxs;
    }

    /* Calls fn(element, ordinal) for every element of collection c in the
     * shards (indexes), a few fetches ahead; progress(done, total). */
    scan(idxs, c, fn, signal, progress) {
      return this.stream(idxs.map((i) => this.ix.shards[i]), (rows) => {
        for (const r of rows) if (r[0] === c) fn(r[2], r[1]);
      }, signal, progress);
    }

    /* Calls each(rows, k) for the rows of every descriptor in turn (or,
     * with load, for what load(desc) resolves to). */
    async stream(descs, each, signal, progress, load) {
      const ahead = [];
      let next = 0, done = 0;
      const fill = () => {
        while (ahead.length < AHEAD && next < descs.length) {
          const p = load ? load(descs[next++]) : this.store.get(descs[next++], signal);
          p.catch(() => {});
          ahead.push(p);
        }
      };
      fill();
      if (progress) progress(0, descs.length);
      while (ahead.length) {
        const rows = await ahead.shift();
        fill();
        each(rows, done++);
        if (progress) progress(done, descs.length);
      }
    }

    /* Merges a session shard into the working set (cat.requests and
     * cat.sessions, for the lanes, the tree and the inspector). */
    async load(i, signal) {
      if (this.loaded.has(i)) return false;
      await this.indexed();
      const rows = await this.store.get(this.ix.shards[i], signal);
      if (this.loaded.has(i)) return false;
      this.loaded.add(i);
      for (const r of rows) {
        if (r[0] === REQ && r[2] && !this.ids.has(r[2].id)) { this.ids.add(r[2].id); this.cat.requests.push(r[2]); }
        else if (r[0] === SESS) this.cat.sessions.push(r[2]);
      }
      return true;
    }

    /* Loads the shard of request id into the working set; the request or
     * null. */
    async loadRequest(id, signal) {
      const hit = (await this.lookup(id, signal)).find((r) => r[1] === REQ);
      if (!hit) return null;
      await this.load(hit[2], signal);
      return DSQuery.findRequest(this.cat, id);
    }

    /* The requests of the catalog shards in want whose search text holds
     * needle (lowercased, not empty), from the search-text shards: a Map
     * catalog shard -> Set of request positions in it (its k-th request),
     * or -> null for a shard without search text (its requests are tested
     * one by one).  progress(done, total) per search-text shard. */
    async searchHits(needle, want, signal, progress) {
      const hits = new Map();
      const descs = this.ix.search.filter((d) => {
        const [a, b] = d.catalog_shards;
        for (const i of want) if (i >= a && i <= b) return true;
        return false;
      });
      await this.stream(descs, (rows) => {
        for (const [shard, text, us, rs, gs] of rows) {
          if (!want.has(shard)) continue;
          if (text === null) { hits.set(shard, null); continue; }
          /* no field holds a separator: a needle holding one matches
           * nothing, and a hit of any other lies inside one field */
          if (needle.includes(us) || needle.includes(rs) || needle.includes(gs)) continue;
          let p = text.indexOf(needle);
          if (p < 0) continue;
          /* groups (gs between them): the fields all their requests hold,
           * then each request (rs before it) with its other fields; k
           * requests before the group [g0, gEnd), j the index in it of the
           * request whose rs is at `at` */
          const got = new Set();
          const endOf = (a) => { const e = text.indexOf(gs, a); return e < 0 ? text.length : e; };
          let k = 0, g0 = 0, gEnd = endOf(0), at = -1, j = -1;
          const pass = (lim) => {
            for (let q = text.indexOf(rs, at < 0 ? g0 : at + 1); q >= 0 && q < lim; q = text.indexOf(rs, q + 1)) { at = q; j++; }
          };
          while (p >= 0) {
            while (p > gEnd) { pass(gEnd); k += j + 1; g0 = gEnd + 1; gEnd = endOf(g0); at = -1; j = -1; }
            pass(p);
            let stop = gEnd;
            if (j < 0) { /* a shared field: every request of the group */
              pass(gEnd);
              for (let x = 0; x <= j; x++) got.add(k + x);
            } else {
              got.add(k + j);
              const q = text.indexOf(rs, p);
              if (q >= 0 && q < gEnd) stop = q;
            }
            p = stop < text.length ? text.indexOf(needle, stop + 1) : -1;
          }
          hits.set(shard, got);
        }
      }, signal, progress, (d) => {
        /* read past the cache: the text of every request would evict
         * everything else from it, and itself before the next search */
        const hit = this.store.peek(d);
        return hit ? Promise.resolve(hit) : this.store.text(d, signal).then((t) => this.store.rows(d, t));
      });
      return hits;
    }

    /* ---- API 3.2 over the shards (same answers as query.js) ---- */

    /* A catalog whose collection key holds list (the rest: the core). */
    view(key, list) { return Object.assign(Object.create(this.cat), { [key]: list }); }

    async queryRequests(params, opts) {
      const o = opts || {}, Q = DSQuery, A = DSAnalysis;
      /* once the table's summaries are in memory, a window and a sort
       * read only the page's catalog shards */
      if (this.tableDone) {
        const pg = await this.tableRequests(params, o.signal, true);
        if (pg) return pg;
      }
      const plan = Q.requestPlan(this.cat, params);
      await this.indexed();
      const v = plan.v;
      let total = 0;
      const grouped = plan.groupBy !== null, all = [];
      const keys = plan.keys;
      const sums = this.summarized(await this.requestShards(v, o.signal));
      /* summaries carry span_count instead of spans */
      const sv = (k, r) => (sums && k === 'span_count' ? r.span_count : A.sortValue('requests', k, r));
      const cmp = (a, b) => {
        for (let k = 0; k < keys.length; k++) {
          const c = A.cmpVal(a.v[k], b.v[k], keys[k].desc);
          if (c) return c;
        }
        return a.ord - b.ord;
      };
      const top = new Q.TopK(v.offset + v.limit, cmp);
      await this.eachMatch(plan, o, (r, ord, shard) => {
        total++;
        if (grouped) {
          const slim = Object.assign({}, r);
          delete slim.spans;
          delete slim.lifecycle;
          all.push([ord, slim]);
        } else top.push({ o: r, ord, shard, v: keys.map((k) => sv(k.name, r)) });
      });
      if (grouped) {
        all.sort((a, b) => a[0] - b[0]);
        return Q.requestAnswer(plan, all.map((x) => x[1]));
      }
      const best = top.sorted();
      if (sums) await this.fill(best.slice(v.offset, v.offset + v.limit), o.signal);
      return Q.requestAnswer(plan, best.map((x) => x.o), total, true);
    }

    /* The requests table's page ({total, items: summaries}) of a query
     * with only a window, a sort, offset and limit, from every request's
     * summary held in memory (read once, up to TABLE_MAX requests) and
     * one sorted order per sort key (made once): a click on a column or a
     * new window then reads no shard.  Same order and total as
     * queryRequests; the items are the summaries (no spans, lifecycle or
     * span_count: the table does not show them), or with full the
     * elements, read from the page's catalog shards (queryRequests' own
     * answer).  null when the query or the report does not fit
     * (queryRequests answers it then). */
    async tableRequests(params, signal, full) {
      const p = params || {};
      if (Object.keys(p).some((k) => !['from', 'to', 'sort', 'offset', 'limit'].includes(k) && p[k] !== undefined && p[k] !== null)) return null;
      const plan = DSQuery.requestPlan(this.cat, p);
      if (plan.groupBy !== null) return null;
      const t = await this.summaryTable(signal);
      if (!t) return null;
      const v = plan.v, want = v.offset + v.limit, order = this.orderOf(t, plan.keys), out = [];
      let total = 0;
      for (let k = 0; k < order.length; k++) {
        const i = order[k];
        if (!(t.start[i] <= v.to && t.end[i] >= v.from)) continue;
        if (total++ < want) out.push(i);
      }
      if (!full) return DSQuery.requestAnswer(plan, out.map((i) => t.rows[i]), total, true);
      const items = out.map((i) => ({ o: t.rows[i], ord: t.ord[i], shard: t.shard[i] }));
      await this.fill(items.slice(v.offset), signal);
      return DSQuery.requestAnswer(plan, items.map((x) => x.o), total, true);
    }

    /* Every request's summary in ordinal order ({rows, start, end}), read
     * once from the summary shards; null without summaries or above
     * TABLE_MAX requests.  Only once indexed. */
    summaryTable(signal) {
      if (this.table) return this.table;
      const F = this.ix && this.ix.summary_fields, S = this.ix && this.ix.summaries;
      if (!F || !S || !this.summarized(this.shardsOf('sessions')) || this.counts().requests > TABLE_MAX) return Promise.resolve(null);
      const job = (async () => {
        const byOrd = [];
        /* read past the shared cache: the table keeps what it needs */
        const load = (d) => { const hit = this.store.peek(d); return hit ? Promise.resolve(hit) : this.store.text(d, signal).then((x) => this.store.rows(d, x)); };
        await this.stream(S, (rows) => {
          for (const [shard, list] of rows) {
            for (const row of list) {
              const x = {};
              for (let j = 0; j < F.length; j++) if (row[j + 1] !== null) x[F[j]] = row[j + 1];
              byOrd.push([row[0], x, shard]);
            }
          }
        }, signal, null, load);
        byOrd.sort((a, b) => a[0] - b[0]);
        const n = byOrd.length, start = new Float64Array(n), end = new Float64Array(n), rows = new Array(n);
        const ord = new Int32Array(n), shard = new Int32Array(n);
        for (let i = 0; i < n; i++) {
          const x = byOrd[i][1];
          rows[i] = x;
          ord[i] = byOrd[i][0];
          shard[i] = byOrd[i][2];
          start[i] = typeof x.start === 'number' ? x.start : NaN;
          end[i] = typeof x.end === 'number' ? x.end : NaN;
        }
        this.tableDone = true;
        return { rows, start, end, ord, shard, orders: new Map(), ranks: new Map() };
      })();
      this.table = job;
      job.catch(() => { if (this.table === job) this.table = null; });
      return job;
    }

    /* Loads the summaries, then makes the orders of sorts (e.g. '-ttft_ms')
     * one per task, so that the table's first click on a column finds its
     * order made. */
    warmTable(sorts) {
      if (this.table || !this.indexReady) return;
      this.summaryTable().then((t) => {
        if (!t) return;
        const todo = sorts.slice();
        const next = () => {
          if (!todo.length) return;
          this.orderOf(t, DSQuery.requestPlan(this.cat, { sort: todo.shift() }).keys);
          setTimeout(next, 0);
        };
        setTimeout(next, 0);
      }, () => {});
    }

    /* The indexes of t's rows sorted by keys (ties: ordinal), made once
     * per sort: each key's values as numbers (strings by their code-point
     * rank), null as NaN (last in either direction, as DSAnalysis.cmpVal). */
    orderOf(t, keys) {
      const id = keys.map((k) => (k.desc ? '-' : '') + k.name).join(',');
      let o = t.orders.get(id);
      if (o) return o;
      const n = t.rows.length, ranks = keys.map((k) => this.rankOf(t, k.name)), sign = keys.map((k) => (k.desc ? -1 : 1));
      o = new Int32Array(n);
      for (let i = 0; i < n; i++) o[i] = i;
      if (keys.length === 1) {
        const r = ranks[0], sg = sign[0];
        o.sort((a, b) => {
          const x = r[a], y = r[b];
          if (x !== y) {
            if (x !== x) return 1;
            if (y !== y) return -1;
            return x < y ? -sg : sg;
          }
          return a - b;
        });
      } else if (keys.length) {
        o.sort((a, b) => {
          for (let k = 0; k < ranks.length; k++) {
            const x = ranks[k][a], y = ranks[k][b];
            if (x === y || (x !== x && y !== y)) continue;
            if (x !== x) return 1;
            if (y !== y) return -1;
            return x < y ? -sign[k] : sign[k];
          }
          return a - b;
        });
      }
      t.orders.set(id, o);
      return o;
    }

    /* Key name's values of t's rows as a Float64Array (a summary carries
     * span_count instead of spans): numbers as they are, strings by their
     * rank in code-point order (numbers before strings), null as NaN. */
    rankOf(t, name) {
      let r = t.ranks.get(name);
      if (r) return r;
      const A = DSAnalysis, n = t.rows.length, vals = new Array(n), strs = new Set();
      let maxNum = -Infinity;
      for (let i = 0; i < n; i++) {
        const x = t.rows[i], v = name === 'span_count' ? (typeof x.span_count === 'number' ? x.span_count : null) : A.sortValue('requests', name, x);
        vals[i] = v;
        if (typeof v === 'string') strs.add(v);
        else if (typeof v === 'number' && v > maxNum) maxNum = v;
      }
      /* without surrogates, UTF-16 order (the native sort's) is code-point order */
      const list = [...strs], plain = !list.some((x) => /[\ud800-\udfff]/.test(x));
      const rank = new Map((plain ? list.sort() : list.sort(DSQuery.cmpCodePoint)).map((x, k) => [x, k]));
      /* strings rank after every number */
      const base = strs.size ? (Number.isFinite(maxNum) ? maxNum : 0) + 1 : 0;
      r = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        const v = vals[i];
        r[i] = typeof v === 'number' ? v : typeof v === 'string' ? base + rank.get(v) : NaN;
      }
      t.ranks.set(name, r);
      return r;
    }

    /* True when the index has request summaries for every shard of idxs. */
    summarized(idxs) {
      const F = this.ix.summary_fields, S = this.ix.summaries;
      return !!(F && S && idxs.every((i) => Number.isInteger(this.ix.shards[i].summary)));
    }

    /* Streams the requests matching a Q.requestPlan: take(r, ordinal,
     * shard, pos) for each, in no set order; r is the request's summary
     * (the index's summary_fields) when summarized() holds for the shards
     * read, else its element.  opts: {signal, progress}; the index must
     * be decoded. */
    async eachMatch(plan, opts, keep) {
      const o = opts || {}, Q = DSQuery, v = plan.v;
      let idxs = await this.requestShards(v, o.signal);
      const F = this.ix.summary_fields, S = this.ix.summaries;
      const sums = this.summarized(idxs);
      /* a search reads the search-text shards first: only the catalog
       * shards holding matches are read, and in them only the requests
       * whose text matched (tested without the needle: the build's
       * lowercase decided, as in `dsight query`) */
      const needle = Q.given(v.search) ? Q.lower(v.search) : null;
      let hits = null, ptotal = 0;
      if (needle && this.ix.search) {
        /* progress: the search-text shards, then the shards of the matches */
        hits = await this.searchHits(needle, new Set(idxs), o.signal, (d, n) => {
          ptotal = n;
          if (o.progress) o.progress(d, n + 1);
        });
        idxs = idxs.filter((i) => hits.has(i));
      }
      const progress = o.progress && hits ? (d, n) => o.progress(ptotal + d, ptotal + n) : o.progress;
      const noNeedle = (r) => Q.requestMatches(r, v, null);
      /* pos: the request's position in its catalog shard */
      const take = (r, ord, shard, pos) => {
        const got = hits && hits.get(shard);
        if (got ? !got.has(pos) || !noNeedle(r) : !plan.match(r)) return;
        keep(r, ord, shard, pos);
      };
      if (sums) {
        /* the request summaries decide; the page's elements come after */
        const want = new Set(idxs), packs = [...new Set(idxs.map((i) => this.ix.shards[i].summary))];
        /* a search reads the summaries' text first: a shard whose
         * lowercased text lacks the needle (and has no JSON escape that
         * could hide it) holds no match and is never parsed */
        const sieve = hits === null && needle !== null && !/["\\\u0000-\u001f\u2028\u2029]/.test(needle);
        const load = sieve ? (d) => {
          const hit = this.store.peek(d);
          if (hit) return Promise.resolve(hit);
          return this.store.text(d, o.signal).then((t) =>
            (t.indexOf('\\') < 0 && !t.toLowerCase().includes(needle) ? [] : this.store.rows(d, t)));
        } : null;
        /* a window reads the time summaries it overlaps instead, when
         * they are fewer (sessions as long as the run overlap every
         * window): rows [shard, pos, ordinal, ...values] */
        const T = this.ix.time_summaries;
        const times = T && (v.from > 0 || v.to < this.cat.meta.duration)
          ? T.filter((d) => !d.bounds || (d.bounds[0] <= v.to && d.bounds[3] >= v.from)) : null;
        const summary = (row, at, shard, pos) => {
          const x = {};
          for (let j = 0; j < F.length; j++) if (row[j + at] !== null) x[F[j]] = row[j + at];
          take(x, row[at - 1], shard, pos);
        };
        if (times && times.length < packs.length) {
          await this.stream(times, (rows) => {
            for (const row of rows) {
              const shard = row[0], pos = row[1];
              if (!want.has(shard)) continue;
              const got = hits && hits.get(shard);
              if (!got || got.has(pos)) summary(row, 3, shard, pos);
            }
          }, o.signal, progress, load);
        } else {
          await this.stream(packs.map((k) => S[k]), (rows) => {
            for (const [shard, list] of rows) {
              if (!want.has(shard)) continue;
              const got = hits && hits.get(shard);
              for (let pos = 0; pos < list.length; pos++) if (!got || got.has(pos)) summary(list[pos], 1, shard, pos);
            }
          }, o.signal, progress, load);
        }
      } else {
        await this.stream(idxs.map((i) => this.ix.shards[i]), (rows, k) => {
          let pos = 0;
          for (const r of rows) if (r[0] === REQ) take(r[2], r[1], idxs[k], pos++);
        }, o.signal, progress);
      }
    }

    /* Replaces each summary item's o by its full element (by shard). */
    async fill(items, signal) {
      const by = new Map();
      for (const it of items) {
        if (!by.has(it.shard)) by.set(it.shard, new Map());
        by.get(it.shard).set(it.ord, it);
      }
      const shards = [...by.keys()];
      await this.stream(shards.map((i) => this.ix.shards[i]), (rows, k) => {
        const want = by.get(shards[k]);
        for (const r of rows) if (r[0] === REQ && want.has(r[1])) want.get(r[1]).o = r[2];
      }, signal);
    }

    /* Collects the elements of collection c passing keep from the shards,
     * in catalog order. */
    async collect(idxs, c, keep, signal) {
      const got = [];
      await this.scan(idxs, c, (el, ord) => { if (keep(el)) got.push([ord, el]); }, signal);
      return got.sort((a, b) => a[0] - b[0]).map((x) => x[1]);
    }

    /* The unsorted page of a window query over the shards of one kind
     * whose rows come in catalog order (the index's ordinal_order): a shard
     * wholly inside [v.from, v.to] by its bounds counts from its
     * descriptor, the others are read, and of the rest only the shards
     * holding the page [offset, offset + limit) are read.  keep(el): the
     * window test; aside(el): an element counted apart (unaligned
     * iterations) or null.  {total, skipped (matches before list), list,
     * aside}, or null without ordinal order.  Only once indexed (its
     * callers await it). */
    async windowPage(kind, c, v, keep, aside, signal) {
      const name = COLLS[c], D = this.ix.shards, B = boundsOf(c);
      if (!this.ix.ordinal_order || this.ix.ordinal_order[name] !== true) return null;
      const all = this.shardsOf(kind, v.from, v.to, B);
      let [idxs, apart] = aside ? skipUnaligned(D, all, name) : [all, 0];
      const n = idxs.map((i) => { const b = B(D[i]); return b && b[2] <= v.to && b[1] >= v.from ? D[i][name] || 0 : null; });
      const kept = new Map();
      const read = async (list) => this.stream(list.map((i) => D[i]), (rows, k) => {
        const l = [];
        for (const r of rows) {
          if (r[0] !== c) continue;
          if (aside && aside(r[2])) apart++;
          else if (keep(r[2])) l.push(r[2]);
        }
        kept.set(list[k], l);
      }, signal);
      await read(idxs.filter((_, k) => n[k] === null));
      let total = 0;
      idxs.forEach((i, k) => { if (n[k] === null) n[k] = kept.get(i).length; total += n[k]; });
      const hi = v.offset + v.limit, need = [];
      let at = 0, skipped = null;
      idxs.forEach((i, k) => {
        if (n[k] && at < hi && at + n[k] > v.offset) { if (skipped === null) skipped = at; need.push(i); }
        at += n[k];
      });
      /* (a shard with bounds holds nothing aside: all were counted above) */
      await read(need.filter((i) => !kept.has(i)));
      return { total, skipped: skipped || 0, list: [].concat(...need.map((i) => kept.get(i))), aside: apart };
    }

    /* The local answer of fn over a windowPage w (params' offset moved to
     * the page's first shard), with w's total and the asked offset. */
    fromPage(fn, key, w, params, v) {
      const a = fn(this.view(key, w.list), Object.assign({}, params, { offset: v.offset - w.skipped }));
      a.total = w.total;
      a.offset = v.offset;
      return a;
    }

    async listSessions(params) {
      const Q = DSQuery, given = Q.given;
      const v = Q.validate(this.cat, params, { session: 'string', agent: 'string' });
      Q.listSessions(this.view('sessions', []), params); /* the sort's errors */
      await this.indexed();
      if (!given(v.session) && !given(v.agent) && !given((params || {}).sort)) {
        const w = await this.windowPage('sessions', SESS, v, (s) => s.start <= v.to && s.end >= v.from, null);
        if (w) return this.fromPage(Q.listSessions, 'sessions', w, params, v);
      }
      let idxs = this.shardsOf('sessions', v.from, v.to, boundsOf(SESS));
      if (given(v.session)) {
        const only = await this.sessionShards([v.session]);
        idxs = only ? idxs.filter((i) => only.has(i)) : [];
      }
      const list = await this.collect(idxs, SESS, (s) => s.start <= v.to && s.end >= v.from &&
        (!given(v.agent) || (s.agents || []).includes(v.agent)) && (!given(v.session) || s.id === v.session));
      return Q.listSessions(this.view('sessions', list), params);
    }

    async queryServerSpans(params) {
      const Q = DSQuery;
      const v = Q.validate(this.cat, params, {});
      Q.queryServerSpans(this.view('server_spans', []), params);
      await this.indexed();
      if (!Q.given((params || {}).sort)) {
        const w = await this.windowPage('server_spans', SPANS, v, (s) => s.start <= v.to && s.end >= v.from, null);
        if (w) return this.fromPage(Q.queryServerSpans, 'server_spans', w, params, v);
      }
      const list = await this.collect(this.shardsOf('server_spans', v.from, v.to), SPANS,
        (s) => s.start <= v.to && s.end >= v.from);
      return Q.queryServerSpans(this.view('server_spans', list), params);
    }

    async queryIterations(params) {
      const Q = DSQuery, given = Q.given;
      const v = Q.validate(this.cat, params, { worker: 'string', rank: 'integer' });
      Q.queryIterations(this.view('iterations', []), params);
      await this.indexed();
      if (!given(v.worker) && !given(v.rank) && !given((params || {}).sort)) {
        /* an iteration without start is counted apart (unaligned_rows) */
        const w = await this.windowPage('iterations', ITERS, v,
          (r) => r.start <= v.to && (r.end === null ? r.start : r.end) >= v.from, (r) => r.start === null);
        if (w) {
          const a = this.fromPage(Q.queryIterations, 'iterations', w, params, v);
          a.unaligned_rows = w.aside;
          return a;
        }
      }
      /* only the shards the window touches (an iteration without start,
       * counted apart, leaves its shard without bounds, never skipped);
       * without a worker or rank filter a shard of such iterations alone
       * counts from its descriptor */
      const filtered = given(v.worker) || given(v.rank), all = this.shardsOf('iterations', v.from, v.to);
      const [idxs, apart] = filtered ? [all, 0] : skipUnaligned(this.ix.shards, all, 'iterations');
      const list = await this.collect(idxs, ITERS, (r) => (!filtered || ((!given(v.worker) || r.worker === v.worker) &&
        (!given(v.rank) || ('rank_kind' in r ? r.rank : r.global_rank) === v.rank))));
      const a = Q.queryIterations(this.view('iterations', list), params);
      a.unaligned_rows += apart;
      return a;
    }

    async getRequest(id) {
      const r = await this.find(REQ, id);
      if (!r) throw new DSQuery.UsageError(`Unknown client request: ${id}`);
      return r;
    }
  }

  return { Catalog };
})();
