// The journey through a running gateway, shared by the scripts that prove a whole system
// (`scripts/containers.mjs compose`: the compose project; `scripts/mixed-versions.mjs`: releases
// side by side): a seller and a buyer register, the seller offers a consultation, the admin
// approves it, the buyer tops up on the sandbox checkout and books it (paid from the wallet: a
// hold), the seller's CRM shows the buyer, the session starts and ends once the slot has begun,
// the wallet decides to capture the hold, the buyer reviews it. Every answer is checked; each
// step is timed and recorded. Every call goes through the project's SDK (@mkt/client): one client
// per user, signed in by it, the top-up paid on its sandbox checkout.
import { approveConsultation, offerConsultation } from './lib/seed.mjs';
import { answer, bookingBody, sdk } from './marketplace-client.mjs';
import { messageOf } from './lib/errors.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** `YYYY-MM-DD`, `HH:MM:SS` and the hour of `date` on the wall clock of `zone`. */
export function wallClock(date, zone) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(date)
      .map(({ type, value }) => [type, value]),
  );
  return {
    date: `${parts.year}-${parts.month}-${parts.day}`,
    time: `${parts.hour}:${parts.minute}:${parts.second}`,
    hour: Number(parts.hour),
  };
}

/**
 * Runs the journey against the gateway at `base` with the seeded `admin` ({email, password}).
 * Options:
 * - `say(line)`: one line per step (and its detail);
 * - `redact(text)`: masks secrets in what a failure prints (default: as is);
 * - `record`: an array each step is pushed to as `{ step, ok, seconds, detail }` (the failed
 *   one with `ok: false` and the error's first line), for a caller's table;
 * - `settle`: also wait for the slot's end, when the wallet moves the captured hold (a
 *   seller is paid only once the time bought is over; 5 minutes after the slot begins), and check
 *   the seller credited and the buyer's hold gone.
 * Throws at the first step that fails.
 * @param {string} base
 * @param {{ email: string, password: string }} admin
 * @param {{ say?: (line: string) => void, redact?: (text: string) => string, record?: Array<{ step: string, ok: boolean, seconds: number, detail: string }>, settle?: boolean }} [options]
 */
export async function journey(base, admin, { say = () => undefined, redact = (text) => text, record = [], settle = false } = {}) {
  const { MarketplaceClient } = await sdk();
  const clientOf = () => new MarketplaceClient({ baseUrl: base, timeoutMs: 20_000 });
  /**
   * The answer's body when it is `status` and `check` holds of it; else throws naming `what`.
   * @param {string} what
   * @param {{ status: number, body: any }} res
   * @param {number} status
   * @param {(body: any) => boolean} [check]
   */
  const expect = (what, res, status, check = () => true) => {
    if (res.status !== status || !check(res.body))
      throw new Error(`${what}: expected ${status}, got ${res.status} ${redact(JSON.stringify(res.body)).slice(0, 600)}`);
    return res.body;
  };
  /** Polls a GET until it answers 200 with what `check` wants; throws naming `what` and the last answer. */
  const eventually = async (what, call, check, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    let last;
    for (;;) {
      try {
        const res = await call();
        if (res.status === 200 && check(res.body)) return res.body;
        last = `${res.status} ${JSON.stringify(res.body).slice(0, 400)}`;
      } catch (err) {
        last = err instanceof Error && err.name === 'ApiError' ? String(err) : messageOf(err);
      }
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s (last: ${redact(String(last))})`);
      await sleep(300);
    }
  };
  /** One step: timed, said, recorded; its function returns the detail to print. */
  const step = async (name, run) => {
    const started = Date.now();
    const seconds = () => Number(((Date.now() - started) / 1000).toFixed(1));
    try {
      const detail = (await run()) ?? '';
      record.push({ step: name, ok: true, seconds: seconds(), detail });
      say(`  journey: ${name}${detail ? ` — ${detail}` : ''}`);
    } catch (caught) {
      // The SDK's ApiError says its operation, status, code and request id in its String().
      const err = caught instanceof Error && caught.name === 'ApiError' ? new Error(String(caught), { cause: caught }) : caught;
      record.push({ step: name, ok: false, seconds: seconds(), detail: redact(messageOf(err)).split('\n')[0] });
      say(`  journey: ${name} — FAILED`);
      throw err;
    }
  };

  const adminApi = clientOf();
  await step('the admin logs in', async () => {
    const session = await adminApi.signIn(admin.email, admin.password);
    if (!session.accessToken) throw new Error('admin login: no access token');
    return admin.email;
  });
  const register = async (role, fullName) => {
    const email = `${role}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}@example.com`;
    const client = clientOf();
    const session = await client.register({ email, password: 'a long password', fullName, role });
    if (!session.accessToken) throw new Error(`register ${role}: no access token`);
    return { api: client.api, client, id: session.user.id, ref: session.user.referenceId, email, fullName };
  };
  let seller;
  let buyer;
  await step('a seller and a buyer register', async () => {
    seller = await register('seller', 'Abebe Kebede');
    buyer = await register('buyer', 'Sara Tesfaye');
    return `${seller.ref}, ${buyer.ref}`;
  });

  // One 5-minute slot starting at the first whole minute at least 20 s away, in a zone where it
  // stays inside one day: booked before it starts, started at once, ended once it has begun.
  const price = 750;
  const duration = 5;
  const startsAt = new Date(Math.floor((Date.now() + 20_000 + 60_000) / 60_000) * 60_000);
  const endsAt = new Date(startsAt.getTime() + duration * 60_000);
  const zone = ['Africa/Addis_Ababa', 'America/New_York', 'Asia/Tokyo', 'Pacific/Honolulu'].find((z) => {
    const hour = wallClock(startsAt, z).hour;
    return hour >= 1 && hour <= 22;
  });
  if (!zone) throw new Error('none of the journey time zones has the slot inside one day');
  const start = wallClock(startsAt, zone);
  const end = wallClock(endsAt, zone);
  let ruleSet;
  let consultation;
  /** What a failed seeding call is named in the step's error. */
  const SEEDED = {
    '/consultations/availability-rule-sets/rule-sets': 'rule set',
    '/consultations/pricing': 'pricing',
    '/consultations': 'consultation',
    '/consultations/{id}/approve': 'approve',
  };
  /** scripts/lib/seed.mjs's calls as `who`, each answer checked as every step's are (200, else the step fails). */
  const callerOf = (who) => async (method, path, body, params) =>
    expect(SEEDED[path] ?? path, await answer(who.api[method](path, { body, ...(params ? { params: { path: params } } : {}) })), 200).data;
  await step('the seller offers a consultation (rule set, pricing)', async () => {
    ({ ruleSet, consultation } = await offerConsultation(callerOf(seller), {
      ruleSet: { name: 'Every day', timezone: zone, intervals: [[start.time, end.time]], enabled: true },
      pricing: { basePrice: price },
      consultation: { title: 'Business plan review', duration, language: 'Amharic' },
    }));
    return `${consultation.referenceId}, one slot ${start.date} ${start.time.slice(0, 5)} ${zone}`;
  });
  await step('the admin approves it', async () => {
    const approved = await approveConsultation(callerOf(adminApi), consultation);
    if (approved?.visibility !== 'Published')
      throw new Error(`approve: expected visibility Published, got ${redact(JSON.stringify(approved)).slice(0, 600)}`);
    return 'Published';
  });

  await step('the buyer tops up 1000 ETB on the sandbox checkout', async () => {
    // The wallet is opened from the gateway's user.registered: an event away.
    await eventually(
      'the buyer’s wallet',
      () => answer(buyer.api.GET('/v1/wallet')),
      () => true,
    );
    const topUp = expect(
      'top-up',
      await answer(
        buyer.api.POST('/wallets/users/{userReferenceId}/topup', {
          params: { path: { userReferenceId: buyer.ref } },
          body: { amount: 1000, paymentMethod: 'Chapa', redirectUrl: `${base}/done` },
        }),
      ),
      200,
      (b) => b.data?.paymentUrl,
    ).data;
    await buyer.client.payInSandbox(topUp.paymentUrl);
    await eventually(
      'the top-up credited',
      () => answer(buyer.api.GET('/v1/wallet')),
      (b) => b.data?.etbAvailableBalance === 1000,
    );
    return 'balance 1000';
  });

  /** @type {any} the booking as answered (set by the step below, which throws when it is not) */
  let booking;
  await step('the buyer books it, paid from the wallet (held)', async () => {
    const slots = expect(
      'slots',
      await answer(
        clientOf().api.GET('/consultations/{id}/slots', {
          params: { path: { id: consultation.id }, query: { from: start.date, to: start.date } },
        }),
      ),
      200,
      (b) => b.data?.slots?.some((slot) => slot.startTime === start.time.slice(0, 5)),
    ).data.slots;
    const slot = slots.find((s) => s.startTime === start.time.slice(0, 5));
    const participant = { fullName: buyer.fullName, email: buyer.email, phone: '+251911223344' };
    booking = expect(
      'booking',
      await answer(
        buyer.api.POST('/consultations/bookings', { body: bookingBody({ seller, consultation, ruleSet }, slot, participant, price) }),
      ),
      200,
      (b) => b.data?.status === 'Confirmed',
    ).data;
    expect(
      'the buyer’s wallet after booking',
      await answer(buyer.api.GET('/v1/wallet')),
      200,
      (b) => b.data?.etbAvailableBalance === 250 && b.data?.heldBalance === 750,
    );
    return `${booking.bookingId}: Confirmed, 750 held, 250 left`;
  });

  const session = booking.sessionId;
  await step('the seller starts the session; an end before the slot is refused', async () => {
    expect(
      'start',
      await answer(seller.api.POST('/consultations/sessions/{id}/start', { params: { path: { id: session } }, body: {} })),
      200,
      (b) => b.data?.status === 'In Progress',
    );
    expect(
      'end before the slot',
      await answer(
        seller.api.POST('/consultations/sessions/{id}/end', { params: { path: { id: session } }, body: { sessionSummary: 'Too soon' } }),
      ),
      422,
      (b) => b.errors?.[0]?.code === 'too_early',
    );
    return '422 too_early';
  });
  // The CRM's totals come from the booking's events: the seller sees the buyer's booking and spend.
  const crmTotals = (when) =>
    step(`the seller sees the buyer in the CRM (${when})`, async () => {
      const crm = await eventually(
        `the seller’s CRM totals (${when})`,
        () => answer(seller.api.GET('/customers/seller/{sellerId}', { params: { path: { sellerId: seller.id } } })),
        // Names and totals are two projections fed by two queues (identity's user.registered, the
        // booking's events): either may land first, so the journey waits for both, as a client would.
        (b) =>
          b.data?.total === 1 &&
          b.data.customers?.[0]?.totalBookings === 1 &&
          b.data.customers[0].totalSpent === price &&
          b.data.customers[0].buyerName === buyer.fullName,
        60_000,
      );
      const customer = crm.data.customers[0];
      return `${customer.buyerName}: ${customer.totalBookings} booking, ${customer.totalSpent} ETB`;
    });
  await crmTotals('while the slot is ahead');
  await step('waiting for the slot to begin', async () => {
    const wait = startsAt.getTime() - Date.now() + 500;
    await sleep(Math.max(0, wait));
    return `${Math.max(0, wait / 1000).toFixed(0)} s`;
  });
  await step('the seller ends the session', async () => {
    expect(
      'end',
      await answer(
        seller.api.POST('/consultations/sessions/{id}/end', { params: { path: { id: session } }, body: { sessionSummary: 'Good plan' } }),
      ),
      200,
      (b) => b.data?.status === 'Completed',
    );
    return 'Completed';
  });
  // The saga's other end: the consultation's events reach the wallet, which decides to capture
  // the hold and moves the money once the slot has ended, not before.
  await step('the wallet decides to capture the hold (due at the slot’s end)', async () => {
    const hold = await eventually(
      'the capture decided',
      () => answer(adminApi.api.GET('/wallets/booking-holds/{bookingId}', { params: { path: { bookingId: booking.bookingId } } })),
      (b) => b.data?.settlement === 'capture',
    );
    if (hold.data.status !== 'Settling' || hold.data.amountMinor !== price * 100 || hold.data.dueAt !== endsAt.toISOString())
      throw new Error(`the hold: expected Settling, ${price * 100} minor, due ${endsAt.toISOString()}; got ${JSON.stringify(hold.data)}`);
    expect(
      'the seller’s wallet before the slot’s end',
      await answer(seller.api.GET('/v1/wallet')),
      200,
      (b) => b.data?.etbAvailableBalance === 0 && b.data?.heldBalance === 0,
    );
    expect(
      'the buyer’s wallet before the slot’s end',
      await answer(buyer.api.GET('/v1/wallet')),
      200,
      (b) => b.data?.etbAvailableBalance === 250 && b.data?.heldBalance === 750,
    );
    return `Settling, due ${endsAt.toISOString().slice(11, 16)} UTC; nothing moved yet`;
  });

  await step('the buyer reviews it (listed, average rating)', async () => {
    await eventually(
      'the buyer may review',
      () => answer(buyer.api.GET('/reviews/consultation/{id}/status', { params: { path: { id: consultation.id } } })),
      (b) => b.data?.canReview === true,
    );
    const review = { entityType: 'consultation_service', entityId: consultation.referenceId, rating: 5, comment: 'Clear and practical' };
    expect('review', await answer(buyer.api.POST('/reviews', { body: review })), 200);
    expect(
      'reviews listed',
      await answer(
        clientOf().api.GET('/reviews/by-entity', { params: { query: { entityType: 'consultation_service', entityId: consultation.id } } }),
      ),
      200,
      (b) => b.data?.averageRating === 5 && b.data?.totalReviews === 1,
    );
    return '5 stars, listed';
  });

  await crmTotals('after the session');

  if (!settle) return record;
  await step('at the slot’s end the wallet captures: seller credited, buyer’s hold 0', async () => {
    await sleep(Math.max(0, endsAt.getTime() - Date.now()));
    await eventually(
      'the seller credited',
      () => answer(seller.api.GET('/v1/wallet')),
      (b) => b.data?.etbAvailableBalance === price && b.data?.heldBalance === 0,
      30_000,
    );
    expect(
      'the buyer’s wallet after the capture',
      await answer(buyer.api.GET('/v1/wallet')),
      200,
      (b) => b.data?.etbAvailableBalance === 250 && b.data?.heldBalance === 0,
    );
    return `seller ${price} available; buyer 250 available, 0 held`;
  });
  return record;
}
