import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { TopUpRefParams, type CheckoutForm } from '@mkt/contracts/wallet';
import { correlationIdOf, parseParts } from '@mkt/kit/http';
import { Unauthenticated } from '@mkt/kit/domain';
import type { TopUps } from '../application/topups.use-cases';
import type { CheckoutLookup } from '../domain/topups';
import { checkoutMessagePage, checkoutPage } from '../payments/checkout-page';
import type { PaymentProvider } from '../payments/provider';
import type { WalletOperations } from './operations';

/** The provider may add its own parameters; a missing or empty token is simply not a match. */
const ReturnQuery = z.object({ token: z.string().max(200).optional() });

/** A checkout page or redirect is never cached and never tells the next site where it came from. */
const noStore: RequestHandler = (_req, res, next) => {
  res.set('Cache-Control', 'no-store').set('Referrer-Policy', 'no-referrer');
  next();
};

function redirectBack(res: Response, redirectUrl: string, status: string, reference: string): void {
  const target = new URL(redirectUrl);
  target.searchParams.set('status', status);
  target.searchParams.set('reference', reference);
  res.redirect(303, target.toString());
}

function closedPage(res: Response, lookup: Exclude<CheckoutLookup, { kind: 'open' }>): void {
  const [status, title, message] =
    lookup.kind === 'expired'
      ? [409, 'Checkout expired', 'This payment link has expired. Start a new top-up from the app.']
      : lookup.kind === 'used'
        ? [409, 'Checkout closed', `This payment is already ${lookup.status.toLowerCase()}.`]
        : [404, 'Checkout not found', 'This payment link is not valid.'];
  res.status(status).type('html').send(checkoutMessagePage(title, message));
}

/** The return's own query (not in the table): parsed with the path, every issue at once (400), before the handler. */
const returnInput: RequestHandler = (req, _res, next) => {
  const parsed = parseParts({ params: TopUpRefParams, query: ReturnQuery }, req);
  next('error' in parsed ? parsed.error : undefined);
};

/**
 * Public entries (no bearer token): the sandbox hosted checkout, the provider's return address
 * and its webhook. The checkout token in the link is the only key; it dies with the payment. The
 * pages and redirects (`produces` html or redirect) write their own response.
 */
export function checkoutOperations(
  topUps: TopUps,
  provider: PaymentProvider,
  merchant: string,
): WalletOperations<'getCheckoutPage' | 'payCheckout' | 'cancelCheckout' | 'returnFromCheckout' | 'receiveChapaWebhook'> {
  // The pay and cancel entries read the same parts.
  const formAction = (action: 'pay' | 'cancel') => ({
    handle: async (
      { params, form }: { params: z.output<typeof TopUpRefParams>; form: z.output<typeof CheckoutForm> },
      { req, res }: { req: Request; res: Response },
    ) => {
      const lookup = await topUps.checkout(params.walletReferenceId, form.token);
      if (lookup.kind !== 'open') return closedPage(res, lookup);
      const { topUp } = lookup;
      if (action === 'pay') await topUps.payInSandbox(topUp, correlationIdOf(req));
      else await topUps.end(topUp._id, 'Cancelled');
      const after = await topUps.find(topUp.referenceId);
      redirectBack(res, topUp.redirectUrl, after.status, topUp.referenceId);
    },
    use: [noStore],
  });
  return {
    getCheckoutPage: {
      handle: async ({ params, query }, { res }) => {
        const lookup = await topUps.checkout(params.walletReferenceId, query.token);
        if (lookup.kind !== 'open') return closedPage(res, lookup);
        const { referenceId, amountMinor, currency, redirectUrl } = lookup.topUp;
        // The page's forms post here and are then redirected to the client's site: both allowed.
        const csp = `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${new URL(redirectUrl).origin}; frame-ancestors 'none'; base-uri 'none'`;
        res
          .set('Content-Security-Policy', csp)
          .type('html')
          .send(checkoutPage({ referenceId, amountMinor, currency, merchant, token: query.token }));
      },
      use: [noStore],
    },
    payCheckout: formAction('pay'),
    cancelCheckout: formAction('cancel'),
    // Where a provider's page sends the payer back: with the return token only, and only on to
    // an allowed origin (no open redirect, no status for strangers).
    returnFromCheckout: {
      handle: async ({ params }, { req, res }) => {
        const reference = params.walletReferenceId;
        const target = await topUps.returnTarget(reference, ReturnQuery.parse(req.query).token);
        if (target.kind === 'unknown') return closedPage(res, { kind: 'unknown' });
        if (target.kind === 'page') {
          res.type('html').send(checkoutMessagePage('Payment', `This payment is ${target.status.toLowerCase()}. You can close this page.`));
          return;
        }
        redirectBack(res, target.url, target.status, reference);
      },
      use: [noStore, returnInput],
    },
    // Signed by the provider (the raw body): a webhook is only a hint to ask the provider.
    receiveChapaWebhook: async (_input, { req }) => {
      if (provider.name !== 'chapa') throw new Unauthenticated('Unknown webhook');
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const reference = provider.readWebhook(body, req.headers);
      if (!reference) throw new Unauthenticated('The webhook signature is not valid');
      await topUps.settleWithProvider(reference, correlationIdOf(req));
      return { data: { reference }, message: 'Webhook received' };
    },
  };
}
