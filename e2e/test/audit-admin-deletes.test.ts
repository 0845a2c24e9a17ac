import {
  apiOf,
  auditEntriesOf,
  book,
  dayFromNow,
  fundedBuyer,
  offerConsultation,
  register,
  slotsOf,
  systemWithAdmin,
  waitFor,
  type Session,
} from './fixtures';
import type { System } from './system';

// An admin's delete of a seller's record, through the gateway: the product's and the customer
// relationship's delete each write exactly one entry of the audit log (who, what, when, from
// which request, what the record was); the owner's own delete and a refused one none.
let system: System;
let admin: Session;
systemWithAdmin((started) => ({ system, admin } = started));

/** The log's entries of one target as they are now. */
const readEntries = (targetId: string) => auditEntriesOf(system, admin, targetId, 0, 0);
const entriesOf = (targetId: string, count: number) => auditEntriesOf(system, admin, targetId, count, 1_500);

const product = {
  name: 'Coffee beans',
  description: 'Washed',
  sellingPrice: 10,
  stock: 5,
  shippingHandler: 'Seller',
  categoryId: 'MKT-CAT-GROCERY0',
  properties: [{ propertyId: 'MKT-PRO-GRORGANC', value: true }],
};

test('an admin’s delete of a seller’s product is one entry of the log; the seller’s own delete none', async () => {
  const seller = await register(system, 'seller');
  const sellerApi = apiOf(system, seller);
  const own: string = (await sellerApi('POST', '/physical-products/seller-products/', product)).body.data.id;
  const id: string = (await sellerApi('POST', '/physical-products/seller-products/', product)).body.data.id;

  expect((await sellerApi('DELETE', `/physical-products/seller-products/${own}`)).status).toBe(200);
  expect((await apiOf(system, await register(system, 'seller'))('DELETE', `/physical-products/seller-products/${id}`)).status).toBe(403);

  const requestId = `audit-delete-product-${Date.now()}`;
  const before = Date.now();
  const deleted = await apiOf(system, admin)('DELETE', `/physical-products/seller-products/${id}`, undefined, {
    'x-request-id': requestId,
  });
  expect(deleted.status).toBe(200);
  // Gone, and a repeat deletes and records nothing.
  expect((await sellerApi('GET', `/physical-products/seller-products/${id}`)).status).toBe(404);
  expect((await apiOf(system, admin)('DELETE', `/physical-products/seller-products/${id}`)).status).toBe(404);

  const entries = await entriesOf(id, 1);
  expect(entries).toEqual([
    expect.objectContaining({
      action: 'product.delete',
      actorId: admin.id,
      actorRole: 'admin',
      targetType: 'product',
      targetId: id,
      service: 'catalog',
      requestId,
      before: expect.objectContaining({ name: 'Coffee beans', sellerId: seller.id, stock: 5, visibility: 'Public' }),
      after: null,
    }),
  ]);
  expect(Date.parse(entries[0]!.at)).toBeGreaterThanOrEqual(before - 1_000);
  expect(Date.parse(entries[0]!.at)).toBeLessThanOrEqual(Date.now());
  expect(await readEntries(own)).toEqual([]);
});

test('an admin’s delete of a customer relationship is one entry of the log; the buyer’s own delete none', async () => {
  const seller = await register(system, 'seller');
  const offer = await offerConsultation(system, seller, admin);
  const slots = slotsOf(offer, dayFromNow(3));
  const buyers = [await fundedBuyer(system, offer.priceMajor), await fundedBuyer(system, offer.priceMajor)];
  for (const [index, buyer] of buyers.entries()) expect((await book(system, buyer, offer, slots[index]!)).status).toBe(200);
  // The confirmed bookings open the pair's relationships (the CRM consumes them).
  const relationships = await waitFor(
    'the bookings’ relationships',
    async () =>
      (await apiOf(system, seller)('GET', `/customers/seller/${seller.id}?limit=100`)).body.data.customers as Array<{
        id: string;
        buyerId: string;
      }>,
    (rows) => buyers.every((buyer) => rows?.some((row) => row.buyerId === buyer.id)),
  );
  const idOf = (buyer: Session) => relationships.find((row) => row.buyerId === buyer.id)!.id;
  const [ownBuyer, buyer] = buyers as [Session, Session];

  expect((await apiOf(system, ownBuyer)('DELETE', `/customers/${idOf(ownBuyer)}`)).status).toBe(200);
  const requestId = `audit-delete-customer-${Date.now()}`;
  const id = idOf(buyer);
  const deleted = await apiOf(system, admin)('DELETE', `/customers/${id}`, undefined, { 'x-request-id': requestId });
  expect(deleted.status).toBe(200);
  expect((await apiOf(system, admin)('GET', `/customers/${id}`)).status).toBe(404);
  expect((await apiOf(system, admin)('DELETE', `/customers/${id}`)).status).toBe(404);

  // The relationship's create by the booking was not an admin's; its delete is the one entry.
  expect(await entriesOf(id, 1)).toEqual([
    expect.objectContaining({
      action: 'customer.delete',
      actorId: admin.id,
      targetType: 'customer',
      targetId: id,
      service: 'crm',
      requestId,
      before: expect.objectContaining({ sellerId: seller.id, buyerId: buyer.id, status: 'Active' }),
      after: null,
    }),
  ]);
  expect(await readEntries(idOf(ownBuyer))).toEqual([]);
});
