import { randomUUID } from 'node:crypto';
import mongoose from 'mongoose';
import pino from 'pino';
import { startComponent, stopRuntime } from '@mkt/kit/runtime';
import type { Bus, OutboxRelay } from '@mkt/kit/bus';
import type { Logger } from '@mkt/kit/logger';
import { testEnv, testIdentity, uniqueName, type TestUser } from '@mkt/infra';
import { walletService, type WalletParts } from '../src/composition';
import { loadConfig, type WalletConfig } from '../src/config';
import type { WalletModels } from '../src/db/models';
import type { LedgerEntryDoc, WalletOp } from '../src/domain/records';

export const log = pino({ level: 'silent' });
const identity = testIdentity();
/** This file's database and broker namespace (a wallet started with other env keys shares them). */
export const env = testEnv('wallet');

export interface WalletApp {
  url: string;
  config: Readonly<WalletConfig>;
  parts: WalletParts;
  bus: Bus;
  outbox: OutboxRelay;
  close: () => Promise<void>;
}

function baseEnv(): Record<string, string> {
  return env.serviceEnv(identity.keys.publicKey, {
    LIMIT_DAILY: '10000',
    LIMIT_WEEKLY: '10000',
    LIMIT_MONTHLY: '10000',
    CHECKOUT_REDIRECT_ORIGINS: 'https://shop.example',
  });
}

/** The environment a wallet of this file starts with (a wallet process of a test's own takes it too). */
export const walletEnv = (overrides: Record<string, string> = {}): Record<string, string> => ({ ...baseEnv(), ...overrides });

/** The wallets started and not closed yet: the last one is the file's models and helpers below. */
const running: WalletApp[] = [];

function current(): WalletApp {
  const app = running.at(-1);
  if (!app) throw new Error('Start a wallet first (useWallet or startWallet)');
  return app;
}

/** The wallet as main.ts composes it (its consumers and sweeps left to the tests), on a free port. */
export async function startWallet(overrides: Record<string, string> = {}, logger: Logger = log): Promise<WalletApp> {
  const config = loadConfig({ ...baseEnv(), ...overrides });
  const wallet = walletService(config, logger);
  // This file's own database: a parameter named `env` here once hid it, and every file shared the default one.
  const started = await startComponent(wallet.definition, env.dbName);
  const { bus, outbox } = started.runtime;
  const app: WalletApp = {
    url: started.url,
    config,
    parts: wallet.parts,
    bus,
    outbox,
    close: async () => {
      running.splice(running.indexOf(app), 1);
      await stopRuntime(started);
    },
  };
  running.push(app);
  return app;
}

/**
 * A model of the wallet started last (every wallet of a file shares the file's database): the
 * models are bound to each composition's own connection, not global to the process.
 */
function model<K extends keyof WalletModels>(name: K): WalletModels[K] {
  return new Proxy({} as WalletModels[K], {
    get: (_target, property) => {
      const bound = current().parts.models[name];
      const value: unknown = Reflect.get(bound, property, bound);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(bound) : value;
    },
  });
}

export const Wallet = model('Wallet');
export const LedgerEntryModel = model('LedgerEntry');
export const TopUp = model('TopUp');
export const Payout = model('Payout');
export const Transfer = model('Transfer');
export const BookingHold = model('BookingHold');
export const Usage = model('Usage');
export const IdempotencyRecord = model('IdempotencyRecord');

/** The wallet of a user, opened on first use (as a request or the registration event opens it). */
export const openWallet = (userId: string, userRef: string, referencePrefix: string) =>
  current().parts.walletRepository.open(userId, userRef, referencePrefix);

/** An op applied straight to a wallet: the guarded write's outcome (a refusal is an outcome). */
export const applyWalletOp = (walletId: string, op: WalletOp) => current().parts.steps.applyOp(walletId, op);

/** An op applied as a step applies it: its pending entries, null for a repeat; a refusal throws. */
export const applyOp = (walletId: string, op: WalletOp) => current().parts.steps.apply({ walletId, op });

/** The sweep's pass over ops left in flight since before `cutoff` (their run died). */
export const finishOpsInFlight = (cutoff: Date) => current().parts.ledger.sweep(cutoff);

export async function disconnectDatabase(): Promise<void> {
  await mongoose.disconnect();
}

export const newUser = (role: TestUser['role'] = 'buyer'): TestUser =>
  identity.newUser(role, { email: `${uniqueName('u')}@example.test`, name: 'Test User' });

export const tokenOf = (user: TestUser) => identity.tokenOf(user);

/** Gives a user money the way a completed top-up does (a ledger entry with the balance). */
export async function givenBalance(user: TestUser, minor: number): Promise<void> {
  const wallet = await openWallet(user.id, user.ref, 'MKT');
  await applyWalletOp(wallet._id, {
    opId: uniqueName('seed'),
    type: 'topup_credit',
    availableDeltaMinor: minor,
    heldDeltaMinor: 0,
    reference: 'seed',
  });
}

export async function balancesOf(user: TestUser): Promise<{ available: number; held: number }> {
  const wallet = await Wallet.findOne({ userId: user.id }).lean();
  return { available: wallet?.availableMinor ?? 0, held: wallet?.heldMinor ?? 0 };
}

/** Finishes the wallet's ops in flight, then checks that the ledger sums to the balances. */
export async function ledgerMatches(user: TestUser): Promise<boolean> {
  const wallet = await Wallet.findOne({ userId: user.id }).lean();
  if (!wallet) return false;
  await current().parts.ledger.flush(wallet._id);
  const entries = await LedgerEntryModel.find({ walletId: wallet._id }).lean();
  const available = entries.reduce((sum, e) => sum + e.availableDeltaMinor, 0);
  const held = entries.reduce((sum, e) => sum + e.heldDeltaMinor, 0);
  const fresh = await Wallet.findById(wallet._id).lean();
  return available === fresh!.availableMinor && held === fresh!.heldMinor && chainHolds(entries, fresh!);
}

/**
 * A wallet's chain, entry by entry: places 1, 2, … without a gap, each entry's balances after
 * it its predecessor's plus its deltas, `postedAt` never going back, and the last one's the
 * wallet's balances (entries written before the chain, without `seq`, start it).
 */
export function chainHolds(entries: LedgerEntryDoc[], wallet: { availableMinor: number; heldMinor: number }): boolean {
  const before = entries.filter((e) => typeof e.seq !== 'number' || e.seq <= 0);
  const chain = entries.filter((e) => typeof e.seq === 'number' && e.seq > 0).sort((a, b) => a.seq! - b.seq!);
  let available = before.reduce((sum, e) => sum + e.availableDeltaMinor, 0);
  let held = before.reduce((sum, e) => sum + e.heldDeltaMinor, 0);
  let postedAt = 0;
  for (const [index, entry] of chain.entries()) {
    available += entry.availableDeltaMinor;
    held += entry.heldDeltaMinor;
    if (entry.seq !== index + 1 || entry.availableAfterMinor !== available || entry.heldAfterMinor !== held) return false;
    if (entry.postedAt!.getTime() < postedAt) return false;
    postedAt = entry.postedAt!.getTime();
  }
  return available === wallet.availableMinor && held === wallet.heldMinor;
}

export { call, uniqueName } from '@mkt/infra';

/**
 * A transfer between two users' wallets as a process that died between its debit and its
 * credit leaves it: the record Pending, the sender debited, the recipient not yet credited.
 * Resolves with the transfer's id.
 */
export async function transferDebitedThenCrashed(
  app: WalletApp,
  from: TestUser,
  to: TestUser,
  amountMinor: number,
  id: string = randomUUID(),
): Promise<string> {
  const fromWallet = await openWallet(from.id, from.ref, 'MKT');
  const toWallet = await openWallet(to.id, to.ref, 'MKT');
  const record = (
    await Transfer.create({
      _id: id,
      fromWalletId: fromWallet._id,
      toWalletId: toWallet._id,
      fromUserId: from.id,
      toUserId: to.id,
      amountMinor,
      currency: 'ETB',
      status: 'Pending',
    })
  ).toObject();
  await app.parts.transfers.debit(record);
  return id;
}

/** A wallet app for the test file: started before its tests, stopped after. */
export function useWallet(overrides: Record<string, string> = {}): () => WalletApp {
  let app: WalletApp;
  beforeAll(async () => {
    app = await startWallet(overrides);
  });
  afterAll(async () => {
    await app.close();
    await disconnectDatabase();
  });
  return () => app;
}
