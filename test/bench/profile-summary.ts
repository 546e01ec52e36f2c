/**
 * Summarises V8 CPU profiles (`node --cpu-prof`, e.g. `npm run bench -- --many-merchants --profile
 * DIR`): self time by package or project file, then the functions with the most self time, each as
 * a share of the busy samples (idle left out, GC and the program's own native work kept).
 *
 *   node test/bench/profile-summary.ts DIR/*.cpuprofile [--top 40]
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '40' } },
});

/** A package's name, a project file's path, or V8's own bucket (GC, program, idle). */
function where(url: string, functionName: string): string {
  if (!url) return `(${functionName || 'native'})`;
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  if (url.startsWith('node:')) return url;
  const src = url.indexOf('/src/');
  return src >= 0 ? url.slice(src + 1) : url;
}

const self = new Map<string, number>();
const byWhere = new Map<string, number>();
let busy = 0;
let idle = 0;
for (const file of positionals) {
  const profile = JSON.parse(await readFile(file, 'utf8')) as Profile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  profile.samples.forEach((id, i) => {
    const node = nodes.get(id);
    const micros = profile.timeDeltas[i] ?? 0;
    if (!node) return;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') {
      idle += micros;
      return;
    }
    busy += micros;
    const place = where(url, functionName);
    byWhere.set(place, (byWhere.get(place) ?? 0) + micros);
    const name = `${functionName || '(anonymous)'} ${place}:${lineNumber + 1}`;
    self.set(name, (self.get(name) ?? 0) + micros);
  });
}

const share = (micros: number) => `${((100 * micros) / busy).toFixed(1).padStart(5)} %`;
const top = Number(values.top);
console.log(`busy ${(busy / 1e6).toFixed(1)} s, idle ${(idle / 1e6).toFixed(1)} s\n\nBy package or file:`);
for (const [place, micros] of [...byWhere].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${share(micros)}  ${place}`);
console.log('\nBy function (self time):');
for (const [name, micros] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${share(micros)}  ${name}`);
