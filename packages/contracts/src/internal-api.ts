import type { z } from 'zod';
import type { Endpoint, Service } from './api';
import { BookingHoldParams, BookingHoldView, CreateBookingHoldBody } from './booking-holds';

/**
 * One endpoint between services: `/internal/...`, the shared service credential
 * (`x-internal-token`), never routed by the gateway and never in the public OpenAPI document.
 * The same shape as the public table's entries (`Endpoint`), so a service mounts both alike.
 */
export interface InternalEndpoint extends Pick<Endpoint, 'method' | 'path' | 'summary' | 'params' | 'query' | 'body' | 'errors'> {
  service: Exclude<Service, 'gateway'>;
  access: 'service';
  /** The success envelope's `data`. */
  data?: z.ZodType;
}

export const INTERNAL_ENDPOINTS: InternalEndpoint[] = [
  {
    method: 'post',
    path: '/internal/holds',
    service: 'wallet',
    access: 'service',
    summary: 'Hold a paid booking’s total (idempotent by bookingId)',
    body: CreateBookingHoldBody,
    data: BookingHoldView,
  },
  {
    method: 'post',
    path: '/internal/holds/{bookingId}/void',
    service: 'wallet',
    access: 'service',
    summary: 'Give up a booking’s hold',
    params: BookingHoldParams,
    data: BookingHoldView,
  },
];
