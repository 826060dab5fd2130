// trace.test.mjs: "Chrome trace" (open in Perfetto): the selection
// exported as Trace Event Format JSON holds, as complete events on the
// profile's pid and the thread's tid, exactly the NVTX rows `dsight query
// nsys` gives for the window (times in microseconds, names, source rows,
// depths), a thread_name for every thread, the pinned family's points as
// counters, and the window's requests as async slices.
import fs from 'node:fs';
import { Tap, dquery, saveShot, mediumViewer, runTest } from './harness.mjs';

const tap = new Tap();

/* Every item of a paged CLI answer. */
function all(rep, kind, params) {
  const items = [];
  for (let off = 0; ; off += 1000) {
    const r = dquery(rep, kind, Object.assign({}, params, { offset: off, limit: 1000 }));
    if (!r.ok) throw new Error(r.error);
    items.push(...r.ok.items);
    if (off + 1000 >= r.ok.total) return items;
  }
}

async function main() {
  const mv = await mediumViewer(tap, 'trace');
  if (!mv) return;
  const { rep, cat, D, v, page } = mv;
  const prof = cat.profiles[0], fam = cat.metrics[0].name;
  const w = [D * 0.4, D * 0.43];
  await page.evaluate(([id, f, a, b]) => { window.traceExplorer.setState({ tab: 'nsight', profile: id, pinnedMetrics: [f], from: a - 1, to: b + 1, sel: [a, b] }); return window.traceExplorer.whenMetricsReady(); },
    [prof.id, fam, ...w]);
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#btn-export-trace')]);
  const text = fs.readFileSync(await dl.path(), 'utf8');
  let tr = null;
  try { tr = JSON.parse(text); } catch (e) { tap.ok(false, 'the download is JSON', e.message); return; }
  tap.ok(Array.isArray(tr.traceEvents) && dl.suggestedFilename().endsWith('-trace.json'), `the Chrome trace button downloads Trace Event Format JSON (${dl.suggestedFilename()}, ${tr.traceEvents.length} events)`);
  const evs = tr.traceEvents;
  tap.ok(evs.every((e) => typeof e.ph === 'string' && Number.isInteger(e.pid) && Number.isInteger(e.tid) && (e.ph === 'M' || Number.isFinite(e.ts))),
    'every event has ph, integer pid and tid, and a numeric ts (metadata aside)');

  /* NVTX: complete events equal the CLI's rows of the window */
  const rows = all(rep, 'nsys', { profile: prof.id, from: w[0], to: w[1] });
  const key = (pid, tid, name, ts, dur, row, depth) => JSON.stringify([pid, tid, name, ts, dur, row, depth]);
  const want = rows.map((it) => key(it.profile, it.tid === null ? 0 : it.tid, it.name, it.start * 1e6, (it.end - it.start) * 1e6, it.rowid, it.depth)).sort();
  const xs = evs.filter((e) => e.ph === 'X');
  const got = xs.map((e) => key(e.pid, e.tid, e.name, e.ts, e.dur, e.args.source_row, e.args.depth)).sort();
  const diff = got.filter((g, i) => g !== want[i]).slice(0, 3);
  tap.ok(rows.length > 200 && got.length === want.length && diff.length === 0,
    `its ${got.length} complete events are dsight query nsys's ${want.length} rows of the window (pid, tid, name, ts, dur in µs, source_row, depth)`, { diff, want: want.slice(0, 3) });
  tap.ok(xs.every((e) => e.cat === 'nvtx') && rows.some((it) => it.depth > 0), 'NVTX events carry cat "nvtx", and nested rows a depth above 0');
  const named = new Set(evs.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => `${e.pid}/${e.tid}`));
  const threads = new Set(xs.map((e) => `${e.pid}/${e.tid}`));
  tap.ok(threads.size > 0 && [...threads].every((t) => named.has(t)), `each of the ${threads.size} threads has a thread_name`);
  tap.ok(evs.some((e) => e.ph === 'M' && e.name === 'process_name' && e.pid === prof.id && e.args.name.includes(prof.worker)), 'the profile is a process named after its worker');

  /* metrics: counters equal the CLI's points of the pinned family */
  const ms = dquery(rep, 'metrics', { name: fam, from: w[0], to: w[1], points: true, limit: 1000 }).ok;
  const wantPts = ms.items.flatMap((s) => s.points.filter((p) => typeof p[1] === 'number').map((p) => p[1])).sort((a, b) => a - b);
  const cs = evs.filter((e) => e.ph === 'C');
  const gotPts = cs.map((e) => e.args.value).sort((a, b) => a - b);
  tap.ok(wantPts.length > 0 && JSON.stringify(gotPts) === JSON.stringify(wantPts) && new Set(cs.map((e) => e.name)).size === ms.items.filter((s) => s.points.length).length,
    `the pinned family's ${ms.total} series are ${new Set(cs.map((e) => e.name)).size} counter tracks with its ${wantPts.length} points`);

  /* requests: async slices of the window's requests */
  const reqs = all(rep, 'requests', { from: w[0], to: w[1] });
  const begins = evs.filter((e) => e.ph === 'b' && e.cat === 'request' && e.name !== 'prefill' && e.name !== 'decode');
  tap.ok(reqs.length > 0 && JSON.stringify(begins.map((e) => e.args.id).sort()) === JSON.stringify(reqs.map((r) => r.id).sort()) &&
    begins.every((e) => evs.some((x) => x.ph === 'e' && x.id === e.id && x.name === e.name)), `the window's ${reqs.length} requests are async slices, each begun and ended`);

  /* the API answers the same text for the same selection */
  const api = await page.evaluate(([a, b, id]) => window.traceExplorer.exportChromeTrace({ from: a, to: b, profile: id }), [w[0], w[1], prof.id]);
  tap.ok(api === text, 'exportChromeTrace({from, to, profile}) returns the same trace');
  const bad = await page.evaluate(() => window.traceExplorer.exportChromeTrace({ from: 5, to: 1 }).then(() => 'ok', (e) => e.message));
  tap.ok(bad !== 'ok', `an invalid window is refused (${bad})`);
  await saveShot(page, 'trace-01-exported.png');
  tap.ok(v.errors.length === 0, 'no page error', v.errors);
}

await runTest(tap, 'trace', main);
