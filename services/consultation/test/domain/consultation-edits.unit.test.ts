import type { ConsultationDoc } from '../../src/domain/records';
import { decideEdit } from '../../src/domain/consultation-edits';

const now = new Date('2026-12-01T10:00:00.000Z');
const fresh = { revisionId: 'rev-2', now };

function consultation(fields: Partial<ConsultationDoc> = {}): ConsultationDoc {
  return {
    _id: 'con_k2j4h6g8f0d2s4a6',
    referenceId: 'MKT-CON-K2J4H6G8',
    sellerId: 'seller-1',
    title: 'Career coaching',
    description: 'One hour',
    duration: 60,
    sessionType: 'OneToOne',
    maxCapacity: 1,
    deliveryMode: 'Online',
    timezone: 'Africa/Addis_Ababa',
    language: 'Amharic',
    category: 'Career',
    subcategory: ['CV'],
    tags: ['coaching'],
    ruleSetId: 'rule-set-1',
    pricingId: 'pr_1',
    currentStatus: 'Approved',
    visibility: 'Published',
    averageRating: 0,
    totalReviews: 0,
    createdAt: now,
    updatedAt: now,
    ...fields,
  };
}

describe('decideEdit', () => {
  test('the text of an Approved consultation becomes a pending revision; the live text and updatedAt stay', () => {
    const write = decideEdit(consultation(), { title: 'Pay outside the platform', tags: ['coaching'] }, fresh);
    expect(write).toEqual({
      guard: { currentStatus: 'Approved', pendingRevisionId: null },
      change: { set: { pendingRevision: { id: 'rev-2', submittedAt: now, changes: { title: 'Pay outside the platform' } } } },
      touchesLive: false,
    });
  });

  test('a second edit replaces the revision with one holding both changes, guarded by the one it read', () => {
    const waiting = { id: 'rev-1', submittedAt: now, changes: { title: 'New title' } };
    const write = decideEdit(consultation({ pendingRevision: waiting }), { description: 'New words' }, fresh);
    expect(write.guard).toEqual({ currentStatus: 'Approved', pendingRevisionId: 'rev-1' });
    expect(write.change.set!.pendingRevision).toEqual({
      id: 'rev-2',
      submittedAt: now,
      changes: { title: 'New title', description: 'New words' },
    });
  });

  test('editing back to the live text drops the revision', () => {
    const waiting = { id: 'rev-1', submittedAt: now, changes: { title: 'New title' } };
    expect(decideEdit(consultation({ pendingRevision: waiting }), { title: 'Career coaching' }, fresh).change).toEqual({
      dropRevision: true,
    });
  });

  test('a bookable change sends it back to Pending and Hidden, the text and a waiting revision applied (reviewed with the rest)', () => {
    const waiting = { id: 'rev-1', submittedAt: now, changes: { title: 'New title', description: 'Old wish' } };
    const write = decideEdit(consultation({ pendingRevision: waiting }), { duration: 45, description: 'Latest wish' }, fresh);
    expect(write).toEqual({
      guard: { currentStatus: 'Approved', pendingRevisionId: 'rev-1' },
      change: {
        set: { title: 'New title', description: 'Latest wish', duration: 45, currentStatus: 'Pending', visibility: 'Hidden' },
        dropRevision: true,
      },
      touchesLive: true,
    });
  });

  test('a Pending consultation is edited in place, guarded on still being Pending', () => {
    expect(decideEdit(consultation({ currentStatus: 'Pending', visibility: 'Hidden' }), { title: 'Better' }, fresh)).toEqual({
      guard: { currentStatus: 'Pending', pendingRevisionId: null },
      change: { set: { title: 'Better' } },
      touchesLive: true,
    });
  });

  test('bookable fields sent unchanged keep an Approved consultation listed', () => {
    expect(decideEdit(consultation(), { duration: 60, maxCapacity: 1 }, fresh)).toEqual({
      guard: { currentStatus: 'Approved', pendingRevisionId: null },
      change: { set: { duration: 60, maxCapacity: 1 } },
      touchesLive: false,
    });
  });
});
