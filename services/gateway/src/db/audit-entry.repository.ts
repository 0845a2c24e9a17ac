import { isDuplicateKey } from '@mkt/kit/domain';
import type { FilterQuery } from 'mongoose';
import type { AuditEntry, AuditSelection } from '../domain/audit';
import { collectionOf } from './collections';
import type { GatewayModels } from './models';

/** The query of a selection: the fields as given, `at` in [from, to), and strictly after the cursor. */
export function auditQuery(selection: AuditSelection): FilterQuery<AuditEntry> {
  const { from, to, after, ...fields } = selection;
  const at = { ...(from ? { $gte: from } : {}), ...(to ? { $lt: to } : {}) };
  return {
    ...fields,
    ...(from || to ? { at } : {}),
    ...(after ? { $or: [{ at: { $lt: after.at } }, { at: after.at, _id: { $lt: after.id } }] } : {}),
  };
}

/**
 * Every query of `audit_entries`. Append-only: an entry is inserted once (its id is its event's:
 * a redelivered event finds it there) and read; there is no update or delete here, and nothing
 * else touches the collection.
 */
export class AuditEntryRepository {
  constructor(private readonly models: Pick<GatewayModels, 'AuditEntry'>) {}

  /** Appends the entry; true when this call did, false when it was already there. */
  async append(entry: AuditEntry): Promise<boolean> {
    try {
      await collectionOf(this.models.AuditEntry).insertOne(entry);
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  /** A page, newest first (`selection` from `auditFilter`). */
  page(selection: AuditSelection, limit: number): Promise<AuditEntry[]> {
    return this.models.AuditEntry.find(auditQuery(selection)).sort({ at: -1, _id: -1 }).limit(limit).lean<AuditEntry[]>();
  }

  /** Every entry `selection` matches, newest first, read in batches (an export of any size in bounded memory). */
  async *each(selection: AuditSelection): AsyncGenerator<AuditEntry> {
    const cursor = this.models.AuditEntry.find(auditQuery(selection))
      .sort({ at: -1, _id: -1 })
      .lean<AuditEntry[]>()
      .cursor({ batchSize: 500 });
    for await (const entry of cursor) yield entry as AuditEntry;
  }
}
