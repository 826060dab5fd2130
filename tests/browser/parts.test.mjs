// parts.test.mjs: `dsight build --single-file --max-part-size-mb N` split
// into time-sliced parts.  Each part opens from file:// and answers detail
// queries inside its slice exactly like `dsight query` on the whole
// document; the requests starting in its slice are there with their spans
// and lifecycle (with collections streamed from the store every part holds
// every request; parts.json counts those starting in the slice); the list page links every part.  Screenshots of the list
// page and of a part are saved under tests/browser/artifacts/.
// tests/run: slow (over two minutes in the full tier: a clean clone starts it first)
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawnSync } from 'node:child_process';
import { Tap, ROOT, tmpdir, run, dquery, readCatalog, openViewer, saveShot, cleanup } from './harness.mjs';

const tap = new Tap();

async function main() {
  const dir = tmpdir('parts');
  const ev = path.join(dir, 'capture.json');
  const g = run('gen-capture', ['--preset', 'medium', '--scale', '0.05', '-o', ev]);
  if (!tap.ok(g.code === 0, 'gen-capture --preset medium --scale 0.05', g.stderr)) return;
  /* The budget: what every part holds (the viewer and the core catalog,
   * which grow with the viewer; the build names it when a budget is
   * below it) plus 14 KB of rows, so the capture splits into a few dozen
   * parts whatever the viewer's size. */
  const probe = run('dsight', ['build', ev, '--single-file', '--max-part-size-mb', '0.01', '-o', path.join(dir, 'probe')]);
  const base = /below the ([0-9.]+) MB of viewer and catalog/.exec(probe.stderr);
  if (!tap.ok(probe.code === 2 && base, 'a budget below the viewer and catalog is refused, naming their size', probe.stderr)) return;
  const BUDGET_MB = +(+base[1] + 0.014).toFixed(3);
  const rep = path.join(dir, 'report');
  const b = run('dsight', ['build', ev, '--single-file', '--max-part-size-mb', String(BUDGET_MB), '-o', rep]);
  if (!tap.ok(b.code === 0, `dsight build --single-file --max-part-size-mb ${BUDGET_MB}`, b.stderr)) return;
  const out = JSON.parse(b.stdout);
  const pj = JSON.parse(fs.readFileSync(path.join(rep, 'parts.json'), 'utf8'));
  const parts = pj.parts;
  tap.ok(pj.version === 1 && parts.length >= 2 && out.parts === parts.length, `parts.json lists ${parts.length} parts (build line says ${out.parts})`, pj);

  /* the whole document, for reference answers */
  const whole = dquery(rep, 'summary', {}).ok;
  const D = whole.meta ? whole.meta.duration : null;
  const reqs = dquery(rep, 'requests', { limit: 1000 }).ok;
  tap.ok(D > 0 && reqs && reqs.items, 'dsight query answers from trace-data.json.gz', { D, keys: reqs && Object.keys(reqs) });

  /* the list page links every part; the parts open from file:// */
  const list = await openViewer(pathToFileURL(path.join(rep, 'index.html')).href, { timeoutMs: 500 });
  const links = await list.page.evaluate(() => [...document.querySelectorAll('#dsight-parts a')].map((a) => ({ href: a.getAttribute('href'), text: a.textContent })));
  tap.ok(JSON.stringify(links.map((l) => l.href)) === JSON.stringify(parts.map((p) => p.file)), 'index.html links each part by its relative file name', links);
  await saveShot(list.page, '20-parts-list.png');
  await list.page.click('#dsight-parts a');
  await list.page.waitForFunction(() => !!window.traceExplorer, null, { timeout: 20000 }).catch(() => {});
  tap.ok(await list.page.evaluate(() => !!window.traceExplorer && /part-001\.html$/.test(location.pathname)), 'following the first link from file:// opens part-001 as a viewer');
  await list.close();

  let seen = 0;
  for (let k = 0; k < parts.length; k++) {
    const p = parts[k];
    const [t0, t1] = p.range;
    const file = path.join(rep, p.file);
    const cat = readCatalog(file);
    tap.ok(cat.delivery.kind === 'embedded' && cat.delivery.part && cat.delivery.part.index === k + 1 && cat.delivery.part.count === parts.length,
      `${p.file}: an embedded core naming its part`, cat.delivery);
    const ids = cat.requests.map((r) => r.id);
    const want = reqs.items.filter((r) => (k === 0 || r.start >= t0) && (k === parts.length - 1 || r.start < t1)).map((r) => r.id);
    const have = new Set(ids);
    tap.ok(want.every((id) => have.has(id)) && p.requests === want.length, `${p.file}: holds the ${want.length} requests starting in [${t0}, ${t1}), as parts.json counts`, { ids, want, counted: p.requests });
    seen += p.requests;

    const v = await openViewer(pathToFileURL(file).href);
    if (!tap.ok(v.readyAt !== null, `${p.file} opens from file://`, v.errors)) { await v.close(); continue; }
    const span = t1 - t0;
    const wins = [[t0, t1], [t0 + span * 0.25, t0 + span * 0.75]];
    for (const [from, to] of wins) {
      const got = await v.page.evaluate(async ([from, to]) => {
        const te = window.traceExplorer;
        return { nsys: await te.queryNsys({ from, to, limit: 1000 }), cpu: await te.queryCpu({ from, to }), metrics: await te.queryMetrics({ from, to, points: true, limit: 1000 }) };
      }, [from, to]);
      const exp = { nsys: dquery(rep, 'nsys', { from, to, limit: 1000 }).ok, cpu: dquery(rep, 'cpu', { from, to }).ok, metrics: dquery(rep, 'metrics', { from, to, points: true, limit: 1000 }).ok };
      for (const key of ['nsys', 'cpu', 'metrics'])
        tap.ok(JSON.stringify(got[key]) === JSON.stringify(exp[key]), `${p.file}: ${key} over [${from}, ${to}] equals dsight query on the whole document`, { got: got[key], exp: exp[key] });
    }
    const probe = want.slice(0, 3);
    const got = await v.page.evaluate(async (probe) => Promise.all(probe.map(async (id) => ({ r: await window.traceExplorer.getRequest(id), l: await window.traceExplorer.getLifecycle(id) }))), probe);
    const exp = probe.map((id) => ({ r: dquery(rep, 'request', { request: id }).ok, l: dquery(rep, 'lifecycle', { request: id }).ok }));
    tap.ok(JSON.stringify(got) === JSON.stringify(exp), `${p.file}: getRequest/getLifecycle equal dsight query for its requests`, { got, exp });
    const ver = await v.page.evaluate(() => ({ v: window.traceExplorer.version, d: window.traceExplorer.describe().version, direct: !(window.traceExplorer.queryRequests({}) instanceof Promise) }));
    tap.ok(ver.v === '3.3' && ver.d === '3.3' && ver.direct, `${p.file}: API 3.3, request calls answer directly when embedded`, ver);
    if (k === 0) await saveShot(v.page, '21-part-001.png');
    await v.close();
  }
  tap.ok(seen === reqs.items.length, `every request is in exactly one part (${seen} of ${reqs.items.length})`);
  await gpuParts(dir);
}

/* GPU rows in the parts of an Nsight export */
async function gpuParts(dir) {
  const exp = path.join(dir, 'gpu.sqlite');
  const g = spawnSync('python3', [path.join(ROOT, 'scripts/gen-nsys-export'), exp, '--ranges', '2000', '--kernels', '12000',
    '--devices', '2', '--streams', '2', '--duration-s', '3'], { encoding: 'utf8' });
  if (!tap.ok(g.status === 0, 'gen-nsys-export', g.stderr)) return;
  const rep = path.join(dir, 'gpu-split'), whole = path.join(dir, 'gpu-dir');
  const b = run('dsight', ['build', '--nsys-sqlite', exp, '--single-file', '--max-part-size-mb', '0.6', '-o', rep]);
  const b2 = run('dsight', ['build', '--nsys-sqlite', exp, '-o', whole]);
  if (!tap.ok(b.code === 0 && b2.code === 0, 'build the export split into parts, and as a directory', b.stderr + b2.stderr)) return;
  const parts = JSON.parse(fs.readFileSync(path.join(rep, 'parts.json'), 'utf8')).parts;
  const p = parts[Math.min(1, parts.length - 1)], [t0, t1] = p.range;
  const v = await openViewer(pathToFileURL(path.join(rep, p.file)).href, { viewport: { width: 1400, height: 900 } });
  if (!tap.ok(v.readyAt !== null, `${p.file} of the GPU export opens from file://`, v.errors)) { await v.close(); return; }
  const from = t0 + (t1 - t0) * 0.4, to = t0 + (t1 - t0) * 0.5;
  const got = await v.page.evaluate(async ([a, b]) => {
    const te = window.traceExplorer;
    te.setState({ tab: 'nsight', from: a, to: b });
    await te.whenDetailsReady();
    const c = document.querySelector('canvas[data-gpu-profile="0"]');
    return { mode: c && c.dataset.mode, lanes: c && c.dsGpu ? c.dsGpu.lanes.map((l) => ({ key: `${l.device}|${l.stream}`, rows: l.rows.map((r) => `${r[0]}|${r[1]}`) })) : [],
      api: await te.queryGpu({ from: a, to: b, limit: 1000 }) };
  }, [from, to]);
  const cli = dquery(whole, 'gpu', { from, to, limit: 1000 }).ok;
  const want = new Map();
  for (const it of cli.items) {
    const k = `${it.device}|${it.stream}`;
    if (!want.has(k)) want.set(k, []);
    want.get(k).push(`${it.start}|${it.end}`);
  }
  const same = (a, b) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
  const drawn = new Map(got.lanes.map((l) => [l.key, l.rows]));
  tap.ok(got.mode === 'exact' && cli.total > 20 && cli.total < 1000 && same(want.keys(), drawn.keys()) && [...want].every(([k, l]) => same(l, drawn.get(k))),
    `${p.file}: each GPU track draws exactly its rows of dsight query gpu on [${from}, ${to}] (${cli.total} rows)`, { mode: got.mode, drawn: got.lanes.length, want: want.size });
  tap.ok(JSON.stringify(got.api) === JSON.stringify(cli), `${p.file}: queryGpu over the window equals dsight query gpu`,
    { got: JSON.stringify(got.api).slice(0, 800), want: JSON.stringify(cli).slice(0, 800) });
  await saveShot(v.page, '22-part-gpu.png');
  tap.ok(v.errors.length === 0, `${p.file}: no page error`, v.errors);
  await v.close();
}

main().catch((e) => tap.ok(false, 'no exception', e.stack)).finally(async () => {
  await cleanup();
  console.log(`# ${tap.passed} passed, ${tap.failed} failed`);
  process.exit(tap.failed ? 1 : 0);
});
