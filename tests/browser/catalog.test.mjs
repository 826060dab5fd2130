// catalog.test.mjs: a report whose catalog collections are sharded (more
// than 1 MiB of requests): index.html holds the index only, and the
// request calls of API 3.2 (queryRequests, getRequest, getLifecycle,
// listSessions, queryIterations, queryServerSpans) return Promises whose
// answers equal `dsight query` on the same report (compared as JavaScript
// values, same order), an id costs at most two shard fetches, and errors
// carry the CLI's messages.  At the whole run a request-count track stands
// in for the lanes; opening a session scrolls the lanes to it.
// DSIGHT_CATALOG_REQUESTS sets the request count
// (default 20,000, which shards; the 200,000 run is the manual one).
import assert from 'node:assert';
import fs from 'node:fs';
import path from 'node:path';
import { Tap, tmpdir, run, dquery, readCatalog, serve, openViewer, rng, runTest, saveShot } from './harness.mjs';

const tap = new Tap();
const N = Number(process.env.DSIGHT_CATALOG_REQUESTS || 20000);

function same(a, b) {
  if (b === undefined || b === null) return `dsight query gave no answer (${b})`;
  try { assert.deepStrictEqual(a, b); return null; } catch (e) { return e.message.slice(0, 2500); }
}

await runTest(tap, 'catalog', async () => {
  const dir = tmpdir('catalog');
  const ev = path.join(dir, 'ev.json');
  if (!tap.ok(run('gen-capture', ['--preset', 'small', '--requests', String(N), '-o', ev]).code === 0, `gen-capture --requests ${N}`)) return;
  /* searched text that needs Unicode case folding: every 97th request's
   * conversation and every 89th's first server id */
  const doc = JSON.parse(fs.readFileSync(ev, 'utf8'));
  doc.requests.forEach((r, k) => {
    if (k % 97 === 5) r.conversation = `Straße-ÄÖÜ-ΣΑΣ-${k}`;
    if (k % 89 === 3 && (r.server_ids || []).length) r.server_ids[0] = `İD-ǅ-ÉCOLE-${k}`;
  });
  fs.writeFileSync(ev, JSON.stringify(doc));
  const rep = path.join(dir, 'report');
  const t0 = Date.now();
  const b = run('dsight', ['build', ev, '-o', rep]);
  if (!tap.ok(b.code === 0, `dsight build (${Date.now() - t0} ms)`, b.stderr)) return;
  const cat = readCatalog(path.join(rep, 'index.html'));
  const ix = cat.catalog_shards;
  if (!tap.ok(ix && cat.requests.length === 0 && cat.sessions.length === 0, 'index.html holds the catalog index, not the collections')) return;
  tap.ok(ix.counts.requests === N, `index counts ${N} requests`, ix.counts);

  /* sample ids and windows from the CLI's own answers */
  const sess = dquery(rep, 'sessions', { limit: 1000 }).ok.items;
  const D = cat.meta.duration, R = rng(13);
  const reqAt = (k) => dquery(rep, 'requests', { offset: k, limit: 1 }).ok.items[0];
  const r0 = reqAt(Math.floor(N / 2)), r1 = reqAt(N - 1), r2 = reqAt(7);
  const s0 = sess[Math.floor(sess.length / 3)];

  const server = await serve(rep, { gzipHeader: true });
  const v = await openViewer(`${server.base}/index.html`);
  if (!tap.ok(v.readyAt !== null, `viewer ready (${v.readyAt && v.readyAt.toFixed(0)} ms)`, v.errors)) return;
  const api = await v.page.evaluate(() => ({ version: window.traceExplorer.version, d: window.traceExplorer.describe(),
    promise: window.traceExplorer.queryRequests({ limit: 1 }) instanceof Promise }));
  tap.ok(api.version === '3.3' && api.d.version === '3.3', 'API version 3.3');
  tap.ok(api.promise, 'queryRequests returns a Promise when the collections are sharded');
  tap.ok(api.d.counts.requests === N && api.d.counts.sessions === ix.counts.sessions, 'describe() counts come from the index', api.d.counts);

  const win = (a, w) => ({ from: Math.max(0, a), to: Math.min(D, a + w) });
  const cases = [
    ['queryRequests', 'requests', {}],
    ['queryRequests', 'requests', { ...win(D * 0.25, D * 0.1), offset: 3, limit: 7 }],
    ['queryRequests', 'requests', { search: r0.id.slice(-4).toUpperCase() }],
    ['queryRequests', 'requests', { search: 'zz-no-such-thing' }],
    ['queryRequests', 'requests', { search: 'Ü-1', limit: 20 }],
    ['queryRequests', 'requests', { search: 'a"b' }],
    ['queryRequests', 'requests', { search: 'äöü-σας', limit: 30 }],
    ['queryRequests', 'requests', { search: 'STRASSE' }],
    ['queryRequests', 'requests', { search: 'ÄÖÜ-ΣΑΣ-1', sort: '-ttft_ms', limit: 40, offset: 2 }],
    ['queryRequests', 'requests', { search: 'İD-ǅ-ÉCOLE', sort: 'start', limit: 100 }],
    ['queryRequests', 'requests', { search: 'ǆ-école', groupBy: 'status' }],
    ['queryRequests', 'requests', { search: 'sess-', limit: 5, ...win(D * 0.2, D * 0.1) }],
    ['queryRequests', 'requests', { session: r0.session }],
    ['queryRequests', 'requests', { session: [r0.session, r1.session, 'no-such-session'] }],
    ['queryRequests', 'requests', { agent: r1.agent, minTTFT: 50 }],
    ['queryRequests', 'requests', { worker: (r2.workers || [])[0], ...win(D * 0.5, D * 0.2), limit: 50 }],
    ['queryRequests', 'requests', { sort: '-ttft_ms', limit: 10 }],
    ['queryRequests', 'requests', { sort: '-duration', limit: 25, offset: 5 }],
    ['queryRequests', 'requests', { sort: 'status,-output_tokens', limit: 30, ...win(D * 0.1, D * 0.3) }],
    ['queryRequests', 'requests', { sort: '-span_count', limit: 5 }],
    ['queryRequests', 'requests', { offset: N - 50, limit: 1000 }],
    ['queryRequests', 'requests', { groupBy: 'status' }],
    ['queryRequests', 'requests', { groupBy: 'agent', sort: '-count', limit: 20, ...win(D * 0.6, D * 0.3) }],
    ['queryRequests', 'requests', { sort: 'no_such_key' }],
    ['queryRequests', 'requests', { from: D * 0.5, to: D * 0.4 }],
    ['listSessions', 'sessions', {}],
    ['listSessions', 'sessions', { ...win(D * 0.4, D * 0.05), offset: 2, limit: 9 }],
    ['listSessions', 'sessions', { session: s0.id }],
    ['listSessions', 'sessions', { ...win(D * 0.5, 10), offset: 30, limit: 20 }],
    ['listSessions', 'sessions', { agent: (s0.agents || [])[0], sort: '-requests' }],
    ['queryIterations', 'iterations', {}],
    ['queryIterations', 'iterations', { ...win(D * 0.3, D * 0.1), offset: 4, limit: 40 }],
    ['queryIterations', 'iterations', { ...win(D * 0.5, 1), limit: 5 }],
    ['queryIterations', 'iterations', { ...win(D * 0.5, 2), worker: 'decode-0', sort: '-start' }],
    ['queryIterations', 'iterations', { worker: 'prefill-0', limit: 3 }],
    ['queryServerSpans', 'server_spans', {}],
    ['queryServerSpans', 'server_spans', { ...win(D * 0.7, D * 0.2), limit: 13, sort: '-duration' }],
    /* the timeline of requests reads the requests from the shards */
    ['queryTimeline', 'timeline', { of: 'requests', bucket: 10 }],
    ['queryTimeline', 'timeline', { of: 'requests', bucket: 0.5, ...win(D * 0.4, 7) }],
    ['queryTimeline', 'timeline', { of: 'requests', bucket: 5, session: [r0.session, r1.session], minTTFT: 10 }],
    ['queryTimeline', 'timeline', { of: 'requests', bucket: 3, worker: (r2.workers || [])[0], search: 'sess-', ...win(D * 0.1, 30) }],
    ['queryTimeline', 'timeline', { of: 'requests', bucket: 0.01, request: r1.id }],
  ];
  for (let i = 0; i < 4; i++) {
    const a = R() * D;
    cases.push(['queryRequests', 'requests', { ...win(a, D * (0.001 + R() * 0.05)), offset: Math.floor(R() * 10), limit: 1 + Math.floor(R() * 100) }]);
  }
  for (const [m, kind, p] of cases) {
    const cli = dquery(rep, kind, p);
    if (kind === 'timeline' && cli.ok) tap.ok(cli.ok.series.some((x) => x.values.arrivals.some((n) => n > 0)), `dsight query timeline ${JSON.stringify(p)} has arrivals`);
    const t = Date.now();
    const got = await v.page.evaluate(async ([mm, pp]) => {
      try { return { ok: await window.traceExplorer[mm](pp) }; } catch (e) { return { error: e.message }; }
    }, [m, p]);
    const ms = Date.now() - t;
    if (cli.error !== undefined) tap.ok(got.error === cli.error, `${m}(${JSON.stringify(p)}) rejects like the CLI`, [got, cli.error]);
    else tap.ok(!same(got.ok, cli.ok), `${m}(${JSON.stringify(p)}) equals dsight query ${kind} (${ms} ms)`, same(got.ok, cli.ok) || got.error);
  }

  /* a search reads the search-text shards, then only the shards of its
   * matches (the summaries and the page's catalog shard) */
  const sumUrls = new Set((ix.summaries || []).concat(ix.shards).map((d) => d.url));
  const searchUrls = new Set((ix.search || []).map((d) => d.url));
  tap.ok(ix.search && ix.search.length > 0 && ix.search.every((d) => d.catalog_shards.length === 2), `the index lists ${(ix.search || []).length} search-text shards`);
  /* one API call on a reloaded page (a cold shard cache): its answer and
   * the detail/ files it fetched */
  const coldCall = async (m, pp) => {
    await v.page.reload();
    await v.page.evaluate(() => window.__dsReady);
    const fromHere = v.requests.length;
    const got = await v.page.evaluate(async ([mm, q]) => window.traceExplorer[mm](q), [m, pp]);
    const urls = v.requests.slice(fromHere).filter((u) => u.includes('/detail/')).map((u) => u.replace(/^.*?\/(detail\/)/, '$1'));
    return { got, urls };
  };
  {
    const { got: one, urls } = await coldCall('queryRequests', { search: r2.id.toUpperCase() });
    const other = urls.filter((u) => sumUrls.has(u)).length;
    tap.ok(!same(one, dquery(rep, 'requests', { search: r2.id.toUpperCase() }).ok), `search ${r2.id} equals dsight query`);
    tap.ok(other <= 2 && urls.some((u) => searchUrls.has(u)), `search ${r2.id} read ${urls.filter((u) => searchUrls.has(u)).length} search-text shards and ${other} summary or catalog shards (at most 2)`, urls);
  }

  /* a window query on sessions counts the shards whose sessions all
   * overlap it from their session_bounds (their requests run long after
   * the sessions start): a mid-run window reads only the page's shards */
  {
    const w = { ...win(D * 0.5, 10), limit: 20 };
    const { got, urls } = await coldCall('listSessions', w), read = urls.length;
    tap.ok(!same(got, dquery(rep, 'sessions', w).ok), `listSessions(${JSON.stringify(w)}) equals dsight query`);
    tap.ok(read <= 3, `a mid-run session window of ${got.total} sessions read ${read} shards (at most 3)`);
  }
  /* requests in a 1-s window: the time summaries it overlaps, not the
   * per-session ones (the sessions of this capture run as long as it) */
  {
    const T = ix.time_summaries || [];
    const tUrls = new Set(T.map((d) => d.url)), sUrls = new Set((ix.summaries || []).map((d) => d.url));
    for (const w of [{ ...win(D * 0.5, 1), limit: 5 }, { ...win(D * 0.3, 2), sort: '-ttft_ms', limit: 3 }, { ...win(D * 0.7, 1), groupBy: 'status' }]) {
      const { got, urls } = await coldCall('queryRequests', w);
      const need = T.filter((d) => !d.bounds || (d.bounds[0] <= w.to && d.bounds[3] >= w.from)).length;
      tap.ok(!same(got, dquery(rep, 'requests', w).ok), `queryRequests(${JSON.stringify(w)}) equals dsight query (${got.total} requests)`);
      tap.ok(T.length > 2 && urls.filter((u) => tUrls.has(u)).length === need && !urls.some((u) => sUrls.has(u)),
        `it read the ${need} of ${T.length} time summary shards it overlaps and no per-session summary`, urls);
    }
  }

  /* iterations: a 1-s window reads the shards it touches, not those of
   * iterations without start alone (counted from their descriptors) */
  {
    const its = ix.shards.filter((d) => d.kind === 'iterations');
    const w = { ...win(D * 0.5, 1), limit: 5 };
    /* the shards it must read: those it touches, and those without bounds
     * unless they hold only iterations without start */
    const need = its.filter((d) => (d.bounds ? d.bounds[0] <= w.to && d.bounds[3] >= w.from : d.unaligned !== d.iterations)).length;
    const { got, urls } = await coldCall('queryIterations', w), read = urls.length;
    tap.ok(!same(got, dquery(rep, 'iterations', w).ok) && got.unaligned_rows > 0,
      `queryIterations(${JSON.stringify(w)}) equals dsight query (${got.unaligned_rows} unaligned)`);
    tap.ok(read === need && need < its.length, `a 1-s iteration window read ${read} of ${its.length} iteration shards (the ${need} it touches)`);
  }

  /* one id: at most two fetches, from a cold cache for that id */
  for (const r of [r0, r1, r2]) {
    const before = v.requests.length;
    const one = await v.page.evaluate(async (id) => ({ r: await window.traceExplorer.getRequest(id), l: await window.traceExplorer.getLifecycle(id) }), r.id);
    const fetched = v.requests.slice(before).filter((u) => u.includes('/detail/')).length;
    tap.ok(!same(one.r, dquery(rep, 'request', { request: r.id }).ok), `getRequest(${r.id}) equals dsight query request`);
    tap.ok(!same(one.l, dquery(rep, 'lifecycle', { request: r.id }).ok), `getLifecycle(${r.id}) equals dsight query lifecycle`);
    tap.ok(fetched <= 2, `getRequest + getLifecycle(${r.id}) fetched ${fetched} shards (at most 2)`);
  }
  const unknown = await v.page.evaluate(async () => {
    try { await window.traceExplorer.getRequest('no-such-request'); return null; } catch (e) { return e.message; }
  });
  tap.ok(unknown === 'Unknown client request: no-such-request', 'getRequest of an unknown id rejects', unknown);
  const sel = await v.page.evaluate(async (id) => (await window.traceExplorer.selectRequest(id)).request, r1.id);
  tap.ok(sel === r1.id, 'selectRequest loads the request\'s session and selects it', sel);

  /* the Requests tab: top list at once, virtualized sessions, search with progress and cancel */
  const p = v.page;
  const catUrls = new Set(ix.shards.concat(ix.lookup).map((d) => d.url));
  const catFetches = () => v.requests.filter((u) => catUrls.has(u.replace(/^.*?\/(detail\/)/, '$1'))).length;
  const before = catFetches();
  await p.evaluate(() => window.traceExplorer.setState({ from: 0, to: window.traceExplorer.describe().meta.duration, reqSort: '-ttft_ms', request: null }));
  const hint = await p.locator('#req-table .hint').textContent();
  const firstRow = await p.locator('#req-table tr.req-row').first().getAttribute('data-id');
  tap.ok(/top 50 of [0-9]+ requests.*from the report index/.test(hint) && firstRow === ix.top_ttft[0][0],
    'the requests table shows the slowest requests from the index', [hint, firstRow]);
  tap.ok(catFetches() === before, 'the top list needs no catalog shard');
  /* the whole run's lanes cannot draw its requests: a request-count track
   * stands in (from the session shards' counts, then, once the table's
   * summaries are in memory, exact: its columns the requests in flight, as
   * the cache's requests) */
  const approx = await p.$eval('#req-canvas', (c) => c.dataset.counts);
  tap.ok(approx === 'approx', 'at the whole run a request-count track stands in for the lanes at once', approx);
  await p.hover('#req-table th');
  const cnt = await p.waitForFunction(() => {
    const c = document.getElementById('req-canvas'), te = window.traceExplorer;
    if (c.dataset.counts !== 'exact') { te.setState({ from: 0, to: te.describe().meta.duration }); return false; }
    return { counts: [...c.dsCounts.counts], ncol: c.dsCounts.ncol, st: te.getState() };
  }, null, { timeout: 60000, polling: 200 }).then((h) => h.jsonValue(), () => null);
  if (tap.ok(cnt, 'once the table\'s summaries are loaded the counts are exact')) {
    const q = run('dsight', ['query', rep, 'sql', '--sql', 'SELECT start, "end" FROM requests', '--max-rows', '1000000']);
    const all = q.code === 0 ? JSON.parse(q.stdout).rows.map(([start, end]) => ({ start, end })) : [];
    const want = new Array(cnt.ncol).fill(0), w = (cnt.st.to - cnt.st.from) / cnt.ncol;
    for (const r of all) {
      if (!(r.end >= cnt.st.from && r.start <= cnt.st.to)) continue;
      const c0 = Math.max(0, Math.floor((r.start - cnt.st.from) / w)), c1 = Math.min(cnt.ncol - 1, Math.floor((r.end - cnt.st.from) / w));
      for (let c = c0; c <= c1; c++) want[c]++;
    }
    tap.ok(all.length > 3000 && JSON.stringify(cnt.counts) === JSON.stringify(want),
      `its ${cnt.ncol} columns count the requests in flight, as dsight query requests (${all.length} requests, max ${Math.max(...want)})`,
      { got: cnt.counts.slice(0, 20), want: want.slice(0, 20) });
    await saveShot(p, 'catalog-01-request-count-track.png');
  }
  await p.click('button[data-mode=tree]');
  await p.locator('.vlist .sess .muted').first().waitFor({ timeout: 10000 });
  const rows = await p.locator('.vlist .sess').count();
  tap.ok(rows > 0 && rows < 40, `the session list is virtualized (${rows} rows in the DOM for ${ix.counts.sessions} sessions)`);
  const t1 = Date.now();
  await p.locator('.vlist .sess').nth(2).click();
  await p.locator('#sess-open .req').first().waitFor({ timeout: 10000 });
  const opened = await p.locator('#sess-open .hint').textContent();
  tap.ok(/session .*: [0-9]+ requests/.test(opened), `opening a session lists its requests (${Date.now() - t1} ms)`, opened);
  const lane = await p.evaluate(() => {
    const id = document.querySelector('#sess-open .hint').textContent.replace(/^session (.*): [0-9]+ requests$/, '$1');
    const c = document.getElementById('req-canvas'), body = document.querySelector('#sec-requests .sec-body');
    const g = c.dsLayout.rows.find((x) => x.sess === id);
    return { id, y: g ? g.y : null, top: body.scrollTop, max: body.scrollHeight - body.clientHeight, groups: c.dsLayout.rows.length };
  });
  tap.ok(lane.y !== null && Math.abs(lane.top - Math.min(lane.y, lane.max)) <= 1,
    'opening a session scrolls the lanes to its lane', lane);
  await saveShot(p, 'catalog-02-opened-session-lane.png');
  await p.click('button[data-mode=table]');
  await p.evaluate((d) => window.traceExplorer.setState({ from: 0, to: d }), D); /* opening the session narrowed the window */
  await p.fill('#side-requests input[type=search]', r0.id.slice(-4));
  await p.locator('#req-search-progress').waitFor({ timeout: 10000 });
  tap.ok(true, 'a search over the shards shows its progress');
  await p.click('#btn-search-cancel');
  await p.locator('#req-table p.muted').waitFor({ timeout: 10000 });
  tap.ok((await p.locator('#req-table p.muted').textContent()) === 'Search cancelled.', 'the search can be cancelled');
  await p.fill('#side-requests input[type=search]', r0.id.slice(-5));
  await p.waitForFunction(() => /matching the search/.test((document.querySelector('#req-table .hint') || {}).textContent || ''), null, { timeout: 120000 });
  const found = await p.locator('#req-table .hint').textContent();
  const cliN = dquery(rep, 'requests', { search: r0.id.slice(-5), limit: 1 }).ok.total;
  tap.ok(found.includes(`of ${cliN} requests`) && found.includes('matching the search'), 'the search finds what dsight query finds', [found, cliN]);
  /* a link to a request whose session is not loaded: loaded through the
   * id index on open, then selected */
  await p.goto('about:blank');
  await p.goto(`${server.base}/index.html#from=0&to=${D}&tab=requests&request=${encodeURIComponent(r0.id)}`);
  await p.evaluate(() => window.__dsReady);
  const linked = await p.waitForFunction((id) => window.traceExplorer.getState().request === id, r0.id, { timeout: 20000 })
    .then(() => true, () => false);
  tap.ok(linked, `a link to ${r0.id} (session not loaded) selects it after loading its session`);
  tap.ok(v.errors.length === 0, 'no page errors', v.errors);

  /* the index's descriptor lists are decoded after ready: calls made in
   * the ready event itself wait for them and answer exactly */
  const early = await p.context().newPage();
  await early.addInitScript(([id, sid]) => {
    window.__early = new Promise((resolve) => addEventListener('trace-explorer:ready', () => {
      const te = window.traceExplorer, settle = (f) => f().then((ok) => ({ ok }), (e) => ({ error: e.message }));
      Promise.all([settle(() => te.queryRequests({ sort: '-span_count', limit: 4 })), settle(() => te.getRequest(id)),
        settle(() => te.listSessions({ session: sid })), settle(() => te.queryServerSpans({ limit: 3 }))])
        .then((got) => resolve({ got }));
    }, { once: true }));
  }, [r1.id, s0.id]);
  await early.goto(`${server.base}/index.html`);
  const e0 = await early.evaluate(() => window.__early);
  const want = [dquery(rep, 'requests', { sort: '-span_count', limit: 4 }).ok, dquery(rep, 'request', { request: r1.id }).ok,
    dquery(rep, 'sessions', { session: s0.id }).ok, dquery(rep, 'server_spans', { limit: 3 }).ok];
  tap.ok(e0.got.every((g, k) => !same(g.ok, want[k])), 'request calls made in the ready event wait for the index lists and equal dsight query',
    e0.got.map((g, k) => same(g.ok, want[k]) || g.error));
  await early.close();

  /* a page whose index lists cannot be read still opens: the top list
   * shows, the error names the element, and the request calls reject
   * with it */
  const html = fs.readFileSync(path.join(rep, 'index.html'), 'utf8');
  const broken = [
    ['not base64', html.replace(/(id="dsight-catalog-index">)[^<]*/, '$1!!not*base64!!')],
    ['missing', html.replace(/<script type="application\/octet-stream" id="dsight-catalog-index">[^<]*<\/script>/, '')],
  ];
  tap.ok(broken.every(([, h]) => h !== html), 'the page carries #dsight-catalog-index');
  for (const [what, page] of broken) {
    const bs = await serve(rep, { gzipHeader: true, override: (u) => (u === '/index.html' ? { body: page, headers: { 'Content-Type': 'text/html' } } : null) });
    const bv = await openViewer(`${bs.base}/index.html`);
    const got = await bv.page.evaluate(async () => {
      let rej = null;
      try { await window.traceExplorer.queryRequests({ limit: 1 }); } catch (e) { rej = e.message; }
      await new Promise((r) => setTimeout(r, 50));
      return { rej, errors: [...document.querySelectorAll('#errors .error')].map((x) => x.textContent),
        top: document.querySelectorAll('#req-table tr.req-row').length };
    });
    tap.ok(bv.readyAt !== null && got.top > 0, `index lists ${what}: the page opens with the top list (${got.top} rows)`, got);
    tap.ok(/#dsight-catalog-index/.test(got.rej || '') && got.errors.includes(got.rej),
      `index lists ${what}: queryRequests rejects naming the element, and the page shows it`, got);
    await bv.close();
    await bs.close();
  }
});
