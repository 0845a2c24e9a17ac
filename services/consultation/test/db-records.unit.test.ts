import mongoose from 'mongoose';
import { bookingRecord } from '../src/db/booking.repository';
import { consultationModels } from '../src/db/models';
import { newSessionFields } from '../src/db/session.repository';
import { newBookingOutcome, type NewBooking } from '../src/domain/records';

/**
 * The hot path writes plain values through the driver: what it stores must be what the schema's
 * document of the same record holds (its defaults included), or a default added to the schema
 * would be missing from new records. No database: documents are only built.
 */
const models = consultationModels(mongoose.createConnection());
const now = new Date('2030-01-02T10:00:00.000Z');

const booking: NewBooking = {
  _id: 'bk_1',
  referenceId: 'BK_1',
  consultationId: 'con_1',
  ruleSetId: 'rs_1',
  sellerId: 'u_seller',
  buyerId: 'u_buyer',
  buyerRef: 'USR-1',
  status: 'Pending',
  payment: 'pending',
  paymentDeadline: new Date('2030-01-02T10:15:00.000Z'),
  consultationTitle: 'Advice',
  date: '2030-01-03',
  startTime: '09:00',
  endTime: '09:30',
  startsAt: new Date('2030-01-03T09:00:00.000Z'),
  endsAt: new Date('2030-01-03T09:30:00.000Z'),
  slotKey: 'con_1|2030-01-03T09:00:00.000Z',
  dayKey: 'con_1|2030-01-03',
  places: 1,
  participants: [{ fullName: 'A B', email: 'a@example.com', phone: '+251911000000' }],
  subTotalMinor: 1000,
  totalAmountMinor: 1000,
  currency: 'ETB',
  couponId: null,
  notes: null,
  correlationId: 'corr-1',
  ...newBookingOutcome(),
};

describe('the records the booking path inserts without a mongoose document', () => {
  test('a new booking: what the schema’s document holds, defaults included', async () => {
    const doc = new models.Booking({ ...booking, createdAt: now, updatedAt: now });
    await doc.validate();
    expect(bookingRecord(booking, now)).toEqual(doc.toObject({ depopulate: true }));
  });

  test('a new session’s upsert fields: the schema’s defaults of everything the join does not write', () => {
    const fields = newSessionFields(booking, { sellerId: 'u_seller', title: 'Advice' }, now);
    const {
      consultationId: _c,
      startsAt: _s,
      status: _st,
      bookingIds: _b,
      buyerIds: _bu,
      participantCount: _p,
      updatedAt: _u,
      ...schemaFresh
    } = new models.Session({
      _id: fields._id,
      referenceId: fields.referenceId,
      sellerId: 'u_seller',
      consultationTitle: 'Advice',
      endsAt: booking.endsAt,
      slotKey: booking.slotKey,
      createdAt: now,
    }).toObject({ depopulate: true });
    expect(fields).toEqual(schemaFresh);
    expect(fields._id).toMatch(/^ses_/);
  });
});
