// Page entry: React itself (react + react-dom/client rendering one element), the floor every React-based chat
// UI adds to its own weight. Shown as its own row so the React rows can be read with or without it.
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';

export function mount(element) {
  createRoot(element).render(createElement('p', null, 'hello'));
}
