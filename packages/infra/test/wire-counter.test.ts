import { Socket } from 'node:net';
import mongoose from 'mongoose';
import { sentOn, startWireCounter, testServers, uniqueName, type WireCounter } from '../src';

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

  test('sentOn: the bodies of the commands of those names on that collection, as sent, never the outbox relay’s sweep', async () => {
    const recorder = await startWireCounter(testServers().mongoUrl, { record: true });
    const recorded = await mongoose.mongo.MongoClient.connect(recorder.url);
    try {
      const db = recorded.db(uniqueName('infra_wire'));
      recorder.reset();
      await db.collection('things').find({ n: 1 }).sort({ n: -1 }).toArray();
      await db
        .collection('things')
        .find({ 'pendingEvents.id': { $exists: true } })
        .toArray();
      await db
        .collection('things')
        .aggregate([{ $match: { n: 2 } }])
        .toArray();
      await db.collection('others').find({ n: 3 }).toArray();
      const deserialize = (bson: Buffer) => mongoose.mongo.BSON.deserialize(bson);
      const finds = sentOn(recorder.commands(), ['find'], 'things', deserialize);
      expect(finds.map(({ filter, sort }) => ({ filter, sort }))).toEqual([{ filter: { n: 1 }, sort: { n: -1 } }]);
      const reads = sentOn(recorder.commands(), ['find', 'aggregate'], 'things', deserialize);
      expect(reads.map((body) => Object.keys(body)[0])).toEqual(['find', 'aggregate']);
    } finally {
      await recorded.close();
      await recorder.stop();
    }
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

  test("hang: the insert applied, its answer never comes and the connection stays open until the client's socket timeout", async () => {
    const relay = await startWireCounter(testServers().mongoUrl, { bson: mongoose.mongo.BSON });
    const timeoutMs = 1_000;
    // No driver retry of the timed-out write (a replica set's would go on a new connection and
    // succeed): what is asserted is the relay's hang alone, on any server.
    const patient = await mongoose.mongo.MongoClient.connect(relay.url, { socketTimeoutMS: timeoutMs, retryWrites: false });
    try {
      const patientThings = patient.db(things.dbName).collection<{ _id: string }>('things');
      relay.failNext({ command: 'insert', collection: 'things', fault: 'hang' });
      const started = Date.now();
      const failed = await patientThings.insertOne({ _id: 'h1' }).catch((err: unknown) => err);
      const waited = Date.now() - started;
      // Only the client's timeout ended it: no close, no answer from the relay before.
      expect(failed).toBeInstanceOf(mongoose.mongo.MongoNetworkTimeoutError);
      expect(waited).toBeGreaterThanOrEqual(timeoutMs - 50);
      expect(waited).toBeLessThan(timeoutMs + 5_000);
      expect(await ids()).toEqual(['h1']);
      await patientThings.insertOne({ _id: 'h2' }); // the fault spent, the client goes on
      expect(await ids()).toEqual(['h1', 'h2']);
    } finally {
      await patient.close();
      await relay.stop();
    }
    await things.deleteMany({});
  });

  test('reset: a fault not spent yet is forgotten with the counts', async () => {
    counter.failNext({ command: 'insert', collection: 'things', fault: 'error' });
    counter.failNext({ command: 'find', collection: 'things', skip: 1, fault: 'drop' });
    counter.reset();
    await things.insertOne({ _id: 'x1' });
    expect(await ids()).toEqual(['x1']);
    expect(await ids()).toEqual(['x1']);
    expect(counter.counts()).toEqual({ insert: 1, find: 2 });
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

  test('writeErrorAt: a server that refused a document itself is answered as it said (no invented entry), the fault spent', async () => {
    await things.insertOne({ _id: 'r2' });
    counter.failNext({ command: 'insert', collection: 'things', fault: { writeErrorAt: 3 } });
    const failed = await things
      .insertMany([{ _id: 'r1' }, { _id: 'r2' }, { _id: 'r3' }, { _id: 'r4' }, { _id: 'r5' }], { ordered: true })
      .catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(mongoose.mongo.MongoBulkWriteError);
    const { writeErrors } = failed as mongoose.mongo.MongoBulkWriteError;
    const errors = Array.isArray(writeErrors) ? writeErrors : [writeErrors];
    expect(errors.map(({ index, code }) => ({ index, code }))).toEqual([{ index: 1, code: 11000 }]);
    expect(await ids()).toEqual(['r1', 'r2']);
    await things.insertMany([{ _id: 'r6' }, { _id: 'r7' }, { _id: 'r8' }, { _id: 'r9' }]); // the fault spent: not hit
    expect(await ids()).toEqual(['r1', 'r2', 'r6', 'r7', 'r8', 'r9']);
    await things.deleteMany({});
  });

  test('writeErrorAt: an insert of k documents or fewer passes untouched, the fault waiting for one it can hit; k = 0 answered without the server', async () => {
    counter.failNext({ command: 'insert', collection: 'things', fault: { writeErrorAt: 2 } });
    await things.insertMany([{ _id: 'k1' }, { _id: 'k2' }]);
    await things.insertOne({ _id: 'k3' });
    expect(await ids()).toEqual(['k1', 'k2', 'k3']);
    expect(await writeErrorsOf(things.insertMany([{ _id: 'k4' }, { _id: 'k5' }, { _id: 'k6' }]))).toEqual([{ index: 2, code: 2 }]);
    expect(await ids()).toEqual(['k1', 'k2', 'k3', 'k4', 'k5']);
    await things.deleteMany({});
    // `skip` counts an insert too small to hit as any other.
    counter.failNext({ command: 'insert', collection: 'things', skip: 1, fault: { writeErrorAt: 1 } });
    await things.insertOne({ _id: 'k7' });
    expect(await writeErrorsOf(things.insertMany([{ _id: 'k8' }, { _id: 'k9' }]))).toEqual([{ index: 1, code: 2 }]);
    expect(await ids()).toEqual(['k7', 'k8']);
    await things.deleteMany({});

    // Behind a second relay that records what reaches the server: k = 0 sends nothing on.
    const recorder = await startWireCounter(testServers().mongoUrl, { record: true });
    const relay = await startWireCounter(recorder.url, { bson: mongoose.mongo.BSON });
    const relayed = await mongoose.mongo.MongoClient.connect(relay.url);
    try {
      const relayedThings = relayed.db(things.dbName).collection<{ _id: string }>('things');
      relay.failNext({ command: 'insert', collection: 'things', fault: { writeErrorAt: 0 } });
      recorder.reset();
      expect(await writeErrorsOf(relayedThings.insertMany([{ _id: 'z1' }, { _id: 'z2' }], { ordered: true }))).toEqual([
        { index: 0, code: 2 },
      ]);
      expect(recorder.counts()).toEqual({});
      expect(await ids()).toEqual([]);
    } finally {
      await relayed.close();
      await relay.stop();
      await recorder.stop();
    }
  });

  test('a write that expects no answer (w: 0, moreToCome) is sent on untouched and never answered; the fault waits for the next', async () => {
    // mongo-java-server does not apply a w:0 write: a relay behind records what reached the server.
    const recorder = await startWireCounter(testServers().mongoUrl, { record: true });
    const relay = await startWireCounter(recorder.url, { bson: mongoose.mongo.BSON });
    // One connection: an answer to a w:0 write would be read as the answer to the next command.
    const relayed = await mongoose.mongo.MongoClient.connect(relay.url, { maxPoolSize: 1 });
    try {
      const relayedThings = relayed.db(things.dbName).collection<{ _id: string }>('things');
      relay.failNext({ command: 'insert', collection: 'things', fault: 'error' });
      relay.failNext({ command: 'insert', collection: 'things', fault: { writeErrorAt: 1 } });
      recorder.reset();
      await relayedThings.insertMany([{ _id: 'm1' }, { _id: 'm2' }], { writeConcern: { w: 0 } });
      expect(await relayedThings.findOne({ _id: 'none' })).toBeNull();
      await expect(relayedThings.insertOne({ _id: 'm3' })).rejects.toMatchObject({ code: 1 });
      await relayedThings.insertMany([{ _id: 'm4' }, { _id: 'm5' }], { writeConcern: { w: 0 } });
      expect(await relayedThings.findOne({ _id: 'none' })).toBeNull();
      expect(await writeErrorsOf(relayedThings.insertMany([{ _id: 'm6' }, { _id: 'm7' }]))).toEqual([{ index: 1, code: 2 }]);
      const inserted = recorder
        .commands()
        .filter(({ name }) => name === 'insert')
        .map(({ body }) => (mongoose.mongo.BSON.deserialize(body).documents as Array<{ _id: string }>).map(({ _id }) => _id));
      expect(inserted).toEqual([['m1', 'm2'], ['m4', 'm5'], ['m6']]);
    } finally {
      await relayed.close();
      await relay.stop();
      await recorder.stop();
    }
    await things.deleteMany({});
  });

  test('writeErrorAt: documents sent as a document sequence (kind 1) go on as one, not moved into the body', async () => {
    const recorder = await startWireCounter(testServers().mongoUrl, { record: true });
    const relay = await startWireCounter(recorder.url, { bson: mongoose.mongo.BSON });
    try {
      relay.failNext({ command: 'insert', collection: 'things', fault: { writeErrorAt: 2 } });
      // The driver puts an insert's documents in the body; other clients send them as a sequence.
      const documents = [{ _id: 's1' }, { _id: 's2' }, { _id: 's3' }];
      const answer = await sendOpMsg(relay.url, { insert: 'things', ordered: true, $db: things.dbName }, { documents });
      expect(answer).toMatchObject({ ok: 1, n: 2, writeErrors: [{ index: 2, code: 2 }] });
      const [sent, ...more] = recorder.commands();
      expect(more).toEqual([]);
      expect(mongoose.mongo.BSON.deserialize(sent!.body).documents).toBeUndefined();
      expect(sent!.sequences.documents!.map((doc) => mongoose.mongo.BSON.deserialize(doc))).toEqual(documents.slice(0, 2));
      expect(await ids()).toEqual(['s1', 's2']);
    } finally {
      await relay.stop();
      await recorder.stop();
    }
    await things.deleteMany({});
  });

  test('failNext refuses a write error at an index that is not a whole number, or on a command other than insert', () => {
    expect(() => counter.failNext({ command: 'insert', fault: { writeErrorAt: -1 } })).toThrow(/writeErrorAt/);
    expect(() => counter.failNext({ command: 'insert', fault: { writeErrorAt: 1.5 } })).toThrow(/writeErrorAt/);
    expect(() => counter.failNext({ command: 'update', fault: { writeErrorAt: 1 } })).toThrow(/writeErrorAt/);
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

/** The write errors an insert failed with (index and code), or the reason it did not fail so. */
async function writeErrorsOf(insert: Promise<unknown>): Promise<unknown> {
  const failed = await insert.then(
    () => 'no error',
    (err: unknown) => err,
  );
  if (!(failed instanceof mongoose.mongo.MongoBulkWriteError)) return failed;
  const { writeErrors } = failed;
  return (Array.isArray(writeErrors) ? writeErrors : [writeErrors]).map(({ index, code }) => ({ index, code }));
}

/** Sends one OP_MSG of `body` and `sequences` (kind-1 sections) on a connection of its own; answers the reply's body. */
async function sendOpMsg(
  url: string,
  body: Record<string, unknown>,
  sequences: Record<string, object[]>,
): Promise<Record<string, unknown>> {
  const { BSON } = mongoose.mongo;
  const sections = [Buffer.concat([Buffer.from([0]), BSON.serialize(body)])];
  for (const [identifier, documents] of Object.entries(sequences)) {
    const payload = Buffer.concat([Buffer.from(`${identifier}\0`), ...documents.map((doc) => BSON.serialize(doc))]);
    const size = Buffer.alloc(5);
    size[0] = 1;
    size.writeInt32LE(4 + payload.length, 1);
    sections.push(Buffer.concat([size, payload]));
  }
  const header = Buffer.alloc(20);
  const length = 20 + sections.reduce((sum, section) => sum + section.length, 0);
  header.writeInt32LE(length, 0);
  header.writeInt32LE(7, 4);
  header.writeInt32LE(2013, 12); // OP_MSG, flags 0
  const { hostname, port } = new URL(url);
  const socket = new Socket();
  try {
    const reply = await new Promise<Buffer>((resolve, reject) => {
      let received = Buffer.alloc(0);
      socket.on('error', reject).on('close', () => reject(new Error('connection closed before the answer')));
      socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        if (received.length >= 4 && received.length >= received.readInt32LE(0)) resolve(received);
      });
      socket.connect(Number(port), hostname, () => socket.write(Buffer.concat([header, ...sections])));
    });
    return BSON.deserialize(reply.subarray(21, 21 + reply.readInt32LE(21)));
  } finally {
    socket.destroy();
  }
}
