/**
 * Searches captured log text for API keys. A key is found when it appears verbatim (every key the
 * suite sent is recorded), when anything shaped like a sandbox key appears, or when a Bearer
 * credential appears unredacted.
 */
const KEY_SHAPES = [/mw_sandbox_[A-Za-z0-9_-]+/g, /Bearer\s+(?!\[redacted\])[^\s"'\\]+/gi];

export interface KeyLeak {
  file: string;
  line: number;
  match: string;
}

export function findKeyLeaks(files: { name: string; text: string }[], keys: Iterable<string>): KeyLeak[] {
  const known = [...new Set(keys)].filter((key) => key.length >= 8);
  const leaks: KeyLeak[] = [];
  for (const { name, text } of files) {
    text.split('\n').forEach((line, index) => {
      const hits = [
        ...known.filter((key) => line.includes(key)),
        ...KEY_SHAPES.flatMap((shape) => [...line.matchAll(shape)].map((m) => m[0])),
      ];
      for (const match of new Set(hits)) leaks.push({ file: name, line: index + 1, match });
    });
  }
  return leaks;
}
