import mongoose, { Schema } from 'mongoose';
import pino from 'pino';
import { findPage, openDatabase } from '@mkt/kit/db';
import { startWireCounter, testServers, uniqueName, type WireCounter } from '@mkt/infra';

interface Item {
  _id: string;
  owner: string;
  rank: number;
}
const PagedItem = mongoose.model<Item>('PagedItem', new Schema<Item>({ _id: String, owner: String, rank: Number }, { versionKey: false }));

// Through a wire counter: what a page's reads send (its hint) is seen as sent.
let counter: WireCounter;
beforeAll(async () => {
  counter = await startWireCounter(testServers().mongoUrl, { record: true });
  await openDatabase(mongoose.connection, {
    url: counter.url,
    dbName: uniqueName('kit_paging'),
    log: pino({ level: 'silent' }),
  });
});
afterAll(async () => {
  await mongoose.disconnect();
  await counter.stop();
});

describe('findPage', () => {
  const owner = uniqueName('owner');
  beforeAll(async () => {
    await PagedItem.create(Array.from({ length: 7 }, (_, rank) => ({ _id: `${owner}-${rank}`, owner, rank })));
    await PagedItem.create({ _id: `${owner}-other`, owner: 'someone else', rank: 100 });
  });

  test('the first page in sort order, with the total the filter matches', async () => {
    const page = await findPage(PagedItem, { owner }, { page: 1, limit: 3 }, { rank: -1 });
    expect(page.items.map((item) => item.rank)).toEqual([6, 5, 4]);
    expect(page.pagination).toEqual({ page: 1, limit: 3, total: 7 });
  });

  test('the last page holds what is left; a page past the end is empty but still counts', async () => {
    const last = await findPage(PagedItem, { owner }, { page: 3, limit: 3 }, { rank: 1 });
    expect(last.items.map((item) => item.rank)).toEqual([6]);
    const beyond = await findPage(PagedItem, { owner }, { page: 9, limit: 3 }, { rank: 1 });
    expect(beyond).toEqual({ items: [], pagination: { page: 9, limit: 3, total: 7 } });
  });

  test('items are plain objects (lean), not documents', async () => {
    const { items } = await findPage(PagedItem, { owner }, { page: 1, limit: 1 }, { rank: 1 });
    expect(items[0]).toEqual({ _id: `${owner}-0`, owner, rank: 0 });
    expect(items[0]).not.toBeInstanceOf(mongoose.Document);
  });

  test('a hint is named by both reads, the page and its count; the answer is the same', async () => {
    await PagedItem.collection.createIndex({ owner: 1, rank: -1 }, { name: 'owner_rank' });
    counter.reset();
    const hinted = await findPage(PagedItem, { owner }, { page: 2, limit: 3 }, { rank: -1 }, 'owner_rank');
    expect(hinted).toEqual(await findPage(PagedItem, { owner }, { page: 2, limit: 3 }, { rank: -1 }));
    const sent = counter
      .commands()
      .filter((command) => command.name === 'find' || command.name === 'aggregate')
      .map((command) => mongoose.mongo.BSON.deserialize(command.body))
      .map((body) => ({ read: body.find === undefined ? 'count' : 'page', hint: body.hint as unknown }));
    // The two reads of a page are sent side by side: in either order.
    expect(sent).toHaveLength(4);
    expect(sent.slice(0, 2)).toEqual(
      expect.arrayContaining([
        { read: 'page', hint: 'owner_rank' },
        { read: 'count', hint: 'owner_rank' },
      ]),
    );
    expect(sent.slice(2)).toEqual(
      expect.arrayContaining([
        { read: 'page', hint: undefined },
        { read: 'count', hint: undefined },
      ]),
    );
  });
});
