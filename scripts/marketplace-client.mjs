// What the scripts that drive a running system (`npm run fuzz`, `npm run bench:writes`) do as a
// client would: pay a top-up on the sandbox hosted checkout, book a slot.

/**
 * Presses Pay on the checkout page of a top-up: `paymentUrl` is the link its creation answered,
 * `base` the gateway. Throws unless the checkout completed the payment (303 to the client's
 * address with `status=Completed`).
 */
export async function payInSandbox(base, paymentUrl) {
  const link = new URL(paymentUrl);
  const paid = await fetch(`${base}${link.pathname}/pay`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: link.searchParams.get('token') ?? '' }).toString(),
  });
  const location = paid.headers.get('location') ?? '';
  if (paid.status !== 303 || !location.includes('status=Completed'))
    throw new Error(`sandbox payment of ${link.pathname} failed: ${paid.status} ${location}`);
}

/**
 * The body of `POST /consultations/bookings` for one slot (as `GET …/slots` lists it) of a
 * consultation on `ruleSet` sold by `seller`, for one participant, at `price` ETB.
 */
export function bookingBody({ seller, consultation, ruleSet }, slot, participant, price) {
  return {
    SellerId: seller.id,
    consultationId: consultation.id,
    ruleSetId: ruleSet.id,
    date: slot.date,
    startTime: slot.startTime,
    endTime: slot.endTime,
    participants: [participant],
    subTotal: price,
    totalAmount: price,
    currency: 'ETB',
  };
}
