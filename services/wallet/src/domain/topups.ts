import { createHash, timingSafeEqual } from 'node:crypto';
import { makeEvent, type CreateTopUpBody, type IntegrationEvent, type TopUpStatus } from '@mkt/contracts/wallet';
import type { TopUpDoc, WalletOp } from './records';
import { redirectAllowed } from './redirects';
import { fitsUnder } from './wallet-ops';
import { AmountTooLarge, BalanceCeilingExceeded, RedirectNotAllowed } from './errors';

/** Top-ups: created Processing with a checkout; completed (credited exactly once) or ended. */

export type VerifiedStatus = 'success' | 'failed' | 'pending';

/** What a hosted-checkout provider answers when asked about a payment (never a webhook alone). */
export interface Verification {
  status: VerifiedStatus;
  amountMinor: number | null;
  currency: string | null;
}

export interface TopUpSettings {
  referencePrefix: string;
  expiryMinutes: number;
  publicUrl: string;
  maxAmountMinor: number;
  ceilingMinor: number;
  redirectOrigins: readonly string[];
}

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export function hashMatches(hash: string | null | undefined, token: string): boolean {
  if (!hash) return false;
  return timingSafeEqual(Buffer.from(hash, 'hex'), Buffer.from(hashToken(token), 'hex'));
}

/** A request for a top-up, before any wallet is read: bounded amount, allowed redirect. */
export function checkTopUpRequest(body: Pick<CreateTopUpBody, 'amountMinor' | 'redirectUrl'>, settings: TopUpSettings): void {
  if (body.amountMinor > settings.maxAmountMinor) throw new AmountTooLarge(settings.maxAmountMinor);
  if (!redirectAllowed(body.redirectUrl, settings.redirectOrigins)) throw new RedirectNotAllowed();
}

/** The wallet has room for the top-up under its ceiling, else BalanceCeilingExceeded. */
export function checkTopUpFits(wallet: { availableMinor: number; heldMinor: number }, amountMinor: number, ceilingMinor: number): void {
  if (!fitsUnder(wallet, amountMinor, ceilingMinor)) throw new BalanceCeilingExceeded();
}

export type CheckoutLookup =
  { kind: 'open'; topUp: TopUpDoc } | { kind: 'unknown' } | { kind: 'used'; status: TopUpStatus } | { kind: 'expired' };

/** What the checkout link opens to (the sandbox's page only): open, used, expired, or unknown. */
export function checkoutLookup(topUp: TopUpDoc | null, token: string, now: Date): CheckoutLookup {
  if (!topUp || topUp.provider !== 'sandbox') return { kind: 'unknown' };
  if (topUp.status !== 'Processing') return topUp.status === 'Expired' ? { kind: 'expired' } : { kind: 'used', status: topUp.status };
  if (!hashMatches(topUp.checkoutTokenHash, token)) return { kind: 'unknown' };
  if (topUp.expiresAt.getTime() <= now.getTime()) return { kind: 'expired' };
  return { kind: 'open', topUp };
}

/** Where the payer goes after the provider's page: on to the client, or a page of ours. */
export type ReturnTarget =
  { kind: 'redirect'; url: string; status: TopUpStatus } | { kind: 'page'; status: TopUpStatus } | { kind: 'unknown' };

/** Where `/return` sends the payer: only with the return token, only to an allowed origin. */
export function returnTarget(topUp: TopUpDoc | null, token: string | undefined, origins: readonly string[]): ReturnTarget {
  if (!topUp || !token || !hashMatches(topUp.returnTokenHash, token)) return { kind: 'unknown' };
  if (!redirectAllowed(topUp.redirectUrl, origins)) return { kind: 'page', status: topUp.status };
  return { kind: 'redirect', url: topUp.redirectUrl, status: topUp.status };
}

export function completedEvent(topUp: TopUpDoc, correlationId: string): IntegrationEvent {
  return makeEvent(
    'wallet.topup.completed',
    { reference: topUp.referenceId, userId: topUp.userId, amountMinor: topUp.amountMinor, currency: topUp.currency, status: 'Completed' },
    { source: 'wallet', correlationId },
  );
}

/** The credit step's op: the top-up's amount, once, under the wallet's ceiling. */
export function topUpCreditOp(topUp: Pick<TopUpDoc, '_id' | 'amountMinor' | 'referenceId'>, ceilingMinor: number): WalletOp {
  return {
    opId: `topup:${topUp._id}:credit`,
    type: 'topup_credit',
    availableDeltaMinor: topUp.amountMinor,
    heldDeltaMinor: 0,
    reference: topUp.referenceId,
    ceilingMinor,
  };
}

/**
 * What the provider's answer means for a top-up (a webhook is only a hint to ask): paid, with
 * the amount and currency we asked for → complete; failed → fail; another amount → review
 * (left as it is, logged); pending → nothing. A top-up of another provider, or no longer
 * Processing or Expired, is not asked about at all (`askProvider`).
 */
export type ProviderVerdict = 'complete' | 'fail' | 'review' | 'wait';

export function askProvider(topUp: Pick<TopUpDoc, 'provider' | 'status'>, providerName: string): boolean {
  return topUp.provider === providerName && (topUp.status === 'Processing' || topUp.status === 'Expired');
}

export function verdictOf(topUp: Pick<TopUpDoc, 'amountMinor' | 'currency'>, verification: Verification): ProviderVerdict {
  if (verification.status === 'success')
    return verification.amountMinor === topUp.amountMinor && (verification.currency ?? topUp.currency) === topUp.currency
      ? 'complete'
      : 'review';
  return verification.status === 'failed' ? 'fail' : 'wait';
}

/** The reconciliation: a top-up still Processing past its checkout's expiry ends Expired. */
export const isExpired = (topUp: Pick<TopUpDoc, 'status' | 'expiresAt'>, now: Date) =>
  topUp.status === 'Processing' && topUp.expiresAt.getTime() <= now.getTime();

/** How long a top-up stays Processing before the reconciliation asks the provider about it. */
export const ASK_PROVIDER_AFTER_MS = 60_000;
