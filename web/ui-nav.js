/* ui-nav.js: Perfetto-style navigation: the time under the cursor (W/S
 * zoom there), Ctrl+wheel zoom at the cursor, horizontal wheel pan, the
 * area selection band drawn over every track, the relative ruler's
 * units (ticks as offsets from the window start), marks (m: the
 * selection's time span stays marked over every track) and the keyboard
 * help (?); Enter or Esc in a search or number field hands the keyboard
 * back to the timeline. */
'use strict';

const DSNav = (() => {
  let cursorX = null; /* client x of the pointer over the tracks, or null */

  function plotScale(app) {
    const tr = document.getElementById('tracks');
    const r = tr.getBoundingClientRect();
    return { r, s: DSUI.scale(app.state.from, app.state.to, tr.clientWidth) };
  }

  /* The time under the pointer when it is over the plot area, else null. */
  function cursor(app) {
    if (cursorX === null) return null;
    const { r, s } = plotScale(app);
    const x = cursorX - r.left;
    return x >= s.x0 && x <= s.x1 ? s.t(x) : null;
  }

  function bind(app) {
    const main = document.getElementById('main');
    /* Enter or Esc in a field (the fields' own handlers run first): the
     * keyboard goes back to the timeline */
    document.addEventListener('keydown', (ev) => {
      const t = ev.target;
      if (!(t && t.tagName === 'INPUT' && (t.type === 'search' || t.type === 'number')) || (ev.key !== 'Enter' && ev.key !== 'Escape')) return;
      if (t.id === 'in-from' || t.id === 'in-to') return; /* their own: only once the window is valid */
      t.blur();
      document.getElementById('tracks').focus({ preventScroll: true });
    });
    main.addEventListener('mousemove', (ev) => { cursorX = ev.clientX; });
    main.addEventListener('mouseleave', () => { cursorX = null; });
    main.addEventListener('wheel', (ev) => {
      if (ev.ctrlKey || ev.metaKey) {
        ev.preventDefault();
        cursorX = ev.clientX;
        app.zoom(Math.exp(Math.max(-200, Math.min(200, ev.deltaY)) * 0.004), cursor(app), { coalesce: true });
      } else if (Math.abs(ev.deltaX) > Math.abs(ev.deltaY) && ev.deltaX) {
        ev.preventDefault();
        app.pan(Math.max(-0.5, Math.min(0.5, ev.deltaX / 800)), { coalesce: true });
      }
    }, { passive: false });
  }

  /* Places band over the axis and the tracks at [a, b] of the window
   * (hidden when outside it). */
  function place(app, band, a0, b0) {
    const main = document.getElementById('main'), tr = document.getElementById('tracks'), ax = document.getElementById('axis');
    const m = main.getBoundingClientRect(), a = ax.getBoundingClientRect(), t = tr.getBoundingClientRect();
    const s = DSUI.scale(app.state.from, app.state.to, tr.clientWidth);
    const x0 = Math.max(s.x0, s.x(a0)), x1 = Math.min(s.x1, s.x(b0));
    band.hidden = !(x1 >= x0);
    Object.assign(band.style, { left: `${t.left - m.left + x0}px`, width: `${Math.max(1, x1 - x0)}px`, top: `${a.top - m.top}px`,
      height: `${t.bottom - a.top}px` });
  }

  /* The band of the area selection over the axis and the tracks, and the
   * marks. */
  function drawSelection(app) {
    const main = document.getElementById('main');
    let band = document.getElementById('sel-band');
    const sel = app.state.sel;
    drawMarks(app);
    DSPanes.placeGutter();
    if (!sel) { if (band) band.hidden = true; return; }
    if (!band) {
      band = DSUI.el('div', { id: 'sel-band', 'aria-hidden': 'true' }, DSUI.el('span', { class: 'sel-label' }));
      main.append(band);
    }
    place(app, band, sel[0], sel[1]);
    band.firstChild.textContent = `selection ${DSUI.fmtDur(sel[1] - sel[0])} · f to focus · m to mark · Esc to clear`;
  }

  /* app.marks: [[a, b]] spans kept marked over every track (m adds the
   * selection's span, or removes it when already marked; M clears all). */
  function drawMarks(app) {
    const main = document.getElementById('main'), marks = app.marks || [];
    const bands = [...main.querySelectorAll('.mark-band')];
    while (bands.length > marks.length) bands.pop().remove();
    marks.forEach(([a, b], i) => {
      let band = bands[i];
      if (!band) {
        band = DSUI.el('div', { class: 'mark-band', 'aria-hidden': 'true' }, DSUI.el('span', { class: 'mark-label' }));
        main.append(band);
      }
      band.dataset.from = String(a);
      band.dataset.to = String(b);
      place(app, band, a, b);
      band.firstChild.textContent = `mark ${i + 1} · ${DSUI.fmtDur(b - a)}`;
    });
  }

  function toggleMark(app) {
    const w = app.focusWindow();
    if (!w) { DSUI.toast('Select an area, a range or a request first: m marks it'); return; }
    const marks = app.marks || (app.marks = []);
    const at = marks.findIndex(([a, b]) => a === w[0] && b === w[1]);
    if (at >= 0) marks.splice(at, 1); else marks.push([w[0], w[1]]);
    drawMarks(app);
  }

  const KEYS = [
    ['W / S', 'zoom in / out at the cursor'], ['A / D', 'pan left / right'], ['+ / -', 'zoom in / out'], ['← / →', 'pan by a quarter'],
    ['0', 'the whole run'], ['f', 'focus the selection (area, range or request)'], ['m', 'mark the selection (again: unmark); M clears the marks'],
    ['Backspace or b', 'back to the previous window'], ['Esc', 'clear the area selection (or close this help)'],
    ['Enter / Shift+Enter', 'next / previous range matching the NVTX filter'],
    ['↑ / ↓', 'previous / next request in the requests table (Enter selects)'], ['?', 'this help'],
    ['Enter in a field', 'applies it and hands the keys back to the timeline'], ['Ctrl+wheel', 'zoom at the cursor'],
  ];

  /* The shortcuts overlay: toggled by ?, closed by Esc or a click. */
  function toggleHelp(force) {
    let ov = document.getElementById('help-overlay');
    const open = force === undefined ? !(ov && !ov.hidden) : force;
    if (!ov) {
      if (!open) return false;
      const { el } = DSUI;
      ov = el('div', { id: 'help-overlay', role: 'dialog', 'aria-label': 'Keyboard shortcuts', onclick: () => toggleHelp(false) },
        el('div', { class: 'help-box' }, el('h3', { text: 'Keyboard shortcuts' }),
          el('table', { class: 'grid' }, KEYS.map(([k, what]) => el('tr', {}, el('td', {}, el('kbd', { text: k })), el('td', { text: what })))),
          el('p', { class: 'muted', text: 'Press ? or Esc to close.' })));
      document.body.append(ov);
    }
    ov.hidden = !open;
    return open;
  }

  /* The keys of this module on the timeline; true when handled. */
  function key(app, ev) {
    const k = ev.key, help = document.getElementById('help-overlay');
    if (k === '?') toggleHelp();
    else if (k === 'Escape' && help && !help.hidden) toggleHelp(false);
    else if (k === 'm') toggleMark(app);
    else if (k === 'M') { app.marks = []; drawMarks(app); }
    else if (k === 'Enter' && app.state.filter && !(ev.target && ev.target.closest && ev.target.closest('button, tr, th, a'))) DSRanges.step(app, ev.shiftKey ? -1 : 1);
    else return false;
    return true;
  }

  /* A tick's label: its offset from the window start in the step's unit. */
  function tickLabel(off, step) {
    const units = [[1, 's'], [1e-3, 'ms'], [1e-6, 'µs'], [1e-9, 'ns']];
    if (step >= 60 && off >= 60) {
      const m = Math.floor(off / 60 + 1e-9), sec = off - m * 60;
      return `+${m}m${sec > 1e-6 ? ` ${Number(sec.toFixed(step >= 60 ? 0 : 1))}s` : ''}`;
    }
    const [k, u] = units.find(([x]) => step >= x) || units[3];
    const digits = Math.max(0, -Math.floor(Math.log10(step / k) + 1e-9));
    return `+${(off / k).toFixed(Math.min(3, digits))} ${u}`;
  }

  return { bind, cursor, drawSelection, tickLabel, key, toggleHelp };
})();
