// panes.test.mjs: the pane splitters (drag to resize, double-click to
// collapse and restore, sizes kept across a reload, tracks re-laid to the
// new width), the resizable label column, and the export size warning (a whole-run export of a report
// with more than 64 MiB of rows asks first and exports nothing when
// declined; a small selection exports at once).
import path from 'node:path';
import { Tap, run, tmpdir, readCatalog, serve, openViewer, saveShot, mediumViewer, runTest } from './harness.mjs';

const tap = new Tap();
const near = (a, b, tol) => Math.abs(a - b) <= (tol || 3);

async function splitters() {
  const mv = await mediumViewer(tap, 'panes');
  if (!mv) return;
  const { page } = mv;
  const rect = (sel) => page.$eval(sel, (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
  const trackW = () => page.evaluate(() => DSUI.trackWidth());
  const dragBy = async (sel, dx, dy) => {
    const r = await rect(sel);
    const x = r.x + r.w / 2, y = r.y + r.h / 2;
    await page.mouse.move(x, y);
    await page.mouse.down();
    await page.mouse.move(x + dx / 2, y + dy / 2);
    await page.mouse.move(x + dx, y + dy);
    await page.mouse.up();
    await page.evaluate(() => window.traceExplorer.whenDetailsReady());
  };

  const side0 = await rect('#sidebar'), tw0 = await trackW();
  await dragBy('#split-side', 100, 0);
  const side1 = await rect('#sidebar'), tw1 = await trackW();
  tap.ok(near(side1.w, side0.w + 100), `dragging the side splitter 100 px widens the side pane (${side0.w} -> ${side1.w} px)`);
  tap.ok(near(tw1, tw0 - 100, 4), `the tracks are laid out again to the narrower width (${tw0} -> ${tw1} px)`);
  await page.dblclick('#split-side');
  const collapsed = await page.evaluate(() => ({ cls: document.getElementById('sidebar').classList.contains('collapsed'), tw: DSUI.trackWidth(), btn: document.getElementById('btn-side').textContent }));
  tap.ok(collapsed.cls && collapsed.tw > tw0 && collapsed.btn === '»', `double-click collapses the side pane; the tracks take its width (${collapsed.tw} px)`, collapsed);
  await saveShot(page, 'panes-01-side-collapsed.png');
  await page.dblclick('#split-side');
  tap.ok(near((await rect('#sidebar')).w, side1.w), 'double-click again restores the resized width');

  const det0 = await rect('#details');
  await dragBy('#split-details', 0, -80);
  const det1 = await rect('#details');
  tap.ok(near(det1.h, det0.h + 80), `dragging the detail splitter up 80 px makes the detail pane taller (${det0.h} -> ${det1.h} px)`);
  await page.click('#btn-details');
  tap.ok(await page.evaluate(() => document.getElementById('details').classList.contains('collapsed')), 'the details button collapses the detail pane');
  await page.click('#btn-details');
  tap.ok(near((await rect('#details')).h, det1.h), 'and restores its height');

  /* the label column: drag its edge; the time axis starts where it ends */
  const g0 = await page.evaluate(() => DSUI.GUTTER), e0 = await rect('#split-gutter');
  await dragBy('#split-gutter', 80, 0);
  const g1 = await page.evaluate(() => DSUI.GUTTER), e1 = await rect('#split-gutter');
  tap.ok(near(g1, g0 + 80, 1) && near(e1.x, e0.x + 80, 2), `dragging the label column's edge 80 px widens the labels (${g0} -> ${g1} px)`);
  const st = await page.evaluate(() => window.traceExplorer.getState()), tr = await rect('#tracks');
  const tw = await trackW(), x1 = tr.x + g1 + 20, x2 = tr.x + g1 + 200, y = tr.y + 60;
  await page.mouse.move(x1, y);
  await page.mouse.down();
  await page.mouse.move(x1 + 90, y);
  await page.mouse.move(x2, y);
  await page.mouse.up();
  const sel = (await page.evaluate(() => window.traceExplorer.getState())).sel;
  const tAt = (x) => st.from + (x - tr.x - g1) / (tw - 14 - g1) * (st.to - st.from), px = (st.to - st.from) / (tw - 14 - g1);
  tap.ok(sel && Math.abs(sel[0] - tAt(x1)) <= 2 * px && Math.abs(sel[1] - tAt(x2)) <= 2 * px, 'an area dragged on a track maps x to time from the new label edge', { sel, want: [tAt(x1), tAt(x2)] });
  await page.evaluate(() => window.traceExplorer.setState({ sel: null }));
  await saveShot(page, 'panes-02-label-column.png');

  await page.reload();
  await page.evaluate(() => new Promise((r) => (window.traceExplorer ? r() : addEventListener('trace-explorer:ready', r, { once: true }))));
  const side2 = await rect('#sidebar'), det2 = await rect('#details');
  tap.ok(near(side2.w, side1.w) && near(det2.h, det1.h), `a reload keeps both sizes (${side2.w} px, ${det2.h} px)`);
  await page.waitForFunction((g) => DSUI.GUTTER === g, g1);
  tap.ok(true, `and the label column's width (${g1} px)`);
  await page.dblclick('#split-gutter');
  tap.ok(await page.evaluate(() => DSUI.GUTTER) === g0, 'double-click on its edge resets the label column');
  tap.ok(mv.v.errors.length === 0, 'no page error', mv.v.errors);
}

async function exportWarning() {
  /* a report whose whole run holds more than 64 MiB of rows */
  const dir = tmpdir('export-warn');
  const ev = path.join(dir, 'm8.json'), rep = path.join(dir, 'report');
  if (!tap.ok(run('gen-capture', ['--preset', 'medium', '--scale', '8', '-o', ev]).code === 0, 'gen-capture --preset medium --scale 8')) return;
  const b = run('dsight', ['build', ev, '-o', rep]);
  if (!tap.ok(b.code === 0, 'dsight build (scale 8)', b.stderr)) return;
  const cat = readCatalog(path.join(rep, 'index.html'));
  const srv = await serve(rep, { gzipHeader: true });
  const v = await openViewer(`${srv.base}/index.html`);
  if (!tap.ok(v.readyAt !== null, 'viewer ready', v.errors)) return;
  const { page } = v;
  const D = cat.meta.duration, fams = [...new Set(cat.metrics.map((s) => s.name))];
  await page.evaluate(([d, f]) => { window.traceExplorer.setState({ from: 0, to: d, sel: null, profile: null, pinnedMetrics: f }); return window.traceExplorer.whenMetricsReady(); }, [D, fams]);
  const ds = [...cat.profiles.flatMap((p) => p.event_chunks), ...cat.metrics.flatMap((s) => s.chunks)];
  const bytes = ds.reduce((a, d) => a + d.decoded_bytes, 0);
  tap.ok(bytes > 64 * 1048576, `the whole run holds ${(bytes / 1048576).toFixed(0)} MiB of rows (over the 64-MiB warning)`);
  const dialogs = [];
  page.on('dialog', (d) => dialogs.push(d.message())); /* the harness declines it */
  const label = await page.$eval('#btn-export', (e) => e.textContent);
  await page.click('#btn-export');
  await page.waitForFunction(() => !document.getElementById('btn-export').disabled);
  await page.waitForTimeout(200);
  const want = `This export reads ${ds.length} shards (${Math.round(bytes / 1048576).toLocaleString('en-US')} MiB of rows)`;
  tap.ok(dialogs.length === 1 && dialogs[0].startsWith(want), `exporting the whole run asks first: "${dialogs[0]}"`, { dialogs, want });
  const after = await page.evaluate(() => ({ label: document.getElementById('btn-export').textContent, toast: (document.getElementById('toast') || {}).textContent || '' }));
  tap.ok(after.label === label && !/Exported/.test(after.toast), 'declined: nothing is exported', after);

  /* a one-second selection exports at once */
  await page.evaluate(([a]) => window.traceExplorer.setState({ sel: [a, a + 1] }), [D / 2]);
  const dl = page.waitForEvent('download', { timeout: 20000 });
  await page.click('#btn-export');
  const file = await dl;
  const toast = await page.$eval('#toast', (e) => e.textContent);
  tap.ok(dialogs.length === 1 && /Exported [\d,]+ NVTX rows/.test(toast) && file.suggestedFilename().endsWith('-view.json'),
    `a 1-s selection exports without a warning (${toast})`, { dialogs, toast });
  tap.ok(v.errors.length === 0, 'no page error', v.errors);
  await v.close();
}

await runTest(tap, 'panes', async () => { await splitters(); await exportWarning(); });
