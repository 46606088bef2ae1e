import type { Socket } from 'node:net';
import { PROTOCOL_HEADER } from './frames.js';
import { field, Reader, strOf, type FieldTable } from './codec.js';
import type { Authenticate } from '../../auth/password.js';
import type { AuthThrottle } from '../../auth/throttle.js';

/** Who signed in: the account the connection acts as, and the user name (for per-user limits). */
export interface Login {
  account: string;
  user: string;
}

/** Sign-in of a connection, and the secret updates it may send later. */
export interface SignIn {
  /** connection.start-ok's mechanism and response; undefined when refused (logged here). */
  login(mechanism: string, response: Buffer, address: string | undefined): Login | undefined;
  /** connection.update-secret: whether the backend accepts the new secret for this user. */
  updateSecret(user: string, secret: string, address: string | undefined): boolean;
}

interface Log {
  warn(obj: object, msg?: string): void;
}

/**
 * Sign-in with the server's failure throttle (src/auth/throttle.ts), the one SigV4, the
 * console and the management API share: guesses at a key over AMQP and over HTTP count
 * together. A refused login is logged (RabbitMQ logs it, and clients tell the user to
 * look there); while the address (or the key, from an address that failed) must wait,
 * logins are refused without being checked.
 */
export function signIn(authenticate: Authenticate, throttle: AuthThrottle, log: Log, checksSecrets: boolean): SignIn {
  return {
    login(mechanism, response, address) {
      const creds = credentials(mechanism, response);
      const user = creds?.user ?? '';
      const from = address ?? '';
      if (throttle.wait(from, creds?.user) > 0) {
        log.warn(
          { user: user.slice(0, 256), address, mechanism },
          `AMQP ${mechanism} login refused: user '${user.slice(0, 256)}' - too many failed logins, throttled`,
        );
        return undefined;
      }
      const account = creds && authenticate(creds.user, creds.password, address);
      if (!account) {
        throttle.failed(from, creds?.user);
        const why = creds ? 'invalid credentials' : 'malformed response';
        log.warn(
          { user: user.slice(0, 256), address, mechanism },
          `AMQP ${mechanism} login refused: user '${user.slice(0, 256)}' - ${why}`,
        );
        return undefined;
      }
      throttle.succeeded(from, creds.user);
      return { account, user };
    },
    // RabbitMQ asks its auth backend; its internal one (users with passwords, like guest)
    // accepts any new secret. With access keys the new secret must be the key's.
    updateSecret(user, secret, address) {
      if (!checksSecrets) return true;
      const ok = authenticate(user, secret, address) !== undefined;
      if (!ok) log.warn({ user, address }, `AMQP secret update was refused for user '${user}'`);
      return ok;
    },
  };
}

/** Whether connection.start-ok's client properties announce a capability. */
export function capability(clientProperties: unknown, name: string): boolean {
  const caps = (clientProperties as FieldTable | undefined)?.get('capabilities');
  return caps?.type === 'F' && caps.value.get(name)?.value === true;
}

/** PLAIN (`[authzid] NUL user NUL password`) or AMQPLAIN (a table with LOGIN and PASSWORD). */
function credentials(mechanism: string, response: Buffer): { user: string; password: string } | undefined {
  if (mechanism === 'PLAIN') {
    const parts = response.toString('utf8').split('\0');
    if (parts.length !== 3) return undefined;
    return { user: parts[1]!, password: parts[2]! };
  }
  if (mechanism === 'AMQPLAIN') {
    const w = Buffer.alloc(4 + response.length);
    w.writeUInt32BE(response.length, 0);
    response.copy(w, 4);
    let t: FieldTable;
    try {
      t = new Reader(w).table();
    } catch {
      return undefined;
    }
    const user = strOf(t.get('LOGIN'));
    const password = strOf(t.get('PASSWORD'));
    return user === undefined || password === undefined ? undefined : { user, password };
  }
  return undefined;
}

/**
 * What connection.start tells the client. Of RabbitMQ 3.13's capabilities, Redrive has
 * all but `consumer_priorities` (docs/amqp.md says why).
 */
function serverProperties(): FieldTable {
  const capabilities: FieldTable = new Map(
    [
      'publisher_confirms',
      'exchange_exchange_bindings',
      'basic.nack',
      'consumer_cancel_notify',
      'per_consumer_qos',
      'authentication_failure_close',
      'connection.blocked',
      'direct_reply_to',
    ].map((c) => [c, field.bool(true)] as const),
  );
  return new Map([
    ['product', field.str('Redrive')],
    ['platform', field.str(`Node.js ${process.version}`)],
    ['information', field.str('An SQS-compatible message queue that speaks AMQP 0-9-1: docs/amqp.md')],
    ['capabilities', field.table(capabilities)],
  ]);
}

/** connection.start's arguments: AMQP 0-9-1, RabbitMQ's properties and sign-in mechanisms. */
export function connectionStart(): Record<string, unknown> {
  return {
    versionMajor: 0,
    versionMinor: 9,
    serverProperties: serverProperties(),
    mechanisms: 'PLAIN AMQPLAIN',
    locales: 'en_US',
  };
}

/**
 * The spec's answer to a protocol we do not speak (RabbitMQ's too): our header, then the
 * socket goes once it is written; nothing more is read.
 */
export function answerUnknownProtocol(socket: Socket): void {
  const drop = setTimeout(() => socket.destroy(), 500);
  socket.end(PROTOCOL_HEADER, () => {
    clearTimeout(drop);
    socket.destroy();
  });
}
