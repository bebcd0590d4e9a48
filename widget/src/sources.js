// The sources list under an answer: what its text blocks cite or were found for them (`sources` of text blocks,
// docs/protocol.md §1), numbered, each URL once (a later duplicate fills in what the first lacked). Links are live
// only for http(s) URLs and open in a new tab without the opener or a referrer; the runtime and the relay already
// refuse other URLs, and this check stands on its own so that no data can turn into a `javascript:` link here.
// `sourcesOf` is the DOM-free part (tested in Node), `sourcesList` draws it.
import { h } from './dom.js';

/**
 * The sources of an answer's blocks in order of first appearance, keyed by link (or by title for a source without
 * one); a URL that is not http(s) is no link.
 * @param {any[]} blocks
 * @returns {{ url: URL | null, title?: string, cited?: string }[]}
 */
export function sourcesOf(blocks) {
  /** @type {Map<string, { url: URL | null, title?: string, cited?: string }>} */
  const seen = new Map();
  for (const block of blocks) {
    for (const source of (block.type === 'text' && block.sources) || []) {
      let url = null;
      try { url = new URL(source.url); } catch { /* no link */ }
      if (!/^https?:$/.test(url?.protocol ?? '')) url = null;
      const key = url?.href ?? source.title;
      if (!key) continue;
      const entry = seen.get(key);
      if (entry) {
        entry.title ??= source.title;
        entry.cited ??= source.citedText;
      } else seen.set(key, { url, title: source.title, cited: source.citedText });
    }
  }
  return [...seen.values()];
}

/**
 * The list for an answer's blocks, as an array to spread into `append` (empty when they cite nothing).
 * @param {any[]} blocks
 * @param {(key: string, ...args: any[]) => string} t
 */
export function sourcesList(blocks, t) {
  const sources = sourcesOf(blocks);
  if (!sources.length) return [];
  const items = sources.map(({ url, title, cited }) => {
    const host = url?.hostname.replace(/^www\./, '');
    return h('li', {},
      url ? h('a', { href: url.href, target: '_blank', rel: 'noopener noreferrer', title: cited }, title ?? host) : h('span', { title: cited }, title),
      Boolean(title && host) && h('span', { className: 'host' }, host));
  });
  return [h('div', { className: 'sources', part: 'sources' },
    h('span', { 'aria-hidden': 'true' }, t('sources')),
    h('ol', { 'aria-label': t('sources') }, ...items))];
}
