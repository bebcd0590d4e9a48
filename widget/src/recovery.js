// The ways forward from a failed turn, load or save, shown in the notice bar. Which ways fit an error is the
// model's decision (`waysForward` in model.js); this file carries them out: Retry; "Continue in a new
// conversation"; "Reload conversation" after a conflict, which puts the message this tab could not save back into
// the box; and on a 401, asking the page for fresh credentials (`patchbridge-unauthorized` with `waitUntil`)
// before the operation runs again by itself. Every decision about the turn itself stays with the controller.
import { textOf, waysForward } from './model.js';

/**
 * What the element lends the recovery: the current strings, notice bar, controller and composer, and its actions.
 * @typedef {{ t: () => import('./model.js').Translate, notices: import('./notice.js').NoticeBar,
 *             controller: () => import('../../npm/index.js').AgentController | null,
 *             composer: () => import('./composer.js').Composer | null,
 *             askPage: (detail: { error: unknown, waitUntil: (promise: Promise<unknown>) => void }) => void,
 *             open: (id: string) => Promise<void>, newConversation: () => void, continueInNew: () => void }} RecoveryHost
 */

export class Recovery {
  #host;

  /** @param {RecoveryHost} host */
  constructor(host) {
    this.#host = host;
    /** The page was asked for fresh credentials for the failing turn already (reset when a turn ends well). */
    this.authAsked = false;
  }

  /**
   * Shows `error` with the ways forward that fit it; `retry` runs the failed operation again (or null).
   * @param {any} error
   * @param {(() => void) | null} retry
   */
  show(error, retry) {
    const host = this.#host;
    const t = host.t();
    const id = host.controller()?.getState().conversation?.id ?? null;
    const ways = waysForward(error, { canRetry: retry !== null, conversationId: id });
    if (ways === 'ask-credentials') { this.askForCredentials(error, /** @type {() => void} */ (retry)); return; }
    /** @type {Record<string, () => void>} */
    const run = {
      continueInNew: () => host.continueInNew(),
      reload: () => { if (id) void this.reloadKeepingInput(id); },
      newConversation: () => host.newConversation(),
      retry: () => retry?.(),
    };
    host.notices.showError(error, ways.map((way) => ({ label: t(way.action), primary: way.primary, part: way.part, onClick: run[way.action] })));
  }

  /**
   * The relay refused the page's credentials. The page hears it once per failing turn and may answer by
   * refreshing them: `event.detail.waitUntil(promise)`, called while the event is dispatched. The turn then runs
   * again once that promise settles well; without an answer (or when it fails, or the retried turn is refused
   * again) the person reads that they are signed out, with Retry.
   * @param {any} error
   * @param {() => void} retry
   */
  askForCredentials(error, retry) {
    const host = this.#host;
    const t = host.t();
    /** @type {Promise<unknown>[]} */
    const waits = [];
    if (!this.authAsked) {
      this.authAsked = true;
      host.askPage({ error, waitUntil: (/** @type {Promise<unknown>} */ promise) => { waits.push(Promise.resolve(promise)); } });
    }
    const signedOut = () => host.notices.showError(error, [{
      label: t('retry'), primary: true, part: 'retry-button', onClick: () => { this.authAsked = false; retry(); },
    }]);
    if (!waits.length) { signedOut(); return; }
    host.notices.shownError = error;
    host.notices.show('plain', t('signingIn'), 'auth');
    const controller = host.controller();
    const current = () => host.controller() === controller && controller?.getState().error === error;
    Promise.all(waits).then(() => { if (current()) retry(); }, () => { if (current()) signedOut(); });
  }

  /**
   * "Reload conversation" after a conflict: the stored conversation replaces this tab's unsaved turn, and the
   * message the person sent in that turn goes back into the box (text and images), so nothing they typed is lost.
   * @param {string} id
   */
  async reloadKeepingInput(id) {
    const host = this.#host;
    const messages = host.controller()?.getState().messages ?? [];
    const mine = [...messages].reverse().find((m) => m.role === 'user');
    await host.open(id);
    const composer = host.composer();
    if (!mine || !composer) return;
    // Nothing to put back when the message made it into the stored conversation after all.
    if ((host.controller()?.getState().messages ?? []).some((m) => m.id === mine.id)) return;
    composer.restore(textOf(mine), mine.blocks.filter((b) => b.type === 'image' || b.type === 'document'));
  }
}
