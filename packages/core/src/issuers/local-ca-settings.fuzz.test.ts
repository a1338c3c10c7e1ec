import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCertwrightError } from '../errors.js';
import { validateLocalCaSettings } from './local-ca.js';
import { durationMs } from './local-ca-delta.js';

describe('Local CA pointer and delta settings (seeded fuzz)', () => {
  it('reads durations only as <n><s|m|h|d> and never throws', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), (text) => {
        const ms = durationMs(text);
        if (ms === undefined) return;
        expect(text).toMatch(/^[1-9]\d{0,5}[smhd]$/);
        expect(Number.isSafeInteger(ms) && ms > 0).toBe(true);
      }),
      { seed: 0x39de17a, numRuns: 3000 },
    );
  });

  it('answers any URL lists and delta settings with success or a typed validation error naming config.<key>', () => {
    const urlish = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.webUrl(),
      fc.constantFrom(
        'http://crl.example.test/a.crl',
        'ftp://x.test/',
        'https://u:p@h.test/',
        'http://h.test/#f',
      ),
    );
    const settings = fc.record(
      {
        crl_distribution_urls: fc.array(urlish, { maxLength: 10 }),
        ocsp_urls: fc.oneof(fc.array(urlish, { maxLength: 3 }), fc.string()),
        ca_issuers_urls: fc.array(urlish, { maxLength: 3 }),
        delta_crl: fc.record(
          {
            enabled: fc.oneof(fc.boolean(), fc.string()),
            interval: fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('15m', '1h', '5s', '8d')),
            base_interval: fc.constantFrom('1h', '1d', '31d', 'x'),
            urls: fc.array(urlish, { maxLength: 2 }),
          },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(settings, (config) => {
        try {
          validateLocalCaSettings(config as Record<string, unknown>);
        } catch (error) {
          expect(isCertwrightError(error) && error.code === 'validation_failed').toBe(true);
          const fields = (error as { fields?: { field: string }[] }).fields ?? [];
          expect(fields.length).toBeGreaterThan(0);
          for (const f of fields) expect(f.field).toMatch(/^config\./);
        }
      }),
      { seed: 0x39de17b, numRuns: 1500 },
    );
  });
});
