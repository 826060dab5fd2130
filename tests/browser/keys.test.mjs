// keys.test.mjs: the viewer's keyboard, walked as a user would: Enter in
// a field hands the keys back to the timeline (0 then acts at once), ?
// opens and Esc closes the shortcuts, m marks the selection over every
// track (and unmarks it), Enter on the timeline steps through the NVTX
// filter's matches, and the requests table moves with the arrow keys.
import { Tap, saveShot, mediumViewer, runTest } from './harness.mjs';

const tap = new Tap();

async function main() {
  const mv = await mediumViewer(tap, 'keys');
  if (!mv) return;
  const { D, v, page } = mv;
  const st = () => page.evaluate(() => window.traceExplorer.getState());
  const active = () => page.evaluate(() => { const a = document.activeElement; return a ? a.id || a.dataset.id || a.tagName : null; });

  /* fields hand the keys back */
  await page.fill('#in-from', String(D * 0.2));
  await page.fill('#in-to', String(D * 0.3));
  await page.press('#in-to', 'Enter');
  const s1 = await st();
  tap.ok(Math.abs(s1.from - D * 0.2) < 1e-9 && Math.abs(s1.to - D * 0.3) < 1e-9 && await active() === 'tracks', 'Enter in the to field applies the window and focuses the timeline');
  await page.keyboard.press('0');
  const s2 = await st();
  tap.ok(s2.from === 0 && s2.to === D, '0 then shows the whole run at once');
  await page.evaluate(() => window.traceExplorer.setState({ tab: 'nsight' }));
  await page.fill('#nvtx-filter', 'forward');
  await page.press('#nvtx-filter', 'Enter');
  await page.waitForFunction(() => /at /.test(document.getElementById('nvtx-match').title));
  tap.ok(await active() === 'tracks', 'Enter in the NVTX filter goes to a match and focuses the timeline');
  const m1 = await page.$eval('#nvtx-match', (e) => e.title);
  await page.keyboard.press('Enter');
  await page.waitForFunction((t) => document.getElementById('nvtx-match').title !== t, m1);
  await page.keyboard.press('Shift+Enter');
  await page.waitForFunction((t) => document.getElementById('nvtx-match').title === t, m1);
  tap.ok(true, 'Enter and Shift+Enter on the timeline step to the next and back to the previous match');
  await page.evaluate(() => window.traceExplorer.setState({ filter: '', nsysEvent: null }));

  /* ? and Esc */
  const sel = [D * 0.41, D * 0.44];
  await page.evaluate(([a, b]) => window.traceExplorer.setState({ from: a - 5, to: b + 5, sel: [a, b] }), sel);
  await page.focus('#tracks');
  await page.keyboard.press('?');
  const help = await page.$eval('#help-overlay', (e) => ({ shown: !e.hidden && e.getBoundingClientRect().width > 0, text: e.textContent }));
  tap.ok(help.shown && /mark the selection/.test(help.text) && /W \/ S/.test(help.text) && /requests table/.test(help.text), '? shows the keyboard shortcuts', help.text.slice(0, 200));
  await saveShot(page, 'keys-01-help.png');
  await page.keyboard.press('Escape');
  tap.ok(await page.$eval('#help-overlay', (e) => e.hidden) && (await st()).sel !== null, 'Esc closes the shortcuts and keeps the selection');

  /* m marks */
  await page.keyboard.press('m');
  const marks = () => page.$$eval('.mark-band', (bs) => bs.map((b) => ({ from: Number(b.dataset.from), to: Number(b.dataset.to), shown: !b.hidden, w: b.getBoundingClientRect().width })));
  const mk = await marks();
  tap.ok(mk.length === 1 && mk[0].from === sel[0] && mk[0].to === sel[1] && mk[0].shown && mk[0].w > 10, 'm marks the selected area over the tracks', mk);
  await page.keyboard.press('Escape');
  await page.keyboard.press('0');
  await page.waitForTimeout(100);
  const mk2 = await marks();
  tap.ok(mk2.length === 1 && mk2[0].shown && mk2[0].w >= 1 && mk2[0].w < mk[0].w, 'the mark stays, drawn narrower, when the selection is cleared and the view zooms out', mk2);
  await page.evaluate(() => window.traceExplorer.whenDetailsReady());
  await saveShot(page, 'keys-02-mark.png');
  await page.evaluate(([a, b]) => window.traceExplorer.setState({ sel: [a, b] }), sel);
  await page.keyboard.press('m');
  tap.ok((await marks()).length === 0, 'm on the marked selection removes the mark');

  /* the requests table with the arrow keys */
  await page.evaluate(() => window.traceExplorer.setState({ tab: 'requests', sel: null, request: null }));
  const ids = await page.$$eval('table.reqtable tr.req-row', (trs) => trs.map((t) => t.dataset.id));
  if (!tap.ok(ids.length >= 3, `the requests table lists ${ids.length} requests`)) return;
  await page.focus(`table.reqtable tr.req-row[data-id="${ids[0]}"]`);
  await page.keyboard.press('Enter');
  tap.ok((await st()).request === ids[0] && await active() === ids[0], 'Enter on a row selects its request and the row keeps the keyboard');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  tap.ok((await st()).request === ids[2] && await active() === ids[2], 'ArrowDown twice selects the third request, focused');
  await page.keyboard.press('ArrowUp');
  tap.ok((await st()).request === ids[1] && await active() === ids[1], 'ArrowUp goes back one row');
  tap.ok(v.errors.length === 0, 'no page error', v.errors);
}

await runTest(tap, 'keys', main);
