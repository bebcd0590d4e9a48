// The engine-neutral driver the Firefox and WebKit journeys use: one small interface (open a page or a second tab
// sharing its storage, evaluate, wait for a condition, click, type, press a key on an element or on whatever has
// focus, pick a file, resize, reload) over two real automation protocols, so the same journey file runs unchanged in both
// engines.
//
// - Firefox: Debian's `firefox-esr`, launched by `puppeteer-core` over WebDriver BiDi (headless). Playwright
//   cannot drive a stock Firefox (it needs its own patched build), and no browser is ever downloaded.
// - WebKit: Debian's `webkit2gtk-driver` (`WebKitWebDriver`, WebDriver classic) starting WebKitGTK's MiniBrowser
//   with `--automation`, driven by `selenium-webdriver`. MiniBrowser runs in a real window under `xvfb-run`: with
//   its `--headless` flag the WebDriver new-session call hangs.
//
// Elements inside shadow roots are named by a path of CSS selectors joined with ` >>> `
// (`patchbridge-agent >>> [part~=send-button]`); each step enters the previous match's open shadow root. Clicks and
// keys go through each protocol's input actions (real pointer and key events), never `element.click()` in the page.
// Every browser, driver and Xvfb this module starts is ended when the test process exits, whatever happens.

import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import net from 'node:net';

import puppeteer from 'puppeteer-core';
import { Builder, Key } from 'selenium-webdriver';

export const FIREFOX = process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr';
export const WEBKIT_DRIVER = process.env.WEBKIT_DRIVER_PATH ?? '/usr/bin/WebKitWebDriver';
// Debian puts MiniBrowser (package libwebkit2gtk-4.1-0) under the multiarch library folder.
export const MINIBROWSER = process.env.MINIBROWSER_PATH ?? readdirSync('/usr/lib').filter((d) => d.endsWith('-linux-gnu'))
  .map((d) => `/usr/lib/${d}/webkit2gtk-4.1/MiniBrowser`).find((p) => existsSync(p)) ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
export const XVFB_RUN = '/usr/bin/xvfb-run';

/** The engines this run covers: `PB_ENGINES=firefox` (or `webkit`) narrows it; both by default. */
export function selectedEngines() {
  const all = ['firefox', 'webkit'];
  const wanted = (process.env.PB_ENGINES ?? all.join(',')).split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = wanted.filter((w) => !all.includes(w));
  if (unknown.length) throw new Error(`PB_ENGINES names unknown engines: ${unknown.join(', ')} (known: ${all.join(', ')})`);
  return wanted;
}

/** Why an engine cannot run here (a missing binary), or null. `./dev setup` installs all of them. */
export function missingFor(engine) {
  const needed = engine === 'firefox' ? [FIREFOX] : [WEBKIT_DRIVER, MINIBROWSER, XVFB_RUN];
  const missing = needed.filter((p) => !existsSync(p));
  return missing.length ? `missing ${missing.join(', ')} (run ./dev setup)` : null;
}

const cleanups = new Set();
process.on('exit', () => { for (const fn of cleanups) { try { fn(); } catch { /* already gone */ } } });

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves a ` >>> ` path in the page; runs inside the browser, so it must stay self-contained. */
function resolvePath(path) {
  let root = document;
  let el = null;
  for (const step of path.split(' >>> ')) {
    if (!root) return null;
    el = root.querySelector(step);
    if (!el) return null;
    root = el.shadowRoot;
  }
  return el;
}

/** Starts an engine: `{ name, openPage(url, { width, height }), close() }`. */
export async function launch(engine) {
  const missing = missingFor(engine);
  if (missing) throw new Error(`${engine}: ${missing}`);
  return engine === 'firefox' ? launchFirefox() : launchWebKit();
}

async function launchFirefox() {
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX,
    headless: true,
    // No update checks, telemetry or first-run pages: the tests must not depend on (or reach) any network.
    extraPrefsFirefox: { 'app.update.enabled': false, 'browser.shell.checkDefaultBrowser': false, 'datareporting.policy.dataSubmissionEnabled': false },
  });
  const pid = browser.process()?.pid;
  const kill = () => { if (pid) process.kill(pid, 'SIGKILL'); };
  cleanups.add(kill);
  /**
   * A tab of `context` at `url`; tabs of one context share storage (another tab of the same site). Closing the
   * first tab closes its context; closing a tab opened from it closes that tab only.
   */
  async function firefoxTab(context, url, { width = 1100, height = 760 } = {}, first = true) {
    const page = await context.newPage();
    await page.setViewport({ width, height });
    const problems = [];
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    page.on('console', (msg) => { if (msg.type() === 'error') problems.push(`console: ${msg.text()}`); });
    await page.goto(url);
    const element = async (path) => {
      const handle = await page.evaluateHandle(resolvePath, path);
      const el = handle.asElement();
      if (!el) throw new Error(`firefox: no element at ${path}`);
      return el;
    };
    return wrapPage({
      engine: 'firefox',
      evaluate: (fn, arg) => page.evaluate(fn, arg),
      goto: (u) => page.goto(u),
      reload: () => page.reload(),
      click: async (path) => (await element(path)).click(),
      type: async (path, text) => (await element(path)).type(text),
      press: async (path, key) => (await element(path)).press(key),
      upload: async (path, file) => (await element(path)).uploadFile(file),
      keys: async (combo) => {
        const [key, ...modifiers] = combo.split('+').reverse();
        for (const m of modifiers) await page.keyboard.down(m);
        await page.keyboard.press(key);
        for (const m of modifiers.reverse()) await page.keyboard.up(m);
      },
      resize: (size) => page.setViewport(size),
      openTab: (u, size) => firefoxTab(context, u, size, false),
      problems: () => problems.slice(),
      close: () => (first ? context.close() : page.close()),
    });
  }

  return {
    name: 'firefox',
    async openPage(url, size) {
      return firefoxTab(await browser.createBrowserContext(), url, size);
    },
    async close() {
      await browser.close();
      cleanups.delete(kill);
    },
  };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => { const { port } = server.address(); server.close(() => resolve(port)); });
  });
}

/** Waits until WebKitWebDriver answers `GET /status` (it takes a moment to bind). */
async function waitForDriver(url, child, output) {
  for (let i = 0; i < 300; i += 1) {
    if (child.exitCode !== null) throw new Error(`WebKitWebDriver exited with ${child.exitCode}\n${output()}`);
    try {
      const response = await fetch(`${url}/status`);
      if (response.ok) return;
    } catch { /* not listening yet */ }
    await sleep(100);
  }
  throw new Error(`WebKitWebDriver did not answer within 30 s\n${output()}`);
}

/**
 * Starts WebKitWebDriver under `xvfb-run -a` on a free port. Both the port (chosen before the driver binds it) and
 * `-a`'s display number (chosen before Xvfb takes it) can be taken by another program in between, so a start that
 * fails is tried again on a new port and display, up to three times.
 */
async function startWebKitDriver() {
  let lastError;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const port = await freePort();
    // The driver and the MiniBrowser it starts share the Xvfb display. detached: its own process group, so one kill
    // ends xvfb-run, Xvfb, the driver, MiniBrowser and WebKit's helper processes.
    const child = spawn(XVFB_RUN, ['-a', '-s', '-screen 0 1280x1024x24', WEBKIT_DRIVER, `--port=${port}`, '--host=127.0.0.1'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout.on('data', (d) => { log += d; });
    child.stderr.on('data', (d) => { log += d; });
    const kill = () => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } };
    cleanups.add(kill);
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitForDriver(url, child, () => log);
      return { url, kill };
    } catch (error) {
      lastError = error;
      kill();
      cleanups.delete(kill);
    }
  }
  throw lastError;
}

async function launchWebKit() {
  const { url, kill } = await startWebKitDriver();

  // One MiniBrowser per page: a WebDriver session is one browser window, and a fresh session gives each journey
  // an empty profile (no localStorage carried between pages, like Firefox's fresh browser context). A "tab" opened
  // from a page is another window of the same session, so it shares that page's storage.
  const sessions = new Set();
  return {
    name: 'webkit',
    async openPage(pageUrl, size) {
      const driver = await new Builder()
        .usingServer(url)
        .withCapabilities({
          browserName: 'MiniBrowser',
          'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] },
        })
        .build();
      sessions.add(driver);
      const session = { driver, current: await driver.getWindowHandle() };
      return webkitWindow(session, session.current, pageUrl, size, async () => { sessions.delete(driver); await driver.quit(); });
    },
    async close() {
      for (const driver of sessions) await driver.quit().catch(() => {});
      sessions.clear();
      kill();
      cleanups.delete(kill);
    },
  };
}

/** WebDriver key names of the keys the journeys press. */
const WEBDRIVER_KEYS = { Enter: Key.ENTER, Tab: Key.TAB, Escape: Key.ESCAPE, Shift: Key.SHIFT, Control: Key.CONTROL };

/**
 * One window of a WebKit session at `pageUrl`. Commands go to the session's current window, so each one first
 * switches to this window when the session has several (a second tab).
 */
async function webkitWindow(session, handle, pageUrl, { width = 1100, height = 760 } = {}, close) {
  const { driver } = session;
  const on = async () => {
    if (session.current !== handle) {
      await driver.switchTo().window(handle);
      session.current = handle;
    }
    return driver;
  };
  await (await on()).manage().window().setRect({ width, height });
  // WebDriver classic has no console or page-error events: a recorder installed after each navigation keeps
  // what the page reports from then on (errors during the first parse are not seen here; Firefox sees them).
  const record = async () => (await on()).executeScript(`
    if (!window.__pbProblems) {
      window.__pbProblems = [];
      addEventListener('error', (e) => window.__pbProblems.push('pageerror: ' + e.message));
      addEventListener('unhandledrejection', (e) => window.__pbProblems.push('pageerror: ' + (e.reason && e.reason.message || e.reason)));
      const original = console.error;
      console.error = (...args) => { window.__pbProblems.push('console: ' + args.join(' ')); original.apply(console, args); };
    }`);
  const problems = [];
  const collect = async () => {
    try { problems.push(...(await (await on()).executeScript('return (window.__pbProblems || []).splice(0)'))); } catch { /* page gone */ }
  };
  const element = async (path) => {
    const el = await (await on()).executeScript(`return (${resolvePath})(arguments[0])`, path);
    if (!el) throw new Error(`webkit: no element at ${path}`);
    return el;
  };
  await driver.get(pageUrl);
  await record();
  return wrapPage({
    engine: 'webkit',
    evaluate: async (fn, arg) => (await on()).executeScript(`return (${fn})(arguments[0])`, arg),
    goto: async (u) => { await collect(); await (await on()).get(u); await record(); },
    reload: async () => { await collect(); await (await on()).navigate().refresh(); await record(); },
    click: async (path) => (await element(path)).click(),
    type: async (path, text) => (await element(path)).sendKeys(text),
    press: async (path, key) => (await element(path)).sendKeys(WEBDRIVER_KEYS[key] ?? key),
    // WebDriver sets a file input's files by sending it the file's path.
    upload: async (path, file) => (await element(path)).sendKeys(file),
    keys: async (combo) => {
      const [key, ...modifiers] = combo.split('+').reverse().map((k) => WEBDRIVER_KEYS[k] ?? k);
      let actions = (await on()).actions();
      for (const m of modifiers) actions = actions.keyDown(m);
      actions = actions.keyDown(key).keyUp(key);
      for (const m of modifiers.reverse()) actions = actions.keyUp(m);
      await actions.perform();
    },
    resize: async (size) => (await on()).manage().window().setRect(size),
    // A second window, not a tab: MiniBrowser keeps a new tab in the background, where no animation frame runs, so
    // an element that draws on animation frames never paints there. Both windows share the session's storage.
    openTab: async (u, size) => {
      await on();
      await driver.switchTo().newWindow('window');
      session.current = await driver.getWindowHandle();
      const tab = session.current;
      return webkitWindow(session, tab, u, size, async () => { await driver.switchTo().window(tab); await driver.close(); session.current = null; });
    },
    problems: async () => { await collect(); return problems.slice(); },
    close,
  });
}

/**
 * The page interface the journeys use. `waitFor(fn, arg, what)` polls `fn(arg)` in the page until it returns a
 * truthy value (returned) or 30 s pass; the error names what was awaited, the last value and the page's problems.
 */
function wrapPage(raw) {
  return {
    engine: raw.engine,
    evaluate: raw.evaluate,
    goto: raw.goto,
    reload: raw.reload,
    click: raw.click,
    type: raw.type,
    press: raw.press,
    upload: raw.upload,
    keys: raw.keys,
    resize: raw.resize,
    openTab: raw.openTab,
    close: raw.close,
    problems: async () => raw.problems(),
    async waitFor(fn, arg, what = String(fn).slice(0, 160), ms = 30_000) {
      const deadline = Date.now() + ms;
      let last;
      let lastError;
      while (Date.now() < deadline) {
        try {
          last = await raw.evaluate(fn, arg);
          lastError = undefined;
          if (last) return last;
        } catch (error) {
          // A navigation in progress destroys the execution context; try again on the next round.
          lastError = error;
        }
        await sleep(100);
      }
      const problems = await raw.problems();
      throw new Error(`${raw.engine}: timed out after ${ms / 1000} s waiting for ${what}\nlast value: ${JSON.stringify(last)}`
        + `${lastError ? `\nlast error: ${lastError.message}` : ''}\npage problems:\n${problems.join('\n') || '(none)'}`);
    },
  };
}
