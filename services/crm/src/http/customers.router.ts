import type { Router } from 'express';
import {
  BuyerParams,
  CreateCustomerBody,
  CustomerListQuery,
  CustomerParams,
  HighValueQuery,
  OwnRelationshipsResponse,
  RelationListQuery,
  RelationshipCreatedResponse,
  RelationshipUpdatedResponse,
  SellerParams,
  UpdateCustomerBody,
  ok,
} from '@mkt/contracts';
import { currentUser, serviceRouter, withInput } from '@mkt/kit';
import {
  createRelationship,
  deleteRelationship,
  listing,
  ownList,
  readRelationship,
  relationshipView,
  sellerAnalytics,
  updateRelationship,
  type Listing,
  type RelationshipView,
} from '../domain/relationships';

const pick =
  <K extends keyof RelationshipView>(keys: K[]) =>
  (row: RelationshipView) =>
    Object.fromEntries(keys.map((key) => [key, row[key]])) as Pick<RelationshipView, K>;

/** The fields a documented (strict) response holds, read off its schema: one list, not two. */
const fieldsOf = (schema: { shape: object }) => pick(Object.keys(schema.shape) as Array<keyof RelationshipView>);
const createdFields = fieldsOf(RelationshipCreatedResponse);
const updatedFields = fieldsOf(RelationshipUpdatedResponse);
const ownListFields = fieldsOf(OwnRelationshipsResponse.shape.customers.element);

/** Each listing: its key in `data`, the fields the interface names, whose id the path holds. */
const LISTINGS: Array<{
  path: string;
  listing: Listing;
  key: string;
  fields: Array<keyof RelationshipView>;
  side: 'seller' | 'buyer';
  query?: typeof HighValueQuery;
}> = [
  {
    path: '/seller/:sellerId',
    listing: 'customers',
    key: 'customers',
    side: 'seller',
    fields: ['id', 'buyerId', 'buyerName', 'customerType', 'totalBookings', 'totalSpent', 'isFollower'],
  },
  {
    path: '/seller/:sellerId/followers',
    listing: 'followers',
    key: 'followers',
    side: 'seller',
    fields: ['id', 'buyerId', 'buyerName', 'followedAt', 'totalBookings'],
  },
  {
    path: '/seller/:sellerId/favorites',
    listing: 'favorites',
    key: 'favorites',
    side: 'seller',
    fields: ['id', 'buyerId', 'buyerName', 'customerType', 'totalSpent', 'markedFavoriteAt'],
  },
  {
    path: '/seller/:sellerId/high-value',
    listing: 'high-value',
    key: 'customers',
    side: 'seller',
    fields: ['id', 'buyerId', 'buyerName', 'lifetimeValue', 'totalBookings', 'customerType'],
    query: HighValueQuery,
  },
  {
    path: '/buyer/:buyerId',
    listing: 'relationships',
    key: 'relationships',
    side: 'buyer',
    fields: ['id', 'sellerId', 'sellerName', 'status', 'isFollowing', 'totalBookings', 'totalSpent'],
  },
  {
    path: '/buyer/:buyerId/following',
    listing: 'following',
    key: 'following',
    side: 'buyer',
    fields: ['id', 'sellerId', 'sellerName', 'sellerCategory', 'followedAt', 'totalBookings'],
  },
  {
    path: '/buyer/:buyerId/customers',
    listing: 'buyer-customers',
    key: 'customers',
    side: 'buyer',
    fields: ['id', 'sellerId', 'sellerName', 'totalBookings', 'totalSpent', 'lastBooking'],
  },
];

export function customersRouter(): Router {
  const router = serviceRouter();
  router.post(
    '/',
    withInput({ body: CreateCustomerBody }, async (input, req, res) => {
      const row = relationshipView({ doc: await createRelationship(currentUser(req), input.body), buyerName: null, sellerName: null });
      res.json(ok(createdFields(row), 'Customer relationship created'));
    }),
  );
  router.get(
    '/',
    withInput({ query: CustomerListQuery }, async (input, req, res) => {
      const { rows, pagination } = await ownList(currentUser(req), input.query);
      res.json(ok({ customers: rows.map(ownListFields), pagination }));
    }),
  );
  router.get(
    '/seller/:sellerId/analytics',
    withInput({ params: SellerParams }, async (input, req, res) => {
      res.json(ok(await sellerAnalytics(currentUser(req), input.params.sellerId)));
    }),
  );
  for (const spec of LISTINGS) {
    router.get(
      spec.path,
      withInput(
        { params: spec.side === 'seller' ? SellerParams : BuyerParams, query: spec.query ?? RelationListQuery },
        async (input, req, res) => {
          const ownerId = 'sellerId' in input.params ? input.params.sellerId : input.params.buyerId;
          const { rows, total, pagination } = await listing(currentUser(req), spec.listing, ownerId, input.query);
          res.json(ok({ [spec.key]: rows.map(pick(spec.fields)), total, pagination }));
        },
      ),
    );
  }
  router.get(
    '/:id',
    withInput({ params: CustomerParams }, async (input, req, res) => {
      const user = currentUser(req);
      const row = relationshipView(await readRelationship(user, input.params.id), user);
      res.json(ok(row));
    }),
  );
  router.put(
    '/:id',
    withInput({ params: CustomerParams, body: UpdateCustomerBody }, async (input, req, res) => {
      const row = relationshipView({
        doc: await updateRelationship(currentUser(req), input.params.id, input.body),
        buyerName: null,
        sellerName: null,
      });
      res.json(ok(updatedFields(row), 'Customer relationship updated'));
    }),
  );
  router.delete(
    '/:id',
    withInput({ params: CustomerParams }, async (input, req, res) => {
      res.json(ok({ id: await deleteRelationship(currentUser(req), input.params.id), deleted: true }, 'Customer relationship deleted'));
    }),
  );
  return router;
}
