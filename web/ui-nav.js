/* ui-nav.js: Perfetto-style navigation: the time under the cursor (W/S
 * zoom there), Ctrl+wheel zoom at the cursor, horizontal wheel pan, the
 * area selection band drawn over every track, and the relative ruler's
 * units (ticks as offsets from the window start). */
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

  /* The band of the area selection over the axis and the tracks. */
  function drawSelection(app) {
    const main = document.getElementById('main');
    let band = document.getElementById('sel-band');
    const sel = app.state.sel;
    if (!sel) { if (band) band.hidden = true; return; }
    if (!band) {
      band = DSUI.el('div', { id: 'sel-band', 'aria-hidden': 'true' }, DSUI.el('span', { class: 'sel-label' }));
      main.append(band);
    }
    const tr = document.getElementById('tracks'), ax = document.getElementById('axis');
    const m = main.getBoundingClientRect(), a = ax.getBoundingClientRect(), t = tr.getBoundingClientRect();
    const s = DSUI.scale(app.state.from, app.state.to, tr.clientWidth);
    const x0 = Math.max(s.x0, s.x(sel[0])), x1 = Math.min(s.x1, s.x(sel[1]));
    band.hidden = !(x1 >= x0);
    Object.assign(band.style, { left: `${t.left - m.left + x0}px`, width: `${Math.max(1, x1 - x0)}px`, top: `${a.top - m.top}px`,
      height: `${t.bottom - a.top}px` });
    band.firstChild.textContent = `selection ${DSUI.fmtDur(sel[1] - sel[0])} · f to focus · Esc to clear`;
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

  return { bind, cursor, drawSelection, tickLabel };
})();
