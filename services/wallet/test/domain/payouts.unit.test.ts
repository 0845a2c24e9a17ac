import type { PayoutStatus } from '@mkt/contracts';
import type { AuthenticatedUser } from '@mkt/kit/http';
import { Forbidden, InvalidState } from '@mkt/kit/domain';
import { PAYOUT_TRANSITIONS, payoutTransition, type PayoutMove } from '../../src/domain/payout-states';
import { checkPayoutFunds, checkPayoutRequest, decideMove, payoutFinishOp, payoutHoldOp } from '../../src/domain/payouts';
import type { PayoutDoc } from '../../src/domain/records';
import { BadAccountNumber, InsufficientFunds, UnknownBank } from '../../src/domain/errors';
import { payoutStatusView } from '../../src/http/views';

/** The payout rules (README "States", "Four eyes on payouts"), without a database. */
const user = (id: string, role: AuthenticatedUser['role'] = 'buyer'): AuthenticatedUser => ({
  id,
  ref: `MKT-USR-${id}`,
  role,
  email: 'a@b.c',
  name: id,
});
const owner = user('owner');
const admin = user('admin-1', 'admin');
const now = new Date('2026-11-24T10:00:00.000Z');

const payout = (status: PayoutStatus, over: Partial<PayoutDoc> = {}): PayoutDoc => ({
  _id: 'p1',
  referenceId: 'MKT-PAY-REQ-1',
  walletId: 'w1',
  userId: 'owner',
  amountMinor: 150_00,
  currency: 'ETB',
  bankCode: 'CBE',
  accountNumber: '1000123456789',
  accountName: 'Abebe',
  reason: 'Earnings',
  status,
  adminNotes: null,
  processedAt: null,
  hold: 'done',
  finish: 'none',
  requestedBy: 'owner',
  history: [],
  pendingEvents: [],
  createdAt: now,
  updatedAt: now,
  ...over,
});

const STATUSES: PayoutStatus[] = ['Pending', 'Approved', 'Rejected', 'Cancelled', 'Processing', 'Completed', 'Failed'];
const MOVES = Object.keys(PAYOUT_TRANSITIONS) as PayoutMove[];

describe('the payout state machine', () => {
  const allowed: Record<string, PayoutStatus> = {
    'approve Pending': 'Approved',
    'reject Pending': 'Rejected',
    'cancel Pending': 'Cancelled',
    'process Approved': 'Processing',
    'complete Processing': 'Completed',
    'fail Processing': 'Failed',
  };
  const cases = MOVES.flatMap((move) => STATUSES.map((status) => [move, status, allowed[`${move} ${status}`] ?? null] as const));

  test.each(cases)('%s from %s → %s', (move, status, to) => {
    expect(payoutTransition(move, status)?.to ?? null).toBe(to);
    const decide = () => decideMove(move === 'cancel' ? owner : admin, payout(status), move, undefined, 'c', now);
    if (to === null) expect(decide).toThrow(InvalidState);
    else expect(decide().set.status).toBe(to);
  });

  test.each([
    ['approve', 'Pending', undefined],
    ['process', 'Approved', undefined],
    ['reject', 'Pending', 'pending'],
    ['cancel', 'Pending', 'pending'],
    ['complete', 'Processing', 'pending'],
    ['fail', 'Processing', 'pending'],
  ] as const)('%s from %s: the hold’s end owed: %s', (move, status, finish) => {
    const decision = decideMove(move === 'cancel' ? owner : admin, payout(status), move, 'checked', 'c', now);
    expect(decision.set.finish).toBe(finish);
    // An admin's move is processed then, with the notes; the owner's cancel is not.
    expect(decision.set.processedAt).toEqual(move === 'cancel' ? undefined : now);
    expect(decision.set.adminNotes).toBe(move === 'cancel' ? undefined : 'checked');
    expect(decision.from).toBe(status);
    expect(decision.event.data).toMatchObject({ reference: 'MKT-PAY-REQ-1', status: decision.set.status });
    expect(decision.history).toMatchObject({ action: move, from: status, to: decision.set.status, at: now });
  });
});

describe('who may move a payout (four eyes)', () => {
  test.each([
    ['the owner cancels', owner, 'cancel', payout('Pending'), null],
    ['an admin cancels', admin, 'cancel', payout('Pending'), null],
    ['someone else cancels', user('x'), 'cancel', payout('Pending'), Forbidden],
    ['the owner approves', owner, 'approve', payout('Pending'), Forbidden],
    ['an admin approves', admin, 'approve', payout('Pending'), null],
    ['an admin approves their own', admin, 'approve', payout('Pending', { userId: 'admin-1' }), Forbidden],
    ['an admin approves one they requested', admin, 'approve', payout('Pending', { requestedBy: 'admin-1' }), Forbidden],
  ] as const)('%s: %p', (_name, who, move, record, refusal) => {
    const decide = () => decideMove(who, record, move, undefined, 'c', now);
    if (refusal) expect(decide).toThrow(refusal);
    else expect(decide).not.toThrow();
  });
});

describe('a payout request', () => {
  test.each([
    ['CBE', '1000123456789', 'MKT-USR-owner', null],
    ['cbe', '1000123456789', 'MKT-USR-owner', null],
    ['NOPE', '1000123456789', 'MKT-USR-owner', UnknownBank],
    ['CBE', '100012345678', 'MKT-USR-owner', BadAccountNumber],
    ['CBE', '10001234567a9', 'MKT-USR-owner', BadAccountNumber],
    ['TELEBIRR', '0911223344', 'MKT-USR-owner', null],
    ['CBE', '1000123456789', 'MKT-USR-someone', Forbidden], // only the owner asks for their money
  ] as const)('bank %s, account %s, for %s: %p', (bankCode, accountNumber, userRef, refusal) => {
    const check = () => checkPayoutRequest(owner, userRef, { bankCode, accountNumber });
    if (refusal) expect(check).toThrow(refusal);
    else expect(check().code).toBe(bankCode.toUpperCase());
  });

  test('needs the amount available', () => {
    expect(() => checkPayoutFunds({ availableMinor: 149_99 }, 150_00)).toThrow(InsufficientFunds);
    expect(() => checkPayoutFunds({ availableMinor: 150_00 }, 150_00)).not.toThrow();
  });

  test.each([
    ['Completed', 'payout:p1:settle', 'payout_settle', 0],
    ['Rejected', 'payout:p1:release', 'payout_release', 150_00],
    ['Cancelled', 'payout:p1:release', 'payout_release', 150_00],
    ['Failed', 'payout:p1:release', 'payout_release', 150_00],
  ] as const)('a %s payout’s hold ends by %s', (status, opId, type, available) => {
    expect(payoutFinishOp(payout(status))).toEqual({
      opId,
      type,
      availableDeltaMinor: available,
      heldDeltaMinor: -150_00,
      reference: 'MKT-PAY-REQ-1',
    });
  });

  test('its hold moves the amount from available to held', () => {
    expect(payoutHoldOp(payout('Pending'))).toMatchObject({ opId: 'payout:p1:hold', availableDeltaMinor: -150_00, heldDeltaMinor: 150_00 });
  });
});

describe('the audit trail as each viewer sees it', () => {
  const moved = payout('Approved', {
    history: [
      { action: 'request', from: null, to: 'Pending', byUserId: 'owner', byRole: 'buyer', at: now, notes: null },
      { action: 'approve', from: 'Pending', to: 'Approved', byUserId: 'admin-1', byRole: 'admin', at: now, notes: 'ok' },
    ],
  });

  test.each([
    ['the owner', owner, ['owner', null]],
    ['an admin', user('admin-2', 'admin'), ['owner', 'admin-1']],
  ] as const)('%s sees the movers as %p', (_name, viewer, ids) => {
    const view = payoutStatusView(viewer, moved);
    expect(view.history.map((entry) => entry.byUserId)).toEqual(ids);
    expect(view.history.map((entry) => entry.byRole)).toEqual(['buyer', 'admin']);
  });
});
