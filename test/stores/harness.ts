import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { newReceiptToken } from '../../src/engine/messages/receipt.js';
import type { NewMessage, QueueRecord } from '../../src/engine/kernel/types.js';
import type { ReceiveRequest, Store } from '../../src/engine/store/store.js';
import { newQueue } from '../../src/engine/store/queues.js';

export type StoreFactory = () => Promise<Store>;
/** A group of conformance cases, written once against the Store interface. */
export type CaseGroup = (open: StoreFactory) => void;

export function tempFile(name: string): string {
  return join(mkdtempSync(join(tmpdir(), 'redrive-store-')), name);
}

/** Opens a fresh store for the enclosing describe() and closes it afterwards. */
export function useStore(open: StoreFactory): () => Store {
  let store: Store;
  before(async () => {
    store = await open();
  });
  after(async () => {
    await store.close();
  });
  return () => store;
}

let queueCounter = 0;
export async function makeQueue(store: Store, overrides: Partial<QueueRecord> = {}): Promise<QueueRecord> {
  const now = 1_700_000_000_000;
  const { queue } = await store.queues.create({
    ...newQueue(
      {
        accountId: '000000000000',
        region: 'us-east-1',
        name: `q${++queueCounter}-${Date.now()}`,
        fifo: false,
        attributes: { VisibilityTimeout: '30' },
      },
      now,
    ),
    ...overrides,
  });
  return queue;
}

let messageCounter = 0;
export function newMessage(sentAt: number, overrides: Partial<NewMessage> = {}): NewMessage {
  const n = ++messageCounter;
  return {
    messageId: `m-${n}`,
    body: `body-${n}`,
    md5OfBody: 'x',
    senderId: 'tester',
    sentAt,
    visibleAt: sentAt,
    ...overrides,
  };
}

export function receiveRequest(now: number, overrides: Partial<ReceiveRequest> = {}): ReceiveRequest {
  return { now, max: 10, visibilityTimeoutMs: 30_000, retentionCutoff: 0, newToken: newReceiptToken, ...overrides };
}
