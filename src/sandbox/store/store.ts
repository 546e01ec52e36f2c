import { randomBytes } from 'node:crypto';
import { tronAddressFromBytes } from '../../shared/tron.ts';
import { dataInvalid, notFound } from '../errors.ts';
import type { Money } from '../money.ts';
import { ApiKeys } from './api-keys.ts';
import { IdempotencyLog } from './idempotency.ts';
import { lockWithdrawal, newAsset } from './ledger.ts';
import {
  applyDepositStatus,
  applyWithdrawalStatus,
  checkDepositTransition,
  checkWithdrawalTransition,
} from './lifecycle.ts';
import { OpenRecords } from './open-records.ts';
import {
  type ApiKeyRecord,
  type CreateWithdrawalInput,
  type DepositRecord,
  type DepositStatus,
  type KeyAccess,
  type Merchant,
  NETWORK_FEE_TRX,
  OPEN_WITHDRAWAL,
  type WalletRecord,
  type WithdrawalConfig,
  type WithdrawalRecord,
  type WithdrawalStatus,
} from './records.ts';
import { Timeline } from './timeline.ts';
import { checkWithdrawal } from './withdrawal-rules.ts';

export interface StoreOptions {
  /** The clock; tests move it to cross UTC day and month boundaries. */
  now?: () => Date;
  /** Source of randomness for ids, addresses and hashes; the seeded world passes a deterministic one. */
  random?: (size: number) => Uint8Array;
}

/**
 * The sandbox's state, free of HTTP: merchants, keys, wallets, deposits and intents, with their
 * per-merchant timelines. Money moves in ledger.ts, the withdrawal rules live in
 * withdrawal-rules.ts, status changes in lifecycle.ts, what the auto-advance looks at in
 * open-records.ts; this class finds the records and keeps the indexes: the index of every record,
 * with one find/insert/list method per resource, each a few lines.
 * Every mutation runs synchronously from check to commit, so on Node's single thread two requests
 * can never interleave inside one: that is what makes "check the balance, then lock it" atomic.
 */
export class SandboxStore {
  now: () => Date;
  random: (size: number) => Uint8Array;

  readonly merchants = new Map<string, Merchant>();
  readonly wallets = new Map<string, WalletRecord>();
  readonly deposits = new Map<string, DepositRecord>();
  readonly withdrawals = new Map<string, WithdrawalRecord>();
  private readonly apiKeys = new ApiKeys();
  private readonly walletsByAddress = new Map<string, WalletRecord>();
  private readonly walletTimelines = new Map<string, Timeline<WalletRecord>>();
  private readonly depositTimelines = new Map<string, Timeline<DepositRecord>>();
  private readonly withdrawalTimelines = new Map<string, Timeline<WithdrawalRecord>>();
  private readonly idempotency = new IdempotencyLog();
  /** The records still open, and the held intents: what the auto-advance looks at. */
  private readonly open = new OpenRecords();

  constructor(options: StoreOptions = {}) {
    this.now = options.now ?? (() => new Date());
    this.random = options.random ?? ((size) => randomBytes(size));
  }

  private timestamp(): string {
    return this.now().toISOString();
  }

  /** A version-4-shaped UUID from the store's randomness source. */
  newId(): string {
    const b = this.random(16);
    b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
    b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
    const hex = Buffer.from(b).toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  newTronAddress(): string {
    return tronAddressFromBytes(this.random(20));
  }

  private newTxHash(): string {
    return Buffer.from(this.random(32)).toString('hex');
  }

  // --- merchants and keys -------------------------------------------------------------------

  createMerchant(
    name: string,
    withdrawalConfig: WithdrawalConfig | null,
    createdAt = this.timestamp(),
  ): Merchant {
    const merchant: Merchant = { id: this.newId(), name, withdrawalConfig, createdAt };
    this.merchants.set(merchant.id, merchant);
    this.walletTimelines.set(merchant.id, new Timeline());
    this.depositTimelines.set(merchant.id, new Timeline());
    this.withdrawalTimelines.set(merchant.id, new Timeline());
    return merchant;
  }

  getMerchant(id: string): Merchant {
    const merchant = this.merchants.get(id);
    if (!merchant) throw notFound();
    return merchant;
  }

  /**
   * Issues an API key. The caller sees `key` once; the store keeps only its hash.
   * `fixedKey` exists for the seeded world's documented demo keys.
   */
  createApiKey(
    merchantId: string,
    name: string,
    access: KeyAccess,
    fixedKey?: string,
  ): { record: ApiKeyRecord; key: string } {
    this.getMerchant(merchantId);
    const key = fixedKey ?? `mw_sandbox_${Buffer.from(this.random(24)).toString('base64url')}`;
    const record: ApiKeyRecord = {
      id: this.newId(),
      merchantId,
      name,
      access,
      revokedAt: null,
      createdAt: this.timestamp(),
    };
    this.apiKeys.add(record, key);
    return { record, key };
  }

  /** Revocation is permanent, as the spec says. Revoking twice is harmless. */
  revokeApiKey(id: string): ApiKeyRecord {
    return this.apiKeys.revoke(id, this.timestamp());
  }

  /** The live key record for a presented key, or null for unknown and revoked keys alike. */
  authenticate(key: string): ApiKeyRecord | null {
    return this.apiKeys.authenticate(key);
  }

  // --- wallets ------------------------------------------------------------------------------

  createWallet(
    merchantId: string,
    balances: Record<string, Money>,
    createdAt = this.timestamp(),
  ): WalletRecord {
    this.getMerchant(merchantId);
    const wallet: WalletRecord = {
      id: this.newId(),
      merchantId,
      status: 'active',
      address: this.newTronAddress(),
      assets: new Map(),
      createdAt,
      updatedAt: createdAt,
    };
    for (const [currencyCode, available] of Object.entries(balances)) {
      wallet.assets.set(currencyCode, newAsset(currencyCode, available, createdAt));
    }
    this.wallets.set(wallet.id, wallet);
    this.walletsByAddress.set(wallet.address, wallet);
    this.timeline(this.walletTimelines, merchantId).insert(wallet);
    return wallet;
  }

  /** A merchant's wallet; another merchant's wallet is indistinguishable from a missing one. */
  getWallet(merchantId: string, id: string): WalletRecord {
    const wallet = this.wallets.get(id);
    if (!wallet || wallet.merchantId !== merchantId) throw notFound();
    return wallet;
  }

  listWallets(merchantId: string, page: number, size: number) {
    return this.timeline(this.walletTimelines, merchantId).page(page, size);
  }

  isPlatformAddress(address: string): boolean {
    return this.walletsByAddress.has(address);
  }

  // --- deposits -----------------------------------------------------------------------------

  createDeposit(
    walletId: string,
    input: {
      currencyCode: string;
      amount: Money;
      amountFee: Money;
      status: DepositStatus;
      fromAddress?: string;
      createdAt?: string;
    },
  ): DepositRecord {
    const wallet = this.wallets.get(walletId);
    if (!wallet) throw notFound();
    if (input.amountFee.gt(input.amount)) {
      throw dataInvalid(
        `amountFee must not exceed amount; received amount ${input.amount} and amountFee ${input.amountFee}`,
      );
    }
    const createdAt = input.createdAt ?? this.timestamp();
    const deposit: DepositRecord = {
      id: this.newId(),
      merchantId: wallet.merchantId,
      walletId,
      status: 'pending',
      currencyCode: input.currencyCode,
      amount: input.amount,
      amountFee: input.amountFee,
      amountNet: input.amount.minus(input.amountFee),
      transaction: {
        hash: this.newTxHash(),
        fromAddress: input.fromAddress ?? this.newTronAddress(),
        toAddress: wallet.address,
        networkFee: NETWORK_FEE_TRX,
      },
      finalizedAt: null,
      createdAt,
      updatedAt: createdAt,
    };
    this.deposits.set(deposit.id, deposit);
    this.open.depositOpened(deposit);
    this.timeline(this.depositTimelines, wallet.merchantId).insert(deposit);
    if (input.status !== 'pending') this.settleDeposit(deposit, input.status, createdAt);
    return deposit;
  }

  getDeposit(merchantId: string, id: string): DepositRecord {
    const deposit = this.deposits.get(id);
    if (!deposit || deposit.merchantId !== merchantId) throw notFound();
    return deposit;
  }

  listDeposits(merchantId: string, page: number, size: number, statuses?: ReadonlySet<string>) {
    return this.timeline(this.depositTimelines, merchantId).page(page, size, statuses && hasStatus(statuses));
  }

  transitionDeposit(id: string, status: DepositStatus, at = this.timestamp()): DepositRecord {
    const deposit = this.deposits.get(id);
    if (!deposit) throw notFound();
    checkDepositTransition(deposit, status);
    this.settleDeposit(deposit, status, at);
    return deposit;
  }

  private settleDeposit(deposit: DepositRecord, status: DepositStatus, at: string): void {
    const wallet = this.wallets.get(deposit.walletId);
    if (!wallet) throw new Error(`deposit ${deposit.id} references missing wallet ${deposit.walletId}`);
    applyDepositStatus(deposit, wallet, status, at);
    if (deposit.finalizedAt !== null) this.open.depositClosed(deposit.id);
  }

  // --- withdrawal intents -------------------------------------------------------------------

  /** One intent of the merchant (GET /withdrawal-intents/{id}); the first such read releases a hold. */
  getWithdrawal(merchantId: string, id: string): WithdrawalRecord {
    const intent = this.withdrawals.get(id);
    if (!intent || intent.merchantId !== merchantId) throw notFound();
    this.open.read(id, () => this.timestamp());
    return intent;
  }

  listWithdrawals(merchantId: string, page: number, size: number, statuses?: ReadonlySet<string>) {
    return this.timeline(this.withdrawalTimelines, merchantId).page(
      page,
      size,
      statuses && hasStatus(statuses),
    );
  }

  /**
   * Creates a withdrawal intent after the rules of withdrawal-rules.ts (in their documented order);
   * on success the gross amount moves from available to locked in the same synchronous step.
   */
  createWithdrawal(merchantId: string, input: CreateWithdrawalInput): WithdrawalRecord {
    const merchant = this.getMerchant(merchantId);
    const wallet = this.wallets.get(input.senderWalletId);
    const now = this.now();
    const checked = checkWithdrawal(input, {
      merchant,
      wallet: wallet?.merchantId === merchantId ? wallet : undefined,
      isPlatformAddress: (address) => this.isPlatformAddress(address),
      history: this.timeline(this.withdrawalTimelines, merchantId).items,
      now,
    });
    return this.insertWithdrawal(checked.wallet, {
      serviceFeeMode: input.serviceFeeMode,
      currencyCode: input.currencyCode,
      destinationAddress: checked.address,
      amount: input.amount,
      amountFee: checked.amountFee,
      amountNet: checked.amountNet,
      amountGross: checked.amountGross,
      createdAt: now.toISOString(),
    });
  }

  /**
   * Records an intent in status preparing and locks its gross amount. Checks nothing: callers
   * (createWithdrawal, and the seeded world building its history) have already applied the rules.
   */
  insertWithdrawal(
    wallet: WalletRecord,
    fields: Pick<
      WithdrawalRecord,
      | 'serviceFeeMode'
      | 'currencyCode'
      | 'destinationAddress'
      | 'amount'
      | 'amountFee'
      | 'amountNet'
      | 'amountGross'
      | 'createdAt'
    >,
  ): WithdrawalRecord {
    lockWithdrawal(wallet, fields.currencyCode, fields.amountGross, fields.createdAt);
    const intent: WithdrawalRecord = {
      id: this.newId(),
      merchantId: wallet.merchantId,
      walletId: wallet.id,
      status: 'preparing',
      transaction: null,
      submittedAt: fields.createdAt,
      finalizedAt: null,
      updatedAt: fields.createdAt,
      ...fields,
    };
    this.withdrawals.set(intent.id, intent);
    this.open.withdrawalOpened(intent);
    this.timeline(this.withdrawalTimelines, wallet.merchantId).insert(intent);
    return intent;
  }

  /** Moves an intent along its lifecycle (lifecycle.ts); final statuses settle its locked amount. */
  transitionWithdrawal(id: string, status: WithdrawalStatus, at = this.timestamp()): WithdrawalRecord {
    const intent = this.withdrawals.get(id);
    if (!intent) throw notFound();
    checkWithdrawalTransition(intent, status);
    const wallet = this.wallets.get(intent.walletId);
    if (!wallet) throw new Error(`withdrawal intent ${id} references a missing wallet`);
    applyWithdrawalStatus(intent, wallet, status, at, () => this.newTxHash());
    if (!OPEN_WITHDRAWAL.has(status)) this.open.withdrawalClosed(id);
    return intent;
  }

  // --- idempotency (the sandbox's Idempotency-Key extension; see idempotency.ts) -----------------

  replay(merchantId: string, key: string, fingerprint: string): { status: number; body: string } | null {
    return this.idempotency.replay(merchantId, key, fingerprint, this.now().getTime());
  }

  remember(merchantId: string, key: string, fingerprint: string, status: number, body: string): void {
    this.idempotency.remember(merchantId, key, fingerprint, status, body, this.now().getTime());
  }

  // --- inspection for auto-advance ----------------------------------------------------------

  /** Deposits still pending or processing, in the order recorded (a copy: safe to transition while iterating). */
  openDeposits(): DepositRecord[] {
    return this.open.openDeposits();
  }

  /** Intents still preparing, reviewing or pending, in the order recorded (a copy, as openDeposits). */
  openWithdrawals(): WithdrawalRecord[] {
    return this.open.openWithdrawals();
  }

  /** Holds an intent where it is until its first read by id (getWithdrawal): OpenRecords.hold. */
  holdUntilRead(id: string): void {
    if (!this.withdrawals.has(id)) throw notFound();
    this.open.hold(id);
  }

  /** For the auto-advance: undefined if `id` was never held, null while it is, else when its first read released it. */
  releasedAt(id: string): string | null | undefined {
    return this.open.releasedAt(id);
  }

  private timeline<T extends { id: string; createdAt: string }>(
    timelines: Map<string, Timeline<T>>,
    merchantId: string,
  ): Timeline<T> {
    const timeline = timelines.get(merchantId);
    if (!timeline) throw new Error(`no timeline for merchant ${merchantId}`);
    return timeline;
  }
}

/** The `statusIn` filter of a list. */
function hasStatus(statuses: ReadonlySet<string>) {
  return (record: { status: string }) => statuses.has(record.status);
}
