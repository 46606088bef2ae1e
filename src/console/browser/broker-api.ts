import { ApiError } from './api.js';

/**
 * The management API's broker views (RabbitMQ's shapes: docs/amqp.md#the-broker-at-a-glance),
 * which the console reads under /console/api/rabbitmq/ as the signed-in account.
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
  const body = (await res.json().catch(() => ({}))) as { error?: string; reason?: string };
  if (!res.ok) throw new ApiError(body.error ?? 'error', body.reason ?? res.statusText, res.status);
  return body as T;
}

export interface ConsumerInfo {
  consumer_tag: string;
  channel_details: {
    connection_name: string;
    name: string;
    number: number;
    peer_host: string;
    peer_port: number;
    user: string;
  };
  queue: { name: string };
  ack_required: boolean;
  prefetch_count: number;
  exclusive: boolean;
  messages_unacknowledged: number;
}

export interface ChannelInfo {
  name: string;
  number: number;
  prefetch_count: number;
  global_prefetch_count: number;
  messages_unacknowledged: number;
  consumer_count: number;
  confirm: boolean;
  connection_details: { name: string };
}

export interface ConnectionInfo {
  name: string;
  /** RabbitMQ's names: `AMQP 0-9-1`, `AMQP 1-0`. */
  protocol: string;
  user: string;
  state: string;
  channels: number;
  peer_host: string;
  peer_port: number;
  connected_at: number;
  client_properties: Record<string, unknown>;
  user_provided_name?: string;
  recv_oct: number;
  send_oct: number;
}

export interface SqsClientInfo {
  access_key: string;
  peer_host: string;
  first_seen: number;
  last_seen: number;
  requests: number;
  requests_last_minute: number;
  rate: number;
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
