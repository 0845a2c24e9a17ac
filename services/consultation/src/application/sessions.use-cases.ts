import { randomUUID } from 'node:crypto';
import type { AdminRequestContext, EventEnvelope, PageQuery } from '@mkt/contracts/consultation';
import { InvalidState } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import type { Logger } from '@mkt/kit/logger';
import {
  checkDispute,
  checkMove,
  disputeEvent,
  confirmedOf,
  movedFields,
  moveEvent,
  moveTime,
  overdueBefore,
  overdueEnd,
  sessionListScope,
  sessionMoveAudit,
  SESSION_MOVES,
  slotKeyOf,
  type MoveDetails,
  type SessionMove,
  type SessionRules,
} from '../domain/sessions';
import type { SessionDoc } from '../domain/records';
import type { BookingRepository } from '../db/booking.repository';
import type { ConsultationRepository } from '../db/consultation.repository';
import type { PlaceRepository } from '../db/place.repository';
import type { SessionRepository } from '../db/session.repository';
import type { BookingFlow } from './bookings.steps';

export interface SessionDeps {
  sessions: SessionRepository;
  bookings: BookingRepository;
  consultations: ConsultationRepository;
  places: PlaceRepository;
  steps: BookingFlow;
  log: Logger;
  rules: SessionRules;
}

export class Sessions {
  constructor(private readonly deps: SessionDeps) {}

  /** A seller's sessions, a buyer's sessions (those they booked), or all for an admin. */
  list(user: AuthenticatedUser, query: PageQuery & { status?: string }) {
    return this.deps.sessions.page(sessionListScope(user), query);
  }

  /**
   * Start, end or no-show by the seller (or an admin): checked, timed, then one conditional write
   * with its event and, for an admin's move of another seller's session, its audit entry.
   */
  async move(
    user: AuthenticatedUser,
    key: string,
    move: SessionMove,
    details: MoveDetails,
    context: AdminRequestContext,
    now = new Date(),
  ): Promise<SessionDoc> {
    const correlationId = context.requestId;
    const session = checkMove(user, await this.deps.sessions.findByKey(key), move, now, this.deps.rules.noShowGrace);
    const at = moveTime(move, session, move === 'no-show' ? undefined : details.at, now, this.deps.rules.startLeadMs);
    const event = await this.eventOf(session, move, at, correlationId);
    // Leaving Scheduled closes the slot first: no booking (nor hold) can join it afterwards.
    if (move !== 'end') await this.closeSlotOf(session);
    const set = movedFields(session, move, details, at);
    const audit = sessionMoveAudit(user, session, move, set, context, now);
    return this.applyMove(
      session,
      move,
      set,
      [event, audit].filter((e): e is EventEnvelope => e !== undefined),
    );
  }

  /**
   * The buyer disputes the seller's no-show: each of their Confirmed bookings on the session is
   * flagged (one write guarded by `dispute: null`, with its event: the wallet holds the capture
   * back until an admin decides). A repeat is 409.
   */
  async dispute(user: AuthenticatedUser, key: string, reason: string, correlationId: string, now = new Date()) {
    const { sessions, bookings, log } = this.deps;
    const session = await sessions.findByKey(key);
    const mine = session ? await bookings.confirmedOfSessionBy(session._id, user.id) : [];
    const open = checkDispute(user, session, mine);
    const disputed: string[] = [];
    for (const booking of open) {
      const event = disputeEvent(session!, booking._id, user.id, reason, now, correlationId);
      const moved = await bookings.move(
        booking._id,
        { status: 'Confirmed', dispute: null },
        { dispute: { reason, at: now, by: user.id } },
        event,
      );
      if (!moved) continue;
      disputed.push(booking._id);
    }
    if (disputed.length === 0) throw new InvalidState('This no-show is already disputed');
    log.info({ sessionId: session!._id, bookingIds: disputed, correlationId }, 'no-show disputed by its buyer');
    return { sessionId: session!._id, bookingIds: disputed, reason, disputedAt: now.toISOString() };
  }

  /**
   * Ends what nobody ended, so no hold stays open for ever: a session still Scheduled
   * `expiryGraceMs` after its slot's end was never held — Expired, its Confirmed bookings
   * cancelled with a full refund; one still In Progress then is Completed at its slot's end (its
   * holds are captured). Each step is guarded by the state it leaves; a crash is resumed here.
   */
  async sweep(now = new Date()): Promise<void> {
    const { sessions, bookings, steps, log, rules } = this.deps;
    const endedBefore = overdueBefore(now, rules);
    const correlationId = randomUUID();
    for (const session of await sessions.overdue('Scheduled', endedBefore)) {
      await this.closeSlotOf(session);
      await sessions.expire(session._id, now);
      log.info({ sessionId: session._id, correlationId }, 'session expired: nobody held it');
    }
    for (const session of await sessions.unfinishedExpiries()) {
      for (const booking of await bookings.confirmedOfSession(session._id)) await steps.cancelBySystem(booking, 'session_expired', now);
      await sessions.finishExpiry(session._id);
    }
    for (const session of await sessions.overdue('In Progress', endedBefore)) {
      try {
        const at = overdueEnd(session);
        const event = await this.eventOf(session, 'end', at, correlationId);
        await this.applyMove(session, 'end', movedFields(session, 'end', {}, at), event ? [event] : []);
      } catch (err) {
        log.warn({ err, sessionId: session._id, correlationId }, 'an overdue session could not be completed; the sweep tries again');
      }
    }
  }

  private async closeSlotOf(session: SessionDoc): Promise<void> {
    await this.deps.places.closeSlot(slotKeyOf(session), session.consultationId);
  }

  /** The event of a move, from the session's Confirmed bookings (and, for an end, the consultation's reference). */
  private async eventOf(session: SessionDoc, move: SessionMove, at: Date, correlationId: string): Promise<EventEnvelope | undefined> {
    if (move === 'start') return undefined;
    const confirmed = confirmedOf(await this.deps.bookings.confirmedBuyersOfSession(session._id));
    const reference = await this.deps.consultations.referenceOf(session.consultationId);
    return moveEvent(session, move, at, confirmed, reference, correlationId);
  }

  /**
   * The state change and its event in one write, guarded by the state the checks saw: of two
   * racing moves one applies, the other is 409.
   */
  private async applyMove(session: SessionDoc, move: SessionMove, set: Record<string, unknown>, events: EventEnvelope[]) {
    const { sessions, log } = this.deps;
    const { from, to } = SESSION_MOVES[move];
    const moved = await sessions.move(session._id, from, set, events);
    if (!moved) throw new InvalidState(`The session is no longer ${from}`);
    log.info({ sessionId: session._id, move, status: to }, 'session moved');
    return moved;
  }
}
