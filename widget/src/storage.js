// The conversation a page had open, remembered per page in localStorage (key from `storage-key`, the element's
// id and `endpoint`) so a reload restores it. Storage may be disabled or full: every call degrades to "nothing
// remembered" rather than failing.

/** @param {HTMLElement} el */
function keyOf(el) {
  return `patchbridge-agent:${el.getAttribute('storage-key') ?? el.id ?? ''}:${el.getAttribute('endpoint') ?? ''}`;
}

/** The remembered conversation id of `el`, or null. @param {HTMLElement} el */
export function storedConversation(el) {
  try { return globalThis.localStorage?.getItem(keyOf(el)) ?? null; } catch { return null; }
}

/**
 * @param {HTMLElement} el
 * @param {string} id
 */
export function rememberConversation(el, id) {
  try { globalThis.localStorage?.setItem(keyOf(el), id); } catch { /* storage may be disabled */ }
}

/** @param {HTMLElement} el */
export function forgetConversation(el) {
  try { globalThis.localStorage?.removeItem(keyOf(el)); } catch { /* ignore */ }
}
