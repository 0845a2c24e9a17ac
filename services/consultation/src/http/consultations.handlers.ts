import {
  ApprovalQueueQuery,
  ApproveConsultationBody,
  ConsultationListQuery,
  CreateConsultationBody,
  KeyParams,
  SlotsQuery,
  UpdateConsultationBody,
  ok,
} from '@mkt/contracts';
import { adminRequestOf, currentUser, handle, type MountOptions } from '@mkt/kit';
import type { Consultations } from '../application/consultations';
import { mayReview } from '../domain/access';
import { versionOf } from '../domain/consultation-edits';
import { approvalQueueItem, consultationListItem, consultationView } from './views';

/** `/consultations` itself: public reads (a token read when sent), seller writes, admin approval. */
export function consultationHandlers(consultations: Consultations): MountOptions['handlers'] {
  return {
    'POST /consultations': handle({ body: CreateConsultationBody }, async (input, req, res) => {
      const c = await consultations.create(currentUser(req), input.body);
      const { id, referenceId, title, duration, sessionType, currentStatus, visibility, createdAt, version } = consultationView(
        c,
        null,
        true,
      );
      res.json(
        ok({ id, referenceId, title, duration, sessionType, currentStatus, visibility, createdAt, version }, 'Consultation created'),
      );
    }),
    'GET /consultations': handle({ query: ConsultationListQuery }, async (input, req, res) => {
      const { items, pagination } = await consultations.list(req.user, input.query);
      res.json(ok({ consultations: items.map(consultationListItem), pagination }));
    }),
    'GET /consultations/{id}': handle({ params: KeyParams }, async (input, req, res) => {
      const { consultation, pricing } = await consultations.detail(req.user, input.params.id);
      res.json(ok(consultationView(consultation, pricing, mayReview(req.user, consultation))));
    }),
    'PUT /consultations/{id}': handle({ params: KeyParams, body: UpdateConsultationBody }, async (input, req, res) => {
      const c = await consultations.update(currentUser(req), input.params.id, input.body, adminRequestOf(req));
      // The caller owns it (or is an admin): the answer says what waits for review.
      const { id, title, duration, currentStatus, visibility, updatedAt, pendingRevision, version } = consultationView(c, null, true);
      const message = pendingRevision ? 'Consultation updated; the new text is live once an admin approves it' : 'Consultation updated';
      res.json(ok({ id, title, duration, currentStatus, visibility, updatedAt, pendingRevision, version }, message));
    }),
    'POST /consultations/{id}/approve': handle({ params: KeyParams, body: ApproveConsultationBody }, async (input, req, res) => {
      const { version, revisionId } = input.body;
      const { consultation: c, revised } = await consultations.approve(
        currentUser(req),
        input.params.id,
        { version, revisionId },
        adminRequestOf(req),
      );
      const data = {
        id: c._id,
        referenceId: c.referenceId,
        currentStatus: c.currentStatus,
        visibility: c.visibility,
        version: versionOf(c),
      };
      res.json(ok(data, revised ? 'Revision approved' : 'Consultation approved'));
    }),
    'GET /consultations/admin/approvals': handle({ query: ApprovalQueueQuery }, async (input, _req, res) => {
      const { items, counts, pagination } = await consultations.approvalQueue(input.query);
      const data = { counts, items: items.map(approvalQueueItem) };
      res.json(ok(data, 'Consultations and revisions waiting for approval', pagination));
    }),
    'GET /consultations/{id}/slots': handle({ params: KeyParams, query: SlotsQuery }, async (input, req, res) => {
      const { from, to } = input.query;
      res.json(ok(await consultations.freeSlots(req.user, input.params.id, from, to)));
    }),
  };
}
