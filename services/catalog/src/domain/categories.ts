/**
 * The category tree, seeded in code: stable references (the same on every start and replica),
 * each category with its typed properties. Listed publicly by GET /physical-products/categories.
 */
export type PropertyType = 'text' | 'number' | 'boolean' | 'select';

export interface PropertySeed {
  suffix: string;
  name: string;
  type: PropertyType;
  options?: string[];
  unit?: string;
}

interface CategorySeed {
  suffix: string;
  name: string;
  properties: PropertySeed[];
}

const brand = (suffix: string): PropertySeed => ({ suffix, name: 'Brand', type: 'text' });
const colour = (suffix: string): PropertySeed => ({ suffix, name: 'Colour', type: 'text' });
const weight = (suffix: string): PropertySeed => ({ suffix, name: 'Weight', type: 'number', unit: 'kg' });

const SEEDS: CategorySeed[] = [
  {
    suffix: 'ELECTRON',
    name: 'Electronics',
    properties: [
      brand('ELBRAND0'),
      colour('ELCOLOUR'),
      weight('ELWEIGHT'),
      { suffix: 'ELWARRNT', name: 'Warranty', type: 'number', unit: 'months' },
      { suffix: 'ELSTORAG', name: 'Storage', type: 'select', options: ['32 GB', '64 GB', '128 GB', '256 GB', '512 GB', '1 TB'] },
    ],
  },
  {
    suffix: 'FASHION0',
    name: 'Fashion',
    properties: [
      brand('FABRAND0'),
      colour('FACOLOUR'),
      { suffix: 'FASIZE00', name: 'Size', type: 'select', options: ['XS', 'S', 'M', 'L', 'XL', 'XXL'] },
      { suffix: 'FAMATERL', name: 'Material', type: 'text' },
      { suffix: 'FAGENDER', name: 'Gender', type: 'select', options: ['Women', 'Men', 'Unisex', 'Kids'] },
    ],
  },
  {
    suffix: 'HOME0000',
    name: 'Home & Kitchen',
    properties: [brand('HOBRAND0'), colour('HOCOLOUR'), weight('HOWEIGHT'), { suffix: 'HOMATERL', name: 'Material', type: 'text' }],
  },
  {
    suffix: 'BEAUTY00',
    name: 'Beauty & Personal Care',
    properties: [
      brand('BEBRAND0'),
      { suffix: 'BEVOLUME', name: 'Volume', type: 'number', unit: 'ml' },
      { suffix: 'BESKINTY', name: 'Skin type', type: 'select', options: ['All', 'Dry', 'Oily', 'Combination', 'Sensitive'] },
      { suffix: 'BEORGANC', name: 'Organic', type: 'boolean' },
    ],
  },
  {
    suffix: 'BOOKS000',
    name: 'Books',
    properties: [
      { suffix: 'BOAUTHOR', name: 'Author', type: 'text' },
      { suffix: 'BOLANGUA', name: 'Language', type: 'select', options: ['Amharic', 'Afaan Oromoo', 'Tigrinya', 'English', 'Other'] },
      { suffix: 'BOPAGES0', name: 'Pages', type: 'number' },
      { suffix: 'BOISBN00', name: 'ISBN', type: 'text' },
    ],
  },
  {
    suffix: 'GROCERY0',
    name: 'Groceries',
    properties: [brand('GRBRAND0'), weight('GRWEIGHT'), { suffix: 'GRORGANC', name: 'Organic', type: 'boolean' }],
  },
  {
    suffix: 'SPORTS00',
    name: 'Sports & Outdoors',
    properties: [
      brand('SPBRAND0'),
      colour('SPCOLOUR'),
      weight('SPWEIGHT'),
      { suffix: 'SPSIZE00', name: 'Size', type: 'select', options: ['S', 'M', 'L', 'XL'] },
    ],
  },
];

export interface Property {
  id: string;
  name: string;
  type: PropertyType;
  options?: string[];
  unit?: string;
}

export interface Category {
  id: string;
  name: string;
  properties: Property[];
}

export function buildCategories(prefix: string): Category[] {
  return SEEDS.map((seed) => ({
    id: `${prefix}-CAT-${seed.suffix}`,
    name: seed.name,
    properties: seed.properties.map(({ suffix, ...property }) => ({ id: `${prefix}-PRO-${suffix}`, ...property })),
  }));
}

/** Why a value does not fit a property's type, or null when it does. */
export function propertyValueProblem(property: Property, value: string | number | boolean): string | null {
  switch (property.type) {
    case 'number':
      return typeof value === 'number' && value >= 0 ? null : `${property.name} is a number of at least 0`;
    case 'boolean':
      return typeof value === 'boolean' ? null : `${property.name} is true or false`;
    case 'select':
      return typeof value === 'string' && property.options!.includes(value)
        ? null
        : `${property.name} is one of ${property.options!.join(', ')}`;
    case 'text':
      return typeof value === 'string' && value.length > 0 ? null : `${property.name} is a text`;
  }
}
