import type { RequestHandler, Router } from 'express';
import { ConsultationListQuery, CreateConsultationBody, KeyParams, SlotsQuery, UpdateConsultationBody, ok } from '@mkt/contracts';
import { authenticateOptional, currentUser, requireRole, serviceRouter, validate } from '@mkt/kit';
import {
  approveConsultation,
  consultationDetail,
  createConsultation,
  freeSlots,
  listConsultations,
  updateConsultation,
} from '../domain/consultations';
import { consultationListItem, consultationView } from './views';

/** `/consultations` itself: public reads, seller writes, admin approval. */
export function consultationsRouter(publicKey: string, auth: RequestHandler): Router {
  const router = serviceRouter();
  const maybeAuth = authenticateOptional(publicKey);
  router.post('/', auth, validate({ body: CreateConsultationBody }), async (req, res) => {
    const c = await createConsultation(currentUser(req), res.locals.body);
    const { id, referenceId, title, duration, sessionType, currentStatus, visibility, createdAt } = consultationView(c, null);
    res.json(ok({ id, referenceId, title, duration, sessionType, currentStatus, visibility, createdAt }, 'Consultation created'));
  });
  router.get('/', maybeAuth, validate({ query: ConsultationListQuery }), async (req, res) => {
    const { items, pagination } = await listConsultations(req.user, res.locals.query);
    res.json(ok({ consultations: items.map(consultationListItem), pagination }));
  });
  router.get('/:id', maybeAuth, validate({ params: KeyParams }), async (req, res) => {
    const { consultation, pricing } = await consultationDetail(req.user, res.locals.params.id);
    res.json(ok(consultationView(consultation, pricing)));
  });
  router.put('/:id', auth, validate({ params: KeyParams, body: UpdateConsultationBody }), async (req, res) => {
    const c = await updateConsultation(currentUser(req), res.locals.params.id, res.locals.body);
    const { id, title, duration, currentStatus, visibility, updatedAt } = consultationView(c, null);
    res.json(ok({ id, title, duration, currentStatus, visibility, updatedAt }, 'Consultation updated'));
  });
  router.post('/:id/approve', auth, requireRole('admin'), validate({ params: KeyParams }), async (_req, res) => {
    const c = await approveConsultation(res.locals.params.id);
    res.json(
      ok({ id: c._id, referenceId: c.referenceId, currentStatus: c.currentStatus, visibility: c.visibility }, 'Consultation approved'),
    );
  });
  router.get('/:id/slots', maybeAuth, validate({ params: KeyParams, query: SlotsQuery }), async (req, res) => {
    const { from, to } = res.locals.query;
    res.json(ok(await freeSlots(req.user, res.locals.params.id, from, to)));
  });
  return router;
}
