import { beforeScrape, getMetrics, Gauge } from '@mkt/kit';
import { BookingHold } from './booking-hold.model';

/** Holds not ended yet: money is (or may be) held on the buyer's wallet. */
export const OPEN_HOLD_STATUSES = ['Pending', 'Held', 'Settling'] as const;
/** An open hold this long past its slot's end is overdue: its settlement was never decided or carried out. */
export const HOLD_OVERDUE_AFTER_MS = 60 * 60_000;

let gauges: { open: Gauge; oldest: Gauge; overdue: Gauge } | undefined;

function holdGauges() {
  const registers = [getMetrics().registry];
  gauges ??= {
    open: new Gauge({ name: 'wallet_open_holds', help: 'Booking holds not ended (Pending, Held, Settling)', registers }),
    oldest: new Gauge({
      name: 'wallet_oldest_open_hold_age_seconds',
      help: 'Age of the oldest open booking hold (0: none)',
      registers,
    }),
    overdue: new Gauge({
      name: 'wallet_overdue_holds',
      help: "Open booking holds more than an hour past their slot's end",
      registers,
    }),
  };
  return gauges;
}

/**
 * The wallet's hold gauges, read at scrape with one aggregation that matches on the `status`
 * index: only open holds are read (a few per booking in flight), never the settled history.
 * A runtime job: registered with the service, removed at shutdown.
 */
export function holdMetrics(): () => () => Promise<void> {
  return () => {
    const { open, oldest, overdue } = holdGauges();
    const stop = beforeScrape(async () => {
      const now = Date.now();
      const [row] = await BookingHold.aggregate<{ open: number; oldest: Date | null; overdue: number }>([
        { $match: { status: { $in: [...OPEN_HOLD_STATUSES] } } },
        {
          $group: {
            _id: null,
            open: { $sum: 1 },
            oldest: { $min: '$createdAt' },
            overdue: {
              $sum: {
                // endsAt null (a hold of the previous release) is never overdue: null sorts below dates.
                $cond: [{ $and: [{ $gt: ['$endsAt', null] }, { $lt: ['$endsAt', new Date(now - HOLD_OVERDUE_AFTER_MS)] }] }, 1, 0],
              },
            },
          },
        },
      ]);
      open.set(row?.open ?? 0);
      oldest.set(row?.oldest ? Math.max(0, (now - new Date(row.oldest).getTime()) / 1000) : 0);
      overdue.set(row?.overdue ?? 0);
    });
    return async () => {
      stop();
    };
  };
}
