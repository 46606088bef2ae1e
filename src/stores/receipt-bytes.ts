/**
 * How both SQL stores keep a receipt token: as short bytes rather than its text, so a
 * claimed delivery row grows by 12 bytes, not by a 36-character string.
 */

const SQS_TOKEN = /^[A-Za-z0-9_-]{16}$/;
const SQS_TOKEN_BYTES = 12;

/**
 * A receipt token as stored: an SQS token (16 base64url characters) as its 12 bytes,
 * any other (an AMQP token names its holder: `amqp.<holder>.<token>`) as its UTF-8,
 * with a zero byte added should that be 12 bytes long too.
 */
export function tokenBytes(token: string): Buffer {
  if (SQS_TOKEN.test(token)) return Buffer.from(token, 'base64url');
  const text = Buffer.from(token, 'utf8');
  return text.length === SQS_TOKEN_BYTES ? Buffer.concat([text, Buffer.alloc(1)]) : text;
}

/** The token a stored receipt was made from (tokenBytes), or null. */
export function tokenText(stored: Buffer | null | undefined): string | null {
  if (!stored) return null;
  if (stored.length === SQS_TOKEN_BYTES) return stored.toString('base64url');
  if (stored.length === SQS_TOKEN_BYTES + 1 && stored[SQS_TOKEN_BYTES] === 0)
    return stored.toString('utf8', 0, SQS_TOKEN_BYTES);
  return stored.toString('utf8');
}
