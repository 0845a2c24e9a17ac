import type { PayoutStatus } from '@mkt/contracts';
import type { AuthenticatedUser } from '@mkt/kit/http';
import { fourEyesBlock, HOLD_OVERDUE_AFTER_MS, isOverdueHold, nextMovesOf } from '../../src/domain/admin-audit';
import { decideMove } from '../../src/domain/payouts';
import type { BookingHoldDoc, PayoutDoc } from '../../src/domain/records';

/** The admins' queue rules and the audit entry a move carries, without a database. */
const user = (id: string, role: AuthenticatedUser['role']): AuthenticatedUser => ({
  id,
  ref: `MKT-USR-${id}`,
  role,
  email: 'a@b.c',
  name: id,
});
const admin = user('admin-1', 'admin');
const owner = user('owner', 'seller');
const now = new Date('2026-11-24T10:00:00.000Z');
const context = { requestId: 'req-1', clientAddress: '203.0.113.7' };
const payout = (status: PayoutStatus, over: Partial<PayoutDoc> = {}): PayoutDoc =>
  ({
    _id: 'p1',
    referenceId: 'MKT-PAY-REQ-1',
    userId: 'owner',
    requestedBy: 'owner',
    amountMinor: 150_00,
    currency: 'ETB',
    status,
    history: [],
    ...over,
  }) as PayoutDoc;

describe('the payout queue', () => {
  test.each([
    ['Pending', ['approve', 'reject']],
    ['Approved', ['process']],
    ['Processing', ['complete', 'fail']],
    ['Completed', []],
    ['Rejected', []],
    ['Cancelled', []],
    ['Failed', []],
  ] as const)('from %s an admin may next: %p', (status, moves) => {
    expect(nextMovesOf(status)).toEqual(moves);
  });

  test.each([
    ['another admin', { userId: 'owner', requestedBy: 'owner' }, null],
    ['the admin’s own wallet', { userId: 'admin-1', requestedBy: 'admin-1' }, 'Another admin must move a payout you requested'],
    ['requested by the admin', { userId: 'owner', requestedBy: 'admin-1' }, 'Another admin must move a payout you requested'],
  ] as const)('four eyes, %s: %p', (_name, who, blocked) => {
    expect(fourEyesBlock(admin, who)).toBe(blocked);
  });
});

describe('overdue holds', () => {
  const hold = (status: BookingHoldDoc['status'], endsAt: Date | null, dueAt: Date | null = null) => ({ status, endsAt, dueAt });
  const past = (ms: number) => new Date(now.getTime() - ms);
  test.each([
    ['Held, past the grace', hold('Held', past(HOLD_OVERDUE_AFTER_MS + 1)), true],
    ['Settling, past the grace', hold('Settling', past(HOLD_OVERDUE_AFTER_MS + 1)), true],
    ['Held, within the grace', hold('Held', past(HOLD_OVERDUE_AFTER_MS - 1)), false],
    ['Held, no slot end known', hold('Held', null), false],
    ['Settled long ago', hold('Settled', past(10 * HOLD_OVERDUE_AFTER_MS)), false],
    [
      'a no-show’s capture inside its dispute window',
      hold('Settling', past(2 * HOLD_OVERDUE_AFTER_MS), new Date(now.getTime() + 1)),
      false,
    ],
    ['a capture its sweep never carried out', hold('Settling', past(3 * HOLD_OVERDUE_AFTER_MS), past(2 * HOLD_OVERDUE_AFTER_MS)), true],
  ] as const)('%s: %p', (_name, record, overdue) => {
    expect(isOverdueHold(record, now)).toBe(overdue);
  });
});

describe('the audit entry of a payout move', () => {
  test('an admin’s move carries one entry: who, what, the request, before and after', () => {
    const decision = decideMove(admin, payout('Pending'), 'approve', 'Account checked', 'req-1', now, context);
    expect(decision.audit).toMatchObject({
      type: 'wallet.admin_action.recorded',
      correlationId: 'req-1',
      data: {
        action: 'payout.approve',
        actorId: 'admin-1',
        actorRole: 'admin',
        targetType: 'payout',
        targetId: 'MKT-PAY-REQ-1',
        at: now.toISOString(),
        requestId: 'req-1',
        clientAddress: '203.0.113.7',
        before: { status: 'Pending' },
        after: { status: 'Approved', adminNotes: 'Account checked' },
        notes: 'Account checked',
      },
    });
  });

  test('the owner’s cancel is not an admin action: no entry', () => {
    expect(decideMove(owner, payout('Pending'), 'cancel', undefined, 'req-1', now, context).audit).toBeNull();
  });

  test('an admin’s cancel is', () => {
    expect(decideMove(admin, payout('Pending'), 'cancel', undefined, 'req-1', now, context).audit?.data).toMatchObject({
      action: 'payout.cancel',
      before: { status: 'Pending' },
      after: { status: 'Cancelled' },
    });
  });
});
