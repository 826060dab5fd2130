/* main.js: the viewer's state and boot.  Owns the view state (window,
 * selection, pins, tab), range history, the URL fragment, keyboard range
 * controls, the per-view AbortController, readiness promises, the frozen
 * window.traceExplorer 3.2 API and the trace-explorer:ready event. */
'use strict';

const DSApp = (() => {
  const { el, toast } = DSUI;
  const TABS = ['requests', 'metrics', 'nsight'];
  /* The one API version (traceExplorer.version, describe().version, the ready
   * event).  3.2: the request calls (queryRequests, getRequest, getLifecycle,
   * listSessions, queryIterations, queryServerSpans) return their value
   * directly when the collections are embedded (every report today), else a
   * Promise; `await` works on both. */
  const API_VERSION = '3.2';

  class App {
    constructor(cat, store) {
      this.cat = cat;
      this.store = store;
      this.dur = cat.meta.duration;
      this.state = { from: 0, to: this.dur, request: null, profile: null, pinnedMetrics: [], tab: 'requests', nsysEvent: null };
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
      this.requestIds = new Set(cat.requests.map((r) => r.id));
    }

    getState() {
      const s = this.state;
      return { from: s.from, to: s.to, request: s.request, profile: s.profile, pinnedMetrics: s.pinnedMetrics.slice(), tab: s.tab };
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
      return out;
    }

    /* Changes the view.  opts.push records the previous range for Back. */
    update(partial, opts) {
      const ch = this.sanitize(partial);
      const rangeChanged = ('from' in ch && ch.from !== this.state.from) || ('to' in ch && ch.to !== this.state.to);
      if (rangeChanged && (!opts || opts.push !== false)) {
        this.history.push([this.state.from, this.state.to]);
        if (this.history.length > 100) this.history.shift();
      }
      if (rangeChanged) ch.nsysEvent = null;
      Object.assign(this.state, ch);
      this.render();
      return this.getState();
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

    zoom(f) {
      const { from, to } = this.state;
      const c = (from + to) / 2, half = Math.min(this.dur, (to - from) * f) / 2;
      let a = c - half, b = c + half;
      if (a < 0) { b -= a; a = 0; }
      if (b > this.dur) { a -= b - this.dur; b = this.dur; }
      a = Math.max(0, a);
      if (b - a < 1e-9) return;
      this.update({ from: a, to: b });
    }

    pan(f) {
      const { from, to } = this.state;
      const w = to - from;
      let a = from + w * f;
      a = Math.min(Math.max(0, a), this.dur - w);
      this.update({ from: a, to: a + w });
    }

    signal() { return this.ctrl.signal; }

    showError(msg) {
      if (this.errors.includes(msg)) return;
      this.errors.push(msg);
      document.getElementById('errors').append(el('div', { class: 'error', text: msg }));
    }

    fragment() {
      const s = this.state, q = new URLSearchParams();
      q.set('from', String(s.from));
      q.set('to', String(s.to));
      q.set('tab', s.tab);
      if (s.request !== null) q.set('request', s.request);
      if (s.profile !== null) q.set('profile', String(s.profile));
      for (const m of s.pinnedMetrics) q.append('pin', m);
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
      return p;
    }

    /* Synchronous drawing of every view, then (unless first) async loads. */
    render(noLoad) {
      this.ctrl.abort();
      this.ctrl = new AbortController();
      const frag = this.fragment();
      if (location.hash !== frag) {
        try { history.replaceState(null, '', frag); } catch (e) { /* file:// in some browsers */ }
      }
      DSUI.hideTip();
      DSUI.setWidth(document.getElementById('tracks').clientWidth);
      for (const v of this.views) v.render(this);
      if (!noLoad) this.load();
    }

    load() {
      const sig = this.ctrl.signal;
      for (const v of this.views) {
        if (!v.load) continue;
        const p = v.load(this, sig).catch((e) => {
          if (e && e.name === 'AbortError') return;
          this.showError(e && e.message ? e.message : String(e));
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
    const cat = app.cat, store = app.store, Q = DSQuery;
    const api = {
      version: API_VERSION,
      describe: () => ({ version: API_VERSION, schema: cat.schema, meta: cat.meta, counts: counts(cat), capabilities: cat.capabilities }),
      getState: () => app.getState(),
      setState: (partial) => app.update(partial),
      selectRange: (from, to) => app.selectRange(from, to),
      selectRequest: (id) => {
        Q.getRequest(cat, id);
        const r = cat.requests.find((x) => x.id === id);
        const part = { request: id, tab: 'requests' };
        if (!(r.start <= app.state.to && r.end >= app.state.from)) {
          const pad = Math.max((r.end - r.start) * 0.1, 1e-3);
          part.from = Math.max(0, r.start - pad); part.to = Math.min(app.dur, r.end + pad);
        }
        return app.update(part);
      },
      listProfiles: () => Q.listProfiles(cat),
      listSessions: (p) => Q.listSessions(cat, p),
      queryRequests: (p) => Q.queryRequests(cat, p),
      queryIterations: (p) => Q.queryIterations(cat, p),
      queryServerSpans: (p) => Q.queryServerSpans(cat, p),
      getRequest: (id) => Q.getRequest(cat, id),
      getLifecycle: (id) => Q.getRequest(cat, id).lifecycle,
      listMetricFamilies: () => Q.listMetricFamilies(cat),
      listMetricSeries: (p) => Q.listMetricSeries(cat, p),
      getSource: (id) => {
        const s = cat.sources[id];
        if (!Number.isInteger(id) || !s) throw new Q.UsageError(`Unknown source: ${id}`);
        return s;
      },
      detailDataStatus: () => store.status(),
      queryNsys: async (p) => Q.queryNsys(cat, store, p),
      queryCpu: async (p) => Q.queryCpu(cat, store, p),
      queryMetrics: async (p) => Q.queryMetrics(cat, store, p),
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
        return Q.queryNsys(cat, store, { profile: prof.id, from, to });
      },
      exportSelection: () => app.exportSelection(),
      whenDetailsReady: () => app.whenReady('details'),
      whenMetricsReady: () => app.whenReady('metrics'),
    };
    return Object.freeze(api);
  }

  function counts(cat) {
    return {
      requests: cat.requests.length, sessions: cat.sessions.length, workers: cat.workers.length,
      metrics: cat.metrics.length, profiles: cat.profiles.length, iterations: (cat.iterations || []).length,
    };
  }

  function bindControls(app) {
    const $ = (id) => document.getElementById(id);
    const apply = () => {
      const a = Number($('in-from').value), b = Number($('in-to').value);
      try {
        app.selectRange(a, b);
      } catch (e) {
        toast(e.message);
        $('in-from').setAttribute('aria-invalid', 'true');
      }
    };
    $('btn-apply').onclick = apply;
    for (const id of ['in-from', 'in-to']) {
      $(id).addEventListener('keydown', (ev) => { if (ev.key === 'Enter') { ev.preventDefault(); apply(); } });
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
    $('btn-export').onclick = async () => {
      try {
        const data = await app.exportSelection();
        const blob = new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' });
        const a = el('a', { href: URL.createObjectURL(blob), download: `${app.cat.meta.job || 'dsight'}-selection.json` });
        document.body.append(a); a.click(); a.remove();
        setTimeout(() => URL.revokeObjectURL(a.href), 5000);
      } catch (e) {
        app.showError('Export failed: ' + e.message);
      }
    };
    for (const b of document.querySelectorAll('#tabs button')) b.onclick = () => app.update({ tab: b.dataset.tab });
    document.addEventListener('keydown', (ev) => {
      const t = ev.target;
      if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.isContentEditable) || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const k = ev.key;
      if (k === '+' || k === '=') app.zoom(0.5);
      else if (k === '-' || k === '_') app.zoom(2);
      else if (k === 'ArrowLeft') app.pan(-0.25);
      else if (k === 'ArrowRight') app.pan(0.25);
      else if (k === 'Backspace' || k === 'b') app.back();
      else if (k === '0') app.update({ from: 0, to: app.dur });
      else return;
      ev.preventDefault();
    });
    window.addEventListener('hashchange', () => {
      if (location.hash !== app.fragment()) app.update(App.parseFragment(location.hash));
    });
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
    store.onError = (msg) => app.showError(msg);
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
    app.state.tab = cat.requests.length ? 'requests' : cat.metrics.length ? 'metrics' : 'nsight';
    Object.assign(app.state, app.sanitize(App.parseFragment(location.hash)));
    app.views = [DSHeader, DSAxis, DSRequests, DSMetrics, DSNsight];
    bindControls(app);
    const anyShards = cat.profiles.some((p) => (p.event_chunks || []).length || (p.cpu && (p.cpu.chunks || []).length)) ||
      cat.metrics.some((s) => (s.chunks || []).length);
    if (location.protocol === 'file:' && anyShards && !document.querySelector('script[id^="dsight-shard-"]'))
      app.showError(DSData.FILE_HELP);
    app.render(true);
    performance.mark('dsight:first-render');
    const api = makeApi(app);
    Object.defineProperty(window, 'traceExplorer', { value: api, writable: false, configurable: false, enumerable: true });
    window.dispatchEvent(new CustomEvent('trace-explorer:ready', { detail: { version: API_VERSION } }));
    app.load();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
  else boot();

  return { App };
})();
