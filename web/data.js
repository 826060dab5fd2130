/* data.js: the report's data in the browser.  Owns decoding the embedded
 * core catalog, fetching and verifying detail shards (gzip or not, sizes,
 * row count, SHA-256 in every context: crypto.subtle or its own
 * JavaScript SHA-256), the one shared LRU cache of
 * decoded shards (accounted in decoded JSON bytes) and shard errors. */
'use strict';

const DSData = (() => {
  /* how long a shard fetch nobody waits for lives on before it is cancelled */
  const ABORT_GRACE_MS = 100;
  const FILE_HELP = 'This progressive report must be served over HTTP: it loads its detail data ' +
    'from the detail/ directory next to index.html, which a browser cannot read from a file:// page. ' +
    'Serve the report directory from any static host (for example `python3 -m http.server` inside it) ' +
    'or rebuild it with `dsight build --single-file` to get a page that opens from disk. ' +
    'The run header and request list below come from the page itself.';

  function b64ToBytes(text) {
    /* fromBase64 skips ASCII whitespace itself */
    if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(text);
    const bin = atob(text.replace(/\s+/g, ''));
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  /* The compressed bytes go in as one chunk (a Blob stream would feed
   * 64 KiB pieces, one task hop each). */
  function gunzipStream(bytes) {
    const ds = new DecompressionStream('gzip');
    const w = ds.writable.getWriter();
    w.write(bytes).catch(() => {});
    w.close().catch(() => {});
    return ds.readable;
  }

  /* Reads the decompressed chunks (64 KiB each) itself: about twice as
   * fast as new Response(stream).arrayBuffer() in Chromium. */
  async function gunzip(bytes) {
    const rd = gunzipStream(bytes).getReader();
    const parts = [];
    let n = 0;
    for (;;) {
      const { value, done } = await rd.read();
      if (done) break;
      parts.push(value);
      n += value.length;
    }
    if (parts.length === 1) return parts[0];
    const out = new Uint8Array(n);
    let o = 0;
    for (const p of parts) { out.set(p, o); o += p.length; }
    return out;
  }

  function isGzip(bytes) {
    return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
  }

  /* SHA-256 (FIPS 180-4) in JavaScript, for contexts without
   * crypto.subtle (plain HTTP on a hostname): the round constants are the
   * first 32 bits of the fractional parts of the cube roots of the first
   * 64 primes, the initial hash those of the square roots of the first 8
   * (checked against the standard's vectors by tests/browser). */
  const SHA = (() => {
    const primes = [];
    for (let n = 2; primes.length < 64; n++) if (primes.every((p) => n % p)) primes.push(n);
    const frac = (x) => Math.floor((x - Math.floor(x)) * 4294967296) >>> 0;
    return { K: Uint32Array.from(primes, (p) => frac(Math.cbrt(p))), H: Uint32Array.from(primes.slice(0, 8), (p) => frac(Math.sqrt(p))) };
  })();

  function sha256Js(bytes) {
    const n = bytes.length, full = n & ~63, K = SHA.K, H = SHA.H.slice(), W = new Uint32Array(64);
    /* the last block(s): the rest of the message, 0x80, zeros, the bit length */
    const tail = new Uint8Array(((n - full + 8) >> 6) + 1 << 6);
    tail.set(bytes.subarray(full));
    tail[n - full] = 0x80;
    const dv = new DataView(tail.buffer);
    dv.setUint32(tail.length - 8, Math.floor(n / 0x20000000));
    dv.setUint32(tail.length - 4, (n << 3) >>> 0);
    const rotr = (x, k) => (x >>> k) | (x << (32 - k));
    const block = (b, o) => {
      for (let t = 0; t < 16; t++, o += 4) W[t] = (b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3];
      for (let t = 16; t < 64; t++) {
        const x = W[t - 15], y = W[t - 2];
        W[t] = W[t - 16] + (rotr(x, 7) ^ rotr(x, 18) ^ (x >>> 3)) + W[t - 7] + (rotr(y, 17) ^ rotr(y, 19) ^ (y >>> 10));
      }
      let a = H[0], b1 = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];
      for (let t = 0; t < 64; t++) {
        const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + W[t]) | 0;
        const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b1) ^ (a & c) ^ (b1 & c))) | 0;
        h = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b1; b1 = a; a = (t1 + t2) | 0;
      }
      H[0] += a; H[1] += b1; H[2] += c; H[3] += d; H[4] += e; H[5] += f; H[6] += g; H[7] += h;
    };
    for (let o = 0; o < full; o += 64) block(bytes, o);
    for (let o = 0; o < tail.length; o += 64) block(tail, o);
    let out = '';
    for (const x of H) out += x.toString(16).padStart(8, '0');
    return out;
  }

  /* The SHA-256 of bytes as hex: crypto.subtle where the context has it,
   * else sha256Js (same answer, slower). */
  async function sha256Hex(bytes) {
    if (!(globalThis.isSecureContext && globalThis.crypto && crypto.subtle)) return sha256Js(bytes);
    const d = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
    let s = '';
    for (const b of d) s += b.toString(16).padStart(2, '0');
    return s;
  }

  /* The JSON of a non-executed data element (base64, gzip or not), or
   * undefined when the page has no element with that id. */
  async function decodeElement(doc, id) {
    const el = doc.getElementById(id);
    if (!el) return undefined;
    const bytes = b64ToBytes(el.textContent);
    return JSON.parse(new TextDecoder().decode(isGzip(bytes) ? await gunzip(bytes) : bytes));
  }

  /* Decodes the core catalog from its non-executed script element. */
  async function loadCatalog(doc) {
    const cat = await decodeElement(doc, 'dsight-catalog');
    if (cat === undefined) throw new Error('This page has no embedded report catalog (element #dsight-catalog is missing).');
    if (!cat || cat.schema !== 'srtctl-trace/1' || !cat.meta || !(cat.meta.duration > 0))
      throw new Error('The embedded catalog is not a srtctl-trace/1 document with a positive duration.');
    return cat;
  }

  /* Decodes the descriptor lists of a sharded catalog's index (shards,
   * lookup, summaries, time_summaries, search), which the page carries in their own
   * element so that the page is ready before they are parsed. */
  async function loadCatalogIndex(doc) {
    let lists;
    try {
      lists = await decodeElement(doc, 'dsight-catalog-index');
    } catch (e) {
      throw new Error(`The catalog index of this page (element #dsight-catalog-index) cannot be read: ${e.message}.`);
    }
    if (lists === undefined) throw new Error('This page has no catalog index (element #dsight-catalog-index is missing): rebuild the report.');
    if (!lists || !Array.isArray(lists.shards) || !Array.isArray(lists.lookup))
      throw new Error('The catalog index of this page (element #dsight-catalog-index) is malformed: it lists no shards or no id lookup.');
    return lists;
  }

  class ShardError extends Error {
    constructor(desc, message) {
      super(message);
      this.name = 'ShardError';
      this.url = desc && desc.url;
      this.desc = desc || null;
    }
  }

  function abortError() {
    return new DOMException('The view changed; this fetch was cancelled.', 'AbortError');
  }

  /* One shared LRU of decoded shards.  Budget in decoded JSON bytes. */
  class ShardStore {
    constructor(budget, doc) {
      this.budget = budget;
      this.doc = doc;
      this.lru = new Map();      /* sha256 -> {rows, bytes}; Map order = LRU order */
      this.bytes = 0;
      this.inflight = new Map(); /* sha256 -> {promise, ctrl, waiters} */
      this.errors = [];
      this.onError = null;
      this.owners = null; /* sha256 -> what the shard holds ("NVTX ranges of profile 2 (decode-0)") */
      this.fetchedBytes = 0;
      this.fetches = 0;
    }

    status() {
      return { cachedChunks: this.lru.size, decodedBytes: this.bytes, maxDecodedBytes: this.budget };
    }

    peek(desc) {
      const hit = this.lru.get(desc.sha256);
      return hit ? hit.rows : null;
    }

    /* Returns the rows of one shard (the array is shared: do not modify).
     * Rejects with AbortError when signal aborts, ShardError on bad data. */
    get(desc, signal) {
      const key = desc.sha256;
      const hit = this.lru.get(key);
      if (hit) {
        this.lru.delete(key);
        this.lru.set(key, hit);
        return Promise.resolve(hit.rows);
      }
      if (signal && signal.aborted) return Promise.reject(abortError());
      let fl = this.inflight.get(key);
      if (!fl) {
        const ctrl = new AbortController();
        fl = { ctrl, waiters: 0, promise: null, quiet: false };
        const mine = fl;
        fl.promise = this._load(desc, ctrl.signal).then((rows) => {
          if (this.inflight.get(key) === mine) this.inflight.delete(key);
          this._insert(key, rows, desc.decoded_bytes);
          return rows;
        }, (err) => {
          if (this.inflight.get(key) === mine) this.inflight.delete(key);
          if (err && err.name !== 'AbortError' && !mine.quiet) this._report(desc, err);
          throw err;
        });
        fl.promise.catch(() => {});
        this.inflight.set(key, fl);
      }
      fl.quiet = false;
      fl.waiters++;
      if (!signal) return fl.promise.finally(() => { fl.waiters--; });
      return new Promise((resolve, reject) => {
        let done = false;
        const onAbort = () => {
          if (done) return;
          done = true;
          /* the last waiter left: cancel, unless a get() joins it soon (a
           * redraw aborts its loads and asks again for the same shards at
           * once: pinning a family keeps the tracks' fetches going); a
           * later get() starts afresh instead of joining the cancelled fetch */
          if (--fl.waiters === 0) setTimeout(() => {
            if (fl.waiters === 0 && this.inflight.get(key) === fl) { this.inflight.delete(key); fl.ctrl.abort(); }
          }, ABORT_GRACE_MS);
          reject(abortError());
        };
        signal.addEventListener('abort', onAbort, { once: true });
        fl.promise.then((rows) => {
          if (done) return;
          done = true; fl.waiters--;
          signal.removeEventListener('abort', onAbort);
          resolve(rows);
        }, (err) => {
          if (done) return;
          done = true; fl.waiters--;
          signal.removeEventListener('abort', onAbort);
          reject(err);
        });
      });
    }

    /* Loads small shards the view is likely to ask for next into the
     * cache, one fetch each, without waiting; a failure is not reported
     * here (the view that needs the shard reports it). */
    prefetch(descs) {
      for (const d of descs) {
        if (this.lru.has(d.sha256) || this.inflight.has(d.sha256) || d.decoded_bytes > this.budget / 64) continue;
        this.get(d).catch(() => {});
        const fl = this.inflight.get(d.sha256);
        if (fl && fl.waiters === 1) fl.quiet = true;
      }
    }

    _insert(key, rows, bytes) {
      if (this.lru.has(key)) return;
      while (this.lru.size && this.bytes + bytes > this.budget) {
        const [old, v] = this.lru.entries().next().value;
        this.lru.delete(old);
        this.bytes -= v.bytes;
      }
      if (this.bytes + bytes > this.budget) return; /* larger than the whole budget: not cached */
      this.lru.set(key, { rows, bytes });
      this.bytes += bytes;
    }

    /* Shows a shard error once per shard message (a view that failed on a
     * shard the store already reported adds nothing). */
    report(err) {
      if (err && err.name === 'ShardError' && err.desc) this._report(err.desc, err);
      else if (this.onError) this.onError(err && err.message ? err.message : String(err));
    }

    _report(desc, err) {
      const base = err instanceof ShardError ? err.message : `Detail shard ${desc.url}: ${err.message}`;
      const owner = this.owners && this.owners.get(desc.sha256);
      const span = desc.bounds ? ` covering ${desc.bounds[0]}–${desc.bounds[3]} s` : '';
      const msg = owner ? `${owner}${span} cannot be shown: ${base}` : base;
      if (!this.errors.includes(msg)) {
        this.errors.push(msg);
        if (this.onError) this.onError(msg);
      }
    }

    async _raw(desc, signal) {
      const el = this.doc.getElementById('dsight-shard-' + desc.sha256);
      if (el) return b64ToBytes(el.textContent);
      if (location.protocol === 'file:') throw new ShardError(desc, FILE_HELP);
      let resp;
      try {
        resp = await fetch(desc.url, { signal, cache: 'default' });
      } catch (e) {
        if (e.name === 'AbortError') throw e;
        throw new ShardError(desc, `Detail shard ${desc.url} could not be fetched or is corrupted (the browser reported: ${e.message}).`);
      }
      if (!resp.ok) throw new ShardError(desc, `Detail shard ${desc.url} is missing (HTTP ${resp.status}).`);
      let buf;
      try {
        buf = new Uint8Array(await resp.arrayBuffer());
      } catch (e) {
        if (e.name === 'AbortError') throw e;
        throw new ShardError(desc, `Detail shard ${desc.url} is corrupted or short: its body could not be read (${e.message}).`);
      }
      this.fetches++;
      this.fetchedBytes += buf.length;
      return buf;
    }

    /* The verified, decoded text of a shard, bypassing the cache (a scan
     * that may not need the rows: see DSCatalog's search). */
    async text(desc, signal) {
      return this._text(desc, signal || new AbortController().signal);
    }

    /* Parses a shard's text as its rows (checked against the descriptor). */
    rows(desc, text) {
      let rows;
      try {
        rows = JSON.parse(text);
      } catch (e) {
        throw new ShardError(desc, `Detail shard ${desc.url} is malformed: ${e.message}.`);
      }
      if (!Array.isArray(rows) || rows.length !== desc.count || (rows.length && !Array.isArray(rows[0])))
        throw new ShardError(desc, `Detail shard ${desc.url} is malformed: expected an array of ${desc.count} rows, ` +
          `got ${Array.isArray(rows) ? rows.length + ' rows' : typeof rows}.`);
      return rows;
    }

    async _load(desc, signal) {
      const rows = this.rows(desc, await this._text(desc, signal));
      if (signal.aborted) throw abortError();
      return rows;
    }

    async _text(desc, signal) {
      let bytes = await this._raw(desc, signal);
      if (isGzip(bytes)) {
        try {
          bytes = await gunzip(bytes);
        } catch (e) {
          throw new ShardError(desc, `Detail shard ${desc.url} is corrupted: its gzip data does not decode (${e.message}).`);
        }
      }
      if (signal.aborted) throw abortError();
      if (bytes.length !== desc.decoded_bytes)
        throw new ShardError(desc, `Detail shard ${desc.url} is ${bytes.length < desc.decoded_bytes ? 'short' : 'too long'}: ` +
          `${bytes.length} decoded bytes, expected ${desc.decoded_bytes}.`);
      if (desc.decoded_sha256) { /* every context: sha256Hex falls back to JavaScript */
        const got = await sha256Hex(bytes);
        if (got !== desc.decoded_sha256)
          throw new ShardError(desc, `Detail shard ${desc.url} is corrupted: SHA-256 of its content is ${got}, expected ${desc.decoded_sha256}.`);
      }
      try {
        return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch (e) {
        throw new ShardError(desc, `Detail shard ${desc.url} is malformed: ${e.message}.`);
      }
    }
  }

  return { loadCatalog, loadCatalogIndex, ShardStore, ShardError, FILE_HELP, b64ToBytes, gunzip, isGzip, sha256Js, sha256Hex };
})();
