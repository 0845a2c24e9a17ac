import { createLogger, startService } from '@mkt/kit';
import { assembleParts, createApp, type ConsultationParts } from './app';
import { loadConfig } from './config';
import { Booking, DayPlace, Session, SlotPlace } from './db/booking.models';
import { Consultation, Discount, Pricing, RatingEntry, RuleSet, VisibilityRuleSet } from './db/setup.models';
import { reviewCreatedConsumer } from './events/review-created.consumer';

const config = loadConfig();
const log = createLogger('consultation', config.LOG_LEVEL);
let parts: ConsultationParts | undefined;

startService({
  name: 'consultation',
  config,
  log,
  models: [RuleSet, Pricing, Discount, VisibilityRuleSet, Consultation, RatingEntry, SlotPlace, DayPlace, Booking, Session],
  outboxSources: [
    { name: 'bookings', model: Booking },
    { name: 'sessions', model: Session },
  ],
  consumers: [reviewCreatedConsumer],
  createApp: (runtime) => {
    parts = assembleParts(runtime);
    return createApp({ config, runtime }, parts);
  },
  jobs: [
    () => {
      const timer = setInterval(
        () => void parts?.bookings.sweep().catch((err: unknown) => log.warn({ err }, 'booking sweep failed')),
        10_000,
      );
      timer.unref();
      return async () => clearInterval(timer);
    },
  ],
});
