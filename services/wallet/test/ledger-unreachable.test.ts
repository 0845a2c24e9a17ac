import mongoose from 'mongoose';
import { startWireCounter, testServers, uniqueName, type WireCounter } from '@mkt/infra';
import { LedgerRepository } from '../src/db/ledger.repository';
import { walletModels } from '../src/db/models';
import { WalletRepository } from '../src/db/wallet.repository';
import type { InflightOp } from '../src/domain/records';
import { disconnectDatabase, env, log, newUser, openWallet, startWallet, type WalletApp } from './harness';

/** How long the ledger's own connection waits for a server before the driver gives up on a command. */
const SELECTION_MS = 400;
/** Entries decided at once while the database is out of reach. */
const WAITING = 21;

/**
 * A wallet's ledger writer when the database is out of reach (README "Database round trips"):
 * the driver never sends the commands, so nothing of a batch went in. Its callers are answered
 * at once, each batch after one wait for a server; the entries waiting to go alone after an
 * earlier failure are not tried one after another, each after a wait of its own.
 */
describe('a ledger writer whose database is out of reach', () => {
  let app: WalletApp;
  let counter: WireCounter;
  let connection: mongoose.Connection;

  beforeAll(async () => {
    app = await startWallet();
    // The ledger's own connection through a relay that can be stopped: the database out of reach.
    counter = await startWireCounter(testServers().mongoUrl);
    const url = new URL(counter.url);
    url.pathname = `/${env.dbName}`;
    connection = await mongoose
      .createConnection(url.toString(), { serverSelectionTimeoutMS: SELECTION_MS, heartbeatFrequencyMS: 60_000 })
      .asPromise();
  });
  afterAll(async () => {
    await connection.close(true);
    await app.close();
    await disconnectDatabase();
  });

  test('the batch and the entries waiting to go alone are rejected after one wait each, not one per entry', async () => {
    const models = walletModels(connection);
    const ledger = new LedgerRepository(models, new WalletRepository(models), log);
    const owner = newUser('seller');
    const wallet = await openWallet(owner.id, owner.ref, 'MKT');
    const op = (amount: number): InflightOp => {
      const id = uniqueName('op');
      return {
        id,
        walletId: wallet._id,
        type: 'transfer_credit',
        availableDeltaMinor: amount,
        heldDeltaMinor: 0,
        reference: id,
        createdAt: new Date().toISOString(),
        token: uniqueName('token'),
      };
    };
    // The writer knows the wallet's head: the next batch goes straight to its insert.
    expect(await ledger.decide(op(1))).toBe(true);

    const tries = jest.spyOn(mongoose.mongo.Collection.prototype, 'insertOne');
    const batches = jest.spyOn(mongoose.mongo.Collection.prototype, 'insertMany');
    try {
      await counter.stop();
      const outcomes = await Promise.allSettled(Array.from({ length: WAITING }, (_, i) => ledger.decide(op(i + 2))));
      expect(outcomes.map((outcome) => outcome.status)).toEqual(Array.from({ length: WAITING }, () => 'rejected'));
      // The first entry alone (the writer was idle), then the others together; at most one lone
      // retry after an error that does not say whether the server had the batch (the relay's
      // connection closing under a command), whose wait for a server answers the rest.
      const attempts = tries.mock.calls.length + batches.mock.calls.length;
      expect(attempts).toBeGreaterThanOrEqual(2);
      expect(attempts).toBeLessThanOrEqual(4);
    } finally {
      tries.mockRestore();
      batches.mockRestore();
    }
  });
});
