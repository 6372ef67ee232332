// A mock checks a passthrough's `maxFrameBytes` against the framing limits in
// src/internal/wire/settings.ts, without importing the proxy: they must be the
// `maxLength` of the proxy's own codecs, name for name and in the same order.
import { describe, expect, it } from 'vitest';
import type { Framing } from '../../src/internal/wire/frames.js';
import { FRAMING_LIMITS } from '../../src/internal/wire/settings.js';
import { resolveFraming } from '../../src/proxy/framing.js';

describe('framing limits', () => {
  it.each(Object.keys(FRAMING_LIMITS) as Framing[])(
    '%s: the limit a passthrough is checked against is its codec maxLength',
    (name) => {
      const codec = resolveFraming(name, 'the framing');
      expect(codec.name).toBe(name);
      expect(FRAMING_LIMITS[name].maxLength).toBe(codec.maxLength);
    },
  );
});
