import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The release before this one, as CHANGELOG.md names it: the upgrade test runs its code beside
 * this checkout's on one Redis. Move it forward with every release (test/unit/changelog.test.ts
 * checks it is the CHANGELOG's second entry).
 */
export const PREVIOUS_RELEASE = {
  version: '0.2.0',
  commit: '3d7bbf54d150c8839477e756d6da5343bb1b971a',
} as const;

const ROOT = new URL('../..', import.meta.url).pathname;

const git = (...args: string[]) =>
  execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8', timeout: 30_000 });

/**
 * A directory holding the previous release's files (`git archive` of its commit, as a worktree
 * would) and its dependencies, made once and kept in the system's temporary directory (not under
 * node_modules, where Node does not run TypeScript files). When its lockfile is
 * this checkout's (but for the version), it shares this checkout's node_modules; otherwise it gets its own (`npm ci`).
 * The commit must be in this clone's history: a shallow clone is told to fetch it.
 */
export function previousReleaseCheckout(): string {
  const { commit } = PREVIOUS_RELEASE;
  const dir = join(tmpdir(), 'merchant-wallet-gateway-releases', commit);
  if (existsSync(join(dir, 'package.json'))) return dir;
  try {
    git('cat-file', '-e', `${commit}^{commit}`);
  } catch {
    throw new Error(
      `The upgrade test runs the previous release (${PREVIOUS_RELEASE.version}, commit ${commit}), which this clone does not have. Fetch the history: git fetch --unshallow (or git fetch origin ${commit})`,
    );
  }
  const staging = `${dir}.partial`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  execFileSync('sh', ['-c', `git -C "${ROOT}" archive "${commit}" | tar -x -C "${staging}"`], {
    timeout: 60_000,
  });
  // The same dependencies: the lockfiles equal but for the release's own version.
  const dependencies = (at: string) => {
    const lock = JSON.parse(readFileSync(join(at, 'package-lock.json'), 'utf8'));
    delete lock.version;
    delete lock.packages[''].version;
    return JSON.stringify(lock);
  };
  if (dependencies(staging) === dependencies(ROOT)) {
    symlinkSync(join(ROOT, 'node_modules'), join(staging, 'node_modules'), 'dir');
  } else {
    // Bounded: a registry that stops answering fails the upgrade test instead of hanging the run.
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], {
      cwd: staging,
      stdio: 'ignore',
      timeout: 180_000,
    });
  }
  renameSync(staging, dir);
  return dir;
}
