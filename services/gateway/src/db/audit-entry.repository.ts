import { isDuplicateKey } from '@mkt/kit/domain';
import type { AuditEntry } from '../domain/audit';
import type { GatewayModels } from './models';

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
      await this.models.AuditEntry.collection.insertOne(entry as never);
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  /** A page, newest first (`where` from `auditFilter`). */
  page(where: Record<string, unknown>, limit: number): Promise<AuditEntry[]> {
    return this.models.AuditEntry.find(where).sort({ at: -1, _id: -1 }).limit(limit).lean<AuditEntry[]>();
  }

  /** Every entry `where` matches, newest first, read in batches (an export of any size in bounded memory). */
  async *each(where: Record<string, unknown>): AsyncGenerator<AuditEntry> {
    const cursor = this.models.AuditEntry.find(where).sort({ at: -1, _id: -1 }).lean<AuditEntry[]>().cursor({ batchSize: 500 });
    for await (const entry of cursor) yield entry as AuditEntry;
  }
}
