import type { OPERATIONS } from '@mkt/contracts/consultation';
import { adminRequestOf, type OperationHandlers } from '@mkt/kit/http';
import type { Consultations } from '../application/consultations.use-cases';
import { mayReview } from '../domain/access';
import { versionOf } from '../domain/consultation-edits';
import { approvalQueueItem, consultationListItem, consultationRevisionView, consultationView } from './views';

type Handlers = OperationHandlers<typeof OPERATIONS, 'consultation'>;

/** `/consultations` itself: public reads (a token read when sent), seller writes, admin approval. */
export function consultationHandlers(
  consultations: Consultations,
): Pick<
  Handlers,
  | 'createConsultation'
  | 'listConsultations'
  | 'getConsultation'
  | 'updateConsultation'
  | 'approveConsultation'
  | 'listApprovalQueue'
  | 'listSlots'
> {
  return {
    createConsultation: async ({ body }, { user }) => {
      const c = await consultations.create(user, body);
      const { id, referenceId, title, duration, sessionType, currentStatus, visibility, createdAt } = consultationView(c, null);
      const { version } = consultationRevisionView(c);
      return {
        data: { id, referenceId, title, duration, sessionType, currentStatus, visibility, createdAt, version },
        message: 'Consultation created',
      };
    },
    listConsultations: async ({ query }, { user }) => {
      const { items, pagination } = await consultations.list(user, query);
      return { data: { consultations: items.map(consultationListItem), pagination } };
    },
    getConsultation: async ({ params }, { user }) => {
      const { consultation, pricing } = await consultations.detail(user, params.id);
      return { data: consultationView(consultation, pricing, mayReview(user, consultation)) };
    },
    updateConsultation: async ({ params, body }, { req, user }) => {
      const c = await consultations.update(user, params.id, body, adminRequestOf(req));
      // The caller owns it (or is an admin): the answer says what waits for review.
      const { id, title, duration, currentStatus, visibility, updatedAt } = consultationView(c, null);
      const { pendingRevision, version } = consultationRevisionView(c);
      const message = pendingRevision ? 'Consultation updated; the new text is live once an admin approves it' : 'Consultation updated';
      return { data: { id, title, duration, currentStatus, visibility, updatedAt, pendingRevision, version }, message };
    },
    approveConsultation: async ({ params, body }, { req, user }) => {
      const { version, revisionId } = body;
      const { consultation: c, revised } = await consultations.approve(user, params.id, { version, revisionId }, adminRequestOf(req));
      const data = {
        id: c._id,
        referenceId: c.referenceId,
        currentStatus: c.currentStatus,
        visibility: c.visibility,
        version: versionOf(c),
      };
      return { data, message: revised ? 'Revision approved' : 'Consultation approved' };
    },
    listApprovalQueue: async ({ query }) => {
      const { items, counts, pagination } = await consultations.approvalQueue(query);
      return {
        data: { counts, items: items.map(approvalQueueItem) },
        message: 'Consultations and revisions waiting for approval',
        pagination,
      };
    },
    listSlots: async ({ params, query }, { user }) => {
      const { from, to } = query;
      return { data: await consultations.freeSlots(user, params.id, from, to) };
    },
  };
}
