// gpu.test.mjs: GPU activity in the viewer, on a report built from a
// synthetic Nsight export with kernels, copies, memsets, CUDA-graph
// replays, two devices and two streams each.  Every expectation comes
// from `dsight query` on the same report: the rows each GPU track draws
// at a prefill's zoom (and that names are drawn there), the summary bins
// of the whole run (every bin's first name covers the most time of its
// track and bin, by `dsight query sql` on the gpu view), the selected
// NVTX range's projected kernels and GPU busy time (the nsys row's
// kernels and gpu_busy), the flow arrow of a hovered kernel (its launch on
// its thread), and queryGpu / queryTimeline({of: 'gpu'}) / queryNsys
// answers (nsys rows carry their gpu_* columns).
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { Tap, ROOT, dquery, run, tmpdir, serve, openViewer, readCatalog, runTest, saveShot } from './harness.mjs';

const tap = new Tap();

function sql(rep, text) {
  const r = run('dsight', ['query', rep, 'sql', '--sql', text, '--max-rows', '1000000']);
  if (r.code !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout).rows;
}

async function main() {
  const dir = tmpdir('gpu');
  const exp = path.join(dir, 'export.sqlite');
  const g = spawnSync('python3', [path.join(ROOT, 'scripts/gen-nsys-export'), exp, '--ranges', '2000', '--kernels', '30000',
    '--devices', '2', '--streams', '2', '--graph-size', '20', '--duration-s', '10'], { encoding: 'utf8' });
  if (!tap.ok(g.status === 0, 'gen-nsys-export', g.stderr)) return;
  const rep = path.join(dir, 'report');
  const b = run('dsight', ['build', '--nsys-sqlite', exp, '-o', rep]);
  if (!tap.ok(b.code === 0, 'dsight build', b.stderr)) return;
  const cat = readCatalog(path.join(rep, 'index.html')), p = cat.profiles[0], D = cat.meta.duration;
  tap.ok(p.gpu_chunks.length > 1 && p.gpu_summary && p.gpu_summary.levels.length === 3 && p.gpu_summary.tracks.length === 4,
    `the core catalog has the profile's GPU shards (${p.gpu_chunks.length}) and a summary over its 4 device/stream tracks`);
  tap.ok(p.gpu_chunks.reduce((n, d) => n + d.count, 0) === p.gpu.rows, `the GPU shards hold every GPU row (${p.gpu.rows})`);

  /* the shortest prefill with a dozen kernels or more, by the CLI */
  const pre = dquery(rep, 'nsys', { name: 'prefill', limit: 1000 }).ok.items.filter((x) => x.kernels >= 12)
    .sort((x, y) => (x.end - x.start) - (y.end - y.start))[0];
  if (!tap.ok(pre, 'the export has a prefill range with kernels')) return;
  const server = await serve(rep, { gzipHeader: true });
  const v = await openViewer(`${server.base}/index.html`, { viewport: { width: 1400, height: 900 } });
  if (!tap.ok(v.readyAt !== null, 'viewer ready', v.errors)) return;
  const page = v.page, te = (f, a) => page.evaluate(f, a);
  const gpuCanvas = () => te(() => { const c = document.querySelector('canvas[data-gpu-profile="0"]'); return { mode: c.dataset.mode, labels: +c.dataset.labels, d: c.dsGpu }; });

  /* a prefill's zoom: every GPU row of the window drawn on its track */
  const win = [pre.gpu_start - 0.001, pre.gpu_end + 0.001];
  const item = (await te(([a, b]) => window.traceExplorer.queryNsys({ from: a, to: b, name: 'prefill', limit: 1000 }), [pre.start, pre.end]))
    .items.find((x) => x.rowid === pre.rowid);
  await te(([a, b, ev]) => { window.traceExplorer.setState({ tab: 'nsight', from: a, to: b, nsysEvent: ev }); return window.traceExplorer.whenDetailsReady(); }, [...win, item]);
  let c = await gpuCanvas();
  const cli = dquery(rep, 'gpu', { from: win[0], to: win[1], limit: 1000 }).ok;
  const want = new Map();
  for (const it of cli.items) {
    const k = `${it.device}|${it.stream}`;
    if (!want.has(k)) want.set(k, []);
    want.get(k).push(`${it.start}|${it.end}|${it.name}`);
  }
  const got = new Map(c.d.lanes.map((l) => [`${l.device}|${l.stream}`, l.rows.map((r) => `${r[0]}|${r[1]}|${p.gpu_names[r[2]]}`)]));
  const same = (a, b) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
  tap.ok(c.mode === 'exact' && cli.total > 20 && cli.total === [...got.values()].reduce((n, l) => n + l.length, 0) &&
    same(want.keys(), got.keys()) && [...want].every(([k, l]) => same(l, got.get(k))),
  `at the prefill's zoom each device/stream track draws exactly its rows of dsight query gpu on the window (${cli.total} rows, ${want.size} tracks)`);
  tap.ok(c.labels > 0, `kernels are named at this zoom (${c.labels} labels)`);
  const order = c.d.lanes.map((l) => [l.device, l.stream]);
  tap.ok(JSON.stringify(order) === JSON.stringify(order.slice().sort((x, y) => x[0] - y[0] || x[1] - y[1])), 'tracks in device, then stream order');

  /* the selected NVTX range: its projected kernels and busy time */
  const proj = sql(rep, `SELECT ordinal FROM gpu WHERE profile = 0 AND kind = 'kernel' AND launch_tid = '${pre.global_tid}'` +
    ` AND launch_start BETWEEN ${pre.start} AND ${pre.end} ORDER BY ordinal`).map((r) => r[0]);
  tap.ok(proj.length === pre.kernels && same(c.d.selected.map(String), proj.map(String)),
    `selecting the prefill outlines its ${pre.kernels} projected kernels (dsight query sql on the gpu view)`, { got: c.d.selected, want: proj });
  const box = await te(() => { const x = document.getElementById('gpu-box'); return { kernels: +x.dataset.kernels, busy: +x.dataset.busy, text: x.textContent }; });
  tap.ok(box.kernels === pre.kernels && box.busy === pre.gpu_busy && /GPU busy/.test(box.text),
    `the detail pane shows its GPU busy time: ${box.busy} s over ${box.kernels} kernels = the nsys row's gpu_busy and kernels`, { box, pre });
  await saveShot(page, 'gpu-01-prefill-selected.png'); /* the prefill, its kernels outlined, its busy time */
  /* zoomed in from the whole run, the GPU tracks show under the NVTX
   * lanes without scrolling: the whole run's taller nesting is not kept
   * as blank rows above them */
  const seen = await te(() => {
    const c = document.querySelector('canvas[data-gpu-profile="0"]');
    let pane = c.parentElement;
    while (pane && !/(auto|scroll)/.test(getComputedStyle(pane).overflowY)) pane = pane.parentElement;
    const r = c.getBoundingClientRect(), b = pane ? pane.getBoundingClientRect() : { top: 0, bottom: innerHeight };
    return { top: r.top, bottom: r.bottom, paneTop: b.top, paneBottom: b.bottom };
  });
  tap.ok(seen.top >= seen.paneTop && seen.bottom <= seen.paneBottom,
    'at the prefill\'s zoom the GPU tracks are in view without scrolling', seen);

  /* hovering a kernel draws the flow arrow from its launch */
  await te(() => document.querySelector('canvas[data-gpu-profile="0"]').scrollIntoView({ block: 'end' }));
  const target = await te(() => {
    const cv = document.querySelector('canvas[data-gpu-profile="0"]'), r = cv.getBoundingClientRect(), d = cv.dsGpu;
    const s = DSUI.scale(window.traceExplorer.getState().from, window.traceExplorer.getState().to, DSUI.trackWidth());
    for (const [i, l] of d.lanes.entries()) {
      for (const row of l.rows) {
        const a = Math.max(s.x(row[0]), s.x0), z = Math.min(s.x(row[1]), s.x1);
        if (z - a > 6) return { x: r.left + (a + z) / 2, y: r.top + 4 + i * 16 + 7, start: row[0], device: l.device, stream: l.stream };
      }
    }
    return null;
  });
  if (tap.ok(target, 'a kernel wide enough to hover')) {
    await page.mouse.move(target.x, target.y);
    await page.waitForTimeout(100);
    const flow = await te(() => { const f = document.getElementById('gpu-flow'); return f && !f.hidden ? JSON.parse(f.dataset.flow) : null; });
    const row = dquery(rep, 'gpu', { from: Math.max(0, target.start - 1e-6), to: target.start + 1e-6, limit: 1000 }).ok.items
      .find((x) => x.start === target.start && x.device === target.device && x.stream === target.stream);
    tap.ok(flow && row && flow.launch_tid === row.launch_tid && flow.launch_start === row.launch_start && flow.start === row.start &&
      Math.abs(flow.to[0] - target.x) < target.x && flow.to[1] > flow.from[1],
    `hovering a kernel draws a flow arrow from its launch (${row && row.launch_name} on ${row && row.launch_tid} at ${row && row.launch_start}) down to it`, { flow, row });
    await page.mouse.move(5, 5);
  }

  /* the whole run: summary tracks whose bins name what covers most time */
  await te(() => { window.traceExplorer.setState({ from: 0, to: window.traceExplorer.describe().meta.duration, nsysEvent: null }); return window.traceExplorer.whenDetailsReady(); });
  c = await gpuCanvas();
  tap.ok(c.mode === 'summary' && c.labels > 0, `the whole run (${p.gpu.rows} rows, over the budget) draws the GPU summary with ${c.labels} names`);
  await saveShot(page, 'gpu-02-whole-run-summary.png');
  if (c.mode === 'summary') {
    const W = c.d.width, nb = p.gpu_summary.levels[c.d.level].bins;
    const brute = new Map(); /* device|stream|bin -> name -> [total, count] */
    for (const [dev, st, s0, e0, name] of sql(rep, 'SELECT device, stream, start, "end", name FROM gpu WHERE profile = 0')) {
      if (!(e0 >= 0) || !(s0 <= D)) continue;
      const s = Math.max(s0, 0), e = Math.min(e0, D);
      for (let i = Math.min(nb - 1, Math.floor(s / W)); i <= Math.min(nb - 1, Math.floor(e / W)); i++) {
        const hi = i === nb - 1 ? D : (i + 1) * W, ov = Math.max(0, Math.min(e, hi) - Math.max(s, i * W)), k = `${dev}|${st}|${i}`;
        if (!brute.has(k)) brute.set(k, new Map());
        const m = brute.get(k), x = m.get(name) || [0, 0];
        m.set(name, [x[0] + ov, x[1] + 1]);
      }
    }
    let bins = 0;
    const bad = [];
    for (const l of c.d.lanes) {
      for (const [bin, name, total, count] of l.bins) {
        bins++;
        const m = brute.get(`${l.device}|${l.stream}|${bin}`), x = m && m.get(p.gpu_names[name]);
        const best = m ? Math.max(...[...m.values()].map((y) => y[0])) : -1;
        if (!x || x[1] !== count || Math.abs(x[0] - total) > 1e-6 || x[0] < best - 1e-6) bad.push({ lane: [l.device, l.stream], bin, name: p.gpu_names[name], total, count, want: x, best });
      }
    }
    const drawnBins = c.d.lanes.reduce((n, l) => n + l.bins.length, 0);
    tap.ok(bins > 0 && bad.length === 0 && drawnBins === [...brute.keys()].length,
      `each of the ${bins} summary bins names the row covering most of it, with its count and time (dsight query sql on gpu)`, bad.slice(0, 5));
  }

  /* the API answers equal the CLI's */
  const cases = [
    ['gpu', {}],
    ['gpu', { from: win[0], to: win[1], sort: '-duration', limit: 7 }],
    ['gpu', { from: win[0], to: win[1], sort: ['name', '-queue_delay'], offset: 3, limit: 5 }],
    ['gpu', { from: 2, to: 2.5, gpu_kind: 'memcpy', fields: 'start,name,bytes,launch_name,nvtx_name' }],
    ['gpu', { name: 'gemm', device: 1, stream: 13, limit: 3 }],
    ['gpu', { groupBy: 'name' }],
    ['gpu', { from: 1, to: 3, groupBy: 'nvtx' }],
    ['gpu', { from: 1, to: 3, groupBy: 'device', sort: '-count' }],
    ['gpu', { from: 1, to: 3, groupBy: 'gpu_kind' }],
    ['gpu', { from: 4, to: 4.0001 }],
    ['gpu', { profile: 3 }],
    ['gpu', { sort: 'bogus' }],
    ['timeline', { of: 'gpu', bucket: 1 }],
    ['timeline', { of: 'gpu', bucket: 0.004, from: win[0], to: win[1] }],
    ['timeline', { of: 'gpu', bucket: 0.5, device: 1, stream: 7, name: 'vllm' }],
    ['nsys', { from: win[0], to: win[1], limit: 40 }],
    ['nsys', { name: 'prefill', sort: '-duration', limit: 25 }],
  ];
  const call = { gpu: 'queryGpu', timeline: 'queryTimeline', nsys: 'queryNsys' };
  for (const [kind, params] of cases) {
    const want2 = dquery(rep, kind, params);
    const got2 = await te(async ([k, q]) => {
      try {
        return { ok: await window.traceExplorer[k](q) };
      } catch (e) { return { error: e.message }; }
    }, [call[kind], params]);
    const w = want2.ok !== undefined ? { ok: want2.ok } : { error: want2.error };
    tap.ok(JSON.stringify(got2) === JSON.stringify(w) && (kind !== 'nsys' || w.ok.items.some((x) => x.kernels > 0)),
      `${call[kind]}(${JSON.stringify(params)}) equals dsight query ${kind}${kind === 'nsys' ? ' (rows with their projected kernels and GPU busy time)' : ''}`,
      { got: JSON.stringify(got2).slice(0, 1500), want: JSON.stringify(w).slice(0, 1500) });
  }
  tap.ok(v.errors.length === 0, 'no page error', v.errors);

  /* whole-run answers read the build's GPU summaries: a fresh page fetches
   * only the GPU shards across the run's bounds (names) or in its last
   * second (1-s timeline), and answers as the CLI */
  tap.ok(p.gpu_summary.names && p.gpu_summary.bins, 'the GPU summary carries the per-name sums and the per-second bins');
  const urlsOf = (lo, hi) => new Set(p.gpu_chunks.filter((d) => d.bounds[0] <= hi && d.bounds[3] >= lo).map((d) => d.url));
  const lastB = Math.ceil(D) - 1;
  for (const [what, params, allowed] of [['queryGpu', { groupBy: 'name' }, new Set([...urlsOf(0, 0), ...urlsOf(D, D)])],
    ['queryTimeline', { of: 'gpu', bucket: 1 }, urlsOf(lastB, D)]]) {
    const v2 = await openViewer(`${server.base}/index.html`); /* an empty shard cache */
    const mark = server.log.length;
    const ans = await v2.page.evaluate(([w, q]) => window.traceExplorer[w](q), [what, params]);
    const fetched = server.log.slice(mark).map((u) => u.replace(/^\//, '')).filter((u) => p.gpu_chunks.some((d) => d.url === u));
    const cliAns = dquery(rep, what === 'queryGpu' ? 'gpu' : 'timeline', params).ok;
    tap.ok(JSON.stringify(ans) === JSON.stringify(cliAns) && fetched.length < p.gpu_chunks.length && fetched.every((u) => allowed.has(u)),
      `${what}(${JSON.stringify(params)}) over the whole run equals the CLI from the build's summaries, reading ${fetched.length} of ${p.gpu_chunks.length} GPU shards`,
      { fetched, allowed: [...allowed] });
    await v2.close();
  }
}

await runTest(tap, 'gpu', main);
