// legend.test.mjs: a pinned metric family lists every series in its legend
// (no "+N more"), hides/shows one on click, keeps only one on double-click,
// and the hover readout carries a value line for every visible series.
import path from 'node:path';
import { Tap, dquery, saveShot, openViewer, mediumViewer, runTest } from './harness.mjs';

const tap = new Tap();

async function main() {
  const mv = await mediumViewer(tap, 'legend');
  if (!mv) return;
  const { cat, v, page } = mv;
  const count = new Map();
  for (const x of cat.metrics) count.set(x.name, (count.get(x.name) || 0) + 1);
  const [fam, n] = [...count.entries()].sort((a, b) => b[1] - a[1])[0];
  await page.evaluate((f) => { window.traceExplorer.setState({ pinnedMetrics: [f], tab: 'metrics' }); return window.traceExplorer.whenMetricsReady(); }, fam);
  const chart = await page.$(`canvas[aria-label="chart of ${fam}"]`);
  const root = await chart.evaluateHandle((c) => c.closest('.chart'));
  const items = await root.$$('.legend-box button.lg');
  tap.ok(items.length === n && n > 1, `the legend of ${fam} lists all ${n} series`, items.length);
  const hoverLines = async () => {
    const b = await chart.boundingBox();
    await page.mouse.move(b.x + b.width * 0.6, b.y + b.height / 2);
    await page.waitForTimeout(80);
    return page.$$eval('#tooltip div.mono', (ds) => ds.length);
  };
  tap.ok(await hoverLines() === n, `the hover readout has a line for each of the ${n} series`);
  await items[0].click();
  const pressed = await items[0].getAttribute('aria-pressed');
  tap.ok(pressed === 'false' && await hoverLines() === n - 1, 'clicking a series hides it (and its readout line)');
  await items[1].dblclick();
  const shown = await root.$$eval('.legend-box button.lg', (bs) => bs.filter((b) => b.getAttribute('aria-pressed') === 'true').length);
  tap.ok(shown === 1 && await hoverLines() === 1, 'double-clicking a series shows only it', shown);
  await (await root.$('.lg-all')).click();
  tap.ok(await hoverLines() === n, '"all" shows every series again');
  await saveShot(page, 'legend-01-family.png');
  tap.ok(v.errors.length === 0, 'no page error', v.errors);
}

await runTest(tap, 'legend', main);
