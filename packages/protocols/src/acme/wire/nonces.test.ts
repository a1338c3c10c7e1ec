import { MemoryEphemeralStore } from '@certwright/core';
import { describe, expect, it } from 'vitest';
import { NonceStore } from './nonces.js';

describe('ACME nonces', () => {
  it('every nonce is distinct and spendable once, past the random pool refill', async () => {
    const nonces = new NonceStore(new MemoryEphemeralStore());
    const issued: string[] = [];
    for (let i = 0; i < 600; i++) issued.push(await nonces.issue());
    expect(new Set(issued).size).toBe(issued.length);
    for (const nonce of issued) expect(nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
    await nonces.consume(issued[300]);
    await expect(nonces.consume(issued[300])).rejects.toMatchObject({ acmeType: 'badNonce' });
  });
});
