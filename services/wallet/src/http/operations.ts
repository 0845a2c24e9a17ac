import type { OPERATIONS } from '@mkt/contracts/wallet';
import type { OperationHandlers } from '@mkt/kit/http';

/** The wallet's operations of the contracts' table, each handler typed by its entry. */
export type WalletOperationHandlers = OperationHandlers<typeof OPERATIONS, 'wallet'>;

/** Handlers of some of the wallet's operations; `app.ts` joins them into one `operationHandlers` (a missing one does not compile). */
export type WalletOperations<K extends keyof WalletOperationHandlers> = Pick<WalletOperationHandlers, K>;
