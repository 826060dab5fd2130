/* ui-header.js: the run header (job, time, duration, counts, warnings,
 * limitations, coverage of evidence) and the toolbar/tab state. */
'use strict';

const DSHeader = (() => {
  const CAPS = [
    ['requests', 'client requests'], ['request_breakdown', 'request lifecycles'], ['server_activity', 'server spans'],
    ['metrics', 'metrics'], ['worker_metrics', 'worker metrics'], ['hardware_metrics', 'hardware metrics'],
    ['nvtx', 'NVTX ranges'], ['cpu_samples', 'CPU samples'], ['iterations', 'iterations'],
  ];
  let built = false;

  function build(app) {
    const { el, fmtNum } = DSUI;
    const cat = app.cat, m = cat.meta;
    document.title = `${m.job || 'run'} · dsight`;
    document.getElementById('run-job').textContent = m.job || '(unnamed run)';
    document.getElementById('run-meta').textContent =
      [m.start_utc, `duration ${DSUI.fmtDur(m.duration)}`, m.phase, m.clock].filter(Boolean).join(' · ');
    const c = document.getElementById('run-counts');
    const nev = cat.profiles.reduce((a, p) => a + (p.event_count || 0), 0);
    const cc = app.catalog.counts();
    const items = [['requests', cc.requests], ['sessions', cc.sessions], ['workers', cat.workers.length],
      ['series', cat.metrics.length], ['profiles', cat.profiles.length], ['NVTX ranges', nev],
      ['iterations', cc.iterations]];
    c.replaceChildren(...items.map(([k, v]) => el('span', { class: 'count' }, el('b', { text: fmtNum(v) }), k)));
    const cov = document.getElementById('run-coverage');
    const caps = cat.capabilities || {};
    cov.replaceChildren(el('span', { class: 'lbl', text: 'Evidence:' }), ...CAPS.map(([k, label]) => el('span', {
      class: 'cap ' + (caps[k] ? 'yes' : 'no'),
      title: caps[k] ? `${label}: present` : `${label}: missing from the evidence (not zero activity)`,
      text: label,
    })));
    const notes = document.getElementById('run-notes');
    const warns = m.warnings || [], lims = m.limitations || [];
    const missing = CAPS.filter(([k]) => !caps[k]).map(([, l]) => l);
    if (warns.length)
      notes.append(el('details', { class: 'warn' }, el('summary', { text: `⚠ ${warns.length} warning${warns.length > 1 ? 's' : ''}: ${warns[0].slice(0, 90)}${warns[0].length > 90 || warns.length > 1 ? '…' : ''}` }),
        el('ul', {}, warns.map((w) => el('li', { text: w })))));
    if (lims.length || missing.length)
      notes.append(el('details', { class: 'lim' }, el('summary', { text: (missing.length ? `missing: ${missing.join(', ')}` : 'all evidence kinds present') +
        (lims.length ? ` · ${lims.length} limitation${lims.length > 1 ? 's' : ''}` : '') }),
      el('ul', {}, missing.map((x) => el('li', { text: `No ${x} in the evidence: the view shows unavailable data, not zero activity.` })),
        lims.map((x) => el('li', { text: x })))));
    built = true;
  }

  function render(app) {
    if (!built) build(app);
    const s = app.state;
    const f = document.getElementById('in-from'), t = document.getElementById('in-to');
    if (document.activeElement !== f) f.value = String(s.from);
    if (document.activeElement !== t) t.value = String(s.to);
    f.max = t.max = String(app.dur);
    f.removeAttribute('aria-invalid');
    document.getElementById('btn-back').disabled = app.history.length === 0;
    document.getElementById('window-info').textContent = `window ${DSUI.fmtDur(s.to - s.from)} of ${DSUI.fmtDur(app.dur)}`;
    for (const b of document.querySelectorAll('#tabs button')) b.setAttribute('aria-selected', String(b.dataset.tab === s.tab));
    for (const tab of ['requests', 'metrics', 'nsight']) {
      document.getElementById('side-' + tab).classList.toggle('active', tab === s.tab);
      /* the focused tab's tracks come first under the axis */
      /* a request's workers' profiles come right under it */
      document.getElementById('sec-' + tab).style.order = tab === s.tab ? '0' : tab === 'nsight' && s.workers.length ? '1' : '2';
    }
    if (render.lastTab !== s.tab) { document.getElementById('tracks').scrollTop = 0; render.lastTab = s.tab; }
  }

  return { render };
})();
