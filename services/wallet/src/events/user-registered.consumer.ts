import { SUBSCRIPTIONS } from '@mkt/contracts';
import { defineConsumer, type ConsumerSpec } from '@mkt/kit';
import { openWallet } from '../db/wallet.model';

/** Opens the wallet of every new user; a repeat finds it open (unique userId). */
export function userRegisteredConsumer(referencePrefix: string): ConsumerSpec {
  return defineConsumer({
    subscription: SUBSCRIPTIONS['wallet.users'],
    handlers: {
      'identity.user.registered': async (event, { log }) => {
        const wallet = await openWallet(event.data.userId, event.data.referenceId, referencePrefix);
        log.info({ walletId: wallet._id, userId: event.data.userId }, 'wallet open');
      },
    },
  });
}
