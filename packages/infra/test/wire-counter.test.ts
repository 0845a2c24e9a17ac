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
