// analysis.test.mjs: API 3.2/3.3 parity: queryNsys (rows with depth) with sort / groupBy /
// request+phase, queryRequests with sort / groupBy and queryTimeline equal
// `dsight query` (same rows, groups, series and key order, compared as
// JavaScript values) on random windows of the medium preset, served with and
// without Content-Encoding: gzip; usage errors carry the CLI's message.
import assert from 'node:assert';
import fs from 'node:fs';
import path from 'node:path';
import { Tap, tmpdir, run, dquery, readCatalog, serve, openViewer, rng, runTest } from './harness.mjs';

const tap = new Tap();

function diff(a, b) {
  try { assert.deepStrictEqual(a, b); } catch (e) { return e.message.slice(0, 2500); }
  const ka = JSON.stringify(Object.keys(a)), kb = JSON.stringify(Object.keys(b));
  if (ka !== kb) return `key order ${ka} vs ${kb}`;
  const ia = (a.items || a.series || [])[0], ib = (b.items || b.series || [])[0];
  if (ia && ib && JSON.stringify(Object.keys(ia)) !== JSON.stringify(Object.keys(ib))) return `item key order ${Object.keys(ia)} vs ${Object.keys(ib)}`;
  return null;
}

function plan(cat) {
  const D = cat.meta.duration, R = rng(14), out = [];
  const win = () => { const a = R() * D * 0.9, w = D * (0.005 + R() * 0.2); return { from: a, to: Math.min(D, a + w) }; };
  const reqs = cat.requests.filter((r) => typeof r.first === 'number' && (r.workers || []).length);
  const pickReq = () => reqs[Math.floor(R() * reqs.length)].id;
  const nsysSorts = ['-duration', 'name,-start', '-end', 'profile,-duration', ['name', 'duration']];
  const groupSorts = [undefined, 'count', '-duration_max', 'key', '-duration_mean,key'];
  for (let i = 0; i < 10; i++) {
    out.push(['nsys', { ...win(), sort: nsysSorts[i % 5], offset: Math.floor(R() * 5), limit: 1 + Math.floor(R() * 60) }]);
    out.push(['nsys', { ...win(), groupBy: ['name', 'worker', 'profile', 'tid'][i % 4], sort: groupSorts[i % 5], limit: 1 + Math.floor(R() * 30) }]);
  }
  out.push(['nsys', { groupBy: 'name' }], ['nsys', { groupBy: 'name', name: 'step' }], ['nsys', { sort: '-duration', limit: 20 }]);
  /* depth (API 3.3): nested ranges of a short window, and by name */
  out.push(['nsys', { from: D * 0.5, to: D * 0.5 + 0.3, limit: 400 }], ['nsys', { from: D * 0.3, to: D * 0.32, name: 'mlp', sort: '-start', limit: 50 }]);
  for (let i = 0; i < 6; i++) {
    const phase = ['prefill', 'decode', 'whole'][i % 3];
    out.push(['nsys', { request: pickReq(), phase, limit: 30, sort: i % 2 ? '-duration' : undefined }]);
    out.push(['nsys', { request: pickReq(), phase, groupBy: 'name', limit: 10 }]);
    out.push(['timeline', { request: pickReq(), phase, of: ['nsys', 'requests', 'cpu', 'metrics'][i % 4], bucket: 0.05 + R(), limit: 5 }]);
  }
  const two = (k) => [...new Set(cat.requests.map((r) => r[k]))].slice(0, 2);
  out.push(['requests', { session: two('session'), sort: '-ttft_ms', limit: 20 }], ['requests', { agent: two('agent'), groupBy: 'status' }],
    ['requests', { worker: [...new Set(cat.requests.flatMap((r) => r.workers || []))].slice(0, 2), groupBy: 'worker' }],
    ['requests', { session: ['x', ''] }]);
  out.push(['sessions', { sort: '-requests,id', limit: 10 }], ['sessions', { sort: ['-duration'] }], ['iterations', { sort: '-duration,worker', limit: 30 }],
    ['iterations', { sort: 'worker,-start', offset: 3, limit: 10 }], ['server_spans', { sort: '-duration', limit: 20 }], ['server_spans', { sort: 'name,-end' }],
    ['iterations', { sort: 'rank' }]);
  const rsorts = ['-ttft_ms', 'duration', '-output_tokens,id', 'status,-start', '-span_count', 'session,agent,-ttft_ms'];
  for (let i = 0; i < 6; i++) {
    out.push(['requests', { ...win(), sort: rsorts[i], limit: 1 + Math.floor(R() * 50), offset: Math.floor(R() * 3) }]);
    out.push(['requests', { ...(i % 2 ? win() : {}), groupBy: ['session', 'agent', 'worker', 'status', 'client_kind', 'worker'][i],
      sort: [undefined, '-ttft_ms.p99', 'duration.p50', 'key', '-input_tokens', '-ttft_ms.mean'][i] }]);
  }
  for (let i = 0; i < 8; i++) {
    const of = ['requests', 'nsys', 'cpu', 'metrics'][i % 4];
    const w = win();
    const p = { ...w, of, bucket: (w.to - w.from) / (3 + Math.floor(R() * 40)) };
    if (of === 'nsys' && i >= 4) p.groupBy = 'name';
    if (of === 'metrics') p.limit = 10;
    out.push(['timeline', p]);
  }
  out.push(['nsys', { profile: 99, groupBy: 'name' }], ['timeline', { of: 'nsys', profile: 99, bucket: 1 }]);
  const noCpu = cat.profiles.find((p) => !p.cpu);
  if (noCpu) out.push(['timeline', { of: 'cpu', profile: noCpu.id, bucket: D / 10 }]);
  const noWorkers = cat.requests.find((r) => !(r.workers || []).length);
  if (noWorkers) out.push(['nsys', { request: noWorkers.id, groupBy: 'name' }], ['timeline', { request: noWorkers.id, bucket: 0.5 }]);
  out.push(['timeline', { bucket: 1 }], ['timeline', { of: 'nsys', bucket: 1 }], ['timeline', { of: 'nsys', groupBy: 'name', bucket: D / 7, limit: 5, offset: 2 }]);
  return out;
}

const METHOD = { nsys: 'queryNsys', requests: 'queryRequests', timeline: 'queryTimeline', sessions: 'listSessions',
  iterations: 'queryIterations', server_spans: 'queryServerSpans' };

let deepRows = 0; /* nsys rows compared with depth > 0 */
async function compare(page, rep, cases, label) {
  let n = 0;
  for (const [kind, params] of cases) {
    const cli = dquery(rep, kind, params);
    const got = await page.evaluate(async ([m, p]) => {
      try { return { ok: await window.traceExplorer[m](p) }; } catch (e) { return { error: e.message }; }
    }, [METHOD[kind], params]);
    const name = `${label}: ${kind} ${JSON.stringify(params)}`;
    if (!cli.ok) { tap.ok(got.error === cli.error, `${name}: same error as dsight query`, { browser: got.error, cli: cli.error }); continue; }
    if (!got.ok) { tap.ok(false, `${name}: browser threw`, got.error); continue; }
    const d = diff(got.ok, cli.ok);
    if (tap.ok(!d, `${name} equals dsight query (total ${cli.ok.total})`, d)) n++;
    if (kind === 'nsys' && !d) deepRows += (cli.ok.items || []).filter((it) => it.depth > 0).length;
  }
  return n;
}

async function main() {
  const dir = tmpdir('analysis');
  const ev = path.join(dir, 'medium.json');
  if (!tap.ok(run('gen-capture', ['--preset', 'medium', '-o', ev]).code === 0, 'gen-capture --preset medium')) return;
  const rep = path.join(dir, 'report');
  const b = run('dsight', ['build', ev, '-o', rep]);
  if (!tap.ok(b.code === 0, 'dsight build', b.stderr)) return;
  const cat = readCatalog(path.join(rep, 'index.html'));
  const cases = plan(cat);
  tap.ok(cases.length >= 60, `${cases.length} analysis cases planned`);
  const D = cat.meta.duration;
  const errs = [
    ['timeline', {}], ['timeline', { bucket: -1 }], ['timeline', { bucket: 1, of: 'kernels' }], ['timeline', { bucket: D / 20000 }],
    /* not an error: a report without GPU rows answers no series, as the CLI */
    ['timeline', { bucket: 1, of: 'gpu' }],
    ['nsys', { phase: 'prefill' }], ['nsys', { request: cat.requests[0].id, phase: 'middle' }],
    ['nsys', { request: cat.requests[0].id, from: 1 }], ['nsys', { sort: 'size' }], ['nsys', { groupBy: 'color' }],
    ['nsys', { groupBy: 'name', sort: 'start' }], ['requests', { sort: '-speed' }], ['requests', { groupBy: 'model' }],
    ['nsys', { request: 'no-such-request' }],
  ];
  const noFirst = cat.requests.find((r) => typeof r.first !== 'number');
  if (noFirst) errs.push(['nsys', { request: noFirst.id, phase: 'prefill' }]);

  for (const gz of [true, false]) {
    const s = await serve(rep, { gzipHeader: gz });
    const v = await openViewer(`${s.base}/index.html`);
    const label = gz ? 'Content-Encoding: gzip' : 'no Content-Encoding';
    if (!tap.ok(v.readyAt !== null, `ready (${label})`, v.errors)) return;
    const ver = await v.page.evaluate(() => [window.traceExplorer.version, window.traceExplorer.describe().version]);
    tap.ok(ver[0] === '3.3' && ver[1] === '3.3', `API version 3.3 (${label})`, ver);
    const ok = await compare(v.page, rep, gz ? cases : cases.filter((_, i) => i % 2 === 0), label);
    tap.note(`${ok} answers equal dsight query (${label})`);
    if (gz) tap.ok(deepRows > 100, `queryNsys rows carry nvtx.depth as the CLI does (${deepRows} nested rows compared)`);
    if (gz) await compare(v.page, rep, errs, 'usage error');
    if (gz) {
      /* the CLI cannot pass an empty list through flags: the documented text */
      const empty = await v.page.evaluate(() => { try { window.traceExplorer.queryRequests({ worker: [] }); return null; } catch (e) { return e.message; } });
      tap.ok(empty === 'worker must not be an empty list', 'an empty worker list is a usage error', empty);
    }
    tap.ok(v.errors.length === 0, `no page error (${label})`, v.errors);
    await v.close();
  }
}

await runTest(tap, 'analysis', main);
