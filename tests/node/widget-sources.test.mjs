// The widget's sources list without a browser (widget/src/sources.js, `sourcesOf`): which sources of an answer's
// text blocks are listed, in which order, and which become links. No wasm, relay or DOM.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { sourcesOf } from '../../widget/src/sources.js';

const text = (sources) => ({ type: 'text', text: 'x', sources });
const listed = (blocks) => sourcesOf(blocks).map(({ url, title, cited }) => ({ href: url?.href ?? null, title, cited }));

test('the sources of all text blocks are listed in order, each URL once, a duplicate filling what the first lacked', () => {
  assert.deepEqual(listed([
    text([{ url: 'https://example.org/a', title: 'A' }, { title: 'Almanac.pdf', citedText: 'p. 2' }]),
    { type: 'reasoning', text: 'r', sources: [{ url: 'https://ignored.example' }] },
    { type: 'text', text: 'no sources' },
    text([{ url: 'https://example.org/a', citedText: 'quoted' }, { url: 'https://example.org/b' }, { title: 'Almanac.pdf' }]),
  ]), [
    { href: 'https://example.org/a', title: 'A', cited: 'quoted' },
    { href: null, title: 'Almanac.pdf', cited: 'p. 2' },
    { href: 'https://example.org/b', title: undefined, cited: undefined },
  ]);
});

test('only http(s) URLs become links; a source with neither link nor title is not listed', () => {
  assert.deepEqual(listed([text([
    { url: 'javascript:alert(1)', title: 'Script' },
    { url: 'JAVASCRIPT:alert(1)' },
    { url: 'data:text/html,x', title: 'Data' },
    { url: ' java\tscript:alert(1)' },
    { url: 'HTTPS://Example.org/Path' },
    { url: 'not a url' },
  ])]), [
    { href: null, title: 'Script', cited: undefined },
    { href: null, title: 'Data', cited: undefined },
    { href: 'https://example.org/Path', title: undefined, cited: undefined },
  ]);
});
