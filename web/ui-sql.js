/* ui-sql.js: the Query (SQL) page of a viewer backed by a live session
 * (installed by live.js; a static page never shows it).  A statement box
 * (Ctrl+Enter runs), the result as a table (the first 10,000 rows, a
 * truncated result says so), the error text on failure, and a history of
 * this page's statements; a second mode runs any query kind with its
 * parameters (timeline, --group-by, --request joins...) through the
 * session, answering what `dsight query --remote` prints. */
'use strict';

const DSSqlPage = (() => {
  const MAX_ROWS = 10000;
  const KINDS = ['sql', 'summary', 'requests', 'request', 'lifecycle', 'sessions', 'nsys', 'cpu', 'metrics', 'timeline',
    'iterations', 'server_spans', 'profiles', 'workers', 'families', 'sources'];

  function cell(v) {
    if (v === null) return DSUI.el('td', { class: 'sql-null', text: 'NULL' });
    return DSUI.el('td', { text: typeof v === 'object' ? JSON.stringify(v) : String(v) });
  }

  /* A table of columns and rows (arrays). */
  function table(columns, rows) {
    const head = DSUI.el('tr', {}, columns.map((c) => DSUI.el('th', { text: c })));
    const body = rows.map((r) => DSUI.el('tr', {}, r.map(cell)));
    return DSUI.el('table', { id: 'sql-table', class: 'sql-table' }, DSUI.el('thead', {}, head), DSUI.el('tbody', {}, body));
  }

  /* The answer of a query kind: its items as a table when it has a list,
   * the JSON otherwise. */
  function kindView(data) {
    const list = data && (Array.isArray(data.items) ? data.items : Array.isArray(data.buckets) ? data.buckets :
      Array.isArray(data.groups) ? data.groups : null);
    if (list && list.length && list.every((x) => x && typeof x === 'object' && !Array.isArray(x))) {
      const cols = [...new Set(list.flatMap((x) => Object.keys(x)))];
      return table(cols, list.slice(0, MAX_ROWS).map((x) => cols.map((c) => (c in x ? x[c] : null))));
    }
    return DSUI.el('pre', { class: 'sql-json', text: JSON.stringify(data, null, 2) });
  }

  function install(live) {
    const header = document.getElementById('run-header');
    if (!header || document.getElementById('btn-sql')) return;
    const history = [];
    const page = DSUI.el('section', { id: 'sql-page', 'aria-label': 'Query (SQL)', hidden: true });
    const mode = DSUI.el('select', { id: 'sql-kind', 'aria-label': 'query kind' }, KINDS.map((k) => DSUI.el('option', { value: k, text: k })));
    const input = DSUI.el('textarea', { id: 'sql-input', rows: 6, spellcheck: 'false',
      placeholder: 'select name, count(*) as n from events group by name order by n desc limit 20' });
    const params = DSUI.el('input', { id: 'sql-params', type: 'text', placeholder: 'parameters as JSON, e.g. {"of": "nsys", "bucket": 1}', hidden: true });
    const status = DSUI.el('div', { id: 'sql-status', class: 'muted' });
    const error = DSUI.el('div', { id: 'sql-error', role: 'alert', hidden: true });
    const result = DSUI.el('div', { id: 'sql-result' });
    const hist = DSUI.el('ol', { id: 'sql-history' });
    let running = false;

    function remember(entry) {
      history.unshift(entry);
      hist.replaceChildren(...history.slice(0, 50).map((h) => DSUI.el('li', {},
        DSUI.el('button', { class: 'sql-again', title: 'Put this back in the box', text: (h.kind === 'sql' ? '' : h.kind + ' ') + h.text,
          onclick: () => { mode.value = h.kind; onMode(); if (h.kind === 'sql') input.value = h.text; else params.value = h.text; } }))));
    }

    async function run() {
      if (running) return;
      const kind = mode.value;
      const text = kind === 'sql' ? input.value.trim() : params.value.trim();
      let p;
      error.hidden = true;
      try {
        p = kind === 'sql' ? { sql: text, max_rows: MAX_ROWS } : (text ? JSON.parse(text) : {});
        if (!p || typeof p !== 'object' || Array.isArray(p)) throw new Error('the parameters must be a JSON object');
      } catch (e) {
        error.textContent = 'Parameters: ' + e.message;
        error.hidden = false;
        return;
      }
      if (kind === 'sql' && !text) return;
      running = true;
      status.textContent = 'running…';
      const t0 = performance.now();
      remember({ kind, text });
      try {
        const data = await live.query(kind, p);
        const ms = (performance.now() - t0).toFixed(0);
        if (kind === 'sql') {
          result.replaceChildren(table(data.columns, data.rows));
          status.textContent = `${DSUI.fmtNum(data.row_count)} row${data.row_count === 1 ? '' : 's'} in ${ms} ms` +
            (data.truncated ? ` (truncated: the first ${DSUI.fmtNum(data.rows.length)} rows)` : '');
        } else {
          result.replaceChildren(kindView(data));
          status.textContent = `${kind} answered in ${ms} ms`;
        }
        result.dataset.answer = JSON.stringify(data).length;
      } catch (e) {
        result.replaceChildren();
        status.textContent = '';
        error.textContent = e.message;
        error.hidden = false;
      } finally {
        running = false;
      }
    }

    function onMode() {
      const sql = mode.value === 'sql';
      input.hidden = !sql;
      params.hidden = sql;
    }
    mode.addEventListener('change', onMode);
    input.addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); run(); } });
    params.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); run(); } });
    page.append(
      DSUI.el('div', { class: 'sql-head' }, DSUI.el('h2', { text: 'Query (SQL)' }),
        DSUI.el('span', { class: 'muted', text: 'answered by the live session: the tables of the report cache (events, samples, points, …)' }),
        DSUI.el('button', { id: 'sql-close', text: 'Close', onclick: () => { page.hidden = true; } })),
      DSUI.el('div', { class: 'sql-controls' }, mode, DSUI.el('button', { id: 'sql-run', text: 'Run (Ctrl+Enter)', onclick: run })),
      input, params, status, error, result,
      DSUI.el('h3', { text: 'History' }), hist);
    header.append(DSUI.el('button', { id: 'btn-sql', title: 'Run SQL and any query kind on the live session',
      text: 'Query (SQL)', onclick: () => { page.hidden = !page.hidden; if (!page.hidden) input.focus(); } }));
    document.body.append(page);
  }

  return { install };
})();
