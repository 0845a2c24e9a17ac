import type { Model } from 'mongoose';
import { byIdOrReference } from '@mkt/kit/db';

/** Every record is found by its id or its referenceId. */
export function findByKey<T>(model: Model<T>, key: string): Promise<T | null> {
  return model.findOne(byIdOrReference(key)).lean<T>() as Promise<T | null>;
}
