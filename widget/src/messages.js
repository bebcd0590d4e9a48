// The message log: stable messages and the in-flight draft, rendered incrementally.
//
// Stable messages never change once the controller publishes them, so each is rendered once and kept (keyed by
// its id and position). The draft's text grows; its Markdown views append only the new characters per frame.
// When the draft becomes a stable message (same id), its DOM is adopted in place rather than rebuilt or moved, so
// a long answer is never re-rendered or re-attached at the end. Tool results are shown inside the card of the
// call they answer.
//
// Adjacent blocks of one kind read as one: providers split an answer's text at each citation (Anthropic) and its
// reasoning summary into parts (OpenAI Responses), so consecutive text blocks continue one Markdown text and
// consecutive reasoning blocks are paragraphs of one "Thoughts" section.
//
// A long stored text (a reload, a conversation opened from the history) renders in slices over several tasks
// (see slices.js); a short one at once.
import { documentBytes, formatBytes, typeLabel } from './attachments.js';
import { h, icon, iconButton } from './dom.js';
import { MarkdownView, safeImageUrl } from './markdown.js';
import { loadHighlighter } from './runtime.js';
import { Slices } from './slices.js';
import { sourcesList } from './sources.js';
import { drawView } from './views.js';
import { BUSY } from './model.js';

/** @typedef {import('../../npm/index.js').AgentState} AgentState */
/** @typedef {import('../../npm/index.js').Message} Message */
/** @typedef {import('../../npm/index.js').Block} Block */
/** @typedef {import('./model.js').Translate} Translate */
/**
 * A tool call's card: its parts, whether its arguments are complete, its result and live status, and the page's
 * view of it (`slotted`, the light-DOM holder) when there is one.
 * @typedef {{ el: HTMLElement, name: string, statusEl: HTMLElement, argsPre: HTMLElement,
 *             argsDetails: HTMLDetailsElement, resultPre: HTMLElement, resultDetails: HTMLDetailsElement,
 *             complete: boolean, result: { content: string, isError: boolean } | null, status: string | null,
 *             input: any, viewStale: boolean, viewFailed?: boolean, slotted?: HTMLElement, progressEl?: HTMLElement }} Card
 */
/**
 * A part of the draft: a tool call's card, or a text or reasoning run rendered as it grows (reasoning folds into
 * `details` with its `summary`).
 * @typedef {{ type: 'tool-call', el: HTMLElement, card: Card }} CallSegment
 * @typedef {{ type: 'text' | 'reasoning', el: HTMLElement, body: HTMLElement, md: MarkdownView,
 *             details?: HTMLDetailsElement, summary?: HTMLElement, text: string, done: boolean }} RunSegment
 * @typedef {CallSegment | RunSegment} Segment
 */

/** @param {any} source */
function imageSource(source) {
  if (!source) return null;
  if (source.type === 'base64') return safeImageUrl(`data:${source.mediaType};base64,${source.data}`);
  if (source.type === 'url') return safeImageUrl(source.url);
  return null;
}

/**
 * A document the person sent, in their message: its name, type and size (the contents are the model's to read).
 * @param {any} block
 * @param {Translate} t
 */
function documentCard(block, t) {
  const type = typeLabel(String(block.source?.mediaType ?? ''));
  const size = formatBytes(documentBytes(block));
  return h('div', { className: 'chip sent', part: 'document', 'data-type': block.source?.mediaType, 'aria-label': `${t('document')}: ${block.name}, ${type}, ${size}` },
    icon('file'),
    h('span', { className: 'chip-text' }, h('span', { className: 'chip-name', title: block.name }, String(block.name ?? '')), h('span', { className: 'chip-meta' }, `${type} · ${size}`)));
}

/** @param {unknown} value */
function prettyJson(value) {
  try { return JSON.stringify(value, null, 2); } catch { return String(value); }
}

export class MessageLog {
  /**
   * @param {HTMLElement} root    the log container
   * @param {Translate} t
   */
  constructor(root, t) {
    this.root = root;
    this.t = t;
    /** @type {{ key: string, el: HTMLElement }[]} */
    this.stable = [];
    /** @type {{ id: string, el: HTMLElement, blocks: { segment: Segment, base: string }[], segments: Segment[] } | null} */
    this.draft = null;
    /** @type {Map<string, Card>} callId -> card record */
    this.cards = new Map();
    /** @type {Readonly<Record<string, { progress: number, total?: number, message?: string }>>} the last MCP progress */
    this.progress = {};
    /** @type {HTMLElement[]} user messages typed before the runtime was ready */
    this.queued = [];
    this.emptyEl = h('p', { className: 'empty', part: 'empty' }, t('empty'));
    /** Starter prompts in the empty state (`setSuggestions`). */
    this.suggestionsEl = h('div', { className: 'suggestions', part: 'suggestions', hidden: true });
    this.root.append(this.emptyEl, this.suggestionsEl);
    /**
     * What the per-message actions do (set by the element): `feedback` shows thumbs; `onFeedback(id, value)`,
     * `onRegenerate()`, `onEdit(message)`. Copy needs nothing from outside.
     */
    /** @type {{ feedback: boolean, onFeedback: ((id: string, value: 'up' | 'down' | null) => void) | null,
     *           onRegenerate: (() => void) | null, onEdit: ((message: Message) => void) | null }} */
    this.actions = { feedback: false, onFeedback: null, onRegenerate: null, onEdit: null };
    this.lastBusy = false;
    /** `(toolName, 'card') => renderer | null` and the error report for a renderer that throws (the element's). */
    /** @type {((name: string, kind: 'card' | 'confirmation') => ((props: any) => unknown) | null) | null} */
    this.views = null;
    /** @type {((tool: string, view: 'card', error: unknown) => void) | null} */
    this.onViewError = null;
    /** The element (its light DOM holds the page's views) and a counter for their slot names. */
    /** @type {HTMLElement | null} */
    this.host = null;
    this.slotCount = 0;
    /** Long stored texts still being rendered (see `fill`). */
    this.slices = new Slices(root);
    /** MCP Apps (the element's apps/hook.js): told of every card rendered, removed, and of a reset. */
    /** @type {{ card(callId: string, card: Card): void, gone(callId: string): void, reset(): void } | null} */
    this.apps = null;
  }

  /** @param {Translate} t */
  setTranslator(t) { this.t = t; }

  /**
   * Starter prompts shown while the conversation is empty; a click sends one through `onPick`.
   * @param {string[]} list
   * @param {(text: string) => void} onPick
   */
  setSuggestions(list, onPick) {
    this.suggestionsEl.replaceChildren(...list.map((text) => h('button', { type: 'button', part: 'suggestion', onclick: () => onPick(text) }, text)));
    this.updateEmpty();
  }

  updateEmpty() {
    this.suggestionsEl.hidden = this.emptyEl.hidden || this.suggestionsEl.childElementCount === 0;
  }

  /** Forget everything (another conversation was opened). */
  reset() {
    this.slices.cancel();
    this.stable = [];
    this.draft = null;
    for (const card of this.cards.values()) card.slotted?.remove();
    this.cards.clear();
    this.apps?.reset();
    this.root.replaceChildren(this.emptyEl, this.suggestionsEl, ...this.queued);
  }

  /**
   * Shows a message the person sent before the runtime was ready (removed once the controller has it).
   * @param {string} text
   * @param {any[]} images
   */
  addQueued(text, images) {
    const el = this.userMessage([{ type: 'text', text }, ...images], true);
    this.queued.push(el);
    this.root.append(el);
    this.emptyEl.hidden = true;
  }

  clearQueued() {
    for (const el of this.queued) el.remove();
    this.queued = [];
  }

  /** Renders `state` (an AgentState snapshot). @param {AgentState} state */
  render(state) {
    const messages = state.messages;
    // 1. Stable messages: keep the common prefix, rebuild from the first difference.
    let same = 0;
    while (same < this.stable.length && same < messages.length && this.stable[same].key === keyOf(messages[same], same)) same += 1;
    if (same < this.stable.length) {
      for (const gone of this.stable.splice(same)) gone.el.remove();
      // Cards of removed messages go, with the page views they placed in the light DOM.
      for (const [callId, card] of this.cards) {
        if (!card.el.isConnected) { card.slotted?.remove(); this.cards.delete(callId); this.apps?.gone(callId); }
      }
    }
    for (let i = same; i < messages.length; i += 1) {
      const message = messages[i];
      let el;
      if (this.draft && this.draft.id === message.id && message.role === 'assistant') {
        // Already in place (the draft sits after every stable message): leave it where it is.
        el = this.adoptDraft(message);
      } else {
        el = this.messageElement(message);
      }
      this.stable.push({ key: keyOf(message, i), el });
      if (el.parentNode !== this.root) this.root.insertBefore(el, this.draft?.el ?? this.queued[0] ?? null);
    }
    // 2. Tool results: from stable tool messages and from the running batch.
    for (const message of messages.slice(same)) {
      if (message.role !== 'tool') continue;
      for (const block of message.blocks) if (block.type === 'tool-result') this.applyResult(block.callId, block.content, block.isError);
    }
    for (const result of state.toolResults ?? []) this.applyResult(result.toolCallId, result.content, result.isError);
    // 3. The draft.
    if (state.draft) this.renderDraft(state.draft);
    else if (this.draft) { this.draft.el.remove(); this.draft = null; }
    // 4. Live statuses of tool cards.
    const pendingCall = state.pendingConfirmation?.callId;
    const busy = BUSY.has(state.status);
    for (const [callId, card] of this.cards) {
      let status;
      if (card.result) status = resultStatus(card.result);
      else if (callId === pendingCall) status = 'waiting';
      else if (!card.complete) status = 'streaming';
      else status = busy ? 'running' : 'not-run';
      if (card.status !== status) {
        card.status = status;
        card.statusEl.dataset.status = status;
        card.statusEl.textContent = this.t(STATUS_KEYS[status]);
        card.viewStale = true;
      }
      if (card.viewStale && card.input !== undefined) this.renderView(callId, card);
      if (card.complete) this.apps?.card(callId, card);
    }
    this.emptyEl.hidden = messages.length > 0 || state.draft != null || this.queued.length > 0;
    this.updateEmpty();
    // 5. Rewriting the tail: Regenerate on the last answer, Edit on the last user message, only while idle.
    const lastUser = messages.findLastIndex((m) => m.role === 'user');
    const canRewrite = !busy && state.status === 'idle' && !state.draft;
    this.stable.forEach((rec, index) => {
      const regenerate = /** @type {HTMLElement | null} */ (rec.el.querySelector(':scope > .msg-actions [part~=regenerate-button]'));
      if (regenerate) regenerate.hidden = !(canRewrite && index === messages.length - 1 && lastUser >= 0);
      const edit = /** @type {HTMLElement | null} */ (rec.el.querySelector(':scope > .msg-actions [part~=edit-button]'));
      if (edit) edit.hidden = !(canRewrite && index === lastUser);
    });
  }

  /** The row under a finished answer: Copy (its Markdown text), thumbs when feedback is on, Regenerate. @param {Readonly<Message>} message */
  answerActions(message) {
    const t = this.t;
    const text = groupsOf(message.blocks).filter((g) => g.block.type === 'text').map((g) => g.text).join('\n\n');
    const row = h('div', { className: 'msg-actions', part: 'message-actions' });
    if (text) {
      const copy = iconButton('copy', t('copyAnswer'), { part: 'copy-answer-button' });
      copy.addEventListener('click', async () => {
        try {
          await navigator.clipboard.writeText(text);
          copy.title = t('copied');
          copy.setAttribute('aria-label', t('copied'));
        } catch {
          // Clipboard access can be refused: select the answer instead, for the person to copy.
          const range = document.createRange();
          range.selectNodeContents(row.parentElement ?? row);
          const selection = row.ownerDocument.getSelection();
          selection?.removeAllRanges();
          selection?.addRange(range);
        }
      });
      row.append(copy);
    }
    if (this.actions.feedback && text) {
      /**
       * @param {'up' | 'down'} value
       * @param {HTMLElement} button
       * @param {HTMLElement} other
       */
      const pick = (value, button, other) => {
        const on = button.getAttribute('aria-pressed') !== 'true';
        button.setAttribute('aria-pressed', String(on));
        other.setAttribute('aria-pressed', 'false');
        this.actions.onFeedback?.(message.id, on ? value : null);
      };
      const up = iconButton('up', t('goodAnswer'), { part: 'feedback-button feedback-up', 'aria-pressed': 'false' });
      const down = iconButton('down', t('badAnswer'), { part: 'feedback-button feedback-down', 'aria-pressed': 'false' });
      up.addEventListener('click', () => pick('up', up, down));
      down.addEventListener('click', () => pick('down', down, up));
      row.append(up, down);
    }
    row.append(iconButton('redo', t('regenerate'), { part: 'regenerate-button', hidden: true, onclick: () => this.actions.onRegenerate?.() }));
    return row;
  }

  /** @param {Readonly<Message>} message */
  messageElement(message) {
    if (message.role === 'user') return this.userMessage(message.blocks, false, message);
    if (message.role === 'tool') {
      // Results live in their call's card; a result whose call is not shown gets its own card.
      const el = h('div', { className: 'msg tool', 'data-id': message.id });
      for (const block of message.blocks) {
        if (block.type === 'tool-result' && !this.cards.has(block.callId)) {
          const card = this.toolCard(block.callId, '?', true);
          card.argsDetails.hidden = true;
          el.append(card.el);
        }
      }
      return el;
    }
    const el = h('div', { className: 'msg assistant', part: 'message message-assistant', 'data-id': message.id });
    for (const group of groupsOf(message.blocks)) el.append(this.assistantGroup(group, el));
    el.append(...sourcesList(message.blocks, this.t), this.answerActions(message));
    return el;
  }

  /**
   * @param {ReadonlyArray<any>} blocks
   * @param {boolean} queued
   * @param {Readonly<Message> | null} [message]
   */
  userMessage(blocks, queued, message = null) {
    const bubble = h('div', { className: 'bubble', part: 'bubble bubble-user' });
    for (const block of blocks) {
      if (block.type === 'text') bubble.append(h('div', {}, block.text));
      else if (block.type === 'image') {
        const src = imageSource(block.source);
        if (src) bubble.append(h('img', { className: 'attached', src, alt: this.t('image') }));
      } else if (block.type === 'document') {
        bubble.append(documentCard(block, this.t));
      }
    }
    const el = h('div', { className: `msg user${queued ? ' queued' : ''}`, part: 'message message-user', 'aria-busy': queued ? 'true' : undefined },
      h('span', { className: 'visually-hidden' }, this.t('you')), bubble);
    if (message) {
      el.append(h('div', { className: 'msg-actions', part: 'message-actions' },
        iconButton('edit', this.t('editMessage'), { part: 'edit-button', hidden: true, onclick: () => this.actions.onEdit?.(/** @type {Message} */ (message)) })));
    }
    return el;
  }

  /**
   * One stable group of assistant blocks (see `groupsOf`), in `message` (its element, marked busy while a long
   * text is rendered in slices).
   * @param {Group} group
   * @param {HTMLElement | null} [message]
   */
  assistantGroup(group, message = null) {
    const block = group.block;
    switch (block.type) {
      case 'text': {
        const el = h('div', { className: 'bubble md', part: 'bubble bubble-assistant' });
        this.fill(el, group.text, message);
        return el;
      }
      case 'reasoning': {
        const body = h('div', { className: 'md' });
        this.fill(body, group.text, message);
        return h('details', { className: 'reasoning', part: 'reasoning' }, h('summary', {}, this.t('thoughts')), body);
      }
      case 'tool-call': {
        const card = this.toolCard(block.callId, block.name, true);
        card.argsPre.textContent = prettyJson(block.input);
        card.input = block.input;
        return card.el;
      }
      case 'image': {
        const src = imageSource(block.source);
        return src ? h('img', { className: 'bubble', src, alt: this.t('image') }) : h('span');
      }
      default:
        return h('span');
    }
  }

  /**
   * @param {string} callId
   * @param {string} name
   * @param {boolean} complete
   * @returns {Card}
   */
  toolCard(callId, name, complete) {
    const statusEl = h('span', { className: 'status', role: 'status' });
    const argsPre = h('pre', {});
    const argsDetails = h('details', {}, h('summary', {}, this.t('toolArguments')), argsPre);
    const resultPre = h('pre', {});
    const resultDetails = h('details', { hidden: true }, h('summary', {}, this.t('toolResult')), resultPre);
    // An MCP tool's card names its server, read from the name alone (`mcp__<server>__<tool>`, npm/mcp/names.js),
    // so a stored call does after a reload too.
    const mcp = /^mcp__([A-Za-z0-9][A-Za-z0-9-]*)__(.)/.test(name) ? name.slice(5).split('__') : null;
    const el = h('div', { className: 'tool', part: 'tool-card', 'data-call-id': callId, 'data-mcp-server': mcp?.[0] },
      h('div', { className: 'head' }, h('span', { className: 'name', title: name }, mcp ? mcp.slice(1).join('__') : name,
        mcp && h('span', { className: 'server', part: 'tool-server' }, `MCP · ${mcp[0]}`)), statusEl),
      argsDetails, resultDetails);
    const card = { el, name, statusEl, argsPre, argsDetails, resultPre, resultDetails, complete, result: null, status: null, input: undefined, viewStale: true };
    this.cards.set(callId, card);
    this.bar(callId, card);
    return card;
  }

  /**
   * The progress an MCP server reports for its running calls (`getMcpProgress()`, by toolCallId): a bar in each
   * running call's card (part `tool-progress`; no `total` means it cannot say how far, so the bar is
   * indeterminate), with the server's message as its label; a card whose call has no entry loses its bar.
   * @param {Readonly<Record<string, { progress: number, total?: number, message?: string }>>} progress
   */
  renderProgress(progress) {
    this.progress = progress;
    for (const [callId, card] of this.cards) this.bar(callId, card);
  }

  /**
   * One card's bar from the last progress seen: also called when a card is made, since a server may report
   * progress before the card of its call is rendered.
   * @param {string} callId
   * @param {Card} card
   */
  bar(callId, card) {
    const progress = this.progress;
    const entry = Object.prototype.hasOwnProperty.call(progress, callId) ? progress[callId] : undefined;
    if (!entry) { card.progressEl?.remove(); card.progressEl = undefined; return; }
    if (!card.progressEl) {
      card.progressEl = h('progress', { part: 'tool-progress', max: 1 });
      card.el.querySelector('.head')?.after(card.progressEl);
    }
    const bar = /** @type {HTMLProgressElement} */ (card.progressEl);
    const total = typeof entry.total === 'number' && entry.total > 0 ? entry.total : null;
    if (total === null) bar.removeAttribute('value');
    else { bar.max = total; bar.value = Math.min(entry.progress, total); }
    bar.setAttribute('aria-label', entry.message ? String(entry.message) : this.t('toolProgress'));
    bar.title = entry.message ? String(entry.message) : '';
  }

  /**
   * A page's view of this call (see `views`): called with the call's name, arguments, live status and result each
   * time one of them changes; its DOM goes into the element's light DOM, shown in the card through a named slot, so
   * the page's own styles apply. A renderer that throws (or returns no Node) leaves the generic card and is
   * reported through `onViewError`; the turn goes on.
   */
  /**
   * @param {string} callId
   * @param {Card} card
   */
  renderView(callId, card) {
    card.viewStale = false;
    const render = this.views?.(card.name, 'card');
    if (!render || card.viewFailed) return;
    let node;
    try {
      node = drawView(render, { name: card.name, callId, arguments: card.input, status: card.status, result: card.result });
    } catch (error) {
      card.viewFailed = true;
      card.slotted?.remove();
      card.el.classList.remove('custom');
      this.onViewError?.(card.name, 'card', error);
      return;
    }
    if (!card.slotted) {
      const name = `pb-view-${++this.slotCount}`;
      card.slotted = h('div', { slot: name });
      card.el.append(h('slot', { name, className: 'view' }));
      card.el.classList.add('custom');
    }
    card.slotted.replaceChildren(node);
    // (Re)attached to the host: a page view lives in the light DOM, where the page's CSS reaches it.
    if (!card.slotted.isConnected) this.host?.append(card.slotted);
  }

  /**
   * @param {string} callId
   * @param {string} content
   * @param {boolean} isError
   */
  applyResult(callId, content, isError) {
    const card = this.cards.get(callId);
    if (!card || card.result) return;
    card.result = { content, isError };
    card.resultPre.textContent = content;
    card.resultDetails.hidden = false;
    card.el.classList.toggle('error', isError);
  }

  /** @param {NonNullable<AgentState['draft']>} draft */
  renderDraft(draft) {
    if (!this.draft || this.draft.id !== draft.id) {
      this.draft?.el.remove();
      const el = h('div', { className: 'msg assistant draft', part: 'message message-assistant', 'data-id': draft.id, 'aria-busy': 'true' });
      this.draft = { id: draft.id, el, blocks: [], segments: [] };
      this.root.insertBefore(el, this.queued[0] ?? null);
    }
    const view = this.draft;
    draft.blocks.forEach((/** @type {any} */ block, index) => {
      let rec = view.blocks[index];
      if (!rec) {
        const previous = view.segments[view.segments.length - 1];
        if (previous && previous.type !== 'tool-call' && previous.type === block.type) {
          // The next part of the same text or reasoning: it continues the segment's Markdown.
          rec = { segment: previous, base: previous.text + SEPARATORS[block.type] };
        } else {
          if (previous) this.closeSegment(previous);
          const segment = this.draftSegment(block);
          view.segments.push(segment);
          view.el.append(segment.el);
          rec = { segment, base: '' };
        }
        view.blocks[index] = rec;
      }
      const segment = rec.segment;
      if (segment.type === 'tool-call') {
        segment.card.argsPre.textContent = block.argumentsText;
        if (block.complete && !segment.card.complete) {
          segment.card.complete = true;
          try {
            segment.card.input = JSON.parse(block.argumentsText);
            segment.card.argsPre.textContent = prettyJson(segment.card.input);
          } catch { /* shown raw */ }
        }
      } else {
        segment.text = rec.base + block.text;
        segment.md.update(segment.text);
      }
    });
  }

  /**
   * @param {any} block
   * @returns {Segment}
   */
  draftSegment(block) {
    if (block.type === 'tool-call') {
      const card = this.toolCard(block.callId, block.name, false);
      card.argsDetails.open = true;
      return { type: 'tool-call', el: card.el, card };
    }
    const body = h('div', { className: 'md cursor' });
    const md = new MarkdownView(body, (pre) => this.addCopyButton(pre));
    if (block.type === 'reasoning') {
      const summary = h('summary', {}, this.t('thinking'));
      const details = h('details', { className: 'reasoning', part: 'reasoning', open: true }, summary, body);
      return { type: 'reasoning', el: details, body, md, details, summary, text: '', done: false };
    }
    body.classList.add('bubble');
    body.setAttribute('part', 'bubble bubble-assistant');
    return { type: 'text', el: body, body, md, text: '', done: false };
  }

  /**
   * A text or reasoning segment is complete (with `text`, its own so far): flush its parser, drop the cursor,
   * fold the thoughts.
   * @param {Segment} segment
   * @param {string} [text]
   */
  closeSegment(segment, text) {
    if (segment.type === 'tool-call' || segment.done) return;
    segment.done = true;
    segment.md.end(text ?? segment.text);
    segment.body.classList.remove('cursor');
    if (segment.details && segment.summary) { segment.details.open = false; segment.summary.textContent = this.t('thoughts'); }
  }

  /** The draft became this stable message: finish its views and keep its DOM. @param {Readonly<Message>} message */
  adoptDraft(message) {
    const view = /** @type {NonNullable<MessageLog['draft']>} */ (this.draft);
    this.draft = null;
    view.el.classList.remove('draft');
    view.el.removeAttribute('aria-busy');
    for (const group of groupsOf(message.blocks)) {
      const segment = view.blocks[group.first]?.segment;
      if (!segment) { view.el.append(this.assistantGroup(group, view.el)); continue; }
      if (group.block.type === 'tool-call' && segment.type === 'tool-call') {
        segment.card.complete = true;
        segment.card.argsPre.textContent = prettyJson(group.block.input);
        segment.card.input = group.block.input;
        segment.card.viewStale = true;
        segment.card.argsDetails.open = false;
      } else {
        this.closeSegment(segment, group.text);
      }
    }
    view.el.append(...sourcesList(message.blocks, this.t), this.answerActions(message));
    return view.el;
  }

  /**
   * Renders the Markdown `text` into `bubble`: at once when it is short, else in slices (`message` marked busy
   * meanwhile, see slices.js).
   * @param {HTMLElement} bubble
   * @param {string} text
   * @param {HTMLElement | null} message
   */
  fill(bubble, text, message) {
    this.slices.render(new MarkdownView(bubble, (pre) => this.addCopyButton(pre)), bubble, text, message);
  }

  /** @param {HTMLElement} pre */
  addCopyButton(pre) {
    const code = pre.querySelector('code');
    // A fence with a language is highlighted once the highlighter chunk has loaded (on demand, the first time).
    if (code?.dataset.lang) {
      loadHighlighter().then((chunk) => { if (code.isConnected) chunk.highlight(code, code.dataset.lang); }, () => { /* stays plain */ });
    }
    const button = h('button', { type: 'button', className: 'copy', part: 'copy-button' }, this.t('copy'));
    button.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(code?.textContent ?? '');
        button.textContent = this.t('copied');
      } catch {
        // Clipboard access can be refused (permissions, insecure context): select the text instead.
        const range = document.createRange();
        range.selectNodeContents(code ?? pre);
        const selection = pre.ownerDocument.getSelection();
        selection?.removeAllRanges();
        selection?.addRange(range);
      }
    });
    pre.append(button);
  }
}

/** @type {Record<string, string>} */
const STATUS_KEYS = {
  streaming: 'toolStatusStreaming', waiting: 'toolStatusWaiting', running: 'toolStatusRunning', done: 'toolStatusDone',
  error: 'toolStatusError', rejected: 'toolStatusRejected', 'not-run': 'toolStatusNotRun',
  invalid: 'toolStatusInvalid',
};

/** The runtime answers calls that never ran (a cancelled or failed turn) with an error result marked `[not run] `,
 *  and calls the person rejected with one marked `[rejected] ` (both prefixes are reserved to it), so the status
 *  reads the same from the live turn and from the stored conversation after a reload. */
const NOT_RUN = '[not run] ';
const REJECTED = '[rejected] ';
/** …and calls whose arguments do not match the tool's inputSchema (never confirmed, never run) with `[invalid arguments] `. */
const INVALID_ARGUMENTS = '[invalid arguments] ';

/** @param {{ content: string, isError: boolean }} result */
function resultStatus(result) {
  if (!result.isError) return 'done';
  if (result.content.startsWith(NOT_RUN)) return 'not-run';
  if (result.content.startsWith(REJECTED)) return 'rejected';
  if (result.content.startsWith(INVALID_ARGUMENTS)) return 'invalid';
  return 'error';
}

/** What joins the next block of a run of one kind: text continues mid-sentence, reasoning parts are paragraphs. */
/** @type {Record<string, string>} */
const SEPARATORS = { text: '', reasoning: '\n\n' };

/**
 * The blocks of an assistant message as rendered groups: each run of adjacent text blocks (or of reasoning
 * blocks) is one group with the joined text; every other block is its own group. `first`: its first block index.
 * @typedef {{ block: any, first: number, text: string }} Group
 * @param {ReadonlyArray<any>} blocks
 */
export function groupsOf(blocks) {
  /** @type {Group[]} */
  const groups = [];
  blocks.forEach((block, index) => {
    const last = groups[groups.length - 1];
    const joinable = block.type === 'text' || block.type === 'reasoning';
    if (joinable && last && last.block.type === block.type) last.text += SEPARATORS[block.type] + block.text;
    else groups.push({ block, first: index, text: joinable ? block.text : '' });
  });
  return groups;
}

/**
 * @param {Readonly<Message>} message
 * @param {number} index
 */
function keyOf(message, index) {
  return `${index}:${message.id}:${message.role}:${message.blocks.length}`;
}
