import type { DerBounds } from '../der-reader.js';

/**
 * Bounds for CMS from outside (SCEP PKIMessages, EST and probe answers), checked before any
 * field is decoded. A SCEP request is 2–10 KiB and nests about 12 levels (the certificates it
 * carries are the deepest part); a CA chain answer a few KiB per certificate. 1 MiB holds any
 * real chain; callers that know their message is small pass a lower `maxBytes`.
 */
export const DEFAULT_CMS_LIMITS: Readonly<DerBounds> = Object.freeze({
  maxBytes: 1024 * 1024,
  maxNodes: 50_000,
  maxDepth: 32,
});

/** The default bounds with the caller's overrides. */
export const cmsLimits = (overrides: Partial<DerBounds> = {}): DerBounds => ({
  ...DEFAULT_CMS_LIMITS,
  ...overrides,
});
