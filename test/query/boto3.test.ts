import assert from 'node:assert/strict';
import { boto3Driver } from './drivers.js';
import { runScenarios } from './run-scenarios.js';

runScenarios('boto3 (Debian python3-boto3) over Query', boto3Driver, { check: (d) => {
  // botocore 1.31.81 and later speak JSON to SQS; this suite is about Query.
  assert.equal((d as Awaited<ReturnType<typeof boto3Driver>>).wire, 'query', 'this boto3 does not speak the Query protocol');
} });
