#!/usr/bin/env node
/**
 * certwright-agent — runs the agent loop as a service.
 *
 *   certwright-agent [--config /etc/certwright-agent/agent.json]
 *   certwright-agent register --name web-01 [--config …]   (admin key in SVC_API_KEY or SVC_API_KEY_FILE)
 *
 * Exit codes: 0 after SIGTERM/SIGINT or when the server retired the agent (410); 2 for a
 * configuration error at start-up; 1 for anything else.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { registerAgent } from './api.js';
import { AgentConfigError, requireHttpsUrl } from './config.js';
import { jsonLogger } from './logger.js';
import { readProgramConfig, startAgentProgram } from './program.js';

const logger = jsonLogger();

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

async function register(args: string[], configPath: string | undefined): Promise<void> {
  const config = readProgramConfig(configPath);
  const serverUrl = process.env.SVC_SERVER_URL ?? config.server_url;
  if (!serverUrl) throw new AgentConfigError('SVC_SERVER_URL is required');
  requireHttpsUrl(serverUrl);
  const adminKey =
    process.env.SVC_API_KEY ??
    (process.env.SVC_API_KEY_FILE ? readFileSync(process.env.SVC_API_KEY_FILE, 'utf8').trim() : undefined);
  if (!adminKey)
    throw new AgentConfigError('register needs an administrator key in SVC_API_KEY or SVC_API_KEY_FILE');
  const keyFile = process.env.SVC_AGENT_API_KEY_FILE ?? config.api_key_file;
  if (!keyFile)
    throw new AgentConfigError('register needs SVC_AGENT_API_KEY_FILE (or api_key_file) to store the key');
  const caPath = process.env.SVC_SERVER_CA_BUNDLE_PATH ?? config.ca_bundle_path;
  const { id } = await registerAgent(
    { serverUrl, ...(caPath ? { caBundlePem: readFileSync(caPath, 'utf8') } : {}) },
    adminKey,
    { name: option(args, '--name') ?? hostname(), hostname: hostname() },
    keyFile,
  );
  // The id is not secret; the key went to the file only.
  process.stdout.write(`${JSON.stringify({ agent_id: id, api_key_file: keyFile })}\n`);
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const configPath = option(args, '--config') ?? process.env.SVC_AGENT_CONFIG;
  if (args[0] === 'register') {
    await register(args, configPath);
    return 0;
  }
  const program = await startAgentProgram(process.env, configPath, logger);
  const stop = (signal: string) => {
    logger.info({ signal }, 'stopping after the job in hand');
    program.agent.stop();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  const reason = await program.done;
  logger.info({ reason }, 'certwright-agent stopped');
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof AgentConfigError) {
      logger.error({ err: error.message }, 'certwright-agent cannot start');
      process.exitCode = 2;
      return;
    }
    logger.error({ err: (error as Error).message }, 'certwright-agent failed');
    process.exitCode = 1;
  },
);
