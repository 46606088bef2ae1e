/** AMQP 0-9-1 reply codes, with RabbitMQ's names. */
export const CODES = {
  CONTENT_TOO_LARGE: 311,
  NO_ROUTE: 312,
  CONNECTION_FORCED: 320,
  INVALID_PATH: 402,
  ACCESS_REFUSED: 403,
  NOT_FOUND: 404,
  RESOURCE_LOCKED: 405,
  PRECONDITION_FAILED: 406,
  FRAME_ERROR: 501,
  SYNTAX_ERROR: 502,
  COMMAND_INVALID: 503,
  CHANNEL_ERROR: 504,
  UNEXPECTED_FRAME: 505,
  RESOURCE_ERROR: 506,
  NOT_ALLOWED: 530,
  NOT_IMPLEMENTED: 540,
  INTERNAL_ERROR: 541,
} as const;

const NAMES = new Map<number, string>(Object.entries(CODES).map(([k, v]) => [v, k]));

/** Codes that close the connection; the others close only the channel (the spec's "hard" errors). */
const HARD = new Set<number>([320, 402, 501, 502, 503, 504, 505, 506, 530, 540, 541]);

/**
 * An error that ends a channel or the connection with a close method. The reply text is
 * RabbitMQ's shape, `NOT_FOUND - no queue 'q' in vhost '/'`, since clients show it as is.
 */
export class AmqpError extends Error {
  override name = 'AmqpError';
  readonly replyText: string;
  readonly hard: boolean;

  constructor(
    readonly code: number,
    message: string,
    public classId = 0,
    public methodId = 0,
    hard?: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
    // A short string holds 255 bytes: longer texts (which may quote client input) are cut.
    this.replyText = Buffer.from(`${NAMES.get(code) ?? 'ERROR'} - ${message}`)
      .subarray(0, 255)
      .toString('utf8')
      .replace(/\uFFFD$/, '');
    this.hard = hard ?? HARD.has(code);
  }
}

export const amqpErrors = {
  noQueue: (name: string) => new AmqpError(CODES.NOT_FOUND, `no queue '${name}' in vhost '/'`),
  noExchange: (name: string) => new AmqpError(CODES.NOT_FOUND, `no exchange '${name}' in vhost '/'`),
  /** `cause`: the error this one reports in AMQP's terms (an SQS attribute check, say). */
  precondition: (text: string, cause?: unknown) =>
    new AmqpError(CODES.PRECONDITION_FAILED, text, 0, 0, undefined, cause === undefined ? undefined : { cause }),
  accessRefused: (text: string) => new AmqpError(CODES.ACCESS_REFUSED, text),
  locked: (name: string) =>
    new AmqpError(
      CODES.RESOURCE_LOCKED,
      `cannot obtain exclusive access to locked queue '${name}' in vhost '/'. It could be originally declared on another connection or the exclusive property value does not match that of the original declaration.`,
    ),
  notImplemented: (text: string) => new AmqpError(CODES.NOT_IMPLEMENTED, text),
  commandInvalid: (text: string) => new AmqpError(CODES.COMMAND_INVALID, text),
  unexpectedFrame: (text: string) => new AmqpError(CODES.UNEXPECTED_FRAME, text),
  channelError: (text: string) => new AmqpError(CODES.CHANNEL_ERROR, text),
  frameError: (text: string) => new AmqpError(CODES.FRAME_ERROR, text),
  syntaxError: (text: string) => new AmqpError(CODES.SYNTAX_ERROR, text),
};
