import type { Router } from 'express';
import {
  BuyerParams,
  CreateCustomerBody,
  CustomerListQuery,
  CustomerParams,
  HighValueQuery,
  RelationListQuery,
  SellerParams,
  UpdateCustomerBody,
  ok,
} from '@mkt/contracts';
import { currentUser, serviceRouter, withInput } from '@mkt/kit';
import type { RelationshipService } from '../application/relationships';
import type { Listing } from '../domain/relationships';
import { createdView, LISTING_VIEWS, ownListRow, relationshipView, updatedView } from './views';

/** Each listing: the path whose id it holds, the side (seller or buyer) and its query. */
const LISTINGS: Array<{ path: string; listing: Listing; side: 'seller' | 'buyer'; query?: typeof HighValueQuery }> = [
  { path: '/seller/:sellerId', listing: 'customers', side: 'seller' },
  { path: '/seller/:sellerId/followers', listing: 'followers', side: 'seller' },
  { path: '/seller/:sellerId/favorites', listing: 'favorites', side: 'seller' },
  { path: '/seller/:sellerId/high-value', listing: 'high-value', side: 'seller', query: HighValueQuery },
  { path: '/buyer/:buyerId', listing: 'relationships', side: 'buyer' },
  { path: '/buyer/:buyerId/following', listing: 'following', side: 'buyer' },
  { path: '/buyer/:buyerId/customers', listing: 'buyer-customers', side: 'buyer' },
];

export function customersRouter(relationships: RelationshipService): Router {
  const router = serviceRouter();
  router.post(
    '/',
    withInput({ body: CreateCustomerBody }, async (input, req, res) => {
      res.json(ok(createdView(await relationships.create(currentUser(req), input.body)), 'Customer relationship created'));
    }),
  );
  router.get(
    '/',
    withInput({ query: CustomerListQuery }, async (input, req, res) => {
      const user = currentUser(req);
      const { rows, pagination } = await relationships.ownList(user, input.query);
      res.json(ok({ customers: rows.map((row) => ownListRow(relationshipView(row, user))), pagination }));
    }),
  );
  router.get(
    '/seller/:sellerId/analytics',
    withInput({ params: SellerParams }, async (input, req, res) => {
      res.json(ok(await relationships.sellerAnalytics(currentUser(req), input.params.sellerId)));
    }),
  );
  for (const spec of LISTINGS) {
    const view = LISTING_VIEWS[spec.listing];
    router.get(
      spec.path,
      withInput(
        { params: spec.side === 'seller' ? SellerParams : BuyerParams, query: spec.query ?? RelationListQuery },
        async (input, req, res) => {
          const user = currentUser(req);
          const ownerId = 'sellerId' in input.params ? input.params.sellerId : input.params.buyerId;
          const { rows, total, pagination } = await relationships.listing(user, spec.listing, ownerId, input.query);
          res.json(ok({ [view.key]: rows.map((row) => view.row(relationshipView(row, user))), total, pagination }));
        },
      ),
    );
  }
  router.get(
    '/:id',
    withInput({ params: CustomerParams }, async (input, req, res) => {
      const user = currentUser(req);
      res.json(ok(relationshipView(await relationships.read(user, input.params.id), user)));
    }),
  );
  router.put(
    '/:id',
    withInput({ params: CustomerParams, body: UpdateCustomerBody }, async (input, req, res) => {
      res.json(ok(updatedView(await relationships.update(currentUser(req), input.params.id, input.body)), 'Customer relationship updated'));
    }),
  );
  router.delete(
    '/:id',
    withInput({ params: CustomerParams }, async (input, req, res) => {
      res.json(ok({ id: await relationships.remove(currentUser(req), input.params.id), deleted: true }, 'Customer relationship deleted'));
    }),
  );
  return router;
}
