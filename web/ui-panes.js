/* ui-panes.js: resizable and collapsible side and detail panes (drag the
 * splitters, double-click or the buttons to collapse) and the resizable
 * label column of the tracks (drag its edge, double-click to reset); sizes
 * persist in localStorage when the page may use it, and a copied link
 * carries them (sizes, fromLink). */
'use strict';

const DSPanes = (() => {
  const KEY = 'dsight.panes';
  let bound = false;

  function load() {
    try { return JSON.parse(localStorage.getItem(KEY)) || {}; } catch (e) { return {}; }
  }
  function save(o) {
    try { localStorage.setItem(KEY, JSON.stringify(o)); } catch (e) { /* file:// or storage off */ }
  }

  function apply(o, app) {
    const root = document.documentElement.style;
    document.getElementById('sidebar').classList.toggle('collapsed', !!o.sideCollapsed);
    document.getElementById('details').classList.toggle('collapsed', !!o.detailsCollapsed);
    if (o.side) root.setProperty('--side', o.side + 'px');
    if (o.details) document.getElementById('details').style.height = o.details + 'px';
    if (o.gutter) DSUI.setGutter(o.gutter);
    document.getElementById('btn-side').textContent = o.sideCollapsed ? '»' : '«';
    document.getElementById('btn-details').textContent = o.detailsCollapsed ? '▴ details' : '▾ details';
    if (app) app.render();
  }

  /* A splitter: onMove(dx, dy) during the drag, then saved. */
  function drag(handle, onMove, onEnd) {
    handle.addEventListener('mousedown', (ev) => {
      ev.preventDefault();
      const x = ev.clientX, y = ev.clientY;
      const move = (e) => onMove(e.clientX - x, e.clientY - y);
      const up = () => { window.removeEventListener('mousemove', move); window.removeEventListener('mouseup', up); onEnd(); };
      window.addEventListener('mousemove', move);
      window.addEventListener('mouseup', up);
    });
  }

  /* The stored sizes are read after the first render (restore): the
   * first localStorage access of a page costs milliseconds. */
  const o = {};

  /* The sizes a link carries: side pane width and detail pane height in
   * pixels (0: collapsed) and the label column's width, those set. */
  function sizes() {
    const out = {};
    if (o.sideCollapsed || o.side) out.side = o.sideCollapsed ? 0 : Math.round(o.side);
    if (o.detailsCollapsed || o.details) out.details = o.detailsCollapsed ? 0 : Math.round(o.details);
    if (o.gutter) out.labels = Math.round(o.gutter);
    return out;
  }

  /* Takes the sizes of a link (as sizes() gives them) over the current ones. */
  function fromLink(l) {
    if (!l || !Object.keys(l).length) return false;
    if (l.side !== undefined) { o.sideCollapsed = l.side <= 0; if (l.side > 0) o.side = Math.max(180, l.side); }
    if (l.details !== undefined) { o.detailsCollapsed = l.details <= 0; if (l.details > 0) o.details = Math.max(60, l.details); }
    if (l.labels > 0) o.gutter = l.labels;
    apply(o);
    return true;
  }

  /* Applies the stored sizes, then those of the link (linked); true when
   * there were any (then the caller renders again). */
  function restore(linked) {
    Object.assign(o, load());
    if (fromLink(linked)) return true;
    if (!Object.keys(o).length) return false;
    apply(o);
    return true;
  }

  function bind(app) {
    if (bound) return;
    bound = true;
    const side = document.getElementById('sidebar'), det = document.getElementById('details');
    const sh = DSUI.el('div', { id: 'split-side', class: 'splitter v', title: 'Drag to resize the side pane; double-click to collapse' });
    side.after(sh);
    const dh = DSUI.el('div', { id: 'split-details', class: 'splitter h', title: 'Drag to resize the detail pane; double-click to collapse' });
    det.before(dh);
    let w0 = 0, h0 = 0;
    sh.addEventListener('mousedown', () => { w0 = side.getBoundingClientRect().width; });
    dh.addEventListener('mousedown', () => { h0 = det.getBoundingClientRect().height; });
    drag(sh, (dx) => {
      o.side = Math.max(180, Math.min(window.innerWidth * 0.6, w0 + dx));
      o.sideCollapsed = false;
      apply(o);
    }, () => { save(o); app.render(); });
    drag(dh, (dx, dy) => {
      o.details = Math.max(60, Math.min(window.innerHeight * 0.75, h0 - dy));
      o.detailsCollapsed = false;
      apply(o);
    }, () => { save(o); app.render(); });
    const toggleSide = () => { o.sideCollapsed = !o.sideCollapsed; save(o); apply(o, app); };
    const toggleDetails = () => { o.detailsCollapsed = !o.detailsCollapsed; save(o); apply(o, app); };
    sh.addEventListener('dblclick', toggleSide);
    dh.addEventListener('dblclick', toggleDetails);
    /* the label column's edge, over the ruler and the tracks */
    const gh = DSUI.el('div', { id: 'split-gutter', title: 'Drag to resize the label column; double-click to reset' });
    document.getElementById('main').append(gh);
    let g0 = 0, raf = 0;
    gh.addEventListener('mousedown', () => { g0 = DSUI.GUTTER; });
    drag(gh, (dx) => {
      o.gutter = DSUI.setGutter(Math.min(g0 + dx, document.getElementById('tracks').clientWidth / 2));
      if (!raf) raf = requestAnimationFrame(() => { raf = 0; app.render(true); });
    }, () => { save(o); app.render(); });
    gh.addEventListener('dblclick', () => { o.gutter = DSUI.setGutter(DSUI.GUTTER0); save(o); app.render(); });
    document.getElementById('btn-side').onclick = toggleSide;
    document.getElementById('btn-details').onclick = toggleDetails;
    apply(o);
  }

  /* Puts the label column's edge where the plot starts (each render). */
  function placeGutter() {
    const gh = document.getElementById('split-gutter');
    if (!gh) return;
    const main = document.getElementById('main'), tr = document.getElementById('tracks'), ax = document.getElementById('axis');
    const m = main.getBoundingClientRect(), a = ax.getBoundingClientRect(), t = tr.getBoundingClientRect();
    /* (wholly in the label column: the plot keeps its first pixels) */
    Object.assign(gh.style, { left: `${t.left - m.left + DSUI.GUTTER - 6}px`, top: `${a.top - m.top}px`, height: `${t.bottom - a.top}px` });
  }

  return { bind, restore, sizes, fromLink, placeGutter };
})();
