// viewer.test.mjs: what a person sees.  First paint before any shard;
// a corrupted or missing shard shows an error (and queries reject); a
// progressive report opened from file:// explains itself; a single-file
// report works from file://; the copy-view link restores the view; the
// display budget switches to labelled summary tracks; screenshots of
// the main views are saved under tests/browser/artifacts/.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { pathToFileURL } from 'node:url';
import { Tap, ROOT, tmpdir, run, dquery, readCatalog, withCatalog, serve, openViewer, saveShot, cleanup } from './harness.mjs';

const tap = new Tap();
const errorsText = (page) => page.evaluate(() => document.getElementById('errors').textContent);
async function waitFor(page, fn, arg, ms) {
  try { await page.waitForFunction(fn, arg, { timeout: ms || 10000 }); return true; } catch (e) { return false; }
}

async function main() {
  const dir = tmpdir('viewer');
  const ev = path.join(dir, 'medium.json');
  const g = run('gen-capture', ['--preset', 'medium', '-o', ev]);
  if (!tap.ok(g.code === 0, 'gen-capture --preset medium', g.stderr)) return;
  const rep = path.join(dir, 'report');
  const b = run('dsight', ['build', ev, '-o', rep]);
  if (!tap.ok(b.code === 0 && fs.existsSync(path.join(rep, 'index.html')), 'dsight build (progressive)', b.stderr)) return;
  const cat = readCatalog(path.join(rep, 'index.html'));
  const D = cat.meta.duration;

  /* the main views, and first paint before any shard */
  const s = await serve(rep, { gzipHeader: true });
  const v = await openViewer(`${s.base}/index.html`, { permissions: ['clipboard-read', 'clipboard-write'] });
  tap.ok(v.readyAt !== null, 'ready event fires', v.errors);
  const atReady = await v.page.evaluate(() => ({ job: document.getElementById('run-job').textContent,
    counts: document.getElementById('run-counts').textContent }));
  tap.ok(atReady.job === cat.meta.job && /requests/.test(atReady.counts), 'run header shows the job and counts on first paint', atReady);
  await v.page.evaluate(() => Promise.all([window.traceExplorer.whenMetricsReady(), window.traceExplorer.whenDetailsReady()]));
  await saveShot(v.page, '01-overview.png');
  const firstReq = cat.requests[Math.min(3, cat.requests.length - 1)];
  await v.page.evaluate((id) => window.traceExplorer.selectRequest(id), firstReq.id);
  await v.page.evaluate(() => window.traceExplorer.whenMetricsReady());
  const insp = await v.page.evaluate(() => document.getElementById('details').textContent);
  tap.ok(insp.includes(firstReq.id), 'selecting a request shows it in the inspector');
  await saveShot(v.page, '02-request-inspector.png');

  /* metrics tab with a setting family pinned */
  const setting = cat.metrics.find((x) => x.temporal === 'setting');
  const fams = [...new Set(cat.metrics.map((x) => x.name))];
  await v.page.evaluate((pins) => window.traceExplorer.setState({ tab: 'metrics', pinnedMetrics: pins, from: 0, to: window.traceExplorer.describe().meta.duration }),
    [setting ? setting.name : fams[0], fams.find((f) => !setting || f !== setting.name)].filter(Boolean));
  await v.page.evaluate(() => window.traceExplorer.whenMetricsReady());
  const charts = await v.page.evaluate(() => document.querySelectorAll('#sec-metrics .chart canvas').length);
  tap.ok(charts === 2, `one chart per pinned family (${charts})`);
  await v.page.evaluate(() => document.getElementById('sec-metrics').scrollIntoView());
  const box = await v.page.locator('#sec-metrics .chart canvas').first().boundingBox();
  await v.page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
  const tipShown = await v.page.evaluate(() => !document.getElementById('tooltip').hidden && document.getElementById('tooltip').textContent);
  tap.ok(!!tipShown, 'hovering a chart shows the series values', tipShown);
  await saveShot(v.page, '03-metrics.png');

  /* Nsight: whole run over the display budget -> labelled density; narrow window -> exact */
  const prof = cat.profiles.reduce((a, p) => ((p.event_count || 0) > (a.event_count || 0) ? p : a), cat.profiles[0]);
  const total = (prof.event_chunks || []).reduce((a, d) => a + d.count, 0);
  await v.page.evaluate((id) => window.traceExplorer.setState({ tab: 'nsight', profile: id, from: 0, to: window.traceExplorer.describe().meta.duration }), prof.id);
  await v.page.evaluate(() => window.traceExplorer.whenDetailsReady());
  const summ = await v.page.evaluate(() => { const l = document.querySelector('#sec-nsight .summary-label'), c = document.querySelector('#sec-nsight canvas');
    return { label: l && l.textContent, mode: c && c.dataset.mode, labels: c && +c.dataset.labels }; });
  tap.ok(total > 20000, `the medium preset's largest profile (${total} rows) is over the 20,000-row display budget`);
  tap.ok(summ.mode === 'summary' && /per thread and nesting depth, the NVTX name covering most/.test(summ.label) && /exceed the 20,000-row display budget/.test(summ.label) && summ.labels > 0,
    `whole run of profile ${prof.id} (${total} rows) shows labelled summary tracks with ${summ.labels} names`, summ);
  await v.page.evaluate(() => document.getElementById('sec-nsight').scrollIntoView());
  await saveShot(v.page, '04-nsight-summary.png');
  const narrow = prof.event_chunks[Math.floor(prof.event_chunks.length / 2)];
  const mid = (narrow.bounds[0] + narrow.bounds[2]) / 2;
  const res = await v.page.evaluate(([id, a, b]) => window.traceExplorer.inspectNsys({ profile: id, from: a, to: b }), [prof.id, mid, Math.min(D, mid + D * 0.002)]);
  await v.page.evaluate(() => window.traceExplorer.whenDetailsReady());
  const exact = await v.page.evaluate(() => !document.querySelector('#sec-nsight .density-label') && document.querySelector('#sec-nsight canvas').dataset.mode === 'exact');
  const cli = dquery(rep, 'nsys', { profile: prof.id, from: mid, to: Math.min(D, mid + D * 0.002) });
  tap.ok(exact, 'a narrow window draws exact ranges');
  tap.ok(cli.ok && cli.ok.items.length > 0 && JSON.stringify(res) === JSON.stringify(cli.ok),
    `inspectNsys returns the page dsight query returns (total ${res && res.total}, ${cli.ok && cli.ok.items.length} items)`, { res, cli: cli.ok || cli.error });
  await v.page.evaluate(() => document.getElementById('sec-nsight').scrollIntoView());
  await saveShot(v.page, '05-nsight-exact.png');

  /* a burst of view changes: only the last one draws (stale loads are cancelled) */
  const burst = await v.page.evaluate(async ([m, D2]) => {
    const te = window.traceExplorer;
    let last = null;
    for (let i = 0; i < 12; i++) {
      const a = m + (i * D2) / 5000;
      last = te.selectRange(a, a + D2 / 1000);
    }
    await te.whenDetailsReady();
    const drawn = [...document.querySelectorAll('#sec-nsight canvas[data-mode=exact]')].map((c) => c.dataset.drawn || null);
    return { want: `${last.from},${last.to}`, drawn, profile: last.profile };
  }, [mid, D]);
  tap.ok(burst.drawn.length > 0 && burst.drawn.every((d) => d === burst.want),
    'after a burst of range changes every exact track shows the last range only', burst);

  /* keyboard range controls: zoom, pan, back */
  await v.page.evaluate(() => document.activeElement && document.activeElement.blur());
  const before = await v.page.evaluate(() => window.traceExplorer.getState());
  await v.page.keyboard.press('-');
  const zoomed = await v.page.evaluate(() => window.traceExplorer.getState());
  await v.page.keyboard.press('ArrowLeft');
  await v.page.keyboard.press('Backspace');
  await v.page.keyboard.press('Backspace');
  const back = await v.page.evaluate(() => window.traceExplorer.getState());
  tap.ok(zoomed.to - zoomed.from > before.to - before.from && back.from === before.from && back.to === before.to,
    'keyboard zoom out, pan and back restore the previous range', { before, zoomed, back });
  await v.page.fill('#in-from', '1.5');
  await v.page.fill('#in-to', '3.25');
  await v.page.press('#in-to', 'Enter');
  const typed = await v.page.evaluate(() => window.traceExplorer.getState());
  tap.ok(typed.from === 1.5 && typed.to === 3.25, 'typed from/to + Enter selects the range', typed);

  /* drag-select on the time axis */
  const ax = await v.page.locator('#axis').boundingBox();
  await v.page.mouse.move(ax.x + 300, ax.y + 12);
  await v.page.mouse.down();
  await v.page.mouse.move(ax.x + 500, ax.y + 12, { steps: 4 });
  await v.page.mouse.up();
  const dragged = await v.page.evaluate(() => window.traceExplorer.getState());
  tap.ok(dragged.from > 1.5 && dragged.to < 3.25 && dragged.from < dragged.to, 'dragging on the axis selects a sub-range', dragged);

  /* copy-view link restores the view */
  const want = await v.page.evaluate(([req, pins]) => {
    const te = window.traceExplorer;
    te.setState({ pinnedMetrics: pins, profile: 1, tab: 'metrics' });
    te.selectRequest(req);
    te.selectRange(0.125, 7.5);
    return te.getState();
  }, [firstReq.id, fams.slice(0, 3)]);
  await v.page.click('#btn-link');
  const link = await v.page.evaluate(async () => {
    try { return await navigator.clipboard.readText(); } catch (e) { return document.getElementById('btn-link').dataset.link; }
  });
  tap.ok(typeof link === 'string' && link.includes('#'), 'Copy link puts a link with the view in its fragment on the clipboard', link);
  const v2 = await openViewer(link);
  const got = await v2.page.evaluate(() => window.traceExplorer.getState());
  tap.ok(JSON.stringify(got) === JSON.stringify(want), 'opening the copied link restores the view', { want, got });
  await v2.close();

  /* export button downloads JSON */
  const [dl] = await Promise.all([v.page.waitForEvent('download', { timeout: 15000 }).catch(() => null), v.page.click('#btn-export')]);
  let exported = null;
  if (dl) { const p = await dl.path(); exported = JSON.parse(fs.readFileSync(p, 'utf8')); }
  tap.ok(exported && exported.view && exported.view.from === 0.125 && exported.nsys && exported.request && exported.request.id === firstReq.id,
    'Export JSON downloads the selection');
  tap.ok(v.errors.length === 0, 'no page error in the main views', v.errors);
  await v.close();

  /* corrupted and missing shards */
  const p0 = cat.profiles.find((p) => (p.event_chunks || []).length >= 2);
  const inside = (d) => [Math.max(0, d.bounds[0]), Math.max(0, d.bounds[0]) + (d.bounds[2] - Math.max(0, d.bounds[0])) / 2];
  const bad = p0.event_chunks[p0.event_chunks.length - 1];
  const gone = p0.event_chunks.slice(1, -1).find((d) => d.bounds[3] < inside(bad)[0]) || p0.event_chunks[1];
  const goodBytes = fs.readFileSync(path.join(rep, bad.url));
  const corrupt = Buffer.from(goodBytes);
  for (let i = 20; i < corrupt.length - 8; i += 7) corrupt[i] ^= 0x5a;
  for (const [label, gz] of [['corrupted gzip', true], ['corrupted, no Content-Encoding', false]]) {
    const sb = await serve(rep, { gzipHeader: gz, override: (u) => (u === '/' + bad.url ? { body: corrupt, headers: gz ? { 'Content-Encoding': 'gzip' } : {} } : u === '/' + gone.url ? { status: 404, body: 'gone' } : null) });
    const [ba, bb] = inside(bad), [ga, gb] = inside(gone);
    const vb = await openViewer(`${sb.base}/index.html#from=${ba}&to=${bb}&tab=nsight&profile=${p0.id}`);
    const shown = await waitFor(vb.page, (u) => document.getElementById('errors').textContent.includes(u), bad.url);
    const txt = await errorsText(vb.page);
    /* with Content-Encoding the browser's own decoder fails (fetch or body
       read); without it data.js's gunzip fails */
    const want = gz ? new RegExp(`Detail shard ${bad.url} (could not be fetched or is corrupted \\(the browser reported|is corrupted or short: its body could not be read)`)
      : new RegExp(`Detail shard ${bad.url} is corrupted: its gzip data does not decode \\(`);
    tap.ok(shown && want.test(txt), `${label}: a corrupted shard shows the error naming it`, txt);
    const rej = await vb.page.evaluate(async ([a, b2, id]) => {
      try { await window.traceExplorer.queryNsys({ profile: id, from: a, to: b2 }); return null; } catch (e) { return e.message; }
    }, [ba, bb, p0.id]);
    tap.ok(rej && want.test(rej), `${label}: queryNsys over the corrupted shard rejects with that error`, rej);
    const miss = await vb.page.evaluate(async ([a, b2, id]) => {
      try { await window.traceExplorer.queryNsys({ profile: id, from: a, to: b2 }); return null; } catch (e) { return e.message; }
    }, [ga, gb, p0.id]);
    const missShown = await waitFor(vb.page, (u) => document.getElementById('errors').textContent.includes(u), gone.url);
    tap.ok(miss === `Detail shard ${gone.url} is missing (HTTP 404).` && missShown, `${label}: a missing shard rejects and shows its error`, miss);
    tap.ok(txt.includes(`NVTX ranges of profile ${p0.id} (${p0.worker}`) && txt.includes(`covering ${bad.bounds[0]}–${bad.bounds[3]} s`),
      `${label}: the error names the profile and the time the shard covers`, txt);
    if (gz) await saveShot(vb.page, '06-shard-error.png');
    const far = p0.event_chunks[0];
    await vb.page.evaluate(([a, b2]) => { window.traceExplorer.selectRange(a, b2); return window.traceExplorer.whenDetailsReady(); },
      [Math.max(0, far.bounds[0]) + 1e-6, Math.max(0, far.bounds[0]) + 2e-6]);
    const after = await errorsText(vb.page);
    tap.ok(!after.includes(bad.url) && !after.includes(gone.url), `${label}: the shard errors clear when the view moves on`, after);
    await vb.close();
  }

  /* valid gzip, wrong content: each check of data.js with its exact message
     (decoded length, SHA-256 of the content, row count) */
  const decoded = zlib.gunzipSync(goodBytes);
  const at = decoded.indexOf('1', 10);
  const altered = Buffer.from(decoded);
  altered[at] = 0x32; /* '1' -> '2': same length, still JSON */
  const longer = Buffer.concat([decoded, Buffer.from(' ')]);
  const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');
  const html = fs.readFileSync(path.join(rep, 'index.html'), 'utf8');
  const fewer = JSON.parse(JSON.stringify(cat));
  const fewerDesc = fewer.profiles.find((p) => p.id === p0.id).event_chunks.find((d) => d.url === bad.url);
  fewerDesc.count += 1; /* the catalog promises one row more than the shard has */
  tap.ok(at > 0 && bad.decoded_bytes === decoded.length && bad.decoded_sha256 === sha(decoded) && bad.count > 0,
    'the catalog describes the shard (decoded_bytes, decoded_sha256, count)', bad);
  const variants = [
    ['altered content', { shard: zlib.gzipSync(altered) },
      `Detail shard ${bad.url} is corrupted: SHA-256 of its content is ${sha(altered)}, expected ${bad.decoded_sha256}.`],
    ['wrong length', { shard: zlib.gzipSync(longer) },
      `Detail shard ${bad.url} is too long: ${longer.length} decoded bytes, expected ${decoded.length}.`],
    ['wrong row count', { page: withCatalog(html, fewer) },
      `Detail shard ${bad.url} is malformed: expected an array of ${bad.count + 1} rows, got ${bad.count} rows.`],
  ];
  for (const [label, body, msg] of variants) {
    for (const gz of [true, false]) {
      const how = `${label}, ${gz ? 'Content-Encoding: gzip' : 'no Content-Encoding'}`;
      const sb = await serve(rep, { gzipHeader: gz, override: (u) => {
        if (u === '/' + bad.url && body.shard) return { body: body.shard, headers: gz ? { 'Content-Encoding': 'gzip' } : {} };
        if ((u === '/' || u === '/index.html') && body.page) return { body: body.page, headers: { 'Content-Type': 'text/html; charset=utf-8' } };
        return null;
      } });
      const [ba, bb] = inside(bad);
      const vb = await openViewer(`${sb.base}/index.html#from=${ba}&to=${bb}&tab=nsight&profile=${p0.id}`);
      const shown = await waitFor(vb.page, (u) => document.getElementById('errors').textContent.includes(u), msg);
      tap.ok(shown, `${how}: the page shows exactly: ${msg.replace(/[0-9a-f]{64}/g, '<sha>')}`, await errorsText(vb.page));
      const rej = await vb.page.evaluate(async ([a, b2, id]) => {
        try { await window.traceExplorer.queryNsys({ profile: id, from: a, to: b2 }); return null; } catch (e) { return e.message; }
      }, [ba, bb, p0.id]);
      tap.ok(rej === msg, `${how}: queryNsys rejects with that message`, { got: rej, want: msg });
      await vb.close();
    }
  }

  /* progressive report from file:// */
  const vf = await openViewer(pathToFileURL(path.join(rep, 'index.html')).href);
  tap.ok(vf.readyAt !== null, 'a progressive report from file:// still renders its catalog', vf.errors);
  const ftxt = await errorsText(vf.page);
  tap.ok(/served over HTTP/.test(ftxt) && /--single-file/.test(ftxt), 'a progressive report from file:// explains it must be served over HTTP or rebuilt --single-file', ftxt);
  await saveShot(vf.page, '07-file-progressive.png');
  await vf.close();

  /* single-file report from file:// */
  const small = path.join(ROOT, 'tests/fixtures/example.trace.json');
  const srep = path.join(dir, 'single');
  const sb = run('dsight', ['build', small, '-o', srep, '--single-file']);
  if (tap.ok(sb.code === 0 && fs.existsSync(path.join(srep, 'index.html')), 'dsight build --single-file', sb.stderr)) {
    const vs = await openViewer(pathToFileURL(path.join(srep, 'index.html')).href);
    tap.ok(vs.readyAt !== null, 'a single-file report opens from file://', vs.errors);
    const q = await vs.page.evaluate(async () => {
      const te = window.traceExplorer;
      return { nsys: await te.queryNsys({ from: 2, to: 11 }), cpu: await te.queryCpu({}), metrics: await te.queryMetrics({ points: true, from: 1 }) };
    });
    const want2 = { nsys: dquery(srep, 'nsys', { from: 2, to: 11 }).ok, cpu: dquery(srep, 'cpu', {}).ok, metrics: dquery(srep, 'metrics', { points: true, from: 1 }).ok };
    tap.ok(JSON.stringify(q) === JSON.stringify(want2), 'single-file queries from file:// equal dsight query on the single-file report', { q, want2 });
    tap.ok((await errorsText(vs.page)) === '', 'single-file report shows no error');
    await vs.page.evaluate(() => window.traceExplorer.setState({ tab: 'metrics', pinnedMetrics: ['log_decode_request_limit', 'gpu_utilization'] }));
    await vs.page.evaluate(() => window.traceExplorer.whenMetricsReady());
    await saveShot(vs.page, '08-single-file-metrics.png');
    await vs.close();
  }
}

try {
  await main();
} catch (e) {
  tap.ok(false, 'viewer test crashed', e.stack);
} finally {
  await cleanup();
}
console.log(`# ${tap.passed} passed, ${tap.failed} failed`);
process.exit(tap.failed ? 1 : 0);
