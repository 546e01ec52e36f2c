import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/**
 * Headless Chromium for the browser tests: Debian's `chromium` package driven by playwright-core
 * (never playwright's own download, which needs hosts these machines cannot reach). The suite's
 * global setup installs the package when it is missing, as it does redis-server.
 */
const CHROMIUM = '/usr/bin/chromium';

export function ensureChromium(): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0) {
    throw new Error(
      'The browser tests need Chromium and cannot install it without root. Run: sudo apt-get install -y chromium',
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    execFileSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'chromium'], {
      stdio: 'ignore',
      env,
    });
  try {
    install();
  } catch {
    // A fresh machine may not have the package lists yet.
    execFileSync('apt-get', ['update', '-q'], { stdio: 'ignore', env });
    install();
  }
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
