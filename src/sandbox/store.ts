import { createHash, randomBytes } from 'node:crypto';
import { type ApiError, conflict, dataInvalid, notFound, withdrawalError } from './errors.ts';
import { formatAmount, Money, ZERO } from './money.ts';
import { isTronAddress, tronAddressFromBytes } from './tron.ts';

/**
 * The sandbox's state and money rules, free of HTTP. Every mutation runs synchronously from check
 * to commit, so on Node's single thread two requests can never interleave inside one: that is
 * what makes "check the balance, then lock it" atomic.
 */

export const DEPOSIT_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;
export const WITHDRAWAL_STATUSES = [
  'preparing',
  'reviewing',
  'pending',
  'completed',
  'failed',
  'cancelled',
] as const;
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number];
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];
export type ServiceFeeMode = 'inclusive' | 'exclusive';
export type KeyAccess = 'read_write' | 'read_only';

/** Tron mainnet's numeric chain id, as deposits report it. */
export const DEPOSIT_CHAIN_ID = '728126428';
/** The `<network>:<subnetwork>` form withdrawal intents report. */
export const WITHDRAWAL_CHAIN_ID = 'tron:mainnet';
/** The informational network fee, in TRX, recorded on transactions the sandbox makes. */
const NETWORK_FEE_TRX = new Money('1.1');

const DEPOSIT_TRANSITIONS: Record<DepositStatus, readonly DepositStatus[]> = {
  pending: ['processing', 'completed', 'failed'],
  processing: ['completed', 'failed'],
  completed: [],
  failed: [],
};

const WITHDRAWAL_TRANSITIONS: Record<WithdrawalStatus, readonly WithdrawalStatus[]> = {
  preparing: ['reviewing', 'cancelled'],
  reviewing: ['pending', 'failed', 'cancelled'],
  pending: ['completed', 'failed'],
  completed: [],
  failed: [],
  cancelled: [],
};

/** Statuses whose intents hold their gross amount locked in the wallet. */
const OPEN_WITHDRAWAL: ReadonlySet<WithdrawalStatus> = new Set(['preparing', 'reviewing', 'pending']);

export interface WithdrawalConfig {
  fee: Money;
  dailyLimit: Money;
  monthlyLimit: Money;
}

export interface Merchant {
  id: string;
  name: string;
  withdrawalConfig: WithdrawalConfig | null;
  createdAt: string;
}

export interface ApiKeyRecord {
  id: string;
  merchantId: string;
  name: string;
  access: KeyAccess;
  revokedAt: string | null;
  createdAt: string;
}

export interface AssetRecord {
  currencyCode: string;
  nickname: string;
  available: Money;
  locked: Money;
  createdAt: string;
  updatedAt: string;
}

export interface WalletRecord {
  id: string;
  merchantId: string;
  status: 'active';
  address: string;
  assets: Map<string, AssetRecord>;
  createdAt: string;
  updatedAt: string;
}

export interface ChainTransaction {
  hash: string;
  fromAddress: string;
  toAddress: string;
  networkFee: Money;
}

export interface DepositRecord {
  id: string;
  merchantId: string;
  walletId: string;
  status: DepositStatus;
  currencyCode: string;
  amount: Money;
  amountFee: Money;
  amountNet: Money;
  transaction: ChainTransaction;
  finalizedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface WithdrawalRecord {
  id: string;
  merchantId: string;
  walletId: string;
  status: WithdrawalStatus;
  serviceFeeMode: ServiceFeeMode;
  currencyCode: string;
  destinationAddress: string;
  amount: Money;
  amountFee: Money;
  amountNet: Money;
  amountGross: Money;
  transaction: ChainTransaction | null;
  submittedAt: string;
  finalizedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface CreateWithdrawalInput {
  senderWalletId: string;
  serviceFeeMode: ServiceFeeMode;
  currencyCode: 'USDT';
  amount: Money;
  destination: { type: 'crypto'; rail: 'tron'; identifier: string };
}

interface IdempotencyRecord {
  fingerprint: string;
  status: number;
  body: string;
  expiresAt: number;
}

export interface StoreOptions {
  /** The clock; tests move it to cross UTC day and month boundaries. */
  now?: () => Date;
  /** Source of randomness for ids, addresses and hashes; the seeded world passes a deterministic one. */
  random?: (size: number) => Uint8Array;
}

const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** A resource list kept in ascending (createdAt, id) order; read newest first. */
class Timeline<T extends { id: string; createdAt: string }> {
  readonly items: T[] = [];

  insert(item: T): void {
    const items = this.items;
    const last = items.at(-1);
    if (!last || compareAscending(last, item) <= 0) {
      items.push(item);
      return;
    }
    let low = 0;
    let high = items.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareAscending(items[mid] as T, item) <= 0) low = mid + 1;
      else high = mid;
    }
    items.splice(low, 0, item);
  }

  /** Newest-first items matching the filter, as one page, with the total count. */
  page(page: number, size: number, filter?: (item: T) => boolean): { items: T[]; totalCount: number } {
    const source = filter ? this.items.filter(filter) : this.items;
    const totalCount = source.length;
    const items: T[] = [];
    const start = (page - 1) * size;
    for (let i = start; i < start + size && i < totalCount; i++) {
      items.push(source[totalCount - 1 - i] as T);
    }
    return { items, totalCount };
  }
}

function compareAscending(
  a: { id: string; createdAt: string },
  b: { id: string; createdAt: string },
): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export class SandboxStore {
  now: () => Date;
  random: (size: number) => Uint8Array;

  readonly merchants = new Map<string, Merchant>();
  private readonly apiKeysById = new Map<string, ApiKeyRecord>();
  /** Keys are stored only as SHA-256 hashes: the sandbox cannot show a key again. */
  private readonly apiKeysByHash = new Map<string, ApiKeyRecord>();
  readonly wallets = new Map<string, WalletRecord>();
  private readonly walletsByAddress = new Map<string, WalletRecord>();
  readonly deposits = new Map<string, DepositRecord>();
  readonly withdrawals = new Map<string, WithdrawalRecord>();
  private readonly walletTimelines = new Map<string, Timeline<WalletRecord>>();
  private readonly depositTimelines = new Map<string, Timeline<DepositRecord>>();
  private readonly withdrawalTimelines = new Map<string, Timeline<WithdrawalRecord>>();
  private readonly idempotency = new Map<string, IdempotencyRecord>();

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
    const hash = hashApiKey(key);
    if (this.apiKeysByHash.has(hash))
      throw conflict('api_key_exists', 'An API key with that value already exists.');
    const record: ApiKeyRecord = {
      id: this.newId(),
      merchantId,
      name,
      access,
      revokedAt: null,
      createdAt: this.timestamp(),
    };
    this.apiKeysById.set(record.id, record);
    this.apiKeysByHash.set(hash, record);
    return { record, key };
  }

  /** Revocation is permanent, as the spec says. Revoking twice is harmless. */
  revokeApiKey(id: string): ApiKeyRecord {
    const record = this.apiKeysById.get(id);
    if (!record) throw notFound();
    record.revokedAt ??= this.timestamp();
    return record;
  }

  /** The live key record for a presented key, or null for unknown and revoked keys alike. */
  authenticate(key: string): ApiKeyRecord | null {
    const record = this.apiKeysByHash.get(hashApiKey(key));
    if (!record || record.revokedAt !== null) return null;
    return record;
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
    this.walletTimelines.get(merchantId)?.insert(wallet);
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
    return this.timeline(this.depositTimelines, merchantId).page(
      page,
      size,
      statuses && ((d) => statuses.has(d.status)),
    );
  }

  transitionDeposit(id: string, status: DepositStatus, at = this.timestamp()): DepositRecord {
    const deposit = this.deposits.get(id);
    if (!deposit) throw notFound();
    if (!DEPOSIT_TRANSITIONS[deposit.status].includes(status)) {
      throw illegalTransition('deposit', deposit.status, status, DEPOSIT_TRANSITIONS[deposit.status]);
    }
    this.settleDeposit(deposit, status, at);
    return deposit;
  }

  /** Moves a deposit to `status`; completion credits amountNet to the wallet's available balance. */
  private settleDeposit(deposit: DepositRecord, status: DepositStatus, at: string): void {
    deposit.status = status;
    deposit.updatedAt = at;
    if (status === 'completed' || status === 'failed') deposit.finalizedAt = at;
    if (status !== 'completed') return;
    const wallet = this.wallets.get(deposit.walletId);
    if (!wallet) throw new Error(`deposit ${deposit.id} references missing wallet ${deposit.walletId}`);
    let asset = wallet.assets.get(deposit.currencyCode);
    if (!asset) {
      asset = newAsset(deposit.currencyCode, ZERO, at);
      wallet.assets.set(deposit.currencyCode, asset);
    }
    asset.available = asset.available.plus(deposit.amountNet);
    touch(wallet, asset, at);
  }

  // --- withdrawal intents -------------------------------------------------------------------

  getWithdrawal(merchantId: string, id: string): WithdrawalRecord {
    const intent = this.withdrawals.get(id);
    if (!intent || intent.merchantId !== merchantId) throw notFound();
    return intent;
  }

  listWithdrawals(merchantId: string, page: number, size: number, statuses?: ReadonlySet<string>) {
    return this.timeline(this.withdrawalTimelines, merchantId).page(
      page,
      size,
      statuses && ((w) => statuses.has(w.status)),
    );
  }

  /**
   * Creates a withdrawal intent, checking in this order (the first failure wins):
   * sender wallet (data_invalid), config_incomplete, destination_invalid, destination_internal,
   * service_fee_not_covered, balance_insufficient, daily_limit_exceeded, monthly_limit_exceeded.
   * On success the gross amount moves from available to locked in the same synchronous step.
   */
  createWithdrawal(merchantId: string, input: CreateWithdrawalInput): WithdrawalRecord {
    const merchant = this.getMerchant(merchantId);
    const wallet = this.wallets.get(input.senderWalletId);
    if (!wallet || wallet.merchantId !== merchantId) {
      throw dataInvalid(
        `senderWalletId must be the id of one of your wallets; received "${input.senderWalletId}"`,
      );
    }
    const config = merchant.withdrawalConfig;
    if (!config) {
      throw withdrawalError('config_incomplete', 'Withdrawal configuration is incomplete for this merchant.');
    }
    const address = input.destination.identifier;
    if (!isTronAddress(address)) {
      throw withdrawalError(
        'destination_invalid',
        'destination.identifier must be a Tron address (base58check, version byte 0x41).',
      );
    }
    if (this.isPlatformAddress(address)) {
      throw withdrawalError(
        'destination_internal',
        'destination.identifier is an address internal to the platform.',
      );
    }
    const { amount } = input;
    const fee = config.fee;
    if (input.serviceFeeMode === 'inclusive' && fee.gte(amount)) {
      throw withdrawalError(
        'service_fee_not_covered',
        'No withdrawable amount remains after the service fee.',
      );
    }
    const amountNet = input.serviceFeeMode === 'inclusive' ? amount.minus(fee) : amount;
    const amountGross = input.serviceFeeMode === 'inclusive' ? amount : amount.plus(fee);
    const asset = wallet.assets.get(input.currencyCode);
    const available = asset?.available ?? ZERO;
    if (amountGross.gt(available)) {
      throw withdrawalError(
        'balance_insufficient',
        `Available ${input.currencyCode} balance ${formatAmount(available)} is less than the gross amount ${formatAmount(amountGross)}.`,
      );
    }
    const now = this.now();
    const dayStart = new Date(
      Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()),
    ).toISOString();
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    let today = ZERO;
    let thisMonth = ZERO;
    const history = this.timeline(this.withdrawalTimelines, merchantId).items;
    for (let i = history.length - 1; i >= 0; i--) {
      const previous = history[i] as WithdrawalRecord;
      if (previous.createdAt < monthStart) break;
      if (previous.status === 'failed' || previous.status === 'cancelled') continue;
      thisMonth = thisMonth.plus(previous.amount);
      if (previous.createdAt >= dayStart) today = today.plus(previous.amount);
    }
    if (today.plus(amount).gt(config.dailyLimit)) {
      throw withdrawalError('daily_limit_exceeded', 'The amount exceeds the daily withdrawal limit.');
    }
    if (thisMonth.plus(amount).gt(config.monthlyLimit)) {
      throw withdrawalError('monthly_limit_exceeded', 'The amount exceeds the monthly withdrawal limit.');
    }
    return this.insertWithdrawal(wallet, {
      serviceFeeMode: input.serviceFeeMode,
      currencyCode: input.currencyCode,
      destinationAddress: address,
      amount,
      amountFee: fee,
      amountNet,
      amountGross,
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
    const asset = wallet.assets.get(fields.currencyCode);
    if (!asset || asset.available.lt(fields.amountGross)) {
      throw new Error(`wallet ${wallet.id} cannot cover ${fields.amountGross} ${fields.currencyCode}`);
    }
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
    asset.available = asset.available.minus(intent.amountGross);
    asset.locked = asset.locked.plus(intent.amountGross);
    touch(wallet, asset, fields.createdAt);
    this.withdrawals.set(intent.id, intent);
    this.timeline(this.withdrawalTimelines, wallet.merchantId).insert(intent);
    return intent;
  }

  /**
   * Moves an intent along its lifecycle. completed releases the locked gross amount from the
   * wallet (the funds left on chain) and records the transaction; failed and cancelled return it
   * to available.
   */
  transitionWithdrawal(id: string, status: WithdrawalStatus, at = this.timestamp()): WithdrawalRecord {
    const intent = this.withdrawals.get(id);
    if (!intent) throw notFound();
    if (!WITHDRAWAL_TRANSITIONS[intent.status].includes(status)) {
      throw illegalTransition(
        'withdrawal intent',
        intent.status,
        status,
        WITHDRAWAL_TRANSITIONS[intent.status],
      );
    }
    const wallet = this.wallets.get(intent.walletId);
    const asset = wallet?.assets.get(intent.currencyCode);
    if (!wallet || !asset) throw new Error(`withdrawal intent ${id} references a missing wallet or asset`);
    if (!OPEN_WITHDRAWAL.has(status)) {
      asset.locked = asset.locked.minus(intent.amountGross);
      if (status !== 'completed') asset.available = asset.available.plus(intent.amountGross);
      touch(wallet, asset, at);
      intent.finalizedAt = at;
    }
    if (status === 'completed') {
      intent.transaction = {
        hash: this.newTxHash(),
        fromAddress: wallet.address,
        toAddress: intent.destinationAddress,
        networkFee: NETWORK_FEE_TRX,
      };
    }
    intent.status = status;
    intent.updatedAt = at;
    return intent;
  }

  // --- idempotency --------------------------------------------------------------------------

  /** The stored response for (merchant, key), or a 409 when the key was used with another body. */
  replay(merchantId: string, key: string, fingerprint: string): { status: number; body: string } | null {
    const record = this.idempotency.get(`${merchantId}\u0000${key}`);
    if (!record || record.expiresAt <= this.now().getTime()) return null;
    if (record.fingerprint !== fingerprint) {
      throw conflict(
        'idempotency_key_reused',
        'This Idempotency-Key was already used with a different request body.',
      );
    }
    return { status: record.status, body: record.body };
  }

  remember(merchantId: string, key: string, fingerprint: string, status: number, body: string): void {
    const now = this.now().getTime();
    if (this.idempotency.size > 100_000) {
      for (const [k, r] of this.idempotency) if (r.expiresAt <= now) this.idempotency.delete(k);
    }
    this.idempotency.set(`${merchantId}\u0000${key}`, {
      fingerprint,
      status,
      body,
      expiresAt: now + IDEMPOTENCY_TTL_MS,
    });
  }

  // --- inspection for auto-advance ----------------------------------------------------------

  openDeposits(): DepositRecord[] {
    return [...this.deposits.values()].filter((d) => d.status === 'pending' || d.status === 'processing');
  }

  openWithdrawals(): WithdrawalRecord[] {
    return [...this.withdrawals.values()].filter((w) => OPEN_WITHDRAWAL.has(w.status));
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

function newAsset(currencyCode: string, available: Money, at: string): AssetRecord {
  return { currencyCode, nickname: currencyCode, available, locked: ZERO, createdAt: at, updatedAt: at };
}

function touch(wallet: WalletRecord, asset: AssetRecord, at: string): void {
  asset.updatedAt = at;
  wallet.updatedAt = at;
}

function illegalTransition(kind: string, from: string, to: string, allowed: readonly string[]): ApiError {
  const next = allowed.length ? allowed.join(', ') : 'none (final status)';
  return conflict(
    'transition_invalid',
    `A ${kind} in status ${from} cannot move to ${to}; allowed: ${next}.`,
  );
}
