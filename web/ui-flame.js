/* ui-flame.js: CPU samples of the shown profiles in the selected area (else
 * the window) as a flame graph (root on top, width = total samples) and a
 * call table with self and total samples; click a frame to zoom into it,
 * click the root to zoom out.  Samples stream through the shared cache. */
'use strict';

const DSFlame = (() => {
  const ROW = 16, AUTO_ROWS = 50000;
  let seq = 0, focusPath = [];

  function node(name) { return { name, total: 0, self: 0, kids: new Map() }; }

  /* Builds the call tree of the samples in [from, to] of profs. */
  async function build(app, profs, from, to, signal) {
    const root = node('all samples');
    for (const p of profs) {
      if (!p.cpu) continue;
      const names = p.cpu.names || [], stacks = p.cpu.stacks || [];
      for await (const rows of DSQuery.stream(app.store, p.cpu.chunks, from, to, signal)) {
        for (const r of rows) {
          if (!(r[0] >= from && r[0] <= to)) continue;
          let n = root;
          n.total++;
          for (const i of stacks[r[2]] || []) {
            const nm = names[i];
            let k = n.kids.get(nm);
            if (!k) { k = node(nm); n.kids.set(nm, k); }
            k.total++;
            n = k;
          }
          n.self++;
        }
      }
    }
    return root;
  }

  function descend(root, path) {
    let n = root;
    for (const nm of path) { const k = n.kids.get(nm); if (!k) return root; n = k; }
    return n;
  }

  function draw(app, box, root) {
    const { el } = DSUI;
    const top = descend(root, focusPath);
    const depth = (n) => 1 + Math.max(0, ...[...n.kids.values()].map(depth));
    const levels = Math.min(24, depth(top));
    const canvas = el('canvas', { id: 'flame', 'aria-label': 'CPU flame graph' });
    const hits = [];
    box.replaceChildren(el('h3', { text: `CPU flame graph · ${DSUI.fmtNum(root.total)} samples in the ${app.state.sel ? 'selection' : 'window'}` +
      (focusPath.length ? ` · zoomed into ${focusPath[focusPath.length - 1]}` : '') }), canvas);
    requestAnimationFrame(() => {
      const { ctx, w } = DSUI.setupCanvas(canvas, levels * ROW + 2, true);
      const walk = (n, x, width, d, path) => {
        if (d >= levels || width < 0.5) return;
        const y = d * ROW;
        const hue = (([...n.name].reduce((a, c) => a + c.codePointAt(0), 0) * 37) % 60) + 10;
        ctx.fillStyle = d === 0 ? '#d0d5dd' : `hsl(${hue} 85% 62%)`;
        ctx.fillRect(x, y, Math.max(0.5, width - 1), ROW - 1);
        if (width > 30) {
          ctx.fillStyle = '#101828';
          ctx.fillText(DSUI.clipText(ctx, `${n.name} (${n.total})`, width - 6), x + 3, y + ROW / 2);
        }
        hits.push({ x, y, width, n, path });
        let cx = x;
        const kids = [...n.kids.values()].sort((a, b) => b.total - a.total || DSQuery.cmpCodePoint(a.name, b.name));
        for (const k of kids) {
          const kw = width * k.total / n.total;
          walk(k, cx, kw, d + 1, path.concat(k.name));
          cx += kw;
        }
      };
      walk(top, 0, w, 0, focusPath.slice());
      canvas.dataset.frames = String(hits.length);
    });
    const at = (ev) => {
      const r = canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
      return hits.find((h) => x >= h.x && x < h.x + h.width && y >= h.y && y < h.y + ROW) || null;
    };
    canvas.addEventListener('click', (ev) => {
      const h = at(ev);
      if (!h) return;
      focusPath = h.path.length === focusPath.length && focusPath.length ? focusPath.slice(0, -1) : h.path;
      draw(app, box, root);
    });
    canvas.addEventListener('mousemove', (ev) => {
      const h = at(ev);
      if (!h) return DSUI.hideTip();
      DSUI.showTip(ev, [el('b', { text: h.n.name }), el('div', { class: 'mono', text:
        `total ${h.n.total} (${(100 * h.n.total / Math.max(1, root.total)).toFixed(1)}%) · self ${h.n.self}` }),
      el('div', { class: 'muted', text: 'click: zoom into this frame · click the top frame: zoom out' })]);
    });
    canvas.addEventListener('mouseleave', DSUI.hideTip);
    /* the call table: functions by self samples (total = samples with it on the stack) */
    const fn = new Map();
    accumulate(root, fn);
    const rows = [...fn.entries()].sort((a, b) => b[1].self - a[1].self || b[1].total - a[1].total || DSQuery.cmpCodePoint(a[0], b[0])).slice(0, 25);
    box.append(el('table', { class: 'grid calltable' }, el('tr', {}, ['function', 'self', 'total'].map((h) => el('th', { text: h }))),
      rows.map(([name, f]) => el('tr', { 'data-name': name }, el('td', { text: name }), el('td', { class: 'num', text: DSUI.fmtNum(f.self) }),
        el('td', { class: 'num', text: DSUI.fmtNum(f.total) })))));
  }

  /* Per function: self samples, and total = samples with it anywhere on the stack. */
  function accumulate(root, fn) {
    const onStack = new Map();
    const visit = (n) => {
      for (const k of n.kids.values()) {
        let f = fn.get(k.name);
        if (!f) { f = { self: 0, total: 0 }; fn.set(k.name, f); }
        f.self += k.self;
        const c = onStack.get(k.name) || 0;
        if (!c) f.total += k.total;
        onStack.set(k.name, c + 1);
        visit(k);
        onStack.set(k.name, c);
      }
    };
    visit(root);
  }

  async function load(app, profs, signal) {
    const box = document.getElementById('flame-box');
    if (!box) return;
    const my = ++seq;
    const win = app.state.sel || [app.state.from, app.state.to];
    let rows = 0;
    for (const p of profs) for (const d of (p.cpu && p.cpu.chunks) || []) if (DSQuery.overlaps(d, win[0], win[1])) rows += d.count;
    if (rows > AUTO_ROWS) {
      box.replaceChildren(DSUI.el('p', { class: 'muted', text: `CPU flame graph: ${DSUI.fmtNum(rows)} candidate samples in the ` +
        `${app.state.sel ? 'selection' : 'window'}; select a narrower area (drag on a track) to build it.` }));
      return;
    }
    const root = await build(app, profs, win[0], win[1], signal);
    if (signal.aborted || my !== seq) return;
    if (!root.total) { box.replaceChildren(); return; }
    draw(app, box, root);
  }

  return { load };
})();
