import mongoose from 'mongoose';
import { startWireCounter, testServers, uniqueName, type WireCounter } from '../src';

describe('the wire counter', () => {
  let counter: WireCounter;
  let client: mongoose.mongo.MongoClient;

  beforeAll(async () => {
    counter = await startWireCounter(testServers().mongoUrl);
    client = await mongoose.mongo.MongoClient.connect(counter.url);
  });
  afterAll(async () => {
    await client.close();
    await counter.stop();
  });

  test('counts each command a client sends, by name, and nothing else', async () => {
    const things = client.db(uniqueName('infra_wire')).collection<{ _id: string; n: number }>('things');
    await things.insertOne({ _id: 'a', n: 1 }); // the first command may be preceded by the handshake
    counter.reset();
    await things.findOne({ _id: 'a' });
    await things.findOne({ _id: 'b' });
    await things.findOneAndUpdate({ _id: 'a' }, { $inc: { n: 1 } });
    await things.updateOne({ _id: 'a' }, { $inc: { n: 1 } });
    await things.insertMany([
      { _id: 'b', n: 0 },
      { _id: 'c', n: 0 },
    ]);
    expect(counter.counts()).toEqual({ find: 2, findAndModify: 1, update: 1, insert: 1 });
    expect(counter.total()).toBe(5);
  });
});

describe('the wire counter failing commands', () => {
  let counter: WireCounter;
  let client: mongoose.mongo.MongoClient;
  let things: mongoose.mongo.Collection<{ _id: string }>;
  let others: mongoose.mongo.Collection<{ _id: string }>;

  beforeAll(async () => {
    counter = await startWireCounter(testServers().mongoUrl, { bson: mongoose.mongo.BSON });
    client = await mongoose.mongo.MongoClient.connect(counter.url);
    const db = client.db(uniqueName('infra_wire_faults'));
    things = db.collection('things');
    others = db.collection('others');
  });
  afterAll(async () => {
    await client.close();
    await counter.stop();
  });

  const ids = async () => (await things.find({}, { sort: { _id: 1 } }).toArray()).map(({ _id }) => _id);

  test('error: the next insert on the collection answered an error, never applied; the one after it passes', async () => {
    counter.failNext({ command: 'insert', collection: 'things', fault: 'error' });
    await others.insertOne({ _id: 'o1' }); // another collection: not hit
    await expect(things.insertOne({ _id: 'e1' })).rejects.toMatchObject({ code: 1 });
    await things.insertOne({ _id: 'e2' });
    expect(await ids()).toEqual(['e2']);
    expect(await others.countDocuments()).toBe(1);
    await things.deleteMany({});
  });

  test('drop: the insert applied, its answer lost with the connection; the client goes on after', async () => {
    counter.failNext({ command: 'insert', collection: 'things', fault: 'drop' });
    await expect(things.insertMany([{ _id: 'd1' }, { _id: 'd2' }])).rejects.toThrow();
    expect(await ids()).toEqual(['d1', 'd2']);
    await things.deleteMany({});
  });

  test('writeErrorAt: the documents before the index applied, that one refused by a non-duplicate error, the rest not tried', async () => {
    counter.failNext({ command: 'insert', collection: 'things', fault: { writeErrorAt: 2 } });
    const failed = await things
      .insertMany([{ _id: 'w1' }, { _id: 'w2' }, { _id: 'w3' }, { _id: 'w4' }], { ordered: true })
      .catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(mongoose.mongo.MongoBulkWriteError);
    const { writeErrors } = failed as mongoose.mongo.MongoBulkWriteError;
    const errors = Array.isArray(writeErrors) ? writeErrors : [writeErrors];
    expect(errors.map(({ index, code }) => ({ index, code }))).toEqual([{ index: 2, code: 2 }]);
    expect(await ids()).toEqual(['w1', 'w2']);
    await things.deleteMany({});
  });

  test('skip and times: the commands skipped pass, as many as asked then hit, then none; the next fault waits its turn', async () => {
    counter.failNext({ command: 'insert', fault: 'error', skip: 1, times: 2 });
    counter.failNext({ command: 'insert', fault: 'error', skip: 1 });
    await things.insertOne({ _id: 't1' });
    await expect(things.insertOne({ _id: 't2' })).rejects.toThrow();
    await expect(things.insertOne({ _id: 't3' })).rejects.toThrow();
    await things.insertOne({ _id: 't4' });
    await expect(things.insertOne({ _id: 't5' })).rejects.toThrow();
    await things.insertOne({ _id: 't6' });
    expect(await ids()).toEqual(['t1', 't4', 't6']);
  });
});
