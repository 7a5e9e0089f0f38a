import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { withTempDir } from '../../helpers/tmp';
import { HOSTILE_IMG, HOSTILE_SCRIPT, LONG_NAME, startWebFixture, type WebFixture } from '../../helpers/web-fixture';

/**
 * The web page in a real browser (Debian's chromium, driven by puppeteer-core; .ci/run installs
 * it): lanes live, approve by click, batch reject with a reason, a terminal decision shown,
 * hostile text as text (a message, a file name, a tool name, a tool's input and result, a
 * notice), wrong or missing token gets nothing, a phone-sized screen (nothing wider than it, a
 * tap approves).
 * `LEGION_UPDATE_SCREENSHOT=1` also writes docs/remote-web.png.
 */

function chromiumPath(): string {
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      return execFileSync('which', [name], { encoding: 'utf8' }).trim();
    } catch {
      // try the next name
    }
  }
  throw new Error('chromium is not installed (apt-get install -y chromium; .ci/run does it)');
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const rowSelector = (id: string): string => `#requests li[data-request-id="${id}"]`;

/** Headless Debian chromium and a web fixture in a temp workspace, both closed afterwards. */
async function withBrowserAndFixture(fn: (browser: Browser, f: WebFixture, dir: string) => Promise<void>): Promise<void> {
  const browser = await puppeteer.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  try {
    await withTempDir(async (dir) => {
      const f = await startWebFixture(dir);
      try {
        await fn(browser, f, dir);
      } finally {
        await f.close();
      }
    });
  } finally {
    await browser.close();
  }
}

async function openPage(browser: Browser, f: WebFixture): Promise<Page> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  // A stream cut by a reload is not an error of the page.
  page.on('console', (m) => { if (m.type() === 'error' && !/ERR_INCOMPLETE_CHUNKED_ENCODING/.test(m.text())) errors.push(m.text()); });
  (page as Page & { errors?: string[] }).errors = errors;
  const res = await page.goto(`${f.base}/?token=${f.token}`);
  assert.equal(res?.status(), 200);
  await page.waitForSelector('#conn[data-state="live"]');
  return page;
}

test('web page in Chromium: live lanes, approve by click, batch reject with a reason, terminal decisions, hostile text, tokens', { timeout: 120_000 }, async () => {
  await withBrowserAndFixture(async (browser, f, dir) => {
    const page = await openPage(browser, f);

    // Lanes update live, and a model's hostile text renders as text.
    const hostile = f.h.core.send('worker', 'hostile', 'lens');
    assert.ok(hostile.ok);
    const lane = `article.lane[data-session-id="${hostile.sessionId}"]`;
    await page.waitForSelector(`${lane} .msg.assistant`);
    const shown = await page.$eval(`${lane} .msg.assistant`, (el) => el.textContent ?? '');
    assert.ok(shown.includes(HOSTILE_SCRIPT) && shown.includes(HOSTILE_IMG), shown);
    assert.equal(await page.$eval(`${lane} .msg.assistant code`, (el) => el.textContent), 'code <b>');
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    assert.equal(await page.$$eval('#lanes img, #lanes script', (els) => els.length), 0);
    await page.waitForFunction((sel) => document.querySelector(`${sel} .status`)?.getAttribute('data-status') === 'idle', {}, lane);

    // Approve by click: the call runs and the file appears.
    const write = f.h.core.send('worker', 'write a');
    assert.ok(write.ok);
    await page.waitForSelector(rowSelector('apr-1'));
    assert.match(await page.$eval(rowSelector('apr-1'), (el) => el.textContent ?? ''), /apr-1 · worker wants file_write a\.txt/);
    await page.click(`${rowSelector('apr-1')} button.approve`);
    await until(() => existsSync(join(dir, 'a.txt')), 'a.txt');
    await page.waitForFunction(() => !document.querySelector('#requests li[data-request-id="apr-1"]'));
    assert.equal(await page.$eval('#decided', (el) => el.textContent), 'apr-1 approved on the web page');

    // Batch: mark two, reject with a reason.
    assert.ok(f.h.core.send('worker', 'write b', 'b').ok);
    assert.ok(f.h.core.send('worker', 'write c', 'c').ok);
    await page.waitForSelector(rowSelector('apr-2'));
    await page.waitForSelector(rowSelector('apr-3'));
    await page.click(`${rowSelector('apr-2')} input.mark`);
    await page.click(`${rowSelector('apr-3')} input.mark`);
    assert.equal(await page.$eval('#reject-marked', (el) => el.textContent), 'Reject marked (2)');
    await page.type('#reason', 'not now <b>');
    await page.click('#reject-marked');
    await page.waitForFunction(() => document.querySelectorAll('#requests li').length === 0);
    await until(() => f.h.audit().filter((a) => a.requestId).length === 3, 'three audit lines');
    assert.deepEqual(
      f.h.audit().filter((a) => a.requestId).map((a) => [a.requestId, a.decision, a.decidedBy, a.reason]),
      [['apr-1', 'approved', 'remote:web', 'approved by remote:web'], ['apr-2', 'rejected', 'remote:web', 'not now <b>'], ['apr-3', 'rejected', 'remote:web', 'not now <b>']],
    );
    assert.equal(existsSync(join(dir, 'b.txt')) || existsSync(join(dir, 'c.txt')), false);
    // Cleared when the POST's answer comes, which can be after the decisions' events removed the rows.
    await page.waitForFunction(() => (document.getElementById('reason') as HTMLInputElement).value === '');

    // A decision made in the terminal leaves the page's queue and says where it was made.
    assert.ok(f.h.core.send('worker', 'write d', 'd').ok);
    await page.waitForSelector(rowSelector('apr-4'));
    assert.deepEqual(f.h.core.resolveApprovals(['apr-4'], 'approved'), { ok: true });
    await page.waitForFunction(() => !document.querySelector('#requests li[data-request-id="apr-4"]'));
    assert.equal(await page.$eval('#decided', (el) => el.textContent), 'apr-4 approved in the terminal');

    // Hostile tool calls: markup as a file name (in the queue row, its input, the tool row) and as a
    // tool name (tool row, error result), and in a notice: all shown as text, nothing runs.
    const nasty = f.h.core.send('worker', 'nasty', 'nasty');
    assert.ok(nasty.ok);
    await page.waitForSelector(rowSelector('apr-5'));
    assert.ok((await page.$eval(rowSelector('apr-5'), (el) => el.textContent ?? '')).includes(`wants file_write ${HOSTILE_IMG}.txt`));
    assert.ok((await page.$eval(`${rowSelector('apr-5')} pre`, (el) => el.textContent ?? '')).includes(JSON.stringify(HOSTILE_SCRIPT)));
    f.h.core.bus.emit({ type: 'notice', level: 'warn', message: `a tool said ${HOSTILE_SCRIPT} ${HOSTILE_IMG}` });
    await page.click(`${rowSelector('apr-5')} button.reject`);
    const nastyLane = `article.lane[data-session-id="${nasty.sessionId}"]`;
    await page.waitForFunction((sel) => document.querySelectorAll(`${sel} .result`).length === 2, {}, nastyLane);
    const toolRows = await page.$$eval(`${nastyLane} .tool`, (els) => els.map((el) => el.textContent ?? ''));
    assert.equal(toolRows.length, 2, toolRows.join('\n'));
    assert.ok(toolRows[0]!.startsWith(`\u25b8 file_write ${HOSTILE_IMG}.txt`), toolRows[0]);
    assert.ok(toolRows[1]!.startsWith(`\u25b8 ${HOSTILE_SCRIPT}`), toolRows[1]);
    const results = await page.$$eval(`${nastyLane} .result`, (els) => els.map((el) => el.textContent ?? ''));
    assert.ok(results.some((r) => r.includes(HOSTILE_SCRIPT)), results.join('\n'));
    assert.ok((await page.$eval('#notice-list', (el) => el.textContent ?? '')).includes(`a tool said ${HOSTILE_SCRIPT} ${HOSTILE_IMG}`));
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    assert.equal(await page.$$eval('img', (els) => els.length), 0);
    assert.equal(await page.evaluate(() => document.scripts.length), 1, 'only the page\'s own script');

    // A page that reloads (or a phone that reconnects) gets the whole state back.
    await page.reload();
    await page.waitForSelector('#conn[data-state="live"]');
    await page.waitForSelector(`${lane} .msg.assistant`);
    assert.ok((await page.$$('article.lane')).length >= 4);
    assert.deepEqual((page as Page & { errors?: string[] }).errors, []);

    // Phone: 360 px wide, with a request and a lane holding an unbroken 154-character file name:
    // one column, nothing wider than the screen, the buttons inside it and tall enough, a tap approves.
    await page.setViewport({ width: 360, height: 740, isMobile: true, hasTouch: true });
    const phone = f.h.core.send('worker', 'write f', 'phone');
    assert.ok(phone.ok);
    // Its id as the core gave it (not assumed from the count so far).
    const phoneRequest = await f.h.waitFor((e) => e.type === 'approval-request' && e.sessionId === phone.sessionId, 20_000);
    assert.ok(phoneRequest.type === 'approval-request');
    const phoneRow = rowSelector(phoneRequest.requestId);
    await page.waitForSelector(phoneRow);
    await page.waitForSelector(`article.lane[data-session-id="${phone.sessionId}"] .tool`);
    assert.equal(await page.$eval('#lanes', (el) => getComputedStyle(el).gridTemplateColumns.split(' ').length), 1);
    // Against 360 itself: a mobile browser widens its viewport (zooms out) to fit content that overflows.
    const overflow = await page.evaluate(() => [...document.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > 360.5 || el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === 'visible')
      .map((el) => `${el.tagName}.${el.className}`));
    assert.deepEqual(overflow, [], 'nothing reaches past the right edge');
    assert.deepEqual(await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]), [360, 360], 'no sideways scrolling, no zooming out');
    for (const button of ['button.approve', 'button.reject']) {
      const box = await (await page.$(`${phoneRow} ${button}`))!.boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= 360 && box.height >= 34, `${button}: ${JSON.stringify(box)}`);
    }
    await page.tap(`${phoneRow} button.approve`);
    await until(() => existsSync(join(dir, LONG_NAME)), 'the file approved by a tap');

    // An agent's question: its lane has an answer box; the answer sent from the page is the user's reply.
    const ask = f.h.core.send('worker', 'ask', 'ask');
    assert.ok(ask.ok);
    const questionLane = 'article.lane[data-session-id="session-worker__user__default"]';
    await page.waitForSelector(`${questionLane} form.answer input`);
    await page.waitForFunction((sel) => (document.querySelector(`${sel} .body`)?.textContent ?? '').includes('Which color?'), {}, questionLane);
    await page.type(`${questionLane} form.answer input`, 'blue, from the phone');
    await page.tap(`${questionLane} form.answer button`);
    assert.match(await f.h.core.idle(ask.sessionId), /blue, from the phone/);

    // A decision made in Telegram: the row leaves and the page says who decided it, and where.
    assert.ok(f.h.core.send('worker', 'write g', 'g').ok);
    await page.waitForSelector(rowSelector('apr-7'));
    assert.deepEqual(f.h.core.resolveApprovals(['apr-7'], 'rejected', { by: 'remote:telegram:@ann', reason: 'not from my phone' }), { ok: true });
    await page.waitForFunction(() => !document.querySelector('#requests li[data-request-id="apr-7"]'));
    assert.equal(await page.$eval('#decided', (el) => el.textContent), 'apr-7 rejected in Telegram by @ann: not from my phone');
    await page.setViewport({ width: 1200, height: 860 });
    assert.ok((await page.$eval('#lanes', (el) => getComputedStyle(el).gridTemplateColumns.split(' ').length)) > 1);
    if (process.env.LEGION_UPDATE_SCREENSHOT === '1') {
      assert.ok(f.h.core.send('worker', 'write e', 'shot').ok);
      await page.waitForSelector(rowSelector('apr-8'));
      await page.screenshot({ path: join(import.meta.dirname, '..', '..', '..', 'docs', 'remote-web.png') as `${string}.png` });
    }

    // Wrong or missing token: a bare 401, no page, no script runs.
    for (const url of [`${f.base}/?token=wrong`, `${f.base}/`, `${f.base}/events`, `${f.base}/api/state?token=${f.token.slice(1)}`]) {
      const other = await browser.newPage();
      const res = await other.goto(url);
      assert.equal(res?.status(), 401, url);
      assert.equal(await other.evaluate(() => document.body.innerText.trim()), 'unauthorized');
      assert.equal(await other.$('#lanes'), null);
      await other.close();
    }
    await page.close();
  });
});

test('web page: a request raised while the page loads its state (the snapshot older than the event) stays on the page', { timeout: 60_000 }, async () => {
  await withBrowserAndFixture(async (browser, f, dir) => {
    const page = await browser.newPage();
    await page.setRequestInterception(true);
    let raised: string | undefined;
    page.on('request', (request) => {
      if (raised !== undefined || !request.url().includes('/api/state')) return void request.continue();
      void (async () => {
        // The snapshot is taken now, before the request exists...
        const answer = await fetch(request.url(), { headers: request.headers() });
        const body = await answer.text();
        // ...then a request is raised and reaches the page over the event stream...
        const sent = f.h.core.send('worker', 'write a');
        assert.ok(sent.ok);
        const event = await f.h.waitFor((e) => e.type === 'approval-request' && e.sessionId === sent.sessionId, 20_000);
        assert.ok(event.type === 'approval-request');
        raised = event.requestId;
        await until(async () => (await page.$(rowSelector(event.requestId))) !== null, 'the row from the event');
        // ...and only then does the older snapshot arrive.
        await request.respond({ status: answer.status, contentType: 'application/json', body });
      })();
    });
    const res = await page.goto(`${f.base}/?token=${f.token}`);
    assert.equal(res?.status(), 200);
    await until(() => raised !== undefined, 'the request raised during the load', 30_000);
    // The snapshot has been drawn (its run id shows) and the row is still there.
    await page.waitForFunction(() => /^run /.test(document.getElementById('run')?.textContent ?? ''));
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(await page.$(rowSelector(raised!)), 'the request raised during the load is still listed');
  });
});

test('web page: exactly one event right after its snapshot (a decision in the terminal) is applied: the decided request is not listed', { timeout: 60_000 }, async () => {
  await withBrowserAndFixture(async (browser, f) => {
    const sent = f.h.core.send('worker', 'write b');
    assert.ok(sent.ok);
    const asked = await f.h.waitFor((e) => e.type === 'approval-request' && e.sessionId === sent.sessionId, 20_000);
    assert.ok(asked.type === 'approval-request');
    const page = await browser.newPage();
    await page.setRequestInterception(true);
    let decided = false;
    page.on('request', (request) => {
      if (decided || !request.url().includes('/api/state')) return void request.continue();
      void (async () => {
        // The snapshot lists the request (its seq is the bus's position now)...
        const answer = await fetch(request.url(), { headers: request.headers() });
        const body = await answer.text();
        const snapshotSeq = (JSON.parse(body) as { seq: number }).seq;
        assert.equal(f.h.core.bus.lastSeq(), snapshotSeq, 'nothing happened since the snapshot');
        // ...then exactly one event follows it: the decision, at seq + 1...
        const seen: number[] = [];
        const off = f.h.core.bus.subscribe('approval-resolve', (e) => seen.push(e.seq));
        assert.deepEqual(f.h.core.resolveApprovals([asked.requestId], 'rejected'), { ok: true });
        off();
        assert.deepEqual(seen, [snapshotSeq + 1]);
        decided = true;
        // ...which reaches the page over the event stream before the older snapshot does.
        await until(async () => (await page.evaluate(() => document.getElementById('decided')?.textContent ?? '')).includes(`${asked.requestId} rejected`), 'the decision on the page');
        await request.respond({ status: answer.status, contentType: 'application/json', body });
      })();
    });
    const res = await page.goto(`${f.base}/?token=${f.token}`);
    assert.equal(res?.status(), 200);
    await until(() => decided, 'the decision after the snapshot', 30_000);
    await page.waitForFunction(() => /^run /.test(document.getElementById('run')?.textContent ?? ''));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await page.$(rowSelector(asked.requestId)), null, 'the request decided right after the snapshot is gone');
  });
});
