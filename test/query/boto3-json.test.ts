import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe } from 'node:test';
import { boto3Driver, PYTHON } from './drivers.js';
import { runScenarios } from './run-scenarios.js';

// A newer boto3 (botocore 1.31.81 or later, e.g. from pip) speaks JSON: the second pair of real Python clients.
const python = ['python3', 'python'].find((p) => {
  const r = spawnSync(p, ['-c', 'import boto3, sys; print(sys.executable)'], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() !== PYTHON;
});

if (python) {
  runScenarios('boto3 from PATH over JSON', (url) => boto3Driver(url, python), {
    check: (d) => assert.equal(d.protocol, 'json', `${d.name} does not speak the JSON protocol`),
  });
} else {
  describe('boto3 from PATH over JSON', { skip: "no boto3 besides Debian's is installed" }, () => {});
}
