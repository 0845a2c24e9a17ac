import type { AuditEntry } from '../domain/records';

/** An audit-log entry as `GET /admin/audit-log` answers it (dates as ISO strings). */
export const toAuditEntryView = (entry: AuditEntry) => ({
  id: entry._id,
  action: entry.action,
  actorId: entry.actorId,
  actorRole: entry.actorRole,
  targetType: entry.targetType,
  targetId: entry.targetId,
  at: entry.at.toISOString(),
  requestId: entry.requestId,
  clientAddress: entry.clientAddress,
  service: entry.service,
  before: entry.before,
  after: entry.after,
  notes: entry.notes,
});
