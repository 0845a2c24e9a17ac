import { OPERATIONS, type PageQuery } from '@mkt/contracts/crm';
import { adminRequestOf, operationHandlers, type AuthenticatedUser, type MountedHandlers } from '@mkt/kit/http';
import type { Relationships } from '../application/relationships.use-cases';
import type { Listing } from '../domain/relationships';
import { createdView, LISTING_SCHEMAS, listingView, ownListRow, relationshipView, updatedView } from './views';

/** One handler per operation of the CRM in the contracts' table (its input and answer typed by the entry). */
export function customerHandlers(relationships: Relationships): MountedHandlers {
  /** A listing of the relationships of the path's seller or buyer, keyed and shaped by its response schema. */
  const listing = async <K extends Listing>(
    kind: K,
    user: AuthenticatedUser,
    ownerKey: string,
    query: PageQuery & { minLifetimeValueMinor?: number },
  ) => {
    const { rows, total, pagination } = await relationships.listing(user, kind, ownerKey, query);
    const views = rows.map((row) => relationshipView(row, user));
    return { data: listingView(LISTING_SCHEMAS[kind], views, total, pagination) };
  };

  return operationHandlers(OPERATIONS, 'crm', {
    createCustomer: async ({ body }, { req, user }) => ({
      data: createdView(await relationships.create(user, body, adminRequestOf(req))),
      message: 'Customer relationship created',
    }),
    listCustomers: async ({ query }, { user }) => {
      const { rows, pagination } = await relationships.ownList(user, query);
      return { data: { customers: rows.map((row) => ownListRow(relationshipView(row, user))), pagination } };
    },
    getCustomer: async ({ params }, { user }) => ({ data: relationshipView(await relationships.read(user, params.id), user) }),
    updateCustomer: async ({ params, body }, { req, user }) => ({
      data: updatedView(await relationships.update(user, params.id, body, adminRequestOf(req))),
      message: 'Customer relationship updated',
    }),
    deleteCustomer: async ({ params }, { req, user }) => ({
      data: { id: await relationships.remove(user, params.id, adminRequestOf(req)), deleted: true as const },
      message: 'Customer relationship deleted',
    }),
    listSellerCustomers: ({ params, query }, { user }) => listing('customers', user, params.sellerId, query),
    listSellerFollowers: ({ params, query }, { user }) => listing('followers', user, params.sellerId, query),
    listSellerFavorites: ({ params, query }, { user }) => listing('favorites', user, params.sellerId, query),
    listHighValueCustomers: ({ params, query }, { user }) => listing('high-value', user, params.sellerId, query),
    getSellerAnalytics: async ({ params }, { user }) => ({ data: await relationships.sellerAnalytics(user, params.sellerId) }),
    listBuyerRelationships: ({ params, query }, { user }) => listing('relationships', user, params.buyerId, query),
    listBuyerFollowing: ({ params, query }, { user }) => listing('following', user, params.buyerId, query),
    listBuyerSellers: ({ params, query }, { user }) => listing('buyer-customers', user, params.buyerId, query),
  });
}
