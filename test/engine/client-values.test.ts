/**
 * Values a client may send in a JSON body where a string is expected, including objects
 * that break `String()`: each gets SQS's InvalidParameterValue, never an internal error
 * (found by test/query/fuzz.test.ts with a seed that made `{"toString": null}`).
 */
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { testEngine } from './support.js';

type Env = ReturnType<typeof testEngine>;
let env: Env | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

for (const [what, value] of [
  ['an object whose toString is null', { toString: null }],
  ['an object whose valueOf and toString are not functions', { valueOf: 1, toString: 'x' }],
  ['an array', ['a']],
] as const) {
  test(`a MessageGroupId that is ${what} is an invalid parameter value`, async () => {
    env = testEngine();
    const { QueueUrl } = await env.call('CreateQueue', { QueueName: 'plain' });
    await assert.rejects(env.call('SendMessage', { QueueUrl, MessageBody: 'x', MessageGroupId: value }), (e: Error) => {
      assert.equal(e.name, 'InvalidParameterValueException');
      assert.match(e.message, /^Value .+ for parameter MessageGroupId is invalid\./);
      return true;
    });
  });

  test(`a DelaySeconds that is ${what} is an invalid parameter value`, async () => {
    env = testEngine();
    const { QueueUrl } = await env.call('CreateQueue', { QueueName: 'plain' });
    await assert.rejects(env.call('SendMessage', { QueueUrl, MessageBody: 'x', DelaySeconds: value }), (e: Error) => {
      assert.equal(e.name, 'InvalidParameterValueException');
      assert.match(e.message, /^Value .+ for parameter DelaySeconds is invalid\./);
      return true;
    });
  });
}
