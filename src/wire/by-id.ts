/** The answers of the operator's actions by message id (docs/extensions.md). */

/** A message id the action could not act on, and why. */
export interface ByIdFailure {
  Id: string;
  Code: string;
  Message: string;
  SenderFault: boolean;
}

/** DeleteMessagesById's answer. */
export interface DeleteMessagesByIdResult {
  Successful: { Id: string }[];
  Failed: ByIdFailure[];
}

/** MoveMessagesById's answer: each moved message's new id and where it went. */
export interface MoveMessagesByIdResult {
  Successful: { Id: string; MessageId: string; DestinationArn: string }[];
  Failed: ByIdFailure[];
}
