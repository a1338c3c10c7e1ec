/**
 * Child-process entry: parses each hex CSR given on the command line and prints one JSON line
 * per request with the outcome. Run in its own process because a regression here does not
 * throw — it aborts the process.
 */
import { isCertwrightError } from '../../../src/errors.js';
import { parseCertificationRequest } from '../../../src/pki/index.js';

for (const hex of process.argv.slice(2)) {
  try {
    parseCertificationRequest(Buffer.from(hex, 'hex'));
    console.log(JSON.stringify({ outcome: 'accepted' }));
  } catch (e) {
    console.log(
      JSON.stringify(
        isCertwrightError(e)
          ? { outcome: 'refused', reason: e.reason, message: e.message }
          : { outcome: 'untyped', error: String(e) },
      ),
    );
  }
}
