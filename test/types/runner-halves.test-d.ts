// The bundles the runner's hot half loads on demand (src/runner/lazy.ts) still
// export what the hot half calls of them: cold() is typed by ColdHalf
// (src/runner/cold-half.ts), not by cold.ts itself, so this is where a
// function dropped from cold.ts, or one whose signature drifted, shows.
import { describe, expectTypeOf, it } from 'vitest';
import type * as Cold from '../../src/runner/cold.js';
import type { ColdHalf } from '../../src/runner/cold-half.js';

describe('the runner bundles', () => {
  it('runner-cold.cjs (src/runner/cold.ts) exports what ColdHalf says', () => {
    expectTypeOf<typeof Cold>().toExtend<ColdHalf>();
  });
});
