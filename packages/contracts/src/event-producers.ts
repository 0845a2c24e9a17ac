// Who publishes each event type, without a schema (no zod): the broker users' permissions
// (bus-access.ts) read it where the schemas must not be loaded (`@mkt/contracts/bus-access`).
import type { Service } from './api';
import type { EventType } from './events';

/**
 * Who publishes each type (the service whose outbox holds it: `makeEvent(type, …, { source })`
 * in its code) and what it means. A new type cannot be added without naming both.
 */
export const EVENT_PRODUCERS: { readonly [T in EventType]: { readonly producer: Service; readonly summary: string } } = {
  'identity.user.registered': { producer: 'gateway', summary: 'A user registered (buyer or seller): their ids, role and name.' },
  'consultation.booking.confirmed': {
    producer: 'consultation',
    summary: 'A booking was confirmed (paid bookings: once the hold is in place).',
  },
  'consultation.booking.cancelled': {
    producer: 'consultation',
    summary: 'A booking was cancelled: by whom or why, and what goes back to the buyer.',
  },
  'consultation.session.completed': {
    producer: 'consultation',
    summary: 'A session was held: its buyers (and those who paid) and bookings.',
  },
  'consultation.session.no_show': { producer: 'consultation', summary: 'A session was marked a no-show: its buyers and bookings.' },
  'consultation.booking.disputed': {
    producer: 'consultation',
    summary: 'A buyer disputes a no-show of their booking: the wallet holds its capture back for an admin.',
  },
  'wallet.topup.completed': { producer: 'wallet', summary: 'A top-up reached its final status.' },
  'wallet.payout.status_changed': { producer: 'wallet', summary: 'A payout request changed status.' },
  'wallet.booking_refund.completed': {
    producer: 'wallet',
    summary: 'A paid booking’s hold was cancelled: the refund to the buyer, the rest to the seller.',
  },
  'wallet.booking_payment.captured': {
    producer: 'wallet',
    summary: 'A paid booking was delivered: its hold went to the seller, less the fee.',
  },
  'review.created': { producer: 'review', summary: 'A review was created, with its rating.' },
  'review.visibility_changed': { producer: 'review', summary: 'A review was hidden or shown again (apply only over a lower `sequence`).' },
  'wallet.admin_action.recorded': {
    producer: 'wallet',
    summary: 'An admin moved a payout or voided or upheld a booking hold: the audit entry, written with the action itself.',
  },
  'consultation.admin_action.recorded': {
    producer: 'consultation',
    summary:
      'An admin approved a consultation or its revision, edited a seller’s consultation or moved their session: the audit entry, written with the action itself.',
  },
  'review.admin_action.recorded': {
    producer: 'review',
    summary: 'An admin hid or restored a review: the audit entry, written with the change itself.',
  },
  'catalog.admin_action.recorded': {
    producer: 'catalog',
    summary: 'An admin edited a seller’s product or draft or changed its visibility: the audit entry, written with the change itself.',
  },
  'crm.admin_action.recorded': {
    producer: 'crm',
    summary: 'An admin recorded or changed a customer relationship for a seller: the audit entry, written with the change itself.',
  },
};
