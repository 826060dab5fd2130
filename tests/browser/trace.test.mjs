// trace.test.mjs: "Chrome trace" (open in Perfetto): the selection
// exported as Trace Event Format JSON holds, as complete events on the
// profile's pid and the thread's tid, exactly the NVTX rows `dsight query
// nsys` gives for the window (times in microseconds, names, source rows,
// depths), a thread_name for every thread, the CPU samples as instant
// events named by their leaf frame, the pinned family's points as
// counters, and the window's requests as async slices; `dsight export
// --format chrome-trace` writes the same events for the same selection.
import fs from 'node:fs';
import { Tap, dquery, run, saveShot, mediumViewer, runTest } from './harness.mjs';

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

  /* CPU samples: instant events on their thread's track, named by the
   * leaf frame, equal the cache's samples of the window (of a profile
   * with samples there) */
  const sampled = (p) => (p.cpu && p.cpu.chunks || []).some((d) => d.bounds[0] <= w[1] && d.bounds[3] >= w[0]);
  const cp = cat.profiles.find(sampled);
  if (tap.ok(cp, 'a profile has CPU samples in the window')) {
    const q = run('dsight', ['query', rep, 'sql', '--sql', `SELECT time, tid, symbol FROM cpu_self WHERE profile = ${cp.id} AND time >= ${w[0]} AND time <= ${w[1]}`, '--max-rows', '1000000']);
    const wantS = q.code === 0 ? JSON.parse(q.stdout).rows.map(([t0, g, sym]) => JSON.stringify([t0 * 1e6, g, sym === null ? '(unknown stack)' : sym])).sort() : [];
    const ce2 = JSON.parse(await page.evaluate(([a, b, id]) => window.traceExplorer.exportChromeTrace({ from: a, to: b, profile: id }), [w[0], w[1], cp.id])).traceEvents;
    const named2 = new Set(ce2.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => `${e.pid}/${e.tid}`));
    const is = ce2.filter((e) => e.ph === 'i');
    const gotS = is.map((e) => JSON.stringify([e.ts, e.args.global_tid, e.name])).sort();
    tap.ok(wantS.length > 0 && JSON.stringify(gotS) === JSON.stringify(wantS) && is.every((e) => e.cat === 'cpu' && e.s === 't' && e.pid === cp.id && named2.has(`${e.pid}/${e.tid}`) && Array.isArray(e.args.stack) && e.args.stack[0] === e.name),
      `profile ${cp.id}'s ${is.length} instant events are its ${wantS.length} CPU samples of the window (ts, thread, leaf frame; the stack in args)`, { got: gotS.slice(0, 3), want: wantS.slice(0, 3), stderr: q.stderr });
    const cli2 = run('dsight', ['export', rep, '--format', 'chrome-trace', '--from', String(w[0]), '--to', String(w[1]), '--profile', String(cp.id), '--no-requests']);
    const ci = cli2.code === 0 ? JSON.parse(cli2.stdout).traceEvents.filter((e) => e.ph === 'i').map((e) => JSON.stringify(e)).sort() : null;
    tap.ok(ci && JSON.stringify(ci) === JSON.stringify(is.map((e) => JSON.stringify(e)).sort()), 'dsight export writes the same instant events', { code: cli2.code, stderr: cli2.stderr, ci: ci && ci.slice(0, 2), vi: is.slice(0, 2) });
  }

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

  /* the CLI writes the same events for the same selection: the worker's
   * profiles, its series of the pinned family, the window's requests */
  const mine = await page.evaluate(([a, b, wk]) => window.traceExplorer.exportChromeTrace({ from: a, to: b, worker: wk }), [w[0], w[1], prof.worker]);
  const cli = run('dsight', ['export', rep, '--format', 'chrome-trace', '--from', String(w[0]), '--to', String(w[1]), '--worker', prof.worker, '--metrics', fam]);
  const canon = (t) => JSON.parse(t).traceEvents.map((e) => JSON.stringify(e)).sort();
  const ve = canon(mine), ce = cli.code === 0 ? canon(cli.stdout) : [];
  const cdiff = ce.filter((e, i) => e !== ve[i]).slice(0, 3);
  tap.ok(cli.code === 0 && ve.length > 200 && ce.length === ve.length && cdiff.length === 0,
    `dsight export --format chrome-trace writes the viewer's ${ve.length} events for the same window and worker`, { code: cli.code, stderr: cli.stderr, lengths: [ce.length, ve.length], cdiff, vdiff: ve.filter((e, i) => e !== ce[i]).slice(0, 3) });
  await saveShot(page, 'trace-01-exported.png');
  tap.ok(v.errors.length === 0, 'no page error', v.errors);
}

await runTest(tap, 'trace', main);
