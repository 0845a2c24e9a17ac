import pino from 'pino';
import { Migrator } from '@mkt/kit/db';
import { catalogMigrations } from '../src/migrations';
import { models, useCatalog } from './harness';

useCatalog();

/** The migrator of the running service's database (as its `dist/migrate.js` builds it). */
const migrator = () =>
  new Migrator({
    context: { db: models().products.db, log: pino({ level: 'silent' }), models: [], outboxSources: [] },
    migrations: catalogMigrations,
  });

describe('0004-listing-indexes: the listings read through indexes in their order', () => {
  const NAMES = [
    'public_newest',
    'public_price_asc',
    'public_price_desc',
    'public_category_newest',
    'public_category_price_asc',
    'public_category_price_desc',
    'seller_newest',
  ];
  const products = () => models().products.collection;
  /** The listing indexes the collection has, by name: their keys (in order) and partial filter. */
  const built = async () =>
    Object.fromEntries(
      (await products().indexes())
        .filter((index) => NAMES.includes(index.name!))
        .map((index) => [index.name, { key: Object.entries(index.key), partialFilterExpression: index.partialFilterExpression }]),
    );
  /** The same, as the model declares them (what `0001-indexes` builds on a database made by this release). */
  const declared = () =>
    Object.fromEntries(
      models()
        .products.schema.indexes()
        .filter(([, options]) => NAMES.includes(options.name as string))
        .map(([key, options]) => [options.name, { key: Object.entries(key), partialFilterExpression: options.partialFilterExpression }]),
    );
  const forget = () =>
    models()
      .products.db.collection('migrations')
      .deleteOne({ _id: '0004-listing-indexes' } as never);

  test('a database whose indexes were built before gets them, as the model declares them; again changes nothing; down drops them only; up builds them again', async () => {
    expect(Object.keys(declared()).sort()).toEqual([...NAMES].sort());
    expect(await built()).toEqual(declared());

    // As a database of the previous release has it: `0001-indexes` ran before the model declared them.
    for (const name of NAMES) await products().dropIndex(name);
    await forget();
    expect(await built()).toEqual({});
    expect(await migrator().up()).toEqual(['0004-listing-indexes']);
    expect(await built()).toEqual(declared());

    // Run again (they exist): nothing changes.
    await forget();
    const before = await products().indexes();
    expect(await migrator().up()).toEqual(['0004-listing-indexes']);
    expect(await products().indexes()).toEqual(before);

    // Down drops these and keeps the rest (the previous release's among them); up builds them again.
    expect(await migrator().down()).toEqual(['0004-listing-indexes']);
    expect(await built()).toEqual({});
    expect((await products().indexes()).map((index) => index.name)).toEqual(
      before.map((index) => index.name).filter((name) => !NAMES.includes(name!)),
    );
    expect((await products().indexes()).map((index) => index.name)).toEqual(
      expect.arrayContaining(['_id_', 'sellerId_1', 'isDraft_1_visibility_1_createdAt_-1']),
    );
    expect(await migrator().up()).toEqual(['0004-listing-indexes']);
    expect(await built()).toEqual(declared());
  });
});
