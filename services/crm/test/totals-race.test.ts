import { Projection } from '../src/application/projection.use-cases';
import { BookingFactRepository } from '../src/db/booking-fact.repository';
import { RelationshipRepository } from '../src/db/relationship.repository';
import { KnownUserRepository } from '../src/db/user.repository';
import type { Pair } from '../src/domain/records';
import { onBookingConfirmed } from '../src/domain/projection';
import { confirmed, newUser, useCrm } from './harness';

// Two events of one pair handled at the same time (the consumer takes several at once; replicas
// too): the first reads the pair's facts before the second's fact is merged, and writes its totals
// after the second has written its own. The totals must still end as the facts say.
const crm = useCrm();

/** The facts repository of the first handler: its first read of the pair waits for `release`. */
class HeldFirstRead extends BookingFactRepository {
  private held = true;
  constructor(
    models: ConstructorParameters<typeof BookingFactRepository>[0],
    private readonly release: Promise<void>,
  ) {
    super(models);
  }
  override async ofPair(pair: Pair) {
    if (!this.held) return super.ofPair(pair);
    this.held = false;
    const facts = await super.ofPair(pair); // read now: the other booking is not merged yet
    await this.release;
    return facts;
  }
}

test('a handler that wrote totals from facts read before another event’s fact reads again and writes what the facts say', async () => {
  const { models } = crm.parts;
  const seller = newUser('seller');
  const buyer = newUser('buyer');
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const slow = new Projection(new RelationshipRepository(models), new HeldFirstRead(models, released), new KnownUserRepository(models));

  const first = slow.apply(onBookingConfirmed(confirmed(seller.id, buyer.id, 10_000)));
  await new Promise((resolve) => setTimeout(resolve, 200)); // the first handler has read its facts
  await crm.parts.projection.apply(onBookingConfirmed(confirmed(seller.id, buyer.id, 5_000)));
  release();
  await first;

  const relationship = await models.relationships.findOne({ sellerId: seller.id, buyerId: buyer.id }).lean();
  expect(relationship).toMatchObject({ totalBookings: 2, totalSpentMinor: 15_000 });
});
