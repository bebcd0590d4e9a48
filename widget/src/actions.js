// What the person's actions do to the controller: send (queued until the runtime is ready), regenerate and edit
// (rewriting the conversation's tail), retry, answer a confirmation, open a stored conversation, start a new one,
// continue in a new one. Each waits for the controller to be idle where the controller needs it, and shows a
// refusal with its way forward; the turn's rules stay with the controller.
import { isBusy, restoreFailed } from './model.js';

/** @typedef {import('../../npm/index.js').AgentController} AgentController */

/**
 * What the element lends the actions.
 * @typedef {{ controller: () => AgentController | null, log: import('./messages.js').MessageLog,
 *             notices: import('./notice.js').NoticeBar, recovery: () => import('./recovery.js').Recovery,
 *             composer: () => import('./composer.js').Composer | null, forget: () => void,
 *             follow: { stick: boolean } }} ActionsHost
 */

export class Actions {
  #host;
  /** @type {{ text: string, images: any[] }[]} messages sent before the runtime was ready */
  #queue = [];
  /** @type {string | any[] | null} */
  #lastInput = null;

  /** @param {ActionsHost} host */
  constructor(host) {
    this.#host = host;
    /** @type {string | null} the remembered conversation the relay refused for lack of credentials */
    this.awaitingCredentials = null;
  }

  /**
   * @param {string} text
   * @param {any[]} [images]
   */
  send(text, images = []) {
    const host = this.#host;
    const controller = host.controller();
    const blocks = [...(text ? [{ type: 'text', text }] : []), ...images];
    if (!blocks.length) return;
    host.follow.stick = true;
    if (!controller) {
      this.#queue.push({ text, images });
      host.log.addQueued(text, images);
      return;
    }
    const input = images.length ? blocks : text;
    this.#lastInput = input;
    this.awaitingCredentials = null; // the person started afresh
    host.notices.hide();
    host.recovery().authAsked = false;
    const composer = host.composer();
    if (composer?.editing) {
      composer.setEditing(false);
      this.rewrite((c) => c.editLastMessage(/** @type {any} */ (input)));
      return;
    }
    controller.send(/** @type {any} */ (input)).catch(() => { /* shown from state.error */ });
  }

  /** Sends what was typed while the runtime loaded (once the open conversation is in place). */
  flushQueue() {
    const queued = this.#queue.splice(0);
    this.#host.log.clearQueued();
    for (const item of queued) this.send(item.text, item.images);
  }

  /**
   * Regenerate or edit-and-resend: the controller rewrites the conversation's tail (a new revision; refused while
   * a turn runs) and runs the turn; a refusal is shown like any other error.
   * @param {(controller: AgentController) => Promise<unknown>} run
   */
  rewrite(run) {
    const host = this.#host;
    const controller = host.controller();
    if (!controller) return;
    host.notices.hide();
    let turn;
    try { turn = run(controller); } catch (error) { host.recovery().show(error, null); return; }
    Promise.resolve(turn).catch((error) => {
      // A refusal before the turn started is not in state.error: show it here.
      if (controller.getState().error !== error) host.recovery().show(error, null);
    });
    host.follow.stick = true;
  }

  retry() {
    const controller = this.#host.controller();
    if (!controller) return;
    this.#host.notices.hide();
    if (typeof controller.retry === 'function') controller.retry().catch(() => {});
    else if (this.#lastInput != null) controller.send(/** @type {any} */ (this.#lastInput)).catch(() => {});
  }

  /** @param {boolean} approve */
  answer(approve) {
    const controller = this.#host.controller();
    try {
      if (approve) controller?.approveTool();
      else controller?.rejectTool();
    } catch (error) {
      this.#host.recovery().show(error, null);
    }
  }

  /**
   * Cancels a running turn and resolves once the controller is idle again (loads and resets need idle).
   * @returns {Promise<void>}
   */
  settle() {
    const controller = this.#host.controller();
    if (!controller || !isBusy(controller.getState().status)) return Promise.resolve();
    controller.abort();
    return new Promise((resolve) => {
      const off = controller.subscribe((state) => {
        if (!isBusy(state.status)) { off(); resolve(); }
      });
    });
  }

  /** Settles the turn of conversation `id` if it is the open one (it can only be deleted while idle). @param {string} id */
  stopTurnOf(id) {
    return this.#host.controller()?.getState().conversation?.id === id ? this.settle() : Promise.resolve();
  }

  /**
   * Opens a stored conversation. `restoring`: it is the remembered one, opened at start; a failure then is quiet
   * (see `restoreFailed`), any other failure is shown from state.error.
   * @param {string} id
   */
  async open(id, restoring = false) {
    const host = this.#host;
    const controller = host.controller();
    if (!controller) return;
    await this.settle();
    if (host.controller() !== controller) return;
    host.log.reset();
    try {
      await controller.loadConversation(id);
    } catch (error) {
      if (!restoring) return;
      if (restoreFailed(error) === 'await-credentials') this.awaitingCredentials = id;
      else host.forget();
      try { controller.newConversation(); } catch { /* keep state */ }
      host.notices.hide();
    }
  }

  /** The page gave new credentials: open the remembered conversation the relay refused, if nothing happened since. */
  credentialsChanged() {
    const id = this.awaitingCredentials;
    const state = this.#host.controller()?.getState();
    if (!id || !state || state.status !== 'idle' || state.conversation || state.messages.length) return;
    this.awaitingCredentials = null;
    void this.open(id, true);
  }

  /** @param {{ keepMessages: boolean }} [options] */
  async newConversation(options) {
    const host = this.#host;
    const controller = host.controller();
    if (!controller) return;
    await this.settle();
    try {
      if (options) controller.newConversation(options);
      else controller.newConversation();
    } catch (error) {
      host.recovery().show(error, null);
      return;
    }
    this.awaitingCredentials = null;
    host.forget();
    host.notices.hide();
    if (!options?.keepMessages) host.log.reset();
    host.composer()?.input.focus();
  }

  /** The way forward from a conversation whose stored provider state the relay refuses: the same messages in a
   *  new conversation without that state, and the refused turn runs again there. */
  async continueInNew() {
    await this.newConversation({ keepMessages: true });
    const controller = this.#host.controller();
    const last = controller?.getState().messages.at(-1);
    if (controller && last?.role === 'user') controller.retry().catch(() => { /* shown from state.error */ });
  }
}
