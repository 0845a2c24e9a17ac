import { randomUUID } from 'node:crypto';
import mongoose from 'mongoose';
import pino from 'pino';
import { startComponent, stopRuntime, type Bus, type Logger, type OutboxRelay } from '@mkt/kit';
import { testEnv, testIdentity, uniqueName, type TestUser } from '@mkt/infra';
import { walletService } from '../src/composition';
import { loadConfig, type WalletConfig } from '../src/config';
import { LedgerRelay } from '../src/db/ledger-relay';
import { LedgerEntryModel } from '../src/db/ledger.model';
import { Transfer } from '../src/db/records.model';
import { applyWalletOp, openWallet, Wallet } from '../src/db/wallet.model';
import type { AssembledWallet } from '../src/parts';

export const log = pino({ level: 'silent' });
const identity = testIdentity();
/** This file's database and broker namespace (a wallet started with other env keys shares them). */
export const env = testEnv('wallet');

export interface WalletApp {
  url: string;
  config: Readonly<WalletConfig>;
  parts: AssembledWallet;
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

/** The wallet as main.ts composes it (its consumers and sweeps left to the tests), on a free port. */
export async function startWallet(overrides: Record<string, string> = {}, logger: Logger = log): Promise<WalletApp> {
  const config = loadConfig({ ...baseEnv(), ...overrides });
  const wallet = walletService(config, logger);
  // This file's own database: a parameter named `env` here once hid it, and every file shared the default one.
  const started = await startComponent(wallet.options, env.dbName);
  const { bus, outbox } = started.runtime;
  return { url: started.url, config, parts: wallet.parts(), bus, outbox, close: () => stopRuntime(started) };
}

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

/** Moves pending ledger entries, then checks that the ledger sums to the balances. */
export async function ledgerMatches(user: TestUser): Promise<boolean> {
  const wallet = await Wallet.findOne({ userId: user.id }).lean();
  if (!wallet) return false;
  await new LedgerRelay(log).flush(wallet._id);
  const entries = await LedgerEntryModel.find({ walletId: wallet._id }).lean();
  const available = entries.reduce((sum, e) => sum + e.availableDeltaMinor, 0);
  const held = entries.reduce((sum, e) => sum + e.heldDeltaMinor, 0);
  const fresh = await Wallet.findById(wallet._id).lean();
  return available === fresh!.availableMinor && held === fresh!.heldMinor;
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
