import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, type RedisClient } from '../../src/redis/connection.ts';
import { RECORD_FORMAT } from '../../src/withdrawals/record-format.ts';
import {
  type Answer,
  exactlyOnceHarness,
  historyMerchant,
  type Op,
  opArbitrary,
} from '../support/exactly-once.ts';
import { type GatewayProcess, startGatewayProcess } from '../support/fleet-process.ts';
import { PREVIOUS_RELEASE, previousReleaseCheckout } from '../support/previous-release.ts';
import { type RunningRedis, startRedis } from '../support/redis.ts';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.ts';
import { type Result, subscribeSSE } from '../support/subscriptions.ts';
import { recordSuiteKey } from '../support/suite-logs.ts';

/**
 * A rolling deploy's middle: a replica of the previous release (CHANGELOG.md, PREVIOUS_RELEASE,
 * its commit's files run as they were released) beside one of this checkout, sharing one real
 * Redis, in front of a REST API that does not deduplicate. A keyed withdrawal retried on the other
 * release, whichever way, must keep I1–I5 (test/support/exactly-once.ts): after an unknown outcome,
 * with two keys making the same payout, with replays of stored outcomes, and in generated
 * histories (UPGRADE_RUNS, default 6; UPGRADE_SEED; `npm run test:property` runs 60 on a fresh seed). A record of a format this release does not
 * know is refused unsent.
 */

const RUNS = Number(process.env.UPGRADE_RUNS ?? 6);
const SEED =
  process.env.UPGRADE_SEED === 'random' ? Date.now() : Number(process.env.UPGRADE_SEED ?? 20261126);
/**
 * How long the gateways wait for the REST API's headers, and for a whole request. Every request is
 * held to these, so they leave a busy machine room for an ordinary one to succeed; each lost
 * answer makes the test wait LATE_COMMIT_MS, so no longer than that.
 */
const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_DEADLINE_MS = 3_000;
/**
 * When the `late` fault answers: past the request's deadline, so the gateway has surely stopped
 * waiting for it, whenever undici's coarse timer notices the headers timeout.
 */
const LATE_ANSWER_MS = REQUEST_DEADLINE_MS + 500;
/**
 * Longer than a request may wait (REQUEST_DEADLINE_MS): a POST whose answer is lost leaves its
 * key pending (OUTCOME_UNKNOWN, WINDOW_OPEN) instead of being reconciled within the same request,
 * so the retry on the other release meets the pending record the first one wrote.
 */
const LATE_COMMIT_MS = REQUEST_DEADLINE_MS + 500;

let redis: RunningRedis;
let inspect: RedisClient;
let sandbox: TestSandbox;
let previous: GatewayProcess;
let current: GatewayProcess;
let merchant: { id: string; keys: { k1: string; k2: string; readOnly: string } };
let harness: ReturnType<typeof exactlyOnceHarness>;
let run = 0;

beforeAll(async () => {
  // The previous release's files (and, if its lockfile differs, its own npm ci): once per machine.
  const checkout = previousReleaseCheckout();
  redis = await startRedis();
  inspect = await connectRedis(redis.url, pino({ level: 'silent' }));
  sandbox = await startTestSandbox();
  sandbox.sandbox.idempotencyExtension = false;
  const env = {
    REDIS_URL: redis.url,
    UPSTREAM_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    WITHDRAWAL_LATE_COMMIT_MS: String(LATE_COMMIT_MS),
    REQUEST_DEADLINE_MS: String(REQUEST_DEADLINE_MS),
    // At most a quarter of the deadline (config.ts). The previous release bounds a command with a
    // plain timer, so a stalled event loop counts against it: the most the rule allows.
    REDIS_TIMEOUT_MS: String(REQUEST_DEADLINE_MS / 4),
    // So the rate limiter's records are among those the format pins (kept for the hour).
    RATE_LIMIT_PER_KEY: '100000/h',
    // Subscriptions poll often, so a status change reaches them within the test.
    SUBSCRIPTION_POLL_MS: '50',
    SUBSCRIPTION_POLL_MAX_MS: '200',
    UPSTREAM_CACHE_TTL_MS: '0',
  };
  [previous, current] = await Promise.all([
    startGatewayProcess(sandbox.url, env, checkout),
    startGatewayProcess(sandbox.url, env),
  ]);
  merchant = await historyMerchant(sandbox);
  harness = exactlyOnceHarness({
    sandbox,
    keys: merchant.keys,
    // A: the previous release; B: this one.
    processes: { A: previous.remote, B: current.remote },
    headersTimeoutMs: HEADERS_TIMEOUT_MS,
    lateCommitMs: LATE_COMMIT_MS,
    lateAnswerMs: LATE_ANSWER_MS,
  });
}, 240_000);
afterAll(async () => {
  console.info(
    `upgrade histories, answers seen: ${JSON.stringify(Object.fromEntries(harness?.tally ?? []))}`,
  );
  previous?.stop(`gateway ${PREVIOUS_RELEASE.version} (upgrade)`);
  current?.stop('gateway this release (upgrade)');
  inspect?.disconnect();
  await sandbox?.close();
  await redis?.close();
});

const RELEASES = [
  { first: 'A', second: 'B', name: `${PREVIOUS_RELEASE.version} first, this release then` },
  { first: 'B', second: 'A', name: `this release first, ${PREVIOUS_RELEASE.version} then` },
] as const;

/** A wallet of its own for one scenario, and the answers of `ops` run one after the other. */
async function scenario(ops: readonly (Op & { note?: string })[]) {
  run++;
  const wallet = await sandbox.world.wallet(merchant.id, { USDT: '100000', TRX: '10' });
  await sandbox.admin('DELETE', '/faults');
  const answers: Answer[] = [];
  const direct = new Set<string>();
  for (const op of ops) {
    const answer = await harness.perform(op, wallet.id, run, op.fault, direct);
    if (answer) answers.push(answer);
    // Past the window of a POST whose answer was lost: the next attempt reconciles it.
    if (answer?.code === 'OUTCOME_UNKNOWN')
      await new Promise((resolve) => setTimeout(resolve, LATE_COMMIT_MS + 50));
  }
  return { answers, problems: harness.violations(answers, direct, wallet.id), walletId: wallet.id };
}

const op = (
  via: 'A' | 'B',
  idempotencyKey: 'p1' | 'p2',
  fault: Op['fault'] = 'none',
  amount: Op['amount'] = '1.00',
): Op => ({
  via,
  as: 'k1',
  idempotencyKey,
  amount,
  fault,
  startAfterMs: 0,
});

describe(`upgrade: ${PREVIOUS_RELEASE.version} beside this release on one Redis`, () => {
  it.each(RELEASES)(
    'an answer lost on one release is not sent again by the other ($name)',
    async ({ first, second }) => {
      const { answers, problems } = await scenario([
        op(first, 'p1', 'late'),
        op(second, 'p1'),
        op(first, 'p1'),
      ]);
      expect(problems, problems.join('\n')).toEqual([]);
      expect(answers[0]).toMatchObject({ kind: 'error', code: 'OUTCOME_UNKNOWN' });
      // The retries find the intent the lost POST made, on either release: one intent, answered twice.
      expect(answers.slice(1).map((a) => a.kind)).toEqual(['success', 'success']);
      const posted = sandbox.sandbox.requests.filter(
        (r) => r.method === 'POST' && r.requestId === answers[0]?.requestId,
      );
      expect(answers[1]?.intentId).toBe(posted[0]?.createdId);
    },
  );

  it.each(RELEASES)(
    'two keys making the same payout, one per release, get an intent each ($name)',
    async ({ first, second }) => {
      const { answers, problems } = await scenario([
        op(first, 'p1', 'late'),
        op(second, 'p2'),
        op(first, 'p1'),
        op(second, 'p1'),
        op(first, 'p2'),
      ]);
      expect(problems, problems.join('\n')).toEqual([]);
      const [lost, other, ...retries] = answers;
      expect(lost).toMatchObject({ kind: 'error', code: 'OUTCOME_UNKNOWN' });
      expect(other?.kind).toBe('success');
      expect(retries.every((a) => a.kind === 'success')).toBe(true);
      // The second key was not handed the first key's intent, and its own payout was made.
      expect(
        new Set(answers.filter((a) => a.kind === 'success').map((a) => `${a.owner}:${a.intentId}`)).size,
      ).toBe(2);
      expect(other?.intentId).not.toBe(retries[0]?.intentId);
    },
  );

  it.each(RELEASES)(
    'a stored success and a stored refusal are replayed by the other release ($name)',
    async ({ first, second }) => {
      // More than the wallet holds: a business refusal, kept for the key.
      const tooMuch = '1000000.00' as Op['amount'];
      const { answers, problems } = await scenario([
        op(first, 'p1'),
        op(second, 'p1'),
        op(first, 'p2', 'none', tooMuch),
        op(second, 'p2', 'none', tooMuch),
      ]);
      expect(problems, problems.join('\n')).toEqual([]);
      expect(answers.map((a) => a.kind)).toEqual(['success', 'success', 'refused', 'refused']);
      expect(answers[1]?.intentId).toBe(answers[0]?.intentId);
      expect(answers[3]?.code).toBe(answers[2]?.code);
      // The refusal was replayed, not asked again: one POST for p2.
      const p2 = new Set([answers[2]?.requestId, answers[3]?.requestId]);
      expect(sandbox.sandbox.requests.filter((r) => r.method === 'POST' && p2.has(r.requestId)).length).toBe(
        1,
      );
      // The same key with another input is refused on either release, whichever wrote it.
      const reused = await scenario([op(first, 'p1'), op(second, 'p1', 'none', '2.00')]);
      expect(reused.answers.map((a) => a.code ?? a.kind)).toEqual(['success', 'idempotency_key_reused']);
    },
  );

  it.each(RELEASES)(
    'subscriptions on both releases follow one feed to its end, whichever polls it ($name)',
    async ({ first, second }) => {
      // A merchant of its own: its list feed sees only this test's withdrawal.
      const m = await sandbox.world.merchant();
      recordSuiteKey(m.key);
      const wallet = await sandbox.world.wallet(m.id, { USDT: '1000', TRX: '10' });
      const processes = { A: previous, B: current };
      const made = await processes[first].withdraw(m.key, wallet.id, { idempotencyKey: `sub-${first}` });
      const intentId = made.intentId as string;
      expect(intentId).toBeDefined();
      const status = 'subscription Watch($id: ID!) { withdrawalIntentUpdated(id: $id) { restId status } }';
      const list = 'subscription List { withdrawalIntentsUpdated(status: [COMPLETED]) { restId status } }';
      // The first release's subscriber polls each feed (it holds the feed's lease in Redis); the
      // second's is handed what the first publishes there, in the first release's format.
      const streams = [];
      for (const via of [first, second] as const) {
        const watch = await subscribeSSE(processes[via].remote, status, { id: intentId }, m.key);
        expect((await watch.next())?.data.withdrawalIntentUpdated.status).toBe('PREPARING');
        streams.push(watch, await subscribeSSE(processes[via].remote, list, {}, m.key));
      }
      for (const next of ['reviewing', 'pending', 'completed'])
        await sandbox.world.transitionWithdrawal(intentId, next);
      const [firstStatus, firstList, secondStatus, secondList] = streams;
      for (const watch of [firstStatus, secondStatus]) {
        const rest = (await watch?.rest()) ?? [];
        expect(rest.at(-1)?.data.withdrawalIntentUpdated).toEqual({ restId: intentId, status: 'COMPLETED' });
      }
      for (const watch of [firstList, secondList]) {
        const completed: Result | undefined = await watch?.next();
        expect(completed?.data.withdrawalIntentsUpdated).toEqual({ restId: intentId, status: 'COMPLETED' });
        watch?.close();
      }
    },
  );

  // A history takes up to about 10 s on a busy machine (its ops, the late-commit wait, the retries):
  // twice that per run, so a slow machine still runs them all rather than being cut short.
  it('generated histories through both releases keep I1–I5', {
    timeout: RUNS * 20_000 + 60_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArbitrary, { minLength: 2, maxLength: 6 }), async (history) => {
        run++;
        const wallet = await sandbox.world.wallet(merchant.id, { USDT: '100000', TRX: '10' });
        const problems = await harness.runHistory(history, run, wallet.id);
        expect(problems, problems.join('\n')).toEqual([]);
      }),
      { numRuns: RUNS, seed: SEED, verbose: 1, interruptAfterTimeLimit: RUNS * 20_000 },
    );
    // Both releases answered, and retries crossed between them.
    expect(harness.tally.get('success:') ?? 0).toBeGreaterThan(RUNS);
  });

  it('a record of a format this release does not know is refused unsent', async () => {
    const { answers, walletId } = await scenario([op('B', 'p1')]);
    expect(answers[0]?.kind).toBe('success');
    const [name] = await inspect.keys(`mwg:{*}:idem:p1-h${run}`);
    expect(name).toBeDefined();
    const record = JSON.parse((await inspect.get(name as string)) as string);
    expect(record.v).toBe(RECORD_FORMAT);
    await inspect.set(name as string, JSON.stringify({ ...record, v: RECORD_FORMAT + 1 }), 'KEEPTTL');
    const before = sandbox.sandbox.requests.filter((r) => r.method === 'POST').length;
    const retry = await harness.perform(op('B', 'p1'), walletId, run, 'none', new Set());
    expect(retry).toMatchObject({
      kind: 'error',
      code: 'IDEMPOTENCY_UNAVAILABLE',
      sent: false,
      reason: 'RECORD_FORMAT_UNKNOWN',
    });
    expect(sandbox.sandbox.requests.filter((r) => r.method === 'POST').length).toBe(before);
    // A newer release's record is not this release's format: it leaves with its test.
    await inspect.del(name as string);
  });

  it('a refusal kept with a code a release does not know: this release replays it as WithdrawalRefusedError, never an internal error; the previous release predates that (staged: docs/upgrading.md)', async () => {
    const amount = '1000000.00' as Op['amount'];
    const { answers, walletId } = await scenario([op('B', 'p1', 'none', amount)]);
    expect(answers[0]).toMatchObject({ kind: 'refused', code: 'withdrawal_intent.balance_insufficient' });
    const [name] = await inspect.keys(`mwg:{*}:idem:p1-h${run}`);
    expect(name).toBeDefined();
    // As a newer release with a new user error type would keep it.
    const record = JSON.parse((await inspect.get(name as string)) as string);
    const newer = {
      ...record,
      code: 'withdrawal_intent.destination_blocked',
      message: 'The destination is blocked.',
    };
    await inspect.set(name as string, JSON.stringify(newer), 'KEEPTTL');
    const posts = () => sandbox.sandbox.requests.filter((r) => r.method === 'POST').length;
    const before = posts();
    const here = await harness.perform(op('B', 'p1', 'none', amount), walletId, run, 'none', new Set());
    expect(here).toMatchObject({ kind: 'refused', code: 'withdrawal_intent.destination_blocked' });
    const there = await harness.perform(op('A', 'p1', 'none', amount), walletId, run, 'none', new Set());
    // ${PREVIOUS_RELEASE.version} has no general member: its replay fails, and sends nothing either.
    expect(there).toMatchObject({ kind: 'error', code: 'INTERNAL_SERVER_ERROR' });
    expect(posts()).toBe(before);
    await inspect.del(name as string);
  });

  it('every record in Redis is one of format 1 (a change here is a new format: see docs/upgrading.md)', async () => {
    // What both releases wrote over the tests above, key by key: its name, its type, and for JSON
    // records the fields each state may hold. Renaming a key or adding a field a release must read
    // is a format change: stage it over two releases (docs/upgrading.md), then update this.
    const ATTEMPT = ['v?', 'id', 'owner', 'sentAt', 'endsBy', 'endedAt'];
    const RECORD: Record<string, string[]> = {
      pending: ['v?', 'state', 'fingerprint', 'startedAt', 'attempt?'],
      succeeded: ['v?', 'state', 'fingerprint', 'startedAt', 'intent'],
      refused: ['v?', 'state', 'fingerprint', 'startedAt', 'code', 'message', 'field?'],
    };
    const FORMAT_1: { name: RegExp; type: string; required: boolean }[] = [
      { name: /^mwg:caller-scope-secret$/, type: 'string', required: true },
      { name: /^mwg:registry-since$/, type: 'string', required: false },
      { name: /^mwg:\{[A-Za-z0-9_-]+\}:idem:[^:]+$/, type: 'string', required: true },
      { name: /^mwg:\{[A-Za-z0-9_-]+\}:lease:[^:]+$/, type: 'string', required: false },
      { name: /^mwg:\{[A-Za-z0-9_-]+\}:keys$/, type: 'zset', required: true },
      // The scope's refusals (0.3.0): a hint the previous release neither reads nor needs.
      { name: /^mwg:\{[A-Za-z0-9_-]+\}:refused$/, type: 'zset', required: true },
      { name: /^mwg:\{[A-Za-z0-9_-]+\}:attempts$/, type: 'hash', required: true },
      { name: /^mwg:intent:[0-9a-f-]{36}:owner$/, type: 'string', required: true },
      { name: /^mwg:rate:[A-Za-z0-9_-]+$/, type: 'string', required: true },
      { name: /^mwg:poll:.+$/, type: 'string', required: false },
      // Wallet index chunks (0.3.0): a copy of what replicas read from the REST API, which the
      // previous release neither reads nor needs (redis/wallet-index-chunks.ts).
      // Under the index owner's tag: a merchant's (`m.` and an HMAC) or a caller scope's.
      {
        name: /^mwg:\{(m\.)?[A-Za-z0-9_-]+\}:windex:(deposits|withdrawalIntents):(gen|\d+:\d+)$/,
        type: 'string',
        required: false,
      },
      // Which merchant each wallet is (0.3.0; redis/merchant-records.ts): HMAC tags only, which
      // the previous release neither reads nor needs.
      { name: /^mwg:mwallet:\{[A-Za-z0-9_-]+\}$/, type: 'string', required: false },
      { name: /^mwg:rate-merchant:(m\.)?[A-Za-z0-9_-]+$/, type: 'string', required: false },
    ];
    const fields = (value: Record<string, unknown>, allowed: string[]) => {
      const names = new Set(allowed.map((name) => name.replace('?', '')));
      const missing = allowed.filter((name) => !name.endsWith('?') && !(name in value));
      return [...Object.keys(value).filter((name) => !names.has(name)), ...missing.map((name) => `-${name}`)];
    };
    // Each kind of record, written by either release: a success, a refusal, and a pending key
    // whose POST's answer was lost (its attempt stays registered).
    await scenario([op('A', 'p1'), op('B', 'p2', 'late')]);
    await scenario([op('B', 'p1', 'none', '1000000.00' as Op['amount'])]);
    const problems: string[] = [];
    const seen = new Set<RegExp>();
    for (const name of await inspect.keys('*')) {
      const kind = FORMAT_1.find((entry) => entry.name.test(name));
      const type = await inspect.type(name);
      if (!kind || kind.type !== type) {
        problems.push(`${name} (${type}) is not a format 1 record`);
        continue;
      }
      seen.add(kind.name);
      if (name.includes(':idem:')) {
        const record = JSON.parse((await inspect.get(name)) as string);
        const odd = fields(record, RECORD[record.state] ?? []);
        if (record.attempt) odd.push(...fields(record.attempt, ATTEMPT).map((field) => `attempt.${field}`));
        if (odd.length || ![undefined, 1].includes(record.v)) problems.push(`${name}: ${odd} v=${record.v}`);
      }
      // A wallet's merchant: a tag (`m.` and an HMAC), never a wallet id or a key.
      if (name.startsWith('mwg:mwallet:')) {
        const tag = await inspect.get(name);
        if (!/^m\.[A-Za-z0-9_-]{43}$/.test(tag ?? '')) problems.push(`${name}: ${tag}`);
      }
      if (name.endsWith(':attempts')) {
        for (const json of await inspect.hvals(name)) {
          const odd = fields(JSON.parse(json), ATTEMPT);
          if (odd.length) problems.push(`${name}: ${odd}`);
        }
      }
    }
    for (const entry of FORMAT_1) {
      if (entry.required && !seen.has(entry.name)) problems.push(`no ${entry.name} was written`);
    }
    expect(problems).toEqual([]);
  });
});
