// Which colour scheme the element uses: `light`, `dark`, `auto` (the system's `prefers-color-scheme`) or
// `inherit` (the host page's font and colours; dark when the inherited text colour is light).

/** Relative luminance (0..1) of a CSS `rgb()` colour; 0 when it cannot be read. @param {string | null | undefined} color */
export function luminance(color) {
  const m = /rgba?\(([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)/.exec(color ?? '');
  if (!m) return 0;
  const [r, g, b] = m.slice(1, 4).map((v) => {
    const c = Number(v) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/**
 * `'dark'` or `'light'` for the `theme` attribute's value on `host`.
 * @param {string} theme
 * @param {Element} host
 */
export function schemeOf(theme, host) {
  if (theme === 'dark') return 'dark';
  if (theme === 'light') return 'light';
  if (theme === 'inherit') return luminance(getComputedStyle(host).color) > 0.5 ? 'dark' : 'light';
  return globalThis.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}
