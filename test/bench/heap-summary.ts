/**
 * Sums a V8 heap snapshot (`--heapsnapshot-signal`, or `npm run bench -- --many-merchants
 * --node-options=--heapsnapshot-signal=SIGUSR2` and `kill -USR2` the gateway) by constructor:
 * objects and self size of each, largest first. Two snapshots side by side (e.g. at 2,000 and at
 * 20,000 keys) say what grows with the keys.
 *
 *   node test/bench/heap-summary.ts A.heapsnapshot [B.heapsnapshot] [--top 40]
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '40' } },
});

async function summary(file: string): Promise<Map<string, { count: number; bytes: number }>> {
  const snapshot = JSON.parse(await readFile(file, 'utf8')) as Snapshot;
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const byName = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const type = types[snapshot.nodes[i + typeAt] as number] ?? '?';
    const raw = snapshot.strings[snapshot.nodes[i + nameAt] as number] ?? '?';
    // Strings and code are summed by kind; objects by constructor.
    const name = type === 'object' || type === 'closure' ? `${type} ${raw}` : `(${type})`;
    const entry = byName.get(name) ?? { count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += snapshot.nodes[i + sizeAt] as number;
    byName.set(name, entry);
  }
  return byName;
}

const [first, second] = await Promise.all(positionals.map(summary));
if (!first) throw new Error('usage: heap-summary.ts A.heapsnapshot [B.heapsnapshot]');
const total = (s: Map<string, { bytes: number }>) => [...s.values()].reduce((sum, e) => sum + e.bytes, 0);
const mb = (bytes: number) => (bytes / 1e6).toFixed(1).padStart(7);
console.log(`total ${mb(total(first))} MB${second ? ` → ${mb(total(second))} MB` : ''}`);
const rows = [...new Set([...first.keys(), ...(second?.keys() ?? [])])].map((name) => ({
  name,
  a: first.get(name) ?? { count: 0, bytes: 0 },
  b: second?.get(name),
}));
rows.sort((x, y) => (y.b ? y.b.bytes - y.a.bytes : y.a.bytes) - (x.b ? x.b.bytes - x.a.bytes : x.a.bytes));
for (const { name, a, b } of rows.slice(0, Number(values.top)))
  console.log(
    `${mb(a.bytes)} MB ${String(a.count).padStart(9)}${b ? `  → ${mb(b.bytes)} MB ${String(b.count).padStart(9)}` : ''}  ${name}`,
  );
