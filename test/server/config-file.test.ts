/** `redrive serve --config`: JSON or YAML by extension, and the exact messages of a file that does not validate. */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadConfigFile } from '../../src/server/config-file.js';

const dir = mkdtempSync(join(tmpdir(), 'redrive-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** Loads the file and returns its error's message, every line of it. */
async function refusal(name: string, text: string): Promise<string> {
  const path = file(name, text);
  const e = await loadConfigFile(path).then(
    () => assert.fail(`${name} was accepted`),
    (err: Error) => err,
  );
  return e.message.replaceAll(path, name);
}

const asJson = {
  policies: [
    {
      name: 'orders',
      pattern: '^orders-',
      priority: 10,
      definition: { deadLetterTargetName: 'orders-dlq', maxReceiveCount: 5, overflow: 'reject-publish' },
    },
  ],
  queues: [
    { name: 'orders-dlq' },
    {
      name: 'orders',
      attributes: { VisibilityTimeout: 60, FifoQueue: false },
      tags: { team: 'shop' },
      deadLetterQueue: { name: 'orders-dlq', maxReceiveCount: 5 },
    },
    { name: 'events.fifo', accountId: '000000000000' },
  ],
  storage: 'memory',
};

const asYaml = `# The same file as asJson.
policies:
  - name: orders
    pattern: ^orders-
    priority: 10
    definition: { deadLetterTargetName: orders-dlq, maxReceiveCount: 5, overflow: reject-publish }
queues:
  - name: orders-dlq
  - name: orders
    attributes:
      VisibilityTimeout: 60
      FifoQueue: false
    tags: { team: shop }
    deadLetterQueue:
      name: orders-dlq
      maxReceiveCount: 5
  - name: events.fifo
    accountId: "000000000000"
storage: memory
`;

test('a YAML file reads as the same JSON file would, under .yaml or .yml', async () => {
  const fromJson = await loadConfigFile(file('redrive.json', JSON.stringify(asJson)));
  assert.deepEqual(fromJson.queues[1], {
    name: 'orders',
    // Null-prototype: the keys are the file's.
    attributes: Object.assign(Object.create(null), { VisibilityTimeout: '60', FifoQueue: 'false' }),
    tags: Object.assign(Object.create(null), { team: 'shop' }),
    deadLetterQueue: { name: 'orders-dlq', maxReceiveCount: 5 },
  });
  assert.equal(fromJson.policies[0]!.definition.maxReceiveCount, 5);
  assert.deepEqual(await loadConfigFile(file('redrive.yaml', asYaml)), fromJson);
  assert.deepEqual(await loadConfigFile(file('redrive.YML', asYaml)), fromJson);
});

test('any other extension is JSON', async () => {
  assert.deepEqual(
    await loadConfigFile(file('redrive.conf', JSON.stringify(asJson))),
    await loadConfigFile(file('same.json', JSON.stringify(asJson))),
  );
  assert.match(await refusal('redrive.conf', asYaml), /^redrive\.conf: invalid JSON: Unexpected token '#'/);
});

test('the YAML example of docs/extensions.md works as written, and is the same file as the JSON examples before it', async () => {
  const doc = readFileSync(new URL('../../../docs/extensions.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## The config file'));
  const blocks = (lang: string) =>
    [...section.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]!);
  const [yaml] = blocks('yaml');
  assert.ok(yaml, 'a YAML example');
  const json = Object.assign({}, ...blocks('json').map((text) => JSON.parse(text)));
  assert.deepEqual(
    await loadConfigFile(file('example.yaml', yaml)),
    await loadConfigFile(file('example.json', JSON.stringify(json))),
  );
});

test('a syntax error names the file and the line and column', async () => {
  const unclosed = 'policies:\n  - name: a\n    pattern: [\n';
  assert.equal(
    await refusal('bad.yaml', unclosed),
    'bad.yaml: invalid YAML at line 4, column 1: Flow sequence in block collection must be sufficiently indented and end with a ]',
  );
  assert.equal(
    await refusal('twice.yml', 'storage: memory\nqueues: []\nstorage: sqlite\n'),
    'twice.yml: invalid YAML at line 3, column 1: Map keys must be unique',
  );
  assert.equal(
    await refusal('tabs.yaml', 'queues:\n\t- name: q\n'),
    'tabs.yaml: invalid YAML at line 2, column 1: Tabs are not allowed as indentation',
  );
  assert.equal(
    await refusal('tag.yaml', 'storage: !secret db\n'),
    'tag.yaml: invalid YAML at line 1, column 10: Unresolved tag: !secret',
  );
  assert.equal(
    await refusal('bad.json', '{\n  "queues": [\n    { "name": "a", }\n  ]\n}'),
    'bad.json: invalid JSON at line 3, column 20: Expected double-quoted property name in JSON at position 35',
  );
  // Node 20 gives no position for this one; the file is still named.
  assert.equal(
    await refusal('token.json', '{"storage": memory}'),
    `token.json: invalid JSON: Unexpected token 'm', "{"storage": memory}" is not valid JSON`,
  );
});

test('every offending field is reported, by its path, with what it expects and what it got', async () => {
  const yaml = `
policies:
  - name: orders
    pattern: ^orders-
    priority: 1.5
    definition:
      maxReceiveCount: 0
      overflow: sideways
      colour: red
  - name: ""
    pattern: "("
queues:
  - name: q
    attributes: { VisibilityTimeout: [60], DelaySeconds: ~ }
    tags: shop
  - name: dlq
    deadLetterQueue: { name: q }
  - name: events.fifo
    accountId: 000000000000
    colour: red
storage: 5
region: eu-west-1
`;
  assert.equal(
    await refusal('redrive.yaml', yaml),
    [
      'redrive.yaml: policies[0].priority: must be an integer from -1000000 to 1000000, not 1.5',
      'redrive.yaml: policies[0].definition.maxReceiveCount: must be an integer from 1 to 1000, not 0',
      'redrive.yaml: policies[0].definition.overflow: must be "drop-head", "reject-publish" or "reject-publish-dlx", not "sideways"',
      'redrive.yaml: policies[0].definition.colour: unknown setting (known: deadLetterTargetArn, deadLetterTargetName, maxReceiveCount, messageTtlSeconds, maxLength, maxLengthBytes, overflow, deadLetterExchange, deadLetterRoutingKey, deliveryLimit, applyToDeadLetterTarget)',
      'redrive.yaml: policies[1].name: must be a non-empty string, not ""',
      'redrive.yaml: policies[1].pattern: not a valid regular expression (error parsing regexp: missing closing ): `(`)',
      'redrive.yaml: policies[1].definition: must be an object, and is missing',
      'redrive.yaml: queues[0].attributes.VisibilityTimeout: must be a string, number or boolean, not [60]',
      'redrive.yaml: queues[0].attributes.DelaySeconds: must be a string, number or boolean, not null',
      'redrive.yaml: queues[0].tags: must be an object, not "shop"',
      'redrive.yaml: queues[1].deadLetterQueue.maxReceiveCount: must be an integer from 1 to 1000, and is missing',
      'redrive.yaml: queues[2].accountId: must be a string of 12 digits, not 0',
      'redrive.yaml: queues[2].colour: unknown field (known: name, accountId, attributes, tags, deadLetterQueue)',
      'redrive.yaml: storage: must be a non-empty string, not 5',
      'redrive.yaml: region: unknown field (known: policies, queues, storage)',
    ].join('\n'),
  );
});

test('rules across fields: duplicates, exclusive settings, patterns, ARNs', async () => {
  const policy = (name: string, pattern: string, definition: object) => ({ name, pattern, definition });
  const json = JSON.stringify({
    policies: [
      policy('a', '(', {}),
      policy('b', 'x', { deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:dlq', deadLetterTargetName: 'dlq' }),
      policy('c', 'x', { deadLetterTargetArn: 'dlq' }),
      policy('b', 'y', {}),
    ],
    queues: [
      { name: 'q', attributes: { RedrivePolicy: '{}' }, deadLetterQueue: { name: 'dlq', maxReceiveCount: 1 } },
      { name: 'q', accountId: '111111111111' },
      { name: 'q' },
    ],
  });
  assert.equal(
    await refusal('rules.json', json),
    [
      'rules.json: policies[0].pattern: not a valid regular expression (error parsing regexp: missing closing ): `(`)',
      'rules.json: policies[1].definition: give deadLetterTargetArn or deadLetterTargetName, not both',
      'rules.json: policies[2].definition.deadLetterTargetArn: must be an SQS queue ARN (arn:aws:sqs:<region>:<account>:<name>), not "dlq"',
      'rules.json: policies[3].name: duplicate policy name "b"',
      'rules.json: queues[0]: give deadLetterQueue or attributes.RedrivePolicy, not both',
      // In another account, the same name is another queue.
      'rules.json: queues[2].name: "q" is declared twice',
    ].join('\n'),
  );
});

test('a file that is not an object, or not there, is refused with its name', async () => {
  assert.equal(await refusal('list.json', '[]'), 'list.json: must be an object, not []');
  assert.equal(await refusal('empty.yaml', '# nothing yet\n'), 'empty.yaml: must be an object, not null');
  assert.equal(
    await refusal('alias.yaml', 'storage: *db\n'),
    'alias.yaml: invalid YAML: Unresolved alias (the anchor must be set before the alias): db',
  );
  const missing = join(dir, 'missing.yaml');
  await assert.rejects(loadConfigFile(missing), {
    message: `--config ${missing}: cannot read it (ENOENT): give the path of a readable config file`,
  });
});
