import type { AdminActionRecordedData, AuditFilterQuery, AuditLogQuery } from '@mkt/contracts/gateway';
import type { Logger } from '@mkt/kit/logger';
import type { AuditEntryRepository } from '../db/audit-entry.repository';
import { auditFilter, checkRange, decodeCursor, encodeCursor, entryOf } from '../domain/audit';
import type { AuditEntry } from '../domain/records';

/** The audit log: entries appended from the services' admin-action events, read by admins. */
export class AuditLog {
  constructor(
    private readonly entries: AuditEntryRepository,
    private readonly log: Logger,
  ) {}

  /** Appends the entry an admin-action event carries (once: a redelivery finds it recorded). */
  async record(event: { id: string; data: AdminActionRecordedData }, service: string): Promise<void> {
    const appended = await this.entries.append(entryOf(event, service, new Date()));
    if (appended) this.log.info({ entryId: event.id, action: event.data.action, actorId: event.data.actorId }, 'admin action recorded');
  }

  /** A page of entries, newest first, and the cursor of the next one (null on the last). */
  async page(query: AuditLogQuery): Promise<{ entries: AuditEntry[]; nextCursor: string | null }> {
    checkRange(query);
    const after = query.cursor ? decodeCursor(query.cursor) : undefined;
    const found = await this.entries.page(auditFilter(query, after), query.limit + 1);
    const entries = found.slice(0, query.limit);
    return { entries, nextCursor: found.length > query.limit ? encodeCursor(entries[entries.length - 1]!) : null };
  }

  /** Every entry the filters match, newest first (the export). */
  each(query: AuditFilterQuery): AsyncGenerator<AuditEntry> {
    checkRange(query);
    return this.entries.each(auditFilter(query));
  }
}
