import mongoose from 'mongoose';
import { startWireCounter, testServers, uniqueName, type WireCounter, type WireFault } from '@mkt/infra';
import type { InflightOp, WalletOp } from '../src/domain/records';
import {
  balancesOf,
  chainHolds,
  disconnectDatabase,
  LedgerEntryModel,
  ledgerMatches,
  newUser,
  openWallet,
  startWallet,
  type WalletApp,
} from './harness';

const LEDGER = 'ledger_entries';
/** Entries decided at once on one wallet: the first goes alone, the others wait and go in the next insert, together. */
const BATCH = 20;

/**
 * A wallet's ledger writer when an insert fails otherwise than on a unique key (README "Database
 * round trips"), the failures put on the wire between the wallet and the database: only the
 * entry the server named, or the entries that failed alone after a failure that says nothing of
 * what went in, are rejected; the rest resolve, none twice, the chain without a gap.
 */
describe('a ledger insert that fails', () => {
  let counter: WireCounter;
  let app: WalletApp;

  beforeAll(async () => {
    counter = await startWireCounter(testServers().mongoUrl, { bson: mongoose.mongo.BSON });
    app = await startWallet({ MONGO_URL: counter.url });
    await app.outbox.stop();
  });
  afterAll(async () => {
    await app.close();
    await disconnectDatabase();
    await counter.stop();
  });

  /** Entries of credits of 1…n on a new wallet, as `decide` takes them. */
  async function creditsOnNewWallet(n: number): Promise<{ walletId: string; ops: InflightOp[] }> {
    const owner = newUser('seller');
    const wallet = await openWallet(owner.id, owner.ref, 'MKT');
    const ops = Array.from({ length: n }, (_, i): InflightOp => {
      const id = uniqueName('op');
      const entry = { id, walletId: wallet._id, type: 'transfer_credit' as const, availableDeltaMinor: i + 1, heldDeltaMinor: 0 };
      return { ...entry, reference: id, createdAt: new Date().toISOString(), token: uniqueName('token') };
    });
    return { walletId: wallet._id, ops };
  }

  /** Decides the ops at once (the first alone, the rest in one insert), the second insert on the ledger failed by `fault`. */
  async function decideWith(ops: InflightOp[], ...faults: Array<Omit<WireFault, 'command' | 'collection'>>) {
    counter.reset(); // before the faults: a reset forgets them
    for (const fault of faults) counter.failNext({ command: 'insert', collection: LEDGER, ...fault });
    const outcomes = await Promise.allSettled(ops.map((op) => app.parts.ledger.decide(op)));
    return { outcomes, inserts: counter.counts().insert ?? 0 };
  }

  /** The wallet's entries: each op's once at most, the chain's places 1… without a gap, each link's balances its predecessor's plus its deltas. */
  async function chainOf(walletId: string) {
    const entries = await LedgerEntryModel.find({ walletId }).lean();
    const sum = entries.reduce((total, entry) => total + entry.availableDeltaMinor, 0);
    return { ids: new Set(entries.map((entry) => entry._id)), holds: chainHolds(entries, { availableMinor: sum, heldMinor: 0 }) };
  }

  test('a write error the server names at an index: those before it resolve, it alone is retried once, those after it go in next', async () => {
    const { walletId, ops } = await creditsOnNewWallet(1 + BATCH);
    // The batch (the second insert) refused at its 6th entry, then that entry's lone retry fails too.
    const { outcomes } = await decideWith(ops, { skip: 1, fault: { writeErrorAt: 5 } }, { fault: 'error' });
    const refused = ops[1 + 5]!;
    expect(outcomes.map((outcome) => outcome.status)).toEqual(ops.map((op) => (op === refused ? 'rejected' : 'fulfilled')));
    expect(outcomes.every((outcome) => outcome.status === 'rejected' || outcome.value)).toBe(true);
    const chain = await chainOf(walletId);
    expect(chain.ids).toEqual(new Set(ops.filter((op) => op !== refused).map((op) => op.id)));
    expect(chain.holds).toBe(true);
  });

  test('a write error at an index whose entry then goes in alone: every op resolves, in order', async () => {
    const { walletId, ops } = await creditsOnNewWallet(1 + BATCH);
    const { outcomes } = await decideWith(ops, { skip: 1, fault: { writeErrorAt: 7 } });
    expect(outcomes.every((outcome) => outcome.status === 'fulfilled' && outcome.value)).toBe(true);
    const entries = await LedgerEntryModel.find({ walletId }).sort({ seq: 1 }).lean();
    expect(entries.map((entry) => entry._id)).toEqual(ops.map((op) => op.id));
    expect((await chainOf(walletId)).holds).toBe(true);
  });

  test('the connection lost after the server applied the batch: each entry alone meets its own op id, every op resolves once', async () => {
    const { walletId, ops } = await creditsOnNewWallet(1 + BATCH);
    const { outcomes, inserts } = await decideWith(ops, { skip: 1, fault: 'drop' });
    expect(outcomes.every((outcome) => outcome.status === 'fulfilled' && outcome.value)).toBe(true);
    // The first alone, the batch (dropped: no driver retry absorbed it), then each of its entries
    // alone, once: each meets its own op id.
    expect(inserts).toBe(1 + 1 + BATCH);
    const chain = await chainOf(walletId);
    expect(await LedgerEntryModel.countDocuments({ walletId })).toBe(ops.length);
    expect(chain.holds).toBe(true);
    // Asked again (a step's rerun), an op is decided by the entry already there.
    expect(await app.parts.ledger.decide(ops[BATCH]!)).toBe(true);
    expect(await app.parts.ledger.decide({ ...ops[BATCH]!, token: 'another run' })).toBe(false);
  });

  test('an error answered for the whole batch (nothing applied): each entry goes in alone, every op resolves', async () => {
    const { walletId, ops } = await creditsOnNewWallet(1 + BATCH);
    const { outcomes, inserts } = await decideWith(ops, { skip: 1, fault: 'error' });
    expect(outcomes.every((outcome) => outcome.status === 'fulfilled' && outcome.value)).toBe(true);
    expect(inserts).toBe(1 + 1 + BATCH);
    expect((await chainOf(walletId)).holds).toBe(true);
  });

  test('a server that keeps failing: one lone try per entry of the batch, then each rejected alone; the first op unaffected', async () => {
    const { walletId, ops } = await creditsOnNewWallet(1 + BATCH);
    const { outcomes, inserts } = await decideWith(ops, { skip: 1, times: 1 + BATCH, fault: 'error' });
    expect(outcomes[0]).toEqual({ status: 'fulfilled', value: true });
    expect(outcomes.slice(1).every((outcome) => outcome.status === 'rejected')).toBe(true);
    expect(inserts).toBe(1 + 1 + BATCH);
    expect((await chainOf(walletId)).ids).toEqual(new Set([ops[0]!.id]));
    // The server back: the ops (in flight for their step's rerun or the sweep) go in.
    const again = await Promise.all(ops.slice(1).map((op) => app.parts.ledger.decide(op)));
    expect(again.every(Boolean)).toBe(true);
    expect((await chainOf(walletId)).holds).toBe(true);
  });

  test('ops applied at once on one wallet, its second ledger insert lost after it applied: every op applied once, the balances the ledger', async () => {
    const seller = newUser('seller');
    const wallet = await openWallet(seller.id, seller.ref, 'MKT');
    const credit = (opId: string): WalletOp => ({
      opId,
      type: 'transfer_credit',
      availableDeltaMinor: 1,
      heldDeltaMinor: 0,
      reference: opId,
    });
    counter.failNext({ command: 'insert', collection: LEDGER, skip: 1, fault: 'drop' });
    const outcomes = await Promise.all(Array.from({ length: 40 }, () => app.parts.steps.applyOp(wallet._id, credit(uniqueName('c')))));
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(Array.from({ length: 40 }, () => 'applied'));
    expect(await balancesOf(seller)).toEqual({ available: 40, held: 0 });
    expect(await ledgerMatches(seller)).toBe(true);
  });
});
