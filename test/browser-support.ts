// A real browser for tests: Debian's chromium (installed by .ci/run when
// missing), driven by playwright-core. Where no chromium is installed (a
// developer's machine), browser tests are skipped with that reason; CI always
// has one.
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** The browser binary: CHROMIUM_PATH, or a system chromium. */
export function chromiumPath(): string | undefined {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) return configured;
  return CANDIDATES.find((candidate) => existsSync(candidate));
}

/** Why browser tests cannot run here, or false when they can. */
export function browserMissing(): string | false {
  if (chromiumPath()) return false;
  const why = 'no chromium on this machine (apt-get install chromium, or set CHROMIUM_PATH); .ci/run installs it';
  // CI installs one and sets this: there, a missing browser is a failure, never a silent skip.
  if (process.env.CA_REQUIRE_BROWSER === '1') throw new Error(why);
  return why;
}

export async function launchBrowser(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('no chromium');
  // --no-sandbox: CI runs as root, where Chromium's own sandbox refuses to start.
  return chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** What a page did that a test wants to see: console errors (CSP violations are reported there), failed requests, every request's URL. */
export interface PageWatch {
  consoleErrors: string[];
  cspViolations: string[];
  failedRequests: string[];
  /** Answers with an HTTP error status (4xx/5xx), as 'status url'. */
  errorAnswers: string[];
  requests: string[];
}

export function watchPage(page: Page): PageWatch {
  const watch: PageWatch = { consoleErrors: [], cspViolations: [], failedRequests: [], errorAnswers: [], requests: [] };
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const where = message.location().url;
    const text = where ? `${message.text()} (${where})` : message.text();
    watch.consoleErrors.push(text);
    if (/Content Security Policy/i.test(text)) watch.cspViolations.push(text);
  });
  page.on('pageerror', (error) => watch.consoleErrors.push(`uncaught: ${error.message}`));
  page.on('request', (request) => watch.requests.push(request.url()));
  page.on('requestfailed', (request) => watch.failedRequests.push(`${request.url()}: ${request.failure()?.errorText ?? 'failed'}`));
  page.on('response', (response) => {
    if (response.status() >= 400) watch.errorAnswers.push(`${response.status()} ${response.url()}`);
  });
  return watch;
}
