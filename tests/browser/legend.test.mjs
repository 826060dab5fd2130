// legend.test.mjs: a pinned metric family lists every series in its legend
// (no "+N more"), hides/shows one on click, keeps only one on double-click,
// and the hover readout carries a value line for every visible series; the
// y-range comes from the shown series only.  A 47-series family (added to
// the medium capture, one series with a 1e20 outlier) is drawn as counter
// tracks with the outlier clipped and marked, a readout of 12 series and
// "n more", values with units, and a log toggle; pinning it at a 60-s
// window is timed.
import { Tap, saveShot, mediumViewer, runTest } from './harness.mjs';

const tap = new Tap();
const BIG = 'test_big_family_bytes', N = 47;

/* Adds family BIG: N copies of the first gpu_memory_used_bytes series at
 * different levels, the 7th with a 1e20 point in the middle of the run. */
function addBigFamily(doc) {
  const base = doc.metrics.find((m) => m.name === 'gpu_memory_used_bytes');
  let id = Math.max(...doc.metrics.map((m) => m.id)) + 1;
  for (let k = 0; k < N; k++) {
    const m = JSON.parse(JSON.stringify(base));
    Object.assign(m, { id: id++, name: BIG, label: 'Test family of 47 series', unit: 'bytes', worker: `w-${String(k).padStart(2, '0')}`,
      raw_name: `${BIG}{k="${k}"}` });
    m.points = m.points.map((p, j) => [p[0], typeof p[1] === 'number' ? p[1] * (1 + k / 10) : p[1], ...p.slice(2)]);
    if (k === 6) m.points[Math.floor(m.points.length / 2)][1] = 1e20;
    doc.metrics.push(m);
  }
  if (Array.isArray(doc.metric_catalog)) {
    const c = doc.metric_catalog.find((x) => x.name === 'gpu_memory_used_bytes');
    if (c) doc.metric_catalog.push(Object.assign(JSON.parse(JSON.stringify(c)), { name: BIG, label: 'Test family of 47 series', unit: 'bytes' }));
  }
}

async function main() {
  const mv = await mediumViewer(tap, 'legend', { edit: addBigFamily });
  if (!mv) return;
  const { cat, v, page, D } = mv;
  const count = new Map();
  for (const x of cat.metrics) count.set(x.name, (count.get(x.name) || 0) + 1);
  tap.ok(count.get(BIG) === N, `the capture has a ${N}-series family`, count.get(BIG));
  const fam = 'gpu_memory_used_bytes', n = count.get(fam);
  await page.evaluate((f) => { window.traceExplorer.setState({ pinnedMetrics: [f], tab: 'metrics' }); return window.traceExplorer.whenMetricsReady(); }, fam);
  const chart = await page.$(`canvas[aria-label="chart of ${fam}"]`);
  const root = await chart.evaluateHandle((c) => c.closest('.chart'));
  const items = await root.$$('.legend-box button.lg');
  tap.ok(items.length === n && n > 1, `the legend of ${fam} lists all ${n} series`, items.length);
  const hoverLines = async (c) => {
    const b = await (c || chart).boundingBox();
    await page.mouse.move(b.x + b.width * 0.6, b.y + Math.min(b.height / 2, 60));
    await page.waitForTimeout(80);
    return page.$$eval('#tooltip div.mono', (ds) => ds.length);
  };
  tap.ok(await hoverLines() === n, `the hover readout has a line for each of the ${n} series`);
  const tipText = await page.$eval('#tooltip', (t) => t.textContent);
  tap.ok(/[0-9] (B|KiB|MiB|GiB)\b/.test(tipText), 'the readout formats bytes with binary units', tipText.slice(0, 200));
  const range = () => chart.evaluate((c) => JSON.parse(c.dataset.yrange || 'null'));
  const mode = await chart.evaluate((c) => c.dataset.mode);
  tap.ok(mode === 'lines', `${n} series of one scale share one chart`, mode);
  const clipped = await chart.evaluate((c) => +c.dataset.clipped);
  tap.ok(clipped > 0, `its 1e20 outlier is clipped with a marker instead of flattening the other lines (${clipped} marked)`);
  await items[0].click();
  const pressed = await items[0].getAttribute('aria-pressed');
  tap.ok(pressed === 'false' && await hoverLines() === n - 1, 'clicking a series hides it (and its readout line)');
  await items[1].dblclick();
  const shown = await root.$$eval('.legend-box button.lg', (bs) => bs.filter((b) => b.getAttribute('aria-pressed') === 'true').length);
  tap.ok(shown === 1 && await hoverLines() === 1, 'double-clicking a series shows only it', shown);
  await (await root.$('.lg-all')).click();
  tap.ok(await hoverLines() === n, '"all" shows every series again');
  await saveShot(page, 'legend-01-family.png');

  /* the y-range comes from the shown series: showing only the one with
   * the smallest maximum rescales the family, "all" restores it */
  {
    const f2 = 'num_requests_running';
    await page.evaluate((f) => { window.traceExplorer.setState({ pinnedMetrics: [f] }); return window.traceExplorer.whenMetricsReady(); }, f2);
    const c2 = await page.$(`canvas[aria-label="chart of ${f2}"]`), r2 = await c2.evaluateHandle((c) => c.closest('.chart'));
    const range = () => c2.evaluate((c) => JSON.parse(c.dataset.yrange || 'null'));
    const maxes = await page.evaluate(async ([f, d]) => (await window.traceExplorer.queryMetrics({ name: f, from: 0, to: d })).items.map((it) => it.max), [f2, D]);
    const small = maxes.indexOf(Math.min(...maxes));
    const before = await range();
    await (await r2.$$('.legend-box button.lg'))[small].dblclick();
    const after = await range();
    tap.ok(before && after && after[1] < before[1] * 0.6, `showing only the series of maximum ${maxes[small]} rescales ${f2} (${before && before[1]} → ${after && after[1]})`);
    await (await r2.$('.lg-all')).click();
    tap.ok(JSON.stringify(await range()) === JSON.stringify(before), '"all" restores the range');
  }

  /* the 47-series family pinned at a 60-s window: counter tracks */
  await page.evaluate((d) => { window.traceExplorer.setState({ pinnedMetrics: [], from: d / 2 - 30, to: d / 2 + 30 }); return Promise.all([window.traceExplorer.whenMetricsReady(), window.traceExplorer.whenDetailsReady()]); }, D);
  const t0 = Date.now();
  await page.evaluate((f) => { window.traceExplorer.setState({ pinnedMetrics: [f] }); return window.traceExplorer.whenMetricsReady(); }, BIG);
  const pinMs = Date.now() - t0;
  tap.note(`pinning the ${N}-series family at a 60-s window settled in ${pinMs} ms`);
  const bc = await page.$(`canvas[aria-label="chart of ${BIG}"]`);
  const info = await bc.evaluate((c) => ({ mode: c.dataset.mode, clipped: +c.dataset.clipped, h: c.getBoundingClientRect().height,
    status: c.closest('.chart').querySelector('.chart-status').textContent }));
  tap.ok(info.mode === 'tracks' && info.h >= N * 25, `a ${N}-series family is drawn as ${N} counter tracks (${Math.round(info.h)} px)`, info);
  tap.ok(info.clipped > 0 && /beyond the 0\.1–99\.9 percentiles clipped/.test(info.status), `the 1e20 outlier is clipped to its track's edge with a marker (${info.clipped} marked)`, info.status);
  await bc.scrollIntoViewIfNeeded();
  await hoverLines(bc);
  const tip = await page.$eval('#tooltip', (t) => ({ lines: t.querySelectorAll('div.mono').length, text: t.textContent }));
  tap.ok(tip.lines === 12 && new RegExp(`${N - 12} more series`).test(tip.text), `the readout lists the 12 nearest series and "${N - 12} more"`, tip);
  await page.mouse.move(5, 5);
  await saveShot(page, 'legend-02-counter-tracks-clipped.png');
  const broot = await bc.evaluateHandle((c) => c.closest('.chart'));
  await (await broot.$('.log-toggle')).click();
  const logged = await bc.evaluate((c) => ({ mode: c.dataset.mode, pressed: c.closest('.chart').querySelector('.log-toggle').getAttribute('aria-pressed') }));
  tap.ok(logged.pressed === 'true' && logged.mode === 'tracks', 'the log toggle redraws the tracks on a log scale', logged);
  tap.ok(v.errors.length === 0, 'no page error', v.errors);
}

await runTest(tap, 'legend', main);
