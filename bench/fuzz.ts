/**
 * Long form of the parser fuzz campaign: every parser of outside input in core/pki (and the OCSP
 * GET decoder of @certwright/protocols), ≥ 100,000 seeded cases each, mutated from the real
 * seed corpus (packages/core/test/pki/fuzz/corpus) and random DER. Reports per target the
 * untyped escapes (must be 0), the slowest case and the peak heap growth; exits non-zero on
 * any untyped escape. The short form runs in the test suite (packages/core/test/pki/fuzz.test.ts).
 *
 *   pnpm bench fuzz                       100,000 cases per target
 *   FUZZ_CASES=1000000 pnpm bench fuzz    more
 *   FUZZ_TARGETS=csr,key pnpm bench fuzz  some targets only
 *   FUZZ_TARGETS=webhook pnpm bench fuzz  the webhook request preparation (templates, URL)
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { isCertwrightError } from '../packages/core/src/errors.js';
import { prepareWebhookRequest, sampleAlert } from '../packages/core/src/notify/webhooks/index.js';
import * as pki from '../packages/core/src/pki/index.js';
import {
  type FuzzReport,
  type FuzzTarget,
  fuzzTarget,
  mutatedText,
} from '../packages/core/src/testing/fuzz.js';
import { postQuantumTargets } from '../packages/core/test/pki/fuzz/post-quantum-targets.js';
import { pkiTargets } from '../packages/core/test/pki/fuzz/targets.js';
import { decodeGetRequest, OCSP_GET_MAX_REQUEST_BYTES } from '../packages/protocols/src/ocsp/index.js';

const cases = Number(process.env.FUZZ_CASES ?? '100000');
const only = process.env.FUZZ_TARGETS?.split(',');
const SEED = 0x5eed;

const ocspGet: FuzzTarget<string> = {
  name: 'ocsp-get',
  covers: 'OCSP GET path decoding (percent-encoding, base64/base64url, padding, cap)',
  inputs: fc.oneof(
    mutatedText(
      [
        'MEIwQDA+MDwwOjAJBgUrDgMCGgUABBQ=',
        'MEIwQDA-MDwwOjAJBgUrDgMCGgUABBQ',
        'MEIwQDA%2BMDwwOjAJBgUrDgMCGgUABBQ%3D',
      ],
      ['=', '%', '%2B', '%2F', '%3D', '%zz', '/', '-', '_', ' ', 'A', '===='],
    ),
    fc.string({ unit: fc.constantFrom('=', 'A', '%', '2', 'B', '/', '+', '-', '_', ' '), maxLength: 3000 }),
  ),
  run: (text) => decodeGetRequest(text, OCSP_GET_MAX_REQUEST_BYTES),
  size: (text) => text.length,
  show: (text) => JSON.stringify(text),
};

const alert = sampleAlert(new Date('2026-05-01T12:00:00Z'));
const webhookRequest: FuzzTarget<{ template: string; url: string }> = {
  name: 'webhook',
  covers:
    'webhook request preparation: payload and URL templates (parse, execute, limits), JSON check, kind URL rules',
  inputs: fc.record({
    template: mutatedText(
      [
        '{"text": {{printf "[%s] %s" (.Level | upper) .Message | json}}, "v": {{.Value}}}',
        '{{if eq .Level "critical"}}{"a": 1}{{else}}{"a": {{len .Message}}}{{end}}',
        '{{range $i, $c := .Message}}{{$i}}{{end}}',
      ],
      [
        '{{',
        '}}',
        '{{-',
        '-}}',
        '|',
        '"',
        '(',
        ')',
        '.Value',
        ' json',
        'range ',
        'end',
        'printf "%q"',
        '$x := ',
        '{{/*',
        '*/}}',
      ],
    ),
    url: mutatedText(
      [
        'https://hooks.example.com/a/{{.ResourceID}}?m={{.Message | urlquery}}',
        'http://[::1]:8080/{{.Level}}',
      ],
      ['{{', '}}', '?', '#', '/', '@', ':', '%', ' urlquery', ' urlpath', '[', ']'],
    ),
  }),
  run: ({ template, url }) =>
    prepareWebhookRequest(
      { url, template, method: 'POST', service: 'generic', headers: {}, options: {} },
      alert,
      'k',
    ),
  size: ({ template, url }) => template.length + url.length,
  show: (input) => JSON.stringify(input),
};

const targets = [
  ...pkiTargets(),
  ...postQuantumTargets(),
  ocspGet as FuzzTarget<unknown>,
  webhookRequest as FuzzTarget<unknown>,
].filter((t) => !only || only.includes(t.name));
const reports: FuzzReport[] = [];
const started = performance.now();
for (const [i, target] of targets.entries()) {
  const t0 = performance.now();
  const report = fuzzTarget(target, cases, SEED + i);
  reports.push(report);
  console.error(
    `${target.name}: ${report.cases} cases, ${report.untyped.length} untyped, ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  for (const u of report.untyped) console.error(`  UNTYPED ${u.error}\n    input ${u.input}`);
}

const pad = (s: string, n: number) => s.padEnd(n);
console.log(
  `\nfuzz: ${cases.toLocaleString('en')} cases per target, seed ${SEED}+i, Node ${process.version}, ${cpus().length} CPU (${cpus()[0]?.model ?? '?'}), ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
);
console.log(
  `| ${pad('target', 14)} | cases | refused (typed) | untyped | slowest case | peak heap growth | peak heap ÷ input (≥ 256 B) |`,
);
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const r of reports) {
  console.log(
    `| ${pad(r.target, 14)} | ${r.cases.toLocaleString('en')} | ${r.refused.toLocaleString('en')} | ${r.untyped.length} | ${r.slowestMs.toFixed(2)} ms | ${(r.peakHeapBytes / 1024).toFixed(0)} KiB | ${r.peakHeapRatio.toFixed(1)}× |`,
  );
}
// ---------------------------------------------------------------------------------------------
// Inputs at and beyond the caps: what the largest input a parser accepts costs, and that a huge
// one costs nothing (a 15 MB certificate used to take about 1 GB).

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const { der: w } = pki;
const spki = readFileSync(
  new URL('../packages/core/test/pki/fuzz/corpus/key-p256.spki.der', import.meta.url),
);
const rdns = (n: number): Buffer =>
  w.sequenceOf(
    Array.from({ length: n }, (_, i) => w.setOf(w.sequence(w.oid('2.5.4.11'), w.utf8String(`u${i}`)))),
  );
const certificateWith = (name: Buffer): Buffer =>
  w.sequence(
    w.sequence(
      w.explicit(0, w.integer(2)),
      w.integer(1),
      w.sequence(w.oid(pki.OID.ecdsaWithSHA256)),
      name,
      w.sequence(w.utcTime(new Date('2026-01-01T00:00:00Z')), w.utcTime(new Date('2027-01-01T00:00:00Z'))),
      name,
      spki,
    ),
    w.sequence(w.oid(pki.OID.ecdsaWithSHA256)),
    w.bitString(Buffer.alloc(8)),
  );
const csrWith = (name: Buffer): Buffer =>
  w.sequence(
    w.sequence(w.integer(0), name, spki, w.tlv(0xa0)),
    w.sequence(w.oid(pki.OID.ecdsaWithSHA256)),
    w.bitString(Buffer.alloc(8)),
  );
const bigPem = Array.from({ length: 100 }, () =>
  pki.pemEncode('CERTIFICATE', Buffer.alloc(7_700, 0x41)),
).join('');
const extremes: [string, Uint8Array | string, () => unknown][] = [];
const add = (name: string, input: Uint8Array | string, run: (input: never) => unknown) =>
  extremes.push([name, input, () => run(input as never)]);
add(
  'certificate, 2 × 1,240 RDNs (9,944 values, under the 10,000 cap)',
  certificateWith(rdns(1_240)),
  pki.readCertificate,
);
add('certificate, 2 × 1,260 RDNs (over the value cap)', certificateWith(rdns(1_260)), pki.readCertificate);
add('certificate of 15 MB', certificateWith(rdns(1_000_000)).subarray(0, 15_000_000), pki.readCertificate);
add('CSR, subject of 2,490 RDNs (under the value cap)', csrWith(rdns(2_490)), pki.parseCertificationRequest);
add('CSR of 15 MB', csrWith(rdns(1_000_000)).subarray(0, 15_000_000), pki.parseCertificationRequest);
add(
  'OCSP request, 8 CertIDs and 600 extensions',
  w.sequence(
    w.sequence(
      w.sequenceOf(
        Array.from({ length: 8 }, () =>
          w.sequence(
            w.sequence(
              w.sequence(w.oid(pki.OID.idSha1)),
              w.octetString(Buffer.alloc(20)),
              w.octetString(Buffer.alloc(20)),
              w.integer(7),
            ),
          ),
        ),
      ),
      w.explicit(
        2,
        w.sequenceOf(
          Array.from({ length: 600 }, (_, i) =>
            w.extension(`1.3.6.1.4.1.99999.${i}`, false, w.octetString(Buffer.alloc(4))),
          ),
        ),
      ),
    ),
  ),
  pki.parseOcspRequest,
);
add(
  'distinguished name text, 8,192 characters, 64 attributes',
  Array.from({ length: 64 }, () => `OU=${'x'.repeat(124)}`).join(','),
  pki.encodeName,
);
add('distinguished name text, 1 MB', 'CN=a,'.repeat(200_000), pki.encodeName);
add('PEM, 100 certificate blocks (1 MiB)', bigPem, pki.pemDecodeCertificates);
add('PEM, 10 MB', `${bigPem}${'A'.repeat(10_000_000)}`, pki.pemDecodeCertificates);

console.log('\n| input | outcome | time | heap growth | retained | growth ÷ input |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const [name, input, run] of extremes) {
  try {
    run(); // once to compile: the figures are for a warm process
  } catch {}
  gc();
  const before = getHeapStatistics().used_heap_size;
  const start = performance.now();
  let result: unknown;
  try {
    result = run();
  } catch (e) {
    result = e;
  }
  const ms = performance.now() - start;
  const grown = getHeapStatistics().used_heap_size - before;
  gc();
  const retained = getHeapStatistics().used_heap_size - before;
  const outcome = isCertwrightError(result)
    ? `refused: ${result.reason}`
    : result instanceof Error
      ? `UNTYPED ${result}`
      : 'parsed';
  console.log(
    `| ${name} (${(input.length / 1024).toFixed(0)} KiB) | ${outcome} | ${ms.toFixed(1)} ms | ${(Math.max(grown, 0) / 1024).toFixed(0)} KiB | ${(Math.max(retained, 0) / 1024).toFixed(0)} KiB | ${(Math.max(grown, 0) / input.length).toFixed(1)}× |`,
  );
  if (result instanceof Error && !isCertwrightError(result)) process.exitCode = 1;
}

const failures = reports.reduce((n, r) => n + r.untyped.length, 0);
if (failures > 0) {
  console.error(`\n${failures} untyped escapes`);
  process.exit(1);
}
