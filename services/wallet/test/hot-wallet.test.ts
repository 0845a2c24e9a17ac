import mongoose from 'mongoose';
import { startWireCounter, testServers, type WireCounter } from '@mkt/infra';
import { disconnectDatabase, LedgerEntryModel, newUser, openWallet, startWallet, type WalletApp } from './harness';

/**
 * A wallet's cost does not grow with its own traffic: HOT_WALLET_OPS (default 200,000) credits
 * applied to one wallet through the application layer (`WalletSteps.applyOp`, as every step
 * applies its op), a few at a time, against the real database. At every checkpoint the wallet
 * document's BSON size is the same small number, and the database commands an op costs —
 * counted on the wire for the first thousand ops and for the last — are the same: two writes on
 * the wallet (into flight, commit) and its ledger insert at the place after the chain's head
 * this process knows (the ops waiting while an insert is on the wire go in the next one,
 * together); an insert that lost its place to another process's op reads the entry there (by its
 * unique key) and tries the next; none of it grows with the wallet's history.
 * Timings are printed for the record only (bench/wallet-ops.mjs compares them; no assertion on time).
 */
const OPS = Number(process.env.HOT_WALLET_OPS ?? 200_000);
const CONCURRENCY = 8;
const CHECKPOINTS = [1_000, 10_000, 100_000, 200_000].filter((n) => n < OPS).concat(OPS);
const WINDOW = 1_000;
/** Places a window's first insert may lose to the ops the other process wrote before it (its head caught up every fourth). */
const STARTS_LOST = 8;

jest.setTimeout(30 * 60_000);

describe('one wallet, hundreds of thousands of ops', () => {
  let counter: WireCounter;
  /** The bulk of the ops, straight to the database. */
  let app: WalletApp;
  /** The measured windows, through the wire counter (the same database). */
  let counted: WalletApp;
  let direct: mongoose.mongo.MongoClient;

  beforeAll(async () => {
    counter = await startWireCounter(testServers().mongoUrl);
    app = await startWallet();
    counted = await startWallet({ MONGO_URL: counter.url });
    for (const started of [app, counted]) await started.outbox.stop();
    direct = await mongoose.mongo.MongoClient.connect(testServers().mongoUrl);
  });
  afterAll(async () => {
    await direct.close();
    await counted.close();
    await app.close();
    await disconnectDatabase();
    await counter.stop();
  });

  test(`${OPS.toLocaleString('en')} ops: the document stays the same size, every op costs the same commands`, async () => {
    expect(OPS).toBeGreaterThanOrEqual(200_000);
    const seller = newUser('seller');
    const wallet = await openWallet(seller.id, seller.ref, 'MKT');
    const wallets = direct.db(app.parts.models.Wallet.db.name).collection('wallets');
    const sizeNow = async () => mongoose.mongo.BSON.calculateObjectSize((await wallets.findOne({ _id: wallet._id } as object))!);
    let applied = 0;
    /** Applies ops `applied + 1 … until` through `via`, CONCURRENCY at a time; answers the milliseconds it took. */
    const applyUntil = async (until: number, via: WalletApp = app): Promise<number> => {
      const started = performance.now();
      const worker = async () => {
        while (applied < until) {
          const n = (applied += 1);
          const outcome = await via.parts.steps.applyOp(wallet._id, {
            opId: `hot:${seller.id}:${n}`,
            type: 'transfer_credit',
            availableDeltaMinor: 1,
            heldDeltaMinor: 0,
            reference: `hot-${n}`,
          });
          if (outcome.kind !== 'applied') throw new Error(`op ${n}: ${outcome.kind}`);
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      return performance.now() - started;
    };

    const rows: Array<{ ops: number; bytes: number; msPerOp: number }> = [];
    counter.reset();
    const firstMs = await applyUntil(WINDOW, counted);
    const firstCommands = counter.counts();
    /**
     * A window's commands: exactly two wallet writes per op; the ledger inserts one writer at a
     * time per process, so its own ops never lose a place to each other and those that wait for
     * the insert on the wire go together in the next: at most one insert per op (plus the few
     * places lost at the window's start, when the uncounted process wrote meanwhile), at least
     * one per CONCURRENCY ops. Reads only for those lost places (the op's own key, the entry
     * that took the place, now and then a batch of the places after, the head's read): a few per
     * window, not per op.
     */
    const expectWindowCost = (checkpoint: number, commands: Record<string, number>) => {
      const inserts = commands.insert ?? 0;
      expect({ checkpoint, update: commands.update }).toEqual({ checkpoint, update: 2 * WINDOW });
      expect(inserts).toBeGreaterThanOrEqual(WINDOW / CONCURRENCY);
      expect(inserts).toBeLessThanOrEqual(WINDOW + STARTS_LOST);
      expect(commands.find ?? 0).toBeLessThanOrEqual(3 * STARTS_LOST);
      expect(Object.keys(commands).filter((name) => !['find', 'insert', 'update'].includes(name))).toEqual([]);
    };
    expectWindowCost(WINDOW, firstCommands);
    rows.push({ ops: WINDOW, bytes: await sizeNow(), msPerOp: firstMs / WINDOW });
    for (const checkpoint of CHECKPOINTS.filter((n) => n > WINDOW)) {
      await applyUntil(checkpoint - WINDOW);
      counter.reset();
      const ms = await applyUntil(checkpoint, counted);
      const commands = counter.counts();
      // The same cost per op at every checkpoint: into flight, the chain's head and the ledger insert, commit.
      expectWindowCost(checkpoint, commands);
      rows.push({ ops: checkpoint, bytes: await sizeNow(), msPerOp: ms / WINDOW });
    }
    process.stdout.write(
      `[hot-wallet] ${OPS} ops on one wallet, ${CONCURRENCY} at a time\n` +
        rows.map((row) => `  at op ${String(row.ops).padStart(7)}: ${row.bytes} bytes, ${row.msPerOp.toFixed(3)} ms/op`).join('\n') +
        '\n',
    );

    const sizes = rows.map((row) => row.bytes);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(1_024);
    // Only the numbers' encodings may differ (a 32-bit balance growing into 64 bits).
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(16);
    const stored = (await wallets.findOne({ _id: wallet._id } as object))!;
    expect(stored).toMatchObject({
      availableMinor: OPS,
      heldMinor: 0,
      inflight: [],
      inflightInMinor: 0,
      inflightOutMinor: 0,
      appliedOps: false,
    });
    const [sum] = await LedgerEntryModel.aggregate<{ n: number; available: number }>([
      { $match: { walletId: wallet._id } },
      { $group: { _id: null, n: { $sum: 1 }, available: { $sum: '$availableDeltaMinor' } } },
    ]);
    expect(sum).toMatchObject({ n: OPS, available: OPS });
    // The chain: one place per op, without a gap, its last balance the wallet's.
    const head = await LedgerEntryModel.findOne({ walletId: wallet._id }).sort({ seq: -1 }).lean();
    expect(head).toMatchObject({ seq: OPS, availableAfterMinor: OPS, heldAfterMinor: 0 });
  });
});
