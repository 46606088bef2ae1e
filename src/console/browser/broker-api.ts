import type { BrokerError } from '../../wire/broker-api.js';
import { ApiError } from './api.js';

/**
 * The management API's broker views (RabbitMQ's shapes: docs/amqp.md#the-broker-at-a-glance,
 * typed in src/wire/broker-api.ts), which the console reads under /console/api/rabbitmq/ as
 * the signed-in account.
 */
const csrf = (): string => document.querySelector<HTMLMetaElement>('meta[name="redrive-csrf"]')?.content ?? '';

export async function rabbit<T = unknown>(
  path: string,
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<T> {
  const res = await fetch(`/console/api/rabbitmq/${path}`, {
    method: init.method ?? 'GET',
    headers: { 'x-redrive-csrf': csrf(), ...init.headers },
    credentials: 'same-origin',
  });
  if (res.status === 401) {
    location.assign(`/console/sign-in?next=${encodeURIComponent(location.pathname)}`);
    throw new ApiError('AccessDenied', 'Signed out.', 401);
  }
  if (res.status === 204) return undefined as T;
  const body = (await res.json().catch(() => ({}))) as Partial<BrokerError>;
  if (!res.ok) throw new ApiError(body.error ?? 'error', body.reason ?? res.statusText, res.status);
  return body as T;
}

/** Re-runs `load` every `ms` while the tab is visible, and once when it becomes visible again. */
export function refreshWhileVisible(load: () => Promise<void>, ms: number): void {
  let timer: ReturnType<typeof setInterval> | undefined;
  const start = () => {
    if (timer === undefined) timer = setInterval(() => void load().catch(() => undefined), ms);
  };
  document.addEventListener('visibilitychange', () => {
    if (document.hidden) {
      clearInterval(timer);
      timer = undefined;
    } else {
      void load().catch(() => undefined);
      start();
    }
  });
  if (!document.hidden) start();
}
