import type { OPERATIONS } from '@mkt/contracts/gateway';
import type { OperationHandlers } from '@mkt/kit/http';
import type { AuditLog } from '../application/audit-log.use-cases';
import { CSV_HEADER, csvRow } from '../domain/audit';
import { toAuditEntryView } from './views';

/**
 * The audit log's operations of the contracts' table (admins only, checked by the entries' access
 * before anything is read): a page with filters and a cursor, and the CSV export of the same
 * filters, streamed (its size is the log's, never held in memory at once).
 */
export function auditHandlers(audit: AuditLog): Pick<OperationHandlers<typeof OPERATIONS, 'gateway'>, 'listAuditLog' | 'getAuditLogCsv'> {
  return {
    listAuditLog: async ({ query }) => {
      const { entries, nextCursor } = await audit.page(query);
      return { data: { entries: entries.map(toAuditEntryView), nextCursor } };
    },
    getAuditLogCsv: async ({ query }, { res }) => {
      const rows = audit.each(query);
      // The first entry is read before the answer starts: a failure then is the error envelope.
      const first = await rows.next();
      res.status(200);
      res.setHeader('content-type', 'text/csv; charset=utf-8');
      res.setHeader('content-disposition', `attachment; filename="audit-log-${new Date().toISOString().slice(0, 10)}.csv"`);
      res.setHeader('cache-control', 'no-store');
      res.write(CSV_HEADER);
      try {
        if (!first.done) res.write(csvRow(first.value));
        for await (const entry of rows) if (!res.write(csvRow(entry))) await new Promise((resume) => res.once('drain', resume));
        res.end();
      } catch (err) {
        // Half a file must not pass for a whole one: the connection is cut.
        res.destroy(err as Error);
      }
    },
  };
}
