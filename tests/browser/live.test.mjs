// live.test.mjs: the viewer served by a live session (dsightd --http).
// On the `large` report (scripts/bench/benchlib.py's, built once and kept;
// LARGE_REPORT=DIR uses another) a browser opens
// http://127.0.0.1:PORT/?token=...: describe().live, the Query (SQL) page
// and traceExplorer.query answer what `dsight query` answers.  On a small
// report: the "report was rebuilt; reload" banner after a rebuild, the
// new generation after the reload, and the "session has gone" message
// (the static parts keep working).  Screenshots under tests/browser/artifacts/.
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { Tap, ROOT, BUILD, tmpdir, run, openViewer, saveShot, runTest, onCleanup } from './harness.mjs';

const tap = new Tap();

/* dsightd serve REP --path SOCK --http 0: {proc, url, token}. */
async function serveLive(rep, sock) {
  const proc = spawn(path.join(BUILD, 'bin', 'dsightd'), ['serve', rep, '--path', sock, '--http', '0', '--idle-timeout', '600'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  onCleanup(() => { try { proc.kill('SIGTERM'); } catch (e) { /* gone */ } });
  const line = await new Promise((resolve) => {
    let buf = '';
    proc.stdout.on('data', (d) => { buf += d; if (buf.includes('\n')) resolve(buf.split('\n')[0]); });
    proc.on('exit', () => resolve(buf));
    setTimeout(() => resolve(buf), 120000);
  });
  const m = / http=(\S+)/.exec(line);
  const url = m ? m[1] : null;
  const token = fs.existsSync(sock + '.http') ? fs.readFileSync(sock + '.http', 'utf8').trim().split(' ')[1] : null;
  return { proc, url, token, line };
}

function cli(args) {
  const r = run('dsight', args);
  return r.code === 0 ? JSON.parse(r.stdout) : { error: r.stderr.trim(), code: r.code };
}

function largeReport() {
  if (process.env.LARGE_REPORT) return process.env.LARGE_REPORT;
  const r = spawnSync(path.join(ROOT, 'scripts/bench/benchlib.py'), ['report', 'large'],
    { encoding: 'utf8', env: Object.assign({}, process.env, { DSIGHT_BUILD: BUILD }), maxBuffer: 64 << 20 });
  return r.status === 0 ? r.stdout.trim() : null;
}

/* A report whose viewer has the live parts (a cached one built before
 * them is rebuilt here, with this build). */
function liveCapable(rep) {
  return rep && fs.existsSync(path.join(rep, 'index.html')) &&
    fs.readFileSync(path.join(rep, 'index.html'), 'latin1').includes('DSLive');
}

async function large() {
  let rep = largeReport();
  if (rep && !liveCapable(rep)) {
    tap.note(`${rep} was built before the live viewer: building the large report again`);
    const dir = tmpdir('live-large');
    const ev = path.join(dir, 'large.json');
    rep = path.join(dir, 'report');
    const ok = run('gen-capture', ['--preset', 'large', '-o', ev]).code === 0 && run('dsight', ['build', ev, '-o', rep]).code === 0;
    fs.rmSync(ev, { force: true });
    if (!ok) rep = null;
  }
  if (!tap.ok(rep && fs.existsSync(path.join(rep, 'index.html')), 'the large report', rep)) return;
  const dir = tmpdir('live');
  const s = await serveLive(rep, path.join(dir, 'large.sock'));
  if (!tap.ok(s.url && s.token, 'dsightd --http on the large report', s.line)) return;
  const v = await openViewer(`${s.url}?token=${s.token}`, { timeoutMs: 120000 });
  if (!tap.ok(v.readyAt !== null, 'the live viewer is ready', v.errors)) return;
  const page = v.page;
  tap.ok(page.url().split('#')[0] === s.url, 'the token left the address bar (redirected to /)', page.url());
  const d = await page.evaluate(() => window.traceExplorer.describe());
  const hello = cli(['ctl', 'status', s.url + '?token=' + s.token]);
  tap.ok(d.live === true && d.generation === hello.generation, 'describe(): live, the session\'s generation', { live: d.live, g: d.generation });

  /* the Query (SQL) page */
  const sql = 'select profile, count(*) as n, min(start) as first from events group by profile order by profile';
  await page.click('#btn-sql');
  await page.fill('#sql-input', sql);
  await page.click('#sql-run');
  await page.waitForFunction(() => /row/.test(document.getElementById('sql-status').textContent) ||
    !document.getElementById('sql-error').hidden, null, { timeout: 60000 });
  const shown = await page.evaluate(() => ({
    cols: [...document.querySelectorAll('#sql-table thead th')].map((t) => t.textContent),
    rows: [...document.querySelectorAll('#sql-table tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent)),
    status: document.getElementById('sql-status').textContent,
    error: document.getElementById('sql-error').hidden ? null : document.getElementById('sql-error').textContent }));
  const want = cli(['query', rep, 'sql', '--sql', sql]);
  tap.ok(JSON.stringify(shown.cols) === JSON.stringify(want.columns) &&
    JSON.stringify(shown.rows) === JSON.stringify(want.rows.map((r) => r.map((x) => (x === null ? 'NULL' : String(x))))),
  `the SQL page shows dsight query's ${want.rows.length} rows`, { shown, want });
  await saveShot(page, 'live-01-sql-page.png');
  /* a truncated result says so; an error shows its text */
  await page.fill('#sql-input', 'select start from events limit 20000');
  await page.click('#sql-run');
  await page.waitForFunction(() => /truncated/.test(document.getElementById('sql-status').textContent), null, { timeout: 60000 })
    .catch(() => {});
  const tr = await page.evaluate(() => ({ s: document.getElementById('sql-status').textContent,
    n: document.querySelectorAll('#sql-table tbody tr').length }));
  tap.ok(/truncated/.test(tr.s) && tr.n === 10000, 'a result over 10,000 rows: the first 10,000, truncated said', tr);
  await page.fill('#sql-input', 'select nope from nowhere');
  await page.click('#sql-run');
  await page.waitForFunction(() => !document.getElementById('sql-error').hidden, null, { timeout: 30000 }).catch(() => {});
  const err = await page.evaluate(() => document.getElementById('sql-error').textContent);
  const werr = cli(['query', rep, 'sql', '--sql', 'select nope from nowhere']);
  tap.ok(err && werr.error && werr.error.includes(err), 'a failing statement: the error text of dsight query', { err, werr });
  const hist = await page.evaluate(() => [...document.querySelectorAll('#sql-history li')].map((l) => l.textContent));
  tap.ok(hist.length === 3 && hist[2] === sql, 'the history lists the statements of this page', hist);

  /* traceExplorer.query: the session's answers, as dsight query */
  const req = cli(['query', rep, 'requests', '--limit', '1']).items[0].id;
  const cases = [
    ['timeline', { of: 'nsys', bucket: 30 }, ['timeline', '--of', 'nsys', '--bucket', '30']],
    ['requests', { groupBy: 'worker' }, ['requests', '--group-by', 'worker']],
    ['nsys', { from: 100, to: 101, groupBy: 'name' }, ['nsys', '--from', '100', '--to', '101', '--group-by', 'name']],
    ['nsys', { request: req, phase: 'decode', limit: 5 }, ['nsys', '--request', req, '--phase', 'decode', '--limit', '5']],
    ['sql', { sql }, ['sql', '--sql', sql]],
    ['summary', {}, ['summary']],
  ];
  for (const [kind, params, args] of cases) {
    const got = await page.evaluate(([k, p]) => window.traceExplorer.query(k, p).catch((e) => ({ error: e.message })), [kind, params]);
    const exp = cli(['query', rep, ...args]);
    tap.ok(JSON.stringify(got) === JSON.stringify(exp), `traceExplorer.query('${kind}', ${JSON.stringify(params)}) equals dsight query`,
      { got: JSON.stringify(got).slice(0, 300), exp: JSON.stringify(exp).slice(0, 300) });
  }
  const bad = await page.evaluate(() => window.traceExplorer.query('requests', { limit: 5000 }).then(() => null, (e) => e.message));
  tap.ok(bad && /limit/.test(bad), 'an invalid query rejects with the engine\'s message', bad);
  tap.ok(v.errors.length === 0, 'no page error', v.errors);
  s.proc.kill('SIGTERM');
}

async function rebuilt() {
  const dir = tmpdir('live-small');
  const doc = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/example.trace.json'), 'utf8'));
  const ev1 = path.join(dir, 'one.json'), ev2 = path.join(dir, 'two.json'), rep = path.join(dir, 'report');
  fs.writeFileSync(ev1, JSON.stringify(doc));
  doc.meta.job = 'rebuilt-run';
  fs.writeFileSync(ev2, JSON.stringify(doc));
  tap.ok(run('dsight', ['build', ev1, '-o', rep]).code === 0, 'a small report');
  const s = await serveLive(rep, path.join(dir, 'small.sock'));
  const v = await openViewer(`${s.url}?token=${s.token}`);
  if (!tap.ok(v.readyAt !== null, 'the small live viewer is ready', v.errors)) return;
  const page = v.page;
  const gen1 = (await page.evaluate(() => window.traceExplorer.describe())).generation;
  tap.ok(await page.evaluate(() => document.getElementById('live-bar') === null || document.getElementById('live-bar').hidden),
    'no banner while the page is current');
  tap.ok(run('dsight', ['build', ev2, '-o', rep]).code === 0, 'the report is rebuilt');
  await page.evaluate(() => window.traceExplorer.query('summary'));
  await page.waitForSelector('#live-bar.live-rebuilt:not([hidden])', { timeout: 15000 }).catch(() => {});
  const banner = await page.evaluate(() => { const b = document.getElementById('live-bar'); return b && !b.hidden ? b.textContent : null; });
  tap.ok(banner && banner.includes('The report was rebuilt; reload to see the new generation'), 'the rebuilt-report banner appears', banner);
  await saveShot(page, 'live-02-rebuilt-banner.png');
  await Promise.all([page.waitForNavigation(), page.click('#live-reload')]);
  await page.waitForFunction(() => window.traceExplorer !== undefined, null, { timeout: 20000 });
  const after = await page.evaluate(() => ({ d: window.traceExplorer.describe(), bar: !!document.querySelector('#live-bar:not([hidden])') }));
  tap.ok(after.d.generation !== gen1 && after.d.meta.job === 'rebuilt-run' && !after.bar,
    'Reload: the new generation, no banner', { g: after.d.generation, job: after.d.meta.job });

  /* the session goes: a clear message; the static parts keep working */
  const k = run('dsight', ['ctl', 'kill-server', path.join(dir, 'small.sock')]);
  tap.ok(k.code === 0, 'the session is stopped', k.stderr);
  const q = await page.evaluate(() => window.traceExplorer.query('summary').then(() => 'answered', (e) => e.message));
  const gone = await page.evaluate(() => { const b = document.getElementById('live-bar'); return b && !b.hidden ? b.textContent : null; });
  tap.ok(/session has gone/.test(q) && gone && gone.includes('The session has gone'), 'a query after the session stopped: "The session has gone"',
    { q, gone });
  const still = await page.evaluate(() => { const r = window.traceExplorer.queryRequests({}); return Promise.resolve(r).then((x) => x.total); });
  tap.ok(still === 4 && (await page.evaluate(() => window.traceExplorer.describe().gone)) === true,
    'the static parts keep working (queryRequests answers from the page)', still);
  await saveShot(page, 'live-03-session-gone.png');
}

runTest(tap, 'live', async () => {
  await large();
  await rebuilt();
});
