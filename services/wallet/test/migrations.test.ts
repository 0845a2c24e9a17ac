import pino from 'pino';
import { Migrator } from '@mkt/kit/db';
import { walletMigrations } from '../src/migrations';
import type { WalletModels } from '../src/db/models';
import { useWallet } from './harness';

/**
 * The wallet's index migrations on a database of the previous release (its indexes built before
 * the models declared these), as its `dist/migrate.js` runs them. 0002 and 0004 are tested with
 * what they move (test/exactly-once.test.ts, test/statement.test.ts).
 */
const walletApp = useWallet();
const models = () => walletApp().parts.models;
const migrator = () =>
  new Migrator({
    context: { db: models().Wallet.db, log: pino({ level: 'silent' }), models: [], outboxSources: [] },
    migrations: walletMigrations(walletApp().parts.ledger, models()),
  });
const forget = (name: string) =>
  models()
    .Wallet.db.collection('migrations')
    .deleteOne({ _id: name } as never);

/** What 0005-read-indexes builds: the model, the index's name and keys in order, sparse or not. */
const BUILT: Array<{ model: keyof WalletModels; name: string; key: Record<string, 1 | -1>; sparse?: true }> = [
  { model: 'Wallet', name: 'inflight.createdAt_1', key: { 'inflight.createdAt': 1 }, sparse: true },
  { model: 'BookingHold', name: 'status_1_updatedAt_1', key: { status: 1, updatedAt: 1 } },
  { model: 'BookingHold', name: 'disputed_1_createdAt_1__id_1', key: { disputed: 1, createdAt: 1, _id: 1 } },
  { model: 'Payout', name: 'status_1_hold_1_createdAt_1__id_1', key: { status: 1, hold: 1, createdAt: 1, _id: 1 } },
  { model: 'TopUp', name: 'userId_1_createdAt_-1__id_-1', key: { userId: 1, createdAt: -1, _id: -1 } },
  { model: 'Payout', name: 'userId_1_createdAt_-1__id_-1', key: { userId: 1, createdAt: -1, _id: -1 } },
  { model: 'Transfer', name: 'fromUserId_1_createdAt_-1__id_-1', key: { fromUserId: 1, createdAt: -1, _id: -1 } },
  { model: 'Transfer', name: 'toUserId_1_createdAt_-1__id_-1', key: { toUserId: 1, createdAt: -1, _id: -1 } },
];
/** The indexes the previous release relies on, which this migration keeps, whatever it does. */
const KEPT: Array<{ model: keyof WalletModels; name: string }> = [
  { model: 'BookingHold', name: 'disputed_1_createdAt_1' },
  { model: 'BookingHold', name: 'status_1' },
  { model: 'Payout', name: 'status_1_hold_1_createdAt_1' },
  { model: 'TopUp', name: 'userId_1_createdAt_-1' },
  { model: 'Payout', name: 'userId_1_createdAt_-1' },
  { model: 'Transfer', name: 'fromUserId_1_createdAt_-1' },
  { model: 'Transfer', name: 'toUserId_1_createdAt_-1' },
];

/** Each index of `BUILT` as the database has it (undefined: missing), keys in order. */
const built = async () =>
  Promise.all(
    BUILT.map(async ({ model, name }) => {
      const found = (await models()[model].collection.indexes()).find((index) => index.name === name);
      return found && { name, key: Object.entries(found.key), sparse: found.sparse };
    }),
  );
const expected = BUILT.map(({ name, key, sparse }) => ({ name, key: Object.entries(key), sparse }));
const kept = async () =>
  Promise.all(KEPT.map(async ({ model, name }) => (await models()[model].collection.indexes()).some((index) => index.name === name)));

describe('0005-read-indexes: the sweeps’ and the pages’ indexes on a database indexed before them', () => {
  test('a new database has them from 0001 (as the models declare them); on an older one up builds them, again changes nothing, down drops only them, up builds them again', async () => {
    expect(await built()).toEqual(expected);
    expect(await kept()).toEqual(KEPT.map(() => true));

    // As a database of the previous release has it: 0001 and 0003 ran before the models declared these.
    for (const { model, name } of BUILT) await models()[model].collection.dropIndex(name);
    await forget('0005-read-indexes');
    expect(await built()).toEqual(BUILT.map(() => undefined));
    expect(await migrator().up()).toEqual(['0005-read-indexes']);
    expect(await built()).toEqual(expected);

    // Run again (a crash before it was recorded): nothing changes.
    await forget('0005-read-indexes');
    expect(await migrator().up()).toEqual(['0005-read-indexes']);
    expect(await built()).toEqual(expected);

    // Down: none of them, the previous release's kept; up builds them again.
    expect(await migrator().down()).toEqual(['0005-read-indexes']);
    expect(await built()).toEqual(BUILT.map(() => undefined));
    expect(await kept()).toEqual(KEPT.map(() => true));
    expect(await migrator().up()).toEqual(['0005-read-indexes']);
    expect(await built()).toEqual(expected);
    expect(await kept()).toEqual(KEPT.map(() => true));
  });
});

describe('0004-ledger-chains on a database migrated by 0.2.0 or 0.2.1', () => {
  test('its record under their checksum (the same work, the backfill’s module named otherwise) is not marked as changed; another checksum is', async () => {
    const records = models().Wallet.db.collection('migrations');
    const original = await records.findOne({ _id: '0004-ledger-chains' } as never);
    try {
      await records.updateOne({ _id: '0004-ledger-chains' } as never, { $set: { checksum: '11bbee743b7d8e1c' } }, { upsert: true });
      const entry = async () => (await migrator().status()).find(({ name }) => name === '0004-ledger-chains');
      expect(await entry()).toMatchObject({ state: 'applied', changed: false });
      await records.updateOne({ _id: '0004-ledger-chains' } as never, { $set: { checksum: '0123456789abcdef' } });
      expect(await entry()).toMatchObject({ state: 'applied', changed: true });
    } finally {
      if (original) await records.replaceOne({ _id: '0004-ledger-chains' } as never, original);
      else await forget('0004-ledger-chains');
    }
  });
});
