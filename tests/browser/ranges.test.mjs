// ranges.test.mjs: NVTX by name in the viewer: the by-name table of the
// selected area equals `dsight query nsys --group-by name` over the same
// window and profiles; the name filter dims other ranges and steps to the
// next / previous matching range (equal to the CLI's next row by start).
import path from 'node:path';
import { Tap, dquery, saveShot, openViewer, mediumViewer, runTest } from './harness.mjs';

const tap = new Tap();

async function main() {
  const mv = await mediumViewer(tap, 'ranges');
  if (!mv) return;
  const { rep, cat, D, v, page } = mv;
  const te = (fn, arg) => page.evaluate(fn, arg);

  /* 1. the by-name table of a selected area */
  const sel = [D * 0.31, D * 0.317];
  await te(([d, s0]) => { window.traceExplorer.setState({ tab: 'nsight', from: d * 0.3, to: d * 0.33, sel: s0 }); return window.traceExplorer.whenDetailsReady(); }, [D, sel]);
  const rows = await page.$$eval('#byname-box tr.byname-row', (trs) => trs.map((t) => [t.dataset.name, t.children[1].textContent]));
  const cli = dquery(rep, 'nsys', { from: sel[0], to: sel[1], groupBy: 'name', limit: 200 }).ok;
  const want = cli.items.map((g) => [g.key === null ? '' : g.key, g.count.toLocaleString('en-US')]);
  tap.ok(rows.length > 0 && JSON.stringify(rows) === JSON.stringify(want), `the by-name table of the selection lists ${rows.length} names in dsight query nsys --group-by name order with its counts`, { rows: rows.slice(0, 5), want: want.slice(0, 5) });
  const api = await te(([a, b]) => window.traceExplorer.queryNsys({ from: a, to: b, groupBy: 'name', limit: 200 }), sel);
  tap.ok(JSON.stringify(api) === JSON.stringify(cli), 'its numbers are the API answer, equal to the CLI (total, mean, max, time inside)');
  await saveShot(page, 'ranges-01-by-name-selection.png');

  /* 2. by-name for a request's workers (several workers = --worker repeated) */
  const r = cat.requests.find((x) => (x.workers || []).length > 1);
  if (r) {
    const got = await te(([a, b, w]) => window.traceExplorer.queryNsys({ from: a, to: b, worker: w, groupBy: 'name', limit: 50 }), [r.start, r.end, r.workers]);
    const c2 = dquery(rep, 'nsys', { from: r.start, to: r.end, worker: r.workers, groupBy: 'name', limit: 50 }).ok;
    tap.ok(JSON.stringify(got) === JSON.stringify(c2), `worker as a list (${r.workers.join(', ')}) equals --worker repeated`);
  }

  /* 3. the name filter: next / previous match */
  const name = cli.items[cli.items.length > 1 ? 1 : 0].key;
  await page.fill('#nvtx-filter', name);
  await page.press('#nvtx-filter', 'Enter');
  await page.waitForFunction((n) => { const e = window.traceExplorer.getState(); return e.filter === n; }, name);
  await page.waitForFunction(() => /at /.test(document.getElementById('nvtx-match').title));
  await page.waitForFunction(() => / of [0-9,]+ matches in the window/.test(document.getElementById('nvtx-match').textContent));
  const st1 = await te(() => window.traceExplorer.getState());
  const ex1 = await te(() => window.traceExplorer.exportSelection());
  const centre = D * 0.315;
  const next = dquery(rep, 'nsys', { from: centre, to: D, name, limit: 1000 }).ok.items.find((it) => it.start >= centre);
  const firstSel = await page.$eval('#nvtx-match', (e) => e.title);
  tap.ok(next && firstSel.startsWith(next.name) && st1.from <= next.start && st1.to >= next.end, `Enter in the filter goes to the next "${name}" after the window's centre (${firstSel})`, { next, st1 });
  /* n of N, as Perfetto's omnibox: N the window's matches, n those up to the selected one */
  const nOfN = await page.$eval('#nvtx-match', (e) => e.textContent);
  const wantN = dquery(rep, 'nsys', { from: st1.from, to: st1.to, name, groupBy: 'name' }).ok.total;
  const wantn = dquery(rep, 'nsys', { from: st1.from, to: Math.max(st1.from, next.start), name, groupBy: 'name' }).ok.total;
  tap.ok(nOfN === `${wantn.toLocaleString('en-US')} of ${wantN.toLocaleString('en-US')} matches in the window`, `the filter says "${nOfN}" (dsight query nsys --name)`, { nOfN, wantn, wantN });
  await page.evaluate(() => document.getElementById('sec-nsight').scrollIntoView());
  await saveShot(page, 'ranges-02b-search-n-of-N.png');
  await page.click('#btn-next-match');
  await page.waitForTimeout(300);
  const t2 = await page.$eval('#nvtx-match', (e) => e.title);
  await page.click('#btn-prev-match');
  await page.waitForTimeout(300);
  const t3 = await page.$eval('#nvtx-match', (e) => e.title);
  tap.ok(t2 !== firstSel && t3 === firstSel, 'next then previous returns to the same range', { firstSel, t2, t3 });
  tap.ok(ex1 && ex1.view.filter === name, 'the filter is part of the view state');
  await saveShot(page, 'ranges-02-name-filter.png');

  /* 4. CPU flame graph / call table: totals equal the cpu kind's inclusive samples */
  const cp = cat.profiles.find((p) => p.cpu);
  if (tap.ok(cp, 'a profile has CPU samples')) {
    const w = [D * 0.2, D * 0.5];
    await te(([id, a, b]) => { window.traceExplorer.setState({ tab: 'nsight', profile: id, from: a, to: b, sel: null, filter: '' }); return window.traceExplorer.whenDetailsReady(); }, [cp.id, ...w]);
    await page.waitForFunction(() => Number((document.getElementById('flame') || {}).dataset?.frames) > 0);
    const calls = await page.$$eval('table.calltable tr[data-name]', (trs) => trs.map((t) => [t.dataset.name, Number(t.children[1].textContent.replace(/,/g, '')), Number(t.children[2].textContent.replace(/,/g, ''))]));
    const cpu = dquery(rep, 'cpu', { profile: cp.id, from: w[0], to: w[1], limit: 1000 }).ok;
    const incl = new Map(cpu.items.map((it) => [it.symbol, it.samples]));
    const selfSum = calls.reduce((a, c) => a + c[1], 0);
    tap.ok(calls.length > 0 && calls.every(([n, , t]) => incl.get(n) === t) && selfSum <= cpu.total_samples,
      `the call table's total samples equal dsight query cpu's inclusive samples (${calls.length} functions, ${cpu.total_samples} samples)`, { calls: calls.slice(0, 5), cpu: cpu.items.slice(0, 5) });
    const title0 = await page.$eval('#flame-box h3', (h) => h.textContent);
    tap.ok(title0.includes(`${cpu.total_samples.toLocaleString('en-US')} samples`), 'the flame graph counts the window\'s samples', title0);
    const fb = await (await page.$('#flame')).boundingBox();
    await page.mouse.click(fb.x + 5, fb.y + 16 + 8);
    const title1 = await page.$eval('#flame-box h3', (h) => h.textContent);
    tap.ok(/zoomed into /.test(title1), `clicking a frame zooms into it (${title1})`);
    await saveShot(page, 'ranges-03-flame-graph.png');
  }

  /* 5. export what is on screen, complete */
  const prof = cat.profiles[0];
  const fam = cat.metrics[0].name;
  const ew = [D * 0.4, D * 0.43];
  await te(([id, f, a, b]) => { window.traceExplorer.setState({ tab: 'nsight', profile: id, pinnedMetrics: [f], from: a - 1, to: b + 1, sel: [a, b] }); return window.traceExplorer.whenMetricsReady(); }, [prof.id, fam, ...ew]);
  const exp = await te(() => window.traceExplorer.exportView());
  const cliN = dquery(rep, 'nsys', { profile: prof.id, from: ew[0], to: ew[1], limit: 0 }).ok;
  const cliM = dquery(rep, 'metrics', { name: fam, from: ew[0], to: ew[1], points: true, limit: 1000 }).ok;
  const wantPts = cliM.items.reduce((x, it) => x + it.points_total, 0);
  const gotPts = exp.metrics.reduce((x, sr) => x + sr.points.length, 0);
  tap.ok(exp.nsys.rows.length === cliN.total && cliN.total > 200 && exp.nsys.total === cliN.total,
    `the export holds every NVTX row of the area (${exp.nsys.rows.length} = dsight query total ${cliN.total}, beyond the 200-row page)`);
  tap.ok(exp.metrics.length === cliM.total && gotPts === wantPts, `and every point of the pinned family's ${cliM.total} series (${gotPts} = ${wantPts})`);
  const ids = new Set(exp.nsys.rows.map((r) => `${r.profile}/${r.rowid}`));
  tap.ok(ids.size === exp.nsys.rows.length, 'no row twice');
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#btn-export')]);
  const dpath = await dl.path();
  const file = JSON.parse((await import('node:fs')).readFileSync(dpath, 'utf8'));
  tap.ok(file.nsys.total === cliN.total && dl.suggestedFilename().endsWith('-view.json'), `the Export JSON button downloads the same complete export (${dl.suggestedFilename()})`);
  tap.ok(v.errors.length === 0, 'no page error', v.errors);
}

await runTest(tap, 'ranges', main);
