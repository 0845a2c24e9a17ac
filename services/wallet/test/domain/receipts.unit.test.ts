import type { AuthenticatedUser } from '@mkt/kit/http';
import { receiptableTopUp } from '../../src/domain/receipts';
import type { TopUpDoc } from '../../src/domain/records';

/** Who reads a top-up's receipt, and which top-ups have one, without a database. */
describe('a top-up receipt', () => {
  const user = (id: string, role: AuthenticatedUser['role'] = 'buyer'): AuthenticatedUser => ({
    id,
    ref: `USR-${id}`,
    role,
    email: '',
    name: '',
  });
  const topUp = (status: TopUpDoc['status'], completedAt: Date | null = status === 'Completed' ? new Date() : null) =>
    ({ referenceId: 'MKT-TOP-UP-AAAAAAAA', userId: 'owner', status, completedAt }) as TopUpDoc;

  it('its owner and an admin read a completed one', () => {
    expect(receiptableTopUp(user('owner'), topUp('Completed')).referenceId).toBe('MKT-TOP-UP-AAAAAAAA');
    expect(receiptableTopUp(user('someone', 'admin'), topUp('Completed')).status).toBe('Completed');
  });

  it('to anyone else it does not exist (404), whatever its state', () => {
    for (const status of ['Completed', 'Processing', 'Failed'] as const)
      expect(() => receiptableTopUp(user('other', 'seller'), topUp(status))).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => receiptableTopUp(user('owner'), null)).toThrow(expect.objectContaining({ status: 404 }));
  });

  it('one not completed has none: 409 invalid_state', () => {
    for (const status of ['Processing', 'Failed', 'Cancelled', 'Expired'] as const)
      expect(() => receiptableTopUp(user('owner'), topUp(status))).toThrow(expect.objectContaining({ status: 409, code: 'invalid_state' }));
    expect(() => receiptableTopUp(user('owner'), topUp('Completed', null))).toThrow(expect.objectContaining({ status: 409 }));
  });
});
