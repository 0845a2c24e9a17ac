import type { Collection, Model } from 'mongoose';

/**
 * A model's collection for the driver's own commands, typed by the model's record: the very
 * collection mongoose opened for the model (a connection keeps one per name), so a repository's
 * filters, updates and inserts are checked against the record's fields, and what it reads comes
 * back as the record, without a cast.
 */
export function recordsOf<T extends object>(model: Model<T>): Collection<T> {
  return model.db.collection<T>(model.collection.collectionName);
}
