import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { AWS_CLI, awsCliDriver } from './drivers.js';
import { runScenarios } from './run-scenarios.js';

/** An awscli with botocore 1.31.81 or later speaks JSON to SQS; this suite is about Query. */
function assertSpeaksQuery(url: string): void {
  const debug = spawnSync(AWS_CLI, ['sqs', 'list-queues', '--endpoint-url', url, '--debug'], {
    env: {
      PATH: process.env.PATH,
      AWS_ACCESS_KEY_ID: 'x',
      AWS_SECRET_ACCESS_KEY: 'y',
      AWS_DEFAULT_REGION: 'us-east-1',
    },
    encoding: 'utf8',
  }).stderr;
  assert.match(debug, /'Action': 'ListQueues'/, `${AWS_CLI} does not speak the Query protocol`);
}

// Each call starts the CLI afresh (about half a CPU-second), so scenarios run two at a time.
runScenarios('aws cli (Debian awscli) over Query', awsCliDriver, {
  needs: 'aws-cli',
  concurrency: 2,
  check: (_driver, url) => assertSpeaksQuery(url),
});
