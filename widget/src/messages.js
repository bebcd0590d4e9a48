// The message log: stable messages and the in-flight draft, rendered incrementally.
//
// Stable messages never change once the controller publishes them, so each is rendered once and kept (keyed by
// its id and position). The draft's text grows; its Markdown views append only the new characters per frame.
// When the draft becomes a stable message (same id), its DOM is adopted rather than rebuilt, so a long answer
// is never re-rendered at the end. Tool results are shown inside the card of the call they answer.
import { h } from './dom.js';
import { MarkdownView, safeImageUrl } from './markdown.js';

const BUSY = new Set(['running', 'awaiting-confirmation', 'saving']);

function imageSource(source) {
  if (!source) return null;
  if (source.type === 'base64') return safeImageUrl(`data:${source.mediaType};base64,${source.data}`);
  if (source.type === 'url') return safeImageUrl(source.url);
  return null;
}

function prettyJson(value) {
  try { return JSON.stringify(value, null, 2); } catch { return String(value); }
}

export class MessageLog {
  /**
   * @param {HTMLElement} root    the log container
   * @param {(key: string, ...args: any[]) => string} t
   */
  constructor(root, t) {
    this.root = root;
    this.t = t;
    /** @type {{ key: string, el: HTMLElement }[]} */
    this.stable = [];
    /** @type {{ id: string, el: HTMLElement, blocks: any[] } | null} */
    this.draft = null;
    /** @type {Map<string, any>} callId -> card record */
    this.cards = new Map();
    /** @type {HTMLElement[]} user messages typed before the runtime was ready */
    this.queued = [];
    this.emptyEl = h('p', { className: 'empty', part: 'empty' }, t('empty'));
    this.root.append(this.emptyEl);
    /** callIds the person rejected in this page (shown as "Rejected" rather than "Failed"). */
    this.rejected = new Set();
  }

  setTranslator(t) { this.t = t; }

  /** Forget everything (another conversation was opened). */
  reset() {
    this.stable = [];
    this.draft = null;
    this.cards.clear();
    this.root.replaceChildren(this.emptyEl, ...this.queued);
  }

  /** Shows a message the person sent before the runtime was ready (removed once the controller has it). */
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

  /** Renders `state` (an AgentState snapshot). */
  render(state) {
    const messages = state.messages;
    // 1. Stable messages: keep the common prefix, rebuild from the first difference.
    let same = 0;
    while (same < this.stable.length && same < messages.length && this.stable[same].key === keyOf(messages[same], same)) same += 1;
    if (same < this.stable.length) {
      for (const gone of this.stable.splice(same)) gone.el.remove();
      if (same === 0) this.cards.clear();
    }
    for (let i = same; i < messages.length; i += 1) {
      const message = messages[i];
      let el;
      if (this.draft && this.draft.id === message.id && message.role === 'assistant') {
        el = this.adoptDraft(message);
      } else {
        el = this.messageElement(message);
      }
      this.stable.push({ key: keyOf(message, i), el });
      this.root.insertBefore(el, this.draft?.el ?? this.queued[0] ?? null);
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
      if (card.result) status = resultStatus(card.result, this.rejected.has(callId));
      else if (callId === pendingCall) status = 'waiting';
      else if (!card.complete) status = 'streaming';
      else status = busy ? 'running' : 'not-run';
      if (card.status !== status) {
        card.status = status;
        card.statusEl.dataset.status = status;
        card.statusEl.textContent = this.t(STATUS_KEYS[status]);
      }
    }
    this.emptyEl.hidden = messages.length > 0 || state.draft != null || this.queued.length > 0;
  }

  messageElement(message) {
    if (message.role === 'user') return this.userMessage(message.blocks, false);
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
    message.blocks.forEach((block) => el.append(this.assistantBlock(block, true)));
    return el;
  }

  userMessage(blocks, queued) {
    const bubble = h('div', { className: 'bubble', part: 'bubble bubble-user' });
    for (const block of blocks) {
      if (block.type === 'text') bubble.append(h('div', {}, block.text));
      else if (block.type === 'image') {
        const src = imageSource(block.source);
        if (src) bubble.append(h('img', { className: 'attached', src, alt: this.t('image') }));
      }
    }
    return h('div', { className: `msg user${queued ? ' queued' : ''}`, part: 'message message-user', 'aria-busy': queued ? 'true' : undefined },
      h('span', { className: 'visually-hidden' }, this.t('you')), bubble);
  }

  /** One stable assistant block. */
  assistantBlock(block, complete) {
    switch (block.type) {
      case 'text': {
        const el = h('div', { className: 'bubble md', part: 'bubble bubble-assistant' });
        new MarkdownView(el, (pre) => this.addCopyButton(pre)).end(block.text);
        return el;
      }
      case 'reasoning': {
        const body = h('div', { className: 'md' });
        new MarkdownView(body, (pre) => this.addCopyButton(pre)).end(block.text);
        return h('details', { className: 'reasoning', part: 'reasoning' }, h('summary', {}, this.t('thoughts')), body);
      }
      case 'tool-call': {
        const card = this.toolCard(block.callId, block.name, complete);
        card.argsPre.textContent = prettyJson(block.input);
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

  toolCard(callId, name, complete) {
    const statusEl = h('span', { className: 'status', role: 'status' });
    const argsPre = h('pre', {});
    const argsDetails = h('details', {}, h('summary', {}, this.t('toolArguments')), argsPre);
    const resultPre = h('pre', {});
    const resultDetails = h('details', { hidden: true }, h('summary', {}, this.t('toolResult')), resultPre);
    const el = h('div', { className: 'tool', part: 'tool-card', 'data-call-id': callId },
      h('div', { className: 'head' }, h('span', { className: 'name' }, name), statusEl),
      argsDetails, resultDetails);
    const card = { el, statusEl, argsPre, argsDetails, resultPre, resultDetails, complete, result: null, status: null };
    this.cards.set(callId, card);
    return card;
  }

  applyResult(callId, content, isError) {
    const card = this.cards.get(callId);
    if (!card || card.result) return;
    card.result = { content, isError };
    card.resultPre.textContent = content;
    card.resultDetails.hidden = false;
    card.el.classList.toggle('error', isError);
  }

  renderDraft(draft) {
    if (!this.draft || this.draft.id !== draft.id) {
      this.draft?.el.remove();
      const el = h('div', { className: 'msg assistant draft', part: 'message message-assistant', 'data-id': draft.id, 'aria-busy': 'true' });
      this.draft = { id: draft.id, el, blocks: [] };
      this.root.insertBefore(el, this.queued[0] ?? null);
    }
    const view = this.draft;
    draft.blocks.forEach((block, index) => {
      let rec = view.blocks[index];
      if (!rec) {
        rec = this.draftBlock(block);
        view.blocks[index] = rec;
        view.el.append(rec.el);
      }
      if (block.type === 'tool-call') {
        rec.card.argsPre.textContent = block.argumentsText;
        if (block.complete && !rec.card.complete) {
          rec.card.complete = true;
          try { rec.card.argsPre.textContent = prettyJson(JSON.parse(block.argumentsText)); } catch { /* shown raw */ }
        }
      } else {
        rec.md.update(block.text);
        if (block.complete && !rec.done) {
          rec.done = true;
          rec.md.end(block.text);
          rec.body.classList.remove('cursor');
          if (rec.details) { rec.details.open = false; rec.summary.textContent = this.t('thoughts'); }
        }
      }
    });
  }

  draftBlock(block) {
    if (block.type === 'tool-call') {
      const card = this.toolCard(block.callId, block.name, false);
      card.argsDetails.open = true;
      return { el: card.el, card };
    }
    const body = h('div', { className: 'md cursor' });
    const md = new MarkdownView(body, (pre) => this.addCopyButton(pre));
    if (block.type === 'reasoning') {
      const summary = h('summary', {}, this.t('thinking'));
      const details = h('details', { className: 'reasoning', part: 'reasoning', open: true }, summary, body);
      return { el: details, body, md, details, summary, done: false };
    }
    body.classList.add('bubble');
    body.setAttribute('part', 'bubble bubble-assistant');
    return { el: body, body, md, done: false };
  }

  /** The draft became this stable message: finish its views and keep its DOM. */
  adoptDraft(message) {
    const view = this.draft;
    this.draft = null;
    view.el.classList.remove('draft');
    view.el.removeAttribute('aria-busy');
    message.blocks.forEach((block, index) => {
      const rec = view.blocks[index];
      if (!rec) { view.el.append(this.assistantBlock(block, true)); return; }
      if (block.type === 'tool-call' && rec.card) {
        rec.card.complete = true;
        rec.card.argsPre.textContent = prettyJson(block.input);
        rec.card.argsDetails.open = false;
      } else if (rec.md) {
        rec.md.end(block.text ?? '');
        rec.body.classList.remove('cursor');
        if (rec.details) { rec.details.open = false; rec.summary.textContent = this.t('thoughts'); }
      }
    });
    return view.el;
  }

  addCopyButton(pre) {
    const code = pre.querySelector('code');
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

const STATUS_KEYS = {
  streaming: 'toolStatusStreaming', waiting: 'toolStatusWaiting', running: 'toolStatusRunning', done: 'toolStatusDone',
  error: 'toolStatusError', rejected: 'toolStatusRejected', 'not-run': 'toolStatusNotRun',
  invalid: 'toolStatusInvalid',
};

/** The runtime answers calls that never ran (a cancelled or failed turn) with an error result marked `[not run] `. */
const NOT_RUN = '[not run] ';
/** …and calls whose arguments do not match the tool's inputSchema (never confirmed, never run) with `[invalid arguments] `. */
const INVALID_ARGUMENTS = '[invalid arguments] ';

function resultStatus(result, rejectedHere) {
  if (!result.isError) return 'done';
  if (result.content.startsWith(NOT_RUN)) return 'not-run';
  if (result.content.startsWith(INVALID_ARGUMENTS)) return 'invalid';
  return rejectedHere ? 'rejected' : 'error';
}

function keyOf(message, index) {
  return `${index}:${message.id}:${message.role}:${message.blocks.length}`;
}
