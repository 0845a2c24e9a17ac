import { beforeScrape, getMetrics, Gauge } from '@mkt/kit/metrics';
import type { BookingHoldRepository } from './booking-hold.repository';

export { OPEN_HOLD_STATUSES } from './booking-hold.repository';
import { HOLD_OVERDUE_AFTER_MS } from '../domain/admin-audit';
export { HOLD_OVERDUE_AFTER_MS };

let gauges: { open: Gauge; oldest: Gauge; overdue: Gauge } | undefined;

function holdGauges() {
  const registers = [getMetrics().registry];
  gauges ??= {
    open: new Gauge({ name: 'marketplace_wallet_open_holds', help: 'Booking holds not ended (Pending, Held, Settling)', registers }),
    oldest: new Gauge({
      name: 'marketplace_wallet_oldest_open_hold_age_seconds',
      help: 'Age of the oldest open booking hold (0: none)',
      registers,
    }),
    overdue: new Gauge({
      name: 'marketplace_wallet_overdue_holds',
      help: "Open booking holds more than an hour past their slot's end",
      registers,
    }),
  };
  return gauges;
}

/**
 * The wallet's hold gauges, read at scrape (`BookingHoldRepository.openFigures`: one
 * aggregation over open holds only). A runtime job: registered with the service, removed at
 * shutdown.
 */
export function holdMetrics(holds: BookingHoldRepository): () => () => Promise<void> {
  return () => {
    const { open, oldest, overdue } = holdGauges();
    const stop = beforeScrape(async () => {
      const now = Date.now();
      const figures = await holds.openFigures(new Date(now - HOLD_OVERDUE_AFTER_MS));
      open.set(figures.open);
      oldest.set(figures.oldest ? Math.max(0, (now - new Date(figures.oldest).getTime()) / 1000) : 0);
      overdue.set(figures.overdue);
    });
    return async () => {
      stop();
    };
  };
}
