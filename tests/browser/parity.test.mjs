// parity.test.mjs: window.traceExplorer answers equal `dsight query` on the
// same report's SQLite cache (compared as JavaScript values) for >= 50
// windows of the medium preset (shard-boundary windows, offsets, name
// filters, points, a carried conflicting setting), served from localhost
// with and without Content-Encoding: gzip; no request leaves localhost; the
// decoded-shard cache stays within its budget while panning a capture
// larger than it.
import assert from 'node:assert';
import fs from 'node:fs';
import path from 'node:path';
import { Tap, tmpdir, run, dquery, readCatalog, withCatalog, serve, openViewer, rng, cleanup } from './harness.mjs';

const tap = new Tap();

function same(a, b) {
  try { assert.deepStrictEqual(a, b); return null; } catch (e) { return e.message.slice(0, 2500); }
}

/* Like same(), but b must be a real answer: two undefined values (a
 * failed dsight query and a missing browser value) are not "equal". */
function sameAnswer(a, b) {
  if (b === undefined || b === null) return `dsight query gave no answer to compare with (${b})`;
  if (a === undefined || a === null) return `the browser gave no answer (${a})`;
  return same(a, b);
}

/* The windows and parameters to compare, chosen from the catalog. */
function plan(cat) {
  const D = cat.meta.duration, R = rng(7), out = [];
  const clamp = (a, b) => [Math.max(0, Math.min(a, D * 0.999)), Math.min(D, Math.max(b, Math.min(a, D * 0.999) + 1e-6))];
  const win = (a, b) => { const [x, y] = clamp(a, b); return { from: x, to: y }; };
  for (const p of cat.profiles) {
    const ch = p.event_chunks || [];
    for (let i = 0; i + 1 < ch.length && i < 3; i++) {
      const edge = (ch[i].bounds[2] + ch[i + 1].bounds[0]) / 2;
      out.push(['nsys', { profile: p.id, ...win(edge - D * 0.004, edge + D * 0.004) }, `profile ${p.id} across shard ${i}/${i + 1}`]);
      out.push(['nsys', { profile: p.id, ...win(edge - D * 0.01, edge + D * 0.01), offset: 37, limit: 25 }, `profile ${p.id} across shard ${i}/${i + 1}, offset 37`]);
    }
    out.push(['nsys', { profile: p.id }, `profile ${p.id} whole run (total only streams every shard)`]);
    const nm = p.names.find((n) => /[a-z]{3}/i.test(n)) || p.names[0];
    if (nm) {
      const needle = nm.slice(1, Math.min(nm.length, 6)).toUpperCase();
      out.push(['nsys', { profile: p.id, name: needle, ...win(D * 0.2, D * 0.45) }, `profile ${p.id} name ~ ${JSON.stringify(needle)}`]);
    }
    if (p.cpu) {
      out.push(['cpu', { profile: p.id }, `cpu profile ${p.id} whole run`]);
      out.push(['cpu', { profile: p.id, ...win(D * 0.3, D * 0.35), limit: 5, offset: 2 }, `cpu profile ${p.id} window, offset 2`]);
    }
  }
  for (let i = 0; i < 8; i++) {
    const a = R() * D, w = D * (0.001 + R() * 0.05);
    out.push(['nsys', { ...win(a, a + w), offset: Math.floor(R() * 20), limit: 1 + Math.floor(R() * 200) }, `all profiles random window ${i}`]);
  }
  out.push(['nsys', { from: 0, to: D, offset: 5000, limit: 1000 }, 'all profiles, deep offset']);
  out.push(['nsys', { ...win(D * 0.5, D * 0.6), limit: 0 }, 'limit 0 counts only']);
  out.push(['nsys', { name: 'no-such-range-name' }, 'name filter matching nothing']);
  out.push(['cpu', {}, 'cpu all profiles']);
  for (let i = 0; i < 4; i++) { const a = R() * D; out.push(['cpu', win(a, a + D * 0.02), `cpu random window ${i}`]); }
  out.push(['metrics', {}, 'metrics defaults (series page, stats)']);
  out.push(['metrics', { offset: 10, limit: 7, ...win(D * 0.1, D * 0.9) }, 'metrics series paging']);
  const settings = cat.metrics.filter((s) => s.temporal === 'setting');
  const conflicted = settings.filter((s) => (s.conflict_timestamps || []).length);
  for (const s of conflicted.slice(0, 3)) {
    for (const t of s.conflict_timestamps.slice(0, 2)) {
      const a = Math.max(0, t) + (t >= 0 ? 1e-6 : 0);
      if (a < D) out.push(['metrics', { name: s.name, worker: s.worker, from: a, to: Math.min(D, a + D * 0.1), points: true }, `setting ${s.name}/${s.worker} just after conflict at ${t}`, 'carried']);
    }
  }
  for (const s of settings.slice(0, 2)) out.push(['metrics', { name: s.name, points: true, ...win(D * 0.4, D * 0.7) }, `setting ${s.name} mid-run with points`]);
  const names = [...new Set(cat.metrics.map((s) => s.name))];
  for (let i = 0; i < 6 && names.length; i++) {
    const n = names[Math.floor(R() * names.length)], a = R() * D;
    out.push(['metrics', { name: n, points: true, ...win(a, a + D * (0.01 + R() * 0.3)) }, `metrics ${n} with points`]);
  }
  const ranked = cat.metrics.find((s) => s.rank !== null && s.rank !== undefined && Number.isInteger(Number(s.rank)));
  if (ranked) out.push(['metrics', { worker: ranked.worker, rank: Number(ranked.rank) }, `metrics worker ${ranked.worker} rank ${ranked.rank} (rank as text)`]);
  const big = cat.metrics.find((s) => (s.chunks || []).length > 1);
  if (big) {
    const e = (big.chunks[0].bounds[2] + big.chunks[1].bounds[0]) / 2;
    out.push(['metrics', { name: big.name, worker: big.worker, points: true, ...win(e - D * 0.01, e + D * 0.01) }, `metrics ${big.name} across shard boundary`]);
  }
  return out;
}

const METHOD = { nsys: 'queryNsys', cpu: 'queryCpu', metrics: 'queryMetrics' };

async function compareAll(page, report, cases, label) {
  let carriedConflict = false;
  for (const [kind, params, name, tag] of cases) {
    const cli = dquery(report, kind, params);
    if (!cli.ok) { tap.ok(false, `${label}: ${kind} ${name}: dsight query failed`, cli.error); continue; }
    const got = await page.evaluate(async ([m, p]) => {
      try { return { ok: await window.traceExplorer[m](p) }; } catch (e) { return { error: e.message }; }
    }, [METHOD[kind], params]);
    if (!got.ok) { tap.ok(false, `${label}: ${kind} ${name}: browser threw`, got.error); continue; }
    const diff = same(got.ok, cli.ok);
    const orderOk = JSON.stringify(Object.keys(got.ok)) === JSON.stringify(Object.keys(cli.ok)) &&
      (!cli.ok.items.length || JSON.stringify(Object.keys(got.ok.items[0])) === JSON.stringify(Object.keys(cli.ok.items[0])));
    tap.ok(!diff && orderOk, `${label}: ${kind} ${name} (total ${cli.ok.total}, ${cli.ok.items.length} items) equals dsight query`,
      diff || `field order: ${JSON.stringify(Object.keys(got.ok))} vs ${JSON.stringify(Object.keys(cli.ok))}`);
    if (tag === 'carried' && cli.ok.items.some((it) => (it.carried_setting || []).length > 1)) carriedConflict = true;
  }
  return carriedConflict;
}

async function main() {
  const dir = tmpdir('parity');
  const ev = path.join(dir, 'medium.json');
  const g = run('gen-capture', ['--preset', 'medium', '-o', ev]);
  if (!tap.ok(g.code === 0, 'gen-capture --preset medium', g.stderr)) return;
  const rep = path.join(dir, 'report');
  const b = run('dsight', ['build', ev, '-o', rep]);
  if (!tap.ok(b.code === 0 && fs.existsSync(path.join(rep, 'index.html')) && fs.existsSync(path.join(rep, 'trace-data.sqlite')),
    'dsight build writes index.html, detail/ and trace-data.sqlite', b.stderr)) return;
  const cat = readCatalog(path.join(rep, 'index.html'));
  const cases = plan(cat);
  const D = cat.meta.duration;
  tap.ok(cases.length >= 50, `${cases.length} query cases planned (>= 50)`);

  /* 1. served with Content-Encoding: gzip */
  const s1 = await serve(rep, { gzipHeader: true });
  const v1 = await openViewer(`${s1.base}/index.html`);
  tap.ok(v1.readyAt !== null, `trace-explorer:ready fired (Content-Encoding: gzip) after ${v1.readyAt && v1.readyAt.toFixed(0)} ms`, v1.errors);
  if (v1.readyAt === null) return;
  const api = await v1.page.evaluate(() => ({ v: window.traceExplorer.version, frozen: Object.isFrozen(window.traceExplorer),
    d: window.traceExplorer.describe().version }));
  tap.ok(api.v === '3.3' && api.d === '3.3' && api.frozen, 'window.traceExplorer is frozen, version 3.3', api);
  const carried = await compareAll(v1.page, rep, cases, 'gzip-encoded');
  tap.ok(carried, 'a carried setting with conflicting values was compared');

  /* catalog kinds (synchronous methods) */
  const r0 = cat.requests[Math.floor(cat.requests.length / 2)];
  const syncCases = [
    ['queryRequests', 'requests', {}], ['queryRequests', 'requests', { from: D * 0.25, to: D * 0.5, offset: 3, limit: 7 }],
    ['queryRequests', 'requests', { search: r0.id.slice(-3).toUpperCase() }], ['queryRequests', 'requests', { session: r0.session, minTTFT: 150 }],
    ['queryRequests', 'requests', { agent: r0.agent, worker: (r0.workers || [])[0] }],
    ['listSessions', 'sessions', {}], ['listSessions', 'sessions', { from: D * 0.5, to: D, limit: 3 }],
    ['queryIterations', 'iterations', { from: D * 0.1, to: D * 0.3, limit: 50 }], ['queryIterations', 'iterations', { worker: cat.iterations.length ? cat.iterations[0].worker : null, rank: 0, offset: 2 }],
    ['queryServerSpans', 'server_spans', {}],
  ];
  for (const [m, kind, p] of syncCases) {
    const cli = dquery(rep, kind, p);
    const got = await v1.page.evaluate(([mm, pp]) => { try { return { ok: window.traceExplorer[mm](pp) }; } catch (e) { return { error: e.message }; } }, [m, p]);
    tap.ok(!sameAnswer(got.ok, cli.ok), `${m}(${JSON.stringify(p)}) equals dsight query ${kind} (total ${cli.ok && cli.ok.total})`, got.error || cli.error || same(got.ok, cli.ok));
  }
  const one = await v1.page.evaluate((id) => ({ r: window.traceExplorer.getRequest(id), l: window.traceExplorer.getLifecycle(id),
    profiles: window.traceExplorer.listProfiles(), families: window.traceExplorer.listMetricFamilies() }), r0.id);
  const cliR = dquery(rep, 'request', { request: r0.id }).ok, cliL = dquery(rep, 'lifecycle', { request: r0.id }).ok;
  tap.ok(!sameAnswer(one.r, cliR), 'getRequest equals dsight query request', sameAnswer(one.r, cliR));
  tap.ok(!sameAnswer(one.l, cliL), 'getLifecycle equals dsight query lifecycle', sameAnswer(one.l, cliL));
  const cliP = (dquery(rep, 'profiles', { limit: 1000 }).ok || {}).items, cliF = (dquery(rep, 'families', { limit: 1000 }).ok || {}).items;
  /* API 3.2's listProfiles keeps each profile's name_definitions, which the
   * CLI gives only under --fields name_definitions (the lean default) */
  const cliD = (dquery(rep, 'profiles', { limit: 1000, fields: 'name_definitions' }).ok || {}).items || [];
  const lean = one.profiles.map((x) => { const y = Object.assign({}, x); delete y.name_definitions; return y; });
  tap.ok(!sameAnswer(lean, cliP) && cliP.length > 0, 'listProfiles equals the profiles items', sameAnswer(lean, cliP));
  tap.ok(!sameAnswer(one.profiles.map((x) => ({ name_definitions: x.name_definitions })), cliD),
    'listProfiles name_definitions equal profiles --fields name_definitions', sameAnswer(one.profiles.map((x) => ({ name_definitions: x.name_definitions })), cliD));
  tap.ok(!sameAnswer(one.families, cliF) && cliF.length > 0, 'listMetricFamilies equals the families items', sameAnswer(one.families, cliF));

  /* validation messages equal the CLI's */
  const bad = [[{ from: 5, to: 1 }], [{ limit: 1001 }], [{ offset: -1 }], [{ from: -1 }], [{ to: cat.meta.duration * 2 }]];
  for (const [p] of bad) {
    const cli = dquery(rep, 'nsys', p);
    const got = await v1.page.evaluate(async (pp) => {
      try { await window.traceExplorer.queryNsys(pp); return null; } catch (e) { return e.message; }
    }, p);
    tap.ok(cli.error && got === cli.error, `invalid ${JSON.stringify(p)} throws the CLI's message`, { browser: got, cli: cli.error });
  }
  const unknown = await v1.page.evaluate(() => { try { window.traceExplorer.selectRequest('no-such-request'); return null; } catch (e) { return e.message; } });
  tap.ok(unknown === 'Unknown client request: no-such-request', 'selectRequest of an unknown id throws', unknown);

  /* exportSelection */
  const exp = await v1.page.evaluate(async () => {
    window.traceExplorer.selectRange(1, 2);
    return window.traceExplorer.exportSelection();
  });
  const expNsys = dquery(rep, 'nsys', { from: 1, to: 2, limit: 200 });
  tap.ok(exp && exp.schema === 'srtctl-trace/1' && exp.view.from === 1 && exp.view.to === 2 && !sameAnswer(exp.nsys, expNsys.ok) &&
    Array.isArray(exp.sources) && exp.metrics && exp.metrics.items.every((s) => !('points' in s)),
  'exportSelection has the view, its nsys page (limit 200) and metrics without points');

  const port1 = new URL(s1.base).host;
  const foreign1 = v1.requests.filter((u) => !(u.startsWith(`http://${port1}/`) || u.startsWith('data:') || u.startsWith('blob:')));
  tap.ok(v1.requests.length > 1 && foreign1.length === 0, `no request leaves localhost (${v1.requests.length} requests)`, foreign1);
  tap.ok(v1.errors.length === 0, 'no page error', v1.errors);
  await v1.close();

  /* 2. served without Content-Encoding (the viewer gunzips) */
  const s2 = await serve(rep, { gzipHeader: false });
  const v2 = await openViewer(`${s2.base}/index.html`);
  tap.ok(v2.readyAt !== null, 'trace-explorer:ready fired (no Content-Encoding)', v2.errors);
  if (v2.readyAt !== null) await compareAll(v2.page, rep, cases.filter((_, i) => i % 3 === 0), 'plain-gzip');
  const port2 = new URL(s2.base).host;
  const foreign2 = v2.requests.filter((u) => !(u.startsWith(`http://${port2}/`) || u.startsWith('data:') || u.startsWith('blob:')));
  tap.ok(foreign2.length === 0, 'no request leaves localhost (no Content-Encoding)', foreign2);
  await v2.close();

  /* 3. cache budget: the same report with a 1 MiB budget, panned across the run */
  const decodedTotal = cat.profiles.reduce((a, p) => a + (p.event_chunks || []).reduce((x, d) => x + d.decoded_bytes, 0), 0);
  const budget = 1 << 20;
  const small = JSON.parse(JSON.stringify(cat));
  small.delivery.cache_bytes = budget;
  const html = withCatalog(fs.readFileSync(path.join(rep, 'index.html'), 'utf8'), small);
  const s3 = await serve(rep, { gzipHeader: true, override: (u) => (u === '/small.html' ? { body: html, headers: { 'Content-Type': 'text/html' } } : null) });
  const v3 = await openViewer(`${s3.base}/small.html`);
  tap.ok(decodedTotal > budget, `capture's NVTX shards decode to ${decodedTotal} bytes > budget ${budget}`);
  const pan = await v3.page.evaluate(async () => {
    const te = window.traceExplorer, D = te.describe().meta.duration;
    let max = 0;
    const tick = setInterval(() => { max = Math.max(max, te.detailDataStatus().decodedBytes); }, 2);
    const steps = [];
    for (let i = 0; i < 16; i++) {
      te.selectRange((i * D) / 16, ((i + 1) * D) / 16);
      te.setState({ profile: i % 2 ? null : 0, tab: 'nsight' });
      await te.whenDetailsReady();
      await te.whenMetricsReady();
      const st = te.detailDataStatus();
      steps.push(st.decodedBytes);
      max = Math.max(max, st.decodedBytes);
    }
    const whole = await te.queryNsys({ limit: 3, offset: 1000 });
    max = Math.max(max, te.detailDataStatus().decodedBytes);
    clearInterval(tick);
    return { max, steps, status: te.detailDataStatus(), whole };
  });
  tap.ok(pan.status.maxDecodedBytes === budget && pan.max <= budget && pan.max > 0,
    `decodedBytes never exceeded the budget while panning (max ${pan.max} <= ${budget})`, pan);
  const wholeCli = dquery(rep, 'nsys', { limit: 3, offset: 1000 });
  tap.ok(!sameAnswer(pan.whole, wholeCli.ok), 'a whole-run query streams every shard through the small cache and still equals dsight query',
    sameAnswer(pan.whole, wholeCli.ok));
  await v3.close();
}

try {
  await main();
} catch (e) {
  tap.ok(false, 'parity test crashed', e.stack);
} finally {
  await cleanup();
}
console.log(`# ${tap.passed} passed, ${tap.failed} failed`);
process.exit(tap.failed ? 1 : 0);
