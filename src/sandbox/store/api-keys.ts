import { createHash } from 'node:crypto';
import { conflict, notFound } from '../errors.ts';
import type { ApiKeyRecord } from './records.ts';

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/**
 * API keys, as the spec's Authentication section describes them: stored only as SHA-256 hashes (the
 * value is shown once, at creation), revocation permanent, and unknown and revoked keys
 * indistinguishable to the caller.
 */
export class ApiKeys {
  private readonly byId = new Map<string, ApiKeyRecord>();
  private readonly byHash = new Map<string, ApiKeyRecord>();

  add(record: ApiKeyRecord, key: string): void {
    const hash = hashApiKey(key);
    if (this.byHash.has(hash)) throw conflict('api_key_exists', 'An API key with that value already exists.');
    this.byId.set(record.id, record);
    this.byHash.set(hash, record);
  }

  /** Revoking twice is harmless: the first revocation's time stays. */
  revoke(id: string, at: string): ApiKeyRecord {
    const record = this.byId.get(id);
    if (!record) throw notFound();
    record.revokedAt ??= at;
    return record;
  }

  /** The live key record for a presented key, or null for unknown and revoked keys alike. */
  authenticate(key: string): ApiKeyRecord | null {
    const record = this.byHash.get(hashApiKey(key));
    if (!record || record.revokedAt !== null) return null;
    return record;
  }
}
