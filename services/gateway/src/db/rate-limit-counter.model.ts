import mongoose from 'mongoose';
import { windowedCounterSchema, type WindowedCounterDoc } from '@mkt/kit';

/** Hits per key and calendar window of the limits every gateway replica must share (kit's WindowedCounter). */
export const RateLimitCounter = mongoose.model<WindowedCounterDoc>('RateLimitCounter', windowedCounterSchema(), 'rate_limit_counters');
