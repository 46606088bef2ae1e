import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';

/**
 * One listening socket shared by every HTTP thread of `--threads N`, each thread with a
 * file descriptor of its own.
 *
 * Node 20 has no `reusePort`, and two threads that listen on one port get EADDRINUSE. A
 * worker thread can listen on an existing socket's descriptor (`listen({ fd })`); the
 * kernel then hands each connection to whichever thread's accept runs first. Two things
 * decide how the descriptors are made:
 *
 * - A thread whose event loop listens on the socket accepts connections too. The owner
 *   thread must never, so it never listens in its event loop: it keeps raw handles (the
 *   `_handle` of a net.Server, a libuv TCP handle that is not polled) and only hands
 *   their descriptors on.
 * - A thread that exits closes the descriptors its handles hold, a crashing one included.
 *   Were the threads to share one descriptor, one crash would close the socket under all
 *   of them (and leave their handles on a number the process may reuse for a file). So
 *   each thread gets a duplicate: closing it leaves the socket open for the others.
 *
 * Node has no dup(); it duplicates a handle when it passes one to a child process over IPC
 * (SCM_RIGHTS). A tiny child sends every handle it receives straight back, and each round
 * trip gives a new descriptor for the same socket. The child lives only while duplicates
 * are made: at start and when a thread is restarted.
 *
 * `_handle` is Node's internal handle of a listening net.Server; it is there, and the
 * duplicates work, in Node 20, 22 and 24 (test/e2e/threads.test.ts, which CI runs on
 * Node 24 too, checks that every connection is served).
 */
export interface SharedListener {
  /** The address and port the socket is bound to (`--port 0` picked one). */
  address: AddressInfo;
  /** `n` new descriptors of the socket, one for each thread that will listen on it. */
  duplicates(n: number): Promise<number[]>;
  /** Closes the owner's own descriptor; the threads close theirs as they exit. */
  close(): void;
}

/** A raw libuv handle, as Node passes it between processes (its type `net.Native`). */
interface RawHandle {
  fd: number;
  close(): void;
}

/** The child: every handle it is sent goes back as it came (a new descriptor on arrival). */
const ECHO = "process.on('message', (m, h) => process.send(m, h));";

export async function sharedListener(host: string, port: number): Promise<SharedListener> {
  // The bind happens here, in the owner's loop, which accepts until the first duplicate has
  // arrived (one IPC round trip, before the server says it listens): a connection that
  // lands in that moment is closed, and the client connects again.
  const first = createServer({ pauseOnConnect: true }, (socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    first.once('error', reject);
    first.listen({ port, host, exclusive: true }, resolve);
  });
  const address = first.address() as AddressInfo;
  let own: RawHandle;
  try {
    [own] = await bounce((first as unknown as { _handle: RawHandle })._handle, 1);
  } finally {
    first.close();
  }
  const kept = own!;
  return {
    address,
    duplicates: async (n) => (await bounce(kept, n)).map((h) => h.fd),
    close: () => kept.close(),
  };
}

/** `n` duplicates of `handle`, through a child that echoes them. */
async function bounce(handle: RawHandle, n: number): Promise<RawHandle[]> {
  const child = spawn(process.execPath, ['-e', ECHO], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  try {
    const out: RawHandle[] = [];
    for (let i = 0; i < n; i++) {
      out.push(
        await new Promise<RawHandle>((resolve, reject) => {
          child.once('error', reject);
          child.once('exit', (code) => reject(new Error(`the descriptor helper exited (${code})`)));
          child.once('message', (_m, h) => resolve(h as unknown as RawHandle));
          // A raw handle (not a net.Server) travels as `net.Native`: nobody listens on it on arrival.
          child.send('dup', handle as never);
        }),
      );
      child.removeAllListeners('exit');
      child.removeAllListeners('error');
    }
    return out;
  } finally {
    child.kill();
  }
}
