import { auditedApproval, decideApprove } from '../../src/domain/consultation-edits';
import { admin, consultation } from './unit-fixtures';

/** An approval carries its audit entry in its own write: what it names, before and after. */
const now = new Date('2026-12-01T10:00:00.000Z');
const context = { requestId: 'req-1', clientAddress: '203.0.113.7' };

test('a Pending consultation’s approval: status, visibility and version, before and after', () => {
  const pending = consultation({ currentStatus: 'Pending', visibility: 'Hidden', version: 3 });
  const write = auditedApproval(decideApprove(pending, { version: 3 }), pending, admin, context, now);
  // The guard and the approval itself are untouched; the entry rides in the same update.
  expect(write.guard).toEqual(decideApprove(pending, { version: 3 }).guard);
  expect(write.change.set).toEqual({ currentStatus: 'Approved', visibility: 'Published' });
  expect(write.change.event).toMatchObject({
    type: 'consultation.admin_action.recorded',
    source: 'consultation',
    correlationId: 'req-1',
    data: {
      action: 'consultation.approve',
      actorId: admin.id,
      actorRole: 'admin',
      targetType: 'consultation',
      targetId: pending._id,
      at: now.toISOString(),
      requestId: 'req-1',
      clientAddress: '203.0.113.7',
      before: { currentStatus: 'Pending', visibility: 'Hidden', version: 3 },
      after: { currentStatus: 'Approved', visibility: 'Published', version: 4 },
    },
  });
});

test('a revision’s approval: the fields it replaces, old and new', () => {
  const revised = consultation({
    title: 'Old title',
    version: 5,
    pendingRevision: { id: 'rev-1', submittedAt: now, changes: { title: 'New title', tags: ['a'] } },
  });
  const write = auditedApproval(decideApprove(revised, { revisionId: 'rev-1' }), revised, admin, context, now);
  expect(write.change.event?.data).toMatchObject({
    action: 'consultation.approve_revision',
    before: { version: 5, revisionId: 'rev-1', title: 'Old title', tags: revised.tags },
    after: { version: 6, title: 'New title', tags: ['a'] },
  });
});
