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
import { currentUser, serviceRouter, validate } from '@mkt/kit';
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
  router.post('/', validate({ body: CreateCustomerBody }), async (req, res) => {
    const row = relationshipView({ doc: await createRelationship(currentUser(req), res.locals.body), buyerName: null, sellerName: null });
    res.json(
      ok(
        pick(['id', 'referenceId', 'sellerId', 'buyerId', 'status', 'customerType', 'isFollower', 'createdAt'])(row),
        'Customer relationship created',
      ),
    );
  });
  router.get('/', validate({ query: CustomerListQuery }), async (req, res) => {
    const { rows, pagination } = await ownList(currentUser(req), res.locals.query);
    const fields = pick([
      'id',
      'referenceId',
      'sellerId',
      'buyerId',
      'buyerName',
      'sellerName',
      'customerType',
      'status',
      'totalBookings',
      'totalSpent',
      'lastInteraction',
    ]);
    res.json(ok({ customers: rows.map(fields), pagination }));
  });
  router.get('/seller/:sellerId/analytics', validate({ params: SellerParams }), async (req, res) => {
    res.json(ok(await sellerAnalytics(currentUser(req), res.locals.params.sellerId)));
  });
  for (const spec of LISTINGS) {
    router.get(
      spec.path,
      validate({ params: spec.side === 'seller' ? SellerParams : BuyerParams, query: spec.query ?? RelationListQuery }),
      async (req, res) => {
        const ownerId = spec.side === 'seller' ? res.locals.params.sellerId : res.locals.params.buyerId;
        const { rows, total, pagination } = await listing(currentUser(req), spec.listing, ownerId, res.locals.query);
        res.json(ok({ [spec.key]: rows.map(pick(spec.fields)), total, pagination }));
      },
    );
  }
  router.get('/:id', validate({ params: CustomerParams }), async (req, res) => {
    const user = currentUser(req);
    const row = relationshipView(await readRelationship(user, res.locals.params.id), user);
    res.json(ok(row));
  });
  router.put('/:id', validate({ params: CustomerParams, body: UpdateCustomerBody }), async (req, res) => {
    const row = relationshipView({
      doc: await updateRelationship(currentUser(req), res.locals.params.id, res.locals.body),
      buyerName: null,
      sellerName: null,
    });
    res.json(
      ok(
        pick(['id', 'customerType', 'status', 'isFollower', 'isFavorite', 'notes', 'tags', 'followedAt', 'markedFavoriteAt', 'updatedAt'])(
          row,
        ),
        'Customer relationship updated',
      ),
    );
  });
  router.delete('/:id', validate({ params: CustomerParams }), async (req, res) => {
    res.json(ok({ id: await deleteRelationship(currentUser(req), res.locals.params.id), deleted: true }, 'Customer relationship deleted'));
  });
  return router;
}
