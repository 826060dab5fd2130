// harness.mjs: shared helpers of the browser tests and scripts/bench/browser:
// TAP output, headless Chromium (Debian's /usr/bin/chromium through
// playwright-core, fresh profile), a tiny localhost static server (with or
// without Content-Encoding: gzip for .json.gz), dsight/gen-capture runners
// and decoding of a report's embedded core catalog.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BUILD = path.resolve(ROOT, process.env.DSIGHT_BUILD || 'build');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const ARTIFACTS = path.join(ROOT, 'tests/browser/artifacts');

let pw = null;
export async function playwright() {
  if (!pw) pw = await import(path.join(ROOT, 'node_modules/playwright-core/index.mjs'));
  return pw;
}

/* ---- TAP ---- */
export class Tap {
  constructor() { this.passed = 0; this.failed = 0; }
  ok(cond, name, diag) {
    if (cond) { this.passed++; console.log(`ok - ${name}`); } else {
      this.failed++;
      console.log(`not ok - ${name}`);
      if (diag !== undefined) for (const l of String(typeof diag === 'string' ? diag : JSON.stringify(diag)).slice(0, 3000).split('\n')) console.log(`#   ${l}`);
    }
    return !!cond;
  }
  note(msg) { for (const l of String(msg).split('\n')) console.log(`# ${l}`); }
}

/* ---- temp dirs and cleanup ---- */
const cleanups = [];
export function onCleanup(fn) { cleanups.push(fn); }
export async function cleanup() {
  while (cleanups.length) {
    try { await cleanups.pop()(); } catch (e) { /* best effort */ }
  }
}
export function tmpdir(tag) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `dsight-${tag}-`));
  onCleanup(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

/* ---- tools ---- */
export function run(bin, args, opts) {
  const r = spawnSync(path.join(BUILD, 'bin', bin), args, Object.assign({ encoding: 'utf8', maxBuffer: 512 << 20 }, opts || {}));
  return { code: r.status, stdout: r.stdout || '', stderr: r.stderr || '', error: r.error };
}

/* The CLI answer as the browser API gives it: the round-2 notes of a
 * phase's roles and of an unavailable lifecycle are not in the browser
 * (nsys rows carry depth since API 3.3, compared as they are). */
function asBrowser(kind, a) {
  if (a && Array.isArray(a.notes)) {
    a.notes = a.notes.filter((n) => !/^No (role is known for the workers|worker of request) /.test(n));
    if (!a.notes.length) delete a.notes;
  }
  if (kind === 'lifecycle' && a && typeof a === 'object') delete a.notes;
  return a;
}

/* dsight query: {ok: value} or {error: message, code}. */
export function dquery(report, kind, params) {
  const flags = { from: '--from', to: '--to', profile: '--profile', name: '--name', offset: '--offset', limit: '--limit',
    worker: '--worker', rank: '--rank', session: '--session', agent: '--agent', search: '--search', minTTFT: '--min-ttft-ms', request: '--request',
    sort: '--sort', fields: '--fields', groupBy: '--group-by', bucket: '--bucket', of: '--of', phase: '--phase',
    device: '--device', stream: '--stream', gpu_kind: '--gpu-kind' };
  const args = ['query', report, kind];
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null) continue;
    if (k === 'points') { if (v) args.push('--points'); continue; }
    if (Array.isArray(v) && ['worker', 'session', 'agent', 'name'].includes(k)) for (const x of v) args.push(flags[k], String(x));
    else args.push(flags[k], Array.isArray(v) ? v.join(',') : String(v));
  }
  const r = run('dsight', args);
  if (r.code === 0) return { ok: asBrowser(kind, JSON.parse(r.stdout)) };
  let msg = r.stderr.trim();
  try { msg = JSON.parse(msg.split('\n').pop()).error; } catch (e) { /* keep raw */ }
  return { error: msg, code: r.code };
}

/* The JSON of a page's data element (base64, gzip or not), or undefined. */
function elementJson(html, id) {
  const m = html.match(new RegExp(`<script type="application/octet-stream" id="${id}">([^<]*)</script>`));
  if (!m) return undefined;
  let bytes = Buffer.from(m[1].replace(/\s+/g, ''), 'base64');
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = zlib.gunzipSync(bytes);
  return JSON.parse(bytes.toString('utf8'));
}

/* Reads the core catalog embedded in index.html, with a sharded
 * catalog's descriptor lists (#dsight-catalog-index) put back into its
 * catalog_shards: the whole index. */
export function readCatalog(indexHtml) {
  const html = fs.readFileSync(indexHtml, 'utf8');
  const cat = elementJson(html, 'dsight-catalog');
  if (cat === undefined) throw new Error(`${indexHtml}: no #dsight-catalog element`);
  const lists = elementJson(html, 'dsight-catalog-index');
  if (lists !== undefined) {
    if (!cat.catalog_shards) throw new Error(`${indexHtml}: #dsight-catalog-index without catalog_shards`);
    Object.assign(cat.catalog_shards, lists);
  }
  return cat;
}

/* Re-embeds a modified core catalog into a page's HTML text. */
export function withCatalog(html, cat) {
  const b64 = zlib.gzipSync(Buffer.from(JSON.stringify(cat))).toString('base64');
  return html.replace(/(<script type="application\/octet-stream" id="dsight-catalog">)[^<]*(<\/script>)/, (_, a, b) => a + b64 + b);
}

/* ---- static server on 127.0.0.1 ---- */
// opts.gzipHeader: serve *.json.gz as-is with Content-Encoding: gzip.
// opts.override(urlPath) -> {status, body, headers} | null to replace a file.
export async function serve(root, opts) {
  const o = opts || {};
  const log = [];
  const srv = http.createServer((req, res) => {
    const u = decodeURIComponent(req.url.split(/[?#]/)[0]);
    log.push(u);
    const ov = o.override && o.override(u);
    if (ov) {
      res.writeHead(ov.status || 200, ov.headers || {});
      res.end(ov.body);
      return;
    }
    const file = path.join(root, path.normalize(u.endsWith('/') ? u + 'index.html' : u));
    if (!file.startsWith(root)) { res.writeHead(403); res.end(); return; }
    fs.readFile(file, (err, body) => {
      if (err) { res.writeHead(404, { 'Content-Type': 'text/plain' }); res.end('not found'); return; }
      const h = { 'Cache-Control': 'no-store' };
      if (file.endsWith('.html')) h['Content-Type'] = 'text/html; charset=utf-8';
      else if (file.endsWith('.json.gz')) {
        if (o.gzipHeader) { h['Content-Type'] = 'application/json'; h['Content-Encoding'] = 'gzip'; } else h['Content-Type'] = 'application/gzip';
      }
      res.writeHead(200, h);
      res.end(body);
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${srv.address().port}`;
  onCleanup(() => new Promise((r) => { srv.closeAllConnections(); srv.close(() => r()); }));
  return { base, log, close: () => new Promise((r) => { srv.closeAllConnections(); srv.close(() => r()); }) };
}

/* ---- browser ---- */
/* A hostname that resolves to 127.0.0.1 in the browser: a page served
 * there is not a secure context (no crypto.subtle). */
export const INSECURE_HOST = 'dsight-insecure.test';
export const INSECURE_ARGS = [`--host-resolver-rules=MAP ${INSECURE_HOST} 127.0.0.1`];
export const CHROME_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'];

/* A fresh Chromium (new user-data-dir) per viewer session; opts.args:
 * more Chromium flags, opts.viewport, opts.permissions. */
export async function launch(opts) {
  const { chromium } = await playwright();
  const userDir = tmpdir('chromium');
  const ctx = await chromium.launchPersistentContext(userDir, {
    executablePath: CHROMIUM, headless: true, args: CHROME_FLAGS.concat((opts && opts.args) || []),
    viewport: (opts && opts.viewport) || { width: 1280, height: 800 },
    permissions: (opts && opts.permissions) || [],
  });
  onCleanup(() => ctx.close());
  return ctx;
}

/* Opens url in a fresh browser; resolves once trace-explorer:ready fired
 * (readyAt null after timeoutMs).  Records every request URL and page error. */
export async function openViewer(url, opts) {
  const o = opts || {};
  const ctx = await launch(o);
  const page = ctx.pages()[0] || await ctx.newPage();
  const requests = [], errors = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('dialog', (d) => d.dismiss().catch(() => {}));
  await page.addInitScript(() => {
    window.__dsReady = new Promise((resolve) => addEventListener('trace-explorer:ready', () => resolve(performance.now()), { once: true }));
  });
  await page.goto(url);
  let readyAt = null;
  try {
    readyAt = await page.evaluate((ms) => Promise.race([window.__dsReady, new Promise((r) => setTimeout(() => r(null), ms))]), o.timeoutMs || 20000);
  } catch (e) { errors.push(String(e)); }
  return { ctx, page, requests, errors, readyAt, close: () => ctx.close() };
}

export function saveShot(page, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  return page.screenshot({ path: path.join(ARTIFACTS, name) });
}

/* Deterministic PRNG for window choice. */
export function rng(seed) {
  let s = seed >>> 0;
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 4294967296; };
}

/* Runs a test's main(tap), reports a crash, cleans up and exits with TAP's verdict. */
export async function runTest(tap, name, main) {
  try {
    await main();
  } catch (e) {
    tap.ok(false, `${name} test crashed`, e.stack);
  } finally {
    await cleanup();
  }
  console.log(`# ${tap.passed} passed, ${tap.failed} failed`);
  process.exit(tap.failed ? 1 : 0);
}

/* A medium-preset report served from localhost and open in a fresh
 * browser: {rep, cat, D, server, v, page}, or null (failures reported).
 * opts: {plain: no Content-Encoding header, scale: gen-capture --scale,
 * edit(doc): changes the evidence document before the build}. */
export async function mediumViewer(tap, tag, opts) {
  const dir = tmpdir(tag);
  const ev = path.join(dir, 'medium.json');
  const scale = opts && opts.scale ? ['--scale', String(opts.scale)] : [];
  if (!tap.ok(run('gen-capture', ['--preset', 'medium', ...scale, '-o', ev]).code === 0, `gen-capture --preset medium ${scale.join(' ')}`)) return null;
  if (opts && opts.edit) {
    const doc = JSON.parse(fs.readFileSync(ev, 'utf8'));
    opts.edit(doc);
    fs.writeFileSync(ev, JSON.stringify(doc));
  }
  const rep = path.join(dir, 'report');
  const b = run('dsight', ['build', ev, '-o', rep]);
  if (!tap.ok(b.code === 0, 'dsight build', b.stderr)) return null;
  const cat = readCatalog(path.join(rep, 'index.html'));
  const server = await serve(rep, { gzipHeader: !(opts && opts.plain) });
  const v = await openViewer(`${server.base}/index.html`);
  if (!tap.ok(v.readyAt !== null, 'viewer ready', v.errors)) return null;
  return { rep, cat, D: cat.meta.duration, server, v, page: v.page };
}
