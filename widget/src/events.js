// The names of the events <patchbridge-agent> dispatches (bubbling, composed). A module of its own, free of the
// DOM, so that the element and the server-side entry (index.js, where no HTMLElement exists) export one list.

/** The events the element dispatches (bubbling, composed). */
export const EVENTS = Object.freeze({
  ready: 'patchbridge-ready',
  outcome: 'patchbridge-outcome',
  error: 'patchbridge-error',
  confirmation: 'patchbridge-confirmation',
  conversation: 'patchbridge-conversation',
  unauthorized: 'patchbridge-unauthorized',
  feedback: 'patchbridge-feedback',
  viewError: 'patchbridge-view-error',
});
