import mongoose, { Schema } from 'mongoose';
import pino from 'pino';
import { findPage, openDatabase } from '@mkt/kit/db';
import { testServers, uniqueName } from '@mkt/infra';

interface Item {
  _id: string;
  owner: string;
  rank: number;
}
const PagedItem = mongoose.model<Item>('PagedItem', new Schema<Item>({ _id: String, owner: String, rank: Number }, { versionKey: false }));

beforeAll(async () => {
  await openDatabase(mongoose.connection, {
    url: testServers().mongoUrl,
    dbName: uniqueName('kit_paging'),
    log: pino({ level: 'silent' }),
  });
});
afterAll(() => mongoose.disconnect());

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
});
