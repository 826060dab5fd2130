/* ui-legend.js: the legend of a metric chart: every series listed (no "+N
 * more"), a distinct colour each, click to hide/show one, double-click to
 * show only it, hover to highlight it; "all" / "none" for many series. */
'use strict';

const DSLegend = (() => {
  /* The first colours from the palette, then golden-angle hues. */
  function color(i) {
    return i < DSUI.PALETTE.length ? DSUI.PALETTE[i] : `hsl(${Math.round((i * 137.508) % 360)} 62% 44%)`;
  }

  /* Builds the legend of series for chart ch (ch.hidden: Set of indexes,
   * ch.highlight: index or null); redraw() repaints the chart;
   * ch.syncLegend() shows a changed ch.hidden. */
  function build(series, label, ch, redraw) {
    const { el } = DSUI;
    const items = series.map((s, i) => {
      const it = el('button', { class: 'lg', 'data-series': String(s.id), 'aria-pressed': 'true', title: `${label(s)} (series ${s.id})\nclick: hide/show · double-click: only this` },
        el('i', { style: `background:${color(i)}` }), label(s));
      it.addEventListener('click', () => {
        if (ch.hidden.has(i)) ch.hidden.delete(i); else ch.hidden.add(i);
        sync(); redraw();
      });
      it.addEventListener('dblclick', () => {
        ch.hidden = new Set(series.map((_, k) => k).filter((k) => k !== i));
        sync(); redraw();
      });
      it.addEventListener('mouseenter', () => { ch.highlight = i; redraw(); });
      it.addEventListener('mouseleave', () => { ch.highlight = null; redraw(); });
      return it;
    });
    const box = el('div', { class: 'legend-box' + (series.length > 8 ? ' many' : '') });
    const count = el('span', { class: 'muted lg-count' });
    function sync() {
      items.forEach((it, i) => { it.setAttribute('aria-pressed', String(!ch.hidden.has(i))); it.classList.toggle('off', ch.hidden.has(i)); });
      count.textContent = `${series.length - ch.hidden.size} of ${series.length} series shown`;
    }
    if (series.length > 3) {
      box.append(count, el('button', { class: 'lg-all', onclick: () => { ch.hidden = new Set(); sync(); redraw(); } }, 'all'),
        el('button', { class: 'lg-none', onclick: () => { ch.hidden = new Set(series.map((_, k) => k)); sync(); redraw(); } }, 'none'));
    }
    box.append(...items);
    sync();
    ch.syncLegend = sync;
    return box;
  }

  return { build, color };
})();
