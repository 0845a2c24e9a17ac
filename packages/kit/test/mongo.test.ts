import mongoose, { Schema } from 'mongoose';
import pino from 'pino';
import { connectMongo } from '@mkt/kit';
import { testServers, uniqueName } from '@mkt/infra';

const Counter = mongoose.model('Counter', new Schema({ _id: String, value: Number }, { versionKey: false }));

beforeAll(async () => {
  await connectMongo({ url: testServers().mongoUrl, dbName: uniqueName('kit_mongo'), log: pino({ level: 'silent' }) });
});
afterAll(() => mongoose.disconnect());

describe('single-document updates under concurrency', () => {
  test('50 concurrent guarded decrements: exactly the ones the guard allows apply, none is lost', async () => {
    await Counter.create({ _id: 'c', value: 100 });
    const results = await Promise.all(
      Array.from({ length: 50 }, () => Counter.updateOne({ _id: 'c', value: { $gte: 3 } }, { $inc: { value: -3 } })),
    );
    expect(results.filter((result) => result.modifiedCount === 1)).toHaveLength(33);
    expect((await Counter.findById('c').lean())?.value).toBe(1);
  });

  test('50 concurrent $inc through findOneAndUpdate all count', async () => {
    await Counter.create({ _id: 'd', value: 0 });
    await Promise.all(Array.from({ length: 50 }, () => Counter.findOneAndUpdate({ _id: 'd' }, { $inc: { value: 1 } })));
    expect((await Counter.findById('d').lean())?.value).toBe(50);
  });
});
