import { sha256 } from '@noble/hashes/sha2.js';
import { createBase58check } from '@scure/base';

/**
 * Tron addresses, shared by the gateway (checks a destination before any REST call) and the sandbox
 * (checks it again as the REST API would, and mints wallet addresses). Shared rather than written
 * twice: it is a format fact of the Tron network computed by a maintained library, not a rule of
 * either half that one could check against the other.
 */

const base58check = createBase58check(sha256);

/** Every Tron mainnet address is base58check over 21 bytes whose first byte is 0x41. */
const TRON_VERSION = 0x41;

export function isTronAddress(value: string): boolean {
  if (value.length !== 34 || value[0] !== 'T') return false;
  try {
    const bytes = base58check.decode(value);
    return bytes.length === 21 && bytes[0] === TRON_VERSION;
  } catch {
    return false;
  }
}

/** Encodes 20 account bytes as a Tron address. */
export function tronAddressFromBytes(accountBytes: Uint8Array): string {
  if (accountBytes.length !== 20)
    throw new RangeError(`expected 20 account bytes, received ${accountBytes.length}`);
  const payload = new Uint8Array(21);
  payload[0] = TRON_VERSION;
  payload.set(accountBytes, 1);
  return base58check.encode(payload);
}
