/**
 * Policies set at run time through the management API (src/engine/amqp/policies.ts),
 * per account (an account is a virtual host `/`). A store keeps them as given, so the
 * API answers with what was put; the engine validates them before they are stored.
 */
export interface PolicyRecord {
  accountId: string;
  name: string;
  pattern: string;
  /** RabbitMQ's apply-to: `queues`, `exchanges` or `all`. */
  applyTo: string;
  priority: number;
  /** RabbitMQ's keys (`dead-letter-exchange`, `message-ttl`, …) and values. */
  definition: Record<string, unknown>;
}

export interface PolicyStore {
  /** Every account's policies (they are applied together), by account and name. */
  list(): Promise<PolicyRecord[]>;
  /** Creates or replaces the account's policy of that name. */
  put(policy: PolicyRecord): Promise<void>;
  /** Removes it; false if there was none. */
  delete(accountId: string, name: string): Promise<boolean>;
}
