import { backfilledLinks, chainKeyOf, genesisHead, nextLink } from '../../src/domain/ledger-chain';
import { defaultEarningsFrom, phaseOf, summarizeEarnings, type OpenHold } from '../../src/domain/earnings';
import { csvCell, csvHeader, csvRow } from '../../src/domain/statement-csv';
import type { LedgerEntry } from '../../src/domain/records';

/** The ledger's chain (README "Statement") and the statement's CSV, without a database. */
describe('the ledger chain', () => {
  const entry = (availableDeltaMinor: number, heldDeltaMinor = 0, createdAt = '2026-11-20T10:00:00.000Z'): LedgerEntry => ({
    id: `op-${availableDeltaMinor}-${heldDeltaMinor}-${createdAt}`,
    walletId: 'w1',
    type: 'topup_credit',
    availableDeltaMinor,
    heldDeltaMinor,
    reference: 'r',
    createdAt,
  });

  test('the next link: the next place, the head’s balances plus the deltas, a unique key of wallet and place', () => {
    const head = { seq: 7, availableAfterMinor: 100_00, heldAfterMinor: 30_00, postedAt: new Date('2026-11-20T10:00:00Z') };
    const now = new Date('2026-11-20T10:00:05Z');
    expect(nextLink(entry(-25_00, 25_00), head, now)).toEqual({
      seq: 8,
      chainKey: 'w1:8',
      availableAfterMinor: 75_00,
      heldAfterMinor: 55_00,
      postedAt: now,
    });
  });

  test('postedAt never goes back along the chain: a clock behind the head’s writes the head’s time', () => {
    const head = { seq: 1, availableAfterMinor: 0, heldAfterMinor: 0, postedAt: new Date('2026-11-20T10:00:05Z') };
    expect(nextLink(entry(1), head, new Date('2026-11-20T10:00:04Z')).postedAt).toEqual(head.postedAt);
  });

  test('a chain starts at place 1 from what the entries written before it sum to', () => {
    expect(nextLink(entry(5_00), genesisHead(30_00, 10_00), new Date())).toMatchObject({
      seq: 1,
      availableAfterMinor: 35_00,
      heldAfterMinor: 10_00,
    });
  });

  test('the backfill numbers older entries 0, −1, … back from the newest, each with the running balances', () => {
    const links = backfilledLinks([entry(50_00, 0, '2026-11-01T00:00:00.000Z'), entry(-20_00, 20_00, '2026-11-02T00:00:00.000Z')]);
    expect(
      links.map(({ seq, chainKey, availableAfterMinor, heldAfterMinor }) => ({ seq, chainKey, availableAfterMinor, heldAfterMinor })),
    ).toEqual([
      { seq: -1, chainKey: chainKeyOf('w1', -1), availableAfterMinor: 50_00, heldAfterMinor: 0 },
      { seq: 0, chainKey: chainKeyOf('w1', 0), availableAfterMinor: 30_00, heldAfterMinor: 20_00 },
    ]);
    expect(links[1]!.postedAt).toEqual(new Date('2026-11-02T00:00:00.000Z'));
    expect(backfilledLinks([])).toEqual([]);
  });
});

describe('the statement’s CSV', () => {
  test.each([
    [42, '42'],
    [-1500, '-1500'],
    [null, ''],
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\r\nlines', '"two\r\nlines"'],
    ['=HYPERLINK("x")', `"'=HYPERLINK(""x"")"`],
    ['+1', "'+1"],
    ['-2', "'-2"],
    ['@SUM(A1)', "'@SUM(A1)"],
  ])('cell %p → %p (quoted as RFC 4180 says, never a formula)', (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });

  test('a header row, then one CRLF-ended row per entry in the header’s order', () => {
    expect(csvHeader()).toBe(
      'id,postedAt,type,reference,currency,availableDeltaMinor,heldDeltaMinor,availableAfterMinor,heldAfterMinor\r\n',
    );
    expect(
      csvRow({
        id: 'topup:1:credit',
        postedAt: '2026-11-20T10:00:00.000Z',
        type: 'topup_credit',
        reference: 'MKT-TOP-UP-7Q2M9XKD',
        currency: 'ETB',
        availableDeltaMinor: 300_00,
        heldDeltaMinor: 0,
        availableAfterMinor: null,
        heldAfterMinor: null,
      }),
    ).toBe('topup:1:credit,2026-11-20T10:00:00.000Z,topup_credit,MKT-TOP-UP-7Q2M9XKD,ETB,30000,0,,\r\n');
  });
});

describe('a seller’s earnings', () => {
  const now = new Date('2026-11-20T12:00:00Z');
  const settlement = (captureMinor: number, feeMinor: number) => ({
    kind: 'capture' as const,
    refundMinor: 0,
    captureMinor,
    feeMinor,
    decidedAt: now,
  });
  const open = (fields: Partial<OpenHold>): OpenHold => ({
    status: 'Held',
    amountMinor: 100_00,
    endsAt: null,
    settlement: null,
    credit: 'none',
    consultationId: 'con_a',
    ...fields,
  });

  test.each([
    ['held, its slot ahead', open({ endsAt: new Date('2026-11-21T00:00:00Z') }), 'ahead', 100_00],
    ['held, no slot end known', open({}), 'ahead', 100_00],
    ['held, its slot over, nothing decided', open({ endsAt: new Date('2026-11-20T11:00:00Z') }), 'settling', 100_00],
    ['a capture decided, waiting: the seller’s part', open({ settlement: settlement(100_00, 10_00) }), 'settling', 90_00],
    [
      'settling, the credit not yet done',
      open({ status: 'Settling', settlement: settlement(100_00, 0), credit: 'pending' }),
      'settling',
      100_00,
    ],
    [
      'settling, the credit done (in the ledger)',
      open({ status: 'Settling', settlement: settlement(100_00, 0), credit: 'done' }),
      'none',
      0,
    ],
    [
      'refunded in full: nothing to the seller',
      open({ settlement: { ...settlement(0, 0), kind: 'cancel', refundMinor: 100_00 } }),
      'none',
      0,
    ],
  ])('%s → %s %p', (_name, hold, phase, minor) => {
    expect(phaseOf(hold, now)).toEqual({ phase, minor });
  });

  test('totals, per consultation (null: holds from before it was named) and per month, from holds and ledger entries', () => {
    const summary = summarizeEarnings(
      [
        open({ endsAt: new Date('2026-12-01T00:00:00Z') }),
        open({ consultationId: null, endsAt: new Date('2026-11-01T00:00:00Z'), amountMinor: 7_00 }),
      ],
      [
        {
          type: 'booking_capture',
          availableDeltaMinor: 90_00,
          heldDeltaMinor: 0,
          postedAt: new Date('2026-10-31T23:59:59Z'),
          consultationId: 'con_a',
        },
        {
          type: 'booking_capture',
          availableDeltaMinor: 40_00,
          heldDeltaMinor: 0,
          postedAt: new Date('2026-11-01T00:00:00Z'),
          consultationId: 'con_b',
        },
        { type: 'payout_settle', availableDeltaMinor: 0, heldDeltaMinor: -50_00, postedAt: new Date('2026-11-02T00:00:00Z') },
      ],
      now,
    );
    expect(summary.totals).toEqual({ aheadMinor: 100_00, settlingMinor: 7_00, earnedMinor: 130_00, paidOutMinor: 50_00 });
    expect(summary.byConsultation).toEqual([
      { consultationId: null, aheadMinor: 0, settlingMinor: 7_00, earnedMinor: 0 },
      { consultationId: 'con_a', aheadMinor: 100_00, settlingMinor: 0, earnedMinor: 90_00 },
      { consultationId: 'con_b', aheadMinor: 0, settlingMinor: 0, earnedMinor: 40_00 },
    ]);
    expect(summary.byMonth).toEqual([
      { month: '2026-10', earnedMinor: 90_00, paidOutMinor: 0 },
      { month: '2026-11', earnedMinor: 40_00, paidOutMinor: 50_00 },
    ]);
  });

  test('the default window: the last 12 calendar months, UTC', () => {
    expect(defaultEarningsFrom(new Date('2026-11-20T12:00:00Z'))).toEqual(new Date('2025-12-01T00:00:00Z'));
    expect(defaultEarningsFrom(new Date('2026-01-31T23:00:00Z'))).toEqual(new Date('2025-02-01T00:00:00Z'));
  });
});
