/* main.js: the viewer's state and boot.  Owns the view state (window,
 * selection, pins, tab), range history, the URL fragment, keyboard range
 * controls, the per-view AbortController, readiness promises, the frozen
 * window.traceExplorer API (3.2) and the trace-explorer:ready event. */
'use strict';

const DSApp = (() => {
  const { el, toast } = DSUI;
  const TABS = ['requests', 'metrics', 'nsight'];
  const API_VERSION = '3.3';

  class App {
    constructor(cat, store) {
      this.cat = cat;
      this.store = store;
      this.dur = cat.meta.duration;
      this.state = { from: 0, to: this.dur, request: null, profile: null, pinnedMetrics: [], tab: 'requests', nsysEvent: null,
        sel: null, workers: [], reqSort: '-ttft_ms', filter: '', hiddenSeries: [] };
      /* a part of a split single-file report opens on its own slice */
      const part = cat.delivery && cat.delivery.part;
      if (part && Array.isArray(part.range) && part.range[0] >= 0 && part.range[0] < part.range[1] && part.range[1] <= this.dur)
        Object.assign(this.state, { from: part.range[0], to: part.range[1] });
      this.history = [];
      this.ctrl = new AbortController();
      this.views = [];
      this.pending = { details: Promise.resolve(), metrics: Promise.resolve() };
      this.errors = [];
      this.familyNames = new Set(DSQuery.listMetricFamilies(cat).map((f) => f.name));
      this.catalog = new DSCatalog.Catalog(cat, store);
      this.requestIds = this.catalog.ids;
    }

    getState() {
      const s = this.state;
      return { from: s.from, to: s.to, request: s.request, profile: s.profile, pinnedMetrics: s.pinnedMetrics.slice(), tab: s.tab,
        sel: s.sel ? s.sel.slice() : null, workers: s.workers.slice(), reqSort: s.reqSort, filter: s.filter,
        hiddenSeries: s.hiddenSeries.slice() };
    }

    /* Applies known, valid keys of partial; ignores unknown or stale ones. */
    sanitize(partial) {
      const p = partial && typeof partial === 'object' ? partial : {};
      const out = {};
      const from = 'from' in p ? p.from : this.state.from;
      const to = 'to' in p ? p.to : this.state.to;
      if (('from' in p || 'to' in p) && typeof from === 'number' && typeof to === 'number' &&
          Number.isFinite(from) && Number.isFinite(to) && from >= 0 && from < to && to <= this.dur) {
        out.from = from; out.to = to;
      }
      if ('request' in p && (p.request === null || this.requestIds.has(p.request))) out.request = p.request;
      if ('profile' in p && (p.profile === null || (Number.isInteger(p.profile) && p.profile >= 0 && p.profile < this.cat.profiles.length)))
        out.profile = p.profile;
      if ('pinnedMetrics' in p && Array.isArray(p.pinnedMetrics))
        out.pinnedMetrics = [...new Set(p.pinnedMetrics.filter((n) => typeof n === 'string' && this.familyNames.has(n)))];
      if ('tab' in p && TABS.includes(p.tab)) out.tab = p.tab;
      if ('nsysEvent' in p) out.nsysEvent = p.nsysEvent;
      if ('sel' in p && (p.sel === null || (Array.isArray(p.sel) && p.sel.length === 2 && p.sel.every(Number.isFinite) &&
          p.sel[0] >= 0 && p.sel[0] < p.sel[1] && p.sel[1] <= this.dur))) out.sel = p.sel === null ? null : p.sel.slice();
      if ('workers' in p && Array.isArray(p.workers)) out.workers = [...new Set(p.workers.filter((w) => typeof w === 'string' && w))];
      if ('filter' in p && typeof p.filter === 'string') out.filter = p.filter;
      if ('reqSort' in p && typeof p.reqSort === 'string' && /^-?[a-z_]+$/.test(p.reqSort)) out.reqSort = p.reqSort;
      if ('hiddenSeries' in p && Array.isArray(p.hiddenSeries))
        out.hiddenSeries = [...new Set(p.hiddenSeries.filter((i) => Number.isInteger(i) && i >= 0 && i < this.cat.metrics.length))].sort((a, b) => a - b);
      return out;
    }

    /* Changes the view.  opts.push records the previous range for Back. */
    update(partial, opts) {
      const ch = this.sanitize(partial);
      const rangeChanged = ('from' in ch && ch.from !== this.state.from) || ('to' in ch && ch.to !== this.state.to);
      const now = performance.now();
      const burst = opts && opts.coalesce && now - (this.lastPush || 0) < 700;
      if (rangeChanged && (!opts || opts.push !== false) && !burst) {
        this.history.push([this.state.from, this.state.to]);
        if (this.history.length > 100) this.history.shift();
      }
      if (rangeChanged && opts && opts.coalesce) this.lastPush = now;
      Object.assign(this.state, ch);
      this.pushView = rangeChanged && (!opts || opts.push !== false) && !burst;
      this.render();
      return this.getState();
    }

    /* A link's request whose catalog shard is not loaded yet: loads it
     * through the id index, then selects the request (unless another was
     * selected meanwhile); an unknown id is ignored, as sanitize does. */
    followRequest(id) {
      if (typeof id !== 'string' || this.requestIds.has(id) || !this.catalog.sharded) return null;
      const before = this.state.request;
      return this.catalog.loadRequest(id).then((r) => {
        if (!r || this.state.request !== before) return;
        this.scrollSel = true;
        this.update({ request: id }, { push: false });
      }, (e) => { if (!e || e.name !== 'AbortError') this.showError(e.message, true); });
    }

    /* A linked NVTX range ([profile, global tid, start, end, row] as the
     * link's text; a global tid may be beyond 2^53): its row
     * is read from the profile's range shards, then selected (unless the
     * selection changed meanwhile). */
    followRange(range) {
      if (!Array.isArray(range) || range.length !== 5) return null;
      const [pi, a, b, row] = [range[0], range[2], range[3], range[4]].map(Number), tid = range[1];
      const p = this.cat.profiles[pi];
      if (![a, b, row].every(Number.isFinite)) return null;
      const cur = this.state.nsysEvent;
      if (!p || !Number.isInteger(pi) || (cur && cur.profile === pi && cur.rowid === row)) return null;
      return (async () => {
        for await (const rows of DSQuery.stream(this.store, p.event_chunks, a, b)) {
          const r = rows.find((x) => x[4] === row && String(x[3]) === tid && x[0] === a && x[1] === b);
          if (r) {
            if (this.state.nsysEvent === cur) this.update({ nsysEvent: DSQuery.nsysItem(p, r) }, { push: false });
            return;
          }
        }
      })().catch((e) => { if (!e || e.name !== 'AbortError') this.showError(e.message, true); });
    }

    selectRange(from, to) {
      DSQuery.validate(this.cat, { from, to });
      return this.update({ from, to });
    }

    back() {
      const prev = this.history.pop();
      if (!prev) return;
      this.update({ from: prev[0], to: prev[1] }, { push: false });
    }

    /* Zooms by factor f keeping time c (default: the centre) in place. */
    zoom(f, c, opts) {
      const { from, to } = this.state;
      const t = c === undefined || c === null || !(c >= from && c <= to) ? (from + to) / 2 : c;
      const w = Math.min(this.dur, (to - from) * f);
      if (w < 1e-9) return;
      let a = t - (t - from) * (w / (to - from)), b = a + w;
      if (a < 0) { b -= a; a = 0; }
      if (b > this.dur) { a -= b - this.dur; b = this.dur; }
      this.update({ from: Math.max(0, a), to: b }, opts);
    }

    pan(f, opts) {
      const { from, to } = this.state;
      const w = to - from;
      let a = from + w * f;
      a = Math.min(Math.max(0, a), this.dur - w);
      this.update({ from: a, to: a + w }, opts);
    }

    /* Selects the area [a, b] (kept across zooms; f focuses it). */
    selectArea(a, b) { return this.update({ sel: [Math.max(0, a), Math.min(this.dur, b)] }); }

    /* The window of the current selection: the area, else the NVTX range,
     * else the selected request. */
    focusWindow() {
      const s = this.state;
      if (s.sel) return s.sel;
      if (s.nsysEvent) return [s.nsysEvent.start, s.nsysEvent.end];
      if (s.request !== null) { const r = DSQuery.findRequest(this.cat, s.request); if (r) return [r.start, r.end]; }
      return null;
    }

    /* Shows [a, b] with a small margin, clamped to the run. */
    focus(a, b) {
      const pad = Math.max((b - a) * 0.08, 1e-6);
      let x = Math.max(0, a - pad), y = Math.min(this.dur, b + pad);
      if (!(y > x)) { x = Math.max(0, a - 1e-3); y = Math.min(this.dur, b + 1e-3); }
      return this.update({ from: x, to: y });
    }

    signal() { return this.ctrl.signal; }

    /* transient: a shard error of this view, cleared when the view moves on. */
    showError(msg, transient) {
      if (this.errors.includes(msg)) return;
      this.errors.push(msg);
      document.getElementById('errors').append(el('div', { class: 'error' + (transient ? ' transient' : ''), text: msg }));
    }

    clearTransient() {
      for (const e of document.querySelectorAll('#errors .transient')) {
        this.errors = this.errors.filter((m) => m !== e.textContent);
        e.remove();
      }
      this.store.errors = [];
    }

    fragment() {
      const s = this.state, q = new URLSearchParams();
      q.set('from', String(s.from));
      q.set('to', String(s.to));
      q.set('tab', s.tab);
      if (s.request !== null) q.set('request', s.request);
      if (s.profile !== null) q.set('profile', String(s.profile));
      for (const m of s.pinnedMetrics) q.append('pin', m);
      if (s.sel) q.set('sel', `${s.sel[0]},${s.sel[1]}`);
      for (const w of s.workers) q.append('worker', w);
      if (s.reqSort !== '-ttft_ms') q.set('sort', s.reqSort);
      if (s.filter) q.set('filter', s.filter);
      if (s.hiddenSeries.length) q.set('hide', s.hiddenSeries.join(','));
      /* the selected NVTX range: profile, thread, start, end and its row */
      const ev = s.nsysEvent;
      if (ev && Number.isInteger(ev.profile) && ev.rowid !== undefined)
        q.set('range', [ev.profile, ev.global_tid, ev.start, ev.end, ev.rowid].join(','));
      const pn = DSPanes.sizes();
      for (const k of ['side', 'details', 'labels']) if (pn[k] !== undefined) q.set(k, String(pn[k]));
      return '#' + q.toString();
    }

    static parseFragment(hash) {
      const q = new URLSearchParams((hash || '').replace(/^#/, ''));
      const p = {};
      if (q.has('from') && q.has('to')) { p.from = Number(q.get('from')); p.to = Number(q.get('to')); }
      if (q.has('tab')) p.tab = q.get('tab');
      if (q.has('request')) p.request = q.get('request');
      if (q.has('profile')) p.profile = Number(q.get('profile'));
      if (q.has('pin')) p.pinnedMetrics = q.getAll('pin');
      p.sel = q.has('sel') ? q.get('sel').split(',').map(Number) : null;
      p.workers = q.getAll('worker');
      if (q.has('sort')) p.reqSort = q.get('sort');
      p.filter = q.get('filter') || '';
      p.hiddenSeries = q.has('hide') ? q.get('hide').split(',').filter(Boolean).map(Number) : [];
      if (q.has('range')) p.range = q.get('range').split(',');
      p.panes = {};
      for (const k of ['side', 'details', 'labels']) if (q.has(k) && Number.isFinite(Number(q.get(k)))) p.panes[k] = Number(q.get(k));
      return p;
    }

    /* The URL fragment follows the view: a new window is a new history
     * entry, so Back/Forward walk views. */
    syncUrl() {
      const frag = this.fragment();
      if (location.hash === frag) return;
      try {
        if (this.pushView) history.pushState(null, '', frag); else history.replaceState(null, '', frag);
      } catch (e) { /* file:// in some browsers */ }
    }

    /* Synchronous drawing of every view, then (unless first) async loads. */
    render(noLoad) {
      const moved = this.lastView !== `${this.state.from},${this.state.to}`;
      this.lastView = `${this.state.from},${this.state.to}`;
      if (moved && !noLoad) this.clearTransient();
      this.ctrl.abort();
      this.ctrl = new AbortController();
      if (!this.booting) this.syncUrl();
      this.pushView = false;
      DSUI.hideTip();
      DSUI.setWidth(document.getElementById('tracks').clientWidth);
      for (const v of this.views) v.render(this);
      DSNav.drawSelection(this);
      if (!noLoad) this.load();
    }

    load() {
      const sig = this.ctrl.signal;
      for (const v of this.views) {
        if (!v.load) continue;
        const p = v.load(this, sig).catch((e) => {
          if (e && e.name === 'AbortError') return;
          /* a shard error: one message per shard, the store's (naming what it holds) */
          if (e && e.name === 'ShardError' && e.desc) this.store.report(e);
          else this.showError(e && e.message ? e.message : String(e), e && e.name === 'ShardError');
        });
        if (v.ready) this.pending[v.ready] = p;
      }
    }

    async whenReady(kind) {
      for (;;) {
        const p = this.pending[kind];
        await p;
        await new Promise((r) => requestAnimationFrame(() => r()));
        if (this.pending[kind] === p) return;
      }
    }

    async exportSelection() {
      const s = this.state;
      const win = { from: s.from, to: s.to };
      const nsysParams = Object.assign({ limit: 200 }, win, s.profile !== null ? { profile: s.profile } : {});
      return {
        schema: this.cat.schema, job: this.cat.meta.job, origin_ns: this.cat.meta.origin_ns, view: this.getState(),
        request: s.request !== null ? DSQuery.getRequest(this.cat, s.request) : null,
        nsys: await DSQuery.queryNsys(this.cat, this.store, nsysParams),
        metrics: await DSQuery.queryMetrics(this.cat, this.store, win),
        sources: this.cat.sources,
      };
    }
  }

  function makeApi(app) {
    const cat = app.cat, store = app.store, Q = DSQuery, C = app.catalog;
    const api = {
      version: API_VERSION,
      describe: () => Object.assign({ version: API_VERSION, schema: cat.schema, meta: cat.meta, counts: counts(app), capabilities: cat.capabilities },
        DSLive.describe()),
      /* any query kind, answered by the live session (live.js) */
      query: (kind, params) => DSLive.query(kind, params),
      getState: () => app.getState(),
      setState: (partial) => app.update(partial),
      selectRange: (from, to) => app.selectRange(from, to),
      selectRequest: (id) => {
        const go = (r) => {
          const part = { request: id, tab: 'requests' };
          if (!(r.start <= app.state.to && r.end >= app.state.from)) {
            const pad = Math.max((r.end - r.start) * 0.1, 1e-3);
            part.from = Math.max(0, r.start - pad); part.to = Math.min(app.dur, r.end + pad);
          }
          return app.update(part);
        };
        if (!C.sharded) return go(Q.getRequest(cat, id));
        return C.loadRequest(id).then((r) => {
          if (!r) throw new Q.UsageError(`Unknown client request: ${id}`);
          return go(r);
        });
      },
      listProfiles: () => Q.listProfiles(cat),
      /* API 3.2: a value with embedded collections, else a Promise */
      listSessions: (p) => (C.sharded ? C.listSessions(p) : Q.listSessions(cat, p)),
      queryRequests: (p) => (C.sharded ? C.queryRequests(p) : Q.queryRequests(cat, p)),
      queryIterations: (p) => (C.sharded ? C.queryIterations(p) : Q.queryIterations(cat, p)),
      queryServerSpans: (p) => (C.sharded ? C.queryServerSpans(p) : Q.queryServerSpans(cat, p)),
      getRequest: (id) => (C.sharded ? C.getRequest(id) : Q.getRequest(cat, id)),
      getLifecycle: (id) => (C.sharded ? C.getRequest(id).then((r) => r.lifecycle) : Q.getRequest(cat, id).lifecycle),
      listMetricFamilies: () => Q.listMetricFamilies(cat),
      listMetricSeries: (p) => Q.listMetricSeries(cat, p),
      getSource: (id) => {
        const s = cat.sources[id];
        if (!Number.isInteger(id) || !s) throw new Q.UsageError(`Unknown source: ${id}`);
        return s;
      },
      detailDataStatus: () => store.status(),
      queryNsys: async (p) => DSGpuQuery.withProjections(cat, store, await Q.queryNsys(cat, store, p)),
      queryCpu: async (p) => Q.queryCpu(cat, store, p),
      queryMetrics: async (p) => Q.queryMetrics(cat, store, p),
      queryTimeline: async (p) => DSTimeline.queryTimeline(cat, store, p, undefined, C.sharded ? C : null),
      queryGpu: async (p) => DSGpuQuery.queryGpu(cat, store, p),
      inspectNsys: async (p) => {
        const o = p || {};
        Q.validate(cat, { from: o.from, to: o.to });
        let prof = null;
        if (o.profile !== undefined && o.profile !== null) prof = cat.profiles.find((x) => x.id === o.profile);
        else prof = cat.profiles.find((x) => (o.worker === undefined || o.worker === null || x.worker === o.worker) &&
          (o.rank === undefined || o.rank === null || x.rank === o.rank));
        if (!prof) throw new Q.UsageError('No Nsight profile matches the given profile, worker and rank');
        const from = o.from === undefined || o.from === null ? 0 : o.from;
        const to = o.to === undefined || o.to === null ? app.dur : o.to;
        app.update({ profile: prof.id, tab: 'nsight', from, to });
        return DSGpuQuery.withProjections(cat, store, await Q.queryNsys(cat, store, { profile: prof.id, from, to }));
      },
      exportSelection: () => app.exportSelection(),
      exportView: async () => {
        const res = await DSExport.build(app, null);
        return JSON.parse(await res.blob.text());
      },
      /* 3.3: the Chrome trace (Trace Event Format JSON) as text */
      exportChromeTrace: async (p) => (await DSExport.buildTrace(app, null, undefined, p || {})).blob.text(),
      whenDetailsReady: () => app.whenReady('details'),
      whenMetricsReady: () => app.whenReady('metrics'),
    };
    return Object.freeze(api);
  }

  function counts(app) {
    const cat = app.cat, c = app.catalog.counts();
    return {
      requests: c.requests, sessions: c.sessions, workers: cat.workers.length,
      metrics: cat.metrics.length, profiles: cat.profiles.length, iterations: c.iterations,
    };
  }

  function bindControls(app) {
    const $ = (id) => document.getElementById(id);
    const apply = () => {
      const a = Number($('in-from').value), b = Number($('in-to').value);
      try {
        app.selectRange(a, b);
        return true;
      } catch (e) {
        toast(e.message);
        $('in-from').setAttribute('aria-invalid', 'true');
        return false;
      }
    };
    $('btn-apply').onclick = apply;
    /* Enter applies and hands the keyboard back to the timeline, so that
     * 0, W/A/S/D, Backspace and Esc act at once */
    const tracks = $('tracks');
    if (!tracks.hasAttribute('tabindex')) tracks.setAttribute('tabindex', '-1');
    for (const id of ['in-from', 'in-to']) {
      $(id).addEventListener('keydown', (ev) => {
        if (ev.key !== 'Enter') return;
        ev.preventDefault();
        if (apply()) { $(id).blur(); tracks.focus({ preventScroll: true }); }
      });
    }
    $('btn-back').onclick = () => app.back();
    $('btn-zoom-in').onclick = () => app.zoom(0.5);
    $('btn-zoom-out').onclick = () => app.zoom(2);
    $('btn-pan-left').onclick = () => app.pan(-0.25);
    $('btn-pan-right').onclick = () => app.pan(0.25);
    $('btn-full').onclick = () => app.update({ from: 0, to: app.dur });
    $('btn-link').onclick = async () => {
      const url = location.href.split('#')[0] + app.fragment();
      $('btn-link').dataset.link = url;
      try {
        await navigator.clipboard.writeText(url);
        toast('Link to this view copied');
      } catch (e) {
        window.prompt('Copy this link to the current view:', url);
      }
    };
    for (const [id, chrome] of [['btn-export', false], ['btn-export-trace', true]]) {
      $(id).onclick = async () => {
        try {
          await DSExport.run(app, chrome);
        } catch (e) {
          app.showError('Export failed: ' + e.message);
        }
      };
    }
    for (const b of document.querySelectorAll('#tabs button')) b.onclick = () => app.update({ tab: b.dataset.tab });
    document.addEventListener('keydown', (ev) => {
      const t = ev.target;
      if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.isContentEditable) || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const k = ev.key;
      if (DSNav.key(app, ev)) { /* ?, m, M, Enter, Esc over the help */ }
      else if (k === '+' || k === '=') app.zoom(0.5);
      else if (k === '-' || k === '_') app.zoom(2);
      else if (k === 'ArrowLeft') app.pan(-0.25);
      else if (k === 'ArrowRight') app.pan(0.25);
      else if (k === 'Backspace' || k === 'b') app.back();
      else if (k === '0') app.update({ from: 0, to: app.dur });
      else if (k === 'w' || k === 'W') app.zoom(0.8, DSNav.cursor(app), { coalesce: true });
      else if (k === 's' || k === 'S') app.zoom(1.25, DSNav.cursor(app), { coalesce: true });
      else if (k === 'a' || k === 'A') app.pan(-0.2, { coalesce: true });
      else if (k === 'd' || k === 'D') app.pan(0.2, { coalesce: true });
      else if (k === 'f' || k === 'F') { const w = app.focusWindow(); if (w) app.focus(w[0], w[1]); }
      else if (k === 'Escape') app.update({ sel: null });
      else return;
      ev.preventDefault();
    });
    const restore = () => {
      if (location.hash === app.fragment()) return;
      const p = App.parseFragment(location.hash);
      DSPanes.fromLink(p.panes);
      app.update(p, { push: false });
      app.followRequest(p.request);
      app.followRange(p.range);
    };
    window.addEventListener('hashchange', restore);
    window.addEventListener('popstate', restore);
    DSNav.bind(app);
    DSPanes.bind(app);
    let rt = null;
    window.addEventListener('resize', () => { clearTimeout(rt); rt = setTimeout(() => app.render(), 120); });
  }

  function fatal(msg) {
    const main = document.getElementById('layout');
    document.getElementById('run-job').textContent = 'This report cannot be shown';
    main.replaceChildren(el('div', { id: 'fatal', text: msg }));
  }

  async function boot() {
    let cat;
    performance.mark('dsight:boot');
    try {
      cat = await DSData.loadCatalog(document);
      performance.mark('dsight:catalog');
    } catch (e) {
      fatal('Could not read the embedded report catalog: ' + e.message);
      return;
    }
    const budget = (cat.delivery && cat.delivery.cache_bytes) || 33554432;
    const store = new DSData.ShardStore(budget, document);
    const app = new App(cat, store);
    store.onError = (msg) => app.showError(msg, true);
    store.owners = new Map();
    for (const p of cat.profiles) {
      const who = `profile ${p.id} (${p.worker}${p.rank !== null && p.rank !== undefined ? ' rank ' + p.rank : ''})`;
      for (const d of p.event_chunks || []) store.owners.set(d.sha256, `NVTX ranges of ${who}`);
      for (const d of (p.cpu && p.cpu.chunks) || []) store.owners.set(d.sha256, `CPU samples of ${who}`);
      for (const d of p.gpu_chunks || []) store.owners.set(d.sha256, `GPU rows of ${who}`);
    }
    for (const m of cat.metrics) for (const d of m.chunks || []) store.owners.set(d.sha256, `Metric series ${m.id} (${m.name} @ ${m.worker || '?'})`);
    const families = DSQuery.listMetricFamilies(cat);
    const withData = families.filter((f) => (f.samples || f.series_count) > 0);
    /* default pins: up to two families with data, fewest shards first, so
     * that the first charts need few fetches (heavy runs get one chart) */
    const shardsOf = new Map();
    for (const s of cat.metrics) shardsOf.set(s.name, (shardsOf.get(s.name) || 0) + (s.chunks || []).length);
    const byCost = withData.filter((f) => shardsOf.get(f.name)).sort((a, b) => shardsOf.get(a.name) - shardsOf.get(b.name));
    const pins = [];
    let cost = 0;
    for (const f of byCost) {
      if (pins.length === 2 || (pins.length && cost + shardsOf.get(f.name) > 48)) break;
      pins.push(f.name);
      cost += shardsOf.get(f.name);
    }
    app.state.pinnedMetrics = pins;
    app.state.tab = app.catalog.counts().requests ? 'requests' : cat.metrics.length ? 'metrics' : 'nsight';
    const linked = App.parseFragment(location.hash);
    Object.assign(app.state, app.sanitize(linked));
    app.views = [DSHeader, DSAxis, DSRequests, DSMetrics, DSNsight];
    bindControls(app);
    const anyShards = cat.profiles.some((p) => (p.event_chunks || []).length || (p.cpu && (p.cpu.chunks || []).length)) ||
      cat.metrics.some((s) => (s.chunks || []).length);
    if (location.protocol === 'file:' && anyShards && !document.querySelector('script[id^="dsight-shard-"]'))
      app.showError(DSData.FILE_HELP);
    /* the first render writes no URL and reads no stored pane sizes:
     * both wait until the page is ready */
    app.booting = true;
    app.render(true);
    app.booting = false;
    performance.mark('dsight:first-render');
    const api = makeApi(app);
    Object.defineProperty(window, 'traceExplorer', { value: api, writable: false, configurable: false, enumerable: true });
    window.dispatchEvent(new CustomEvent('trace-explorer:ready', { detail: { version: API_VERSION } }));
    /* a sharded catalog's descriptor lists are decoded now, after ready
     * (the request calls and the session list wait for them) */
    if (app.catalog.sharded)
      app.catalog.indexed().then(() => app.catalog.nameShards(store.owners), (e) => app.showError(e.message));
    app.syncUrl();
    if (DSPanes.restore(linked.panes)) app.render(); else app.load();
    app.followRequest(linked.request);
    app.followRange(linked.range);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
  else boot();

  return { App };
})();
