import { isSettlementDue, settlementDueAt } from '../../src/domain/settlement';

describe('when a decided settlement’s money may move', () => {
  const now = new Date('2026-11-23T09:15:00.000Z');
  const slotEnd = new Date('2026-11-23T10:00:00.000Z');

  test('a capture before the slot’s end waits for it', () => {
    expect(settlementDueAt('capture', slotEnd, now)).toEqual(slotEnd);
    expect(isSettlementDue(slotEnd, now)).toBe(false);
    expect(isSettlementDue(slotEnd, slotEnd)).toBe(true);
  });

  test('a capture once the slot is over, or of a hold without endsAt (previous release), moves at once', () => {
    expect(settlementDueAt('capture', now, slotEnd)).toBeNull();
    expect(settlementDueAt('capture', null, now)).toBeNull();
    expect(isSettlementDue(null, now)).toBe(true);
  });

  test('a refund is never deferred: cancel and void move at once', () => {
    expect(settlementDueAt('cancel', slotEnd, now)).toBeNull();
    expect(settlementDueAt('void', slotEnd, now)).toBeNull();
  });
});
