import { auditedEdit, decideEdit } from '../../src/domain/consultation-edits';
import { movedFields, sessionMoveAudit } from '../../src/domain/sessions';
import { admin, consultation, seller, session, user } from './unit-fixtures';

/** An admin's edit of another seller's records carries its audit entry in its own write; the owner's none. */
const now = new Date('2026-12-01T10:00:00.000Z');
const context = { requestId: 'req-1', clientAddress: '203.0.113.7' };
const fresh = { revisionId: 'rev-1', now };

test('an admin’s edit: the changed fields before and after and the version, in the edit’s own update', () => {
  const pending = consultation({ currentStatus: 'Pending', visibility: 'Hidden', version: 2, title: 'Old', duration: 60 });
  const plain = decideEdit(pending, { title: 'New', duration: 60 }, fresh);
  const write = auditedEdit(plain, pending, admin, context, now);
  expect(write.guard).toEqual(plain.guard);
  expect(write.change.set).toEqual(plain.change.set);
  expect(write.change.event).toMatchObject({
    type: 'consultation.admin_action.recorded',
    source: 'consultation',
    correlationId: 'req-1',
    data: {
      action: 'consultation.edit',
      actorId: admin.id,
      targetType: 'consultation',
      targetId: pending._id,
      clientAddress: '203.0.113.7',
      before: { title: 'Old', version: 2 },
      after: { title: 'New', version: 3 },
    },
  });
});

test('an admin’s edit of an approved text records the pending revision it makes, by its id', () => {
  const approved = consultation({ currentStatus: 'Approved', visibility: 'Published', version: 5, title: 'Live' });
  const write = auditedEdit(decideEdit(approved, { title: 'Proposed' }, fresh), approved, admin, context, now);
  expect(write.change.event?.data).toMatchObject({
    before: { pendingRevision: null, version: 5 },
    after: { pendingRevision: 'rev-1', version: 6 },
  });
});

test('the owner’s edit (a seller, or an admin on their own record) carries no entry', () => {
  const own = consultation({ title: 'Old' });
  const plain = decideEdit(own, { title: 'New' }, fresh);
  expect(auditedEdit(plain, own, seller, context, now)).toBe(plain);
  const adminsOwn = consultation({ sellerId: admin.id });
  const adminPlain = decideEdit(adminsOwn, { title: 'New' }, fresh);
  expect(auditedEdit(adminPlain, adminsOwn, admin, context, now)).toBe(adminPlain);
});

test('an admin’s session move: the state left and the fields set; the seller’s own move none', () => {
  const scheduled = session();
  const at = new Date(scheduled.startsAt.getTime());
  const set = movedFields(scheduled, 'start', { notes: 'late' }, at);
  expect(sessionMoveAudit(admin, scheduled, 'start', set, context, now)).toMatchObject({
    type: 'consultation.admin_action.recorded',
    data: {
      action: 'session.start',
      targetType: 'session',
      targetId: scheduled._id,
      before: { status: 'Scheduled' },
      after: { status: 'In Progress', notes: 'late', startedAt: at.toISOString() },
    },
  });
  expect(sessionMoveAudit(admin, scheduled, 'no-show', { status: 'No Show' }, context, now)?.data).toMatchObject({
    action: 'session.no_show',
  });
  expect(sessionMoveAudit(user('seller', scheduled.sellerId), scheduled, 'start', set, context, now)).toBeUndefined();
});
