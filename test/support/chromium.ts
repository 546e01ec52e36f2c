import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { installDebianPackage } from './debian-package.ts';

/**
 * Headless Chromium for the browser tests: Debian's `chromium` package driven by playwright-core
 * (never playwright's own download, which needs hosts these machines cannot reach). The suite's
 * global setup installs the package when it is missing, as it does redis-server.
 */
const CHROMIUM = '/usr/bin/chromium';

export function ensureChromium(): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  installDebianPackage('chromium', 'The browser tests');
  if (!existsSync(CHROMIUM)) throw new Error(`apt-get installed chromium, but ${CHROMIUM} is missing`);
  return CHROMIUM;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: ensureChromium(),
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
