import type { Model } from 'mongoose';
import type { SecretStore } from '../credentials/device-cookie';
import type { GatewaySecretDoc } from './models';

/** The gateway's own secrets: the first replica to ask stores one, every later ask reads that one. */
export class SecretRepository implements SecretStore {
  constructor(private readonly secrets: Model<GatewaySecretDoc>) {}

  async getOrCreate(name: string, make: () => string): Promise<string> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        // Insert-if-absent in one conditional write: two replicas starting at once end with one value.
        const doc = await this.secrets
          .findOneAndUpdate(
            { _id: name },
            { $setOnInsert: { value: make(), createdAt: new Date() } },
            { upsert: true, new: true, lean: true },
          )
          .exec();
        return doc!.value;
      } catch (err) {
        // Two upserts racing on one _id: one of them gets a duplicate key; the value is there now.
        if ((err as { code?: number }).code !== 11000 || attempt >= 2) throw err;
      }
    }
  }
}
