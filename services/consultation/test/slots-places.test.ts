import { as, bookingBody, daysAhead, givenOffer, newUser, useConsultationApp, type Offer } from './harness';

const app = useConsultationApp();

type ListedSlot = { date: string; startTime: string; remaining: number; capacity: number };

async function book(offer: Offer, date: string, startTime: string, endTime: string) {
  const res = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, { date, startTime, endTime }));
  expect(res.status).toBe(200);
}

describe('GET /consultations/{id}/slots counts the places taken over the whole range', () => {
  test('a full day shows no place left, a slot shows what its bookings left, and another consultation’s bookings count nothing', async () => {
    const offer = await givenOffer(app, { capacity: 2, maxBookingsPerDay: 2 });
    const neighbour = await givenOffer(app, { capacity: 2 });
    const [full, partly, free] = [daysAhead(7), daysAhead(8), daysAhead(9)];
    await book(offer, full, '09:00', '10:00');
    await book(offer, full, '10:00', '11:00');
    await book(offer, partly, '10:00', '11:00');
    await book(neighbour, free, '10:00', '11:00');
    await book(neighbour, free, '10:00', '11:00');

    const res = await as(app, undefined)('GET', `/consultations/${offer.consultationId}/slots?from=${full}&to=${free}`);

    expect(res.status).toBe(200);
    const slots = res.body.data.slots as ListedSlot[];
    expect(slots).toHaveLength(3 * 8);
    const remainingOn = (date: string) => slots.filter((slot) => slot.date === date).map((slot) => [slot.startTime, slot.remaining]);
    expect(remainingOn(full).every(([, remaining]) => remaining === 0)).toBe(true);
    expect(remainingOn(partly)).toEqual(
      ['09:00', '10:00', '11:00', '12:00', '13:00', '14:00', '15:00', '16:00'].map((time) => [time, time === '10:00' ? 1 : 2]),
    );
    expect(remainingOn(free).every(([, remaining]) => remaining === 2)).toBe(true);
    expect(slots.every((slot) => slot.capacity === 2)).toBe(true);
  });
});
