// The short fuzz run: a few hundred cases per property on every `npm test`. `npm run fuzz` runs
// the same properties with 100,000 cases each.
import { PROPERTIES } from '../fuzz/properties';

const RUNS = 300;

describe(`fuzzing (fast-check, ${RUNS} cases per property)`, () => {
  for (const property of PROPERTIES) {
    it(property.name, () => property.check(RUNS));
  }
});
