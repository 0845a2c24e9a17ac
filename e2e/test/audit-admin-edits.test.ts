import { apiOf, auditEntriesOf, offerConsultation, register, systemWithAdmin, type Session } from './fixtures';
import type { System } from './system';

// An admin's edit through the endpoints a seller uses for their own records, through the gateway
// against every service: the admin's consultation edit and product edit each write exactly one
// entry of the audit log with the fields before and after; the seller's own edits none.
let system: System;
let admin: Session;
systemWithAdmin((started) => ({ system, admin } = started));

const entriesOf = (targetId: string, count: number) => auditEntriesOf(system, admin, targetId, count);

test('an admin’s consultation edit is one entry of the log with before and after; the seller’s own edit none', async () => {
  const seller = await register(system, 'seller');
  const offer = await offerConsultation(system, seller, admin);
  expect((await apiOf(system, seller)('PUT', `/consultations/${offer.id}`, { duration: 45 })).status).toBe(200);
  const requestId = `audit-edit-${Date.now()}`;
  const edited = await apiOf(system, admin)(
    'PUT',
    `/consultations/${offer.id}`,
    { title: 'Retitled by an admin' },
    { 'x-request-id': requestId },
  );
  expect(edited.status).toBe(200);
  // The approval that listed it, then the admin's edit; the seller's own edit (back to Pending) none.
  const entries = await entriesOf(offer.id, 2);
  expect(entries.map((entry) => entry.action)).toEqual(['consultation.edit', 'consultation.approve']);
  expect(entries[0]).toEqual(
    expect.objectContaining({
      actorId: admin.id,
      targetType: 'consultation',
      service: 'consultation',
      requestId,
      before: expect.objectContaining({ title: expect.stringMatching(/^Consultation /), version: 3 }),
      after: expect.objectContaining({ title: 'Retitled by an admin', version: 4 }),
    }),
  );
});

test('an admin’s product edit is one entry of the log with before and after; the seller’s own edit none', async () => {
  const seller = await register(system, 'seller');
  const sellerApi = apiOf(system, seller);
  const created = await sellerApi('POST', '/physical-products/seller-products/', {
    name: 'Coffee beans',
    description: 'Washed',
    sellingPrice: 10,
    stock: 5,
    shippingHandler: 'Seller',
    categoryId: 'MKT-CAT-GROCERY0',
    properties: [{ propertyId: 'MKT-PRO-GRORGANC', value: true }],
  });
  expect(created.status).toBe(200);
  const id: string = created.body.data.id;
  expect((await sellerApi('PATCH', `/physical-products/seller-products/${id}`, { stock: 7 })).status).toBe(200);
  const requestId = `audit-product-${Date.now()}`;
  const edited = await apiOf(system, admin)(
    'PATCH',
    `/physical-products/seller-products/${id}`,
    { name: 'Coffee beans (renamed by an admin)' },
    { 'x-request-id': requestId },
  );
  expect(edited.status).toBe(200);
  expect(await entriesOf(id, 1)).toEqual([
    expect.objectContaining({
      action: 'product.edit',
      actorId: admin.id,
      targetType: 'product',
      service: 'catalog',
      requestId,
      before: { name: 'Coffee beans' },
      after: { name: 'Coffee beans (renamed by an admin)' },
    }),
  ]);
});
