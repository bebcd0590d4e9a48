// <patchbridge-agent> against a real relay whose spending limit allows one model call per hour (scripted demo
// model): the first message is answered, the second is refused by the relay with 429 SPENDING_LIMIT_REACHED and
// the widget says so in plain words, with when the person may try again (English and Chinese). On the same demo
// relay, the demo banner shows once a page sets the headers the relay asked for after the runtime was ready.

import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';

import { newPage, waitInPage } from './support/browser.mjs';
import { ROOT } from './support/relay.mjs';
import { relayAndBrowser } from './support/suite.mjs';
import { sel, sendInWidget, waitAssistantCount, waitIdle, waitReady } from './support/widget.mjs';

const env = relayAndBrowser({
  demo: true,
  examplesDir: path.join(ROOT, 'tests', 'e2e', 'pages'),
  spending: { windows: [{ windowSeconds: 3600, calls: 1 }] },
});

async function widgetPage(user, lang) {
  const page = await newPage(env.browser);
  await page.goto(`${env.relay.url}/examples/bare.html`);
  await page.waitForFunction(() => customElements.get('patchbridge-agent'));
  await page.evaluate(({ u, l }) => {
    const el = document.createElement('patchbridge-agent');
    el.setAttribute('endpoint', '/api');
    el.setAttribute('lang', l);
    el.headers = { 'x-patchbridge-user': u };
    document.body.append(el);
  }, { u: user, l: lang });
  await waitReady(page);
  return page;
}

const noticeShown = () => !document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=notice]').hidden;

describe('<patchbridge-agent> at a spending limit', () => {
  test('the call past the limit is refused and the notice says when the person may try again', async () => {
    const page = await widgetPage('spender-en', 'en');
    await sendInWidget(page, 'hello');
    await waitAssistantCount(page, 1);
    await waitIdle(page);
    await sendInWidget(page, 'hello again');
    await waitInPage(page, noticeShown);
    const notice = await page.textContent(sel.notice);
    assert.match(notice, /AGENT_SPENDING_LIMIT_REACHED/);
    // The hour's window ends at the next full UTC hour: at most 60 minutes away.
    const minutes = Number(/You have reached your usage limit for now\. You can try again in (\d+) min\./.exec(notice)?.[1]);
    assert.ok(minutes >= 1 && minutes <= 60, notice);
    // An Error crosses to the test as its message only: the page copies the fields.
    const error = await page.evaluate(() => {
      const { code, details } = document.querySelector('patchbridge-agent').controller.getState().error;
      return { code, details: JSON.parse(JSON.stringify(details)) };
    });
    assert.equal(error.code, 'AGENT_SPENDING_LIMIT_REACHED');
    assert.equal(error.details.relayCode, 'SPENDING_LIMIT_REACHED');
    assert.equal(error.details.status, 429);
    assert.deepEqual(error.details.limit, { kind: 'calls', max: 1, windowSeconds: 3600, sliding: false });
    assert.ok(error.details.retryAfterSeconds > 0 && error.details.retryAfterSeconds <= 3600);
    page.problems.length = 0;
    await page.context().close();
  });

  test('in Chinese', async () => {
    const page = await widgetPage('spender-zh', 'zh');
    await sendInWidget(page, '你好');
    await waitAssistantCount(page, 1);
    await waitIdle(page);
    await sendInWidget(page, '再来');
    await waitInPage(page, noticeShown);
    assert.match(await page.textContent(sel.notice), /你已暂时达到使用上限。请 \d+ 分钟后再试。/);
    page.problems.length = 0;
    await page.context().close();
  });
});

describe('<patchbridge-agent> on the demo relay, headers set after the runtime is ready', () => {
  test('the demo banner shows once the page sets the headers the relay refused the first check without', async () => {
    const page = await newPage(env.browser);
    await page.goto(`${env.relay.url}/examples/bare.html`);
    await page.waitForFunction(() => customElements.get('patchbridge-agent'));
    const refused = page.waitForResponse((r) => r.url().endsWith('/api/models'));
    await page.evaluate(() => {
      const el = document.createElement('patchbridge-agent');
      el.setAttribute('endpoint', '/api');
      document.body.append(el);
    });
    await waitReady(page);
    assert.equal((await refused).status(), 401);
    assert.equal(await page.isHidden(sel.banner), true);
    await page.evaluate(() => { document.querySelector('patchbridge-agent').headers = { 'x-patchbridge-user': 'late-banner' }; });
    await waitInPage(page, () => !document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=banner]').hidden);
    assert.match(await page.textContent(sel.banner), /scripted demo model/);
    assert.equal(await page.isHidden(sel.notice), true, 'no sign-in notice');
    page.problems.length = 0; // the refused first check is the point of this test
    await page.context().close();
  });
});
