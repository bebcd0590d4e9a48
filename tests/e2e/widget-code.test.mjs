// Code highlighting in <patchbridge-agent>, in headless Chromium under the strict Content-Security-Policy of the
// widget test page, against the real relay and a fake OpenAI upstream: the highlighter chunk is not part of the
// first load, is fetched once when the first fenced block with a language appears (never for a block without
// one), colours the code with spans whose text is the code unchanged, and raises no CSP violation. Math likewise:
// the MathML renderer chunk is fetched only for an answer with a formula, `$…$`, `$$…$$`, `\(…\)` and `\[…\]`
// become <math> elements (the TeX kept for copy), and prices and code are left as written.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { newPage, waitInPage } from './support/browser.mjs';
import { textTurn } from './support/openai-chat.mjs';
import { artifact, sendInWidget, waitIdle, waitReady, widgetEnvironment } from './support/widget.mjs';

const env = widgetEnvironment();

describe('<patchbridge-agent> code highlighting and math', () => {
  test('the highlighter loads on demand for a fenced block with a language and keeps the code text under the strict CSP', async () => {
    const page = await newPage(env.browser);
    const requested = [];
    page.on('request', (r) => requested.push(new URL(r.url()).pathname));
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.relay.url });
    await page.goto(`${env.relay.url}/examples/widget.html?user=code-${Date.now()}`);
    await waitReady(page);
    const chunk = () => requested.filter((p) => p.endsWith('/widget-highlight.js')).length;
    assert.equal(chunk(), 0, 'not part of the first load');

    env.upstream.script(textTurn('Plain:\n\n```\nno language here\n```\n'));
    await sendInWidget(page, 'a plain block');
    await waitIdle(page);
    assert.equal(chunk(), 0, 'a block without a language loads nothing');

    const code = 'const answer = 42; // the answer\nfunction greet(name) {\n  return `hi ${name}`;\n}';
    env.upstream.script(textTurn(`In JavaScript:\n\n\`\`\`js\n${code}\n\`\`\`\n\nAnd Python:\n\n\`\`\`python\ndef f():\n    return "x"\n\`\`\`\n`));
    await sendInWidget(page, 'show code');
    await waitIdle(page);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('code[data-highlighted]').length === 2);
    const result = await page.evaluate(() => {
      const blocks = [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('code[data-highlighted]')];
      return blocks.map((el) => ({
        language: el.dataset.highlighted,
        text: el.textContent,
        kinds: [...new Set([...el.querySelectorAll('span')].map((s) => s.className))].sort(),
        keywordColour: el.querySelector('.tok-kwd') && getComputedStyle(el.querySelector('.tok-kwd')).color,
        plainColour: getComputedStyle(el).color,
      }));
    });
    assert.equal(result[0].language, 'js');
    assert.equal(result[0].text, code, 'the code text is unchanged');
    assert.ok(result[0].kinds.includes('tok-kwd') && result[0].kinds.includes('tok-cmnt') && result[0].kinds.includes('tok-num'), `tokens: ${result[0].kinds}`);
    assert.notEqual(result[0].keywordColour, result[0].plainColour, 'keywords are coloured');
    assert.equal(result[1].language, 'py');
    assert.equal(result[1].text, 'def f():\n    return "x"');
    assert.equal(chunk(), 1, 'fetched once');
    // Copy still copies the code as written.
    await page.click('patchbridge-agent code[data-highlighted="js"] + [part~=copy-button]');
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), code);
    assert.deepEqual(page.problems, [], 'no CSP violation or other console error');
    await page.context().close();
  });

  test('math renders as MathML from an on-demand chunk under the strict CSP; prices and code stay as written', async () => {
    const page = await newPage(env.browser);
    const requested = [];
    page.on('request', (r) => requested.push(new URL(r.url()).pathname));
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.relay.url });
    await page.goto(`${env.relay.url}/examples/widget.html?user=math-${Date.now()}`);
    await waitReady(page);
    const chunk = () => requested.filter((p) => p.endsWith('/widget-math.js')).length;
    assert.equal(chunk(), 0, 'not part of the first load');

    env.upstream.script(textTurn('It costs $5 and $10, or $3.50 or $4. In code: `$x$`.'));
    await sendInWidget(page, 'prices');
    await waitIdle(page);
    const root = (fn) => page.evaluate(fn);
    assert.equal(chunk(), 0, 'an answer without a formula loads nothing');
    assert.equal(await root(() => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('.log .math, .log math').length), 0);
    assert.match(await page.textContent('patchbridge-agent .log .msg.assistant:last-of-type .bubble'), /It costs \$5 and \$10, or \$3\.50 or \$4\. In code: \$x\$\./);

    const answer = 'Euler: $e^{i\\pi}+1=0$ and \\(a^2+b^2=c^2\\).\n\n$$\n\\int_0^1 x\\,dx = \\frac{1}{2}\n$$\n\nAlso \\[ \\sqrt{2} \\] costs $5 and $10.';
    env.upstream.script(textTurn(answer, { pieces: 9 }));
    await sendInWidget(page, 'math');
    await waitIdle(page);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('.math[data-rendered]').length === 4);
    const maths = await root(() => [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('.log .msg.assistant:last-of-type .math')].map((el) => ({
      tex: el.dataset.tex,
      display: el.classList.contains('display'),
      math: el.querySelector('math')?.namespaceURI,
      block: el.querySelector('math')?.getAttribute('display') ?? null,
      annotation: el.querySelector('annotation[encoding="application/x-tex"]')?.textContent.trim() ?? null,
    })));
    const MATHML = 'http://www.w3.org/1998/Math/MathML';
    assert.deepEqual(maths, [
      { tex: 'e^{i\\pi}+1=0', display: false, math: MATHML, block: null, annotation: 'e^{i\\pi}+1=0' },
      { tex: 'a^2+b^2=c^2', display: false, math: MATHML, block: null, annotation: 'a^2+b^2=c^2' },
      { tex: '\\int_0^1 x\\,dx = \\frac{1}{2}', display: true, math: MATHML, block: 'block', annotation: '\\int_0^1 x\\,dx = \\frac{1}{2}' },
      { tex: '\\sqrt{2}', display: true, math: MATHML, block: 'block', annotation: '\\sqrt{2}' },
    ]);
    assert.match(await page.textContent('patchbridge-agent .log .msg.assistant:last-of-type'), /costs \$5 and \$10\./, 'prices beside formulas stay prose');
    assert.equal(chunk(), 1, 'fetched once');
    await artifact(page, 'math');
    // Copy answer copies the Markdown source, formulas as written.
    await page.click('patchbridge-agent .msg.assistant:last-of-type [part~=copy-answer-button]');
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), answer);
    assert.deepEqual(page.problems, [], 'no CSP violation or other console error');
    await page.context().close();
  });
});
