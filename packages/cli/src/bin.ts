#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { runCli } from './program.js';

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  stdin: () => readFileSync(0, 'utf8'),
});
process.exitCode = code;
