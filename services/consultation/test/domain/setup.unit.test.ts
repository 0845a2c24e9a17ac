import { VisibilityStatusBody } from '@mkt/contracts';
import { isListed, subjectOf, visibleTo } from '../../src/domain/access';
import { decideApprove, decideEdit } from '../../src/domain/consultation-edits';
import { changeUpdate } from '../../src/db/consultation.repository';
import { ratingSummary, countsInRating } from '../../src/domain/ratings';
import type { VisibilityRuleSetDoc } from '../../src/domain/records';
import { assertZone, utilization, utilizationWindow } from '../../src/domain/rule-sets';
import { decideVisibility, ruleMatches, ruleSetInForce } from '../../src/domain/visibility';
import { contextOf, visibilityVerdicts } from '../../src/domain/visibility-rule-sets';
import { admin, buyer, consultation, refusal, ruleSet, seller, T0, user } from './unit-fixtures';

// Hidden consultations, named users, visibility, moderation, rule-set usage and ratings (README).

describe('hidden consultations exist only for their seller and admins', () => {
  const hidden = consultation({ currentStatus: 'Pending', visibility: 'Hidden' });
  test.each([
    ['a listed one, anonymous', undefined, consultation(), undefined],
    ['a hidden one, anonymous', undefined, hidden, { status: 404, code: 'not_found' }],
    ['a hidden one, a buyer', buyer, hidden, { status: 404, code: 'not_found' }],
    ['a hidden one, another seller', user('seller', 'other'), hidden, { status: 404, code: 'not_found' }],
    ['a hidden one, its seller', seller, hidden, undefined],
    ['a hidden one, an admin', admin, hidden, undefined],
    ['none', buyer, null, { status: 404, code: 'not_found' }],
  ] as const)('%s', (_case, who, record, expected) => {
    expect(refusal(() => visibleTo(who, record))).toEqual(expected);
  });
  test('listed = Approved and Published', () => {
    expect([isListed(consultation()), isListed({ currentStatus: 'Approved', visibility: 'Hidden' })]).toEqual([true, false]);
  });
});

describe('named users: only oneself, an admin anyone', () => {
  test.each([
    ['nobody named', buyer, undefined, { key: buyer.id, self: true, role: 'buyer' }],
    ['oneself by id', buyer, buyer.id, { key: buyer.id, self: true, role: 'buyer' }],
    ['oneself by USR reference', buyer, buyer.ref, { key: buyer.id, self: true, role: 'buyer' }],
    ['an admin naming someone', admin, 'someone', { key: 'someone', self: false }],
  ] as const)('%s', (_case, who, userId, subject) => {
    expect(subjectOf(who, userId)).toEqual(subject);
  });
  test('naming another user is 403, whoever they are', () => {
    expect(refusal(() => subjectOf(buyer, 'someone'))).toEqual({ status: 403, code: 'forbidden' });
  });

  // userId is a uuid or a USR reference (the schema's).
  const me = { ...buyer, id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427' };
  const someone = '6fa459ea-ee8a-4ca4-894e-db77e160355e';
  const status = (fields: object) => VisibilityStatusBody.parse({ consultationIds: ['con_1'], context: {}, ...fields });
  test.each([
    ['no userId: the context as sent (a preview)', buyer, { context: { userType: 'seller' } }, { userType: 'seller' }],
    ['oneself: the role from the token', me, { userId: me.id, context: { location: 'ET' } }, { userType: 'buyer', location: 'ET' }],
    ['an admin naming someone: the context as stated', admin, { userId: someone, context: { userType: 'seller' } }, { userType: 'seller' }],
  ] as const)('%s', (_case, who, fields, context) => {
    expect(contextOf(who, status(fields))).toEqual(context);
  });
  test('oneself with another userType is 422 on context.userType', () => {
    expect(refusal(() => contextOf(me, status({ userId: me.id, context: { userType: 'seller' } })))).toEqual({
      status: 422,
      code: 'invalid',
      path: 'context.userType',
    });
  });
});

describe('visibility rules', () => {
  const set = (fields: Partial<VisibilityRuleSetDoc> = {}): VisibilityRuleSetDoc => ({
    _id: 'vrs_1',
    referenceId: 'VRS_1',
    sellerId: seller.id,
    name: 'Local',
    description: '',
    isDefault: true,
    isActive: true,
    validFrom: new Date(T0.getTime() - 1),
    validTo: new Date(T0.getTime() + 1),
    visibilityRules: [
      { type: 'location', condition: 'ET, KE', action: 'show', priority: 2 },
      { type: 'user_type', condition: 'seller', action: 'hide', priority: 1 },
      { type: 'location', condition: '*', action: 'hide', priority: 3 },
    ],
    createdAt: T0,
    ...fields,
  });
  test.each([
    ['in force', set(), true],
    ['not default', set({ isDefault: false }), false],
    ['inactive', set({ isActive: false }), false],
    ['not yet valid', set({ validFrom: new Date(T0.getTime() + 1) }), false],
    ['expired', set({ validTo: new Date(T0.getTime() - 1) }), false],
  ] as const)('a rule set %s', (_case, candidate, inForce) => {
    expect(ruleSetInForce([candidate], T0) !== null).toBe(inForce);
  });
  test.each([
    ['a listed value, without case', { type: 'location', condition: 'ET, KE', action: 'show', priority: 1 }, { location: ' ke ' }, true],
    ['another value', { type: 'location', condition: 'ET, KE', action: 'show', priority: 1 }, { location: 'US' }, false],
    ['any', { type: 'user_type', condition: '*', action: 'show', priority: 1 }, {}, true],
    ['no value in the context', { type: 'user_type', condition: 'buyer', action: 'show', priority: 1 }, {}, false],
  ] as const)('a condition matches %s: %s', (_case, rule, context, matches) => {
    expect(ruleMatches(rule, context)).toBe(matches);
  });
  test.each([
    ['not listed', false, set(), {}, { visible: false, reason: 'Not approved and published' }],
    ['no rule set in force', true, null, {}, { visible: true, reason: 'Approved and published; no visibility rule set in force' }],
    ['the lowest priority first', true, set(), { userType: 'seller', location: 'ET' }, { visible: false }],
    ['a show rule', true, set(), { userType: 'buyer', location: 'ET' }, { visible: true }],
    ['the catch-all', true, set(), { userType: 'buyer', location: 'US' }, { visible: false }],
    ['no rule matching', true, set({ visibilityRules: [] }), {}, { visible: true, reason: 'No rule of "Local" matched' }],
  ] as const)('%s', (_case, listed, inForce, context, verdict) => {
    expect(decideVisibility(listed, inForce, context)).toMatchObject(verdict);
  });
  test('an unlisted consultation is "No such consultation" to all but its seller and admins; keys by id or reference', () => {
    const hidden = consultation({ _id: 'con_2', referenceId: 'MKT-CON-2', visibility: 'Hidden' });
    const keys = ['MKT-CON-1', 'con_2', 'con_none'];
    expect(visibilityVerdicts(buyer, keys, [consultation(), hidden], [], {}, T0)).toEqual([
      { consultationId: 'MKT-CON-1', visible: true, reason: 'Approved and published; no visibility rule set in force' },
      { consultationId: 'con_2', visible: false, reason: 'No such consultation' },
      { consultationId: 'con_none', visible: false, reason: 'No such consultation' },
    ]);
    expect(visibilityVerdicts(seller, ['con_2'], [hidden], [], {}, T0)).toEqual([
      { consultationId: 'con_2', visible: false, reason: 'Not approved and published' },
    ]);
  });
});

describe('moderation: approving names what the admin read', () => {
  const revision = { id: 'rev-1', submittedAt: T0, changes: { title: 'New' } };
  test.each([
    ['a Pending one at the version read', {}, { version: 3 }, { revised: false, guard: { currentStatus: 'Pending', version: 3 } }],
    ['a Pending one from before versions (0)', { version: undefined }, { version: 0 }, { guard: { version: 0 } }],
    [
      'a revision, named by id',
      { pendingRevision: revision },
      { revisionId: 'rev-1' },
      { revised: true, guard: { pendingRevisionId: 'rev-1' } },
    ],
    [
      'a revision, named by version',
      { pendingRevision: revision },
      { version: 3 },
      { revised: true, guard: { pendingRevisionId: 'rev-1', version: 3 } },
    ],
  ] as const)('%s', (_case, fields, named, write) => {
    const status = 'pendingRevision' in fields ? 'Approved' : 'Pending';
    const decided = decideApprove(consultation({ currentStatus: status, version: 3, ...fields }), named);
    expect(decided).toMatchObject(write);
    // Every approval moves the version on (the store's write of every change), so the same name never approves twice.
    expect(changeUpdate(decided.change).$inc).toEqual({ version: 1 });
  });
  test.each([
    ['nothing to approve', {}, { version: 3 }, { status: 409, code: 'invalid_state' }],
    ['a Pending one, no version named', { currentStatus: 'Pending' }, {}, { status: 422, code: 'invalid', path: 'version' }],
    ['a Pending one edited since the read', { currentStatus: 'Pending' }, { version: 2 }, { status: 409, code: 'conflict' }],
    ['a revision not named', { pendingRevision: revision }, {}, { status: 422, code: 'invalid', path: 'revisionId' }],
    ['another revision named', { pendingRevision: revision }, { revisionId: 'rev-0' }, { status: 409, code: 'invalid_state' }],
    ['a revision, an older version named', { pendingRevision: revision }, { version: 2 }, { status: 409, code: 'conflict' }],
  ] as const)('refused: %s', (_case, fields, named, expected) => {
    expect(refusal(() => decideApprove(consultation({ version: 3, ...fields }), named))).toEqual(expected);
  });
  test('every edit moves the version on', () => {
    const pending = consultation({ currentStatus: 'Pending', version: 3 });
    const approved = consultation({ version: 3 });
    const fresh = { revisionId: 'rev-2', now: T0 };
    for (const [current, set] of [
      [pending, { description: 'New' }],
      [approved, { description: 'New' }],
      [approved, { duration: 90 }],
      [approved, { title: approved.title }],
    ] as const)
      expect(changeUpdate(decideEdit(current, set, fresh).change).$inc).toEqual({ version: 1 });
  });
});

describe('rule sets and ratings', () => {
  test('utilization: places booked in the next 28 days over the places offered then', () => {
    const window = utilizationWindow(T0);
    expect(window.to.getTime() - window.from.getTime()).toBe(28 * 86_400_000);
    // Every day 09:00–17:00, 60-minute slots of 2 places: 28 × 8 × 2 = 448 places.
    expect(utilization(ruleSet(), [{ duration: 60, capacity: 2 }], 4, window)).toEqual({
      utilization: Math.round((4 / 448) * 10_000) / 10_000,
      shapesCounted: 1,
    });
    expect(utilization(ruleSet(), [], 1, window)).toEqual({ utilization: 0, shapesCounted: 0 });
  });
  test('utilization counts slots once per duration, whatever the consultations of it', () => {
    const window = utilizationWindow(T0);
    // 60-minute slots of 2 + 3 places and 30-minute ones (16 a day) of 1: 28 × (8 × 5 + 16) = 1568.
    const shapes = [
      { duration: 60, capacity: 2 },
      { duration: 30, capacity: 1 },
      { duration: 60, capacity: 3 },
    ];
    expect(utilization(ruleSet(), shapes, 1568, window)).toEqual({ utilization: 1, shapesCounted: 2 });
  });
  test.each([
    ['Africa/Addis_Ababa', undefined],
    ['Mars/Olympus', { status: 422, code: 'invalid', path: 'timezone' }],
  ] as const)('the zone %s', (zone, expected) => {
    expect(refusal(() => assertZone(zone, 'timezone'))).toEqual(expected);
  });
  test.each([
    [[], { averageRating: 0, totalReviews: 0 }],
    [[5, 4], { averageRating: 4.5, totalReviews: 2 }],
    [[5, 4, 4], { averageRating: 4.33, totalReviews: 3 }],
  ] as const)('ratings %j → %j', (ratings, summary) => {
    expect(ratingSummary([...ratings])).toEqual(summary);
  });
  test('a review counts unless it says it does not', () => {
    expect([countsInRating({}), countsInRating({ countsInRating: true }), countsInRating({ countsInRating: false })]).toEqual([
      true,
      true,
      false,
    ]);
  });
});
