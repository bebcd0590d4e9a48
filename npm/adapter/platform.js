// The platform pieces the runtime takes from the page: an AbortController per execution and fresh ids.

/** A fresh AbortController (one per execution, mirrored from the core's signal). */
export function newAbortController() {
  return new AbortController();
}

let idCounter = 0;
/** A fresh id for executions and unnamed messages: crypto.randomUUID where available (secure contexts). */
export function newId() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === 'function') return c.randomUUID();
  idCounter += 1;
  return `${Date.now().toString(36)}-${idCounter.toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}
