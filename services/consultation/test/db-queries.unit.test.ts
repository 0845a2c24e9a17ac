import { makeEvent } from '@mkt/contracts';
import { changeUpdate, guardFilter } from '../src/db/consultation.repository';

/** The domain's guards and changes as the driver's filter and update: what the repository sends, without a database. */
describe('a consultation write', () => {
  test('the guard: the status, the pending revision by id or none, the version (0: none stored)', () => {
    expect(guardFilter('con_1', { currentStatus: 'Approved', pendingRevisionId: null })).toEqual({
      _id: 'con_1',
      currentStatus: 'Approved',
      pendingRevision: null,
    });
    expect(guardFilter('con_1', { currentStatus: 'Approved', pendingRevisionId: 'rev-1', version: 3 })).toEqual({
      _id: 'con_1',
      currentStatus: 'Approved',
      'pendingRevision.id': 'rev-1',
      version: 3,
    });
    expect(guardFilter('con_1', { currentStatus: 'Pending', version: 0 })).toEqual({
      _id: 'con_1',
      currentStatus: 'Pending',
      version: { $exists: false },
    });
  });

  test('the change: its fields set, the revision unset, the version moved on, its entry in the outbox', () => {
    expect(changeUpdate({ set: { title: 'New' } })).toEqual({ $set: { title: 'New' }, $inc: { version: 1 } });
    expect(changeUpdate({ dropRevision: true })).toEqual({ $unset: { pendingRevision: '' }, $inc: { version: 1 } });
    const event = makeEvent(
      'consultation.admin_action.recorded',
      {
        actorId: 'a1',
        actorRole: 'admin',
        action: 'consultation.approve',
        targetType: 'consultation',
        targetId: 'con_1',
        at: '2026-11-24T10:00:00.000Z',
        requestId: 'req-1',
        clientAddress: null,
        notes: null,
        before: null,
        after: null,
      },
      { source: 'consultation' },
    );
    expect(changeUpdate({ set: { currentStatus: 'Approved' }, event })).toEqual({
      $set: { currentStatus: 'Approved' },
      $inc: { version: 1 },
      $push: { pendingEvents: event },
    });
  });
});
