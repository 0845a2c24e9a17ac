import { Schema } from 'mongoose';
import pino from 'pino';
import { makeEvent, type IntegrationEvent } from '@mkt/contracts';
import { closeDatabase, createDatabase, openDatabase } from '@mkt/kit/db';
import { RecordDeletes, tombstoneModel } from '@mkt/kit/bus';
import { type OutboxDocument } from '../src/bus/outbox';
import { testServers, uniqueName } from '@mkt/infra';

// A delete and the event it records, with no transaction: never lost, never recorded for a
// delete that did not happen, once however many deletes race, finished after a crash.

const db = createDatabase();
const Record = db.model('Record', new Schema({ _id: String, value: Number }, { versionKey: false, timestamps: true }), 'records');
const Tombstones = tombstoneModel(db);
const flushed: string[] = [];
const outbox = {
  flush: async (_model: unknown, doc: OutboxDocument | string) => {
    if (typeof doc !== 'string') flushed.push(...(doc.pendingEvents ?? []).map((event) => event.id));
  },
};

beforeAll(async () => {
  await openDatabase(db, { url: testServers().mongoUrl, dbName: uniqueName('kit_deletions'), log: pino({ level: 'silent' }) });
});
afterAll(() => closeDatabase(db));

const entry = (id: string): IntegrationEvent =>
  makeEvent(
    'catalog.admin_action.recorded',
    {
      action: 'product.delete',
      actorId: 'admin-1',
      actorRole: 'admin',
      targetType: 'product',
      targetId: id,
      at: new Date().toISOString(),
      requestId: `req-${id}`,
      clientAddress: null,
      before: null,
      after: null,
      notes: null,
    },
    { source: 'catalog', correlationId: `req-${id}` },
  );
const pendingOf = async (id: string) => (await Tombstones.findById(id).lean())?.pendingEvents ?? [];

test('a delete removes the record and leaves its entry in the tombstone’s outbox, flushed once', async () => {
  const deletes = new RecordDeletes(Record, Tombstones, outbox);
  const record = (await Record.create({ _id: 'a', value: 1 })).toObject();
  const event = entry('a');
  expect(await deletes.delete('a', { updatedAt: record.updatedAt }, event)).toBe(true);
  expect(await Record.exists({ _id: 'a' })).toBeNull();
  expect((await pendingOf('a')).map((pending) => pending.id)).toEqual([event.id]);
  expect(flushed).toContain(event.id);
  // A repeat finds the claim: nothing deleted, nothing recorded.
  expect(await deletes.delete('a', {}, entry('a'))).toBe(false);
  expect(await pendingOf('a')).toHaveLength(1);
});

test('a guard that misses (the record changed) deletes nothing and records nothing; the record can be deleted after', async () => {
  const deletes = new RecordDeletes(Record, Tombstones, outbox);
  const record = (await Record.create({ _id: 'b', value: 1 })).toObject();
  await new Promise((resolve) => setTimeout(resolve, 5));
  await Record.updateOne({ _id: 'b' }, { $set: { value: 2 } });
  expect(await deletes.delete('b', { updatedAt: record.updatedAt }, entry('b'))).toBe(false);
  expect(await Record.exists({ _id: 'b' })).not.toBeNull();
  expect(await Tombstones.exists({ _id: 'b' })).toBeNull();
  expect(await deletes.delete('b', {}, null)).toBe(true);
  expect(await Tombstones.findById('b').lean()).toMatchObject({ state: 'deleted', pendingEvents: [] });
});

test('of 20 racing deletes of one record (an admin’s and owners’), exactly one deletes it and at most one entry is recorded', async () => {
  const deletes = new RecordDeletes(Record, Tombstones, outbox);
  await Record.create({ _id: 'c', value: 1 });
  const events = Array.from({ length: 20 }, (_, index) => (index % 2 === 0 ? entry('c') : null));
  const results = await Promise.all(events.map((event) => deletes.delete('c', {}, event)));
  expect(results.filter(Boolean)).toHaveLength(1);
  const winner = events[results.indexOf(true)];
  expect((await pendingOf('c')).map((pending) => pending.id)).toEqual(winner ? [winner.id] : []);
});

test('a crash after the claim, after the record’s delete, or after the entry moved: the sweep finishes each exactly once', async () => {
  const deletes = new RecordDeletes(Record, Tombstones, outbox, { graceMs: 0 });
  const later = Date.now() + 1_000;
  const claim = (id: string, event: IntegrationEvent, guard: object = {}) =>
    Tombstones.collection.insertOne({ _id: id, state: 'claimed', guard, entry: event, pendingEvents: [], createdAt: new Date() } as object);

  // Claimed, the record not deleted yet: the sweep deletes it and records the entry.
  await Record.create({ _id: 'd1', value: 1 });
  const d1 = entry('d1');
  await claim('d1', d1);
  // Claimed, the record already deleted by the claim: the entry moves.
  const d2 = entry('d2');
  await claim('d2', d2);
  // Claimed, the record changed since (its guard misses): it stays, nothing is recorded.
  await Record.create({ _id: 'd3', value: 1 });
  await claim('d3', entry('d3'), { value: 0 });

  await deletes.sweep(later);
  await deletes.sweep(later);
  expect(await Record.exists({ _id: 'd1' })).toBeNull();
  expect((await pendingOf('d1')).map((pending) => pending.id)).toEqual([d1.id]);
  expect((await pendingOf('d2')).map((pending) => pending.id)).toEqual([d2.id]);
  expect(await Record.exists({ _id: 'd3' })).not.toBeNull();
  expect(await Tombstones.exists({ _id: 'd3' })).toBeNull();
});

test('a drained tombstone is forgotten after its retention; one still holding its entry is kept', async () => {
  const deletes = new RecordDeletes(Record, Tombstones, outbox, { retainMs: 0 });
  await Record.create({ _id: 'e1', value: 1 });
  await Record.create({ _id: 'e2', value: 1 });
  expect(await deletes.delete('e1', {}, null)).toBe(true);
  expect(await deletes.delete('e2', {}, entry('e2'))).toBe(true);
  await deletes.sweep(Date.now() + 1_000);
  expect(await Tombstones.exists({ _id: 'e1' })).toBeNull();
  expect(await pendingOf('e2')).toHaveLength(1);
});
