// summary.test.mjs: NVTX names at every zoom and the whole-run by-name
// table.  On the medium preset the whole run exceeds the exact display
// budget, so every profile shows summary tracks: the names drawn and the
// hover of a bin are checked against `dsight query nsys` on the bin's
// window; the whole-run by-name table (build-time per-name sums, no range
// shard fetched) equals `dsight query nsys --group-by name`; a whole-run
// metric family draws from the metric summaries.  At the whole run and at
// a 60-s window every depth row's dominant names (per summary bin) equal a
// brute-force computation over `dsight query sql` on nvtx.depth (the
// medium preset at --scale 2, so that 60 s is over the budget too).
import { Tap, dquery, run, saveShot, mediumViewer, runTest } from './harness.mjs';

const tap = new Tap();

/* A brute-force lane summary of profile p's level lv over [from, to] from
 * `dsight query sql` on nvtx (depth as nvtx.depth, 8 and deeper folded):
 * Map 'tid|depth' -> Map bin -> {best total, names: Map name -> total}. */
function bruteDepths(rep, p, lv, from, to, D) {
  const out = new Map(), W = lv.width, nb = lv.bins;
  const b0 = Math.floor(from / W), b1 = Math.min(nb - 1, Math.floor(to / W));
  /* the bins drawn: those from from's to to's, whole */
  const sql = `SELECT tid, depth, start, "end", name FROM nvtx WHERE profile = ${p.id} AND start <= ${b1 === nb - 1 ? D : (b1 + 1) * W} AND "end" >= ${b0 * W}`;
  const r = run('dsight', ['query', rep, 'sql', '--sql', sql, '--max-rows', '1000000']);
  if (r.code !== 0) throw new Error(r.stderr);
  for (const [tid, depth, s0, e0, name] of JSON.parse(r.stdout).rows) {
    if (!(e0 >= 0) || !(s0 <= D)) continue;
    const s = Math.max(s0, 0), e = Math.min(e0, D), key = `${tid}|${Math.min(depth, 8)}`;
    let m = out.get(key);
    if (!m) out.set(key, m = new Map());
    for (let i = Math.max(b0, Math.min(nb - 1, Math.floor(s / W))); i <= Math.min(b1, nb - 1, Math.floor(e / W)); i++) {
      const lo = i * W, hi = i === nb - 1 ? D : (i + 1) * W, ov = Math.max(0, Math.min(e, hi) - Math.max(s, lo));
      let c = m.get(i);
      if (!c) m.set(i, c = new Map());
      const k = name === null ? '(no name)' : name;
      c.set(k, (c.get(k) || 0) + ov);
    }
  }
  return out;
}

/* Compares every summary track's depth rows with bruteDepths: the same
 * (thread, depth) rows and bins, and each bin's name covers the most time
 * (up to rounding: ties are broken by count and name index). */
async function checkDepthRows(page, rep, cat, D, from, to, what) {
  const drawn = await page.$$eval('#sec-nsight canvas', (cs) => cs.map((c) => (c.dataset.mode === 'summary' ? DSSummary.dominant(c.dsSummary) : null)));
  const level = await page.$$eval('#sec-nsight canvas', (cs) => cs.map((c) => +c.dataset.level));
  let rows = 0, bins = 0, deep = 0;
  const bad = [];
  for (const [i, dom] of drawn.entries()) {
    if (!dom) continue;
    const p = cat.profiles[i], lv = p.nvtx_summary.levels[level[i]];
    const want = bruteDepths(rep, p, lv, from, to, D);
    const got = new Set(dom.map((r) => `${r.tid}|${r.depth}`));
    if (got.size !== [...want.keys()].filter((k) => want.get(k).size).length) bad.push({ profile: p.id, rows: [...got], want: [...want.keys()] });
    for (const r of dom) {
      const m = want.get(`${r.tid}|${r.depth}`) || new Map();
      rows++;
      if (r.depth > 0) deep++;
      if (r.bins.length !== m.size) bad.push({ profile: p.id, tid: r.tid, depth: r.depth, bins: r.bins.length, want: m.size });
      for (const [bin, name] of r.bins) {
        const c = m.get(bin), nm = name < 0 ? '(no name)' : p.names[name];
        bins++;
        const best = c ? Math.max(...c.values()) : -1;
        if (!c || !(c.get(nm) >= best - 1e-9 * Math.max(1, best))) bad.push({ profile: p.id, tid: r.tid, depth: r.depth, bin, name: nm, want: c && [...c].sort((a, b) => b[1] - a[1]).slice(0, 3) });
        if (bad.length > 5) break;
      }
    }
  }
  tap.ok(rows > 0 && deep > 0 && bad.length === 0, `${what}: ${rows} depth rows (${deep} below the top) and their ${bins} bins name what covers most time at that depth (dsight query sql on nvtx.depth)`, bad.slice(0, 6));
}

/* The CLI's ranges of profile p, thread tid and depth (8: 8 and deeper)
 * that touch summary bin `bin` of width w (the build's rule: floor(start/w)
 * <= bin <= floor(end/w) after clipping to the run), counted per name. */
function binCounts(rep, p, tid, depth, bin, w, D, nb) {
  const a = bin * w, b = bin === nb - 1 ? D : (bin + 1) * w;
  const sql = `SELECT start, "end", name FROM nvtx WHERE profile = ${p} AND tid = '${tid}' AND min(depth, 8) = ${depth} AND start <= ${b} AND "end" >= ${a}`;
  const res = run('dsight', ['query', rep, 'sql', '--sql', sql, '--max-rows', '100000']);
  const counts = new Map();
  for (const [s, e, name] of JSON.parse(res.stdout).rows) {
    const lo = Math.min(nb - 1, Math.floor(Math.max(s, 0) / w)), hi = Math.min(nb - 1, Math.floor(Math.min(e, D) / w));
    if (lo > bin || hi < bin) continue;
    const k = name === null ? '(no name)' : name;
    counts.set(k, (counts.get(k) || 0) + 1);
  }
  return counts;
}

async function main() {
  const mv = await mediumViewer(tap, 'summary', { scale: 2 });
  if (!mv) return;
  const { rep, cat, D, page, server } = mv;
  const te = (fn, arg) => page.evaluate(fn, arg);

  /* 1. whole-run zoom: one summary track per profile, names drawn */
  await te((d) => { window.traceExplorer.setState({ tab: 'nsight', from: 0, to: d, sel: null, profile: null }); return window.traceExplorer.whenDetailsReady(); }, D);
  const tracks = await page.$$eval('#sec-nsight canvas', (cs) => cs.map((c) => ({ mode: c.dataset.mode, labels: +c.dataset.labels || 0,
    level: c.dataset.level === undefined ? null : +c.dataset.level, runs: JSON.parse(c.dataset.runs || '[]'), aria: c.getAttribute('aria-label') })));
  const over = cat.profiles.map((p) => p.event_chunks.reduce((a, d) => a + d.count, 0) > 20000);
  tap.ok(over.some(Boolean) && tracks.length === cat.profiles.length && tracks.every((t, i) => t.mode === (over[i] ? 'summary' : 'exact')),
    `the whole run draws summary tracks for the ${over.filter(Boolean).length} profiles over the 20,000-row budget, exact ranges for the others`, tracks.map((t) => t.mode));
  tap.ok(tracks.every((t) => t.labels > 0), `every track labels names at the whole-run zoom (${tracks.map((t) => t.labels).join(', ')} labels)`);
  await saveShot(page, 'summary-01-whole-run-names.png');
  await checkDepthRows(page, rep, cat, D, 0, D, 'whole run');
  await te((d) => { window.traceExplorer.setState({ from: d / 2 - 30, to: d / 2 + 30 }); return window.traceExplorer.whenDetailsReady(); }, D);
  await saveShot(page, 'summary-01b-60s-depth-rows.png');
  await checkDepthRows(page, rep, cat, D, D / 2 - 30, D / 2 + 30, '60-s window');
  await te((d) => { window.traceExplorer.setState({ from: 0, to: d }); return window.traceExplorer.whenDetailsReady(); }, D);

  /* each label names ranges of its thread inside its cell's bins */
  let checked = 0;
  const bad = [];
  for (const [i, t] of tracks.entries()) {
    if (t.mode !== 'summary') continue;
    const p = cat.profiles[i], lv = p.nvtx_summary.levels[t.level];
    for (const [name, b0, b1, tid] of t.runs.slice(0, 4)) {
      const label = p.names[name];
      const res = dquery(rep, 'nsys', { profile: p.id, from: b0 * lv.width, to: Math.min(D, (b1 + 1) * lv.width), name: label, groupBy: 'tid', limit: 1000 }).ok;
      checked++;
      if (!res.items.some((g) => g.key === tid && g.count > 0)) bad.push({ profile: p.id, label, tid, b0, b1 });
    }
  }
  tap.ok(checked > 0 && bad.length === 0, `${checked} labels name ranges of their thread in their span (dsight query nsys --group-by tid)`, bad);

  /* 2. hover: the bin's names and counts equal the CLI's ranges of that bin */
  const i0 = tracks.findIndex((t) => t.mode === 'summary'), t0 = tracks[i0], p0 = cat.profiles[i0], lv0 = p0.nvtx_summary.levels[t0.level];
  const [, bin, , tid0, y0, depth0] = t0.runs[0];
  const box = await page.$$eval('#sec-nsight canvas', (cs, i) => { const r = cs[i].getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width }; }, i0);
  const x = await te(([d, w, t]) => DSUI.scale(0, d, w).x(t), [D, box.w, (bin + 0.5) * lv0.width]);
  await page.mouse.move(box.x + x, box.y + y0 + 6);
  const tip = await page.$eval('#tooltip', (t) => ({ hidden: t.hidden, head: (t.querySelector('b') || {}).textContent,
    rows: [...t.querySelectorAll('table.tip-names tr')].slice(1).map((tr) => [tr.children[0].textContent, tr.children[1].textContent]) }));
  const want = binCounts(rep, p0.id, tid0, depth0, bin, lv0.width, D, lv0.bins);
  const wantRows = tip.rows.map(([n]) => [n, (want.get(n) || 0).toLocaleString('en-US')]);
  tap.ok(!tip.hidden && tip.rows.length > 0 && tip.rows.length <= p0.nvtx_summary.top, `hovering bin ${bin} lists its top ${tip.rows.length} names`, tip);
  tap.ok(JSON.stringify(tip.rows) === JSON.stringify(wantRows) && new RegExp(`: ${want.size} names?`).test(tip.head),
    `the hover's counts and name total equal the CLI's ranges of tid ${tid0} at depth ${depth0} in bin ${bin} (${want.size} names)`, { tip, want: [...want] });
  await saveShot(page, 'summary-02-hover.png');

  /* 3. the whole-run by-name table: build-time sums, equal to the CLI */
  const eventUrls = new Set(cat.profiles.flatMap((p) => (p.event_chunks || []).map((d) => '/' + d.url)));
  const fetched0 = server.log.filter((u) => eventUrls.has(u)).length;
  await te((d) => { window.traceExplorer.setState({ tab: 'nsight', from: 0, to: d, sel: [0, d] }); return window.traceExplorer.whenDetailsReady(); }, D);
  const rows = await page.$$eval('#byname-box tr.byname-row', (trs) => trs.map((t) => [t.dataset.name, t.children[1].textContent]));
  const cli = dquery(rep, 'nsys', { groupBy: 'name', limit: 200 }).ok;
  const wantNames = cli.items.map((g) => [g.key === null ? '' : g.key, g.count.toLocaleString('en-US')]);
  tap.ok(rows.length > 0 && JSON.stringify(rows) === JSON.stringify(wantNames), `the whole-run by-name table lists ${rows.length} names as dsight query nsys --group-by name`, { rows: rows.slice(0, 4), want: wantNames.slice(0, 4) });
  const api = await te(() => window.traceExplorer.queryNsys({ groupBy: 'name', limit: 200 }));
  tap.ok(JSON.stringify(api) === JSON.stringify(cli), 'queryNsys({groupBy: name}) over the whole run equals the CLI (count, total, mean, max, time inside)',
    { api: api.items.slice(0, 2), cli: cli.items.slice(0, 2) });
  const api2 = await te((d) => window.traceExplorer.queryNsys({ from: 0, to: d, groupBy: 'name', sort: ['-duration_total'], limit: 5, offset: 2 }), D);
  const cli2 = dquery(rep, 'nsys', { from: 0, to: D, groupBy: 'name', sort: '-duration_total', limit: 5, offset: 2 }).ok;
  tap.ok(JSON.stringify(api2) === JSON.stringify(cli2), 'sorted by total, offset 2: equal to the CLI');
  const sub = cli.items[0].key.slice(0, 3);
  const api3 = await te(([d, n]) => window.traceExplorer.queryNsys({ from: 0, to: d, groupBy: 'name', name: n, profile: 1 }), [D, sub]);
  const cli3 = dquery(rep, 'nsys', { from: 0, to: D, groupBy: 'name', name: sub, profile: 1 }).ok;
  tap.ok(JSON.stringify(api3) === JSON.stringify(cli3), `with a name filter ("${sub}") and a profile: equal to the CLI`);
  const sampleUrls = new Set(cat.profiles.flatMap((p) => ((p.cpu || {}).chunks || []).map((d) => '/' + d.url)));
  const samples0 = server.log.filter((u) => sampleUrls.has(u)).length;
  const cpuApi = await te(() => window.traceExplorer.queryCpu({ limit: 50 }));
  const cpuCli = dquery(rep, 'cpu', { limit: 50 }).ok;
  tap.ok(JSON.stringify(cpuApi) === JSON.stringify(cpuCli) && server.log.filter((u) => sampleUrls.has(u)).length === samples0,
    `whole-run queryCpu reads the build's stack counts (no sample shard) and equals dsight query cpu (${cpuApi.total_samples} samples)`);
  const fetched1 = server.log.filter((u) => eventUrls.has(u)).length;
  tap.ok(fetched1 === fetched0, `no NVTX range shard was fetched for the whole-run tables (${fetched1 - fetched0} fetched)`);
  await saveShot(page, 'summary-03-whole-run-by-name.png');

  /* 4. a narrower window still over the budget uses a finer level */
  await te((d) => { window.traceExplorer.setState({ from: d * 0.4, to: d * 0.6, sel: null }); return window.traceExplorer.whenDetailsReady(); }, D);
  const mid = await page.$$eval('#sec-nsight canvas', (cs) => cs.map((c) => [c.dataset.mode, +c.dataset.level, +c.dataset.labels || 0]));
  tap.ok(mid.every(([m, l, n]) => (m === 'summary' && l > tracks[0].level && n > 0) || m === 'exact'),
    `a ${(D * 0.2).toFixed(0)}-s window draws a finer summary level with names, or exact ranges`, mid);

  /* 5. a whole-run metric family draws from the metric summaries */
  const fam = cat.metrics.find((m) => m.summary_chunks && cat.metrics.filter((x) => x.name === m.name).length > 1).name;
  const famSeries = cat.metrics.filter((m) => m.name === fam);
  const pointUrls = new Set(famSeries.flatMap((m) => m.chunks.map((d) => '/' + d.url)));
  const before = server.log.filter((u) => pointUrls.has(u)).length;
  await te(([d, f]) => { window.traceExplorer.setState({ from: 0, to: d, sel: null, tab: 'metrics', pinnedMetrics: [f] }); return window.traceExplorer.whenMetricsReady(); }, [D, fam]);
  const status = await page.$eval('#sec-metrics .chart-status', (e) => e.textContent);
  const fetchedPts = server.log.filter((u) => pointUrls.has(u)).length - before;
  tap.ok(/512-bin summaries/.test(status) && fetchedPts === 0, `the whole-run chart of ${fam} (${famSeries.length} series) reads the summaries, no point shard (${status})`, { fetchedPts });
  const cbox = await page.locator('#sec-metrics .chart canvas').first().boundingBox();
  await page.mouse.move(cbox.x + cbox.width * 0.5, cbox.y + cbox.height / 2);
  const tipText = await page.$eval('#tooltip', (t) => (t.hidden ? '' : t.textContent));
  tap.ok(/mean [-\d.,]+( [^ ()]+)? \([-\d.,]+( [^ ()]+)? – [-\d.,]+( [^ ()]+)?, [\d,]+ points\)/.test(tipText), 'hovering it gives each series\' bin mean, min and max', tipText.slice(0, 300));
  const stats = await te((f) => window.traceExplorer.queryMetrics({ name: f, points: true, limit: 1000 }), fam);
  const pts = stats.items.reduce((a, it) => a + it.points_total, 0);
  tap.ok(status.includes(`${pts.toLocaleString('en-US')} points in the window`), `its point count is exact (${pts}, queryMetrics)`, status);
  await saveShot(page, 'summary-04-metric-family-whole-run.png');

  /* 6. a window whose 8192-bin summaries are a quarter pixel wide, of a
   * family with more points there than 2-pixel columns, draws from the fine
   * summary shards its bounds overlap, no point shard */
  const fine = cat.metric_summary.fine;
  const tw = await te(() => DSUI.trackWidth());
  const W = fine.width * tw * 4, f0 = Math.max(0, D / 2 - W / 2), f1 = f0 + W;
  const dense = (m) => Number.isInteger(m.fine_group) && m.chunks.reduce((a, c) => a + c.count, 0) * W / D > tw;
  const famF = cat.metrics.find((m) => dense(m) && cat.metrics.filter((x) => x.name === m.name).length > 1);
  if (tap.ok(famF, `a family with more points than columns in a ${W.toFixed(2)}-s window`)) {
    const fser = cat.metrics.filter((m) => m.name === famF.name);
    const fineUrls = new Set(fine.groups.flat().map((d) => '/' + d.url));
    const ptUrls = new Set(fser.flatMap((m) => m.chunks.map((d) => '/' + d.url)));
    const want = new Set(fser.flatMap((m) => (Number.isInteger(m.fine_group) ? fine.groups[m.fine_group] : []))
      .filter((d) => d.bounds[0] <= f1 && d.bounds[3] >= f0).map((d) => '/' + d.url));
    await te(([a, b]) => { window.traceExplorer.setState({ from: a, to: b, sel: null, tab: 'metrics', pinnedMetrics: [] }); return window.traceExplorer.whenMetricsReady(); }, [f0, f1]);
    const mark = server.log.length;
    await te((f) => { window.traceExplorer.setState({ pinnedMetrics: [f] }); return window.traceExplorer.whenMetricsReady(); }, famF.name);
    const got = server.log.slice(mark);
    const st2 = await page.$eval('#sec-metrics .chart-status', (e) => e.textContent);
    const readFine = got.filter((u) => fineUrls.has(u)), readPts = got.filter((u) => ptUrls.has(u));
    tap.ok(/8192-bin summaries/.test(st2) && readPts.length === 0 && readFine.length > 0 && readFine.every((u) => want.has(u)),
      `the ${W.toFixed(2)}-s chart of ${famF.name} (${fser.length} series) reads ${readFine.length} fine summary shards (those its window overlaps), no point shard`, { st2, readFine, readPts: readPts.length });
    const table = await page.$$eval('#details table.grid tr', (trs) => trs.slice(1).map((tr) => [...tr.children].map((td) => td.textContent)));
    const exact = await te(([f, a, b]) => window.traceExplorer.queryMetrics({ name: f, from: a, to: b, limit: 1000 }), [famF.name, f0, f1]);
    tap.ok(table.length === fser.length && exact.items.length > 0, `the window table lists the ${fser.length} series`, { rows: table.length, items: exact.items.length });
    await saveShot(page, 'summary-05-metric-family-fine.png');
  }
  tap.ok(mv.v.errors.length === 0, 'no page error', mv.v.errors);
}

await runTest(tap, 'summary', main);
