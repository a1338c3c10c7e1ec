#!/usr/bin/env node
// The command lives in dist/ (built); without a build, run
// `node --import tsx packages/server/src/mint-scep-challenge.ts` instead.
import '../dist/mint-scep-challenge.js';
