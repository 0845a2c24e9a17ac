import { HoldQueueQuery, HoldQueueResponse, PayoutQueueQuery, PayoutQueueResponse } from '../admin-wallet';
import {
  BanksResponse,
  BookingHoldAdminResponse,
  EarningsResponse,
  PayoutCreatedResponse,
  PayoutHistoryResponse,
  PayoutStatusResponse,
  RateLimitStatsResponse,
  StatementResponse,
  TopUpCreatedResponse,
  TopUpHistoryResponse,
  TopUpReceiptResponse,
  TopUpStatusResponse,
  TransferHistoryResponse,
  TransferResponse,
  WalletResponse,
  WebhookResponse,
} from '../responses/wallet';
import {
  BookingHoldParams,
  CancelPayoutBody,
  CheckoutForm,
  CheckoutQuery,
  CreatePayoutBody,
  CreateTopUpBody,
  CreateTransferBody,
  EarningsQuery,
  PayoutHistoryQuery,
  PayoutMoveBody,
  PayoutRefParams,
  StatementExportQuery,
  StatementQuery,
  TopUpHistoryQuery,
  TopUpRefParams,
  TransferHistoryQuery,
  UpholdBookingHoldBody,
  UserRefParams,
  VoidBookingHoldBody,
} from '../wallet';
import { e, linksTo } from './table';

// The wallet's operations: top-ups, payouts, the checkout, booking holds, the caller's money and the admins' queues.
const PAYOUT_NOTES = { adminNotes: 'Account checked' };

/** The wallet's public operations. */
export const WALLET_TABLE = [
  e('post', '/wallets/users/{userReferenceId}/topup', 'wallet', 'bearer', 'createTopup', 'Create a top-up (hosted checkout)', {
    errors: { 403: true, 422: ['invalid', 'amount_too_large', 'balance_limit_exceeded'], 502: ['bad_gateway', 'payment_provider_failed'] },
    params: UserRefParams,
    body: CreateTopUpBody,
    example: { amount: 300, paymentMethod: 'Chapa', redirectUrl: 'http://localhost:3000/done', notes: 'For bookings' },
    data: TopUpCreatedResponse,
    idempotent: true,
    links: linksTo('/data/referenceId', 'walletReferenceId', 'get /wallets/topup/{walletReferenceId}/status'),
  }),
  e('get', '/wallets/topup/{walletReferenceId}/status', 'wallet', 'bearer', 'getTopupStatus', 'Top-up status', {
    errors: { 403: true },
    params: TopUpRefParams,
    data: TopUpStatusResponse,
  }),
  e('post', '/wallets/users/{userReferenceId}/payout-request', 'wallet', 'bearer', 'createPayoutRequest', 'Request a payout', {
    errors: { 403: true, 422: ['invalid', 'insufficient_funds'] },
    params: UserRefParams,
    body: CreatePayoutBody,
    example: {
      amount: '150.00',
      bankCode: 'CBE',
      accountNumber: '1000123456789',
      accountName: 'Sara Tesfaye',
      reason: 'Monthly withdrawal',
    },
    data: PayoutCreatedResponse,
    idempotent: true,
    links: linksTo(
      '/data/referenceId',
      'referenceId',
      'get /wallets/payout-requests/{referenceId}/status',
      'post /wallets/payout-requests/{referenceId}/cancel',
    ),
  }),
  e('get', '/wallets/payout-requests/{referenceId}/status', 'wallet', 'bearer', 'getPayoutRequestStatus', 'Payout status', {
    errors: { 403: true },
    params: PayoutRefParams,
    data: PayoutStatusResponse,
  }),
  e('post', '/wallets/payout-requests/{referenceId}/cancel', 'wallet', 'bearer', 'cancelPayoutRequest', 'Cancel a pending payout', {
    errors: { 403: true, 409: ['invalid_state'] },
    params: PayoutRefParams,
    body: CancelPayoutBody,
    example: { reason: 'Changed my mind' },
    noData: true,
  }),
  ...(['approve', 'reject', 'process', 'complete', 'fail'] as const).map((move) =>
    e('post', `/wallets/payout-requests/{referenceId}/${move}`, 'wallet', 'admin', `${move}PayoutRequest`, `Payout: ${move}`, {
      errors: { 409: ['invalid_state'] },
      params: PayoutRefParams,
      body: PayoutMoveBody,
      example: PAYOUT_NOTES,
      data: PayoutStatusResponse,
    }),
  ),
  e('get', '/wallets/rate-limit/stats', 'wallet', 'bearer', 'getRateLimitStats', 'Request limits of the caller', {
    data: RateLimitStatsResponse,
  }),
  e('get', '/wallets/banks', 'wallet', 'bearer', 'listBanks', 'Banks and mobile-money providers', { data: BanksResponse }),
  e('get', '/wallets/checkout/{walletReferenceId}', 'wallet', 'public', 'getCheckoutPage', 'Sandbox hosted checkout page', {
    errors: { 409: true },
    params: TopUpRefParams,
    query: CheckoutQuery,
    produces: 'html',
  }),
  e('post', '/wallets/checkout/{walletReferenceId}/pay', 'wallet', 'public', 'payCheckout', 'Pay (sandbox checkout form)', {
    errors: { 409: true },
    params: TopUpRefParams,
    form: CheckoutForm,
    example: { token: 'Vb0sQ1mZ4yX7wK2pL9nT6hF5gD3a8Jc3' },
    produces: 'redirect',
  }),
  e('post', '/wallets/checkout/{walletReferenceId}/cancel', 'wallet', 'public', 'cancelCheckout', 'Cancel (sandbox checkout form)', {
    errors: { 409: true },
    params: TopUpRefParams,
    form: CheckoutForm,
    example: { token: 'Vb0sQ1mZ4yX7wK2pL9nT6hF5gD3a8Jc3' },
    produces: 'redirect',
  }),
  e('get', '/wallets/checkout/{walletReferenceId}/return', 'wallet', 'public', 'returnFromCheckout', 'Return from a provider checkout', {
    params: TopUpRefParams,
    produces: 'redirect',
  }),
  e('post', '/wallets/webhooks/chapa', 'wallet', 'signature', 'receiveChapaWebhook', 'Chapa webhook (HMAC-SHA256 of the raw body)', {
    errors: { 404: true },
    example: { tx_ref: 'MKT-TOP-UP-7Q2M9XKD', status: 'success' },
    data: WebhookResponse,
  }),
  e('get', '/wallets/booking-holds/{bookingId}', 'wallet', 'admin', 'getBookingHold', 'A paid booking’s hold', {
    params: BookingHoldParams,
    data: BookingHoldAdminResponse,
  }),
  e(
    'post',
    '/wallets/booking-holds/{bookingId}/void',
    'wallet',
    'admin',
    'voidBookingHold',
    'Void a Held hold by hand: all back to the buyer',
    {
      params: BookingHoldParams,
      body: VoidBookingHoldBody,
      example: { reason: 'The session never took place' },
      errors: { 409: true },
      data: BookingHoldAdminResponse,
    },
  ),
  e(
    'post',
    '/wallets/booking-holds/{bookingId}/uphold',
    'wallet',
    'admin',
    'upholdBookingHoldCapture',
    'Rule a disputed no-show for the seller: its capture goes on',
    {
      params: BookingHoldParams,
      body: UpholdBookingHoldBody,
      example: { reason: 'The seller waited the whole hour' },
      errors: { 409: true },
      data: BookingHoldAdminResponse,
    },
  ),
  e('get', '/v1/wallet', 'wallet', 'bearer', 'getWallet', 'The caller’s wallet', { data: WalletResponse }),
  e('post', '/v1/wallet/transfers', 'wallet', 'bearer', 'createTransfer', 'Transfer minor units to another user', {
    errors: { 404: true, 422: ['invalid', 'insufficient_funds', 'amount_too_large', 'currency_mismatch', 'balance_limit_exceeded'] },
    body: CreateTransferBody,
    example: { toUserId: '3f1c2a7e-8d4b-4c1e-9a2f-5b6c7d8e9f01', amount: 12000, currency: 'ETB' },
    data: TransferResponse,
    idempotent: true,
  }),
  // The caller's money: statement (keyset pages on the ledger's chain, and its CSV export) and histories.
  e(
    'get',
    '/v1/wallet/transactions',
    'wallet',
    'bearer',
    'listWalletTransactions',
    'The caller’s statement: every ledger entry, newest first',
    {
      query: StatementQuery,
      data: StatementResponse,
    },
  ),
  e(
    'get',
    '/v1/wallet/transactions.csv',
    'wallet',
    'bearer',
    'getWalletTransactionsCsv',
    'The caller’s statement as CSV (every entry the filters match)',
    {
      query: StatementExportQuery,
      produces: 'csv',
    },
  ),
  e('get', '/v1/wallet/topups', 'wallet', 'bearer', 'listMyTopups', 'The caller’s top-ups, newest first', {
    query: TopUpHistoryQuery,
    data: TopUpHistoryResponse,
    paged: true,
  }),
  e(
    'get',
    '/v1/wallet/topups/{walletReferenceId}/receipt',
    'wallet',
    'bearer',
    'getTopupReceipt',
    'The receipt of a completed top-up (its owner or an admin)',
    {
      errors: { 409: ['invalid_state'] },
      params: TopUpRefParams,
      data: TopUpReceiptResponse,
    },
  ),
  e(
    'get',
    '/v1/wallet/topups/{walletReferenceId}/receipt.html',
    'wallet',
    'bearer',
    'getTopupReceiptPage',
    'The receipt of a completed top-up as a printable page (its owner or an admin)',
    {
      errors: { 409: ['invalid_state'] },
      params: TopUpRefParams,
      produces: 'html',
    },
  ),
  e('get', '/v1/wallet/payouts', 'wallet', 'bearer', 'listMyPayoutRequests', 'The caller’s payout requests, newest first', {
    query: PayoutHistoryQuery,
    data: PayoutHistoryResponse,
    paged: true,
  }),
  e(
    'get',
    '/v1/wallet/earnings',
    'wallet',
    'bearer',
    'getMyEarnings',
    'The caller’s earnings: ahead, settling, available, earned, paid out',
    {
      query: EarningsQuery,
      data: EarningsResponse,
    },
  ),
  e('get', '/v1/wallet/transfers', 'wallet', 'bearer', 'listMyTransfers', 'The caller’s transfers, sent and received, newest first', {
    query: TransferHistoryQuery,
    data: TransferHistoryResponse,
    paged: true,
  }),
] as const;

/** The wallet's admin queues (admins only). */
export const WALLET_ADMIN_TABLE = [
  e(
    'get',
    '/wallets/admin/payout-requests',
    'wallet',
    'admin',
    'listPayoutQueue',
    'Payouts waiting for an admin, with the four-eyes rule',
    {
      query: PayoutQueueQuery,
      data: PayoutQueueResponse,
      paged: true,
    },
  ),
  e('get', '/wallets/admin/booking-holds', 'wallet', 'admin', 'listHoldQueue', 'Booking holds overdue or disputed', {
    query: HoldQueueQuery,
    data: HoldQueueResponse,
    paged: true,
  }),
] as const;
