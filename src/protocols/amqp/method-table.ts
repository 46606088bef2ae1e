/**
 * The AMQP 0-9-1 methods Redrive speaks, as a table written from the spec (class and
 * method ids, argument names and types); encoding and decoding (spec.ts) are generated from it.
 * Argument names are camelCase; `reserved` arguments are read and written as zeros.
 */
type ArgType = 'octet' | 'short' | 'long' | 'longlong' | 'shortstr' | 'longstr' | 'bit' | 'table' | 'timestamp';
export type Arg = readonly [name: string, type: ArgType];

const CLOSE: Arg[] = [
  ['replyCode', 'short'],
  ['replyText', 'shortstr'],
  ['classId', 'short'],
  ['methodId', 'short'],
];

export const methodTable = {
  'connection.start': [
    10,
    10,
    [
      ['versionMajor', 'octet'],
      ['versionMinor', 'octet'],
      ['serverProperties', 'table'],
      ['mechanisms', 'longstr'],
      ['locales', 'longstr'],
    ],
  ],
  'connection.start-ok': [
    10,
    11,
    [
      ['clientProperties', 'table'],
      ['mechanism', 'shortstr'],
      ['response', 'longstr'],
      ['locale', 'shortstr'],
    ],
  ],
  'connection.secure': [10, 20, [['challenge', 'longstr']]],
  'connection.secure-ok': [10, 21, [['response', 'longstr']]],
  'connection.tune': [
    10,
    30,
    [
      ['channelMax', 'short'],
      ['frameMax', 'long'],
      ['heartbeat', 'short'],
    ],
  ],
  'connection.tune-ok': [
    10,
    31,
    [
      ['channelMax', 'short'],
      ['frameMax', 'long'],
      ['heartbeat', 'short'],
    ],
  ],
  'connection.open': [
    10,
    40,
    [
      ['virtualHost', 'shortstr'],
      ['reserved1', 'shortstr'],
      ['reserved2', 'bit'],
    ],
  ],
  'connection.open-ok': [10, 41, [['reserved1', 'shortstr']]],
  'connection.close': [10, 50, CLOSE],
  'connection.close-ok': [10, 51, []],
  'connection.blocked': [10, 60, [['reason', 'shortstr']]],
  'connection.unblocked': [10, 61, []],
  'connection.update-secret': [
    10,
    70,
    [
      ['newSecret', 'longstr'],
      ['reason', 'shortstr'],
    ],
  ],
  'connection.update-secret-ok': [10, 71, []],
  'channel.open': [20, 10, [['reserved1', 'shortstr']]],
  'channel.open-ok': [20, 11, [['reserved1', 'longstr']]],
  'channel.flow': [20, 20, [['active', 'bit']]],
  'channel.flow-ok': [20, 21, [['active', 'bit']]],
  'channel.close': [20, 40, CLOSE],
  'channel.close-ok': [20, 41, []],
  'exchange.declare': [
    40,
    10,
    [
      ['reserved1', 'short'],
      ['exchange', 'shortstr'],
      ['type', 'shortstr'],
      ['passive', 'bit'],
      ['durable', 'bit'],
      ['autoDelete', 'bit'],
      ['internal', 'bit'],
      ['noWait', 'bit'],
      ['arguments', 'table'],
    ],
  ],
  'exchange.declare-ok': [40, 11, []],
  'exchange.delete': [
    40,
    20,
    [
      ['reserved1', 'short'],
      ['exchange', 'shortstr'],
      ['ifUnused', 'bit'],
      ['noWait', 'bit'],
    ],
  ],
  'exchange.delete-ok': [40, 21, []],
  'exchange.bind': [
    40,
    30,
    [
      ['reserved1', 'short'],
      ['destination', 'shortstr'],
      ['source', 'shortstr'],
      ['routingKey', 'shortstr'],
      ['noWait', 'bit'],
      ['arguments', 'table'],
    ],
  ],
  'exchange.bind-ok': [40, 31, []],
  'exchange.unbind': [
    40,
    40,
    [
      ['reserved1', 'short'],
      ['destination', 'shortstr'],
      ['source', 'shortstr'],
      ['routingKey', 'shortstr'],
      ['noWait', 'bit'],
      ['arguments', 'table'],
    ],
  ],
  'exchange.unbind-ok': [40, 51, []],
  'queue.declare': [
    50,
    10,
    [
      ['reserved1', 'short'],
      ['queue', 'shortstr'],
      ['passive', 'bit'],
      ['durable', 'bit'],
      ['exclusive', 'bit'],
      ['autoDelete', 'bit'],
      ['noWait', 'bit'],
      ['arguments', 'table'],
    ],
  ],
  'queue.declare-ok': [
    50,
    11,
    [
      ['queue', 'shortstr'],
      ['messageCount', 'long'],
      ['consumerCount', 'long'],
    ],
  ],
  'queue.bind': [
    50,
    20,
    [
      ['reserved1', 'short'],
      ['queue', 'shortstr'],
      ['exchange', 'shortstr'],
      ['routingKey', 'shortstr'],
      ['noWait', 'bit'],
      ['arguments', 'table'],
    ],
  ],
  'queue.bind-ok': [50, 21, []],
  'queue.purge': [
    50,
    30,
    [
      ['reserved1', 'short'],
      ['queue', 'shortstr'],
      ['noWait', 'bit'],
    ],
  ],
  'queue.purge-ok': [50, 31, [['messageCount', 'long']]],
  'queue.delete': [
    50,
    40,
    [
      ['reserved1', 'short'],
      ['queue', 'shortstr'],
      ['ifUnused', 'bit'],
      ['ifEmpty', 'bit'],
      ['noWait', 'bit'],
    ],
  ],
  'queue.delete-ok': [50, 41, [['messageCount', 'long']]],
  'queue.unbind': [
    50,
    50,
    [
      ['reserved1', 'short'],
      ['queue', 'shortstr'],
      ['exchange', 'shortstr'],
      ['routingKey', 'shortstr'],
      ['arguments', 'table'],
    ],
  ],
  'queue.unbind-ok': [50, 51, []],
  'basic.qos': [
    60,
    10,
    [
      ['prefetchSize', 'long'],
      ['prefetchCount', 'short'],
      ['global', 'bit'],
    ],
  ],
  'basic.qos-ok': [60, 11, []],
  'basic.consume': [
    60,
    20,
    [
      ['reserved1', 'short'],
      ['queue', 'shortstr'],
      ['consumerTag', 'shortstr'],
      ['noLocal', 'bit'],
      ['noAck', 'bit'],
      ['exclusive', 'bit'],
      ['noWait', 'bit'],
      ['arguments', 'table'],
    ],
  ],
  'basic.consume-ok': [60, 21, [['consumerTag', 'shortstr']]],
  'basic.cancel': [
    60,
    30,
    [
      ['consumerTag', 'shortstr'],
      ['noWait', 'bit'],
    ],
  ],
  'basic.cancel-ok': [60, 31, [['consumerTag', 'shortstr']]],
  'basic.publish': [
    60,
    40,
    [
      ['reserved1', 'short'],
      ['exchange', 'shortstr'],
      ['routingKey', 'shortstr'],
      ['mandatory', 'bit'],
      ['immediate', 'bit'],
    ],
  ],
  'basic.return': [
    60,
    50,
    [
      ['replyCode', 'short'],
      ['replyText', 'shortstr'],
      ['exchange', 'shortstr'],
      ['routingKey', 'shortstr'],
    ],
  ],
  'basic.deliver': [
    60,
    60,
    [
      ['consumerTag', 'shortstr'],
      ['deliveryTag', 'longlong'],
      ['redelivered', 'bit'],
      ['exchange', 'shortstr'],
      ['routingKey', 'shortstr'],
    ],
  ],
  'basic.get': [
    60,
    70,
    [
      ['reserved1', 'short'],
      ['queue', 'shortstr'],
      ['noAck', 'bit'],
    ],
  ],
  'basic.get-ok': [
    60,
    71,
    [
      ['deliveryTag', 'longlong'],
      ['redelivered', 'bit'],
      ['exchange', 'shortstr'],
      ['routingKey', 'shortstr'],
      ['messageCount', 'long'],
    ],
  ],
  'basic.get-empty': [60, 72, [['reserved1', 'shortstr']]],
  'basic.ack': [
    60,
    80,
    [
      ['deliveryTag', 'longlong'],
      ['multiple', 'bit'],
    ],
  ],
  'basic.reject': [
    60,
    90,
    [
      ['deliveryTag', 'longlong'],
      ['requeue', 'bit'],
    ],
  ],
  'basic.recover-async': [60, 100, [['requeue', 'bit']]],
  'basic.recover': [60, 110, [['requeue', 'bit']]],
  'basic.recover-ok': [60, 111, []],
  'basic.nack': [
    60,
    120,
    [
      ['deliveryTag', 'longlong'],
      ['multiple', 'bit'],
      ['requeue', 'bit'],
    ],
  ],
  'confirm.select': [85, 10, [['noWait', 'bit']]],
  'confirm.select-ok': [85, 11, []],
  'tx.select': [90, 10, []],
  'tx.select-ok': [90, 11, []],
  'tx.commit': [90, 20, []],
  'tx.commit-ok': [90, 21, []],
  'tx.rollback': [90, 30, []],
  'tx.rollback-ok': [90, 31, []],
} as const satisfies Record<string, readonly [number, number, readonly Arg[]]>;
