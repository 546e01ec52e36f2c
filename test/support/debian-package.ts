import { execFileSync } from 'node:child_process';

/**
 * Installs Debian's `name` package for a test's real part (redis-server, Chromium, haproxy), as
 * root, outside any test's time limit (the suite's global setup calls it), so `npm ci && npm test`
 * passes on a fresh machine. `needs`: what the tests need it for, in the error without root.
 */
export function installDebianPackage(name: string, needs: string): void {
  if (process.getuid?.() !== 0) {
    throw new Error(
      `${needs} need ${name} and cannot install it without root. Run: sudo apt-get install -y ${name}`,
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    execFileSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', name], {
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
}
