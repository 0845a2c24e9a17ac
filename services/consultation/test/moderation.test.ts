import { admin, as, bookingBody, givenOffer, newUser, useConsultationApp, type Offer } from './harness';

const app = useConsultationApp();
const SCAM = 'Pay outside the platform: t.me/scam';

const edit = (offer: Offer, body: object) => as(app, offer.seller)('PUT', `/consultations/${offer.consultationId}`, body);
const approve = (offer: Offer, body?: object) => as(app, admin)('POST', `/consultations/${offer.consultationId}/approve`, body);
const detailAs = async (offer: Offer, user = newUser()) => (await as(app, user)('GET', `/consultations/${offer.consultationId}`)).body.data;
const anonymousDetail = async (offer: Offer) => (await as(app, undefined)('GET', `/consultations/${offer.consultationId}`)).body.data;
const listedTitle = async (offer: Offer) => {
  const res = await as(app, undefined)('GET', '/consultations?limit=100');
  return res.body.data.consultations.find((c: { id: string }) => c.id === offer.consultationId)?.title;
};

describe('an edit of the public text of an approved consultation waits for an admin', () => {
  test('the scam title replayed: the public keeps the approved text until an admin approves the revision it read', async () => {
    const offer = await givenOffer(app);
    const before = await anonymousDetail(offer);

    const edited = await edit(offer, { title: SCAM, tags: ['scam'] });

    expect(edited.status).toBe(200);
    expect(edited.body.message).toBe('Consultation updated; the new text is live once an admin approves it');
    expect(edited.body.data).toMatchObject({ title: 'Career coaching', currentStatus: 'Approved', visibility: 'Published' });
    expect(edited.body.data.pendingRevision).toMatchObject({ changes: { title: SCAM, tags: ['scam'] } });
    // Anyone who is not its seller or an admin: the approved text, nothing of the revision, not even that the record changed.
    for (const seen of [await anonymousDetail(offer), await detailAs(offer, newUser('buyer'))]) {
      expect(seen).toMatchObject({ title: 'Career coaching', tags: ['coaching'], updatedAt: before.updatedAt });
      expect(seen).not.toHaveProperty('pendingRevision');
    }
    expect(await listedTitle(offer)).toBe('Career coaching');
    // Still on the market: booking goes on under the approved text.
    const booked = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer));
    expect(booked.status).toBe(200);
    expect(booked.body.data.consultationTitle).toBe('Career coaching');
    // Its seller and admins see what waits.
    const revision = (await detailAs(offer, offer.seller)).pendingRevision;
    expect(revision).toEqual({ id: expect.any(String), submittedAt: expect.any(String), changes: { title: SCAM, tags: ['scam'] } });
    expect((await detailAs(offer, admin)).pendingRevision).toEqual(revision);

    // The admin approves the revision they read, by its id; without one it is refused.
    const unnamed = await approve(offer);
    expect(unnamed.status).toBe(422);
    expect(unnamed.body.errors[0]).toMatchObject({ path: 'revisionId', code: 'invalid' });
    expect(await listedTitle(offer)).toBe('Career coaching');
    const approved = await approve(offer, { revisionId: revision.id });
    expect(approved.status).toBe(200);
    expect(approved.body.message).toBe('Revision approved');
    expect(await anonymousDetail(offer)).toMatchObject({ title: SCAM, tags: ['scam'], currentStatus: 'Approved' });
    expect((await detailAs(offer, offer.seller)).pendingRevision).toBeNull();
    expect((await approve(offer, { revisionId: revision.id })).status).toBe(409);
  });

  test('a second edit replaces the pending revision (both changes under review), and the admin cannot approve one they did not read', async () => {
    const offer = await givenOffer(app);
    const first = (await edit(offer, { title: 'Career coaching, plainly' })).body.data.pendingRevision;
    const second = (await edit(offer, { description: SCAM })).body.data.pendingRevision;

    expect(second.id).not.toBe(first.id);
    expect(second.changes).toEqual({ title: 'Career coaching, plainly', description: SCAM });
    const stale = await approve(offer, { revisionId: first.id });
    expect(stale.status).toBe(409);
    expect(stale.body.errors[0].code).toBe('invalid_state');
    expect(await anonymousDetail(offer)).toMatchObject({ title: 'Career coaching', description: 'One hour' });

    // Editing back to the live text leaves nothing to review.
    const back = await edit(offer, { title: 'Career coaching', description: 'One hour' });
    expect(back.body.data.pendingRevision).toBeNull();
    expect((await approve(offer, { revisionId: second.id })).status).toBe(409);
  });

  test('a change of a bookable field sends it back to Pending with the waiting text folded in; the next approval covers all of it', async () => {
    const offer = await givenOffer(app);
    await edit(offer, { title: SCAM });

    const rebooked = await edit(offer, { duration: 45 });

    expect(rebooked.body.data).toMatchObject({
      title: SCAM,
      duration: 45,
      currentStatus: 'Pending',
      visibility: 'Hidden',
      pendingRevision: null,
    });
    expect((await as(app, undefined)('GET', `/consultations/${offer.consultationId}`)).status).toBe(404);
    expect(await listedTitle(offer)).toBeUndefined();
    const approved = await approve(offer, { version: rebooked.body.data.version });
    expect(approved.body).toMatchObject({ message: 'Consultation approved', data: { currentStatus: 'Approved', visibility: 'Published' } });
    expect(await anonymousDetail(offer)).toMatchObject({ title: SCAM, duration: 45 });
  });

  test('a Pending consultation’s text is edited in place (nobody sees it before approval), and naming a revision it does not have is 409', async () => {
    const offer = await givenOffer(app, { approve: false });

    const edited = await edit(offer, { title: 'Not yet approved', category: 'Careers' });

    expect(edited.body.data).toMatchObject({ title: 'Not yet approved', currentStatus: 'Pending', pendingRevision: null });
    expect((await approve(offer, { revisionId: '00000000-0000-4000-8000-000000000000' })).status).toBe(409);
    expect((await approve(offer, { version: edited.body.data.version })).status).toBe(200);
    expect(await anonymousDetail(offer)).toMatchObject({ title: 'Not yet approved', category: 'Careers' });
  });

  test('an admin approves the version they read: the seller’s edit after the read does not go live unreviewed', async () => {
    const offer = await givenOffer(app, { approve: false });
    // The admin reads the Pending consultation (its seller and admins see its version)...
    const read = (await as(app, admin)('GET', `/consultations/${offer.consultationId}`)).body.data;
    expect(read).toMatchObject({ title: 'Career coaching', currentStatus: 'Pending', version: 1 });
    expect(await detailAs(offer, offer.seller)).toMatchObject({ version: 1 });
    // ...the seller edits it meanwhile...
    const edited = await edit(offer, { description: SCAM });
    expect(edited.body.data).toMatchObject({ currentStatus: 'Pending', version: 2 });

    // ...and the admin's click on what they read is refused: nothing went live.
    const stale = await approve(offer, { version: read.version });
    expect(stale.status).toBe(409);
    expect(stale.body.errors[0]).toMatchObject({ code: 'conflict' });
    expect(stale.body.message).toMatch(/changed after version 1 was read .*version 2/);
    expect((await as(app, undefined)('GET', `/consultations/${offer.consultationId}`)).status).toBe(404);
    expect(await detailAs(offer, admin)).toMatchObject({ currentStatus: 'Pending', visibility: 'Hidden', version: 2 });
    // Naming no version is refused too (what was read is not known).
    const unnamed = await approve(offer);
    expect(unnamed.status).toBe(422);
    expect(unnamed.body.errors[0]).toMatchObject({ path: 'version', code: 'invalid' });

    // The admin reads again and approves what they now saw: that text is live, and the version moves on.
    const approved = await approve(offer, { version: 2 });
    expect(approved.body).toMatchObject({ message: 'Consultation approved', data: { currentStatus: 'Approved', version: 3 } });
    expect(await anonymousDetail(offer)).toMatchObject({ description: SCAM });
    // The public never sees the version (it would tell a revision is waiting).
    expect(await anonymousDetail(offer)).not.toHaveProperty('version');
  });

  test('racing approvals of one version and an edit: one approval at most, and only of the version it names', async () => {
    const offer = await givenOffer(app, { approve: false });
    const [first, second, edited] = await Promise.all([
      approve(offer, { version: 1 }),
      approve(offer, { version: 1 }),
      edit(offer, { title: 'Raced in' }),
    ]);
    const approvals = [first, second].filter((res) => res.status === 200);
    expect(approvals.length).toBeLessThanOrEqual(1);
    for (const refused of [first, second].filter((res) => res.status !== 200)) expect(refused.status).toBe(409);
    const now = await detailAs(offer, admin);
    if (edited.body.data.currentStatus === 'Pending') {
      // The edit came first and moved the version on: no approval of version 1 applied.
      expect(approvals).toHaveLength(0);
      expect(now).toMatchObject({ currentStatus: 'Pending', title: 'Raced in' });
    } else {
      // The approval came first: the edit waits as a revision, the live text is version 1's.
      expect(approvals).toHaveLength(1);
      expect(now).toMatchObject({
        currentStatus: 'Approved',
        title: 'Career coaching',
        pendingRevision: { changes: { title: 'Raced in' } },
      });
    }
  });

  test('another seller can neither edit nor see the revision', async () => {
    const offer = await givenOffer(app);
    await edit(offer, { title: SCAM });
    const other = newUser('seller');

    expect((await as(app, other)('PUT', `/consultations/${offer.consultationId}`, { title: 'Mine now' })).status).toBe(403);
    expect(await detailAs(offer, other)).not.toHaveProperty('pendingRevision');
    expect((await as(app, offer.seller)('POST', `/consultations/${offer.consultationId}/approve`, {})).status).toBe(403);
  });
});
