/**
 * SQS errors. Each has the shape name from the Smithy model (the JSON protocol's
 * `__type`), the Query-protocol code (sent in `x-amzn-query-error` and the XML `Code`),
 * and the HTTP status, all taken from the model's awsQueryError traits.
 */
export class SqsError extends Error {
  constructor(
    /** Smithy shape name, e.g. QueueDoesNotExist. */
    readonly type: string,
    /** Query-protocol code, e.g. AWS.SimpleQueueService.NonExistentQueue. */
    readonly code: string,
    readonly status: number,
    message: string,
    readonly senderFault = true,
  ) {
    super(message);
    this.name = type;
  }
}

const modelled = {
  BatchEntryIdsNotDistinct: ['AWS.SimpleQueueService.BatchEntryIdsNotDistinct', 400],
  BatchRequestTooLong: ['AWS.SimpleQueueService.BatchRequestTooLong', 400],
  EmptyBatchRequest: ['AWS.SimpleQueueService.EmptyBatchRequest', 400],
  InvalidAddress: ['InvalidAddress', 404],
  InvalidAttributeName: ['InvalidAttributeName', 400],
  InvalidAttributeValue: ['InvalidAttributeValue', 400],
  InvalidBatchEntryId: ['AWS.SimpleQueueService.InvalidBatchEntryId', 400],
  InvalidIdFormat: ['InvalidIdFormat', 400],
  InvalidMessageContents: ['InvalidMessageContents', 400],
  InvalidSecurity: ['InvalidSecurity', 403],
  MessageNotInflight: ['AWS.SimpleQueueService.MessageNotInflight', 400],
  OverLimit: ['OverLimit', 403],
  PurgeQueueInProgress: ['AWS.SimpleQueueService.PurgeQueueInProgress', 403],
  QueueDeletedRecently: ['AWS.SimpleQueueService.QueueDeletedRecently', 400],
  QueueDoesNotExist: ['AWS.SimpleQueueService.NonExistentQueue', 400],
  QueueNameExists: ['QueueAlreadyExists', 400],
  ReceiptHandleIsInvalid: ['ReceiptHandleIsInvalid', 404],
  RequestThrottled: ['RequestThrottled', 403],
  ResourceNotFoundException: ['ResourceNotFoundException', 404],
  TooManyEntriesInBatchRequest: ['AWS.SimpleQueueService.TooManyEntriesInBatchRequest', 400],
  UnsupportedOperation: ['AWS.SimpleQueueService.UnsupportedOperation', 400],
  // Not shapes in the model, but returned by SQS with these codes.
  InvalidParameterValue: ['InvalidParameterValue', 400],
  MissingParameter: ['MissingParameter', 400],
  InvalidParameterCombination: ['InvalidParameterCombination', 400],
  InvalidAction: ['InvalidAction', 400],
  UnknownOperationException: ['UnknownOperationException', 400],
  SerializationException: ['SerializationException', 400],
  ValidationError: ['ValidationError', 400],
  InvalidQueryParameter: ['InvalidQueryParameter', 400],
  MalformedQueryString: ['MalformedQueryString', 400],
  AccessDenied: ['AccessDenied', 403],
  ServiceUnavailable: ['ServiceUnavailable', 503],
  InternalFailure: ['InternalFailure', 500],
  RequestEntityTooLarge: ['RequestEntityTooLarge', 413],
} as const;

export type ErrorType = keyof typeof modelled;

/** Recorded SQS JSON responses name these two differently from their query code. */
const jsonTypeOverrides: Partial<Record<ErrorType, string>> = {
  InvalidParameterValue: 'InvalidParameterValueException',
  MissingParameter: 'MissingRequiredParameterException',
};

export function sqsError(type: ErrorType, message: string): SqsError {
  const [code, status] = modelled[type];
  return new SqsError(jsonTypeOverrides[type] ?? type, code, status, message, status < 500);
}

/**
 * A client's value as text for an error message. `String()` throws on an object whose
 * `toString` a client replaced (`{"toString": null}` in a JSON body), so such a value is
 * shown as JSON instead.
 */
export function shown(value: unknown): string {
  try {
    return String(value);
  } catch {
    return JSON.stringify(value) ?? typeof value;
  }
}

export const errors = {
  queueDoesNotExist: () => sqsError('QueueDoesNotExist', 'The specified queue does not exist.'),
  missingParameter: (name: string) => sqsError('MissingParameter', `The request must contain the parameter ${name}.`),
  invalidParameterValue: (message: string) => sqsError('InvalidParameterValue', message),
  /** SQS's wording for a parameter outside its range. */
  invalidValue: (name: string, value: unknown, reason: string) =>
    sqsError('InvalidParameterValue', `Value ${shown(value)} for parameter ${name} is invalid. Reason: ${reason}`),
  invalidAttributeName: (name: string) => sqsError('InvalidAttributeName', `Unknown Attribute ${name}.`),
  invalidAttributeValue: (message: string) => sqsError('InvalidAttributeValue', message),
  receiptHandleIsInvalid: (handle: string) =>
    sqsError('ReceiptHandleIsInvalid', `The input receipt handle "${handle}" is not a valid receipt handle.`),
  internal: () => sqsError('InternalFailure', 'We encountered an internal error. Please try again.'),
  /**
   * The storage itself failed (a full disk, a read-only data directory, a database that
   * is down): a 503 that names the cause, so the request can succeed once the operator
   * has fixed it, and SDKs retry it with back-off. Each store maps its driver's errors
   * to this (see src/stores/<name>/storage-errors.ts); the protocols only know this one.
   */
  storageUnavailable: (reason: string, code: string) =>
    sqsError('ServiceUnavailable', `Storage unavailable: ${reason} (${code}). Try again later.`),
};
