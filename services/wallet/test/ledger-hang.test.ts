import mongoose from 'mongoose';
import { startWireCounter, testServers, uniqueName, type WireCounter } from '@mkt/infra';
import type { WalletOp } from '../src/domain/records';
import {
  balancesOf,
  disconnectDatabase,
  LedgerEntryModel,
  ledgerMatches,
  newUser,
  openWallet,
  startWallet,
  type WalletApp,
} from './harness';

const LEDGER = 'ledger_entries';
/**
 * The wallet's MONGO_SOCKET_TIMEOUT_MS here: short, so the test waits for it, yet long enough
 * that the other commands of a loaded machine (the writes into flight, the head's reads) answer
 * within it.
 */
const SOCKET_TIMEOUT_MS = 3_000;
/** How long after the hung insert began the ops behind it must all be answered (the timeout, then a few inserts). */
const BOUND_MS = SOCKET_TIMEOUT_MS + 6_000;
const OPS = 10;

/** `work`'s outcome, or a rejection naming what is still stuck once `ms` have passed. */
async function within<T>(ms: number, work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} still stuck after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A ledger insert whose answer never comes (a server stuck, a network that drops packets without
 * a reset), put on the wire between the wallet and the database: the socket timeout ends it, the
 * wallet's writer goes on, and the ops queued behind it on the same wallet are answered.
 */
const credit = (i: number): WalletOp => {
  const opId = uniqueName('c');
  return { opId, type: 'transfer_credit', availableDeltaMinor: i + 1, heldDeltaMinor: 0, reference: opId };
};

describe('a ledger insert that hangs', () => {
  let counter: WireCounter;
  let app: WalletApp;

  beforeAll(async () => {
    counter = await startWireCounter(testServers().mongoUrl, { bson: mongoose.mongo.BSON });
    // No driver retry of a timed-out insert (a replica set's would go on a new connection, past
    // the fault): the counts and bounds below are the writer's own, on any server.
    const url = new URL(counter.url);
    url.searchParams.set('retryWrites', 'false');
    app = await startWallet({ MONGO_URL: url.toString(), MONGO_SOCKET_TIMEOUT_MS: String(SOCKET_TIMEOUT_MS) });
    await app.outbox.stop();
  });
  afterAll(async () => {
    await app.close();
    await disconnectDatabase();
    await counter.stop();
  });

  test('the ops behind it on the same wallet are answered within the bound, each applied once, the chain whole', async () => {
    const seller = newUser('seller');
    const wallet = await openWallet(seller.id, seller.ref, 'MKT');
    counter.reset();
    // The wallet's first ledger insert: sent on and applied by the server, its answer never delivered.
    counter.failNext({ command: 'insert', collection: LEDGER, fault: 'hang' });
    const started = Date.now();
    const answered = Array.from({ length: OPS }, (_, i) =>
      app.parts.steps.applyOp(wallet._id, credit(i)).then((outcome) => ({ kind: outcome.kind, ms: Date.now() - started })),
    );
    const outcomes = await within(BOUND_MS, Promise.all(answered), 'the ops behind the hung insert');
    expect(outcomes.map(({ kind }) => kind)).toEqual(Array.from({ length: OPS }, () => 'applied'));
    // They did wait for the hung insert (it held the wallet's writer until the socket timeout).
    expect(Math.max(...outcomes.map(({ ms }) => ms))).toBeGreaterThanOrEqual(SOCKET_TIMEOUT_MS - 100);
    // The hung insert, its entry's lone retry (meets its own op id), then the ones behind it.
    expect(counter.counts().insert).toBeGreaterThanOrEqual(3);
    const total = (OPS * (OPS + 1)) / 2;
    expect(await balancesOf(seller)).toEqual({ available: total, held: 0 });
    expect(await LedgerEntryModel.countDocuments({ walletId: wallet._id })).toBe(OPS);
    expect(await ledgerMatches(seller)).toBe(true);
  });

  test('a server that hangs every ledger insert holds the wallet two timeouts per batch, not one per entry; the sweep then finishes each op once', async () => {
    const seller = newUser('seller');
    const wallet = await openWallet(seller.id, seller.ref, 'MKT');
    counter.reset();
    counter.failNext({ command: 'insert', collection: LEDGER, fault: 'hang', times: 1_000 });
    const started = Date.now();
    const settled = Array.from({ length: OPS }, (_, i) =>
      app.parts.steps.applyOp(wallet._id, credit(i)).then(
        (outcome) => ({ kind: outcome.kind as string, ms: Date.now() - started }),
        (err: unknown) => ({ kind: (err as Error).name, ms: Date.now() - started }),
      ),
    );
    // The first op's insert and its lone retry, then the other nine's batch and the first of their
    // lone retries: four timeouts. One lone timeout per entry would be twelve.
    const outcomes = await within(5 * SOCKET_TIMEOUT_MS + 3_000, Promise.all(settled), 'the ops of a hanging server');
    expect(outcomes.map(({ kind }) => kind)).toEqual(Array.from({ length: OPS }, () => 'MongoNetworkTimeoutError'));
    expect(counter.counts().insert).toBeLessThanOrEqual(4);

    // The server answers again; the hung inserts were applied all the same, and the sweep finishes
    // each op in flight from its own entry: applied once, the chain whole.
    counter.reset();
    await app.parts.ledger.sweep(new Date(Date.now() + 120_000));
    expect(await balancesOf(seller)).toEqual({ available: (OPS * (OPS + 1)) / 2, held: 0 });
    expect(await LedgerEntryModel.countDocuments({ walletId: wallet._id })).toBe(OPS);
    expect(await ledgerMatches(seller)).toBe(true);
  });
});
