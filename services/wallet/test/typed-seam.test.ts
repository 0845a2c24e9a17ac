import path from 'node:path';
import mongoose from 'mongoose';
import { untypedSeams } from '@mkt/infra';
import { recordsOf } from '../src/db/collections';
import { walletModels } from '../src/db/models';

test('the decide/apply seam is typed: no cast through never or unknown in db/, no MongoDB operator in domain/', () => {
  expect(untypedSeams(path.join(__dirname, '../src'))).toEqual({ casts: [], operators: [] });
});

test("a repository's typed collection is the one mongoose opened for the model (no second one)", async () => {
  const db = mongoose.createConnection();
  const models = walletModels(db);
  expect(recordsOf(models.Wallet)).toBe(models.Wallet.collection);
  expect(recordsOf(models.LedgerEntry)).toBe(models.LedgerEntry.collection);
  expect(recordsOf(models.BookingHold)).toBe(models.BookingHold.collection);
  await db.close();
});
