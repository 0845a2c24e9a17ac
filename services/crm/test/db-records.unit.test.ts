import mongoose from 'mongoose';
import { crmModels } from '../src/db/models';
import { newRelationshipFields } from '../src/db/relationship.repository';

/**
 * A pair's first event creates its relationship from plain values: they must be what the schema's
 * document holds (its defaults included), or a default added to the schema would be missing from
 * new relationships. No database: the document is only built.
 */
describe('a new relationship’s fields', () => {
  test('the schema’s defaults, with new ids and the creation time', () => {
    const models = crmModels(mongoose.createConnection());
    const now = new Date('2030-01-02T10:00:00.000Z');
    const fields = newRelationshipFields(now);
    const {
      sellerId: _s,
      buyerId: _b,
      ...schema
    } = new models.relationships({
      _id: fields._id,
      referenceId: fields.referenceId,
      sellerId: 'u_seller',
      buyerId: 'u_buyer',
      createdAt: now,
    }).toObject({ depopulate: true });
    expect(fields).toEqual(schema);
    expect(fields._id).toMatch(/^cus_/);
  });
});
