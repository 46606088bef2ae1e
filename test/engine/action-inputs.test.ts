/**
 * src/engine/actions/action-inputs.ts is generated from the Query models
 * (scripts/generate-action-inputs.mjs): it must be what the script writes for the models
 * as they are, and the registry must serve exactly the models' actions.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { actions } from '../../src/engine/actions/registry.js';

// Compiled to dist/test/engine/: the repository is three levels up.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const { actionInputsSource, OUTPUT } = (await import(join(ROOT, 'scripts/generate-action-inputs.mjs'))) as {
  actionInputsSource: (dir?: string) => string;
  OUTPUT: string;
};
const EXTENSIONS = 'src/protocols/query/redrive-extensions.json';

test('action-inputs.ts is what the generator writes for the models (node scripts/generate-action-inputs.mjs)', () => {
  assert.equal(readFileSync(join(ROOT, OUTPUT), 'utf8'), actionInputsSource(ROOT));
});

test('a change of the models changes what the generator writes, required members without ?', () => {
  const dir = mkdtempSync(join(tmpdir(), 'redrive-model-'));
  try {
    cpSync(join(ROOT, 'src/protocols/query'), join(dir, 'src/protocols/query'), { recursive: true });
    const model = JSON.parse(readFileSync(join(dir, EXTENSIONS), 'utf8')) as {
      shapes: Record<string, { members: object; required?: string[] }>;
    };
    model.shapes.RejectMessageRequest!.members = {
      ...model.shapes.RejectMessageRequest!.members,
      Requeue: { shape: 'Boolean' },
    };
    model.shapes.ReleaseAmqpDeliveriesRequest!.required = ['Holder'];
    writeFileSync(join(dir, EXTENSIONS), JSON.stringify(model));
    const changed = actionInputsSource(dir);
    assert.notEqual(changed, actionInputsSource(ROOT));
    assert.match(
      changed,
      /RejectMessage: \{ QueueUrl: unknown; ReceiptHandle: unknown; Reason\?: unknown; Requeue\?: unknown \};/,
    );
    assert.match(changed, /ReleaseAmqpDeliveries: \{ Holder: unknown \};/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the registry serves exactly the actions of the models', () => {
  const modelled = [...actionInputsSource(ROOT).matchAll(/^ {2}(\w+): \{/gm)].map((m) => m[1]).sort();
  assert.ok(modelled.length >= 30, `found ${modelled.length} actions in the models`);
  assert.deepEqual(Object.keys(actions).sort(), modelled);
});
