#!/usr/bin/env node
import { runMintScepChallenge } from './scep-challenge-cli.js';

/** certwright-mint-scep-challenge: mints a device-management challenge for testing a SCEP profile. */
const result = await runMintScepChallenge(process.argv.slice(2));
process.stdout.write(result.stdout);
process.stderr.write(result.stderr);
process.exitCode = result.code;
