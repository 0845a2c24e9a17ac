import { SUBSCRIPTIONS } from '@mkt/contracts/crm';
import { defineConsumer, type ConsumerSpec } from '@mkt/kit/bus';
import type { Projection } from '../application/projection.use-cases';
import { onUserRegistered } from '../domain/projection';

/** `crm.users`: every new user's name and role, for the listings (decided by domain/projection.ts). */
export function usersConsumer(projection: Projection): ConsumerSpec {
  return defineConsumer({
    subscription: SUBSCRIPTIONS['crm.users'],
    handlers: { 'identity.user.registered': (event) => projection.registerUser(onUserRegistered(event)) },
  });
}
