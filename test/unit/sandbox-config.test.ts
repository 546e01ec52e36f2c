import { describe, expect, it } from 'vitest';
import { DEFAULT_ADMIN_TOKEN, parseSandboxConfig, SandboxConfigError } from '../../src/sandbox/config.ts';
import { DEFAULT_WORLD } from '../../src/sandbox/seed.ts';

describe('sandbox configuration', () => {
  it('has documented defaults', () => {
    expect(parseSandboxConfig([], {})).toEqual({
      port: 8080,
      host: '127.0.0.1',
      autoAdvanceMs: 0,
      world: DEFAULT_WORLD,
      latencyMs: 0,
      idempotencyExtension: true,
      adminToken: DEFAULT_ADMIN_TOKEN,
      logLevel: 'info',
    });
  });

  it('reads options before the environment, and --auto-advance without a value as 3000 ms', () => {
    const config = parseSandboxConfig(['--port', '9000', '--auto-advance', '', '--deposits', '5'], {
      PORT: '7000',
      SANDBOX_ADMIN_TOKEN: 'a-longer-token',
      LOG_LEVEL: 'warn',
    });
    expect(config).toMatchObject({
      port: 9000,
      autoAdvanceMs: 3000,
      adminToken: 'a-longer-token',
      logLevel: 'warn',
    });
    expect(config.world.deposits).toBe(5);
    expect(parseSandboxConfig([], { PORT: '7000' }).port).toBe(7000);
  });

  it('lists every problem at once', () => {
    expect(() => parseSandboxConfig(['--port', 'x', '--wallets', '0'], {})).toThrow(
      /--port must be an integer >= 0; received "x"\n {2}- --wallets must be an integer >= 1; received "0"/,
    );
    expect(() => parseSandboxConfig(['--colour', 'red'], {})).toThrow(SandboxConfigError);
  });
});
