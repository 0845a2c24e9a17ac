import { AUDIT_CSV_COLUMNS, type AdminActionRecordedData, type AuditFilterQuery } from '@mkt/contracts/gateway';
import { InvalidField } from '@mkt/kit/domain';
import type { AuditEntry } from './records';

/** An entry from its event: the event's id and data, and the service that published it. */
export function entryOf(event: { id: string; data: AdminActionRecordedData }, service: string, now: Date): AuditEntry {
  const { at, ...data } = event.data;
  return { _id: event.id, ...data, at: new Date(at), service, recordedAt: now };
}

/** Where a page stops: the last entry's time and id (newest first, the id breaks ties). */
export interface AuditCursor {
  at: Date;
  id: string;
}

export function encodeCursor(entry: Pick<AuditEntry, 'at' | '_id'>): string {
  return Buffer.from(`${entry.at.toISOString()}|${entry._id}`, 'utf8').toString('base64url');
}

/** The cursor a client sent back; one that is not ours is 422 on `cursor`. */
export function decodeCursor(cursor: string): AuditCursor {
  const [at, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const time = at ? new Date(at) : null;
  if (!time || Number.isNaN(time.getTime()) || !id || rest.length > 0 || time.toISOString() !== at)
    throw new InvalidField('Not a cursor of this log: pass the nextCursor of the previous page', 'cursor');
  return { at: time, id };
}

/**
 * Which entries a query selects: each field given is a condition; `from`/`to` the range
 * [from, to) of `at`; `after` a page's cursor (entries strictly after it, newest first: older,
 * or as old with a smaller id). The store turns it into its query, on indexes with `at`.
 */
export interface AuditSelection {
  actorId?: string;
  action?: string;
  targetType?: string;
  targetId?: string;
  from?: Date;
  to?: Date;
  after?: AuditCursor;
}

/** The selection of a query (and the cursor of the page it continues). */
export function auditFilter(query: AuditFilterQuery, after?: AuditCursor): AuditSelection {
  return {
    ...(query.actorId ? { actorId: query.actorId } : {}),
    ...(query.action ? { action: query.action } : {}),
    ...(query.targetType ? { targetType: query.targetType } : {}),
    ...(query.targetId ? { targetId: query.targetId } : {}),
    ...(query.from ? { from: new Date(query.from) } : {}),
    ...(query.to ? { to: new Date(query.to) } : {}),
    ...(after ? { after } : {}),
  };
}

/** A range whose end is not after its start finds nothing: 422 rather than an empty answer that looks like one. */
export function checkRange(query: AuditFilterQuery): void {
  if (query.from && query.to && new Date(query.to).getTime() <= new Date(query.from).getTime())
    throw new InvalidField('`to` must be after `from`', 'to');
}

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote or line break; a leading `=`,
 * `+`, `-`, `@`, tab or carriage return is prefixed with `'` so a spreadsheet never runs it as
 * a formula.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = value instanceof Date ? value.toISOString() : typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const CSV_HEADER = `${AUDIT_CSV_COLUMNS.join(',')}\r\n`;

/** One entry as a CSV row, in `AUDIT_CSV_COLUMNS` order. */
export function csvRow(entry: AuditEntry): string {
  const row: Record<(typeof AUDIT_CSV_COLUMNS)[number], unknown> = {
    id: entry._id,
    at: entry.at,
    action: entry.action,
    actorId: entry.actorId,
    actorRole: entry.actorRole,
    targetType: entry.targetType,
    targetId: entry.targetId,
    service: entry.service,
    requestId: entry.requestId,
    clientAddress: entry.clientAddress,
    notes: entry.notes,
    before: entry.before,
    after: entry.after,
  };
  return `${AUDIT_CSV_COLUMNS.map((column) => csvField(row[column])).join(',')}\r\n`;
}
