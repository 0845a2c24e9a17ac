import { SUBSCRIPTIONS } from '@mkt/contracts/wallet';
import { defineConsumer, type ConsumerSpec } from '@mkt/kit/bus';
import type { Wallets } from '../application/wallets.use-cases';

/** Opens the wallet of every new user; a repeat finds it open (unique userId). */
export function usersConsumer(wallets: Wallets): ConsumerSpec {
  return defineConsumer({
    subscription: SUBSCRIPTIONS['wallet.users'],
    handlers: {
      'identity.user.registered': async (event, { log }) => {
        const wallet = await wallets.open(event.data.userId, event.data.referenceId);
        log.info({ walletId: wallet._id, userId: event.data.userId }, 'wallet open');
      },
    },
  });
}
