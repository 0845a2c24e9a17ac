import { AppError } from '@mkt/kit/domain';
import { auditFilter, checkRange, csvField, csvRow, CSV_HEADER, decodeCursor, encodeCursor, entryOf } from '../../src/domain/audit';

/** The audit log's rules without a database: entries from events, the cursor, the filters, CSV. */
const at = new Date('2026-11-24T10:00:00.000Z');
const data = {
  action: 'payout.approve',
  actorId: 'a1',
  actorRole: 'admin' as const,
  targetType: 'payout',
  targetId: 'MKT-PAY-REQ-1',
  at: at.toISOString(),
  requestId: 'req-1',
  clientAddress: '203.0.113.7',
  before: { status: 'Pending' },
  after: { status: 'Approved' },
  notes: 'ok, "checked"',
};

test('an entry is its event: the event id, the publishing service, the time as a date', () => {
  const recordedAt = new Date('2026-11-24T10:00:01.000Z');
  expect(entryOf({ id: 'e1', data }, 'wallet', recordedAt)).toEqual({ _id: 'e1', ...data, at, service: 'wallet', recordedAt });
});

describe('the cursor', () => {
  test('round-trips the last entry’s time and id', () => {
    expect(decodeCursor(encodeCursor({ at, _id: 'e1' }))).toEqual({ at, id: 'e1' });
  });
  test.each([
    '',
    'bm90LWEtY3Vyc29y',
    Buffer.from('yesterday|e1').toString('base64url'),
    Buffer.from(`${at.toISOString()}|`).toString('base64url'),
  ])('one not of this log is 422 on cursor: %p', (cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(AppError);
    try {
      decodeCursor(cursor);
    } catch (err) {
      expect((err as AppError).status).toBe(422);
    }
  });
  test('the next page starts strictly after the cursor (time, then id, newest first)', () => {
    expect(auditFilter({ actorId: 'a1' }, { at, id: 'e1' })).toEqual({ actorId: 'a1', after: { at, id: 'e1' } });
  });
});

describe('the filters', () => {
  test('each one given is a condition; the range is [from, to)', () => {
    expect(
      auditFilter({
        action: 'payout.reject',
        targetType: 'payout',
        targetId: 'X',
        from: '2026-11-01T00:00:00.000Z',
        to: '2026-12-01T00:00:00.000Z',
      }),
    ).toEqual({
      action: 'payout.reject',
      targetType: 'payout',
      targetId: 'X',
      from: new Date('2026-11-01T00:00:00.000Z'),
      to: new Date('2026-12-01T00:00:00.000Z'),
    });
    expect(auditFilter({})).toEqual({});
  });
  test('a range ending at or before its start is 422', () => {
    expect(() => checkRange({ from: '2026-11-02T00:00:00.000Z', to: '2026-11-01T00:00:00.000Z' })).toThrow(AppError);
    expect(() => checkRange({ from: '2026-11-01T00:00:00.000Z', to: '2026-11-01T00:00:00.000Z' })).toThrow(AppError);
    expect(() => checkRange({ from: '2026-11-01T00:00:00.000Z' })).not.toThrow();
  });
});

describe('CSV', () => {
  test.each([
    ['plain', 'plain'],
    ['a, b', '"a, b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['=HYPERLINK("x")', `"'=HYPERLINK(""x"")"`],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@cmd', "'@cmd"],
    [null, ''],
    [{ status: 'Pending' }, '"{""status"":""Pending""}"'],
    [at, at.toISOString()],
  ] as const)('%p → %p', (value, field) => {
    expect(csvField(value)).toBe(field);
  });
  test('a row has the header’s columns, in its order', () => {
    const row = csvRow(entryOf({ id: 'e1', data }, 'wallet', at));
    expect(CSV_HEADER).toBe('id,at,action,actorId,actorRole,targetType,targetId,service,requestId,clientAddress,notes,before,after\r\n');
    expect(row).toBe(
      `e1,${at.toISOString()},payout.approve,a1,admin,payout,MKT-PAY-REQ-1,wallet,req-1,203.0.113.7,"ok, ""checked""","{""status"":""Pending""}","{""status"":""Approved""}"\r\n`,
    );
  });
});
