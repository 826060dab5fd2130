// reqtable.test.mjs: the requests table of a report whose requests live in
// catalog shards (20,000 requests) answers from the request summaries held
// in memory: each column sorted either way, over the whole run and a
// window, lists the requests `dsight query requests --sort` gives (same
// order, same total), and once they are in memory queryRequests still
// equals the CLI (window, sort, offset; full elements).
import assert from 'node:assert';
import path from 'node:path';
import { Tap, tmpdir, run, dquery, readCatalog, serve, openViewer, runTest } from './harness.mjs';

const tap = new Tap();
const N = 20000;

await runTest(tap, 'reqtable', async () => {
  const dir = tmpdir('reqtable');
  const ev = path.join(dir, 'ev.json'), rep = path.join(dir, 'report');
  if (!tap.ok(run('gen-capture', ['--preset', 'small', '--requests', String(N), '-o', ev]).code === 0, `gen-capture --requests ${N}`)) return;
  const b = run('dsight', ['build', ev, '-o', rep]);
  if (!tap.ok(b.code === 0, 'dsight build', b.stderr)) return;
  const cat = readCatalog(path.join(rep, 'index.html')), D = cat.meta.duration;
  if (!tap.ok(cat.catalog_shards && cat.requests.length === 0, 'the requests live in catalog shards')) return;
  const server = await serve(rep, { gzipHeader: true });
  const v = await openViewer(`${server.base}/index.html`);
  if (!tap.ok(v.readyAt !== null, 'viewer ready', v.errors)) return;
  const page = v.page, ix = cat.catalog_shards;
  const sums = new Set([...ix.summaries, ...(ix.time_summaries || [])].map((d) => d.url));
  tap.ok(sums.size > 0, `the index has ${sums.size} request summary shards`);
  /* the pointer on the column heads loads the summaries */
  await page.hover('#req-table th[data-key="output_tokens"]');
  const sorts = await page.evaluate(() => [...document.querySelectorAll('#req-table th[data-key]')].map((th) => th.dataset.key));
  tap.ok(sorts.length === 6, `the table has ${sorts.length} sortable columns`);
  for (const [tag, w] of [['the whole run', [0, D]], ['a 10-s window', [D * 0.4, D * 0.4 + 10]]]) {
    const bad = [], fetched = v.requests.length;
    let n = 0;
    for (const k of sorts) {
      for (const s of [k, '-' + k]) {
        const got = await page.evaluate(async ([a, b, srt]) => {
          window.traceExplorer.setState({ tab: 'requests', from: a, to: b, reqSort: srt });
          const key = srt.replace('-', ''), dir = srt[0] === '-' ? 'descending' : 'ascending';
          for (let i = 0; i < 3000; i++) {
            const th = document.querySelector(`#req-table th[data-key="${key}"]`), h = document.querySelector('#req-table .hint');
            if (th && th.getAttribute('aria-sort') === dir && h && /in the window/.test(h.textContent)) {
              return { ids: [...document.querySelectorAll('#req-table tr.req-row')].map((t) => t.dataset.id), hint: h.textContent };
            }
            await new Promise((r) => setTimeout(r, 10));
          }
          return null;
        }, [w[0], w[1], s]);
        const cli = dquery(rep, 'requests', { from: w[0], to: w[1], sort: s, limit: 50 }).ok;
        n++;
        if (!got || JSON.stringify(got.ids) !== JSON.stringify(cli.items.map((r) => r.id)) || !got.hint.includes(`of ${cli.total} requests`))
          bad.push({ s, got: got && { ids: got.ids.slice(0, 4), hint: got.hint }, want: cli.items.slice(0, 4).map((r) => r.id), total: cli.total });
      }
    }
    tap.ok(bad.length === 0, `${tag}: the table sorted by each column either way (${n} sorts) lists dsight query requests --sort's first 50 and total`, bad.slice(0, 3));
    const read = v.requests.slice(fetched).filter((u) => sums.has(u.replace(/^https?:\/\/[^/]+\//, '')));
    if (tag !== 'the whole run') tap.ok(read.length === 0, `with the summaries in memory, ${n} sorts of a new window read no request summary shard`, read.slice(0, 5));
  }
  /* the API, once the summaries are in memory */
  const cases = [{ from: D * 0.3, to: D * 0.3 + 1, limit: 50 }, { from: D * 0.1, to: D * 0.6, sort: 'output_tokens', offset: 120, limit: 30 },
    { sort: '-status,start', limit: 20 }, { from: D * 0.7, to: D, sort: '-id', limit: 5 }];
  const bad = [];
  for (const c of cases) {
    const got = await page.evaluate((p) => window.traceExplorer.queryRequests(p), c);
    const cli = dquery(rep, 'requests', c).ok;
    try { assert.deepStrictEqual(got, cli); } catch (e) { bad.push({ c, e: e.message.slice(0, 600) }); }
  }
  tap.ok(bad.length === 0, `queryRequests equals dsight query requests for ${cases.length} windows and sorts once the table's summaries are in memory`, bad);
  /* the Chrome trace of a window holds its requests (from the summaries) */
  const tw = [D * 0.5, D * 0.5 + 2];
  const trace = JSON.parse(await page.evaluate(([a, b]) => window.traceExplorer.exportChromeTrace({ from: a, to: b }), tw));
  const slices = trace.traceEvents.filter((e) => e.ph === 'b' && e.cat === 'request' && e.name === e.args?.id);
  const want = [];
  for (let off = 0; ; off += 1000) {
    const pg = dquery(rep, 'requests', { from: tw[0], to: tw[1], sort: 'start', offset: off, limit: 1000 }).ok;
    want.push(...pg.items);
    if (off + 1000 >= pg.total) break;
  }
  const same = slices.length === want.length && slices.every((e, k) => e.args.id === want[k].id && e.ts === want[k].start * 1e6);
  tap.ok(want.length > 1000 && same, `the Chrome trace of a 2-s window has its ${want.length} requests as async slices, by start (dsight query requests)`,
    { got: slices.length, want: want.length });
  tap.ok(v.errors.length === 0, 'no page error', v.errors);
});
