/** The statement's CSV export (RFC 4180): a header row, then one row per entry, CRLF-ended. */

export const STATEMENT_CSV_COLUMNS = [
  'id',
  'postedAt',
  'type',
  'reference',
  'currency',
  'availableDeltaMinor',
  'heldDeltaMinor',
  'availableAfterMinor',
  'heldAfterMinor',
] as const;

export type StatementCsvRow = Record<(typeof STATEMENT_CSV_COLUMNS)[number], string | number | null>;

/**
 * One cell: numbers as they are; text quoted when it holds a comma, quote or line break (quotes
 * doubled), and led by `'` when it starts like a formula (`=`, `+`, `-`, `@`, tab, CR), so a
 * spreadsheet opening the file never runs a cell.
 */
export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export const csvHeader = () => `${STATEMENT_CSV_COLUMNS.join(',')}\r\n`;

export const csvRow = (row: StatementCsvRow) => `${STATEMENT_CSV_COLUMNS.map((column) => csvCell(row[column])).join(',')}\r\n`;
