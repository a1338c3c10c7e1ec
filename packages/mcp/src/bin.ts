#!/usr/bin/env node
import { main } from './main.js';

const result = await main(process.argv.slice(2), {
  env: process.env,
  stderr: process.stderr,
  stdout: process.stdout,
});
if (typeof result === 'number') process.exitCode = result;
else {
  const stop = () => {
    void result.close().finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
