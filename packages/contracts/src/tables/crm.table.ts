import {
  BuyerParams,
  CreateCustomerBody,
  CustomerListQuery,
  CustomerParams,
  HighValueQuery,
  RelationListQuery,
  SellerParams,
  UpdateCustomerBody,
} from '../crm';
import {
  BuyerFollowingResponse,
  BuyerRelationshipsResponse,
  BuyerSellersResponse,
  HighValueCustomersResponse,
  OwnRelationshipsResponse,
  RelationshipCreatedResponse,
  RelationshipDeletedResponse,
  RelationshipResponse,
  RelationshipUpdatedResponse,
  SellerAnalyticsResponse,
  SellerCustomersResponse,
  SellerFavoritesResponse,
  SellerFollowersResponse,
} from '../responses/crm';
import { e, linksTo, OWN_LISTING } from './table';

// The CRM's operations: relationships between buyers and sellers.

/** The CRM's public operations. */
export const CRM_TABLE = [
  e('post', '/customers', 'crm', 'bearer', 'createCustomer', 'Create a relationship', {
    // 422 not_eligible: the buyer has booked nothing of the seller's; invalid: followStatus contradicts isFollower.
    errors: { 403: true, 404: true, 409: true, 422: ['invalid', 'not_eligible'] },
    body: CreateCustomerBody,
    example: {
      sellerId: '8a7b6c5d-4e3f-4a2b-9c1d-0e9f8a7b6c5d',
      buyerId: '3f1c2a7e-8d4b-4c1e-9a2f-5b6c7d8e9f01',
      status: 'Active',
      customerType: 'New',
      // Following is the buyer's to set: a seller's create leaves it off.
      isFollower: false,
      followStatus: 'NotFollowing',
      notificationPreference: 'All',
      notes: 'Met at the coffee fair',
      tags: ['coffee'],
      isFavorite: false,
    },
    data: RelationshipCreatedResponse,
    links: linksTo('/data/id', 'id', 'get /customers/{id}', 'put /customers/{id}', 'delete /customers/{id}'),
  }),
  e('get', '/customers', 'crm', 'bearer', 'listCustomers', 'The caller’s relationships', {
    query: CustomerListQuery,
    data: OwnRelationshipsResponse,
  }),
  e('get', '/customers/{id}', 'crm', 'bearer', 'getCustomer', 'A relationship', {
    errors: { 403: true },
    params: CustomerParams,
    data: RelationshipResponse,
  }),
  e('put', '/customers/{id}', 'crm', 'bearer', 'updateCustomer', 'Update a relationship', {
    // 422 invalid: followStatus contradicts isFollower.
    errors: { 403: true, 422: ['invalid'] },
    params: CustomerParams,
    body: UpdateCustomerBody,
    example: { customerType: 'Regular', isFavorite: true, notes: 'Books every month', tags: ['coffee', 'monthly'] },
    data: RelationshipUpdatedResponse,
  }),
  e('delete', '/customers/{id}', 'crm', 'bearer', 'deleteCustomer', 'Delete a relationship', {
    errors: { 403: true },
    params: CustomerParams,
    data: RelationshipDeletedResponse,
  }),
  e('get', '/customers/seller/{sellerId}', 'crm', 'bearer', 'listSellerCustomers', 'A seller’s customers', {
    errors: OWN_LISTING,
    params: SellerParams,
    query: RelationListQuery,
    data: SellerCustomersResponse,
  }),
  e('get', '/customers/seller/{sellerId}/followers', 'crm', 'bearer', 'listSellerFollowers', 'A seller’s followers', {
    errors: OWN_LISTING,
    params: SellerParams,
    query: RelationListQuery,
    data: SellerFollowersResponse,
  }),
  e('get', '/customers/seller/{sellerId}/favorites', 'crm', 'bearer', 'listSellerFavorites', 'A seller’s favourites', {
    errors: OWN_LISTING,
    params: SellerParams,
    query: RelationListQuery,
    data: SellerFavoritesResponse,
  }),
  e('get', '/customers/seller/{sellerId}/high-value', 'crm', 'bearer', 'listHighValueCustomers', 'High-value customers', {
    errors: OWN_LISTING,
    params: SellerParams,
    query: HighValueQuery,
    data: HighValueCustomersResponse,
  }),
  e('get', '/customers/seller/{sellerId}/analytics', 'crm', 'bearer', 'getSellerAnalytics', 'Seller analytics', {
    errors: OWN_LISTING,
    params: SellerParams,
    data: SellerAnalyticsResponse,
  }),
  e('get', '/customers/buyer/{buyerId}', 'crm', 'bearer', 'listBuyerRelationships', 'A buyer’s relationships', {
    errors: OWN_LISTING,
    params: BuyerParams,
    query: RelationListQuery,
    data: BuyerRelationshipsResponse,
  }),
  e('get', '/customers/buyer/{buyerId}/following', 'crm', 'bearer', 'listBuyerFollowing', 'Sellers a buyer follows', {
    errors: OWN_LISTING,
    params: BuyerParams,
    query: RelationListQuery,
    data: BuyerFollowingResponse,
  }),
  e('get', '/customers/buyer/{buyerId}/customers', 'crm', 'bearer', 'listBuyerSellers', 'Sellers a buyer booked', {
    errors: OWN_LISTING,
    params: BuyerParams,
    query: RelationListQuery,
    data: BuyerSellersResponse,
  }),
] as const;
