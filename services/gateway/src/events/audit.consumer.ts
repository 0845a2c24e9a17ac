import { SUBSCRIPTIONS } from '@mkt/contracts/gateway';
import { defineConsumer, type ConsumerSpec } from '@mkt/kit/bus';
import type { AuditLog } from '../application/audit-log.use-cases';

/**
 * The gateway's one consumer: every service's admin-action event into the audit log, under the
 * service that owns the event's namespace (the consumer takes it from that service's broker user alone).
 */
export function auditConsumer(audit: AuditLog): ConsumerSpec {
  return defineConsumer({
    subscription: SUBSCRIPTIONS['gateway.audit'],
    handlers: {
      'wallet.admin_action.recorded': (event) => audit.record(event, 'wallet'),
      'consultation.admin_action.recorded': (event) => audit.record(event, 'consultation'),
      'review.admin_action.recorded': (event) => audit.record(event, 'review'),
      'catalog.admin_action.recorded': (event) => audit.record(event, 'catalog'),
      'crm.admin_action.recorded': (event) => audit.record(event, 'crm'),
    },
  });
}
