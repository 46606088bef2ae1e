/**
 * The message system attribute holding an AMQP message's envelope (messages.ts). A send
 * may give it, in the form PeekMessages shows (message-view.ts), to restore an exported
 * AMQP message; validation.ts, which messages.ts imports, accepts the name.
 */
export const AMQP_ATTRIBUTE = 'RedriveAmqp';
