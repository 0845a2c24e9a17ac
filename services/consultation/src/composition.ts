import { periodicJob, type Logger, type RunOptions } from '@mkt/kit';
import { assembleParts, createApp, type ConsultationParts } from './app';
import type { ConsultationConfig } from './config';
import { Booking, BookingRequestKey, DayPlace, Session, SlotPlace } from './db/booking.models';
import { Consultation, CouponCheck, Discount, Pricing, RatingEntry, RuleSet, VisibilityRuleSet } from './db/setup.models';
import { sweepCouponChecks } from './domain/coupons';
import { reviewsConsumer } from './events/reviews.consumer';
import { walletPaymentsConsumer } from './events/wallet-payments.consumer';

/** How the consultation service is put together (main.ts and the component tests). */
export function consultationService(config: Readonly<ConsultationConfig>, log: Logger) {
  let parts: ConsultationParts | undefined;
  const options: RunOptions = {
    name: 'consultation',
    config,
    log,
    models: [
      RuleSet,
      Pricing,
      Discount,
      VisibilityRuleSet,
      Consultation,
      RatingEntry,
      CouponCheck,
      SlotPlace,
      DayPlace,
      Booking,
      Session,
      BookingRequestKey,
    ],
    outboxSources: [
      { name: 'bookings', model: Booking },
      { name: 'sessions', model: Session },
    ],
    consumers: [reviewsConsumer, walletPaymentsConsumer(() => parts?.bookings)],
    createApp: (runtime) => {
      parts = assembleParts(runtime, config);
      return createApp({ config, runtime }, parts);
    },
    jobs: [
      periodicJob('booking-sweep', 10_000, () => parts!.bookings.sweep()),
      periodicJob('session-sweep', 60_000, () => parts!.sessions.sweep()),
      periodicJob('coupon-check-sweep', 60_000, sweepCouponChecks),
    ],
  };
  return { options, parts: () => parts! };
}
