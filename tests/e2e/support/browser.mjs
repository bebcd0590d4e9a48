// Headless Chromium (Debian's /usr/bin/chromium, or $CHROMIUM_PATH) driven by playwright-core, and a page that
// records console errors and uncaught exceptions so a test can assert the demo ran cleanly.

import { chromium } from 'playwright-core';

/** Headless Chromium; `extraArgs` are added to its command line (e.g. `--enable-features=…`). */
export async function launchChromium(extraArgs = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', ...extraArgs],
  });
}

/** A fresh page (own context) whose console errors and page errors land in `page.problems`. */
export async function newPage(browser) {
  const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
  const page = await context.newPage();
  page.problems = [];
  // "Failed to load resource" console lines do not name the URL; the response listener below does.
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) page.problems.push(`console: ${msg.text()}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) page.problems.push(`http ${response.status()} ${response.request().method()} ${response.url()}`);
  });
  page.on('requestfailed', (request) => page.problems.push(`request failed: ${request.method()} ${request.url()} (${request.failure()?.errorText})`));
  page.on('pageerror', (err) => page.problems.push(`pageerror: ${err.message}`));
  return page;
}

/**
 * `page.waitForFunction` with a 10 s default, whose timeout error also lists the page's console errors and
 * uncaught exceptions (the usual reason a demo page never reaches a state).
 */
export async function waitInPage(page, fn, arg, ms = 10_000) {
  try {
    return await page.waitForFunction(fn, arg, { timeout: ms });
  } catch (error) {
    const problems = page.problems.length ? page.problems.join('\n') : '(no console errors)';
    throw new Error(`${error.message}\nwaiting for: ${String(fn).slice(0, 200)}\npage problems:\n${problems}`);
  }
}

/** Types a message into the demo's composer and sends it. */
export async function sendFromPage(page, text) {
  await page.fill('#input', text);
  await page.click('#send');
}
