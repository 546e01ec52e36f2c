import { sha256 } from '@noble/hashes/sha2.js';
import { createBase58check } from '@scure/base';

const base58check = createBase58check(sha256);

/**
 * A Tron mainnet address: base58check (double SHA-256 checksum) over 21 bytes whose first byte is
 * 0x41. Checked before a withdrawal reaches the REST API, so a typo never costs a round trip.
 */
export function isTronAddress(value: string): boolean {
  if (value.length !== 34 || value[0] !== 'T') return false;
  try {
    const bytes = base58check.decode(value);
    return bytes.length === 21 && bytes[0] === 0x41;
  } catch {
    return false;
  }
}
