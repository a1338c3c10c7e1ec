import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MalformedWorkError, parseWork } from './api.js';

const job = { id: 'jb-1', type: 'Deployment', status: 'Running', payload: { version_id: 'cv-1' } };
const cert = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('parseWork', () => {
  it('accepts a well-formed answer and fills defaults', () => {
    const work = parseWork({
      jobs: [
        {
          job,
          target: { id: 'tg-1', type: 'NGINX', config: {} },
          certificate: { version_id: 'cv-1', cert_pem: cert },
        },
      ],
      awaiting_csr: [{ id: 'jb-2', type: 'Issuance', status: 'AwaitingCSR' }],
    });
    expect(work.jobs[0]!.certificate).toMatchObject({
      version_id: 'cv-1',
      private_key_pem: null,
      chain_pem: null,
    });
    expect(work.awaiting_csr[0]).toMatchObject({ id: 'jb-2', payload: {}, certificate_id: null });
  });

  it('names what is wrong in a malformed answer', () => {
    expect(() => parseWork({ jobs: [] })).toThrow('lacks the jobs and awaiting_csr lists');
    expect(() => parseWork({ jobs: [{ job: { id: 1 } }], awaiting_csr: [] })).toThrow(
      'work item 0: job lacks id',
    );
    expect(() =>
      parseWork({
        jobs: [{ job, target: null, certificate: { version_id: 'v', cert_pem: 'x' } }],
        awaiting_csr: [],
      }),
    ).toThrow('certificate lacks version_id or a PEM certificate');
  });

  it('refuses any other value with MalformedWorkError only (seeded fuzz)', () => {
    const item = fc.record(
      {
        job: fc.oneof(fc.constant(job), fc.anything()),
        target: fc.oneof(fc.constant({ id: 't', type: 'NGINX', config: {} }), fc.anything()),
        certificate: fc.oneof(fc.constant({ version_id: 'v', cert_pem: cert }), fc.anything()),
      },
      { requiredKeys: [] },
    );
    const answer = fc.oneof(
      fc.anything(),
      fc.record({
        jobs: fc.oneof(fc.array(item), fc.anything()),
        awaiting_csr: fc.oneof(fc.array(fc.anything()), fc.anything()),
      }),
    );
    fc.assert(
      fc.property(answer, (raw) => {
        try {
          parseWork(raw);
        } catch (error) {
          if (!(error instanceof MalformedWorkError)) throw error;
        }
      }),
      { seed: 0x5eed, numRuns: 3000 },
    );
  });
});
