import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';

/**
 * The project's Dockerfile, built and run without a Docker daemon: buildah (`--isolation chroot`,
 * the vfs storage driver) builds it as root, and `buildah run` starts the image on the host's
 * network. Docker Hub cannot be reached from these machines, so when `node:24-slim` is neither in
 * buildah's storage nor pullable, a stand-in is made under its name from Debian's packages
 * (mmdebstrap) and the project's own Node 24 binary; it is kept in storage and reused.
 */

const ROOT = new URL('../..', import.meta.url).pathname;
/** Every buildah call names the driver: without it buildah uses overlay and sees none of these images. */
const STORAGE = ['--storage-driver', 'vfs'];
export const BASE_IMAGE = 'docker.io/library/node:24-slim';
/** Containers this module makes are named `${PREFIX}<pid>-<n>`, so leftovers can be found. */
const PREFIX = 'merchant-wallet-gateway-test-';
/** Set on the stand-in: the recipe, the Node and npm in it and the CA bundle; another value rebuilds. */
const STAND_IN_LABEL = 'io.merchant-wallet.node-stand-in';
/** Bumped when the recipe below changes, so a cached stand-in is made again. */
const STAND_IN_RECIPE = '1';
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
const MMDEBSTRAP_MERGED_USR = '/usr/share/mmdebstrap/hooks/merged-usr';

// ---------------------------------------------------------------------------------------------
// The tools

function installed(command: string): boolean {
  try {
    execFileSync(command, ['--version'], { stdio: 'ignore', timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

/**
 * buildah and mmdebstrap, from Debian's packages (`apt-get install -y buildah mmdebstrap`, as
 * root, after one `apt-get update`). Called by the suite's global setup, outside any test's time
 * limit, as redis-server and Chromium are; without root it fails with the command to run.
 */
export function ensureContainerTools(): void {
  const missing = ['buildah', 'mmdebstrap'].filter((tool) => !installed(tool));
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `The container test needs ${missing.join(' and ')} and cannot install them without root. Run: sudo apt-get install -y buildah mmdebstrap`,
    );
  }
  const options = {
    stdio: 'ignore',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    timeout: 600_000,
  } as const;
  execFileSync('apt-get', ['update', '-q'], options);
  execFileSync('apt-get', ['install', '-y', '-q', 'buildah', 'mmdebstrap'], options);
  const still = missing.filter((tool) => !installed(tool));
  if (still.length > 0) throw new Error(`apt-get installed ${still.join(', ')}, but it does not run`);
}

// ---------------------------------------------------------------------------------------------
// Running commands, each with a bound

export interface CommandResult {
  code: number | null;
  output: string;
}

/**
 * Runs `command args`, resolving with its exit code and output (stdout and stderr interleaved).
 * Past `timeoutMs` the whole process group is killed and the promise rejects.
 */
function runCommand(
  command: string,
  args: string[],
  options: { timeoutMs: number; cwd?: string },
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own group, so a timeout ends what it started too (mmdebstrap's apt, buildah's children).
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      killGroup(child);
      reject(
        new Error(`${command} ${args.join(' ')}: no result after ${options.timeoutMs} ms:\n${tail(output)}`),
      );
    }, options.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {}
}

function tail(text: string, lines = 40): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Runs a command that must succeed; returns its output. */
async function must(command: string, args: string[], timeoutMs: number, cwd?: string): Promise<string> {
  const result = await runCommand(command, args, { timeoutMs, ...(cwd && { cwd }) });
  if (result.code !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited with ${result.code}:\n${tail(result.output)}`);
  }
  return result.output;
}

const buildah = (args: string[], timeoutMs = 60_000, cwd?: string) =>
  must('buildah', [...STORAGE, ...args], timeoutMs, cwd);

// ---------------------------------------------------------------------------------------------
// Images

interface ImageJSON {
  Manifest: string;
  OCIv1: { config?: { Labels?: Record<string, string> } };
  Docker: {
    config?: {
      User?: string;
      Cmd?: string[];
      Env?: string[];
      WorkingDir?: string;
      Healthcheck?: { Test?: string[] };
    };
  };
}

export interface ImageInfo {
  id: string;
  /** The image's config as Docker reads it (User, Cmd, Env, Healthcheck). */
  config: NonNullable<ImageJSON['Docker']['config']>;
  labels: Record<string, string>;
  /** Every layer as stored (uncompressed), bottom first. */
  layers: { digest: string; size: number }[];
  /** The sum of the layers: what the image takes unpacked. */
  sizeBytes: number;
}

/** The image called `name` in buildah's storage, or null when there is none. */
export async function inspectImage(name: string): Promise<ImageInfo | null> {
  const result = await runCommand('buildah', [...STORAGE, 'inspect', '--type', 'image', name], {
    timeoutMs: 60_000,
  });
  if (result.code !== 0) return null;
  const json = JSON.parse(result.output) as ImageJSON;
  const manifest = JSON.parse(json.Manifest) as { config: { digest: string }; layers: ImageInfo['layers'] };
  const layers = manifest.layers.map(({ digest, size }) => ({ digest, size }));
  return {
    id: manifest.config.digest.replace(/^sha256:/, ''),
    config: json.Docker.config ?? {},
    labels: json.OCIv1.config?.Labels ?? {},
    layers,
    sizeBytes: layers.reduce((sum, layer) => sum + layer.size, 0),
  };
}

/** Node 24 from the project's own `node` devDependency: the real binary, never a shim or a link. */
function projectNodeBinary(): { path: string; version: string } {
  const linked = join(ROOT, 'node_modules/node/bin/node');
  if (!existsSync(linked)) throw new Error(`${linked} is missing: run npm ci`);
  const path = realpathSync(linked);
  const head = Buffer.alloc(4);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, head, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  if (!head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]))) {
    throw new Error(`${linked} resolves to ${path}, which is not an ELF binary (a shim?)`);
  }
  const version = execFileSync(path, ['--version'], { encoding: 'utf8', timeout: 30_000 }).trim();
  if (!version.startsWith('v24.')) throw new Error(`${path} is Node ${version}, expected 24`);
  return { path, version: version.slice(1) };
}

/** The machine's npm package folder (the npm on PATH, links followed). */
function machineNpm(): { dir: string; version: string } {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'npm');
    if (!existsSync(candidate)) continue;
    // .../npm/bin/npm-cli.js: the package is two folders up.
    const root = dirname(dirname(realpathSync(candidate)));
    try {
      const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'npm' && pkg.version) return { dir: root, version: pkg.version };
    } catch {}
  }
  throw new Error('no npm package found through PATH');
}

export interface BaseImageResult {
  /** How the base image was had this time. */
  source: 'reused' | 'pulled' | 'stand-in';
  ms: number;
  /** mmdebstrap alone, when a stand-in was made. */
  mmdebstrapMs?: number;
  image: ImageInfo;
}

/**
 * `node:24-slim` in buildah's storage: the one already there (a real one, or a stand-in made by
 * the same recipe from the same Node, npm and CA bundle), else a pulled one, else a stand-in made
 * now: a Debian minbase (mmdebstrap, with the dpkg exclusions of Debian's -slim images), the
 * project's Node 24 in /usr/local/bin, the machine's npm in /usr/local/lib/node_modules/npm, a
 * `node` user (uid and gid 1000, home /home/node) as in the official image, and the machine's CA
 * bundle with npm told to use it (npm inside a build reaches the registry through a TLS proxy
 * whose CA is in that bundle).
 */
export async function ensureBaseImage(): Promise<BaseImageResult> {
  const started = performance.now();
  const node = projectNodeBinary();
  const npm = machineNpm();
  const bundle = existsSync(CA_BUNDLE) ? readFileSync(CA_BUNDLE) : Buffer.alloc(0);
  const key = createHash('sha256')
    .update(`${STAND_IN_RECIPE}\n${node.version}\n${npm.version}\n`)
    .update(bundle)
    .digest('hex')
    .slice(0, 16);
  const done = (source: BaseImageResult['source'], image: ImageInfo, mmdebstrapMs?: number) => ({
    source,
    ms: performance.now() - started,
    image,
    ...(mmdebstrapMs !== undefined && { mmdebstrapMs }),
  });

  const present = await inspectImage(BASE_IMAGE);
  const standInKey = present?.labels[STAND_IN_LABEL];
  // A stand-in from another recipe, Node, npm or CA bundle is made again; anything else is used.
  if (present && (standInKey === undefined || standInKey === key)) return done('reused', present);

  const pull = await runCommand('buildah', [...STORAGE, 'pull', BASE_IMAGE], { timeoutMs: 120_000 }).catch(
    (error: Error) => ({ code: null, output: error.message }),
  );
  if (pull.code === 0) {
    const pulled = await inspectImage(BASE_IMAGE);
    if (pulled) return done('pulled', pulled);
  }

  const dir = mkdtempSync(join(tmpdir(), 'gateway-base-image-'));
  const name = `${PREFIX}base-${process.pid}`;
  try {
    const rootfs = join(dir, 'rootfs.tar');
    const mmdebstrapStarted = performance.now();
    await debianMinbase(rootfs, dir);
    const mmdebstrapMs = performance.now() - mmdebstrapStarted;
    await buildah(['from', '--name', name, 'scratch']);
    await buildah(['add', name, rootfs, '/'], 120_000);
    await buildah(['copy', name, node.path, '/usr/local/bin/node']);
    await buildah(['copy', name, npm.dir, '/usr/local/lib/node_modules/npm'], 120_000);
    if (bundle.length > 0) await buildah(['copy', name, CA_BUNDLE, CA_BUNDLE]);
    const npmrc = join(dir, 'npmrc');
    writeFileSync(npmrc, `cafile=${CA_BUNDLE}\n`);
    await buildah(['copy', name, npmrc, '/usr/local/etc/npmrc']);
    await buildah([
      'run',
      '--isolation',
      'chroot',
      name,
      '--',
      'sh',
      '-ec',
      [
        'ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm',
        'ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx',
        'groupadd --gid 1000 node',
        'useradd --uid 1000 --gid node --shell /bin/bash --create-home node',
        'node --version',
        'npm --version',
      ].join('\n'),
    ]);
    await buildah([
      'config',
      '--env',
      'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '--env',
      `NODE_VERSION=${node.version}`,
      '--cmd',
      'node',
      '--label',
      `${STAND_IN_LABEL}=${key}`,
      name,
    ]);
    await buildah(['commit', '--rm', name, BASE_IMAGE], 180_000);
    const made = await inspectImage(BASE_IMAGE);
    if (!made) throw new Error(`buildah committed ${BASE_IMAGE}, but it is not in storage`);
    // The stand-in it replaces, if any, is no longer named; its layers go unless something uses them.
    if (present) await runCommand('buildah', [...STORAGE, 'rmi', present.id], { timeoutMs: 60_000 });
    return done('stand-in', made, mmdebstrapMs);
  } finally {
    await runCommand('buildah', [...STORAGE, 'rm', name], { timeoutMs: 60_000 }).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A bookworm minbase with ca-certificates as a tarball. Like Debian's own -slim images it leaves
 * out manuals, translations and documentation (copyrights kept), and it has /usr merged by
 * mmdebstrap's hook rather than by the usrmerge package (which would bring in Perl). First from
 * Debian's mirror as mmdebstrap knows it; failing that, through the machine's own apt sources
 * and suite.
 */
async function debianMinbase(out: string, dir: string): Promise<void> {
  const options = [
    '--variant=minbase',
    '--include=ca-certificates',
    ...(existsSync(MMDEBSTRAP_MERGED_USR) ? [`--hook-dir=${MMDEBSTRAP_MERGED_USR}`] : []),
    // The runtime provides /dev.
    '--skip=output/dev',
    ...[
      'path-exclude=/usr/share/man/*',
      'path-exclude=/usr/share/info/*',
      'path-exclude=/usr/share/locale/*',
      'path-include=/usr/share/locale/locale.alias',
      'path-exclude=/usr/share/doc/*',
      'path-include=/usr/share/doc/*/copyright',
    ].map((option) => `--dpkgopt=${option}`),
  ];
  const first = await runCommand('mmdebstrap', [...options, 'bookworm', out], { timeoutMs: 300_000 });
  if (first.code === 0) return;
  const machine = machineDebianSources();
  if (!machine) throw new Error(`mmdebstrap bookworm failed:\n${tail(first.output)}`);
  const sources = join(dir, 'sources.list');
  writeFileSync(sources, `${machine.lines.join('\n')}\n`);
  const second = await runCommand('mmdebstrap', [...options, machine.suite, out, sources], {
    timeoutMs: 300_000,
  });
  if (second.code !== 0) {
    throw new Error(
      `mmdebstrap failed with Debian's mirror:\n${tail(first.output, 15)}\nand with this machine's sources (${machine.suite}):\n${tail(second.output)}`,
    );
  }
}

/** This machine's Debian apt sources (one-line form) and its release's codename. */
function machineDebianSources(): { suite: string; lines: string[] } | null {
  const release = existsSync('/etc/os-release') ? readFileSync('/etc/os-release', 'utf8') : '';
  const suite = /^VERSION_CODENAME=(\S+)$/m.exec(release)?.[1];
  if (!suite) return null;
  const files = ['/etc/apt/sources.list'];
  const listDir = '/etc/apt/sources.list.d';
  if (existsSync(listDir)) {
    files.push(
      ...readdirSync(listDir)
        .filter((name) => name.endsWith('.list') || name.endsWith('.sources'))
        .map((name) => join(listDir, name)),
    );
  }
  const lines: string[] = [];
  for (const file of files.filter((f) => existsSync(f))) {
    const text = readFileSync(file, 'utf8');
    if (file.endsWith('.sources')) {
      for (const stanza of text.split(/\n\s*\n/)) {
        const field = (name: string) =>
          new RegExp(`^${name}:\\s*(.+)$`, 'mi').exec(stanza)?.[1]?.trim().split(/\s+/) ?? [];
        if (!field('Types').includes('deb') || /^Enabled:\s*no/im.test(stanza)) continue;
        for (const uri of field('URIs')) {
          for (const s of field('Suites')) lines.push(`deb ${uri} ${s} ${field('Components').join(' ')}`);
        }
      }
    } else {
      lines.push(
        ...text
          .split('\n')
          .map((line) => line.replace(/\[[^\]]*\]\s*/, '').trim())
          .filter((line) => line.startsWith('deb ')),
      );
    }
  }
  // Only Debian's own archive: another vendor's repository (signed by its own key) is of no use here.
  const debian = lines.filter((line) => /^deb \S+\/debian(-security)?\/? /.test(line));
  return debian.length > 0 ? { suite, lines: debian } : null;
}

export interface BuildResult {
  ms: number;
  image: ImageInfo;
  output: string;
}

/**
 * Builds the repository's Dockerfile as it is (no pull: the base comes from storage), in Docker's
 * image format so that its HEALTHCHECK is kept (the OCI format has no place for it). The image
 * this replaces under `tag` is removed when nothing else uses it.
 */
export async function buildImage(tag: string): Promise<BuildResult> {
  const started = performance.now();
  const previous = await inspectImage(tag);
  const output = await buildah(
    ['bud', '--isolation', 'chroot', '--pull=never', '--format', 'docker', '-t', tag, '.'],
    420_000,
    ROOT,
  );
  const image = await inspectImage(tag);
  if (!image) throw new Error(`buildah bud tagged ${tag}, but it is not in storage:\n${tail(output)}`);
  if (previous && previous.id !== image.id) {
    await runCommand('buildah', [...STORAGE, 'rmi', previous.id], { timeoutMs: 60_000 });
  }
  return { ms: performance.now() - started, image, output };
}

// ---------------------------------------------------------------------------------------------
// Containers

let containers = 0;

/**
 * Removes containers left by earlier runs of these tests whose process is gone (a run killed
 * before its clean-up); those of a run still going are left alone.
 */
export async function removeStaleContainers(): Promise<string[]> {
  const list = await buildah(['containers', '--format', '{{.ContainerName}}']);
  const stale = list
    .split('\n')
    .map((line) => line.trim())
    .filter((name) => name.startsWith(PREFIX))
    .filter((name) => {
      const pid = Number(/-(\d+)(?:-\d+)?$/.exec(name)?.[1]);
      if (!pid) return true;
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    });
  for (const name of stale) await buildah(['rm', name]);
  return stale;
}

export interface RunningContainer {
  name: string;
  /** The main process (the image's CMD) as the host sees it. */
  pid: number;
  /** What the main process printed so far. */
  output(): string;
  /** Resolves with `buildah run`'s exit code, which is the main process's. */
  exited: Promise<number | null>;
  /** Runs another command in the same container (as `docker exec` would). */
  exec(command: string[], env?: Record<string, string>, timeoutMs?: number): Promise<CommandResult>;
  /** Ends the main process if it still runs (SIGKILL), then removes the container. */
  remove(): Promise<void>;
}

/**
 * Starts `image`'s CMD in a new container (`buildah from` + `buildah run --isolation chroot`, on
 * the host's network) with `env` added to the image's, and waits, at most `readyMs`, until its
 * output matches `ready`. The container is removed if it does not get there.
 */
export async function runContainer(
  image: string,
  env: Record<string, string>,
  ready: RegExp,
  readyMs = 60_000,
): Promise<RunningContainer> {
  const info = await inspectImage(image);
  if (!info) throw new Error(`${image} is not in buildah's storage`);
  const command = [...(info.config.Cmd ?? [])];
  if (command.length === 0) throw new Error(`${image} has no CMD`);
  const name = `${PREFIX}${process.pid}-${++containers}`;
  await buildah(['from', '--pull=never', '--name', name, image], 120_000);
  const envArgs = (vars: Record<string, string>) =>
    Object.entries(vars).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
  const child = spawn(
    'buildah',
    [
      ...STORAGE,
      'run',
      '--isolation',
      'chroot',
      '--network',
      'host',
      ...envArgs(env),
      name,
      '--',
      ...command,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const remove = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const pid = mainProcess(child.pid);
      if (pid) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
      const gone = await Promise.race([exited.then(() => true), delay(10_000).then(() => false)]);
      if (!gone) child.kill('SIGKILL');
      await Promise.race([exited, delay(5_000)]);
    }
    await buildah(['rm', name]);
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${image} did not print ${ready} within ${readyMs} ms:\n${tail(output)}`)),
        readyMs,
      );
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (ready.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`${image} exited with ${code} before it was ready:\n${tail(output)}`));
      });
    });
    const pid = mainProcess(child.pid);
    if (!pid) throw new Error(`no process ${command[0]} under buildah run (pid ${child.pid})`);
    return {
      name,
      pid,
      output: () => output,
      exited,
      exec: (cmd, extra = {}, timeoutMs = 30_000) =>
        runCommand(
          'buildah',
          [
            ...STORAGE,
            'run',
            '--isolation',
            'chroot',
            '--network',
            'host',
            ...envArgs(extra),
            name,
            '--',
            ...cmd,
          ],
          { timeoutMs },
        ),
      remove,
    };
  } catch (error) {
    await remove().catch(() => {});
    throw error;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * The container's main process: under `buildah run` come buildah-chroot-runtime and
 * buildah-chroot-exec (both buildah itself), then the image's command. Found by walking /proc
 * from `buildah run`'s pid to the first descendant that is not buildah.
 */
function mainProcess(buildahPid: number | undefined): number | null {
  if (buildahPid === undefined) return null;
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The name may hold spaces and parentheses; the fields after the last ')' do not.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), pid]);
    } catch {}
  }
  const queue = [...(children.get(buildahPid) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    let argv0 = '';
    try {
      argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    } catch {
      continue;
    }
    if (!basename(argv0).startsWith('buildah')) return pid;
    queue.push(...(children.get(pid) ?? []));
  }
  return null;
}

/** A process's real, effective, saved and filesystem uids (and gids), from /proc/PID/status. */
export function processIds(pid: number): { uids: number[]; gids: number[] } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const ids = (field: string) =>
    (new RegExp(`^${field}:\\s+(.+)$`, 'm').exec(status)?.[1] ?? '').split(/\s+/).map(Number);
  return { uids: ids('Uid'), gids: ids('Gid') };
}

/** The user name `uid` has inside the process's own root (its /etc/passwd, not the host's). */
export function userNameInRoot(pid: number, uid: number): string | null {
  const passwd = readFileSync(`/proc/${pid}/root/etc/passwd`, 'utf8');
  const line = passwd.split('\n').find((l) => l.split(':')[2] === String(uid));
  return line?.split(':')[0] ?? null;
}
