/* base.js: small DOM and canvas helpers shared by the views: element
 * builder, number/time formatting, HiDPI canvas setup, the shared time
 * mapping of every track (label gutter + plot area), the tooltip and the
 * drag-to-select gesture. */
'use strict';

const DSUI = (() => {
  /* the label column's width (resizable: setGutter) */
  const GUTTER0 = 170;
  let gutter = GUTTER0;
  const RPAD = 14;
  const PALETTE = ['#2f6fde', '#e8590c', '#12b886', '#ae3ec9', '#f59f00', '#1098ad', '#d6336c', '#5c940d',
    '#7048e8', '#495057', '#c92a2a', '#0b7285'];

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const k of kids.flat()) if (k !== null && k !== undefined && k !== false) e.append(k instanceof Node ? k : String(k));
    return e;
  }

  /* Thousands separators by hand: creating Intl formatters costs tens of
   * milliseconds on first use, which the first paint cannot afford. */
  function group(str) {
    const neg = str[0] === '-', body = neg ? str.slice(1) : str;
    const dot = body.indexOf('.');
    let int = dot < 0 ? body : body.slice(0, dot);
    const frac = dot < 0 ? '' : body.slice(dot);
    for (let i = int.length - 3; i > 0; i -= 3) int = int.slice(0, i) + ',' + int.slice(i);
    return (neg ? '-' : '') + int + frac;
  }
  function nf(d) {
    return { format: (x) => group(d === 0 ? String(Math.round(x)) : String(Number(x.toFixed(d)))) };
  }

  function fmtNum(x, digits) {
    if (x === null || x === undefined) return '—';
    if (typeof x !== 'number') return String(x);
    if (Number.isInteger(x) && Math.abs(x) < 1e15) return nf(0).format(x);
    const a = Math.abs(x);
    if (a !== 0 && (a < 1e-3 || a >= 1e9)) return x.toExponential(digits || 3);
    return nf(digits === undefined ? 4 : digits).format(x);
  }

  /* A value with its unit, formatted once for the chart axes, the hover
   * readout and the tables: bytes in B/KiB/MiB/GiB/TiB, times (s, ms, us,
   * ns) in the largest of s/ms/µs/ns under the value, other units after
   * the number; digits: significant digits of scaled values (default 4). */
  const BYTES = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  const TIME = { s: 1, sec: 1, seconds: 1, ms: 1e-3, milliseconds: 1e-3, us: 1e-6, 'µs': 1e-6, microseconds: 1e-6, ns: 1e-9, nanoseconds: 1e-9 };
  function fmtValue(x, unit, digits) {
    if (typeof x !== 'number' || !Number.isFinite(x) || !unit) return fmtNum(x, digits);
    const u = String(unit).toLowerCase(), a = Math.abs(x), d = digits === undefined ? 4 : digits;
    const short = (v) => String(Number(v.toPrecision(Math.max(1, d))));
    if (u === 'bytes' || u === 'byte' || u === 'b') {
      let k = 0, v = x;
      while (Math.abs(v) >= 1024 && k < BYTES.length - 1) { v /= 1024; k++; }
      return `${k ? short(v) : fmtNum(v, 0)} ${BYTES[k]}`;
    }
    if (TIME[u] !== undefined) {
      const sec = x * TIME[u], as = Math.abs(sec);
      if (as === 0) return '0 s';
      if (as >= 1) return `${group(short(sec))} s`;
      if (as >= 1e-3) return `${short(sec * 1e3)} ms`;
      if (as >= 1e-6) return `${short(sec * 1e6)} µs`;
      return `${short(sec * 1e9)} ns`;
    }
    if (u === 'percent' || u === '%') return `${fmtNum(x, a >= 100 ? 1 : 2)} %`;
    if (u === 'fraction' || u === 'ratio') return fmtNum(x, 4);
    return `${fmtNum(x, digits)} ${unit}`;
  }

  /* Seconds with a precision suited to the visible span. */
  function fmtTime(t, span) {
    const s = span || 1;
    const d = s >= 100 ? 1 : s >= 10 ? 2 : s >= 1 ? 3 : s >= 0.01 ? 5 : 7;
    return t.toFixed(d) + ' s';
  }

  function fmtDur(d) {
    if (d === null || d === undefined) return '—';
    const a = Math.abs(d);
    if (a >= 1) return d.toFixed(3) + ' s';
    if (a >= 1e-3) return (d * 1e3).toFixed(3) + ' ms';
    if (a >= 1e-6) return (d * 1e6).toFixed(2) + ' µs';
    return (d * 1e9).toFixed(0) + ' ns';
  }

  /* Sizes a canvas to its CSS width and the given CSS height; returns a
   * 2D context scaled for devicePixelRatio plus the CSS width. */
  let fixedWidth = 0;
  /* Every track spans the tracks column: its width is read once per render
   * (setWidth) instead of once per canvas, which would force a layout each. */
  function setWidth(w) { fixedWidth = w; }
  function trackWidth() { return Math.max(200, fixedWidth || 800); }
  function setupCanvas(c, height, ownWidth) {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(200, !ownWidth && fixedWidth ? fixedWidth : c.parentElement ? c.parentElement.clientWidth : 800);
    const pw = Math.round(w * dpr), ph = Math.round(height * dpr);
    let ctx;
    if (c.style.height !== height + 'px') c.style.height = height + 'px';
    if (c.width !== pw || c.height !== ph) {
      /* a new size allocates a new bitmap: only when the size changes */
      c.width = pw;
      c.height = ph;
      ctx = c.getContext('2d');
    } else {
      /* same size: reset the state and clear, keeping the bitmap */
      ctx = c.getContext('2d');
      if (ctx.reset) ctx.reset();
      else { c.width = pw; }
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, height);
    ctx.font = '11px system-ui, "DejaVu Sans", sans-serif';
    ctx.textBaseline = 'middle';
    return { ctx, w, h: height };
  }

  /* A track's height that only grows while it shows the same kind of
   * drawing (key) at the same zoom (the window's width, of state): panning
   * does not make the tracks jump, and a canvas keeps its bitmap instead
   * of allocating one per window.  A zoom starts again from the height
   * the drawing needs: kept from a taller zoom (the whole run's nesting),
   * it pushed the tracks below it (a prefill's GPU tracks) out of view
   * behind blank rows. */
  function stickyHeight(tr, key, h, state) {
    const k = state ? `${key}@${(state.to - state.from).toPrecision(6)}` : key;
    if (tr.hKey === k && tr.hPx > h) return tr.hPx;
    tr.hKey = k;
    tr.hPx = h;
    return h;
  }

  /* The time mapping shared by every track. */
  function scale(from, to, w) {
    const x0 = gutter, x1 = w - RPAD, k = (x1 - x0) / (to - from);
    return {
      x0, x1, from, to,
      x: (t) => x0 + (t - from) * k,
      t: (x) => from + (x - x0) / k,
    };
  }

  function niceTicks(from, to, n) {
    const span = to - from;
    const raw = span / n;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) || 10 * mag;
    const out = [];
    for (let t = Math.ceil(from / step) * step; t <= to + step * 1e-9; t += step) out.push(Number(t.toPrecision(12)));
    return { ticks: out, step };
  }

  function clipText(ctx, text, maxw) {
    if (maxw <= 0) return '';
    const full = ctx.measureText(text).width;
    if (full <= maxw) return text;
    let n = Math.floor(text.length * maxw / full);
    while (n > 0 && ctx.measureText(text.slice(0, n) + '…').width > maxw) n = Math.floor(n * 0.85);
    return n > 0 ? text.slice(0, n) + '…' : '';
  }

  const tip = () => document.getElementById('tooltip');
  function showTip(ev, content) {
    const t = tip();
    t.replaceChildren(...(Array.isArray(content) ? content : [content]));
    t.hidden = false;
    const r = t.getBoundingClientRect();
    let x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + r.width > innerWidth - 4) x = ev.clientX - r.width - 14;
    if (y + r.height > innerHeight - 4) y = ev.clientY - r.height - 14;
    t.style.left = Math.max(4, x) + 'px';
    t.style.top = Math.max(4, y) + 'px';
  }
  function hideTip() { tip().hidden = true; }

  /* Drag on a track canvas selects a time range; a click without drag
   * calls onClick(ev, x, y).  getScale() returns the canvas' scale. */
  function attachDrag(canvas, getScale, onRange, onClick) {
    let start = null, box = null;
    canvas.addEventListener('mousedown', (ev) => {
      if (ev.button !== 0) return;
      const r = canvas.getBoundingClientRect();
      const x = ev.clientX - r.left;
      const s = getScale();
      if (!s || x < s.x0) { if (onClick) onClick(ev, x, ev.clientY - r.top); return; }
      start = { x, r, s };
      ev.preventDefault();
    });
    window.addEventListener('mousemove', (ev) => {
      if (!start) return;
      const x = Math.min(Math.max(ev.clientX - start.r.left, start.s.x0), start.s.x1);
      if (!box && Math.abs(x - start.x) > 3) {
        box = el('div', { class: 'drag-box' });
        Object.assign(box.style, { position: 'fixed', background: 'rgba(47,111,222,0.18)', border: '1px solid #2f6fde',
          pointerEvents: 'none', zIndex: 40 });
        document.body.append(box);
      }
      if (box) {
        const a = Math.min(x, start.x), b = Math.max(x, start.x);
        Object.assign(box.style, { left: start.r.left + a + 'px', width: (b - a) + 'px', top: start.r.top + 'px', height: start.r.height + 'px' });
      }
    });
    window.addEventListener('mouseup', (ev) => {
      if (!start) return;
      const st = start;
      start = null;
      const x = Math.min(Math.max(ev.clientX - st.r.left, st.s.x0), st.s.x1);
      if (box) {
        box.remove(); box = null;
        const a = st.s.t(Math.min(x, st.x)), b = st.s.t(Math.max(x, st.x));
        if (b > a) onRange(a, b);
      } else if (onClick) onClick(ev, x, ev.clientY - st.r.top);
    });
  }

  function toast(msg) {
    let t = document.getElementById('toast');
    if (!t) { t = el('div', { id: 'toast' }); document.body.append(t); }
    t.textContent = msg;
    t.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { t.hidden = true; }, 2200);
  }

  function kv(obj, keys) {
    const dl = el('dl', { class: 'kv' });
    for (const k of keys || Object.keys(obj)) {
      let v = obj[k];
      if (v !== null && typeof v === 'object') v = JSON.stringify(v);
      dl.append(el('dt', { text: k }), el('dd', { text: v === null || v === undefined ? '—' : String(v) }));
    }
    return dl;
  }

  /* Sets the label column's width (px, clamped to 90..520); returns it. */
  function setGutter(px) {
    gutter = Math.round(Math.max(90, Math.min(520, Number.isFinite(px) ? px : GUTTER0)));
    return gutter;
  }

  return { get GUTTER() { return gutter; }, GUTTER0, setGutter, RPAD, PALETTE, setWidth, trackWidth, stickyHeight, el, fmtNum, fmtValue, fmtTime, fmtDur, setupCanvas, scale, niceTicks, clipText, showTip, hideTip,
    attachDrag, toast, kv };
})();
