// The widget's math delimiters without a browser (widget/src/math.js, `MathSplitter` / `splitMath`): which `$…$`,
// `$$…$$`, `\(…\)` and `\[…\]` become formulas, which dollars stay prose (prices, `\$`), that code is left exactly
// as written, and that a growing (streamed) text gives the same result as the whole text. No wasm, relay or DOM.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { MathSplitter, splitMath } from '../../widget/src/math.js';

const formulas = (text) => splitMath(text).formulas.map(({ tex, display }) => (display ? `display:${tex}` : tex));
const parsed = (text) => splitMath(text).parsed.replace(/\uE000(\d+)\uE001/g, '<$1>');

test('prices stay prose: no formula, and each dollar reaches the parser escaped (shown as written)', () => {
  for (const text of ['It costs $5 and $10.', 'costs $3.50 or $4', 'from $5-$10 a month', 'pay $5, or $6.', 'a $ sign and another $ here']) {
    assert.deepEqual(formulas(text), [], text);
  }
  assert.equal(parsed('It costs $5 and $10.'), 'It costs \\$5 and \\$10.');
  assert.deepEqual(formulas('$HOME and $PATH'), [], 'shell variables: the closing $ follows a space');
});

test('inline and display formulas with each delimiter', () => {
  assert.deepEqual(formulas('Euler: $e^{i\\pi}+1=0$, done.'), ['e^{i\\pi}+1=0']);
  assert.equal(parsed('Euler: $e^{i\\pi}+1=0$, done.'), 'Euler: <0>, done.');
  assert.deepEqual(formulas('both \\(a+b\\) and \\( c \\)'), ['a+b', 'c']);
  assert.deepEqual(formulas('$$\n\\int_0^1 x\\,dx\n$$\n\nafter'), ['display:\\int_0^1 x\\,dx']);
  assert.deepEqual(formulas('one line $$x^2$$ here'), ['display:x^2']);
  assert.deepEqual(formulas('\\[ E = mc^2 \\]'), ['display:E = mc^2']);
  assert.deepEqual(formulas('\\[\nE = mc^2\n\\]\n'), ['display:E = mc^2']);
  assert.deepEqual(formulas('$a_1 * b_2$ and $x$'), ['a_1 * b_2', 'x'], 'Markdown emphasis inside a formula is not seen');
  assert.deepEqual(formulas('$2x$ doubles'), ['2x']);
});

test('an escaped dollar is a dollar; an escaped backslash does not open \\( math', () => {
  assert.deepEqual(formulas('escaped \\$x\\$ here'), []);
  assert.equal(parsed('escaped \\$x\\$ here'), 'escaped \\$x\\$ here');
  assert.deepEqual(formulas('a \\\\(b\\\\) c'), []);
  assert.deepEqual(formulas('\\$5 and $x$'), ['x']);
});

test('code spans and fenced code are left exactly as written', () => {
  for (const text of ['`$x$` code', 'use ``a $b$ c`` here', '```sh\necho $HOME $x$\n```\n', '~~~\n\\(a\\) $$b$$\n~~~']) {
    const { parsed: out, formulas: found } = splitMath(text);
    assert.deepEqual(found, [], text);
    assert.equal(out, text, text);
  }
  assert.deepEqual(formulas('```\n$a$\n```\nthen $b$'), ['b'], 'math resumes after the fence');
  assert.deepEqual(formulas('costs $5 and $10. In code: `$x$`.'), [], 'a dollar in a code span does not close a formula opened before it');
  assert.equal(parsed('costs $5. In code: `$x$`.'), 'costs \\$5. In code: `$x$`.');
});

test('a formula must close within its paragraph; an unclosed one is prose', () => {
  assert.deepEqual(formulas('$x is\n\nnot closed$'), []);
  assert.deepEqual(formulas('\\(open\n\nclosed\\)'), []);
  assert.equal(parsed('\\(open\n\nclosed\\)'), '(open\n\nclosed\\)', 'an unclosed \\( is the bracket, as a Markdown escape');
  assert.deepEqual(formulas('$$\nx\n\ny\n$$'), []);
  assert.deepEqual(formulas('$x\ny$ spans a line'), ['x\ny']);
});

test('streamed in pieces, the parser gets the same text as from the whole answer; an open formula is held back', () => {
  const text = 'Price $5 and $10. Then `$code$` and $a^2+b^2=c^2$ and \\(x\\).\n\n$$\n\\sum_i i\n$$\n\n```\n$x$\n```\nend $y$';
  const whole = splitMath(text);
  for (const step of [1, 2, 3, 7]) {
    const splitter = new MathSplitter();
    let out = '';
    for (let end = step; end < text.length; end += step) out += splitter.push(text.slice(0, end));
    out += splitter.push(text, true);
    assert.equal(out, whole.parsed, `pieces of ${step}`);
    assert.deepEqual(splitter.formulas, whole.formulas, `pieces of ${step}`);
  }
  const splitter = new MathSplitter();
  assert.equal(splitter.push('so $a^2'), 'so ', 'the formula waits for its closing $');
  assert.equal(splitter.push('so $a^2$ ok'), '\uE0000\uE001 ok');
  assert.deepEqual(splitter.formulas.map((f) => f.source), ['$a^2$'], 'the source is kept');
});
