// navigate.test.mjs: the requests table (sorting like `dsight query requests
// --sort`, top-N, zoom to request / prefill, the focus track linked to the
// workers' Nsight profiles) and Perfetto-style navigation: W/S zoom at the
// cursor, A/D pan, Ctrl+wheel, drag to select an area kept across zooms,
// f to focus it, Esc, the relative ruler, Back/Forward through view history
// and a copied link that restores the selection, the selected NVTX range,
// the hidden series and the pane sizes.
import fs from 'node:fs';
import path from 'node:path';
import { Tap, dquery, saveShot, openViewer, mediumViewer, runTest } from './harness.mjs';

const tap = new Tap();
const close = (a, b, tol) => Math.abs(a - b) <= tol;

async function state(page) { return page.evaluate(() => window.traceExplorer.getState()); }
async function settle(page) { await page.evaluate(() => window.traceExplorer.whenDetailsReady()); }

/* The client x of time t on the tracks (the shared scale: gutter 170, right pad 14). */
async function xOf(page, t) {
  return page.evaluate((tt) => {
    const tr = document.getElementById('tracks'), r = tr.getBoundingClientRect(), s = window.traceExplorer.getState();
    const x0 = 170, x1 = tr.clientWidth - 14;
    return r.left + x0 + (tt - s.from) * (x1 - x0) / (s.to - s.from);
  }, t);
}

async function main() {
  const mv = await mediumViewer(tap, 'navigate');
  if (!mv) return;
  const { rep, cat, D, v, page } = mv;
  const s = mv.server;

  /* 1. the requests table: default -ttft_ms, header clicks, equal to dsight query --sort */
  const ids = () => page.$$eval('#req-table tr.req-row', (rows) => rows.map((r) => r.dataset.id));
  const cliIds = (sort) => dquery(rep, 'requests', { sort, limit: 50 }).ok.items.map((r) => r.id);
  tap.ok(JSON.stringify(await ids()) === JSON.stringify(cliIds('-ttft_ms')), 'the requests table lists the top 50 by TTFT descending, as dsight query --sort -ttft_ms');
  await saveShot(page, 'nav-01-requests-sorted-ttft.png');
  await page.click('#req-table th[data-key="duration"]');
  tap.ok(JSON.stringify(await ids()) === JSON.stringify(cliIds('-duration')), 'clicking "dur" sorts by duration descending (= --sort -duration)');
  await page.click('#req-table th[data-key="duration"]');
  tap.ok(JSON.stringify(await ids()) === JSON.stringify(cliIds('duration')), 'clicking it again sorts ascending (= --sort duration)');
  await page.click('#req-table th[data-key="output_tokens"]');
  tap.ok(JSON.stringify(await ids()) === JSON.stringify(cliIds('-output_tokens')) && (await state(page)).reqSort === '-output_tokens',
    'sorting by output tokens; the sort is part of the view state');
  await page.click('#req-table th[data-key="ttft_ms"]');

  /* 2. select the worst TTFT, zoom to its prefill: its workers' profiles are shown */
  const worst = dquery(rep, 'requests', { sort: '-ttft_ms', limit: 1 }).ok.items[0];
  await page.click(`#req-table tr.req-row[data-id="${worst.id}"]`);
  tap.ok((await state(page)).request === worst.id, 'clicking a row selects the request');
  await page.click('#btn-zoom-prefill');
  await settle(page);
  let st = await state(page);
  tap.ok(st.from <= worst.start && st.to >= worst.first && st.to - st.from < (worst.first - worst.start) * 1.5 &&
    JSON.stringify(st.sel) === JSON.stringify([worst.start, worst.first]) && JSON.stringify(st.workers) === JSON.stringify(worst.workers),
  'zoom to prefill shows [start, first token], selects it and picks the request\'s workers', st);
  const shownProfiles = await page.$$eval('#sec-nsight canvas', (cs) => cs.map((c) => c.getAttribute('aria-label')));
  const expect = cat.profiles.filter((p) => worst.workers.includes(p.worker)).map((p) => `NVTX ranges of profile ${p.id}`);
  tap.ok(JSON.stringify(shownProfiles) === JSON.stringify(expect) && expect.length > 0, `the Nsight tracks are those of its workers (${expect.length} profiles)`, { shownProfiles, expect });
  await saveShot(page, 'nav-02-prefill-beside-worker-tracks.png');
  await page.click('#btn-zoom-request');
  st = await state(page);
  tap.ok(st.from <= worst.start && st.to >= worst.end && JSON.stringify(st.sel) === JSON.stringify([worst.start, worst.end]), 'zoom to request shows the whole request', st);
  /* the focus track: click the "decode" row */
  const fc = await page.$('#req-focus');
  const fb = await fc.boundingBox();
  const dx = await xOf(page, (worst.first + worst.end) / 2);
  await page.mouse.click(dx, fb.y + 2 + 2 * 15 + 7);
  st = await state(page);
  tap.ok(JSON.stringify(st.sel) === JSON.stringify([worst.first, worst.end]) && st.from <= worst.first && st.to >= worst.end,
    'clicking the decode stage on the time axis selects its window and zooms to it', st);
  await page.click('#btn-all-profiles');
  tap.ok((await state(page)).workers.length === 0, '"show all profiles" clears the workers filter');

  /* 3. W/S at the cursor, A/D, Ctrl+wheel */
  await page.evaluate((d) => window.traceExplorer.setState({ from: d * 0.2, to: d * 0.6, sel: null, request: null }), D);
  const tb = await (await page.$('#tracks')).boundingBox();
  const tc = D * 0.3;
  await page.mouse.move(await xOf(page, tc), tb.y + 40);
  await page.keyboard.press('w');
  const afterW = await state(page);
  const cursorKept = (a) => close((tc - a.from) / (a.to - a.from), (tc - D * 0.2) / (D * 0.4), 2e-3); /* the pointer sits on a whole pixel */
  tap.ok(close(afterW.to - afterW.from, D * 0.4 * 0.8, 1e-9) && cursorKept(afterW), 'W zooms in by 0.8 around the time under the cursor', afterW);
  await page.keyboard.press('s');
  const afterS = await state(page);
  tap.ok(close(afterS.to - afterS.from, D * 0.4, 1e-9) && cursorKept(afterS), 'S zooms out around the cursor', afterS);
  await page.keyboard.press('a');
  const afterA = await state(page);
  await page.keyboard.press('d');
  await page.keyboard.press('d');
  const afterD = await state(page);
  tap.ok(close(afterA.from, afterS.from - 0.2 * (afterS.to - afterS.from), 1e-9) && close(afterD.from, afterA.from + 0.4 * (afterS.to - afterS.from), 1e-9),
    'A pans left and D pans right by a fifth of the window', { afterA, afterD });
  await page.mouse.move(await xOf(page, D * 0.35), tb.y + 40);
  const before = await state(page);
  await page.keyboard.down('Control');
  await page.mouse.wheel(0, -100);
  await page.keyboard.up('Control');
  await page.waitForTimeout(100);
  const wheeled = await state(page);
  tap.ok(wheeled.to - wheeled.from < before.to - before.from &&
    close((D * 0.35 - wheeled.from) / (wheeled.to - wheeled.from), (D * 0.35 - before.from) / (before.to - before.from), 1e-3),
  'Ctrl+wheel zooms in at the cursor', { before, wheeled });

  /* 4. drag an area on a track, zoom keeps it, f focuses it, Esc clears it */
  await page.evaluate((d) => window.traceExplorer.setState({ from: d * 0.4, to: d * 0.5, tab: 'nsight' }), D);
  await settle(page);
  const nc = await (await page.$('#sec-nsight canvas')).boundingBox();
  const xa = await xOf(page, D * 0.42), xb = await xOf(page, D * 0.44);
  await page.mouse.move(xa, nc.y + 10);
  await page.mouse.down();
  await page.mouse.move(xb, nc.y + 10, { steps: 5 });
  await page.mouse.up();
  st = await state(page);
  tap.ok(st.sel && close(st.sel[0], D * 0.42, D * 0.001) && close(st.sel[1], D * 0.44, D * 0.001) && st.from === D * 0.4 && st.to === D * 0.5,
    'dragging on a track selects an area without changing the window', st);
  const sel = st.sel;
  await page.keyboard.press('s');
  await page.keyboard.press('s');
  st = await state(page);
  tap.ok(JSON.stringify(st.sel) === JSON.stringify(sel) && st.to - st.from > D * 0.1, 'the selection survives zooming out', st);
  const band = await page.$eval('#sel-band', (b) => !b.hidden && b.getBoundingClientRect().width > 1);
  tap.ok(band, 'the selection is drawn as a band over the tracks');
  await page.keyboard.press('f');
  st = await state(page);
  tap.ok(st.from <= sel[0] && st.to >= sel[1] && st.to - st.from < (sel[1] - sel[0]) * 1.3, 'f focuses the selection', st);
  const ruler = await page.$eval('#axis', (c) => c.dataset.ruler);
  tap.ok(/^\+/.test(ruler) && / (s|ms)$/.test(ruler.split('|')[0]), `the ruler is relative with units (${ruler.split('|').slice(0, 3).join(', ')})`, ruler);
  await page.evaluate((d) => window.traceExplorer.selectRange(d * 0.5, d * 0.5 + 0.002), D);
  const fine = await page.$eval('#axis', (c) => c.dataset.ruler);
  tap.ok(/µs$/.test(fine.split('|')[0]), `a 2-ms window is labelled in µs (${fine.split('|').slice(0, 3).join(', ')})`, fine);

  /* 5. Back / Forward walk the view history */
  await page.evaluate((d) => window.traceExplorer.selectRange(d * 0.1, d * 0.2), D);
  await page.evaluate((d) => window.traceExplorer.selectRange(d * 0.3, d * 0.35), D);
  await page.goBack();
  await page.waitForTimeout(150);
  const back = await state(page);
  await page.goForward();
  await page.waitForTimeout(150);
  const fwd = await state(page);
  tap.ok(back.from === D * 0.1 && back.to === D * 0.2 && fwd.from === D * 0.3 && fwd.to === D * 0.35 && page.url().startsWith(s.base),
    'browser Back and Forward walk the view history inside the viewer', { back, fwd });

  /* 6. a copied link restores the window, the selection, the request and its workers */
  await page.evaluate(([d, id]) => window.traceExplorer.setState({ from: d * 0.25, to: d * 0.3, sel: [d * 0.26, d * 0.27], request: id, workers: ['decode-0'] }), [D, worst.id]);
  await page.click('#btn-link');
  const link = await page.$eval('#btn-link', (b) => b.dataset.link);
  const want = await state(page);
  const v2 = await openViewer(link);
  const got = v2.readyAt !== null ? await state(v2.page) : null;
  tap.ok(got && JSON.stringify(got) === JSON.stringify(want), 'opening the copied link restores the view, the selection, the request and the workers', { got, want });
  await v2.close();

  /* 6b. ... and the selected NVTX range, the hidden series and the pane
   * sizes (a fresh browser: nothing stored) */
  const fam = cat.metrics.find((m) => cat.metrics.filter((x) => x.name === m.name).length >= 3).name;
  const prof = cat.profiles.find((p) => p.event_count > 0);
  const it = (await page.evaluate(([d, p]) => window.traceExplorer.queryNsys({ from: d * 0.4, to: d * 0.45, profile: p, limit: 1 }), [D, prof.id])).items[0];
  delete it.depth; /* as a click on a track selects it */
  await page.evaluate(([d, f, ev]) => { window.traceExplorer.setState({ from: d * 0.4, to: d * 0.45, tab: 'nsight', pinnedMetrics: [f], nsysEvent: ev, sel: null, request: null, workers: [] }); return window.traceExplorer.whenMetricsReady(); }, [D, fam, it]);
  await page.locator('#sec-metrics .chart .lg').nth(1).click();
  await page.locator('#sec-metrics .chart .lg').nth(2).click();
  const rect = (pg, sel) => pg.$eval(sel, (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
  const dragBy = async (sel, dx, dy) => {
    const r = await rect(page, sel), x = r.x + r.w / 2, y = r.y + r.h / 2;
    await page.mouse.move(x, y); await page.mouse.down(); await page.mouse.move(x + dx / 2, y + dy / 2); await page.mouse.move(x + dx, y + dy); await page.mouse.up();
    await settle(page);
  };
  await dragBy('#split-side', 90, 0);
  await dragBy('#split-details', 0, -70);
  await dragBy('#split-gutter', 50, 0);
  const look = (pg) => pg.evaluate(async () => {
    const det = document.getElementById('details');
    /* the linked range is read from its shards: wait for its heading */
    for (let i = 0; i < 100 && !det.querySelector('dl.kv'); i++) await new Promise((r) => setTimeout(r, 50));
    await window.traceExplorer.whenMetricsReady();
    return {
      range: det.querySelector('h2') ? det.querySelector('h2').textContent : null,
      fields: det.querySelector('dl.kv') ? det.querySelector('dl.kv').textContent : null,
      shown: [...document.querySelectorAll('#sec-metrics .chart .lg')].map((b) => b.getAttribute('aria-pressed')).join(''),
      side: Math.round(document.getElementById('sidebar').getBoundingClientRect().width),
      details: Math.round(document.getElementById('details').getBoundingClientRect().height),
      labels: DSUI.GUTTER,
    };
  });
  await page.click('#btn-link');
  const link2 = await page.$eval('#btn-link', (b) => b.dataset.link);
  const want2 = Object.assign(await look(page), { state: await state(page) });
  const v3 = await openViewer(link2);
  const got2 = v3.readyAt !== null ? Object.assign(await look(v3.page), { state: await state(v3.page) }) : null;
  tap.ok(want2.range && want2.range.startsWith(it.name) && want2.fields && want2.shown.split('false').length === 3 && want2.state.hiddenSeries.length === 2,
    'the view to link: a selected NVTX range, two series hidden, panes resized', want2);
  tap.ok(got2 && JSON.stringify(got2) === JSON.stringify(want2),
    'opening the copied link restores the selected NVTX range, the hidden series and the pane sizes', { got2, want2, link2 });
  await saveShot(v3.page, 'nav-04-linked-range-hidden-panes.png');
  await v3.close();

  /* 7. usable at 1024x700 */
  await page.setViewportSize({ width: 1024, height: 700 });
  await page.evaluate(() => window.traceExplorer.setState({ tab: 'requests' }));
  await page.waitForTimeout(200);
  const fit = await page.evaluate(() => ({ tracks: document.getElementById('tracks').getBoundingClientRect().height, doc: document.documentElement.scrollWidth }));
  tap.ok(fit.tracks > 200 && fit.doc <= 1024, `at 1024x700 the tracks keep ${fit.tracks.toFixed(0)} px and nothing overflows sideways`, fit);
  await saveShot(page, 'nav-03-1024x700.png');
  tap.ok(v.errors.length === 0, 'no page error', v.errors);
}

await runTest(tap, 'navigate', main);
