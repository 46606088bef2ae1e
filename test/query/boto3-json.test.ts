import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
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
} else if (process.env.CI === 'true') {
  // Under CI nothing skips: a machine without it fails here, saying what it lacks.
  test('boto3 from PATH over JSON', () => {
    assert.fail(
      "no python3 on PATH besides Debian's has a boto3 (1.31.81 or later speaks JSON): install one with pip, e.g. in a pyenv or venv first on PATH",
    );
  });
} else {
  describe('boto3 from PATH over JSON', { skip: "no boto3 besides Debian's is installed" }, () => {});
}
