import { describe, expect, it } from 'vitest';
import { DEFAULT_ADMIN_TOKEN, parseSandboxConfig, SandboxConfigError } from '../../src/sandbox/config.ts';
import { DEFAULT_WORLD } from '../../src/sandbox/seed.ts';

describe('sandbox configuration', () => {
  it('has documented defaults', () => {
    expect(parseSandboxConfig([], {})).toEqual({
      port: 8080,
      host: '127.0.0.1',
      autoAdvanceMs: 0,
      depositEveryMs: 0,
      world: DEFAULT_WORLD,
      latencyMs: 0,
      idempotencyExtension: true,
      adminToken: DEFAULT_ADMIN_TOKEN,
      logLevel: 'info',
    });
  });

  it('reads options before the environment, and --auto-advance without a value as 8000 ms', () => {
    const config = parseSandboxConfig(['--port', '9000', '--auto-advance', '', '--deposits', '5'], {
      PORT: '7000',
      SANDBOX_AUTO_ADVANCE_MS: '500',
      SANDBOX_ADMIN_TOKEN: 'a-longer-token',
      LOG_LEVEL: 'warn',
    });
    expect(config).toMatchObject({
      port: 9000,
      autoAdvanceMs: 8000,
      adminToken: 'a-longer-token',
      logLevel: 'warn',
    });
    expect(config.world.deposits).toBe(5);
    expect(parseSandboxConfig([], { PORT: '7000' }).port).toBe(7000);
  });

  it('takes --auto-advance and --deposit-every bare (8000 and 25000 ms), or the embedded sandbox’s variables', () => {
    // Bare: last, or before another option (parseArgs alone refuses both).
    expect(parseSandboxConfig(['--deposit-every'], {}).depositEveryMs).toBe(25_000);
    expect(parseSandboxConfig(['--port', '0', '--auto-advance'], {}).autoAdvanceMs).toBe(8_000);
    expect(parseSandboxConfig(['--auto-advance', '--port', '0'], {}).autoAdvanceMs).toBe(8_000);
    expect(parseSandboxConfig(['--auto-advance', '2000'], {}).autoAdvanceMs).toBe(2_000);
    expect(parseSandboxConfig(['--deposit-every=5000'], {}).depositEveryMs).toBe(5_000);
    expect(
      parseSandboxConfig([], { SANDBOX_DEPOSIT_EVERY_MS: '20000', SANDBOX_AUTO_ADVANCE_MS: '9000' }),
    ).toMatchObject({ depositEveryMs: 20_000, autoAdvanceMs: 9_000 });
    expect(parseSandboxConfig([], { SANDBOX_DEPOSIT_EVERY_MS: '0' }).depositEveryMs).toBe(0);
    expect(() => parseSandboxConfig(['--deposit-every=0'], { SANDBOX_AUTO_ADVANCE_MS: 'soon' })).toThrow(
      /SANDBOX_AUTO_ADVANCE_MS must be an integer >= 0; received "soon"\n {2}- --deposit-every must be an integer >= 1; received "0"/,
    );
  });

  it('lists every problem at once', () => {
    expect(() => parseSandboxConfig(['--port', 'x', '--wallets', '0'], {})).toThrow(
      /--port must be an integer >= 0; received "x"\n {2}- --wallets must be an integer >= 1; received "0"/,
    );
    expect(() => parseSandboxConfig(['--colour', 'red'], {})).toThrow(SandboxConfigError);
  });
});
