import type { Migration } from '@mkt/kit/db';
import { indexes } from './0001-indexes';
import { sellerRefs } from './0002-seller-refs';
import { bookingSteps } from './0003-booking-steps';
import { owedGiveBacks } from './0004-owed-give-backs';
import { waitingTurnIndex } from './0005-waiting-turn-index';
import { listingSweepIndexes } from './0006-listing-sweep-indexes';
import { disputedQueueIndex } from './0007-disputed-queue-index';

/** The consultation database's migrations, in order (services/consultation/README.md lists them). */
export const consultationMigrations: Migration[] = [
  indexes,
  sellerRefs,
  bookingSteps,
  owedGiveBacks,
  waitingTurnIndex,
  listingSweepIndexes,
  disputedQueueIndex,
];
