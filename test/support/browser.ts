import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/** Debian's chromium (scripts/install-chromium.mjs installs it, looking in the same places), or undefined. */
export const chromiumPath: string | undefined = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((path) => existsSync(path));

export const SKIP_REASON = 'no headless Chromium: run `node scripts/install-chromium.mjs` as root (apt-get install chromium)';

/** Where the test runs leave a screenshot of each page (git-ignored). */
export const SCREENSHOTS = join(import.meta.dirname, '..', 'browser', 'screenshots');

export async function launchChromium(): Promise<Browser> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return puppeteer.launch({
    executablePath: chromiumPath!,
    headless: true,
    // As root (CI containers) Chromium refuses its sandbox; /dev/shm is small in containers.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run'],
  });
}

/** Collects what the page reports as broken: script errors and Content-Security-Policy refusals. */
export function watchForErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text())) {
      errors.push(message.text());
    }
  });
  return errors;
}
