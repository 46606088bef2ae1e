/**
 * The tests that may skip outside CI: those whose real client is not an npm package, so
 * `npm ci` cannot provide it. scripts/preflight.mjs finds which are missing and names them
 * in REDRIVE_TEST_SKIP for the test processes; the tests skip with a reason that ends in
 * `[skip group: <id>]` (test/support/requirements.ts); scripts/skipped-groups.mjs counts
 * them and the run ends with one line per group saying how to enable it. Under CI=true
 * nothing skips: a missing one stops the run before any test.
 */
export const SKIP_GROUPS = {
  'aws-cli': {
    what: "Debian's AWS CLI v2.9 (the Query-protocol tests)",
    enable: 'apt-get install awscli, or set REDRIVE_TEST_AWS_CLI to an AWS CLI that speaks Query',
  },
  boto3: {
    what: "Debian's boto3 (the Query-protocol tests)",
    enable: 'apt-get install python3-boto3, or set REDRIVE_TEST_PYTHON to a Python whose boto3 speaks Query',
  },
  pika: {
    what: "Python's pika (the AMQP tests' Python client)",
    enable: 'apt-get install python3-pika (for REDRIVE_TEST_PYTHON, /usr/bin/python3 by default)',
  },
  celery: {
    what: "Debian's Celery (the AMQP test of a Celery worker)",
    enable: 'apt-get install python3-celery (for REDRIVE_TEST_PYTHON, /usr/bin/python3 by default)',
  },
  proton: {
    what: "Debian's Qpid Proton (the AMQP 1.0 tests' Python client)",
    enable: 'apt-get install python3-qpid-proton (for REDRIVE_TEST_PYTHON, /usr/bin/python3 by default)',
  },
  promtool: {
    what: "Prometheus's promtool (the check of docs/monitoring's alerting rules)",
    enable: 'apt-get install prometheus',
  },
  chromium: {
    what: 'Chromium (the console tests in a browser)',
    enable:
      'the npm-shipped one (@sparticuz/chromium, which npm ci installs) runs on Linux x64 only; elsewhere apt-get install chromium, or set REDRIVE_TEST_CHROMIUM to a Chromium or Chrome',
  },
  rabbitmq: {
    what: 'RabbitMQ (the tests that compare with the reference broker)',
    enable: 'apt-get install rabbitmq-server; rabbitmq-server -detached, or set REDRIVE_TEST_AMQP_URL',
  },
};

/** The tag a skipped test's reason ends with. */
export const tag = (id) => `[skip group: ${id}]`;
export const TAG_PATTERN = /\[skip group: ([\w-]+)\]$/;
