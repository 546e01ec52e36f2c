import { serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';

let gw: TestGateway;
let key: string;

beforeAll(async () => {
  gw = await startTestGateway();
  key = (await gw.sandbox.world.merchant()).key;
});
afterAll(() => gw.close());

describe('GraphQL over HTTP (graphql-http server audits)', () => {
  const audits = serverAudits({
    url: 'http://gateway.test/graphql',
    fetchFn: (input: RequestInfo | URL, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      headers.set('authorization', `Bearer ${key}`);
      // As a client sends it: the Bearer key alone, GETs included (no CSRF header needed with a key).
      return gw.gateway.fetch(String(input), { ...init, headers });
    },
  });
  for (const audit of audits) {
    it(`${audit.name}`, async () => {
      // Every audit passes, MAYs included.
      const result = await audit.fn();
      expect(result, result.status !== 'ok' ? result.reason : '').toMatchObject({ status: 'ok' });
    });
  }
});
