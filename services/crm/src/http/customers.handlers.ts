import type { Request, Response } from 'express';
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
  type PageQuery,
} from '@mkt/contracts';
import { adminRequestOf, currentUser, handle, type MountOptions } from '@mkt/kit';
import type { RelationshipService } from '../application/relationships';
import type { Listing } from '../domain/relationships';
import { createdView, LISTING_VIEWS, ownListRow, relationshipView, updatedView } from './views';

/** One handler per entry of the CRM in the contracts' endpoint table. */
export function customerHandlers(relationships: RelationshipService): MountOptions['handlers'] {
  /** A listing of the relationships of the path's seller or buyer, keyed and shaped by its response schema. */
  const answerListing = async (
    kind: Listing,
    ownerKey: string,
    query: PageQuery & { minLifetimeValueMinor?: number },
    req: Request,
    res: Response,
  ) => {
    const user = currentUser(req);
    const view = LISTING_VIEWS[kind];
    const { rows, total, pagination } = await relationships.listing(user, kind, ownerKey, query);
    res.json(ok({ [view.key]: rows.map((row) => view.row(relationshipView(row, user))), total, pagination }));
  };
  const sellerListing = (kind: Listing) =>
    handle({ params: SellerParams, query: RelationListQuery }, (input, req, res) =>
      answerListing(kind, input.params.sellerId, input.query, req, res),
    );
  const buyerListing = (kind: Listing) =>
    handle({ params: BuyerParams, query: RelationListQuery }, (input, req, res) =>
      answerListing(kind, input.params.buyerId, input.query, req, res),
    );

  return {
    'POST /customers': handle({ body: CreateCustomerBody }, async (input, req, res) => {
      res.json(
        ok(createdView(await relationships.create(currentUser(req), input.body, adminRequestOf(req))), 'Customer relationship created'),
      );
    }),
    'GET /customers': handle({ query: CustomerListQuery }, async (input, req, res) => {
      const user = currentUser(req);
      const { rows, pagination } = await relationships.ownList(user, input.query);
      res.json(ok({ customers: rows.map((row) => ownListRow(relationshipView(row, user))), pagination }));
    }),
    'GET /customers/{id}': handle({ params: CustomerParams }, async (input, req, res) => {
      const user = currentUser(req);
      res.json(ok(relationshipView(await relationships.read(user, input.params.id), user)));
    }),
    'PUT /customers/{id}': handle({ params: CustomerParams, body: UpdateCustomerBody }, async (input, req, res) => {
      res.json(
        ok(
          updatedView(await relationships.update(currentUser(req), input.params.id, input.body, adminRequestOf(req))),
          'Customer relationship updated',
        ),
      );
    }),
    'DELETE /customers/{id}': handle({ params: CustomerParams }, async (input, req, res) => {
      res.json(
        ok(
          { id: await relationships.remove(currentUser(req), input.params.id, adminRequestOf(req)), deleted: true },
          'Customer relationship deleted',
        ),
      );
    }),
    'GET /customers/seller/{sellerId}': sellerListing('customers'),
    'GET /customers/seller/{sellerId}/followers': sellerListing('followers'),
    'GET /customers/seller/{sellerId}/favorites': sellerListing('favorites'),
    'GET /customers/seller/{sellerId}/high-value': handle({ params: SellerParams, query: HighValueQuery }, (input, req, res) =>
      answerListing('high-value', input.params.sellerId, input.query, req, res),
    ),
    'GET /customers/seller/{sellerId}/analytics': handle({ params: SellerParams }, async (input, req, res) => {
      res.json(ok(await relationships.sellerAnalytics(currentUser(req), input.params.sellerId)));
    }),
    'GET /customers/buyer/{buyerId}': buyerListing('relationships'),
    'GET /customers/buyer/{buyerId}/following': buyerListing('following'),
    'GET /customers/buyer/{buyerId}/customers': buyerListing('buyer-customers'),
  };
}
