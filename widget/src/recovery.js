// The ways forward from a failed turn, load or save, shown in the notice bar: Retry; "Continue in a new
// conversation" for provider state the relay refuses; "Reload conversation" after a conflict, which puts the
// message this tab could not save back into the box; and on a 401, asking the page for fresh credentials
// (`patchbridge-unauthorized` with `waitUntil`) before the turn runs again by itself. The element supplies what
// these need; every decision about the turn itself stays with the controller.
import { isUnauthenticated } from './notice.js';

export class Recovery {
  /**
   * @param {{ t: () => Function, notices: any, controller: () => any, composer: () => any,
   *           askPage: (detail: any) => void, open: (id: string) => Promise<void>, newConversation: () => void,
   *           continueInNew: () => void }} host
   */
  constructor(host) {
    this.host = host;
    /** The page was asked for fresh credentials for the failing turn already (reset when a turn ends well). */
    this.authAsked = false;
  }

  /** Shows `error` with the ways forward that fit it; `retry` runs the failed operation again (or null). */
  show(error, retry) {
    const { host } = this;
    const t = host.t();
    const code = error?.code ?? 'ERROR';
    if (retry && isUnauthenticated(error)) { this.askForCredentials(error, retry); return; }
    const actions = [];
    if (error?.details?.relayCode === 'MODEL_STATE_MISMATCH') {
      actions.push({ label: t('continueInNew'), primary: true, onClick: () => host.continueInNew() });
    } else if (code === 'AGENT_REVISION_CONFLICT' || code === 'AGENT_CONVERSATION_CORRUPT') {
      const id = host.controller()?.getState().conversation?.id;
      if (id && code === 'AGENT_REVISION_CONFLICT') actions.push({ label: t('reload'), primary: true, part: 'reload-button', onClick: () => this.reloadKeepingInput(id) });
      actions.push({ label: t('newConversation'), onClick: () => host.newConversation() });
    } else if (retry) {
      actions.push({ label: t('retry'), primary: true, part: 'retry-button', onClick: retry });
    }
    host.notices.showError(error, actions);
  }

  /**
   * The relay refused the page's credentials. The page hears it once per failing turn and may answer by
   * refreshing them: `event.detail.waitUntil(promise)`, called while the event is dispatched. The turn then runs
   * again once that promise settles well; without an answer (or when it fails, or the retried turn is refused
   * again) the person reads that they are signed out, with Retry.
   */
  askForCredentials(error, retry) {
    const { host } = this;
    const t = host.t();
    const waits = [];
    if (!this.authAsked) {
      this.authAsked = true;
      host.askPage({ error, waitUntil: (promise) => { waits.push(Promise.resolve(promise)); } });
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
   */
  async reloadKeepingInput(id) {
    const { host } = this;
    const messages = host.controller()?.getState().messages ?? [];
    const mine = [...messages].reverse().find((m) => m.role === 'user');
    await host.open(id);
    const composer = host.composer();
    if (!mine || !composer) return;
    // Nothing to put back when the message made it into the stored conversation after all.
    if ((host.controller()?.getState().messages ?? []).some((m) => m.id === mine.id)) return;
    const text = mine.blocks.filter((b) => b.type === 'text').map((b) => b.text).join('\n');
    composer.restore(text, mine.blocks.filter((b) => b.type === 'image'));
  }
}
