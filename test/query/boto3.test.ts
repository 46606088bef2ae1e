import assert from 'node:assert/strict';
import { boto3Driver } from './drivers.js';
import { runScenarios } from './run-scenarios.js';

runScenarios('boto3 (Debian python3-boto3) over Query', (url) => boto3Driver(url), {
  needs: 'boto3',
  // botocore 1.31.81 and later speak JSON to SQS; this suite is about Query.
  check: (d) => assert.equal(d.protocol, 'query', `${d.name} does not speak the Query protocol`),
});
