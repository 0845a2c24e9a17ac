import type { BookingHoldDoc } from './records';

/** A seller's open hold as earnings read it. */
export type OpenHold = Pick<BookingHoldDoc, 'status' | 'amountMinor' | 'endsAt' | 'settlement' | 'credit'> & {
  consultationId?: string | null;
};

/** A credit or payout entry of the seller's ledger, with the consultation of its booking when it is a booking's. */
export interface EarningEntry {
  type: 'booking_capture' | 'payout_settle';
  availableDeltaMinor: number;
  heldDeltaMinor: number;
  postedAt: Date;
  consultationId?: string | null;
}

export interface ConsultationEarnings {
  consultationId: string | null;
  aheadMinor: number;
  settlingMinor: number;
  earnedMinor: number;
}

export interface Earnings {
  totals: { aheadMinor: number; settlingMinor: number; earnedMinor: number; paidOutMinor: number };
  byConsultation: ConsultationEarnings[];
  byMonth: Array<{ month: string; earnedMinor: number; paidOutMinor: number }>;
}

/**
 * Where an open hold's money stands for its seller: `ahead` — held, nothing decided, its slot
 * not over (the whole amount, the fee not taken yet); `settling` — decided (the seller's part:
 * captured less the fee, nothing for a refund in full) and not yet credited, or its slot over
 * with nothing decided yet (the whole amount, awaiting the session's end); `none` — credited
 * already (it is in the ledger) or nothing comes to the seller.
 */
export function phaseOf(hold: OpenHold, now: Date): { phase: 'ahead' | 'settling' | 'none'; minor: number } {
  if (hold.credit === 'done') return { phase: 'none', minor: 0 };
  if (hold.settlement) {
    const minor = hold.settlement.captureMinor - hold.settlement.feeMinor;
    return minor > 0 ? { phase: 'settling', minor } : { phase: 'none', minor: 0 };
  }
  if (hold.status !== 'Held') return { phase: 'none', minor: 0 };
  if (hold.endsAt && hold.endsAt.getTime() <= now.getTime()) return { phase: 'settling', minor: hold.amountMinor };
  return { phase: 'ahead', minor: hold.amountMinor };
}

/** `YYYY-MM` of a time, in UTC. */
export const monthOf = (at: Date) => at.toISOString().slice(0, 7);

/**
 * A seller's earnings from their open holds and their ledger's credits and payouts in a window:
 * earned is what the `booking_capture` entries credited (the statement's own figures), paid out
 * what the `payout_settle` entries took; per consultation (null: holds from before it was
 * known) and per month of `postedAt`, both sorted.
 */
export function summarizeEarnings(open: readonly OpenHold[], entries: readonly EarningEntry[], now: Date): Earnings {
  const totals = { aheadMinor: 0, settlingMinor: 0, earnedMinor: 0, paidOutMinor: 0 };
  const consultations = new Map<string | null, ConsultationEarnings>();
  const ofConsultation = (id: string | null | undefined) => {
    const key = id ?? null;
    let row = consultations.get(key);
    if (!row) consultations.set(key, (row = { consultationId: key, aheadMinor: 0, settlingMinor: 0, earnedMinor: 0 }));
    return row;
  };
  for (const hold of open) {
    const { phase, minor } = phaseOf(hold, now);
    if (phase === 'none') continue;
    const key = phase === 'ahead' ? 'aheadMinor' : 'settlingMinor';
    totals[key] += minor;
    ofConsultation(hold.consultationId)[key] += minor;
  }
  const months = new Map<string, { month: string; earnedMinor: number; paidOutMinor: number }>();
  for (const entry of entries) {
    const month = monthOf(entry.postedAt);
    let row = months.get(month);
    if (!row) months.set(month, (row = { month, earnedMinor: 0, paidOutMinor: 0 }));
    if (entry.type === 'booking_capture') {
      const credited = entry.availableDeltaMinor + entry.heldDeltaMinor;
      totals.earnedMinor += credited;
      row.earnedMinor += credited;
      ofConsultation(entry.consultationId).earnedMinor += credited;
    } else {
      const paid = -(entry.availableDeltaMinor + entry.heldDeltaMinor);
      totals.paidOutMinor += paid;
      row.paidOutMinor += paid;
    }
  }
  const byConsultation = [...consultations.values()].sort((a, b) => (a.consultationId ?? '').localeCompare(b.consultationId ?? ''));
  const byMonth = [...months.values()].sort((a, b) => a.month.localeCompare(b.month));
  return { totals, byConsultation, byMonth };
}

/** The default window: from the first day of the month 11 months before `now` (UTC) to `now`. */
export function defaultEarningsFrom(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 11, 1));
}
