import { GatewayError } from '../errors/errors.ts';

/** At most `perKey` open subscriptions per caller scope and `max` in all, per process. */

export interface AdmissionLimits {
  /** SUBSCRIPTIONS_PER_KEY. */
  perKey: number;
  /** MAX_SUBSCRIPTIONS. */
  max: number;
}

export class Admission {
  private readonly openPerScope = new Map<string, number>();
  private openCount = 0;
  private readonly limits: AdmissionLimits;

  constructor(limits: AdmissionLimits) {
    this.limits = limits;
  }

  get open(): number {
    return this.openCount;
  }

  /** Counts one more subscription for `scope`, or throws SUBSCRIPTION_LIMIT_EXCEEDED. */
  admit(scope: string): void {
    const forKey = this.openPerScope.get(scope) ?? 0;
    if (forKey >= this.limits.perKey) {
      throw new GatewayError(
        'SUBSCRIPTION_LIMIT_EXCEEDED',
        `This API key has ${forKey} open subscriptions, the most allowed (SUBSCRIPTIONS_PER_KEY); end one first.`,
        { extensions: { limit: this.limits.perKey } },
      );
    }
    if (this.openCount >= this.limits.max) {
      throw new GatewayError(
        'SUBSCRIPTION_LIMIT_EXCEEDED',
        'The gateway holds as many subscriptions as it may (MAX_SUBSCRIPTIONS); try again later.',
        { extensions: { limit: this.limits.max } },
      );
    }
    this.openPerScope.set(scope, forKey + 1);
    this.openCount += 1;
  }

  /** One subscription of `scope` ended: once per admit. */
  discharge(scope: string): void {
    const left = (this.openPerScope.get(scope) ?? 1) - 1;
    if (left > 0) this.openPerScope.set(scope, left);
    else this.openPerScope.delete(scope);
    this.openCount -= 1;
  }
}
