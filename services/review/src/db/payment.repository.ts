import type { Model } from 'mongoose';
import type { PaymentState } from '../domain/reviews';
import type { PaymentDoc } from './models';

const stateOf = ({ _id, ...rest }: PaymentDoc): PaymentState => ({ bookingId: _id, ...rest });

/** Every query of `payments` (paid bookings: price, list price, capture). */
export class PaymentRepository {
  constructor(readonly model: Model<PaymentDoc>) {}

  /** What a completed session told of a paid booking (one upsert; a repeat changes nothing). */
  async recordPriced(payment: Required<Pick<PaymentState, 'bookingId' | 'buyerId' | 'consultationId' | 'paidMinor' | 'listMinor'>>) {
    const { bookingId, buyerId, consultationId, paidMinor, listMinor } = payment;
    await this.model.updateOne({ _id: bookingId }, { $set: { buyerId, consultationId, paidMinor, listMinor } }, { upsert: true });
  }

  /** What the wallet's capture told of a booking; the booking with what is known of it, the session's part included. */
  async recordCaptured(capture: { bookingId: string; buyerId: string; capturedMinor: number; sellerFundedMinor: number }) {
    const { bookingId, buyerId, capturedMinor, sellerFundedMinor } = capture;
    const doc = await this.model
      .findOneAndUpdate({ _id: bookingId }, { $set: { buyerId, capturedMinor, sellerFundedMinor } }, { upsert: true, new: true })
      .lean<PaymentDoc>()
      .exec();
    return stateOf(doc!);
  }

  /** The paid bookings of buyers of a consultation. */
  async of(consultationId: string, buyerIds: readonly string[]): Promise<PaymentState[]> {
    const found = await this.model.find({ consultationId, buyerId: { $in: [...buyerIds] } }).lean<PaymentDoc[]>();
    return found.map(stateOf);
  }
}
