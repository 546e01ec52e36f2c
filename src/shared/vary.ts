/**
 * Adds `names` to the answer's Vary header, keeping what is there: another plugin's `Origin`, or
 * `*`, which already covers everything. Names are compared case-insensitively and not repeated.
 */
export function addVary(headers: Headers, ...names: string[]): void {
  const current = headers.get('vary');
  const listed = (current ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (listed.includes('*')) return;
  const seen = new Set(listed.map((name) => name.toLowerCase()));
  const added = names.filter((name) => !seen.has(name.toLowerCase()));
  if (added.length > 0) headers.set('vary', [...listed, ...added].join(', '));
}
