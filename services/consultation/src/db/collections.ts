import type { Model, mongo } from 'mongoose';
import { byIdOrReference } from '@mkt/kit/db';

/**
 * The driver's collection of a model, typed by its record, for the writes mongoose would only
 * slow down (one plain command, no casting or middleware): their filters and updates are checked
 * against the record's fields (`mongo.Filter<T>`, `mongo.UpdateFilter<T>`) and what they return
 * is the record. It is the collection mongoose holds for the model (the connection keeps one per
 * name): no command is sent to get it.
 */
export function collectionOf<T extends mongo.Document>(model: Model<T>): mongo.Collection<T> {
  return model.db.collection<T>(model.collection.collectionName);
}

/** Every record is found by its id or its referenceId. */
export function findByKey<T>(model: Model<T>, key: string): Promise<T | null> {
  return model.findOne(byIdOrReference(key)).lean<T>() as Promise<T | null>;
}
