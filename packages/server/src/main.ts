#!/usr/bin/env node
import { runCli } from './cli.js';
import { isOperationsCommand, runOperationsCommand } from './ops/cli.js';

// `certwright-server rekey|backup|restore …` runs that command; without one, the server.
const [command, ...rest] = process.argv.slice(2);
if (isOperationsCommand(command)) void runOperationsCommand(command, rest);
else void runCli();
