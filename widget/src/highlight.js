// Syntax highlighting for fenced code blocks with a language: a separate chunk (npm/widget-highlight.js, and
// dist/patchbridge-highlight.js beside the static script) that the element imports only when such a block
// appears, so it never adds to the first load. The tokenizer is `@speed-highlight/core` (CC0, no dependencies):
// `tokenizeWith` yields plain (text, type) pairs, which become <span> elements built with textContent — no HTML
// string is parsed, so it works under the strict CSP and model output cannot become markup. Colours come from the
// element's own stylesheet (`.tok-<type>` classes).
import { tokenizeWith } from '@speed-highlight/core/tokenize';
import asm from '@speed-highlight/core/languages/asm.js';
import bash from '@speed-highlight/core/languages/bash.js';
import c from '@speed-highlight/core/languages/c.js';
import css from '@speed-highlight/core/languages/css.js';
import diff from '@speed-highlight/core/languages/diff.js';
import docker from '@speed-highlight/core/languages/docker.js';
import go from '@speed-highlight/core/languages/go.js';
import html from '@speed-highlight/core/languages/html.js';
import http from '@speed-highlight/core/languages/http.js';
import ini from '@speed-highlight/core/languages/ini.js';
import java from '@speed-highlight/core/languages/java.js';
import js from '@speed-highlight/core/languages/js.js';
import jsdoc from '@speed-highlight/core/languages/jsdoc.js';
import json from '@speed-highlight/core/languages/json.js';
import lua from '@speed-highlight/core/languages/lua.js';
import make from '@speed-highlight/core/languages/make.js';
import md from '@speed-highlight/core/languages/md.js';
import py from '@speed-highlight/core/languages/py.js';
import regex from '@speed-highlight/core/languages/regex.js';
import rs from '@speed-highlight/core/languages/rs.js';
import sql from '@speed-highlight/core/languages/sql.js';
import todo from '@speed-highlight/core/languages/todo.js';
import toml from '@speed-highlight/core/languages/toml.js';
import ts from '@speed-highlight/core/languages/ts.js';
import xml from '@speed-highlight/core/languages/xml.js';
import yaml from '@speed-highlight/core/languages/yaml.js';

/** The tokenizer's language table (the names its rules embed each other by). */
const LANGUAGES = { asm, bash, c, css, diff, docker, go, html, http, ini, java, js, jsdoc, json, lua, make, md, py, regex, rs, sql, todo, toml, ts, xml, yaml };

/** The names people write after ``` mapped to the table's names. */
/** @type {Record<string, string>} */
const ALIASES = {
  javascript: 'js', jsx: 'js', mjs: 'js', cjs: 'js', typescript: 'ts', tsx: 'ts', python: 'py', rust: 'rs',
  sh: 'bash', shell: 'bash', zsh: 'bash', console: 'bash', golang: 'go', cpp: 'c', 'c++': 'c', h: 'c', hpp: 'c',
  csharp: 'c', cs: 'c', dockerfile: 'docker', markdown: 'md', yml: 'yaml', svg: 'xml', patch: 'diff', cfg: 'ini',
  makefile: 'make', kotlin: 'java',
};

/**
 * The table name for a fence's language, or null when it has none here.
 * @param {string | null | undefined} name
 * @returns {keyof typeof LANGUAGES | null}
 */
export function languageOf(name) {
  const key = String(name ?? '').trim().toLowerCase();
  const id = ALIASES[key] ?? key;
  return Object.prototype.hasOwnProperty.call(LANGUAGES, id) && id !== 'todo' && id !== 'jsdoc' ? /** @type {keyof typeof LANGUAGES} */ (id) : null;
}

/**
 * Replaces the text of `code` with highlighted spans (the same text); false when the language is unknown.
 * @param {HTMLElement} code
 * @param {string | undefined} name
 */
export function highlight(code, name) {
  const id = languageOf(name);
  if (!id) return false;
  const text = code.textContent ?? '';
  const doc = code.ownerDocument;
  const out = doc.createDocumentFragment();
  tokenizeWith(text, LANGUAGES[id], (part, type) => {
    if (!part) return;
    if (!type) { out.append(part); return; }
    const span = doc.createElement('span');
    span.className = `tok-${type}`;
    span.textContent = part;
    out.append(span);
  }, { languages: LANGUAGES });
  // Only a faithful result replaces the text: the copy button and a person's copy must get the same code.
  if (out.textContent !== text) return false;
  code.replaceChildren(out);
  code.dataset.highlighted = id;
  return true;
}
