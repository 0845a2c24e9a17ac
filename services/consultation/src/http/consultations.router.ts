import type { RequestHandler, Router } from 'express';
import { ConsultationListQuery, CreateConsultationBody, KeyParams, SlotsQuery, UpdateConsultationBody, ok } from '@mkt/contracts';
import { authenticateOptional, currentUser, requireRole, serviceRouter, withInput } from '@mkt/kit';
import {
  approveConsultation,
  consultationDetail,
  createConsultation,
  freeSlots,
  listConsultations,
  updateConsultation,
} from '../domain/consultations';
import type { References } from '../domain/access';
import { consultationListItem, consultationView } from './views';

/** `/consultations` itself: public reads, seller writes, admin approval. */
export function consultationsRouter(publicKey: string, auth: RequestHandler, references: References): Router {
  const router = serviceRouter();
  const maybeAuth = authenticateOptional(publicKey);
  router.post(
    '/',
    auth,
    withInput({ body: CreateConsultationBody }, async (input, req, res) => {
      const c = await createConsultation(currentUser(req), input.body, references);
      const { id, referenceId, title, duration, sessionType, currentStatus, visibility, createdAt } = consultationView(c, null);
      res.json(ok({ id, referenceId, title, duration, sessionType, currentStatus, visibility, createdAt }, 'Consultation created'));
    }),
  );
  router.get(
    '/',
    maybeAuth,
    withInput({ query: ConsultationListQuery }, async (input, req, res) => {
      const { items, pagination } = await listConsultations(req.user, input.query);
      res.json(ok({ consultations: items.map(consultationListItem), pagination }));
    }),
  );
  router.get(
    '/:id',
    maybeAuth,
    withInput({ params: KeyParams }, async (input, req, res) => {
      const { consultation, pricing } = await consultationDetail(req.user, input.params.id);
      res.json(ok(consultationView(consultation, pricing)));
    }),
  );
  router.put(
    '/:id',
    auth,
    withInput({ params: KeyParams, body: UpdateConsultationBody }, async (input, req, res) => {
      const c = await updateConsultation(currentUser(req), input.params.id, input.body);
      const { id, title, duration, currentStatus, visibility, updatedAt } = consultationView(c, null);
      res.json(ok({ id, title, duration, currentStatus, visibility, updatedAt }, 'Consultation updated'));
    }),
  );
  router.post(
    '/:id/approve',
    auth,
    requireRole('admin'),
    withInput({ params: KeyParams }, async (input, _req, res) => {
      const c = await approveConsultation(input.params.id);
      res.json(
        ok({ id: c._id, referenceId: c.referenceId, currentStatus: c.currentStatus, visibility: c.visibility }, 'Consultation approved'),
      );
    }),
  );
  router.get(
    '/:id/slots',
    maybeAuth,
    withInput({ params: KeyParams, query: SlotsQuery }, async (input, req, res) => {
      const { from, to } = input.query;
      res.json(ok(await freeSlots(req.user, input.params.id, from, to)));
    }),
  );
  return router;
}
